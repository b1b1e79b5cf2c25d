"""The reader section in the report: heat maps, clusters, time, case studies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures import (
    ClusterPanel,
    DendrogramPanel,
    cluster_heatmap_svg,
    dendrogram_svg,
    reader_heatmap_svg,
    timing_svg,
)
from judge_transfer_audit.presentation.format import cell_value, num
from judge_transfer_audit.presentation.renderers import render_section
from judge_transfer_audit.presentation.tables import folded_tables, status_value, table, tie_words
from judge_transfer_audit.statistics.readers import ReaderAnalysis

ID, TITLE = "readers", "Who are the readers: heat maps, clusters, time, case studies"
EXCERPT_CHARS = 700
MAX_CASES = 5
JUDGE_ROWS = 40  #: criteria rows of a case study's judge table in the page; the others are in result.json
OPEN_VOTE_ROWS = 8  #: a case study's per-reader vote table past this many readers is folded (the counts stay open)
MAX_HEATMAPS = 13  #: all matchups pooled + 12 matchups
PRINT_HEATMAPS = 4  #: heat maps printed on paper (all matchups pooled + 3); the others are drawn on screen only


def render(result: Any, payload: ReaderAnalysis, ctx: dict) -> None:
    ctx["csv"] = "readers.csv"  # its table, written beside result.json
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


def _excerpt(system: str, text: str) -> dict:
    return {"system": system, "text": text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")}


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, result.readers, render)]
