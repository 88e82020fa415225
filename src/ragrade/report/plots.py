"""The report's plots, drawn by ragrade itself (no optional dependency): each function returns a
:class:`~ragrade.report.svg.Figure`, written as SVG (``fig.to_svg()``, ``fig.save("x.svg")``) or, with
matplotlib installed (extra ``plots``), as PNG (``fig.save("x.png")``).

- :func:`scatter_plot`: per-query scores of two runs against each other (diagonal: ties; above: the
  treatment wins). Queries that fall in the same small cell of the plot are drawn as one mark whose area
  grows with their number, so the plot stays readable and small at any number of queries.
- :func:`difference_plot`: the per-query differences sorted from the largest gain to the largest loss,
  with the mean difference and its confidence interval.
- :func:`curve_plot`: mean metric@k for every run over the cutoffs, with confidence bands
  (data from :func:`metric_at_k`).
- :func:`distribution_plot`: the distribution of per-query values of every run (histogram).
- :func:`hole_rate_plot`: the share of unjudged items in every run's top k, from a table you give.

:func:`write_plots` evaluates, compares and writes all of them as files (``ragrade plot``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError, require
from ragrade.formatting import number, signed
from ragrade.options import PLOT_FORMAT, public
from ragrade.report.prepare import DEFAULT_KS, curve_table, evaluate_for_report, metric_at_k, metric_family
from ragrade.report.svg import (
    INK,
    LOSS,
    MUTED,
    TIE,
    WIN,
    Axes,
    Circle,
    Figure,
    Group,
    Line,
    Polyline,
    Rect,
    Shape,
    Text,
    file_stem,
    legend,
    marker,
    nice_ticks,
    run_style,
    text_width,
    tick_label,
)

SCATTER_CELLS = 75
"""The scatter plot's side is split into this many cells: queries in one cell share one mark."""
BAR_LIMIT = 400
"""Up to this many queries the difference plot draws one bar per query; above, the sorted curve."""

_TIE_TOL = 1e-12


def _title(fig: Figure, text: str, x: float = 12) -> None:
    """The plot's title, whole: the figure widens to hold a long one (long run names are never cut)."""
    fig.width = max(fig.width, x + text_width(text, 13) + 12)
    fig.add(Text(x, 22, text, size=13, weight="bold"))


def _queries(n: int) -> str:
    """``1 query``, ``2 queries``."""
    return f"{n} {'query' if n == 1 else 'queries'}"


#: Share of the data range left free on each side of a plot area, so that marks drawn at the extreme
#: values (a score of 0 or 1, a hole rate of 0) sit wholly inside the frame.
EDGE_PAD = 0.04


