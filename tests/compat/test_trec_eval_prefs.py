"""``ragrade trec_eval -R prefs`` and ``-R qrels_prefs`` against the trec_eval 10 binary: the quicktest lines
that read preferences (``-m all_prefs -q -R prefs``, the same on a file with comments, ``-m all_prefs -q -R
qrels_prefs``) and more option combinations (``-c``, ``-M``, ``-n``, ``-Z``, single measures), on random
collections, byte for byte; every value at full precision against the ``%.17g`` build; and where trec_eval
stops (or crashes), ``ragrade trec_eval`` stops with exit status 2 and one ``error:`` line.

The preference collections have one to four judgment groups per query (users), one to three sub-groups per
group (partial orders, closed under transitivity by trec_eval), tied levels, fractional and negative levels,
documents judged non-relevant (level 0), duplicated judgment lines, documents judged but never retrieved,
retrieved but never judged, tied scores, queries on one side only. Within a group every sub-group's levels
follow one hidden order of its documents (trec_eval aborts on contradictions inside a group); groups contradict
each other freely. The qrels_prefs collections are the graded qrels of ``test_trec_eval_drop_in`` (negative
grades included).
"""

from __future__ import annotations

import io
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_trec_eval_drop_in import collection

from ragrade.cli import main
from ragrade.compat.trec_eval import parse_args
from ragrade.compat.trec_eval import run as trec_eval_run
from ragrade.compat.trec_eval_prefs import NAMES, evaluate
from ragrade.errors import TrecEvalError
from trec_eval_bin import binary_output, first_difference, ours, output_values, trec_eval_binary


def prefs_collection(seed: int, tmp: Path, complete: bool, comments: bool = False) -> tuple[Path, Path]:
    """Random ``qid jg jsg docno rel_level`` judgments and a run; ``complete``: every judged query is in the
    run (trec_eval stops otherwise unless -c)."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" if i % 4 else f"DOC-{i:03d}" for i in range(60)]
    qids = [str(i) for i in rng.choice(np.arange(1, 300), 25, replace=False)] + ["q9", "Q10", "z"]
    plines = ["# preferences written by the test\n"] if comments else []
    rlines = ["# run\n", "\n"]
    for q in qids:
        in_prefs = rng.random() < 0.93
        if in_prefs:
            for g in range(int(rng.integers(1, 5))):
                docs = rng.choice(pool, int(rng.integers(2, 16)), replace=False)
                hidden = rng.choice([0, 0, 1, 2, 3, 5, 8], len(docs))  # the group's order (ties, 0 = nonrel)
                below = rng.random(len(docs)) < 0.15  # level -1 instead of 0: neither relevant nor not
                for s in range(int(rng.choice([1, 1, 2, 3]))):
                    part = rng.random(len(docs)) < (1.0 if s == 0 and rng.random() < 0.5 else 0.6)
                    scale = float(rng.choice([1.0, 0.5, 2.5]))
                    coarse = rng.random() < 0.3
                    for d, h, low in zip(docs[part], hidden[part], below[part], strict=True):
                        level = (0.0 if h == 0 else 1 + h // 3) if coarse else h * scale
                        if h == 0 and low:
                            level = -1.0
                        text = f"{level:g}" if rng.random() < 0.7 else f"{level:.2f}"
                        plines.append(f"{q} u{g} s{s} {d} {text}\n")
                        if rng.random() < 0.02:
                            plines.append(f"{q} u{g} s{s} {d} {text}\n")  # a duplicated line
                if comments and rng.random() < 0.2:
                    plines.append(f"# group {g} done\n")
        if (complete and in_prefs) or rng.random() < 0.85:
            docs = rng.choice(pool, int(rng.integers(0, 40)), replace=False)
            steps = np.arange(1, 6) / 4 if rng.random() < 0.5 else np.arange(1, 200) / 16
            scores = rng.choice(steps, len(docs))
            rlines += [f"{q} Q0 {d} {i} {s:g} prun{seed}\n" for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
            if not len(docs):
                rlines.append(f"{q} Q0 never-judged 1 0 prun{seed}\n")
    order = rng.permutation(len(plines))
    plines = [plines[i] for i in order] if not comments else plines
    while plines and plines[-1].startswith("#"):
        plines.pop()  # (trec_eval reads past the end of its buffer after a comment on the last line)
    pp, rp = tmp / f"prefs{seed}.txt", tmp / f"prun{seed}.txt"
    pp.write_text("".join(plines))
    rp.write_text("".join(rlines))
    return pp, rp


def guessed(args: list[str], jp: Path, rp: Path) -> set[tuple[str, str]]:
    """The (measure, query) whose prefs_avgjg_Rnonrel(_ret) reads memory trec_eval 10 never wrote: its value
    there changes from run to run of the binary (docs/trec_eval.md)."""
    opts = parse_args([*args, str(jp), str(rp)])
    return evaluate(list(NAMES), opts, str(jp), str(rp)).guessed


def same_output(got: str, want: str, unsure: set[tuple[str, str]]) -> int:
    """Assert the two outputs are the same bytes, except the values of the ``unsure`` (measure, query) lines
    and of their measure's summary line; return how many lines were compared byte for byte."""
    if not unsure:
        assert got == want, first_difference(got, want)
        return want.count("\n")
    g_lines, w_lines = got.splitlines(), want.splitlines()
    assert len(g_lines) == len(w_lines)
    skip_all = {m for m, _ in unsure}
    compared = 0
    for g, w in zip(g_lines, w_lines, strict=True):
        name, q, _ = w.split("\t")
        if (name.strip(), q) in unsure or (q == "all" and name.strip() in skip_all):
            assert g.rsplit("\t", 1)[0] == w.rsplit("\t", 1)[0]
            continue
        assert g == w, (g, w)
        compared += 1
    return compared


