"""Hash-table primitives over whole arrays, with pandas only where it pays for its import.

pandas' hash tables (``factorize``, ``duplicated``, ``Index.get_indexer``, ``infer_dtype``) are the fastest
way to code millions of ids, but importing pandas takes about 0.25 s, more than a small evaluation takes
in all. So each primitive here decides per call: when pandas is already imported, or the input has more
than :data:`SMALL` elements, it uses pandas; otherwise NumPy and a Python dict. The two ways give the same
result (``tests/test_arrays.py`` checks them against each other), so only the speed depends on the choice:
``ragrade evaluate`` on a small file never imports pandas (issue 11: start-up), and a large evaluation
pays the import once.
"""

from __future__ import annotations

import sys
from itertools import pairwise
from typing import Any

import numpy as np

#: Inputs up to this many elements are coded without pandas when pandas is not imported yet.
SMALL = 100_000


def use_pandas(n: int) -> bool:
    """Whether an input of ``n`` elements takes pandas' way: pandas is imported already, or ``n`` is above
    :data:`SMALL`. (The one switch: the tests turn it off to check the other way against pandas.)"""
    return sys.modules.get("pandas") is not None or n > SMALL


def _pandas(n: int) -> Any:
    if not use_pandas(n):
        return None
    import pandas as pd

    return pd


def is_pandas(value: Any) -> bool:
    """True for a pandas Series or Index (False without importing pandas: nothing can be one then)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.Series | pd.Index)


def is_frame(value: Any) -> bool:
    """True for a pandas DataFrame (without importing pandas)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def factorize(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(codes int64, uniques)``: codes in order of first appearance, -1 for a missing value (None, NaN),
    as ``pandas.factorize(values, sort=False, use_na_sentinel=True)``. ``uniques`` is an object array
    for object input, else an array of the input's dtype."""
    arr = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
    pd = _pandas(len(arr))
    if pd is not None:
        codes, uniques = pd.factorize(arr, sort=False, use_na_sentinel=True)
        return codes.astype(np.int64, copy=False), np.asarray(uniques)
    if arr.dtype != object:
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            arr = arr.astype(object)  # NaN is missing: the dict path below
        else:
            uniq, first, inverse = np.unique(arr, return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")  # first appearance
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order), dtype=np.int64)
            return rank[inverse.reshape(-1)], uniq[order]
    seen: dict[Any, int] = {}
    codes = np.empty(len(arr), dtype=np.int64)
    for i, v in enumerate(arr.tolist()):
        if _missing(v):
            codes[i] = -1
        else:
            c = seen.get(v)
            if c is None:
                c = seen[v] = len(seen)
            codes[i] = c
    uniques = np.empty(len(seen), dtype=object)
    uniques[:] = list(seen)
    return codes, uniques


def duplicated(keys: Any, keep: str = "first") -> np.ndarray:
    """Boolean mask of the elements equal to an earlier one (``keep="first"``) or to a later one
    (``keep="last"``), as ``pandas.Series(keys).duplicated(keep=...)``."""
    arr = keys if isinstance(keys, np.ndarray) else np.asarray(keys)
    n = len(arr)
    pd = _pandas(n)
    if pd is not None:
        return pd.Series(arr, copy=False).duplicated(keep=keep).to_numpy()
    if keep not in ("first", "last"):
        raise ValueError(f"keep must be 'first' or 'last', not {keep!r}")
    out = np.ones(n, dtype=bool)
    if n == 0:
        return out
    if arr.dtype == object:
        seen: set[Any] = set()
        items = arr.tolist()
        order = range(n) if keep == "first" else range(n - 1, -1, -1)
        for i in order:
            v = items[i]
            key = None if _missing(v) else v  # every missing value is one key, as in pandas
            if key not in seen:
                seen.add(key)
                out[i] = False
        return out
    if keep == "first":
        _, first = np.unique(arr, return_index=True)
        out[first] = False
    else:
        _, first = np.unique(arr[::-1], return_index=True)
        out[n - 1 - first] = False
    return out


class Lookup:
    """Positions in a sequence of distinct values, -1 where absent, as ``pandas.Index(values).get_indexer``.
    A pandas Index answers when pandas is loaded or the lookup is large (built once, on first use), a
    dict otherwise."""

    def __init__(self, values: Any) -> None:
        self.values = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
        self._index: Any = None
        self._dict: dict[Any, int] | None = None

    def __len__(self) -> int:
        return len(self.values)

    def get_indexer(self, targets: Any) -> np.ndarray:
        tgt = targets if isinstance(targets, np.ndarray) else np.asarray(targets, dtype=object)
        if self._index is None:
            pd = _pandas(len(self.values) + len(tgt))
            if pd is not None:
                self._index = pd.Index(self.values, dtype=object if self.values.dtype == object else None)
        if self._index is not None:
            return np.asarray(self._index.get_indexer(tgt), dtype=np.int64)
        if self._dict is None:
            self._dict = {v: i for i, v in enumerate(self.values.tolist())}
        where = self._dict
        return np.fromiter((where.get(t, -1) for t in tgt.tolist()), dtype=np.int64, count=len(tgt))


