"""The OpenAI-compatible judge against a fault-injecting server on loopback (real sockets)."""

from __future__ import annotations

import asyncio
import logging
import math

import pytest

pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")

from fakeserver import FakeLLMServer, answer_for

from ragrade.judges import JudgmentCache, OpenAIJudge, evaluate_judged
from ragrade.judges.prompts import build_messages

ROWS = [
    {
        "id": "q1",
        "question": "Where is the Eiffel Tower?",
        "reference": "The Eiffel Tower is in Paris.",
        "contexts": ["The Eiffel Tower stands in Paris.", "Rome has the Colosseum."],
    },
    {
        "id": "q2",
        "question": "Who wrote Hamlet?",
        "reference": "Hamlet was written by Shakespeare.",
        "contexts": ["Shakespeare wrote Hamlet around 1600.", "Goethe wrote Faust."],
    },
]


@pytest.fixture
def server():
    with FakeLLMServer() as s:
        yield s


def _judge(server, **kw):
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("max_backoff", 2.0)
    kw.setdefault("timeout", 5.0)
    kw.setdefault("jitter_seed", 0)
    return OpenAIJudge(model="fake", base_url=server.base_url, **kw)


def _run(judge, task, inputs):
    async def go():
        try:
            return await judge.judge(task, inputs)
        finally:
            await judge.aclose()

    return asyncio.run(go())


INPUTS = {"question": "Where is the Eiffel Tower?", "context": "The Eiffel Tower stands in Paris.", "answer": "Paris."}


def test_clean_call_sends_temperature_seed_schema_and_counts_tokens(server):
    judge = _judge(server)
    j = _run(judge, "chunk_verdict", INPUTS)
    assert j.ok and j.output == {"verdict": 1, "reason": "shared capitalised words"}
    body = server.log[0]["body"]
    assert body["temperature"] == 0 and body["seed"] == 0 and body["model"] == "fake"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "chunk_verdict"
    assert j.usage.prompt_tokens > 0 and j.usage.completion_tokens > 0
    assert judge.stats.prompt_tokens == j.usage.prompt_tokens


def test_cost_accounting_from_prices(server):
    judge = _judge(server, prompt_price=2.0, completion_price=8.0)
    j = _run(judge, "chunk_verdict", INPUTS)
    expected = (j.usage.prompt_tokens * 2.0 + j.usage.completion_tokens * 8.0) / 1e6
    assert j.usage.cost == pytest.approx(expected) and expected > 0
    assert judge.stats.cost == pytest.approx(expected) and judge.stats.judgments == 1


@pytest.mark.parametrize("fault", ["429", "500", "malformed", "truncated", "chatter"])
def test_recovers_from_single_fault(server, fault):
    server.faults.extend([fault, fault])
    judge = _judge(server)
    j = _run(judge, "chunk_verdict", INPUTS)
    assert j.ok, j.error
    assert j.output["verdict"] == 1
    expected_requests = 1 if fault == "chatter" else 3
    assert server.count() == expected_requests
    assert j.attempts == expected_requests


def test_slow_response_times_out_and_is_retried(server):
    server.faults.append("slow")
    server.slow_seconds = 1.5
    judge = _judge(server, timeout=0.3)
    j = _run(judge, "chunk_verdict", INPUTS)
    assert j.ok
    assert server.count("slow") == 1 and server.count("ok") == 1
    assert judge.stats.retries == 1


def test_retry_after_is_honoured(server):
    server.faults.append("429")
    server.retry_after = "0.6"
    j = _run(_judge(server, backoff_base=0.001), "chunk_verdict", INPUTS)
    assert j.ok
    gap = server.log[1]["time"] - server.log[0]["time"]
    assert gap >= 0.55


def test_persistent_failure_is_recorded_not_raised(server):
    server.always = "500"
    j = _run(_judge(server, max_retries=2), "chunk_verdict", INPUTS)
    assert not j.ok and j.transient
    assert "HTTP 500" in j.error and "3 attempts" in j.error
    assert server.count() == 3


def test_unparseable_reply_is_asked_again_then_permanent_failure(server):
    server.always = "garbage"
    j = _run(_judge(server, parse_retries=1), "chunk_verdict", INPUTS)
    assert not j.ok and not j.transient
    assert "unreadable reply" in j.error
    assert server.count() == 2


def test_schema_rejection_falls_back_to_json_object_with_schema(server):
    server.faults.append("reject_schema")
    judge = _judge(server)
    assert _run(judge, "chunk_verdict", INPUTS).ok
    formats = [e["body"].get("response_format", {}) for e in server.log]
    assert [f.get("type") for f in formats] == ["json_schema", "json_object"]
    assert formats[1]["schema"]["required"] == ["reason", "verdict"]
    assert judge._mode == "json_object_schema"


