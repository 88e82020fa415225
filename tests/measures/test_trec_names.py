"""trec_eval's measure names, dotted forms, output names, nicknames and options mean what trec_eval means,
and the results are labelled as the user asked; ir-measures' and ranx's spellings parse to the same
metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragrade
from ragrade import MetricError
from ragrade.cli import main
from ragrade.metrics import Metric, parse_labelled, parse_metric, parse_metrics
from ragrade.metrics.registry import OFFICIAL_CUTOFFS, TREC, TREC_NICKNAMES

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")


def labels(text, names="ragrade"):
    return [(label, str(m)) for label, m in parse_labelled(text, names)]


def test_family_names_stand_for_the_official_cutoffs():
    assert [lab for lab, _ in labels("P")] == [f"P_{k}" for k in OFFICIAL_CUTOFFS]
    assert labels("success") == [("success_1", "hit_rate@1"), ("success_5", "hit_rate@5"),
                                 ("success_10", "hit_rate@10")]
    assert labels("ndcg_cut")[1] == ("ndcg_cut_10", "ndcg@10")
    assert labels("map_cut")[0] == ("map_cut_5", "ap@5")
    assert labels("iprec_at_recall")[5] == ("iprec_at_recall_0.50", "iprec@0.5")
    assert labels("Rprec_mult")[0] == ("Rprec_mult_0.20", "r_precision(mult=0.2)")
    assert labels("unj") == [("unj_5", "unj@5"), ("unj_10", "unj@10"), ("unj_20", "unj@20")]
    assert labels("relative_P")[0] == ("relative_P_5", "relative_precision@5")


def test_ragrade_keeps_its_own_family_names_unless_asked_for_trec_eval():
    assert labels("recall") == [("recall", "recall")]
    assert [lab for lab, _ in labels("recall", "trec_eval")][:2] == ["recall_5", "recall_10"]
    assert labels("rbp") == [("rbp", "rbp")] and labels("rbp", "trec_eval") == [("rbp", "rbp(p=0.9)")]
    assert labels("p") == [("p", "precision")]  # trec_eval's names are case-sensitive: p is ragrade's


def test_dotted_forms_and_output_names():
    assert labels("P.5,10") == [("P_5", "precision@5"), ("P_10", "precision@10")]
    assert labels("ndcg_cut.5,10") == [("ndcg_cut_5", "ndcg@5"), ("ndcg_cut_10", "ndcg@10")]
    assert labels("iprec_at_recall.0.3") == [("iprec_at_recall_0.30", "iprec@0.3")]
    assert labels("ndcg.1=3.5,2=9") == [("ndcg_1=3.5,2=9", "ndcg(gains={1:3.5,2:9})")]
    assert labels("rbp.p=0.5") == [("rbp_p=0.5", "rbp(p=0.5)")]
    assert labels("utility.2,-1,0,0") == [("utility_2,-1,0,0", "utility(a=2)")]
    assert labels("set_F.0.5") == [("set_F_0.5", "f1(beta=0.5)")]
    assert labels("P_5") == [("P_5", "precision@5")]
    assert labels("Rprec_mult_0.20") == [("Rprec_mult_0.20", "r_precision(mult=0.2)")]
    assert labels("iprec_at_recall_1.00") == [("iprec_at_recall_1.00", "iprec@1")]
    with pytest.raises(MetricError):
        parse_metrics("P.five")
    with pytest.raises(MetricError):
        parse_metrics("utility.1,2")


def test_nicknames_cover_every_trec_eval_measure():
    all_trec = labels("all_trec")
    names = {lab.rsplit("_", 1)[0] if lab[-1].isdigit() and "_" in lab else lab for lab, _ in all_trec}
    assert {"bpref", "infAP", "gm_map", "11pt_avg", "Rndcg", "binG", "G", "set_map", "utility", "rbp", "rbp_resid",
            "num_nonrel_judged_ret"} <= names
    assert len(all_trec) > 90
    assert {t.name for t in TREC if t.in_all_trec} == set(TREC_NICKNAMES["all_trec"])
    assert len(labels("official")) == 9 + 11 + 9  # counts, ranked measures, iprec, P


def test_other_tools_spellings():
    assert parse_metric("nDCG@10") == parse_metric("ndcg@10")
    assert parse_metric("P(rel=2)@5") == Metric.make("precision", 5, rel=2)
    assert parse_metric("ndcg_burges@10") == parse_metric("ndcg(gain=exp)@10")
    assert parse_metric("map@100-l2") == parse_metric("ap(rel=2)@100")
    assert parse_metric("rbp.95") == parse_metric("rbp(p=0.95)")
    assert parse_metric("SetP(relative=True)") == parse_metric("relative_precision")
    assert parse_metric("nDCG(dcg='exp-log2')@10") == parse_metric("ndcg(gain=exp)@10")
    assert parse_metric("IPrec@0.5") == Metric.make("iprec", recall=0.5)
    assert [str(m) for m in parse_metrics("iprec@[0.1,0.5]")] == ["iprec@0.1", "iprec@0.5"]
    assert parse_metric("NumRet(rel=1)") == Metric.make("num_ret", rel=1)
    m = parse_metric("nDCG(gains={0:0,1:1,2:3},judged_only=True)@10")
    assert parse_metric(str(m)) == m and m.get("judged_only") is True


def test_results_are_labelled_as_asked_and_aggregated_as_trec_eval():
    r = ragrade.evaluate({"q1": {"a": 1, "b": 0}, "q2": {"c": 1}}, {"q1": {"a": 1.0, "x": 0.5}, "q2": {"y": 1.0}},
                         ["num_q", "num_ret", "map", "gm_map", "P.2"])
    assert list(r.means) == ["num_q", "num_ret", "map", "gm_map", "P_2"]
    assert r.means["num_q"] == 2 and r.means["num_ret"] == 3  # sums
    assert r.means["gm_map"] == pytest.approx((1.0 * 1e-5) ** 0.5)  # geometric mean, floored at 1e-5
    assert r.means["P_2"] == 0.25


def test_rel_level_applies_to_every_metric_without_its_own():
    r = ragrade.evaluate({"q": {"a": 1, "b": 3}}, {"q": {"a": 2.0, "b": 1.0}}, ["P@2", "P(rel=3)@2", "ndcg@2"],
                         rel_level=2)
    assert r.per_query.loc["q"].tolist()[:2] == pytest.approx([0.5, 0.5])
    # (an explicit rel=1 is the default and cannot be told apart from none: -l sets it too)
    assert str(r.metrics["P@2"]) == "precision(rel=2)@2" and str(r.metrics["ndcg@2"]) == "ndcg@2"


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_trec_eval_options(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text("q1 0 a 1\nq1 0 b 2\nq1 0 c 0\nq2 0 a 1\nq3 0 z 1\n")
    r = tmp_path / "run.txt"
    r.write_text("q1 Q0 x 1 5 t\nq1 Q0 a 2 4 t\nq1 Q0 c 3 3 t\nq1 Q0 b 4 2 t\nq2 Q0 a 1 1 t\n")
    base = [str(q), str(r), "--format", "json", "--per-query"]
    out = json.loads(_cli("evaluate", *base, "-m", "P.1,4", "-m", "num_q").stdout)
    assert out["metrics"]["P_4"] == pytest.approx((0.5 + 0.25 + 0) / 3) and out["metrics"]["num_q"] == 3
    out = json.loads(_cli("evaluate", *base, "-m", "P.2", "-M", "2").stdout)
    assert out["per_query"]["q1"]["P_2"] == 0.5
    out = json.loads(_cli("evaluate", *base, "-m", "P.2", "-J").stdout)
    assert out["per_query"]["q1"]["P_2"] == 0.5  # a, c, b: a relevant
    out = json.loads(_cli("evaluate", *base, "-m", "P.4", "-l", "2").stdout)
    assert out["per_query"]["q1"]["P_4"] == 0.25
    out = json.loads(_cli("evaluate", *base, "-m", "num_q", "--profile", "trec_eval", "-c").stdout)
    assert out["metrics"]["num_q"] == 3
    out = json.loads(_cli("evaluate", *base, "-m", "num_q", "--profile", "trec_eval").stdout)
    assert out["metrics"]["num_q"] == 2  # trec_eval without -c: only queries in the run
    out = json.loads(_cli("evaluate", *base, "-m", "utility.1,-1,0,1", "-N", "10").stdout)
    assert out["per_query"]["q1"]["utility_1,-1,0,1"] == 2 - 2 + (10 + 2 - 4 - 2)
    out = json.loads(_cli("evaluate", *base, "-m", "recall", "--names", "trec_eval").stdout)
    assert "recall_5" in out["metrics"]
    assert _cli("evaluate", *base, "-m", "P", "-J", "--unjudged", "bounds").exit_code == 2


def test_cli_table_shows_the_hole_rate_and_warns(tmp_path):
    res = _cli("evaluate", str(EXAMPLES / "qrels.tsv"), str(EXAMPLES / "run.tsv"), "-m", "ndcg@10")
    assert "hole rate@10" in res.stdout
    assert "unjudged" in res.stderr  # the examples hold judged non-relevant documents and many holes
    res = _cli("evaluate", str(EXAMPLES / "qrels.tsv"), str(EXAMPLES / "run.tsv"), "-m", "ndcg@10",
               "--hole-threshold", "1")
    assert "warning" not in res.stderr
    res = _cli("evaluate", str(EXAMPLES / "qrels.tsv"), str(EXAMPLES / "run.tsv"), "-m", "ndcg@10", "--unjudged",
               "bounds")
    assert "upper" in res.stdout
