"""Build the deployment set, run the blind human study, run the rubric judge.

Public entry points (see docs/generation.md):

* :func:`judge_transfer_audit.generation.protocol.load_protocol`,
:func:`judge_transfer_audit.generation.generate.generate_stories`;
* :func:`judge_transfer_audit.generation.labelstudio.export_tasks`,
:func:`judge_transfer_audit.generation.labelstudio.import_export`;
* :func:`judge_transfer_audit.generation.labelstudio.server.push_study`,
:func:`judge_transfer_audit.generation.labelstudio.server.pull_study`
  (a Label Studio server, through label-studio-sdk);
* :func:`judge_transfer_audit.generation.score.load_rubric`,
:func:`judge_transfer_audit.generation.score.score_stories`;
* :func:`judge_transfer_audit.generation.providers.build_provider` and the ``openai`` / ``transformers`` backends;
  every HTTP request to an LLM server goes through :mod:`judge_transfer_audit.generation.providers.http_client`.
"""
