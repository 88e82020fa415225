"""ragrade.scale.spark on a real local[2] Spark session: per-query values equal ragrade.evaluate to 1e-12 for every
registry metric with 1, 3 and 7 partitions, under every policy and id-based profile; compare and bootstrap
intervals from a Spark result equal those from the in-memory result; paths, the id rule, errors, the CLI.

One session for the module (bound to 127.0.0.1, web UI off), stopped at the end. Skipped, with the reason,
only where Java is missing (.ci/run installs OpenJDK 17 so CI runs these)."""

from __future__ import annotations

import json
import os
import shutil
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scale_metrics import METRICS

import ragrade
from ragrade.errors import InputError, PolicyError
from ragrade.profiles import list_profiles
from reference import random_case

pytestmark = pytest.mark.spark



def _java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return shutil.which("java") is not None or bool(home and os.path.exists(os.path.join(home, "bin", "java")))


@pytest.fixture(scope="module")
def spark():
    if not _java():
        if os.environ.get("RAGRADE_REQUIRE_SPARK"):  # CI (.ci/run) installs Java: its absence is a failure
            pytest.fail("RAGRADE_REQUIRE_SPARK is set but no Java runtime was found")
        pytest.skip("Spark needs a Java runtime and none was found (java not on PATH, no JAVA_HOME); "
                    ".ci/run installs openjdk-17-jre-headless")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if os.environ.get("RAGRADE_REQUIRE_SPARK"):
            pytest.fail("RAGRADE_REQUIRE_SPARK is set but pyspark is not installed (it is in the test extra)")
        pytest.skip("pyspark is not installed (pip install 'ragrade[spark]')")
    from ragrade.scale import spark as rs

    session = rs.session("local[2]", "ragrade-tests")
    session.sparkContext.setLogLevel("ERROR")
    session.conf.set("spark.sql.shuffle.partitions", "3")
    yield session
    session.stop()


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def tables(case, *, int_qrels_ids=False):
    q = [(a, d, g) for a, docs in case.qrels.items() for d, g in docs.items()]
    r = [(a, d, s) for a, docs in case.run.items() for d, s in docs.items()]
    qid = (lambda x: int(x[1:])) if int_qrels_ids else (lambda x: x)
    qt = pa.table({"query_id": [qid(x[0]) for x in q], "doc_id": [x[1] for x in q],
                   "relevance": [float(x[2]) for x in q]})
    rt = pa.table({"qid": [x[0] for x in r], "docid": [x[1] for x in r], "score": [x[2] for x in r]})
    return qt, rt


def sorted_summary(s):
    from dataclasses import replace

    return replace(s, missing_from_run=sorted(s.missing_from_run), only_in_run=sorted(s.only_in_run),
                   empty_lists=sorted(s.empty_lists), no_relevant={k: sorted(v) for k, v in s.no_relevant.items()})


def assert_parity(res, want, tol=1e-12):
    got = res.collect()
    w = want.per_query.sort_index()
    assert list(got.per_query.index) == list(w.index)
    assert list(got.per_query.columns) == list(w.columns)
    a, b = got.per_query.to_numpy(), w.to_numpy()
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.nanmax(np.abs(a - b), initial=0.0) <= tol
    assert res.summary == sorted_summary(want.summary)
    assert dict(res.counts) == dict(want.counts)
    for k, v in want.means.items():
        assert res.means[k] == pytest.approx(v, abs=tol, nan_ok=True)
    assert res.metrics == want.metrics and res.policies == want.policies
    assert (got.hole_rate is None) == (want.hole_rate is None)
    if want.hole_rate is not None:
        a, b = got.hole_rate, want.hole_rate
        assert a.per_query.to_dict() == pytest.approx(b.per_query.to_dict(), abs=0, nan_ok=True)
        assert (a.k, a.queries, a.only_relevant_judged) == (b.k, b.queries, b.only_relevant_judged)
        assert a.mean == pytest.approx(b.mean, abs=tol, nan_ok=True)
    assert (got.upper is None) == (want.upper is None)
    if want.upper is not None:
        u, v = got.upper.to_numpy(), want.upper.sort_index().to_numpy()
        assert np.array_equal(np.isnan(u), np.isnan(v)) and np.nanmax(np.abs(u - v), initial=0.0) <= tol
        assert [r["query_id"] for r in res.upper.select("query_id").collect()]
        for k, x in want.upper_means.items():
            assert res.upper_means[k] == pytest.approx(x, abs=tol, nan_ok=True)


