"""The span kernels (ragrade.kernels.spans) against the slow reference of tests/spans/_reference.py, on seeded
random cases (overlapping, nested and touching chunks, repeated chunks, chunks of other documents, overlapping
gold spans) under the three semantics, at several cutoffs and with retrieve=-1; and the interval primitives
against Python sets, with hypothesis."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragrade.kernels import spans as K
from ragrade.metrics import parse_metric
from reference import PROPERTY_SETTINGS

from . import _reference as ref


def inputs(case: ref.Case, semantics: str = "default") -> K.SpanInputs:
    base, at = {}, 0
    for d, n in case.docs.items():
        base[d] = at
        at += n + 1
    gq, gs, ge = [], [], []
    for q, spans in enumerate(case.gold):
        for d, s, e in spans:
            gq.append(q), gs.append(base[d] + s), ge.append(base[d] + e)
    rq, rr, rs, re_ = [], [], [], []
    for q, chunks in enumerate(case.ranked):
        for i, (d, s, e) in enumerate(chunks):
            rq.append(q), rr.append(i), rs.append(base[d] + s), re_.append(base[d] + e)
    cs = np.array([base[d] + s for d, s, _ in case.chunking], dtype=np.int64)
    ce = np.array([base[d] + e for d, _, e in case.chunking], dtype=np.int64)
    order = np.argsort(cs, kind="stable")
    arr = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    return K.SpanInputs(len(case.gold), arr(gq), arr(gs), arr(ge), arr(rq), arr(rr), arr(rs), arr(re_),
                        cs[order], ce[order], semantics=semantics)


SLOW = {"default": ref.default, "chroma": ref.chroma, "legalbench_rag": ref.legalbench}
KERNELS = {"recall": K.span_recall, "precision": K.span_precision, "iou": K.span_iou}


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@pytest.fixture(params=["rows", "flat"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of computing the lengths: row by row (few chunks per query) and over the flat arrays."""
    if request.param == "flat":
        monkeypatch.setattr(K, "DENSE_MAX", 0)
    return str(request.param)


@pytest.mark.parametrize("semantics", K.SEMANTICS)
@pytest.mark.parametrize("seed", range(12))
def test_measures_equal_the_slow_reference(semantics: str, seed: int, path: str) -> None:
    case = ref.random_case(seed, overlap_gold=semantics != "legalbench_rag" and seed % 3 == 0)
    inp = inputs(case, semantics)
    for k in (None, 1, 3, 5):
        for what, kernel in KERNELS.items():
            if semantics == "legalbench_rag" and what == "iou":
                continue
            metric = parse_metric(f"span_{what}" + ("" if k is None else f"@{k}"))
            got = kernel(metric, inp)
            for q, gold in enumerate(case.gold):
                want = SLOW[semantics](gold, case.ranked[q][:k])[what]
                assert same(got[q], want), (what, k, q, got[q], want)


@pytest.mark.parametrize("semantics", ["default", "chroma"])
@pytest.mark.parametrize("seed", range(12))
def test_precision_omega_and_retrieve_minus_one(semantics: str, seed: int, path: str) -> None:
    case = ref.random_case(100 + seed, overlap_gold=seed % 2 == 0)
    inp = inputs(case, semantics)
    touch = semantics == "chroma"
    om = K.span_precision_omega(parse_metric("span_precision_omega"), inp)
    for q, gold in enumerate(case.gold):
        assert same(om[q], ref.omega(gold, case.chunking, touch)), q
    for cap in (None, 2):
        for what, kernel in KERNELS.items():
            metric = parse_metric(f"span_{what}(retrieve=-1)" + ("" if cap is None else f"@{cap}"))
            got = kernel(metric, inp)
            for q, gold in enumerate(case.gold):
                k = ref.holding(gold, case.chunking, touch)
                k = min(k, cap if cap is not None else (K.CHROMA_CAP if touch else k))
                want = SLOW[semantics](gold, case.ranked[q][:k])[what]
                assert same(got[q], want), (what, cap, q)


def test_legalbench_has_no_iou() -> None:
    inp = inputs(ref.random_case(1), "legalbench_rag")
    with pytest.raises(ValueError, match="precision and recall only"):
        K.span_iou(parse_metric("span_iou@5"), inp)


intervals = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40), st.integers(0, 12)), max_size=25)


