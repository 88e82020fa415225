"""Headered CSV/TSV, JSONL and Parquet: each is read into an Arrow table (by pyarrow), then turned into
a :class:`~ragrade.data.Run` / :class:`~ragrade.data.Qrels` by the same column logic.

Two layouts are understood, in every one of these formats:

* **rows**: one (query, doc, score/grade[, rank]) per row, e.g. ``{"query": "q1", "doc": "d3", "score": 2.5}``;
* **lists** (JSONL and Parquet): one query per row with a list column: ``{"query": "q1", "retrieved":
  ["d1", "d3"]}`` (optional ``"scores"``), ``{"query": "q1", "gold": ["d1"]}`` (optional ``"grades"``) or
  ``{"query": "q1", "groups": [["d1", "d2"], ["d3"]]}``.

Column names are recognised case-insensitively from common spellings (``query``/``query_id``/``qid``/
``query-id``; ``doc``/``doc_id``/``docid``/``corpus-id``; ``score``; ``grade``/``relevance``/``rel``/``label``;
``rank``) and can be given explicitly (``query_col=``, ``doc_col=``, ``score_col=``, ``grade_col=``,
``rank_col=``).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragrade._arrays import contiguous
from ragrade.data import Qrels, Run
from ragrade.errors import ParseError
from ragrade.io.assembly import (
    assemble_qrels,
    assemble_qrels_raw,
    assemble_run,
    check_nonempty,
    dictionary_codes,
    float_column,
    query_groups,
    str_dict,
)
from ragrade.io.columns import (
    DOC_NAMES,
    GOLD_LIST_NAMES,
    GRADE_NAMES,
    GROUP_NAMES,
    QUERY_NAMES,
    RANK_NAMES,
    RUN_LIST_NAMES,
    SCORE_NAMES,
    pick_column,
)
from ragrade.io.sniffing import looks_like_header, value_segments, values_are_ranks
from ragrade.io.textfiles import (
    PathLike,
    Progress,
    default_run_name,
    first_line,
    is_gzip,
    json_object_lines,
    locate_nonblank,
    not_utf8,
    open_binary,
    read_text_lines,
)

RowText = Callable[[int], tuple[int | None, str | None]]


# -- loading Arrow tables ----------------------------------------------------------------------------
def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class _ProgressReader(io.RawIOBase):
    """A read-only byte stream over a (possibly gzipped) file that reports progress in on-disk bytes."""

    def __init__(self, path: str, progress: Progress) -> None:
        super().__init__()
        self._stream, self._raw = open_binary(path)
        self._total = _size(path)
        self._progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = self._stream.readinto(b)  # type: ignore[attr-defined]
        self._progress(self._raw.tell(), self._total)
        return n or 0

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
            self._raw.close()
        super().close()


def arrow_read(path: str, progress: Progress | None, reader: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``reader(source, *args, **kwargs)`` (a pyarrow reader) on the file at ``path``.

    Without ``progress`` the source is Arrow's own file (native, fastest; gzip told by content, not name,
    so a compressed file without ``.gz`` and a plain one with it are both read right). With it, a Python
    stream that counts the bytes read; then this function returns (or raises) only once Arrow's threads
    have let go of that stream. pyarrow reads a Python stream from its own threads (read-ahead), and a
    reader that fails returns before they are done with it; the thread that drops the last reference
    must take the GIL, and were the interpreter exiting by then (the CLI printing the error), it would be
    killed inside C++ code and the process abort (status 134) after correct output."""
    if progress is None:
        with pa.input_stream(path, compression="gzip" if is_gzip(path) else None) as src:
            return reader(src, *args, **kwargs)
    import sys
    import time
    import traceback

    stream = io.BufferedReader(_ProgressReader(path, progress), buffer_size=1 << 20)
    base = sys.getrefcount(stream)
    source: Any = pa.PythonFile(stream, mode="r")
    error: BaseException | None = None
    try:
        result = reader(source, *args, **kwargs)
    except BaseException as exc:  # re-raised below, once Arrow is done with the stream
        error = exc
        traceback.clear_frames(exc.__traceback__)  # finished frames must not keep the file alive
        result = None
    source = None  # our handle; Arrow's tasks may still hold the C++ file, which holds the stream
    deadline = time.monotonic() + 30.0
    while sys.getrefcount(stream) > base and time.monotonic() < deadline:
        time.sleep(0.001)  # releases the GIL: Arrow's threads can finish
    stream.close()
    if error is not None:
        raise error
    return result


