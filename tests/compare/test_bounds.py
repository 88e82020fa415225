"""Every statistics parameter at its bounds (issue 34, item 9): just inside is taken, on or past a bound is an
``InputError`` naming it; a degenerate comparison (one query, one resample) says so; the slices and baseline
files that would give a silently questionable result are refused."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.comparison import compare_scores
from ragrade.errors import InputError, ParseError, RagradeWarning
from ragrade.options import MAX_INT32, ComparisonOptions

EX = Path(__file__).resolve().parents[2] / "examples"
Q, R, D = (str(EX / n) for n in ("qrels.tsv", "run.tsv", "run_dense.tsv"))
RNG = np.random.default_rng(3)
SCORES = {"a": pd.DataFrame({"m": RNG.random(12)}, index=[f"q{i}" for i in range(12)]),
          "b": pd.DataFrame({"m": RNG.random(12)}, index=[f"q{i}" for i in range(12)])}


@pytest.mark.parametrize(("name", "inside", "outside"), [
    ("alpha", [1e-9, 0.5, 1 - 1e-9], [0, 1, -0.1, 1.1, math.nan, math.inf, "0.05", True]),
    ("confidence", [1e-9, 0.9, 1 - 1e-9, None], [0, 1, 2, math.nan, -math.inf, "x"]),
    ("n_resamples", [1, 2, MAX_INT32], [0, -1, MAX_INT32 + 1, 1.5, "100", True]),
    ("seed", [0, 1, 2**64, None], [-1, 1.5, "1", True]),
])
def test_each_statistics_parameter_at_its_bounds(name, inside, outside):
    for value in inside:
        assert getattr(ComparisonOptions(**{name: value}), name) == value
    for value in outside:
        with pytest.raises(InputError, match=name):
            ComparisonOptions(**{name: value})
        with pytest.raises(InputError, match=name):  # the functions check the same declaration
            compare_scores(SCORES, **{name: value})


def test_every_choice_is_taken_and_others_refused():
    for test in ("randomization", "bootstrap", "fisher", "permutation"):
        for correction in (None, "none", "holm", "bonferroni", "bh", "fdr"):
            for method in ("auto", "saddlepoint", "resample"):
                cmp = compare_scores(SCORES, n_resamples=20, test=test, correction=correction, ci_method=method)
                assert cmp.test in ("randomization", "bootstrap")
    for bad in ({"test": "anova"}, {"correction": "sidak"}, {"ci_method": "bca"}, {"test": "tukey", "correction": "holm"}):
        with pytest.raises(InputError):
            compare_scores(SCORES, **bad)


def test_the_smallest_comparisons_say_so():
    one = {k: v.iloc[:1] for k, v in SCORES.items()}
    with pytest.warns(RagradeWarning, match="one query is scored in every run"):
        cmp = compare_scores(one, n_resamples=20)
    row = cmp.summary.loc[("m", "a")]
    assert row["ci_low"] == row["ci_high"] == row["mean"]
    with pytest.warns(RagradeWarning, match="n_resamples is 1"):
        compare_scores(SCORES, n_resamples=1, ci_method="resample")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RagradeWarning)
        compare_scores(SCORES, n_resamples=50)  # nothing to say
    out = CliRunner().invoke(main, ["compare", Q, R, D, "-m", "P@5", "--resamples", "1", "--ci-method", "resample"])
    assert out.exit_code == 0 and "warning: --resamples is 1" in out.stderr


def test_plan_power_and_alpha_at_their_bounds():
    qrels = {f"q{i}": {"d1": 1} for i in range(6)}
    runs = {"a": {f"q{i}": ["d1", "x"] if i % 2 else ["x", "d1"] for i in range(6)},
            "b": {f"q{i}": ["d1"] for i in range(6)}}
    assert ragrade.plan(qrels, runs, ["rr"], delta=0.1, power=0.999, alpha=1e-6).target_power == 0.999
    for bad in ({"power": 1}, {"power": 0}, {"alpha": 0}, {"delta": 0}, {"delta": math.inf}, {"delta": -0.1}):
        with pytest.raises(InputError, match=next(iter(bad))):
            ragrade.plan(qrels, runs, ["rr"], **{"delta": 0.1, **bad})


def test_hole_threshold_at_its_bounds():
    runner = CliRunner()
    for value, code in (("0", 0), ("1", 0), ("nan", 2), ("-0.01", 2), ("1.01", 2), ("inf", 2)):
        out = runner.invoke(main, ["evaluate", Q, R, "-m", "P@5", "--hole-threshold", value])
        assert out.exit_code == code, (value, out.output)
        if code:
            assert "--hole-threshold must be a number in [0, 1]" in out.output


def test_a_slices_file_without_a_query_column_is_refused(tmp_path):
    from ragrade.engine.slices import read_slices

    path = tmp_path / "labels.tsv"
    path.write_text("topic_name\tkind\nq01\ta\n", encoding="utf-8")
    with pytest.raises(InputError, match="no query id column: name it one of query, query_id"):
        read_slices(path)
    out = CliRunner().invoke(main, ["evaluate", Q, R, "-m", "P@5", "--slices", str(path)])
    assert out.exit_code == 2 and "no query id column" in out.output


def _baseline(tmp_path):
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    res = ragrade.evaluate(qrels, {"q1": ["d1"], "q2": ["d3", "d2"]}, ["rr"])
    path = ragrade.save_baseline(res, tmp_path / "b.json", qrels)
    return path, json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["per_query"]["values"]["rr"].__setitem__(0, 1.5), r"rr lies in \[0, 1\]"),
    (lambda d: d["per_query"]["values"]["rr"].__setitem__(0, -0.2), r"rr lies in \[0, 1\]"),
    (lambda d: d["per_query"]["queries"].__setitem__(1, "q1"), "lists query 'q1' twice"),
    (lambda d: d["per_query"]["values"]["rr"].__setitem__(0, "high"), "must be 2 numbers or nulls"),
    (lambda d: d.__setitem__("metrics", 5), "'metrics' must be a mapping"),
])
def test_a_baseline_that_cannot_be_right_is_refused_naming_the_file(tmp_path, edit, message):
    path, data = _baseline(tmp_path)
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ParseError, match=message) as info:
        ragrade.load_baseline(path)
    assert str(path) in str(info.value)
