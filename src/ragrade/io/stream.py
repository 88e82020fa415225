"""TREC and Parquet inputs read piece by piece, for evaluation in bounded memory (``docs/scale.md``).

Two kinds of pieces:

* **windows** (:func:`windows`): consecutive whole query groups of a file whose rows come grouped by
  query, each built into a :class:`~ragrade.data.Run` / :class:`~ragrade.data.Qrels` by the same code as
  the whole-file readers (the C tokenizer over a window of the memory-mapped file, else pyarrow's parser;
  Parquet row batches through :func:`~ragrade.io.tables.table_to_run`). A window ends where a query
  ends, so every query is whole in one window. :class:`NotGrouped` is raised when a window finds a query
  whose rows are not adjacent (the caller then partitions the file instead).
* **blocks** (:func:`blocks`): consecutive rows cut anywhere, as Arrow tables, with each row's query id in
  the one id form (:func:`query_keys`), for partitioning a file by query hash.

Errors name the file and the line (TREC) or row (Parquet) in the whole file, as the whole-file readers do.
The three-column TREC layout (ranks or scores, decided by a rule over the whole file) is decided by
:class:`RankRule`, which applies that rule to a file seen piece by piece.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ragrade._arrays import contiguous
from ragrade.data import Qrels, Run
from ragrade.errors import InputError, NotGrouped, ParseError
from ragrade.io import trec
from ragrade.io.assembly import (
    assemble_qrels,
    assemble_qrels_raw,
    assemble_run,
    dictionary_codes,
    query_groups,
)
from ragrade.io.columns import QUERY_NAMES, pick_column
from ragrade.io.formats import REGISTRY, detect_format
from ragrade.io.sniffing import value_segments
from ragrade.io.textfiles import default_run_name, is_gzip, locate_nonblank

#: Formats the out-of-core path reads piece by piece (those of the registry marked ``out_of_core``).
STREAM_FORMATS = tuple(f.name for f in REGISTRY if f.out_of_core)

_DATA_LINE = re.compile(rb"(?m)^[ \t\r\v\f]*[^#\s]")
_BLANK = b" \t\r\v\f"


# -- the source ----------------------------------------------------------------------------------------
@dataclass
class Source:
    """One input file (or Parquet directory) to read piece by piece."""

    path: str
    kind: str  # "run" or "qrels"
    format: str  # "trec" family name, or "parquet"
    size: int  # bytes on disk
    rows: int  # data rows (Parquet: exact; TREC: estimated from the first lines)
    name: str | None = None  # the run's name
    layout: Any = None  # TREC: the io.trec Layout
    files: list[str] = field(default_factory=list)  # Parquet: the files, in reading order
    options: dict[str, Any] = field(default_factory=dict)  # Parquet: column names, prefer

    @property
    def is_trec(self) -> bool:
        return self.format != "parquet"

    @property
    def three_columns(self) -> bool:
        """A TREC three-column run whose numbers are ranks or scores by the whole-file rule."""
        return self.is_trec and self.layout is trec.RUN3

    def locator(self, first_row: int, table: pa.Table | None = None) -> Callable[[int], tuple[int | None, str | None]]:
        """Line (TREC) or row (Parquet) of the whole file for row ``r`` of a piece starting at data row
        ``first_row``."""
        if self.is_trec:
            path = self.path
            return lambda r: locate_nonblank(path, first_row + r, comments=True)

        def locate(r: int) -> tuple[int | None, str | None]:
            if table is None:  # pragma: no cover - pieces always carry their table
                return None, f"row {first_row + r + 1}"
            values = table.slice(r, 1).to_pylist()[0]
            shown = ", ".join(f"{k}={short_repr(v)}" for k, v in values.items())
            return None, f"row {first_row + r + 1}: {shown}"

        return locate


def short_repr(v: Any) -> str:
    """``repr(v)``, cut to 60 characters (a value shown in a message)."""
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def open_source(path: Any, kind: str, format: str | None = None, name: str | None = None,
                **options: Any) -> Source:
    """Describe ``path`` for piecewise reading; an :class:`~ragrade.errors.InputError` for a format the
    out-of-core path does not read (CSV, TSV, JSONL: read them whole, or convert them to Parquet with
    ``ragrade convert``)."""
    from ragrade.io.sources import check_input, is_pipe

    p = check_input(path, directory_ok=True)
    if is_pipe(p):
        raise ParseError("a pipe is read more than once out of core: copy it first (ragrade.io.sources."
                         "readable_path does)", path=p)
    if os.path.isdir(p):
        fmt = "parquet" if format in (None, "parquet", "pq") else str(format)
        if fmt != "parquet":
            raise ParseError("is a directory: only a Parquet dataset can be a directory", path=p)
    else:
        fmt = detect_format(p, format)
    if fmt not in STREAM_FORMATS:
        raise InputError(f"{p}: evaluation in bounded memory reads TREC files and Parquet files or directories, "
                         f"not {fmt}; convert it first (ragrade convert {os.path.basename(p)} data.parquet), or "
                         f"read it whole (no --max-memory)")
    if fmt == "parquet":
        return _parquet_source(p, kind, name, options)
    if options:
        raise InputError(f"options {sorted(options)} apply to table formats, not to TREC files")
    size = os.path.getsize(p)
    if kind == "run":
        layout, tag = trec.run_layout(p, fmt)
        if name is None:
            name = tag if tag is not None else default_run_name(p)
    else:
        layout = trec.qrels_layout(p)
    return Source(p, kind, fmt, size, _estimate_lines(p, size), name=name, layout=layout)


def _estimate_lines(path: str, size: int) -> int:
    from ragrade.io.textfiles import open_binary

    stream, raw = open_binary(path)
    try:
        head = stream.read(1 << 20)
    finally:
        stream.close()
        raw.close()
    lines = max(head.count(b"\n"), 1)
    factor = 4.0 if is_gzip(path) else 1.0  # gzip: a typical ratio for TREC text
    return max(1, int(size * factor * lines / max(len(head), 1)))


def _parquet_source(p: str, kind: str, name: str | None, options: dict[str, Any]) -> Source:
    import pyarrow.dataset as ds

    try:
        dataset = ds.dataset(p, format="parquet")
        files = list(dataset.files)
        import pyarrow.parquet as pq

        rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    except (pa.ArrowException, OSError) as exc:
        raise ParseError(f"not a readable Parquet file or dataset ({exc})", path=p) from None
    if not files:
        raise ParseError("the Parquet dataset holds no file", path=p)
    size = sum(os.path.getsize(f) for f in files)
    if kind == "run" and name is None:
        import pyarrow.parquet as pq

        meta = pq.read_schema(files[0]).metadata or {}
        stored = meta.get(b"ragrade.run_name")
        name = stored.decode("utf-8") if stored else default_run_name(p)
    return Source(p, kind, "parquet", size, rows, name=name, files=files, options=dict(options))


# -- the id form of query columns ----------------------------------------------------------------------
def query_keys(col: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    """Query ids as strings in the one id form (``10``, ``10.0`` and ``"10"`` are ``"10"``), so that both
    sides of an evaluation send a query to the same partition."""
    from ragrade.data.ids import id_column

    if isinstance(col, pa.Array):
        col = pa.chunked_array([col])
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return col
    return id_column(col)


def hash_ids(ids: np.ndarray) -> np.ndarray:
    """64-bit hashes of query ids (str), stable across processes."""
    if len(ids) == 0:
        return np.zeros(0, dtype=np.uint64)
    return pd.util.hash_array(np.asarray(ids, dtype=object), categorize=False)


class SeenIds:
    """The query ids met so far, as sorted 64-bit hashes (8 bytes a query): :meth:`add` says whether any
    id of a new piece was met before. A false "met before" (two ids with one hash, odds about n^2 / 2^64)
    only sends the caller to its slower exact path."""

    def __init__(self) -> None:
        self._runs: list[np.ndarray] = []

    def contains(self, h: np.ndarray) -> np.ndarray:
        found = np.zeros(len(h), dtype=bool)
        for run in self._runs:
            if len(run) == 0:
                continue
            i = np.searchsorted(run, h)
            i[i == len(run)] = 0
            found |= run[i] == h
        return found

    def add(self, h: np.ndarray) -> bool:
        """Add the hashes; False if one was already there (or is repeated in ``h``)."""
        h = np.sort(np.asarray(h, dtype=np.uint64))
        repeated = bool(len(h) > 1 and (h[1:] == h[:-1]).any())
        fresh = not repeated and not self.contains(h).any()
        self._runs.append(h)
        # Merge runs of similar size (logarithmically many runs: lookups stay cheap).
        while len(self._runs) > 1 and len(self._runs[-2]) <= 2 * len(self._runs[-1]):
            b = self._runs.pop()
            a = self._runs.pop()
            self._runs.append(np.sort(np.concatenate([a, b]), kind="stable"))
        return fresh

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self._runs)


# -- the three-column rule over pieces -------------------------------------------------------------------
class RankRule:
    """The rule that reads a three-column TREC run's numbers as ranks or scores
    (:func:`ragrade.io.sniffing.values_are_ranks`), applied to the whole file seen piece by piece: ranks
    when every number is an integer, they strictly increase down each query's lines, and each query's
    smallest is 0 or 1; scores when a number is not an integer or they never increase down a query's lines;
    anything else is the same :class:`ParseError` as the whole-file reader's."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.all_int = True
        self.any_down = False
        self.first_up: int | None = None  # data row of the first number larger than the one above it
        self.negative = False
        self.satisfied: set[int] = set()  # queries with a run of lines starting at 0 or 1
        self.seen: set[int] = set()
        self._prev: tuple[str, float] | None = None  # last (query, number) of the previous piece

    def observe(self, values: np.ndarray, starts: np.ndarray, seg_queries: np.ndarray, first_row: int) -> None:
        """One piece: its numbers, the starts of its runs of consecutive lines with one query (length
        appended) and each run's query id."""
        v = np.asarray(values, dtype=np.float64)
        n = len(v)
        if n == 0:
            return
        prev, self._prev = self._prev, (str(seg_queries[-1]), float(v[-1]))
        if not self.all_int:
            return
        if not (np.isfinite(v).all() and (v == np.floor(v)).all()):
            self.all_int = False
            self.satisfied.clear()
            self.seen.clear()
            return
        inside = np.ones(max(n - 1, 0), dtype=bool)
        cuts = starts[1:-1] - 1
        inside[cuts[(cuts >= 0) & (cuts < n - 1)]] = False
        step = np.diff(v)[inside]
        rows = np.flatnonzero(inside) + 1
        continues = prev is not None and prev[0] == str(seg_queries[0])
        if continues:
            assert prev is not None
            step = np.concatenate(([v[0] - prev[1]], step))
            rows = np.concatenate(([0], rows))
        if (step <= 0).any():
            self.any_down = True
        up = np.flatnonzero(step > 0)
        if len(up) and self.first_up is None:
            self.first_up = first_row + int(rows[up[0]])
        if self.any_down:
            self.satisfied.clear()
            self.seen.clear()
            return
        firsts = v[starts[:-1]]
        heads = hash_ids(np.asarray(seg_queries, dtype=object))
        if continues:  # the first run continues a run of the previous piece: not a run start
            firsts, heads = firsts[1:], heads[1:]
        if (firsts < 0).any():
            self.negative = True
        self.seen.update(heads.tolist())
        self.satisfied.update(heads[np.isin(firsts, (0.0, 1.0))].tolist())

    def ranks(self) -> bool:
        """The verdict over everything observed: True for ranks, False for scores (a ParseError when the
        numbers are neither)."""
        if not self.all_int:
            return False
        if not self.any_down and not self.negative and self.seen <= self.satisfied:
            return True
        if self.first_up is None:
            return False
        line, text = self.source.locator(0)(self.first_up)
        raise ParseError(
            "the third column holds integers that are neither ranks (1, 2, 3, ... down each query's lines) nor "
            "scores that never increase down a query's lines; say which: format='msmarco' (ranks) or "
            "format='qid-doc-score' (scores), on the command line --run-format msmarco / qid-doc-score",
            path=self.source.path, line=line, text=text,
        )


