"""How trec_eval 10's C reads its ``-m`` parameters and converts its numbers, for ``ragrade trec_eval``.

trec_eval reads every number of a measure's parameters with C's ``atof`` or ``atol`` (glibc's ``strtod`` and
``strtol``: leading blanks, a sign, then as many characters as make a number; ``0x1p-1``, ``inf`` and ``nan``
are numbers, ``abc`` is 0), sorts cutoffs with glibc's merge sort (``qsort`` in glibc 2.36, which is stable)
and comparisons that are not always orders, and turns doubles into integers with casts and ``lround``, whose
results on x86-64 for NaN, infinities and values out of range are ``LONG_MIN``. This module is those readings,
in our own code, so that every parameter string trec_eval takes means here what it means there:

- :func:`atof`, :func:`atol`: the numbers;
- :func:`long_cutoffs` (``P.5,10``), :func:`double_cutoffs` (``iprec_at_recall.0.2,0.5``),
  :func:`double_params` (``utility.1,-1,0,0``), :func:`param_pairs` (``ndcg.1=3,2=9``), with trec_eval's
  errors as :class:`~ragrade.errors.TrecEvalError`;
- :func:`c_long`, :func:`c_int`, :func:`lround`: the conversions;
- :func:`merge_sort`: glibc's ``qsort`` for a given comparison, which keeps equal items in their order.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ragrade.errors import TrecEvalError

T = TypeVar("T")

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
INT_MIN = -(1 << 31)

_SPACE = " \t\n\v\f\r"  # C's isspace in the "C" locale
_DIGITS = "0123456789"
_HEX = "0123456789abcdefABCDEF"


def atof(text: str) -> float:
    """C's ``atof`` (glibc's ``strtod``): the longest prefix that reads as a number after blanks, else 0.0.

    Decimal (``.25``, ``2.``, ``1e-1``; an exponent only counts when digits follow it), hexadecimal
    (``0x10``, ``0x1p-1``), ``inf``/``infinity`` and ``nan``/``nan(chars)``, any case, with a sign. A value too
    large is an infinity, one too small 0 or a subnormal, correctly rounded as glibc rounds."""
    s = text
    i = 0
    n = len(s)
    while i < n and s[i] in _SPACE:
        i += 1
    negative = False
    if i < n and s[i] in "+-":
        negative = s[i] == "-"
        i += 1
    rest = s[i:].lower()
    if rest.startswith("inf"):
        return -math.inf if negative else math.inf
    if rest.startswith("nan"):
        return -math.nan if negative else math.nan
    if rest.startswith("0x") and len(rest) > 2 and (rest[2] in _HEX or (rest[2] == "." and len(rest) > 3
                                                                        and rest[3] in _HEX)):
        j = _run(rest, 2, _HEX)
        if j < len(rest) and rest[j] == ".":
            j = _run(rest, j + 1, _HEX)
        mantissa = rest[:_exponent_end(rest, j, "p")]
        try:
            value = float.fromhex(mantissa if "p" in mantissa else mantissa + "p0")
        except OverflowError:
            value = math.inf
        return -value if negative else value
    j = _run(rest, 0, _DIGITS)
    digits = j
    if j < len(rest) and rest[j] == ".":
        after = _run(rest, j + 1, _DIGITS)
        digits += after - (j + 1)
        j = after
    if not digits:
        return 0.0
    value = float(rest[:_exponent_end(rest, j, "e")])  # Python rounds a decimal correctly, as glibc; 1e400 is inf
    return -value if negative else value


def _run(s: str, i: int, chars: str) -> int:
    """The index after the run of ``chars`` starting at ``i``."""
    while i < len(s) and s[i] in chars:
        i += 1
    return i


def _exponent_end(s: str, j: int, marker: str) -> int:
    """The index after an exponent (``marker``, a sign, digits) at ``j``, or ``j`` when no digit follows."""
    if j < len(s) and s[j] == marker:
        k = j + 1 + (1 if j + 1 < len(s) and s[j + 1] in "+-" else 0)
        if k < len(s) and s[k] in _DIGITS:
            return _run(s, k, _DIGITS)
    return j


def atol(text: str) -> int:
    """C's ``atol`` (glibc's ``strtol``, base 10): blanks, a sign and the digits that follow (0 if none),
    held to ``LONG_MIN`` .. ``LONG_MAX``."""
    s = text
    i = 0
    while i < len(s) and s[i] in _SPACE:
        i += 1
    sign = 1
    if i < len(s) and s[i] in "+-":
        sign = -1 if s[i] == "-" else 1
        i += 1
    j = i
    while j < len(s) and s[j] in _DIGITS:
        j += 1
    if j == i:
        return 0
    return min(max(sign * int(s[i:j]), LONG_MIN), LONG_MAX)


def is_valid_int(text: str) -> bool:
    """trec_eval's test of a gain map's level: an optional sign and one or more digits, nothing else."""
    body = text[1:] if text[:1] in ("+", "-") else text
    return bool(body) and all(c in _DIGITS for c in body)


def c_long(x: float) -> int:
    """C's ``(long) x`` on x86-64: toward zero; ``LONG_MIN`` for NaN, infinities and values out of range."""
    if x != x or math.isinf(x):
        return LONG_MIN
    t = math.trunc(x)
    return t if LONG_MIN <= t <= LONG_MAX else LONG_MIN


