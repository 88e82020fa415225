"""ragrade's one id rule (``docs/formats.md``, "Ids"), for every way ids come in: one value
(:func:`normalize_id`), a column of Python or NumPy values (:func:`id_array`: dicts, lists, DataFrames,
adapters) and an Arrow column (:func:`id_column`: Parquet, Arrow tables, the streaming and Spark readers).

The rule:

* a ``str`` is the id as written (``"007"`` stays ``"007"``); ``bytes`` are decoded as UTF-8; an id
  holding a NUL character (``"\\x00"``) is refused, as every file reader refuses one (a NUL in an id is
  nearly always binary or UTF-16 data read as text);
* an integer (Python, NumPy, Arrow) is its decimal digits (``10`` -> ``"10"``);
* a float with an integral value is the integer's digits (``10.0`` -> ``"10"``, as JSON and CSV parsers
  read numeric ids);
* anything else is refused with an :class:`~ragrade.errors.InputError` naming the column, the row or query
  and the value: a float that is not integral (``1.5``), NaN or infinity, None/null (a missing id), a
  boolean, a container.

A non-integral float is refused rather than kept as text because its text is not the id the user wrote
(``1.50`` and ``1.5`` are one float; a CSV column read as floats has already lost the spelling): equal
ids must be one id on every path, and an id refused on one path is refused on all.

>>> [normalize_id(v) for v in ("d1", 10, 10.0)]
['d1', '10', '10']
>>> normalize_id(1.5)
Traceback (most recent call last):
ragrade.errors.InputError: id must be a string or an integer (value 1.5)
>>> id_array([1, 2.0, "x"]).tolist()
['1', '2', 'x']

The rule holds for Python objects as for files: a dict ``{"q\\x001": {...}}``, a DataFrame column or a
list holding such an id is refused with the query, the document and the value named, with or without the
C helper (whose scan of dicts stops at a key holding a NUL).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade import _ingest
from ragrade._arrays import infer_kind, is_pandas
from ragrade.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa

__all__ = ["first_nul", "id_array", "id_column", "normalize_id", "str_ids"]


def normalize_id(value: Any, what: str = "id", *, query: str | None = None) -> str:
    """One id as ``str`` by the rule of this module; an :class:`InputError` naming ``what``, the query and
    the value when the rule refuses it."""
    if type(value) is str or isinstance(value, str):  # str subclasses (numpy.str_) become str
        if "\x00" in value:
            raise InputError(f"{what} contains a NUL character (\\x00): ids are text without NUL bytes",
                             query=query, value=value)
        return value if type(value) is str else str(value)
    if isinstance(value, bool | np.bool_):
        raise InputError(f"{what} must be a string or an integer, not a boolean", query=query, value=value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        f = float(value)
        if np.isfinite(f) and f.is_integer():
            return str(int(f))
        why = "is missing (NaN)" if np.isnan(f) else "must be a string or an integer"
        raise InputError(f"{what} {why}", query=query, value=value)
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{what} is not valid UTF-8", query=query, value=value) from None
        return normalize_id(text, what, query=query)
    if value is None:
        raise InputError(f"{what} is missing (None)", query=query)
    raise InputError(f"{what} must be a string or an integer; got a {type(value).__name__}", query=query,
                     value=value)


def first_nul(ids: Any) -> int | None:
    """Index of the first id of ``ids`` (a list or an object array of ``str``) holding a NUL character,
    or None. One pass in the C helper when it is built; else one C-speed search of the ids joined (no
    per-id Python work unless one is found)."""
    accel = getattr(_ingest.c_helper(), "first_nul", None)
    if accel is not None and (type(ids) is list or (isinstance(ids, np.ndarray) and ids.dtype == object
                                                    and ids.ndim == 1)):
        found = accel(ids if type(ids) is list else np.ascontiguousarray(ids))
        return None if found < 0 else int(found)
    listed = ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
    try:
        if not listed or "\x00" not in "\x01".join(listed):
            return None
    except TypeError:  # not all str: those that are
        pass
    return next((i for i, v in enumerate(listed) if isinstance(v, str) and "\x00" in v), None)


def str_ids(ids: np.ndarray | list) -> tuple[bool, int | None]:
    """``(every id a str, index of the first holding a NUL or None)`` for a list or a 1-D object array; the
    index is None too when not every id is a ``str`` (such ids are converted, and checked, elsewhere). One
    pass over the ids in the C helper, where a kind check and :func:`first_nul` would take two."""
    accel = getattr(_ingest.c_helper(), "str_ids", None)
    if accel is not None and (type(ids) is list or (isinstance(ids, np.ndarray) and ids.dtype == object
                                                    and ids.ndim == 1)):
        all_str, found = accel(ids if type(ids) is list else np.ascontiguousarray(ids))
        return all_str, None if found < 0 else int(found)
    arr = ids if isinstance(ids, np.ndarray) else np.fromiter(ids, dtype=object, count=len(ids))
    if infer_kind(arr) not in ("string", "empty"):
        return False, None
    return True, first_nul(arr)


def _nul_error(what: str, row: int, value: Any) -> InputError:
    return InputError(f"{what}: row {row} contains a NUL character (\\x00): ids are text without NUL bytes",
                      value=value)


def _refuse_nul(ids: np.ndarray, what: str, rows: np.ndarray | None = None) -> None:
    """An :class:`InputError` if an id of ``ids`` (str) holds a NUL; ``rows``: their rows in the input."""
    bad = first_nul(ids)
    if bad is not None:
        raise _nul_error(what, bad if rows is None else int(rows[bad]), ids[bad])


def id_array(values: Any, what: str = "ids", *, check_nul: bool = True) -> np.ndarray:
    """``values`` (a list, an array, a Series) as a 1-D object array of ``str`` by the rule; a value the
    rule refuses is an :class:`InputError` naming the first offending row. Whole arrays at once: only
    rows that are not already ``str`` are looked at one by one.

    ``check_nul=False`` leaves the search for NUL characters to the caller (the tables check the distinct
    ids once they are coded, which is cheaper than every row)."""
    arr = values if isinstance(values, np.ndarray) and values.dtype == object else None
    if arr is None:
        if is_pandas(values):
            arr = values.to_numpy(dtype=object, na_value=None)
        else:
            arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
            if arr.dtype.kind == "b":
                raise InputError(f"{what} must be strings or integers, not booleans")
            if arr.dtype.kind in "iu":
                arr = arr.astype(str).astype(object)  # exact for every width, unsigned included
            elif arr.dtype.kind in "US":
                arr = arr.astype(str).astype(object)
            elif arr.dtype != object:
                arr = arr.astype(object)  # floats: integral ones become "10" below, like other inputs
    if arr.ndim != 1:
        raise InputError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if len(arr) == 0:
        return arr
    kind = infer_kind(arr)  # one C scan (pandas) on large arrays
    if kind == "string":  # the common case
        if check_nul:
            _refuse_nul(arr, what)
        return arr
    if kind == "integer":  # all ints: vectorised str() (ints beyond 64 bits take the per-item path)
        try:
            return arr.astype(np.int64).astype(str).astype(object)
        except OverflowError:
            pass
    if kind == "floating":
        f = arr.astype(np.float64)
        # 10.0 -> "10", as ids read from JSON/CSV (beyond 2**53 floats are not exact: per-item path)
        if np.isfinite(f).all() and (f == np.floor(f)).all() and (np.abs(f) < 2.0**53).all():
            return f.astype(np.int64).astype(str).astype(object)
    is_str = np.fromiter((type(x) is str for x in arr), dtype=bool, count=len(arr))
    if check_nul:
        rows = np.flatnonzero(is_str)
        _refuse_nul(arr[rows], what, rows)
    bad = np.flatnonzero(~is_str)
    out = arr.copy()
    for i in bad:  # only the non-str rows (usually none)
        v = arr[i]
        if v is None or (isinstance(v, float) and np.isnan(v)):
            raise InputError(f"{what} has a missing value at row {int(i)}", value=v)
        if (isinstance(v, str) and "\x00" in v) or (isinstance(v, bytes) and b"\x00" in v):
            raise _nul_error(what, int(i), v)  # (numpy.str_, bytes)
        try:
            out[i] = normalize_id(v, what)
        except InputError:
            raise InputError(f"{what} must be strings or integers; row {int(i)} holds a {type(v).__name__}",
                             value=v) from None
    return out


def id_column(col: pa.ChunkedArray, what: str = "ids") -> pa.ChunkedArray:
    """An Arrow id column as strings by the rule (nulls stay null: the readers report a missing id with its
    line). A non-integral or non-finite float, a boolean or a column of another type is an
    :class:`InputError` naming the first offending row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return col
    if pa.types.is_integer(t) or pa.types.is_null(t):
        return pc.cast(col, pa.string())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        try:
            return pc.cast(col, pa.string())
        except pa.ArrowInvalid:
            raise InputError(f"{what} are not valid UTF-8") from None
    if pa.types.is_floating(t):
        f = col.to_numpy(zero_copy_only=False).astype(np.float64)  # nulls are NaN here
        valid = ~pc.is_null(col).to_numpy(zero_copy_only=False)
        good = np.isfinite(f) & (f == np.floor(f))
        bad = np.flatnonzero(valid & ~good)
        if len(bad):
            i = int(bad[0])
            raise InputError(f"{what} must be strings or integers; row {i} holds the float {float(f[i])!r} (a "
                             f"non-integral or missing number is not an id: write ids as text)")
        if (np.abs(f[valid]) < 2.0**63).all():
            as_int = pc.cast(col, pa.int64(), safe=False)
            return pc.cast(as_int, pa.string())
        return pa.chunked_array([pa.array([None if v is None else normalize_id(v, what) for v in col.to_pylist()],
                                          type=pa.string())])
    raise InputError(f"{what} must be strings or integers, not {t}")
