"""trec_eval's per-query lines, written block by block instead of one Python string per line.

``ragrade trec_eval -q`` prints one line per query and measure (about ten million lines for a run of ten million
rows): ``name<TAB>query<TAB>value``, the name padded to 22 characters, the value through C's ``%6.4f`` (or a
count through ``%ld``). :func:`lines` takes each measure's values as one column (floats, or texts) and writes the
lines of a block of queries at once: by one call of the C helper (``ragrade.compat._speedups.trec_lines``), or, without it, by
NumPy (:func:`fixed4`) and Arrow joins, which give the same bytes.

``%6.4f`` is reproduced exactly: a value's digits come from ``round(|v| * 10^4)`` when that product is far (more
than 10^-3) from a rounding boundary, which the float error of the product (below 2^-53 of it, about 10^-9 for
values under 10^7) cannot cross; every other value (near a boundary, exact halves such as 0.03125 among them,
NaN, infinities, values of 10^7 or more) is printed by Python's own formatting, which rounds the exact binary
value as glibc's printf does (a NaN as ``  -nan`` when its sign bit is set, as in trec_eval's 0 / 0, else ``   nan``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

_ROWS_PER_BLOCK = 1 << 20  # lines joined and written at once (bounds the memory of -q on large runs)


def _string_array(lengths: np.ndarray, data: np.ndarray) -> Any:
    """An Arrow string array from each string's byte length and the concatenated UTF-8 bytes."""
    import pyarrow as pa

    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.LargeStringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(data))


def _python_strings(texts: Sequence[str]) -> Any:
    """``texts`` as a :class:`ragrade.data.Utf8Column` (one chunk, offsets from 0), made from their bytes: no
    pyarrow (``pyarrow.array`` would import pandas too, a tenth of a second the drop-in's start-up does without)."""
    from ragrade.data import Utf8Column

    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return Utf8Column([(offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8))])


