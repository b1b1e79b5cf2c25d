"""Renderers of the optional sections, one per payload type: uncertainty, readers, surface.

Each renderer reads the typed result the section module wrote (after a JSON round trip,
:func:`judge_transfer_audit.results.result.result_from_json` rebuilds the same types), fills the section context and
lets any error propagate: a renderer bug fails the tests, it is never turned into a note.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judge_transfer_audit.reports.figures import (
    ClusterPanel,
    DendrogramPanel,
    bootstrap_comparison_svg,
    cluster_heatmap_svg,
    dendrogram_svg,
    feature_scatter_svg,
    loro_shift_svg,
    reader_heatmap_svg,
    timing_svg,
)
from judge_transfer_audit.reports.figures.surface import features_per_row
from judge_transfer_audit.reports.format import cell_value, num
from judge_transfer_audit.reports.registry import renders
from judge_transfer_audit.reports.tables import folded_tables, status_value, table, tie_words
from judge_transfer_audit.statistics.readers import ReaderAnalysis
from judge_transfer_audit.statistics.surface import SurfaceResult
from judge_transfer_audit.statistics.surface.associations import POOLED
from judge_transfer_audit.statistics.uncertainty.section import UncertaintySection

EXCERPT_CHARS = 700
MAX_CASES = 5
JUDGE_ROWS = 40  #: criteria rows of a case study's judge table in the page; the others are in result.json
OPEN_VOTE_ROWS = 8  #: a case study's per-reader vote table past this many readers is folded (the counts stay open)
MAX_HEATMAPS = 13  #: all matchups pooled + 12 matchups
PRINT_HEATMAPS = 4  #: heat maps printed on paper (all matchups pooled + 3); the others are drawn on screen only


# ----------------------------------------------------------------------------- uncertainty


@renders(UncertaintySection)
def uncertainty(result: Any, payload: UncertaintySection, ctx: dict) -> None:
    boot, loro = payload.bootstrap, payload.loro
    ctx["facts"] = [
        {"key": "bootstrap replicates", "value": f"{boot.n_boot:,}"},
        {"key": "schemes", "value": ", ".join(boot.schemes)},
        {"key": "seed", "value": cell_value(boot.seed)},
        {
            "key": "largest leave-one-reader-out shift",
            "value": f"{100 * loro.largest_shift:+.1f} points ({loro.largest_shift_reader}, {loro.largest_shift_cell})",
        },
    ]
    cells = boot.cells
    kind = "bca" if len(cells) and cells["ci_low_bca"].notna().all() else "percentile"
    # the GLMM's interval per cell, then every bootstrap row, built by column (3,000 cells: 12,000 rows)
    glmm = [c.human.glmm for c in result.cells]
    n_boot_rows = len(cells)
    columns = {
        "matchup": [c.matchup for c in result.cells] + (cells["matchup"].tolist() if n_boot_rows else []),
        "criterion": [c.criterion for c in result.cells] + (cells["criterion"].tolist() if n_boot_rows else []),
        "method": ["GLMM (Wald)"] * len(glmm)
        + ([f"bootstrap: {s}" for s in cells["scheme"].tolist()] if n_boot_rows else []),
        "estimate": [g.estimate for g in glmm] + (cells["rate"].tolist() if n_boot_rows else []),
        "ci_low": [g.ci_low for g in glmm] + (cells[f"ci_low_{kind}"].tolist() if n_boot_rows else []),
        "ci_high": [g.ci_high for g in glmm] + (cells[f"ci_high_{kind}"].tolist() if n_boot_rows else []),
        "degenerate": [bool(g.degenerate) for g in glmm] + [False] * n_boot_rows,
    }
    intervals = pd.DataFrame(columns) if columns["matchup"] else pd.DataFrame([])
    caption = (
        f"Pointwise {boot.level:.0%} intervals per cell ({kind} bootstrap intervals, {boot.n_boot:,} replicates); "
        "solid intervals exclude 50%, faded ones include it. Bootstrap rates are vote-weighted with tied votes left "
        "out (as the GLMM)."
    )
    # in parts of whole rows of panels, each at most about a printed page tall
    matchups = list(dict.fromkeys(intervals["matchup"].tolist())) if len(intervals) else []
    n_methods = intervals["method"].nunique() if len(intervals) else 1
    n_crits = min(intervals["criterion"].nunique(), 30) if len(intervals) else 1
    row_h = 6.5 * (n_methods + 1) * n_crits + 50
    size = 3 * max(1, int(BOOTSTRAP_PART_HEIGHT // row_h))
    groups = [matchups[i : i + size] for i in range(0, len(matchups), size)] or [[]]
    for k, group in enumerate(groups):
        fig_id = "fig-bootstrap" if k == 0 else f"fig-bootstrap-{k + 1}"
        part = intervals[intervals["matchup"].isin(group)] if group else intervals
        ctx["figures"].append(
            {
                "id": fig_id,
                "title": "Intervals compared: GLMM and cluster bootstraps"
                + ("" if k == 0 else f" (continued: matchups {k * size + 1}-{k * size + len(group)})"),
                "caption": caption if k == 0 else "",
                "svg": bootstrap_comparison_svg(part, fig_id=fig_id),
                **_print_parts(k, len(groups), "uncertainty.csv"),
            }
        )
    shifts = loro.shifts.rename(columns={"reader": "reader_id"})
    if len(shifts):
        # in parts of whole rows of panels (each about a printed page), on one shared axis
        matchups = list(dict.fromkeys(shifts["matchup"].tolist()))
        n_rows = min(shifts["reader_id"].nunique(), 21)
        size = 3 * max(1, int(BOOTSTRAP_PART_HEIGHT // (14.0 * n_rows + 56)))
        groups = [matchups[i : i + size] for i in range(0, len(matchups), size)]
        finite = pd.to_numeric(shifts["shift"], errors="coerce").abs()
        limit = float(finite.max()) if finite.notna().any() else None
        for k, group in enumerate(groups):
            fig_id = "fig-loro" if k == 0 else f"fig-loro-{k + 1}"
            part = shifts[shifts["matchup"].isin(group)]
            ctx["figures"].append(
                {
                    "id": fig_id,
                    "title": "Leave-one-reader-out shifts"
                    + ("" if k == 0 else f" (continued: matchups {k * size + 1}-{k * size + len(group)})"),
                    "caption": "Change of each cell's raw human rate (focal votes / decisive votes: ties left out) "
                    "when one reader is removed (rate without the reader minus the rate with everyone)."
                    if k == 0
                    else "",
                    "svg": loro_shift_svg(
                        part[["reader_id", "criterion", "shift", "matchup"]], fig_id=fig_id, limit=limit
                    ),
                    **_print_parts(k, len(groups), "uncertainty.csv"),
                }
            )
    ctx["notes"].extend([payload.tally.statement, *boot.notes, *loro.notes])
    folded_tables(ctx, payload)


# ----------------------------------------------------------------------------- readers


@renders(ReaderAnalysis)
def readers(result: Any, payload: ReaderAnalysis, ctx: dict) -> None:
    ctx["facts"] = [
        {"key": "readers", "value": f"{payload.n_readers:,}"},
        {"key": "pairs", "value": f"{payload.n_pairs:,}"},
        {"key": "votes", "value": f"{payload.n_votes:,}"},
        {"key": "linkage", "value": payload.linkage},
        {"key": "seed", "value": cell_value(payload.seed)},
    ]
    ctx["parts"] = [
        {"name": name.replace("_", " "), "status": status_value(st), "reason": reason}
        for name, (st, reason) in payload.statuses().items()
    ]
    if status_value(payload.rates.status) == "PASS":
        ctx["figures"].extend(heatmap_figures(result, payload.rates.rates))
    clustering = payload.clustering
    if status_value(clustering.status) == "PASS":
        panels = [
            ClusterPanel(title, np.asarray(d.linkage_matrix, dtype=float), tuple(d.labels), d.profile, value)
            for title, d, value in (
                (
                    "readers on their logistic weights (overall on the criterion votes)",
                    clustering.weights,
                    "coefficient, standardised per criterion",
                ),
                (
                    "readers on their criterion-overall kappa",
                    clustering.kappas,
                    "Cohen's kappa, standardised per criterion",
                ),
            )
            if d is not None
        ]
        if panels:
            ctx["figures"].append(
                {
                    "id": "fig-clusters",
                    "title": "Reader clustering: coefficient and kappa heat maps beside the dendrograms",
                    "caption": "Left: each reader's weights of the criteria in their overall vote; right: each "
                    "reader's "
                    f"kappa between a criterion and overall; both standardised per criterion (the profiles that "
                    f"were clustered, {clustering.linkage} linkage), rows in dendrogram order. Readers sharing a "
                    f"sub-cluster in both trees point to structured disagreement rather than noise"
                    + (
                        f" (shared: {', '.join('{' + ', '.join(c) + '}' for c in clustering.shared_clusters[:4])})"
                        if clustering.shared_clusters
                        else ""
                    )
                    + ".",
                    "svg": cluster_heatmap_svg(panels, fig_id="fig-clusters"),
                }
            )
        if clustering.criteria is not None:
            d = clustering.criteria
            ctx["figures"].append(
                {
                    "id": "fig-dendrogram",
                    "title": "Criteria clustering",
                    "caption": f"Hierarchical clustering of the criteria ({d.metric}, {clustering.linkage} linkage): "
                    "criteria "
                    "the readers vote on together join low in the tree.",
                    "svg": dendrogram_svg(
                        [
                            DendrogramPanel(
                                "criteria (which move together)",
                                np.asarray(d.linkage_matrix, dtype=float),
                                tuple(d.labels),
                            )
                        ],
                        fig_id="fig-dendrogram",
                    ),
                }
            )
        else:
            ctx["notes"].append(f"Criteria clustering not drawn: {clustering.criteria_reason or 'not computed'}.")
    timing = payload.timing
    if status_value(timing.status) == "PASS" and len(timing.readers):
        ctx["figures"].append(
            {
                "id": "fig-timing",
                "title": "Annotation time",
                "caption": "Distribution of each reader's seconds per pair (box 25-75%, line 5-95%, red median; "
                "drawn capped "
                f"at {timing.seconds_cap:.0f} s; the mean diamond is of the capped times); readers whose median "
                f"is under {timing.fast_reader_factor:.0%} of the others' are flagged fast. Right: the change in "
                "seconds per pair along each reader's session (fatigue), with its 95% interval.",
                "svg": timing_svg(
                    timing.readers.merge(timing.quantiles.drop(columns="n_pairs"), on="reader_id", how="left")
                    if len(timing.quantiles)
                    else timing.readers,
                    cap=timing.seconds_cap,
                    fig_id="fig-timing",
                ),
            }
        )
    if status_value(payload.divergent_pairs.status) == "PASS":
        ctx["cases"] = divergent_cases(result, payload)
    folded_tables(ctx, payload)


def heatmap_figures(result: Any, rates: pd.DataFrame) -> list[dict]:
    """One reader x criterion heat map for all matchups pooled (if given) and one per matchup.

    ``rates`` is :attr:`judge_transfer_audit.statistics.readers.rates.ReaderRates.rates` (``row_kind``: reader,
    human_pooled, human_glmm, judge).
    """
    kinds = {"reader": "reader", "human_pooled": "human", "human_glmm": "glmm", "judge": "judge"}
    unknown = sorted(set(rates["row_kind"]) - set(kinds))
    if unknown:
        raise ValueError(f"reader rates: unknown row_kind {unknown}")
    long = pd.DataFrame(
        {
            "row": rates["row_label"].astype(str),
            "kind": rates["row_kind"].map(kinds),
            "criterion": rates["criterion"],
            "rate": rates["rate"],
            "matchup": rates["matchup"],
        }
    )
    # the GLMM values the result flags degenerate are marked in the map, as in the transfer table
    flagged = {(c.matchup, c.criterion) for c in result.cells if c.human.glmm.degenerate}
    long["degenerate"] = (long["kind"] == "glmm").to_numpy() & np.array(
        [(m, k) in flagged for m, k in zip(long["matchup"].tolist(), long["criterion"].tolist())], dtype=bool
    )
    matchups = list(dict.fromkeys(long["matchup"].tolist()))
    cell_matchups = list(dict.fromkeys(c.matchup for c in result.cells))
    matchups.sort(key=lambda m: (m in cell_matchups, cell_matchups.index(m) if m in cell_matchups else 0))
    focal_of = {c.matchup: c.focal for c in result.cells}
    figures = []
    more = ""
    if len(matchups) > MAX_HEATMAPS:
        more = (
            f" {len(matchups)} heat maps would be drawn; the first {MAX_HEATMAPS} are shown, the rest of the reader "
            "rates are in the tables behind this section and in result.json."
        )
        matchups = matchups[:MAX_HEATMAPS]
    for k, m in enumerate(matchups):
        focal = focal_of.get(m, "the focal system")
        figures.append(
            {
                "id": f"fig-heatmap-{k + 1}",
                "title": f"Readers x criteria: {m}",
                "caption": "Each reader's preference rate for the focal system, the humans' pooled rate and GLMM "
                "estimate, and the judge's rate. Ties: the reader, pooled human and judge rates follow the run's "
                f"{result.provenance.tie_rule} rule ({tie_words(result.provenance.tie_rule)}); the GLMM leaves "
                "tied votes out. "
                f"Red favours {focal}, blue the other system; the judge's aggregate is compared with the humans' "
                "overall preference (a different target)." + (more if k == 0 else ""),
                "svg": reader_heatmap_svg(long[long["matchup"] == m], focal_label=focal, fig_id=f"fig-heatmap-{k + 1}"),
                "screen_only": k >= PRINT_HEATMAPS,
                "print_note": (
                    f"On paper the first {PRINT_HEATMAPS} of the {len(matchups)} heat maps are printed; the others are "
                    "in the HTML report, and every reader rate is in the tables behind this section and in result.json."
                )
                if k == PRINT_HEATMAPS - 1 and len(matchups) > PRINT_HEATMAPS
                else "",
            }
        )
    return figures


def divergent_cases(result: Any, payload: ReaderAnalysis) -> list[dict]:
    """Divergent-pair case studies: the judge's verdict and scores beside the readers' votes, their
    comments and the two stories' openings, always focal system first."""
    judge = result.provenance.primary_judge
    jp = result.judge_pairs.to_frame()
    if len(jp):
        jp = jp[jp["judge"] == judge]
        pair_ids = jp["pair_id"].astype(str)
    out = []
    for pair in payload.divergent_pairs.top[:MAX_CASES]:
        mine = jp[pair_ids == pair.pair_id] if len(jp) else jp
        focal = str(mine["focal"].iloc[0]) if len(mine) else ""
        other = str(mine["other"].iloc[0]) if len(mine) else ""
        facts = [
            {"key": "rank", "value": str(pair.rank)},
            {"key": "matchup", "value": pair.matchup},
            {"key": "focal / other", "value": f"{focal} / {other}" if focal else "–"},
            {"key": "criteria against the judge", "value": str(pair.n_against)},
            {"key": "mean divergence", "value": num(pair.mean_divergence)},
        ]
        rows = []
        # the rows the table shows (the others are counted in its note): with 1,000 criteria, 40 of them
        shown = mine.head(JUDGE_ROWS)
        # the readers' focal / other votes of the criteria shown, counted in one array of their columns
        criteria = pair.votes.columns.tolist()  # one conversion of the labels (3,000 criteria), not one per label
        voted = set(criteria)
        wanted = set(shown["criterion"].astype(str)) if len(shown) else set()
        at = [k for k, c in enumerate(criteria) if c in wanted]
        cast = pair.votes.iloc[:, at].to_numpy(dtype=object)  # a missing vote (NaN / None) equals neither side
        n_focal_of = dict(zip(pair.votes.columns[at], (cast == "focal").sum(axis=0).tolist()))
        n_other_of = dict(zip(pair.votes.columns[at], (cast == "other").sum(axis=0).tolist()))
        for r in shown.itertuples(index=False):
            crit = str(r.criterion)
            human = crit in voted
            n_focal = int(n_focal_of[crit]) if human else 0
            n_other = int(n_other_of[crit]) if human else 0
            verdict = {"win": f"prefers {focal}", "loss": f"prefers {other}", "tie": "tie"}.get(
                str(r.outcome), str(r.outcome)
            )
            rows.append(
                {
                    "criterion": crit,
                    f"judge score: {focal}": num(r.focal_score, 2),
                    f"judge score: {other}": num(r.other_score, 2),
                    "judge verdict": verdict,
                    "readers for focal / other": f"{n_focal} / {n_other}" if human else "–",
                }
            )
        judge_table = (
            table(
                pd.DataFrame(rows),
                caption=f"The judge ({judge}) on this pair beside the readers' votes",
                max_rows=JUDGE_ROWS,
            )
            if rows
            else None
        )
        if judge_table is not None:
            judge_table["truncated"] = max(0, len(mine) - JUDGE_ROWS)
        comments = [{"reader": c.reader_id, "criterion": c.criterion, "comment": c.text} for c in pair.comments]
        excerpts = sorted(pair.excerpts, key=lambda e: (e.system != focal, e.system))
        stories = [_excerpt(e.system + (" (focal)" if e.system == focal else ""), e.text) for e in excerpts]
        out.append(
            {
                "pair_id": pair.pair_id,
                "facts": facts,
                "judge_table": judge_table,
                "votes_table": table(pair.votes, caption="Each reader's vote per criterion (focal / other / tie)"),
                "votes_folded": len(pair.votes) > OPEN_VOTE_ROWS,
                "n_readers": len(pair.votes),
                "votes": comments,
                "stories": stories,
            }
        )
    return out