PREFS_LINES = [
    ["-m", "all_prefs", "-q", "-R", "prefs"],  # trec_eval's quicktest (prefs.test, then prefs.comment.test)
    ["-m", "all_prefs", "-R", "prefs"],
    ["-m", "prefs", "-q", "-R", "prefs", "-M7"],
    ["-m", "all_prefs", "-q", "-R", "prefs", "-M1", "-J", "-l2"],  # -J and -l change nothing for preferences
    ["-R", "prefs", "-q", "-m", "prefs_pair", "-m", "prefs_avgjg_Rnonrel_ret", "-m", "num_q", "-m", "runid"],
]


@pytest.mark.parametrize("seed", range(4))
def test_prefs_quicktest_lines_print_what_trec_eval_10_prints(seed, tmp_path):
    binary = trec_eval_binary()
    pp, rp = prefs_collection(100 + seed, tmp_path, complete=True)
    pc, rc = prefs_collection(200 + seed, tmp_path, complete=False, comments=True)
    lines = 0
    for args in PREFS_LINES:
        for extra, (p, r) in (([], (pp, rp)), (["-c"], (pc, rc))):
            want = binary_output(binary, [*args, *extra], p, r)
            got = ours([*args, *extra], p, r)
            lines += same_output(got, want, guessed([*args, *extra], p, r))
    assert lines > 1500


def test_qrels_prefs_quicktest_line_prints_what_trec_eval_10_prints(tmp_path):
    binary = trec_eval_binary()
    for seed in range(3):
        qp, rp = collection(700 + seed, tmp_path, complete=True)
        qpc, rpc = collection(800 + seed, tmp_path, complete=False)
        for args, (q, r) in ((["-m", "all_prefs", "-q", "-R", "qrels_prefs"], (qp, rp)),
                             (["-m", "all_prefs", "-q", "-c", "-R", "qrels_prefs", "-M9"], (qpc, rpc)),
                             (["-m", "prefs", "-n", "-q", "-c", "-R", "qrels_prefs"], (qpc, rpc))):
            want = binary_output(binary, args, q, r)
            got = ours(args, q, r)
            same_output(got, want, guessed(args, q, r))


def test_every_prefs_value_at_full_precision(tmp_path):
    """Per query and in the summary, every value of -m all_prefs (-R prefs and -R qrels_prefs, with and without
    -M) equals the %.17g build of trec_eval 10 exactly (same operations in the same order), except where
    trec_eval reads memory it never wrote."""
    binary = trec_eval_binary(full=True)
    n = unsure_n = 0
    for seed in range(40):
        for kind in ("prefs", "qrels_prefs"):
            if kind == "prefs":
                p, r = prefs_collection(900 + seed, tmp_path, complete=False, comments=seed % 3 == 0)
            else:
                p, r = collection(1000 + seed, tmp_path, complete=False)
            for opt in (["-c"], ["-c", "-M12"], ["-c", "-M3"]):
                args = ["-q", "-m", "all_prefs", "-R", kind, *opt]
                want = output_values(binary_output(binary, args, p, r))
                got = output_values(ours(args, p, r, "%.17g"))
                assert got.keys() == want.keys()
                unsure = guessed(args, p, r)
                skip_all = {m for m, _ in unsure}
                for k, w in want.items():
                    if k in unsure or (k[1] == "all" and k[0] in skip_all):
                        unsure_n += 1
                        continue
                    assert got[k] == w or (math.isnan(w) and math.isnan(got[k])), (seed, kind, opt, k, got[k], w)
                    n += 1
    print(f"\nragrade trec_eval -R prefs/qrels_prefs vs trec_eval 10 (%.17g): {n} values equal; {unsure_n} left "
          "to memory trec_eval never wrote")
    assert n >= 100_000
    assert unsure_n <= n // 100


