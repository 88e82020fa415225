"""``profile="ir_measures"`` against ir-measures 0.4.3 on every measure ir-measures defines, per query to
1e-12, through ``ir_measures.iter_calc`` and ``ir_measures.calc_aggregate`` (docs/conventions.md,
"Providers of ir-measures and ranx's tie order").

The collections are made to be hard: scores on a 0.1 grid (many ties, which every provider breaks its own
way), queries missing from the run, queries only in the run, graded and negative grades, queries without
a relevant document. Limits of ir-measures itself, and how the tests step around them:

* nDCG through pytrec_eval corrupts memory on negative grades (docs/conventions.md, section 3): nDCG
  measures get qrels whose negative grades are 0 (worth 0 either way);
* Accuracy divides by zero when the top k holds no non-relevant document: such queries are left out;
* gdeval needs numeric query ids and a relevant document in every query (it divides by the ideal DCG);
* two measures with different invocation keys in one call go wrong in pytrec_eval (gain maps) and pyndeval
  (the second invocation reads an exhausted iterator): each measure is computed in a call of its own;
* ``nDCG(dcg='exp-log2')`` without a cutoff goes to ir-measures' ranx provider, which fails with pandas >= 3
  (string columns are no longer of dtype object): it is compared with ranx's ``ndcg_burges`` itself in
  test_ranx_ties.py.
"""

from __future__ import annotations

import logging
import math
import shutil
import warnings

import ir_measures as irm
import numpy as np
import pandas as pd
import pytest

import ragrade
from ragrade import RagradeWarning

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")
logging.getLogger("ir_measures").setLevel(logging.ERROR)
logging.getLogger("ir_measures.cwl_eval").setLevel(logging.ERROR)

DOCS = [f"d{i}" for i in range(40)]

PYTREC = ["P@5", "P(rel=2)@10", "P@30", "R@5", "R@20", "AP", "AP@10", "AP(rel=2)", "Rprec", "Rprec(rel=2)", "RR",
          "RR(rel=2)", "Bpref", "Bpref(rel=2)", "infAP", "IPrec@0.0", "IPrec@0.3", "IPrec@1.0", "SetP", "SetR",
          "SetF", "SetF(beta=0.5)", "SetAP", "SetP(relative=True)", "NumQ", "NumRet", "NumRet(rel=1)",
          "NumRel", "NumRelRet", "Success@1", "Success@10", "Recall@10", "P(judged_only=True)@5", "AP(judged_only=True)", "Rprec(judged_only=True)",
          "SetP(judged_only=True)"]
#: ir-measures' other spellings of measures above (one ragrade metric each: computed in a call of their own)
ALIASES = ["SetRelP", "MAP", "MRR", "BPref", "RPrec", "Precision@5"]
NDCG = ["nDCG", "nDCG@10", "NDCG@5", "nDCG(judged_only=True)@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10",
        "nDCG(gains={0:1,1:2,2:5,3:9})", "nDCG(gains={1:0,2:1,3:1})@5"]
MSMARCO = ["RR@5", "RR@10", "RR(rel=2)@10"]
OTHERS = ["Judged@1", "Judged@5", "Judged@10", "Judged", "Compat", "Compat(p=0.8)", "Compat(p=0.9,normalize=False)"]
CWL = ["RBP(rel=1)", "RBP(p=0.95,rel=2)", "RBP(p=0.5,rel=2)", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@5",
       "NERR10(max_rel=3)", "NERR10(p=0.5,max_rel=3)", "NERR11(max_rel=3)", "NERR11(T=2.0,max_rel=3)",
       "SDCG(max_rel=3)@10", "SDCG(min_rel=1,max_rel=3)@10", "INST(max_rel=3)", "INST(T=2.0,max_rel=3)",
       "INSQ(max_rel=3)", "BPM(max_rel=3)@10", "BPM(T=2.0,max_rel=3)@5"]
ACCURACY = ["Accuracy@5", "Accuracy(rel=2)@5", "Accuracy"]
GDEVAL = ["ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@10"]
DIVERSITY = ["AP_IA", "AP_IA(rel=2)", "MAP_IA", "P_IA@5", "P_IA@20", "NRBP", "NRBP(alpha=0.3,beta=0.7)", "nNRBP",
             "nERR_IA@5", "nERR_IA@20", "StRecall@10", "StRecall(rel=2)@20", "alpha_DCG@1", "alpha_DCG@10",
             "α_DCG@5", "alpha_nDCG@10", "α_nDCG@20", "ERR_IA@10"]


