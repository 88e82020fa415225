"""The judge-metric registry, formulas, degenerate-input policies and reply parsing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from seed_data import PRECISION, RECALL, seed_script

from ragrade.errors import InputError, MetricError, UnknownNameError
from ragrade.judges import JUDGE_METRICS, JudgeMetric, ScriptedJudge, evaluate_judged, parse
from ragrade.judges.metrics import ranked_precision, split_sentences
from ragrade.judges.prompts import OutputError, build_messages, extract_json, normalize_output, parse_output

ALL = [JudgeMetric(n) for n in JUDGE_METRICS] + [JudgeMetric(n, 3) for n, i in JUDGE_METRICS.items() if i.cutoff != "none"]


@pytest.mark.parametrize("metric", ALL, ids=str)
def test_parse_roundtrip(metric):
    assert parse(str(metric)) == metric


@pytest.mark.parametrize("name", JUDGE_METRICS)
def test_aliases_resolve(name):
    for alias in JUDGE_METRICS[name].aliases:
        assert parse(alias).name == name


def test_parse_errors():
    with pytest.raises(UnknownNameError, match="Did you mean 'context_recall'"):
        parse("context_recal")
    with pytest.raises(MetricError, match="takes no cutoff"):
        parse("context_recall@3")
    with pytest.raises(MetricError, match="positive integer"):
        parse("llm_context_precision@0")
    with pytest.raises(MetricError, match="positive integer"):
        parse("llm_context_precision@x")


@pytest.mark.parametrize(
    ("v", "profile", "expected"),
    [
        ([0, 1], "ragas", 0.49999999995),
        ([1, 0, 1], "ragas", 0.8333333332916666),
        ([0, 0], "ragas", 0.0),
        ([1, 0, 0], "default", 1.0),
        ([1, 0, 1], "deepeval", (1 + 2 / 3) / 2),
        ([1, 0, 0, 1], "default", 0.75),
        ([0, 0], "default", 0.0),
    ],
)
def test_ranked_precision_parity_vectors(v, profile, expected):
    got = ranked_precision(np.array(v), np.array([0, len(v)]), None, profile)
    assert got[0] == pytest.approx(expected, abs=1e-15)


@given(st.lists(st.lists(st.integers(0, 1), min_size=0, max_size=8), min_size=1, max_size=6), st.none() | st.integers(1, 5))
def test_ranked_precision_flat_equals_per_query_loop(lists, k):
    flat = np.array([x for v in lists for x in v], dtype=float)
    offsets = np.cumsum([0] + [len(v) for v in lists])
    got = ranked_precision(flat, offsets, k, "default")
    for q, v in enumerate(lists):
        v = v[:k] if k else v
        hits, total = 0, 0.0
        for i, x in enumerate(v, start=1):
            hits += x
            total += hits / i * x
        expected = total / sum(v) if sum(v) else 0.0
        assert got[q] == pytest.approx(expected, abs=1e-12)
        assert 0.0 <= got[q] <= 1.0


def test_degenerate_inputs_make_no_call():
    judge = ScriptedJudge(seed_script)
    rows = [
        {**RECALL, "id": "empty-ctx", "contexts": []},
        {**RECALL, "id": "blank-ctx", "contexts": ["", "   "]},
        {**RECALL, "id": "no-ref", "reference": ""},
        {**RECALL, "id": "no-question", "question": "", "reference": ""},
    ]
    res = evaluate_judged(rows, None, judge=judge, cache=False)
    # only no-ref asks: precision_noref and relevancy need the question, not the reference (2 chunks each)
    assert judge.calls == 2 * len(RECALL["contexts"])
    pq = res.per_query
    assert (pq.loc["empty-ctx"] == 0.0).all() and (pq.loc["blank-ctx"] == 0.0).all()
    for m in ("llm_context_precision", "context_recall", "context_entities_recall"):
        assert math.isnan(pq.loc["no-ref", m])
        assert res.details["no-ref"][m] == {"status": "missing", "reason": "empty reference"}
    assert not math.isnan(pq.loc["no-ref", "llm_context_precision_noref"])
    assert pq.loc["no-question"].isna().all()
    assert res.summary["metrics"]["context_recall"] == {
        "scored": 0, "failed": 0, "missing": 2, "degenerate": 2, "undefined": 0
    }


def test_empty_chunk_inside_list_is_not_useful_and_not_asked():
    judge = ScriptedJudge(seed_script)
    row = {**PRECISION, "contexts": ["", PRECISION["contexts"][0]]}
    res = evaluate_judged([row], ["llm_context_precision"], judge=judge, cache=False)
    assert judge.calls == 1
    assert res.per_query.iloc[0, 0] == 0.5
    assert res.details["precision"]["llm_context_precision"]["verdicts"][0] == {"verdict": 0, "reason": "empty chunk"}


def test_judge_failure_is_nan_with_reason_and_others_still_score():
    def script(task, inputs):
        if task == "attribution":
            raise TimeoutError("simulated")
        return seed_script(task, inputs)

    res = evaluate_judged([RECALL, PRECISION], ["context_recall", "llm_context_precision"], judge=ScriptedJudge(script), cache=False)
    assert res.per_query["context_recall"].isna().all()
    assert res.summary["metrics"]["context_recall"]["failed"] == 2
    assert "simulated" in res.details["recall"]["context_recall"]["reason"]
    assert res.per_query["llm_context_precision"].notna().all()


def test_undefined_cases():
    def script(task, inputs):
        if task == "attribution":
            return {"statements": []}
        if task == "entities":
            return {"entities": []}
        return seed_script(task, inputs)

    res = evaluate_judged([RECALL], ["context_recall", "context_entities_recall"], judge=ScriptedJudge(script), cache=False)
    assert res.per_query.isna().all().all()
    assert res.summary["metrics"]["context_recall"]["undefined"] == 1
    ragas = evaluate_judged([RECALL], ["context_entities_recall"], judge=ScriptedJudge(script), cache=False, profile="ragas")
    assert ragas.per_query.iloc[0, 0] == 0.0


def test_ragas_relevancy_divides_by_sentences_and_caps():
    def script(task, inputs):
        return {"statements": [{"statement": s, "reason": "", "relevant": 1} for s in ("a", "b", "c")]}

    row = {"id": "x", "question": "q?", "reference": "r", "contexts": ["One sentence only."]}
    default = evaluate_judged([row], ["context_relevancy"], judge=ScriptedJudge(script), cache=False)
    ragas = evaluate_judged([row], ["context_relevancy"], judge=ScriptedJudge(script), cache=False, profile="ragas")
    assert default.per_query.iloc[0, 0] == 1.0  # 3 relevant of 3 statements
    assert ragas.per_query.iloc[0, 0] == 1.0  # 3 relevant / 1 sentence, capped at 1


def test_inputs_not_mutated_and_bad_rows_rejected():
    import copy

    rows = [dict(RECALL)]
    before = copy.deepcopy(rows)
    evaluate_judged(rows, None, judge=ScriptedJudge(seed_script), cache=False)
    assert rows == before
    with pytest.raises(InputError, match="duplicate query id"):
        evaluate_judged([RECALL, RECALL], None, judge=ScriptedJudge(seed_script), cache=False)
    with pytest.raises(InputError, match="non-text chunk"):
        evaluate_judged([{**RECALL, "contexts": [1]}], None, judge=ScriptedJudge(seed_script), cache=False)
    with pytest.raises(InputError, match="no column 'reference'"):
        evaluate_judged([{"id": "a", "question": "q", "contexts": []}], None, judge=ScriptedJudge(seed_script), cache=False)


def test_dataframe_input_and_profiles_checked():
    import pandas as pd

    res = evaluate_judged(pd.DataFrame([RECALL]), ["context_recall"], judge=ScriptedJudge(seed_script), cache=False)
    assert res.per_query.loc["recall", "context_recall"] == 0.75
    with pytest.raises(UnknownNameError, match="unknown judge profile"):
        evaluate_judged([RECALL], None, judge=ScriptedJudge(seed_script), cache=False, profile="trulens")


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": 1, "reason": "ok"}',
        'Sure!\n```json\n{"verdict": "yes", "reason": "ok"}\n```',
        'Here: {"reason": "a {brace} in text", "verdict": true} -- done {x}',
        '```\n{"verdict": "1", "reason": "ok"}\n```',
    ],
)
def test_parse_tolerates_fences_chatter_and_yes_no(text):
    assert parse_output("chunk_verdict", text)["verdict"] == 1


@pytest.mark.parametrize("text", ["", "no json here", '{"verdict": "maybe"}', '{"reason": "x"}', "[1, 2]"])
def test_parse_rejects_unusable_replies(text):
    with pytest.raises(OutputError):
        parse_output("chunk_verdict", text)


def test_normalize_statement_lists_and_entities():
    out = normalize_output("attribution", [{"sentence": "A.", "supported": "No"}, {"statement": "B.", "attributed": 1}])
    assert [s["attributed"] for s in out["statements"]] == [0, 1]
    assert normalize_output("entities", {"entities": ["Paris", " Paris ", {"name": "Rome"}, ""]}) == {"entities": ["Paris", "Rome"]}
    assert extract_json('x [1, {"a": 2}] y') == [1, {"a": 2}]


def test_prompts_carry_inputs():
    msgs = build_messages("chunk_verdict", {"question": "Q?", "context": "C.", "answer": ""})
    assert "ANSWER" not in msgs[-1]["content"] and "QUESTION: Q?" in msgs[-1]["content"]
    msgs = build_messages("chunk_verdict", {"question": "Q?", "context": "C.", "answer": "A."})
    assert "ANSWER: A." in msgs[-1]["content"]


def test_split_sentences():
    assert split_sentences("Paris is big. It has 2 million people! Is it old?\nYes") == [
        "Paris is big.", "It has 2 million people!", "Is it old?", "Yes"
    ]


def test_sync_entry_point_inside_event_loop_says_what_to_do():
    import asyncio

    from ragrade.errors import RagradeError
    from ragrade.judges import aevaluate_judged

    async def inside():
        with pytest.raises(RagradeError, match="await aevaluate_judged"):
            evaluate_judged([RECALL], ["context_recall"], judge=ScriptedJudge(seed_script), cache=False)
        res = await aevaluate_judged([RECALL], ["context_recall"], judge=ScriptedJudge(seed_script), cache=False)
        return res.per_query.iloc[0, 0]

    assert asyncio.run(inside()) == 0.75