@PROPERTY_SETTINGS
@given(intervals, intervals)
def test_union_and_covered_equal_python_sets(a: list, b: list) -> None:
    n = 4
    ag = np.array([g for g, _, _ in a], dtype=np.int64)
    a0 = np.array([s for _, s, _ in a], dtype=np.int64)
    a1 = a0 + np.array([w for _, _, w in a], dtype=np.int64)
    bg = np.array([g for g, _, _ in b], dtype=np.int64)
    b0 = np.array([s for _, s, _ in b], dtype=np.int64)
    b1 = b0 + np.array([w for _, _, w in b], dtype=np.int64)
    width = 60
    u = K.union_length(ag, a0, a1, n, width)
    for g in range(n):
        pts = {x for gg, s, e in zip(ag, a0, a1, strict=True) if gg == g for x in range(s, e)}
        assert u[g] == len(pts)
    cov = K.covered(K.keys(ag, a0, width), K.keys(ag, a1, width), K.pieces(K.keys(bg, b0, width), K.keys(bg, b1, width)))
    for i, (g, s, e) in enumerate(zip(ag, a0, a1, strict=True)):
        pts = {x for gg, ss, ee in zip(bg, b0, b1, strict=True) if gg == g for x in range(ss, ee)}
        assert cov[i] == len(set(range(s, e)) & pts)


@PROPERTY_SETTINGS
@given(st.integers(0, 10_000), st.sampled_from(["default", "chroma"]))
def test_properties_bounds_monotone_permutation(seed: int, semantics: str) -> None:  # (the row-wise path)
    """Bounds, k monotonicity of recall, permutation invariance of the whole list, and one chunk holding the
    whole document = recall 1 (default: precision = IoU = |R| / |doc|)."""
    case = ref.random_case(seed, n_queries=4)
    inp = inputs(case, semantics)
    prev = np.zeros(len(case.gold))
    for k in (1, 2, 4, 8, 16):
        r = K.span_recall(parse_metric(f"span_recall@{k}"), inp)
        p = K.span_precision(parse_metric(f"span_precision@{k}"), inp)
        iou = K.span_iou(parse_metric(f"span_iou@{k}"), inp)
        assert np.all((r >= 0) & (r <= 1 + 1e-12)) and np.all(r >= prev - 1e-12)
        assert np.all(np.isnan(p) | ((p >= 0) & (p <= 1))) and np.all(np.isnan(iou) | (iou <= np.minimum(r, 1) + 1e-12))
        prev = r
    rng = np.random.default_rng(seed)
    shuffled = ref.Case(case.docs, case.chunking, case.gold, [list(rng.permutation(np.array(c, dtype=object)))
                                                              if c else [] for c in case.ranked])
    shuffled.ranked = [[(str(d), int(s), int(e)) for d, s, e in c] for c in shuffled.ranked]
    for what, kernel in KERNELS.items():
        a = kernel(parse_metric(f"span_{what}"), inp)
        b = kernel(parse_metric(f"span_{what}"), inputs(shuffled, semantics))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    whole = ref.Case(case.docs, case.chunking, case.gold,
                     [[(d, 0, case.docs[d]) for d in dict.fromkeys(g[0] for g in gold)] for gold in case.gold])
    w = inputs(whole, "default")
    np.testing.assert_allclose(K.span_recall(parse_metric("span_recall"), w), 1.0)


def test_tokens_count_tokens_starting_inside() -> None:
    text = "alpha beta  gamma\ndelta"
    starts = K.token_starts(text, "whitespace")
    assert starts.tolist() == [0, 6, 12, 18]
    case = ref.Case({"d0": len(text)}, [("d0", 0, 11), ("d0", 11, 23)], [[("d0", 6, 17)]], [[("d0", 0, 11)]])
    inp = inputs(case)
    inp.token_map = lambda name: starts
    m = parse_metric("span_recall(tokenizer=whitespace)")
    # gold holds "beta" and "gamma" (2 tokens); the chunk holds "alpha" and "beta": 1 of 2
    assert K.span_recall(m, inp)[0] == 0.5
    assert K.span_precision(parse_metric("span_precision(tokenizer=whitespace)"), inp)[0] == 0.5


def test_tiktoken_offsets_through_a_toy_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken's own BPE over a small encoding built here (its published encodings are downloaded on first
    use: no network in tests): a length counts the tokens starting inside, each byte-token of a split
    character included."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"he": 256, b"ll": 257, b"hell": 258, b" w": 259})
    toy = tiktoken.Encoding("toy", pat_str=r""" ?\w+| ?[^\s\w]+|\s+""", mergeable_ranks=ranks, special_tokens={})
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: toy)
    text = "hello world, héllo"
    starts = K.token_starts(text, "cl100k_base")
    assert starts.tolist() == [0, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 14, 15, 17]
    case = ref.Case({"d0": len(text)}, [("d0", 0, 12), ("d0", 12, len(text))], [[("d0", 13, 16)]],
                    [[("d0", 12, len(text))]])
    inp = inputs(case)
    inp.token_map = lambda name: starts
    # gold [13, 16) holds the tokens starting at 13, 14, 14, 15; the chunk [12, 18) six tokens
    assert K.span_precision(parse_metric("span_precision(tokenizer=tiktoken)"), inp)[0] == pytest.approx(4 / 6)
