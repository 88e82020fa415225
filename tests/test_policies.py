"""The named policies of docs/conventions.md (Policies): defaults, validation, the effect of each option on a minimal
input, the summary counts and the warnings."""

from __future__ import annotations

import copy
import math
import warnings

import pytest

import ragrade
from ragrade import Evaluator, PolicyError, RagradeWarning, Run, UnknownNameError
from ragrade.policies import Policies


def quiet(qrels, run, metrics, **policies):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return ragrade.evaluate(qrels, run, metrics, **policies)


def test_defaults_are_the_spec_defaults():
    p = Policies()
    assert (p.missing_run, p.missing_qrels, p.no_relevant, p.duplicates, p.identical_ids, p.ties,
            p.empty_run) == ("zero", "ignore", "skip", "credit_once", "keep", "docid_desc", "zero")


def test_every_option_is_accepted_and_others_rejected():
    for name, options in Policies.choices().items():
        for option in options:
            assert getattr(Policies().update(**{name: option}), name) == option
        with pytest.raises(PolicyError, match=name):
            Policies().update(**{name: "no-such-option"})


def test_unknown_policy_suggests_the_nearest():
    with pytest.raises(UnknownNameError, match="Did you mean 'missing_run'"):
        Policies().update(missing_rn="drop")
    with pytest.raises(UnknownNameError, match="Did you mean 'ties'"):
        ragrade.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1", tie="input")  # type: ignore[call-arg]


# -- missing_run -----------------------------------------------------------------------------------
QRELS2 = {"q1": {"a": 1}, "q2": {"a": 1}}
RUN1 = {"q1": {"a": 1.0}}


def test_missing_run_zero_counts_the_query():
    with pytest.warns(RagradeWarning, match="1 ground-truth query missing from the run, scored 0"):
        r = ragrade.evaluate(QRELS2, RUN1, "P@1")
    assert r.per_query["P@1"].to_dict() == {"q1": 1.0, "q2": 0.0}
    assert r.means["P@1"] == 0.5 and r.counts["P@1"] == 2
    assert r.summary.missing_from_run == ["q2"]


def test_missing_run_drop_leaves_the_query_out():
    r = quiet(QRELS2, RUN1, "P@1", missing_run="drop")
    assert r.per_query["P@1"].to_dict() == {"q1": 1.0}
    assert r.means["P@1"] == 1.0 and r.summary.evaluated == 1


def test_missing_run_error():
    with pytest.raises(PolicyError, match="q2"):
        ragrade.evaluate(QRELS2, RUN1, "P@1", missing_run="error")


# -- missing_qrels ---------------------------------------------------------------------------------
def test_missing_qrels_ignore_and_error():
    run = {"q1": {"a": 1.0}, "q9": {"a": 1.0}}
    with pytest.warns(RagradeWarning, match="1 run query without ground truth, ignored"):
        r = ragrade.evaluate({"q1": {"a": 1}}, run, "P@1")
    assert list(r.per_query.index) == ["q1"] and r.summary.only_in_run == ["q9"]
    with pytest.raises(PolicyError, match="q9"):
        ragrade.evaluate({"q1": {"a": 1}}, run, "P@1", missing_qrels="error")


# -- no_relevant -----------------------------------------------------------------------------------
QRELS_R0 = {"q1": {"a": 1}, "q2": {"a": 0, "b": -1}}
RUN_R0 = {"q1": {"a": 1.0}, "q2": {"a": 1.0}}


def test_no_relevant_skip_is_nan_and_left_out_of_means():
    with pytest.warns(RagradeWarning, match="1 query without relevant judgments, left out of the means"):
        r = ragrade.evaluate(QRELS_R0, RUN_R0, ["P@1", "ndcg@1"])
    assert math.isnan(r.per_query.at["q2", "P@1"]) and math.isnan(r.per_query.at["q2", "ndcg@1"])
    assert r.means == {"P@1": 1.0, "ndcg@1": 1.0} and r.counts == {"P@1": 1, "ndcg@1": 1}
    assert r.summary.no_relevant == {"P@1": ["q2"], "ndcg@1": ["q2"]}


def test_no_relevant_zero_nan_error():
    r = quiet(QRELS_R0, RUN_R0, "P@1", no_relevant="zero")
    assert r.per_query["P@1"].to_dict() == {"q1": 1.0, "q2": 0.0} and r.means["P@1"] == 0.5
    r = quiet(QRELS_R0, RUN_R0, "P@1", no_relevant="nan")
    assert math.isnan(r.per_query.at["q2", "P@1"]) and math.isnan(r.means["P@1"])
    with pytest.raises(PolicyError, match="q2"):
        ragrade.evaluate(QRELS_R0, RUN_R0, "P@1", no_relevant="error")


