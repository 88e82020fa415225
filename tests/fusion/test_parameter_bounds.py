"""Issue 34, items 7-9: every fusion parameter at its bounds. A value outside them (a non-numeric ``k``, a NaN
or infinite weight, RRF's ``k <= 0``, a grid step of 0 or one that makes an endless grid, folds that cannot
be drawn, qrels that share no query with the runs) is refused with an InputError naming the parameter,
before any arithmetic: never a UFuncTypeError, a ZeroDivisionError, NaN scores, a leaked NumPy warning or
a search that runs without bound. Values at the bounds are accepted and give finite fused scores."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.errors import InputError
from ragrade.fusion.optimize import optimize_fusion, ranx_weight_grid, simplex_grid
from ragrade.fusion.params import BOUNDS, MAX_CONFIGURATIONS, check_number, grid_size

from ._gen import random_qrels, random_runs

RUNS = {f"r{i}": r for i, r in enumerate(random_runs(7, n_runs=2))}
QRELS = random_qrels(7)

# (profile, method, parameter) for every scalar parameter a fusion takes
SCALARS = [
    ("ranx", "rrf", "k"), ("ranx", "rbc", "phi"), ("ranx", "gmnz", "gamma"), ("ranx", "logn_isr", "sigma"),
    ("langchain", "rrf", "c"), ("qdrant", "rrf", "k"), ("qdrant", "rrf", "limit"),
    ("llamaindex", "relative_score", "num_queries"), ("llamaindex", "simple", "top_k"),
    ("pyserini", "rrf", "k"), ("pyserini", "rrf", "depth"), ("pyserini", "interpolation", "alpha"),
    ("trectools", "rrf", "k"), ("trectools", "rbp", "p"), ("trectools", "rbp", "top_k"),
]
NOT_NUMBERS = ["abc", "", None, True, [1], {"k": 1}, math.nan, math.inf, -math.inf]


def _fuse(profile: str, method: str, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning may leak
        return ragrade.fuse(RUNS, method=method, profile=profile, params=params, norm="default")


def _bad_values(name: str) -> list:
    bound = BOUNDS[name]
    bad = [v for v in NOT_NUMBERS if not (v is None and bound.none_ok)]
    if bound.low is not None:
        bad.append(bound.low if bound.low_open else bound.low - 1)
    if bound.high is not None:
        bad.append(bound.high if bound.high_open else bound.high + 1)
    if bound.integer:
        bad.append((bound.low or 0) + 1.5)
    return bad


def _good_values(name: str) -> list:
    bound = BOUNDS[name]
    good = []
    if bound.low is not None:
        good.append(bound.low + (0.001 if bound.low_open and not bound.integer else 0))
    if bound.high is not None:
        good.append(bound.high - (0.001 if bound.high_open else 0))
    if not good:
        good = [-2.5, 0.0, 3.0]
    if bound.none_ok:
        good.append(None)
    return good


@pytest.mark.parametrize(("profile", "method", "name"), SCALARS)
def test_a_parameter_outside_its_bounds_is_refused_by_name(profile, method, name):
    for value in _bad_values(name):
        with pytest.raises(InputError, match=rf"fusion parameter {name}: must be"):
            _fuse(profile, method, **{name: value})


@pytest.mark.parametrize(("profile", "method", "name"), SCALARS)
def test_a_parameter_at_its_bounds_fuses_to_finite_scores(profile, method, name):
    for value in _good_values(name):
        run = _fuse(profile, method, **{name: value})
        assert run.n_rows > 0 and np.isfinite(run.scores).all(), (name, value)
        assert run.n_rows == len(set(zip(run.per_row_queries(), run.per_row_docs(), strict=True)))


def test_numbers_written_as_text_are_read():
    assert check_number("k", "60", BOUNDS["k"]) == 60
    assert check_number("phi", " 0.5", BOUNDS["phi"]) == 0.5
    assert check_number("w", 3.0, BOUNDS["w"]) == 3
    assert check_number("w", np.int64(2), BOUNDS["w"]) == 2


@pytest.mark.parametrize("profile, method", [("ranx", "wsum"), ("ranx", "mixed"), ("ranx", "w_condorcet"),
                                             ("langchain", "rrf"), ("llamaindex", "relative_score"),
                                             ("qdrant", "rrf")])
@pytest.mark.parametrize("weights", [[math.nan, 1.0], [1.0, math.inf], [-math.inf, 1.0], ["x", 1.0], [True, 1.0]])
def test_weights_must_be_finite_numbers(profile, method, weights):
    with pytest.raises(InputError, match=r"weights\[\d\]: must be a finite number"):
        ragrade.fuse(RUNS, method=method, profile=profile, weights=weights)


def test_llamaindex_weights_summing_to_zero_are_refused():
    with pytest.raises(InputError, match="sum, which is 0"):
        ragrade.fuse(RUNS, method="relative_score", profile="llamaindex", weights=[1.0, -1.0])


@pytest.mark.parametrize("step", [0, -0.1, 1.5, math.nan, math.inf, "abc", None])
def test_the_grid_step_is_checked(step):
    for ranx in (False, True):
        with pytest.raises(InputError, match=r"step:? must be a number"):
            optimize_fusion(QRELS, RUNS, "wsum", step=step, profile="ranx" if ranx else None)


def test_a_grid_beyond_the_limit_is_refused_saying_its_size():
    with pytest.raises(InputError) as info:
        simplex_grid(2, 1e-6)
    assert f"{grid_size(2, 10**6):,} configurations" in str(info.value)
    assert f"{MAX_CONFIGURATIONS:,}" in str(info.value)
    with pytest.raises(InputError, match="combinations to enumerate"):
        ranx_weight_grid(3, 0.001)
    with pytest.raises(InputError, match="configurations, more than"):
        optimize_fusion(QRELS, RUNS, "wsum", step=1e-6)
    with pytest.raises(InputError, match="176,851 configurations"):
        simplex_grid(4, 0.01)
    assert len(simplex_grid(3, 0.01)) == grid_size(3, 100) == 5151  # below the limit: searched


@pytest.mark.parametrize("cv", [0, 1, -2, 2.5, True, "x", 100])
def test_folds_are_checked_before_the_search(cv):
    with pytest.raises(InputError, match="cv"):
        optimize_fusion(QRELS, RUNS, "rrf", cv=cv)


def test_qrels_sharing_no_query_with_the_runs_are_refused():
    other = {f"x{q}": docs for q, docs in QRELS.items()}
    with pytest.raises(InputError, match="share no query with the runs"):
        optimize_fusion(other, RUNS, "wsum")
    search = optimize_fusion({"q1": QRELS["q1"]}, RUNS, "rrf")  # one query in common is enough
    assert search.score >= 0


@pytest.mark.parametrize(("args", "message"), [
    (["--param", "k=abc"], "--param k: must be a number > 0, got 'abc'"),
    (["--param", "k=0"], "--param k: must be a number > 0"),
    (["--method", "rbc", "--param", "phi=1"], "--param phi: must be a number between 0 and 1"),
    (["--method", "wsum", "--weights", "nan,1"], "--weights[0]: must be a finite number"),
    (["--method", "wsum", "--optimize", "QRELS", "--step", "0"], "--step: must be a number > 0"),
    (["--method", "wsum", "--optimize", "QRELS", "--step", "1e-6"], "1,000,001 configurations, more than"),
    (["--method", "wsum", "--optimize", "QRELS", "--cv", "1"], "--cv: must be a whole number of folds >= 2"),
    (["--method", "wsum", "--optimize", "OTHER"], "share no query with the runs"),
])
def test_the_command_names_the_option(tmp_path: Path, args, message):
    paths = []
    for name, run in RUNS.items():
        p = tmp_path / f"{name}.trec"
        p.write_text("".join(f"{q} Q0 {d} {i + 1} {s} {name}\n" for q, docs in run.items()
                             for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))))
        paths.append(str(p))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    other = tmp_path / "other.txt"
    other.write_text("z1 0 d1 1\n")
    args = [str(qrels) if a == "QRELS" else str(other) if a == "OTHER" else a for a in args]
    res = CliRunner().invoke(main, ["fuse", *paths, *args, "-o", str(tmp_path / "out.trec")])
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out.trec").exists()
