"""Shared plumbing for report figures: deterministic, inline-safe SVG from matplotlib.

Every figure function in :mod:`judge_transfer_audit.presentation.figures` builds a :class:`matplotlib.figure.Figure`
(never pyplot: no global figure registry) and hands it to :func:`figure_to_svg`, which

* renders under a temporary ``rc_context`` (``svg.fonttype = 'none'`` so text stays text and
  the file stays small; a fixed ``svg.hashsalt`` so clip-path ids are byte-stable; no date),
* strips the XML prologue, DOCTYPE and metadata so the SVG can be inlined in HTML,
* prefixes every ``id`` (and every ``url(#..)`` / ``href="#.."`` reference) with a
  figure-specific prefix, so several SVGs on one page never share an id,
* scopes matplotlib's global ``*{...}`` style rule to the figure,
* and verifies the result: no ``script``/``foreignObject`` element, no ``on*`` attribute and
  no external reference may appear (user text is escaped by matplotlib's SVG writer; this is
  the second line of defence).
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from judge_transfer_audit.core.optional import import_optional

if TYPE_CHECKING:  # matplotlib (the [plots] extra) is imported only when a figure is drawn through it
    from matplotlib.figure import Figure

#: rc settings used for every report figure (applied temporarily, never globally)
RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "judge-audit",
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 0.8,
    "legend.frameon": False,
    # user labels (system, criterion, reader names) are drawn literally, never as mathtext
    "text.parse_math": False,
}

#: Okabe-Ito, colour-blind safe; one colour per matchup / group, in order of appearance
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
JUDGE_COLOUR = "#444444"

_ID_RE = re.compile(r'\bid="([^"]+)"')
_URL_RE = re.compile(r"url\(#([^)]+)\)")
_HREF_RE = re.compile(r'((?:xlink:)?href)="#([^"]+)"')
_SVG_NS = "{http://www.w3.org/2000/svg}"
# geometry attributes whose numbers are rounded to 2 decimals (0.01 pt: invisible, a third smaller)
_GEOMETRY_RE = re.compile(r'(\s(?:d|x|y|x1|x2|y1|y2|width|height|transform|points|viewBox)=")([^"]*)"')
_LONG_DECIMAL_RE = re.compile(r"(-?\d+\.\d{2})\d+")


class UnsafeSvgError(ValueError):
    """The rendered SVG contains an active element or attribute (a bug, never user error)."""


LABEL_LIMIT = 48


def plain(text: object, limit: int = LABEL_LIMIT) -> str:
    """``text`` as a figure label: literal (mathtext is off in :data:`RC`) and at most ``limit``
    characters (longer names end in an ellipsis; tables in the report show them in full)."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def figure_context():
    """The rc context every figure function builds and renders its figure in."""
    return import_optional("matplotlib").rc_context(RC)


def colour_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def new_figure(width: float, height: float) -> Figure:
    """A pyplot-free figure (size in inches); call inside :func:`figure_context`."""
    figure = import_optional("matplotlib.figure")
    fig = figure.Figure(figsize=(width, height), layout="constrained")
    import_optional("matplotlib.backends.backend_svg").FigureCanvasSVG(fig)
    return fig


def figure_to_svg(fig: Figure, fig_id: str) -> str:
    """Render ``fig`` to an inline-ready, byte-stable, verified SVG string.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    fig_id : str
        Prefix for every id in the SVG (letters, digits, ``-``, ``_``); also the root id.
    """
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", fig_id):
        raise ValueError(f"figure id must be a simple identifier, got {fig_id!r}")
    buf = io.StringIO()
    with import_optional("matplotlib").rc_context(RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = _GEOMETRY_RE.sub(lambda m: m.group(1) + _LONG_DECIMAL_RE.sub(r"\1", m.group(2)) + '"', svg)
    svg = re.sub(r"\n\s+", "\n", svg)  # indentation only
    svg = _ID_RE.sub(lambda m: f'id="{fig_id}-{m.group(1)}"', svg)
    svg = _URL_RE.sub(lambda m: f"url(#{fig_id}-{m.group(1)})", svg)
    svg = _HREF_RE.sub(lambda m: f'{m.group(1)}="#{fig_id}-{m.group(2)}"', svg)
    svg = svg.replace("*{stroke-linejoin", f"#{fig_id} *{{stroke-linejoin", 1)
    svg = svg.replace("<svg ", f'<svg id="{fig_id}" role="img" ', 1)
    verify_svg(svg)
    return svg.strip() + "\n"


def verify_svg(svg: str) -> None:
    """Raise :class:`UnsafeSvgError` if ``svg`` holds anything active or external.

    The element names and attribute names are collected once over the parsed tree and each distinct one
    checked (a figure has thousands of elements and a dozen distinct names); ``href`` values are then read
    on the elements that have one."""
    elements = list(ET.fromstring(svg).iter())
    for tag in {el.tag for el in elements}:
        local = tag.replace(_SVG_NS, "").lower()
        if local in {"script", "foreignobject", "iframe", "object", "embed"}:
            raise UnsafeSvgError(f"forbidden element <{local}> in figure")
    hrefs = []
    for name in set().union(*(el.attrib for el in elements)):
        local = name.rsplit("}", 1)[-1].lower()
        if local.startswith("on"):
            raise UnsafeSvgError(f"forbidden attribute {local} in figure")
        if local == "href":
            hrefs.append(name)
    for name in hrefs:
        for el in elements:
            value = el.get(name)
            if value is not None and not (value.startswith("#") or value.startswith("data:image/png;base64,")):
                raise UnsafeSvgError(f"external reference {value[:40]!r} in figure")


def empty_svg(fig_id: str, message: str) -> str:
    """A small figure that states why nothing could be drawn (never an empty slot)."""
    from judge_transfer_audit.presentation.figures._draw import note_svg

    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", fig_id):
        raise ValueError(f"figure id must be a simple identifier, got {fig_id!r}")
    svg = note_svg(fig_id, plain(message, 120))
    verify_svg(svg)
    return svg
