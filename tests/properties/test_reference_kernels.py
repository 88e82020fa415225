"""The vectorised kernels equal the slow reference implementation (tests/reference.py) to 1e-12, for every
registry metric at several cutoffs and relevance levels, and under every policy option."""

from __future__ import annotations

import numpy as np
import pytest

import ragrade
from ragrade import PolicyError, Run
from ragrade.metrics import ID_FAMILIES
from reference import assert_same, frame_to_dict, metric_variants, random_case, rank, ref_evaluate, rows_of

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")


def metric_strings() -> list[str]:
    """Every registry metric at several cutoffs (and none), rel levels and gains."""
    out = []
    for d in ID_FAMILIES:
        variants = [""]
        names = {p.name for p in d.params}
        if "gain" in names:
            variants += ["(gain=exp)", "(rel=2)", "(gain=exp,rel=3)"]
        elif "rel" in names:
            variants += ["(rel=2)", "(rel=3)"]
        if "gains" in names:
            variants.append("(gains={0:1,1:2,3:7})")
        if "judged_only" in names:
            variants.append("(judged_only=true)")
        out += metric_variants(d, [None, 1, 3, 5, 10, 20], variants)
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
    if not scored:
        return Run.from_lists([[d for d, _ in r] for r in rows.values()], query_ids=list(rows))
    # Rows interleaved round-robin across queries (order kept within each query), as a file may hold them.
    flat = []
    for i in range(max((len(r) for r in rows.values()), default=0)):
        flat += [(q, *r[i]) for q, r in rows.items() if i < len(r)]
    return Run.from_columns([f[0] for f in flat], [f[1] for f in flat], [f[2] for f in flat])


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


def test_evaluator_reused_over_many_runs_equals_reference():
    """One Evaluator, several runs (scored dicts, ranked lists, Run objects): each equals the reference."""
    rng = np.random.default_rng(11)
    case = random_case(rng, n_queries=30)
    ev = ragrade.Evaluator(case.qrels, METRICS)
    for i in range(4):
        other = random_case(np.random.default_rng(100 + i), n_queries=30)
        run = other.run if i % 2 else Run.from_dict(other.run)
        got = frame_to_dict(ev.evaluate(run).per_query)
        assert_same(got, ref_evaluate(case.qrels, rows_of(other.run), METRICS))
    ranked = {q: [d for d, _ in sorted(docs.items(), key=lambda x: -x[1])] for q, docs in case.run.items()}
    got = frame_to_dict(ev.evaluate(ranked).per_query)
    assert_same(got, ref_evaluate(case.qrels, {q: [(d, None) for d in ds] for q, ds in ranked.items()}, METRICS))


def test_fractional_grades_and_negative_scores_equal_reference():
    rng = np.random.default_rng(12)
    case = random_case(rng, n_queries=40)
    qrels = {q: {d: g * 0.75 for d, g in docs.items()} for q, docs in case.qrels.items()}
    run = {q: {d: -s * 3.0 for d, s in docs.items()} for q, docs in case.run.items()}
    got = frame_to_dict(ragrade.evaluate(qrels, run, METRICS).per_query)
    assert_same(got, ref_evaluate(qrels, rows_of(run), METRICS))


@pytest.mark.parametrize("seed", range(3))
def test_grouped_ground_truth_equals_reference(seed):
    """AutoRAG-style groups (any id of a group satisfies it, each group is one unit credited once; an id in
    two groups belongs to the first) against the reference with a doc -> unit map."""
    rng = np.random.default_rng(300 + seed)
    pool = [f"g{i}" for i in range(12)]
    groups, retrieved, qids = [], [], []
    for i in range(25):
        qgroups = [list(rng.choice(pool, size=int(rng.integers(1, 4)), replace=False))
                   for _ in range(int(rng.integers(1, 4)))]
        groups.append(qgroups)
        retrieved.append(list(rng.choice([*pool, "x1", "x2", "x3"], size=int(rng.integers(0, 10)))))
        qids.append(f"q{i}")
    qrels_obj = ragrade.Qrels.from_groups(groups, query_ids=qids)
    run_obj = Run.from_lists(retrieved, query_ids=qids)
    grades, units = {}, {}
    for q, qgroups in zip(qids, groups, strict=True):
        grades[q], units[q] = {}, {}
        for gi, grp in enumerate(qgroups):
            for d in grp:
                if d not in units[q]:
                    units[q][d] = gi
                    grades[q][d] = 1
    metrics = [m for m in METRICS if "rel=3" not in m]
    for pol in ({}, {"duplicates": "drop"}, {"duplicates": "keep_last"}):
        got = frame_to_dict(ragrade.evaluate(qrels_obj, run_obj, metrics, **pol).per_query)
        want = ref_evaluate(grades, {q: [(d, None) for d in r] for q, r in zip(qids, retrieved, strict=True)},
                            metrics, units=units, **pol)
        assert_same(got, want)