PRINT_PARTS = 2  #: parts of a figure drawn in parts printed on paper; the HTML shows every one


def _print_parts(k: int, n: int, source: str) -> dict:
    """Part ``k`` of ``n``: screen-only past :data:`PRINT_PARTS`; the last printed part says where the rest are."""
    return {
        "screen_only": k >= PRINT_PARTS,
        "print_note": f"On paper the first {PRINT_PARTS} of the {n} parts of this figure are printed; the others are "
        f"in the HTML report, and every value is in {source} and result.json."
        if k == PRINT_PARTS - 1 and n > PRINT_PARTS
        else "",
    }


BOOTSTRAP_PART_HEIGHT = 620.0  #: points of the interval figure in one part (about a printed page)
SURFACE_PANELS = 12  #: features drawn in the surface figure (the table and surface.csv hold every one)


def _excerpt(system: str, text: str) -> dict:
    return {"system": system, "text": text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")}


# ----------------------------------------------------------------------------- surface


@renders(SurfaceResult)
def surface(result: Any, payload: SurfaceResult, ctx: dict) -> None:
    primary = result.provenance.primary_judge
    judge = primary if primary in payload.judges else (payload.judges[0] if payload.judges else "")
    ctx["facts"] = [
        {"key": "features", "value": str(len(payload.features))},
        {"key": "judge", "value": judge},
        *([{"key": "humans' criterion", "value": payload.human_criterion}] if payload.human_criterion else []),
        {"key": "bootstrap replicates", "value": f"{payload.n_boot:,} ({payload.cluster} clusters)"},
        {"key": "adjustment", "value": payload.adjust},
        {"key": "seed", "value": cell_value(payload.seed)},
    ]
    points = payload.scatter_points
    points = points[points["judge"] == judge]
    crits = list(dict.fromkeys(points["criterion"].tolist()))
    if crits:
        crit = "aggregate" if "aggregate" in crits else crits[0]
        frame = points[points["criterion"] == crit].rename(
            columns={"feature_diff": "x", "score_diff": "y", "human_share": "h"}
        )
        w = payload.within_pair
        scope = POOLED if POOLED in set(w["scope"]) else (payload.scopes[0] if payload.scopes else "")
        w = w[(w["scope"] == scope) & (w["judge"] == judge) & (w["criterion"] == crit)]
        h = payload.humans
        h = h[h["scope"] == scope] if len(h) else h
        human_r = dict(zip(h["feature"], h["pair_share_r"])) if len(h) else {}
        human_slope = dict(zip(h["feature"], h["share_slope"])) if len(h) and "share_slope" in h.columns else {}
        panels = pd.DataFrame(
            {
                "feature": w["feature"],
                "r": w["beta"],
                "slope": w["slope"],
                "r_human": [human_r.get(f, np.nan) for f in w["feature"]],
                "slope_human": [human_slope.get(f, np.nan) for f in w["feature"]],
            }
        )
        n_feat = len(set(frame["feature"]))
        # the humans' panels are drawn only when the pairs carry a human vote share (a criterion to compare)
        has_h = "h" in frame.columns and pd.to_numeric(frame["h"], errors="coerce").notna().any()
        if has_h:
            caption = (
                f"Each point is a pair. Left of each feature: the feature difference (focal minus other story) "
                f"against judge {judge}'s score difference ({crit}); right: the same difference against the pair's "
                f"share of human votes for the focal story ({payload.human_criterion or 'pooled criteria'}; ties "
                f"left out). Red lines: the least-squares slopes ({scope}); panel titles: the judge's r and the "
                "humans' r of the same differences. A judge that tracks a feature the readers ignore has a steep "
                "left line beside a flat right one."
            )
        else:
            caption = (
                f"Each point is a pair: the feature difference (focal minus other story) against judge {judge}'s "
                f"score difference ({crit}); red lines: the least-squares slopes ({scope}); panel titles: the "
                "judge's r. No humans' panels: the human file gives no overall preference (criterion 'overall') "
                "to set the differences beside (the section's notes say why)."
            )
        # in parts of two rows of panels: each part a figure that prints whole, at the page width
        n_drawn = min(n_feat, SURFACE_PANELS)
        part = 2 * features_per_row(has_h)
        title = (
            "Feature differences against the judge and against the humans, side by side"
            if has_h
            else "Feature differences against the judge"
        )
        for k, start in enumerate(range(0, n_drawn, part)):
            fig_id = "fig-surface" if k == 0 else f"fig-surface-{k + 1}"
            ctx["figures"].append(
                {
                    "id": fig_id,
                    "title": title
                    if k == 0
                    else f"{title} (continued: features {start + 1}-{min(start + part, n_drawn)} of {n_drawn})",
                    "caption": caption
                    + " Features are ordered by the judge's |r|"
                    + (
                        f"; the first {SURFACE_PANELS} of {n_feat} features are drawn"
                        if n_feat > SURFACE_PANELS
                        else ""
                    )
                    + "."
                    if k == 0
                    else "",
                    "svg": feature_scatter_svg(
                        frame,
                        panels=panels,
                        y_label=f"judge score difference ({crit}), focal - other",
                        fig_id=fig_id,
                        max_panels=part,
                        start=start,
                    ),
                }
            )
    side = payload.side_by_side
    pooled = POOLED in set(side["scope"])
    side = side[(side["scope"] == POOLED) & (side["judge"] == judge)] if pooled else side
    ctx["lead_tables"].append(
        table(
            side,
            max_rows=120,
            sort_by=(("judge_p_adjusted", True), ("judge_p", True)),
            sort_label="worst first (the features the judge tracks most surely: adjusted, then raw p)",
            # pooled: one scope and one judge in every row (the caption names them); on paper they give way
            # and the raw p of the judge-minus-readers difference (its adjusted p stays)
            print_omit=("scope", "judge", "difference_p") if pooled else ("difference_p",),
            print_source="surface.csv",
            caption=(
                "Does the judge track a feature the readers do not? (pooled over matchups, within matchup: "
                "orientation-free; "
                "standardised within-pair coefficients)"
            ),
        )
    )
    ctx["notes"].extend(payload.notes)
    folded_tables(ctx, payload)
