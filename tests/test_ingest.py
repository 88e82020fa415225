"""The optional C helpers and the pure-Python fallback of ragrade._ingest behave identically."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ragrade
from ragrade import _ingest
from ragrade._ingest import EMPTY_KEY, NON_NUMERIC, NON_STR_KEY, NOT_DICT, NUL_KEY, OK, lookup, scan_values

MODES = [False] + ([True] if _ingest.has_accel() else [])


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize(
    ("dicts", "status"),
    [
        ([{"a": 1.0, "b": 2}, {}, {"c": np.float32(0.5)}], OK),
        ([{"a": 1.0}, ["b"]], NOT_DICT),
        ([{"a": 1.0, 5: 2.0}], NON_STR_KEY),
        ([{"a": "x"}], NON_NUMERIC),
        ([{"a": 1.0, "": 2.0}], EMPTY_KEY),
        # the id rule on the dict path: a key holding a NUL (in each of str's three widths), a boolean value
        ([{"a": 1.0}, {"b\x00": 2.0}], NUL_KEY),
        ([{"\x00": 1.0}], NUL_KEY),
        ([{"\u0100\x00x": 1.0}], NUL_KEY),
        ([{"x\U0001f600\x00": 1.0}], NUL_KEY),
        ([{"a": 1.0, "b": True}], NON_NUMERIC),
        ([{"a": False}], NON_NUMERIC),
        ([{"a": np.bool_(True)}], NON_NUMERIC),
        ([{"a": 1.0}, {"b": np.False_}], NON_NUMERIC),
        # ... and what is not refused: numbers of every kind, ids in the wider widths, "0" and "\x01"
        ([{"a": 1, "b": 1.0, "c": np.int64(2), "d": np.float64(0.5), "e": np.uint8(3), "f": np.float16(1)}], OK),
        ([{"\u0100k": 1.0, "\U0001f600": 2.0, "0": 3.0, "\x01": 4.0, "long" * 40: 5.0}], OK),
    ],
)
def test_scan_values_status(accel, dicts, status):
    got, counts, values = scan_values(dicts, use_accel=accel)
    assert got == status
    if status == OK:
        assert counts.tolist() == [len(d) for d in dicts]
        assert values.tolist() == [float(v) for d in dicts for v in d.values()]


@pytest.mark.parametrize("accel", MODES)
def test_none_value_is_never_a_valid_score(accel):
    # C reports NON_NUMERIC; numpy's fromiter turns None into NaN. Callers reject both.
    status, _, values = scan_values([{"a": None}], use_accel=accel)
    assert status == NON_NUMERIC or np.isnan(values).any()


def test_lookup():
    dicts = [{"a": 1.0, "b": 2.0}, {"c": 3}]
    out = lookup(dicts, np.array([0, 0, 1, 1]), np.array(["b", "z", "c", "a"], dtype=object))
    np.testing.assert_array_equal(out, [2.0, np.nan, 3.0, np.nan])


def test_fallback_gives_the_same_evaluation(monkeypatch):
    rng = np.random.default_rng(7)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(30, 6, replace=False)} for i in range(30)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 4)) for j in rng.choice(30, 15, replace=False)} for i in range(30)}
    metrics = ["ndcg@5", "ap", "rr@3", "P@10", "recall@5", "r_precision"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ragrade.RagradeWarning)
        a = ragrade.evaluate(qrels, run, metrics)
        monkeypatch.setattr(_ingest, "_accel", None)
        b = ragrade.evaluate(qrels, run, metrics)
    np.testing.assert_array_equal(a.per_query.to_numpy(), b.per_query.to_numpy())


@pytest.mark.parametrize("accel", MODES)
def test_scan_join_equals_scan_then_lookup(accel):
    from ragrade._ingest import scan_join

    dicts = [{"a": 1.0, "b": 2.0}, {}, {"c": 3, "d": 0.5}]
    which = np.array([2, 0, 2, 0, 1])  # not sorted: the helper must restore the order
    keys = np.array(["d", "b", "zz", "a", "a"], dtype=object)
    status, counts, values, found = scan_join(dicts, which, keys, use_accel=accel)
    assert status == OK
    assert counts.tolist() == [2, 0, 2]
    assert values.tolist() == [1.0, 2.0, 3.0, 0.5]
    np.testing.assert_array_equal(found, [0.5, 2.0, np.nan, 1.0, np.nan])
    assert scan_join([{"a": 1.0}, {2: 1.0}], np.array([0]), np.array(["a"], dtype=object), use_accel=accel)[0] \
        == NON_STR_KEY


@pytest.mark.parametrize("accel", MODES)
def test_rank_in_segments(accel):
    from ragrade._ingest import rank_in_segments

    v = np.array([5.0, 3.0, 3.0, 3.0, 1.0, 9.0, 2.0])
    lo = np.array([0, 0, 0, 5, 5])
    hi = np.array([5, 5, 5, 7, 7])
    t = np.array([3.0, 5.0, 0.5, 2.0, 9.0])
    above, upto = rank_in_segments(v, lo, hi, t, use_accel=accel)
    assert above.tolist() == [1, 0, 5, 6, 5]
    assert upto.tolist() == [4, 1, 5, 7, 6]


@pytest.mark.parametrize("accel", MODES)
def test_scan_items_returns_keys_in_order(accel):
    from ragrade._ingest import scan_items

    status, counts, values, keys = scan_items([{"b": 2.0, "a": 1}, {}, {"c": 3.5}], use_accel=accel)
    assert status == OK
    assert keys.tolist() == ["b", "a", "c"] and values.tolist() == [2.0, 1.0, 3.5] and counts.tolist() == [2, 0, 1]


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize("shuffle", [False, True])
def test_file_backed_runs_equal_dict_runs(tmp_path, monkeypatch, accel, shuffle):
    """Runs read from files keep raw Arrow ids; their join (C scan or Arrow index_in) equals the dict join."""
    rng = np.random.default_rng(11)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(-1, 4)) for j in rng.choice(40, 8, replace=False)} for i in range(25)}
    run = {}
    for i in range(3, 30):
        docs = rng.choice(40, int(rng.integers(0, 20)), replace=False)
        run[f"q{i}"] = {f"d{j}": float(rng.integers(0, 5)) / 2 for j in docs}
    lines = [f"{q} Q0 {d} 0 {s} t" for q, ds in run.items() for d, s in ds.items()]
    if shuffle:  # queries interleaved: the reader must group them
        rng.shuffle(lines)
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    metrics = ["ndcg@5", "ap", "rr@3", "P@10", "recall@5", "r_precision", "precision(rel=2)@5"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ragrade.RagradeWarning)
        from_file = ragrade.evaluate(qrels, ragrade.read_run(path), metrics)
        from_dict = ragrade.evaluate(qrels, run, metrics)
    np.testing.assert_array_equal(from_file.per_query.to_numpy(), from_dict.per_query.to_numpy())


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize(("text", "odd"), [(b"q Q0 d 1 0.5 t\n", False), (b"q\tQ0 d 1 0.5 t\n", True),
                                           (b"q Q0 d 1 0.5 t\r\n", True), (b"", False), (b"x" * 9000 + b"\x0c", True),
                                           (b"# a comment\nq Q0 d 1 0.5 t\n", True),
                                           (b"q Q0 d 1 0.5 t\n#c\n", True), (b"q#1 Q0 d 1 0.5 t\n", False)])
def test_file_odd_whitespace_scan(tmp_path, monkeypatch, accel, text, odd):
    from ragrade.io.trec import _file_needs_care as _file_has_odd_whitespace

    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    path = tmp_path / "f.txt"
    path.write_bytes(text)
    assert _file_has_odd_whitespace(str(path)) is odd


@pytest.mark.skipif(not _ingest.has_accel(), reason="the C helper is not built")
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_match_segments_long_ids_and_thread_split(workers):
    import pyarrow as pa

    from ragrade._ingest import match_segments

    # ids sharing their first 8 bytes, empty ids, a segment with no gold group, ids shorter than 8 bytes
    run = pa.array(["document-001", "document-002", "", "x", "document-001", "doc", "document-0020", "y"])
    seg_off = np.array([0, 3, 5, 8])  # three queries
    seg_to_group = np.array([0, -1, 1])
    gold = pa.array(["document-002", "x", "doc", "document-0020"], type=pa.large_string())
    group_off = np.array([0, 2, 4])
    out = match_segments(run, seg_off, seg_to_group, group_off, gold, workers=workers)
    assert out.tolist() == [-1, 0, -1, -1, -1, 2, 3, -1]


@pytest.mark.skipif(not _ingest.has_accel(), reason="the C helper is not built")
@pytest.mark.parametrize("seed", range(8))
def test_match_segments_reads_chunks_in_place(seed):
    """A chunked run (as Parquet gives: many chunks, 32-bit offsets, sliced chunks, empty chunks and
    empty queries) matches exactly as the same strings in one array, with any number of threads."""
    import pyarrow as pa

    from ragrade._ingest import match_segments

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 300))
    words = [f"id-{int(x)}" + "z" * int(rng.integers(0, 10)) for x in rng.integers(0, 60, size=n)]
    sizes = rng.integers(0, 25, size=40)
    sizes = sizes[np.cumsum(sizes) <= n]
    seg_off = np.concatenate(([0], np.cumsum(sizes), [n])).astype(np.int64)
    nseg = len(seg_off) - 1
    seg_to_group = np.where(rng.random(nseg) < 0.2, -1, rng.integers(0, nseg, size=nseg))
    glen = rng.integers(0, 6, size=nseg)
    group_off = np.concatenate(([0], np.cumsum(glen))).astype(np.int64)
    gold_words = [f"id-{int(x)}" + "z" * int(rng.integers(0, 10)) for x in rng.integers(0, 60, size=int(glen.sum()))]
    gold = pa.array(gold_words, type=pa.large_string())
    whole = pa.array(words, type=pa.string())
    expected = match_segments(whole, seg_off, seg_to_group, group_off, gold, workers=1)
    # the reference, in Python: index of the first equal gold string of the row's group
    for r in range(n):
        s = int(np.searchsorted(seg_off, r, side="right") - 1)
        g = seg_to_group[s]
        cands = [] if g < 0 else list(range(group_off[g], group_off[g + 1]))
        hit = next((k for k in cands if gold_words[k] == words[r]), -1)
        assert expected[r] == hit
    cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(0, 6))))
    pieces = [whole.slice(a, b - a) for a, b in zip(np.r_[0, cuts], np.r_[cuts, n], strict=True)]
    pieces.insert(0, pa.array([], type=pa.string()))
    chunked = pa.chunked_array(pieces, type=pa.string())
    for workers in (1, 2, 3):
        assert match_segments(chunked, seg_off, seg_to_group, group_off, gold, workers=workers).tolist() \
            == expected.tolist()
    big = pa.chunked_array([p.cast(pa.large_string()) for p in pieces])
    assert match_segments(big, seg_off, seg_to_group, group_off, gold, workers=2).tolist() == expected.tolist()


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize("equal_lengths", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_argsort_desc_within_equals_lexsort(monkeypatch, accel, equal_lengths, seed):
    """The per-query sort (C merge sort, NumPy matrix sort, or lexsort) is the stable (query, -score)
    order: segments stay in place, equal scores keep their row order."""
    from ragrade.data.ranking import argsort_desc_within

    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    rng = np.random.default_rng(seed)
    nq = int(rng.integers(1, 60))
    counts = np.full(nq, int(rng.integers(1, 70))) if equal_lengths else rng.integers(0, 70, size=nq)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    scores = np.round(rng.normal(size=int(offsets[-1])), int(rng.integers(0, 3)))  # rounding makes ties
    seg = np.repeat(np.arange(nq), counts)
    expected = np.lexsort((-scores, seg))
    assert np.array_equal(argsort_desc_within(scores, offsets), expected)
    if accel:
        for workers in (2, 3):
            assert np.array_equal(_ingest.sort_segments_desc(scores, offsets, workers=workers), expected)


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize("ones", [0, 3, 400])
@pytest.mark.parametrize("seed", range(4))
def test_a_boolean_is_found_wherever_it_is_among_numbers(accel, ones, seed):
    """A boolean reads as 0.0 or 1.0: the fallback looks at those values only, one by one when they are few
    and all at once when they are many (grades); each way finds the boolean, and refuses nothing else."""
    rng = np.random.default_rng(seed)
    dicts = [{f"d{j}": float(rng.random()) + 2 for j in range(int(rng.integers(0, 30)))} for _ in range(40)]
    slots = [(i, k) for i, d in enumerate(dicts) for k in d]
    for n, at in enumerate(rng.choice(len(slots), size=min(ones, len(slots) - 1), replace=False).tolist()):
        i, k = slots[at]
        dicts[i][k] = [1, 0.0, np.int64(1), np.float32(0)][n % 4]  # numbers equal to 0 and 1
    assert scan_values(dicts, use_accel=accel)[0] == OK
    floats = [(i, k) for i, k in slots if type(dicts[i][k]) is float]  # (not one of the planted numbers)
    i, k = floats[int(rng.integers(len(floats)))]
    dicts[i][k] = [True, False, np.True_, np.False_][seed]
    assert scan_values(dicts, use_accel=accel)[0] == NON_NUMERIC


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize(("ids", "want"), [
    ([], None),
    (["a", "bb", "ccc", "dddd", "e" * 8, "f" * 9, "g" * 17], None),
    (["a", "b\x00"], 1),
    (["\x00"], 0),
    (["x" * 20 + "\x00", "\x00"], 0),
    (["ab", "\u0100b", "\u0100\x00"], 2),
    (["\U0001f600", "\U0001f600\x00x"], 1),
    ([7, None, "ok", "no\x00"], 3),  # items that are not str are passed over
    ([np.str_("a"), np.str_("b\x00")], 1),  # str subclasses are str
    (["", "\x01\x7f\x80\xff"], None),
])
@pytest.mark.parametrize("as_array", [False, True])
def test_first_nul(monkeypatch, accel, ids, want, as_array):
    from ragrade.data.ids import first_nul

    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    given = np.array([*ids, None], dtype=object)[:-1] if as_array else list(ids)
    assert first_nul(given) == want
    if as_array and len(given) > 1:  # a strided view is copied, not misread
        backwards = [i for i, v in enumerate(ids[::-1]) if isinstance(v, str) and "\x00" in v]
        assert first_nul(given[::-1]) == (backwards[0] if backwards else None)


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize(("ids", "want"), [
    ([], (True, None)),
    (["a", "bb", "e" * 8, "f" * 9, "g" * 17, "h" * 33], (True, None)),
    (["a", "b\x00", "\x00"], (True, 1)),
    (["ab", "\u0100b", "\u0100\x00"], (True, 2)),
    ([np.str_("a"), np.str_("b\x00")], (True, 1)),  # str subclasses are str
    (["a", 7], (False, None)),
    (["a\x00", None], (False, None)),  # not all str: the NUL is left to the path that converts them
    ([b"x", "y"], (False, None)),
])
@pytest.mark.parametrize("as_array", [False, True])
def test_str_ids_is_the_kind_and_the_first_nul_in_one_pass(monkeypatch, accel, ids, want, as_array):
    from ragrade._arrays import infer_kind
    from ragrade.data.ids import first_nul, str_ids

    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    given = np.array([*ids, None], dtype=object)[:-1] if as_array else list(ids)
    assert str_ids(given) == want
    arr = np.array([*ids, None], dtype=object)[:-1]
    all_str = infer_kind(arr) in ("string", "empty")  # what the callers asked before, in two passes
    assert want == (all_str, first_nul(arr) if all_str else None)


@pytest.mark.parametrize("accel", MODES)
@pytest.mark.parametrize("first", ["a", "\x01", "\xe9", "\u0100", "\U0001f600"])  # str's widths; "\x01"
def test_a_nul_is_found_at_every_position_of_every_length(monkeypatch, accel, first):
    """The C scan reads short ids in overlapping words: every length up to 40 and every position of the NUL,
    and no false alarm on bytes next to zero (0x01, 0x7f, 0x80, 0xff; ASCII ids of characters 0x01..0x1a)."""
    from ragrade.data.ids import first_nul

    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    for n in range(1, 41):
        clean = "".join(chr(ord(first) + i % 26) for i in range(n))
        assert scan_values([{clean: 1.0, "\x01\x7f\x80\xff" * n: 2.0}], use_accel=accel)[0] == OK
        assert first_nul([clean]) is None
        for i in range(n):
            bad = clean[:i] + "\x00" + clean[i + 1:]
            assert scan_values([{clean: 1.0}, {bad: 1.0}], use_accel=accel)[0] == NUL_KEY, (n, i)
            assert first_nul([clean, bad]) == 1, (n, i)
