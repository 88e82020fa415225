"""Nugget assignment against the loopback fault server: each (passage, nugget batch) judged once however
many runs or cutoffs share it, joined contexts keyed by their top k, answers, broken replies retried or
counted (never a silent not_support), and the measures equal to slow references."""

from __future__ import annotations

import math

import pytest
from nugget_helpers import calls, collection, field, key_of, numbered

import ragrade
from ragrade.nuggets import Nugget, Nuggets, assign, score
from ragrade.nuggets.assignment import ranked_lists


def _nuggets(coll, per_query: int = 12) -> Nuggets:
    """12 nuggets a query (two batches of 10 and 2): key kNN for NN < per_query; even keys vital."""
    return Nuggets(Nugget(q, f"n{j + 1}", f"key k{j:02d} is stated", "vital" if j % 2 == 0 else "okay", None, text)
                   for q, text in coll["queries"].items() for j in range(per_query))


def test_three_runs_sharing_passages_judge_each_passage_and_batch_once(judge_for, nugget_server, tmp_path):
    coll = collection()
    nugs = _nuggets(coll)
    cache = tmp_path / "c.sqlite3"
    res = assign(nugs, judge=judge_for(max_concurrency=3), passages=coll["passages"], runs=coll["runs"], depth=5,
                 cache=cache)
    distinct = {(q, d) for run in coll["runs"].values() for q, docs in run.items() for d in docs[:5]}
    asked = calls(nugget_server, "assign")
    assert len(asked) == 2 * len(distinct) == res.costs["calls"]  # 2 nugget batches a passage
    seen = [(field(e["user"], "TEXT"), tuple(numbered(e["user"]))) for e in asked]
    assert len(set(seen)) == len(seen)  # no (passage, batch) asked twice
    assert {len(numbered(e["user"])) for e in asked} == {10, 2}
    assert len(res.assignments) == 12 * len(distinct) and res.failures == []
    # a second run, and the same passages at another depth or in another run, ask nothing more
    again = assign(nugs, judge=judge_for(), passages=coll["passages"], runs={"x": coll["runs"]["b"]}, depth=3,
                   cache=cache)
    assert again.costs["calls"] == 0 and len(calls(nugget_server, "assign")) == len(asked)


def _slow_recall(nugs, asg, run, k, weight="all", strict=False):
    """nugget_recall@k by its definition, query by query."""
    out = {}
    for q in nugs.queries:
        docs = list(dict.fromkeys(run.get(q, [])))[:k]
        num = den = 0.0
        for n in nugs.of(q):
            w = {"all": 1.0, "vital": float(n.importance == "vital"),
                 "weighted": 1.0 if n.importance == "vital" else 0.5}[weight]
            best = 0.0
            for d in docs:
                lab = asg.passage(q, d).get(n.nugget_id, "not_support")
                best = max(best, {"support": 1.0, "partial_support": 0.0 if strict else 0.5}.get(lab, 0.0))
            num += w * best
            den += w
        out[q] = num / den if den else math.nan
    return out


def _slow_precision(nugs, asg, run, k, strict=False):
    out = {}
    ok = ("support",) if strict else ("support", "partial_support")
    for q in nugs.queries:
        docs = list(dict.fromkeys(run.get(q, [])))[:k]
        out[q] = sum(any(lab in ok for lab in asg.passage(q, d).values()) for d in docs) / k
    return out


def test_measures_through_the_judge_equal_slow_references(judge_for, nugget_server, tmp_path):
    coll = collection()
    nugs = _nuggets(coll)
    cache = tmp_path / "c.sqlite3"
    metrics = ["nugget_recall@3", "nugget_recall(weight=vital,strict=true)@5", "nugget_recall(weight=weighted)@4",
               "nugget_precision@5", "nugget_precision(strict=true)@2"]
    judge = ragrade.nuggets.Assigner(judge_for(max_concurrency=2), passages=coll["passages"], cache=cache)
    results = {name: ragrade.evaluate(nugs, run, metrics, judge=judge) for name, run in coll["runs"].items()}
    distinct = {(q, d) for run in coll["runs"].values() for q, docs in run.items() for d in docs[:5]}
    assert len(calls(nugget_server, "assign")) == 2 * len(distinct)  # shared across the three evaluations
    asg = assign(nugs, judge=judge_for(), passages=coll["passages"], runs=coll["runs"], depth=5, cache=cache).assignments
    for name, run in coll["runs"].items():
        per = results[name].per_query
        for q in nugs.queries:
            assert per.loc[q, "nugget_recall@3"] == pytest.approx(_slow_recall(nugs, asg, run, 3)[q], abs=1e-12)
            assert per.loc[q, "nugget_recall(weight=vital,strict=true)@5"] == pytest.approx(
                _slow_recall(nugs, asg, run, 5, "vital", True)[q], abs=1e-12)
            assert per.loc[q, "nugget_recall(weight=weighted)@4"] == pytest.approx(
                _slow_recall(nugs, asg, run, 4, "weighted")[q], abs=1e-12)
            assert per.loc[q, "nugget_precision@5"] == pytest.approx(_slow_precision(nugs, asg, run, 5)[q], abs=1e-12)
            assert per.loc[q, "nugget_precision(strict=true)@2"] == pytest.approx(
                _slow_precision(nugs, asg, run, 2, True)[q], abs=1e-12)
        assert results[name].summary.judge.judgments["calls"] >= 0


