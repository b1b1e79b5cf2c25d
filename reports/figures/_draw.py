"""Direct SVG drawing for grid figures (heat maps), without matplotlib.

A heat map is rectangles and text: laying it out through matplotlib cost about a second per
map (constrained layout measures every tick label), a third of the report's render time. This
module writes the same kind of SVG directly: a :class:`Canvas` collects elements in points,
every piece of text is escaped by :func:`xml.sax.saxutils.escape`, and text widths are
estimated from DejaVu Sans' average glyph widths (:func:`text_width`, deliberately generous so
that laid-out labels never touch). The result goes through :func:`reports.figures._svg.verify_svg`
like every other figure, and ids are prefixed per figure.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

FONT = "DejaVu Sans, Bitstream Vera Sans, Arial, sans-serif"

# RdBu (ColorBrewer, 11 classes) reversed: blue = 0 (the other system), red = 1 (the focal system)
_RDBU_R = (
    (0.019, 0.188, 0.380),
    (0.129, 0.400, 0.674),
    (0.263, 0.576, 0.765),
    (0.573, 0.773, 0.871),
    (0.820, 0.898, 0.941),
    (0.969, 0.969, 0.969),
    (0.992, 0.859, 0.780),
    (0.957, 0.647, 0.510),
    (0.839, 0.376, 0.302),
    (0.698, 0.094, 0.169),
    (0.404, 0.000, 0.122),
)
MISSING = "#dddddd"

_NARROW = set("iljtfr.,:;'|!()[] ")
_WIDE = set("mwMW@%")


def text_width(text: str, size: float, *, bold: bool = False) -> float:
    """Estimated width in points of ``text`` at font ``size`` (DejaVu Sans; errs wide)."""
    units = 0.0
    for ch in text:
        if ch in _NARROW:
            units += 0.36
        elif ch in _WIDE:
            units += 0.92
        elif ch.isupper() or ch.isdigit():
            units += 0.68
        else:
            units += 0.62
    return units * size * (1.14 if bold else 1.0)


def diverging(value: float) -> str:
    """Hex colour of ``value`` in [0, 1] on the reversed RdBu scale (0.5 = white); NaN = grey."""
    if value != value:  # NaN
        return MISSING
    v = min(1.0, max(0.0, float(value))) * (len(_RDBU_R) - 1)
    i = min(int(v), len(_RDBU_R) - 2)
    t = v - i
    rgb = [a + (b - a) * t for a, b in zip(_RDBU_R[i], _RDBU_R[i + 1])]
    return "#" + "".join(f"{round(255 * c):02x}" for c in rgb)


def ink_for(value: float) -> str:
    """Text colour readable on :func:`diverging` ``value``."""
    return "#ffffff" if value == value and abs(value - 0.5) > 0.3 else "#222222"


def _num(x: float) -> str:
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


class Canvas:
    """SVG elements in points; :meth:`svg` wraps them in a sized ``<svg>`` root."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.width = 0.0
        self.height = 0.0

    def _grow(self, x: float, y: float) -> None:
        self.width = max(self.width, x)
        self.height = max(self.height, y)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, *, stroke: str = "", title: str = "") -> None:
        edge = f' stroke="{stroke}" stroke-width="1"' if stroke else ""
        tip = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(
            f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" fill="{fill}"{edge}>{tip}</rect>'
            if tip
            else f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" fill="{fill}"{edge}/>'
        )
        self._grow(x + w, y + h)

    def line(self, x1: float, y1: float, x2: float, y2: float, *, colour: str = "#222222", width: float = 1.0) -> None:
        self.parts.append(
            f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" stroke="{colour}" '
            f'stroke-width="{_num(width)}"/>'
        )
        self._grow(max(x1, x2), max(y1, y2))

    def path(self, d: str, *, colour: str = "#555555", width: float = 1.0) -> None:
        self.parts.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{_num(width)}"/>')

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: float = 8.0,
        anchor: str = "start",
        colour: str = "#222222",
        bold: bool = False,
        rotate: bool = False,
    ) -> None:
        """``text`` with its baseline at ``y`` (or, ``rotate``: read bottom to top, baseline at ``x``)."""
        weight = ' font-weight="bold"' if bold else ""
        turn = f' transform="rotate(-90 {_num(x)} {_num(y)})"' if rotate else ""
        self.parts.append(
            f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" text-anchor="{anchor}" '
            f'fill="{colour}"{weight}{turn}>{escape(text)}</text>'
        )
        w = text_width(text, size)
        if rotate:
            self._grow(x + size * 0.3, y)
        else:
            self._grow(x + (w if anchor == "start" else w / 2 if anchor == "middle" else 0), y + size * 0.3)

    def gradient_bar(self, fig_id: str, x: float, y: float, w: float, h: float, label: str) -> float:
        """A horizontal colour bar of the diverging scale (0% left, 100% right) with its ticks below
        and ``label`` to its right; returns the bottom of the legend."""
        stops = "".join(f'<stop offset="{10 * k}%" stop-color="{diverging(k / 10)}"/>' for k in range(11))
        gid = f"{fig_id}-scale"
        self.parts.append(
            f'<defs><linearGradient id={quoteattr(gid)} x1="0" y1="0" x2="1" y2="0">{stops}</linearGradient></defs>'
        )
        self.parts.append(
            f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" fill="url(#{gid})" '
            'stroke="#888888" stroke-width="0.5"/>'
        )
        for value in (0.0, 0.5, 1.0):
            tx = x + value * w
            self.line(tx, y + h, tx, y + h + 2.5, colour="#444444", width=0.8)
            self.text(tx, y + h + 10, f"{100 * value:.0f}%", size=7.0, anchor="middle")
        self.text(x + w + 14, y + h - 1, label, size=7.5)
        self._grow(x + w, y + h)
        return y + h + 12

    def svg(self, fig_id: str, *, pad: float = 6.0) -> str:
        w, h = self.width + pad, self.height + pad
        return (
            f'<svg id={quoteattr(fig_id)} role="img" xmlns="http://www.w3.org/2000/svg" width="{_num(w)}pt" '
            f'height="{_num(h)}pt" viewBox="0 0 {_num(w)} {_num(h)}" font-family="{FONT}">\n'
            + "\n".join(self.parts)
            + "\n</svg>\n"
        )