def load_delimited(path: PathLike, delimiter: str, *, header: bool | None = None, kind: str,
                   progress: Progress | None = None) -> tuple[pa.Table, RowText]:
    """Read a CSV/TSV file with pyarrow. ``header=None`` sniffs: the first row is a header unless it looks
    like data (its last field is a number and no field is a known column name); a headerless file's
    columns are taken positionally as ``query, doc[, score|grade]``."""
    import pyarrow.csv as pacsv

    p = os.fspath(path)
    first = first_line(p)
    if first is None:
        check_nonempty(0, p, "rows")
    fields = first.split(delimiter) if first is not None else []
    if header is None:
        header = looks_like_header(fields)
    skip = 1 if header else 0
    read = pacsv.ReadOptions(block_size=16 << 20)
    if not header:
        value = "score" if kind == "run" else "grade"
        names = ["query", "doc", value, *[f"column{i}" for i in range(4, len(fields) + 1)]][: len(fields)]
        read = pacsv.ReadOptions(column_names=names, block_size=16 << 20)
    parse = pacsv.ParseOptions(delimiter=delimiter, quote_char='"' if delimiter == "," else False)
    if header:
        # Read the header row to type the id columns as dictionary strings (never numbers: "007" stays "007").
        names = [f.strip('"') for f in fields] if delimiter == "," else list(fields)
    convert = pacsv.ConvertOptions(
        column_types={n: str_dict() for n in names if n.strip().strip('"').lower() in {*QUERY_NAMES, *DOC_NAMES}},
        strings_can_be_null=False, null_values=[""], quoted_strings_can_be_null=False,
    )
    locate: RowText = lambda r: locate_nonblank(p, r, skip=skip)  # noqa: E731
    try:
        table = arrow_read(p, progress, pacsv.read_csv, read_options=read, parse_options=parse,
                           convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        _locate_delimited_error(p, delimiter, len(fields), skip, exc)
        raise  # pragma: no cover
    clean = [n.strip().strip('"').strip() for n in table.column_names]
    if clean != table.column_names:
        table = table.rename_columns(clean)
    if not header and kind == "run" and len(names) == 3:
        table = _third_column(table, p, locate)
    if progress is not None:
        progress(_size(p), _size(p))
    return table, locate


def _third_column(table: pa.Table, path: str, locate: RowText) -> pa.Table:
    """A headerless ``query, doc, NUMBER`` run: the number is a rank (MS MARCO's ``qid pid rank``) or a
    score, by the rule of :func:`~ragrade.io.sniffing.values_are_ranks` (docs/formats.md)."""
    col = table.column("score")
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)) or col.null_count:
        return table  # not all numbers: the score reader names the bad value
    qcodes, _ = dictionary_codes(table.column("query"))
    starts = value_segments(qcodes)
    values = np.asarray(col.to_numpy(), dtype=np.float64)
    if values_are_ranks(values, starts, qcodes[starts[:-1]], path=path, locate=locate):
        return table.rename_columns(["query", "doc", "rank"])
    return table


def _locate_delimited_error(path: str, delimiter: str, ncol: int, skip: int, exc: Exception) -> None:
    import csv

    if "UTF8" in str(exc) or "UTF-8" in str(exc):  # pyarrow: "invalid UTF8 data": say where, and what to do
        bad = not_utf8(path)
        if bad is not None:
            raise bad
    seen = 0
    for i, text in read_text_lines(path):
        if not text.strip():
            continue
        seen += 1
        if seen <= skip:
            continue
        row = next(csv.reader([text], delimiter=delimiter)) if delimiter == "," else text.split(delimiter)
        if len(row) != ncol:
            raise ParseError(f"expected {ncol} columns separated by {delimiter!r}, got {len(row)}",
                             path=path, line=i, text=text)
    raise ParseError(f"cannot parse the file ({exc})", path=path)


