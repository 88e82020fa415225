"""Arrow columns into the integer-coded storage of :class:`~ragrade.data.Qrels` / :class:`~ragrade.data.Run`
(:func:`dictionary_codes`, :func:`query_codes`, :func:`query_groups`, :func:`float_column`, then
:func:`assemble_run`, :func:`assemble_qrels`, :func:`assemble_qrels_raw`), with the checks every reader makes
on the way (empty or NUL ids, a document judged twice, grades), naming the file and the line or row.

The functions work on whole arrays: ids are dictionary-coded by Arrow, so building a Run of millions of rows
creates one Python string per *distinct* id, never one object per line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade._arrays import Utf8Column, _string_chunk, contiguous
from ragrade.data import Qrels, Run
from ragrade.data.columns import first_duplicate
from ragrade.data.ids import first_nul, id_column
from ragrade.errors import EmptyFileError, ParseError
from ragrade.io.sniffing import is_arrow_number
from ragrade.io.textfiles import RowLocator

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa


def str_dict() -> pa.DataType:
    """Arrow's dictionary-encoded string type (int32 codes): how the readers ask pyarrow for id columns."""
    import pyarrow as pa

    return pa.dictionary(pa.int32(), pa.string())


def dictionary_codes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(codes int32, vocabulary object array of str)`` of a string-like or dictionary Arrow column.

    Dictionary chunks are unified (one vocabulary); anything else is cast to string and encoded.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, Utf8Column):
        col = col.arrow()
    if isinstance(col, pa.Array):
        col = pa.chunked_array([col])
    if not pa.types.is_dictionary(col.type):
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            col = id_column(col)
        col = pc.dictionary_encode(col)
    elif not pa.types.is_string(col.type.value_type):
        col = pc.dictionary_encode(id_column(col.cast(col.type.value_type)))
    if col.num_chunks == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=object)
    col = col.unify_dictionaries()
    vocab = col.chunk(0).dictionary
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in col.chunks]).astype(
        np.int32, copy=False
    )
    return codes, np.asarray(vocab.to_numpy(zero_copy_only=False), dtype=object)


def null_row(col: pa.ChunkedArray) -> int | None:
    import pyarrow.compute as pc

    if col.null_count == 0:
        return None
    mask = pc.is_null(col).to_numpy(zero_copy_only=False)
    return int(np.flatnonzero(mask)[0])


