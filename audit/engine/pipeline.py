"""The one orchestrator: ``run_audit(data, spec) -> AuditResult``.

Pure apart from the optional ``spec.progress`` callback: no file I/O, no printing, no
plotting. The optional sections are the entries of the section table
(:mod:`judge_transfer_audit.sections.registry`), each computed by one step of the run's task graph; each
comes back Computed, Skipped or Failed with a reason (:mod:`judge_transfer_audit.model.section_result`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from judge_transfer_audit.core.progress import no_progress
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.engine import steps as steps_of_run
from judge_transfer_audit.engine.parallel import open_runner
from judge_transfer_audit.engine.task_graph import Step, fork_available, run_steps
from judge_transfer_audit.model.data import ALL_MATCHUPS, AuditData
from judge_transfer_audit.model.spec import AuditSpec
from judge_transfer_audit.model.tie_rules import TieRule
from judge_transfer_audit.results.derive import derive_checks, status_of
from judge_transfer_audit.results.result import SCHEMA_VERSION, AuditResult, Cell, JudgeConfigRate, JudgeSide
from judge_transfer_audit.results.tables import AgreementRows, BaselineRows, JudgePairs
from judge_transfer_audit.sections import registry
from judge_transfer_audit.sections.judge_configurations import compute as configurations_part
from judge_transfer_audit.statistics.agreement import agreement_table, reader_baseline
from judge_transfer_audit.verdict import cell_counts, verdict_sentence
from judge_transfer_audit.verdict.judge_side import (
    judge_choices,
    judge_criterion_for,
    judge_pair_outcomes,
    summarise_outcomes,
)


def choose_primary_judge(judges: tuple[str, ...], requested: str | None) -> str | None:
    """``requested`` if given, else ``ensemble`` when present, else the first configuration."""
    if requested is not None:
        if requested not in judges:
            from judge_transfer_audit.core.errors import InputError, InputProblem

            raise InputError(
                InputProblem(
                    "judge",
                    f"no judge configuration named '{requested}'",
                    f"use one of: {', '.join(judges)}",
                    column="judge",
                    value=requested,
                )
            )
        return requested
    if not judges:
        return None
    return "ensemble" if "ensemble" in judges else judges[0]


def _judge_side(
    configs_of_cell: dict[str, dict], criterion: str, primary: str, tie_rule: TieRule, different_target: bool
) -> JudgeSide:
    """The judge's side of one cell from its outcome summaries by configuration."""
    configs = tuple(
        JudgeConfigRate(str(name), s["rate"], s["wins"], s["losses"], s["ties"], s["invalid"])
        for name, s in configs_of_cell.items()
    )
    s = configs_of_cell.get(primary) or summarise_outcomes(pd.DataFrame({"outcome": [], "credit": []}), tie_rule)
    return JudgeSide(
        judge=primary,
        criterion=criterion,
        rate=s["rate"],
        wins=s["wins"],
        losses=s["losses"],
        ties=s["ties"],
        invalid=s["invalid"],
        n_pairs=s["n_pairs"],
        tie_rule=tie_rule.name,
        different_target=different_target,
        configurations=configs,
    )


def _outcome_summaries(outcomes: pd.DataFrame, tie_rule: TieRule) -> dict[tuple[str, str], dict[str, dict]]:
    """:func:`~judge_transfer_audit.verdict.judge_side.summarise_outcomes` of every matchup x criterion x judge in one
    pass: (matchup, criterion) -> judge -> summary, judges in order of first appearance in the cell.
    Each rate divides the credit by what ``tie_rule`` counts (:meth:`TieRule.denominator`)."""
    if outcomes is None or outcomes.empty:
        return {}
    codes, keys = pd.factorize(
        pd.MultiIndex.from_arrays([outcomes["matchup"], outcomes["criterion"], outcomes["judge"]]), sort=False
    )
    keep = codes >= 0
    codes = codes[keep]
    n = len(keys)
    outcome = outcomes["outcome"].to_numpy(dtype=object)[keep]
    credit = outcomes["credit"].to_numpy(float)[keep]
    used = ~np.isnan(credit)
    tally = {name: np.bincount(codes[outcome == name], minlength=n) for name in ("win", "loss", "tie", "invalid")}
    size = np.bincount(codes, minlength=n)
    n_used = np.bincount(codes[used], minlength=n)
    credit_sum = np.bincount(codes[used], weights=credit[used], minlength=n)
    out: dict[tuple[str, str], dict[str, dict]] = {}
    denominator = tie_rule.denominator(tally["win"], tally["loss"], tally["tie"])
    if not np.array_equal(denominator, n_used):
        raise ValueError(
            f"judge credits were not computed under the '{tie_rule.name}' tie rule: the credited outcomes "
            "differ from what the rule counts"
        )
    for g, (matchup, criterion, judge) in enumerate(keys):
        out.setdefault((matchup, criterion), {})[str(judge)] = {
            "wins": int(tally["win"][g]),
            "losses": int(tally["loss"][g]),
            "ties": int(tally["tie"][g]),
            "invalid": int(tally["invalid"][g]),
            "n_pairs": int(size[g]),
            "n_credited": int(denominator[g]),
            "rate": float(credit_sum[g] / denominator[g]) if denominator[g] else float("nan"),
        }
    return out


