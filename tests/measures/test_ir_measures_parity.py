"""Every ir-measures measure of issue 12 against ir-measures' own providers, per query, on random data.

ragrade reads ir-measures' names as ir-measures writes them (``str(measure)`` is handed to ragrade as is),
so each comparison also checks the name. Providers and their conventions:

* pytrec_eval (P, R, AP, nDCG with gain maps, Rprec, RR, Bpref, infAP, IPrec, Set*, Num*, Success and the
  judged_only forms): float32 scores (a grid of 1/8 keeps them exact), trec_eval's tie rule; measures
  reading gains get qrels without negative grades (docs/conventions.md);
* judged (Judged@k), accuracy (Accuracy@k), compat (Compat) and cwl_eval (RBP, NERR8-11, SDCG, INST,
  INSQ, BPM): they sort by score alone, so scores are distinct;
* gdeval (ERR@k, nDCG(dcg='exp-log2')@k): numeric query ids, grades up to 4, values printed with 5
  decimals (compared to 5e-6);
* pyndeval (alpha_nDCG@k, ERR_IA@k): subtopic judgments, in test_diversity.py.

Tolerance 1e-12 everywhere else. ``no_relevant="zero"`` (ir-measures scores such queries 0).
"""

from __future__ import annotations

import math
import shutil
import warnings

import numpy as np
import pytest

import ragrade
from ragrade import RagradeWarning
from ragrade.metrics import parse_metric

irm = pytest.importorskip("ir_measures")
pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")

DOCS = [f"d{i}" for i in range(1, 31)]


def collection(seed: int, *, distinct: bool, numeric: bool = False, negative: bool = True, max_grade: int = 3,
               n_queries: int = 30):
    rng = np.random.default_rng(seed)
    grades = [-1, 0, 0, 1, 1, 2, 3] if negative else [0, 0, 1, 1, 2, 3]
    grades = [g for g in grades if g <= max_grade]
    qrels, run = {}, {}
    for i in range(n_queries):
        q = str(100 + i) if numeric else f"q{i}"
        judged = rng.choice(DOCS, int(rng.integers(1, 12)), replace=False)
        qrels[q] = {str(d): int(rng.choice(grades)) for d in judged}
        if rng.random() < 0.9:
            docs = rng.choice(DOCS, int(rng.integers(1, 25)), replace=False)
            if distinct:
                scores = (rng.permutation(len(docs)) + 1.0) / 8.0
            else:
                scores = rng.choice(np.arange(0, 9) / 8.0, len(docs))
            run[q] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
    return qrels, run


def clamp(qrels):
    return {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}


def compare(provider, measures, qrels, run, tol=1e-12, **kw) -> int:
    want = {(m.query_id, str(m.measure)): m.value for m in provider.iter_calc(measures, qrels, run)}
    # ir-measures computes IPrec through pytrec_eval, i.e. trec_eval 9's count of relevant documents (cut=trec9);
    # ragrade's default follows trec_eval 10 (docs/conventions.md, "trec_eval 9 and 10").
    names = [(str(m), parse_metric(str(m)).with_params(cut="trec9")) if str(m).startswith("IPrec") else str(m)
             for m in measures]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        got = ragrade.evaluate(qrels, run, names, no_relevant="zero", **kw).per_query
    n, worst = 0, 0.0
    for (q, name), w in want.items():
        if q not in run and name.startswith(("NumQ", "NumRel")) and not name.startswith("NumRelRet"):
            # ir-measures scores a query missing from the run 0 on every measure, its count of queries and
            # of relevant documents included; ragrade counts it (trec_eval -c), docs/conventions.md.
            assert w == 0
            continue
        g = float(got.at[q, name])
        assert math.isclose(g, w, rel_tol=0, abs_tol=tol), (provider.NAME, q, name, g, w, qrels.get(q), run.get(q))
        worst = max(worst, abs(g - w))
        n += 1
    assert n > 0
    print(f"\nir-measures {provider.NAME}: {n} values ({', '.join(sorted({str(m) for m in measures}))}), "
          f"max difference {worst:.3g}")
    return n


