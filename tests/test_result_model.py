"""One result model (issue 21, item 5): every evaluation returns an immutable ``ragrade.Result``.

Judged evaluations return a ``Result`` whose summary holds the judge (``JudgeInfo``) and whose ``details``
hold the judge's account; their exports keep every key and value they had before (pinned in
``tests/judges/data/exports_before_result_model.json``). A result with deferred per-query values (what
Spark returns) collects them once. ``AssessResult`` and ``GateResult`` are frozen types of their own. No
module changes a result after it is built. (Spark itself: ``tests/scale/test_spark.py``.)
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ragrade
from ragrade.engine.result import (
    DeferredValues,
    HoleRate,
    JudgeInfo,
    LocalValues,
    QueryColumns,
    Result,
    Summary,
)
from ragrade.policies import Policies

ROOT = Path(__file__).resolve().parents[1]
BEFORE = json.loads((ROOT / "tests" / "judges" / "data" / "exports_before_result_model.json").read_text())


def _judge_rows() -> list[dict]:
    from ragrade.judges.dataset import read_rows

    return read_rows(str(ROOT / "examples" / "judge.jsonl"), None)


def _contains(old, new, path="") -> None:
    """Every key of ``old`` is in ``new`` with the same value (floats to 1e-12)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), path
        for k, v in old.items():
            assert k in new, f"{path}/{k} is missing"
            _contains(v, new[k], f"{path}/{k}")
    elif isinstance(old, float) and isinstance(new, float):
        assert new == pytest.approx(old, abs=1e-12), path
    else:
        assert new == old, path


# -- judged evaluations ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def judged():
    pytest.importorskip("rapidfuzz")
    from ragrade.judges import evaluate_judged

    rows = _judge_rows()
    return {"default": evaluate_judged(rows, None, cache=False),
            "ragas": evaluate_judged(rows, ["context_recall", "llm_context_precision@2"], cache=False,
                                     profile="ragas")}


def test_a_judged_evaluation_returns_the_one_result_model(judged):
    res = judged["default"]
    assert type(res) is ragrade.Result
    assert isinstance(res.judge, JudgeInfo) and res.judge is res.summary.judge
    assert (res.judge.name, res.judge.profile) == ("lexical", "default")
    assert list(res.metrics) == list(res.per_query.columns)
    assert sorted(res.metrics) == sorted(BEFORE["python_default"]["means"])
    assert all(m.family.kind == "judge" for m in res.metrics.values())
    assert res.per_query.index.name == "query" and list(res.per_query.index) == list(res.details)
    # means skip NaN, as before (pandas' mean over the column)
    for label, col in res.per_query.items():
        want = col.mean(skipna=True)
        assert res.means[label] == pytest.approx(want, nan_ok=True)
        assert res.counts[label] == int(col.notna().sum())
    assert res.hole_rate is None and res.upper is None and res.profile is None
    # the summary: the judge's entries as before, read as a mapping and as attributes
    assert res.summary["judgments"] == dict(res.judge.judgments)
    assert res.summary["metrics"] == {k: dict(v) for k, v in res.judge.outcomes.items()}
    assert res.summary["queries"] == res.summary.evaluated == 6
    assert res.summary.get("cache_note") == res.judge.cache_note and "cache" in res.summary
    assert "lexical" in repr(res) and repr(res).startswith("Result(")


@pytest.mark.parametrize("name", ["default", "ragas"])
def test_judged_exports_keep_every_key_and_value(judged, name):
    res = judged[name]
    new = json.loads(res.to_json(per_query=True))
    _contains(BEFORE[f"python_{name}"], new)  # JudgeResult.to_dict(): profile, judge, model, means, ...
    assert new["metrics"] == new["means"]
    assert set(new["summary"]) >= set(Summary(0, 0, 0).to_dict())  # grown by the generic entries
    assert "details" not in res.to_dict()  # per-query parts come with per_query=True, as for every result


@pytest.mark.parametrize("name", ["default", "ragas"])
def test_the_judge_command_json_keeps_every_key_and_value(name):
    pytest.importorskip("rapidfuzz")
    args = [] if name == "default" else ["--profile", "ragas", "-m", "context_recall,llm_context_precision@2"]
    out = subprocess.run([sys.executable, "-m", "ragrade", "judge", str(ROOT / "examples" / "judge.jsonl"),
                          "--format", "json", *args], capture_output=True, text=True, check=True)
    new = json.loads(out.stdout)
    _contains(BEFORE[f"cli_{name}"], new)
    assert "details" not in new