def fixed4(values: np.ndarray, fallback: Any, end: str = "") -> Any:
    """``'%6.4f' % v + end`` for every value, as an Arrow large_string array; ``fallback(v)`` prints the values
    whose digits are not decided safely by the vectorised rounding (see the module's docstring). ``end`` is
    empty or one ASCII character."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    n = len(v)
    a = np.abs(v)
    with np.errstate(invalid="ignore", over="ignore"):
        x = a * 1e4
        f = np.floor(x)
        r = x - f
        ok = np.isfinite(v) & (a < 1e7) & (np.abs(r - 0.5) > 1e-3)
    k = np.where(ok, f + (r > 0.5), 0.0).astype(np.int64)
    ip, frac = np.divmod(k, 10_000)
    neg = np.signbit(v)
    tail = len(end)
    small = not neg.any() and (n == 0 or int(ip.max()) < 10)
    most = 6 + tail if small else 14 + tail  # sign, 8 integer digits, the point, 4 decimals
    m = np.empty((n, most), dtype=np.uint8)
    if tail:
        m[:, most - 1] = ord(end)
    frac16 = frac.astype(np.int16)
    for d in range(4):  # the decimals, right to left
        frac16, digit = np.divmod(frac16, 10)
        m[:, most - 1 - tail - d] = digit + 48
    m[:, most - 5 - tail] = 46  # '.'
    if small:
        m[:, 0] = ip.astype(np.uint8) + 48
        data = m.ravel()
        width = np.full(n, most, dtype=np.int64)
    else:
        ndig = np.ones(n, dtype=np.int64)
        for p in range(1, 8):
            ndig += ip >= 10 ** p
        rest = ip.copy()
        for d in range(8):  # the integer digits, right to left; '-' left of the last one
            rest, digit = np.divmod(rest, 10)
            m[:, most - 6 - tail - d] = np.where(d < ndig, digit + 48, 45).astype(np.uint8)
        m[:, 0] = 45
        width = neg.astype(np.int64) + ndig + 5 + tail
        keep = np.arange(most)[None, :] >= (most - width)[:, None]
        data = m[keep]
    out = _string_array(width, data)
    bad = np.flatnonzero(~ok)
    if len(bad):
        out = _replace(out, bad, _python_strings([fallback(float(v[i])) + end for i in bad]).arrow())
    return out


def _replace(arr: Any, rows: np.ndarray, texts: Any) -> Any:
    """``arr`` with the strings at ``rows`` replaced by ``texts``."""
    import pyarrow as pa

    idx = np.arange(len(arr), dtype=np.int64)
    idx[rows] = len(arr) + np.arange(len(rows), dtype=np.int64)
    both = pa.concat_arrays([arr, texts.cast(pa.large_string())])
    return both.take(pa.array(idx))


def integers(values: np.ndarray, end: str = "") -> Any:
    """``'%ld' % v + end`` of integer counts (int64), as a :class:`ragrade.data.Utf8Column`."""
    return _python_strings([f"{v}{end}" for v in np.asarray(values, dtype=np.int64).tolist()])


def strings(texts: Sequence[str], end: str = "") -> Any:
    """``text + end`` of every text, as a :class:`ragrade.data.Utf8Column`."""
    return _python_strings([t + end for t in texts] if end else texts)


def printf_fixed4(v: float) -> str:
    """C's ``%6.4f`` of one value (Python's ``%`` rounds the binary value as printf does; a NaN as glibc prints
    it: ``  -nan`` with its sign bit set, as 0 / 0 makes it, else ``   nan``)."""
    if v != v:
        return "  -nan" if np.signbit(v) else "   nan"
    return format(v, "6.4f")


def lines(heads: list[str], columns: list[Any], qids: Sequence[str]) -> Iterator[bytes]:
    """The bytes of ``head<TAB>query<TAB>value<LF>`` for every query (in order) and, within a query, every
    column (in order). ``columns[j]`` holds column ``j``'s values, one per query: a float64 array (printed as
    ``%6.4f``) or a :class:`ragrade.data.Utf8Column` of texts (printed as they are). One C call per block of
    queries (``ragrade.compat._speedups.trec_lines``; no pyarrow), else Arrow joins the lines (the same bytes)."""
    from ragrade.compat import _native

    nq, nc = len(qids), len(columns)
    if nq == 0 or nc == 0:
        return
    q_all = _python_strings(qids)
    per_block = max(1, _ROWS_PER_BLOCK // nc)
    accel = _native.speedups
    if accel is not None:
        floats = [c for c in columns if isinstance(c, np.ndarray)]
        values = (np.ascontiguousarray(np.stack(floats), dtype=np.float64) if floats
                  else np.zeros(0, dtype=np.float64))
        kinds = np.empty(nc, dtype=np.int64)
        texts: list[Any] = []
        f = 0
        for j, c in enumerate(columns):
            if isinstance(c, np.ndarray):
                kinds[j] = -1 - f
                f += 1
            else:
                kinds[j] = len(texts)
                texts.append(c)
        ho, hd = _python_strings(heads).contiguous()
        qo, qd = q_all.contiguous()
        to, td = _joined(texts)
        for a in range(0, nq, per_block):
            yield accel.trec_lines(values, kinds, ho, hd, qo, qd, to, td, a, min(nq, a + per_block))
        return
    import pyarrow as pa
    import pyarrow.compute as pc

    q_arrow = q_all.arrow()
    tab = pa.scalar("\t", type=pa.large_string())
    empty = pa.scalar("", type=pa.large_string())
    heads_s = [pa.scalar(h, type=pa.large_string()) for h in heads]
    cols = [fixed4(c, printf_fixed4, "\n") if isinstance(c, np.ndarray)
            else pc.binary_join_element_wise(c.arrow(), empty, pa.scalar("\n", type=pa.large_string()))
            for c in columns]
    for a in range(0, nq, per_block):
        nb = min(nq, a + per_block) - a
        query = q_arrow.slice(a, nb)
        by_column = pa.concat_arrays([pc.binary_join_element_wise(h, query, c.slice(a, nb), tab)
                                      for h, c in zip(heads_s, cols, strict=True)])
        order = (np.arange(nc, dtype=np.int64)[None, :] * nb + np.arange(nb, dtype=np.int64)[:, None]).ravel()
        yield _data(by_column.take(pa.array(order)))


def _joined(columns: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(int64 offsets, UTF-8 data)`` of the strings of several :class:`ragrade.data.Utf8Column` one after the
    other."""
    from ragrade.data import Utf8Column

    if not columns:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    return Utf8Column([part for c in columns for part in c.chunks]).contiguous()


def _data(arr: Any) -> bytes:
    """The strings of ``arr`` (a large_string array without nulls) one after the other, as bytes."""
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    return bufs[2][start:end].to_pybytes() if end > start else b""