PYTREC = [
    "P@5", "P(rel=2)@10", "R@5", "R@20", "AP", "AP@10", "AP(rel=2)", "Rprec", "RR", "Bpref", "Bpref(rel=2)",
    "infAP", "IPrec@0.0", "IPrec@0.3", "IPrec@1.0", "SetP", "SetR", "SetF", "SetF(beta=0.5)", "SetAP",
    "SetP(relative=True)", "NumQ", "NumRet", "NumRet(rel=1)", "NumRel", "NumRelRet", "Success@1", "Success@10",
    "P(judged_only=True)@5", "AP(judged_only=True)", "Rprec(judged_only=True)", "SetP(judged_only=True)",
]
PYTREC_GAINS = ["nDCG", "nDCG@10", "nDCG(judged_only=True)@10"]
GAIN_MAPS = ["nDCG(gains={0:0,1:1,2:3,3:7})@10", "nDCG(gains={0:1,1:2,2:5,3:9})", "nDCG(gains={1:0,2:1,3:1})@5"]


@pytest.mark.parametrize("seed", range(5))
def test_pytrec_eval_provider(seed):
    qrels, run = collection(seed, distinct=False)
    p = irm.pytrec_eval
    n = compare(p, [irm.parse_measure(m) for m in PYTREC], qrels, run)
    n += compare(p, [irm.parse_measure(m) for m in PYTREC_GAINS], clamp(qrels), run)
    for m in GAIN_MAPS:  # one gain map per call (ir-measures mixes maps within a call, docs/conventions.md)
        n += compare(p, [irm.parse_measure(m)], clamp(qrels), run)
    assert n > 500


def test_judged_provider():
    for seed in range(4):
        qrels, run = collection(seed, distinct=True)
        run = {q: docs for q, docs in run.items() if docs}
        assert compare(irm.judged, [irm.parse_measure(m) for m in ("Judged@1", "Judged@5", "Judged@10", "Judged@50")],
                       qrels, run) > 50


CWL = ["RBP(rel=1)", "RBP(p=0.5,rel=2)", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@5", "NERR10(max_rel=3)",
       "NERR10(p=0.5,max_rel=3)", "NERR11(max_rel=3)", "NERR11(T=2,max_rel=3)", "SDCG(max_rel=3)@10",
       "SDCG(min_rel=1,max_rel=2)@5", "INST(max_rel=3)", "INST(T=2,max_rel=3)", "INSQ(max_rel=3)",
       "BPM(max_rel=3)@10", "BPM(T=2,max_rel=3)@5"]


@pytest.mark.parametrize("seed", range(3))
def test_cwl_eval_provider(seed):
    pytest.importorskip("cwl")
    import logging

    logging.getLogger("ir_measures.cwl_eval").setLevel(logging.ERROR)
    qrels, run = collection(seed, distinct=True)
    assert compare(irm.cwl_eval, [irm.parse_measure(m) for m in CWL], qrels, run) > 300


def test_compat_provider():
    for seed in range(4):
        qrels, run = collection(seed, distinct=True)
        assert compare(irm.compat, [irm.parse_measure(m) for m in ("Compat", "Compat(p=0.8)",
                                                                    "Compat(p=0.9,normalize=False)")],
                       qrels, run) > 50


def test_accuracy_provider():
    """ir-measures divides by zero when the top k holds no non-relevant document; such queries are left out
    of the random collections (ragrade: NaN, not counted)."""
    n = 0
    for seed in range(6):
        qrels, run = collection(seed, distinct=True)
        keep = {}
        for q, docs in run.items():
            top = sorted(docs, key=lambda d: -docs[d])
            if any(qrels[q].get(d, 0) < 1 for d in top[:5]) and any(qrels[q].get(d, 0) < 2 for d in top[:5]):
                keep[q] = docs
        n += compare(irm.accuracy, [irm.parse_measure(m) for m in ("Accuracy@5", "Accuracy(rel=2)@5")], qrels,
                     keep, missing_run="drop")
    assert n > 50


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
def test_gdeval_provider():
    n = 0
    for seed in range(3):
        qrels, run = collection(seed, distinct=True, numeric=True, max_grade=4)
        qrels = clamp(qrels)
        n += compare(irm.gdeval, [irm.parse_measure(m) for m in ("ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@10")],
                     qrels, run, tol=5.000001e-6)
    assert n > 100


def test_names_round_trip_with_ir_measures():
    """Every ir-measures string used above parses in ragrade, and ragrade's canonical form parses back."""
    from ragrade.metrics import parse_metric

    for text in [*PYTREC, *PYTREC_GAINS, *GAIN_MAPS, *CWL, "Judged@10", "ERR@10", "Compat(p=0.8)", "Accuracy@5",
                 "alpha_nDCG@20", "ERR_IA@10", "RBP(p=0.8)"]:
        m = parse_metric(text)
        assert parse_metric(str(m)) == m, text