def indexer(vocabulary: Any, targets: Any) -> np.ndarray:
    """Position of each target in ``vocabulary`` (distinct values), -1 where absent, as
    ``pandas.Index(vocabulary).get_indexer(targets)``."""
    return Lookup(vocabulary).get_indexer(targets)


def member(values: Any, among: Any) -> np.ndarray:
    """Boolean mask: which of ``values`` are in ``among`` (hashable items, e.g. ids), as ``np.isin`` but in
    linear time: on object arrays ``np.isin`` compares every pair of a small ``among`` (1M queries against
    a few hundred thousand: hours)."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    keys = set(among.tolist() if isinstance(among, np.ndarray) else among)
    return np.fromiter(map(keys.__contains__, items), dtype=bool, count=len(items))


def infer_kind(values: np.ndarray) -> str:
    """The kind of an object array's values, as ``pandas.api.types.infer_dtype(values, skipna=False)``
    names it for the kinds ragrade tells apart: ``"empty"``, ``"string"`` (every value a ``str``),
    ``"integer"`` (Python or NumPy integers, no booleans), ``"floating"``; anything else is ``"mixed"``
    (the callers treat every other pandas answer alike)."""
    pd = _pandas(len(values))
    if pd is not None:
        kind = str(pd.api.types.infer_dtype(values, skipna=False))
        return kind if kind in ("empty", "string", "integer", "floating") else "mixed"
    if len(values) == 0:
        return "empty"
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    if all(isinstance(v, str) for v in items):
        return "string"
    if all(isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_) for v in items):
        return "integer"
    if all(isinstance(v, float | np.floating) for v in items):
        return "floating"
    return "mixed"


class Utf8Column:
    """Non-null UTF-8 strings held in NumPy buffers, in one or more chunks of ``(offsets, data)``: ``offsets``
    int64[n + 1] into the bytes ``data`` (uint8), string ``i`` of a chunk being ``data[offsets[i]:offsets[i + 1]]``,
    the layout of an Arrow ``large_string`` array. What the C tokenizer reads from a TREC file, kept without
    importing pyarrow (a tenth of the trec_eval drop-in's time on a run of two million rows): the C helpers read
    the chunks as they are, and :meth:`arrow` gives the Arrow array (no copy) to everything else. Immutable: the
    buffers are made read-only."""

    __slots__ = ("_arrow", "chunks", "length")

    def __init__(self, chunks: list[tuple[np.ndarray, np.ndarray]]) -> None:
        frozen = []
        for off, data in chunks:
            off = np.asarray(off, dtype=np.int64)
            data = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)  # (bytes-like)
            data = np.asarray(data, dtype=np.uint8)
            off.setflags(write=False)
            data.setflags(write=False)
            frozen.append((off, data))
        self.chunks: tuple[tuple[np.ndarray, np.ndarray], ...] = tuple(frozen)
        self.length = sum(len(off) - 1 for off, _ in frozen)
        self._arrow: Any = None

    def __len__(self) -> int:
        return self.length

    @classmethod
    def from_arrow(cls, arr: Any) -> Utf8Column | None:
        """The strings of an Arrow ``string`` or ``large_string`` array (chunked or not) on its own buffers (32-bit
        offsets are widened); None for another type or with nulls."""
        import pyarrow as pa

        chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
        parts = [_string_chunk(c) for c in chunks]
        if any(p is None for p in parts):
            return None
        return cls([(off, data) for off, data, _ in parts])  # type: ignore[misc]

    def arrow(self) -> Any:
        """The strings as an Arrow ``large_string`` array (chunked when there are several chunks), on the same
        buffers; made once."""
        if self._arrow is None:
            import pyarrow as pa

            arrays = [pa.Array.from_buffers(pa.large_string(), len(off) - 1, [None, pa.py_buffer(off), pa.py_buffer(data)])
                      for off, data in self.chunks]
            self._arrow = arrays[0] if len(arrays) == 1 else pa.chunked_array(arrays, type=pa.large_string())
        return self._arrow

    def contiguous(self) -> tuple[np.ndarray, np.ndarray]:
        """``(offsets, data)`` of all the strings in one chunk (the chunk itself when there is one)."""
        if len(self.chunks) == 1:
            return self.chunks[0]
        offs, datas, base = [np.zeros(1, dtype=np.int64)], [], 0
        for off, data in self.chunks:
            used = data[int(off[0]): int(off[-1])]
            offs.append(off[1:] - off[0] + base)
            datas.append(used)
            base += len(used)
        return np.concatenate(offs), np.concatenate(datas) if datas else np.zeros(0, dtype=np.uint8)

    def take(self, rows: np.ndarray) -> Utf8Column:
        """The strings at ``rows`` (in that order), gathered into one chunk."""
        off, data = self.contiguous()
        rows = np.asarray(rows, dtype=np.int64)
        start, length = off[:-1][rows], np.diff(off)[rows]
        out = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(length, out=out[1:])
        where = np.repeat(start - out[:-1], length) + np.arange(int(out[-1]), dtype=np.int64)
        return Utf8Column([(out, data[where])])

    def to_pylist(self) -> list[str]:
        """The strings as a list of ``str`` (as an Arrow array's ``to_pylist``)."""
        return self.decoded().tolist()

    def decoded(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The strings (at ``rows``, else all) as an object array of ``str``."""
        col = self if rows is None else self.take(rows)
        off, data = col.contiguous()
        got = decode_strings(off - off[0], data[int(off[0]):], len(col))
        if got is not None:
            return got
        return np.asarray(col.arrow().to_numpy(zero_copy_only=False), dtype=object)


def decode_strings(offsets: np.ndarray, data: np.ndarray, n: int) -> np.ndarray | None:
    """The ``n`` strings of an Arrow string layout (``offsets`` int64 into the UTF-8 bytes ``data``) as an
    object array of ``str``, decoded here when the input is small and pandas is not imported; None
    otherwise (the caller then asks pyarrow, whose conversion imports pandas)."""
    if use_pandas(n):
        return None
    bounds = offsets[: n + 1].tolist()
    blob = data[: bounds[-1]].tobytes() if n else b""
    if blob.isascii():  # byte offsets are character offsets
        text = blob.decode("ascii")
        items = [text[a:b] for a, b in pairwise(bounds)]
    else:
        items = [blob[a:b].decode("utf-8") for a, b in pairwise(bounds)]
    out = np.empty(n, dtype=object)
    out[:] = items
    return out


def arrow_int64(values: np.ndarray) -> Any:
    """``values`` as an Arrow int64 array (e.g. indices for ``take``), built from the buffer: unlike
    ``pyarrow.array``, this does not import pandas."""
    import pyarrow as pa

    v = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(v), [None, pa.py_buffer(v)])


def _string_chunk(arr) -> tuple[np.ndarray, object, int] | None:
    """``(offsets view, data buffer, offset width)`` of one Arrow string array, without copying."""
    import pyarrow as pa

    width: type[np.signedinteger[Any]]
    if pa.types.is_string(arr.type):
        width = np.int32
    elif pa.types.is_large_string(arr.type):
        width = np.int64
    else:
        return None
    if arr.null_count:
        return None
    _, off_buf, data = arr.buffers()
    if off_buf is None:  # an empty array may have no buffers
        return np.zeros(1, dtype=width), b"", np.dtype(width).itemsize
    offsets = np.frombuffer(off_buf, dtype=width)[arr.offset: arr.offset + len(arr) + 1]
    return offsets, data if data is not None else b"", np.dtype(width).itemsize


def _gather(arr: Any, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(int64 offsets, UTF-8 bytes)`` of ``arr[rows]`` for an Arrow string array (chunked or not),
    gathered from its buffers with NumPy; None for anything but plain non-null strings."""
    col = Utf8Column.from_arrow(arr)
    return None if col is None else col.take(rows).chunks[0]


def take_strings(arr: Any, rows: np.ndarray) -> Any:
    """``arr.take(rows)`` for an Arrow string array (chunked or not) as one Arrow ``large_string`` array,
    gathered from the buffers with NumPy when the input is small and pandas is not imported (Arrow's
    ``take`` imports ``pyarrow.compute``, which costs more than a small evaluation); otherwise, or for
    anything but plain non-null strings, Arrow's own ``take``."""
    import pyarrow as pa

    rows = np.asarray(rows, dtype=np.int64)
    got = None if use_pandas(len(arr)) else _gather(arr, rows)
    if got is None:
        return arr.take(arrow_int64(rows))
    offsets, data = got
    return pa.Array.from_buffers(pa.large_string(), len(rows), [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def take_decoded(arr: Any, rows: np.ndarray) -> np.ndarray | None:
    """``arr[rows]`` as an object array of ``str``, gathered and decoded here when the rows are few and
    pandas is not imported (pyarrow's own conversion imports it); None otherwise, or for anything but
    plain non-null strings."""
    rows = np.asarray(rows, dtype=np.int64)
    if use_pandas(len(rows)):
        return None
    got = _gather(arr, rows)
    return None if got is None else decode_strings(got[0], got[1], len(rows))


def contiguous(col: Any) -> Any:
    """One contiguous Arrow array of a chunked string column (fast ``take``); 64-bit offsets when the
    text exceeds 2 GiB."""
    import pyarrow as pa

    try:
        return col.combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowCapacityError, OverflowError):
        return col.cast(pa.large_string()).combine_chunks()