@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_every_registry_metric(spark, partitions):
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(partitions), 150)
    qt, rt = tables(case)
    want = quiet(ragrade.evaluate, qt, rt, METRICS)
    res = rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), METRICS, partitions=partitions)
    assert_parity(res, want)
    assert res.per_query.columns == ["query_id", *want.per_query.columns]
    assert res.per_query.count() == len(want.per_query)
    res.unpersist()


@pytest.mark.parametrize("options", [
    {"missing_run": "drop"}, {"no_relevant": "zero"}, {"no_relevant": "nan"}, {"duplicates": "drop"},
    {"duplicates": "keep_last"}, {"identical_ids": "drop"}, {"ties": "input"}, {"ties": "docid_asc"},
    {"profile": "pytrec_eval"}, {"profile": "beir"}, {"profile": "autorag"},
])
def test_policies_and_profiles(spark, options):
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(42), 80)
    for q in list(case.run)[:8]:
        case.run[q][q] = 0.25  # the query's own id among its documents
    qt, rt = tables(case)
    dup = rt.slice(0, 30)  # duplicates: rows repeated (with other scores) right after the table
    rt = pa.concat_tables([rt, dup.set_column(2, "score", pa.array(np.linspace(0, 1, 30)))])
    metrics = ["recall", "precision", "ap", "ndcg"] if options.get("profile") == "autorag" else \
        ["ndcg@10", "map", "P@5", "rr", "recall@10"]
    want = quiet(ragrade.evaluate, qt, rt, metrics, **options)
    res = rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), metrics, partitions=3, **options)
    assert_parity(res, want)


def test_compare_and_bootstrap_intervals_equal(spark):
    from ragrade.comparison import compare_scores
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(5), 120)
    other = random_case(np.random.default_rng(6), 120)
    qt, rt = tables(case)
    _, rt2 = tables(other)
    metrics = ["ndcg@10", "rr"]
    mem = {name: quiet(ragrade.evaluate, qt, r, metrics).per_query.sort_index() for name, r in (("a", rt), ("b", rt2))}
    spk = {name: rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(r), metrics, partitions=7).collect()
           for name, r in (("a", rt), ("b", rt2))}
    for method in ("resample", "auto"):
        want = quiet(compare_scores, mem, metrics, seed=3, n_resamples=2000, ci_method=method).to_dict()
        got = quiet(compare_scores, spk, metrics, seed=3, n_resamples=2000, ci_method=method).to_dict()
        assert json.dumps(got, sort_keys=True, default=str) == json.dumps(want, sort_keys=True, default=str)


def test_paths_and_the_id_rule(spark, tmp_path):
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(7), 60)
    qt, rt = tables(case, int_qrels_ids=True)  # qrels ids as integers, run ids as "q12" strings: ...
    rt = rt.set_column(0, "qid", pa.array([s[1:] for s in rt.column("qid").to_pylist()]))  # ... now "12"
    pq.write_table(qt, tmp_path / "qrels.parquet")
    (tmp_path / "run").mkdir()
    pq.write_table(rt.slice(0, 200), tmp_path / "run" / "part-0.parquet")
    pq.write_table(rt.slice(200), tmp_path / "run" / "part-1.parquet")
    metrics = ["ndcg@10", "map@100"]
    want = quiet(ragrade.evaluate, qt, rt, metrics)
    res = rs.evaluate(str(tmp_path / "qrels.parquet"), str(tmp_path / "run"), metrics, spark=spark)
    assert_parity(res, want)
    # TREC text files read by Spark
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {int(g)}\n" for q, d, g in zip(*[qt.column(i).to_pylist() for i in range(3)],
                                                                      strict=True)))
    rp.write_text("".join(f"{q}  Q0\t{d} 1 {s} t\n" for q, d, s in zip(*[rt.column(i).to_pylist() for i in range(3)],
                                                                     strict=True)))
    want = quiet(ragrade.evaluate, str(qp), str(rp), metrics)
    res = rs.evaluate(str(qp), str(rp), metrics, spark=spark, partitions=2)
    assert_parity(res, want)
    assert res.run_name == "run"


def test_errors_come_back_as_ragrade_errors(spark):
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(8), 40)
    qt, rt = tables(case)
    q, r = spark.createDataFrame(qt), spark.createDataFrame(rt)
    with pytest.raises(PolicyError, match="no ground truth"):
        rs.evaluate(q, r, ["ndcg@10"], missing_qrels="error")
    with pytest.raises(InputError, match="id metrics"):
        rs.evaluate(q, r, ["token_f1@3"])
    with pytest.raises(InputError, match="query"):
        rs.evaluate(q.withColumnRenamed("query_id", "what"), r, ["ndcg@10"])
    with pytest.raises(ragrade.errors.RagradeError) as mem:  # a bad policy value: as ragrade.evaluate says it
        ragrade.evaluate(qt, rt, ["ndcg@10"], ties="sometimes")
    with pytest.raises(type(mem.value), match="ties"):
        rs.evaluate(q, r, ["ndcg@10"], ties="sometimes")