def test_judged_results_are_immutable(judged):
    res = judged["default"]
    for name in ("per_query", "means", "summary", "details", "judge", "metrics"):
        with pytest.raises(AttributeError):
            setattr(res, name, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.summary.evaluated = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.judge.model = "x"
    copy = res.replace(run_name="lexical run")
    assert copy.judge is res.judge and copy.details == res.details and res.run_name is None
    assert pickle.loads(pickle.dumps(res)).to_json(per_query=True) == res.to_json(per_query=True)


def test_the_deprecated_names_of_result_are_gone():
    """Version 0.x owes no deprecation period (CHANGELOG.md): ``JudgeResult``, ``SparkResult`` and
    ``to_result`` were removed in issue 33."""
    import ragrade.judges
    import ragrade.judges.runner
    import ragrade.scale.spark

    for module in (ragrade.judges, ragrade.judges.runner, ragrade.scale.spark):
        for name in ("JudgeResult", "SparkResult"):
            assert not hasattr(module, name)
    assert not hasattr(Result, "to_result")


# -- deferred per-query values (what Spark returns), without Spark -----------------------------------------
class _Remote(DeferredValues):
    where = "Remote"

    def __init__(self) -> None:
        super().__init__(frame="<remote frame>", columns=["P@1", "rr"], upper_frame=None)
        self.collected = 0
        self.released = False

    def collect(self) -> LocalValues:
        self.collected += 1
        values = QueryColumns(["q1", "q2", "q3"], {"P@1": [1.0, 0.0, np.nan], "rr": [1.0, 0.5, np.nan]})
        return LocalValues(values, None, HoleRate(1, (["q1", "q2"], [0.0, 1.0]), by_k={1: 0.5}))

    def release(self) -> None:
        self.released = True


def _deferred() -> tuple[Result, _Remote]:
    remote = _Remote()
    metrics = {"P@1": ragrade.parse_metric("P@1"), "rr": ragrade.parse_metric("rr")}
    return Result(remote, metrics, Summary(3, 3, 3, no_relevant={"P@1": ["q3"], "rr": ["q3"]}), Policies()), remote


def test_deferred_values_are_collected_once_on_first_need():
    res, remote = _deferred()
    assert res.deferred and res.per_query == "<remote frame>" and res.columns == ["P@1", "rr"]
    assert remote.collected == 0  # nothing collected to build, show per_query or copy it
    copy = res.replace(run_name="r")
    assert copy.deferred and remote.collected == 0
    assert dict(res.means) == {"P@1": 0.5, "rr": 0.75} and dict(res.counts) == {"P@1": 2, "rr": 2}
    assert res.hole_rate is not None and res.hole_rate.mean == 0.5
    res.to_json(per_query=True), res.to_csv(), res.summary_lines(), copy.means
    assert remote.collected == 1
    local = res.collect()
    assert not local.deferred and local.collect() is local
    assert local.to_json(per_query=True) == res.to_json(per_query=True)
    assert list(local.per_query.index) == ["q1", "q2", "q3"]
    assert repr(res) == f"Remote{local!r}"
    assert res.with_columns({"x": [1.0, 2.0, 3.0]}, {"x": ragrade.parse_metric("P@2")}).means["x"] == 2.0
    assert pickle.loads(pickle.dumps(res)).to_json() == local.to_json()
    res.unpersist()
    assert remote.released and res.means["rr"] == 0.75 and remote.collected == 1
    with pytest.raises(ragrade.errors.InputError, match="deferred"):
        Result(_Remote(), {}, Summary(0, 0, 0), Policies(), upper=local.per_query)


def test_a_modified_copy_of_deferred_values_is_local():
    res, _ = _deferred()
    changed = res.replace(hole_rate=None)
    assert not changed.deferred and changed.hole_rate is None and res.hole_rate is not None


# -- every part of a result is immutable -------------------------------------------------------------------
def test_evaluate_results_summaries_and_hole_rates_are_immutable():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ragrade.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 1.0}}, ["ndcg@10", "P@1"])
    with pytest.raises(AttributeError, match="immutable"):
        res.hole_rate = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.summary.missing_from_run = []
    with pytest.raises(AttributeError, match="immutable"):
        res.hole_rate.k = 5
    with pytest.raises(TypeError):
        res.hole_rate.by_k[3] = 0.5  # read-only
    assert res.summary["missing_from_run"] == 1 and res.summary.missing_from_run == ["q2"]
    assert dict(res.summary) == res.summary.to_dict() and res.summary.judge is None and res.judge is None
    assert res.summary.replace(evaluated=7).evaluated == 7 and res.summary.evaluated == 2
    h = pickle.loads(pickle.dumps(res.hole_rate))
    assert json.dumps(h.to_dict(per_query=True)) == json.dumps(res.hole_rate.to_dict(per_query=True))


