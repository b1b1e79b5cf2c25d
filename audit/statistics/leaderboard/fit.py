"""Many-system designs: Bradley-Terry leaderboards of the humans and of the judge.

Humans: ``logit P(reader prefers the focal system) = s_focal - s_other + u_cluster + v_reader``,
a Bradley-Terry model with crossed random intercepts fitted by our GLMM engine
(:func:`judge_transfer_audit.statistics.glmm.fit_crossed_glmm`; the design matrix holds +1 for the focal system and -1
for the other, one system left out as the reference, no intercept). Ties are left out
(decisive votes only, counted). The cluster is the pair, or the prompt (``group_id``):
``cluster="auto"`` takes the pair when pairs carry at least two decisive votes on average
(otherwise a pair variance is not identified: with MT-Bench's 1.4 votes per pair both
glmer and our engine put a standard deviation of ~21 on it) and the prompt group when
there is one, else only the reader term.

Judge: the same design on the judge's decisive verdicts of the same pairs (one per pair),
an ordinary logistic Bradley-Terry fit (Firth's penalised likelihood under separation,
:func:`judge_transfer_audit.statistics.readers.firth.fit_logistic`).

Both leaderboards are on one scale: logit strengths centred to mean zero over the systems
(``s - mean(s)``, with the covariance carried through), so no system is pinned at zero. The
judge's fit has no random effects, so its strengths are population-averaged; the humans'
are conditional on a typical cluster and reader (a little larger in size when the
variances are large); ranks and Kendall's tau do not depend on that.

Rank agreement: Kendall's tau-b between the two sets of strengths, with a cluster
bootstrap interval (clusters resampled, both models refitted on each replicate, warm
started). A system is *misplaced* when the central ``level`` interval of its bootstrap rank
difference (judge rank minus human rank, both from the same replicate) excludes zero.

A comparison graph (systems linked by a decisive human vote) that is not connected cannot
be ranked: the result says which groups of systems cannot be ranked against which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from judge_transfer_audit.core.errors import InputError, InputProblem
from judge_transfer_audit.core.rng import resolve_rng
from judge_transfer_audit.model.estimate import Estimate
from judge_transfer_audit.statistics.leaderboard.bootstrap import (
    ReplicateBlock,
    codes_design,
    distinct_verdicts,
    fit_humans,
    fit_judge,
    reader_curvature,
    replicate_block,
    replicate_blocks,
    start_curvature,
    strength_ranks,
    weighted_refits,
)
from judge_transfer_audit.statistics.leaderboard.diagnostics import LeaderboardDiagnostics, leaderboard_diagnostics

if TYPE_CHECKING:
    from judge_transfer_audit.core.tasks import TaskRunner

CLUSTERS = ("auto", "pair", "group", "none")


@dataclass(frozen=True)
class SystemStrength:
    """One system on both leaderboards (centred logit strengths; rank 1 = strongest).

    ``human_rank_low``/``human_rank_high`` bound the central ``level`` share of the humans'
    bootstrap ranks; ``rank_shift`` is ``judge_rank - human_rank`` with the bootstrap interval
    of that difference; ``misplaced`` is true when the interval excludes zero.
    ``n_votes`` and ``n_judged`` count the decisive human votes and judge verdicts on pairs
    with this system.
    """

    system: str
    human: Estimate
    judge: Estimate
    human_rank: int
    judge_rank: int
    human_rank_low: float
    human_rank_high: float
    rank_shift: Estimate
    misplaced: bool
    n_votes: int
    n_judged: int


@dataclass(frozen=True)
class Leaderboard:
    """Human and judge Bradley-Terry leaderboards (see :func:`bradley_terry_leaderboard`).

    Attributes
    ----------
    systems : tuple of SystemStrength
        Sorted by human strength, strongest first.
    kendall_tau : Estimate
        Kendall's tau-b of judge vs human strengths, cluster-bootstrap percentile interval.
    misplaced : tuple of str
        Systems whose rank-shift interval excludes zero.
    connected : bool
        False when the comparison graph splits; then ``components`` lists the groups of
        systems that cannot be ranked against each other and nothing is fitted.
    components : tuple of tuple of str
    criterion, cluster : str
        The human criterion ranked; the clustering factor used (``pair``, ``group``, ``none``).
    reference : str
        The system left out of the design (strengths are centred afterwards).
    sd_cluster, sd_reader : float
        Random-intercept standard deviations of the human fit.
    n_votes, n_ties, n_judged : int
        Decisive human votes used, human ties left out, decisive judge verdicts used.
    n_boot, n_boot_failed : int
        Bootstrap replicates requested and those that could not be refitted (left out).
    converged, judge_separated : bool
    seed : int or None
    judge : str
    notes : tuple of str
    diagnostics : LeaderboardDiagnostics or None
        Tied neighbours, position, reader concentration, intransitive triples and the tie convention
        (:func:`judge_transfer_audit.statistics.leaderboard.diagnostics.leaderboard_diagnostics`); None when not
        connected.
    """

    systems: tuple[SystemStrength, ...]
    kendall_tau: Estimate
    misplaced: tuple[str, ...]
    connected: bool
    components: tuple[tuple[str, ...], ...]
    criterion: str
    cluster: str
    reference: str
    sd_cluster: float
    sd_reader: float
    n_votes: int
    n_ties: int
    n_judged: int
    n_boot: int
    n_boot_failed: int
    converged: bool
    judge_separated: bool
    level: float
    seed: int | None
    judge: str = ""
    notes: tuple[str, ...] = ()
    diagnostics: LeaderboardDiagnostics | None = None

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for s in self.systems:
            rows.append(
                dict(
                    system=s.system,
                    human=s.human.estimate,
                    human_ci_low=s.human.ci_low,
                    human_ci_high=s.human.ci_high,
                    judge=s.judge.estimate,
                    judge_ci_low=s.judge.ci_low,
                    judge_ci_high=s.judge.ci_high,
                    human_rank=s.human_rank,
                    judge_rank=s.judge_rank,
                    human_rank_low=s.human_rank_low,
                    human_rank_high=s.human_rank_high,
                    rank_shift=s.rank_shift.estimate,
                    rank_shift_ci_low=s.rank_shift.ci_low,
                    rank_shift_ci_high=s.rank_shift.ci_high,
                    misplaced=s.misplaced,
                    n_votes=s.n_votes,
                    n_judged=s.n_judged,
                )
            )
        return pd.DataFrame(
            rows,
            columns=[
                "system",
                "human",
                "human_ci_low",
                "human_ci_high",
                "judge",
                "judge_ci_low",
                "judge_ci_high",
                "human_rank",
                "judge_rank",
                "human_rank_low",
                "human_rank_high",
                "rank_shift",
                "rank_shift_ci_low",
                "rank_shift_ci_high",
                "misplaced",
                "n_votes",
                "n_judged",
            ],
        )

    def __str__(self) -> str:
        if not self.connected:
            groups = " | ".join(", ".join(c) for c in self.components)
            return f"Leaderboard: the comparison graph is not connected; cannot rank across: {groups}"
        lines = [
            f"Bradley-Terry leaderboard ({self.criterion}; cluster {self.cluster}; centred logit strengths): "
            f"Kendall tau judge vs humans {self.kendall_tau}"
        ]
        for s in self.systems:
            flag = "  MISPLACED" if s.misplaced else ""
            lines.append(
                f"  {s.human_rank:>2}. {s.system}: human {s.human}, judge {s.judge} (judge rank {s.judge_rank}){flag}"
            )
        return "\n".join(lines)


# ----------------------------------------------------------------------------- pieces
def comparison_components(focal: np.ndarray, other: np.ndarray) -> tuple[tuple[str, ...], ...]:
    """Connected components of the graph linking the two systems of every comparison (largest first,
    then in name order; each component's systems sorted)."""
    codes, names = pd.factorize(
        pd.Series(np.concatenate([np.asarray(focal), np.asarray(other)])).astype(str), use_na_sentinel=False
    )
    k, n = len(names), len(focal)
    parent = list(range(k))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    # the distinct links only: a few hundred unions, whatever the number of comparisons
    for link in np.unique(codes[:n].astype(np.int64) * k + codes[n:]).tolist():
        ra, rb = find(link // k), find(link % k)
        if ra != rb:
            parent[ra] = rb
    groups: dict[int, list[str]] = {}
    for j in range(k):
        groups.setdefault(find(j), []).append(str(names[j]))
    return tuple(sorted((tuple(sorted(g)) for g in groups.values()), key=lambda g: (-len(g), g)))


def bt_design(focal: np.ndarray, other: np.ndarray, systems: list[str]) -> np.ndarray:
    """+1 for the focal system, -1 for the other; the first system (reference) left out."""
    index = {s: j for j, s in enumerate(systems)}
    codes = [np.array([index[s] for s in side], np.int64) for side in (focal, other)]
    return codes_design(*codes, len(systems))


def centred(b: np.ndarray, vcov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Strengths with the reference's 0 prepended, centred to mean zero, and their covariance."""
    k = len(b) + 1
    full = np.concatenate([[0.0], b])
    V = np.zeros((k, k))
    V[1:, 1:] = vcov
    C = np.eye(k) - 1.0 / k
    return C @ full, C @ V @ C.T


def _sorted_codes(labels) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(labels as str, return_inverse=True)`` swapped: (each label's code, the sorted distinct
    labels), by a hash table rather than a sort of every label."""
    codes, uniques = pd.factorize(pd.Series(labels).astype(str), sort=True, use_na_sentinel=False)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)


def _choose_cluster(cluster: str, n_votes: int, n_pairs: int, has_groups: bool) -> str:
    if cluster != "auto":
        return cluster
    if n_pairs and n_votes / n_pairs >= 2.0:
        return "pair"
    return "group" if has_groups else "none"


def _check(votes: pd.DataFrame, judge_choice: pd.DataFrame | None, cluster: str) -> None:
    problems = []
    missing = [c for c in ("pair_id", "reader_id", "criterion", "focal", "other", "y") if c not in votes.columns]
    if missing:
        problems.append(
            InputProblem(
                "votes",
                f"missing column(s) {', '.join(missing)}",
                "pass the normalised votes frame of judge_transfer_audit.model.data",
            )
        )
    if judge_choice is not None:
        miss = [c for c in ("pair_id", "criterion", "y_judge") if c not in judge_choice.columns]
        if miss:
            problems.append(
                InputProblem(
                    "judge_choice",
                    f"missing column(s) {', '.join(miss)}",
                    "pass pair_id, criterion, y_judge (1, 0, 0.5 tie, NaN none)",
                )
            )
    if cluster not in CLUSTERS:
        problems.append(
            InputProblem(
                "arguments", f"unknown cluster '{cluster}'", f"use one of {', '.join(CLUSTERS)}", value=cluster
            )
        )
    if problems:
        raise InputError(problems)


# ----------------------------------------------------------------------------- entry point
def bradley_terry_leaderboard(
    votes: pd.DataFrame,
    judge_choice: pd.DataFrame | None = None,
    *,
    pairs: pd.DataFrame | None = None,
    criterion: str | None = None,
    cluster: str = "auto",
    judge: str = "",
    level: float = 0.95,
    n_boot: int = 200,
    rng: int | np.random.Generator | None = None,
    runner: TaskRunner | None = None,
) -> Leaderboard:
    """Bradley-Terry leaderboards of the humans (crossed GLMM) and of the judge, and their agreement.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (pair_id, reader_id, criterion, focal, other, y: 1 focal, 0 other, NaN tie).
    judge_choice : DataFrame, optional
        One judge configuration's verdicts keyed by the human criterion (pair_id, criterion,
        y_judge: 1, 0, 0.5 tie, NaN none). Without it only the human leaderboard is fitted.
    pairs : DataFrame, optional
        pair_id and group_id (the prompt) for ``cluster="group"``/``"auto"``.
    criterion : str, optional
        The human criterion to rank (default ``overall`` when present, else the first).
    cluster : {"auto", "pair", "group", "none"}
        The random intercept beside the reader's (see the module docstring for ``auto``).
    level : float
        Level of the Wald intervals, the tau interval and the rank intervals.
    n_boot : int
        Cluster-bootstrap replicates for tau and the rank intervals (0: none).
    rng : int, Generator or None
        Seed of the bootstrap (recorded).
    runner : judge_transfer_audit.core.tasks.TaskRunner, optional
        Fits the bootstrap replicates in blocks on its workers
        (:func:`judge_transfer_audit.engine.parallel.open_runner`; the same replicates, bit for bit, as without one).

    Returns
    -------
    Leaderboard

    Raises
    ------
    InputError
        Missing columns, unknown cluster or criterion, fewer than three systems.

    Notes
    -----
    Validated against ``lme4::glmer(y ~ 0 + x + (1|cluster) + (1|reader), binomial)`` on the
    same design (tests/reference/bradley_terry/), and on a seeded 20-system simulation with
    known strengths (tests/audit/statistics/leaderboard/test_leaderboard.py).
    """
    from judge_transfer_audit.statistics.distributions import kendalltau, norm

    _check(votes, judge_choice, cluster)
    crits = list(pd.unique(votes["criterion"]))
    crit = criterion if criterion is not None else ("overall" if "overall" in crits else crits[0])
    if crit not in crits:
        raise InputError(
            InputProblem("arguments", f"no votes on criterion '{crit}'", f"use one of {', '.join(crits)}", value=crit)
        )
    rng, seed = resolve_rng(rng)
    mine = votes[votes["criterion"] == crit]
    decisive = mine[mine["y"].notna()].reset_index(drop=True)
    all_systems = sorted(set(pd.unique(mine["focal"].astype(str))) | set(pd.unique(mine["other"].astype(str))))
    if len(all_systems) < 3:
        raise InputError(
            InputProblem(
                "votes",
                f"{len(all_systems)} systems on criterion '{crit}'",
                "a leaderboard needs three or more systems",
            )
        )
    components = comparison_components(decisive["focal"].to_numpy(), decisive["other"].to_numpy())
    ranked = {s for c in components for s in c}
    components = components + tuple((s,) for s in all_systems if s not in ranked)
    groups, gmap = None, {}
    if pairs is not None and "group_id" in pairs.columns:
        gmap = dict(zip(pairs["pair_id"].astype(str), pairs["group_id"].astype(str)))
        groups = decisive["pair_id"].astype(str).map(gmap).fillna("")
        if (groups == "").any():
            groups = None
    used = _choose_cluster(cluster, len(decisive), decisive["pair_id"].nunique(), groups is not None)
    if used == "group" and groups is None:
        raise InputError(
            InputProblem(
                "pairs",
                "cluster='group' needs a group_id for every pair",
                "give a pairs file with group_id, or use cluster='pair'",
            )
        )
    base = dict(
        criterion=crit,
        cluster=used,
        level=float(level),
        seed=seed,
        judge=judge,
        n_ties=int(mine["y"].isna().sum()),
        n_boot=int(n_boot),
    )
    if len(components) > 1:
        return Leaderboard(
            systems=(),
            kendall_tau=Estimate(math.nan),
            misplaced=(),
            connected=False,
            components=components,
            reference="",
            sd_cluster=math.nan,
            sd_reader=math.nan,
            n_votes=len(decisive),
            n_judged=0,
            n_boot_failed=0,
            converged=False,
            judge_separated=False,
            notes=("no decisive vote links these groups of systems",),
            **base,
        )

    systems = all_systems
    system_index = pd.Index(systems)

    def system_codes(names) -> np.ndarray:
        return system_index.get_indexer(pd.Series(names).astype(str)).astype(np.int64)

    focal_code, other_code = system_codes(decisive["focal"]), system_codes(decisive["other"])
    X = codes_design(focal_code, other_code, len(systems))
    # labels as codes in the order of the sorted labels: the GLMM's levels in the same order as the labels'
    cluster_labels = {
        "pair": _sorted_codes(decisive["pair_id"])[0],
        "group": None if groups is None else _sorted_codes(groups)[0],
        "none": None,
    }[used]
    readers = _sorted_codes(decisive["reader_id"])[0]
    y = decisive["y"].to_numpy(float)

    def factors(idx):
        out = {"reader": readers[idx]}
        if cluster_labels is not None:
            out = {used: cluster_labels[idx], **out}
        return out

    names = systems[1:]
    everything = np.arange(len(y))
    full_factors = factors(everything)
    h_fit, h_b, h_V = fit_humans(y, X, full_factors, names)
    h_s, h_C = centred(h_b, h_V)
    z = float(norm.ppf(0.5 + level / 2.0))

    # the judge on the same pairs (decisive verdicts only)
    jd = pd.DataFrame(columns=["pair_id", "y_judge"])
    if judge_choice is not None:
        jd = judge_choice[judge_choice["criterion"].astype(str) == crit][["pair_id", "y_judge"]].copy()
        jd["pair_id"] = jd["pair_id"].astype(str)
    pair_sys = mine.drop_duplicates("pair_id")[["pair_id", "focal", "other"]].astype(str)
    jd = pair_sys.merge(jd, on="pair_id", how="inner")
    jd = jd[jd["y_judge"].isin([0.0, 1.0])].reset_index(drop=True)
    has_judge = len(jd) > 0
    j_s = np.full(len(systems), np.nan)
    j_C = np.full((len(systems), len(systems)), np.nan)
    j_sep = False
    notes = list(h_fit.notes)
    if has_judge:
        jy = jd["y_judge"].to_numpy(float)
        row, y_d, focal_d, other_d = distinct_verdicts(
            jy, system_codes(jd["focal"]), system_codes(jd["other"]), len(systems)
        )
        j_fit, j_b, j_V = fit_judge(
            y_d, codes_design(focal_d, other_d, len(systems)), weights=np.bincount(row, minlength=len(y_d))
        )
        j_sep = bool(j_fit.separated)
        if j_sep:
            notes.append("the judge's verdicts separate some systems: Firth's penalised estimate is used")
        j_s, j_C = centred(j_b, j_V)

    # cluster bootstrap of tau and of the human ranks
    boot_source = decisive["pair_id"] if used in ("pair", "none") else groups
    code, labels = _sorted_codes(boot_source)
    jcode = None
    if has_judge:
        # each judged pair's cluster: itself, or its prompt (-1 below: no decisive human vote in it)
        jc = jd["pair_id"] if used != "group" else jd["pair_id"].map(gmap)
        jcode = pd.Index(labels).get_indexer(jc.fillna(""))  # -1: judged pair without a decisive human vote
    template = ReplicateBlock(
        y=y,
        focal=focal_code,
        other=other_code,
        readers=readers,
        clustered=cluster_labels is not None,
        cluster=used,
        code=code,
        n_clusters=len(labels),
        k=len(systems),
        names=tuple(names),
        start=replace(h_fit, conditional_modes={}),  # the warm start reads the estimates only
        curvature=None,
        judge_y=jy if has_judge else None,
        judge_focal=system_codes(jd["focal"]) if has_judge else None,
        judge_other=system_codes(jd["other"]) if has_judge else None,
        judge_code=jcode,
    )
    if n_boot:  # the full fit's curvature, where every refit's search starts
        curvature = (
            reader_curvature(template)
            if weighted_refits(template)
            else start_curvature(y, X, full_factors, names, h_fit)
        )
        template = replace(template, curvature=curvature)
    from judge_transfer_audit.core.tasks import TaskRunner

    runner = runner if runner is not None else TaskRunner()  # in-process: BLAS on one thread, as on a pool
    blocks = replicate_blocks(template, rng, int(n_boot), runner.jobs)
    replicates = [r for part in runner.map(replicate_block, blocks, label="leaderboard bootstrap") for r in part]
    taus, rank_reps, shift_reps, failed = [], [], [], 0
    for ranks, tau_r, shift, failed_r in replicates:
        if ranks is not None:
            rank_reps.append(ranks)
        if tau_r is not None:
            taus.append(tau_r)
            shift_reps.append(shift)
        failed += int(failed_r)
    tail = (1.0 - level) / 2.0
    rank_lo = rank_hi = np.full(len(systems), np.nan)
    if rank_reps:
        rank_lo, rank_hi = np.quantile(np.array(rank_reps), [tail, 1.0 - tail], axis=0)
    shift_lo = shift_hi = np.full(len(systems), np.nan)
    if shift_reps:
        shift_lo, shift_hi = np.quantile(np.array(shift_reps), [tail, 1.0 - tail], axis=0)
    tau_est = float(kendalltau(h_s, j_s).statistic) if has_judge else math.nan
    tau_ok = np.array([t for t in taus if np.isfinite(t)])
    tau = Estimate(
        tau_est, *(np.quantile(tau_ok, [tail, 1.0 - tail]).tolist() if tau_ok.size >= 2 else (math.nan, math.nan))
    )

    h_rank, j_rank = strength_ranks(h_s), (strength_ranks(j_s) if has_judge else np.zeros(len(systems)))
    per_system = np.bincount(focal_code, minlength=len(systems)) + np.bincount(other_code, minlength=len(systems))
    n_votes = {s: int(per_system[j]) for j, s in enumerate(systems)}
    n_judged = {s: int(((jd["focal"] == s) | (jd["other"] == s)).sum()) for s in systems}
    rows = []
    for j, s in enumerate(systems):
        h_se, j_se = math.sqrt(max(h_C[j, j], 0.0)), math.sqrt(max(j_C[j, j], 0.0)) if has_judge else math.nan
        misplaced = bool(shift_reps and not (shift_lo[j] <= 0.0 <= shift_hi[j]))
        rows.append(
            SystemStrength(
                system=s,
                human=Estimate(float(h_s[j]), float(h_s[j] - z * h_se), float(h_s[j] + z * h_se)),
                judge=Estimate(float(j_s[j]), float(j_s[j] - z * j_se), float(j_s[j] + z * j_se))
                if has_judge
                else Estimate(math.nan),
                human_rank=int(h_rank[j]),
                judge_rank=int(j_rank[j]),
                human_rank_low=float(rank_lo[j]),
                human_rank_high=float(rank_hi[j]),
                rank_shift=Estimate(
                    float(j_rank[j] - h_rank[j]) if has_judge else math.nan, float(shift_lo[j]), float(shift_hi[j])
                ),
                misplaced=misplaced,
                n_votes=n_votes[s],
                n_judged=n_judged[s],
            )
        )
    rows.sort(key=lambda r: r.human_rank)
    sd = dict(h_fit.sd)
    try:
        diagnostics = leaderboard_diagnostics(mine, systems, h_s, h_C, level=level)
    except (np.linalg.LinAlgError, ValueError) as exc:  # the leaderboard stands without them
        diagnostics = None
        notes.append(f"the leaderboard's diagnostics could not be computed: {exc}")
    return Leaderboard(
        systems=tuple(rows),
        kendall_tau=tau,
        misplaced=tuple(r.system for r in rows if r.misplaced),
        connected=True,
        components=components,
        reference=systems[0],
        sd_cluster=float(sd.get(used, math.nan)),
        sd_reader=float(sd.get("reader", math.nan)),
        n_votes=len(decisive),
        n_judged=len(jd),
        n_boot_failed=failed,
        converged=bool(h_fit.converged),
        judge_separated=j_sep,
        notes=tuple(notes),
        diagnostics=diagnostics,
        **base,
    )
