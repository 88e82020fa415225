"""The two ways of :mod:`ragrade._arrays` (pandas' hash tables, and NumPy with a dict for small inputs
while pandas is not imported) give the same answers, to the last bit; and so does the engine on either.

The test process has pandas imported, so the NumPy way is forced by turning off the one switch,
``ragrade._arrays.use_pandas``.
"""

from __future__ import annotations

import json
import math
from itertools import pairwise

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragrade
from ragrade import _arrays
from ragrade.kernels.common import cumsum_within, suffix_max_within

ids = st.text(alphabet="abcé€𝄞 \t0", max_size=4)
id_lists = st.lists(ids, max_size=60)
int_lists = st.lists(st.integers(-5, 5), max_size=60)


@pytest.fixture
def numpy_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_arrays, "use_pandas", lambda n: False)


def both(fn, *args, **kwargs):
    """``fn(*args)`` the pandas way, then the NumPy way (restoring the switch)."""
    first = fn(*args, **kwargs)
    original = _arrays.use_pandas
    _arrays.use_pandas = lambda n: False  # type: ignore[assignment]
    try:
        second = fn(*args, **kwargs)
    finally:
        _arrays.use_pandas = original  # type: ignore[assignment]
    return first, second


def test_switch_follows_pandas_and_size() -> None:
    assert _arrays.use_pandas(0)  # pandas is imported in this process
    assert _arrays.use_pandas(_arrays.SMALL + 1)


@settings(max_examples=150, deadline=None)
@given(id_lists)
def test_factorize_strings(values: list[str]) -> None:
    arr = np.asarray(values, dtype=object)
    (c1, u1), (c2, u2) = both(_arrays.factorize, arr)
    ref_codes, ref_uniques = pd.factorize(arr, sort=False, use_na_sentinel=True)
    assert c1.tolist() == c2.tolist() == ref_codes.tolist()
    assert list(u1) == list(u2) == list(ref_uniques)


@settings(max_examples=150, deadline=None)
@given(int_lists)
def test_factorize_integers(values: list[int]) -> None:
    arr = np.asarray(values, dtype=np.int64)
    (c1, u1), (c2, u2) = both(_arrays.factorize, arr)
    assert c1.tolist() == c2.tolist()
    assert u1.tolist() == u2.tolist()
    assert u2.dtype == np.int64


def test_factorize_missing_values() -> None:
    arr = np.array(["a", None, "b", float("nan"), "a"], dtype=object)
    (c1, u1), (c2, u2) = both(_arrays.factorize, arr)
    assert c1.tolist() == c2.tolist() == [0, -1, 1, -1, 0]
    assert list(u1) == list(u2) == ["a", "b"]
    floats = np.array([1.5, np.nan, 1.5, 2.0])
    (c1, u1), (c2, u2) = both(_arrays.factorize, floats)
    assert c1.tolist() == c2.tolist() == [0, -1, 0, 1]


@settings(max_examples=150, deadline=None)
@given(int_lists, st.sampled_from(["first", "last"]))
def test_duplicated_integers(values: list[int], keep: str) -> None:
    arr = np.asarray(values, dtype=np.int64)
    d1, d2 = both(_arrays.duplicated, arr, keep=keep)
    assert d1.tolist() == d2.tolist() == pd.Series(arr).duplicated(keep=keep).tolist()


@settings(max_examples=100, deadline=None)
@given(id_lists, st.sampled_from(["first", "last"]))
def test_duplicated_strings(values: list[str], keep: str) -> None:
    arr = np.asarray(values, dtype=object)
    d1, d2 = both(_arrays.duplicated, arr, keep=keep)
    assert d1.tolist() == d2.tolist()


def test_duplicated_rejects_unknown_keep(numpy_way: None) -> None:
    with pytest.raises(ValueError, match="keep"):
        _arrays.duplicated(np.arange(3), keep="none")


@settings(max_examples=100, deadline=None)
@given(st.lists(ids, unique=True, max_size=30), id_lists)
def test_lookup(vocab: list[str], targets: list[str]) -> None:
    i1, i2 = both(_arrays.indexer, vocab, targets)
    assert i1.tolist() == i2.tolist() == pd.Index(vocab, dtype=object).get_indexer(targets).tolist()