def load_jsonl(path: PathLike, progress: Progress | None = None) -> tuple[pa.Table, RowText]:
    """Read JSON Lines with ``pyarrow.json``; if pyarrow refuses the file (mixed types in one field, bad
    JSON), fall back to a line-by-line reader that either succeeds or names the bad line."""
    import pyarrow.json as pajson

    p = os.fspath(path)
    if first_line(p) is None:
        check_nonempty(0, p, "JSON lines")
    locate: RowText = lambda r: locate_nonblank(p, r)  # noqa: E731
    try:
        table = arrow_read(p, progress, pajson.read_json, read_options=pajson.ReadOptions(block_size=16 << 20))
        table.validate(full=True)  # pyarrow's JSON reader lets invalid UTF-8 through in strings
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        table = _jsonl_python(p)
    if progress is not None:
        progress(_size(p), _size(p))
    return table, locate


def _jsonl_python(path: str) -> pa.Table:
    """Fallback JSONL reader: values are kept as written, ids normalised to strings."""
    rows: list[dict[str, Any]] = []
    where: list[tuple[int, str]] = []
    for i, text, obj in json_object_lines(path):
        rows.append(obj)
        where.append((i, text))
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    cols: dict[str, Any] = {}
    for k in keys:
        vals = [r.get(k) for r in rows]
        try:
            cols[k] = pa.array(vals)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
            # values of several JSON types in one field: only what the id rule turns into text is (an
            # integer, an integral float next to strings); an object, a boolean, 1.5 is refused by line,
            # as the Arrow path refuses such a column (docs/formats.md, "Ids")
            if any(not _id_like(v) for v in vals):
                raise _mixed_types(k, vals, where, path) from None
            try:
                cols[k] = pa.array([_stringify(v) for v in vals])
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
                raise _mixed_types(k, vals, where, path) from None
    return pa.table(cols)


def _id_like(v: Any) -> bool:
    """Whether the id rule reads ``v`` as text: None (missing, reported later), a string, an integer (not
    a boolean), a float with an integral value, or a list of such (a list column)."""
    if v is None or isinstance(v, str):
        return True
    if isinstance(v, list):
        return all(_id_like(x) for x in v)
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and math.isfinite(v) and v.is_integer())


def _mixed_types(key: str, vals: list[Any], where: list[tuple[int, str]], path: str) -> ParseError:
    """The first line whose value of ``key`` has a JSON type that cannot share a column with the first
    value's (a string and a whole number can: the id rule reads both as text; so can two numbers)."""
    def kind(v: Any) -> str:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return "whole" if _id_like(v) else "number"
        return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(v), type(v).__name__)

    def shown(k: str) -> str:
        return "a number" if k in ("whole", "number") else k

    fits = ({"a string", "whole"}, {"whole", "number"})
    present = [(j, v) for j, v in enumerate(vals) if v is not None]
    first = kind(present[0][1]) if present else "null"
    for j, v in present:
        k = kind(v)
        if k != first and {k, first} not in fits:
            line, text = where[j]
            return ParseError(f"field {key!r} is {shown(k)} here but {shown(first)} on earlier lines", path=path,
                              line=line, text=text)
    at: tuple[int | None, str | None] = where[present[0][0]] if present else (None, None)
    return ParseError(f"field {key!r} holds values that cannot form one column", path=path, line=at[0], text=at[1])


