"""The TREC family of whitespace-separated files: qrels (``qid iter docno rel``, or ``qid docno``) and runs
(``qid Q0 docno rank score tag``, or the three-column ``qid docno score`` / MS MARCO ``qid docno rank``):
reader and writer.

The layout is read from the first line that is neither blank nor a comment (see :func:`run_layout`,
:func:`qrels_layout` and docs/formats.md, "TREC"). Lines whose first non-blank character is ``#`` are
comments, and a run line may carry extra columns after the tag, both as trec_eval reads them.

The reader never creates a Python object per line. Three readers are tried in turn: the C tokenizer over
the memory-mapped file (:func:`_scan_fast`), pyarrow's CSV reader over the whole file
(:func:`_read_whole`), and the careful chunked reader (:func:`_read`), which reads the file in large byte
chunks cut at a newline, normalises whitespace with bytes operations (tabs and runs of spaces become one
space; spaces at line ends are removed), drops comment lines and extra run columns, and parses each chunk
with ``pyarrow.csv``. Only on an error does it look at lines in Python, to report the line.

The rank column of a six-column run is ignored (ranking is by score: docs/conventions.md); so are the ``iter`` and ``Q0``
columns.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade._arrays import Utf8Column, decode_strings, factorize
from ragrade.data import Qrels, Run
from ragrade.errors import InputError, ParseError
from ragrade.io.assembly import (
    assemble_qrels,
    assemble_qrels_raw,
    assemble_run,
    check_nonempty,
    dictionary_codes,
    query_codes,
    query_groups,
    str_dict,
)
from ragrade.io.sniffing import is_arrow_number, split_fields, value_segments, values_are_ranks
from ragrade.io.textfiles import (
    MAX_LINE_BYTES,
    PathLike,
    Progress,
    default_run_name,
    first_data_line,
    is_comment,
    is_gzip,
    line_too_long,
    locate_nonblank,
    open_binary,
)

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    import pyarrow.csv as pacsv

#: Bytes read per chunk (the cut falls on the last newline of the chunk).
CHUNK_SIZE = 64 << 20

RUN_COLUMNS = ("query", "q0", "doc", "rank", "score", "tag")
QRELS_COLUMNS = ("query", "iter", "doc", "grade")

BOM = b"\xef\xbb\xbf"
_TABS = bytes.maketrans(b"\t\r\v\f", b"    ")
_MULTI_SPACE = re.compile(rb"  +")
_EDGE_SPACE = re.compile(rb"^ +| +$", re.MULTILINE)
_COMMENT_LINE = re.compile(rb"^#[^\n]*", re.MULTILINE)


@dataclass(frozen=True)
class Layout:
    """The columns of one whitespace-separated layout. ``numeric`` names the column holding the number
    (None: two-column files, every line counts 1); ``extra_ok``: columns after the last are ignored
    (trec_eval's run reader does so)."""

    kind: str  # "run" or "qrels"
    columns: tuple[str, ...]
    numeric: str | None
    numeric_what: str
    described: str
    extra_ok: bool = False
    as_ranks: bool | None = None  # three-column runs: True ranks, False scores, None by the rule

    @property
    def ncols(self) -> int:
        return len(self.columns)


RUN6 = Layout("run", RUN_COLUMNS, "score", "score", "query Q0 doc rank score tag", extra_ok=True)
RUN3 = Layout("run", ("query", "doc", "value"), "value", "score (or rank)", "query doc score-or-rank")
RUN3_RANKS = Layout("run", ("query", "doc", "value"), "value", "rank", "query doc rank", as_ranks=True)
RUN3_SCORES = Layout("run", ("query", "doc", "value"), "value", "score", "query doc score", as_ranks=False)
RUN2 = Layout("run", ("query", "doc"), None, "", "query doc")
QRELS4 = Layout("qrels", QRELS_COLUMNS, "grade", "relevance grade", "query iter doc grade")
QRELS2 = Layout("qrels", ("query", "doc"), None, "", "query doc")


def _first_fields(path: str, what: str) -> tuple[int, str, list[str]]:
    got = first_data_line(path, skip_comments=True)
    if got is None:
        check_nonempty(0, path, what)
    assert got is not None
    line, text = got
    if "\r" in text.rstrip("\r"):
        _refuse_bare_cr(text, path, line)
    return line, text, split_fields(text)


def run_layout(path: str, format: str = "trec") -> tuple[Layout, str | None]:
    """The layout of a TREC-family run file, from its first line that is neither blank nor a comment, and
    the run's name (the tag of that line for six-column files). ``format``: ``"trec"`` (6, 3 or 2
    columns), ``"msmarco"`` (``qid doc rank``) or ``"qid-doc-score"``."""
    line, text, fields = _first_fields(path, "run lines")
    n = len(fields)
    if format != "trec":  # msmarco or qid-doc-score: the named three-column layouts
        if n != 3:
            raise ParseError(f"format {format!r} expects 3 whitespace-separated columns "
                             f"({'query doc rank' if format == 'msmarco' else 'query doc score'}), got {n}",
                             path=path, line=line, text=text)
        return (RUN3_RANKS if format == "msmarco" else RUN3_SCORES), None
    if n >= 6:
        return RUN6, fields[5]
    if n == 3:
        return RUN3, None
    if n == 2:
        return RUN2, None
    hint = ": this looks like a qrels line (query iter doc grade); read it as qrels" if n == 4 else ""
    raise ParseError(f"expected a TREC run line: 6 whitespace-separated columns (query Q0 doc rank score tag), "
                     f"or 3 (query doc score, or MS MARCO's query doc rank), or 2 (query doc); got {n}{hint}",
                     path=path, line=line, text=text)


def qrels_layout(path: str) -> Layout:
    """The layout of a TREC-family qrels file: 4 columns (``qid iter doc grade``) or 2 (``qid doc``)."""
    line, text, fields = _first_fields(path, "judgments")
    n = len(fields)
    if n == 4:
        return QRELS4
    if n == 2:
        return QRELS2
    hint = ": this looks like a run line (query Q0 doc rank score tag); read it as a run" if n >= 6 else ""
    raise ParseError(f"expected a TREC qrels line: 4 whitespace-separated columns (query iter doc grade), or 2 "
                     f"(query doc, every listed document relevant); got {n}{hint}",
                     path=path, line=line, text=text)


def normalise_whitespace(chunk: bytes) -> bytes:
    """Tabs (and CR, VT, FF) → space, runs of spaces → one space, no space at either end of a line."""
    if b"\t" in chunk or b"\r" in chunk or b"\v" in chunk or b"\f" in chunk:
        chunk = chunk.translate(_TABS)
    if b"  " in chunk:
        chunk = _MULTI_SPACE.sub(b" ", chunk)
    if chunk[:1] == b" " or b"\n " in chunk or b" \n" in chunk or chunk[-1:] == b" ":
        chunk = _EDGE_SPACE.sub(b"", chunk)
    return chunk


def _has_comment(data: bytes | memoryview, end: int | None = None) -> bool:
    """Whether a line of ``data[:end]`` starts with ``#`` (memchr-speed; after whitespace normalisation a
    comment line starts with it)."""
    b = data if isinstance(data, bytes) else bytes(data)
    end = len(b) if end is None else end
    return b[:1] == b"#" or b.find(b"\n#", 0, end) >= 0


def _drop_comments(data: bytes) -> bytes:
    """Comment lines become empty lines (so line numbers stay right; pyarrow skips empty lines)."""
    return _COMMENT_LINE.sub(b"", data)


def _drop_extra_fields(data: bytes, ncols: int) -> bytes:
    """Normalised lines cut after their ``ncols``-th field (trec_eval ignores a run line's extra columns)."""
    pattern = re.compile(rb"^((?:[^ \n]+ ){%d}[^ \n]+) [^\n]*" % (ncols - 1), re.MULTILINE)
    return pattern.sub(rb"\1", data)


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
            elif offset == 0 and block.startswith(BOM):
                block = block[len(BOM):]  # a UTF-8 byte order mark is not part of the first id
                offset = len(BOM)
            cut = block.rfind(b"\n")
            if cut < 0:
                if len(block) > MAX_LINE_BYTES:  # bound what one line may hold (a file without newlines)
                    raise line_too_long(path, _line_number(os.fspath(path), offset))
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


def _convert_options(layout: Layout, doc_type: pa.DataType | None) -> pacsv.ConvertOptions:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {"query": pa.string(), "doc": pa.string() if doc_type is None else doc_type}
    keep = ["query", "doc"]
    if layout.numeric is not None:
        types[layout.numeric] = pa.float64()
        keep.append(layout.numeric)
    return pacsv.ConvertOptions(column_types=types, include_columns=keep, null_values=[], strings_can_be_null=False,
                                quoted_strings_can_be_null=False)


def _parse_options() -> pacsv.ParseOptions:
    import pyarrow.csv as pacsv

    return pacsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False, double_quote=False)


