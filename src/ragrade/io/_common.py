"""Shared pieces of the readers: format detection, sniffing, opening (gzip), and turning Arrow columns
into the integer-coded storage of :class:`~ragrade.data.Qrels` / :class:`~ragrade.data.Run`.

The assembly functions work on whole arrays: ids are dictionary-coded by Arrow, so building a Run of
millions of rows creates one Python string per *distinct* id, never one object per line.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa

from ragrade._arrays import contiguous
from ragrade.data import Qrels, Run
from ragrade.data.columns import first_duplicate
from ragrade.data.ids import first_nul, id_column
from ragrade.errors import ParseError

Progress = Callable[[int, int], None]
PathLike = str | os.PathLike[str]

from ragrade.io.columns import (  # noqa: E402,F401 - the vocabulary, re-exported for the readers
    DOC_NAMES,
    GOLD_LIST_NAMES,
    GRADE_NAMES,
    GROUP_NAMES,
    QUERY_NAMES,
    RANK_NAMES,
    RUN_LIST_NAMES,
    SCORE_NAMES,
)
from ragrade.io.columns import HEADER_WORDS as _HEADER_WORDS  # noqa: E402

STR_DICT = pa.dictionary(pa.int32(), pa.string())


# -- format detection -------------------------------------------------------------------------------
_GZIP_MAGIC = b"\x1f\x8b"


def gz_extension(path: PathLike) -> bool:
    """Whether ``path`` ends in ``.gz`` (writers compress such files)."""
    return os.fspath(path).lower().endswith(".gz")


def is_gzip(path: PathLike) -> bool:
    """Whether the file at ``path`` is gzip-compressed, told by its first two bytes (the gzip magic
    number), whatever its name; a file that cannot be opened falls back to the ``.gz`` extension."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == _GZIP_MAGIC
    except OSError:
        return gz_extension(path)


def open_binary(path: PathLike) -> tuple[IO[bytes], IO[bytes]]:
    """``(stream, raw)``: the decompressed byte stream and the raw file (whose position gives progress).
    gzip is recognised by its magic number, not by the file name."""
    raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed by the caller
    if raw.read(2) == _GZIP_MAGIC:
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw  # type: ignore[return-value]
    raw.seek(0)
    return raw, raw


def is_comment(line: bytes | str) -> bool:
    """A comment line of the TREC family: its first non-blank character is ``#`` (as trec_eval reads it)."""
    s = line.lstrip()
    return s[:1] in (b"#", "#")


#: The longest line (or JSONL record) a reader holds: a longer one is refused, naming the file and the
#: line, so that a file without line breaks (``/dev/zero`` through a pipe, a binary file) cannot grow a
#: reader's memory without bound. Any shorter line is read whole, however long (docs/formats.md).
MAX_LINE_BYTES = 64 << 20


def line_too_long(path: PathLike, line: int | None, limit: int = MAX_LINE_BYTES) -> ParseError:
    """The error for a line longer than ``limit`` bytes (:data:`MAX_LINE_BYTES`)."""
    return ParseError(f"a line longer than {limit >> 20} MiB ({limit} bytes, ragrade's limit for one line or "
                      "record): is this a text file with line breaks?", path=os.fspath(path), line=line)


# -- what a text reader cannot read: other encodings, binary formats -----------------------------------
#: Byte-order marks of encodings other than UTF-8 (longest first: UTF-32 LE starts as UTF-16 LE does).
_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32", "little-endian"), (b"\x00\x00\xfe\xff", "UTF-32", "big-endian"),
         (b"\xff\xfe", "UTF-16", "little-endian"), (b"\xfe\xff", "UTF-16", "big-endian"))
