"""The public Python API: ``audit.run``, ``audit.load_result``, ``audit.write``.

A run from Python goes through exactly the same validation and statistics as ``audit run``:
inputs given as DataFrames are written, as they are, to a private temporary folder and read
back by the same loader, so every row is checked and counted the same way; problems name the
argument (``judge (DataFrame)``), never the temporary file.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable, Union

import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.results.result import AuditResult

#: A path to a CSV/TSV/JSONL/Parquet file, or a DataFrame laid out as the data contract says.
Input = Union[str, "os.PathLike[str]", pd.DataFrame]

_ROLES = ("judge", "humans", "pairs", "stories", "dev_judge", "dev_humans")


def _policy(policy: Any):
    from judge_transfer_audit.model.policy import Policy, load_policy

    if policy is None:
        return Policy(), "defaults"
    if isinstance(policy, Policy):
        return policy, "Policy object"
    if isinstance(policy, (str, os.PathLike)):
        return load_policy(str(policy)), str(policy)
    raise InputError(
        InputProblem(
            "policy",
            f"not a policy: a {type(policy).__name__}",
            "give a path to a policy TOML, an judge_transfer_audit.model.policy.Policy, or None",
        )
    )


def _stage(inputs: Mapping[str, Input | None], folder: str) -> tuple[dict[str, str | None], dict[str, str]]:
    """Paths for the loader; DataFrames are written to ``folder``. Returns (paths, temp -> label)."""
    paths: dict[str, str | None] = {}
    labels: dict[str, str] = {}
    for role, value in inputs.items():
        if value is None:
            paths[role] = None
        elif isinstance(value, pd.DataFrame):
            path = os.path.join(folder, f"{role}.csv")
            value.to_csv(path, index=False)
            paths[role] = path
            labels[path] = f"{role} (DataFrame)"
        elif isinstance(value, (str, os.PathLike)):
            paths[role] = os.fspath(value)
        else:
            raise InputError(
                InputProblem(
                    role,
                    f"not a file path or a DataFrame: a {type(value).__name__}",
                    "give a path (str or pathlib.Path) or a pandas DataFrame",
                )
            )
    return paths, labels


def _relabel_error(exc: InputError, labels: Mapping[str, str]) -> InputError:
    def fix(text: str | None) -> str | None:
        if text is None:
            return None
        for path, label in labels.items():
            text = text.replace(path, label)
        return text

    problems = [
        dataclasses.replace(p, file=fix(p.file), message=fix(p.message), fix=fix(p.fix) or "") for p in exc.problems
    ]
    return InputError(problems)


def _relabel_data(data, labels: Mapping[str, str]):
    sources = tuple(dataclasses.replace(s, path=labels.get(s.path, s.path)) for s in data.sources)
    return dataclasses.replace(data, sources=sources)


def run(
    judge: Input,
    humans: Input,
    /,
    *,
    pairs: Input | None = None,
    stories: Input | None = None,
    dev_judge: Input | None = None,
    dev_humans: Input | None = None,
    policy: Any = None,
    focal: str | Sequence[str] | None = None,
    drop_invalid: bool = False,
    scale: tuple[float, float] | None = None,
    progress: bool | Callable[[str], None] | None = None,
    **settings: Any,
) -> AuditResult:
    """Audit a judge against human votes, as ``audit run`` does, and return the result.

    Parameters
    ----------
    judge, humans : path or DataFrame
        The judge's outputs and the human pairwise votes (or scalar ratings), in any layout
        of docs/data-contract.md. Given by position: ``judge=`` is the setting that names the
        judge configuration to audit (as ``--judge``).
    pairs, stories, dev_judge, dev_humans : path or DataFrame, optional
        As the ``--pairs``, ``--stories``, ``--dev-judge`` and ``--dev-humans`` options.
    policy : path, :class:`judge_transfer_audit.model.policy.Policy` or None
        The gate policy (None: the built-in defaults of docs/policy.md).
    focal, drop_invalid, scale
        As ``--focal``, ``--drop-invalid`` and ``--scale``.
    progress : bool, callable or None
        ``True``: what ``audit run --progress`` shows on stderr (a line per stage with the elapsed
        time, and bars with counts and an ETA for the long work), whether or not stderr is a
        terminal (a notebook's is not). A callable: called with each stage's short message (no
        bars; give ``progress_bar=`` a factory of :mod:`judge_transfer_audit.core.progress`, such as
        ``judge_transfer_audit.core.progress.terminal_bars(stream)``, for those). None or ``False`` (default): silent.
        Progress never reaches the result.
    **settings
        Any field of :class:`judge_transfer_audit.model.spec.AuditSpec` (``tie_rule``, ``judge``, ``seed``,
        ``n_boot``, ``uncertainty``, ``readers``, ``surface``, ``glmm_backend``, ...).
        An unknown name is an error that lists the known ones. ``audit run`` calls this
        function with its options. ``tie_rule`` is a registered name (``"decisive"``) or a
        :class:`judge_transfer_audit.model.tie_rules.TieRule`; an unknown name is an InputError
        listing the registered ones.

    Returns
    -------
    AuditResult
        The same result ``audit run`` writes to result.json (``audit.write`` writes it and the
        report; ``result.to_frame()`` is the transfer table).

    Raises
    ------
    judge_transfer_audit.core.errors.InputError
        When an input breaks the data contract (each problem names the argument, line and fix).

    Examples
    --------
    The README's fixture (paths relative to the repository's root), the optional sections off:

    >>> import judge_transfer_audit as audit
    >>> result = audit.run(
    ...     "fixtures/deployment/judge.csv",
    ...     "fixtures/deployment/humans.csv",
    ...     pairs="fixtures/deployment/pairs.csv",
    ...     uncertainty=False,
    ...     readers=False,
    ...     surface=False,
    ... )
    >>> result.status.value, len(result.cells)
    ('FAIL', 18)
    >>> cell = result.cells[0]
    >>> cell.matchup, cell.criterion, cell.transfer.status.value
    ('gpt5-auto vs gpt4o', 'authenticity', 'INCONCLUSIVE')
    """
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.spec import AuditSpec
    from judge_transfer_audit.sections.agreement_decision.checks import check_gate_support

    known = {f.name for f in dataclasses.fields(AuditSpec)} - {"policy", "policy_source"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise InputError(
            InputProblem(
                "settings", f"unknown setting(s): {', '.join(unknown)}", f"use any of: {', '.join(sorted(known))}"
            )
        )
    if (dev_judge is None) != (dev_humans is None):
        raise InputError(
            InputProblem(
                "dev_judge/dev_humans",
                "dev_judge and dev_humans go together",
                "give both development inputs, or neither",
            )
        )
    policy_obj, policy_source = _policy(policy)
    if "tie_rule" in settings:  # a name (or a rule object) becomes the rule object once, here
        from judge_transfer_audit.model.tie_rules import resolve_tie_rule

        settings["tie_rule"] = resolve_tie_rule(settings["tie_rule"])
    settings.setdefault("command", "audit.run(...)")
    if progress is True:
        from judge_transfer_audit.cli.options import Progress

        shown = Progress(enabled=True, force_bars=True)
        settings["progress"] = shown
        settings.setdefault("progress_bar", shown.bar)
    elif callable(progress):
        settings["progress"] = progress
    elif progress not in (None, False):
        raise InputError(
            InputProblem(
                "progress",
                f"not a progress setting: a {type(progress).__name__}",
                "give True (stage lines and bars on stderr), a callable taking each stage's message, or None",
            )
        )
    spec = AuditSpec(policy=policy_obj, policy_source=policy_source, **settings)
    given = {
        "judge": judge,
        "humans": humans,
        "pairs": pairs,
        "stories": stories,
        "dev_judge": dev_judge,
        "dev_humans": dev_humans,
    }
    if spec.progress is not None:
        spec.progress("loading inputs")
    with tempfile.TemporaryDirectory(prefix="judge-audit-") as folder:
        paths, labels = _stage(given, folder)
        try:
            data = load_audit_data(
                paths["judge"],
                paths["humans"],
                pairs=paths["pairs"],
                stories=paths["stories"],
                dev_judge=paths["dev_judge"],
                dev_humans=paths["dev_humans"],
                focal=focal,
                drop_invalid=drop_invalid,
                scale=scale,
                progress_bar=settings.get("progress_bar"),
            )
        except InputError as exc:
            raise _relabel_error(exc, labels) from None
    check_gate_support(policy_obj, data.votes, policy_source if policy_source != "defaults" else "policy")
    return run_audit(_relabel_data(data, labels), spec)


def load_result(path: str | os.PathLike[str]) -> AuditResult:
    """Read a ``result.json`` written by ``audit run`` (or :func:`write`) back into an AuditResult.

    Raises :class:`judge_transfer_audit.core.errors.InputError` when the file is missing, not JSON, not a result, or
    of another schema major version (re-run the audit with this version).

    Examples
    --------
    >>> import judge_transfer_audit as audit
    >>> audit.load_result("no/such/result.json")
    Traceback (most recent call last):
    ...
    judge_transfer_audit.core.errors.InputError: ...
    """
    from judge_transfer_audit.results.result import result_from_file

    path = os.fspath(path)
    try:
        return result_from_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            InputProblem(path, f"cannot read the result: {exc}", "give the result.json written by `audit run`")
        ) from None


def write(result: AuditResult, out_dir: str | os.PathLike[str], *, html: bool = True) -> dict[str, Path]:
    """Write result.json, report.html, junit.xml and the CSV tables into ``out_dir`` (as ``audit run``).

    Returns the files written, by name; :func:`load_result` reads result.json back.

    Examples
    --------
    >>> import tempfile
    >>> import judge_transfer_audit as audit
    >>> result = audit.run(
    ...     "fixtures/deployment/judge.csv",
    ...     "fixtures/deployment/humans.csv",
    ...     pairs="fixtures/deployment/pairs.csv",
    ...     uncertainty=False,
    ...     readers=False,
    ...     surface=False,
    ... )
    >>> out = tempfile.mkdtemp()
    >>> paths = audit.write(result, out, html=False)
    >>> sorted(paths)
    ['agreement', 'agreement_decision', 'cells', 'checks', 'judge_agreement', 'judge_configurations',
     'judge_pairs', 'junit', 'label_budget', 'leaderboard', 'reader_baseline', 'result']
    >>> again = audit.load_result(paths["result"])
    >>> again.status == result.status, len(again.cells)
    (True, 18)
    """
    from judge_transfer_audit.reports.outputs import write_outputs

    return write_outputs(result, out_dir, html=html)


__all__ = ["run", "load_result", "write", "Input"]
