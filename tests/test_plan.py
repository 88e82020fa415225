"""One plan, one dispatcher (issue 21, item 1): ``compare``, ``report.write_html`` (through
``evaluate_runs``), ``gate``, ``agreement`` and ``conventions`` evaluate through the plan ``evaluate``
builds, so the keywords of ``evaluate`` (profile, matcher, max_memory, the policies) work in each of them
with the same per-query values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ragrade
from ragrade.engine.plan import EvalPlan, build_plan
from ragrade.errors import InputError, MetricError, PolicyError, RagradeError, UnknownNameError
from ragrade.evaluation import dispatch

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS, RUN, DENSE = (str(EXAMPLES / n) for n in ("qrels.tsv", "run.tsv", "run_dense.tsv"))

TRUTH = {"q1": ["the cat sat on the mat", "dogs bark loudly"], "q2": ["paris is the capital of france"],
         "q3": ["water boils at 100 degrees"]}
TEXTS_A = {"q1": ["the cat sat on a mat", "birds fly", "dogs bark loud"], "q2": ["berlin is in germany",
           "paris is the capital of france"], "q3": ["ice is cold"]}
TEXTS_B = {"q1": ["birds fly", "the cat sat on the mat"], "q2": ["paris is the capital of france"],
           "q3": ["water boils at 100 degrees", "ice is cold"]}

# (keywords, metrics, inputs): every way in that changes how values are computed
CASES = [
    pytest.param({"profile": "autorag"}, ["recall@5", "ap@5", "ndcg@5"], "ids", id="profile-list"),
    pytest.param({"profile": "trec_eval", "missing_run": "zero"}, ["ndcg@10", "P@5"], "ids", id="profile-engine"),
    pytest.param({"ties": "input", "no_relevant": "zero", "unjudged": "condensed"}, ["ndcg@10", "ap"], "ids",
                 id="policies"),
    pytest.param({"max_docs": 5, "rel_level": 1}, ["P@10", "recall@10"], "ids", id="trec-options"),
    pytest.param({"max_memory": "64MiB"}, ["ndcg@10", "recall@5"], "paths", id="max_memory"),
    pytest.param({"matcher": "rouge_l"}, ["recall@3", "rr"], "texts", id="matcher"),
]


def _inputs(kind: str):
    if kind == "texts":
        return TRUTH, {"a": TEXTS_A, "b": TEXTS_B}
    if kind == "paths":
        return QRELS, {"a": RUN, "b": DENSE}
    return ragrade.read_qrels(QRELS), {"a": ragrade.read_run(RUN), "b": ragrade.read_run(DENSE)}


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert [str(q) for q in a.index] == [str(q) for q in b.index]
    np.testing.assert_array_equal(a.to_numpy(dtype=np.float64), b.to_numpy(dtype=np.float64))


@pytest.mark.parametrize(("keywords", "metrics", "kind"), CASES)
def test_compare_and_report_evaluate_as_evaluate_does(keywords, metrics, kind):
    from ragrade.report.prepare import evaluate_runs

    qrels, runs = _inputs(kind)
    expected = {name: ragrade.evaluate(qrels, run, metrics, **keywords) for name, run in runs.items()}
    cmp = ragrade.compare(qrels, runs, metrics, n_resamples=200, **keywords)
    ev = evaluate_runs(qrels, runs, metrics, ks=None, **keywords)
    for name, res in expected.items():
        kept = res.per_query
        for metric in cmp.metrics:  # compare keeps the queries every run scores
            got = cmp.scores[name][metric]
            want = kept[metric].reindex(got.index)
            assert len(got) >= len(kept) // 2 and not want.isna().any()
            np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
            assert cmp.summary.loc[(metric, name), "mean"] == pytest.approx(float(want.mean()), abs=1e-15)
        _same(ev.per_query[name][list(kept.columns)], kept)


@pytest.mark.parametrize(("keywords", "metrics", "kind"), CASES)
def test_gate_scores_the_candidate_as_evaluate_does(tmp_path, keywords, metrics, kind):
    qrels, runs = _inputs(kind)
    base = ragrade.evaluate(qrels, runs["a"], metrics, **keywords)
    path = ragrade.save_baseline(base, tmp_path / "baseline.json", qrels, matcher=keywords.get("matcher"))
    cand = ragrade.evaluate(qrels, runs["b"], metrics, **keywords)
    gate_kw = {k: v for k, v in keywords.items() if k not in ("rel_level",)}
    res = ragrade.gate(path, qrels, runs["b"], n_resamples=200, **gate_kw)
    for v in res.verdicts:  # on the queries both count (as compare keeps the queries every run scores)
        b, c = base.per_query[v.metric], cand.per_query[v.metric].reindex(base.per_query.index)
        paired = b.notna() & c.notna()
        assert v.paired == int(paired.sum())
        assert v.candidate == pytest.approx(float(c[paired].mean()), abs=1e-15)
        assert v.baseline == pytest.approx(float(b[paired].mean()), abs=1e-15)
    same = ragrade.gate(path, qrels, runs["a"], n_resamples=200, **gate_kw)
    assert same.passed and all(v.delta == 0 for v in same.verdicts)


def test_write_html_takes_the_evaluate_keywords(tmp_path):
    qrels, runs = _inputs("ids")
    out = ragrade.report.write_html(tmp_path / "r.html", qrels, runs, ["recall@5", "ap@5"], profile="autorag",
                                    plots=False, n_resamples=100)
    assert out.exists() and out.stat().st_size > 1000


def test_gate_refuses_conventions_other_than_the_baseline(tmp_path):
    qrels, runs = _inputs("ids")
    path = ragrade.save_baseline(ragrade.evaluate(qrels, runs["a"], ["ndcg@10"]), tmp_path / "b.json", qrels)
    from ragrade.gating import IncomparableError

    with pytest.raises(IncomparableError, match="profile"):
        ragrade.gate(path, qrels, runs["b"], profile="autorag")
    with pytest.raises(IncomparableError, match="ties"):
        ragrade.gate(path, qrels, runs["b"], ties="input")
    with pytest.raises(UnknownNameError):
        ragrade.gate(path, qrels, runs["b"], tie="input")


def test_the_plan_is_validated_once_and_immutable():
    plan = build_plan({"q1": {"d1": 1}}, {"q1": ["d1"]}, ["P@[1,2]"], ties="input", profile="default")
    assert isinstance(plan, EvalPlan) and plan.profile is None and plan.columns == ["P@1", "P@2"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.engine = "spark"  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.policies["ties"] = "docid_asc"  # type: ignore[index]
    assert dict(plan.replace(policies={"ties": "docid_asc"}).policies) == {"ties": "docid_asc"}
    assert dict(plan.policies) == {"ties": "input"}
    for bad, error in [({"tie": "input"}, UnknownNameError), ({"ties": "sideways"}, PolicyError),
                       ({"profile": "nope"}, UnknownNameError), ({"matcher": "nope"}, UnknownNameError),
                       ({"max_memory": -1}, InputError), ({"max_memory": True}, InputError),
                       ({"engine": "gpu"}, UnknownNameError), ({"rel_level": 0}, InputError),
                       ({"names": "x"}, InputError), ({"matcher": "profile"}, InputError),
                       ({"profile": "trec_eval", "matcher": "fuzzy"}, InputError)]:
        with pytest.raises(error):
            build_plan({"q1": {"d1": 1}}, {"q1": ["d1"]}, "P@1", **bad)
    with pytest.raises(MetricError):
        build_plan({"q1": {"d1": 1}}, {"q1": ["d1"]}, ["alpha_ndcg@5", "P@1"])


def test_every_entry_point_refuses_an_unknown_keyword_alike(tmp_path):
    qrels, runs = {"q1": {"d1": 1}}, {"a": {"q1": ["d1"]}, "b": {"q1": ["d2"]}}
    calls = [lambda: ragrade.evaluate(qrels, runs["a"], "P@1", tie="input"),
             lambda: ragrade.compare(qrels, runs, "P@1", tie="input"),
             lambda: ragrade.report.write_html(tmp_path / "x.html", qrels, runs, "P@1", tie="input")]
    messages = set()
    for call in calls:
        with pytest.raises(UnknownNameError) as info:
            call()
        messages.add(str(info.value))
    assert len(messages) == 1 and "'ties'" in messages.pop()


def test_dispatch_scores_every_run_against_the_ground_truth_indexed_once():
    qrels, runs = _inputs("ids")
    results = dispatch(build_plan(qrels, runs, ["ndcg@10"], many=True))
    assert list(results) == ["a", "b"]
    for name, res in results.items():
        _same(res.per_query, ragrade.evaluate(qrels, runs[name], ["ndcg@10"]).per_query)


def test_result_is_immutable_and_offers_copies():
    res = ragrade.evaluate({"q1": {"d1": 1}}, {"q1": ["d1"]}, ["P@1"])
    with pytest.raises(AttributeError, match="immutable"):
        res.run_name = "x"  # type: ignore[misc]
    named = res.replace(run_name="x")
    assert named.run_name == "x" and res.run_name is None and named.means == res.means
    wider = res.with_columns({"rr": [1.0]}, {"rr": ragrade.parse_metric("rr")})
    assert wider.columns == ["P@1", "rr"] and res.columns == ["P@1"]
    with pytest.raises(RagradeError):
        res.replace(colour="red")


def test_gate_stays_the_function_after_save_baseline_the_docs_sequence(tmp_path):
    """docs/gate.md: save_baseline (which loads the gate's package) then ragrade.gate(...), in a fresh
    interpreter (the package used to replace the function on the ragrade module)."""
    import os
    import subprocess
    import sys

    code = (
        "import ragrade\n"
        f"qrels = ragrade.read_qrels({QRELS!r})\n"
        f"result = ragrade.evaluate(qrels, ragrade.read_run({RUN!r}), ['ndcg@10', 'recall@20'])\n"
        "ragrade.save_baseline(result, 'baseline.json', qrels)\n"
        f"v = ragrade.gate('baseline.json', qrels, ragrade.read_run({DENSE!r}), margins={{'ndcg@10': 0.01}},"
        " n_resamples=500)\n"
        "import ragrade.gating\n"
        "assert callable(ragrade.gate) and ragrade.gate(ragrade.load_baseline('baseline.json'), qrels,"
        " ragrade.read_run('" + RUN + "'), n_resamples=100).passed\n"
        "print(v.exit_code, [x.metric for x in v.verdicts])\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(" ", 1)[1].strip() == "['ndcg@10', 'recall@20']"


@pytest.mark.parametrize("options", [["--profile", "autorag"], ["--ties", "input", "-J"], ["--max-memory", "64MiB"],
                                     ["--names", "trec_eval", "-l", "2"]])
def test_the_commands_parse_the_same_options_into_the_same_plan(tmp_path, options):
    import json

    from click.testing import CliRunner

    from ragrade.cli import main

    metrics = ["-m", "recall@5", "-m", "ndcg@5"]
    runner = CliRunner()
    one = runner.invoke(main, ["evaluate", QRELS, DENSE, *metrics, "--format", "json", "--per-query", *options])
    assert one.exit_code == 0, one.output
    per_query = json.loads(one.stdout)["per_query"]
    cmp = runner.invoke(main, ["compare", QRELS, RUN, DENSE, *metrics, "--format", "json", "--resamples", "100",
                               *options])
    assert cmp.exit_code == 0, cmp.output
    scores = json.loads(cmp.stdout)
    assert scores["metrics"] == ["recall@5", "ndcg@5"]
    base = tmp_path / "b.json"
    saved = runner.invoke(main, ["evaluate", QRELS, DENSE, *metrics, "--save-baseline", str(base), *options])
    assert saved.exit_code == 0, saved.output
    stored = json.loads(base.read_text())
    for q, row in per_query.items():
        for metric, value in row.items():
            got = stored["per_query"]["values"][metric][stored["per_query"]["queries"].index(q)]
            assert (got is None and value != value) or got == value
    gate_options = [o for o in options if o not in ("--names", "trec_eval", "-l", "2")]
    gated = runner.invoke(main, ["gate", str(base), QRELS, DENSE, "--resamples", "100", *gate_options])
    assert gated.exit_code == 0, gated.output
    rep = runner.invoke(main, ["report", QRELS, RUN, DENSE, *metrics, "-o", str(tmp_path / "r.html"), "--no-plots",
                               "--resamples", "100", *options])
    assert rep.exit_code == 0, rep.output