def _stringify(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, list):
        return [_stringify(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def load_parquet(path: PathLike, progress: Progress | None = None) -> tuple[pa.Table, RowText]:
    import pyarrow.parquet as pq

    p = os.fspath(path)
    try:
        # Query ids are read in Parquet's own dictionary encoding: grouping compares codes, not strings.
        schema = pq.read_schema(p)
        keys = {n.lower() for n in QUERY_NAMES}
        as_dict = [f.name for f in schema if f.name.lower() in keys and pa.types.is_string(f.type)]
        table = pq.read_table(p, read_dictionary=as_dict or None)
    except (pa.ArrowException, OSError) as exc:
        raise ParseError(f"not a readable Parquet file ({exc})", path=p) from None
    if progress is not None:
        progress(_size(p), _size(p))
    return table, row_locator(table)


def row_locator(table: pa.Table) -> RowText:
    """Parquet has no lines: an error names the row (1-based) and shows its values, as a line's text."""

    def locate(r: int) -> tuple[int | None, str | None]:
        try:
            values = table.slice(r, 1).to_pylist()[0]
        except (IndexError, pa.ArrowException):  # pragma: no cover - a row out of range
            return None, f"row {r + 1}"
        shown = ", ".join(f"{k}={_short(v)}" for k, v in values.items())
        return None, f"row {r + 1}: {shown}"

    return locate


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


# -- table -> Run / Qrels ----------------------------------------------------------------------------
def _list_column(table: pa.Table, names: tuple[str, ...], wanted: str | None) -> str | None:
    cols = {n.lower(): n for n in table.column_names}
    candidates = (wanted,) if wanted else names
    for c in candidates:
        if c is None:
            continue
        real = cols.get(c.lower())
        if real is not None and (pa.types.is_list(table.schema.field(real).type)
                                 or pa.types.is_large_list(table.schema.field(real).type)):
            return real
    return None


def _flatten(table: pa.Table, list_col: str, query_col: str, path: str, locate: RowText,
             value_col: str | None) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray | None, np.ndarray]:
    """Explode a list column: ``(query per item, item, value per item or None, row of each item)``."""
    lists = pa.chunked_array([c.cast(pa.list_(c.type.value_type)) for c in table.column(list_col).chunks]) \
        if pa.types.is_large_list(table.schema.field(list_col).type) else table.column(list_col)
    r = _null(lists)
    if r is not None:
        line, text = locate(r)
        raise ParseError(f"{list_col!r} is missing or null", path=path, line=line, text=text)
    lengths = pc.list_value_length(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    parent = np.repeat(np.arange(len(lengths)), lengths)
    items = pc.list_flatten(lists)
    queries = table.column(query_col).take(pa.array(parent))
    values = None
    if value_col is not None:
        vlists = table.column(value_col)
        # A missing value list counts as empty: fine for an empty ranking, an error otherwise.
        vlen = pc.list_value_length(vlists).fill_null(0).to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(vlen != lengths)
        if len(bad):
            line, text = locate(int(bad[0]))
            raise ParseError(f"{value_col!r} and {list_col!r} have different lengths", path=path, line=line,
                             text=text)
        flat = pc.list_flatten(vlists)
        values = float_column(pa.chunked_array([flat]) if isinstance(flat, pa.Array) else flat,
                              value_col, path, lambda i: locate(int(parent[i])))
    return queries, items, values, parent


def _null(col: pa.ChunkedArray) -> int | None:
    if col.null_count == 0:
        return None
    return int(np.flatnonzero(pc.is_null(col).to_numpy(zero_copy_only=False))[0])


def _id_type_ok(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        t = t.value_type
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
            or pa.types.is_floating(t))


def check_id_column(table: pa.Table, name: str, what: str, path: str, list_hint: bool = False) -> None:
    """An id column must hold strings or numbers: anything else (a list per row, a struct, a date, a
    boolean...) is a :class:`ParseError` naming the file, the column and its type."""
    t = table.schema.field(name).type
    if pa.types.is_null(t) or _id_type_ok(t):
        return
    hint = ""
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        hint = (f"; a list per row is read as one query's ranking or judgments when the column is named as "
                f"such (list_col={name!r})" if list_hint else "; ids must be one string or number per row")
    raise ParseError(f"the {what} column {name!r} holds {t}, not ids (strings or numbers){hint}", path=path)


def _ids(col: pa.ChunkedArray | pa.Array, what: str, path: str, locate: RowText,
         row_of: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(col, pa.Array):
        col = pa.chunked_array([col])
    r = _null(col)
    if r is not None:
        line, text = locate(r if row_of is None else int(row_of[r]))
        raise ParseError(f"missing {what}", path=path, line=line, text=text)
    if not _id_type_ok(col.type):
        raise ParseError(f"the {what} values are {col.type}, not ids (strings or numbers)", path=path)
    if pa.types.is_floating(col.type):  # a float that is not whole is no id: named with its line
        f = col.to_numpy(zero_copy_only=False).astype(np.float64)
        bad = np.flatnonzero(~(np.isfinite(f) & (f == np.floor(f))))
        if len(bad):
            line, text = locate(int(bad[0]) if row_of is None else int(row_of[int(bad[0])]))
            raise ParseError(f"the {what} {float(f[bad[0]])!r} is a number that is not whole: ids must be strings "
                             "or integers (write it as text, in quotes)", path=path, line=line, text=text)
    return dictionary_codes(col)


def table_to_run(table: pa.Table, path: PathLike, locate: RowText, *, name: str | None = None,
                 query_col: str | None = None, doc_col: str | None = None, score_col: str | None = None,
                 rank_col: str | None = None, list_col: str | None = None, text_col: str | None = None) -> Run:
    p = os.fspath(path)
    check_nonempty(table.num_rows, p, "rows")
    names = table.column_names
    q = pick_column(names, query_col, QUERY_NAMES, "query", p)
    assert q is not None
    check_id_column(table, q, "query id", p)
    lst = _list_column(table, RUN_LIST_NAMES, list_col)
    if name is None:
        meta = table.schema.metadata or {}
        stored = meta.get(b"ragrade.run_name")
        name = stored.decode("utf-8") if stored else default_run_name(p)
    if lst is not None:
        sc = pick_column(names, score_col, ("scores", "score"), "score", p, required=False)
        if sc is not None and not pa.types.is_list(table.schema.field(sc).type):
            sc = None
        queries, items, scores, parent = _flatten(table, lst, q, p, locate, sc)
        row_loc: RowText = lambda i: locate(int(parent[i]))  # noqa: E731
        lcodes, lvocab = _ids(queries, "query id", p, row_loc)
        dcodes, dvocab = _ids(items, "document id", p, row_loc)
        texts = _list_texts(table, lst, text_col, p, locate)
        run = assemble_run(lcodes, lvocab, dcodes, dvocab, scores, name=name, path=p, locate=row_loc, texts=texts)
        return _with_empty_lists(run, table, q, lengths_zero=_empty_rows(table, lst), path=p, locate=locate)
    d = pick_column(names, doc_col, DOC_NAMES, "doc", p, exclude=(q,))
    assert d is not None
    check_id_column(table, d, "document id", p, list_hint=True)
    sc = pick_column(names, score_col, SCORE_NAMES, "score", p, required=False)
    rk = pick_column(names, rank_col, RANK_NAMES, "rank", p, required=False)
    tc = pick_column(names, text_col, TEXT_NAMES, "text", p, required=False, exclude=(q, d))
    texts = None if tc is None else _text_values(table.column(tc), tc, p)
    qcol = table.column(q)
    if _string_like(qcol):
        r = _null(qcol)
        if r is not None:
            line, text = locate(r)
            raise ParseError("missing query id", path=p, line=line, text=text)
        groups = query_groups(qcol)  # runs of equal neighbours: no hashing and no codes for grouped files
        if groups is not None:
            qcodes, (qvocab, qoff) = None, groups
        else:
            (qcodes, qvocab), qoff = dictionary_codes(qcol), None
    else:
        (qcodes, qvocab), qoff = _ids(qcol, "query id", p, locate), None
    scores = float_column(table.column(sc), "score", p, locate) if sc is not None else None
    ranks = float_column(table.column(rk), "rank", p, locate) if (rk is not None and sc is None) else None
    dcol = table.column(d)
    if pa.types.is_string(dcol.type) or pa.types.is_large_string(dcol.type):
        # String ids stay raw Arrow (coded lazily), as for TREC files.
        r = _null(dcol)
        if r is not None:
            line, text = locate(r)
            raise ParseError("missing document id", path=p, line=line, text=text)
        return assemble_run(qcodes, qvocab, None, None, scores, name=name, path=p, locate=locate, ranks=ranks,
                            raw_docs=dcol if dcol.num_chunks else contiguous(dcol), offsets=qoff, texts=texts)
    dcodes, dvocab = _ids(dcol, "document id", p, locate)
    if qcodes is None:
        assert qoff is not None
        qcodes = np.repeat(np.arange(len(qvocab), dtype=np.int32), np.diff(qoff))
    return assemble_run(qcodes, qvocab, dcodes, dvocab, scores, name=name, path=p, locate=locate, ranks=ranks,
                        texts=texts)


#: Column names read as the retrieved texts of a run (rows layout); ``texts`` is the list layout's.
TEXT_NAMES = ("text", "contents", "content", "passage", "page_content")


def _text_values(col: pa.ChunkedArray | pa.Array, name: str, path: str) -> np.ndarray:
    """A text column as an object array (None where a row has no text); anything but strings is refused."""
    t = col.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)
            or (pa.types.is_dictionary(t) and pa.types.is_string(t.value_type))):
        raise ParseError(f"the text column {name!r} holds {t}, not strings", path=path)
    if pa.types.is_dictionary(t):
        col = col.cast(pa.string())
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)


