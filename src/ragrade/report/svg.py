"""A small drawing model for the report's plots: shapes laid out in pixels, written as SVG by ragrade
itself (no dependency) or painted as PNG with matplotlib (extra ``plots``, only for PNG).

A :class:`Figure` is a list of shapes (:class:`Line`, :class:`Polyline`, :class:`Rect`, :class:`Circle`,
:class:`Text`, :class:`Group`) in pixel coordinates, with the origin at the top left. The plot functions
of :mod:`ragrade.report.plots` decide where everything goes; the two writers here only translate shapes,
so the SVG in the HTML report, a downloaded SVG and a PNG written for a paper are the same picture.

Accessibility: every SVG carries ``role="img"``, a ``<title>`` and a ``<desc>`` (the plot's one-paragraph
summary), and colours come from the Okabe-Ito palette, which stays distinguishable for the common forms
of colour blindness; runs also differ by marker shape and line dash.
"""

from __future__ import annotations

import html
import io
import math
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ragrade.errors import InputError, require

# Okabe & Ito (2008), "Color Universal Design": distinguishable with deuteranopia, protanopia, tritanopia.
RUN_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")
WIN = "#0072B2"  # the treatment scores higher (blue)
LOSS = "#D55E00"  # the treatment scores lower (vermillion)
TIE = "#8C8C8C"
INK = "#1D2230"
MUTED = "#5F6B7A"
GRID = "#E3E7EE"
MARKERS = ("circle", "square", "triangle", "diamond", "triangle-down", "hexagon")
DASHES: tuple[str | None, ...] = (None, "6 3", "2 2", "8 3 2 3", "4 4", "1 3")
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"

Anchor = Literal["start", "middle", "end"]