def c_int(x: float) -> int:
    """C's ``(int) x`` on x86-64: toward zero; ``INT_MIN`` for NaN, infinities and values out of range."""
    if x != x or math.isinf(x):
        return INT_MIN
    t = math.trunc(x)
    return t if INT_MIN <= t < -INT_MIN else INT_MIN


def lround(x: float) -> int:
    """glibc's ``lround``: halves away from zero; ``LONG_MIN`` for NaN, infinities and values out of range."""
    if x != x or math.isinf(x):
        return LONG_MIN
    whole = math.floor(abs(x))
    r = whole + (1 if abs(x) - whole >= 0.5 else 0)  # the difference is exact: no rounding of x + 0.5
    r = -r if x < 0 else r
    return r if LONG_MIN <= r <= LONG_MAX else LONG_MIN


def printf(spec: str, value: float) -> str:
    """glibc's ``printf`` of one double with a ``%[width][.precision](f|g)`` spec: Python's formatting (the same
    digits), but a NaN with its sign bit set prints ``-nan`` (as 0 / 0 does on x86-64)."""
    if value == value:
        return spec % value
    width = re.match(r"%(\d*)", spec)
    text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return text.rjust(int(width.group(1)) if width and width.group(1) else 0)


def merge_sort(items: Sequence[T], compare: Callable[[T, T], int]) -> list[T]:
    """glibc 2.36's ``qsort``: halves sorted in turn (the first ``n // 2`` items, then the rest), merged by
    taking the left item unless ``compare(left, right) > 0``. Equal items keep their order, and a comparison
    that is not an order gives the order glibc gives."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = merge_sort(items[:half], compare), merge_sort(items[half:], compare)
    out: list[T] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if compare(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _compare_longs(a: int, b: int) -> int:
    """trec_eval's comparison of two cutoffs: their difference (wrapping at 64 bits) as a C ``int``, which keeps
    its low 32 bits: cutoffs 2^32 apart compare equal."""
    d = (a - b) & 0xFFFFFFFF
    return d - (1 << 32) if d >= 1 << 31 else d


def _compare_doubles(a: float, b: float) -> int:
    """trec_eval's comparison of two doubles: -1, 1, or 0 (equal, or either is NaN)."""
    return -1 if a < b else (1 if a > b else 0)


def _split(text: str) -> list[str]:
    return text.split(",")


