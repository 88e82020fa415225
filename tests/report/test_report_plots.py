"""Plots: PNG and SVG output, bounded size for many queries, install hint without matplotlib."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib", reason="the plots extra (matplotlib) is not installed")

from ragrade.errors import InputError
from ragrade.report import plots


def test_metric_curves_distributions_and_delta_save_as_png_and_svg(tmp_path) -> None:
    curves = pd.DataFrame({"bm25": [0.2, 0.3, 0.35], "dense": [0.3, 0.4, 0.42]}, index=[1, 10, 100])
    rng = np.random.default_rng(0)
    a, b = rng.random(200), rng.random(200)
    figs = {
        "curves": plots.plot_metric_curves(curves, "ndcg"),
        "dist": plots.plot_distributions({"bm25": a, "dense": b}, "ndcg@10"),
        "delta": plots.plot_delta(a, b, control_name="bm25", treatment_name="dense", metric="ndcg@10"),
    }
    for name, fig in figs.items():
        png = plots.save_figure(fig, tmp_path / f"{name}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = plots.save_figure(fig, tmp_path / f"{name}.svg")
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg")
    with pytest.raises(InputError, match=r"\.png or \.svg"):
        plots.save_figure(figs["dist"], tmp_path / "x.jpg")


def test_svg_is_deterministic() -> None:
    a = np.linspace(0, 1, 50)
    one = plots.figure_to_svg(plots.plot_delta(a, a[::-1]))
    two = plots.figure_to_svg(plots.plot_delta(a, a[::-1]))
    assert one == two


def test_delta_plot_for_10k_queries_stays_small() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(10_000), rng.random(10_000)
    svg = plots.figure_to_svg(plots.plot_delta(a, b))
    assert len(svg) < 400_000


def test_delta_aligns_series_on_query_ids() -> None:
    a = pd.Series([0.1, 0.9], index=["q1", "q2"])
    b = pd.Series([0.9, 0.1], index=["q2", "q1"])
    fig = plots.plot_delta(a, b)
    assert "0 wins, 2 ties, 0 losses" in fig.axes[0].get_xlabel()


def test_missing_matplotlib_gives_install_hint(monkeypatch) -> None:
    import ragrade.report.plots as P
    from ragrade.errors import MissingDependencyError

    def fail(module, **kw):
        raise MissingDependencyError("matplotlib", "plots", "Plotting")

    monkeypatch.setattr(P, "require", fail)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragrade\[plots\]'"):
        P.plot_distributions({"a": [0.1]})