def arrow_owned(data: bytes | memoryview) -> pa.Buffer:
    """A copy of ``data`` in memory that Arrow allocated and owns.

    pyarrow's CSV reader parses on Arrow's own threads, and when a parse fails it returns before those
    threads are done with the input. Had the input been Python memory (``bytes``, a ``memoryview``), the
    thread that drops the last reference must take the GIL to release it; if the interpreter is exiting by
    then (the CLI printing the parse error and exiting), that thread is killed inside C++ code and the
    process aborts ("terminate called without an active exception", status 134) after correct output.
    Memory Arrow owns is released without Python, from any thread, at any time."""
    import pyarrow as pa

    n = len(data)
    buf = pa.allocate_buffer(n)
    if n:
        dst = np.frombuffer(buf, dtype=np.uint8)
        dst[:] = np.frombuffer(data, dtype=np.uint8)
        del dst  # the view (a Python export of buf) goes now, in this thread
    return buf


def _arrow_parse(data: bytes | memoryview, layout: Layout, doc_type: pa.DataType | None = None) -> pa.Table:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    read = pacsv.ReadOptions(column_names=list(layout.columns), block_size=4 << 20)
    return pacsv.read_csv(pa.BufferReader(arrow_owned(data)), read_options=read, parse_options=_parse_options(),
                          convert_options=_convert_options(layout, doc_type))


