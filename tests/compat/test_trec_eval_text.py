"""The vectorised printing of ``ragrade trec_eval -q`` (``ragrade.compat._trec_eval_text``) gives the bytes C's
``%6.4f`` and ``%ld`` give (Python's ``%`` operator rounds as glibc's printf does), and lines in trec_eval's
order."""

from __future__ import annotations

import ctypes
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.compat import _trec_eval_text as text_of


def c_fixed4(v: float) -> str:
    """C's ``%6.4f``: glibc's own snprintf where it can be called, else Python's ``%`` (which rounds the binary
    value as printf does) with a NaN printed by its sign bit."""
    if _snprintf is not None:
        buf = ctypes.create_string_buffer(400)
        _snprintf(buf, 400, b"%6.4f", ctypes.c_double(v))
        return buf.value.decode()
    if v != v:
        return "  -nan" if math.copysign(1.0, v) < 0 else "   nan"
    return format(v, "6.4f")


def _libc_snprintf():
    try:
        f = ctypes.CDLL(None).snprintf
    except (OSError, AttributeError):
        return None
    if not sys.platform.startswith("linux"):
        return None
    return f


_snprintf = _libc_snprintf()


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 0.03125, 0.00005, 0.00015, 0.99995, 0.999949999999, 9.99995, 1 / 3, 2 / 3,
         1e-300, -1e-300, 5e-324, 9999999.99994, 9999999.99995, 1e7, 1e8, 123456789.123456, 1e300, -1e300,
         float("inf"), float("-inf"), float("nan"), -float("nan"), -0.00004, -0.00005, -12.34565, 0.12345, 0.12355]


def test_fixed4_prints_the_edges_as_printf():
    got = text_of.fixed4(np.array(EDGES), c_fixed4, "\n").to_pylist()
    assert got == [c_fixed4(v) + "\n" for v in EDGES]


def test_fixed4_on_the_values_measures_take():
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.random(20_000), rng.integers(0, 200, 20_000) / rng.integers(1, 200, 20_000),
                             rng.integers(0, 100_000, 5_000) / 32, (rng.random(5_000) - 0.7) * 2000,
                             rng.integers(-5, 5, 1_000) / 20_000])
    for vals in (values, values[values >= 0], values[(values >= 0) & (values < 10)]):  # the layouts of fixed4
        assert text_of.fixed4(vals, c_fixed4).to_pylist() == [c_fixed4(v) for v in vals.tolist()]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=40))
def test_fixed4_equals_printf_for_any_double(values):
    arr = np.array(values, dtype=np.float64)
    assert text_of.fixed4(arr, c_fixed4, "\n").to_pylist() == [c_fixed4(v) + "\n" for v in values]


@pytest.fixture(params=["c", "python"])
def helper(request, monkeypatch):
    """The C helper's lines (when built) and the pure-Python ones: both must give the same bytes."""
    from ragrade.compat import _native

    if request.param == "python":
        monkeypatch.setattr(_native, "speedups", None)
    elif _native.speedups is None:
        pytest.skip("the C helper is not built (or RAGRADE_NO_ACCEL is set)")
    return request.param


def test_integers_and_lines_in_trec_eval_order(helper):
    assert text_of.integers(np.array([0, 7, -3, 1234567890123])).to_pylist() == ["0", "7", "-3", "1234567890123"]
    qids = ["q1", "q10", "q2", "q3", "é"]
    floats = np.array([0.5, 0.25, -float("nan"), -0.0, float("nan")])
    big = np.array([1e300, -2.5e-5, 12345678.5, float("-inf"), 0.99995])
    cols = [text_of.integers(np.arange(5)), floats, text_of.strings(["'1-'", "''", "'0'", "'>'", "'9'"]), big]
    heads = [f"{n:<22}" for n in ("num_ret", "map", "relstring", "Zmap")]
    text = [[str(i) for i in range(5)], [c_fixed4(v) for v in floats.tolist()], ["'1-'", "''", "'0'", "'>'", "'9'"],
            [c_fixed4(v) for v in big.tolist()]]
    want = "".join(f"{h}\t{q}\t{text[j][i]}\n" for i, q in enumerate(qids) for j, h in enumerate(heads))
    old = text_of._ROWS_PER_BLOCK
    try:
        for block in (old, 5, 1):  # one block, and blocks of one query each
            text_of._ROWS_PER_BLOCK = block
            assert b"".join(text_of.lines(heads, cols, qids)).decode() == want
    finally:
        text_of._ROWS_PER_BLOCK = old
    assert list(text_of.lines(heads, cols, [])) == []
    assert b"".join(text_of.lines(heads[:1], cols[1:2], qids)).decode().splitlines()[2] == f"{heads[0]}\tq2\t  -nan"


def test_lines_of_many_values_equal_printf(helper):
    rng = np.random.default_rng(11)
    n = 3000
    cols = [rng.random(n), rng.integers(0, 100_000, n) / 32, (rng.random(n) - 0.5) * 1e8, rng.integers(-9, 9, n) / 2e4]
    qids = [f"q{i}" for i in range(n)]
    got = b"".join(text_of.lines(["a", "b", "c", "d"], cols, qids)).decode()
    want = "".join(f"{h}\t{qids[i]}\t{c_fixed4(float(c[i]))}\n" for i in range(n) for h, c in zip("abcd", cols, strict=True))
    assert got == want
