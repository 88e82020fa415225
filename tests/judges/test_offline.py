"""The offline judges: statement splitting, the rule-based entity extractor, the lexical judge on the
seed's worked examples, and output bounds for any verdicts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seed_data import ENTITIES, PRECISION, RECALL, RELEVANCY

from ragrade.judges import LexicalJudge, ScriptedJudge, evaluate_judged, extract_entities
from ragrade.judges.offline import content_words, split_statements


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The capital of Brazil is Brasília, established on April 21, 1960.", ["Brazil", "Brasília", "April 21, 1960"]),
        ("Brasília is a city in Brazil, designed as the capital.", ["Brasília", "Brazil"]),
        ("The Treaty of Versailles was signed on 28 June 1919.", ["Treaty of Versailles", "28 June 1919"]),
        # documented limitation: a sentence-initial common noun that never occurs in lower case is kept
        ("Sales rose 12% to $40 million over 3.5 km.", ["Sales", "12%", "$40 million", "3.5 km"]),
        ("Logging is common. Logging and logging again.", []),
        ("In Paris, the Louvre opened in 1793.", ["Paris", "Louvre", "1793"]),
        ("", []),
    ],
)
def test_extract_entities(text, expected):
    assert extract_entities(text) == expected


def test_split_statements_enumeration_and_semicolons():
    assert split_statements("Causes are logging, farming, and fires. It is bad; very bad.") == [
        "Causes are logging.", "Causes are farming.", "Causes are fires.", "It is bad", "very bad."
    ]
    long_items = "The plan is to build the new bridge, repair the old road network, and open a school."
    assert split_statements(long_items) == [long_items]


def test_content_words_fold_case_accents_and_suffixes():
    assert content_words("The Urbanization of Brasília") == ["urban", "brasilia"]


@pytest.mark.parametrize(
    ("row", "metric", "expected"),
    [
        (PRECISION, "llm_context_precision@3", 1.0),
        (RECALL, "context_recall", 0.75),
        (ENTITIES, "context_entities_recall", 2 / 3),
        (RELEVANCY, "context_relevancy", 2 / 3),
    ],
)
def test_lexical_judge_reproduces_the_seed_examples(row, metric, expected):
    res = evaluate_judged([row], [metric], judge=LexicalJudge(), cache=False)
    assert res.per_query.iloc[0, 0] == pytest.approx(expected, abs=1e-12)


def test_lexical_judge_is_not_cached_and_says_why():
    judge = LexicalJudge()
    assert not judge.cacheable
    out = judge.answer("chunk_verdict", {"question": "q", "context": "Coffee is popular.", "answer": "Tea is green."})
    assert out["verdict"] == 0 and "best support 0.00" in out["reason"]


_verdicts = st.lists(st.integers(0, 1), min_size=0, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(["", "A chunk.", "B chunk. C chunk."]), max_size=4), _verdicts, st.booleans()),
        min_size=1, max_size=5,
    ),
    st.sampled_from(["default", "ragas", "deepeval"]),
)
def test_scores_are_bounded_or_nan_and_counts_add_up(spec, profile):
    rows = [
        {"id": f"q{i}", "question": "Why?", "reference": "Because. Also." if has_ref else "", "contexts": ctx}
        for i, (ctx, _, has_ref) in enumerate(spec)
    ]
    flags = {f"q{i}": v for i, (_, v, _) in enumerate(spec)}

    def script(task, inputs):
        v = flags["q0"] or [0]
        if task == "chunk_verdict":
            return {"verdict": v[0], "reason": ""}
        if task == "entities":
            return {"entities": ["X", "Y"][: len(v)]}
        key = "attributed" if task == "attribution" else "relevant"
        return {"statements": [{"statement": str(i), "reason": "", key: x} for i, x in enumerate(v)]}

    res = evaluate_judged(rows, None, judge=ScriptedJudge(script), cache=False, profile=profile)
    values = res.per_query.to_numpy().ravel()
    assert all(math.isnan(x) or 0.0 <= x <= 1.0 for x in values)
    for counts in res.summary["metrics"].values():
        assert sum(counts.values()) == len(rows)