#: Leading bytes of binary files: (magic, what the file is, ragrade's format name for it or None).
_MAGIC = ((b"PAR1", "a Parquet file", "parquet"), (b"ARROW1", "an Arrow IPC (Feather) file", "arrow"),
          (b"\xff\xff\xff\xff", "an Arrow IPC stream", "arrow"),
          (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one)", None),
          (b"SQLite format 3\x00", "an SQLite database", None), (b"%PDF-", "a PDF document", None),
          (b"\xfd7zXZ\x00", "xz-compressed", None), (b"\x28\xb5\x2f\xfd", "Zstandard-compressed", None),
          (b"BZh", "bzip2-compressed", None))


def _nul_pattern(head: bytes) -> str | None:
    """The encoding that a head holding NUL bytes looks like: UTF-32 or UTF-16 text of ASCII characters
    (zero bytes at fixed positions) without a byte-order mark, else None."""
    n = len(head) - len(head) % 4
    if n < 4:
        return None
    zero = [b == 0 for b in head[:n]]
    share = [sum(zero[i::4]) / (n // 4) for i in range(4)]
    if min(share[1:]) > 0.9 and share[0] < 0.5:
        return "UTF-32 (little-endian, no byte-order mark)"
    if min(share[:3]) > 0.9 and share[3] < 0.5:
        return "UTF-32 (big-endian, no byte-order mark)"
    odd, even = (share[1] + share[3]) / 2, (share[0] + share[2]) / 2
    if odd > 0.9 and even < 0.5:
        return "UTF-16 (little-endian, no byte-order mark)"
    if even > 0.9 and odd < 0.5:
        return "UTF-16 (big-endian, no byte-order mark)"
    return None


def text_problem(head: bytes) -> str | None:
    """Why a reader of UTF-8 text (TREC, TSV, CSV, JSONL) cannot read a file that starts with ``head`` (its
    first bytes, decompressed), in words; None when nothing is seen. A UTF-16 or UTF-32 file (with or
    without a byte-order mark) is named, as are binary formats (Parquet, Arrow, ZIP ...): the readers would
    otherwise report wrong columns, with NUL bytes or binary in the message."""
    for bom, enc, order in _BOMS:
        if head.startswith(bom):
            return _convert(f"{enc} ({order}, with a byte-order mark)", enc)
    for magic, what, fmt in _MAGIC:
        if head.startswith(magic) and (magic != b"BZh" or head[3:10] in {bytes([d]) + b"1AY&SY" for d in b"123456789"}):
            how = (f": read it as {fmt} (name it .{fmt}, or give its format: --run-format/--qrels-format {fmt} "
                   f"on the command line, format={fmt!r} in Python)") if fmt else " (ragrade reads none of these)"
            return f"the file is {what}, not text{how}"
    wide = _nul_pattern(head) if b"\x00" in head else None
    if wide is not None:
        return _convert(wide, wide.split()[0] + ("LE" if "little" in wide else "BE"))
    return None  # other NUL bytes: the readers name the line (a NUL in an id is refused there)


def _convert(encoding: str, iconv_name: str) -> str:
    return (f"the file is encoded in {encoding}; ragrade reads UTF-8 text: convert it first "
            f"(e.g. iconv -f {iconv_name} -t UTF-8 FILE > FILE.utf8)")


def check_text_head(path: PathLike, head: bytes) -> None:
    """Raise a :class:`ParseError` naming the file when :func:`text_problem` finds something in ``head``."""
    problem = text_problem(head[:4096])
    if problem is not None:
        raise ParseError(problem, path=os.fspath(path))


def not_utf8(path: PathLike) -> ParseError | None:
    """A :class:`ParseError` naming the first line of a (possibly gzipped) file that is not valid UTF-8 and
    its first bad byte (a Latin-1 or Windows-1252 file, usually), or None. Error paths only."""
    try:
        for _ in _utf8_lines(path):
            pass
    except ParseError as exc:
        return exc
    return None


def _utf8_error(path: PathLike, line: int, raw: bytes, exc: UnicodeDecodeError) -> ParseError:
    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    return ParseError(f"the file is not valid UTF-8 (byte 0x{raw[exc.start]:02x}); ragrade reads UTF-8 text: if it is "
                      "Latin-1 or Windows-1252, convert it first (e.g. iconv -f CP1252 -t UTF-8 FILE > FILE.utf8)",
                      path=os.fspath(path), line=line, text=text)


def first_line(path: PathLike, limit: int = MAX_LINE_BYTES, *, skip_comments: bool = False) -> str | None:
    """The first non-blank line of a text file (decompressed), or None if there is none.
    ``skip_comments`` also passes over TREC comment lines (see :func:`is_comment`)."""
    got = first_data_line(path, limit, skip_comments=skip_comments)
    return None if got is None else got[1]


def first_data_line(path: PathLike, limit: int = MAX_LINE_BYTES, *,
                    skip_comments: bool = True) -> tuple[int, str] | None:
    """``(line number, text)`` of the first non-blank (and, with ``skip_comments``, non-comment) line, or
    None if the file has none. The line is read whole, however long; a line longer than ``limit`` bytes is
    a :class:`ParseError` (:func:`line_too_long`)."""
    stream, raw = open_binary(path)
    buf = bytearray()
    number = 0  # lines consumed so far
    try:
        while True:
            try:
                block = stream.read(1 << 16)
            except (OSError, EOFError) as exc:
                raise ParseError(f"cannot read the file ({exc})", path=os.fspath(path)) from None
            if number == 0 and not buf:
                check_text_head(path, block)  # UTF-16, Parquet named .tsv ...: said, not misread
                if block.startswith(b"\xef\xbb\xbf"):
                    block = block[3:]
            start = len(buf)
            buf += block
            pos = 0
            while True:
                nl = buf.find(b"\n", max(start, pos))
                if nl < 0:
                    break
                line = bytes(buf[pos:nl])
                number += 1
                if line.strip() and not (skip_comments and is_comment(line)):
                    return number, line.decode("utf-8", errors="replace").rstrip("\r")
                pos = nl + 1
            del buf[:pos]
            if not block:  # end of the file: the last line may lack its newline
                if buf.strip() and not (skip_comments and is_comment(bytes(buf))):
                    return number + 1, bytes(buf).decode("utf-8", errors="replace").rstrip("\r")
                return None
            if len(buf) > limit:
                raise line_too_long(path, number + 1, limit)
    finally:
        stream.close()
        raw.close()


_ARROW_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([^)]*\))?)",
    re.IGNORECASE | re.ASCII,
)


