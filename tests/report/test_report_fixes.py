"""The HTML report's plots, as a newcomer read them (issue 23, item 17): the hole-rate axis with every
rate 0, whole-query ticks, whole titles, "1 query", the summary's hole-rate cutoff, marks inside the frame."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ragrade.report.plots import difference_plot, distribution_plot, hole_rate_plot, scatter_plot
from ragrade.report.prepare import evaluate_runs
from ragrade.report.svg import Circle, Text

EX = Path(__file__).resolve().parents[2] / "examples"


def _texts(fig) -> list[str]:
    out = []

    def walk(items):
        for it in items:
            if isinstance(it, Text):
                out.append(it.text)
            walk(getattr(it, "items", []))

    walk(fig.items)
    return out


def test_hole_rate_axis_with_every_rate_zero_is_readable():
    fig = hole_rate_plot({"a": {5: 0.0, 10: 0.0}, "b": {5: 0.0, 10: 0.0}})
    labels = _texts(fig)
    assert "1e-09" not in " ".join(labels) and not any("e-" in t for t in labels)
    assert "1" in labels and "0" in labels  # an axis from 0 to 1 (%)


def test_difference_plot_ticks_are_whole_queries():
    fig = difference_plot(np.array([0.2, 0.5]), np.array([0.4, 0.1]), metric="ndcg@10")
    labels = _texts(fig)
    assert "0.5" not in labels and "1.5" not in labels
    assert {"0", "1", "2"} <= set(labels)


def test_long_run_names_are_not_cut_in_titles():
    long_a, long_b = "bm25-with-a-very-long-descriptive-run-name-v1", "dense-retriever-with-reranker-and-chunking-v2"
    for fig in (scatter_plot(np.array([0.1, 0.9]), np.array([0.3, 0.8]), metric="ndcg@10", control_name=long_a,
                             treatment_name=long_b),
                difference_plot(np.array([0.1, 0.9]), np.array([0.3, 0.8]), metric="ndcg@10", control_name=long_a,
                                treatment_name=long_b)):
        title = _texts(fig)[0]
        assert long_a in title and long_b in title and "…" not in title
        from ragrade.report.svg import text_width

        assert fig.width >= 12 + text_width(title, 13)


def test_one_query_is_singular():
    fig = scatter_plot(np.array([0.1, 0.5, 0.5]), np.array([0.3, 0.2, 0.5]), metric="ndcg@10")
    joined = " ".join(_texts(fig)) + fig.description
    assert "1 queries" not in joined and "1 query" in joined
    fig = distribution_plot({"a": np.array([0.5])}, "ndcg@10")
    assert "1 queries" not in " ".join(_texts(fig)) + fig.description


def test_marks_at_the_extremes_stay_inside_the_frame():
    a, b = np.array([0.0, 1.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0, 0.0])
    fig = scatter_plot(a, b, metric="ndcg@10")
    left, top, size = 64, 40, 300

    def circles(items):
        for it in items:
            if isinstance(it, Circle) and it.attrs.get("data-q") is not None:
                yield it
            yield from circles(getattr(it, "items", []))

    marks = list(circles(fig.items))
    assert len(marks) == 4
    for c in marks:
        assert left <= c.cx - c.r and c.cx + c.r <= left + size, (c.cx, c.r)
        assert top <= c.cy - c.r and c.cy + c.r <= top + size, (c.cy, c.r)


def test_report_summary_hole_rate_is_at_the_metrics_cutoff_as_in_compare():
    ev = evaluate_runs(str(EX / "qrels.tsv"), {"run": str(EX / "run.tsv"), "run_dense": str(EX / "run_dense.tsv")},
                       ["ndcg@10", "recall@5"])
    assert ev.hole_k == 10  # not 100, the largest cutoff of the metric@k curves
    import ragrade

    cmp = ragrade.compare(str(EX / "qrels.tsv"), {"run": str(EX / "run.tsv"), "run_dense": str(EX / "run_dense.tsv")},
                          ["ndcg@10", "recall@5"], n_resamples=200)
    assert cmp.hole_k == ev.hole_k
    assert abs(cmp.hole_rates["run"] - ev.hole_rates["run"][10]) < 1e-12
    assert re.search(r"holes@10", cmp.to_markdown())
