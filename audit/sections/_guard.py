"""What every optional section's ``compute`` shares: the guard that turns an
:class:`~judge_transfer_audit.core.errors.AuditError` into a :class:`~judge_transfer_audit.model.section_result.Failed`
section, the seed a section records, the section that was not requested, and the runner of a section's tasks."""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

from judge_transfer_audit.core.errors import AuditError, WorkerLostError
from judge_transfer_audit.model.section_result import Computed, Failed, Section, Skipped

P = TypeVar("P")


def int_seed(seed: np.random.SeedSequence) -> int:
    """An int seed drawn from the run's seed sequence, so each section records the seed it used."""
    return int(seed.generate_state(1)[0])


def not_requested(flag: str) -> Skipped:
    return Skipped(f"not requested ({flag})")


def guarded(compute: Callable[[], P], what: str) -> Section[P]:
    """``Computed(compute())``, or ``Failed`` with the reason when it raises an AuditError."""
    try:
        payload = compute()
    except WorkerLostError:
        raise  # the run is incomplete, not one section: the command line has its own exit status
    except AuditError as exc:
        from judge_transfer_audit.core.redact import redact_text

        # The reason is recorded in result.json: a provider's message may quote a URL with a key.
        return Failed(redact_text(f"{what} could not be computed: {exc}"), error=type(exc).__name__)
    return Computed(payload)


def task_runner(spec):
    """The runner of the run's parallel tasks (``spec.jobs`` / ``spec.scheduler``, opened by the
    engine's ``spec.runner_opener``; in this process without one); a context manager.
    Opened outside :func:`guarded`: a bad scheduler address is the user's input error,
    not a section that could not be computed."""
    if spec.runner_opener is None:
        from judge_transfer_audit.core.tasks import TaskRunner

        return TaskRunner(spec.progress_bar)
    return spec.runner_opener(spec.jobs, spec.scheduler, progress=spec.progress_bar)


def failed_check(name: str, section: Section):
    """``<name>.computed`` ERROR for a Failed section, else None."""
    from judge_transfer_audit.model.checks import Check, Status

    if section.status is Status.ERROR:
        return Check(f"{name}.computed", Status.ERROR, reason=section.reason)
    return None


def n_boot_of(spec) -> int:
    """The run's bootstrap replicates: ``--n-boot`` when given, else the policy's."""
    return spec.n_boot if spec.n_boot is not None else spec.policy.uncertainty.n_boot