@pytest.mark.parametrize("ties", ["docid_desc", "input", "docid_asc"])
@pytest.mark.parametrize("presorted", [True, False], ids=["sorted-input", "unsorted-input"])
def test_long_tied_lists_equal_reference(ties, presorted):
    """300 queries x 50 items with 4 distinct scores; input already sorted by score (the ranking's fast path,
    ties still to be ordered) or shuffled."""
    rng = np.random.default_rng(21)
    docs = np.array([f"doc{j}" for j in range(120)], dtype=object)
    qrels, rows = {}, {}
    for i in range(300):
        q = f"q{i}"
        qrels[q] = {str(d): int(g) for d, g in zip(rng.choice(docs, 15, replace=False),
                                                   rng.choice([-1, 0, 1, 2, 3], 15), strict=True)}
        picked = rng.choice(docs, 50, replace=False)
        scores = rng.choice([0.25, 0.5, 0.75, 1.0], 50)
        r = [(str(d), float(s)) for d, s in zip(picked, scores, strict=True)]
        if presorted:
            r.sort(key=lambda x: -x[1])  # stable: ties keep a random (non-id) order
        rows[q] = r
    metrics = ["ndcg@10", "ap@20", "rr", "P@5", "recall@25", "r_precision", "hits@50", "context_precision@10"]
    run = Run.from_columns([q for q, r in rows.items() for _ in r], [d for r in rows.values() for d, _ in r],
                           [s for r in rows.values() for _, s in r])
    got = frame_to_dict(ragrade.evaluate(qrels, run, metrics, ties=ties).per_query)
    assert_same(got, ref_evaluate(qrels, rows, metrics, ties=ties))
    ref_lists = {q: rank(r, ties) for q, r in rows.items()}
    assert run.to_lists(ties=ties) == ref_lists


@pytest.mark.parametrize("policies", [{}, {"ties": "docid_asc"}, {"missing_run": "drop", "no_relevant": "zero"},
                                      {"no_relevant": "nan"}, {"duplicates": "error"}])
@pytest.mark.parametrize("seed", range(3))
def test_dict_fast_path_equals_columnar_path_and_reference(seed, policies):
    """Runs given as nested dicts take a dedicated join; it must equal the Run (columnar) path and the
    reference, with long tied lists, empty lists and queries missing on either side."""
    rng = np.random.default_rng(400 + seed)
    case = random_case(rng, n_queries=60, allow_empty=True, max_retrieved=25)
    got_dict = frame_to_dict(ragrade.evaluate(case.qrels, case.run, METRICS, **policies).per_query)
    got_run = frame_to_dict(ragrade.evaluate(case.qrels, Run.from_dict(case.run), METRICS, **policies).per_query)
    want = ref_evaluate(case.qrels, rows_of(case.run), METRICS, **policies)
    assert_same(got_dict, want)
    assert_same(got_run, want)


@pytest.mark.parametrize("seed", range(2))
def test_dict_fast_path_without_the_c_helpers_equals_reference(seed, monkeypatch):
    """The pure-Python fallback of the dict ingestion (no compiled ragrade._accel) gives the same values."""
    import ragrade._ingest

    monkeypatch.setattr(ragrade._ingest, "_accel", None)
    case = random_case(np.random.default_rng(500 + seed), n_queries=60, allow_empty=True)
    got = frame_to_dict(ragrade.evaluate(case.qrels, case.run, METRICS).per_query)
    assert_same(got, ref_evaluate(case.qrels, rows_of(case.run), METRICS))


@pytest.mark.parametrize("value", [np.float32(0.5), np.int64(3), 2**70, "1.5"],
                         ids=["float32", "int64", "bigint", "numeric-str"])
def test_unusual_score_types_give_the_same_values_on_every_path(value):
    qrels = {"q": {"a": 1, "b": 1}}
    run = {"q": {"a": value, "b": 0.25, "c": 0.125}}
    want = ref_evaluate(qrels, {"q": [("a", float(value)), ("b", 0.25), ("c", 0.125)]}, ["ndcg@3", "rr", "ap"])
    assert_same(frame_to_dict(ragrade.evaluate(qrels, run, ["ndcg@3", "rr", "ap"]).per_query), want)
    assert_same(frame_to_dict(ragrade.evaluate(qrels, Run.from_dict(run), ["ndcg@3", "rr", "ap"]).per_query), want)


def test_a_boolean_score_is_refused_on_every_path():
    """The id and value rule (docs/formats.md): a boolean is not a score, from a dict or a Run alike."""
    from ragrade.errors import InputError

    run = {"q": {"a": True, "b": 0.25}}
    for build in (lambda: ragrade.evaluate({"q": {"a": 1}}, run, ["rr"]), lambda: Run.from_dict(run)):
        with pytest.raises(InputError, match="is a boolean, not a number"):
            build()


@pytest.mark.parametrize("ties", ["docid_desc", "docid_asc"])
def test_grouped_ground_truth_with_scored_dict_runs_equals_reference(ties):
    """Groups (one unit, credited once) with a scored dict run (the dict fast path), tied scores included."""
    rng = np.random.default_rng(600)
    pool = [f"g{i}" for i in range(12)]
    groups, run, qids = [], {}, []
    for i in range(30):
        q = f"q{i}"
        groups.append([list(map(str, rng.choice(pool, size=int(rng.integers(1, 4)), replace=False)))
                       for _ in range(int(rng.integers(1, 4)))])
        docs = rng.choice([*pool, "x1", "x2"], size=int(rng.integers(0, 12)), replace=False)
        run[q] = {str(d): float(rng.choice([0.25, 0.5, 0.75])) for d in docs}
        qids.append(q)
    qrels_obj = ragrade.Qrels.from_groups(groups, query_ids=qids)
    grades, units = {}, {}
    for q, qgroups in zip(qids, groups, strict=True):
        grades[q], units[q] = {}, {}
        for gi, grp in enumerate(qgroups):
            for d in grp:
                if d not in units[q]:
                    units[q][d], grades[q][d] = gi, 1
    metrics = [m for m in METRICS if "rel=" not in m]
    want = ref_evaluate(grades, rows_of(run), metrics, units=units, ties=ties)
    assert_same(frame_to_dict(ragrade.evaluate(qrels_obj, run, metrics, ties=ties).per_query), want)
    assert_same(frame_to_dict(ragrade.evaluate(qrels_obj, Run.from_dict(run), metrics, ties=ties).per_query), want)
