"""``ragrade trec_eval -m MEASURE.PARAMS``: every parameter string trec_eval 10 takes means what it means there.

trec_eval reads its parameters with C's ``atof`` and ``atol`` (``0x1p-1``, ``inf``, ``nan``, ``abc`` are numbers
there), sorts cutoffs with glibc's merge sort and comparisons that are not always orders, ignores the parameters
of measures that take none, and keeps a gain map in a table sorted by the integer part of the gains'
differences. The C readings (``ragrade.compat._trec_eval_c``) are checked against glibc itself (called through
ctypes); the measures against the trec_eval 10 binary on random parameter strings: the same bytes, the same
refusals, and, for the measures computed query by query (``ragrade.compat.trec_eval_query``), the same values
to the last bit (``%.17g``).
"""

from __future__ import annotations

import ctypes
import io
import math
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.compat import _trec_eval_c as c
from ragrade.compat.trec_eval import parse_args, plan
from ragrade.compat.trec_eval import run as trec_eval_run
from ragrade.compat.trec_eval_query import Gain, gain_table
from ragrade.errors import TrecEvalError
from trec_eval_bin import first_difference, trec_eval_binary

LINUX = sys.platform.startswith("linux")
needs_glibc = pytest.mark.skipif(not LINUX, reason="compares with glibc, called through ctypes")


def _libc():
    libc = ctypes.CDLL(None)
    libc.atof.restype, libc.atof.argtypes = ctypes.c_double, [ctypes.c_char_p]
    libc.atol.restype, libc.atol.argtypes = ctypes.c_long, [ctypes.c_char_p]
    libm = ctypes.CDLL("libm.so.6")
    libm.lround.restype, libm.lround.argtypes = ctypes.c_long, [ctypes.c_double]
    return libc, libm


def _same_double(a: float, b: float) -> bool:
    """Equal bits, or both NaN with the same sign (the payload of ``nan(chars)`` aside)."""
    if a != a or b != b:
        return a != a and b != b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return struct.pack("<d", a) == struct.pack("<d", b)


_PIECES = ["0", "1", "7", "9", ".", "e", "E", "x", "X", "p", "P", "+", "-", " ", "\t", "a", "f", "inf", "nan",
           "(", ")", "_", "0x", "n", "i", "y", "t", "5e-324", "1e400", "1e-400"]


@needs_glibc
@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_atof_and_atol_read_as_glibc_reads(text):
    libc, _ = _libc()
    assert _same_double(c.atof(text), libc.atof(text.encode())), text
    assert c.atol(text) == libc.atol(text.encode()), text


@needs_glibc
def test_atof_edges_and_lround_as_glibc():
    libc, libm = _libc()
    for text in ["1e400", "-1e400", "0x1p-2000", "0x.8", "0x1.", "1.", "nan(abc)", "-nan", "infinity", "4.9e-324",
                 "2.4703282292062328e-324", "0x1.fffffffffffff8p1023", "0X1P3", "  -0x", "\u0661", "99999999999999999999",
                 "-99999999999999999999", " +12a", "1_000"]:
        assert _same_double(c.atof(text), libc.atof(text.encode())), text
        assert c.atol(text) == libc.atol(text.encode()), text
    rng = random.Random(5)
    values = [0.49999999999999994, -0.49999999999999994, 2.5, -2.5, 4.5e15 + 0.5, 2.0 ** 52 + 1, 9.3e18, -9.3e18,
              math.nan, math.inf, -math.inf] + [rng.uniform(-1e4, 1e4) for _ in range(20_000)] + \
             [rng.randint(-50, 50) + 0.5 for _ in range(2_000)]
    for v in values:
        assert c.lround(v) == libm.lround(v), v
        assert c.c_long(v) == (c.LONG_MIN if not math.isfinite(v) or abs(v) >= 2.0 ** 63 else math.trunc(v))