def _baseline_lookup(baseline: pd.DataFrame) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    lookup: dict[tuple[str, str], tuple[float | None, float | None]] = {}
    if baseline is None or baseline.empty:
        return lookup
    # Like for like: the judge scored against the majority of the *other* readers on each
    # reader's units (judge_agreement_loo), beside the readers' leave-one-out agreement.
    cells = baseline[baseline["level"] == "cell"] if "level" in baseline else baseline
    for row in cells.itertuples(index=False):
        judge_val = getattr(row, "judge_agreement_loo", None)
        reader_val = getattr(row, "reader_mean", None)
        lookup[(str(row.matchup), str(row.criterion))] = (
            None if judge_val is None or pd.isna(judge_val) else float(judge_val),
            None if reader_val is None or pd.isna(reader_val) else float(reader_val),
        )
    return lookup


def _group(frame: pd.DataFrame, keys: list[str]) -> dict[tuple, pd.DataFrame]:
    """``frame`` split once by ``keys`` (never filtered again per cell)."""
    if frame is None or frame.empty:
        return {}
    return {key if isinstance(key, tuple) else (key,): part for key, part in frame.groupby(keys, sort=False)}


def _cell_parts(
    data: AuditData, spec: AuditSpec, outcomes: pd.DataFrame, primary: str | None
) -> list[steps_of_run.CellPart]:
    """Every matchup x criterion with votes: its votes, the judge's side and the primary judge's
    credits. Votes and judge outcomes are grouped by cell once (O(votes) overall)."""
    judge_criteria = (
        set(outcomes.loc[outcomes["judge"] == primary, "criterion"].unique().tolist()) if primary else set()
    )
    votes_by_cell = _group(data.votes, ["matchup", "criterion"])
    outcomes_by_cell = _group(outcomes[outcomes["judge"] == primary], ["matchup", "criterion"]) if primary else {}
    summaries = _outcome_summaries(outcomes, spec.tie_rule)
    parts = []
    for matchup in data.matchups:
        for criterion in data.criteria:
            cell_votes = votes_by_cell.get((matchup, criterion))
            if cell_votes is None or cell_votes.empty:
                continue
            jc, different = judge_criterion_for(criterion, judge_criteria)
            judge, credits = None, None
            if jc is not None and primary is not None:
                judge = _judge_side(summaries.get((matchup, jc), {}), jc, primary, spec.tie_rule, different)
                credits = outcomes_by_cell.get((matchup, jc))
            parts.append(steps_of_run.CellPart(matchup, criterion, cell_votes, judge, credits))
    return parts


def _configuration_inputs(data: AuditData, parts, choices_by_judge, primary) -> dict:
    """The other judge configurations' cell inputs (the judge configurations section's; the same
    function builds them), decided beside or inside the primary verdict."""
    if not choices_by_judge:
        return {}
    from judge_transfer_audit.verdict.judge_configurations import configuration_inputs

    present = {j: c for j, c in choices_by_judge.items() if c is not None and not c.empty}
    if not any(j != (primary or "") for j in present):
        return {}  # what configuration_inputs gives, without building every cell's human side first
    return configuration_inputs(
        data.votes, present, order=[(p.matchup, p.criterion) for p in parts], skip=primary or ""
    )


