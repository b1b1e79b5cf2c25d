"""Reading and validating the audit's input files; the entry point is :func:`audit.data.load_audit_data`.

Modules: ``formats`` (CSV/TSV/JSONL/Parquet to a table of strings with line numbers),
``problems`` (collect every problem, count exclusions), ``layout`` (shared checks),
``humans``, ``judge``, ``pairs``, ``resolve`` (votes and judge outputs against the pairs),
``stories``, ``load`` (assembly).
"""
