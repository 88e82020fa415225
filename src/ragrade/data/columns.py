"""Low-level helpers shared by :class:`Qrels` and :class:`Run`: id coding, grouping, validation.

Everything here works on whole arrays; nothing loops over queries or items in Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragrade._arrays import duplicated, factorize, indexer, infer_kind, is_pandas
from ragrade.data.ids import first_nul
from ragrade.data.ids import id_array as as_object_strings  # noqa: F401  (the id rule: ragrade.data.ids)
from ragrade.data.ids import normalize_id as id_string  # noqa: F401
from ragrade.errors import InputError


def need_sequence(value: Any, what: str) -> Sequence[Any] | np.ndarray:
    """``value`` if it is a list-like of entries (list, tuple, array, Series); else an :class:`InputError`
    saying what was expected (a string, a mapping or a scalar is not a list of entries)."""
    if isinstance(value, (str | bytes, Mapping)) or not hasattr(value, "__len__") \
            or not hasattr(value, "__getitem__"):
        raise InputError(f"{what} must be a list (one entry per query or row), got a {type(value).__name__}",
                         value=value if isinstance(value, str | int | float) else None)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        raise InputError(f"{what} must be a list, got a 0-d array")
    return value


def need_mapping(value: Any, what: str) -> Mapping[Any, Any]:
    """``value`` if it is a mapping; else an :class:`InputError`."""
    if not isinstance(value, Mapping):
        raise InputError(f"{what} must be a mapping of query id -> entries, got a {type(value).__name__}")
    return value


def encode(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer-code an object array of strings: ``(codes int32, vocabulary object array)``.

    Codes follow first appearance. Uses pandas' hash table on large arrays (the strings' cached hashes are
    reused), a dict on small ones (:mod:`ragrade._arrays`).
    """
    codes, uniques = factorize(values)
    vocab = np.asarray(uniques, dtype=object)
    dtype = np.int32 if len(vocab) < 2**31 - 1 else np.int64
    return codes.astype(dtype, copy=False), vocab


def _all_str(values: object) -> bool:
    return infer_kind(values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)) in ("string", "empty")


def distinct(ids: np.ndarray, already_unique: bool = False) -> bool:
    """True if the ids (str) are pairwise different. ``already_unique`` says they came from one
    dict's keys as str objects, in which case no check is needed; otherwise a hash pass decides (ids
    converted from other types, e.g. 1 and "1", may collide)."""
    if already_unique:
        return True
    return len(set(ids.tolist())) == len(ids)


def offsets_from_counts(counts: Sequence[int] | np.ndarray) -> np.ndarray:
    off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=off[1:])
    return off


def segment_ids(offsets: np.ndarray) -> np.ndarray:
    """Row -> segment index for rows grouped by segment (``offsets`` has one more entry than segments)."""
    counts = np.diff(offsets)
    return np.repeat(np.arange(len(counts), dtype=np.int32 if len(counts) < 2**31 else np.int64), counts)


