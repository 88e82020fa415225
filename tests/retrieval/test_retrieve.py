"""``ragrade.retrieve`` with plain and async callables: every answer shape, scores and texts, failures,
the cache, latency, configuration errors; queries from every accepted shape; the ``retrieve`` command."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time

import pandas as pd
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.errors import InputError
from ragrade.retrieval import (
    IdMismatchError,
    RetrievalCache,
    RetrieverConfigError,
    as_queries,
    check_ids,
    judge_rows,
    kind_of,
    retrieve,
)

QUERIES = {"q1": "alpha beta", "q2": "gamma", "q3": "delta"}


def _fixed(answers):
    return lambda q: answers[q]


def test_answer_shapes():
    answers = {
        "alpha beta": ["d1", 7, "d3"],                                     # ids (ints by the id rule)
        "gamma": [("d4", 0.9), ("d5", 0.5)],                               # (id, score)
        "delta": [{"doc_id": "d6", "score": 2.0, "text": "six"}, {"id": "d7", "page_content": "seven"}],
    }
    run = retrieve(_fixed(answers), QUERIES, k=10, progress=False)
    assert run.to_lists() == {"q1": ["d1", "7", "d3"], "q2": ["d4", "d5"], "q3": ["d6", "d7"]}
    assert not run.has_scores  # some answers have no scores: the order is the ranking
    assert run.texts.tolist() == [None, None, None, None, None, "six", "seven"]


def test_descending_scores_are_kept_and_k_cuts():
    run = retrieve(lambda q: [(f"{q}-{i}", 10.0 - i) for i in range(30)], {"a": "x", "b": "y"}, k=5, progress=False)
    assert run.has_scores and run.ranked("a")[0] == ("x-0", 10.0) and len(run.to_lists()["a"]) == 5


def test_ascending_distances_keep_the_order_without_scores():
    run = retrieve(lambda q: [("near", 0.1), ("far", 0.9)], {"a": "x"}, k=5, progress=False)
    assert run.to_lists() == {"a": ["near", "far"]} and not run.has_scores
    assert run.retrieval.unordered_scores == 1
    assert any("distances" in line for line in run.retrieval.lines())


def test_k_is_passed_to_a_callable_that_takes_it():
    seen = []

    def search(query, top_k=3):
        seen.append(top_k)
        return [f"d{i}" for i in range(top_k)]

    run = retrieve(search, ["only one query"], k=7, progress=False)
    assert seen == [7] and len(run.to_lists()["0"]) == 7


def test_failures_latency_and_summary():
    def search(q):
        if q == "gamma":
            raise TimeoutError("no answer within 5 s")
        time.sleep(0.02)
        return ["d1"]

    run = retrieve(search, QUERIES, k=3, concurrency=3, progress=False)
    assert run.failures == {"q2": "TimeoutError: no answer within 5 s"}
    assert list(run.latency.index) == ["q1", "q2", "q3"] and run.latency["q1"] >= 0.02
    s = run.retrieval
    assert (s.queries, s.answered, s.failed, s.calls, s.cached) == (3, 2, 1, 3, 0)
    assert 0.02 <= s.latency_p50 <= s.latency_p95 <= s.latency_p99 <= s.latency_max
    assert "q2" not in run and s.to_dict()["failures"] == run.failures
    assert any("failed: TimeoutError" in line for line in s.lines())


def test_secrets_in_failure_messages_are_redacted():
    def search(q):
        raise RuntimeError("401 for Authorization: Bearer sk-abcdefghijklmnop1234567890")

    run = retrieve(search, {"q": "x"}, progress=False)
    assert "sk-abc" not in run.failures["q"] and "***" in run.failures["q"]


def test_every_query_failing_gives_an_empty_run_and_nan_latency_percentiles():
    run = retrieve(lambda q: 1 / 0, QUERIES, progress=False)
    assert run.n_queries == 0 and run.retrieval.failed == 3 and math.isnan(run.retrieval.latency_p50)


def test_an_answer_that_is_not_a_list_is_a_failure():
    run = retrieve(lambda q: "d1 d2", {"q": "x"}, progress=False)
    assert run.failures["q"].startswith("TypeError: the retriever returned a str")
    run = retrieve(lambda q: [object()], {"q": "x"}, progress=False)
    assert "cannot read a retrieved object" in run.failures["q"]


def test_configuration_errors_stop_at_once():
    calls = []

    def search(q):
        calls.append(q)
        return [{"title": "no id here"}]

    with pytest.raises(RetrieverConfigError, match="no id field"):
        retrieve(search, QUERIES, concurrency=1, progress=False)
    assert len(calls) == 1
    with pytest.raises(RetrieverConfigError, match="no field 'pid'"):
        retrieve(lambda q: [{"id": "a"}], QUERIES, id_key="pid", progress=False)


def test_async_callables_run_as_tasks():
    active, peak = [0], [0]

    async def search(q):
        active[0] += 1
        peak[0] = max(peak[0], active[0])
        await asyncio.sleep(0.01)
        active[0] -= 1
        if q == "delta":
            raise ValueError("bad query")
        return [q.split()[0]]

    qs = {f"q{i}": f"w{i} x" for i in range(12)} | {"bad": "delta"}
    run = retrieve(search, qs, concurrency=4, progress=False)
    assert run.retrieval.mode == "asyncio" and peak[0] == 4
    assert run.to_lists()["q3"] == ["w3"] and run.failures == {"bad": "ValueError: bad query"}


def test_retrieve_works_inside_a_running_event_loop():
    async def outer():
        return retrieve(lambda q: ["d"], {"q": "x"}, mode="auto", progress=False), \
            retrieve(_async_one, {"q": "x"}, progress=False)

    a, b = asyncio.run(outer())
    assert a.to_lists() == b.to_lists() == {"q": ["d"]}


async def _async_one(q):
    return ["d"]


def test_bad_arguments():
    with pytest.raises(InputError, match="k must be"):
        retrieve(lambda q: [], QUERIES, k=0)
    with pytest.raises(InputError, match="concurrency"):
        retrieve(lambda q: [], QUERIES, concurrency=0)
    with pytest.raises(InputError, match="mode"):
        retrieve(lambda q: [], QUERIES, mode="processes")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="needs an async retriever"):
        retrieve(lambda q: [], QUERIES, mode="asyncio")
    with pytest.raises(InputError, match="as a retriever"):
        retrieve(42, QUERIES)
    assert kind_of(lambda q: q) == "callable" and kind_of(_async_one) == "async"


def test_queries_from_every_shape(tmp_path):
    assert as_queries({"a": "x", 2: "y"}) == {"a": "x", "2": "y"}
    assert as_queries([("a", "x"), ("b", "y")]) == {"a": "x", "b": "y"}
    assert as_queries(pd.DataFrame({"qid": ["a"], "text": ["x"]})) == {"a": "x"}
    p = tmp_path / "topics.jsonl"
    p.write_text(json.dumps({"_id": "a", "text": "x"}) + "\n")
    assert as_queries(p) == {"a": "x"}
    (tmp_path / "t.tsv").write_text("a\tx y\nb\tz\n")
    assert as_queries(str(tmp_path / "t.tsv")) == {"a": "x y", "b": "z"}
    pq = tmp_path / "topics.parquet"
    pd.DataFrame({"query_id": ["7", "b"], "text": ["first", "second"]}).to_parquet(pq)
    assert as_queries(pq) == {"7": "first", "b": "second"}
    for bad, msg in [([("a", "x"), ("a", "y")], "twice"), ({"a": ""}, "empty"), ({"a": 3}, "string"),
                     ([], "no query"), (3.5, "cannot use"), ([("a", "x", "z")], "pairs")]:
        with pytest.raises(InputError, match=msg):
            as_queries(bad)


def test_cache_file(tmp_path):
    path = tmp_path / "sub" / "cache.sqlite3"
    calls = []

    def search(q):
        calls.append(q)
        return [{"id": "d1", "score": 1.0, "text": "t"}]

    retrieve(search, QUERIES, cache=path, name="s", progress=False)
    with RetrievalCache(path) as cache:
        assert len(cache) == 3
        hits, latency = cache.get("s", None, 20, "gamma")
        assert hits[0].doc == "d1" and hits[0].text == "t" and latency >= 0
    # the same text under another query id is the same call
    again = retrieve(search, {"other": "gamma"}, cache=path, name="s", progress=False)
    assert len(calls) == 3 and again.retrieval.cached == 1
    (tmp_path / "dir").mkdir()
    with pytest.raises(InputError, match="not a directory"):
        retrieve(search, QUERIES, cache=tmp_path / "dir", progress=False)
    (tmp_path / "junk").write_bytes(b"not a database at all, really" * 100)
    with pytest.raises(InputError, match="cannot use this file"):
        retrieve(search, QUERIES, cache=tmp_path / "junk", progress=False)


def test_check_ids():
    run = retrieve(lambda q: ["chunk-1", "chunk-2"], {"q1": "x"}, progress=False)
    with pytest.raises(IdMismatchError, match=r"'chunk-1'.*'d1'") as info:
        check_ids(run, {"q1": {"d1": 1}})
    assert info.value.run is run
    check_ids(run, {"q1": {"chunk-2": 0}})  # a judged id met (even non-relevant) is enough
    with pytest.raises(IdMismatchError, match="no retrieved query"):
        check_ids(run, {"other": {"d1": 1}})


def test_judge_rows_from_a_run_with_texts():
    run = retrieve(lambda q: [{"id": "d1", "text": "Paris is in France."}, {"id": "d2", "text": "Lyon."}],
                   {"q1": "Where is Paris?"}, progress=False)
    rows = judge_rows(run, {"q1": "Where is Paris?"}, {"q1": "France."})
    assert rows == [{"id": "q1", "question": "Where is Paris?", "reference": "France.",
                     "contexts": ["Paris is in France.", "Lyon."]}]
    from ragrade.judges.runner import examples_from

    assert list(examples_from(rows)[0].contexts) == ["Paris is in France.", "Lyon."]
    with pytest.raises(InputError, match="no text in the queries"):
        judge_rows(run, {"other": "x"})


def test_evaluate_a_retrieved_run_with_a_text_matcher():
    run = retrieve(lambda q: [{"id": "d1", "text": "Lyon is big."},
                              {"id": "d2", "text": "Paris is the capital of France."}], {"q1": "capital?"},
                   progress=False)
    r = ragrade.evaluate({"q1": ["Paris is the capital of France."]}, run, ["rr"], matcher="normalized_exact")
    assert r.means["rr"] == 0.5


# -- the command ---------------------------------------------------------------------------------------
MODULE = '''
CALLS = []
def build(prefix="d"):
    def search(q, k=10):
        CALLS.append(q)
        if "boom" in q:
            raise RuntimeError("boom")
        return [{"id": f"{prefix}{len(q) % 3}", "score": 2.0, "text": q}, {"id": "dx", "score": 1.0, "text": "x"}]
    return search
def search(q):
    return ["d1"]
'''


@pytest.fixture()
def project(tmp_path, monkeypatch):
    (tmp_path / "myretriever.py").write_text(MODULE)
    (tmp_path / "topics.tsv").write_text("q1\tfirst question\nq2\tsecond one\n")
    (tmp_path / "qrels.tsv").write_text("q1 0 d1 1\nq2 0 dx 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_retrieve_writes_the_run_and_reruns_from_the_cache(project):
    r = _cli("retrieve", "myretriever:build", "--queries", "topics.tsv", "-k", "5", "-o", "run.parquet",
             "--cache", "c.sqlite3", "--qrels", "qrels.tsv")
    assert r.exit_code == 0, r.output
    assert "2 answered, 0 failed" in r.stderr and "p50" in r.stderr
    run = ragrade.read_run(project / "run.parquet")
    assert run.name == "myretriever:build" and run.text_lists()["q1"] == ["first question", "x"]
    r = _cli("retrieve", "myretriever:build", "--queries", "topics.tsv", "-k", "5", "-o", "run.parquet",
             "--cache", "c.sqlite3", "--format", "json")
    summary = json.loads(r.stdout)
    assert summary["calls"] == 0 and summary["cached"] == 2


def test_cli_retrieve_exit_codes(project):
    (project / "bad.tsv").write_text("q1\tboom\nq2\tfine\n")
    r = _cli("retrieve", "myretriever:build", "--queries", "bad.tsv", "-o", "run.jsonl")
    assert r.exit_code == 1 and "1 of 2 queries failed" in r.stderr
    assert ragrade.read_run(project / "run.jsonl").query_ids.tolist() == ["q2"]  # written all the same
    r = _cli("retrieve", "myretriever:build", "--queries", "bad.tsv", "-o", "run.jsonl", "--max-failed", "50")
    assert r.exit_code == 0
    r = _cli("retrieve", "myretriever:search", "--queries", "topics.tsv", "-o", "r.tsv", "--qrels", "qrels.tsv",
             "--no-texts")
    assert r.exit_code == 0  # a function of the query is used as it is; d1 meets the qrels
    (project / "other.qrels").write_text("q1 0 zz 1\n")
    r = _cli("retrieve", "myretriever:search", "--queries", "topics.tsv", "-o", "r.tsv", "--qrels", "other.qrels")
    assert r.exit_code == 2 and "every metric would be 0" in r.stderr and (project / "r.tsv").exists()
    for spec, msg in [("nomodule:x", "cannot import 'nomodule'"), ("myretriever:nothing", "no attribute"),
                      ("myretriever", "package.module:name")]:
        r = _cli("retrieve", spec, "--queries", "topics.tsv", "-o", "r.tsv")
        assert r.exit_code == 2 and msg in r.stderr, r.stderr


def test_junk_arguments_raise_ragrade_errors_only():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from ragrade.errors import RagradeError

    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 5), st.floats(allow_nan=True), st.text(max_size=5),
                        st.binary(max_size=3))
    junk = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                                                         st.dictionaries(st.text(max_size=3), inner, max_size=3)),
                        max_leaves=8)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(junk, junk, junk)
    def check(answer, queries, k):
        with contextlib.suppress(RagradeError):
            retrieve(lambda q: answer, queries, k=k if isinstance(k, int) else 3, concurrency=1, progress=False)
        with contextlib.suppress(RagradeError):
            retrieve(lambda q: answer, {"q": "text"}, concurrency=1, progress=False, id_key=None)

    check()