def test_joined_contexts_are_judged_once_per_distinct_top_k(judge_for, nugget_server):
    coll = collection(n_queries=1)
    nugs = _nuggets(coll)
    runs = {"a": coll["runs"]["a"], "a2": dict(coll["runs"]["a"]), "c": coll["runs"]["c"]}
    res = assign(nugs, judge=judge_for(), passages=coll["passages"], runs=runs, depth=None, joined=(2, 3), cache=False,
                 pairs=[])
    joined = [e for e in calls(nugget_server, "assign") if "[1] " in field(e["user"], "TEXT")]
    assert len(joined) == 2 * 2 * 2  # runs a and a2 share their top 2 and top 3; c has its own; 2 batches each
    q = "q0"
    top3 = tuple(coll["runs"]["a"][q][:3])
    labels = res.assignments.joined(q, top3)
    assert len(labels) == 12
    # a nugget the joined text states fully is supported even when no single passage of the top 3 states it
    assert labels["n2"] == "support"  # k01: 'full k01' is in the second passage


def test_broken_replies_are_retried_or_counted_never_scored_zero(judge_for, nugget_server):
    import nugget_helpers

    coll = collection(n_queries=1)
    nugs = _nuggets(coll)
    run = {"q0": coll["runs"]["a"]["q0"][:3]}
    d0, d1, d2 = run["q0"]
    first = "\n\nNUGGETS:\n1. key k00"  # the first nugget batch of a passage
    nugget_helpers.FAULTS[coll["passages"][d0] + first] = ["bad_json", "ok"]
    nugget_helpers.FAULTS[coll["passages"][d1] + first] = ["unknown_label", "missing", "ok"]
    nugget_helpers.FAULTS[coll["passages"][d2] + first] = ["cut", "bad_json", "missing"]  # never recovers
    res = assign(nugs, judge=judge_for(), passages=coll["passages"], runs=run, depth=3, cache=False)
    temps = [e["body"]["temperature"] for e in calls(nugget_server, "assign")]
    assert temps.count(0.0) == 6 and temps.count(0.2) == 5
    assert len(res.failures) == 1 and res.failures[0]["text"] == f"passage {d2}"
    failed = [a for a in res.assignments if a.label == "failed"]
    assert len(failed) == 10 and all(a.doc == d2 and a.reason for a in failed)
    r = ragrade.evaluate(nugs, run, ["nugget_recall@2", "nugget_recall@3", "nugget_precision@3"],
                         assignments=res.assignments)
    per = r.per_query.loc["q0"]
    assert per["nugget_recall@2"] == pytest.approx(_slow_recall(nugs, res.assignments, run, 2)["q0"])
    assert math.isnan(per["nugget_recall@3"])  # a failed label could change it: NaN, not 0
    assert r.summary.judge.outcomes["nugget_recall@3"]["failed"] == 1
    assert any("failed" in n for n in r.notes())


def test_answers_are_assigned_and_scored(judge_for, nugget_server):
    coll = collection(n_queries=2)
    nugs = _nuggets(coll, per_query=4)
    answers = {"sys1": {"q0": "it says full k00 and part k01", "q1": "nothing"}, "sys2": {"q0": "full k03"}}
    res = assign(nugs, judge=judge_for(), answers=answers, cache=False)
    assert len(calls(nugget_server, "assign")) == 3
    frame = score(nugs, res.assignments)
    row = frame.set_index(["run", "query"]).loc[("sys1", "q0")]
    assert row["all_score"] == pytest.approx((1 + 0.5) / 4) and row["vital_score"] == pytest.approx(1 / 2)
    assert row["strict_vital_score"] == pytest.approx(1 / 2) and row["strict_all_score"] == pytest.approx(1 / 4)


def test_texts_without_passage_or_query_text_are_not_judged(judge_for, nugget_server):
    nugs = Nuggets([Nugget("q1", "n1", "key k01 is stated"), Nugget("q2", "n1", "key k02 is stated", "okay", None, "t")])
    res = assign(nugs, judge=judge_for(), passages={"d1": "full k01"}, runs={"q1": ["d1"], "q2": ["d1", "dx"]},
                 cache=False)
    reasons = {(x["query"], x["text"]): x["reason"] for x in res.not_judged}
    assert reasons == {("q1", "passage d1"): "no query text", ("q2", "passage dx"): "no passage text"}
    assert len(calls(nugget_server, "assign")) == 1


def test_ranked_lists_drop_later_copies():
    assert ranked_lists({"q": ["a", "b", "a", "c"]}) == {"q": ["a", "b", "c"]}


def test_key_helper():
    assert key_of("key k07 is stated") == "k07"
