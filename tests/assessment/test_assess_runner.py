"""The assessment runner: strict grade parsing, never a 0 for a failure, missing passages never judged,
cache and resume, budgets respected exactly, and the loopback fault server (429, 500, malformed, slow,
garbage, echoing, 401, refused connection)."""

from __future__ import annotations

import json
import math
import socket

import pytest
from assess_helpers import small_collection

import ragrade
from ragrade.assessment import Budget, JudgeConfigError, assess, parse_grade, plan, pool
from ragrade.assessment.prompt import TASK, build_messages
from ragrade.judges import JudgmentCache, ScriptedJudge
from ragrade.judges.prompts import OutputError

# -- the graded prompt -----------------------------------------------------------------------------------


@pytest.mark.parametrize("reply, grade", [
    ('{"grade": 0}', 0), ('{"grade": 3}', 3), (' {"grade": 2, "reason": "partial"} ', 2),
    ('```json\n{"grade": 1}\n```', 1), ("```\n{\"grade\": 1}\n```", 1),
])
def test_parse_grade_accepts(reply, grade):
    assert parse_grade(reply) == {"grade": grade}


@pytest.mark.parametrize("reply", [
    "", "2", "The grade is 2", 'Sure! {"grade": 2}', '{"grade": "2"}', '{"grade": 2.0}', '{"grade": 2.5}',
    '{"grade": 4}', '{"grade": -1}', '{"grade": true}', '{"score": 2}', "[2]", '{"grade": null}',
    '```json\n{"grade": 1}\n``` and more',
])
def test_parse_grade_refuses(reply):
    with pytest.raises(OutputError):
        parse_grade(reply)


def test_prompt_shows_query_title_and_passage():
    user = build_messages({"query": " fjords? ", "title": "Norway", "passage": "Fjords are long."})[1]["content"]
    assert "QUERY: fjords?\nPASSAGE: Norway\nFjords are long." in user
    assert "3 = it answers the query fully and precisely" in user


# -- the runner with a scripted assessor ------------------------------------------------------------------


def _script(fail: set[str] | None = None, bad: set[str] | None = None):
    def answer(task, inputs):
        assert task == TASK
        if fail and inputs["passage"] in fail:
            raise RuntimeError("server on fire")
        if bad and inputs["passage"] in bad:
            return {"grade": 7}
        return {"grade": min(3, len(set(inputs["query"].split()) & set(inputs["passage"].split())))}

    return answer


class GradeJudge(ScriptedJudge):
    """A scripted assessor: ScriptedJudge normalises outputs for the judge tasks, ours checks grades."""

    async def judge(self, task, inputs):
        from ragrade.judges import Judgment

        self.calls += 1
        try:
            out = self.script(task, inputs)
        except Exception as exc:
            return Judgment.failed(f"{type(exc).__name__}: {exc}", transient=True)
        try:
            return Judgment(parse_grade(json.dumps(out)))
        except OutputError as exc:
            return Judgment.failed(f"unreadable reply: {exc}", transient=False)


def _setup():
    a, b, queries, passages = small_collection()
    p = pool([ragrade.Run.from_dict(a, name="a"), ragrade.Run.from_dict(b, name="b")], depth=4)
    return p, queries, passages


def test_every_pair_graded_in_pool_order_and_cached(tmp_path):
    p, queries, passages = _setup()
    judge = GradeJudge(_script())
    r = assess(p, queries, passages, judge=judge, cache=tmp_path / "c.sqlite3")
    assert list(map(tuple, r.grades[["query", "doc"]].values)) == p.as_tuples()
    assert r.complete and not r.failures and not r.not_judged
    assert r.counts["calls"] == judge.calls == r.counts["needed"] > 0
    again = GradeJudge(_script())
    r2 = assess(p, queries, passages, judge=again, cache=tmp_path / "c.sqlite3")
    assert again.calls == 0 and r2.counts["cache_hits"] == r.counts["needed"]
    assert r2.grades.equals(r.grades)