def test_assessment_and_gate_results_are_frozen_types_of_their_own():
    from ragrade.assessment.runner import AssessResult
    from ragrade.gating.core import GateResult, MetricVerdict

    for cls in (AssessResult, GateResult, MetricVerdict):
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
        assert not issubclass(cls, Result)


def test_a_gate_result_cannot_be_changed(tmp_path):
    qrels = {f"q{i}": {"d1": 1, "d2": 1} for i in range(12)}
    run = {q: {"d1": 1.0, "d3": 0.5} for q in qrels}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = ragrade.evaluate(qrels, run, ["P@1", "recall@2"])
        path = tmp_path / "baseline.json"
        ragrade.save_baseline(base, path, qrels)
        verdict = ragrade.gate(path, qrels, run, n_resamples=100)
    assert verdict.passed and all(not v.reasons for v in verdict.verdicts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.notes = []
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.verdicts[0].passed = False


# -- nothing changes a result after construction -----------------------------------------------------------
RESULT_PRIVATE = {"_table", "_upper_table", "_nan_means", "_hole_rate", "_local", "_series", "_arrays", "_by_k"}


def test_no_module_reaches_into_a_result_or_sets_attributes_by_force():
    """Outside engine/result.py no module reads or writes a Result's private fields, and
    ``object.__setattr__`` is only used by a class on itself (``self``), never on another object."""
    offenders = []
    for path in sorted((ROOT / "src" / "ragrade").rglob("*.py")):
        rel = path.relative_to(ROOT / "src").as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "object.__setattr__":
                target = node.args[0] if node.args else None
                if not (isinstance(target, ast.Name) and target.id == "self"):
                    offenders.append(f"{rel}:{node.lineno}: object.__setattr__ on {ast.unparse(target)}")
            if (rel != "ragrade/engine/result.py" and isinstance(node, ast.Attribute)
                    and node.attr in {"_nan_means", "_upper_table"}):
                offenders.append(f"{rel}:{node.lineno}: .{node.attr}")
    assert not offenders, offenders


def test_summary_reads_as_its_export():
    s = Summary(3, 2, 2, missing_from_run=["q3"], ties_at_cutoff={5: 1})
    assert s["missing_from_run"] == 1 and s["ties_at_cutoff"] == {"5": 1} and "evaluated" in s
    assert list(s) == list(s.to_dict()) and len(s) == len(s.to_dict())
    with pytest.raises(KeyError):
        s["judgments"]
    info = JudgeInfo("scripted", "none", "ragas", {"context_recall": {"scored": 1}}, {"calls": 2}, None, None)
    judged = s.replace(judge=info)
    assert judged["judgments"] == {"calls": 2} and judged["queries"] == 2 and "cache_note" not in judged
    assert not math.isnan(float(judged["judgments"]["calls"]))
    assert pd.Series(dict(judged)).index.tolist() == list(judged.to_dict())


def test_a_judged_result_notes_failed_and_unasked_judgments():
    info = JudgeInfo("scripted", "none", "default", {}, {"needed": 5, "failed": 2, "unasked": 1})
    res = Result(QueryColumns(["a"], {"context_recall": [np.nan]}), {}, Summary(1, 1, 1, judge=info), Policies())
    notes = res.notes()
    assert notes[0].startswith("2 judgments failed") and "1 judgment left unasked" in notes[1]
    assert res.summary_lines()[1:] == notes
    clean = res.replace(summary=res.summary.replace(judge=dataclasses.replace(info, judgments={"failed": 0})))
    assert clean.notes() == []
