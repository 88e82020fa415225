"""Comparison with ir-measures (``ir_measures.iter_calc``): equal to 1e-9 where the conventions agree, and
every difference pinned and explained (documented in docs/conventions.md, section "ir-measures").

ir-measures dispatches each measure to a provider: P, R, AP, nDCG, Rprec, Success and RR without a cutoff
go to pytrec_eval (trec_eval's formulas and tie rule), ``RR@k`` goes to its MS MARCO provider.
Differences found:
1. ``RR@k`` breaks ties by document id *ascending* (it sorts by ``(-score, doc_id)``), while ``RR`` and every
   other measure break them descending: ``RR@k`` equals ragrade's ``rr@k`` with ``ties="docid_asc"``.
2. R = 0 queries score 0 and count (trec_eval); ragrade's default leaves them out (no_relevant="skip").
3. Scores go through pytrec_eval as 32-bit floats (see the pytrec_eval parity tests).
4. nDCG has no ``rel`` parameter: ragrade's ``ndcg(rel=2)`` is ir-measures' ``nDCG(gains={1: 0})``
   (grade 1 mapped to gain 0); ``ndcg(gain=exp)`` is ``nDCG(gains={g: 2**g - 1})``.
Same as ragrade's defaults (checked): every qrels query is reported, those missing from the run with 0
(missing_run="zero"); run-only queries are ignored.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragrade
from reference import random_case, untie

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import AP, RR, P, R, Rprec, Success, nDCG  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")

K = (1, 3, 5, 10, 20)
EXP = {-1: 0, 0: 0, 1: 1, 2: 3, 3: 7}


def pairs(rr_at_k: bool = True):
    out = []
    for k in K:
        out += [(f"ndcg@{k}", nDCG @ k), (f"ap@{k}", AP @ k), (f"P@{k}", P @ k), (f"recall@{k}", R @ k),
                (f"hit_rate@{k}", Success @ k), (f"P(rel=2)@{k}", P(rel=2) @ k),
                (f"recall(rel=2)@{k}", R(rel=2) @ k), (f"ap(rel=2)@{k}", AP(rel=2) @ k),
                (f"hit_rate(rel=2)@{k}", Success(rel=2) @ k),
                (f"ndcg(rel=2)@{k}", nDCG(gains={1: 0}) @ k), (f"ndcg(gain=exp)@{k}", nDCG(gains=EXP) @ k)]
        if rr_at_k:
            out += [(f"rr@{k}", RR @ k), (f"rr(rel=2)@{k}", RR(rel=2) @ k)]
    out += [("r_precision", Rprec), ("ap", AP), ("rr", RR), ("ndcg", nDCG), ("r_precision(rel=2)", Rprec(rel=2)),
            ("rr(rel=2)", RR(rel=2))]
    return out


def calc(measures, qrels, run):
    """{(query, measure): value}. Measures with different ``gains`` are computed in separate calls: mixed in
    one call, ir-measures 0.4 may apply one gain map to the other measure (depends on PYTHONHASHSEED).
    nDCG is computed on qrels whose negative grades are replaced by 0 (worth 0 in ragrade too): negative
    grades make pytrec_eval's ndcg corrupt memory and hang (see test_pytrec_eval_parity)."""
    groups: dict[str, list] = {}
    for m in measures:
        groups.setdefault(repr(m.params.get("gains")) + m.NAME, []).append(m)
    nonneg = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    out = {}
    for group in groups.values():
        judged = nonneg if group[0].NAME == "nDCG" else qrels
        out.update({(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(group, judged, run)})
    return out


def differences(qrels, run, mapping, **policies):
    want = calc([b for _, b in mapping], qrels, run)
    got = ragrade.evaluate(qrels, run, [a for a, _ in mapping], no_relevant="zero", **policies).per_query
    assert {q for q, _ in want} == set(qrels)  # every qrels query is reported
    diffs = []
    for a, b in mapping:
        for q in qrels:
            g, w = float(got.at[q, a]), want[(q, str(b))]
            if not math.isclose(g, w, rel_tol=0, abs_tol=1e-9):
                diffs.append((q, a, g, w))
    return diffs


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_ir_measures_on_tied_data_except_rr_at_k(seed):
    """Ties, graded qrels, missing queries on both sides: all equal (RR@k aside, see below)."""
    case = random_case(np.random.default_rng(5000 + seed), n_queries=40)
    assert differences(case.qrels, case.run, pairs(rr_at_k=False)) == []


@pytest.mark.parametrize("seed", range(3))
def test_rr_at_k_breaks_ties_by_ascending_id_in_ir_measures(seed):
    case = random_case(np.random.default_rng(6000 + seed), n_queries=40)
    rr_pairs = [(a, b) for a, b in pairs() if a.startswith("rr")]
    at_k = [(a, b) for a, b in rr_pairs if "@" in a]
    no_k = [(a, b) for a, b in rr_pairs if "@" not in a]
    assert differences(case.qrels, case.run, at_k, ties="docid_asc") == []
    assert differences(case.qrels, case.run, no_k) == []
    diffs = differences(case.qrels, case.run, at_k)
    assert diffs
    assert all(len(set(case.run[q].values())) < len(case.run[q]) for q, *_ in diffs)  # only tied queries
    assert differences(case.qrels, untie(case.run), at_k) == []


def test_rr_tie_example():
    """d1, d2, d3 tied, only d1 relevant: RR = 1/3 (trec_eval order d3, d2, d1) but RR@5 = 1."""
    qrels = {"q": {"d1": 1}}
    run = {"q": {"d1": 1.0, "d2": 1.0, "d3": 1.0}}
    values = {str(m.measure): m.value for m in ir_measures.iter_calc([RR, RR @ 5], qrels, run)}
    assert values == {"RR": pytest.approx(1 / 3), "RR@5": 1.0}
    r = ragrade.evaluate(qrels, run, ["rr", "rr@5"]).means
    assert r == {"rr": pytest.approx(1 / 3), "rr@5": pytest.approx(1 / 3)}
    assert ragrade.evaluate(qrels, run, "rr@5", ties="docid_asc").means["rr@5"] == 1.0


def test_r_zero_and_missing_queries_in_ir_measures_means():
    qrels = {"q1": {"a": 0, "b": -1}, "q2": {"a": 1}, "q3": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"a": 1.0}, "q9": {"a": 1.0}}
    agg = ir_measures.calc_aggregate([P @ 1], qrels, run)
    assert agg[P @ 1] == pytest.approx(1 / 3)  # q1 (R = 0) and q3 (missing) count as 0
    default = ragrade.evaluate(qrels, run, "P@1")
    assert default.means["P@1"] == pytest.approx(0.5) and default.counts["P@1"] == 2  # q1 left out
    zero = ragrade.evaluate(qrels, run, "P@1", no_relevant="zero")
    assert zero.means["P@1"] == pytest.approx(agg[P @ 1])