def is_arrow_number(token: str | bytes) -> bool:
    """Whether pyarrow reads ``token`` as a float64 (plain decimals, ``inf``/``infinity``/``nan`` in any
    case). Python's ``float`` is laxer (``1_000``, non-ASCII digits): error paths use this, so that the line
    they blame is the one pyarrow refused."""
    if isinstance(token, bytes):
        try:
            token = token.decode("ascii")
        except UnicodeDecodeError:
            return False
    return _ARROW_NUMBER.fullmatch(token) is not None


def split_fields(line: str) -> list[str]:
    """``line`` split on ASCII whitespace only (as the TREC readers split; ``str.split`` would also split
    on no-break and other Unicode spaces inside an id)."""
    return [f.decode("utf-8", errors="replace") for f in line.encode("utf-8", errors="surrogatepass").split()]


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def sniff_trec(line: str) -> str | None:
    """``"qrels"`` / ``"run"`` if ``line`` looks like a TREC qrels / run line, else None.

    Rule: split on runs of whitespace; 4 fields whose last is a number → qrels (``qid iter docno rel``);
    6 fields (or more: trec_eval ignores what follows the tag) whose 4th and 5th are numbers → run
    (``qid Q0 docno rank score tag``); and no field is a known header word (``query``, ``doc``,
    ``score``, ``qid``, ``docno``, ``rank``, ...).
    """
    fields = split_fields(line)
    if any(f.lower() in _HEADER_WORDS for f in fields[:6]):
        return None
    if len(fields) == 4 and _is_number(fields[3]):
        return "qrels"
    if len(fields) >= 6 and _is_number(fields[3]) and _is_number(fields[4]):
        return "run"
    return None