def test_failures_are_listed_never_zero_and_missing_passages_never_judged(tmp_path):
    p, queries, passages = _setup()
    texts = dict(passages)
    gone = p.as_tuples()[0][1]
    del texts[gone]
    broken = texts[p.as_tuples()[1][1]][1]
    unreadable = texts[p.as_tuples()[2][1]][1]
    judge = GradeJudge(_script(fail={broken}, bad={unreadable}))
    r = assess(p, queries, texts, judge=judge, cache=False)
    graded = set(map(tuple, r.grades[["query", "doc"]].values))
    assert (p.as_tuples()[0][0], gone) not in graded
    assert r.not_judged == [{"query": p.as_tuples()[0][0], "doc": gone, "reason": "missing passage"}]
    failed = {(f["query"], f["doc"]): f["reason"] for f in r.failures}
    assert failed[p.as_tuples()[1]].startswith("RuntimeError: server on fire")
    assert "grade must be an integer 0-3" in failed[p.as_tuples()[2]]
    assert not graded & set(failed)
    assert len(graded) + len(failed) + 1 == len(p)


def test_transient_failures_are_retried_by_the_next_run_permanent_ones_only_on_request(tmp_path):
    p, queries, passages = _setup()
    cache = tmp_path / "c.sqlite3"
    broken = passages[p.as_tuples()[0][1]][1]
    unreadable = passages[p.as_tuples()[1][1]][1]
    assess(p, queries, passages, judge=GradeJudge(_script(fail={broken}, bad={unreadable})), cache=cache)
    second = GradeJudge(_script())
    r = assess(p, queries, passages, judge=second, cache=cache)
    assert second.calls == 1 and len(r.failures) == 1  # the transient one asked again, the unreadable one kept
    third = GradeJudge(_script())
    r = assess(p, queries, passages, judge=third, cache=cache, retry_failed=True)
    assert third.calls == 1 and r.failures == [] and r.complete


def test_budget_calls_is_exact_and_a_rerun_resumes(tmp_path):
    p, queries, passages = _setup()
    cache = tmp_path / "c.sqlite3"
    first = GradeJudge(_script())
    r = assess(p, queries, passages, judge=first, cache=cache, budget=Budget(calls=7), max_concurrency=3)
    assert first.calls == 7 == r.counts["calls"] and len(r.grades) == 7
    assert r.budget_reached and not r.complete and len(r.unasked) == len(p) - 7
    rest = GradeJudge(_script())
    r2 = assess(p, queries, passages, judge=rest, cache=cache)
    assert rest.calls == r2.counts["needed"] - 7 and r2.complete and not r2.budget_reached


def test_budget_zero_asks_nothing():
    p, queries, passages = _setup()
    judge = GradeJudge(_script())
    r = assess(p, queries, passages, judge=judge, cache=False, budget=Budget(calls=0))
    assert judge.calls == 0 and r.budget_reached and len(r.unasked) == len(p)


def test_budget_rejects_bad_values():
    from ragrade.errors import InputError

    with pytest.raises(InputError):
        Budget(calls=-1)
    with pytest.raises(InputError):
        Budget(usd=float("nan"))


def test_offline_assessor_on_the_examples_agrees_with_the_example_qrels(examples):
    from ragrade.assessment import agreement, read_passages, read_queries

    runs = [ragrade.read_run(examples / "run.tsv"), ragrade.read_run(examples / "run_dense.tsv")]
    p = pool(runs, depth=10)
    passages = read_passages(examples / "corpus.jsonl", p.doc_ids)
    r = assess(p, read_queries(examples / "topics.tsv"), passages, cache=False)
    assert r.judge["approximation"] is True
    assert passages.missing == ["doc-0788"] and r.not_judged[0]["doc"] == "doc-0788"
    a = agreement(examples / "qrels.tsv", r.to_qrels(), runs, ["ndcg@10"])
    assert a.pairs > 200 and a.kappa > 0.5  # the synthetic texts are built to agree roughly


# -- against the loopback fault server ---------------------------------------------------------------------


