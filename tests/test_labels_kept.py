"""Issue 34, item 1: a requested metric never vanishes. Metrics that mean the same thing are computed once and
shown under every spelling the user wrote: in ``Result.per_query`` / ``means`` / ``counts``, in every output
format of ``evaluate``, and in compare, report and gate."""

from __future__ import annotations

import csv
import io
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.engine.result import distinct_metrics, metric_labels, spread_labels

QRELS = {"a": {"d1": 1, "d2": 0, "d3": 2}, "b": {"d4": 1, "d5": 2}, "c": {"d6": 2}}
RUN = {"a": {"d1": 3.0, "d3": 2.0, "d9": 1.0}, "b": {"d5": 2.0, "d8": 1.5, "d4": 1.0}, "c": {"d7": 1.0}}
RUN2 = {"a": {"d3": 3.0, "d1": 1.0}, "b": {"d8": 2.0, "d4": 1.0}, "c": {"d6": 1.0}}

TREC_RECALL = [f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
# (metrics as written, profile, the labels expected): every label written comes back, in the order written
PAIRS = [
    (["P@5", "precision@5"], None, ["P@5", "precision@5"]),
    (["ndcg_cut_10", "ndcg@10"], None, ["ndcg_cut_10", "ndcg@10"]),
    (["ndcg@10", "ndcg_cut_10", "ndcg@10"], None, ["ndcg@10", "ndcg_cut_10"]),
    (["set_recall(rel=2)", "recall(rel=2)"], None, ["set_recall(rel=2)", "recall(rel=2)"]),
    (["recall", "recall@5"], "trec_eval", [*TREC_RECALL, "recall@5"]),
    (["recall@5", "recall"], "trec_eval", ["recall@5", *TREC_RECALL]),
    (["P@5", "precision@5", "P_5"], "pytrec_eval", ["P@5", "precision@5", "P_5"]),
]


def _labels(metrics: list[str], profile: str | None) -> list[str]:
    names = "trec_eval" if profile in ("trec_eval", "pytrec_eval") else "ragrade"
    return [label for label, _ in metric_labels(metrics, names=names)]


def _evaluate(metrics: list[str], profile: str | None = None, run: dict = RUN) -> ragrade.Result:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ragrade.evaluate(QRELS, run, metrics, profile=profile)


@pytest.mark.parametrize(("metrics", "profile", "labels"), PAIRS)
def test_every_spelling_is_a_column_of_equal_values(metrics, profile, labels):
    assert _labels(metrics, profile) == labels
    res = _evaluate(metrics, profile)
    assert list(res.per_query.columns) == labels
    assert list(res.means) == labels == list(res.counts)
    by_metric: dict = {}
    for label, m in metric_labels(metrics, names="trec_eval" if profile else "ragrade"):
        by_metric.setdefault(m, []).append(label)
    shared = [ls for ls in by_metric.values() if len(ls) > 1]
    assert shared, "the case must hold a metric under two labels"
    for ls in shared:
        cols = [res.per_query[lab].to_numpy() for lab in ls]
        for c in cols[1:]:
            np.testing.assert_array_equal(c, cols[0])


def test_the_same_label_twice_is_one_column():
    assert _labels(["P@5", "P@5", "P@[5,10]"], None) == ["P@5", "P@10"]


def test_a_metric_under_two_labels_is_computed_once(monkeypatch):
    from ragrade.metrics import parse_metric

    ref = parse_metric("P@5").family.kernel
    kernel = ref.resolve()
    calls: list[str] = []

    def counting(m, judged):
        calls.append(str(m))
        return kernel(m, judged)

    monkeypatch.setattr(ref, "_fn", counting)
    res = _evaluate(["P@5", "precision@5", "P_5", "P@3"])
    assert calls == ["precision@5", "precision@3"]
    assert list(res.means) == ["P@5", "precision@5", "P_5", "P@3"]


def test_distinct_metrics_and_spread_labels():
    labels = metric_labels(["P@5", "ndcg@3", "precision@5", "P_5"])
    assert [lab for lab, _ in distinct_metrics(labels)] == ["P@5", "ndcg@3"]
    spread = spread_labels(labels, {"P@5": 1, "ndcg@3": 2})
    assert spread == {"P@5": 1, "ndcg@3": 2, "precision@5": 1, "P_5": 1}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("labels")
    qrels = d / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {doc} {g}\n" for q, docs in QRELS.items() for doc, g in docs.items()))
    out = {"qrels": qrels}
    for name, run in (("run", RUN), ("run2", RUN2)):
        p = d / f"{name}.txt"
        p.write_text("".join(f"{q} Q0 {doc} {i + 1} {s} r\n" for q, docs in run.items()
                             for i, (doc, s) in enumerate(docs.items())))
        out[name] = p
    return out


def _cli(*args: str):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.stdout


def _m(metrics: list[str]) -> list[str]:
    return [x for m in metrics for x in ("-m", m)]


@pytest.mark.parametrize(("metrics", "profile", "labels"), PAIRS)
def test_every_spelling_in_every_output_format(files, metrics, profile, labels):
    prof = ["--profile", profile] if profile else []
    base = ["evaluate", files["qrels"], files["run"], *_m(metrics), *prof]
    out = json.loads(_cli(*base, "--format", "json", "--per-query"))
    assert list(out["metrics"]) == labels
    header = next(csv.reader(io.StringIO(_cli(*base, "--format", "csv", "--per-query"))))
    assert header == ["query", *labels]
    md = _cli(*base, "--format", "markdown")
    table = _cli(*base, "--format", "table")
    for label in labels:
        assert f"| {label} " in md
        assert f" {label} " in table


def test_compare_report_and_gate_show_every_spelling(files, tmp_path):
    metrics = ["P@5", "precision@5", "ndcg_cut_10", "ndcg@10"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = ragrade.compare(QRELS, {"one": RUN, "two": RUN2}, metrics, n_resamples=200)
    assert list(comp.metrics) == metrics
    out = json.loads(_cli("compare", files["qrels"], files["run"], files["run2"], *_m(metrics),
                          "--format", "json", "--resamples", "200"))
    text = json.dumps(out)
    for label in metrics:
        assert f'"{label}"' in text
    report = tmp_path / "r.html"
    _cli("report", files["qrels"], files["run"], files["run2"], *_m(metrics), "-o", report, "--resamples", "200")
    html = report.read_text()
    for label in metrics:
        assert label in html
    base = tmp_path / "base.json"
    _cli("evaluate", files["qrels"], files["run"], *_m(metrics), "--save-baseline", base)
    gate = json.loads(_cli("gate", base, files["qrels"], files["run2"], "--format", "json", "--resamples", "200"))
    assert [row["metric"] for row in gate["metrics"]] == metrics