def sniff_short_trec(line: str) -> str | None:
    """``"run"`` for a line of three whitespace-separated fields ending in a number (``qid doc score`` or
    MS MARCO's ``qid doc rank``), ``"qrels"`` for two fields (``qid doc``: every listed document relevant),
    else None; no field may be a header word."""
    fields = split_fields(line)
    if any(f.lower() in _HEADER_WORDS for f in fields):
        return None
    if len(fields) == 3 and _is_number(fields[2]):
        return "run"
    if len(fields) == 2:
        return "qrels"
    return None


def looks_like_header(fields: list[str]) -> bool:
    """A first row is a header unless its last field is a number and no field is a known column name."""
    if any(f.strip().lower() in _HEADER_WORDS for f in fields):
        return True
    return not (fields and _is_number(fields[-1].strip()))


def pick_column(names: list[str], wanted: str | None, defaults: tuple[str, ...], what: str, path: str,
                required: bool = True, exclude: tuple[str, ...] = (), option: str | None = None) -> str | None:
    """The column to use for ``what``: ``wanted`` if given (must exist), else the first default present
    (names compared case-insensitively). ``option``: the keyword that names it (default ``{what}_col``)."""
    if wanted is not None:
        if wanted not in names:
            raise ParseError(f"no column {wanted!r} for the {what} (columns: {', '.join(names)})", path=path)
        return wanted
    lower = {n.lower(): n for n in names}
    for d in defaults:
        if d in lower and lower[d] not in exclude:
            return lower[d]
    if required:
        raise ParseError(
            f"cannot find the {what} column (looked for {', '.join(defaults)}; columns: {', '.join(names)}); "
            f"name it with the {option or what + '_col'} option",
            path=path,
        )
    return None