def parse_chunk(block: bytes, end: int, offset: int, path: str, layout: Layout,
                 doc_type: pa.DataType | None = None) -> tuple[pa.Table | None, bytes | None]:
    """Parse ``block[:end]`` (``doc_type``: the document ids' Arrow type, default string); returns the table
    and, if the chunk had to be cleaned, its bytes."""
    import pyarrow as pa

    if _NON_SPACE.search(block, 0, end) is None:
        return None, None
    if block.find(b"\r", 0, end) >= 0 and _BARE_CR.search(block, 0, end) is not None:
        # a CR inside a line: refused, at the first line that is wrong in any way
        _locate_bad_line(block[:end], _line_number(path, offset), path, layout, ValueError("carriage return"))
    # Try the bytes as they are, unless they hold a tab, CR, VT or FF (a split on single spaces could
    # then shift columns silently) or a comment line. Other irregular spacing (runs of spaces, spaces at
    # line ends) changes the column count, which pyarrow rejects, or yields an empty id; then normalise
    # and parse again.
    try:
        if _has_odd_whitespace(block, end) or _has_comment(block, end) or _irregular_spacing(block, end):
            raise pa.ArrowInvalid("odd whitespace, irregular spacing or a comment")
        table = _arrow_parse(memoryview(block)[:end], layout, doc_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass  # irregular spacing, or a real error: see below
    else:
        if not _has_empty_id(table):  # an empty field means irregular spacing (e.g. a leading space)
            return table, None
    data = normalise_whitespace(block[:end])
    if _has_comment(data):
        data = _drop_comments(data)
        if _NON_SPACE.search(data) is None:  # comments only (a file's last line, a comment without a newline)
            return None, None
    try:
        return _arrow_parse(data, layout, doc_type), data
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        if layout.extra_ok:
            cut = _drop_extra_fields(data, layout.ncols)
            if cut != data:
                try:
                    return _arrow_parse(cut, layout, doc_type), cut
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    pass
        _locate_bad_line(block[:end], _line_number(path, offset), path, layout, exc)
        raise  # pragma: no cover - _locate_bad_line always raises


_NON_SPACE = re.compile(rb"\S")
_BARE_CR = re.compile(rb"\r(?!\n|\r*\n|\r*$)")


def _refuse_bare_cr(text: str, path: str, line: int) -> None:
    """A carriage return inside a line (old Mac line ends, or pasted text) would join lines into one, whose
    extra fields a run line ignores: refuse it, naming the line, rather than read the file wrong."""
    raise ParseError(_BARE_CR_MESSAGE, path=path, line=line, text=text)


_BARE_CR_MESSAGE = "a carriage return inside a line (old Mac line ends?): lines must end with \\n or \\r\\n"


_ODD_WHITESPACE = (b"\t", b"\r", b"\x0b", b"\x0c")


def _has_odd_whitespace(block: bytes, end: int) -> bool:
    """Whether ``block[:end]`` holds whitespace other than spaces and newlines (memchr-speed scans)."""
    return any(block.find(c, 0, end) >= 0 for c in _ODD_WHITESPACE)


_IRREGULAR = (b"  ", b" \n", b"\n ")


def _irregular_spacing(block: bytes | Any, end: int, *, edges: bool = True) -> bool:
    """Whether ``block[:end]`` has two spaces in a row or a space at a line's start or end (``edges``:
    the block's first and last bytes count as a line's start and end). A split on single spaces would make
    an empty field there; in an id that is seen, in an ignored column (a run's missing tag: ``q1 Q0 d1 1
    0.5 ``) it would go unnoticed, so such input takes the careful path, which splits on runs of
    whitespace."""
    return (edges and end > 0 and (block[:1] == b" " or block[end - 1: end] == b" ")) or \
        any(block.find(c, 0, end) >= 0 for c in _IRREGULAR)


#: Bytes read per block by :func:`_file_needs_care`.
_CARE_BLOCK = 16 << 20


def _file_needs_care(path: str) -> bool:
    """Whether the file holds whitespace other than spaces and newlines, irregular spacing or a comment
    line: a few memchr-speed passes over each block of the file, read (not mapped: a file truncated by
    another process meanwhile then reads short, where a mapping would kill the process with SIGBUS) into
    one reused buffer. Blocks overlap by one byte, so a pair of bytes across a cut is seen."""
    from ragrade import _ingest

    helper = _ingest.c_helper()
    odd = helper.find_odd_whitespace if helper is not None else _has_odd_whitespace_np
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(min(_CARE_BLOCK, os.fstat(f.fileno()).st_size) + 1)
        view = memoryview(buf)
        n = f.readinto(view[1:])
        if not n:
            return False
        buf[0] = 10  # a virtual newline before the file: a comment or a space at its start is found
        while n:
            if buf.find(b"\n#", 0, n + 1) >= 0 or _irregular_spacing(buf, n + 1, edges=False) \
                    or odd(view[: n + 1]) >= 0:
                return True
            last = buf[n]
            buf[0] = last
            n = f.readinto(view[1:])
        return last == 32  # a space at the file's end


def _has_odd_whitespace_np(block: memoryview) -> int:
    """:func:`find_odd_whitespace` of the C helper, with NumPy (>= 0: found)."""
    part = np.frombuffer(block, dtype=np.uint8)
    return 0 if ((part >= 9) & (part <= 13) & (part != 10)).any() else -1


def _has_empty_id(table: pa.Table) -> bool:
    """True if an id is empty: a sign of irregular spacing (a leading space, or two spaces in a row) that
    a split on single spaces got wrong. The caller then normalises the whitespace and parses again."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for name in ("query", "doc"):
        for chunk in table.column(name).chunks:
            d = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
            if len(d) == 0:
                continue
            if pc.min(pc.binary_length(d)).as_py() == 0:
                return True
    return False


def _content_lines(chunk: bytes) -> Iterator[tuple[int, bytes]]:
    """``(index, line)`` of the lines of ``chunk`` that are neither blank nor comments."""
    for i, line in enumerate(chunk.split(b"\n")):
        if line.strip() and not is_comment(line):
            yield i, line


def _locate_bad_line(chunk: bytes, first_line: int, path: str, layout: Layout, exc: Exception) -> None:
    """Error path: find the first line of ``chunk`` that does not parse and raise a ParseError for it."""
    ncol = layout.ncols
    for i, raw_line in _content_lines(chunk):
        text = raw_line.decode("utf-8", errors="replace").rstrip("\r")
        if "\r" in text:
            raise ParseError(_BARE_CR_MESSAGE, path=path, line=first_line + i, text=text)
        fields = raw_fields = raw_line.split()  # ASCII whitespace only, as the readers split
        try:  # the ids must be UTF-8 (as pyarrow and the C scanner check them); other columns are not read
            for k in (0, layout.columns.index("doc")):
                if k < len(raw_fields):
                    raw_fields[k].decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("an id is not valid UTF-8", path=path, line=first_line + i, text=text) from None
        if len(fields) != ncol and not (layout.extra_ok and len(fields) > ncol):
            more = " or more" if layout.extra_ok else ""
            raise ParseError(
                f"expected {ncol}{more} whitespace-separated columns for a TREC {layout.kind} line "
                f"({layout.described}), like the first line, got {len(fields)}",
                path=path, line=first_line + i, text=text,
            )
        if layout.numeric is not None and not is_arrow_number(fields[layout.columns.index(layout.numeric)]):
            raise ParseError(f"{layout.numeric_what} is not a number", path=path, line=first_line + i, text=text)
    raise ParseError(f"cannot parse the TREC {layout.kind} file ({exc})", path=path)


def _values(table: pa.Table, layout: Layout) -> np.ndarray:
    if layout.numeric is None:
        return np.ones(table.num_rows, dtype=np.float64)
    return table.column(layout.numeric).to_numpy()


def _read(path: PathLike, layout: Layout, chunk_size: int, progress: Progress | None,
          doc_type: pa.DataType | None = None) -> tuple[list, list, list, int]:
    p = os.fspath(path)
    qchunks: list[pa.Array] = []
    dchunks: list[pa.Array] = []
    vals: list[np.ndarray] = []
    n = 0
    for block, end, offset in iter_chunks(p, chunk_size, progress):
        table, _ = parse_chunk(block, end, offset, p, layout, doc_type)
        if table is None or table.num_rows == 0:
            continue
        qchunks.extend(table.column("query").chunks)
        dchunks.extend(table.column("doc").chunks)
        v = _values(table, layout)
        if layout.kind == "run" and np.isnan(v).any():
            # Report at once, with the chunk in hand.
            r = int(np.flatnonzero(np.isnan(v))[0])
            i, text = list(_content_lines(block[:end]))[r]
            raise ParseError("score is NaN (scores must be comparable numbers)", path=p,
                             line=_line_number(p, offset) + i, text=text.decode("utf-8", errors="replace").strip())
        vals.append(v)
        n += table.num_rows
    return qchunks, dchunks, vals, n


def _read_whole(path: str, layout: Layout, doc_type: pa.DataType | None, progress: Progress | None
                ) -> pa.Table | None:
    """Fast path: pyarrow reads and parses the file with its own pipelined, multi-threaded reader (block
    by block, no Python object per line). Returns None when the file needs the careful chunked path:
    gzip, a byte-order mark, irregular spacing, a comment line, a parse error (extra run columns among
    them), NaN scores or no lines (that path reports the exact line)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from ragrade.io.tables import arrow_read

    stream, raw = open_binary(path)
    try:
        head = stream.read(len(BOM))
    finally:
        stream.close()
        raw.close()
    if head == BOM or is_gzip(path) or _file_needs_care(path):
        # gzip: the chunked reader decompresses in one pass and reports progress on the raw bytes;
        # tabs, CRs, comment lines and the like: the chunked reader normalises them.
        return None
    read = pacsv.ReadOptions(column_names=list(layout.columns), block_size=8 << 20)
    try:
        table = arrow_read(path, progress, pacsv.read_csv, read_options=read, parse_options=_parse_options(),
                           convert_options=_convert_options(layout, doc_type))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows == 0 or _has_empty_id(table):
        return None
    if layout.kind == "run" and layout.numeric is not None and pc_any_nan(table.column(layout.numeric)):
        return None
    return table


def pc_any_nan(col: pa.ChunkedArray) -> bool:
    import pyarrow.compute as pc

    return bool(pc.any(pc.is_nan(col)).as_py())

class Scanned:
    """What the C tokenizer (:func:`_scan_fast`) returns: the numbers, the document ids (a
    :class:`~ragrade._arrays.Utf8Column`: one chunk per thread's part of the file, no pyarrow), and the runs of equal
    query ids (``qids[i]`` starts at row ``starts[i]``; ``starts`` ends with the row count)."""

    __slots__ = ("docs", "qids", "starts", "values")

    def __init__(self, values: np.ndarray, docs: Utf8Column, qids: np.ndarray,
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


def map_readonly(fd: int) -> tuple[Any, bool]:
    """``(mapping, own)``: the C helper's own read-only shared mapping of the file (``own``: pages
    already scanned may be dropped from it), else Python's portable ``mmap`` with ``ACCESS_READ``."""
    import mmap

    from ragrade._ingest import _accel

    file_map = getattr(_accel, "FileMap", None)
    if file_map is not None:
        return file_map(fd), True
    return mmap.mmap(fd, 0, access=mmap.ACCESS_READ), False


def changed_while_reading(path: str | None, detail: str = "") -> ParseError:
    """The error of a file that another process changed (truncated, rewrote, extended) while ragrade read
    it: what was read is not the file, so nothing is returned."""
    return ParseError(f"the file changed while it was being read{detail}: read it again once nothing writes "
                      "to it", path=path)


def file_stamp(path: str) -> tuple[int, int] | None:
    """``(size, modification time in ns)`` of a regular file (None otherwise: a pipe, a special file)."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def check_unchanged_size(fd: int, size: int, path: str) -> None:
    """Raise :func:`changed_while_reading` if the open file ``fd`` no longer holds ``size`` bytes."""
    now = os.fstat(fd).st_size
    if now != size:
        raise changed_while_reading(path, f" (it held {size:,} bytes, now {now:,})")


def check_unchanged(path: str, before: tuple[int, int] | None) -> None:
    """Raise :func:`changed_while_reading` if the file's size or modification time is not ``before``'s."""
    if before is None:
        return
    after = file_stamp(path)
    if after != before:
        detail = f" (it held {before[0]:,} bytes, now {after[0]:,})" if after is not None else " (it is gone)"
        raise changed_while_reading(path, detail if after is None or after[0] != before[0] else "")


def _scan_fast(path: str, layout: Layout, progress: Progress | None) -> Scanned | None:
    """Fast path for plain TREC files, with the C helper: the file is memory-mapped and tokenized in
    place by one thread per core, each on a slice cut at a newline, straight into the arrays the engine
    uses (no Arrow table, no per-column chunks, no copy of the file). Returns None, and the caller takes
    the pyarrow path, for gzip, a byte-order mark, no C helper, a two-column file, or any irregular line:
    the C scan stops at anything it does not take exactly as pyarrow would, and at comment lines (see
    ``scan_trec`` in ``_accel.c``)."""
    from ragrade._ingest import _accel

    if _accel is None:
        from ragrade import _native

        _native.warn_fallback()
        return None
    if layout.numeric is None or is_gzip(path):
        return None
    columns = layout.columns
    ncols, numcol, doccol = len(columns), columns.index(layout.numeric), columns.index("doc")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        if os.pread(f.fileno(), len(BOM), 0) == BOM:
            return None
        try:
            mm, own = map_readonly(f.fileno())
        except (OSError, ValueError):  # not mappable (a pipe, some network file systems): pyarrow reads it
            return None
        try:
            try:
                return scan_mapped(mm, size, ncols, numcol, doccol, progress, own, path=path)
            except MemoryError:  # the outputs are sized for the worst case: leave it to pyarrow
                return None
        finally:
            mm.close()


def scan_mapped(mm: Any, size: int, ncols: int, numcol: int, doccol: int, progress: Progress | None,
                release: bool, start: int = 0, *, path: str | None = None) -> Scanned | None:
    """Tokenize ``mm[start:size]`` (whole lines; ``start`` > 0: a window of the file, as the out-of-core
    reader in :mod:`ragrade.io.stream` asks). A file that shrinks under the mapping (another process
    truncates it) raises :func:`changed_while_reading` (``path``: the file named), never SIGBUS."""
    if len(mm) < size:
        raise changed_while_reading(path, f" (it held {size:,} bytes, now {len(mm):,})")
    with mapping_faults(path):
        parts = _cut_parts(mm, start, size)
        outs = _scan_parts(mm, parts, ncols, numcol, doccol, progress, release, size)
    if any(o[6][6] == 3 for o in outs):  # the scanner caught SIGBUS: the file shrank meanwhile
        raise changed_while_reading(path)
    if any(o[6][6] != 0 for o in outs):
        return None
    return _join_parts(outs)


def _accel_module() -> Any:
    from ragrade._ingest import c_helper

    return c_helper()


@contextmanager
def mapping_faults(path: str | None) -> Iterator[None]:
    """Reads of a file mapping inside: the C helper's ``MappingFault`` (the file shrank under the mapping,
    SIGBUS caught) becomes :func:`changed_while_reading`."""
    fault = getattr(_accel_module(), "MappingFault", None)
    try:
        yield
    except OSError as exc:
        if fault is not None and isinstance(exc, fault):
            raise changed_while_reading(path) from None
        raise


def _cut_parts(mm: Any, start: int, size: int) -> list[tuple[int, int]]:
    """The parts of ``mm[start:size]`` scanned by one thread each (cut after a newline)."""
    workers = max(1, min(os.cpu_count() or 1, 4)) if size - start >= _PARALLEL_MIN else 1
    cuts = [start]
    for i in range(1, workers):
        nl = mm.find(b"\n", max(start + (size - start) * i // workers, cuts[-1]))
        cuts.append(size if nl < 0 else nl + 1)
    cuts.append(size)
    return [(a, z) for a, z in pairwise(cuts) if z > a]


def _scan_parts(mm: Any, parts: list[tuple[int, int]], ncols: int, numcol: int, doccol: int,
                progress: Progress | None, release: bool, size: int) -> list[tuple[np.ndarray, ...]]:
    """Run the C tokenizer over each part (one thread each); each part's outputs and state."""
    import threading

    _accel = _accel_module()
    # Upper bounds: a line is at least 2 * ncols bytes (one byte per field, the separators, the newline).
    caps = [(z - a + 1) // (2 * ncols) + 1 for a, z in parts]
    # Numbers: part 0 writes into an array sized for the whole file, the others into their own, copied
    # after it. Document ids: each part's become one chunk of the run's (chunked) Arrow array, as they are.
    # (Untouched capacity costs address space only, not memory.)
    total_rows = sum(caps)
    outs: list[tuple[np.ndarray, ...]] = []
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
        assert _accel is not None
        a, z = parts[i]
        vals, doc_off, doc_data, seg_row, q_off, q_data, state = outs[i]
        pos = a
        while pos < z and state[6] == 0:
            stop = z
            if z - pos > _SCAN_WINDOW:
                nl = mm.find(b"\n", pos + _SCAN_WINDOW, z)
                stop = z if nl < 0 else nl + 1
            _accel.scan_trec(mm, pos, stop, ncols, numcol, doccol, release, vals, doc_off, doc_data, seg_row,
                             q_off, q_data, state)
            if progress is not None:
                with lock:
                    done[0] += stop - pos
                    progress(done[0], size)
            pos = stop

    if len(parts) == 1:
        scan(0)
    else:
        from ragrade._threads import each

        each(scan, range(len(parts)))
    return outs


def _join_parts(outs: list[tuple[np.ndarray, ...]]) -> Scanned | None:
    """One :class:`Scanned` from the parts' outputs: rows of part i follow those of part i-1."""
    vals = outs[0][0]
    n = 0
    doc_chunks, qids_parts, starts_parts = [], [], []
    for i, (v, doc_off, doc_data, seg_row, q_off, q_data, state) in enumerate(outs):
        rows, dbytes, nseg, qbytes = (int(x) for x in state[:4])
        if i > 0:
            vals[n: n + rows] = v[:rows]
        if rows:
            doc_chunks.append((doc_off[: rows + 1], doc_data[:dbytes]))
        qids = decode_strings(q_off, q_data, nseg)
        if qids is None:
            qids = Utf8Column([(q_off[: nseg + 1], q_data[:qbytes])]).decoded()
        qids_parts.append(qids)
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
    docs = Utf8Column(doc_chunks)
    return Scanned(vals[:n], docs, qids, np.append(starts, n).astype(np.int64))


def _read_table_or_chunks(p: str, layout: Layout, chunk_size: int, progress: Progress | None,
                          doc_type: pa.DataType | None) -> tuple[list, list, list, int]:
    table = _read_whole(p, layout, doc_type, progress) if chunk_size == CHUNK_SIZE else None
    if table is None:
        return _read(p, layout, chunk_size, progress, doc_type)
    return (table.column("query").chunks, table.column("doc").chunks, [_values(table, layout)], table.num_rows)


def _segment_codes(scan: Scanned) -> tuple[np.ndarray, np.ndarray]:
    """Per-row query codes and the query vocabulary, from the runs of equal query ids."""
    codes, vocab = factorize(scan.qids)
    return np.repeat(codes.astype(np.int32), np.diff(scan.starts)), np.asarray(vocab, dtype=object)


def _locator(path: str):
    return lambda r: locate_nonblank(path, r, comments=True)


def _split_values(layout: Layout, values: np.ndarray, starts: np.ndarray, seg_queries: np.ndarray,
                  path: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(scores, ranks)`` of a run: a three-column file's numbers are ranks or scores (by the layout or by
    :func:`values_are_ranks`); a two-column file has neither (file order is the ranking)."""
    if layout.numeric is None:
        return None, None
    ranks = layout.as_ranks
    if layout is RUN3:
        ranks = values_are_ranks(values, starts, seg_queries, path=path, locate=_locator(path))
    return (None, values) if ranks else (values, None)


def _run_from_scan(scan: Scanned, path: str, name: str | None, layout: Layout) -> Run:
    locate = _locator(path)
    scores, ranks = _split_values(layout, scan.values, scan.starts, scan.qids, path)
    if scan.grouped:
        return assemble_run(None, scan.qids, None, None, scores, name=name, path=path, locate=locate,
                            raw_docs=scan.docs, offsets=scan.starts, ranks=ranks, ids_checked=True)
    qcodes, qvocab = _segment_codes(scan)
    return assemble_run(qcodes, qvocab, None, None, scores, name=name, path=path, locate=locate,
                        raw_docs=scan.docs, ranks=ranks, ids_checked=True)


def _qrels_from_scan(scan: Scanned, path: str) -> Qrels:
    locate = _locator(path)
    if scan.grouped:  # the usual file
        qrels = assemble_qrels_raw(scan.qids, scan.starts, scan.docs, scan.values, path=path, locate=locate,
                                   ids_checked=True)
        if qrels is not None:
            return qrels
    qcodes, qvocab = _segment_codes(scan)
    dcodes, dvocab = dictionary_codes(scan.docs)
    return assemble_qrels(qcodes, qvocab, dcodes, dvocab, scan.values, path=path, locate=locate)


def read_trec_run(path: PathLike, name: str | None = None, *, format: str = "trec", chunk_size: int = CHUNK_SIZE,
                  progress: Progress | None = None) -> Run:
    """Read a TREC-family run file (whitespace-separated, optionally gzipped): ``qid Q0 docno rank score
    tag`` (extra columns after the tag are ignored), ``qid docno score`` or MS MARCO's ``qid docno rank``
    (told apart by the rule of :func:`~ragrade.io.sniffing.values_are_ranks`, or fixed by ``format=
    "msmarco"`` / ``"qid-doc-score"``), or ``qid docno`` (file order is the ranking). Comment lines
    (first non-blank character ``#``) are skipped.

    ``name`` defaults to the tag of the first line (six-column files), else the file name. Rows need not
    be grouped by query."""
    p = os.fspath(path)
    stamp = file_stamp(p)
    run = _read_trec_run(p, name, format, chunk_size, progress)
    check_unchanged(p, stamp)  # another process wrote to the file meanwhile: what was read is not the file
    return run


def _read_trec_run(p: str, name: str | None, format: str, chunk_size: int, progress: Progress | None) -> Run:
    layout, tag = run_layout(p, format)
    if name is None:
        name = tag if tag is not None else default_run_name(p)
    fast = _scan_fast(p, layout, progress) if chunk_size == CHUNK_SIZE else None
    if fast is not None:
        return _run_from_scan(fast, p, name, layout)
    # Document ids stay raw Arrow strings: evaluation maps them straight to the judged ids, so the
    # run's own vocabulary is built only if something asks for it.
    import pyarrow as pa

    qchunks, dchunks, vals, n = _read_table_or_chunks(p, layout, chunk_size, progress, None)
    check_nonempty(n, p, "run lines")
    qcol = pa.chunked_array(qchunks, type=pa.string())
    groups = query_groups(qcol)
    values = vals[0] if len(vals) == 1 else np.concatenate(vals)
    if groups is not None:  # grouped by query (the usual file): no per-row query codes at all
        qcodes, (qvocab, qoffsets) = None, groups
        starts, seg_queries = qoffsets, qvocab
    else:
        (qcodes, qvocab), qoffsets = dictionary_codes(qcol), None
        starts = value_segments(qcodes)
        seg_queries = qcodes[starts[:-1]]
    scores, ranks = _split_values(layout, values, starts, seg_queries, p)
    docs = pa.chunked_array(dchunks, type=pa.string())  # raw ids, coded only if ever needed
    return assemble_run(qcodes, qvocab, None, None, scores, name=name, path=p, locate=_locator(p), raw_docs=docs,
                        offsets=qoffsets, ranks=ranks)


def read_trec_qrels(path: PathLike, *, chunk_size: int = CHUNK_SIZE, progress: Progress | None = None) -> Qrels:
    """Read a TREC-family qrels file (whitespace-separated, optionally gzipped): ``qid iter docno rel``, or
    ``qid docno`` (every listed document has grade 1). Comment lines (first non-blank character ``#``) are
    skipped."""
    p = os.fspath(path)
    stamp = file_stamp(p)
    qrels = _read_trec_qrels(p, chunk_size, progress)
    check_unchanged(p, stamp)
    return qrels


def _read_trec_qrels(p: str, chunk_size: int, progress: Progress | None) -> Qrels:
    layout = qrels_layout(p)
    fast = _scan_fast(p, layout, progress) if chunk_size == CHUNK_SIZE else None
    if fast is not None:
        return _qrels_from_scan(fast, p)
    import pyarrow as pa

    qchunks, dchunks, vals, n = _read_table_or_chunks(p, layout, chunk_size, progress, str_dict())
    check_nonempty(n, p, "judgments")
    qcodes, qvocab = query_codes(pa.chunked_array(qchunks, type=pa.string()))
    dcodes, dvocab = dictionary_codes(pa.chunked_array(dchunks, type=str_dict()))
    grades = np.concatenate(vals)
    return assemble_qrels(qcodes, qvocab, dcodes, dvocab, grades, path=p, locate=_locator(p))


# -- writers -----------------------------------------------------------------------------------------
def _check_ids(vocab: np.ndarray, what: str) -> None:
    """TREC files are whitespace-separated: an id containing whitespace cannot be written."""
    if len(vocab) == 0:
        return
    import pyarrow as pa
    import pyarrow.compute as pc

    bad = pc.match_substring_regex(pa.array(vocab, type=pa.string()), r"\s").to_numpy(zero_copy_only=False)
    if bad.any():
        raise InputError(f"a {what} contains whitespace and cannot be written to a TREC file; use TSV, JSONL "
                         "or Parquet", value=str(vocab[np.flatnonzero(bad)[0]]))


def _write_table(table: pa.Table, path: PathLike) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    opts = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    if os.fspath(path).lower().endswith(".gz"):
        with pa.CompressedOutputStream(os.fspath(path), "gzip") as out:
            pacsv.write_csv(table, out, opts)
    else:
        pacsv.write_csv(table, os.fspath(path), opts)


def _const(value: str, n: int) -> pa.DictionaryArray:
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([value]))


def write_trec_run(run: Run, path: PathLike, tag: str | None = None, ties: str = "docid_desc") -> None:
    """Write ``qid Q0 docno rank score tag`` lines in rank order (ranks 1..n per query).

    Ranked lists without scores get descending scores ``n - position`` so that reading the file back
    gives the same order. ``tag`` defaults to the run's name (or ``ragrade``)."""
    import pyarrow as pa

    tag = tag or run.name or "ragrade"
    if any(c.isspace() for c in tag):
        raise InputError("the run tag cannot contain whitespace", value=tag)
    _check_ids(run.query_ids, "query id")
    _check_ids(run.doc_vocab, "document id")
    order = run.ranking(ties)
    counts = np.diff(run.offsets)
    seg = np.repeat(np.arange(run.n_queries, dtype=np.int32), counts)
    pos = np.arange(run.n_rows, dtype=np.int64) - np.repeat(run.offsets[:-1], counts)
    # ranked lists: descending pseudo-scores keep the order
    scores = (np.repeat(counts, counts) - pos).astype(np.float64) if run.scores is None else run.scores[order]
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
    import pyarrow as pa

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
