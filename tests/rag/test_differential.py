"""Differential tests against the real peer packages, on randomised ids and texts, to 1e-12.

Each test skips when its peer is not importable. The peers are heavy and are not test dependencies of
ragrade; to run these, install them beside ragrade (see docs/profiles.md), e.g. in a virtual env made
with ``--system-site-packages``: ``pip install ragas "langchain-community<0.4"``, ``pip install
continuous-eval``, ``pip install llama-index-core``; then ``python -m pytest tests/rag/test_differential.py``.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import warnings

import pytest

from ragrade.errors import RagradeWarning
from reference import evaluate_profile

N = 150  # random examples per test


def _close(a: float, b: float) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abs(a - b) <= 1e-12


def _ids(rng: random.Random, pool: int, lo: int, hi: int) -> list[str]:
    return [f"d{rng.randrange(pool)}" for _ in range(rng.randint(lo, hi))]


_WORDS = ["Paris", "is", "the", "capital", "of", "France", ".", "Lyon", "a", "major", "city", "in", "country",
          "largest", "also", "and", "river"]


def _text(rng: random.Random, lo: int = 0, hi: int = 18) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).replace(" . ", ". ")


def _mutate(rng: random.Random, t: str) -> str:
    w = t.split(" ")
    for _ in range(rng.randint(0, 3)):
        if w and rng.random() < 0.5:
            w.pop(rng.randrange(len(w)))
        else:
            w.insert(rng.randint(0, len(w)), rng.choice(_WORDS))
    return " ".join(w)


def _texts_case(rng: random.Random):
    gts = [_text(rng, 1) for _ in range(rng.randint(1, 3))]
    ret = []
    for _ in range(rng.randint(1, 5)):
        ret.append(_mutate(rng, rng.choice(gts)) if rng.random() < 0.6 else _text(rng))
    return gts, ret


def _profile(gold, ret, metrics, profile, matcher=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return evaluate_profile(gold, ret, metrics, profile, matcher=matcher).per_query


# -- LlamaIndex ------------------------------------------------------------------------------------


def test_llamaindex_id_metrics():
    li = pytest.importorskip("llama_index.core.evaluation.retrieval.metrics")
    rng = random.Random(7)
    peers = {"hit_rate": li.HitRate(), "rr": li.MRR(), "precision": li.Precision(), "recall": li.Recall(),
             "ap": li.AveragePrecision(), "ndcg": li.NDCG()}
    gold, ret = [], []
    for _ in range(N):
        gold.append(_ids(rng, 12, 1, 5))
        ret.append(_ids(rng, 12, 1, 8))
    ours = _profile([[[g] for g in gl] for gl in gold], ret, list(peers), "llamaindex")
    for i, (g, r) in enumerate(zip(gold, ret, strict=True)):
        for name, metric in peers.items():
            want = metric.compute(expected_ids=g, retrieved_ids=r).score
            assert _close(ours[name].iloc[i], want), (name, g, r, ours[name].iloc[i], want)


def test_llamaindex_empty_inputs_raise_in_peer_nan_here():
    li = pytest.importorskip("llama_index.core.evaluation.retrieval.metrics")
    for g, r in (([], ["a"]), (["a"], [])):
        with pytest.raises(ValueError):
            li.Precision().compute(expected_ids=g, retrieved_ids=r)
        assert math.isnan(_profile([[[x] for x in g]], [r], ["precision"], "llamaindex")["precision"].iloc[0])


# -- continuous-eval -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ce():
    os.environ.setdefault("CONTINUOUS_EVAL_DO_NOT_TRACK", "true")
    return pytest.importorskip("continuous_eval.metrics.retrieval")


@pytest.mark.parametrize("strategy", ["rouge", "exact"])
def test_continuous_eval_texts(ce, strategy):
    from ragrade.compat import continuous_eval as ours_ce

    rng = random.Random(11 if strategy == "rouge" else 12)
    peer_s = ce.RougeChunkMatch() if strategy == "rouge" else ce.ExactChunkMatch()
    our_s = ours_ce.RougeChunkMatch() if strategy == "rouge" else ours_ce.ExactChunkMatch()
    ranked, prf = ce.RankedRetrievalMetrics(peer_s), ce.PrecisionRecallF1(peer_s)
    cases = []
    for _ in range(N):
        gts, ret = _texts_case(rng)
        if strategy == "exact":
            ret = [rng.choice(gts) if rng.random() < 0.5 else r for r in ret]
        cases.append((gts, ret))
    our_ranked = ours_ce.RankedRetrievalMetrics(our_s).batch([c[1] for c in cases], [c[0] for c in cases])
    our_prf = ours_ce.PrecisionRecallF1(our_s).batch([c[1] for c in cases], [c[0] for c in cases])
    for (gts, ret), a, b in zip(cases, our_ranked, our_prf, strict=True):
        want = ranked.compute(retrieved_context=ret, ground_truth_context=gts)
        for k, v in want.items():
            assert _close(a[k], v), (k, gts, ret, a[k], v)
        want = prf.compute(retrieved_context=ret, ground_truth_context=gts)
        for k, v in want.items():
            assert _close(b[k], v), (k, gts, ret, b[k], v)


def test_continuous_eval_empty_inputs(ce):
    from ragrade.compat import continuous_eval as ours_ce

    peer_r = ce.RankedRetrievalMetrics(ce.RougeChunkMatch())
    peer_p = ce.PrecisionRecallF1(ce.RougeChunkMatch())
    ours_r = ours_ce.RankedRetrievalMetrics(ours_ce.RougeChunkMatch())
    ours_p = ours_ce.PrecisionRecallF1(ours_ce.RougeChunkMatch())
    args = {"retrieved_context": [], "ground_truth_context": ["Paris is big."]}
    assert ours_r.compute(**args) == peer_r.compute(**args)
    assert ours_p.compute(**args) == peer_p.compute(**args)
    args = {"retrieved_context": ["Paris is big."], "ground_truth_context": []}
    assert ours_p.compute(**args) == peer_p.compute(**args)
    with pytest.raises(ZeroDivisionError):
        peer_r.compute(**args)
    with pytest.raises(ZeroDivisionError):
        ours_r.compute(**args)


def test_rouge_union_scores_equal_rouge_package(ce):
    rouge = pytest.importorskip("rouge")
    from ragrade.matching.rouge import rouge_l_union

    rng = random.Random(3)
    pairs = [(_text(rng, 0, 30), _text(rng, 0, 30)) for _ in range(2000)]
    pairs += [("a. . b", "b . a"), ("...", "a"), ("", "a"), ("a  b.c", "c. a b ")]
    got = rouge_l_union([p[0] for p in pairs], [p[1] for p in pairs])
    r = rouge.Rouge()
    for (hyp, ref), row in zip(pairs, got, strict=True):
        try:
            sc = r.get_scores(hyp, ref, ignore_empty=True)[0]["rouge-l"]
            want = (sc["p"], sc["r"], sc["f"])
        except Exception:
            want = (math.nan,) * 3
        for x, y in zip(row.tolist(), want, strict=True):
            assert _close(x, y), (hyp, ref, row, want)


# -- Ragas -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ragas():
    try:
        import ragas.metrics as rm
        from ragas.dataset_schema import SingleTurnSample
    except Exception as exc:  # ragas' import chain fails with some langchain-community releases
        pytest.skip(f"ragas not importable: {exc}")
    return rm, SingleTurnSample


def _ragas_score(metric, sample):
    try:
        return float(asyncio.run(metric._single_turn_ascore(sample, None)))
    except ValueError:  # max() of an empty list: the peer raises; ragrade reports NaN
        return math.nan


def test_ragas_non_llm_text_metrics(ragas):
    rm, Sample = ragas
    rng = random.Random(5)
    cp, cr = rm.NonLLMContextPrecisionWithReference(), rm.NonLLMContextRecall()
    cases = [_texts_case(rng) for _ in range(N)]
    ours = _profile([[[g] for g in c[0]] for c in cases], [c[1] for c in cases], ["context_precision", "recall"],
                    "ragas", matcher="profile")
    for i, (gts, ret) in enumerate(cases):
        s = Sample(retrieved_contexts=ret, reference_contexts=gts)
        assert _close(ours["context_precision"].iloc[i], _ragas_score(cp, s)), (gts, ret)
        assert _close(ours["recall"].iloc[i], _ragas_score(cr, s)), (gts, ret)


def test_ragas_empty_inputs(ragas):
    rm, Sample = ragas
    cp, cr = rm.NonLLMContextPrecisionWithReference(), rm.NonLLMContextRecall()
    p, r = rm.IDBasedContextPrecision(), rm.IDBasedContextRecall()
    for gts, ret in (([], ["a b"]), (["a b"], []), ([], [])):
        ours = _profile([[[g] for g in gts]], [ret], ["context_precision", "recall"], "ragas", matcher="profile")
        s = Sample(retrieved_contexts=ret, reference_contexts=gts)
        assert _close(ours["context_precision"].iloc[0], _ragas_score(cp, s)), (gts, ret)
        assert _close(ours["recall"].iloc[0], _ragas_score(cr, s)), (gts, ret)
        ours = _profile([[[g] for g in gts]], [ret], ["precision", "recall"], "ragas")
        s = Sample(retrieved_context_ids=ret, reference_context_ids=gts)
        assert _close(ours["precision"].iloc[0], _ragas_score(p, s)), (gts, ret)
        assert _close(ours["recall"].iloc[0], _ragas_score(r, s)), (gts, ret)


def test_ragas_id_metrics(ragas):
    rm, Sample = ragas
    rng = random.Random(6)
    p, r = rm.IDBasedContextPrecision(), rm.IDBasedContextRecall()
    gold = [_ids(rng, 10, 0, 4) for _ in range(N)]
    ret = [_ids(rng, 10, 0, 6) for _ in range(N)]
    ours = _profile([[[g] for g in gl] for gl in gold], ret, ["precision", "recall"], "ragas")
    for i, (g, rr) in enumerate(zip(gold, ret, strict=True)):
        s = Sample(retrieved_context_ids=rr, reference_context_ids=g)
        assert _close(ours["precision"].iloc[i], _ragas_score(p, s)), (g, rr)
        assert _close(ours["recall"].iloc[i], _ragas_score(r, s)), (g, rr)


@pytest.mark.parametrize("measure", ["jaro", "jaro_winkler", "hamming"])
def test_ragas_other_distances(ragas, measure):
    rm, Sample = ragas
    from ragas.metrics._string import DistanceMeasure, NonLLMStringSimilarity

    from ragrade.matching import Fuzzy

    dm = {"jaro": DistanceMeasure.JARO, "jaro_winkler": DistanceMeasure.JARO_WINKLER,
          "hamming": DistanceMeasure.HAMMING}[measure]
    cp = rm.NonLLMContextPrecisionWithReference(distance_measure=NonLLMStringSimilarity(distance_measure=dm))
    rng = random.Random(21)
    cases = [_texts_case(rng) for _ in range(N)]
    ours = _profile([[[g] for g in c[0]] for c in cases], [c[1] for c in cases], ["context_precision"], "ragas",
                    matcher=Fuzzy(scorer=measure, threshold=0.5, op=">=", allow_empty=True))
    for i, (gts, ret) in enumerate(cases):
        s = Sample(retrieved_contexts=ret, reference_contexts=gts)
        assert _close(ours["context_precision"].iloc[i], _ragas_score(cp, s)), (gts, ret)