def _list_texts(table: pa.Table, lst: str, text_col: str | None, path: str, locate: RowText) -> np.ndarray | None:
    """List layout: a ``texts`` list column, as long as the ids' list in every row."""
    tc = _list_column(table, ("texts",), text_col)
    if tc is None:
        return None
    lengths = pc.list_value_length(table.column(lst)).to_numpy(zero_copy_only=False)
    tlen = pc.list_value_length(table.column(tc)).fill_null(0).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(tlen != lengths)
    if len(bad):
        line, text = locate(int(bad[0]))
        raise ParseError(f"{tc!r} and {lst!r} have different lengths", path=path, line=line, text=text)
    return _text_values(pc.list_flatten(table.column(tc)), tc, path)


def _empty_rows(table: pa.Table, lst: str) -> np.ndarray:
    return np.flatnonzero(pc.list_value_length(table.column(lst)).to_numpy(zero_copy_only=False) == 0)


def _with_empty_lists(run: Run, table: pa.Table, qcol: str, lengths_zero: np.ndarray, path: str,
                      locate: RowText) -> Run:
    """List layout: a query whose list is empty is kept, as an empty retrieved list."""
    if len(lengths_zero) == 0:
        return run
    extra = table.column(qcol).take(pa.array(lengths_zero))
    extra_ids = [str(x) for x in extra.to_pylist()]  # only the (few) empty queries
    have = set(run.query_ids.tolist())
    new = [x for x in dict.fromkeys(extra_ids) if x not in have]
    if not new:
        return run
    qids = np.concatenate([run.query_ids, np.asarray(new, dtype=object)])
    offsets = np.concatenate([run.offsets, np.full(len(new), run.offsets[-1], dtype=np.int64)])
    return Run(qids, offsets, run.doc_codes.copy(), run.doc_vocab.copy(),
               None if run.scores is None else run.scores.copy(), name=run.name, texts=run.texts)


