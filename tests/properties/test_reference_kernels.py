"""The vectorised kernels equal the slow reference implementation (tests/reference.py) to 1e-12, for every
registry metric at several cutoffs and relevance levels, and under every policy option."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ragrade
from ragrade import PolicyError, Run
from ragrade.metrics import REGISTRY
from reference import assert_same, frame_to_dict, random_case, ref_evaluate, rows_of

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")


def metric_strings() -> list[str]:
    """Every registry metric at several cutoffs (and none), rel levels and gains."""
    out = []
    for d in REGISTRY:
        cuts = [None] if d.cutoff == "none" else [None, 1, 3, 5, 10, 20]
        variants = [""]
        names = {p.name for p in d.params}
        if "gain" in names:
            variants += ["(gain=exp)", "(rel=2)", "(gain=exp,rel=3)"]
        elif "rel" in names:
            variants += ["(rel=2)", "(rel=3)"]
        for v, k in itertools.product(variants, cuts):
            out.append(f"{d.name}{v}" + ("" if k is None else f"@{k}"))
    return out


METRICS = metric_strings()


def _with_duplicates(rng, run):
    """Rows per query with some repeated documents (a TREC file can hold them), as storage columns."""
    rows = rows_of(run)
    for r in rows.values():
        if r and rng.random() < 0.4:
            for _ in range(int(rng.integers(1, 3))):
                d, _ = r[int(rng.integers(len(r)))]
                r.insert(int(rng.integers(len(r) + 1)), (d, float(rng.choice(np.arange(8) / 8))))
    return rows


def _run_from_rows(rows, scored=True):
    qs = [q for q, r in rows.items() for _ in r]
    ds = [d for r in rows.values() for d, _ in r]
    if not scored:
        return Run.from_lists([[d for d, _ in r] for r in rows.values()], query_ids=list(rows))
    ss = [s for r in rows.values() for _, s in r]
    return Run.from_columns(qs, ds, ss)


@pytest.mark.parametrize("seed", range(6))
def test_kernels_equal_reference_default_policies(seed):
    rng = np.random.default_rng(seed)
    case = random_case(rng, n_queries=40)
    got = frame_to_dict(ragrade.evaluate(case.qrels, case.run, METRICS).per_query)
    want = ref_evaluate(case.qrels, rows_of(case.run), METRICS)
    assert_same(got, want)


POLICY_OPTIONS = [
    ("missing_run", "zero"), ("missing_run", "drop"),
    ("no_relevant", "skip"), ("no_relevant", "zero"), ("no_relevant", "nan"),
    ("duplicates", "credit_once"), ("duplicates", "drop"), ("duplicates", "keep_last"),
    ("identical_ids", "keep"), ("identical_ids", "drop"),
    ("ties", "docid_desc"), ("ties", "input"), ("ties", "docid_asc"),
    ("empty_run", "zero"),
    ("missing_qrels", "ignore"),
]


@pytest.mark.parametrize(("policy", "option"), POLICY_OPTIONS)
@pytest.mark.parametrize("scored", [True, False], ids=["scored", "ranked"])
@pytest.mark.parametrize("seed", [7, 8])
def test_kernels_equal_reference_per_policy(policy, option, scored, seed):
    rng = np.random.default_rng(seed)
    case = random_case(rng, n_queries=40, allow_empty=True)
    rows = _with_duplicates(rng, case.run)
    # Identical ids: some documents named after their query.
    for q, r in rows.items():
        if r and rng.random() < 0.3:
            r.insert(0, (q, 2.0))
            if q in case.qrels:
                case.qrels[q][q] = 1  # judged relevant: dropping it changes the values
    run = _run_from_rows(rows, scored)
    metrics = ["ndcg@5", "ndcg(gain=exp)@10", "ap@10", "ap", "rr", "rr@3", "P@5", "precision", "recall@5",
               "f1@5", "hits@10", "hit_rate@3", "recall_all@10", "r_precision", "context_precision@5",
               "dcg@5", "P(rel=2)@5", "ndcg(rel=2)@10"]
    # Columns cannot hold an empty scored list: such a query is missing from the scored run.
    ref_rows = {q: r if scored else [(d, None) for d, _ in r] for q, r in rows.items() if r or not scored}
    got = frame_to_dict(ragrade.evaluate(case.qrels, run, metrics, **{policy: option}).per_query)
    want = ref_evaluate(case.qrels, ref_rows, metrics, **{policy: option})
    assert_same(got, want)


@pytest.mark.parametrize(
    ("policy", "qrels", "run"),
    [
        ("missing_run", {"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0}}),
        ("missing_qrels", {"q1": {"a": 1}}, {"q1": {"a": 1.0}, "q9": {"a": 1.0}}),
        ("no_relevant", {"q1": {"a": 1}, "q2": {"a": 0}}, {"q1": {"a": 1.0}, "q2": {"a": 1.0}}),
        ("empty_run", {"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0}, "q2": {}}),
    ],
)
def test_error_policies_raise_like_reference(policy, qrels, run):
    with pytest.raises(PolicyError):
        ref_evaluate(qrels, rows_of(run), ["P@5"], **{policy: "error"})
    with pytest.raises(PolicyError):
        ragrade.evaluate(qrels, run, ["P@5"], **{policy: "error"})
    # ...and the same input without the offending case does not raise.
    ragrade.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["P@5"], **{policy: "error"})


def test_duplicates_error_raises():
    run = Run.from_lists([["a", "b", "a"]], query_ids=["q1"])
    with pytest.raises(PolicyError, match="duplicate"):
        ragrade.evaluate({"q1": {"a": 1}}, run, ["P@5"], duplicates="error")
    with pytest.raises(PolicyError):
        ref_evaluate({"q1": {"a": 1}}, {"q1": [("a", None), ("b", None), ("a", None)]}, ["P@5"],
                     duplicates="error")