@needs_glibc
def test_merge_sort_is_glibc_qsort():
    """glibc 2.36's qsort on 24-byte rows with trec_eval's gain comparison, ``(int)(gain1 - gain2)``: the same
    order as ``merge_sort``, including where that comparison is not an order. (glibc 2.37 and later may use
    another algorithm; trec_eval 10 is built against the glibc of its machine: this test says which.)"""
    libc, _ = _libc()

    class Row(ctypes.Structure):
        _fields_ = [("grade", ctypes.c_long), ("gain", ctypes.c_double), ("count", ctypes.c_long)]

    compare_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Row), ctypes.POINTER(Row))
    compare = compare_type(lambda a, b: c.c_int(a.contents.gain - b.contents.gain))
    libc.qsort.restype = None
    libc.qsort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, compare_type]
    rng = random.Random(7)
    pool = [0.0, 0.5, 1.0, 1.5, 2.25, 3.0, -0.5, 9.0, 4.5, 0.95, 1e10, -3e9, math.nan, math.inf, -math.inf]
    for _ in range(2000):
        gains = [rng.choice(pool) for _ in range(rng.randint(1, 12))]
        rows = (Row * len(gains))(*[Row(i, g, 0) for i, g in enumerate(gains)])
        libc.qsort(rows, len(gains), ctypes.sizeof(Row), compare)
        want = [r.grade for r in rows]
        got = [r.grade for r in c.merge_sort([Gain(i, g, 0) for i, g in enumerate(gains)],
                                             lambda a, b: c.c_int(a.gain - b.gain))]
        assert got == want, gains


def test_parameter_readers_take_what_trec_eval_takes():
    assert c.long_cutoffs("P", "10,5, 7,2.9") == [2, 5, 7, 10]
    assert c.long_cutoffs("ndcg_cut", "4294967297,1") == [4294967297, 1]  # compared modulo 2^32: "equal"
    for bad in ("0,5", "5,5", "abc", "5,,10", "-1"):
        with pytest.raises(TrecEvalError):
            c.long_cutoffs("P", bad)
    assert c.double_cutoffs("iprec_at_recall", ".5,0x1p-2,1") == [0.25, 0.5, 1.0]
    assert [str(v) for v in c.double_cutoffs("Rprec_mult", "0.5,nan,0.5")] == ["0.5", "nan", "0.5"]
    with pytest.raises(TrecEvalError):
        c.double_cutoffs("Rprec_mult", "0.5,.5")
    assert c.param_pairs("ndcg", "1=3,p=0.5,=2, 1=x") == [("1", 3.0), ("p", 0.5), ("", 2.0), (" 1", 0.0)]
    for bad in ("1", "1=2=3", "1=5,", "a,1=2", "1=2,,3=4"):
        with pytest.raises(TrecEvalError):
            c.param_pairs("ndcg", bad)
    assert [c.is_valid_int(t) for t in ("1", "-1", "+01", "", "-", " 1", "1.5", "a")] == \
        [True, True, True, False, False, False, False, False]


def test_gain_table_in_trec_eval_order():
    """The map's rows first (as written), then each other grade at its own gain; sorted by the integer part of
    the gains' differences, so gains less than 1 apart keep the order they came in."""
    def gains(pairs, levels):
        return [(r.grade, r.gain, r.count) for r in gain_table(pairs, levels)]

    assert gains([("1", 3.0), ("2", 9.0), ("4", 4.5)], [5, 2, 1, 1, 1]) == \
        [(0, 0.0, 5), (1, 3.0, 2), (3, 3.0, 1), (4, 4.5, 1), (2, 9.0, 1)]
    assert gains([("0", 1.5)], [3, 2, 1]) == [(0, 1.5, 3), (1, 1.0, 2), (2, 2.0, 1)]  # 1.5 stays before 1
    assert gains([("-1", 2.0), ("7", 0.5), ("p", 4.0), ("1", 2.0), ("1", 5.0)], [1, 1]) == \
        [(7, 0.5, 0), (0, 0.0, 1), (-1, 2.0, 0), (1, 2.0, 1), (1, 5.0, 0)]


# -- against the binary -----------------------------------------------------------------------------------------


