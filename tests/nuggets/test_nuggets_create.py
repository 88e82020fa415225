"""Nugget creation against the loopback fault server: exactly the calls the procedure implies, the
windows' passages in grade order, the labels in batches, vital first and the cut, provenance, the retry
rule at temperature 0.2, the cache and the budget."""

from __future__ import annotations

import json

from nugget_helpers import calls, field, numbered

from ragrade.llm.budget import Budget
from ragrade.nuggets import Nuggets, create, read, write
from ragrade.nuggets.creation import CreateSettings, relevant_passages


def _one_query(n_good: int = 25, n_low: int = 4):
    """One query, ``n_good`` passages graded 2 or 3 and ``n_low`` graded 1 (never read)."""
    qrels, passages = {"q1": {}}, {}
    for j in range(n_good + n_low):
        d = f"d{j:02d}"
        qrels["q1"][d] = 1 if j >= n_good else (3 if j % 2 else 2)
        passages[d] = f"passage {d} says full k{j:02d} and part k{(j + 1):02d}."
    return qrels, {"q1": "what is said"}, passages


def test_create_on_25_passages_makes_exactly_the_calls_of_the_procedure(judge_for, nugget_server, tmp_path):
    qrels, queries, passages = _one_query()
    res = create(qrels, queries, passages, judge=judge_for(), cache=tmp_path / "c.sqlite3")
    windows, labels = calls(nugget_server, "create"), calls(nugget_server, "label")
    assert len(windows) == 3 and len(labels) == 3 and len(calls(nugget_server)) == 6  # 10+10+5 passages; 10+10+5 nuggets
    assert res.costs["calls"] == 6 and res.costs["cache_hits"] == 0 and res.failures == []
    # the windows read the passages graded >= 2, grade 3 first then grade 2 (ties by id), 10 at a time
    order = sorted((d for d, g in qrels["q1"].items() if g >= 2), key=lambda d: (-qrels["q1"][d], d))
    shown = [d for w in windows for d in __import__("re").findall(r"passage (d\d+) says", w["user"])]
    assert shown == order and [w["body"]["temperature"] for w in windows] == [0.0, 0.0, 0.0]
    # each window is given the list so far
    assert "ANSWER KEY SO FAR (10 nuggets)" in windows[1]["user"]
    assert [len(numbered(e["user"])) for e in labels] == [10, 10, 5]
    # vital first (even keys), the order kept otherwise, cut to 20, ids n1..n20, with provenance
    got = res.nuggets.of("q1")
    assert len(got) == 20 and [n.nugget_id for n in got] == [f"n{i}" for i in range(1, 21)]
    assert [n.importance for n in got[:13]] == ["vital"] * 13 and {n.importance for n in got[13:]} == {"okay"}
    first = got[0]  # a vital nugget: from a passage graded 2, read in the second window
    assert first.provenance["window"] == 2 and first.provenance["docs"] == order[10:20]
    assert "d" + first.text.split()[1][1:] in first.provenance["docs"]
    assert first.provenance["prompt_version"] == "nuggets-1" and first.query_text == "what is said"
    assert first.provenance["model"] == "scripted" and first.provenance["method"] == "ragrade.nuggets.create"
    assert res.counts["windows"] == 3 and res.counts["label_batches"] == 3 and res.counts["nuggets"] == 20


def test_a_second_run_asks_nothing_and_the_file_round_trips(judge_for, nugget_server, tmp_path):
    qrels, queries, passages = _one_query(12, 0)
    cache = tmp_path / "c.sqlite3"
    first = create(qrels, queries, passages, judge=judge_for(), cache=cache)
    n = len(calls(nugget_server))
    again = create(qrels, queries, passages, judge=judge_for(), cache=cache)
    assert len(calls(nugget_server)) == n and again.costs["calls"] == 0 and again.costs["cache_hits"] == n
    assert again.nuggets == first.nuggets
    path = tmp_path / "nuggets.jsonl"
    write(first.nuggets, path)
    back = read(path)
    assert back == first.nuggets and back.of("q1")[0].provenance == first.nuggets.of("q1")[0].provenance
    line = json.loads(path.read_text().splitlines()[0])
    assert set(line) == {"query", "query_text", "nugget_id", "text", "importance", "provenance"}


