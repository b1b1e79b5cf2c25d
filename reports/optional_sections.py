"""Context for the optional sections: uncertainty, readers, surface features.

Each section is ``Section(status, reason, payload)`` on the AuditResult. When the payload is
missing the report says "not computed because <reason>" rather than dropping the section.
Data are located by shape (see :mod:`reports.discover`); every frame found is also offered
as a table, so a sibling module's new field never vanishes from the report.
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

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


def _base(section_id: str, title: str, section: Any) -> dict:
    status = status_value(discover.field(section, "status", "SKIPPED"))
    reason = discover.field(section, "reason", "") or ""
    payload = discover.field(section, "payload")
    computed = payload is not None and status not in ("SKIPPED",)
    return {"id": section_id, "title": title, "status": status, "computed": computed,
            "reason": reason if reason else ("not computed" if not computed else ""),
            "figures": [], "tables": [], "cases": [], "payload": payload}


def _all_tables(ctx: dict, found: list[tuple[str, pd.DataFrame]]) -> None:
    for path, frame in found:
        if len(frame):
            ctx["tables"].append(table(frame, caption=path.replace("payload.", "")))


def _guard(ctx: dict, name: str, fn: Callable[[], Any]) -> None:
    """Render one part; a malformed payload degrades to a note, never a crash of the report."""
    try:
        fn()
    except (KeyError, ValueError, TypeError, IndexError, AttributeError) as exc:
        ctx.setdefault("notes", []).append(f"{name} could not be drawn from this result ({type(exc).__name__}: {exc}).")


def _finish(ctx: dict) -> dict:
    ctx.pop("payload", None)
    ctx.setdefault("notes", [])
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
        hit = discover.find_frame(found, {"reader_id", "criterion", "rate", "matchup"}, exclude={"term", "shift"})
        if hit is None:
            return
        rates = hit[1]
        judge_name = result.provenance.primary_judge or "judge"
        for k, m in enumerate(dict.fromkeys(c.matchup for c in result.cells)):
            sub = rates[rates["matchup"] == m]
            rows = [{"row": str(r.reader_id), "kind": "reader", "criterion": r.criterion, "rate": r.rate}
                    for r in sub.itertuples(index=False)]
            for c in (c for c in result.cells if c.matchup == m):
                rows.append({"row": "human GLMM", "kind": "glmm", "criterion": c.criterion, "rate": c.human.glmm.estimate})
                if c.judge is not None:
                    rows.append({"row": f"judge: {judge_name}", "kind": "judge", "criterion": c.criterion, "rate": c.judge.rate})
            focal = next((c.focal for c in result.cells if c.matchup == m), "focal")
            ctx["figures"].append({
                "id": f"fig-heatmap-{k + 1}", "title": f"Readers x criteria: {m}",
                "caption": "Each reader's preference rate for the focal system, the GLMM estimate and the judge's rate "
                           f"({result.provenance.tie_rule} tie rule). Red favours {focal}, blue the other system.",
                "svg": reader_heatmap_svg(pd.DataFrame(rows), focal_label=focal, fig_id=f"fig-heatmap-{k + 1}")})

    def clusters() -> None:
        trees = discover.dendrograms(payload)
        if trees:
            panels = [DendrogramPanel(title, z, labels) for title, z, labels in trees[:4]]
            ctx["figures"].append({
                "id": "fig-dendrogram", "title": "Reader clustering",
                "caption": "Hierarchical clustering of readers on each profile; shared inner sub-clusters across "
                           "profiles point to structured disagreement rather than noise.",
                "svg": dendrogram_svg(panels, fig_id="fig-dendrogram")})

    def timing() -> None:
        hit = discover.find_frame(found, {"reader_id", "seconds"})
        if hit is not None:
            ctx["figures"].append({
                "id": "fig-timing", "title": "Annotation time",
                "caption": "Seconds per pair per reader (capped at 600 s for display) and pace over the session.",
                "svg": timing_svg(hit[1], fig_id="fig-timing")})

    def cases() -> None:
        ctx["cases"] = divergent_cases(found)

    for name, fn in (("The heat maps", heatmaps), ("The dendrograms", clusters), ("The timing figure", timing),
                     ("The case studies", cases)):
        _guard(ctx, name, fn)
    _all_tables(ctx, found)
    return _finish(ctx)


def divergent_cases(found: list[tuple[str, pd.DataFrame]]) -> list[dict]:
    """Divergent-pair case studies: the pair's summary, the readers' votes and comments, excerpts."""
    ranked = next(((p, f) for p, f in found if "pair_id" in f.columns and "diverg" in p.lower()), None)
    if ranked is None:
        return []
    comments = next((f for p, f in found if {"pair_id", "comment"} <= set(f.columns)), None)
    excerpt_col = None
    excerpts = None
    for p, f in found:
        col = next((c for c in ("excerpt", "text", "story") if c in f.columns), None)
        if col and "pair_id" in f.columns:
            excerpts, excerpt_col = f, col
            break
    out = []
    for row in ranked[1].head(MAX_CASES).to_dict("records"):
        pid = row["pair_id"]
        facts = [{"key": str(k), "value": cell_value(v)} for k, v in row.items()
                 if k not in ("pair_id", "comment", "excerpt", "text", "story") and not isinstance(v, (list, dict, tuple))]
        votes = []
        if comments is not None:
            sub = comments[comments["pair_id"].astype(str) == str(pid)]
            for r in sub.to_dict("records"):
                votes.append({"reader": cell_value(r.get("reader_id", "")), "choice": cell_value(r.get("choice", "")),
                              "criterion": cell_value(r.get("criterion", "")), "comment": str(r.get("comment", "") or "")})
        stories = []
        if excerpts is not None:
            sub = excerpts[excerpts["pair_id"].astype(str) == str(pid)]
            for r in sub.to_dict("records"):
                text = str(r.get(excerpt_col, "") or "")
                stories.append({"system": cell_value(r.get("system", "")),
                                "text": text[:EXCERPT_CHARS] + ("…" if len(text) > EXCERPT_CHARS else "")})
        out.append({"pair_id": str(pid), "facts": facts, "votes": votes, "stories": stories})
    return out


# ----------------------------------------------------------------------------- surface


def surface_section(result: Any) -> dict:
    ctx = _base("surface", "Surface features: is the judge scoring style?", result.surface)
    if not ctx["computed"]:
        return _finish(ctx)
    found = discover.frames(ctx["payload"])

    def scatter() -> None:
        for path, f in found:
            if "feature" not in f.columns:
                continue
            x = next((c for c in ("x", "feature_diff", "feature_difference", "diff") if c in f.columns), None)
            y = next((c for c in ("y", "score_diff", "judge_diff", "outcome") if c in f.columns), None)
            if x and y:
                frame = f.rename(columns={x: "x", y: "y"})
                if "group" not in frame.columns and "matchup" in frame.columns:
                    frame = frame.rename(columns={"matchup": "group"})
                ctx["figures"].append({
                    "id": "fig-surface", "title": "Feature differences against the judge",
                    "caption": f"Within-pair feature difference (focal minus other) against the outcome ({path}).",
                    "svg": feature_scatter_svg(frame, fig_id="fig-surface")})
                return

    _guard(ctx, "The feature scatter plots", scatter)
    _all_tables(ctx, found)
    return _finish(ctx)
