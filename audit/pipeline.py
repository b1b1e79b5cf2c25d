"""The one orchestrator: ``run_audit(data, spec) -> AuditResult``.

Pure apart from the optional ``spec.progress`` callback: no file I/O, no printing, no
plotting. Optional sections (dev set, uncertainty, readers, surface features) live in
:mod:`audit.sections`, one module each with ``compute``; each comes back Computed, Skipped or
Failed with a reason (:mod:`audit.section_result`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from audit import sections
from audit.agreement import agreement_table, reader_baseline
from audit.data import ALL_MATCHUPS, HUMAN_OVERALL, JUDGE_AGGREGATE, AuditData
from audit.derive import derive_checks, status_of
from audit.errors import AuditError
from audit.human_side import human_sides
from audit.judge_side import judge_pair_outcomes, summarise_outcomes
from audit.parallel import run_calls
from audit.provenance import build_provenance
from audit.result import SCHEMA_VERSION, AuditResult, Cell, JudgeConfigRate, JudgeSide
from audit.result_tables import AgreementRows, BaselineRows, JudgePairs
from audit.rng import resolve_rng
from audit.sections import dev as dev_part
from audit.sections import judge_agreement as judge_agreement_part
from audit.sections import judge_configurations as configurations_part
from audit.sections import judge_position as position_part
from audit.sections import label_budget as budget_part
from audit.sections import leaderboard as leaderboard_part
from audit.sections import readers as readers_part
from audit.sections import surface as surface_part
from audit.sections import uncertainty as uncertainty_part
from audit.spec import AuditSpec
from audit.tie_rules import TieRule
from audit.tie_rules import tie_rule as resolve_tie_rule
from audit.verdict import assess_transfers, cell_counts, verdict_sentence
from audit.verdict.batched import assess_transfers_with_configurations


def choose_primary_judge(judges: tuple[str, ...], requested: str | None) -> str | None:
    """``requested`` if given, else ``ensemble`` when present, else the first configuration."""
    if requested is not None:
        if requested not in judges:
            from audit.errors import InputError, InputProblem

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


def judge_criterion_for(human_criterion: str, judge_criteria: set[str]) -> tuple[str | None, bool]:
    """The judge criterion compared with a human criterion, and whether it is a different target."""
    if human_criterion in judge_criteria:
        return human_criterion, False
    if human_criterion == HUMAN_OVERALL and JUDGE_AGGREGATE in judge_criteria:
        return JUDGE_AGGREGATE, True
    return None, False


def _judge_side(
    configs_of_cell: dict[str, dict], criterion: str, primary: str, tie_rule: str, different_target: bool
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
        tie_rule=tie_rule,
        different_target=different_target,
        configurations=configs,
    )


def _outcome_summaries(outcomes: pd.DataFrame, tie_rule: str | TieRule) -> dict[tuple[str, str], dict[str, dict]]:
    """:func:`~audit.judge_side.summarise_outcomes` of every matchup x criterion x judge in one
    pass: (matchup, criterion) -> judge -> summary, judges in order of first appearance in the cell.
    Each rate divides the credit by what ``tie_rule`` counts (:meth:`TieRule.denominator`)."""
    if outcomes is None or outcomes.empty:
        return {}
    rule = resolve_tie_rule(tie_rule)
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
    denominator = rule.denominator(tally["win"], tally["loss"], tally["tie"])
    if not np.array_equal(denominator, n_used):
        raise ValueError(
            f"judge credits were not computed under the '{rule.name}' tie rule: the credited outcomes "
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


#: a judge outcome as a verdict (an invalid output has none)
_VERDICT = {"win": 1.0, "loss": 0.0, "tie": 0.5, "invalid": float("nan")}


def judge_choices(outcomes: pd.DataFrame, primary: str | None, criteria: tuple[str, ...]) -> pd.DataFrame:
    """The primary judge's per-pair verdict, keyed by the *human* criterion it is compared with.

    ``y_judge`` is what the judge chose (1 focal, 0 other, 0.5 tie, NaN invalid), whatever the
    tie rule: agreement and the leaderboard compare choices; the rule only credits rates.
    """
    columns = ["pair_id", "criterion", "y_judge"]
    if primary is None or outcomes.empty:
        return pd.DataFrame(columns=columns)
    mine = outcomes[outcomes["judge"] == primary]
    # rows of each judge criterion once (stable: the outcomes' order), then gathered per human
    # criterion by index: no scan or sub-frame per criterion (10k criteria)
    codes, uniques = pd.factorize(mine["criterion"], sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    code_of = {c: i for i, c in enumerate(uniques)}
    judge_criteria = set(code_of)
    take, labels = [], []
    for crit in criteria:
        jc, _ = judge_criterion_for(crit, judge_criteria)
        if jc is None:
            continue
        rows = order[bounds[code_of[jc]] : bounds[code_of[jc] + 1]]
        take.append(rows)
        labels.append(np.full(len(rows), crit, dtype=object))
    if not take:
        return pd.DataFrame(columns=columns)
    idx = np.concatenate(take)
    return pd.DataFrame(
        {
            "pair_id": mine["pair_id"].take(idx).reset_index(drop=True),
            "criterion": np.concatenate(labels),
            "y_judge": mine["outcome"].take(idx).map(_VERDICT).astype(float).reset_index(drop=True),
        },
        columns=columns,
    )


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


def _human_sides(votes: list[pd.DataFrame], level: float, backend: str) -> list:
    """:func:`~audit.human_side.human_sides` of the cells' votes (a task of :func:`assess_cells`; tiny
    cells' GLMMs are evaluated together: :mod:`audit.glmm.batch`)."""
    return human_sides(votes, level=level, backend=backend)