def test_every_number_is_an_option(judge_for, nugget_server, tmp_path):
    qrels, queries, passages = _one_query(9, 3)
    s = CreateSettings(min_grade=1, window=4, max_nuggets=5, label_batch=2, keep=None, vital_first=False)
    res = create(qrels, queries, passages, judge=judge_for(), cache=False, settings=s)
    assert len(calls(nugget_server, "create")) == 3  # 12 passages graded >= 1, 4 a window
    assert len(calls(nugget_server, "label")) == 3  # 5 nuggets, 2 a call
    got = res.nuggets.of("q1")
    # the list is capped at 5 while reading; labelled 2 a call; no vital-first reordering, no cut
    assert [n.text for n in got] == [f"key k{j:02d} is stated" for j in (1, 3, 5, 7, 0)]
    assert [n.importance for n in got] == ["okay"] * 4 + ["vital"]
    assert "at most 5 nuggets" in calls(nugget_server, "create")[0]["user"]


def test_an_unreadable_window_is_asked_again_at_temperature_0_2(judge_for, nugget_server, tmp_path):
    import nugget_helpers

    qrels, queries, passages = _one_query(12, 0)
    nugget_helpers.FAULTS["NEW PASSAGES"] = ["bad_json", "ok"]
    nugget_helpers.FAULTS["Weigh each"] = ["unknown_label", "missing", "ok"]
    res = create(qrels, queries, passages, judge=judge_for(), cache=tmp_path / "c.sqlite3")
    windows, labels = calls(nugget_server, "create"), calls(nugget_server, "label")
    assert [w["body"]["temperature"] for w in windows] == [0.0, 0.2, 0.0]  # window 1 twice, window 2 once
    assert [e["body"]["temperature"] for e in labels] == [0.0, 0.0, 0.2, 0.2]  # both batches broken once
    assert res.failures == [] and res.costs["retries"] == 3 and len(res.nuggets) == 12
    again = create(qrels, queries, passages, judge=judge_for(), cache=tmp_path / "c.sqlite3")
    assert again.costs["calls"] == 0 and again.nuggets == res.nuggets  # every attempt is in the cache


def test_a_batch_that_stays_broken_is_labelled_failed_and_reported(judge_for, nugget_server):
    import nugget_helpers

    qrels, queries, passages = _one_query(5, 0)
    nugget_helpers.FAULTS["Weigh each"] = ["cut", "cut", "cut"]
    res = create(qrels, queries, passages, judge=judge_for(), cache=False, retries=2)
    assert len(calls(nugget_server, "label")) == 3
    assert {n.importance for n in res.nuggets} == {"failed"} and res.counts["labels_failed"] == 5
    assert len(res.failures) == 1 and "cut at max_tokens" in res.failures[0]["reason"]


def test_a_budget_stops_cleanly_and_a_rerun_resumes(judge_for, nugget_server, tmp_path):
    qrels, queries, passages = _one_query(25, 0)
    cache = tmp_path / "c.sqlite3"
    part = create(qrels, queries, passages, judge=judge_for(), cache=cache, budget=Budget(calls=2))
    assert part.costs["calls"] == 2 and part.unfinished == ["q1"] and len(part.nuggets) == 0
    assert part.costs["budget_reached"]
    rest = create(qrels, queries, passages, judge=judge_for(), cache=cache)
    assert rest.costs["calls"] == 4 and rest.costs["cache_hits"] == 2 and rest.complete
    assert len(calls(nugget_server)) == 6


def test_queries_without_text_or_passages_are_skipped_and_listed(judge_for, nugget_server):
    qrels = {"q1": {"d1": 2}, "q2": {"d2": 3}, "q3": {"d3": 1}, "q4": {"dx": 2}}
    res = create(qrels, {"q1": "one", "q3": "three", "q4": "four"}, {"d1": "full k01", "d2": "full k02"},
                 judge=judge_for(), cache=False)
    assert res.nuggets.queries == ["q1"]
    assert {s["query"]: s["reason"] for s in res.skipped} == {"q2": "no query text",
                                                              "q4": "no text for any of its passages"}


def test_relevant_passages_order_and_threshold():
    assert relevant_passages({"q": {"a": 2, "b": 3, "c": 1, "d": 2}}, 2) == {"q": ["b", "a", "d"]}
    assert relevant_passages({"q": {"a": 1}}, 2) == {}


def test_windows_of_several_queries_advance_together(judge_for, nugget_server):
    qrels = {"q1": {f"a{j}": 2 for j in range(15)}, "q2": {f"b{j}": 2 for j in range(5)}}
    passages = {d: f"{d} full k{j:02d}" for q in qrels for j, d in enumerate(qrels[q])}
    res = create(qrels, {"q1": "one", "q2": "two"}, passages, judge=judge_for(max_concurrency=4), cache=False)
    assert len(calls(nugget_server, "create")) == 3  # q1: 2 windows, q2: 1
    assert isinstance(res.nuggets, Nuggets) and res.nuggets.queries == ["q1", "q2"]
    assert field(calls(nugget_server, "create")[0]["user"], "QUERY") in ("one", "two")