def _cell_steps(
    data: AuditData,
    spec: AuditSpec,
    parts,
    configurations: dict,
    baseline: pd.DataFrame,
    verdict_seed: int,
    jobs: int,
) -> list[Step]:
    return steps_of_run.cell_steps(
        parts,
        configurations,
        level=spec.policy.transfer.level,
        backend=spec.glmm_backend,
        decision=dict(tie_rule=spec.tie_rule, policy=spec.policy.transfer, seed=verdict_seed),
        base=_baseline_lookup(baseline),
        pair_meta=data.pairs.drop_duplicates("matchup").set_index("matchup"),
        gap=spec.policy.transfer.max_baseline_gap,
        jobs=jobs,
    )


def assess_cells(
    data: AuditData,
    spec: AuditSpec,
    outcomes: pd.DataFrame,
    primary: str | None,
    baseline: pd.DataFrame,
    verdict_seed: int = 0,
) -> tuple[Cell, ...]:
    """Humans, judge and the transfer decision for every matchup x criterion with votes.

    Votes and judge outcomes are grouped by cell once (O(votes) overall). The decision needs
    every cell (the multiplicity adjustment is across cells): see :mod:`judge_transfer_audit.verdict`.
    """
    return assess_cells_and_configurations(data, spec, outcomes, primary, baseline, verdict_seed)[0]


def assess_cells_and_configurations(
    data: AuditData,
    spec: AuditSpec,
    outcomes: pd.DataFrame,
    primary: str | None,
    baseline: pd.DataFrame,
    verdict_seed: int = 0,
    choices_by_judge: dict[str, pd.DataFrame] | None = None,
) -> tuple[tuple[Cell, ...], dict | None]:
    """:func:`assess_cells`, and the cell decisions of every other configuration in
    ``choices_by_judge`` (judge -> its transfers; None without configurations), made in the
    verdict's task on the same cell bootstraps (:mod:`judge_transfer_audit.verdict.batched`): the pair draws
    and the humans' replicates of a cell are made once for the primary judge and every
    configuration with the same validly judged pairs. Each judge's decisions are its own run's.
    With ``spec.jobs`` > 1 the verdict and the cells' GLMM fits run on a local pool (the same
    results): :mod:`judge_transfer_audit.engine.task_graph`."""
    jobs = _section_jobs(spec)
    parts = _cell_parts(data, spec, outcomes, primary)
    configurations = _configuration_inputs(data, parts, choices_by_judge, primary)
    steps = _cell_steps(data, spec, parts, configurations, baseline, verdict_seed, jobs)
    return run_steps(steps, jobs=jobs, preload=_TASK_MODULES)["cells"]


#: what the steps import on first use: imported before the workers fork, so they share it
_TASK_MODULES = (
    "judge_transfer_audit.statistics.distributions",
    "judge_transfer_audit.statistics.surface",
    "judge_transfer_audit.detectors",
    "judge_transfer_audit.verdict.judge_configurations",
    "judge_transfer_audit.statistics.judge.agreement",
    "judge_transfer_audit.statistics.devset",
    "judge_transfer_audit.statistics.readers",
    "judge_transfer_audit.statistics.uncertainty",
    "judge_transfer_audit.statistics.leaderboard.fit",
    "judge_transfer_audit.statistics.judge.position",
)


def _section_jobs(spec: AuditSpec) -> int:
    """Workers of the run's steps: ``spec.jobs`` on this machine (1 with a Dask scheduler, whose
    workers do not share this process's memory: the steps then run here, in order, and the
    uncertainty section's and the leaderboard's tasks on the cluster)."""
    from judge_transfer_audit.engine.parallel import check_jobs

    return 1 if spec.scheduler else check_jobs(spec.jobs)


