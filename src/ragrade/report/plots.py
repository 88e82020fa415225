"""Plots of a comparison (extra ``plots``: matplotlib, imported lazily).

Every function returns a ``matplotlib.figure.Figure`` built without ``pyplot`` (no global state, no
display backend); save it with :func:`save_figure` (PNG or SVG by extension) or turn it into text with
:func:`figure_to_svg` / bytes with :func:`figure_to_png`.

- :func:`plot_metric_curves`: metric@k curves for several runs (data from :func:`metric_at_k`);
- :func:`plot_distributions`: per-query score distributions of several runs (box plots with means);
- :func:`plot_delta`: the sorted per-query differences between two runs (wins above 0, losses below).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError, require

_WIN = "#2e7d32"
_LOSS = "#c62828"
_MAX_POINTS = 400  # jittered points drawn per box (a random, fixed-seed sample beyond that)
_MAX_STEPS = 1500  # the sorted delta curve is drawn through at most this many evenly spaced queries


def _figure(width: float, height: float) -> Any:
    require("matplotlib", extra="plots", purpose="Plotting")
    figure_mod = require("matplotlib.figure", package="matplotlib", extra="plots", purpose="Plotting")
    fig = figure_mod.Figure(figsize=(width, height), dpi=100, layout="constrained")
    return fig


def _rc() -> Any:
    mpl = require("matplotlib", extra="plots", purpose="Plotting")
    # Deterministic, self-contained SVG: text as paths (no font needed to view it), fixed ids, no date.
    return mpl.rc_context({"svg.fonttype": "path", "svg.hashsalt": "ragrade", "font.size": 9})


def metric_at_k(
    qrels: Any,
    runs: Mapping[str, Any],
    metric: str,
    ks: Sequence[int] = (1, 3, 5, 10, 20, 50, 100),
    **policies: Any,
) -> pd.DataFrame:
    """Mean of ``metric@k`` for every run and cutoff: a DataFrame (index = k, columns = runs).

    ``metric`` is a metric name with or without a cutoff (``"ndcg"`` or ``"ndcg@10"``: the cutoff is
    replaced by each ``k``). Uses :class:`ragrade.Evaluator` with ``policies``.
    """
    from ragrade.engine.core import Evaluator

    base = re.sub(r"@\d+$", "", str(metric))
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise InputError("cutoffs must be positive integers", value=ks)
    names = [f"{base}@{k}" for k in ks]
    data = {}
    evaluator = Evaluator(qrels, names, **policies)
    for run_name, run in runs.items():
        means = evaluator.evaluate(run).means
        data[str(run_name)] = [float(means[n]) for n in names]
    frame = pd.DataFrame(data, index=pd.Index(ks, name="k"))
    frame.attrs["metric"] = base
    return frame


def plot_metric_curves(curves: pd.DataFrame, metric: str | None = None, *, log_x: bool = True) -> Any:
    """Line plot of ``curves`` (index = cutoff k, one column per run), e.g. from :func:`metric_at_k`."""
    if curves.empty:
        raise InputError("no metric@k values to plot")
    metric = metric or curves.attrs.get("metric", "metric")
    with _rc():
        fig = _figure(5.5, 3.4)
        ax = fig.add_subplot()
        ks = np.asarray(curves.index, dtype=float)
        for run in curves.columns:
            ax.plot(ks, curves[run].to_numpy(dtype=float), marker="o", markersize=3, label=str(run))
        if log_x and ks.min() > 0 and ks.max() / ks.min() >= 10:
            ax.set_xscale("log")
        ax.set_xticks(ks)
        ax.set_xticklabels([str(int(k)) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("cutoff k")
        ax.set_ylabel(f"mean {metric}@k")
        ax.set_title(f"{metric}@k")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def plot_distributions(scores: Mapping[str, Sequence[float] | pd.Series], metric: str = "score") -> Any:
    """Box plots of per-query scores, one per run, with the mean as a diamond and n in the label."""
    if not scores:
        raise InputError("no runs to plot")
    names = [str(n) for n in scores]
    values = [np.asarray(v, dtype=float) for v in scores.values()]
    values = [v[~np.isnan(v)] for v in values]
    with _rc():
        fig = _figure(max(3.5, 1.1 * len(names) + 1.5), 3.4)
        ax = fig.add_subplot()
        ax.boxplot(values, showfliers=False, widths=0.5, medianprops={"color": "#444"})
        rng = np.random.default_rng(0)  # jitter only; fixed so the picture is reproducible
        for i, v in enumerate(values, start=1):
            shown = v if v.size <= _MAX_POINTS else v[rng.choice(v.size, _MAX_POINTS, replace=False)]
            ax.scatter(i + rng.uniform(-0.18, 0.18, shown.size), shown, s=3, alpha=0.25, linewidths=0)
            if v.size:
                ax.scatter([i], [v.mean()], marker="D", color="black", s=18, zorder=3)
        ax.set_xticks(range(1, len(names) + 1))
        ax.set_xticklabels([f"{n}\n(n={v.size})" for n, v in zip(names, values, strict=True)], fontsize=8)
        ax.set_ylabel(metric)
        ax.set_title(f"per-query {metric} (◆ = mean)")
        ax.grid(axis="y", alpha=0.3)
    return fig


def plot_delta(
    control: Sequence[float] | pd.Series,
    treatment: Sequence[float] | pd.Series,
    *,
    control_name: str = "control",
    treatment_name: str = "treatment",
    metric: str = "score",
) -> Any:
    """Sorted per-query differences ``treatment - control``: wins (green, above 0) and losses (red).

    Drawn as filled areas rather than one bar per query, so the figure stays small for 10,000 queries.
    Series are aligned on their index; arrays must have equal length.
    """
    if isinstance(control, pd.Series) and isinstance(treatment, pd.Series):
        control, treatment = control.align(treatment, join="inner")
    a = np.asarray(control, dtype=float)
    b = np.asarray(treatment, dtype=float)
    if a.shape != b.shape:
        raise InputError("control and treatment must have one score per query each", value=(a.shape, b.shape))
    d = b - a
    d = np.sort(d[~np.isnan(d)])[::-1]
    n = d.size
    wins, losses = int((d > 1e-12).sum()), int((d < -1e-12).sum())
    with _rc():
        fig = _figure(6.0, 3.2)
        ax = fig.add_subplot()
        x = np.arange(n)
        y = d
        if n > _MAX_STEPS:  # a sorted curve: evenly spaced samples keep its shape and keep the file small
            x = np.unique(
                np.concatenate(
                    [
                        np.linspace(0, n - 1, _MAX_STEPS).round().astype(int),
                        [wins - 1, wins, n - losses - 1, n - losses],
                    ]
                )
            )
            x = x[(x >= 0) & (x < n)]
            y = d[x]
        ax.fill_between(x, 0, np.where(y > 0, y, 0), step="mid", color=_WIN, alpha=0.8, linewidth=0)
        ax.fill_between(x, 0, np.where(y < 0, y, 0), step="mid", color=_LOSS, alpha=0.8, linewidth=0)
        ax.axhline(0, color="black", linewidth=0.6)
        if n:
            ax.axhline(
                d.mean(), color="#1565c0", linewidth=1, linestyle="--", label=f"mean Δ = {d.mean():+.4f}"
            )
            ax.legend(fontsize=8, loc="upper right")
        ax.set_xlim(-0.5, max(n, 1) - 0.5)
        ax.set_xlabel(f"queries, sorted by Δ ({wins} wins, {n - wins - losses} ties, {losses} losses)")
        ax.set_ylabel(f"Δ {metric}")
        ax.set_title(f"{treatment_name} − {control_name}: per-query {metric}")
        ax.grid(axis="y", alpha=0.3)
    return fig


def figure_to_svg(fig: Any) -> str:
    """The figure as an SVG document (text)."""
    buf = io.BytesIO()
    with _rc():
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue().decode("utf-8")


def figure_to_png(fig: Any, dpi: int = 120) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: int = 120) -> Path:
    """Save ``fig`` as PNG or SVG, chosen by the file extension."""
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix == ".svg":
        out.write_text(figure_to_svg(fig), encoding="utf-8")
    elif suffix == ".png":
        out.write_bytes(figure_to_png(fig, dpi=dpi))
    else:
        raise InputError("figure file must end in .png or .svg", value=str(path))
    return out
