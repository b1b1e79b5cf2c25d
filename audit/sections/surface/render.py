"""The surface-features section in the report: is the judge scoring style?"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from judge_transfer_audit.presentation.figures import (
    feature_scatter_svg,
)
from judge_transfer_audit.presentation.figures.surface import features_per_row
from judge_transfer_audit.presentation.format import cell_value
from judge_transfer_audit.presentation.renderers import render_section
from judge_transfer_audit.presentation.tables import folded_tables, table
from judge_transfer_audit.statistics.surface import SurfaceResult
from judge_transfer_audit.statistics.surface.associations import POOLED

ID, TITLE = "surface", "Surface features: is the judge scoring style?"
SURFACE_PANELS = 12  #: features drawn in the surface figure (the table and surface.csv hold every one)


def render(result: Any, payload: SurfaceResult, ctx: dict) -> None:
    ctx["csv"] = "surface.csv"  # its table, written beside result.json
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


def report(result: Any) -> list[dict]:
    """The section's context in the report."""
    return [render_section(ID, TITLE, result, result.surface, render)]