def group_rows(query_per_row: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Group rows by query id (stable, first-appearance order of queries).

    Returns ``(query_ids, offsets, permutation)``; ``permutation`` is None when rows were already
    contiguous per query (the common case for files written query by query).
    """
    qcodes, qids = encode(query_per_row)
    n = len(qcodes)
    if n == 0:
        return qids, np.zeros(1, dtype=np.int64), None
    change = np.flatnonzero(qcodes[1:] != qcodes[:-1]) + 1
    if len(change) + 1 == len(qids):
        # Contiguous: first-appearance codes are increasing block by block.
        counts = np.diff(np.concatenate(([0], change, [n])))
        return qids, offsets_from_counts(counts), None
    perm = np.argsort(qcodes, kind="stable")
    counts = np.bincount(qcodes, minlength=len(qids))
    return qids, offsets_from_counts(counts), perm


def _query_of(row: int, query_ids, offsets) -> str | None:
    if query_ids is None or offsets is None:
        return None
    return str(query_ids[np.searchsorted(offsets, row, side="right") - 1])


def nul_error(what: str, value: str, query: str | None = None, row: int | None = None) -> InputError:
    """The error for an id holding a NUL character (the id rule, :mod:`ragrade.data.ids`)."""
    at = "" if row is None or query is not None else f" at row {row}"
    return InputError(f"{what}{at} contains a NUL character (\\x00): ids are text without NUL bytes", query=query,
                      value=value)


def check_query_ids(query_ids: np.ndarray, what: str = "query id") -> None:
    """A query id holding a NUL character is an error (the distinct query ids, a C-speed search)."""
    bad = first_nul(query_ids)
    if bad is not None:
        raise nul_error(what, query_ids[bad])


def check_raw(docs: np.ndarray, what: str, query_ids=None, offsets=None) -> None:
    """Empty ids, and ids holding a NUL character, are errors (checked on per-row ids, vectorised)."""
    if len(docs) == 0:
        return
    bad = np.flatnonzero(docs == "")
    if len(bad):
        row = int(bad[0])
        raise InputError(f"empty {what} at row {row}", query=_query_of(row, query_ids, offsets), value="")
    nul = first_nul(docs)
    if nul is not None:
        raise nul_error(what, docs[nul], _query_of(nul, query_ids, offsets), nul)


def check_vocab(vocab: np.ndarray, codes: np.ndarray, what: str, query_ids=None, offsets=None) -> None:
    """An empty id is an error: it cannot be told apart from missing data; so is an id holding a NUL
    character (the id rule). Checked on the vocabulary (each distinct id once)."""
    where = indexer(vocab, [""])
    if where[0] >= 0:
        row = int(np.flatnonzero(codes == where[0])[0])
        raise InputError(f"empty {what} at row {row}", query=_query_of(row, query_ids, offsets), value="")
    nul = first_nul(vocab)
    if nul is not None:
        row = int(np.flatnonzero(codes == nul)[0])
        raise nul_error(what, vocab[nul], _query_of(row, query_ids, offsets), row)


def first_duplicate(seg: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Boolean mask of rows whose (segment, code) pair appeared at an earlier row."""
    if len(codes) == 0:
        return np.zeros(0, dtype=bool)
    key = seg.astype(np.int64) * (int(n_codes) + 1) + codes.astype(np.int64)
    return duplicated(key, keep="first")


_BOOLS = frozenset((bool, np.bool_))


def _refuse_booleans(values: Any, fail: Any) -> None:
    """Booleans are not numbers (as in every file format), though Python and NumPy convert them: a
    boolean array, or a boolean in a list or an object array, is an error naming its row. Float and
    integer arrays (the usual case) are not looked at."""
    kind = getattr(getattr(values, "dtype", None), "kind", None)
    if kind == "b":
        if len(values):
            raise fail(0, "is a boolean, not a number (write 1 and 0)", bool(values[0]))
        return
    if kind not in (None, "O") or not isinstance(values, list | tuple | np.ndarray):
        return
    seq = values.tolist() if isinstance(values, np.ndarray) else values
    if _BOOLS.isdisjoint(map(type, seq)):
        return
    i = next(i for i, v in enumerate(seq) if type(v) in _BOOLS)
    raise fail(i, "is a boolean, not a number (write 1 and 0)", seq[i])


def numeric_column(values: Any, source: str, what: str, where: Any = None, finite: bool = False) -> np.ndarray:
    """A fresh float64 array (never a view of the caller's data). A missing value, a non-number, a NaN
    (or, with ``finite``, an infinity) is an :class:`InputError` naming the row, or the query and item
    when ``where(row) -> (query, item)`` is given."""

    def fail(row: int, why: str, value: Any) -> InputError:
        if where is None:
            return InputError(f"{source}: {what} at row {row} {why}", value=value)
        q, d = where(row)
        return InputError(f"{source}: {what} {why}", query=q, item=d, value=value)

    if is_pandas(values):
        values = values.to_numpy()
    _refuse_booleans(values, fail)
    try:
        out = np.array(values, dtype=np.float64, copy=True)
    except (TypeError, ValueError, OverflowError):
        for i, v in enumerate(list(values)):
            if v is None:
                raise fail(i, "is missing", v) from None
            try:
                float(v)
            except (TypeError, ValueError):
                raise fail(i, "is not a number", v) from None
            except OverflowError:  # an int beyond float64 (e.g. 10**400)
                raise fail(i, "is too large for a float64", f"{str(v)[:20]}... ({len(str(v))} digits)") from None
        raise InputError(f"{source}: {what}s cannot be read as numbers") from None
    if out.ndim != 1:
        raise InputError(f"{source}: {what}s must be one number per row")
    bad = ~np.isfinite(out) if finite else np.isnan(out)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        original = values[i] if isinstance(values, list | tuple | np.ndarray) else out[i]
        if original is None:
            raise fail(i, "is missing", None)
        why = "is NaN" if np.isnan(out[i]) else "is not finite"
        raise fail(i, f"{why} ({what}s must be comparable numbers)", float(out[i]))
    return out
