"""``ragrade trec_eval`` at the option values ragrade used to refuse, against the trec_eval 10 binary.

``-M0`` (every ranking read as empty), ``-M`` cutting a ranking before a document it lists twice (trec_eval looks
for duplicates among the documents it keeps only), ``-l0`` (every judgment of grade >= 0 relevant, in the
rankings and in R) with and without ``-J``, ``-c``, ``-q``, ``-n``, ``-N`` and the judgment-group format, and
levels below 0 (unjudged documents relevant in the rankings, not in R): the output is byte for byte the
binary's, and every value equals the ``%.17g`` build's to 1e-12. Where trec_eval
stops or crashes (``-M-1``; a first query judged with negative grades only; a query whose grades are all
below -1), the command prints one ``error:`` line and exits with status 2.

trec_eval 10's graded ``rbp`` reads two uninitialised variables (docs/conventions.md, P10): its lines depend
on what earlier measures left on the stack and are left out of the byte comparison here (the drop-in tests
cover rbp where the binary is steady).
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragrade.cli import main
from trec_eval_bin import binary_output, first_difference, ours, output_values, trec_eval_binary


def collection(seed: int, tmp: Path, complete: bool) -> tuple[Path, Path, Path]:
    """Random qrels and two runs: grades -3..11 (every query has one >= 0, many have grade 0 only or no grade
    above 0), unjudged retrieved documents, tied scores, queries on one side only (``complete``: every judged
    query is in the run); the second run also lists a document twice in some rankings, the second copy
    scoring lowest (below the tenth document)."""
    rng = np.random.default_rng(seed)
    pool = [f"D{i}" for i in range(40)] + ["a", "b", "Z"]
    qids = [str(i) for i in rng.choice(np.arange(1, 60), 14, replace=False)] + ["q", "Q7"]
    qlines, rlines, twice = [], [], []
    for q in qids:
        judged = rng.choice(pool, int(rng.integers(1, 20)), replace=False)
        grades = rng.choice([-3, -1, 0, 0, 0, 1, 1, 2, 3, 11], len(judged))
        if rng.random() < 0.2:
            grades = np.minimum(grades, 0)  # grade 0 and negative grades only
        grades[0] = max(int(grades[0]), 0)  # trec_eval stops on a query with negative grades only
        in_qrels = rng.random() < 0.9
        if in_qrels:
            qlines += [f"{q} 0 {d} {int(g)}\n" for d, g in zip(judged, grades, strict=True)]
        if (complete and in_qrels) or rng.random() < 0.85:
            docs = rng.choice(pool, int(rng.integers(1, 30)), replace=False)
            scores = rng.choice(np.arange(1, 8) / 4, len(docs))
            rlines += [f"{q} Q0 {d} {i} {s:g} run{seed}\n" for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
            if len(docs) > 12:
                twice.append(f"{q} Q0 {docs[0]} 99 0 run{seed}\n")
    rng.shuffle(rlines)
    qp, rp, rpd = tmp / f"qrels{seed}.txt", tmp / f"run{seed}.txt", tmp / f"twice{seed}.txt"
    qp.write_text("".join(qlines))
    rp.write_text("".join(rlines))
    rpd.write_text("".join(rlines + twice))
    assert twice
    return qp, rp, rpd


def steady(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if not line.startswith("rbp"))


LINES = [
    ["-M0"],
    ["-M0", "-q", "-c", "-m", "all_trec"],
    ["-M0", "-q", "-c", "-J", "-m", "all_trec", "-m", "yaap", "-m", "relstring.5"],
    ["-M1", "-q", "-m", "all_trec"],
    ["-M3", "-q", "-c", "-m", "all_trec", "-l2"],
    ["-M10", "-q", "-m", "official"],  # rankings whose second copy of a document lies below the cut
    ["-l0"],
    ["-l0", "-q", "-m", "all_trec"],
    ["-l0", "-q", "-c", "-m", "all_trec", "-m", "yaap", "-m", "ideal_dcg", "-m", "dcg"],
    ["-l0", "-q", "-c", "-J", "-m", "all_trec", "-m", "yaap"],
    ["-l0", "-M0", "-q", "-c", "-n", "-m", "all_trec"],
    ["-l0", "-M3", "-q", "-c", "-N", "50", "-m", "utility.1,-2,3,-0.5", "-m", "set", "-m", "num_nonrel_judged_ret"],
    ["-l0", "-q", "-c", "-m", "iprec_at_recall..25,.5", "-m", "P.1,7", "-m", "ndcg_cut.3", "-m", "Rndcg",
     "-m", "Rprec_mult.0.5,1.5", "-m", "11pt_avg..25,.5", "-m", "bpref", "-m", "infAP", "-m", "gm_bpref"],
    ["-l-2", "-J", "-q", "-c", "-m", "all_trec"],  # below 0 with -J: as -l0 (nothing unjudged is left)
]


@pytest.mark.parametrize("seed", range(3))
def test_levels_and_cuts_print_what_trec_eval_10_prints(seed, tmp_path):
    binary = trec_eval_binary()
    qp, rp, rpd = collection(10 + seed, tmp_path, complete=True)
    qpc, rpc, rpcd = collection(20 + seed, tmp_path, complete=False)
    lines = 0
    for args in LINES:
        q, r = (qpc, rpc) if "-c" in args else (qp, rp)
        if any(a in ("-M0", "-M1", "-M3", "-M10") for a in args):
            r = rpcd if "-c" in args else rpd
        want = steady(binary_output(binary, args, q, r))
        got = steady(ours(args, q, r))
        assert got == want, (args, first_difference(got, want))
        lines += want.count("\n")
    assert lines > 2000


def test_judgment_groups_at_level_0_and_cut_0(tmp_path):
    binary = trec_eval_binary()
    qp, rp, _ = collection(40, tmp_path, complete=False)
    rng = np.random.default_rng(40)
    rows = [line.split() for line in qp.read_text().splitlines()]
    jg = tmp_path / "jg.txt"
    jg.write_text("".join(f"{q} {g} {d} {grade}\n" for q, _, d, grade in rows for g in ("1", "2")
                          if g == "1" or rng.random() < 0.5))
    for args in (["-R", "qrels_jg", "-m", "qrels_jg", "-q", "-c", "-l0"],
                 ["-R", "qrels_jg", "-m", "qrels_jg", "-q", "-c", "-M0"],
                 ["-R", "qrels_jg", "-m", "P_avgjg.1,3", "-m", "map_avgjg", "-q", "-c", "-l0", "-M4"]):
        want = binary_output(binary, args, jg, rp)
        assert ours(args, jg, rp) == want, args


def test_every_value_at_full_precision(tmp_path):
    binary = trec_eval_binary(full=True)
    extra = ["-m", "yaap", "-m", "ideal_dcg", "-m", "dcg", "-m", "11pt_avg..25,.5,.75"]
    options = [["-l0"], ["-l0", "-J"], ["-l0", "-M5"], ["-M0"], ["-M2", "-l3"], ["-l0", "-M0", "-J"]]
    n, worst = 0, 0.0
    for seed in range(4):
        qp, rp, _ = collection(60 + seed, tmp_path, complete=False)
        for opt in options:
            args = ["-q", "-c", "-m", "all_trec", *extra, *opt]
            want = output_values(binary_output(binary, args, qp, rp), skip=("rbp",))
            got = output_values(ours(args, qp, rp, "%.17g"), skip=("rbp",))
            assert got.keys() == want.keys()
            for key, w in want.items():
                g = got[key]
                if math.isnan(w):
                    assert math.isnan(g), (opt, key)
                    continue
                assert math.isclose(g, w, rel_tol=1e-13, abs_tol=1e-12), (opt, key, g, w)
                worst = max(worst, abs(g - w))
                n += 1
    print(f"\nragrade trec_eval -l0 / -M0 vs trec_eval 10 (%.17g): {n} values, max difference {worst:.3g}")
    assert n >= 20_000


def _cli(args: list[str]):
    return CliRunner().invoke(main, ["trec_eval", *args], catch_exceptions=False)


def test_where_trec_eval_stops_or_crashes_ragrade_stops_with_exit_2(tmp_path):
    binary = trec_eval_binary()
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 5 r\n2 Q0 a 1 5 r\n")
    cases = {"first.txt": "1 0 a -1\n2 0 a 1\n",  # the first query scored: negative grades only
             "deep.txt": "1 0 a 1\n2 0 a -3\n2 0 b -2\n"}  # grades all below -1
    for name, text in cases.items():
        qrels = tmp_path / name
        qrels.write_text(text)
        assert subprocess.run([str(binary), str(qrels), str(run)], capture_output=True).returncode != 0
        res = _cli([str(qrels), str(run)])
        assert res.exit_code == 2 and res.output.startswith("error: ") and res.output.count("\n") == 1, res.output
    later = tmp_path / "later.txt"  # a later query with grade -1 only: trec_eval scores it
    later.write_text("1 0 a 1\n2 0 a -1\n")
    res = _cli(["-q", str(later), str(run)])
    assert res.exit_code == 0 and res.output == binary_output(binary, ["-q"], later, run)
    for bad in (["-M-1"], ["-M", "-5"]):
        assert subprocess.run([str(binary), *bad, str(later), str(run)], capture_output=True).returncode != 0
        res = _cli([*bad, str(later), str(run)])
        assert res.exit_code == 2 and res.output.startswith("error: ") and res.output.count("\n") == 1, res.output


def test_levels_below_0_as_trec_eval_10(tmp_path):
    """Below 0 trec_eval counts retrieved documents without a judgment (and, below -1, those with a negative
    grade) as relevant in the rankings but not in R: byte for byte, and every value at full precision."""
    binary = trec_eval_binary()
    full = trec_eval_binary(full=True)
    lines = [["-q", "-m", "all_trec", "-m", "yaap"],
             ["-q", "-c", "-m", "all_trec", "-m", "yaap", "-m", "iprec_at_recall..25,.5", "-m", "11pt_avg..5,.25,1"],
             ["-q", "-c", "-M3", "-m", "official", "-m", "Rprec_mult.0.5,1.5", "-m", "map_cut.2,10"],
             ["-q", "-c", "-M0", "-m", "all_trec"],
             ["-c", "-n", "-m", "P.1,7", "-m", "recall.2,5", "-m", "relative_P.3", "-m", "success.1,3", "-m", "binG"]]
    n, worst = 0, 0.0
    for seed in range(3):
        qp, rp, _ = collection(80 + seed, tmp_path, complete=True)
        qpc, rpc, _ = collection(90 + seed, tmp_path, complete=False)
        for level in ("-l-1", "-l-2", "-l-5"):
            for args in lines:
                q, r = (qpc, rpc) if "-c" in args else (qp, rp)
                want = binary_output(binary, [level, *args], q, r)
                got = ours([level, *args], q, r)
                assert steady(got) == steady(want), (level, args, first_difference(got, want))
                want_v = output_values(binary_output(full, [level, *args], q, r), skip=("rbp",))
                got_v = output_values(ours([level, *args], q, r, "%.17g"), skip=("rbp",))
                assert got_v.keys() == want_v.keys()
                for key, w in want_v.items():
                    g = got_v[key]
                    if math.isnan(w) or math.isinf(w):
                        assert (math.isnan(g) and math.isnan(w)) or g == w, (level, args, key, g, w)
                        continue
                    assert math.isclose(g, w, rel_tol=1e-13, abs_tol=1e-12), (level, args, key, g, w)
                    worst = max(worst, abs(g - w))
                    n += 1
    print(f"\nragrade trec_eval below level 0 vs trec_eval 10 (%.17g): {n} values, max difference {worst:.3g}")
    assert n >= 20_000


def test_judgment_groups_below_level_0_as_trec_eval_10(tmp_path):
    binary = trec_eval_binary()
    qp, rp, _ = collection(75, tmp_path, complete=False)
    rng = np.random.default_rng(75)
    jg = tmp_path / "jg.txt"
    jg.write_text("".join(f"{q} {g} {d} {grade}\n" for q, _, d, grade in (line.split() for line in
                                                                          qp.read_text().splitlines())
                          for g in ("1", "2") if g == "1" or rng.random() < 0.5))
    for level in ("-l-1", "-l-2"):
        for args in (["-R", "qrels_jg", "-m", "qrels_jg", "-q", "-c"],
                     ["-R", "qrels_jg", "-m", "P_avgjg.1,3", "-m", "Rprec_mult_avgjg.0.5,1.5", "-q", "-c", "-M4"]):
            want = binary_output(binary, [level, *args], jg, rp)
            assert ours([level, *args], jg, rp) == want, (level, args)


def test_other_values_trec_eval_accepts(tmp_path):
    """Found by fuzzing the command line: utility's fourth coefficient without -N (trec_eval's collection size
    is 0 then), and ideal_dcg of a query judged with grade -1 only (trec_eval reads the grade counts of the
    query scored before it)."""
    binary = trec_eval_binary()
    qp, rp, _ = collection(95, tmp_path, complete=False)
    qp.write_text(qp.read_text() + "zz 0 D1 -1\nzz 0 D2 -1\nzzz 0 D3 -1\n")  # last in byte order
    for args in (["-q", "-c", "-m", "utility.2,-1,1,0.5"], ["-q", "-c", "-l0", "-m", "utility.1,-1,0,1", "-M3"],
                 ["-q", "-c", "-m", "ideal_dcg", "-m", "ndcg_cut.3", "-m", "bpref"],
                 ["-q", "-c", "-J", "-l2", "-m", "ideal_dcg.1=3,2=9", "-m", "infAP"]):
        want = binary_output(binary, args, qp, rp)
        assert "zzz" in want
        assert ours(args, qp, rp) == want, args


def test_a_negative_collection_size_as_trec_eval_10(tmp_path):
    """trec_eval takes a negative -N: utility's fourth coefficient counts from it, and the judgment-group
    measures ignore it. Byte for byte, and utility's values at full precision (equal, not close)."""
    binary = trec_eval_binary()
    full = trec_eval_binary(full=True)
    lines = [["-N-7", "-q", "-c", "-m", "utility.1,-1,0.5,0.25", "-m", "utility", "-m", "utility.0.3,-1.7,0.5,0.1"],
             ["-N", "-1000", "-q", "-c", "-m", "all_trec", "-m", "utility.2,-3,1,-0.75"],
             ["-N-3", "-l2", "-M5", "-q", "-c", "-m", "utility.1,-1,0.5,0.25"]]
    n = 0
    for seed in range(3):
        qp, rp, _ = collection(110 + seed, tmp_path, complete=False)
        for args in lines:
            want = binary_output(binary, args, qp, rp)
            got = ours(args, qp, rp)
            assert got == want, (args, first_difference(got, want))
            want_v = output_values(binary_output(full, args, qp, rp))
            got_v = output_values(ours(args, qp, rp, "%.17g"))
            for key, w in want_v.items():
                if key[0].startswith("utility"):
                    assert got_v[key] == w, (args, key, got_v[key], w)
                    n += 1
        jg = tmp_path / f"jg{seed}.txt"  # each judgment in two groups, grades >= 0
        jg.write_text("".join(f"{q} {g} {d} {max(int(grade), 0)}\n" for q, _, d, grade in
                              (line.split() for line in qp.read_text().splitlines()) for g in ("1", "2")))
        args = ["-N-3", "-R", "qrels_jg", "-m", "qrels_jg", "-q", "-c"]
        assert ours(args, jg, rp) == binary_output(binary, args, jg, rp)
    assert n > 100