@pytest.mark.parametrize("values, kind", [
    ([], "empty"), (["a", "b"], "string"), ([1, np.int64(2)], "integer"), ([1.0, np.float32(2)], "floating"),
    ([True, False], "mixed"), ([1, "a"], "mixed"), ([1, 2.5], "mixed"), ([None], "mixed"),
])
def test_infer_kind(values: list[object], kind: str) -> None:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    k1, k2 = both(_arrays.infer_kind, arr)
    assert k1 == k2 == kind


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=5), max_size=40))
def test_decode_strings(values: list[str]) -> None:
    arr = pa.array(values, type=pa.large_string())
    _, off_buf, data = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)
    data_np = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    assert _arrays.decode_strings(offsets, data_np, len(values)) is None  # pandas is loaded: pyarrow decodes
    _, got = both(_arrays.decode_strings, offsets, data_np, len(values))
    assert got is not None and got.tolist() == values


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.text(max_size=4), max_size=8), min_size=1, max_size=4), st.data())
def test_take_strings(chunks: list[list[str]], data: st.DataObject) -> None:
    arr = pa.chunked_array([pa.array(c, type=pa.string()) for c in chunks], type=pa.string())
    n = len(arr)
    rows = np.asarray(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=12 if n else 0)), dtype=np.int64)
    a1, a2 = both(_arrays.take_strings, arr, rows)
    expected = [arr[int(r)].as_py() for r in rows]
    assert a1.to_pylist() == a2.to_pylist() == expected
    sliced = pa.array([s for c in chunks for s in c], type=pa.large_string()).slice(min(1, n))
    if len(sliced):
        r = np.arange(len(sliced))[::-1].copy()
        _, got = both(_arrays.take_strings, sliced, r)
        assert got.to_pylist() == sliced.to_pylist()[::-1]


def _sorted_groups(draw_sizes: list[int]) -> np.ndarray:
    return np.repeat(np.arange(len(draw_sizes)), draw_sizes)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=20), st.data())
def test_cumsum_within_is_bitwise_pandas(sizes: list[int], data: st.DataObject) -> None:
    q = _sorted_groups(sizes)
    scale = data.draw(st.sampled_from([1.0, 1e-3, 1e6]))
    w = np.asarray(data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=len(q), max_size=len(q))))
    w = w * scale / np.log2(np.arange(len(q)) + 2.0)
    a, b = both(cumsum_within, q, w)
    assert a.tobytes() == b.tobytes()  # to the last bit (pandas' compensated sums)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=20), st.data())
def test_suffix_max_within(sizes: list[int], data: st.DataObject) -> None:
    q = _sorted_groups(sizes)
    v = np.asarray(data.draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=len(q), max_size=len(q))))
    a, b = both(suffix_max_within, q, v)
    assert a.tolist() == b.tolist()


# -- the whole engine, either way ---------------------------------------------------------------------

METRICS = ["ndcg@10", "ndcg@3", "map", "recall@5", "P@5", "rr", "bpref", "ndcg_cut_10", "Rprec", "err@10",
           "infAP", "judged@10"]


