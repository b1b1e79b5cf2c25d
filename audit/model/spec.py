"""What to compute: the settings of one audit run (everything except the data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from judge_transfer_audit.core.progress import ProgressFactory
from judge_transfer_audit.model.policy import Policy
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, TieRule

if TYPE_CHECKING:  # importing detectors/ registers every detector: only when surface features run
    from judge_transfer_audit.detectors.perplexity.config import PerplexityConfig

#: vote-equivalents of exact leave-one-reader-out refits allowed per audit before one-step
#: approximations take over (docs/uncertainty.md)
LORO_EXACT_BUDGET = 1_000_000


@dataclass(frozen=True)
class AuditSpec:
    """Settings of one run.

    Attributes
    ----------
    tie_rule : the tie rule object (:mod:`judge_transfer_audit.model.tie_rules`); a name is resolved
        where the run is asked for (``api.run(tie_rule="decisive")``, ``--tie-rule``), not here.
    judge : the judge configuration whose verdicts are "the judge" (None: ``ensemble`` if
        present, else the first configuration in the judge file).
    seed : seed of every random procedure (bootstraps, the ``random`` tie rule).
    policy : check thresholds, severities and interval levels (the human interval's level is
        ``policy.transfer.level``: a setting has one owner).
    glmm_backend : "native" or "lme4".
    linkage : linkage method of the reader clustering (scipy's names; default "average").
    uncertainty, readers, surface : compute those optional sections.
    n_boot : bootstrap replicates (None: the policy's).
    perplexity : the perplexity detector's settings (:class:`detectors.PerplexityConfig`, the
        one owner of them); None or an unconfigured one: the perplexity feature is SKIPPED.
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
        chunks, refits); None: no bar. See :mod:`judge_transfer_audit.core.progress`.
    runner_opener : ``opener(jobs, scheduler, progress=...)`` of the run's task runner (a
        context manager), set by the engine (its pool or Dask cluster); None: in this process.
    timings : an :class:`judge_transfer_audit.core.timings.RunTimings` that receives the detectors' execution
        figures (written to timings.json, never to the result); None drops them.
    """

    tie_rule: TieRule = EVEN_SPLIT
    judge: str | None = None
    seed: int | None = 0
    policy: Policy = field(default_factory=Policy)
    policy_source: str = "defaults"
    glmm_backend: str = "native"
    linkage: str = "average"  #: hierarchical-clustering linkage of the reader analysis
    uncertainty: bool = True
    readers: bool = True
    surface: bool = True
    n_boot: int | None = None
    perplexity: PerplexityConfig | None = None
    features_cache: str | None = None
    command: str = ""
    progress: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    jobs: int | None = 1
    scheduler: str | None = None
    loro_exact_budget: int = LORO_EXACT_BUDGET
    progress_bar: ProgressFactory | None = field(default=None, compare=False, repr=False)
    #: receives execution figures (detector timings) that are kept out of the result (None: dropped)
    timings: Any = field(default=None, compare=False, repr=False)
    runner_opener: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.tie_rule, TieRule):
            raise TypeError(
                f"AuditSpec.tie_rule is a TieRule, got {type(self.tie_rule).__name__} {self.tie_rule!r}: pass a rule "
                "of judge_transfer_audit.model.tie_rules (EVEN_SPLIT, DECISIVE, ...), or give the name to "
                "judge_transfer_audit.run(tie_rule=...), which resolves it"
            )