def run_style(i: int) -> tuple[str, str, str | None]:
    """(colour, marker, dash) of the ``i``-th run."""
    return RUN_COLOURS[i % len(RUN_COLOURS)], MARKERS[i % len(MARKERS)], DASHES[(i // len(RUN_COLOURS)) % len(DASHES)]


# ------------------------------------------------------------------------------------------------ shapes
@dataclass
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = INK
    width: float = 1.0
    dash: str | None = None
    opacity: float = 1.0
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Polyline:
    """A polyline through ``points`` (``closed``: a polygon, filled when ``fill`` is set)."""

    points: np.ndarray  # shape (n, 2)
    stroke: str | None = INK
    width: float = 1.0
    fill: str | None = None
    fill_opacity: float = 1.0
    closed: bool = False
    dash: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Rect:
    """A rectangle; ``fill=None`` inherits the enclosing group's fill (the default draws no fill)."""

    x: float
    y: float
    w: float
    h: float
    fill: str | None = "none"
    stroke: str | None = None
    width: float = 1.0
    opacity: float = 1.0
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Circle:
    """A circle; ``fill=None`` inherits the enclosing group's fill."""

    cx: float
    cy: float
    r: float
    fill: str | None = None
    stroke: str | None = None
    width: float = 1.0
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Text:
    x: float
    y: float  # baseline
    text: str
    size: float = 11.0
    anchor: Anchor = "start"
    fill: str = INK
    weight: str = "normal"
    rotate: float = 0.0  # degrees, counter-clockwise, about (x, y)


@dataclass
class Group:
    """Shapes sharing a fill/opacity, plus attributes used by the page script (``class``, ``data-*``)."""

    items: list[Any] = field(default_factory=list)
    fill: str | None = None
    fill_opacity: float | None = None
    stroke: str | None = None
    width: float | None = None
    attrs: dict[str, str] = field(default_factory=dict)

    def add(self, item: Any) -> Any:
        self.items.append(item)
        return item


Shape = Line | Polyline | Rect | Circle | Text | Group


def marker(shape: str, x: float, y: float, size: float, fill: str, stroke: str | None = "#FFFFFF") -> Shape:
    """A run marker of the given ``shape`` centred at (x, y), ``size`` pixels across."""
    r = size / 2
    if shape == "circle":
        return Circle(x, y, r, fill=fill, stroke=stroke, width=0.8)
    if shape == "square":
        pts = [(-r, -r), (r, -r), (r, r), (-r, r)]
    elif shape == "triangle":
        pts = [(0, -1.15 * r), (1.1 * r, 0.85 * r), (-1.1 * r, 0.85 * r)]
    elif shape == "triangle-down":
        pts = [(0, 1.15 * r), (1.1 * r, -0.85 * r), (-1.1 * r, -0.85 * r)]
    elif shape == "diamond":
        pts = [(0, -1.3 * r), (1.3 * r, 0), (0, 1.3 * r), (-1.3 * r, 0)]
    else:  # hexagon
        pts = [(r * math.cos(a), r * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 7)[:-1]]
    arr = np.array(pts, dtype=float) + np.array([x, y])
    return Polyline(arr, stroke=stroke, width=0.8, fill=fill, closed=True)


def text_width(text: str, size: float) -> float:
    """Rough width of ``text`` in a sans-serif font (for layout: legends, margins)."""
    return 0.56 * size * len(text)


# ------------------------------------------------------------------------------------------------ figure
@dataclass
class Figure:
    """A plot: its size in pixels, title, accessible description, file name stem and shapes."""

    width: float
    height: float
    title: str
    description: str
    name: str
    items: list[Any] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)  # on the <svg> element, in the report only

    def add(self, item: Any) -> Any:
        self.items.append(item)
        return item

    def to_svg(self, *, interactive: bool = False, element_id: str | None = None) -> str:
        """The figure as an SVG document (``interactive``: keep the page script's classes and data
        attributes; the report uses it inline, downloads and files for papers do not need them)."""
        return write_svg(self, interactive=interactive, element_id=element_id)

    def to_png(self, scale: float = 2.0) -> bytes:
        """The figure as PNG bytes, ``scale`` device pixels per pixel (needs matplotlib)."""
        return write_png(self, scale=scale)

    def save(self, path: str | os.PathLike[str], *, scale: float = 2.0) -> Path:
        """Write the figure as ``.svg`` or ``.png`` (chosen by the extension) and return the path."""
        from ragrade.io.writers import output_path, write_text

        out = Path(path)
        suffix = out.suffix.lower()
        if suffix == ".svg":
            write_text(out, self.to_svg())
        elif suffix == ".png":
            data = self.to_png(scale=scale)
            with output_path(out) as tmp, open(tmp, "wb") as fh:
                fh.write(data)
        else:
            raise InputError("a plot file must end in .svg or .png", value=str(path))
        return out


def file_stem(text: str) -> str:
    """A file-name-safe version of ``text`` (metric and run names keep their letters, digits, ``@``)."""
    stem = re.sub(r"[^\w@.+-]+", "_", text, flags=re.UNICODE).strip("._")
    return stem or "plot"


# ----------------------------------------------------------------------------------------------- SVG writer
def _num(v: float) -> str:
    r = round(float(v), 1)
    return str(int(r)) if r == int(r) else f"{r:.1f}"


def _a(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _paint(fill: str | None, stroke: str | None, width: float | None, dash: str | None = None) -> str:
    parts = []
    if fill is not None:
        parts.append(f' fill="{fill}"')
    if stroke is not None:
        parts.append(f' stroke="{stroke}"')
        if width is not None and width != 1.0:
            parts.append(f' stroke-width="{width:g}"')
    if dash:
        parts.append(f' stroke-dasharray="{dash}"')
    return "".join(parts)


def _attrs(attrs: dict[str, str], interactive: bool) -> str:
    if not interactive or not attrs:
        return ""
    return "".join(f' {k}="{_a(v)}"' for k, v in attrs.items())


def _points(points: np.ndarray) -> str:
    pts = np.round(np.asarray(points, dtype=float), 1)
    flat = [f"{x:g},{y:g}" for x, y in pts.tolist()]
    return " ".join(flat)


def _svg_items(items: Sequence[Any], interactive: bool, out: list[str]) -> None:
    for it in items:
        if isinstance(it, Group):
            paint = _paint(it.fill, it.stroke, it.width)
            if it.fill_opacity is not None:
                paint += f' fill-opacity="{it.fill_opacity:g}"'
            out.append(f"<g{paint}{_attrs(it.attrs, interactive)}>")
            _svg_items(it.items, interactive, out)
            out.append("</g>")
        elif isinstance(it, Circle):
            out.append(
                f'<circle cx="{_num(it.cx)}" cy="{_num(it.cy)}" r="{it.r:.3g}"'
                f"{_paint(it.fill, it.stroke, it.width)}{_attrs(it.attrs, interactive)}/>"
            )
        elif isinstance(it, Line):
            op = f' opacity="{it.opacity:g}"' if it.opacity != 1.0 else ""
            out.append(
                f'<line x1="{_num(it.x1)}" y1="{_num(it.y1)}" x2="{_num(it.x2)}" y2="{_num(it.y2)}"'
                f"{_paint(None, it.stroke, it.width, it.dash)}{op}{_attrs(it.attrs, interactive)}/>"
            )
        elif isinstance(it, Rect):
            op = f' opacity="{it.opacity:g}"' if it.opacity != 1.0 else ""
            fill = it.fill
            out.append(
                f'<rect x="{_num(it.x)}" y="{_num(it.y)}" width="{_num(it.w)}" height="{_num(it.h)}"'
                f"{_paint(fill, it.stroke, it.width)}{op}{_attrs(it.attrs, interactive)}/>"
            )
        elif isinstance(it, Polyline):
            tag = "polygon" if it.closed else "polyline"
            fill = it.fill if it.fill is not None else "none"
            paint = _paint(fill, it.stroke, it.width, it.dash)
            if it.fill is not None and it.fill_opacity != 1.0:
                paint += f' fill-opacity="{it.fill_opacity:g}"'
            if not it.closed:
                paint += ' stroke-linejoin="round"'
            out.append(f'<{tag} points="{_points(it.points)}"{paint}{_attrs(it.attrs, interactive)}/>')
        elif isinstance(it, Text):
            extra = ""
            if it.anchor != "start":
                extra += f' text-anchor="{it.anchor}"'
            if it.weight != "normal":
                extra += f' font-weight="{it.weight}"'
            if it.rotate:
                extra += f' transform="rotate({-it.rotate:g} {_num(it.x)} {_num(it.y)})"'
            out.append(
                f'<text x="{_num(it.x)}" y="{_num(it.y)}" font-size="{it.size:g}" fill="{it.fill}"{extra}>'
                f"{html.escape(it.text, quote=False)}</text>"
            )
        else:  # pragma: no cover - a programming error in a plot function
            raise TypeError(f"not a shape: {it!r}")


def write_svg(fig: Figure, *, interactive: bool = False, element_id: str | None = None) -> str:
    """SVG text of ``fig`` (see :meth:`Figure.to_svg`)."""
    uid = element_id or file_stem(fig.name)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(fig.width)}" height="{_num(fig.height)}" '
        f'viewBox="0 0 {_num(fig.width)} {_num(fig.height)}" role="img" '
        f'aria-labelledby="{_a(uid)}-t {_a(uid)}-d" font-family="{_a(FONT)}"'
        f"{_attrs(fig.attrs, interactive)}>",
        f'<title id="{_a(uid)}-t">{html.escape(fig.title, quote=False)}</title>',
        f'<desc id="{_a(uid)}-d">{html.escape(fig.description, quote=False)}</desc>',
        f'<rect width="{_num(fig.width)}" height="{_num(fig.height)}" fill="#FFFFFF"/>',
    ]
    _svg_items(fig.items, interactive, out)
    out.append("</svg>")
    return "".join(out)


