"""ragrade.fuse(profile="ranx") against ranx.fuse: every method x normalisation, values (1e-12) and the
ranking of every query, ties included, on random runs (tests/fusion/_gen.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragrade
from ragrade.fusion import METHODS, NORMS

from ._gen import compare, need, random_qrels, random_runs, ranx_normalised, ranx_params

ranx = need("ranx", "ranx is in the test extra")

RANX_NORMS = [None if n == "none" else n for n in NORMS]
HASH_FREE = [m for m, i in METHODS.items() if not (i.hash_values or i.hash_ties)]
HASH_BOUND = [m for m, i in METHODS.items() if i.hash_values or i.hash_ties]


def _check(method: str, norm: str | None, seed: int, n_runs: int, candidate_order: str = "first_seen") -> None:
    runs = random_runs(seed, n_runs=n_runs)
    rr = [ranx.Run(r, name=f"r{i}") for i, r in enumerate(runs)]
    qrels = ranx.Qrels(random_qrels(seed))
    params = ranx_params(method, qrels, ranx_normalised([ranx.Run(r) for r in runs], norm))
    ref = ranx.fuse(rr, norm=norm, method=method, params=params)
    ours = ragrade.fuse(runs, method=method, norm=norm, params=params, candidate_order=candidate_order)
    bad, worst, n = compare(ref, ours)
    assert n > 0
    assert bad == 0, f"{method}/{norm}: {bad} queries ranked differently"
    assert worst <= 1e-12, f"{method}/{norm}: values differ by {worst}"


@pytest.mark.parametrize("norm", RANX_NORMS)
@pytest.mark.parametrize("method", HASH_FREE)
def test_equals_ranx(method: str, norm: str | None) -> None:
    if norm == "borda":  # ranx's candidate order reaches every method through norm="borda"
        _check(method, norm, seed=len(method), n_runs=3, candidate_order="python_set")
    else:
        _check(method, norm, seed=len(method) + 7 * len(str(norm)), n_runs=3 + (len(method) % 2))


@pytest.mark.parametrize("method", HASH_BOUND)
def test_hash_bound_methods_same_documents_under_any_seed(method: str) -> None:
    """Under the default (seed-independent) candidate order, BordaFuse and Condorcet return the
    documents ranx returns for every query; BordaFuse's values (not its tie order) are seed-free."""
    runs = random_runs(3, n_runs=3)
    rr = [ranx.Run(r) for r in runs]
    w = {"weights": [0.2, 0.5, 0.3]} if METHODS[method].weighted else {}
    ref = ranx.fuse(rr, norm="min-max", method=method, params=w).to_dict()
    ours = ragrade.fuse(runs, method=method, params=w).to_dict()
    assert ref.keys() == ours.keys()
    for q in ref:
        assert set(ref[q]) == set(ours[q])
        if "borda" in method:
            assert all(abs(ref[q][d] - ours[q][d]) <= 1e-12 for d in ref[q])


@pytest.mark.parametrize("norm", RANX_NORMS)
@pytest.mark.parametrize("method", HASH_BOUND)
def test_hash_bound_methods_equal_ranx_in_process(method: str, norm: str | None) -> None:
    """candidate_order="python_set" takes ranx's candidates from a set built in this process: equal to
    ranx here, whatever this process's PYTHONHASHSEED is."""
    _check(method, norm, seed=11 + len(str(norm)), n_runs=3, candidate_order="python_set")


_SCRIPT = """
import sys
sys.path.insert(0, {src!r}); sys.path.insert(0, {tests!r})
from fusion.test_ranx_parity import _check, HASH_BOUND
for method in HASH_BOUND:
    for norm in (None, "min-max", "borda"):
        _check(method, norm, seed=11, n_runs=3, candidate_order="python_set")
print("ok")
"""


def test_hash_bound_methods_equal_ranx_under_fixed_seed() -> None:
    """The same under one fixed PYTHONHASHSEED, in a child process started with it (reproducible)."""
    here = Path(__file__).resolve().parent
    code = _SCRIPT.format(src=str(here.parents[1] / "src"), tests=str(here.parent))
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


def test_default_candidate_order_does_not_depend_on_the_seed() -> None:
    runs = random_runs(5, n_runs=3)
    here = Path(__file__).resolve().parent
    code = (f"import sys; sys.path.insert(0, {str(here.parents[1] / 'src')!r}); sys.path.insert(0, {str(here)!r})\n"
            "import ragrade; from _gen import random_runs\n"
            "r = ragrade.fuse(random_runs(5, n_runs=3), method='condorcet', norm='borda')\n"
            "print(r.to_lists(ties='input'))")
    outs = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": s},
                           capture_output=True, text=True, timeout=120).stdout for s in ("1", "2")}
    assert len(outs) == 1 and "q0" in next(iter(outs))
    assert runs  # the same generator feeds both children


def test_duplicate_lines_are_refused_naming_the_run_query_and_document(tmp_path: Path) -> None:
    """A TREC file listing a document twice: ranx's file reader fills a dict line by line (the first place,
    the last score), which no framework does; under ranx's profile ragrade refuses the run (issue 34, item 2;
    tests/fusion/test_framework_edges.py: what each framework profile does)."""
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text("q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d1 3 1.0 t\nq1 Q0 d3 4 0.5 t\nq2 Q0 d1 1 1 t\n")
    b.write_text("q1 Q0 d3 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d4 1 1 t\n")
    ref = ranx.fuse([ranx.Run.from_file(str(a), kind="trec"), ranx.Run.from_file(str(b), kind="trec")],
                    method="sum", norm=None)
    assert ref.to_dict()["q1"]["d1"] == 1.0  # ranx: d1's last score, silently
    for method in ("sum", "rrf"):
        with pytest.raises(ragrade.InputError, match=r"run 'a' lists document 'd1' twice for query 'q1'"):
            ragrade.fuse({"a": str(a), "b": str(b)}, method=method, norm=None)
