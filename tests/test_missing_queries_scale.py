"""Issue 34, item 7: a qrels of a million queries against a run answering one is evaluated in time linear in
the input. The note about the missing queries looked each of them up with ``np.isin`` on object arrays,
which compares every pair: 20,000 queries took 19 s, 100,000 against 500 answered never finished.

Not a timed test (speed is measured by bench/bench_missing.py): the evaluation runs in a child process under
a generous time limit, so that a quadratic step fails this test instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import ragrade
from ragrade._arrays import member

SRC = str(Path(ragrade.__file__).resolve().parents[1])


def test_member_is_isin():
    rng = np.random.default_rng(3)
    values = np.array([f"q{i}" for i in rng.integers(0, 50, 200)], dtype=object)
    among = [f"q{i}" for i in range(0, 50, 3)]
    np.testing.assert_array_equal(member(values, among), np.isin(values, np.asarray(among, dtype=object)))
    assert member(np.array([], dtype=object), among).shape == (0,)


def test_a_million_ground_truth_queries_against_one_answered(tmp_path):
    code = """
    import warnings
    import numpy as np
    import ragrade
    warnings.simplefilter("ignore")
    n = 1_000_000
    qids = np.array([f"q{i}" for i in range(n)], dtype=object)
    qrels = ragrade.Qrels.from_columns(qids, qids + "_d", np.ones(n))
    run = ragrade.Run.from_columns(qids[:1], qids[:1] + "_d", np.ones(1))
    res = ragrade.evaluate(qrels, run, ["ndcg@10", "P@5"])
    print(res.notes()[0])
    print(res.means["ndcg@10"] * n, res.counts["ndcg@10"])
    ranx = ragrade.evaluate(qrels, run, ["ndcg@10"], profile="ir_measures")
    print(ranx.notes()[0])
    """
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=240, env={**os.environ, "PYTHONPATH": SRC}, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("999999 ground-truth queries missing from the run, scored 0")
    value, count = lines[1].split()
    assert abs(float(value) - 1.0) < 1e-6 and count == "1000000"
    assert lines[2].startswith("999999 ground-truth queries missing from the run, scored 0")