def table_to_qrels(table: pa.Table, path: PathLike, locate: RowText, *, query_col: str | None = None,
                   doc_col: str | None = None, grade_col: str | None = None, list_col: str | None = None,
                   unit_col: str | None = None) -> Qrels:
    p = os.fspath(path)
    check_nonempty(table.num_rows, p, "rows")
    names = table.column_names
    q = pick_column(names, query_col, QUERY_NAMES, "query", p)
    assert q is not None
    check_id_column(table, q, "query id", p)
    grp = _list_column(table, GROUP_NAMES, None if list_col is None else list_col)
    if grp is not None and pa.types.is_list(table.schema.field(grp).type.value_type):
        return _groups_to_qrels(table, q, grp, p, locate)
    lst = _list_column(table, GOLD_LIST_NAMES, list_col)
    if lst is not None:
        gc = pick_column(names, grade_col, ("grades", "grade"), "grade", p, required=False)
        if gc is not None and not pa.types.is_list(table.schema.field(gc).type):
            gc = None
        queries, items, grades, parent = _flatten(table, lst, q, p, locate, gc)
        row_loc: RowText = lambda i: locate(int(parent[i]))  # noqa: E731
        qcodes, qvocab = _ids(queries, "query id", p, row_loc)
        dcodes, dvocab = _ids(items, "document id", p, row_loc)
        g = np.ones(len(dcodes)) if grades is None else grades
        return assemble_qrels(qcodes, qvocab, dcodes, dvocab, g, path=p, locate=row_loc)
    d = pick_column(names, doc_col, DOC_NAMES, "doc", p, exclude=(q,))
    assert d is not None
    check_id_column(table, d, "document id", p, list_hint=True)
    gc = pick_column(names, grade_col, GRADE_NAMES, "grade", p, required=False)
    uc = pick_column(names, unit_col, ("unit", "group"), "unit", p, required=False)
    qcol, dcol = table.column(q), table.column(d)
    if uc is None and _string_like(qcol) and _plain_strings(dcol) and qcol.null_count == 0 \
            and dcol.null_count == 0:
        groups = query_groups(qcol)  # rows grouped by query (the usual file): ids stay raw Arrow strings
        if groups is not None:
            grades = float_column(table.column(gc), "grade", p, locate) if gc is not None \
                else np.ones(table.num_rows)
            qrels = assemble_qrels_raw(groups[0], groups[1], contiguous(dcol), grades, path=p, locate=locate)
            if qrels is not None:
                return qrels
    qcodes, qvocab = _ids(qcol, "query id", p, locate)
    dcodes, dvocab = _ids(dcol, "document id", p, locate)
    grades = float_column(table.column(gc), "grade", p, locate) if gc is not None else np.ones(len(dcodes))
    units = None
    if uc is not None:
        units = float_column(table.column(uc), "unit", p, locate).astype(np.int64)
    return assemble_qrels(qcodes, qvocab, dcodes, dvocab, grades, path=p, locate=locate, units=units)