def _collection(seed: int, tmp: Path) -> tuple[Path, Path]:
    """Random qrels (grades -3..11, many queries with grade 0 only) and a run (ties, unjudged documents,
    queries on one side only)."""
    rng = np.random.default_rng(seed)
    pool = [f"D{i}" for i in range(40)] + ["a", "b", "Z"]
    qlines, rlines = [], []
    for q in [str(i) for i in rng.choice(np.arange(1, 60), 12, replace=False)] + ["q"]:
        judged = rng.choice(pool, int(rng.integers(1, 20)), replace=False)
        grades = rng.choice([-3, -1, 0, 0, 0, 1, 1, 2, 3, 11], len(judged))
        if rng.random() < 0.2:
            grades = np.minimum(grades, 0)
        grades[0] = max(int(grades[0]), 0)  # trec_eval stops on a first query with negative grades only
        if rng.random() < 0.9:
            qlines += [f"{q} 0 {d} {int(g)}\n" for d, g in zip(judged, grades, strict=True)]
        if rng.random() < 0.85:
            docs = rng.choice(pool, int(rng.integers(1, 30)), replace=False)
            scores = rng.choice(np.arange(1, 8) / 4, len(docs))
            rlines += [f"{q} Q0 {d} {i} {s:g} r{seed}\n" for i, (d, s) in enumerate(zip(docs, scores, strict=True))]
    qp, rp = tmp / f"q{seed}.txt", tmp / f"r{seed}.txt"
    qp.write_text("".join(qlines))
    rp.write_text("".join(rlines))
    return qp, rp


_NUMBERS = ["5", "10", "0", "-1", "1.5", ".25", "0.5", "2.", "+3", "1e1", "1e-1", "0x10", "0x1p-1", "inf", "-inf",
            "nan", "-nan", "infinity", "abc", "", " 5", "5 ", "1_0", "07", "1e400", "1e-400", "3", "2", "0.8", "1",
            "0.95", "-0.5", "4.5", "9", "11", "0.1", "0.3", "1.2", "-2", "100", "2147483648", "99999999999999999999",
            "4294967297"]
_NAMES = ["0", "1", "2", "3", "5", "11", "-1", "-2", "-3", "01", "+1", " 1", "a", "p", "P", "1.5", "", "-0", "4",
          "12"]