def test_failed_judgments_make_nan_never_zero_and_run_goes_on(server, tmp_path):
    server.always = "500"
    res = evaluate_judged(
        ROWS, ["llm_context_precision", "context_recall"], judge=_judge(server, max_retries=1), cache=tmp_path / "c.db"
    )
    assert res.per_query.isna().all().all()
    for m in ("llm_context_precision", "context_recall"):
        assert res.summary["metrics"][m]["failed"] == 2
        assert res.summary["metrics"][m]["scored"] == 0
    assert "HTTP 500" in res.details["q1"]["context_recall"]["reason"]
    assert math.isnan(res.means["context_recall"])
    # transient failures are cached as failed and retried on the next run, which now succeeds
    server.always = None
    again = evaluate_judged(ROWS, ["llm_context_precision", "context_recall"], judge=_judge(server), cache=tmp_path / "c.db")
    assert again.per_query.notna().all().all()
    assert again.summary["judgments"]["calls"] == again.summary["judgments"]["needed"]


def test_mixed_faults_over_a_dataset_with_concurrency(server, tmp_path):
    server.faults.extend(["429", "500", "malformed", "truncated", "chatter"] * 2)
    judge = _judge(server, max_concurrency=4)
    res = evaluate_judged(ROWS, None, judge=judge, cache=tmp_path / "c.db")
    assert res.per_query.notna().all().all()
    assert res.summary["judgments"]["failed"] == 0
    # a second run makes no call
    before = server.count()
    res2 = evaluate_judged(ROWS, None, judge=_judge(server), cache=tmp_path / "c.db")
    assert server.count() == before
    assert res2.summary["judgments"]["calls"] == 0
    assert res2.summary["judgments"]["cache_hits"] == res2.summary["judgments"]["needed"]
    assert res2.per_query.equals(res.per_query)


def test_api_key_never_shown(server, tmp_path, monkeypatch, caplog, capsys):
    secret = "sk-test-SECRET-1234567890"
    monkeypatch.setenv("RAGRADE_TEST_KEY", secret)
    server.always = "500"
    judge = _judge(server, api_key_env="RAGRADE_TEST_KEY", max_retries=1)
    assert secret not in repr(judge) and secret not in str(judge)
    assert "redacted" in repr(judge)
    with caplog.at_level(logging.DEBUG):
        res = evaluate_judged(ROWS[:1], ["context_recall"], judge=judge, cache=tmp_path / "c.db")
    assert server.log[0]["auth"] == f"Bearer {secret}"  # it is sent, only in the header
    out = capsys.readouterr()
    assert secret not in out.out + out.err + caplog.text
    assert secret not in repr(res.to_dict())
    assert secret.encode() not in (tmp_path / "c.db").read_bytes()


def test_fake_server_answers_match_its_rule():
    user = build_messages("entities", {"text": "Paris and Rome are in Europe."})[-1]["content"]
    assert answer_for(user) == {"entities": ["Europe", "Paris", "Rome"]}


def test_cache_roundtrip_and_failures_do_not_overwrite_success(tmp_path):
    from ragrade.judges import Judgment

    with JudgmentCache(tmp_path / "c.db") as c:
        ok = Judgment({"verdict": 1, "reason": "r"})
        c.put("k", judge="j", model="m", prompt_version="p", task="chunk_verdict", judgment=ok)
        c.put("k", judge="j", model="m", prompt_version="p", task="chunk_verdict", judgment=Judgment.failed("x", transient=True))
        got = c.get("k")
        assert got.ok and got.output == ok.output and got.cached
        assert c.counts() == {"ok": 1}


def test_retry_after_parsing_and_backoff_bounds():
    import email.utils
    import time

    parse = OpenAIJudge._retry_after
    assert parse({"retry-after": "2.5"}) == 2.5
    assert parse({"retry-after-ms": "150"}) == 0.15
    assert parse({}) is None and parse({"retry-after": "soon"}) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse({"retry-after": future}) <= 31
    judge = OpenAIJudge(model="m", base_url="http://127.0.0.1:9/v1", backoff_base=0.5, max_backoff=4.0, jitter_seed=1)
    delays = [judge._backoff(n, None) for n in range(10)]
    assert all(0 <= d <= min(4.0, 0.5 * 2**n) for n, d in enumerate(delays))
    assert judge._backoff(0, 3.0) >= 3.0 and judge._backoff(0, 100.0) == 4.0


def test_settings_validated():
    from ragrade.errors import InputError

    with pytest.raises(InputError, match="base_url"):
        OpenAIJudge(model="m", base_url="127.0.0.1:8080")
    with pytest.raises(InputError, match="response_format"):
        OpenAIJudge(model="m", response_format="xml")
    with pytest.raises(InputError, match="max_concurrency"):
        OpenAIJudge(model="m", max_concurrency=0)
