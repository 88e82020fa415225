"""trec_eval 10's own measures (``rbp``, ``rbp_resid``, ``unj``) against trec_eval 10 itself, built from its
source in a fixture, per query to 1e-12; and the slow reference of the tests (``measures_reference.py``)
checked against the same binary.

The binary is ``TREC_EVAL_FULL_BIN``, trec_eval 10 built with its values printed with 17 significant
digits instead of 4 decimals (``.ci/run`` builds it; see ``tests/trec_eval_bin.py``), so that values can be
compared to 1e-12.

The random collections hold unjudged documents, negative grades (trec_eval: in the pool, not judged), graded
judgments, ties (broken by document id, descending, as ragrade's default) and lists shorter than the
cutoffs. Every qrels query is in the run and the other way round: trec_eval 10.0-rc3 stops on a run query
missing from the qrels, and scores a qrels query missing from the run differently by parameter (see
docs/parity-vectors.md).
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import measures_reference as MR
from ragrade.cli import main
from ragrade.metrics import parse_labelled
from reference import rank
from trec_eval_bin import trec_eval_binary

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")

#: trec_eval 10's measures with parameters and gain maps (``-m`` arguments) and the ragrade labels they give.
MEASURES = ["rbp", "rbp.p=0.5", "rbp.p=0.95", "rbp.1=2,2=5,3=9", "rbp_resid", "rbp_resid.p=0.7", "unj",
            "unj.1,3,50"]


@pytest.fixture(scope="session")
def trec_eval10() -> Path:
    return trec_eval_binary(full=True)


def collection(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, float]]]]:
    rng = np.random.default_rng(seed)
    pool = [f"d{i:02d}" for i in range(40)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, float]]] = {}
    for i in range(25):
        q = f"q{i}"
        judged = rng.choice(pool, int(rng.integers(1, 15)), replace=False)
        qrels[q] = {str(d): int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in judged}
        docs = rng.choice(pool, int(rng.integers(1, 30)), replace=False)
        steps = np.arange(1, 6) / 4 if rng.random() < 0.5 else np.arange(1, 41) / 8
        run[q] = [(str(d), float(s)) for d, s in zip(docs, rng.choice(steps, len(docs)), strict=True)]
    return qrels, run


def write(tmp: Path, qrels, run) -> tuple[Path, Path]:
    qp, rp = tmp / "qrels.txt", tmp / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rp.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for q, rows in run.items() for i, (d, s) in enumerate(rows)))
    return qp, rp


def trec_eval_values(binary: Path, qp: Path, rp: Path, measure: str) -> dict[str, dict[str, float]]:
    proc = subprocess.run([str(binary), "-q", "-m", measure, str(qp), str(rp)], capture_output=True, text=True,
                          check=True)
    out: dict[str, dict[str, float]] = {}
    for line in proc.stdout.splitlines():
        name, q, v = line.split(None, 2)
        if q != "all" and name not in ("runid", "relstring"):
            out.setdefault(name, {})[q] = float(v)
    return out


def test_rbp_rbp_resid_unj_equal_trec_eval10(trec_eval10, tmp_path):
    n, worst, worst_ref = 0, 0.0, 0.0
    for seed in range(10):
        qrels, run = collection(300 + seed)
        qp, rp = write(tmp_path, qrels, run)
        for measure in MEASURES:
            want = trec_eval_values(trec_eval10, qp, rp, measure)
            res = CliRunner().invoke(main, ["evaluate", str(qp), str(rp), "-m", measure, "--names", "trec_eval",
                                            "--per-query", "--format", "json"], catch_exceptions=False)
            got = json.loads(res.stdout)["per_query"]
            labelled = dict(parse_labelled(measure, "trec_eval"))
            assert sorted(want) == sorted(labelled), (measure, sorted(want), sorted(labelled))
            for name, values in want.items():
                for q, w in values.items():
                    g = got[q][name]
                    assert math.isclose(g, w, rel_tol=0, abs_tol=1e-12), (measure, name, q, g, w)
                    ref = MR.value(labelled[name], rank(run[q]), qrels[q])
                    assert math.isclose(ref, w, rel_tol=0, abs_tol=1e-12), (measure, name, q, ref, w)
                    worst = max(worst, abs(g - w))
                    worst_ref = max(worst_ref, abs(ref - w))
                    n += 1
    print(f"\ntrec_eval 10 parity: {n} values (rbp, rbp_resid, unj), max |ragrade - trec_eval 10| = {worst:.3g}, "
          f"max |reference - trec_eval 10| = {worst_ref:.3g}")
    assert n > 2500


def test_all_trec_of_trec_eval10(trec_eval10, tmp_path):
    """trec_eval 10's whole ``-m all_trec`` per query through ``ragrade evaluate -m all_trec`` (the default
    convention follows trec_eval 10): equal to 1e-12 everywhere; ``--profile pytrec_eval`` keeps trec_eval 9's
    interpolated precision (floor(level R + 0.9) relevant documents instead of round(level R)), which differs
    on these collections."""
    n, worst, differing = 0, 0.0, set()
    for seed in range(6):
        qrels, run = collection(500 + seed)
        qp, rp = write(tmp_path, qrels, run)
        want = trec_eval_values(trec_eval10, qp, rp, "all_trec")
        res = CliRunner().invoke(main, ["evaluate", str(qp), str(rp), "-m", "all_trec", "--per-query", "--format",
                                        "json", "--no-relevant", "zero"], catch_exceptions=False)
        got = json.loads(res.stdout)["per_query"]
        res9 = CliRunner().invoke(main, ["evaluate", str(qp), str(rp), "-m", "iprec_at_recall", "-m", "11pt_avg",
                                         "--per-query", "--format", "json", "--profile", "pytrec_eval"],
                                  catch_exceptions=False)
        got9 = json.loads(res9.stdout)["per_query"]
        differing |= {name for q, values in got9.items() for name, v in values.items()
                      if abs(v - want[name][q]) > 1e-12}
        for name, values in want.items():
            for q, w in values.items():
                label = "Rprec" if name == "Rprec_mult_1.00" else name
                g = got[q][label]
                if name.startswith("gm_"):
                    g = math.log(max(g, 1e-5))  # trec_eval's per-query value of a geometric mean
                assert math.isclose(g, w, rel_tol=0, abs_tol=1e-12), (name, q, g, w, qrels[q], run[q])
                worst = max(worst, abs(g - w))
                n += 1
    print(f"\ntrec_eval 10 all_trec: {n} values, max difference {worst:.3g}; "
          f"trec_eval 9's rule (pytrec_eval profile) differs on: {sorted(differing)}")
    assert n > 10000
    assert {"iprec_at_recall_0.10", "11pt_avg"} <= differing