def long_cutoffs(measure: str, text: str) -> list[int]:
    """The cutoffs of ``P.5,10``-style parameters in trec_eval's order: each read by :func:`atol`, sorted with its
    comparison; a first cutoff of 0 or below and two equal neighbours are trec_eval's errors."""
    cuts = merge_sort([atol(p) for p in _split(text)], _compare_longs)
    if cuts[0] <= 0:
        raise TrecEvalError(f"{measure}.{text}: a cutoff must be a positive integer (trec_eval: negative cutoff "
                            "detected)")
    if any(a == b for a, b in itertools.pairwise(cuts)):
        raise TrecEvalError(f"{measure}.{text}: a cutoff is given twice (trec_eval: duplicate cutoffs)")
    return cuts


def double_cutoffs(measure: str, text: str) -> list[float]:
    """The values of ``iprec_at_recall.0.2,0.5``-style parameters in trec_eval's order: read by :func:`atof`,
    sorted with its comparison (NaN compares equal to everything); two equal neighbours are its error."""
    cuts = merge_sort([atof(p) for p in _split(text)], _compare_doubles)
    if any(a == b for a, b in itertools.pairwise(cuts)):
        raise TrecEvalError(f"{measure}.{text}: a value is given twice (trec_eval: duplicate cutoffs)")
    return cuts


def double_params(text: str) -> list[float]:
    """The values of ``utility.1,-1,0,0``-style parameters, read by :func:`atof`, in the order given."""
    return [atof(p) for p in _split(text)]


def param_pairs(measure: str, text: str) -> list[tuple[str, float]]:
    """``name=value`` pairs (``ndcg.1=3,2=9``, ``rbp.p=0.8``) in the order given: each name as written, each value
    read by :func:`atof`. trec_eval refuses a text that does not end in a value after ``=``, or that has two
    commas, or two ``=``, with nothing between (``1=2=3``, ``1=5,``, ``1``)."""
    last = ","
    malformed = False
    for c in text:
        if c == ",":
            if last == ",":
                malformed = True
                break
            last = ","
        elif c == "=":
            if last == "=":
                last = ","
                malformed = True
                break
            last = "="
    if malformed or last != "=":
        raise TrecEvalError(f"{measure}.{text}: malformed name=value parameters (trec_eval: malformed pair "
                            "parameters)")
    pairs: list[tuple[str, float]] = []
    name = ""
    start = 0
    for i, c in enumerate(text):
        if c == "=":
            name = text[start:i]
            start = i + 1
        elif c == ",":
            pairs.append((name, atof(text[start:i])))
            start = i + 1
    pairs.append((name, atof(text[start:])))
    return pairs


__all__ = ["INT_MIN", "LONG_MAX", "LONG_MIN", "atof", "atol", "c_int", "c_long", "double_cutoffs", "double_params",
           "is_valid_int", "long_cutoffs", "lround", "merge_sort", "param_pairs", "printf"]


# -- recall levels and their cutoffs (the drop-ins' reading of the interpolated precision's NaN) -------------

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def recall_levels(m: Any) -> tuple[float, ...]:
    """The recall levels of an ``iprec_11pt`` metric (its ``levels``, else 0.0, 0.1, ..., 1.0)."""
    text = m.get("levels")
    return ELEVEN_POINTS if text is None else tuple(float(x) for x in str(text).split(";"))


def cut_by_share(share: float, r: Any) -> Any:
    """trec_eval 9's number of documents for a share of R: ``(long) (share * R + 0.9)`` (per query)."""
    import numpy as np

    return np.floor(share * r + 0.9).astype(np.int64)


def cut_by_round(share: float, r: Any) -> Any:
    """trec_eval 10's number of documents for a share of R: ``lround(share * R)``, half away from zero."""
    import numpy as np

    v = share * r.astype(np.float64)
    whole = np.floor(v)
    return (whole + (v - whole >= 0.5)).astype(np.int64)