def _random_inputs(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(40, size=int(rng.integers(1, 12)),
                                                                         replace=False)} for i in range(25)}
    run = {f"q{i}": {f"d{j}": float(np.round(rng.random(), 2)) for j in rng.choice(40, size=int(rng.integers(0, 20)),
                                                                                 replace=False)}
           for i in range(2, 28)}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_engine_same_values_either_way(seed: int, tmp_path) -> None:
    qrels, run = _random_inputs(seed)
    qp, rp = tmp_path / "q.txt", tmp_path / "r.txt"
    qp.write_text("".join(f"{q}\t0\t{d}\t{g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    rp.write_text("".join(f"{q} Q0 {d} {k} {s} t\n" for q, ds in run.items() for k, (d, s) in enumerate(ds.items())))
    with pytest.warns(ragrade.RagradeWarning):
        outs = both(lambda: ragrade.evaluate(str(qp), str(rp), METRICS))
    a, b = outs
    assert a.to_json(per_query=True) == b.to_json(per_query=True)
    assert a.per_query.equals(b.per_query)
    assert a.hole_rate is not None and b.hole_rate is not None
    assert a.hole_rate.per_query.equals(b.hole_rate.per_query)
    assert not math.isnan(a["ndcg@10"])
    with pytest.warns(ragrade.RagradeWarning):
        dicts = both(lambda: ragrade.evaluate(qrels, run, METRICS, ties="input"))
    assert json.loads(dicts[0].to_json(per_query=True)) == json.loads(dicts[1].to_json(per_query=True))


def test_result_reads_without_a_frame() -> None:
    """Means, counts, rows and every output format come from the columns; the DataFrame is made only when
    asked for, and then agrees with them."""
    from ragrade.engine.result import QueryColumns, Result, Summary
    from ragrade.metrics import parse_metric
    from ragrade.policies import Policies

    cols = QueryColumns(["q1", "q2", "q3"], {"ndcg@10": [0.5, np.nan, 1.0], "P@5": [0.2, 0.4, np.nan]})
    res = Result(cols, {"ndcg@10": parse_metric("ndcg@10"), "P@5": parse_metric("P@5")},
                 Summary(qrels_queries=3, run_queries=3, evaluated=3), Policies())
    assert isinstance(res._table, QueryColumns)
    assert res.means["ndcg@10"] == pytest.approx(0.75) and res.counts["P@5"] == 2 and res.n_queries == 3
    assert res.per_query_rows()[1][0] == "q2"
    csv_before, md_before = res.to_csv(per_query=True), res.to_markdown(per_query=True)
    assert isinstance(res._table, QueryColumns)  # nothing above made the frame
    frame = res.per_query
    assert list(frame.index) == ["q1", "q2", "q3"] and frame.index.name == "query"
    assert res.to_csv(per_query=True) == csv_before and res.to_markdown(per_query=True) == md_before
    with pytest.raises(ValueError, match="values for"):
        QueryColumns(["q1"], {"x": [1.0, 2.0]})
    with pytest.raises(AttributeError, match="immutable"):
        res.per_query = {"x": [1.0]}  # type: ignore[misc]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=6), max_size=30), st.data())
def test_utf8_column_holds_the_strings_as_arrow_would(texts, data):
    """:class:`ragrade.data.Utf8Column` (the C tokenizer's ids in NumPy buffers): its strings, a gather of them,
    its Arrow view and its one-chunk form are the strings given, whatever the cut into chunks."""
    from ragrade.data import Utf8Column

    cuts = sorted(data.draw(st.lists(st.integers(0, len(texts)), max_size=3)))
    chunks = []
    for a, z in zip([0, *cuts], [*cuts, len(texts)], strict=True):
        encoded = [t.encode("utf-8") for t in texts[a:z]]
        offsets = np.concatenate([[0], np.cumsum([len(e) for e in encoded])]).astype(np.int64)
        chunks.append((offsets, b"".join(encoded)))  # bytes-like data is taken as it is
    col = Utf8Column(chunks)
    assert len(col) == len(texts) and col.to_pylist() == texts
    assert col.arrow().to_pylist() == texts
    rows = np.array(data.draw(st.lists(st.integers(0, max(len(texts) - 1, 0)), max_size=10)) if texts else [],
                    dtype=np.int64)
    assert col.take(rows).to_pylist() == [texts[r] for r in rows.tolist()]
    assert col.decoded(rows).tolist() == [texts[r] for r in rows.tolist()]
    off, blob = col.contiguous()
    assert [bytes(blob[a:z]).decode() for a, z in pairwise(off.tolist())] == texts
    for off, blob in col.chunks:  # immutable, as every array of a Qrels or Run
        assert not off.flags.writeable and not blob.flags.writeable


def test_a_run_read_by_the_tokenizer_gives_arrow_only_when_asked(tmp_path):
    """A TREC run the C tokenizer read keeps its ids as a Utf8Column (``raw_utf8``); ``raw_docs`` is the Arrow view
    of the same strings, made on request."""
    from ragrade import _ingest

    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 é 1 2 r\nq1 Q0 b 2 1 r\nq2 Q0 c 1 3 r\n")
    run = ragrade.read_run(path)
    if not _ingest.has_accel():
        pytest.skip("without the C helper the TREC readers take pyarrow's path")
    assert run.raw_utf8 is not None and run.raw_utf8.to_pylist() == ["é", "b", "c"]
    assert isinstance(run.raw_docs, pa.Array | pa.ChunkedArray) and run.raw_docs.to_pylist() == ["é", "b", "c"]
    assert run.docs_at(np.array([2, 0])).tolist() == ["c", "é"]
    assert run.to_dict() == {"q1": {"é": 2.0, "b": 1.0}, "q2": {"c": 3.0}}
