"""Text files as every reader opens them: gzip told by content (:func:`open_binary`), the longest line a
reader holds (:data:`MAX_LINE_BYTES`), what a text reader cannot read (other encodings, binary formats under a
text name: :func:`text_problem`, :func:`check_text_head`), the first lines (:func:`first_line`,
:func:`first_data_line`), JSON Lines (:func:`json_object_lines`), and the lines error messages quote
(:func:`read_text_lines`, :func:`locate_nonblank`)."""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ragrade.errors import ParseError

Progress = Callable[[int, int], None]


PathLike = str | os.PathLike[str]
RowLocator = Callable[[int], tuple[int | None, str | None]]


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
