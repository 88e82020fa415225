"""Slices: ``Result.by``, ``by_slices`` (comparisons), ``GateResult.by`` and ``--slices`` on evaluate, compare, gate
and report, on the shipped examples (``examples/slices.tsv``: category and relevant-count labels)."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import ragrade
from ragrade.cli import main
from ragrade.comparison import stats
from ragrade.comparison.slice_compare import by_slices
from ragrade.engine.slices import NO_LABEL, drop_slices, read_slices, slice_labels
from ragrade.errors import InputError, RagradeWarning

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE, SLICES = (str(EXAMPLES / f) for f in ("qrels.tsv", "run.tsv", "run_dense.tsv", "slices.tsv"))


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def result():
    return _quiet(ragrade.evaluate, QRELS, BM25, ["ndcg@10", "recall@5", "gm_map"])


@pytest.fixture(scope="module")
def labels() -> pd.DataFrame:
    return pd.read_csv(SLICES, sep="\t", dtype=str).set_index("query")


def test_result_by_equals_groupby(result, labels) -> None:
    before = result.per_query.copy()
    sliced = result.by(SLICES)
    pd.testing.assert_frame_equal(result.per_query, before)  # the result is not changed
    pq = result.per_query.copy()
    pq.index = pq.index.astype(str)
    holes = result.hole_rate.per_query
    holes.index = holes.index.astype(str)
    data = sliced.to_dict()
    assert set(data) == {"category", "relevant"}
    for column in ("category", "relevant"):
        groups = labels[column].reindex(pq.index)
        for label, ids in groups.groupby(groups).groups.items():
            entry = data[column][label]
            assert entry["queries"] == int(pq.loc[ids].notna().any(axis=1).sum())  # the queries scored
            for m in ("ndcg@10", "recall@5"):
                assert entry["metrics"][m] == pytest.approx(pq.loc[ids, m].mean(), abs=1e-12)
            v = pq.loc[ids, "gm_map"].dropna().clip(lower=1e-5)
            assert entry["metrics"]["gm_map"] == pytest.approx(float(np.exp(np.log(v).mean())), rel=1e-12)
            assert entry["hole_rate"] == pytest.approx(holes.reindex(ids).mean(), abs=1e-12)
    assert sum(e["queries"] for e in data["category"].values()) == int(pq.notna().any(axis=1).sum())
    assert "| what about |" in sliced.to_markdown()


def test_labels_from_every_source_agree(tmp_path, labels) -> None:
    frame = read_slices(SLICES)
    assert list(frame.columns) == ["category", "relevant"] and frame.index.name == "query"
    labels.reset_index().to_csv(tmp_path / "s.csv", index=False)
    labels.reset_index().to_json(tmp_path / "s.jsonl", orient="records", lines=True)
    labels.reset_index().to_parquet(tmp_path / "s.parquet")
    for name in ("s.csv", "s.jsonl", "s.parquet"):
        pd.testing.assert_frame_equal(read_slices(tmp_path / name), frame)
    only = read_slices(f"{SLICES}:category")
    assert list(only.columns) == ["category"]
    from_dict = slice_labels(labels["category"].to_dict())
    assert from_dict["slice"].tolist() == frame["category"].tolist()
    from_series = slice_labels(labels["category"])
    assert list(from_series.columns) == ["category"]
    with pytest.raises(InputError, match="no column 'nope'"):
        read_slices(f"{SLICES}:nope")
    (tmp_path / "dup.tsv").write_text("query\tc\nq1\ta\nq1\tb\n", encoding="utf-8")
    with pytest.raises(InputError, match="labelled twice"):
        read_slices(tmp_path / "dup.tsv")
    with pytest.raises(InputError, match="not found"):
        read_slices(tmp_path / "missing.tsv")


def test_unlabelled_queries_form_their_own_slice(result) -> None:
    with pytest.warns(RagradeWarning, match=r"1 of 3 labelled queries match no query of the result \('q99'\)"):
        data = result.by({"q01": "x", "q02": "y", "q99": "z"}).to_dict()["slice"]
    assert list(data) == ["x", "y", NO_LABEL]
    assert data[NO_LABEL]["queries"] == int(result.per_query.notna().any(axis=1).sum()) - 2


def test_compare_by_tests_each_slice_and_corrects_across_slices(labels) -> None:
    cmp = _quiet(ragrade.compare, QRELS, {"bm25": BM25, "dense": DENSE}, ["ndcg@10"], test="t")
    sliced = by_slices(cmp, SLICES)
    assert cmp.slices is None and sliced.slices is not None  # a copy
    scipy_stats = pytest.importorskip("scipy.stats")
    rows = sliced.slices.pairs[sliced.slices.pairs["column"] == "category"]
    a, b = cmp.scores["bm25"]["ndcg@10"], cmp.scores["dense"]["ndcg@10"]
    groups = labels["category"].reindex(a.index.astype(str))
    raw = []
    for rec in rows.to_dict("records"):
        ids = groups.index[groups == rec["slice"]]
        ref = scipy_stats.ttest_rel(b.loc[ids], a.loc[ids]).pvalue
        assert rec["p_value"] == pytest.approx(ref, rel=1e-9)
        assert rec["delta"] == pytest.approx((b.loc[ids] - a.loc[ids]).mean(), abs=1e-12)
        assert rec["queries"] == len(ids)
        raw.append(rec["p_value"])
    np.testing.assert_allclose(rows["p_adjusted"], stats.adjust_pvalues(np.array(raw), "holm"))
    data = json.loads(sliced.to_json())
    assert data["slices"]["category"]["what about"]["queries"] == int((groups == "what about").sum())
    assert set(data["slices"]["category"]["what about"]["metrics"]) == {"bm25", "dense"}
    assert "Holm" in data["slices_description"]
    assert "**Slices by category**" in sliced.to_markdown()
    none = by_slices(cmp, SLICES, correction=None)
    assert (none.slices.pairs["p_adjusted"] == none.slices.pairs["p_value"]).all()


def _brute_force_minimum(contrib: dict[str, float], total: float) -> int:
    for size in range(1, len(contrib) + 1):
        for subset in itertools.combinations(contrib, size):
            if sum(contrib[s] for s in subset) <= 0.5 * total:
                return size
    return len(contrib)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.floats(-1, 1, allow_nan=False)), min_size=1, max_size=30))
def test_drop_slices_is_the_smallest_set_explaining_half(items) -> None:
    ids = [f"q{i}" for i in range(len(items))]
    d = pd.Series([x for _, x in items], index=ids)
    labels = {q: f"s{s}" for q, (s, _) in zip(ids, items, strict=True)}
    info = drop_slices(d, labels)["slice"]
    contrib = {r["slice"]: r["contribution"] for r in info["slices"]}
    assert sum(contrib.values()) == pytest.approx(d.mean(), abs=1e-9)
    if d.mean() < 0:
        chosen = info["explaining"]
        assert sum(contrib[s] for s in chosen) <= 0.5 * d.mean() + 1e-12
        assert len(chosen) == _brute_force_minimum(contrib, d.mean())
    else:
        assert info["explaining"] == []


def test_cli_slices(tmp_path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["evaluate", QRELS, BM25, "-m", "ndcg@10", "--slices", f"{SLICES}:category",
                               "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data["slices"]) == {"category"} and data["slices"]["category"]["how is"]["queries"] == 7
    out = runner.invoke(main, ["evaluate", QRELS, BM25, "-m", "ndcg@10", "--slices", f"{SLICES}:nope"])
    assert out.exit_code == 2 and "error:" in out.output and "Traceback" not in out.output
    out = runner.invoke(main, ["compare", QRELS, BM25, DENSE, "-m", "ndcg@10", "--slices", SLICES, "--format",
                               "json", "--resamples", "200"])
    assert out.exit_code == 0, out.output
    assert set(json.loads(out.stdout)["slices"]) == {"category", "relevant"}
    base = tmp_path / "base.json"
    out = runner.invoke(main, ["evaluate", QRELS, DENSE, "-m", "ndcg@10", "--save-baseline", str(base)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(main, ["gate", str(base), QRELS, BM25, "--slices", SLICES, "--format", "markdown",
                               "--resamples", "200"])
    assert "Slices accounting for most of each drop" in out.stdout
    assert "ndcg@10, by category: **the ... of**" in out.stdout
    out = runner.invoke(main, ["gate", str(base), QRELS, BM25, "--slices", SLICES, "--format", "json",
                               "--resamples", "200"])
    gate_data = json.loads(out.stdout)
    assert gate_data["slices"]["ndcg@10"]["category"]["explaining"] == ["the ... of"]
    html = tmp_path / "r.html"
    out = runner.invoke(main, ["report", QRELS, BM25, DENSE, "-m", "ndcg@10", "--slices", SLICES, "-o", str(html),
                               "--resamples", "200", "--no-plots"])
    assert out.exit_code == 0, out.output
    text = html.read_text(encoding="utf-8")
    assert 'id="slices"' in text and "slice-plot" in text and "By category" in text
    assert ">MDE</th>" in text  # the pairs table states each pair's minimal detectable effect
    assert not math.isnan(gate_data["slices"]["ndcg@10"]["category"]["delta"])


def test_evaluate_compare_and_report_count_a_slice_alike() -> None:
    """A slice's ``queries`` are the queries scored, in evaluate --slices, compare --slices and the report (a
    query without relevant judgments, left out of the means, is in no count)."""
    runner = CliRunner()
    ev = runner.invoke(main, ["evaluate", QRELS, BM25, "-m", "ndcg@10", "--slices", SLICES, "--format", "json"])
    cmp = runner.invoke(main, ["compare", QRELS, BM25, DENSE, "-m", "ndcg@10", "--slices", SLICES, "--format",
                               "json", "--resamples", "50"])
    assert ev.exit_code == 0 and cmp.exit_code == 0, (ev.output, cmp.output)
    counts = {c: {s: e["queries"] for s, e in v.items()} for c, v in json.loads(ev.stdout)["slices"].items()}
    compared = {c: {s: e["queries"] for s, e in v.items()} for c, v in json.loads(cmp.stdout)["slices"].items()}
    assert counts == compared and sum(counts["category"].values()) == 34  # 36 queries, 2 without a relevant one