_KINDS = {"cutoffs": ["P", "recall", "ndcg_cut", "map_cut", "relative_P", "success", "unj"],
          "shares": ["iprec_at_recall", "Rprec_mult"],
          "numbers": ["utility", "11pt_avg", "set_F", "relstring"],
          "pairs": ["G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "rbp", "rbp_resid"],
          "none": ["map", "num_ret", "gm_map", "bpref", "num_q", "runid", "binG", "yaap"]}


def _parameters(rng: random.Random, kind: str) -> str:
    if kind == "pairs":
        text = ",".join(f"{rng.choice(_NAMES)}={rng.choice(_NUMBERS)}" for _ in range(rng.randint(1, 4)))
        return text + ("," if rng.random() < 0.05 else "")
    return ",".join(rng.choice(_NUMBERS) for _ in range(rng.randint(1, 5 if kind == "numbers" else 4)))


def _ours(args: list[str], qp: Path, rp: Path, value_format: str) -> tuple[str, str]:
    out = io.StringIO()
    try:
        trec_eval_run([*args, str(qp), str(rp)], out, value_format)
    except TrecEvalError as err:
        return "refused", str(err)
    return "ok", out.getvalue()


def _all_query_by_query(args: list[str], qrels: Path) -> bool:
    """Whether every measure of ``args`` is computed query by query (compat/trec_eval_query.py): those values
    equal trec_eval's to the bit; the kernels' to 1e-12."""
    from ragrade.compat.trec_eval_values import kernel_gain_maps
    from ragrade.io import read_qrels

    planned = kernel_gain_maps(plan(parse_args(args)), read_qrels(str(qrels), format="trec"))
    scored = [p for p in planned if p.measure.kind not in ("runid", "count_q", "relstring")]
    return bool(scored) and all(p.direct for p in scored)


def _close(got: str, want: str, exact: bool) -> bool:
    """The same lines, each value equal (``exact``: to the bit, as printed by %.17g; else to 1e-12)."""
    a, b = got.splitlines(), want.splitlines()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        xs, ys = x.split("\t"), y.split("\t")
        if exact or xs[:2] != ys[:2]:
            return False
        try:
            fx, fy = float(xs[2]), float(ys[2])
        except ValueError:
            return False
        if not abs(fx - fy) <= 1e-12 * max(1.0, abs(fy)):
            return False
    return True


@pytest.mark.parametrize("seed", range(3))
def test_random_parameters_as_trec_eval_10(seed, tmp_path):
    """Random parameter strings (numbers in every form atof reads, names that are and are not integers,
    malformed pairs) at several levels and options: where trec_eval prints, ragrade prints the same bytes at
    %6.4f, and at %.17g the same values (to the bit for the measures computed query by query, the others to
    1e-12); where trec_eval refuses, so does ragrade (one TrecEvalError)."""
    plain, full = trec_eval_binary(), trec_eval_binary(full=True)
    rng = random.Random(100 + seed)
    files = [_collection(200 + 10 * seed + i, tmp_path) for i in range(2)]
    printed = refused = exact = 0
    for _ in range(130):
        kind = rng.choice(list(_KINDS))
        spec = f"{rng.choice(_KINDS[kind])}.{_parameters(rng, kind)}"
        args = [rng.choice(["-l1", "-l1", "-l0", "-l2", "-l-1"]), *rng.choice([[], ["-J"], ["-M5"], ["-N", "40"]]),
                "-q", "-c", "-m", spec]
        qp, rp = rng.choice(files)
        proc = subprocess.run([str(plain), *args, str(qp), str(rp)], capture_output=True, text=True)
        status, text = _ours(args, qp, rp, "%6.4f")
        if proc.returncode != 0:
            assert status == "refused", (args, proc.stderr, text)
            refused += 1
            continue
        assert status == "ok" and text == proc.stdout, (args, text if status != "ok" else
                                                         first_difference(text, proc.stdout))
        printed += 1
        want = subprocess.run([str(full), *args, str(qp), str(rp)], capture_output=True, text=True).stdout
        got = _ours(args, qp, rp, "%.17g")[1]
        direct = _all_query_by_query(args, qp)
        assert _close(got, want, exact=direct), (args, first_difference(got, want))
        exact += direct
    assert printed >= 80 and refused >= 15 and exact >= 20, (printed, refused, exact)


#: Gain maps trec_eval sorts out of order or reads apart from its table, and ones it sorts in order.
GAIN_MAPS = ["ndcg.0=1.5", "ndcg.1=0.5", "ndcg.-1=1", "ndcg.-2=3", "G.0=1.5", "dcg.-1=1", "dcg.0=1.5", "ndcg.2=7,3=1",
             "Rndcg.0=0.5,2=4", "ndcg.1=1.5", "ndcg.1=3,2=9,4=4.5", "ndcg_rel.1=0.5", "ideal_dcg.5=1.5",
             "Rndcg.2=3,3=0.5,5=2.25", "ndcg.0=2.25,1=0.5,2=2.25", "G.0=0,5=2,1=2", "ndcg_rel.-1=2,0=1",
             "Rndcg.0=2", "Rndcg.1=0", "G.-2=1,1=0.25", "ideal_dcg.1=2,1=5", "ndcg.1=-2,3=0.5", "rbp.-1=1,p=0.8",
             "rbp.1=2,2=5", "rbp.2=-1", "ndcg.p=0.5", "ndcg_rel.7=10"]


def test_gain_maps_as_trec_eval_10(tmp_path):
    """Every gain map prints the binary's bytes, at every level, and its values equal the %.17g build's to the
    last bit: trec_eval's table order (gains less than 1 apart left as written), the gain of grade -1 (retrieved
    documents without a judgment) and -2 (those judged with a negative grade), a grade given twice, Rndcg with a
    gain for grade 0 at -l0 and below, and no positive gain at all (Rndcg's 0 / 0)."""
    plain, full = trec_eval_binary(), trec_eval_binary(full=True)
    lines = bits = 0
    for seed in range(3):
        qp, rp = _collection(130 + seed, tmp_path)
        for m in GAIN_MAPS:
            for level in ("-l1", "-l0", "-l2", "-l-1"):
                args = [level, "-q", "-c", "-m", m]
                proc = subprocess.run([str(plain), *args, str(qp), str(rp)], capture_output=True, text=True)
                assert proc.returncode == 0, (args, proc.stderr)
                status, text = _ours(args, qp, rp, "%6.4f")
                assert status == "ok" and text == proc.stdout, (args, first_difference(text, proc.stdout))
                want = subprocess.run([str(full), *args, str(qp), str(rp)], capture_output=True, text=True).stdout
                got = _ours(args, qp, rp, "%.17g")[1]
                exact = _all_query_by_query(args, qp)  # (maps the kernels compute: to 1e-12)
                assert _close(got, want, exact), (args, first_difference(got, want))
                lines += want.count("\n")
                bits += exact
    assert lines > 3000 and bits > 150, (lines, bits)


def test_judgment_group_parameters_as_trec_eval_10(tmp_path):
    """-R qrels_jg with parameters the kernels do not express (Rprec_mult_avgjg at NaN, 0 or negative multiples,
    a value given twice around a NaN; P_avgjg cutoffs 2^32 apart; map_avgjg with ignored parameters), at
    levels 1, 0 and -1, with and without -J: the binary's bytes."""
    binary = trec_eval_binary()
    qp, rp = _collection(170, tmp_path)
    jg = tmp_path / "jg.txt"
    jg.write_text("".join(f"{q} {1 + (i % 2)} {d} {g}\n" for i, (q, _, d, g) in
                          enumerate(line.split() for line in qp.read_text().splitlines())))
    n = 0
    for m in ("Rprec_mult_avgjg.nan,0.5", "Rprec_mult_avgjg.0,1e400,-1", "Rprec_mult_avgjg.0x1p-1,nan,0x1p-1",
              "P_avgjg.4294967297,1", "map_avgjg.5"):
        for level in ("-l1", "-l0", "-l-1"):
            for judged in ([], ["-J"]):
                args = ["-R", "qrels_jg", level, *judged, "-q", "-c", "-m", m]
                proc = subprocess.run([str(binary), *args, str(jg), str(rp)], capture_output=True, text=True)
                status, text = _ours(args, jg, rp, "%6.4f")
                assert proc.returncode == 0 and status == "ok", (args, proc.stderr, text)
                assert text == proc.stdout, (args, first_difference(text, proc.stdout))
                n += text.count("\n")
    assert n > 500


def _on_a_terminal(binary: Path, args: list[str]) -> tuple[str, int]:
    """What the binary prints to a terminal (a pseudo-terminal: line-buffered, so the lines printed before an
    abort are kept) and its exit status."""
    import os
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(binary), *args], stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n"), proc.wait()


