"""One renderer per section payload type: ``@renders(PayloadType)`` and :func:`render_section`.

A section is rendered from the type of its payload, never from its shape. A payload type
without a renderer is a programming error (a new section that the report does not know):
it raises, so a test catches it; nothing is turned into a note.
"""

from __future__ import annotations

from typing import Any, Callable

from judge_transfer_audit.reports.tables import section_context

Renderer = Callable[[Any, Any, dict], None]
RENDERERS: dict[type, Renderer] = {}


def renders(payload_type: type) -> Callable[[Renderer], Renderer]:
    """Register ``fn(result, payload, ctx)`` as the renderer of ``payload_type``."""

    def register(fn: Renderer) -> Renderer:
        if payload_type in RENDERERS:
            raise RuntimeError(f"two renderers for {payload_type.__qualname__}")
        RENDERERS[payload_type] = fn
        return fn

    return register


def render_section(section_id: str, title: str, result: Any, section: Any) -> dict:
    """The section's context: "not computed because <reason>", or its renderer's output."""
    ctx = section_context(section_id, title, section)
    if not ctx["computed"]:
        return ctx
    payload = section.payload
    renderer = RENDERERS.get(type(payload))
    if renderer is None:
        raise TypeError(
            f"section {section_id!r}: no report renderer for a {type(payload).__qualname__} payload "
            f"(known: {', '.join(sorted(t.__qualname__ for t in RENDERERS))})"
        )
    renderer(result, payload, ctx)
    return ctx
