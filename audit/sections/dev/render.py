"""The development-set validity in the report's headline card and the terminal summary: the primary
judge's Spearman correlation with the humans per criterion, routed in sample and out of fold."""

from __future__ import annotations

from typing import Any

from judge_transfer_audit.core.terminal_text import printable
from judge_transfer_audit.presentation.format import cell_value, num
from judge_transfer_audit.presentation.tables import status_value, table
from judge_transfer_audit.statistics.devset import DevValidity


def dev_summary(section: Any, primary_judge: str = "") -> dict:
    """The dev-set validity block: per-criterion Spearman of the primary judge, or why it is absent."""
    status = status_value(section.status)
    payload = section.payload
    if payload is None or status in ("SKIPPED", "ERROR"):
        return {
            "computed": False,
            "status": status,
            "reason": section.reason or "no development set given",
            "table": None,
            "items": [],
            "facts": [],
            "warning": "",
            "judge": primary_judge,
        }
    if not isinstance(payload, DevValidity):
        raise TypeError(f"dev section: expected a DevValidity payload, got {type(payload).__qualname__}")
    frame = payload.correlations
    judges = list(dict.fromkeys(frame["judge"].tolist()))
    judge = primary_judge if primary_judge in judges else (judges[0] if judges else primary_judge)
    mine = frame[frame["judge"] == judge]
    items = [{"label": str(r.criterion), "value": num(r.spearman, 2)} for r in mine.itertuples(index=False)]
    facts = [
        {"key": "in-sample mean", "value": cell_value(payload.routed_in_sample_mean)},
        {"key": "out-of-fold mean", "value": cell_value(payload.oof_mean)},
        {"key": "optimism", "value": cell_value(payload.optimism_mean)},
        {"key": "items", "value": cell_value(payload.n_items)},
    ]
    return {
        "computed": True,
        "status": status,
        "reason": section.reason,
        "judge": judge,
        "warning": payload.warning or "",
        "table": table(frame, caption="Development-set validity"),
        "items": items,
        "facts": facts,
    }


def terminal_lines(result: Any) -> list[str]:
    """The Spearman correlations and the routed judge's optimism, or why the dev set is absent."""
    lines: list[str] = []
    dev = dev_summary(result.dev, result.provenance.primary_judge)
    if dev["items"]:
        vals = ", ".join(f"{printable(it['label'])} {it['value']}" for it in dev["items"])
        lines.append(f"Dev set (Spearman of {printable(dev['judge'] or 'the judge')} with humans): {vals}")
        d = result.dev.payload
        lines.append(
            f"  routed judge: {d.routed_in_sample_pooled:.3f} in sample, {d.oof_pooled:.3f} out of fold "
            f"(optimism {d.optimism_pooled:+.3f})"
            + ("; selection and validation share data" if d.selection_shares_data else "")
        )
    elif dev["computed"]:
        lines.append("Dev set: computed (see the report)")
    else:
        reason = printable(dev["reason"])
        # "no development set given (...)" reads on its own; other reasons say why it was not computed
        lines.append(
            f"Dev set: {reason}" if reason.startswith("no development set") else f"Dev set: not computed ({reason})"
        )
    return lines