def collection(seed: int, *, numeric: bool = False, every_query_relevant: bool = False):
    """Qrels with grades -1..3 (some queries without a relevant document), a run on a 0.1 grid with some
    qrels queries missing and some queries of its own."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(30):
        q = str(100 + i) if numeric else f"q{i}"
        judged = rng.choice(DOCS, int(rng.integers(1, 14)), replace=False)
        qrels[q] = {str(d): int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        if every_query_relevant and max(qrels[q].values()) < 1:
            qrels[q][str(judged[0])] = 2
        if rng.random() < 0.85:
            docs = rng.choice(DOCS, int(rng.integers(1, 35)), replace=False)
            run[q] = {str(d): float(np.round(rng.integers(0, 11) * 0.1, 1)) for d in docs}
    for j in range(3):  # queries only in the run
        run[str(900 + j) if numeric else f"x{j}"] = {"d1": 0.5, "d2": 0.5, "d3": 0.1}
    assert any(q not in run for q in qrels) and any(q not in qrels for q in run)
    return qrels, run


def clamp(qrels):
    return {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}


def close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def ours(name: str) -> str:
    """The name handed to ragrade: as written, but ASCII (ir-measures' own str() of alpha_DCG for α_DCG)."""
    return name if name.isascii() else str(irm.parse_measure(name))


def compare(names, qrels, run, evaluate=None) -> tuple[int, float]:
    """Each measure in its own ir-measures call; every reported (query, measure) equal per query, the
    queries ir-measures does not report NaN in ragrade, and calc_aggregate equal to ragrade's mean."""
    names = [ours(n) for n in names]
    evaluate = evaluate or (lambda names: ragrade.evaluate(qrels, run, names, profile="ir_measures"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        res = evaluate(names)
    n, worst = 0, 0.0
    for name in names:
        m = irm.parse_measure(name)
        want = {r.query_id: r.value for r in irm.iter_calc([m], qrels, run)}
        got = res.per_query[name]
        for q, w in want.items():
            g = float(got[q])
            assert close(g, w), (name, q, g, w, qrels.get(q), run.get(q))
            worst = max(worst, 0.0 if math.isnan(w) else abs(g - w))
            n += 1
        unreported = [q for q in got.index if q not in want]
        assert all(math.isnan(float(got[q])) for q in unreported), (name, unreported)
        agg = irm.calc_aggregate([m], qrels, run)[m]
        assert close(float(res.means[name]), float(agg)), (name, res.means[name], agg)
        n += 1
    return n, worst


def report(tool: str, n: int, worst: float) -> None:
    print(f"\nir-measures {tool}: {n} values compared, max difference {worst:.3g}")


@pytest.mark.parametrize("seed", range(4))
def test_pytrec_eval_provider_with_ties_and_missing_queries(seed):
    qrels, run = collection(seed)
    n, worst = compare(PYTREC + MSMARCO + OTHERS + CWL, qrels, run)
    n2, worst2 = compare(NDCG, clamp(qrels), run)
    n3, worst3 = compare(ALIASES, qrels, run)
    n2, worst2 = n2 + n3, max(worst2, worst3)
    report("pytrec_eval, msmarco, judged, compat, cwl_eval", n + n2, max(worst, worst2))
    assert n + n2 > 2000


def test_accuracy_provider_reports_only_its_queries():
    """Accuracy is reported only for queries of both sides with a relevant document in the top k (and is
    left out of the mean otherwise); queries where ir-measures divides by zero are removed from the run."""
    total, worst = 0, 0.0
    for seed in range(6):
        qrels, run = collection(seed)
        keep = {}
        for q, docs in run.items():
            if q not in qrels:
                keep[q] = docs
                continue
            top = sorted(docs, key=lambda d: -docs[d])  # the input order among equal scores, as ir-measures
            if all(any(qrels[q].get(d, 0) < r for d in top[:k]) for r in (1, 2) for k in (5, len(top))):
                keep[q] = docs
        n, w = compare(ACCURACY, qrels, keep)
        total, worst = total + n, max(worst, w)
    report("accuracy", total, worst)
    assert total > 150


@pytest.mark.skipif(shutil.which("perl") is None, reason="ir-measures' gdeval provider runs perl")
def test_gdeval_provider_prints_five_decimals():
    total, worst = 0, 0.0
    for seed in range(3):
        qrels, run = collection(seed, numeric=True, every_query_relevant=True)
        n, w = compare(GDEVAL, clamp(qrels), run)
        total, worst = total + n, max(worst, w)
    report("gdeval", total, worst)
    assert total > 150


def subtopic_collection(seed: int):
    rng = np.random.default_rng(seed)
    rows, nested, run = [], {}, {}
    for qi in range(1, 25):
        q = str(qi)
        for s in range(int(rng.integers(1, 5))):
            for d in rng.choice(30, int(rng.integers(1, 8)), replace=False):
                g = int(rng.choice([-1, 0, 1, 1, 2]))
                rows.append((q, str(s), f"d{d}", g))
                nested.setdefault(q, {}).setdefault(str(s), {})[f"d{d}"] = g
        if rng.random() < 0.85:
            docs = rng.choice(30, int(rng.integers(1, 30)), replace=False)
            run[q] = {f"d{d}": float(np.round(rng.integers(0, 11) * 0.1, 1)) for d in docs}
    run["999"] = {"d1": 0.5, "d2": 0.5}
    return pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"]), nested, run


@pytest.mark.parametrize("seed", range(4))
def test_pyndeval_provider_diversity_measures(seed):
    """ndeval's measures (ir-measures' pyndeval provider) with ties, through profile="ir_measures" in one
    call: pyndeval sorts by (-score, doc id); nNRBP of a query without a relevant subtopic is 0 / 0 in
    ndeval (NaN, and so is calc_aggregate's mean)."""
    frame, nested, run = subtopic_collection(seed)
    names = list(dict.fromkeys(ours(n) for n in DIVERSITY if not n.startswith("MAP_IA")))
    n, worst = compare(names, frame, run,
                       lambda names: ragrade.evaluate(nested, run, names, profile="ir_measures"))
    n2, worst2 = compare(["MAP_IA"], frame, run,
                         lambda names: ragrade.evaluate(nested, run, names, profile="ir_measures"))
    report("pyndeval", n + n2, max(worst, worst2))
    assert n > 300
    # the same with the keywords, outside the profile
    plain = ragrade.evaluate_diversity(nested, run, ["P_IA@5"], ties="docid_asc", no_relevant="zero")
    prof = ragrade.evaluate(nested, run, ["P_IA@5"], profile="ir_measures")
    pd.testing.assert_frame_equal(plain.per_query, prof.per_query)
    with pytest.raises(ragrade.InputError, match="profile"):  # no other profile reads subtopic judgments
        ragrade.evaluate(nested, run, ["P_IA@5"], profile="ranx")


def test_every_ir_measures_measure_is_covered():
    """Every name ir-measures 0.4.3 registers is compared above (aliases included) and parses in ragrade."""
    from ragrade.metrics import parse_metric

    tested = PYTREC + ALIASES + NDCG + MSMARCO + OTHERS + CWL + ACCURACY + GDEVAL + DIVERSITY
    covered = {irm.parse_measure(t).NAME for t in tested} | {t.split("@")[0].split("(")[0] for t in tested}
    assert set(irm.measures.registry) <= covered, set(irm.measures.registry) - covered
    for t in map(ours, tested):
        m = parse_metric(t)
        assert parse_metric(str(m)) == m, t


def test_providers_tie_orders_on_a_minimal_input():
    """d1, d2, d3 tied, only d3 relevant (d1 judged 0); written d2, d3, d1. pytrec_eval ranks d3, d2, d1 (id
    descending), msmarco and judged d1, d2, d3 (ascending), cwl_eval keeps the input order d2, d3, d1."""
    qrels = {"q": {"d3": 1, "d1": 0}}
    run = {"q": {"d2": 1.0, "d3": 1.0, "d1": 1.0}}
    names = ["RR", "RR@5", "RBP(p=0.5,rel=1)", "Judged@1"]
    got = ragrade.evaluate(qrels, run, names, profile="ir_measures").means
    want = {str(m): v for m, v in irm.calc_aggregate([irm.parse_measure(x) for x in names], qrels, run).items()}
    assert got == pytest.approx(want, abs=1e-12)
    assert got == pytest.approx({"RR": 1.0, "RR@5": 1 / 3, "RBP(p=0.5,rel=1)": 0.25, "Judged@1": 1.0}, abs=1e-12)


def test_a_document_listed_twice_keeps_its_first_position_and_last_score(tmp_path):
    """pytrec_eval, msmarco, judged and compat read a run file into a dict: x and a (listed twice) keep their
    first position and their last score; their ties then follow the provider (x and a tie with b at 1.0).
    (cwl_eval, accuracy and pyndeval read the rows as they are, every copy gaining: not reproduced.)"""
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 1\n")
    (tmp_path / "run").write_text("q Q0 x 1 3.0 r\nq Q0 a 2 2.0 r\nq Q0 b 3 1.0 r\nq Q0 x 4 1.0 r\nq Q0 a 5 1.0 r\n")
    qrels = list(irm.read_trec_qrels(str(tmp_path / "qrels")))
    rows = list(irm.read_trec_run(str(tmp_path / "run")))
    names = ["P@2", "RR", "RR@3", "AP", "Judged@2"]
    want = {str(m): v for m, v in irm.calc_aggregate([irm.parse_measure(x) for x in names], qrels, rows).items()}
    run = ragrade.Run.from_columns(["q"] * 5, ["x", "a", "b", "x", "a"], [3.0, 2.0, 1.0, 1.0, 1.0])
    got = ragrade.evaluate({"q": {"a": 1, "b": 1}}, run, names, profile="ir_measures").means
    assert got == pytest.approx(want, abs=1e-12)