def test_cli_engine_spark(spark, tmp_path):
    from click.testing import CliRunner

    from ragrade.cli import main

    case = random_case(np.random.default_rng(9), 50)
    qt, rt = tables(case)
    pq.write_table(qt, tmp_path / "qrels.parquet")
    pq.write_table(rt, tmp_path / "run.parquet")
    args = ["evaluate", str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet"), "-m", "ndcg@10", "-m", "rr",
            "--format", "json", "--per-query"]
    mem = CliRunner().invoke(main, args)
    spk = CliRunner().invoke(main, [*args, "--engine", "spark", "--master", "local[2]"])
    assert mem.exit_code == spk.exit_code == 0, spk.output
    a, b = json.loads(spk.stdout), json.loads(mem.stdout)
    assert a["per_query"] == b["per_query"] and a["counts"] == b["counts"] and a["summary"] == b["summary"]
    assert a["metrics"] == pytest.approx(b["metrics"], abs=1e-12)
    assert spark.sparkContext._jsc is not None  # the CLI used the running session and left it running


def test_values_that_read_the_whole_ground_truths_top_grade(spark):
    """C/W/L measures without max_rel and unjudged='bounds' without upper_grade read the top grade of the
    whole ground truth: the tasks are told it (one aggregation), whatever grades their partition holds."""
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(11), 90)
    first = next(iter(case.qrels))
    case.qrels[first][next(iter(case.qrels[first]))] = 5
    for q in list(case.qrels)[1:]:
        case.qrels[q] = {d: min(g, 1) for d, g in case.qrels[q].items()}
    qt, rt = tables(case)
    metrics = ["rbp_cwl", "nerr8@5", "inst", "ndcg@10", "rbp_cwl(max_rel=5)", "P@5"]
    for options in ({}, {"unjudged": "bounds"}, {"unjudged": "condensed"}):
        want = quiet(ragrade.evaluate, qt, rt, metrics, **options)
        res = rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), metrics, partitions=7, **options)
        assert_parity(res, want)
        res.unpersist()


def test_trec_eval_names_and_relevance_level(spark):
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(12), 60)
    qt, rt = tables(case)
    metrics = ["P_5", "map", "ndcg_cut_10", "recip_rank"]
    want = quiet(ragrade.evaluate, qt, rt, metrics, names="trec_eval", rel_level=2)
    res = rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), metrics, partitions=3,
                      names="trec_eval", rel_level=2)
    assert_parity(res, want)


ID_FAMILY_NAMES = ["recall", "precision", "ap", "ndcg", "rr", "hit_rate", "context_precision", "recall_all", "f1"]


def _id_profiles() -> list[str]:
    from ragrade.profiles import get_profile

    return [p for p in list_profiles() if get_profile(p).kind in ("engine", "list")]


def test_a_profile_of_another_ground_truth_is_refused_on_spark(spark):
    """The span profiles (chroma, legalbench_rag) score character spans, which Spark does not read."""
    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(13), 5)
    qt, rt = tables(case)
    for name in set(list_profiles()) - set(_id_profiles()):
        with pytest.raises(ragrade.errors.RagradeError, match=name):
            rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), ["recall"], partitions=1, profile=name)


@pytest.mark.parametrize("name", _id_profiles())
def test_every_profile_that_scores_ids(spark, name):
    """Every profile: the values of ragrade.evaluate, or the same refusal."""
    from ragrade.profiles import get_profile
    from ragrade.scale import spark as rs

    prof = get_profile(name)
    if prof.kind == "engine":
        metrics = ["ndcg@10", "map", "P@5", "rr", "recall@10"]
    else:
        metrics = [f for f in ID_FAMILY_NAMES if f in prof.families] or ["recall"]
    case = random_case(np.random.default_rng(13), 70)
    qt, rt = tables(case)
    try:
        want = quiet(ragrade.evaluate, qt, rt, metrics, profile=name)
    except ragrade.errors.RagradeError as exc:
        with pytest.raises(type(exc)):
            rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), metrics, partitions=3, profile=name)
        return
    res = rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), metrics, partitions=3, profile=name)
    assert_parity(res, want)
    res.unpersist()