# -- Arrow columns -> codes ------------------------------------------------------------------------
def dictionary_codes(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(codes int32, vocabulary object array of str)`` of a string-like or dictionary Arrow column.

    Dictionary chunks are unified (one vocabulary); anything else is cast to string and encoded.
    """
    import pyarrow.compute as pc

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


# -- assembly ----------------------------------------------------------------------------------------
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


RowLocator = Callable[[int], tuple[int | None, str | None]]


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


def nul_in_arrow_ids(col: pa.ChunkedArray | pa.Array) -> int | None:
    """Row of the first string of an Arrow string column holding a NUL byte, or None: a memchr-speed
    search of each chunk's character data, in place."""
    from ragrade._ingest import _string_chunk

    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    base = 0
    for c in chunks:
        got = _string_chunk(c)
        if got is None:
            import pyarrow.compute as pc

            if pa.types.is_string(c.type) or pa.types.is_large_string(c.type):
                hit = pc.match_substring(c, "\x00").to_numpy(zero_copy_only=False)
                if hit.any():
                    return base + int(np.flatnonzero(hit)[0])
        else:
            offsets, data, _ = got
            lo, hi = int(offsets[0]), int(offsets[-1])
            with memoryview(data) as view:  # type: ignore[arg-type]
                m = _NUL.search(view, lo, hi)
            if m is not None:
                return base + int(np.searchsorted(offsets, m.start(), side="right")) - 1
        base += len(c)
    return None


def query_groups(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """``(query ids, offsets)`` of a string query column whose rows come grouped by query (nearly every
    file: written query by query), found by one vectorised comparison of neighbours, with no hashing and
    no per-row code array; None if the queries are interleaved (or the column is not strings).
    Dictionary-encoded strings (Parquet's own encoding, read as is) compare by their codes."""
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


def _first_empty_string(col: pa.ChunkedArray | pa.Array) -> int | None:
    """Row of the first empty string, from the offsets of each chunk (no per-row array is made)."""
    from ragrade._ingest import _string_chunk

    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    base = 0
    for c in chunks:
        got = _string_chunk(c)
        if got is None:
            import pyarrow.compute as pc

            lengths = pc.binary_length(c).to_numpy(zero_copy_only=False)
        else:
            lengths = np.diff(got[0])
        if len(lengths) and lengths.min() == 0:
            return base + int(np.flatnonzero(lengths == 0)[0])
        base += len(c)
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


def _check_raw_ids(raw_docs: pa.ChunkedArray | pa.Array, path: str, locate: RowLocator) -> None:
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
                 locate: RowLocator, ranks: np.ndarray | None = None, raw_docs: pa.ChunkedArray | None = None,
                 offsets: np.ndarray | None = None, texts: np.ndarray | None = None) -> Run:
    """Build a :class:`Run` from per-row codes (or raw Arrow document ids, coded lazily). NaN scores
    are a :class:`ParseError` at their line.

    Without scores but with ``ranks``, each query's rows are ordered by rank (stable). With ``offsets``
    (rows already grouped: ``qvocab`` holds one id per group), ``qcodes`` is not needed. ``texts`` (one per
    row, in file order) follow their rows."""
    if offsets is not None:
        _check_group_ids(qvocab, offsets, path, locate)
    else:
        assert qcodes is not None, "per-row query codes or group offsets"
        _check_empty_ids(qvocab, qcodes, "query id", path, locate)
    if raw_docs is not None:
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
        if raw_docs is not None:
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


def assemble_qrels_raw(qvocab: np.ndarray, offsets: np.ndarray, raw_docs: pa.Array, grades: np.ndarray, *,
                       path: str, locate: RowLocator) -> Qrels | None:
    """:class:`Qrels` from rows already grouped by query (``qvocab[i]`` owns rows ``offsets[i]`` to
    ``offsets[i+1]-1``), keeping the document ids as raw Arrow strings (coded only if something asks):
    the check for a document judged twice is a hash scan per query in C. None without the C helper (the
    caller then codes the ids and uses :func:`assemble_qrels`)."""
    from ragrade._ingest import _accel, arrow_strings

    if isinstance(raw_docs, pa.ChunkedArray):
        raw_docs = contiguous(raw_docs)
    strings = arrow_strings(raw_docs) if _accel is not None else None
    if strings is None or _accel is None:
        return None
    _check_group_ids(qvocab, offsets, path, locate)
    _check_raw_ids(raw_docs, path, locate)
    _check_grades(grades, path, locate)
    dup = _accel.first_duplicate_in_segments(strings[0], strings[1], offsets)
    if dup >= 0:
        q = qvocab[np.searchsorted(offsets, dup, side="right") - 1]
        raise _judged_twice(raw_docs[dup].as_py(), q, dup, path, locate)
    return Qrels(qvocab, offsets, None, None, np.ascontiguousarray(grades, dtype=np.float64), raw_docs=raw_docs)


def default_run_name(path: PathLike) -> str:
    name = Path(os.fspath(path)).name
    for suf in (".gz",):
        if name.lower().endswith(suf):
            name = name[: -len(suf)]
    return Path(name).stem


def json_object_lines(path: PathLike) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """Iterate ``(line_number, text, object)`` over the non-blank lines of a JSONL file, each a JSON object;
    anything else is a :class:`ParseError` naming the file, the line and its text."""
    import json

    where = os.fspath(path)
    for n, line in _utf8_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON ({exc.msg})", path=where, line=n, text=line) from None
        except RecursionError:
            raise ParseError("JSON nested too deeply", path=where, line=n, text=line) from None
        if not isinstance(obj, dict):
            raise ParseError("each line must be a JSON object", path=where, line=n, text=line)
        yield n, line, obj


def _utf8_lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of a (possibly gzipped) UTF-8 file; a line that is not UTF-8 is a
    :class:`ParseError` (:func:`not_utf8`'s), never a text with replacement characters."""
    stream, raw = open_binary(path)
    try:
        for i, b in enumerate(stream, start=1):
            try:
                yield i, b.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise _utf8_error(path, i, b, exc) from None
    finally:
        stream.close()
        raw.close()


def read_text_lines(path: PathLike):
    """Iterate ``(line_number, text)`` over a (possibly gzipped) text file. Error paths only."""
    stream, raw = open_binary(path)
    try:
        for i, b in enumerate(stream, start=1):
            yield i, b.decode("utf-8", errors="replace").rstrip("\r\n")
    finally:
        stream.close()
        raw.close()


def locate_nonblank(path: PathLike, row: int, skip: int = 0, *,
                    comments: bool = False) -> tuple[int | None, str | None]:
    """Line number and text of the ``row``-th (0-based) non-blank line after ``skip`` non-blank lines
    (``comments``: TREC comment lines are not counted either).

    Used only on error paths (it scans the file in Python)."""
    target = row + skip
    k = 0
    for i, text in read_text_lines(path):
        if text.strip() and not (comments and is_comment(text)):
            if k == target:
                return i, text
            k += 1
    return None, None


def value_segments(qkeys: np.ndarray) -> np.ndarray:
    """Starts of the runs of equal neighbours in ``qkeys`` (per-row query codes), with ``len`` appended."""
    n = len(qkeys)
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    return np.append(np.flatnonzero(np.r_[True, qkeys[1:] != qkeys[:-1]]), n).astype(np.int64)


def values_are_ranks(values: np.ndarray, starts: np.ndarray, seg_queries: np.ndarray, *, path: str,
                     locate: RowLocator) -> bool:
    """The rule that reads the third column of a headerless ``qid doc NUMBER`` run (docs/formats.md,
    "Three-column runs"): ranks (MS MARCO's ``qid pid rank``) or scores.

    ``starts`` are the first rows of the runs of consecutive lines with one query (``len`` appended) and
    ``seg_queries`` the query of each run (codes or ids). The numbers are **ranks** when every one is an
    integer, they strictly increase down each query's lines, and each query's smallest is 0 or 1; they
    are **scores** when any is not an integer, or when they never increase down a query's lines (a file
    written best first). Anything else (integers that go up and down) is ambiguous: a
    :class:`ParseError` asks for ``format="msmarco"`` or ``format="qid-doc-score"``.
    """
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    if n == 0 or not np.isfinite(v).all() or not (v == np.floor(v)).all():
        return False
    inside = np.ones(max(n - 1, 0), dtype=bool)  # neighbour pairs within one run of a query
    cuts = starts[1:-1] - 1
    inside[cuts[(cuts >= 0) & (cuts < n - 1)]] = False
    step = np.diff(v)[inside]
    if (step > 0).all():
        firsts = v[starts[:-1]]
        import pandas as pd

        smallest = pd.Series(firsts).groupby(pd.Series(seg_queries), sort=False).min().to_numpy()
        if np.isin(smallest, (0.0, 1.0)).all():
            return True
    if (step <= 0).all():
        return False
    # Report the first line whose number is larger than the one above it (same query).
    line, text = locate(int(np.flatnonzero(inside)[np.flatnonzero(step > 0)[0]]) + 1)
    raise ParseError(
        "the third column holds integers that are neither ranks (1, 2, 3, ... down each query's lines) nor "
        "scores that never increase down a query's lines; say which: format='msmarco' (ranks) or "
        "format='qid-doc-score' (scores), on the command line --run-format msmarco / qid-doc-score",
        path=path, line=line, text=text,
    )


#: The start of every reader's message for a file without data (fusion takes such a run as empty lists).
EMPTY_FILE = "the file is empty"


def check_nonempty(n_rows: int, path: str, what: str) -> None:
    if n_rows == 0:
        raise ParseError(f"{EMPTY_FILE}: no {what} found", path=path)
