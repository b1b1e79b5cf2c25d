"""Lazy import of optional heavy dependencies, with an install hint."""

from __future__ import annotations

import importlib
from types import ModuleType

from judge_transfer_audit.core.errors import MissingDependencyError

# module name -> (pip extra or command, what it is for)
_HINTS = {
    "torch": ("pip install torch==2.13.0", "perplexity under a local language model"),
    "transformers": ("pip install 'judge-transfer-audit[lm]'", "perplexity and the local transformers provider"),
    "pymer4": ("pip install 'judge-transfer-audit[lme4]' (needs R with lme4)", "the lme4 GLMM backend"),
    "rpy2": ("pip install 'judge-transfer-audit[lme4]' (needs R)", "the lme4 GLMM backend"),
    "pyarrow": ("pip install 'judge-transfer-audit[parquet]'", "reading Parquet files"),
    "httpx": (
        "pip install 'judge-transfer-audit[http]'",
        "talking to LLM servers (generate, score, perplexity from a server)",
    ),
    "label_studio_sdk": (
        "pip install 'judge-transfer-audit[labelstudio]'",
        "running the human study on a Label Studio server",
    ),
    "distributed": ("pip install 'judge-transfer-audit[dask]'", "running the audit on a Dask cluster"),
    "dask": ("pip install 'judge-transfer-audit[dask]'", "running the audit on a Dask cluster"),
    "matplotlib": (
        "pip install 'judge-transfer-audit[plots]'",
        "drawing a figure through matplotlib (judge_transfer_audit.presentation.figures.figure_to_svg)",
    ),
    "inspect_ai": ("pip install 'judge-transfer-audit[inspect]'", "reading inspect_ai .eval logs"),
    "spacy": ("pip install spacy", "the sentences_spacy detector (spaCy's own sentencizer)"),
    "sksparse": (
        "apt-get install libsuitesparse-dev, then pip install 'judge-transfer-audit[sparse]'",
        "the sparse GLMM path (CHOLMOD)",
    ),
}


def import_optional(name: str, purpose: str | None = None) -> ModuleType:
    """Import ``name`` or raise :class:`MissingDependencyError` saying how to install it.

    Parameters
    ----------
    name : str
        Module to import, e.g. ``"torch"`` or ``"transformers"``.
    purpose : str, optional
        What the caller needs it for; defaults to the known purpose of the module.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        root = name.split(".")[0]
        install, default_purpose = _HINTS.get(root, (f"pip install {root}", "this feature"))
        raise MissingDependencyError(
            f"'{root}' is not installed; it is needed for {purpose or default_purpose}. Install it with: {install}"
        ) from exc