@pytest.mark.skipif(not LINUX, reason="reads the binary's output through a pseudo-terminal")
def test_dcg_ideal_dcg_ndcg_share_one_gain_map(tmp_path):
    """trec_eval 10's dcg, ideal_dcg and ndcg share one parameter block: all three compute with the last gain map
    given to any of them, each named with the map read when it was set up; then trec_eval frees the block twice
    and aborts (its output is lost when piped). ragrade prints the same lines, and the rest of the summary."""
    binary = trec_eval_binary()
    qp, rp = _collection(150, tmp_path)
    for ms in (["ndcg.1=3", "dcg", "ideal_dcg"], ["dcg.1=3", "ndcg"], ["ideal_dcg.2=5", "ndcg.0=1.5", "dcg"],
               ["dcg.-1=2", "ideal_dcg"]):
        args = ["-q", "-c", *[a for m in ms for a in ("-m", m)]]
        shown, status = _on_a_terminal(binary, [*args, str(qp), str(rp)])
        assert status != 0  # trec_eval aborts
        got = _ours(args, qp, rp, "%6.4f")[1]
        assert shown.count("\n") > 20 and got.startswith(shown), (ms, first_difference(got, shown))
        names = {line.split("\t")[0].strip() for line in got.splitlines()}
        assert len(names) == len(ms) and got.count("\tall\t") == len(ms), got