# ----------------------------------------------------------------------------------------------- PNG writer
def _walk(items: Sequence[Any], inherited: dict[str, Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
    for it in items:
        if isinstance(it, Group):
            paint = dict(inherited)
            for key in ("fill", "fill_opacity", "stroke", "width"):
                value = getattr(it, key)
                if value is not None:
                    paint[key] = value
            yield from _walk(it.items, paint)
        else:
            yield it, inherited


def _dashes(dash: str | None, width: float) -> Any:
    if not dash:
        return "solid"
    seq = tuple(float(v) / max(width, 0.1) for v in dash.split())
    return (0, seq)


#: One SVG pixel is 1/100 inch: 0.72 points for line widths and font sizes.
_PT = 0.72


def write_png(fig: Figure, *, scale: float = 2.0) -> bytes:
    """PNG bytes of ``fig``, painted shape by shape with matplotlib (extra ``plots``)."""
    require("matplotlib", extra="plots", purpose="PNG plots")
    figure_mod = require("matplotlib.figure", package="matplotlib", extra="plots", purpose="PNG plots")
    patches = require("matplotlib.patches", package="matplotlib", extra="plots", purpose="PNG plots")
    mfig = figure_mod.Figure(figsize=(fig.width / 100, fig.height / 100), dpi=100 * scale)
    ax = mfig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, fig.width)
    ax.set_ylim(fig.height, 0)
    ax.set_axis_off()
    for it, paint in _walk(fig.items, {}):
        _draw(ax, patches, it, paint)
    buf = io.BytesIO()
    mfig.savefig(buf, format="png", dpi=100 * scale, metadata={"Software": None})
    return buf.getvalue()


def _draw(ax: Any, patches: Any, it: Any, paint: dict[str, Any]) -> None:
    """One shape on matplotlib's axes (``paint``: what its groups set)."""
    pt = _PT
    fill = it.fill if getattr(it, "fill", None) is not None else paint.get("fill")
    stroke = getattr(it, "stroke", None) or paint.get("stroke")
    width = getattr(it, "width", None) or paint.get("width") or 1.0
    if isinstance(it, Line):
        ax.plot(
            [it.x1, it.x2], [it.y1, it.y2], color=it.stroke, linewidth=it.width * pt,
            linestyle=_dashes(it.dash, it.width), alpha=it.opacity, solid_capstyle="butt",
        )
    elif isinstance(it, Rect):
        face = it.fill if it.fill is not None else paint.get("fill")
        if face in (None, "none") and it.stroke is None:
            return
        ax.add_patch(
            patches.Rectangle(
                (it.x, it.y), it.w, it.h, facecolor=face or "none", edgecolor=it.stroke or "none",
                linewidth=it.width * pt if it.stroke else 0, alpha=it.opacity,
            )
        )
    elif isinstance(it, Circle):
        ax.add_patch(
            patches.Circle(
                (it.cx, it.cy), it.r, facecolor=fill or "none", edgecolor=stroke or "none",
                linewidth=width * pt if stroke else 0, alpha=paint.get("fill_opacity"),
            )
        )
    elif isinstance(it, Polyline):
        _paint_polyline(ax, patches, it)
    elif isinstance(it, Text):
        ax.text(
            it.x, it.y, it.text, fontsize=it.size * pt, color=it.fill, fontweight=it.weight,
            ha={"start": "left", "middle": "center", "end": "right"}[it.anchor], va="baseline",
            rotation=it.rotate, rotation_mode="anchor",
        )


def _paint_polyline(ax: Any, patches: Any, it: Polyline) -> None:
    pts = np.asarray(it.points, dtype=float)
    if it.closed:
        ax.add_patch(
            patches.Polygon(
                pts, closed=True, facecolor=it.fill or "none", edgecolor=it.stroke or "none",
                linewidth=it.width * _PT if it.stroke else 0,
                alpha=it.fill_opacity if it.fill and it.fill_opacity != 1.0 else None,
            )
        )
    else:
        ax.plot(
            pts[:, 0], pts[:, 1], color=it.stroke or INK, linewidth=it.width * _PT,
            linestyle=_dashes(it.dash, it.width), solid_joinstyle="round",
        )


# ----------------------------------------------------------------------------------------------------- axes
def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering ``[lo, hi]`` (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0]
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, target)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-15)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    v = first
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 12))
        v += step
    return ticks


