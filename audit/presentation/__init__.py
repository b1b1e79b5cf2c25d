"""Presentation helpers every renderer shares (a section's renderer in ``audit/sections/<name>/render.py``
and the report's own parts in ``reports/``): number and interval formats, a frame as a display table, the
section context, the SVG figures. Nothing here reads a result's meaning; it sits below the sections so
that each section's folder holds its own renderer."""