# -- issue 23 items 12 (and 6 on Spark): the same errors as every other path ----------------------------------
def test_empty_ground_truth_is_an_input_error(spark, tmp_path):
    from ragrade.scale import spark as rs

    q = spark.createDataFrame([], "query_id string, doc_id string, relevance double")
    r = spark.createDataFrame([("q1", "d1", 1.0)], ["query_id", "doc_id", "score"])
    with pytest.raises(InputError, match="holds no query"):
        rs.evaluate(q, r, ["ndcg@10"], spark=spark)
    empty = tmp_path / "qrels.txt"
    empty.write_text("# only a comment\nq1 0 d1 1\n")
    # (a path holding judgments works; an empty DataFrame does not)
    assert rs.evaluate(str(empty), r, ["ndcg@10"], spark=spark).collect().means["ndcg@10"] == 1.0


@pytest.mark.parametrize("where", ["frame", "trec"])
def test_string_score_column_names_the_column_and_value(spark, tmp_path, where):
    from ragrade.errors import RagradeError
    from ragrade.scale import spark as rs

    q = spark.createDataFrame([("q1", "d1", 1.0)], ["query_id", "doc_id", "relevance"])
    if where == "frame":
        r = spark.createDataFrame([("q1", "d1", "0.5"), ("q1", "d2", "high")], ["query_id", "doc_id", "score"])
    else:
        path = tmp_path / "run.txt"
        path.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 high t\n")
        r = str(path)
    with pytest.raises(RagradeError, match=r"score column 'score' holds 'high', not a number") as got:
        rs.evaluate(q, r, ["ndcg@10"], spark=spark)
    if where == "trec":
        assert str(path) in str(got.value)


def test_boolean_grades_are_refused_on_spark(spark):
    from ragrade.scale import spark as rs

    q = spark.createDataFrame([("q1", "d1", True)], ["query_id", "doc_id", "relevance"])
    r = spark.createDataFrame([("q1", "d1", 1.0)], ["query_id", "doc_id", "score"])
    with pytest.raises(InputError, match="booleans"):
        rs.evaluate(q, r, ["ndcg@10"], spark=spark)


# -- issue 21 item 5: one result model -----------------------------------------------------------------------
def test_a_spark_evaluation_returns_the_one_result_model(spark):
    """ragrade.scale.spark.evaluate returns a ragrade.Result (immutable) whose per_query and upper stay on Spark;
    means, counts, the hole rate and the exports are collected once and equal those of collect(), and
    collect() of a local result is itself."""
    import pickle

    from ragrade.scale import spark as rs

    case = random_case(np.random.default_rng(21), 60)
    qt, rt = tables(case)
    res = rs.evaluate(spark.createDataFrame(qt), spark.createDataFrame(rt), ["ndcg@10", "P@5"], partitions=3,
                      unjudged="bounds")
    assert isinstance(res, ragrade.Result) and res.deferred
    assert type(res.per_query).__name__ == "DataFrame" and res.per_query.columns[0] == "query_id"
    assert res.upper is not None and res.upper.columns == ["query_id", "ndcg@10", "P@5"]
    for name in ("per_query", "means", "summary", "hole_rate", "run_name"):
        with pytest.raises(AttributeError, match="immutable"):
            setattr(res, name, None)
    local = res.collect()
    assert not local.deferred and local.collect() is local
    assert res.to_json(per_query=True) == local.to_json(per_query=True)
    assert res.to_csv(per_query=True) == local.to_csv(per_query=True)
    assert res.summary_lines() == local.summary_lines() and dict(res.counts) == dict(local.counts)
    assert json.dumps(res.hole_rate.to_dict(per_query=True)) == json.dumps(local.hole_rate.to_dict(per_query=True))
    assert repr(res) == f"Spark{local!r}"
    copy = res.replace(run_name="bm25")  # a modified copy, still on Spark
    assert copy.deferred and copy.run_name == "bm25" and res.run_name is None
    assert pickle.loads(pickle.dumps(res)).to_json() == local.to_json()  # pickles its collected values
    want = quiet(ragrade.evaluate, qt, rt, ["ndcg@10", "P@5"], unjudged="bounds")
    from ragrade.comparison import compare_scores

    cmp = compare_scores({"spark": res, "local": want}, ["ndcg@10"], n_resamples=200)
    assert cmp.to_json() == compare_scores({"spark": local, "local": want}, ["ndcg@10"], n_resamples=200).to_json()
    res.unpersist()
    assert res.means == local.means  # the collected values stay usable