def test_duplicate_lines_in_a_trec_run_keep_the_last_score_in_ir_measures(tmp_path):
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 1\n")
    (tmp_path / "run").write_text("q Q0 x 1 3.0 r\nq Q0 a 2 2.0 r\nq Q0 b 3 1.5 r\nq Q0 x 4 1.0 r\nq Q0 a 5 0.5 r\n")
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels")))
    run_rows = list(ir_measures.read_trec_run(str(tmp_path / "run")))
    agg = ir_measures.calc_aggregate([P @ 5, RR, AP], qrels, run_rows)
    run = ragrade.Run.from_columns(["q"] * 5, ["x", "a", "b", "x", "a"], [3.0, 2.0, 1.5, 1.0, 0.5])
    last = ragrade.evaluate({"q": {"a": 1, "b": 1}}, run, ["P@5", "rr", "ap"], duplicates="keep_last").means
    assert [agg[P @ 5], agg[RR], agg[AP]] == pytest.approx([last["P@5"], last["rr"], last["ap"]])


@pytest.mark.parametrize("seed", range(2))
def test_ir_measures_profile_equals_ir_measures(seed):
    """profile="ir_measures" reproduces ir-measures per query, RR@k's ascending tie rule included
    (docs/conventions.md, section 7)."""
    case = random_case(np.random.default_rng(7000 + seed), n_queries=40)
    mapping = [(a, b) for a, b in pairs() if "gain=" not in a and "ndcg(rel" not in a]
    want = calc([b for _, b in mapping], case.qrels, case.run)
    got = ragrade.evaluate(case.qrels, case.run, [a for a, _ in mapping], profile="ir_measures").per_query
    for a, b in mapping:
        for q in case.qrels:
            assert math.isclose(float(got.at[q, a]), want[(q, str(b))], rel_tol=0, abs_tol=1e-9), (q, a)
