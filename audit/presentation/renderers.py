"""What every section's report renderer shares: :func:`render_section` and :func:`print_parts`.

A section's renderer (``render(result, payload, ctx)`` in ``audit/sections/<name>/render.py``) is
named by the section's entry in :mod:`judge_transfer_audit.sections.registry`; the report calls it
only for a computed section, with the typed payload the section wrote (after a JSON round trip,
:func:`judge_transfer_audit.results.result.result_from_json` rebuilds the same types). Any error in
a renderer propagates: a renderer bug fails the tests, it is never turned into a note.
"""

from __future__ import annotations

from typing import Any, Callable

from judge_transfer_audit.presentation.tables import section_context

#: ``render(result, payload, ctx)``: fills the section's context from its typed payload
Renderer = Callable[[Any, Any, dict], None]

PRINT_PARTS = 2  #: parts of a figure drawn in parts printed on paper; the HTML shows every one


def render_section(section_id: str, title: str, result: Any, section: Any, render: Renderer) -> dict:
    """The section's context: "not computed because <reason>", or what ``render`` fills in."""
    ctx = section_context(section_id, title, section)
    if not ctx["computed"]:
        return ctx
    render(result, section.payload, ctx)
    return ctx


def print_parts(k: int, n: int, source: str) -> dict:
    """Part ``k`` of ``n``: screen-only past :data:`PRINT_PARTS`; the last printed part says where the rest are."""
    return {
        "screen_only": k >= PRINT_PARTS,
        "print_note": f"On paper the first {PRINT_PARTS} of the {n} parts of this figure are printed; the others are "
        f"in the HTML report, and every value is in {source} and result.json."
        if k == PRINT_PARTS - 1 and n > PRINT_PARTS
        else "",
    }


def payload_of(result: Any, name: str) -> Any:
    """The payload of ``result``'s section ``name`` (None when the section is not computed or absent)."""
    return getattr(getattr(result, name, None), "payload", None)