def _llm(server, **kw):
    from ragrade.assessment import LLMGrader

    opts = {"model": "fake", "base_url": server.base_url, "max_concurrency": 2, "backoff_base": 0.01, "max_retries": 3,
            "jitter_seed": 1}
    opts.update(kw)
    return LLMGrader(**opts)


def test_llm_assessor_survives_429_500_malformed_truncated_and_chatter(grading_server, tmp_path):
    p, queries, passages = _setup()
    # The first judgment is asked alone (to check the key), then two at a time; which judgment meets which
    # fault depends on timing, so each may retry as often as there are retryable faults (5): none may fail.
    grading_server.faults.extend(["429", "500", "malformed", "truncated", "429", "slow"])
    grading_server.slow_seconds = 0.2
    r = assess(p, queries, passages, judge=_llm(grading_server, max_retries=5), cache=tmp_path / "c.sqlite3")
    assert r.complete and not r.failures and len(r.grades) == len(p)
    assert grading_server.count("429") == 2 and grading_server.count("500") == 1
    assert r.counts["calls"] == r.counts["needed"]
    assert r.counts["prompt_tokens"] > 0 and r.counts["completion_tokens"] > 0
    # a reply with prose around the JSON is refused by the strict parser: asked again, then a failure
    grading_server.always = "chatter"
    r2 = assess(p, queries, passages, judge=_llm(grading_server), cache=False)
    assert len(r2.failures) == len(p) and r2.grades.empty
    assert all("not a JSON object" in f["reason"] for f in r2.failures)
    grading_server.always = None


def test_slow_server_times_out_as_a_transient_failure(grading_server):
    _, queries, passages = _setup()
    one = pool([ragrade.Run.from_dict({"q0": {"d0-0": 1.0}})], depth=1)
    grading_server.always = "slow"
    grading_server.slow_seconds = 1.5
    r = assess(one, queries, passages, judge=_llm(grading_server, timeout=0.3, max_retries=1), cache=False)
    grading_server.always = None
    assert len(r.failures) == 1 and "timeout" in r.failures[0]["reason"]
    assert r.grades.empty


def test_echoing_server_never_gets_the_key_stored(grading_server, tmp_path, monkeypatch):
    import fakeserver

    secret = "sk-test-ECHO-0123456789abcdef"
    monkeypatch.setenv("ASSESS_TEST_KEY", secret)

    def echo(user):  # the reply repeats the request, Authorization header included
        return {"you_sent": grading_server.log[-1]["auth"], "prompt": user[:50]}

    monkeypatch.setattr(fakeserver, "answer_for", echo)
    p, queries, passages = _setup()
    cache = tmp_path / "c.sqlite3"
    r = assess(p, queries, passages, judge=_llm(grading_server, api_key_env="ASSESS_TEST_KEY"), cache=cache)
    assert grading_server.log[-1]["auth"] == f"Bearer {secret}"  # the key did travel, in the header
    assert len(r.failures) == len(p)
    text = json.dumps(r.failures) + json.dumps(r.counts)
    assert secret not in text and "0123456789abcdef" not in text
    raw = cache.read_bytes() + (tmp_path / "c.sqlite3-wal").read_bytes() if (tmp_path / "c.sqlite3-wal").exists() \
        else cache.read_bytes()
    assert secret.encode() not in raw and b"0123456789abcdef" not in raw