def tick_label(v: float) -> str:
    """A tick value without trailing zeros (``0.25``, ``1``, ``1e+03`` for large values)."""
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.0e}"
    text = f"{v:.4f}".rstrip("0").rstrip(".")
    return "−" + text[1:] if text.startswith("-") else text


@dataclass
class Axes:
    """A plot area at (left, top, width, height) with linear (or log) scales from data to pixels."""

    left: float
    top: float
    width: float
    height: float
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    log_x: bool = False

    def sx(self, v: Any) -> Any:
        lo, hi = self.x_range
        if self.log_x:
            lo, hi, v = math.log10(lo), math.log10(hi), np.log10(v)
        span = (hi - lo) or 1.0
        return self.left + (np.asarray(v, dtype=float) - lo) / span * self.width

    def sy(self, v: Any) -> Any:
        lo, hi = self.y_range
        span = (hi - lo) or 1.0
        return self.top + self.height - (np.asarray(v, dtype=float) - lo) / span * self.height

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def draw(
        self,
        fig: Figure,
        *,
        x_label: str,
        y_label: str,
        x_ticks: Sequence[float] | None = None,
        y_ticks: Sequence[float] | None = None,
        x_tick_labels: Sequence[str] | None = None,
        grid_x: bool = False,
    ) -> None:
        """Frame, grid, ticks with labels, and axis labels."""
        xt = list(x_ticks) if x_ticks is not None else nice_ticks(*self.x_range)
        yt = list(y_ticks) if y_ticks is not None else nice_ticks(*self.y_range)
        grid = fig.add(Group(stroke=GRID, width=1.0))
        for v in yt:
            y = float(self.sy(v))
            grid.add(Line(self.left, y, self.right, y, stroke=GRID))
        if grid_x:
            for v in xt:
                x = float(self.sx(v))
                grid.add(Line(x, self.top, x, self.bottom, stroke=GRID))
        fig.add(Rect(self.left, self.top, self.width, self.height, stroke="#B8C0CC", width=1.0))
        labels = list(x_tick_labels) if x_tick_labels is not None else [tick_label(v) for v in xt]
        for v, label in zip(xt, labels, strict=True):
            x = float(self.sx(v))
            fig.add(Line(x, self.bottom, x, self.bottom + 4, stroke=MUTED))
            fig.add(Text(x, self.bottom + 15, label, size=10, anchor="middle", fill=MUTED))
        for v in yt:
            y = float(self.sy(v))
            fig.add(Line(self.left - 4, y, self.left, y, stroke=MUTED))
            fig.add(Text(self.left - 7, y + 3.5, tick_label(v), size=10, anchor="end", fill=MUTED))
        fig.add(Text(self.left + self.width / 2, self.bottom + 32, x_label, size=11.5, anchor="middle"))
        fig.add(Text(self.left - 40, self.top + self.height / 2, y_label, size=11.5, anchor="middle", rotate=90))


