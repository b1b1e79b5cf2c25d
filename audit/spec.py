"""What to compute: the settings of one audit run (everything except the data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from audit.policy import Policy
from audit.progress import ProgressFactory
from audit.uncertainty.loro import EXACT_BUDGET as LORO_EXACT_BUDGET


@dataclass(frozen=True)
class PerplexitySpec:
    """Where perplexity comes from; both None means the perplexity feature is SKIPPED."""

    model: str | None = None  #: a transformers model name or local path
    url: str | None = None  #: an OpenAI-compatible completions server
    server_model: str | None = None
    allow_download: bool = False
    revision: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 8
    max_length: int | None = None
    stride: int | None = None
    api_key_env: str | None = None  #: environment variable holding the server's API key


@dataclass(frozen=True)
class AuditSpec:
    """Settings of one run.

    Attributes
    ----------
    tie_rule : judge tie rule (see :mod:`audit.tie_rules`).
    judge : the judge configuration whose verdicts are "the judge" (None: ``ensemble`` if
        present, else the first configuration in the judge file).
    seed : seed of every random procedure (bootstraps, the ``random`` tie rule).
    policy : check thresholds and severities.
    level : interval level of the human GLMM interval.
    glmm_backend : "native" or "lme4".
    linkage : linkage method of the reader clustering (scipy's names; default "average").
    uncertainty, readers, surface : compute those optional sections.
    n_boot : bootstrap replicates (None: the policy's).
    features_cache : directory of the feature cache (None: no cache).
    command : the exact command line, recorded in the provenance.
    progress : called with a short message before each stage (None: silent).
    jobs : tasks run at once on a local process pool (1: in this process; None: every available
        core). The results do not depend on it.
    scheduler : address of a Dask distributed scheduler (``tcp://HOST:PORT``) that runs the
        tasks instead of the local pool (optional extra ``dask``).
    loro_exact_budget : vote-equivalents of exact leave-one-reader-out refits before one-step
        approximations take over (docs/uncertainty.md).
    progress_bar : ``factory(description, total) -> bar`` for long task batches (bootstrap
        chunks, refits); None: no bar. See :mod:`audit.progress`.
    timings : an :class:`audit.timings.RunTimings` that receives the detectors' execution
        figures (written to timings.json, never to the result); None drops them.
    """

    tie_rule: str = "even-split"
    judge: str | None = None
    seed: int | None = 0
    policy: Policy = field(default_factory=Policy)
    policy_source: str = "defaults"
    level: float = 0.95
    glmm_backend: str = "native"
    linkage: str = "average"  #: hierarchical-clustering linkage of the reader analysis
    uncertainty: bool = True
    readers: bool = True
    surface: bool = True
    n_boot: int | None = None
    perplexity: PerplexitySpec = field(default_factory=PerplexitySpec)
    features_cache: str | None = None
    command: str = ""
    progress: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    jobs: int | None = 1
    scheduler: str | None = None
    loro_exact_budget: int = LORO_EXACT_BUDGET
    progress_bar: ProgressFactory | None = field(default=None, compare=False, repr=False)
    #: receives execution figures (detector timings) that are kept out of the result (None: dropped)
    timings: Any = field(default=None, compare=False, repr=False)