def test_http_401_stops_at_the_first_occurrence_and_is_not_cached(tmp_path):
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hits = []

    class Deny(BaseHTTPRequestHandler):
        def log_message(self, *a):
            return

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            hits.append(1)
            body = b'{"error": {"message": "Incorrect API key provided"}}'
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Deny)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        from ragrade.assessment import LLMGrader

        p, queries, passages = _setup()
        judge = LLMGrader(model="m", base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", max_concurrency=1)
        cache = tmp_path / "c.sqlite3"
        with pytest.raises(JudgeConfigError, match="HTTP 401"):
            assess(p, queries, passages, judge=judge, cache=cache)
        assert len(hits) == 1
        with JudgmentCache(cache) as c:
            assert len(c) == 0
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_refused_connection_at_start_stops_before_any_work(tmp_path):
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    from ragrade.assessment import LLMGrader

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    p, queries, passages = _setup()
    judge = LLMGrader(model="m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(JudgeConfigError, match="cannot connect"):
        assess(p, queries, passages, judge=judge, cache=tmp_path / "c.sqlite3")


def _replay(p, queries, passages, judge, budget_tokens=None, budget_usd=None):
    """The number of judgments the budget rule admits with one judgment in flight at a time, from the
    fault server's usage (words of the prompt, words of the reply)."""
    from ragrade.assessment.runner import _build, _worst_tokens

    _, requests, _ = _build(p, queries, passages, judge)
    spent_t, spent_c, n = 0, 0.0, 0
    s = judge.settings
    for inputs in requests.values():
        wp, wc = _worst_tokens(judge, inputs)
        wcost = (wp * s.prompt_price + wc * s.completion_price) / 1e6
        if budget_tokens is not None and spent_t + wp + wc > budget_tokens:
            break
        if budget_usd is not None and spent_c + wcost > budget_usd + 1e-12:
            break
        user = build_messages(inputs)[1]["content"]
        import assess_helpers

        pt, ct = len(user.split()), len(json.dumps(assess_helpers.grade_answer(user)).split())
        spent_t += pt + ct
        spent_c += (pt * s.prompt_price + ct * s.completion_price) / 1e6
        n += 1
    return n, spent_t, spent_c


def test_token_budget_is_never_exceeded_and_stops_where_the_rule_says(grading_server, tmp_path):
    p, queries, passages = _setup()
    judge = _llm(grading_server, max_concurrency=1)
    budget = 3000
    expected, spent, _ = _replay(p, queries, passages, judge, budget_tokens=budget)
    assert 0 < expected < len(p)
    r = assess(p, queries, passages, judge=_llm(grading_server, max_concurrency=1), cache=tmp_path / "c.sqlite3",
               budget=Budget(tokens=budget), max_concurrency=1)
    used = r.counts["prompt_tokens"] + r.counts["completion_tokens"]
    assert used == spent <= budget
    assert r.counts["calls"] == expected == grading_server.count()
    assert r.budget_reached and len(r.grades) == expected
    # concurrency never lets the spend overshoot either
    r4 = assess(p, queries, passages, judge=_llm(grading_server, max_concurrency=4), cache=False,
                budget=Budget(tokens=budget), max_concurrency=4)
    assert r4.counts["prompt_tokens"] + r4.counts["completion_tokens"] <= budget


def test_cost_budget_is_never_exceeded(grading_server):
    p, queries, passages = _setup()
    prices = {"prompt_price": 2.0, "completion_price": 10.0}
    judge = _llm(grading_server, max_concurrency=1, **prices)
    usd = 0.008
    expected, _, cost = _replay(p, queries, passages, judge, budget_usd=usd)
    assert 0 < expected < len(p)
    r = assess(p, queries, passages, judge=_llm(grading_server, max_concurrency=1, **prices), cache=False,
               budget=Budget(usd=usd), max_concurrency=1)
    assert r.counts["cost"] == pytest.approx(cost) and r.counts["cost"] <= usd
    assert r.counts["calls"] == expected


def test_plan_counts_calls_tokens_and_cost_without_asking(grading_server, tmp_path):
    p, queries, passages = _setup()
    cache = tmp_path / "c.sqlite3"
    judge = _llm(grading_server, prompt_price=1.0, completion_price=4.0)
    before = plan(p, queries, passages, judge=judge, cache=cache)
    assert grading_server.count() == 0
    assert before.calls == before.requests == len(p) and before.cached == 0
    assert before.prompt_tokens > 0 and before.worst_tokens > before.prompt_tokens + before.completion_tokens
    assert before.cost is not None and before.worst_cost is not None and before.cost < before.worst_cost
    assess(p, queries, passages, judge=judge, cache=cache, budget=Budget(calls=5))
    after = plan(p, queries, passages, judge=_llm(grading_server), cache=cache)
    assert after.cached == 5 and after.calls == len(p) - 5 and after.cost is None
    assert not math.isnan(after.prompt_tokens)
