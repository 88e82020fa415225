"""Measures computed together on one trec_eval command line (issue 34, item 3): trec_eval 10's rbp starts from two
variables it never sets, which hold what the measure computed before it left on the stack
(ragrade/compat/trec_eval_leftovers.py, docs/trec_eval.md). A fuzz of random combinations of measures and
parameters on random collections, against the binary: the output byte for byte, and every value at full precision.
About 10 seconds (RAGRADE_TE_COMBOS sets the number of command lines; CI runs the default)."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from ragrade.errors import TrecEvalError
from trec_eval_bin import binary_output, first_difference, ours, output_values, trec_eval_binary

COMBOS = int(os.environ.get("RAGRADE_TE_COMBOS", "60"))
#: Measures that leave something rbp reads, those that clear it, and others.
POOL = ["ndcg_cut.5", "ndcg_cut.3,10", "ndcg", "ndcg.1=2,2=5", "dcg", "ideal_dcg", "iprec_at_recall", "11pt_avg",
        "gm_map", "yaap", "set_F", "set_F.0.5", "map", "P.5", "recall.10", "Rprec", "bpref", "success", "relstring",
        "gm_bpref", "recip_rank", "num_rel", "set_P", "utility", "binG", "map_cut.5", "infAP", "rbp_resid", "unj",
        "G", "G.1=0.5,3=4", "ndcg_rel", "ndcg_rel.2=3", "Rndcg", "Rndcg.0=-1,2=3", "Rndcg.1=-0.5"]
RBP = ["rbp", "rbp.p=0.8", "rbp.p=0.5", "rbp.1=0.5,2=2", "rbp.p=0.9,3=0.25"]


def collection(tmp: Path, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    q_lines, r_lines = [], []
    for q in range(rng.randrange(2, 7)):
        docs = [f"d{i}" for i in rng.sample(range(60), 30)]
        top = rng.choice([1, 2, 3, 4])
        for d in docs[:rng.randrange(0, 14)]:
            q_lines.append(f"q{q} 0 {d} {rng.randrange(-1, top + 1)}\n")
        for i, d in enumerate(docs[rng.randrange(0, 6):rng.randrange(8, 30)]):
            r_lines.append(f"q{q} Q0 {d} {i + 1} {rng.choice([3, 2.5, 2, 1, 0.5]) - i / 100} run\n")
    qp, rp = tmp / f"q{seed}.txt", tmp / f"r{seed}.txt"
    qp.write_text("".join(q_lines) or "q0 0 d0 1\n")
    rp.write_text("".join(r_lines) or "q0 Q0 d1 1 1.0 run\n")
    return qp, rp


def test_fuzz_measure_combinations_against_the_binary(tmp_path):
    plain, full = trec_eval_binary(), trec_eval_binary(full=True)
    rng = random.Random(34)
    checked = 0
    for i in range(COMBOS):
        qp, rp = collection(tmp_path, i)
        measures = [*rng.sample(POOL, rng.randrange(1, 5)), rng.choice(RBP)]
        rng.shuffle(measures)
        args = [a for m in measures for a in ("-m", m)] + rng.choice([[], ["-q"], ["-c", "-q"], ["-J"], ["-l2"]])
        proc = subprocess.run([str(plain), *args, str(qp), str(rp)], capture_output=True, text=True)
        if proc.returncode < 0:  # dcg, ideal_dcg, ndcg with a gain map: trec_eval frees their block twice and dies
            continue  # after printing (its output lost when piped; docs/trec_eval.md): ragrade prints it all
        if proc.returncode > 0:  # trec_eval stops (e.g. a first query judged negative only): so does ragrade
            with pytest.raises(TrecEvalError):
                ours(args, qp, rp)
            continue
        want = proc.stdout
        got = ours(args, qp, rp)
        assert got == want, (args, *first_difference(got, want))
        want_full = output_values(binary_output(full, args, qp, rp))
        got_full = output_values(ours(args, qp, rp, "%.17g"))
        assert want_full.keys() == got_full.keys(), args
        for key, v in want_full.items():
            assert got_full[key] == pytest.approx(v, rel=1e-12, abs=1e-13, nan_ok=True), (args, key)
        checked += 1
    assert checked >= COMBOS * 0.8


@pytest.mark.parametrize("rndcg", ["Rndcg", "Rndcg.0=-1,2=3", "Rndcg.1=-0.5", "Rndcg.3=-2,1=0.25", "Rndcg.2=nan"])
def test_rbp_after_rndcg_against_the_binary(tmp_path, rndcg):
    """Rndcg leaves its last ideal gain in the two places rbp reads (nothing in between clears them here): with its
    default gains that is 0 or the gain of grade 0, with a gain map a negative gain rescales rbp's gains."""
    plain = trec_eval_binary()
    rng = random.Random(hash(rndcg) % 1000)
    compared = 0
    for i in range(25):
        qp, rp = collection(tmp_path, 1000 + i)
        args = ["-m", rndcg, "-m", rng.choice(RBP), *rng.choice([[], ["-q"], ["-c", "-q"], ["-J"], ["-l2"], ["-l0"]])]
        proc = subprocess.run([str(plain), *args, str(qp), str(rp)], capture_output=True, text=True)
        if proc.returncode != 0:  # (trec_eval stops on a first query judged negative only: tested above)
            continue
        got = ours(args, qp, rp)
        assert got == proc.stdout, (args, *first_difference(got, proc.stdout))
        compared += 1
    assert compared >= 15
