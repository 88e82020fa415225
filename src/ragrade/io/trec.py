"""TREC qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``): streaming reader, writer.

The reader never creates a Python object per line. It reads the file in large byte chunks cut at a
newline, normalises whitespace with bytes operations (tabs and runs of spaces become one space; spaces at
line ends are removed), and parses each chunk with ``pyarrow.csv`` into dictionary-coded id columns and a
float64 score column. The chunks' dictionaries are unified at the end and the integer indices become the
Run's / Qrels' codes directly. Only on an error does it look at lines in Python, to report the line.

The rank column of a run is ignored (SPEC: ranking is by score); so are the ``iter`` and ``Q0`` columns.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ragrade.data import Qrels, Run
from ragrade.errors import InputError, ParseError
from ragrade.io._common import (
    STR_DICT,
    PathLike,
    Progress,
    assemble_qrels,
    assemble_qrels_raw,
    assemble_run,
    check_nonempty,
    dictionary_codes,
    locate_nonblank,
    open_binary,
    query_codes,
    query_groups,
)

#: Bytes read per chunk (the cut falls on the last newline of the chunk).
CHUNK_SIZE = 64 << 20

RUN_COLUMNS = ("query", "q0", "doc", "rank", "score", "tag")
QRELS_COLUMNS = ("query", "iter", "doc", "grade")

STR = pa.string()
_BOM = b"\xef\xbb\xbf"
_TABS = bytes.maketrans(b"\t\r\v\f", b"    ")
_MULTI_SPACE = re.compile(rb"  +")
_EDGE_SPACE = re.compile(rb"^ +| +$", re.MULTILINE)


def normalise_whitespace(chunk: bytes) -> bytes:
    """Tabs (and CR, VT, FF) → space, runs of spaces → one space, no space at either end of a line."""
    if b"\t" in chunk or b"\r" in chunk or b"\v" in chunk or b"\f" in chunk:
        chunk = chunk.translate(_TABS)
    if b"  " in chunk:
        chunk = _MULTI_SPACE.sub(b" ", chunk)
    if chunk[:1] == b" " or b"\n " in chunk or b" \n" in chunk or chunk[-1:] == b" ":
        chunk = _EDGE_SPACE.sub(b"", chunk)
    return chunk


def iter_chunks(path: PathLike, chunk_size: int = CHUNK_SIZE, progress: Progress | None = None
                ) -> Iterator[tuple[bytes, int, int]]:
    """Yield ``(block, end, offset)``: ``block[:end]`` is a run of whole lines (the last chunk's last line
    may lack its newline) starting at byte ``offset`` of the (decompressed) file."""
    stream, raw = open_binary(path)
    total = os.fstat(raw.fileno()).st_size
    offset = 0
    carry = b""
    try:
        while True:
            try:
                block = stream.read(chunk_size)
            except (OSError, EOFError) as exc:
                raise ParseError(f"cannot read the file ({exc})", path=os.fspath(path)) from None
            if not block:
                if carry:
                    yield carry, len(carry), offset
                break
            if carry:
                block = carry + block
            elif offset == 0 and block.startswith(_BOM):
                block = block[len(_BOM):]  # a UTF-8 byte order mark is not part of the first id
                offset = len(_BOM)
            cut = block.rfind(b"\n")
            if cut < 0:
                carry = block
                continue
            carry = block[cut + 1 :]
            yield block, cut + 1, offset
            offset += cut + 1
            if progress is not None:
                progress(raw.tell(), total)
    finally:
        stream.close()
        raw.close()
    if progress is not None:
        progress(total, total)


def _line_number(path: str, offset: int) -> int:
    """1-based line number of the byte at ``offset`` (error path: counts newlines before it)."""
    n = 1
    done = 0
    stream, raw = open_binary(path)
    try:
        while done < offset:
            b = stream.read(min(CHUNK_SIZE, offset - done))
            if not b:
                break
            n += b.count(b"\n")
            done += len(b)
    finally:
        stream.close()
        raw.close()
    return n


def _arrow_parse(data: Any, columns: tuple[str, ...], numeric: str, doc_type: pa.DataType = STR) -> pa.Table:
    read = pacsv.ReadOptions(column_names=list(columns), block_size=4 << 20)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, double_quote=False)
    convert = pacsv.ConvertOptions(
        column_types={"query": pa.string(), "doc": doc_type, numeric: pa.float64()},
        include_columns=["query", "doc", numeric],
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    return pacsv.read_csv(pa.BufferReader(data), read_options=read, parse_options=parse, convert_options=convert)


def _parse_chunk(block: bytes, end: int, offset: int, path: str, columns: tuple[str, ...], numeric: str,
                 numeric_what: str, doc_type: pa.DataType = STR) -> tuple[pa.Table | None, bytes | None]:
    """Parse ``block[:end]``; returns the table and, if the chunk had to be normalised, its bytes."""
    if _NON_SPACE.search(block, 0, end) is None:
        return None, None
    # Try the bytes as they are, unless they hold a tab, CR, VT or FF (a split on single spaces could
    # then shift columns silently). Other irregular spacing (runs of spaces, spaces at line ends) changes
    # the column count, which pyarrow rejects, or yields an empty id; then normalise and parse again.
    try:
        if _has_odd_whitespace(block, end):
            raise pa.ArrowInvalid("odd whitespace")
        table = _arrow_parse(pa.py_buffer(memoryview(block)[:end]), columns, numeric, doc_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass  # irregular spacing, or a real error: see below
    else:
        if not _has_empty_id(table):  # an empty field means irregular spacing (e.g. a leading space)
            return table, None
    data = normalise_whitespace(block[:end])
    try:
        return _arrow_parse(data, columns, numeric, doc_type), data
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        _locate_bad_line(block[:end], _line_number(path, offset), path, columns, numeric, numeric_what, exc)
        raise  # pragma: no cover - _locate_bad_line always raises


_NON_SPACE = re.compile(rb"\S")


_ODD_WHITESPACE = (b"\t", b"\r", b"\x0b", b"\x0c")


def _has_odd_whitespace(block: bytes, end: int) -> bool:
    """Whether ``block[:end]`` holds whitespace other than spaces and newlines (memchr-speed scans)."""
    return any(block.find(c, 0, end) >= 0 for c in _ODD_WHITESPACE)


def _file_has_odd_whitespace(path: str) -> bool:
    """One pass over the file, memory-mapped (no copy): C helper, else NumPy in slices."""
    import mmap

    from ragrade import _ingest

    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return False
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)  # pre-fault: one pass, sequential
        with mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ) as mm:
            if _ingest._accel is not None:
                return _ingest._accel.find_odd_whitespace(mm) >= 0
            view = np.frombuffer(mm, dtype=np.uint8)
            try:
                for a in range(0, len(view), CHUNK_SIZE):
                    part = view[a: a + CHUNK_SIZE]
                    if ((part >= 9) & (part <= 13) & (part != 10)).any():
                        return True
                return False
            finally:
                del view, part


def _has_empty_id(table: pa.Table) -> bool:
    """True if an id is empty: a sign of irregular spacing (a leading space, or two spaces in a row) that
    a split on single spaces got wrong. The caller then normalises the whitespace and parses again."""
    import pyarrow.compute as pc

    for name in ("query", "doc"):
        for chunk in table.column(name).chunks:
            d = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
            if len(d) == 0:
                continue
            if pc.min(pc.binary_length(d)).as_py() == 0:
                return True
    return False


def _locate_bad_line(chunk: bytes, first_line: int, path: str, columns: tuple[str, ...], numeric: str,
                     numeric_what: str, exc: Exception) -> None:
    """Error path: find the first line of ``chunk`` that does not parse and raise a ParseError for it."""
    ncol = len(columns)
    kind = "run" if ncol == 6 else "qrels"
    layout = "query iter doc grade" if kind == "qrels" else "query Q0 doc rank score tag"
    idx = columns.index(numeric)
    for i, raw_line in enumerate(chunk.split(b"\n")):
        text = raw_line.decode("utf-8", errors="replace").rstrip("\r")
        fields = text.split()
        if not fields:
            continue
        try:
            raw_line.decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("the line is not valid UTF-8", path=path, line=first_line + i, text=text) from None
        if len(fields) != ncol:
            raise ParseError(
                f"expected {ncol} whitespace-separated columns for a TREC {kind} line ({layout}), "
                f"got {len(fields)}",
                path=path, line=first_line + i, text=text,
            )
        try:
            float(fields[idx])
        except ValueError:
            raise ParseError(f"{numeric_what} is not a number", path=path, line=first_line + i,
                             text=text) from None
    raise ParseError(f"cannot parse the TREC {kind} file ({exc})", path=path)


def _read(path: PathLike, columns: tuple[str, ...], numeric: str, numeric_what: str, chunk_size: int,
          progress: Progress | None, doc_type: pa.DataType = STR) -> tuple[list, list, list, int]:
    p = os.fspath(path)
    qchunks: list[pa.Array] = []
    dchunks: list[pa.Array] = []
    vals: list[np.ndarray] = []
    n = 0
    for block, end, offset in iter_chunks(p, chunk_size, progress):
        table, _ = _parse_chunk(block, end, offset, p, columns, numeric, numeric_what, doc_type)
        if table is None or table.num_rows == 0:
            continue
        qchunks.extend(table.column("query").chunks)
        dchunks.extend(table.column("doc").chunks)
        v = table.column(numeric).to_numpy()
        if numeric == "score" and np.isnan(v).any():
            # Report at once, with the chunk in hand.
            r = int(np.flatnonzero(np.isnan(v))[0])
            lines = [ln for ln in enumerate(block[:end].split(b"\n")) if ln[1].strip()]
            i, text = lines[r]
            raise ParseError("score is NaN (scores must be comparable numbers)", path=p,
                             line=_line_number(p, offset) + i, text=text.decode("utf-8", errors="replace").strip())
        vals.append(v)
        n += table.num_rows
    return qchunks, dchunks, vals, n


def _read_whole(path: str, columns: tuple[str, ...], numeric: str, doc_type: pa.DataType,
                progress: Progress | None) -> pa.Table | None:
    """Fast path: pyarrow reads and parses the file with its own pipelined, multi-threaded reader (block
    by block, no Python object per line). Returns None when the file needs the careful chunked path:
    a byte-order mark, irregular spacing, a parse error, NaN scores or no lines (that path reports the
    exact line)."""
    from ragrade.io._common import is_gzip
    from ragrade.io.tables import _source

    stream, raw = open_binary(path)
    try:
        head = stream.read(len(_BOM))
    finally:
        stream.close()
        raw.close()
    if head == _BOM or is_gzip(path) or _file_has_odd_whitespace(path):
        # gzip: the chunked reader decompresses in one pass and reports progress on the raw bytes;
        # tabs, CRs and the like: the chunked reader normalises them.
        return None
    read = pacsv.ReadOptions(column_names=list(columns), block_size=8 << 20)
    parse = pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, double_quote=False)
    convert = pacsv.ConvertOptions(
        column_types={"query": STR, "doc": doc_type, numeric: pa.float64()},
        include_columns=["query", "doc", numeric], null_values=[], strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        with _source(path, progress) as src:
            table = pacsv.read_csv(src, read_options=read, parse_options=parse, convert_options=convert)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows == 0 or _has_empty_id(table):
        return None
    if numeric == "score" and pc_any_nan(table.column(numeric)):
        return None
    return table


def pc_any_nan(col: pa.ChunkedArray) -> bool:
    import pyarrow.compute as pc

    return bool(pc.any(pc.is_nan(col)).as_py())


class Scanned:
    """What the C tokenizer (:func:`_scan_fast`) returns: the numbers, the document ids as an Arrow
    ``large_string`` array (chunked: one chunk per thread's part of the file), and the runs of equal
    query ids (``qids[i]`` starts at row ``starts[i]``; ``starts`` ends with the row count)."""

    __slots__ = ("docs", "qids", "starts", "values")

    def __init__(self, values: np.ndarray, docs: pa.Array | pa.ChunkedArray, qids: np.ndarray,
                 starts: np.ndarray) -> None:
        self.values, self.docs, self.qids, self.starts = values, docs, qids, starts

    @property
    def grouped(self) -> bool:
        """Whether each query's lines are adjacent (then the runs are the queries)."""
        return len(set(self.qids.tolist())) == len(self.qids)


#: Files below this size are scanned by one thread.
_PARALLEL_MIN = 16 << 20
#: Bytes per call of the C tokenizer (progress is reported between calls).
_SCAN_WINDOW = 64 << 20


def _scan_fast(path: str, columns: tuple[str, ...], numeric: str, progress: Progress | None) -> Scanned | None:
    """Fast path for plain TREC files, with the C helper: the file is memory-mapped and tokenized in
    place by one thread per core, each on a slice cut at a newline, straight into the arrays the engine
    uses (no Arrow table, no per-column chunks, no copy of the file). Returns None, and the caller takes
    the pyarrow path, for gzip, a byte-order mark, no C helper, or any irregular line: the C scan stops at
    anything it does not take exactly as pyarrow would (see ``scan_trec`` in ``_accel.c``)."""
    import mmap

    from ragrade._ingest import _accel
    from ragrade.io._common import is_gzip

    if _accel is None or is_gzip(path):
        return None
    ncols, numcol, doccol = len(columns), columns.index(numeric), columns.index("doc")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        try:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # not mappable (a pipe, some network file systems): pyarrow reads it
            return None
        with mapped as mm:
            if mm[: len(_BOM)] == _BOM:
                return None
            try:
                return _scan_mapped(mm, size, ncols, numcol, doccol, progress)
            except MemoryError:  # the outputs are sized for the worst case: leave it to pyarrow
                return None


def _scan_mapped(mm: Any, size: int, ncols: int, numcol: int, doccol: int,
                 progress: Progress | None) -> Scanned | None:
    import threading

    from ragrade._ingest import _accel

    workers = max(1, min(os.cpu_count() or 1, 4)) if size >= _PARALLEL_MIN else 1
    cuts = [0]
    for i in range(1, workers):
        nl = mm.find(b"\n", max(size * i // workers, cuts[-1]))
        cuts.append(size if nl < 0 else nl + 1)
    cuts.append(size)
    parts = [(a, z) for a, z in pairwise(cuts) if z > a]
    # Upper bounds: a line is at least 2 * ncols bytes (one byte per field, the separators, the newline).
    caps = [(z - a + 1) // (2 * ncols) + 1 for a, z in parts]
    # Numbers: part 0 writes into an array sized for the whole file, the others into their own, copied
    # after it. Document ids: each part's become one chunk of the run's (chunked) Arrow array, as they are.
    # (Untouched capacity costs address space only, not memory.)
    total_rows = sum(caps)
    outs = []
    for i, ((a, z), cap) in enumerate(zip(parts, caps, strict=True)):
        outs.append((
            np.empty(total_rows if i == 0 else cap, dtype=np.float64),  # numbers
            np.empty(cap + 1, dtype=np.int64), np.empty(z - a, dtype=np.uint8),  # document ids
            np.empty(cap, dtype=np.int64),  # first row of each run of equal query ids
            np.empty(cap + 1, dtype=np.int64), np.empty(z - a, dtype=np.uint8),  # those query ids
            np.array([0, 0, 0, 0, -1, 0, 0, -1], dtype=np.int64),  # the scanner's state (see _accel.c)
        ))
    done = [0]
    lock = threading.Lock()

    def scan(i: int) -> None:
        a, z = parts[i]
        vals, doc_off, doc_data, seg_row, q_off, q_data, state = outs[i]
        pos = a
        while pos < z and state[6] == 0:
            stop = z
            if z - pos > _SCAN_WINDOW:
                nl = mm.find(b"\n", pos + _SCAN_WINDOW, z)
                stop = z if nl < 0 else nl + 1
            _accel.scan_trec(mm, pos, stop, ncols, numcol, doccol, True, vals, doc_off, doc_data, seg_row,
                             q_off, q_data, state)
            if progress is not None:
                with lock:
                    done[0] += stop - pos
                    progress(done[0], size)
            pos = stop

    if len(parts) == 1:
        scan(0)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(parts)) as pool:
            list(pool.map(scan, range(len(parts))))
    if any(o[6][6] != 0 for o in outs):
        return None
    # Join the parts: rows of part i follow those of part i-1.
    vals = outs[0][0]
    n = 0
    doc_chunks, qids_parts, starts_parts = [], [], []
    for i, (v, doc_off, doc_data, seg_row, q_off, q_data, state) in enumerate(outs):
        rows, dbytes, nseg, qbytes = (int(x) for x in state[:4])
        if i > 0:
            vals[n: n + rows] = v[:rows]
        if rows:
            doc_chunks.append(pa.Array.from_buffers(pa.large_string(), rows, [
                None, pa.py_buffer(doc_off[: rows + 1]), pa.py_buffer(doc_data[:dbytes])]))
        qarr = pa.Array.from_buffers(pa.large_string(), nseg, [None, pa.py_buffer(q_off[: nseg + 1]),
                                                                 pa.py_buffer(q_data[:qbytes])])
        qids_parts.append(np.asarray(qarr.to_numpy(zero_copy_only=False), dtype=object))
        starts_parts.append(seg_row[:nseg] + n)
        n += rows
    outs.clear()
    qids = np.concatenate(qids_parts) if len(qids_parts) > 1 else qids_parts[0]
    starts = np.concatenate(starts_parts) if len(starts_parts) > 1 else starts_parts[0]
    if len(qids) > 1:  # a query whose lines straddle a cut appears at the end of one part and the start of the next
        same = np.zeros(len(qids), dtype=bool)
        same[1:] = qids[1:] == qids[:-1]
        if same.any():
            qids, starts = qids[~same], starts[~same]
    if n == 0:
        return None
    docs = doc_chunks[0] if len(doc_chunks) == 1 else pa.chunked_array(doc_chunks, type=pa.large_string())
    return Scanned(vals[:n], docs, qids, np.append(starts, n).astype(np.int64))


def _read_table_or_chunks(p: str, columns: tuple[str, ...], numeric: str, numeric_what: str, chunk_size: int,
                          progress: Progress | None, doc_type: pa.DataType) -> tuple[list, list, list, int]:
    table = _read_whole(p, columns, numeric, doc_type, progress) if chunk_size == CHUNK_SIZE else None
    if table is None:
        return _read(p, columns, numeric, numeric_what, chunk_size, progress, doc_type)
    return (table.column("query").chunks, table.column("doc").chunks, [table.column(numeric).to_numpy()],
            table.num_rows)


def _segment_codes(scan: Scanned) -> tuple[np.ndarray, np.ndarray]:
    """Per-row query codes and the query vocabulary, from the runs of equal query ids."""
    codes, vocab = pd.factorize(scan.qids)
    return np.repeat(codes.astype(np.int32), np.diff(scan.starts)), np.asarray(vocab, dtype=object)


def _run_from_scan(scan: Scanned, path: str, name: str | None) -> Run:
    locate = lambda r: locate_nonblank(path, r)  # noqa: E731
    if scan.grouped:
        return assemble_run(None, scan.qids, None, None, scan.values, name=name, path=path, locate=locate,
                            raw_docs=scan.docs, offsets=scan.starts)
    qcodes, qvocab = _segment_codes(scan)
    return assemble_run(qcodes, qvocab, None, None, scan.values, name=name, path=path, locate=locate,
                        raw_docs=scan.docs)


def _qrels_from_scan(scan: Scanned, path: str) -> Qrels:
    locate = lambda r: locate_nonblank(path, r)  # noqa: E731
    if scan.grouped:  # the usual file
        qrels = assemble_qrels_raw(scan.qids, scan.starts, scan.docs, scan.values, path=path, locate=locate)
        if qrels is not None:
            return qrels
    qcodes, qvocab = _segment_codes(scan)
    dcodes, dvocab = dictionary_codes(scan.docs)
    return assemble_qrels(qcodes, qvocab, dcodes, dvocab, scan.values, path=path, locate=locate)


def read_trec_run(path: PathLike, name: str | None = None, *, chunk_size: int = CHUNK_SIZE,
                  progress: Progress | None = None) -> Run:
    """Read a TREC run file (``qid Q0 docno rank score tag``, whitespace-separated, optionally gzipped).

    ``name`` defaults to the tag of the first line. Rows need not be grouped by query."""
    p = os.fspath(path)
    if name is None:
        _, first = locate_nonblank(p, 0)
        name = first.split()[5] if first else None
    fast = _scan_fast(p, RUN_COLUMNS, "score", progress) if chunk_size == CHUNK_SIZE else None
    if fast is not None:
        return _run_from_scan(fast, p, name)
    # Document ids stay raw Arrow strings: evaluation maps them straight to the judged ids, so the
    # run's own vocabulary is built only if something asks for it.
    qchunks, dchunks, vals, n = _read_table_or_chunks(p, RUN_COLUMNS, "score", "score", chunk_size, progress, STR)
    check_nonempty(n, p, "run lines")
    qcol = pa.chunked_array(qchunks, type=pa.string())
    groups = query_groups(qcol)
    if groups is not None:  # grouped by query (the usual file): no per-row query codes at all
        qcodes, (qvocab, qoffsets) = None, groups
    else:
        (qcodes, qvocab), qoffsets = dictionary_codes(qcol), None
    docs = pa.chunked_array(dchunks, type=pa.string())  # raw ids, coded only if ever needed
    scores = vals[0] if len(vals) == 1 else np.concatenate(vals)
    return assemble_run(qcodes, qvocab, None, None, scores, name=name, path=p,
                        locate=lambda r: locate_nonblank(p, r), raw_docs=docs, offsets=qoffsets)


def read_trec_qrels(path: PathLike, *, chunk_size: int = CHUNK_SIZE, progress: Progress | None = None) -> Qrels:
    """Read a TREC qrels file (``qid iter docno rel``, whitespace-separated, optionally gzipped)."""
    p = os.fspath(path)
    fast = _scan_fast(p, QRELS_COLUMNS, "grade", progress) if chunk_size == CHUNK_SIZE else None
    if fast is not None:
        return _qrels_from_scan(fast, p)
    qchunks, dchunks, vals, n = _read_table_or_chunks(p, QRELS_COLUMNS, "grade", "relevance grade", chunk_size,
                                                      progress, STR_DICT)
    check_nonempty(n, p, "judgments")
    qcodes, qvocab = query_codes(pa.chunked_array(qchunks, type=pa.string()))
    dcodes, dvocab = dictionary_codes(pa.chunked_array(dchunks, type=STR_DICT))
    grades = np.concatenate(vals)
    return assemble_qrels(qcodes, qvocab, dcodes, dvocab, grades, path=p, locate=lambda r: locate_nonblank(p, r))


# -- writers -----------------------------------------------------------------------------------------
def _check_ids(vocab: np.ndarray, what: str) -> None:
    """TREC files are whitespace-separated: an id containing whitespace cannot be written."""
    if len(vocab) == 0:
        return
    import pyarrow.compute as pc

    bad = pc.match_substring_regex(pa.array(vocab, type=pa.string()), r"\s").to_numpy(zero_copy_only=False)
    if bad.any():
        raise InputError(f"a {what} contains whitespace and cannot be written to a TREC file; use TSV, JSONL "
                         "or Parquet", value=str(vocab[np.flatnonzero(bad)[0]]))


def _write_table(table: pa.Table, path: PathLike) -> None:
    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    if os.fspath(path).lower().endswith(".gz"):
        with pa.CompressedOutputStream(os.fspath(path), "gzip") as out:
            pacsv.write_csv(table, out, opts)
    else:
        pacsv.write_csv(table, os.fspath(path), opts)


def _const(value: str, n: int) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([value]))


def write_trec_run(run: Run, path: PathLike, tag: str | None = None, ties: str = "docid_desc") -> None:
    """Write ``qid Q0 docno rank score tag`` lines in rank order (ranks 1..n per query).

    Ranked lists without scores get descending scores ``n - position`` so that reading the file back
    gives the same order. ``tag`` defaults to the run's name (or ``ragrade``)."""
    tag = tag or run.name or "ragrade"
    if any(c.isspace() for c in tag):
        raise InputError("the run tag cannot contain whitespace", value=tag)
    _check_ids(run.query_ids, "query id")
    _check_ids(run.doc_vocab, "document id")
    order = run.ranking(ties)
    counts = np.diff(run.offsets)
    seg = np.repeat(np.arange(run.n_queries, dtype=np.int32), counts)
    pos = np.arange(run.n_rows, dtype=np.int64) - np.repeat(run.offsets[:-1], counts)
    pseudo = run.scores is None  # ranked lists: descending pseudo-scores keep the order
    scores = (np.repeat(counts, counts) - pos).astype(np.float64) if pseudo else run.scores[order]
    n = run.n_rows
    table = pa.table({
        "query": pa.DictionaryArray.from_arrays(pa.array(seg), pa.array(run.query_ids, type=pa.string())),
        "q0": _const("Q0", n),
        "doc": pa.DictionaryArray.from_arrays(pa.array(run.doc_codes[order]),
                                              pa.array(run.doc_vocab, type=pa.string())),
        "rank": pa.array(pos + 1),
        "score": pa.array(scores, type=pa.float64()),
        "tag": _const(tag, n),
    })
    _write_table(table, path)


def write_trec_qrels(qrels: Qrels, path: PathLike) -> None:
    """Write ``qid 0 docno grade`` lines (integral grades without a decimal point)."""
    if qrels.has_groups:
        raise InputError("qrels with groups cannot be written as TREC qrels (one line per document loses the "
                         "groups); write JSONL or Parquet instead")
    _check_ids(qrels.query_ids, "query id")
    _check_ids(qrels.doc_vocab, "document id")
    g = qrels.grades
    grades = pa.array(g.astype(np.int64)) if np.all(np.mod(g, 1) == 0) else pa.array(g)
    seg = np.repeat(np.arange(qrels.n_queries, dtype=np.int32), np.diff(qrels.offsets))
    table = pa.table({
        "query": pa.DictionaryArray.from_arrays(pa.array(seg), pa.array(qrels.query_ids, type=pa.string())),
        "iter": _const("0", qrels.n_rows),
        "doc": pa.DictionaryArray.from_arrays(pa.array(qrels.doc_codes), pa.array(qrels.doc_vocab,
                                                                                   type=pa.string())),
        "grade": grades,
    })
    _write_table(table, path)