def test_prefs_zscores_as_trec_eval_10(tmp_path):
    binary = trec_eval_binary()
    pp, rp = prefs_collection(31, tmp_path, complete=False)
    rng = np.random.default_rng(31)
    qids = sorted({line.split()[0] for line in pp.read_text().splitlines() if not line.startswith("#")})
    z = tmp_path / "z.txt"
    z.write_text("".join(f"{q} {m} {rng.random():.3f} {0.0 if rng.random() < 0.1 else rng.random():.3f}\n"
                         for q in qids for m in (*NAMES, "num_q") if rng.random() < 0.9 or q == qids[-1]))
    for args in (["-q", "-c", "-R", "prefs", "-m", "all_prefs", "-Z", str(z)], ["-c", "-R", "prefs", "-m", "prefs",
                                                                                 "-Z", str(z)]):
        want = binary_output(binary, args, pp, rp)
        same_output(ours(args, pp, rp), want, guessed(args, pp, rp))


TEXTBOOK = {
    "q1 u1 s1 docno1 3.0\nq1 u1 s1 docno2 2.0\nq1 u1 s1 docno3 0.0\nq1 u1 s1 docno4 6.0\nq1 u1 s1 docno5 0.0\n"
    "q1 u1 s1 docno6 2.0\n": 13,
    "q1 u1 s1 docno1 3.0\nq1 u1 s1 docno2 2.0\nq1 u1 s1 docno3 1.0\nq1 u1 s2 docno1 2.0\nq1 u1 s2 docno2 1.0\n"
    "q1 u1 s2 docno4 3.0\n": 6,
    "q1 u1 s1 docno1 3.0\nq1 u1 s1 docno2 2.0\nq1 u1 s1 docno3 1.0\nq1 u1 s2 docno2 5.0\nq1 u1 s2 docno4 4.0\n": 5,
    "q1 u1 s1 docno1 3.0\nq1 u1 s1 docno2 2.0\nq1 u2 s1 docno1 0.0\nq1 u2 s1 docno3 6.0\nq1 u2 s1 docno4 2.0\n"
    "q1 u2 s2 docno1 0.0\nq1 u2 s2 docno2 8.0\n": 5,
}


def test_textbook_examples_without_the_binary(tmp_path):
    """The examples of trec_eval's description of the prefs format, by hand: 13 preferences from one ranked
    sub-group; two partial sub-groups (the description says 5, a duplicate counted once, but transitivity adds
    4 > 3, from 4 > 1 > 3: 6); 5 with one by transitivity; 5 from two groups. On a ranking docno1 ... docno6,
    the fulfilled ones are those whose preferred document has the smaller number."""
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q1 Q0 docno{i} {i} {10 - i} r\n" for i in range(1, 7)))
    # 1st: docno4 above 1, 2, 3 fails, docno6 above 3, 5 fails (5 of 13); 2nd: 4 > 1, 4 > 2, 4 > 3 fail;
    # 3rd: all hold; 4th: 1 > 2 and 3 > 4 hold, 3 > 1, 4 > 1, 2 > 1 fail
    fulfilled = [8, 3, 5, 2]
    for (text, possible), ful in zip(TEXTBOOK.items(), fulfilled, strict=True):
        jp = tmp_path / "p.txt"
        jp.write_text(text)
        out = ours(["-q", "-R", "prefs", "-m", "prefs_num_prefs_poss", "-m", "prefs_num_prefs_ful"], jp, run)
        lines = [line.split("\t") for line in out.splitlines()]
        assert lines[0] == ["prefs_num_prefs_poss  ", "q1", str(possible)]
        assert lines[1] == ["prefs_num_prefs_ful   ", "q1", str(ful)]


def test_textbook_examples_of_trec_eval_prefs_format(tmp_path):
    """The same examples, every preference measure, against the binary."""
    binary = trec_eval_binary()
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q1 Q0 docno{i} {i} {10 - i} r\n" for i in range(1, 7)))
    for text in TEXTBOOK:
        jp = tmp_path / "p.txt"
        jp.write_text(text)
        args = ["-q", "-R", "prefs", "-m", "all_prefs"]
        assert ours(args, jp, run) == binary_output(binary, args, jp, run)


def _cli(args: list[str]):
    return CliRunner().invoke(main, ["trec_eval", *args], catch_exceptions=False)


