"""The parts without a server: the kernels against a slow reference (hypothesis), the files, the replies'
readers, the answer profiles' edge cases, the route's policies, nuggets as subtopics and as qrels, eRAG's
answer metrics, and the procedures with an in-process judge."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragrade
from ragrade.errors import InputError, OutputError, ParseError, PolicyError
from ragrade.kernels.nuggets import nugget_precision, nugget_recall
from ragrade.llm.base import Judgment
from ragrade.nuggets import (
    Assignment,
    Assignments,
    Nugget,
    Nuggets,
    as_nuggets,
    assign,
    create,
    read,
    read_assignments,
    score,
    subtopic_qrels,
    write,
    write_assignments,
)
from ragrade.nuggets.erag import exact_match, normalize_answer, token_f1
from ragrade.nuggets.prompts import TASK_SET, build_messages, parse_reply
from ragrade.nuggets.route import implied_qrels

# -- kernels ------------------------------------------------------------------------------------------------

VALUES = st.sampled_from([0.0, 0.5, 1.0, math.nan])


@st.composite
def matrices(draw):
    nq = draw(st.integers(1, 4))
    rows = draw(st.integers(0, 8))
    depth = draw(st.integers(0, 5))
    owner = np.array(sorted(draw(st.lists(st.integers(0, nq - 1), min_size=rows, max_size=rows))), dtype=np.int64)
    values = np.array([[draw(VALUES) for _ in range(depth)] for _ in range(rows)], dtype=np.float64).reshape(rows, depth)
    weights = np.array([draw(st.sampled_from([0.0, 0.5, 1.0])) for _ in range(rows)])
    k = draw(st.integers(0, 6))
    return values, owner, weights, nq, k, draw(st.booleans())


def _slow_recall(values, owner, weights, nq, k, strict):
    out = []
    for q in range(nq):
        num = den = 0.0
        unknown = False
        for n in np.flatnonzero(owner == q):
            vals = [(0.0 if strict and v == 0.5 else v) for v in values[n, :k]]
            known = [v for v in vals if not math.isnan(v)]
            best = max(known, default=0.0)
            if weights[n] > 0 and best < 1.0 and len(known) < len(vals):
                unknown = True
            num += weights[n] * best
            den += weights[n]
        out.append(math.nan if den == 0 or unknown else num / den)
    return out


def _slow_precision(values, owner, nq, k, strict):
    out = []
    for q in range(nq):
        rows = np.flatnonzero(owner == q)
        if len(rows) == 0:
            out.append(math.nan)
            continue
        hits, undecided = 0, False
        for i in range(min(k, values.shape[1])):
            col = [(0.0 if strict and v == 0.5 else v) for v in values[rows, i]]
            if any(v > 0 for v in col if not math.isnan(v)):
                hits += 1
            elif any(math.isnan(v) for v in col):
                undecided = True
        out.append(math.nan if undecided else hits / max(1, k))
    return out


@settings(max_examples=300, deadline=None)
@given(matrices())
def test_kernels_equal_slow_references(case):
    values, owner, weights, nq, k, strict = case
    np.testing.assert_array_equal(nugget_recall(values, owner, weights, nq, k, strict),
                                  np.array(_slow_recall(values, owner, weights, nq, k, strict)))
    np.testing.assert_array_equal(nugget_precision(values, owner, nq, k, strict),
                                  np.array(_slow_precision(values, owner, nq, k, strict)))


@settings(max_examples=100, deadline=None)
@given(matrices())
def test_recall_is_monotone_in_k_and_bounded(case):
    values, owner, weights, nq, _, strict = case
    values = np.nan_to_num(values)
    prev = nugget_recall(values, owner, weights, nq, 0, strict)
    for k in range(1, values.shape[1] + 2):
        cur = nugget_recall(values, owner, weights, nq, k, strict)
        ok = ~np.isnan(cur)
        assert np.all(cur[ok] >= prev[ok] - 1e-12) and np.all((cur[ok] >= 0) & (cur[ok] <= 1))
        prev = cur


def test_inputs_are_not_mutated():
    v = np.array([[0.5, 1.0]])
    nugget_recall(v, np.array([0]), np.ones(1), 1, 2, strict=True)
    assert v.tolist() == [[0.5, 1.0]]


# -- files --------------------------------------------------------------------------------------------------

def test_nuggets_and_assignments_round_trip_jsonl_and_parquet(tmp_path):
    nugs = Nuggets([Nugget("q1", "n1", "a fact", "vital", {"method": "manual", "docs": ["d1"]}, "the query"),
                    Nugget("q1", "n2", "another", "okay"), Nugget("q2", "x", "third", "failed")])
    asg = Assignments([Assignment("q1", "n1", "support", doc="d1"), Assignment("q1", "n2", "failed", doc="d1", reason="r"),
                       Assignment("q1", "n1", "partial_support", context=("d1", "d2")),
                       Assignment("q1", "n1", "not_support", run="sys")])
    for ext in ("jsonl", "parquet", "jsonl.gz"):
        write(nugs, tmp_path / f"n.{ext}")
        write_assignments(asg, tmp_path / f"a.{ext}")
        back = read(tmp_path / f"n.{ext}")
        assert back == nugs and back.of("q1")[0].provenance == {"method": "manual", "docs": ["d1"]}
        assert read_assignments(tmp_path / f"a.{ext}") == asg
    assert not list(tmp_path.glob("*.tmp-*"))  # written to a temporary name, renamed


def test_hand_written_and_nuggetizer_files(tmp_path):
    p = tmp_path / "n.jsonl"
    p.write_text('{"query": 7, "text": "first", "importance": "Vital"}\n{"query": 7, "text": "second", '
                 '"importance": "okay"}\n{"qid": "q2", "query": "what", "nuggets": [{"text": "x", "importance": '
                 '"vital"}, {"text": "y", "importance": "failed"}]}\n')
    n = read(p)
    assert [(x.query, x.nugget_id, x.importance) for x in n] == [("7", "n1", "vital"), ("7", "n2", "okay"),
                                                                  ("q2", "n1", "vital"), ("q2", "n2", "failed")]
    assert n.query_text("q2") == "what"


@pytest.mark.parametrize("line, message", [
    ('{"query": "q", "text": "", "importance": "vital"}', "non-empty 'text'"),
    ('{"query": "q", "text": "a"}', "importance"),
    ('{"text": "a", "importance": "okay"}', "query"),
    ('{"query": "q", "text": "a", "importance": "essential"}', "essential"),
    ('[1, 2]', "JSON object"),
])
def test_bad_nugget_lines_name_file_and_line(tmp_path, line, message):
    p = tmp_path / "n.jsonl"
    p.write_text('{"query": "q0", "text": "ok", "importance": "okay"}\n' + line + "\n")
    with pytest.raises(ParseError, match=message) as err:
        read(p)
    assert "n.jsonl" in str(err.value)


def test_a_repeated_nugget_id_is_refused(tmp_path):
    p = tmp_path / "n.jsonl"
    p.write_text('{"query": "q", "nugget_id": "a", "text": "x", "importance": "okay"}\n' * 2)
    with pytest.raises(ParseError, match="appears twice"):
        read(p)


@pytest.mark.parametrize("row, message", [
    ({"query": "q", "nugget_id": "n1", "label": "maybe"}, "maybe"),
    ({"query": "q", "nugget_id": "n1"}, "label"),
    ({"query": "q", "nugget_id": "n1", "label": "support", "doc": "d", "context": ["d"]}, "not both"),
    ({"query": "q", "nugget_id": "n1", "label": "support", "context": []}, "context"),
])
def test_bad_assignment_rows(tmp_path, row, message):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps(row) + "\n")
    with pytest.raises(ParseError, match=message):
        read_assignments(p)


def test_labels_are_normalised_when_read(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"query": "q", "nugget_id": "n1", "label": "Partial Support"}\n')
    assert [a.label for a in read_assignments(p)] == ["partial_support"]


# -- the prompts and their replies ------------------------------------------------------------------------------

@pytest.mark.parametrize("task, reply, out", [
    ("nugget_create", '{"nuggets": ["  a  fact ", "", "b"]}', {"nuggets": ["a fact", "b"]}),
    ("nugget_label", '```json\n{"labels": ["VITAL", "okay"]}\n```', {"labels": ["vital", "okay"]}),
    ("nugget_assign", '{"labels": ["partial support", "not-support"]}', {"labels": ["partial_support", "not_support"]}),
    ("answer", '{"answer": " Paris "}', {"answer": "Paris"}),
    ("answer_match", '{"correct": false}', {"correct": False}),
])
def test_replies_are_read(task, reply, out):
    assert parse_reply(task, reply) == out


@pytest.mark.parametrize("task, reply", [
    ("nugget_create", '["a", "b"]'), ("nugget_create", '{"nuggets": "a"}'), ("nugget_create", '{"nuggets": [1]}'),
    ("nugget_label", '{"labels": ["important"]}'), ("nugget_assign2", '{"labels": ["partial_support"]}'),
    ("nugget_assign", 'Labels: ["support"]'), ("nugget_assign", '{"labels": ["support"'), ("answer_match", '{"correct": 1}'),
    ("answer", "{}"), ("nugget_label", ""),
])
def test_unreadable_replies_raise(task, reply):
    with pytest.raises(OutputError):
        parse_reply(task, reply)


def test_prompts_show_their_inputs_and_hide_the_sampling():
    msgs = build_messages("nugget_assign", {"query": "q?", "passage": "P.", "nuggets": '["a", "b"]',
                                            "sampling": "temperature=0.2;attempt=1"})
    user = msgs[1]["content"]
    assert "TEXT: P." in user and "1. a\n2. b" in user and "exactly 2 labels" in user and "attempt" not in user
    assert TASK_SET.schema("nugget_assign")["properties"]["labels"]["items"]["enum"] == ["support", "partial_support",
                                                                                          "not_support"]
    assert TASK_SET.schema("nugget_create") is not None and TASK_SET.schema("chunk_verdict") is None


# -- the procedures with an in-process judge ----------------------------------------------------------------------

class Scripted:
    """A judge answering from a function of (task, inputs); counts its calls."""

    name, model, prompt_version, cacheable, max_concurrency = "inproc", "m", "1", True, 2

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    async def judge(self, task, inputs):
        self.calls += 1
        out = self.fn(task, inputs)
        return Judgment(out) if isinstance(out, dict) else Judgment.failed(str(out), transient=False)

    async def aclose(self):
        return None


def test_a_too_long_reply_is_cut_at_max_nuggets_and_counted():
    def fn(task, inputs):
        if task == "nugget_create":
            return {"nuggets": [f"fact {i}" for i in range(40)]}
        return {"labels": ["okay"] * len(json.loads(inputs["nuggets"]))}

    res = create({"q": {"d": 2}}, {"q": "query"}, {"d": "text"}, judge=Scripted(fn), cache=False, keep=None)
    assert len(res.nuggets) == 30 and res.counts["truncated"] == 10


def test_a_failed_window_keeps_the_list_and_is_reported():
    def fn(task, inputs):
        if task == "nugget_create":
            if "second" in inputs["passages"]:
                return "unreadable"
            return {"nuggets": [*json.loads(inputs["nuggets"]), inputs["passages"].split("] ")[1]]}
        return {"labels": ["vital"] * len(json.loads(inputs["nuggets"]))}

    qrels = {"q": {f"d{i}": 2 for i in range(3)}}
    texts = {"d0": "first", "d1": "second", "d2": "third"}
    judge = Scripted(fn)
    res = create(qrels, {"q": "query"}, texts, judge=judge, cache=False, window=1, retries=1)
    assert [n.text for n in res.nuggets] == ["first", "third"] and judge.calls == 3 + 1 + 1
    assert res.failures[0]["step"] == "window 2"


def test_assign_with_an_in_process_judge_and_given_assignments():
    nugs = Nuggets([Nugget("q", f"n{i}", f"k{i}", "okay", None, "query") for i in range(3)])

    def fn(task, inputs):
        return {"labels": ["support" if t in inputs["passage"] else "not_support" for t in json.loads(inputs["nuggets"])]}

    judge = Scripted(fn)
    given = [Assignment("q", f"n{i}", "support", doc="d1") for i in range(3)]
    res = assign(nugs, judge=judge, passages={"d1": "k0", "d2": "k1 k2"}, runs={"q": ["d1", "d2"]}, assignments=given,
                 batch=2, cache=False)
    assert judge.calls == 2  # d2 only (d1 is given), two batches
    assert dict(res.assignments.passage("q", "d2")) == {"n0": "not_support", "n1": "support", "n2": "support"}
    assert dict(res.assignments.passage("q", "d1")) == {"n0": "support", "n1": "support", "n2": "support"}


# -- answer profiles, subtopics, implied qrels ---------------------------------------------------------------------

def test_score_edge_cases_and_unknown_nuggets():
    nugs = {"q1": ["a", "b"]}
    frame = score(nugs, [{"query": "q1", "nugget_id": "n1", "label": "failed"}], "open_rag_eval")
    assert frame.loc[0, "failed_labels"] == 1 and frame.loc[0, "Vital"] == 0.0  # no vital nugget: 0 / max(0, 1)
    with pytest.raises(InputError, match="n9"):
        score(nugs, [{"query": "q1", "nugget_id": "n9", "label": "support"}])
    with pytest.raises(ragrade.UnknownNameError):
        score(nugs, [], "trec")


def test_subtopics_feed_the_diversity_measures():
    nugs = Nuggets([Nugget("q", "n1", "a"), Nugget("q", "n2", "b")])
    asg = [Assignment("q", "n1", "support", doc="d1"), Assignment("q", "n1", "support", doc="d2"),
           Assignment("q", "n2", "partial_support", doc="d3"), Assignment("q", "n2", "failed", doc="d1")]
    frame = subtopic_qrels(nugs, asg)
    assert sorted(map(tuple, frame.values.tolist())) == [("q", "n1", "d1", 1.0), ("q", "n1", "d2", 1.0),
                                                          ("q", "n2", "d3", 1.0)]
    r = ragrade.evaluate(nugs, {"q": ["d1", "d2", "d3"]}, ["strecall@1", "strecall@3", "alpha_ndcg@3"],
                         assignments=asg)
    direct = ragrade.evaluate_diversity(frame, {"q": ["d1", "d2", "d3"]}, ["strecall@1", "strecall@3", "alpha_ndcg@3"])
    assert r.means == direct.means and r.means["strecall@1"] == 0.5 and r.means["strecall@3"] == 1.0


def test_implied_qrels_and_id_measures():
    asg = Assignments([Assignment("q", "n1", "partial_support", doc="d1"), Assignment("q", "n2", "support", doc="d2"),
                       Assignment("q", "n1", "not_support", doc="d3")])
    frame = implied_qrels(asg)
    assert sorted(map(tuple, frame.values.tolist())) == [("q", "d1", 1.0), ("q", "d2", 2.0), ("q", "d3", 0.0)]
    nugs = Nuggets([Nugget("q", "n1", "a"), Nugget("q", "n2", "b")])
    r = ragrade.evaluate(nugs, {"q": ["d3", "d2", "d1"]}, ["P@2", "nugget_recall@2"], assignments=asg)
    assert r.means["P@2"] == 0.5 and r.means["nugget_recall@2"] == 0.5


# -- the route's policies -------------------------------------------------------------------------------------------

def _simple():
    nugs = Nuggets([Nugget("q1", "n1", "a", "vital"), Nugget("q2", "n1", "b", "vital")])
    asg = [Assignment("q1", "n1", "support", doc="d1"), Assignment("q2", "n1", "support", doc="d2")]
    return nugs, asg


def test_missing_run_policies():
    nugs, asg = _simple()
    run = {"q1": ["d1"]}
    assert ragrade.evaluate(nugs, run, ["nugget_recall@1"], assignments=asg).per_query["nugget_recall@1"].to_dict() == \
        {"q1": 1.0, "q2": 0.0}
    assert ragrade.evaluate(nugs, run, ["nugget_recall@1"], assignments=asg, missing_run="drop").means == \
        {"nugget_recall@1": 1.0}
    with pytest.raises(PolicyError, match="q2"):
        ragrade.evaluate(nugs, run, ["nugget_recall@1"], assignments=asg, missing_run="error")


def test_duplicates_earn_nothing_after_their_first_rank():
    nugs, asg = _simple()
    asg = [*asg, Assignment("q1", "n1", "not_support", doc="d9")]
    run = {"q1": ["d9", "d9", "d1"], "q2": ["d2"]}
    r = ragrade.evaluate(nugs, run, ["nugget_recall@2", "nugget_precision@3"], assignments=asg)
    assert r.per_query.loc["q1", "nugget_recall@2"] == 0.0 and r.summary.duplicate_items == 1
    dropped = ragrade.evaluate(nugs, run, ["nugget_recall@2"], assignments=asg, duplicates="drop")
    assert dropped.per_query.loc["q1", "nugget_recall@2"] == 1.0
    with pytest.raises(PolicyError):
        ragrade.evaluate(nugs, run, ["nugget_recall@2"], assignments=asg, duplicates="error")


def test_no_vital_nugget_is_nan_and_left_out_of_the_mean():
    nugs = Nuggets([Nugget("q1", "n1", "a", "vital"), Nugget("q2", "n1", "b", "okay")])
    asg = [Assignment("q1", "n1", "support", doc="d1"), Assignment("q2", "n1", "support", doc="d2")]
    r = ragrade.evaluate(nugs, {"q1": ["d1"], "q2": ["d2"]}, ["nugget_recall(weight=vital)@1"], assignments=asg)
    assert math.isnan(r.per_query.loc["q2", "nugget_recall(weight=vital)@1"]) and r.means == {
        "nugget_recall(weight=vital)@1": 1.0}
    assert r.summary.judge.outcomes["nugget_recall(weight=vital)@1"]["undefined"] == 1


def test_a_joined_context_never_assigned_is_nan_with_a_warning():
    nugs, asg = _simple()
    with pytest.warns(ragrade.RagradeWarning, match="joined top k"):
        r = ragrade.evaluate(nugs, {"q1": ["d1"], "q2": ["d2"]}, ["nugget_recall(context=joined)@1"], assignments=asg)
    assert r.per_query["nugget_recall(context=joined)@1"].isna().all()


def test_the_route_refuses_what_it_cannot_do():
    nugs, asg = _simple()
    with pytest.raises(InputError, match="assignments="):
        ragrade.evaluate(nugs, {"q1": ["d1"]}, ["nugget_recall@1"])
    with pytest.raises(InputError, match="judge"):
        ragrade.evaluate(nugs, {"q1": ["d1"]}, ["nugget_recall@1"], judge="gpt-4o")  # not backend:model
    with pytest.raises(ragrade.MetricError, match="cutoff"):
        ragrade.evaluate(nugs, {"q1": ["d1"]}, ["nugget_recall"], assignments=asg)
    with pytest.raises(InputError, match="is a judge measure"):
        ragrade.evaluate(nugs, {"q1": ["d1"]}, ["context_recall", "nugget_recall@1"], assignments=asg)


def test_inputs_are_left_as_given():
    nugs, asg = _simple()
    rows = [a.to_dict() for a in asg]
    before = json.dumps(rows)
    ragrade.evaluate(nugs, {"q1": ["d1"]}, ["nugget_recall@1"], assignments=rows)
    assert json.dumps(rows) == before and as_nuggets(nugs) is nugs


def test_compare_takes_nugget_measures():
    nugs, asg = _simple()
    cmp = ragrade.compare(nugs, {"a": {"q1": ["d1"], "q2": ["d2"]}, "b": {"q1": ["dx"], "q2": ["d2"]}},
                          ["nugget_recall@1"], assignments=asg)
    assert cmp.mean("nugget_recall@1", "a") == 1.0 and cmp.mean("nugget_recall@1", "b") == 0.5


# -- eRAG's answer metrics ------------------------------------------------------------------------------------------

def test_answer_metrics():
    assert normalize_answer("The  Cat, sat!") == "cat sat"
    assert exact_match("an apple", ["Apple"]) == 1.0 and exact_match("apples", ["apple"]) == 0.0
    assert token_f1("", [""]) == 1.0 and token_f1("a b c", ["x"]) == 0.0
    assert token_f1("paris france", ["paris", "lyon france"]) == pytest.approx(2 / 3)


def test_erag_labels_with_llm_like_judges_and_failures():
    def gen(task, inputs):
        if task == "answer":
            return {"answer": inputs["document"].split()[0]} if "bad" not in inputs["document"] else "unreadable"
        return {"correct": inputs["answer"] in json.loads(inputs["gold"])}

    judge = Scripted(gen)
    labels = ragrade.erag_labels({"q": "question"}, {"q": ["d1", "d2", "d3"]}, {"q": ["yes"]}, judge, judge,
                                 passages={"d1": "yes it is", "d2": "no it is not", "d3": "bad text"}, cache=False,
                                 retries=0)
    assert labels.outputs[["doc", "score"]].values.tolist() == [["d1", 1.0], ["d2", 0.0]]
    assert labels.failures[0]["doc"] == "d3" and labels.binary
    assert labels.qrels.to_dict() == {"q": {"d1": 1.0, "d2": 0.0}}
    with pytest.raises(InputError, match="score"):
        ragrade.erag_labels({"q": "x"}, {"q": ["d1"]}, {"q": ["y"]}, lambda q, d: d, "rouge", passages={"d1": "t"})