def test_grades_as_trec_eval_reads_them(tmp_path):
    """A grade is read as C's atol reads it (its integer part: 1.5 is 1, -0.5 is 0): the binary's bytes; a grade
    of 2^31 or more stops with one error line (trec_eval sets aside a count for every grade up to the highest,
    and stops or runs out of memory there)."""
    binary = trec_eval_binary()
    qp, rp = _collection(160, tmp_path)
    rng = random.Random(160)
    lines = []
    for line in qp.read_text().splitlines():
        q, it, d, g = line.split()
        if rng.random() < 0.4:
            g = f"{int(g) + rng.choice([0.5, 0.9, 0.25, -0.5, 0.0])}"
        lines.append(f"{q} {it} {d} {g}\n")
    fractional = tmp_path / "fractional.txt"
    fractional.write_text("".join(lines))
    assert any("." in line.split()[3] for line in lines)
    for args in (["-q", "-c", "-m", "all_trec"], ["-q", "-c", "-l2", "-m", "all_trec", "-m", "ndcg.1=0.5,3=2"]):
        proc = subprocess.run([str(binary), *args, str(fractional), str(rp)], capture_output=True, text=True)
        status, text = _ours(args, fractional, rp, "%6.4f")
        assert proc.returncode == 0 and status == "ok" and text == proc.stdout, (args, first_difference(text, proc.stdout))
    huge = tmp_path / "huge.txt"
    huge.write_text("1 0 a 2147483648\n1 0 b 1\n")
    status, text = _ours(["-m", "map"], huge, rp, "%6.4f")
    assert status == "refused" and "2147483648" in text and str(huge) in text


@pytest.mark.parametrize("fmt", ["qrels", "qrels_jg", "prefs", "qrels_prefs"])
def test_judgment_files_read_as_trec_eval_reads_them(fmt, tmp_path):
    """trec_eval skips a comment line (``#`` in the first column) and reads the line after it as data, whatever
    it is: a blank line, a second comment line in a row and an indented comment are malformed lines to it (it
    stops), a comment on the last line makes it crash. ragrade trec_eval prints the binary's bytes where it
    prints and stops (one error line naming the file and line) where it stops or crashes; a run file's comments
    and blank lines are fine to both."""
    binary = trec_eval_binary()
    a, b = {"qrels": ("1 0 a 1", "1 0 b 0"), "qrels_jg": ("1 g a 1", "1 g b 0"), "prefs": ("1 u s a 2", "1 u s b 1"),
            "qrels_prefs": ("1 0 a 2", "1 0 b 1")}[fmt]
    run = tmp_path / "run.txt"
    run.write_text("#c\n\n1 Q0 a 1 1 r\n  # indented\n#c\n#d\n1 Q0 b 2 0 r\n# last")
    measure = {"qrels": "all_trec", "qrels_jg": "qrels_jg"}.get(fmt, "all_prefs")
    printed = stopped = 0
    for text in (f"{a}\n\n{b}\n", f"{a}\n  \n{b}\n", f"\n{a}\n{b}\n", f"{a}\n{b}\n\n", f"   # c\n{a}\n{b}\n",
                 f"{a}\n#c\n{b}\n", f"{a}\n#c\n#d\n{b}\n", f"{a}\n{b}\n#c", f"{a}\n{b}\n#c\n", f"#c\n{a}\n#c\n{b}\n",
                 f"{a}\r\n{b}\r\n", f"{a}\n{b}"):
        judged = tmp_path / "judged.txt"
        judged.write_text(text)
        args = ["-R", fmt, "-q", "-m", measure]
        proc = subprocess.run([str(binary), *args, str(judged), str(run)], capture_output=True, text=True)
        status, out = _ours(args, judged, run, "%6.4f")
        if proc.returncode == 0:
            assert status == "ok" and out == proc.stdout, (fmt, text, out)
            printed += 1
        else:
            assert status == "refused" and str(judged) in out and "line" in out, (fmt, text, out)
            stopped += 1
    assert printed >= 4 and stopped >= 6, (printed, stopped)


def test_collection_sizes_beyond_2_to_the_53(tmp_path):
    """-N of 2^53 and more, and near LONG_MIN: utility's fourth term in C's long arithmetic (exact, wrapping at 64
    bits), equal to the %.17g build's to the bit."""
    full = trec_eval_binary(full=True)
    qp, rp = _collection(180, tmp_path)
    for size in ("-9223372036854775808", "9007199254740993", "-9007199254740993", "9223372036854775807"):
        args = ["-q", "-c", "-N", size, "-m", "utility.1,-1,0.5,1"]
        want = subprocess.run([str(full), *args, str(qp), str(rp)], capture_output=True, text=True).stdout
        status, got = _ours(args, qp, rp, "%.17g")
        assert status == "ok" and got == want, (size, first_difference(got, want))