def legend(
    fig: Figure, x: float, y: float, entries: Sequence[tuple[Shape | None, str]], *, row: float = 16.0
) -> float:
    """Entries (swatch shape drawn at the origin, label) stacked from (x, y); returns the bottom y."""
    for k, (swatch, label) in enumerate(entries):
        cy = y + k * row
        if swatch is not None:
            fig.add(_moved(swatch, x + 7, cy - 4))
        fig.add(Text(x + 20, cy, label, size=10.5))
    return y + len(entries) * row


def _moved(shape: Shape, dx: float, dy: float) -> Shape:
    """A copy of a swatch shape drawn around (0, 0), moved to (dx, dy)."""
    if isinstance(shape, Circle):
        return Circle(shape.cx + dx, shape.cy + dy, shape.r, fill=shape.fill, stroke=shape.stroke, width=shape.width)
    if isinstance(shape, Line):
        return Line(shape.x1 + dx, shape.y1 + dy, shape.x2 + dx, shape.y2 + dy, stroke=shape.stroke,
                    width=shape.width, dash=shape.dash, opacity=shape.opacity)
    if isinstance(shape, Rect):
        return Rect(shape.x + dx, shape.y + dy, shape.w, shape.h, fill=shape.fill, stroke=shape.stroke,
                    width=shape.width, opacity=shape.opacity)
    if isinstance(shape, Polyline):
        return Polyline(np.asarray(shape.points) + np.array([dx, dy]), stroke=shape.stroke, width=shape.width, fill=shape.fill,
                    fill_opacity=shape.fill_opacity, closed=shape.closed, dash=shape.dash)
    if isinstance(shape, Group):
        return Group([_moved(s, dx, dy) for s in shape.items], fill=shape.fill, fill_opacity=shape.fill_opacity,
                     stroke=shape.stroke, width=shape.width)
    return shape