def _clip_label(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pair_arrays(control: Any, treatment: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Aligned float arrays (Series are joined on their index); rows with a NaN dropped; and the kept
    positions when the inputs were plain arrays."""
    if isinstance(control, pd.Series) and isinstance(treatment, pd.Series):
        control, treatment = control.align(treatment, join="inner")
    a = np.asarray(control, dtype=np.float64)
    b = np.asarray(treatment, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError("control and treatment must have one score per query each", value=(a.shape, b.shape))
    ok = ~(np.isnan(a) | np.isnan(b))
    if ok.all():
        return a, b, None
    return a[ok], b[ok], np.flatnonzero(ok)


def _keys(keys: Sequence[int] | np.ndarray | None, n: int, kept: np.ndarray | None) -> np.ndarray | None:
    if keys is None:
        return None
    arr = np.asarray(keys, dtype=np.int64)
    if kept is not None and len(arr) != n:
        arr = arr[kept]
    if len(arr) != n:
        raise InputError("keys must give one number per query", value=len(arr))
    return arr


def _value_range(*arrays: np.ndarray) -> tuple[float, float]:
    """[0, 1] when every value lies in it (most metrics), else a padded range of the data."""
    vals = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays]) if arrays else np.zeros(0)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return 0.0, 1.0
    lo, hi = float(vals.min()), float(vals.max())
    if lo >= -1e-9 and hi <= 1.0 + 1e-9:  # (rounding can put a perfect score a hair above 1)
        return 0.0, 1.0
    lo = min(lo, 0.0)
    ticks = nice_ticks(lo, hi)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


# ----------------------------------------------------------------------------------------------- scatter
def scatter_plot(
    control: Any,
    treatment: Any,
    *,
    metric: str = "score",
    control_name: str = "control",
    treatment_name: str = "treatment",
    keys: Sequence[int] | np.ndarray | None = None,
) -> Figure:
    """Per-query ``treatment`` (y) against ``control`` (x) scores of one metric.

    The diagonal marks ties; queries above it are wins of the treatment (blue), below it losses
    (vermillion). The plot's side is split into :data:`SCATTER_CELLS` cells; the queries of one outcome
    that fall in the same cell are drawn as one mark at their mean position, whose area grows with their
    number (so 3,000 queries scoring 1.0 in both runs are one big mark, not 3,000 hidden ones). ``keys``
    (one int per query) are written on each mark for the report's hover and click.
    """
    a, b, kept = _pair_arrays(control, treatment)
    key_arr = _keys(keys, len(a), kept)
    n = len(a)
    lo, hi = _value_range(a, b)
    size = 300.0
    fig = Figure(
        width=64 + size + 24,
        height=40 + size + 44 + 4 * 16 + 8,
        title=f"{metric} per query: {treatment_name} against {control_name}",
        description="",
        name=f"{metric}-scatter-{control_name}-vs-{treatment_name}",
    )
    pad = EDGE_PAD * (hi - lo)
    ax = Axes(64, 40, size, size, (lo - pad, hi + pad), (lo - pad, hi + pad))
    _title(fig, fig.title)
    ticks = nice_ticks(lo, hi)
    ax.draw(fig, x_label=f"{_clip_label(control_name, 36)} ({metric})", y_label=f"{_clip_label(treatment_name, 36)} ({metric})",
            grid_x=True, x_ticks=ticks, y_ticks=ticks)
    fig.add(Line(ax.left, ax.bottom, ax.right, ax.top, stroke=TIE, width=1.0, dash="4 3"))
    fig.add(Text(ax.left + 6, ax.top + 14, f"{_clip_label(treatment_name)} better", size=10, fill=WIN))
    fig.add(Text(ax.right - 6, ax.bottom - 8, f"{_clip_label(control_name)} better", size=10, fill=LOSS, anchor="end"))

    d = b - a
    outcome = np.where(d > _TIE_TOL, 0, np.where(d < -_TIE_TOL, 2, 1))
    counts = [int((outcome == k).sum()) for k in range(3)]
    if n:
        cell = (hi - lo) / SCATTER_CELLS or 1.0
        cx = np.clip(((a - lo) / cell).astype(np.int64), 0, SCATTER_CELLS - 1)
        cy = np.clip(((b - lo) / cell).astype(np.int64), 0, SCATTER_CELLS - 1)
        code = (outcome * SCATTER_CELLS + cx) * SCATTER_CELLS + cy
        order = np.argsort(code, kind="stable")
        uniq, start, sizes = np.unique(code[order], return_index=True, return_counts=True)
        mean_x = np.add.reduceat(a[order], start) / sizes
        mean_y = np.add.reduceat(b[order], start) / sizes
        px, py = ax.sx(mean_x), ax.sy(mean_y)
        radius = np.minimum(2.3 + 1.25 * np.sqrt(sizes - 1.0), 11.0)
        cls = uniq // (SCATTER_CELLS * SCATTER_CELLS)
        members = key_arr[order] if key_arr is not None else order
        for k, colour in enumerate((WIN, TIE, LOSS)):
            group = fig.add(Group(fill=colour, fill_opacity=0.62, stroke="#FFFFFF", width=0.5, attrs={"class": "pts"}))
            idx = np.flatnonzero(cls == k)
            for i in idx[np.argsort(-sizes[idx], kind="stable")].tolist():  # big marks below small ones
                s = int(start[i])
                ids = members[s : s + int(sizes[i])]
                group.add(Circle(float(px[i]), float(py[i]), float(radius[i]),
                                 attrs={"data-q": " ".join(map(str, ids.tolist()))}))
    y0 = ax.bottom + 52
    entries = [
        (Circle(0, 0, 4, fill=WIN), f"{_clip_label(treatment_name)} better: {_queries(counts[0])}"),
        (Circle(0, 0, 4, fill=LOSS), f"{_clip_label(control_name)} better: {_queries(counts[2])}"),
        (Circle(0, 0, 4, fill=TIE), f"tie: {_queries(counts[1])}"),
        (Circle(0, 0, 6.5, fill="none", stroke=MUTED), "mark area grows with the queries it holds"),
    ]
    legend(fig, ax.left, y0, entries)
    fig.description = (
        f"Scatter plot of {_queries(n)}: {metric} of {control_name} on the horizontal axis, of {treatment_name} "
        f"on the vertical axis. {_queries(counts[0])} {'lies' if counts[0] == 1 else 'lie'} above the diagonal ({treatment_name} better), "
        f"{counts[2]} below ({control_name} better) and {counts[1]} on it (tie)."
    )
    return fig


# -------------------------------------------------------------------------------------------- differences
def difference_plot(
    control: Any,
    treatment: Any,
    *,
    metric: str = "score",
    control_name: str = "control",
    treatment_name: str = "treatment",
    keys: Sequence[int] | np.ndarray | None = None,
    ci: tuple[float, float] | None = None,
    confidence: float = 0.95,
) -> Figure:
    """Per-query differences ``treatment - control`` sorted from the largest gain to the largest loss.

    Gains are blue, losses vermillion, the dashed line is the mean difference and the grey band its
    confidence interval ``ci`` (e.g. ``Comparison.pair(...)[["delta_ci_low", "delta_ci_high"]]``). Up to
    :data:`BAR_LIMIT` queries every query is a bar; above, the sorted curve is drawn at pixel resolution
    (the highest and lowest difference of the queries in every pixel column), so the picture keeps its
    shape and its size whatever the number of queries. Equal differences keep the input order.
    """
    a, b, kept = _pair_arrays(control, treatment)
    key_arr = _keys(keys, len(a), kept)
    d = b - a
    n = d.size
    order = np.argsort(-d, kind="stable")
    sd = d[order]
    wins, losses = int((d > _TIE_TOL).sum()), int((d < -_TIE_TOL).sum())
    mean = float(d.mean()) if n else 0.0
    lim = _symmetric_limit(d, mean, ci)
    width, height = 360.0, 220.0
    fig = Figure(
        width=72 + width + 24,
        height=40 + height + 44 + 3 * 16 + 8,
        title=f"{metric}: {treatment_name} − {control_name}, queries sorted by difference",
        description="",
        name=f"{metric}-difference-{control_name}-vs-{treatment_name}",
    )
    ax = Axes(72, 40, width, height, (0, max(n, 1)), (-lim, lim))
    _title(fig, fig.title)
    # whole queries only: with 2 queries the ticks are 0, 1, 2 (never 0.5, 1.5)
    x_ticks = [t for t in nice_ticks(0, max(n, 1)) if t <= n and float(t).is_integer()]
    if len(x_ticks) < 2:
        x_ticks = [0.0, float(max(n, 1))]
    ax.draw(fig, x_label=f"queries, sorted by Δ ({n})", y_label=f"Δ {metric}", x_ticks=x_ticks,
            y_ticks=nice_ticks(-lim, lim))
    zero = float(ax.sy(0.0))
    if ci is not None and all(np.isfinite(ci)):
        y1, y2 = float(ax.sy(max(ci))), float(ax.sy(min(ci)))
        fig.add(Rect(ax.left, y1, width, max(y2 - y1, 1.0), fill="#000000", opacity=0.14))
    if n and n <= BAR_LIMIT:
        _difference_bars(fig, ax, sd, zero)
    elif n:
        _difference_curve(fig, ax, sd, zero)
    fig.add(Line(ax.left, zero, ax.right, zero, stroke=INK, width=0.8))
    fig.add(Line(ax.left, float(ax.sy(mean)), ax.right, float(ax.sy(mean)), stroke=INK, width=1.2, dash="5 3"))
    if key_arr is not None:
        members = key_arr[order]
        fig.add(Rect(ax.left, ax.top, width, height, attrs={
            "class": "hit", "pointer-events": "all", "data-order": " ".join(map(str, members.tolist())),
        }))
    _difference_legend(fig, ax, metric, control_name, treatment_name, n, wins, losses, mean, ci, confidence)
    return fig


def _symmetric_limit(d: np.ndarray, mean: float, ci: tuple[float, float] | None) -> float:
    """The half-height of the y axis: the largest |difference|, |mean| or finite CI bound, up to the next tick."""
    extreme = float(np.abs(d).max()) if d.size else 1.0
    lim = max(extreme, abs(mean), *(abs(v) for v in (ci or ()) if np.isfinite(v)), 1e-9)
    ticks = nice_ticks(-lim, lim)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else lim
    return math.ceil(lim / step - 1e-9) * step


def _difference_bars(fig: Figure, ax: Axes, sd: np.ndarray, zero: float) -> None:
    """One bar per query of the sorted differences ``sd``: gains blue, losses vermillion, ties not drawn."""
    bw = ax.width / sd.size
    for colour, sel in ((WIN, sd > _TIE_TOL), (LOSS, sd < -_TIE_TOL)):
        group = fig.add(Group(fill=colour))
        for i in np.flatnonzero(sel).tolist():
            y = float(ax.sy(sd[i]))
            group.add(Rect(ax.left + i * bw, min(y, zero), max(bw - (0.3 if bw > 2 else 0), 0.4), max(abs(zero - y), 0.6),
                           fill=None))


def _difference_curve(fig: Figure, ax: Axes, sd: np.ndarray, zero: float) -> None:
    """The sorted differences ``sd`` at pixel resolution: per pixel column, the highest gain and the lowest
    loss of its queries, as two filled areas."""
    n, width = sd.size, ax.width
    cols = int(width)
    edges = np.linspace(0, n, cols + 1).astype(np.int64)
    first, last = edges[:-1], np.maximum(edges[1:] - 1, edges[:-1])
    top, bottom = sd[first], sd[last]  # sorted descending: the first is the highest of its column
    xs = ax.left + np.arange(cols + 1) * (width / cols)
    for colour, values in ((WIN, np.maximum(top, 0)), (LOSS, np.minimum(bottom, 0))):
        if not (np.abs(values) > _TIE_TOL).any():
            continue
        ys = ax.sy(values)
        upper = np.column_stack([np.repeat(xs, 2)[1:-1], np.repeat(ys, 2)])
        pts = np.vstack([[xs[0], zero], upper, [xs[-1], zero]])
        fig.add(Polyline(pts, stroke=None, fill=colour, closed=True))


def _difference_legend(fig: Figure, ax: Axes, metric: str, control_name: str, treatment_name: str, n: int,
                       wins: int, losses: int, mean: float, ci: tuple[float, float] | None, confidence: float) -> None:
    """The legend under the plot (mean difference and its CI, gains, losses and ties) and the text description."""
    level = f"{confidence * 100:.4g}%"
    ci_text = f", {level} CI [{signed(ci[0], 4)}, {signed(ci[1], 4)}]" if ci is not None else ""
    entries: list[tuple[Shape | None, str]] = [
        (Line(-6, 0, 6, 0, stroke=INK, width=1.2, dash="5 3"), f"mean Δ = {signed(mean, 4)}{ci_text}"),
        (Rect(-6, -5, 12, 10, fill=WIN), f"{_clip_label(treatment_name)} better: {_queries(wins)}"),
        (Rect(-6, -5, 12, 10, fill=LOSS), f"{_clip_label(control_name)} better: {_queries(losses)} "
                                          f"({n - wins - losses} {'tie' if n - wins - losses == 1 else 'ties'})"),
    ]
    legend(fig, ax.left, ax.bottom + 52, entries)
    fig.description = (
        f"The {n} per-query differences of {metric}, {treatment_name} minus {control_name}, sorted from the "
        f"largest gain to the largest loss: {_queries(wins)} gain, {losses} lose, {n - wins - losses} tie. "
        f"Mean difference {signed(mean, 4)}{ci_text}."
    )


# ------------------------------------------------------------------------------------------- metric@k curves
def _lines_plot(
    table: pd.DataFrame,
    *,
    value: str,
    title: str,
    y_label: str,
    name: str,
    description: str,
    percent: bool = False,
    bands: bool = True,
    tip: str,
) -> Figure:
    runs = list(dict.fromkeys(table["run"].astype(str)))
    ks = sorted({int(k) for k in table["k"]})
    if not runs or not ks:
        raise InputError("nothing to plot: the table has no rows")
    scale = 100.0 if percent else 1.0
    vals = table[value].to_numpy(dtype=float) * scale
    tops = [vals]
    if bands and "ci_high" in table:
        tops.append(table["ci_high"].to_numpy(dtype=float) * scale)
    top = max(float(np.nanmax(np.concatenate(tops))) if np.isfinite(np.concatenate(tops)).any() else 1.0, 1e-9)
    if percent:
        # every rate 0 (nothing unjudged): an axis from 0 to 1%, not to 1e-9%
        y_hi = min(100.0, nice_ticks(0, max(top, 1.0) * 1.05)[-1] if top < 100 else 100.0)
    else:
        y_hi = 1.0 if top <= 1.0 else nice_ticks(0, top * 1.05)[-1]
    y_ticks = nice_ticks(0, y_hi)
    if y_ticks[-1] < top:
        y_hi = y_ticks[-1] + (y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else top)
        y_ticks = nice_ticks(0, y_hi)
    log_x = ks[0] > 0 and ks[-1] / ks[0] >= 10
    legend_w = min(190.0, max(text_width(_clip_label(r, 22), 10.5) for r in runs) + 34)
    width, height = 300.0, 220.0
    fig = Figure(width=64 + width + 18 + legend_w, height=40 + height + 48, title=title, description=description,
                 name=name)
    pad = 0.06
    if log_x:
        lo_k, hi_k = math.log10(ks[0]), math.log10(ks[-1])
        span = hi_k - lo_k
        x_range = (10 ** (lo_k - pad * span), 10 ** (hi_k + pad * span))
    else:
        span = (ks[-1] - ks[0]) or 1
        x_range = (ks[0] - pad * span, ks[-1] + pad * span)
    pad = EDGE_PAD * y_hi
    ax = Axes(64, 40, width, height, x_range, (-pad, y_hi + pad), log_x=log_x)
    _title(fig, title)
    ax.draw(fig, x_label="cutoff k", y_label=y_label, x_ticks=ks, y_ticks=y_ticks,
            x_tick_labels=[str(k) for k in ks])
    entries = []
    for i, run in enumerate(runs):
        colour, shape, dash = run_style(i)
        sub = table[table["run"].astype(str) == run].sort_values("k")
        k_arr = sub["k"].to_numpy(dtype=float)
        y = sub[value].to_numpy(dtype=float) * scale
        ok = np.isfinite(y)
        xs, ys = ax.sx(k_arr[ok]), ax.sy(y[ok])
        if bands and "ci_low" in sub and ok.sum() >= 1:
            lo = ax.sy(sub["ci_low"].to_numpy(dtype=float)[ok] * scale)
            hi = ax.sy(sub["ci_high"].to_numpy(dtype=float)[ok] * scale)
            if ok.sum() >= 2:
                band = np.vstack([np.column_stack([xs, hi]), np.column_stack([xs, lo])[::-1]])
                fig.add(Polyline(band, stroke=None, fill=colour, fill_opacity=0.16, closed=True))
            else:
                fig.add(Line(float(xs[0]), float(lo[0]), float(xs[0]), float(hi[0]), stroke=colour, width=2, opacity=0.4))
        if ok.sum() >= 2:
            fig.add(Polyline(np.column_stack([xs, ys]), stroke=colour, width=1.8, dash=dash))
        for row, px, py in zip(sub[ok].to_dict("records"), xs, ys, strict=True):
            m = marker(shape, float(px), float(py), 7.0, colour)
            text = tip.format(run=run, k=int(row["k"]), value=number(row[value] * scale, 4 if not percent else 1),
                              lo=number(row.get("ci_low", math.nan) * scale, 4),
                              hi=number(row.get("ci_high", math.nan) * scale, 4),
                              n=int(row["n"]) if "n" in row and pd.notna(row["n"]) else "")
            fig.add(Group([m], attrs={"class": "tip", "data-tip": text}))
        sw = Group([Line(-8, 0, 8, 0, stroke=colour, width=1.8, dash=dash), marker(shape, 0, 0, 7.0, colour)])
        entries.append((sw, _clip_label(run, 22)))
    legend(fig, ax.right + 18, ax.top + 10, entries)
    return fig


def curve_plot(table: pd.DataFrame, metric: str | None = None) -> Figure:
    """Mean metric@k of every run against the cutoff k, with confidence bands (``table`` from
    :func:`metric_at_k`: columns ``run``, ``k``, ``mean``, ``ci_low``, ``ci_high``, ``n``). The k axis is
    logarithmic when the cutoffs span a factor of 10 or more."""
    base = metric or str(table.attrs.get("metric", "metric"))
    level = float(table.attrs.get("confidence", 0.95))
    runs = list(dict.fromkeys(table["run"].astype(str)))
    ks = sorted({int(k) for k in table["k"]})
    desc_parts = []
    for run in runs:
        sub = table[table["run"].astype(str) == run].sort_values("k")
        desc_parts.append(f"{run}: " + ", ".join(f"k={int(k)} {number(v, 3)}" for k, v in zip(sub["k"], sub["mean"], strict=True)))
    return _lines_plot(
        table,
        value="mean",
        title=f"{base}@k for every run, with {level * 100:.4g}% confidence bands",
        y_label=f"mean {base}@k",
        name=f"{base}-at-k",
        description=f"Mean {base} at cutoffs {', '.join(map(str, ks))}. " + "; ".join(desc_parts) + ".",
        tip=f"{base}@{{k}} · {{run}}: {{value}} [{{lo}}, {{hi}}], {{n}} queries",
    )


# -------------------------------------------------------------------------------------------- distribution
def distribution_plot(scores: Mapping[str, Any], metric: str = "score", *, bins: int = 20) -> Figure:
    """Histogram of the per-query values of every run: the share of queries in each of ``bins`` equal
    bins, runs side by side (as outlines beyond four runs); a triangle under the axis marks each run's
    mean. NaN values (queries a metric does not count) are left out."""
    if not scores:
        raise InputError("no runs to plot")
    names = [str(k) for k in scores]
    values = [np.asarray(v, dtype=np.float64) for v in scores.values()]
    values = [v[~np.isnan(v)] for v in values]
    lo, hi = _value_range(*values)
    edges = np.linspace(lo, hi, bins + 1)
    width, height = 360.0, 200.0
    legend_h = 16 * len(names)
    fig = Figure(width=64 + width + 24, height=46 + height + 58 + legend_h + 6,
                 title=f"Distribution of per-query {metric}", description="", name=f"{metric}-distribution")
    shares, counts = [], []
    for v in values:
        c = np.histogram(np.clip(v, lo, hi), bins=edges)[0] if v.size else np.zeros(bins, dtype=np.int64)
        counts.append(c)
        shares.append(c / max(v.size, 1) * 100.0)
    top = max(float(np.max(s)) if len(s) else 0.0 for s in shares)
    y_ticks = nice_ticks(0, max(top, 1.0))
    if y_ticks[-1] < top:
        y_ticks.append(y_ticks[-1] + (y_ticks[1] - y_ticks[0]))
    ax = Axes(64, 46, width, height, (lo, hi), (0.0, y_ticks[-1]))
    _title(fig, fig.title)
    ax.draw(fig, x_label=metric, y_label="% of queries", y_ticks=y_ticks)
    k = len(names)
    bin_px = width / bins
    side = k <= 4
    for i, share in enumerate(shares):
        colour, _, dash = run_style(i)
        if side:
            bw = (bin_px - 2) / k
            group = fig.add(Group(fill=colour))
            for j in range(bins):
                if share[j] <= 0:
                    continue
                y = float(ax.sy(share[j]))
                group.add(Rect(ax.left + j * bin_px + 1 + i * bw, y, max(bw - 0.5, 0.5), ax.bottom - y, fill=None))
        else:
            xs = np.repeat(ax.sx(edges), 2)[1:-1]
            ys = np.repeat(ax.sy(share), 2)
            fig.add(Polyline(np.column_stack([xs, ys]), stroke=colour, width=1.6, dash=dash))
        if values[i].size:
            mx = float(ax.sx(values[i].mean()))
            fig.add(marker("triangle-down", mx, ax.top - 6, 9.0, colour, stroke=INK))
    for j in range(bins):  # hover targets, one per bin
        parts = [f"{name} {number(share[j], 1)}% ({int(c[j])})"
                 for name, share, c in zip(names, shares, counts, strict=True)]
        tip = f"{metric} in [{number(edges[j], 3)}, {number(edges[j + 1], 3)}{']' if j == bins - 1 else ')'}: " + ", ".join(parts)
        fig.add(Rect(ax.left + j * bin_px, ax.top, bin_px, height, attrs={"class": "tip", "pointer-events": "all", "data-tip": tip}))
    entries = []
    for i, name in enumerate(names):
        colour = run_style(i)[0]
        mean = float(values[i].mean()) if values[i].size else math.nan
        sw: Any = Rect(-6, -5, 12, 10, fill=colour) if side else Line(-8, 0, 8, 0, stroke=colour, width=1.6)
        entries.append((sw, f"{_clip_label(name, 30)}: mean {number(mean, 4)} (▼), {_queries(values[i].size)}"))
    legend(fig, ax.left, ax.bottom + 52, entries)
    fig.description = f"Histogram of per-query {metric} in {bins} bins from {tick_label(lo)} to {tick_label(hi)}. " + "; ".join(
        f"{name}: mean {number(float(v.mean()) if v.size else math.nan, 4)} over {_queries(v.size)}"
        for name, v in zip(names, values, strict=True)
    ) + "."
    return fig


# --------------------------------------------------------------------------------------------- hole rate
def hole_rate_table(hole_rates: Any) -> pd.DataFrame:
    """Normalise a hole-rate table to columns ``run``, ``k``, ``hole_rate`` (a share in [0, 1]).

    Accepted: a long DataFrame with those columns; a wide DataFrame (index = cutoff k, one column per
    run); or a mapping ``{run: {k: rate}}``. A rate outside [0, 1] is an :class:`InputError`.
    """
    if isinstance(hole_rates, pd.DataFrame) and {"run", "k", "hole_rate"} <= set(hole_rates.columns):
        table = hole_rates[["run", "k", "hole_rate"]].copy()
    elif isinstance(hole_rates, pd.DataFrame):
        wide = hole_rates.copy()
        wide.index = wide.index.rename("k")
        table = wide.reset_index().melt(id_vars="k", var_name="run", value_name="hole_rate")
    elif isinstance(hole_rates, Mapping):
        table = pd.DataFrame(
            [{"run": str(run), "k": k, "hole_rate": v} for run, by_k in hole_rates.items() for k, v in dict(by_k).items()]
        )
    else:
        raise InputError("hole rates must be a DataFrame or a mapping {run: {k: rate}}", value=type(hole_rates).__name__)
    if table.empty:
        raise InputError("the hole-rate table is empty")
    table["run"] = table["run"].astype(str)
    try:
        table["k"] = table["k"].astype(np.int64)
        table["hole_rate"] = table["hole_rate"].astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"hole rates need integer cutoffs and numeric rates ({exc})") from None
    bad = ~table["hole_rate"].between(0.0, 1.0)
    if bad.any():
        row = table[bad].iloc[0]
        raise InputError(f"a hole rate must be a share between 0 and 1 (run {row['run']!r}, k={row['k']})",
                         value=row["hole_rate"])
    if (table["k"] < 1).any():
        raise InputError("cutoffs must be positive integers", value=table["k"].min())
    return table.sort_values(["run", "k"], kind="stable").reset_index(drop=True)


def hole_rate_plot(hole_rates: Any) -> Figure:
    """The share of unjudged items ("holes") in the top k of every run, at each cutoff, as percentages.

    ``hole_rates`` is a table of rates per run and cutoff (see :func:`hole_rate_table` for the shapes it
    may take), e.g. from the engine's hole-rate measure. High hole rates mean the metrics of that run rest
    on unjudged items counted as non-relevant.
    """
    table = hole_rate_table(hole_rates).rename(columns={"hole_rate": "rate"})
    table["n"] = np.nan
    runs = list(dict.fromkeys(table["run"]))
    worst = table.to_dict("records")[int(np.argmax(table["rate"].to_numpy()))]
    return _lines_plot(
        table,
        value="rate",
        title="Unjudged items in the top k (hole rate)",
        y_label="unjudged in top k (%)",
        name="hole-rate",
        description=(
            f"Share of unjudged items among the top k of {len(runs)} runs at cutoffs "
            f"{', '.join(map(str, sorted(set(table['k']))))}; the highest is {number(worst['rate'] * 100, 1)}% "
            f"({worst['run']} at k={int(worst['k'])})."
        ),
        percent=True,
        bands=False,
        tip="{run}, top {k}: {value}% unjudged",
    )


# ------------------------------------------------------------------------------------------------ files
def comparison_figures(
    cmp: Any,
    *,
    curves: Mapping[str, pd.DataFrame] | None = None,
    hole_rates: Any = None,
    keys: Mapping[str, np.ndarray] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> list[tuple[str, Any, Figure]]:
    """Every plot of a comparison, as ``(kind, detail, figure)``: per metric its curves (when ``curves``
    has the metric's family), distribution, and for each pair of runs the scatter and difference plots;
    then the hole-rate plot when ``hole_rates`` is given. ``keys``: per run, the report's query number of
    every row of ``cmp.scores[run]`` (for hover and click); ``pairs``: which pairs to draw (default all
    pairs compared)."""
    out: list[tuple[str, Any, Figure]] = []
    pair_list = list(pairs) if pairs is not None else list(dict.fromkeys((a, b) for _, a, b in cmp.pairs.index))
    drawn_families: set[str] = set()
    for metric in cmp.metrics:
        family = metric_family(metric)
        if curves and family is not None and family in curves and family not in drawn_families:
            drawn_families.add(family)
            out.append(("curves", family, curve_plot(curves[family], family)))
        out.append(("distribution", metric, distribution_plot({r: cmp.scores[r][metric] for r in cmp.runs}, metric)))
        for a, b in pair_list:
            xa, xb = cmp.scores[a][metric], cmp.scores[b][metric]
            k = None if keys is None else keys[a]
            row = cmp.pair(metric, a, b)
            out.append(("scatter", (metric, a, b), scatter_plot(xa, xb, metric=metric, control_name=a,
                                                                 treatment_name=b, keys=k)))
            out.append(("difference", (metric, a, b), difference_plot(
                xa, xb, metric=metric, control_name=a, treatment_name=b, keys=k,
                ci=(float(row["delta_ci_low"]), float(row["delta_ci_high"])), confidence=cmp.confidence,
            )))
    if hole_rates is not None:
        out.append(("hole_rate", None, hole_rate_plot(hole_rates)))
    return out


@public(format=PLOT_FORMAT)
def write_plots(
    directory: str | os.PathLike[str],
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Sequence[str] | str,
    *,
    format: str = "svg",
    ks: Sequence[int] | None = DEFAULT_KS,
    hole_rates: Any = None,
    scale: float = 2.0,
    **options: Any,
) -> list[Path]:
    """Evaluate and compare ``runs`` (as :func:`ragrade.compare`, whose options ``options`` may hold:
    ``baseline``, ``test``, ``alpha``, policies, ...) and write every plot of :func:`comparison_figures`
    to ``directory`` as ``.svg`` or ``.png`` files (PNG needs matplotlib). ``ks``: cutoffs of the
    metric@k curves (``None``: no curves). Returns the paths written."""
    fmt = str(format).lower().lstrip(".")
    if fmt not in ("svg", "png"):
        raise InputError("format must be svg or png", value=format)
    if fmt == "png":
        require("matplotlib", extra="plots", purpose="PNG plots")
    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    prepared = evaluate_for_report(qrels, runs, metrics, ks=ks, **options)
    written = []
    seen: set[str] = set()
    holes = hole_rates if hole_rates is not None else (prepared.hole_rates or None)
    for _, _, fig in comparison_figures(prepared.comparison, curves=prepared.curves, hole_rates=holes):
        stem = file_stem(fig.name)
        name, n = stem, 2
        while name in seen:
            name, n = f"{stem}-{n}", n + 1
        seen.add(name)
        written.append(fig.save(out_dir / f"{name}.{fmt}", scale=scale))
    return written


__all__ = [
    "BAR_LIMIT",
    "DEFAULT_KS",
    "SCATTER_CELLS",
    "comparison_figures",
    "curve_plot",
    "curve_table",
    "difference_plot",
    "distribution_plot",
    "hole_rate_plot",
    "hole_rate_table",
    "metric_at_k",
    "scatter_plot",
    "write_plots",
]