def test_no_relevant_depends_on_the_metric_relevance_level():
    """A query with only grade-1 judgments has R = 0 at rel=2 but not at rel=1."""
    r = quiet({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1", "P(rel=2)@1", "ndcg@1", "ndcg(rel=2)@1"])
    assert r.per_query.at["q", "P@1"] == 1.0 and r.per_query.at["q", "ndcg@1"] == 1.0
    assert math.isnan(r.per_query.at["q", "P(rel=2)@1"]) and math.isnan(r.per_query.at["q", "ndcg(rel=2)@1"])


# -- duplicates ------------------------------------------------------------------------------------
DUP_RUN = Run.from_lists([["a", "x", "a", "b"]], query_ids=["q"])
DUP_QRELS = {"q": {"a": 1, "b": 1}}


def test_duplicates_credit_once_keeps_the_copy_as_non_relevant():
    with pytest.warns(RagradeWarning, match="duplicate"):
        r = ragrade.evaluate(DUP_QRELS, DUP_RUN, ["P@4", "hits@4", "ap", "recall@4"])
    assert r.means == {"P@4": 0.5, "hits@4": 2.0, "ap": (1 + 2 / 4) / 2, "recall@4": 1.0}
    assert r.summary.duplicate_items == 1


def test_duplicates_drop_removes_later_copies():
    r = quiet(DUP_QRELS, DUP_RUN, ["P@3", "ap"], duplicates="drop")
    assert r.means == {"P@3": 2 / 3, "ap": (1 + 2 / 3) / 2}  # list becomes a, x, b


def test_duplicates_keep_last():
    r = quiet(DUP_QRELS, DUP_RUN, ["rr", "ap"], duplicates="keep_last")
    assert r.means == {"rr": 0.5, "ap": (1 / 2 + 2 / 3) / 2}  # list becomes x, a, b


def test_duplicates_keep_last_with_scores_keeps_the_last_score():
    run = Run.from_columns(["q", "q", "q"], ["a", "b", "a"], [3.0, 2.0, 1.0])
    r = quiet({"q": {"a": 1}}, run, "rr", duplicates="keep_last")
    assert r.means["rr"] == 0.5  # a keeps score 1.0: b (2.0) ranks first
    assert quiet({"q": {"a": 1}}, run, "rr").means["rr"] == 1.0


def test_duplicates_never_exceed_one():
    run = Run.from_lists([["a", "a", "a"]], query_ids=["q"])
    r = quiet({"q": {"a": 1}}, run, ["P@3", "ndcg@3", "ap", "recall@3", "context_precision@3"])
    assert r.means == {"P@3": 1 / 3, "ndcg@3": 1.0, "ap": 1.0, "recall@3": 1.0, "context_precision@3": 1.0}


def test_duplicates_error():
    with pytest.raises(PolicyError, match="'a'"):
        ragrade.evaluate(DUP_QRELS, DUP_RUN, "P@4", duplicates="error")


# -- identical_ids ---------------------------------------------------------------------------------
def test_identical_ids_drop_removes_from_the_run_only():
    qrels = {"q1": {"q1": 1, "a": 1}}
    run = {"q1": {"q1": 2.0, "a": 1.0}}
    before = copy.deepcopy((qrels, run))
    assert quiet(qrels, run, "rr").means["rr"] == 1.0
    r = quiet(qrels, run, ["rr", "recall@5"], identical_ids="drop")
    assert r.means == {"rr": 1.0, "recall@5": 0.5}  # q1 still counts in R: dropped from the run only
    assert r.summary.identical_ids_dropped == 1
    assert (qrels, run) == before


# -- ties ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("ties", "want"), [("docid_desc", 1 / 3), ("input", 1 / 2), ("docid_asc", 1.0)])
def test_tie_options(ties, want):
    run = {"q": {"d2": 1.0, "d1": 1.0, "d3": 1.0}}
    assert quiet({"q": {"d1": 1}}, run, "rr", ties=ties).means["rr"] == pytest.approx(want)


def test_ties_straddling_a_cutoff_are_counted():
    run = {"q1": {"a": 2.0, "b": 1.0, "c": 1.0}, "q2": {"a": 2.0, "b": 1.5, "c": 1.0}}
    r = quiet({"q1": {"a": 1}, "q2": {"a": 1}}, run, ["P@1", "P@2"])
    assert r.summary.ties_at_cutoff == {2: 1}


def test_ranked_lists_ignore_the_tie_policy():
    run = Run.from_lists([["d2", "d1", "d3"]], query_ids=["q"])
    for ties in ("docid_desc", "input", "docid_asc"):
        assert quiet({"q": {"d1": 1}}, run, "rr", ties=ties).means["rr"] == 0.5


# -- empty_run -------------------------------------------------------------------------------------
def test_empty_run_zero_and_error():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q2": {}}
    r = quiet(qrels, run, ["P@1", "rr", "precision"])
    assert r.per_query.loc["q2"].tolist() == [0.0, 0.0, 0.0] and r.summary.empty_lists == ["q2"]
    with pytest.raises(PolicyError, match="q2"):
        ragrade.evaluate(qrels, run, "P@1", empty_run="error")


# -- evaluator reuse and warnings ------------------------------------------------------------------
def test_evaluator_policies_apply_to_every_run():
    ev = Evaluator(QRELS2, "P@1", missing_run="drop")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        assert ev.evaluate(RUN1).means["P@1"] == 1.0
        assert ev.evaluate({"q2": {"a": 1.0}}).per_query["P@1"].to_dict() == {"q2": 1.0}


def test_clean_input_emits_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ragrade.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["P@1", "ndcg@2"])


def test_warnings_point_at_the_callers_line():
    with pytest.warns(RagradeWarning) as rec:
        ragrade.evaluate(QRELS2, RUN1, "P@1")
    assert rec[0].filename == __file__


def test_ties_at_cutoff_counts_only_evaluated_queries():
    run = {"q1": {"a": 2.0, "b": 1.0}, "q9": {"a": 1.0, "b": 1.0}}  # q9 has no ground truth
    r = quiet({"q1": {"a": 1}}, run, "P@1")
    assert r.summary.ties_at_cutoff == {}


def test_duplicate_items_counts_only_evaluated_queries():
    run = Run.from_lists([["a", "a"], ["b", "b"]], query_ids=["q1", "q9"])
    r = quiet({"q1": {"a": 1}}, run, "P@1")
    assert r.summary.duplicate_items == 1


def test_ids_colliding_after_str_conversion_are_duplicates():
    run = {"q": {1: 1.0, "1": 0.5, "x": 0.25}}
    with pytest.raises(PolicyError):
        quiet({"q": {"1": 1}}, run, "P@3", duplicates="error")


# -- notes: every policy case warns, in the words of the summary -----------------------------------------
def test_an_empty_retrieved_list_warns_and_is_counted():
    with pytest.warns(RagradeWarning, match=r"1 query with an empty retrieved list, scored 0 \(e.g. 'q2'\)"):
        r = ragrade.evaluate(QRELS2, {"q1": {"a": 1.0}, "q2": {}}, "P@1")
    assert r.summary.empty_lists == ["q2"] and r.per_query["P@1"].to_dict() == {"q1": 1.0, "q2": 0.0}


@pytest.mark.parametrize("run", [{"q1": {"b": float("inf"), "a": 1e300}},
                                 {"q1": {"a": 1.0, "b": float("-inf"), "c": -1e400}}])
def test_infinite_scores_are_ranked_as_given_and_counted(run):
    with pytest.warns(RagradeWarning, match="(is|are) \\+inf or -inf"):
        r = ragrade.evaluate({"q1": {"a": 1}}, run, ["rr"])
    first_is_a = max(run["q1"], key=run["q1"].get) == "a"
    assert r.means["rr"] == (1.0 if first_is_a else 0.5)
    assert r.summary.nonfinite_scores == sum(abs(v) == float("inf") for v in run["q1"].values())
    assert r.summary.to_dict()["nonfinite_scores"] == r.summary.nonfinite_scores
    # The same count through a Run built from the dict (the columnar path).
    with pytest.warns(RagradeWarning, match="inf"):
        r2 = ragrade.evaluate({"q1": {"a": 1}}, ragrade.Run.from_dict(run), ["rr"])
    assert r2.summary.nonfinite_scores == r.summary.nonfinite_scores and r2.means == r.means


def test_the_warning_is_the_summary_notes_with_singular_counts():
    with pytest.warns(RagradeWarning) as caught:
        r = ragrade.evaluate(QRELS2, RUN1, "P@1")
    assert str(caught[0].message) == "; ".join(r.notes()) == "1 ground-truth query missing from the run, scored 0 (e.g. 'q2')"
    assert r.summary_lines()[1:-1] == r.notes() and "(mean over 1 query)" in r.summary_lines()[-1]
    assert "1 queries" not in " ".join(r.summary_lines())


@pytest.mark.parametrize("profile", ["autorag", "ragas", "llamaindex"])
def test_list_profiles_report_the_hole_rate_of_their_ground_truth_lists(profile):
    """Every result carries the hole rate: with ground-truth lists, a retrieved item matching no listed
    item is unjudged (the lists judge relevant items only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = ragrade.evaluate([["a", "b"], ["c"], ["d"]], [["a", "x", "b"], ["y", "z"], []], ["recall@2"],
                             profile=profile)
    assert r.hole_rate is not None and r.hole_rate.k == 2 and r.hole_rate.only_relevant_judged
    got = r.hole_rate.per_query.tolist()
    assert got[:2] == [0.5, 1.0] and math.isnan(got[2])  # an empty list has no top k
    assert r.hole_rate.mean == 0.75 and r.hole_rate.queries == 2
    assert r.summary_lines()[-1].startswith("hole rate@2: 75.0%")


def test_a_policy_note_remade_from_its_message_keeps_it_whole():
    # warnings are re-made from their message alone (across xdist workers, by some filters): the message is
    # then one note, not one note per character
    from ragrade.errors import PolicyNote

    made = PolicyNote(["1 query missing from the run; scored 0", "2 queries without relevant judgments"])
    again = PolicyNote(str(made))
    assert again.notes == [str(made)]
    assert str(again) == str(made)
