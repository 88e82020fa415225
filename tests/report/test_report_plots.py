"""The plots: drawn by ragrade as SVG (no dependency), PNG through matplotlib, readable at any size."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import ragrade
from ragrade.errors import InputError, MissingDependencyError
from ragrade.report import plots, svg

SVG_NS = "{http://www.w3.org/2000/svg}"


def _parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def _pair(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    return a, np.clip(a + rng.normal(0.05, 0.2, n), 0, 1)


def _all_figures() -> dict[str, svg.Figure]:
    a, b = _pair(200)
    table = pd.DataFrame(
        [{"run": r, "k": k, "mean": m, "ci_low": m - 0.02, "ci_high": m + 0.02, "n": 200}
         for r, base in (("bm25", 0.3), ("dense", 0.4)) for k, m in ((1, base), (10, base + 0.1), (100, base + 0.2))]
    )
    return {
        "scatter": plots.scatter_plot(a, b, metric="ndcg@10", control_name="bm25", treatment_name="dense"),
        "difference": plots.difference_plot(a, b, metric="ndcg@10", control_name="bm25", treatment_name="dense",
                                             ci=(0.01, 0.09)),
        "curves": plots.curve_plot(table, "ndcg"),
        "distribution": plots.distribution_plot({"bm25": a, "dense": b}, "ndcg@10"),
        "hole_rate": plots.hole_rate_plot({"bm25": {1: 0.1, 10: 0.3}, "dense": {1: 0.0, 10: 0.25}}),
    }


@pytest.mark.parametrize("kind", ["scatter", "difference", "curves", "distribution", "hole_rate"])
def test_every_plot_is_valid_accessible_svg(kind: str, tmp_path) -> None:
    fig = _all_figures()[kind]
    root = _parse(fig.to_svg())
    assert root.tag == f"{SVG_NS}svg" and root.get("role") == "img"
    title, desc = root.find(f"{SVG_NS}title"), root.find(f"{SVG_NS}desc")
    assert title is not None and title.text == fig.title
    assert desc is not None and len(desc.text) > 40  # a sentence saying what the plot shows
    assert set(root.get("aria-labelledby").split()) == {title.get("id"), desc.get("id")}
    texts = [t.text for t in root.iter(f"{SVG_NS}text")]
    assert any(t and t.strip() for t in texts)  # axis labels / legend
    # only palette colours (plus greys) are used for data
    colours = set(re.findall(r'(?:fill|stroke)="(#[0-9A-Fa-f]{6})"', fig.to_svg()))
    allowed = {c.upper() for c in (*svg.RUN_COLOURS, svg.WIN, svg.LOSS, svg.TIE, svg.INK, svg.MUTED, svg.GRID,
                                   "#FFFFFF", "#000000", "#B8C0CC")}
    assert {c.upper() for c in colours} <= allowed
    path = fig.save(tmp_path / f"{kind}.svg")
    assert _parse(path.read_text(encoding="utf-8")).tag == f"{SVG_NS}svg"
    assert "data-" not in path.read_text(encoding="utf-8")  # files for papers carry no page hooks


def test_svg_is_deterministic_and_names_are_escaped() -> None:
    a, b = _pair(80)
    one = plots.scatter_plot(a, b, control_name="<x&y>", treatment_name='"q"').to_svg()
    two = plots.scatter_plot(a, b, control_name="<x&y>", treatment_name='"q"').to_svg()
    assert one == two
    assert "<x&y>" not in one and "&lt;x&amp;y&gt;" in one
    _parse(one)


def test_scatter_merges_queries_of_a_cell_and_keeps_every_query() -> None:
    a = np.array([1.0] * 500 + [0.0] * 300 + [0.2, 0.7])
    b = np.array([1.0] * 500 + [0.5] * 300 + [0.1, 0.9])
    keys = np.arange(len(a)) + 1000
    fig = plots.scatter_plot(a, b, keys=keys)
    root = _parse(fig.to_svg(interactive=True))
    marks = [c for c in root.iter(f"{SVG_NS}circle") if c.get("data-q")]
    assert len(marks) == 4  # (1, 1) tie x500, (0, 0.5) win x300, and two single queries
    members = sorted(int(k) for c in marks for k in c.get("data-q").split())
    assert members == list(keys)
    radii = sorted(float(c.get("r")) for c in marks)
    assert radii[0] < radii[-1] <= 11.0  # area grows with the number of queries, capped
    assert "802 queries" in fig.description and "301 queries lie above the diagonal" in fig.description


def test_scatter_of_10000_queries_stays_small() -> None:
    a, b = _pair(10_000, seed=3)
    fig = plots.scatter_plot(a, b, keys=np.arange(10_000))
    text = fig.to_svg(interactive=True)
    assert len(text) < 500_000
    assert text.count("<circle") <= 3 * plots.SCATTER_CELLS**2 + 10


def test_difference_plot_orders_queries_by_difference_and_shows_the_interval() -> None:
    a = np.array([0.5, 0.2, 0.9, 0.4])
    b = np.array([0.6, 0.8, 0.1, 0.4])  # differences +0.1, +0.6, -0.8, 0
    fig = plots.difference_plot(a, b, keys=[10, 11, 12, 13], ci=(-0.5, 0.4))
    root = _parse(fig.to_svg(interactive=True))
    hit = next(r for r in root.iter(f"{SVG_NS}rect") if r.get("class") == "hit")
    assert hit.get("data-order") == "11 10 13 12"
    assert "mean Δ = −0.0250" in fig.to_svg() or "mean Δ = -0.0250" in fig.to_svg()
    assert "95% CI [-0.5000, +0.4000]" in fig.to_svg()
    big_a, big_b = _pair(10_000, seed=5)
    big = plots.difference_plot(big_a, big_b)
    assert len(big.to_svg()) < 60_000  # the curve, not 10,000 bars


def test_curves_come_from_the_engine_with_intervals() -> None:
    qrels = {f"q{i}": {"a": 1, "b": 1, "c": 1} for i in range(30)}
    rng = np.random.default_rng(1)
    runs = {
        name: {q: {d: float(rng.random()) for d in ("a", "b", "c", "x", "y", "z")} for q in qrels}
        for name in ("one", "two")
    }
    table = plots.metric_at_k(qrels, runs, "recall@10", ks=(1, 3, 6))
    assert list(table.columns) == ["run", "k", "mean", "ci_low", "ci_high", "n"]
    for run in runs:
        means = ragrade.evaluate(qrels, runs[run], ["recall@[1,3,6]"]).means
        sub = table[table["run"] == run].set_index("k")
        for k in (1, 3, 6):
            assert sub.loc[k, "mean"] == pytest.approx(means[f"recall@{k}"])
            assert sub.loc[k, "ci_low"] <= sub.loc[k, "mean"] <= sub.loc[k, "ci_high"]
    assert (table[table["k"] == 6]["mean"] == 1.0).all()
    fig = plots.curve_plot(table)
    root = _parse(fig.to_svg(interactive=True))
    tips = [g.get("data-tip") for g in root.iter(f"{SVG_NS}g") if g.get("data-tip")]
    assert len(tips) == 6 and any(t.startswith("recall@3 · two:") for t in tips)
    with pytest.raises(InputError, match="cutoffs"):
        plots.metric_at_k(qrels, runs, "recall", ks=(0, 5))


def test_hole_rate_table_shapes_and_errors() -> None:
    long = pd.DataFrame({"run": ["a", "a", "b"], "k": [1, 10, 10], "hole_rate": [0.1, 0.2, 0.4]})
    wide = pd.DataFrame({"a": [0.1, 0.2], "b": [np.nan, 0.4]}, index=[1, 10]).dropna()
    mapping = {"a": {1: 0.1, 10: 0.2}, "b": {10: 0.4}}
    expected = plots.hole_rate_table(long)
    pd.testing.assert_frame_equal(plots.hole_rate_table(mapping), expected)
    assert plots.hole_rate_table(wide)["hole_rate"].max() == 0.4
    with pytest.raises(InputError, match="between 0 and 1"):
        plots.hole_rate_table({"a": {1: 1.5}})
    with pytest.raises(InputError, match="positive"):
        plots.hole_rate_table({"a": {0: 0.5}})
    with pytest.raises(InputError, match="DataFrame or a mapping"):
        plots.hole_rate_table([0.1, 0.2])
    fig = plots.hole_rate_plot(mapping)
    assert "highest is 40.0% (b at k=10)" in fig.description


def test_distribution_counts_every_query_once() -> None:
    a = np.array([0.0, 0.0, 0.5, 1.0, 1.0 + 1e-15, np.nan])
    fig = plots.distribution_plot({"x": a}, "m", bins=4)
    tips = [r.get("data-tip") for r in _parse(fig.to_svg(interactive=True)).iter(f"{SVG_NS}rect") if r.get("data-tip")]
    counts = [int(re.search(r"\((\d+)\)", t).group(1)) for t in tips]
    assert counts == [2, 0, 1, 2]  # NaN left out; a rounding hair above 1 counts in the last bin
    assert "5 queries" in fig.description


def test_png_needs_matplotlib_only(tmp_path, monkeypatch) -> None:
    pytest.importorskip("matplotlib", reason="PNG export needs the plots extra (matplotlib)")
    for kind, fig in _all_figures().items():
        png = fig.save(tmp_path / f"{kind}.png", scale=1.0)
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (round(fig.width), round(fig.height))
    with pytest.raises(InputError, match=r"\.svg or \.png"):
        _all_figures()["scatter"].save(tmp_path / "x.jpg")
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragrade\[plots\]'"):
        _all_figures()["scatter"].to_png()


def test_write_plots_writes_every_plot(tmp_path, small_data) -> None:
    qrels, runs, _, _ = small_data
    paths = plots.write_plots(tmp_path / "out", qrels, runs, ["ndcg@10", "recall@5"], ks=(1, 5, 10),
                              n_resamples=100, hole_rates={"bm25": {5: 0.1}, "dense": {5: 0.2}})
    names = sorted(p.name for p in paths)
    assert names == sorted([
        "ndcg-at-k.svg", "ndcg@10-distribution.svg", "ndcg@10-scatter-bm25-vs-dense.svg",
        "ndcg@10-difference-bm25-vs-dense.svg", "recall-at-k.svg", "recall@5-distribution.svg",
        "recall@5-scatter-bm25-vs-dense.svg", "recall@5-difference-bm25-vs-dense.svg", "hole-rate.svg",
    ])
    for p in paths:
        _parse(p.read_text(encoding="utf-8"))
    with pytest.raises(InputError, match="svg, png"):
        plots.write_plots(tmp_path / "x", qrels, runs, ["ndcg@10"], format="gif")


def test_nice_ticks() -> None:
    assert svg.nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert svg.nice_ticks(0, 10_000) == [0, 2000, 4000, 6000, 8000, 10000]
    assert svg.nice_ticks(-0.3, 0.3) == [-0.2, 0.0, 0.2]
    assert svg.tick_label(0.25) == "0.25" and svg.tick_label(-0.5) == "−0.5" and svg.tick_label(2000.0) == "2000"
