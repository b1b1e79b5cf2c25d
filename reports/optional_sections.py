"""Context for the optional sections: uncertainty, readers, surface features.

Each section is ``Section(status, reason, payload)`` on the AuditResult. When the payload is
missing the report says "not computed because <reason>" rather than dropping the section.
Data are located by shape (see :mod:`reports.discover`); every frame found is also offered
as a table, so a sibling module's new field never vanishes from the report.
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from audit.surface.associations import POOLED
from reports import discover
from reports.figures import (
    DendrogramPanel,
    bootstrap_comparison_svg,
    dendrogram_svg,
    feature_scatter_svg,
    loro_shift_svg,
    reader_heatmap_svg,
    timing_svg,
)
from reports.format import cell_value
from reports.sections import status_value, table

READER_COLUMNS = ("reader_id", "left_out", "reader_left_out", "dropped_reader", "reader")
SHIFT_COLUMNS = ("shift", "rate_shift", "shift_rate", "delta", "shift_glmm", "glmm_shift")
EXCERPT_CHARS = 700
MAX_CASES = 5
MAX_HEATMAPS = 13  #: all matchups pooled + 12 matchups


def _base(section_id: str, title: str, section: Any) -> dict:
    status = status_value(discover.field(section, "status", "SKIPPED"))
    reason = discover.field(section, "reason", "") or ""
    payload = discover.field(section, "payload")
    computed = payload is not None and status not in ("SKIPPED",)
    return {"id": section_id, "title": title, "status": status, "computed": computed,
            "reason": reason if reason else ("not computed" if not computed else ""),
            "figures": [], "tables": [], "cases": [], "payload": payload}


FOLDED_ROWS = 50  #: rows of each folded table in the page; result.json and the CSVs hold all


def _all_tables(ctx: dict, found: list[tuple[str, pd.DataFrame]]) -> None:
    for path, frame in found:
        if len(frame):
            ctx["tables"].append(table(frame, caption=path.replace("payload.", ""), max_rows=FOLDED_ROWS))


def _guard(ctx: dict, name: str, fn: Callable[[], Any]) -> None:
    """Render one part; a malformed payload degrades to a note, never a crash of the report."""
    try:
        fn()
    except (KeyError, ValueError, TypeError, IndexError, AttributeError) as exc:
        ctx.setdefault("notes", []).append(f"{name} could not be drawn from this result ({type(exc).__name__}: {exc}).")


def _finish(ctx: dict) -> dict:
    payload = ctx.pop("payload", None)
    if payload is not None:
        ctx["facts"] = [{"key": k.replace("_", " "), "value": cell_value(v)} for k, v in discover.scalars(payload)]
        ctx["parts"] = [{"name": n, "status": st, "reason": r} for n, st, r in discover.sub_statuses(payload)]
    ctx.setdefault("notes", [])
    ctx.setdefault("facts", [])
    ctx.setdefault("parts", [])
    ctx.setdefault("lead_tables", [])
    return ctx


# ----------------------------------------------------------------------------- uncertainty


def uncertainty_section(result: Any) -> dict:
    ctx = _base("uncertainty", "How sure are we: bootstraps and leave-one-reader-out", result.uncertainty)
    if not ctx["computed"]:
        return _finish(ctx)
    found = discover.frames(ctx["payload"])

    def bootstrap() -> None:
        rows = [{"matchup": c.matchup, "criterion": c.criterion, "method": "GLMM (Wald)", "estimate": c.human.glmm.estimate,
                 "ci_low": c.human.glmm.ci_low, "ci_high": c.human.glmm.ci_high} for c in result.cells]
        hit = discover.find_frame(found, {"matchup", "criterion", "scheme", "rate", "ci_low_percentile", "ci_high_percentile"})
        generic = discover.find_frame(found, {"matchup", "criterion", "method", "estimate", "ci_low", "ci_high"})
        if hit is not None:
            f = hit[1]
            kind = "bca" if "ci_low_bca" in f.columns and f["ci_low_bca"].notna().all() else "percentile"
            for r in f.itertuples(index=False):
                rows.append({"matchup": r.matchup, "criterion": r.criterion, "method": f"bootstrap: {r.scheme}",
                             "estimate": r.rate, "ci_low": getattr(r, f"ci_low_{kind}"),
                             "ci_high": getattr(r, f"ci_high_{kind}")})
        elif generic is not None:
            rows += generic[1][list(generic[1].columns)].to_dict("records")
        else:
            return
        ctx["figures"].append({
            "id": "fig-bootstrap", "title": "Intervals compared: GLMM and cluster bootstraps",
            "caption": "Pointwise 95% intervals per cell; solid intervals exclude 50%, faded ones include it.",
            "svg": bootstrap_comparison_svg(pd.DataFrame(rows), fig_id="fig-bootstrap")})

    def loro() -> None:
        for path, f in found:
            rcol = next((c for c in READER_COLUMNS if c in f.columns), None)
            scol = next((c for c in SHIFT_COLUMNS if c in f.columns), None)
            if rcol and scol and "criterion" in f.columns:
                frame = f.rename(columns={rcol: "reader_id", scol: "shift"})
                cols = ["reader_id", "criterion", "shift"] + (["matchup"] if "matchup" in frame.columns else [])
                ctx["figures"].append({
                    "id": "fig-loro", "title": "Leave-one-reader-out shifts",
                    "caption": f"Change of each cell's human estimate when one reader is removed ({path}).",
                    "svg": loro_shift_svg(frame[cols], fig_id="fig-loro")})
                return

    _guard(ctx, "The bootstrap comparison", bootstrap)
    _guard(ctx, "The leave-one-reader-out figure", loro)
    _all_tables(ctx, found)
    return _finish(ctx)


# ----------------------------------------------------------------------------- readers


def readers_section(result: Any) -> dict:
    ctx = _base("readers", "Who are the readers: heat maps, clusters, time, case studies", result.readers)
    if not ctx["computed"]:
        return _finish(ctx)
    payload = ctx["payload"]
    found = discover.frames(payload)

    def heatmaps() -> None:
        figures = heatmap_figures(result, found)
        ctx["figures"].extend(f for f in figures if f["svg"])
        ctx.setdefault("notes", []).extend(f["note"] for f in figures if not f["svg"])

    def clusters() -> None:
        trees = discover.dendrograms(payload)
        if trees:
            panels = [DendrogramPanel(_tree_title(title), z, labels) for title, z, labels in trees[:3]]
            ctx["figures"].append({
                "id": "fig-dendrogram", "title": "Reader clustering",
                "caption": "Hierarchical clustering of readers on each profile (and of the criteria); shared inner "
                           "sub-clusters across profiles point to structured disagreement rather than noise.",
                "svg": dendrogram_svg(panels, fig_id="fig-dendrogram")})

    def timing() -> None:
        hit = discover.find_frame(found, {"reader_id", "seconds"}) or discover.find_frame(found, {"reader_id", "median_seconds"})
        if hit is not None:
            ctx["figures"].append({
                "id": "fig-timing", "title": "Annotation time",
                "caption": "Seconds per pair per reader (capped at 600 s for display) and the pace over the session.",
                "svg": timing_svg(hit[1], fig_id="fig-timing")})

    def cases() -> None:
        ctx["cases"] = divergent_cases(payload, found)

    for name, fn in (("The heat maps", heatmaps), ("The dendrograms", clusters), ("The timing figure", timing),
                     ("The case studies", cases)):
        _guard(ctx, name, fn)
    _all_tables(ctx, found)
    return _finish(ctx)


_TREE_TITLES = {"weights": "readers on logistic weights", "kappas": "readers on criterion-overall kappa",
                "criteria": "criteria (which move together)"}


def _tree_title(path: str) -> str:
    tail = path.rsplit(".", 1)[-1]
    return _TREE_TITLES.get(tail, tail.replace("_", " "))


def heatmap_figures(result: Any, found: list[tuple[str, pd.DataFrame]]) -> list[dict]:
    """One reader x criterion heat map for all matchups pooled (if given) and one per matchup."""
    kinds = {"reader": "reader", "human_pooled": "human", "human_glmm": "glmm", "judge": "judge"}
    hit = discover.find_frame(found, {"row_kind", "row_label", "matchup", "criterion", "rate"})
    if hit is not None:
        rates = hit[1]
        long = pd.DataFrame({"row": rates["row_label"].astype(str), "kind": rates["row_kind"].map(kinds).fillna("judge"),
                             "criterion": rates["criterion"], "rate": rates["rate"], "matchup": rates["matchup"]})
    else:
        hit = discover.find_frame(found, {"reader_id", "criterion", "rate", "matchup"}, exclude={"term", "shift"})
        if hit is None:
            return []
        rows = [{"row": str(r.reader_id), "kind": "reader", "criterion": r.criterion, "rate": r.rate, "matchup": r.matchup}
                for r in hit[1].itertuples(index=False)]
        judge_name = result.provenance.primary_judge or "judge"
        for c in result.cells:
            rows.append({"row": "human GLMM", "kind": "glmm", "criterion": c.criterion, "rate": c.human.glmm.estimate,
                         "matchup": c.matchup})
            if c.judge is not None:
                rows.append({"row": f"judge: {judge_name}", "kind": "judge", "criterion": c.criterion, "rate": c.judge.rate,
                             "matchup": c.matchup})
        long = pd.DataFrame(rows)
    matchups = list(dict.fromkeys(long["matchup"]))
    cell_matchups = list(dict.fromkeys(c.matchup for c in result.cells))
    matchups.sort(key=lambda m: (m in cell_matchups, cell_matchups.index(m) if m in cell_matchups else 0))
    focal_of = {c.matchup: c.focal for c in result.cells}
    figures = []
    if len(matchups) > MAX_HEATMAPS:
        figures.append({"id": "note-heatmaps", "title": "", "caption": "", "svg": "",
                        "note": f"{len(matchups)} heat maps would be drawn; the first {MAX_HEATMAPS} are shown, the rest of "
                                "the reader rates are in the tables behind this section and in result.json."})
        matchups = matchups[:MAX_HEATMAPS]
    for k, m in enumerate(matchups):
        focal = focal_of.get(m, "the focal system")
        figures.append({
            "id": f"fig-heatmap-{k + 1}", "title": f"Readers x criteria: {m}",
            "caption": "Each reader's preference rate for the focal system, the humans' pooled rate and GLMM estimate, and "
                       f"the judge's rate ({result.provenance.tie_rule} tie rule). Red favours {focal}, blue the other system; "
                       "the judge's aggregate is compared with the humans' overall preference (a different target).",
            "svg": reader_heatmap_svg(long[long["matchup"] == m], focal_label=focal, fig_id=f"fig-heatmap-{k + 1}")})
    return figures


def divergent_cases(payload: Any, found: list[tuple[str, pd.DataFrame]]) -> list[dict]:
    """Divergent-pair case studies: the pair's facts, the readers' votes and comments, story excerpts."""
    excerpt_frame, excerpt_col = None, None
    for _, f in found:
        col = next((c for c in ("excerpt", "story", "text") if c in f.columns), None)
        if col and {"pair_id", "system"} <= set(f.columns):
            excerpt_frame, excerpt_col = f, col
            break
    out = []
    for _, value in discover.walk(payload):
        if len(out) >= MAX_CASES:
            break
        if value is None or discover.as_frame(value) is not None or isinstance(value, (str, int, float, list, tuple)):
            continue
        pid = discover.field(value, "pair_id")
        votes = discover.as_frame(discover.field(value, "votes"))
        if pid is None or votes is None:
            continue
        facts = [{"key": k, "value": cell_value(discover.field(value, k))}
                 for k in ("rank", "matchup", "n_against", "mean_divergence") if discover.field(value, k) is not None]
        comments = [{"reader": cell_value(discover.field(c, "reader_id", "")), "criterion": cell_value(discover.field(c, "criterion", "")),
                     "comment": str(discover.field(c, "text", "") or discover.field(c, "comment", "") or "")}
                    for c in (discover.field(value, "comments") or ())]
        stories = []
        raw = discover.field(value, "excerpts")
        if isinstance(raw, dict):
            raw = [{"system": k, "text": v} for k, v in raw.items()]
        for item in raw or ():
            stories.append(_excerpt(discover.field(item, "system", ""), discover.field(item, "text", "")))
        if not stories and excerpt_frame is not None:
            sub = excerpt_frame[excerpt_frame["pair_id"].astype(str) == str(pid)]
            stories = [_excerpt(r["system"], r[excerpt_col]) for r in sub.to_dict("records")]
        out.append({"pair_id": str(pid), "facts": facts, "votes_table": table(votes.reset_index(drop=True)),
                    "votes": comments, "stories": stories})
    return out


def _excerpt(system: Any, text: Any) -> dict:
    text = str(text or "")
    return {"system": cell_value(system), "text": text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")}


# ----------------------------------------------------------------------------- surface


def surface_section(result: Any) -> dict:
    ctx = _base("surface", "Surface features: is the judge scoring style?", result.surface)
    if not ctx["computed"]:
        return _finish(ctx)
    found = discover.frames(ctx["payload"])

    primary = result.provenance.primary_judge

    def scatter() -> None:
        for path, f in found:
            if "feature" not in f.columns:
                continue
            x = next((c for c in ("x", "feature_diff", "feature_difference", "diff") if c in f.columns), None)
            y = next((c for c in ("y", "score_diff", "judge_diff", "outcome") if c in f.columns), None)
            if not (x and y):
                continue
            frame = f.rename(columns={x: "x", y: "y"})
            what = "judge score difference"
            if "judge" in frame.columns and primary in set(frame["judge"]):
                frame = frame[frame["judge"] == primary]
            if "criterion" in frame.columns and frame["criterion"].nunique() > 1:
                crits = list(dict.fromkeys(frame["criterion"]))
                crit = "aggregate" if "aggregate" in crits else crits[0]
                frame = frame[frame["criterion"] == crit]
            if "criterion" in frame.columns and len(frame):
                what += f" ({frame['criterion'].iloc[0]})"
            if "group" not in frame.columns and "matchup" in frame.columns:
                frame = frame.rename(columns={"matchup": "group"})
            ctx["figures"].append({
                "id": "fig-surface", "title": "Feature differences against the judge",
                "caption": f"Each point is a pair: the feature difference (focal minus other story) against the {what} of "
                           f"judge {primary or ''}; colours are matchups.",
                "svg": feature_scatter_svg(frame, y_label=f"{what}, focal - other", fig_id="fig-surface",
                                           max_panels=10)})
            return

    def side_by_side() -> None:
        hit = discover.find_frame(found, {"feature", "pattern"})
        if hit is None:
            return
        frame = hit[1]
        if "scope" in frame.columns and POOLED in set(frame["scope"]):
            frame = frame[frame["scope"] == POOLED]
        if "judge" in frame.columns and primary in set(frame["judge"]):
            frame = frame[frame["judge"] == primary]
        ctx["lead_tables"].append(table(frame, caption="Does the judge track a feature the readers do not? "
                                                       "(pooled over matchups, within matchup: orientation-free; standardised within-pair coefficients)",
                                        max_rows=120))

    ctx["lead_tables"] = []
    _guard(ctx, "The feature scatter plots", scatter)
    _guard(ctx, "The judge-versus-readers feature table", side_by_side)
    _all_tables(ctx, found)
    return _finish(ctx)