def _plain_strings(col: pa.ChunkedArray) -> bool:
    return pa.types.is_string(col.type) or pa.types.is_large_string(col.type)


def _string_like(col: pa.ChunkedArray) -> bool:
    """Strings, or dictionary-encoded strings."""
    t = col.type
    return _plain_strings(col) or (pa.types.is_dictionary(t) and pa.types.is_string(t.value_type))


def _groups_to_qrels(table: pa.Table, q: str, grp: str, path: str, locate: RowText) -> Qrels:
    """AutoRAG-style groups (list of lists of ids): built through :meth:`Qrels.from_groups` (groups
    files are small: one Python list per query)."""
    from ragrade.errors import InputError

    qs = [str(x) for x in table.column(q).to_pylist()]
    groups = table.column(grp).to_pylist()
    for i, g in enumerate(groups):
        if g is None or any(x is None or len(x) == 0 for x in g):
            line, text = locate(i)
            raise ParseError("a query's groups must be non-empty lists of ids", path=path, line=line, text=text)
    for i, (qid, g) in enumerate(zip(qs, groups, strict=True)):
        for grp_ in g:
            ids = [str(x) for x in grp_]
            bad = next((x for x in (qid, *ids) if "\x00" in x), None)
            twice = next((x for k, x in enumerate(ids) if x in ids[:k]), None)
            if bad is not None or twice is not None:
                line, text = locate(i)
                msg = (f"an id contains a NUL byte ({bad!r}): ids are text without NUL bytes" if bad is not None
                       else f"document {twice!r} is listed twice in one group of query {qid!r} (a document "
                            "judged twice is an error in every format)")
                raise ParseError(msg, path=path, line=line, text=text)
    merged: dict[str, list[list[str]]] = {}
    for qid, g in zip(qs, groups, strict=True):
        merged.setdefault(qid, []).extend([[str(x) for x in grp_] for grp_ in g])
    try:
        return Qrels.from_groups(list(merged.values()), query_ids=list(merged.keys()))
    except InputError as exc:
        raise ParseError(str(exc), path=path) from None


def delimiter_for(fmt: str) -> str:
    return "\t" if fmt == "tsv" else ","


__all__ = [
    "delimiter_for",
    "is_gzip",
    "load_delimited",
    "load_jsonl",
    "load_parquet",
    "table_to_qrels",
    "table_to_run",
]