def run_audit(data: AuditData, spec: AuditSpec) -> AuditResult:
    """Run the audit on validated data; see docs/audit.md for every step.

    After the judge's verdicts and the agreement tables, the statistics are one task graph
    (:mod:`judge_transfer_audit.engine.task_graph`): in order in this process with ``--jobs 1`` (or a Dask scheduler,
    which runs the uncertainty section's and the leaderboard's tasks), else on a local pool of ``--jobs`` workers, every
    step started as soon as what it reads is done. The results are the same either way.
    """
    if spec.runner_opener is None:
        spec = replace(spec, runner_opener=open_runner)
    progress = spec.progress or (lambda message: None)
    rng, seed = resolve_rng(spec.seed)
    root = np.random.SeedSequence(seed if seed is not None else int(rng.integers(2**32)))
    # every stream at a fixed spawn key under the root (the sections' in the section table), so adding a
    # section changes no other stream
    tie_seed = steps_of_run.seed_of(root, registry.RUN_SEEDS["judge ties"])
    # one stream per cell from it, keyed by the cell
    verdict_seed = int(steps_of_run.seed_of(root, registry.RUN_SEEDS["verdict"]).generate_state(1)[0])

    bar_of = spec.progress_bar or no_progress  # a bar per stage: counts and an ETA on a terminal
    progress("judge verdicts")
    bar = bar_of("judge verdicts", len(data.judges) + 2)
    outcomes = judge_pair_outcomes(data, spec.tie_rule, np.random.default_rng(tie_seed))
    bar.advance()
    choices_by_judge = {}
    for j in data.judges:
        choices_by_judge[j] = judge_choices(outcomes, j, data.criteria)
        bar.advance()
    auto = spec.judge == configurations_part.AUTO and configurations_part.AUTO not in data.judges
    if auto:
        primary = configurations_part.auto_judge(data, choices_by_judge)
    else:
        primary = choose_primary_judge(data.judges, spec.judge)
    bar.advance()
    bar.close()

    progress("agreement")
    bar = bar_of("agreement", 3)
    choices = judge_choices(outcomes, primary, data.criteria)
    # kappa/alpha pooled over matchups take chance agreement within each matchup unless
    # "focal" means one thing in every matchup (judge_transfer_audit.model.data.pooling_scopes)
    oriented = len(data.matchups) < 2 or set(data.pooling_scopes()) == {ALL_MATCHUPS}
    bar.advance()
    agreement = AgreementRows(agreement_table(data.votes, pooling="as oriented" if oriented else "within matchup").rows)
    bar.advance()
    baseline = BaselineRows(reader_baseline(data.votes, choices).rows)
    judge_pairs = JudgePairs(outcomes.reset_index(drop=True))
    bar.advance()
    bar.close()

    jobs = _section_jobs(spec)
    pooled = jobs > 1 and fork_available()
    progress(f"the statistics on {jobs} workers" if pooled else "human GLMMs")
    parts = _cell_parts(data, spec, outcomes, primary)
    configurations = _configuration_inputs(data, parts, choices_by_judge, primary)
    section_steps = steps_of_run.section_steps(
        data,
        spec,
        pooled=pooled,
        outcomes=outcomes,
        choices=choices,
        choices_by_judge=choices_by_judge,
        primary=primary,
        auto=auto,
        verdict_seed=verdict_seed,
        root=root,
        seed=seed,
    )
    steps = _cell_steps(data, spec, parts, configurations, baseline.to_frame(), verdict_seed, jobs if pooled else 1)
    done = run_steps(
        steps + section_steps,
        jobs=jobs if pooled else 1,
        progress=progress,
        preload=_TASK_MODULES,
        timings=spec.timings,
        bar=spec.progress_bar,
    )
    for s in section_steps:  # a section on a worker came back with the detector figures it recorded
        if s.fn is steps_of_run.recording:
            done[s.name], detectors = done[s.name]
            if spec.timings is not None:
                spec.timings.detectors.extend(detectors)
    cells, _ = done["cells"]
    optional = steps_of_run.sections_of_run(spec, done)
    # The same derivation `audit gate` repeats on a saved result (judge_transfer_audit.results.derive).
    checks = derive_checks(
        cells=cells,
        agreement=agreement.to_frame(),
        judge_pairs=judge_pairs.to_frame(),
        policy=spec.policy,
        sections=optional,
        primary=primary,
    )
    status = status_of(checks)
    return AuditResult(
        schema_version=SCHEMA_VERSION,
        status=status,
        verdict=verdict_sentence(
            cells, status, checks, margin=spec.policy.transfer.margin, adjust=spec.policy.transfer.adjust
        ),
        cells=cells,
        counts=cell_counts(cells),
        agreement=agreement,
        reader_baseline=baseline,
        checks=tuple(checks),
        provenance=done["provenance"],
        judge_pairs=judge_pairs,
        sections=optional,
        **_levels(cells, spec.policy),
    )


def _levels(cells, policy) -> dict:
    """The matchup and study transfer decisions (:func:`judge_transfer_audit.verdict.checks.transfer_levels`)."""
    from judge_transfer_audit.verdict.checks import transfer_levels

    matchups, study = transfer_levels(cells, policy)
    return {"matchup_transfers": matchups, "study_transfer": study}


__all__ = ["run_audit", "assess_cells", "choose_primary_judge", "judge_criterion_for", "judge_choices"]
