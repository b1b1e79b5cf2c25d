"""Running an audit: the pipeline, its steps, the task graph, the process pool and Dask."""
