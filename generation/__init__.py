"""Build the deployment set, run the blind human study, run the rubric judge.

Public entry points (see docs/generation.md):

* :func:`generation.protocol.load_protocol`, :func:`generation.generate.generate_stories`;
* :func:`generation.labelstudio.export_tasks`, :func:`generation.labelstudio.import_export`;
* :func:`generation.labelstudio.server.push_study`, :func:`generation.labelstudio.server.pull_study`
  (a Label Studio server, through label-studio-sdk);
* :func:`generation.score.load_rubric`, :func:`generation.score.score_stories`;
* :func:`generation.providers.build_provider` and the ``openai`` / ``transformers`` backends;
  every HTTP request to an LLM server goes through :mod:`generation.providers.http_client`.
"""