# -- windows of whole query groups ---------------------------------------------------------------------
@dataclass
class Window:
    """Whole query groups: ``data`` holds the rows of the file's data rows ``first_row`` to
    ``first_row + n_rows - 1``."""

    data: Run | Qrels
    first_row: int
    n_rows: int


def windows(src: Source, window_bytes: int, window_rows: int, ranks: bool | None = None,
            rule: RankRule | None = None) -> Iterator[Window]:
    """The file's windows in order (see the module docstring). ``ranks``: how to read a three-column
    run's numbers (None: as the layout says); ``rule`` observes the numbers of every window."""
    if src.is_trec:
        yield from _trec_windows(src, max(window_bytes, 1), ranks, rule)
    else:
        yield from _parquet_windows(src, max(window_rows, 1))


def _layout(src: Source, ranks: bool | None) -> Any:
    if src.three_columns and ranks is not None:
        return trec.RUN3_RANKS if ranks else trec.RUN3_SCORES
    return src.layout


def _trec_windows(src: Source, window_bytes: int, ranks: bool | None, rule: RankRule | None) -> Iterator[Window]:
    if is_gzip(src.path):
        yield from _trec_stream_windows(src, window_bytes, ranks, rule)
        return
    from ragrade._ingest import _accel

    layout = _layout(src, ranks)
    with open(src.path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return
        a = _start(f.fileno())
        row = 0
        while a < size:
            # A fresh mapping per window: unmapping it at the end drops every page the window touched
            # (the tokenizer drops pages as it goes, but only in steps of 16 MiB).
            mm, own = trec.map_readonly(f.fileno())
            try:
                with trec.mapping_faults(src.path):
                    b = _cut_mapped(mm, f.fileno(), size, a, a + window_bytes)
                scan = None
                if _accel is not None and layout.numeric is not None:
                    try:
                        scan = trec.scan_mapped(mm, b, *_columns(layout), None, own, start=a, path=src.path)
                    except MemoryError:
                        scan = None
            finally:
                mm.close()
            if scan is not None:
                win = _from_scan(src, layout, scan, row, rule)
            else:
                win = _from_block(src, layout, os.pread(f.fileno(), b - a, a), a, row, rule)
            a = b
            scan = None  # nothing of this window stays alive while the next one is read
            if win is not None:
                row += win.n_rows
                yield win
                win = None
        trec.check_unchanged_size(f.fileno(), size, src.path)


def _start(fd: int) -> int:
    """Where the data starts: after a UTF-8 byte-order mark, if any."""
    head = os.pread(fd, len(trec.BOM), 0)
    return len(trec.BOM) if head == trec.BOM else 0


def _columns(layout: Any) -> tuple[int, int, int]:
    cols = layout.columns
    return len(cols), cols.index(layout.numeric), cols.index("doc")


def _trec_stream_windows(src: Source, window_bytes: int, ranks: bool | None,
                         rule: RankRule | None) -> Iterator[Window]:
    """Gzip: decompressed block by block; each block's trailing query waits for the next block."""
    layout = _layout(src, ranks)
    carry = b""
    carry_at = 0
    row = 0
    for block, end, offset in trec.iter_chunks(src.path, window_bytes):
        data = carry + bytes(memoryview(block)[:end])
        at = offset - len(carry)
        cut = _group_start_of_last(data)
        if cut == 0:
            carry, carry_at = data, at
            continue
        win = _from_block(src, layout, data[:cut], at, row, rule)
        carry, carry_at = data[cut:], at + cut
        data = block = b""
        if win is not None:
            row += win.n_rows
            yield win
            win = None
    if carry:
        win = _from_block(src, layout, carry, carry_at, row, rule)
        if win is not None:
            yield win


def _first_token(line: bytes) -> bytes | None:
    s = line.lstrip(_BLANK)
    if not s or s[:1] == b"#":
        return None
    i = 0
    while i < len(s) and s[i:i + 1] not in (b" ", b"\t", b"\r", b"\v", b"\f", b"\n"):
        i += 1
    return s[:i]


def _group_start_of_last(data: bytes) -> int:
    """Where the lines of the last query of ``data`` (whole lines) start: the cut that keeps that query
    whole for the next piece (0 when ``data`` holds one query only)."""
    end = len(data) - 1 if data.endswith(b"\n") else len(data)  # the last line is data[start:end]
    last = None
    while end >= 0:
        start = data.rfind(b"\n", 0, end) + 1
        tok = _first_token(data[start:end])
        if tok is not None:
            if last is None:
                last = tok
            elif tok != last:
                return end + 1
        if start == 0:
            break
        end = start - 1
    return 0


def _cut_mapped(mm: Any, fd: int, size: int, a: int, nominal: int) -> int:
    """End of a window starting at ``a``: the first line boundary at or after ``nominal`` that does not
    split a query's lines. (Lines are read with ``pread``, not through the mapping: a file truncated
    meanwhile reads short instead of raising SIGBUS; ``mm.find`` is guarded by the C helper.)"""
    if nominal >= size:
        return size
    nl = mm.find(b"\n", nominal)
    if nl < 0:
        return size
    cut = nl + 1
    # The query of the last data line before the cut.
    lo = max(a, cut - 4096)
    last = None
    while last is None:
        chunk = os.pread(fd, cut - lo, lo)
        lines = chunk.split(b"\n")
        if lo > a:
            lines = lines[1:]  # the first piece may be a partial line
        for line in reversed(lines):
            tok = _first_token(line)
            if tok is not None:
                last = tok
                break
        if last is None:
            if lo == a:
                return cut
            lo = max(a, lo - 65536)
    # Move the cut past the following lines of that query (and blank or comment lines).
    while cut < size:
        nl = mm.find(b"\n", cut)
        stop = size if nl < 0 else nl
        tok = _first_token(os.pread(fd, stop - cut, cut))
        if tok is not None and tok != last:
            return cut
        cut = stop + 1
    return size


def _from_scan(src: Source, layout: Any, scan: Any, first_row: int, rule: RankRule | None) -> Window | None:
    n = int(scan.starts[-1])
    if n == 0:
        return None
    if not scan.grouped:
        raise NotGrouped
    locate = src.locator(first_row)
    if src.kind == "qrels":
        qrels = assemble_qrels_raw(scan.qids, scan.starts, scan.docs, scan.values, path=src.path, locate=locate,
                                   ids_checked=True)
        assert qrels is not None  # the C tokenizer ran, so the C helper is there
        return Window(qrels, first_row, n)
    if rule is not None:
        rule.observe(scan.values, scan.starts, scan.qids, first_row)
    scores, ranks = _split(layout, scan.values)
    run = assemble_run(None, scan.qids, None, None, scores, name=src.name, path=src.path, locate=locate,
                       raw_docs=scan.docs, offsets=scan.starts, ranks=ranks, ids_checked=True)
    return Window(run, first_row, n)


def _numbers(table: pa.Table, layout: Any) -> np.ndarray:
    """The number column of a parsed TREC block (two-column files: 1 for every line)."""
    if layout.numeric is None:
        return np.ones(table.num_rows, dtype=np.float64)
    return table.column(layout.numeric).to_numpy()


def _split(layout: Any, values: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    if layout.numeric is None:
        return None, None
    if layout.as_ranks:
        return None, values
    return values, None


def _parse_block(src: Source, layout: Any, block: bytes, offset: int, doc_type: pa.DataType) -> pa.Table | None:
    """pyarrow's parse of whole lines (whitespace normalised, comments dropped: the whole-file reader's
    careful path); None when the block holds no data line. NaN scores are reported where the rows are
    assembled."""
    if _DATA_LINE.search(block) is None:
        return None
    table, _ = trec.parse_chunk(block, len(block), offset, src.path, layout, doc_type)
    if table is None or table.num_rows == 0:
        return None
    return table


def _from_block(src: Source, layout: Any, block: bytes, offset: int, first_row: int,
                rule: RankRule | None) -> Window | None:
    table = _parse_block(src, layout, block, offset, pa.string())
    if table is None:
        return None
    n = table.num_rows
    locate = src.locator(first_row)
    groups = query_groups(table.column("query"))
    if groups is None:
        raise NotGrouped
    qids, offsets = groups
    values = _numbers(table, layout)
    docs = table.column("doc")
    if src.kind == "qrels":
        raw = contiguous(docs)
        qrels = assemble_qrels_raw(qids, offsets, raw, values, path=src.path, locate=locate)
        if qrels is None:  # no C helper: coded ids
            dcodes, dvocab = dictionary_codes(docs)
            qcodes = np.repeat(np.arange(len(qids), dtype=np.int32), np.diff(offsets))
            qrels = assemble_qrels(qcodes, qids, dcodes, dvocab, values, path=src.path, locate=locate)
        return Window(qrels, first_row, n)
    if rule is not None and layout.numeric is not None:
        rule.observe(values, offsets, qids, first_row)
    scores, ranks = _split(layout, values)
    run = assemble_run(None, qids, None, None, scores, name=src.name, path=src.path, locate=locate,
                       raw_docs=docs, offsets=offsets, ranks=ranks)
    return Window(run, first_row, n)


# -- Parquet ---------------------------------------------------------------------------------------------
def query_column(src: Source, names: list[str]) -> str:
    """The query column of a Parquet table (named by the source's options, else recognised)."""
    q = pick_column(names, src.options.get("query_col"), QUERY_NAMES, "query", src.path)
    assert q is not None
    return q


def _parquet_batches(src: Source, batch_rows: int) -> Iterator[pa.Table]:
    import pyarrow.parquet as pq

    for f in src.files:
        try:
            pf = pq.ParquetFile(f)
            for batch in pf.iter_batches(batch_size=batch_rows):
                yield pa.Table.from_batches([batch])
        except (pa.ArrowException, OSError) as exc:
            raise ParseError(f"not a readable Parquet file ({exc})", path=f) from None


def _parquet_tables(src: Source, window_rows: int) -> Iterator[tuple[pa.Table, int]]:
    """Tables of about ``window_rows`` rows ending where a query ends, with their first row."""
    pending: list[pa.Table] = []
    have = 0
    row = 0
    for t in _parquet_batches(src, min(window_rows, 1 << 20)):
        if t.num_rows == 0:
            continue
        pending.append(t)
        have += t.num_rows
        if have < window_rows:
            continue
        table = pa.concat_tables(pending, promote_options="permissive")
        qcol = query_keys(table.column(query_column(src, table.column_names)))
        last = qcol[len(qcol) - 1]
        differ = pc.not_equal(qcol, last).to_numpy(zero_copy_only=False)
        idx = np.flatnonzero(differ)
        cut = int(idx[-1]) + 1 if len(idx) else 0
        if cut == 0:  # one query so far: wait for its end
            pending, have = [table], table.num_rows
            continue
        rest = table.slice(cut)
        head, table = table.slice(0, cut), None
        pending, have = [rest], rest.num_rows
        yield head, row
        head = None
        row += cut
    if have:
        yield pa.concat_tables(pending, promote_options="permissive"), row


def _parquet_windows(src: Source, window_rows: int) -> Iterator[Window]:
    from ragrade.io.origins import resolve_origins
    from ragrade.io.tables import table_to_qrels, table_to_run

    opts = src.options
    for table, first in _parquet_tables(src, window_rows):
        names = table.column_names
        qname = query_column(src, names)
        keys = query_keys(table.column(qname))
        if not _grouped(keys):
            raise NotGrouped
        locate = src.locator(first, table)
        if src.kind == "run":
            run = table_to_run(table, src.path, locate, name=src.name,
                               **{k: v for k, v in opts.items() if k in ("query_col", "doc_col", "score_col",
                                                                        "rank_col", "list_col")})
            n = table.num_rows
            table = keys = None
            yield Window(run, first, n)
            del run
        else:
            table2, locate2 = resolve_origins(table, locate, src.path, opts.get("prefer"), opts.get("query_col"),
                                              opts.get("doc_col"))
            qrels = table_to_qrels(table2, src.path, locate2,
                                   **{k: v for k, v in opts.items() if k in ("query_col", "doc_col", "grade_col",
                                                                            "list_col", "unit_col")})
            n = table.num_rows
            table = table2 = keys = None
            yield Window(qrels, first, n)
            del qrels


def _grouped(keys: pa.ChunkedArray) -> bool:
    if len(keys) < 2:
        return True
    groups = query_groups(keys)
    return groups is not None


# -- blocks of rows, for partitioning -----------------------------------------------------------------------
@dataclass
class Block:
    """Consecutive rows: ``table`` (TREC: ``query``, ``doc`` and the number column if any; Parquet: the
    file's columns), ``keys`` the query id of every row in the one id form, ``first_row`` the data row of
    the first."""

    table: pa.Table
    keys: pa.ChunkedArray
    first_row: int


def blocks(src: Source, block_bytes: int, block_rows: int, rule: RankRule | None = None) -> Iterator[Block]:
    """The file's rows in order, in blocks cut anywhere (see the module docstring)."""
    if not src.is_trec:
        row = 0
        for t in _parquet_batches(src, max(block_rows, 1)):
            if t.num_rows == 0:
                continue
            t = _decode_dictionaries(t)
            yield Block(t, query_keys(t.column(query_column(src, t.column_names))), row)
            row += t.num_rows
        return
    layout = src.layout
    row = 0
    for table, starts, seg_queries in _trec_blocks(src, max(block_bytes, 1)):
        if rule is not None and layout.numeric is not None:
            rule.observe(_numbers(table, layout), starts, seg_queries, row)
        keys = table.column("query")
        yield Block(table, keys, row)
        row += table.num_rows


def _trec_blocks(src: Source, block_bytes: int) -> Iterator[tuple[pa.Table, np.ndarray, np.ndarray]]:
    """``(table, starts of the runs of one query, each run's query)`` for consecutive blocks of lines:
    ``query`` and ``doc`` as large strings, and the number column. The C tokenizer over the memory-mapped
    file where it takes the lines, else pyarrow's parser (gzip, irregular whitespace, comments)."""
    from ragrade._ingest import _accel

    layout = src.layout
    numeric = [layout.numeric] if layout.numeric else []

    def parsed(block: bytes, offset: int) -> tuple[pa.Table, np.ndarray, np.ndarray] | None:
        table = _parse_block(src, layout, block, offset, pa.large_string())
        if table is None:
            return None
        table = table.select(["query", "doc", *numeric])
        table = table.set_column(0, "query", table.column("query").cast(pa.large_string()))
        codes, vocab = dictionary_codes(table.column("query"))
        starts = value_segments(codes)
        return table, starts, vocab[codes[starts[:-1]]]

    if is_gzip(src.path) or _accel is None or layout.numeric is None:
        for raw_block, end, offset in trec.iter_chunks(src.path, block_bytes):
            got = parsed(bytes(memoryview(raw_block)[:end]), offset)
            if got is not None:
                yield got
        return
    with open(src.path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return
        a = _start(f.fileno())
        while a < size:
            mm, own = trec.map_readonly(f.fileno())  # one mapping per block: see _trec_windows
            try:
                with trec.mapping_faults(src.path):
                    nl = mm.find(b"\n", a + block_bytes) if a + block_bytes < size else -1
                b = size if nl < 0 else nl + 1
                try:
                    scan = trec.scan_mapped(mm, b, *_columns(layout), None, own, start=a, path=src.path)
                except MemoryError:
                    scan = None
            finally:
                mm.close()
            if scan is None:
                got = parsed(os.pread(f.fileno(), b - a, a), a)
            else:
                counts = np.diff(scan.starts)
                seg = np.repeat(np.arange(len(scan.qids), dtype=np.int64), counts)
                query = pa.array(scan.qids, type=pa.large_string()).take(pa.array(seg))
                docs = scan.docs.arrow()
                docs = docs if isinstance(docs, pa.ChunkedArray) else pa.chunked_array([docs])
                table = pa.table({"query": query, "doc": docs, layout.numeric: scan.values})
                got = table, scan.starts, scan.qids
            scan = None
            a = b
            if got is not None:
                yield got
                got = None
        trec.check_unchanged_size(f.fileno(), size, src.path)


def _decode_dictionaries(t: pa.Table) -> pa.Table:
    for i, f in enumerate(t.schema):
        if pa.types.is_dictionary(f.type):
            t = t.set_column(i, f.name, t.column(i).cast(f.type.value_type))
    return t


def bucket_of(keys: pa.ChunkedArray, buckets: int) -> np.ndarray:
    """The partition (0 .. buckets-1) of every row, from a hash of its query id (only the distinct ids
    of the block are hashed)."""
    enc = pc.dictionary_encode(keys).combine_chunks()
    ids = np.asarray(enc.dictionary.to_numpy(zero_copy_only=False), dtype=object)
    per_id = (hash_ids(ids) % np.uint64(buckets)).astype(np.int32)
    codes = enc.indices.to_numpy(zero_copy_only=False)
    return per_id[codes]


__all__ = ["STREAM_FORMATS", "Block", "NotGrouped", "RankRule", "SeenIds", "Source", "Window", "blocks",
           "bucket_of", "hash_ids", "open_source", "query_column", "query_keys", "windows"]