def float_column(col: pa.ChunkedArray, what: str, path: str, row_text: Callable[[int], tuple[int | None, str | None]]
                 ) -> np.ndarray:
    """A numeric column as float64; a null or non-numeric value is a :class:`ParseError` at its line."""
    import pyarrow as pa
    import pyarrow.compute as pc

    r = null_row(col)
    if r is not None:
        line, text = row_text(r)
        raise ParseError(f"missing {what}", path=path, line=line, text=text)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_dictionary(col.type):
        try:
            col = pc.cast(col.cast(pa.string()) if pa.types.is_dictionary(col.type) else col, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            vals = col.to_pylist()  # error path only
            for i, v in enumerate(vals):
                if not (isinstance(v, str) and is_arrow_number(v.strip())):
                    line, text = row_text(i)
                    raise ParseError(f"{what} is not a number", path=path, line=line, text=text) from None
            raise ParseError(f"the {what} column cannot be read as numbers", path=path) from None
    elif pa.types.is_boolean(col.type):
        # One rule in every format (docs/formats.md, "Values"): a grade, score or rank is a number, as in a
        # TREC file (where ``true`` is refused); true/false are not read as 1/0.
        line, text = row_text(0)
        raise ParseError(f"the {what} column holds booleans (true/false), not numbers: write 1 and 0",
                         path=path, line=line, text=text)
    elif not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
        raise ParseError(f"the {what} column holds {col.type}, not numbers", path=path)
    return np.asarray(col.to_numpy(), dtype=np.float64)


def group_codes(qcodes: np.ndarray, qvocab: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(query_ids, offsets, perm)`` for per-row query codes; ``perm`` is None when rows are already
    grouped by query (queries keep their first-appearance order)."""
    n = len(qcodes)
    if n == 0:
        return np.zeros(0, dtype=object), np.zeros(1, dtype=np.int64), None
    starts = np.concatenate(([0], np.flatnonzero(qcodes[1:] != qcodes[:-1]) + 1))
    heads = qcodes[starts]
    if len(np.unique(heads)) == len(starts):
        offsets = np.append(starts, n).astype(np.int64)
        return qvocab[heads], offsets, None
    import pandas as pd  # (only for interleaved queries: the CLI need not import pandas to read a file)

    first, uniq = pd.factorize(qcodes, sort=False)
    perm = np.argsort(first, kind="stable")
    counts = np.bincount(first, minlength=len(uniq))
    offsets = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return qvocab[np.asarray(uniq)], offsets, perm




def _check_empty_ids(vocab: np.ndarray, codes: np.ndarray, what: str, path: str, locate: RowLocator) -> None:
    empty = np.flatnonzero(vocab == "") if len(vocab) else np.zeros(0, dtype=np.int64)
    if len(empty):
        row = int(np.flatnonzero(codes == empty[0])[0])
        line, text = locate(row)
        raise ParseError(f"empty {what}", path=path, line=line, text=text)
    bad = first_nul(vocab)
    if bad is not None:
        row = int(np.flatnonzero(codes == bad)[0])
        line, text = locate(row)
        raise _nul_error(what, path, line, text)


_NUL = re.compile(b"\x00")


def _nul_error(what: str, path: str, line: int | None, text: str | None) -> ParseError:
    return ParseError(f"a {what} contains a NUL byte (\\x00): ids are text without NUL bytes (a binary "
                      "file, or a file in UTF-16?)", path=path, line=line, text=text)


def _string_chunks(col: Utf8Column | pa.ChunkedArray | pa.Array) -> list[tuple[Any, Any]]:
    """``(chunk, (offsets, data, width) or None)`` of each chunk of a string column: the buffers as they are
    (None: not plain strings)."""
    if isinstance(col, Utf8Column):
        return [(off, (off, data, 8)) for off, data in col.chunks]
    import pyarrow as pa

    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    return [(c, _string_chunk(c)) for c in chunks]


def _chunk_rows(chunk: Any, got: Any) -> int:
    return len(got[0]) - 1 if got is not None else len(chunk)


def nul_in_arrow_ids(col: Utf8Column | pa.ChunkedArray | pa.Array) -> int | None:
    """Row of the first string of a string column (Arrow or :class:`~ragrade._arrays.Utf8Column`) holding a NUL
    byte, or None: a memchr-speed search of each chunk's character data, in place."""
    base = 0
    for c, got in _string_chunks(col):
        if got is None:
            import pyarrow as pa
            import pyarrow.compute as pc

            if pa.types.is_string(c.type) or pa.types.is_large_string(c.type):
                hit = pc.match_substring(c, "\x00").to_numpy(zero_copy_only=False)
                if hit.any():
                    return base + int(np.flatnonzero(hit)[0])
        else:
            offsets, data, _ = got
            lo, hi = int(offsets[0]), int(offsets[-1])
            with memoryview(data) as view:
                m = _NUL.search(view, lo, hi)
            if m is not None:
                return base + int(np.searchsorted(offsets, m.start(), side="right")) - 1
        base += _chunk_rows(c, got)
    return None


def query_groups(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """``(query ids, offsets)`` of a string query column whose rows come grouped by query (nearly every
    file: written query by query), found by one vectorised comparison of neighbours, with no hashing and
    no per-row code array; None if the queries are interleaved (or the column is not strings).
    Dictionary-encoded strings (Parquet's own encoding, read as is) compare by their codes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(col)
    if n == 0:
        return None
    if pa.types.is_dictionary(col.type) and pa.types.is_string(col.type.value_type):
        chunked = col if isinstance(col, pa.ChunkedArray) else pa.chunked_array([col])
        chunked = chunked.unify_dictionaries()
        if chunked.null_count:
            return None
        codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunked.chunks])
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        vocab = chunked.chunk(0).dictionary
        heads = np.asarray(vocab.take(pa.array(codes[starts])).to_numpy(zero_copy_only=False), dtype=object)
    elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        if n == 1:
            return (np.asarray(col.to_numpy(zero_copy_only=False), dtype=object),
                    np.array([0, 1], dtype=np.int64))
        change = pc.not_equal(col.slice(1), col.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.concatenate(([0], np.flatnonzero(change) + 1))
        heads = np.asarray(col.take(pa.array(starts)).to_numpy(zero_copy_only=False), dtype=object)
    else:
        return None
    if len(set(heads.tolist())) != len(heads):
        return None
    return heads, np.append(starts, n).astype(np.int64)


def query_codes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(codes int32, vocabulary)`` of a query column: from :func:`query_groups` when the rows are
    grouped, else by dictionary encoding."""
    groups = query_groups(col)
    if groups is None:
        return dictionary_codes(col)
    heads, offsets = groups
    return np.repeat(np.arange(len(heads), dtype=np.int32), np.diff(offsets)), heads


def _first_empty_string(col: Utf8Column | pa.ChunkedArray | pa.Array) -> int | None:
    """Row of the first empty string, from the offsets of each chunk (no per-row array is made)."""
    base = 0
    for c, got in _string_chunks(col):
        if got is None:
            import pyarrow.compute as pc

            empty = pc.binary_length(c).to_numpy(zero_copy_only=False) == 0
        else:
            offsets = got[0]
            empty = offsets[1:] == offsets[:-1]  # (a byte per row, not the lengths' eight)
        if empty.any():
            return base + int(np.argmax(empty))
        base += _chunk_rows(c, got)
    return None


def _check_group_ids(qvocab: np.ndarray, offsets: np.ndarray, path: str, locate: RowLocator) -> None:
    """An empty query id among rows grouped by query (``qvocab[i]`` starts at row ``offsets[i]``), or one
    holding a NUL byte."""
    empty = np.flatnonzero(qvocab == "") if len(qvocab) else np.zeros(0, dtype=np.int64)
    if len(empty):
        line, text = locate(int(offsets[empty[0]]))
        raise ParseError("empty query id", path=path, line=line, text=text)
    bad = first_nul(qvocab)
    if bad is not None:
        line, text = locate(int(offsets[bad]))
        raise _nul_error("query id", path, line, text)


def _check_raw_ids(raw_docs: Utf8Column | pa.ChunkedArray | pa.Array, path: str, locate: RowLocator) -> None:
    row = _first_empty_string(raw_docs)
    if row is not None:
        line, text = locate(row)
        raise ParseError("empty document id", path=path, line=line, text=text)
    row = nul_in_arrow_ids(raw_docs)
    if row is not None:
        line, text = locate(row)
        raise _nul_error("document id", path, line, text)


def _check_grades(grades: np.ndarray, path: str, locate: RowLocator) -> None:
    bad = ~np.isfinite(grades)
    if bad.any():
        line, text = locate(int(np.flatnonzero(bad)[0]))
        raise ParseError("grade is not a finite number", path=path, line=line, text=text)


def _judged_twice(doc: str, query: str, row: int, path: str, locate: RowLocator) -> ParseError:
    line, text = locate(row)
    return ParseError(f"document {doc!r} is judged twice for query {query!r}", path=path, line=line, text=text)


def assemble_run(qcodes: np.ndarray | None, qvocab: np.ndarray, dcodes: np.ndarray | None,
                 dvocab: np.ndarray | None, scores: np.ndarray | None, *, name: str | None, path: str,
                 locate: RowLocator, ranks: np.ndarray | None = None,
                 raw_docs: Utf8Column | pa.ChunkedArray | None = None,
                 offsets: np.ndarray | None = None, texts: np.ndarray | None = None, ids_checked: bool = False) -> Run:
    """Build a :class:`Run` from per-row codes (or raw Arrow document ids, coded lazily). NaN scores
    are a :class:`ParseError` at their line.

    Without scores but with ``ranks``, each query's rows are ordered by rank (stable). With ``offsets``
    (rows already grouped: ``qvocab`` holds one id per group), ``qcodes`` is not needed. ``texts`` (one per
    row, in file order) follow their rows. ``ids_checked``: the raw document ids came from the C tokenizer,
    which stops at an empty field and at any control byte (a NUL among them), so they are not looked at again."""
    if offsets is not None:
        _check_group_ids(qvocab, offsets, path, locate)
    else:
        assert qcodes is not None, "per-row query codes or group offsets"
        _check_empty_ids(qvocab, qcodes, "query id", path, locate)
    if raw_docs is not None:
        if not ids_checked:
            _check_raw_ids(raw_docs, path, locate)
    else:
        assert dcodes is not None and dvocab is not None, "coded or raw document ids"
        _check_empty_ids(dvocab, dcodes, "document id", path, locate)
    if scores is not None:
        bad = np.isnan(scores)
        if bad.any():
            line, text = locate(int(np.flatnonzero(bad)[0]))
            raise ParseError("score is NaN (scores must be comparable numbers)", path=path, line=line, text=text)
    if offsets is not None:
        qids, perm = qvocab, None
    else:
        assert qcodes is not None
        qids, offsets, perm = group_codes(qcodes, qvocab)
    if ranks is not None and scores is None:
        first = np.repeat(np.arange(len(qids)), np.diff(offsets))
        base = np.arange(int(offsets[-1])) if perm is None else perm
        order = np.lexsort((ranks[base], first))
        perm = base[order]
    if perm is not None:
        if isinstance(raw_docs, Utf8Column):
            raw_docs = raw_docs.take(perm)
        elif raw_docs is not None:
            import pyarrow as pa

            raw_docs = raw_docs.take(pa.array(perm))
        else:
            assert dcodes is not None
            dcodes = dcodes[perm]
        scores = None if scores is None else scores[perm]
        texts = None if texts is None else texts[perm]
    sc = None if scores is None else np.ascontiguousarray(scores, dtype=np.float64)
    if raw_docs is not None:
        return Run(qids, offsets, None, None, sc, name=name, raw_docs=raw_docs, texts=texts)
    return Run(qids, offsets, np.ascontiguousarray(dcodes, dtype=np.int32), dvocab, sc, name=name, texts=texts)


def assemble_qrels(qcodes: np.ndarray, qvocab: np.ndarray, dcodes: np.ndarray, dvocab: np.ndarray,
                   grades: np.ndarray, *, path: str, locate: RowLocator, units: np.ndarray | None = None) -> Qrels:
    """Build :class:`Qrels` from per-row codes; a document judged twice for one query is a
    :class:`ParseError` at the second judgment's line (unless ``units`` groups the rows)."""
    _check_empty_ids(qvocab, qcodes, "query id", path, locate)
    _check_empty_ids(dvocab, dcodes, "document id", path, locate)
    _check_grades(grades, path, locate)
    qids, offsets, perm = group_codes(qcodes, qvocab)
    rows = np.arange(len(qcodes)) if perm is None else perm
    dc = dcodes[rows]
    if units is None:
        seg = np.repeat(np.arange(len(qids)), np.diff(offsets))
        dup = first_duplicate(seg, dc, len(dvocab))
        if dup.any():
            row = int(rows[np.flatnonzero(dup)[0]])
            raise _judged_twice(dvocab[dcodes[row]], qvocab[qcodes[row]], row, path, locate)
    g = grades[rows]
    u = None if units is None else np.ascontiguousarray(units[rows], dtype=np.int64)
    return Qrels(qids, offsets, np.ascontiguousarray(dc, dtype=np.int32), dvocab,
                 np.ascontiguousarray(g, dtype=np.float64), u)


def assemble_qrels_raw(qvocab: np.ndarray, offsets: np.ndarray, raw_docs: Utf8Column | pa.Array, grades: np.ndarray, *,
                       path: str, locate: RowLocator, ids_checked: bool = False) -> Qrels | None:
    """:class:`Qrels` from rows already grouped by query (``qvocab[i]`` owns rows ``offsets[i]`` to
    ``offsets[i+1]-1``), keeping the document ids as raw Arrow strings (coded only if something asks):
    the check for a document judged twice is a hash scan per query in C. None without the C helper (the
    caller then codes the ids and uses :func:`assemble_qrels`). ``ids_checked``: as :func:`assemble_run`'s."""
    from ragrade._ingest import _accel, arrow_strings

    if isinstance(raw_docs, Utf8Column):
        raw_docs = Utf8Column([raw_docs.contiguous()])
        strings: tuple[Any, Any] | None = raw_docs.chunks[0]
    else:
        import pyarrow as pa

        if isinstance(raw_docs, pa.ChunkedArray):
            raw_docs = contiguous(raw_docs)
        strings = arrow_strings(raw_docs) if _accel is not None else None
    if strings is None or _accel is None:
        return None
    _check_group_ids(qvocab, offsets, path, locate)
    if not ids_checked:
        _check_raw_ids(raw_docs, path, locate)
    _check_grades(grades, path, locate)
    dup = _accel.first_duplicate_in_segments(strings[0], strings[1], offsets)
    if dup >= 0:
        q = qvocab[np.searchsorted(offsets, dup, side="right") - 1]
        doc = raw_docs.decoded(np.array([dup]))[0] if isinstance(raw_docs, Utf8Column) else raw_docs[dup].as_py()
        raise _judged_twice(doc, q, dup, path, locate)
    return Qrels(qvocab, offsets, None, None, np.ascontiguousarray(grades, dtype=np.float64), raw_docs=raw_docs)


def check_nonempty(n_rows: int, path: str, what: str) -> None:
    """An :class:`~ragrade.errors.EmptyFileError` when a file gave no rows."""
    if n_rows == 0:
        raise EmptyFileError(f"the file is empty: no {what} found", path=path)