def _verdict(cells, configurations, *, tie_rule, policy, seed):
    """The primary verdict (a task of :func:`assess_cells`), with the other judge configurations'
    cells decided on the same cell bootstraps when ``configurations`` holds any (their
    transfers, else None). If deciding them raises an input error, the primary verdict is made
    on its own and the configurations section decides them (and records the error)."""
    if configurations:
        try:
            return assess_transfers_with_configurations(
                cells, configurations, tie_rule=tie_rule, policy=policy, seed=seed
            )
        except AuditError:
            pass
    return assess_transfers(cells, tie_rule=tie_rule, policy=policy, seed=seed), None


def _configurations(configurations, *, tie_rule, policy, seed):
    """The other judge configurations' cells decided (a task of :func:`assess_cells` beside the
    primary verdict on workers; :func:`audit.verdict.batched.decide_configurations`): judge ->
    transfers, or None when that raises an input error (the section then decides them and records it)."""
    from audit.verdict.batched import decide_configurations

    try:
        decided = decide_configurations(configurations, tie_rule=tie_rule, policy=policy, seed=seed)
    except AuditError:
        return None
    return {judge: transfers for judge, (transfers, _) in decided.items()}


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
    every cell (the multiplicity adjustment is across cells): see :mod:`audit.verdict`.
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
    verdict's task on the same cell bootstraps (:mod:`audit.verdict.batched`): the pair draws
    and the humans' replicates of a cell are made once for the primary judge and every
    configuration with the same validly judged pairs. Each judge's decisions are its own run's."""
    judge_criteria = (
        set(outcomes.loc[outcomes["judge"] == primary, "criterion"].unique().tolist()) if primary else set()
    )
    base = _baseline_lookup(baseline)
    votes_by_cell = _group(data.votes, ["matchup", "criterion"])
    outcomes_by_cell = _group(outcomes[outcomes["judge"] == primary], ["matchup", "criterion"]) if primary else {}
    summaries = _outcome_summaries(outcomes, spec.tie_rule)
    pair_meta = data.pairs.drop_duplicates("matchup").set_index("matchup")
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
            parts.append((matchup, criterion, cell_votes, judge, credits))
    # The verdict (one call: the family needs every cell) beside the cells' GLMM fits, in chunks:
    # on --jobs local workers at once, else one after the other (the same results either way).
    jobs = _section_jobs(spec)
    chunks = [list(range(k, len(parts), 2 * jobs)) for k in range(min(2 * jobs, len(parts)))] if jobs > 1 else []
    configurations = {}
    if choices_by_judge:  # the judge configurations section's inputs (the same function builds them)
        from audit.judge_configurations import configuration_inputs

        present = {j: c for j, c in choices_by_judge.items() if c is not None and not c.empty}
        configurations = configuration_inputs(
            data.votes, present, order=[(m, c) for m, c, *_ in parts], skip=primary or ""
        )
    decision = dict(tie_rule=spec.tie_rule, policy=spec.policy.transfer, seed=verdict_seed)
    # In one process the configurations are decided beside the primary verdict, on its cell
    # bootstraps (less CPU); on workers they are a task of their own beside it and the GLMM fits
    # (the two together would be the run's longest task). The same decisions either way.
    together = jobs == 1 or not configurations
    calls = [
        (
            _verdict,
            dict(
                cells=[(m, c, v, cr) for m, c, v, _, cr in parts],
                configurations=configurations if together else {},
                **decision,
            ),
        )
    ]
    if not together:
        calls.append((_configurations, dict(configurations=configurations, **decision)))
    for chunk in chunks or [list(range(len(parts)))]:
        calls.append(
            (
                _human_sides,
                dict(votes=[parts[i][2] for i in chunk], level=spec.policy.transfer.level, backend=spec.glmm_backend),
            )
        )
    (transfers, decided), *fitted = run_calls(calls, jobs, label="human GLMMs and the verdict", preload=_TASK_MODULES)
    if not together:
        decided, *fitted = fitted
    humans = [None] * len(parts)
    for chunk, sides in zip(chunks or [list(range(len(parts)))], fitted):
        for i, side in zip(chunk, sides):
            humans[i] = side
    cells = []
    for (matchup, criterion, cell_votes, judge, _), human, (transfer, human_estimands) in zip(parts, humans, transfers):
        j_vs_m, r_base = base.get((matchup, criterion), (None, None))
        below = None
        if j_vs_m is not None and r_base is not None and judge is not None:
            below = bool(j_vs_m < r_base - spec.policy.transfer.max_baseline_gap)
        transfer = replace(transfer, judge_vs_majority=j_vs_m, reader_baseline=r_base, below_reader_baseline=below)
        meta = pair_meta.loc[matchup]
        cells.append(
            Cell(
                matchup=matchup,
                criterion=criterion,
                focal=str(meta["focal"]),
                other=str(meta["other"]),
                n_pairs=int(cell_votes["pair_id"].nunique()),
                n_readers=int(cell_votes["reader_id"].nunique()),
                n_votes=int(len(cell_votes)),
                human=replace(human, **human_estimands),
                judge=judge,
                transfer=transfer,
            )
        )
    return tuple(cells), decided


#: the stage message printed before a section of the batch (the run's timings are split at them)
_STAGE = {"readers": "reader analysis", "surface": "surface features", "judge_configurations": "judge configurations"}
#: what the tasks import on first use: imported before the workers fork, so they share it
_TASK_MODULES = (
    "audit._distributions",
    "audit.surface",
    "detectors",
    "audit.judge_configurations",
    "audit.judge_agreement",
    "audit.devset",
    "audit.readers",
)
#: the batch's sections by their cost on the fixture (the pool takes them in this order)
_LONGEST_FIRST = ("surface", "judge_configurations", "dev", "readers", "judge_agreement")


def _recording(fn, data: AuditData, spec: AuditSpec, **kwargs) -> tuple:
    """A section computed on a worker, with the detector figures it gave ``spec.timings`` (a worker's
    copy of the run's timings never comes back, so it records into its own and returns them)."""
    from audit.timings import RunTimings

    record = RunTimings() if spec.timings is not None else None
    section = fn(data, replace(spec, timings=record), **kwargs)
    return section, ([] if record is None else record.detectors)


def _section_jobs(spec: AuditSpec) -> int:
    """Workers for the independent sections: ``spec.jobs`` on this machine (1 with a Dask scheduler,
    whose workers do not share this process's memory)."""
    from audit.parallel import check_jobs

    return 1 if spec.scheduler else check_jobs(spec.jobs)


def run_audit(data: AuditData, spec: AuditSpec) -> AuditResult:
    """Run the audit on validated data; see docs/audit.md for every step."""
    progress = spec.progress or (lambda message: None)
    rng, seed = resolve_rng(spec.seed)
    root = np.random.SeedSequence(seed if seed is not None else int(rng.integers(2**32)))
    tie_seed, dev_seed, uncertainty_seed, readers_seed, surface_seed = root.spawn(5)
    verdict_seed = int(root.spawn(1)[0].generate_state(1)[0])  # one stream per cell from it, keyed by the cell

    progress("judge verdicts")
    outcomes = judge_pair_outcomes(data, spec.tie_rule, np.random.default_rng(tie_seed))
    choices_by_judge = {j: judge_choices(outcomes, j, data.criteria) for j in data.judges}
    auto = spec.judge == configurations_part.AUTO and configurations_part.AUTO not in data.judges
    if auto:
        primary = configurations_part.auto_judge(data, choices_by_judge)
    else:
        primary = choose_primary_judge(data.judges, spec.judge)

    progress("agreement")
    choices = judge_choices(outcomes, primary, data.criteria)
    # kappa/alpha pooled over matchups take chance agreement within each matchup unless
    # "focal" means one thing in every matchup (audit.data.pooling_scopes)
    oriented = len(data.matchups) < 2 or set(data.pooling_scopes()) == {ALL_MATCHUPS}
    agreement = AgreementRows(agreement_table(data.votes, pooling="as oriented" if oriented else "within matchup").rows)
    baseline = BaselineRows(reader_baseline(data.votes, choices).rows)
    judge_pairs = JudgePairs(outcomes.reset_index(drop=True))

    progress("human GLMMs")
    cells, decided = assess_cells_and_configurations(
        data, spec, outcomes, primary, baseline.to_frame(), verdict_seed, choices_by_judge
    )

    credits = sections.primary_credits(choices, data.pairs, primary)
    if spec.uncertainty:
        progress("bootstraps and leave-one-reader-out")
        uncertainty = uncertainty_part.compute(
            data,
            spec,
            credits=credits,
            all_credits=sections.judge_credits(outcomes),
            cells=cells,
            seed=uncertainty_seed,
        )
    else:
        uncertainty = sections.not_requested("--no-uncertainty")
    (peer_seed,) = root.spawn(1)  # after the five above and the verdict's, so their streams are unchanged
    peer_seeds = peer_seed.spawn(4)
    # The independent sections after the cells, as whole tasks (longest first) on --jobs local
    # workers, else one after the other here (audit.parallel.run_calls: the same results either way).
    jobs = _section_jobs(spec)
    task_spec = spec if jobs == 1 else replace(spec, progress_bar=None)  # no bars drawn from workers
    calls: dict[str, tuple] = {}
    if spec.readers:
        calls["readers"] = (
            readers_part.compute,
            dict(credits=sections.judge_credits(outcomes), cells=cells, seed=readers_seed),
        )
    if spec.surface:
        calls["surface"] = (surface_part.compute, dict(primary=primary, seed=surface_seed))
    calls["judge_configurations"] = (
        configurations_part.compute,
        dict(
            choices_by_judge=choices_by_judge,
            cells=cells,
            primary=primary,
            auto=auto,
            seed=peer_seeds[1],
            verdict_seed=verdict_seed,
            decided=decided,
        ),
    )
    calls["dev"] = (dev_part.compute, dict(seed=dev_seed))
    calls["judge_agreement"] = (
        judge_agreement_part.compute,
        dict(choices=choices, primary=primary, seed=peer_seeds[0]),
    )
    if jobs == 1:
        done = {}
        for name, (fn, kw) in calls.items():
            if name in _STAGE:
                progress(_STAGE[name])
            done[name] = fn(data, spec, **kw)
    else:  # longest first
        order = sorted(calls, key=lambda name: _LONGEST_FIRST.index(name))
        progress(f"{', '.join(_STAGE[n] for n in calls if n in _STAGE)} and the other sections on {jobs} workers")
        results = run_calls(
            [(_recording, dict(fn=calls[n][0], data=data, spec=task_spec, **calls[n][1])) for n in order],
            jobs,
            preload=_TASK_MODULES,
        )
        done = {}
        for name, (section, detectors) in zip(order, results):
            done[name] = section
            if spec.timings is not None:
                spec.timings.detectors.extend(detectors)
    dev = done["dev"]
    readers = done["readers"] if spec.readers else sections.not_requested("--no-readers")
    surface = done["surface"] if spec.surface else sections.not_requested("--no-surface")

    position = position_part.compute(data, spec, seed=peer_seeds[3])
    # The same derivation `audit gate` repeats on a saved result (audit.derive).
    checks = derive_checks(
        cells=cells,
        agreement=agreement.to_frame(),
        judge_pairs=judge_pairs.to_frame(),
        policy=spec.policy,
        dev=dev,
        uncertainty=uncertainty,
        readers=readers,
        surface=surface,
        primary=primary,
        judge_position=position,
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
        provenance=build_provenance(data, spec, seed=seed, primary_judge=primary or ""),
        judge_pairs=judge_pairs,
        dev=dev,
        uncertainty=uncertainty,
        readers=readers,
        surface=surface,
        judge_agreement=done["judge_agreement"],
        judge_configurations=done["judge_configurations"],
        leaderboard=leaderboard_part.compute(data, spec, choices=choices, primary=primary, seed=peer_seeds[2]),
        judge_position=position,
        label_budget=budget_part.compute(cells, spec),
    )


__all__ = ["run_audit", "assess_cells", "choose_primary_judge", "judge_criterion_for", "judge_choices"]
