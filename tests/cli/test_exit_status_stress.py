"""The command line exits with the right status every time (issue 11, item 17).

It used to abort now and then with status 134 ("terminate called without an active exception") after
printing correct output: an Arrow worker thread released Python-owned memory after the interpreter had
started to exit (see ``ragrade.io.trec.arrow_owned`` and ``ragrade.io.tables.arrow_read``). This runs the
CLI a few hundred times, four processes at a time, on valid files (trec_eval's shapes: a space-separated
qrels file and a run with tabs and padded scores, which takes the careful reader), on a qrels file that
fails to parse in the middle, and on a bad run, with and without the C helper, and requires every status
to be right. ``RAGRADE_STRESS_RUNS`` sets the number of runs (default 200) and ``RAGRADE_STRESS_SECONDS``
a time budget (default 120 s): on a busy machine the runs not started by then are left out, but at least
60 always run (about a minute on a quiet 2-core machine for all 200).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.stress

RUNS = int(os.environ.get("RAGRADE_STRESS_RUNS", "200"))
SECONDS = float(os.environ.get("RAGRADE_STRESS_SECONDS", "120"))
MIN_RUNS = min(60, RUNS)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("stress")
    rng = random.Random(7)
    qrels = [f"{q} 0 DOC-{q}-{i} {rng.choice([0, 0, 1, 2])}" for q in range(301, 351) for i in range(75)]
    run = [f"{q}\tQ0\tDOC-{q}-{rng.randrange(120)}-{i}\t{i + 1}\t  {rng.random() * 10:.6f}\tSTANDARD"
           for q in range(301, 351) for i in range(30)]
    (d / "qrels.test").write_text("\n".join(qrels) + "\n")
    (d / "results.test").write_text("\n".join(run) + "\n")
    bad_qrels = [*qrels[:1800], "305 0 FOO", *qrels[1800:]]
    (d / "bad_qrels.test").write_text("\n".join(bad_qrels) + "\n")
    bad_run = [*run[:700], "305\tQ0\tD\t1\thigh\tSTANDARD", *run[700:]]
    (d / "bad_results.test").write_text("\n".join(bad_run) + "\n")
    return d


def _one(args: tuple[str, str, int, bool, int, float]) -> tuple[int, int, str] | None:
    qrels, run, expected, no_accel, index, deadline = args
    if index >= MIN_RUNS and time.monotonic() > deadline:
        return None  # over the time budget
    env = dict(os.environ)
    env.pop("RAGRADE_NO_ACCEL", None)
    if no_accel:
        env["RAGRADE_NO_ACCEL"] = "1"
    res = subprocess.run([sys.executable, "-m", "ragrade", "evaluate", qrels, run, "-m", "ndcg@10", "-m", "map"],
                         capture_output=True, text=True, env=env, timeout=300)
    return expected, res.returncode, res.stderr[-2000:]


def test_every_exit_status_is_right(files):
    cases = [(files / "qrels.test", files / "results.test", 0), (files / "bad_qrels.test", files / "results.test", 2),
             (files / "qrels.test", files / "bad_results.test", 2)]
    deadline = time.monotonic() + SECONDS
    jobs = [(str(q), str(r), code, i % 4 == 3, i, deadline) for i in range(RUNS)
            for q, r, code in [cases[i % len(cases)]]]
    with ThreadPoolExecutor(4) as pool:
        results = [r for r in pool.map(_one, jobs) if r is not None]
    wrong = [(e, got, err) for e, got, err in results if got != e]
    assert not wrong, f"{len(wrong)} of {len(results)} runs exited wrongly; first: {wrong[0]}"
    assert len(results) >= MIN_RUNS
    print(f"{len(results)} CLI runs, every exit status right")