def test_where_trec_eval_stops_on_preferences_ragrade_stops_with_exit_2(tmp_path):
    binary = trec_eval_binary()
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 c 3 1 r\n")
    cases = {
        "blank line": ("q1 u s a 2\n\nq1 u s b 1\n", "line 2"),
        "four fields": ("q1 u s a 2\nq1 u b 1\n", "line 2"),
        "two comments": ("# one\n# two, as data\nq1 u s a 2\n", "line 2"),
        "two levels in a sub-group": ("q1 u s a 2\nq1 u s a 1\nq1 u s b 0\n", "'a'"),
        "relevant and not": ("q1 u s1 a 2\nq1 u s1 b 1\nq1 u s2 a 0\nq1 u s2 c 1\n", "'a'"),
        "contradiction": ("q1 u s1 a 2\nq1 u s1 b 1\nq1 u s2 b 2\nq1 u s2 a 1\n", "contradictory"),
        "missing query": ("q1 u s a 2\nq1 u s b 1\nq2 u s a 1\nq2 u s b 2\n", "'q2'"),
        "empty file": ("", "empty"),
    }
    for what, (text, said) in cases.items():
        jp = tmp_path / "bad.txt"
        jp.write_text(text)
        proc = subprocess.run([str(binary), "-R", "prefs", "-m", "all_prefs", str(jp), str(run)], capture_output=True)
        assert proc.returncode != 0, what  # trec_eval stops (or aborts) too
        res = _cli(["-R", "prefs", "-m", "all_prefs", str(jp), str(run)])
        assert res.exit_code == 2, (what, res.output)
        assert res.output.startswith("error: ") and res.output.count("\n") == 1, (what, res.output)
        assert said in res.output and str(jp) in res.output, (what, res.output)
        assert what in ("missing query", "empty file") or ", line" in res.output, (what, res.output)
    dup = tmp_path / "dup.txt"
    dup.write_text("q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 a 3 1 r\n")
    jp = tmp_path / "p.txt"
    jp.write_text("q1 u s a 2\nq1 u s b 1\n")
    res = _cli(["-R", "prefs", "-m", "all_prefs", str(jp), str(dup)])
    assert res.exit_code == 2 and "twice" in res.output
    assert _cli(["-R", "prefs", "-m", "all_prefs", "-M2", str(jp), str(dup)]).exit_code == 0  # not in the first 2
    for bad in (["-R", "prefs", "-m", "map"], ["-R", "prefs"], ["-m", "prefs_simp"], ["-R", "qrels_jg", "-m", "prefs"],
                ["-R", "prefs", "-M-1", "-m", "prefs"]):
        res = _cli([*bad, str(jp), str(run)])
        assert res.exit_code == 2 and res.output.startswith("error: "), (bad, res.output)
    res = _cli(["-R", "prefs", "-m", "prefs_simp.3", str(jp), str(run)])  # trec_eval ignores the parameters
    assert res.exit_code == 0 and res.output.startswith("prefs_simp            \tall\t"), res.output


_LINE = st.tuples(st.sampled_from(["1", "2", "10"]), st.sampled_from(["u", "v"]), st.sampled_from(["s", "t"]),
                  st.sampled_from(["a", "b", "c", "d", "e"]), st.sampled_from(["-1", "0", "0.5", "1", "2", "3"]))
_ROW = st.tuples(st.sampled_from(["1", "2", "10", "7"]), st.sampled_from(["a", "b", "c", "d", "e", "x"]),
                 st.sampled_from(["1", "2", "2", "3"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINE, min_size=1, max_size=25), rows=st.lists(_ROW, max_size=15),
       fmt=st.sampled_from(["prefs", "qrels_prefs"]),
       options=st.sampled_from([[], ["-c"], ["-c", "-M2"], ["-c", "-M0"], ["-M1"]]))
def test_small_collections_as_trec_eval_10(tmp_path, lines, rows, fmt, options):
    """Small hypothesis-made collections (ties, single documents, empty rankings, contradictions, documents
    at two levels, duplicates in the run): the same output as the binary, or both stop."""
    binary = trec_eval_binary()
    jp, rp = tmp_path / "j.txt", tmp_path / "r.txt"
    if fmt == "prefs":
        jp.write_text("".join(" ".join(t) + "\n" for t in lines))
    else:
        jp.write_text("".join(f"{q} {g} {d} {lv}\n" for q, g, _, d, lv in lines))
    rp.write_text("".join(f"{q} Q0 {d} 1 {s} run\n" for q, d, s in rows) or "99 Q0 z 1 1 run\n")
    args = ["-q", "-m", "all_prefs", "-R", fmt, *options]
    proc = subprocess.run([str(binary), *args, str(jp), str(rp)], capture_output=True, text=True)
    if proc.returncode != 0:
        with pytest.raises(TrecEvalError):
            trec_eval_run([*args, str(jp), str(rp)], io.StringIO())
        return
    same_output(ours(args, jp, rp), proc.stdout, guessed(args, jp, rp))
