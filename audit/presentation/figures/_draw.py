"""Direct SVG drawing for grid figures (heat maps), without matplotlib.

A heat map is rectangles and text: laying it out through matplotlib cost about a second per
map (constrained layout measures every tick label), a third of the report's render time. This
module writes the same kind of SVG directly: a :class:`Canvas` collects elements in points,
every piece of text is escaped by :func:`escape` (as :func:`xml.sax.saxutils.escape`), and text widths are
estimated from DejaVu Sans' average glyph widths (:func:`text_width`, deliberately generous so
that laid-out labels never touch). The result goes through
:func:`judge_transfer_audit.presentation.figures._svg.verify_svg` like every other figure, and ids are
prefixed per figure.
"""

from __future__ import annotations

import html

# xml.sax.saxutils would import urllib.request, http.client and email (~20 ms of every `audit report`)
_ATTR_ENTITIES = str.maketrans({"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def escape(text: str) -> str:
    """``&``, ``<`` and ``>`` escaped for XML character data (what ``xml.sax.saxutils.escape`` does)."""
    return html.escape(text, quote=False)


def quoteattr(text: str) -> str:
    """``text`` escaped and quoted as an XML attribute value (what ``xml.sax.saxutils.quoteattr`` does)."""
    value = escape(text).translate(_ATTR_ENTITIES)
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace('"', "&quot;") + '"'


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

    def marker(
        self,
        kind: str,
        x: float,
        y: float,
        *,
        size: float = 4.0,
        fill: str = "#0072B2",
        stroke: str = "",
        opacity: float = 1.0,
        stroke_width: float = 1.0,
    ) -> None:
        """A point marker centred on (x, y): ``o`` circle, ``s`` square, ``^`` triangle, ``D`` diamond."""
        r = size / 2
        edge = f' stroke="{stroke}" stroke-width="{_num(stroke_width)}"' if stroke else ""
        alpha = f' opacity="{_num(opacity)}"' if opacity < 1 else ""
        if kind == "o":
            self.parts.append(f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" fill="{fill}"{edge}{alpha}/>')
        else:
            pts = {
                "s": ((-r, -r), (r, -r), (r, r), (-r, r)),
                "^": ((0, -r * 1.15), (r * 1.1, r * 0.8), (-r * 1.1, r * 0.8)),
                "v": ((0, r * 1.15), (r * 1.1, -r * 0.8), (-r * 1.1, -r * 0.8)),
                "D": ((0, -r * 1.2), (r, 0), (0, r * 1.2), (-r, 0)),
            }.get(kind, ((-r, -r), (r, -r), (r, r), (-r, r)))
            d = "M" + " L".join(f"{_num(x + dx)} {_num(y + dy)}" for dx, dy in pts) + " Z"
            self.parts.append(f'<path d="{d}" fill="{fill}"{edge}{alpha}/>')
        self._grow(x + r, y + r)

    def polyline(self, xs, ys, *, colour: str = "#222222", width: float = 1.0, dash: str = "", opacity: float = 1.0):
        pts = " ".join(f"{_num(a)},{_num(b)}" for a, b in zip(xs, ys) if a == a and b == b)
        if not pts:
            return
        extra = (f' stroke-dasharray="{dash}"' if dash else "") + (f' opacity="{_num(opacity)}"' if opacity < 1 else "")
        self.parts.append(
            f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="{_num(width)}"{extra}/>'
        )

    def raw(self, element: str) -> None:
        """A pre-built element (internal use: pattern definitions)."""
        self.parts.append(element)

    def legend(self, x: float, y: float, items, *, size: float = 7.5, title: str = "") -> float:
        """A vertical legend at (x, y): ``items`` are (marker kind or "-" for a line, colour, label);
        returns its bottom."""
        if title:
            y += size + 2
            self.text(x, y, title, size=size, bold=True)
        for kind, colour, label in items:
            y += size + 5
            if kind == "-":
                self.line(x, y - size * 0.35, x + 12, y - size * 0.35, colour=colour, width=1.8)
            elif kind == "box":
                self.rect(x, y - size * 0.8, 12, size * 0.9, colour)
            else:
                self.marker(kind, x + 6, y - size * 0.35, size=size * 0.8, fill=colour)
            self.text(x + 16, y, label, size=size)
        return y + 3

    def svg(self, fig_id: str, *, pad: float = 6.0) -> str:
        w, h = self.width + pad, self.height + pad
        return (
            f'<svg id={quoteattr(fig_id)} role="img" xmlns="http://www.w3.org/2000/svg" width="{_num(w)}pt" '
            f'height="{_num(h)}pt" viewBox="0 0 {_num(w)} {_num(h)}" font-family="{FONT}">\n'
            + "\n".join(self.parts)
            + "\n</svg>\n"
        )


def nice_ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    import math

    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else [0.0]
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out, v = [], first
    while v <= hi + 1e-9 * step:
        out.append(round(v, 10))
        v += step
    return out


def tick_label(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1e-9 else "0"


class Panel:
    """A plotting area of ``canvas`` at (x, y) of size (w, h) in points, with linear data scales;
    ``ylim`` is (value at the top, value at the bottom), so categories count down the page."""

    def __init__(self, canvas: Canvas, x: float, y: float, w: float, h: float, xlim, ylim) -> None:
        self.c, self.x, self.y, self.w, self.h = canvas, x, y, w, h
        self.xlim, self.ylim = (float(xlim[0]), float(xlim[1])), (float(ylim[0]), float(ylim[1]))

    def sx(self, v: float) -> float:
        a, b = self.xlim
        return self.x + (float(v) - a) / ((b - a) or 1.0) * self.w

    def sy(self, v: float) -> float:
        a, b = self.ylim
        return self.y + (float(v) - a) / ((b - a) or 1.0) * self.h

    def frame(self, *, left: bool = True, bottom: bool = True) -> None:
        if left:
            self.c.line(self.x, self.y, self.x, self.y + self.h, colour="#444444", width=0.8)
        if bottom:
            self.c.line(self.x, self.y + self.h, self.x + self.w, self.y + self.h, colour="#444444", width=0.8)

    def xticks(self, values, labels=None, *, size: float = 7.0) -> None:
        labels = labels if labels is not None else [tick_label(v) for v in values]
        for v, lab in zip(values, labels):
            px = self.sx(v)
            self.c.line(px, self.y + self.h, px, self.y + self.h + 3, colour="#444444", width=0.8)
            self.c.text(px, self.y + self.h + 4 + size, lab, size=size, anchor="middle")

    def yticks(self, values, labels=None, *, size: float = 7.0) -> None:
        labels = labels if labels is not None else [tick_label(v) for v in values]
        for v, lab in zip(values, labels):
            py = self.sy(v)
            self.c.line(self.x - 3, py, self.x, py, colour="#444444", width=0.8)
            self.c.text(self.x - 5, py + size * 0.35, lab, size=size, anchor="end")

    def xlabel(self, text: str, *, size: float = 7.5, offset: float = 24.0) -> None:
        self.c.text(self.x + self.w / 2, self.y + self.h + offset, text, size=size, anchor="middle")

    def title(self, text: str, *, size: float = 8.5, bold: bool = False) -> None:
        self.c.text(self.x, self.y - 5, text, size=size, bold=bold)

    def vline(self, v: float, *, colour: str = "#888888", width: float = 0.9, dash: str = "") -> None:
        self.c.polyline([self.sx(v)] * 2, [self.y, self.y + self.h], colour=colour, width=width, dash=dash)

    def hline(self, v: float, *, colour: str = "#bbbbbb", width: float = 0.7, dash: str = "") -> None:
        self.c.polyline([self.x, self.x + self.w], [self.sy(v)] * 2, colour=colour, width=width, dash=dash)


def note_svg(fig_id: str, message: str, width: float = 430.0) -> str:
    """A small figure that states why nothing could be drawn (never an empty slot)."""
    c = Canvas()
    c.width = width
    c.text(width / 2, 22, message, size=8.5, anchor="middle", colour="#666666")
    c.height = 34
    return c.svg(fig_id)
