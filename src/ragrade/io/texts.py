"""Read topics (queries) and corpora (passages): the assessor's and the retriever's text inputs.

* :func:`read_queries` — a topics file: TSV (``qid<TAB>text``, no header, or a header naming the columns),
  JSONL or Parquet (columns named as below, or given explicitly).
* :func:`read_passages` — a corpus: JSONL, Parquet or TSV (``id<TAB>text[<TAB>title]``, or a header),
  **streamed**: the file is read once, in blocks, and only the passages whose id is wanted (the pooled
  ids) are kept. Memory grows with the pool, not with the corpus. JSONL and TSV are read by Arrow's
  streaming readers; a JSONL file that Arrow cannot take (ids written as numbers, a field whose type
  changes) is read again line by line in Python, still keeping only the wanted passages.

Column names are recognised case-insensitively: ids ``_id``, ``id``, ``docid``, ``doc_id``, ``pid``,
``passage_id``, ``docno`` (passages) or ``qid``, ``query_id``, ``_id``, ``id``, ``topic`` (queries); texts
``text``, ``contents``, ``content``, ``passage``, ``body`` (passages) or ``text``, ``query``, ``question``,
``title`` (queries); titles ``title``. Ids are read as text, exactly as written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from ragrade.errors import ArrowCannot as _ArrowCannot
from ragrade.errors import InputError, ParseError
from ragrade.io._common import pick_column
from ragrade.io.columns import (
    PASSAGE_ID_NAMES,
    PASSAGE_TEXT_NAMES,
    QUERY_ID_NAMES,
    QUERY_TEXT_NAMES,
    TITLE_NAMES,
)

PathLike = str | os.PathLike[str]

BLOCK_SIZE = 1 << 20  # bytes per Arrow block while streaming (Arrow's JSON reader holds more with larger blocks)

#: The formats of topics files and corpora (names of :mod:`ragrade.io.formats`). A name the registry
#: gives to TREC (``.txt``) is tab-separated text here: topics and corpora are ``id<TAB>text`` lines.
FORMATS = ("tsv", "jsonl", "parquet")


def _format(path: str, fmt: str | None) -> str:
    from ragrade.io import formats

    if fmt:
        try:
            name = formats.get(fmt).name
        except InputError:
            name = ""
        if name not in FORMATS:
            raise InputError("format must be tsv, jsonl or parquet", value=fmt)
        return name
    found = formats.by_extension(path)
    if found is not None and found.layout is not None:
        return "tsv"  # .txt and the like: id<TAB>text lines
    if found is None or found.name not in FORMATS:
        raise ParseError("cannot tell the format from the file name (expected .tsv, .jsonl or .parquet, "
                         "or give the format)", path=path)
    return found.name


def _open_text(path: str) -> IO[str]:
    import io

    from ragrade.io import open_binary

    stream, _raw = open_binary(path)  # gzip told by content; closing the wrapper closes both
    return io.TextIOWrapper(stream, encoding="utf-8", newline="")


def _pick(names: list[str], wanted: str | None, candidates: tuple[str, ...], what: str, path: str,
          required: bool = True) -> str | None:
    option = {"query id": "id_col", "passage id": "id_col", "title": "title_col"}.get(what, "text_col")
    return pick_column(names, wanted, candidates, what, path, required=required, option=option)


def _first_line(path: str) -> str:
    with _open_text(path) as f:
        for line in f:
            if line.strip():
                return line.rstrip("\r\n")
    return ""


# -- queries -------------------------------------------------------------------------------------------

def read_queries(path: PathLike, *, format: str | None = None, id_col: str | None = None,
                 text_col: str | None = None) -> dict[str, str]:
    """``{query id: text}`` from a topics file (whole; topics files are small). A repeated id is an error.
    A pipe is read as a stream (docs/formats.md, "Pipes, devices and limits")."""
    from ragrade.io import readable_path

    with readable_path(path) as p:
        return _read_queries(p, format, id_col, text_col)


def _read_queries(p: str, format: str | None, id_col: str | None, text_col: str | None) -> dict[str, str]:
    fmt = _format(p, format)
    out: dict[str, str] = {}

    def add(qid: Any, text: Any, line: int | None) -> None:
        if qid is None or str(qid).strip() == "":
            raise ParseError("empty query id", path=p, line=line)
        q = str(qid)
        if not isinstance(text, str):
            text = "" if text is None else str(text)
        if q in out:
            raise ParseError(f"query {q!r} appears twice", path=p, line=line)
        out[q] = text

    if fmt == "tsv":
        header = _tsv_header(p, QUERY_ID_NAMES, QUERY_TEXT_NAMES)
        qi = ti = 0
        width = 0
        if header is not None:
            names = header[1]
            qi = names.index(_pick(names, id_col, QUERY_ID_NAMES, "query id", p) or "")
            ti = names.index(_pick(names, text_col, QUERY_TEXT_NAMES, "query text", p) or "")
            width = len(names)
        with _open_text(p) as f:
            for n, text in enumerate(f, start=1):
                text = text.rstrip("\r\n")
                if not text.strip() or (header is not None and n == header[0]):
                    continue
                fields = text.split("\t")
                if header is not None:
                    if len(fields) != width:
                        raise ParseError(f"expected {width} tab-separated fields, found {len(fields)}", path=p,
                                         line=n, text=text)
                    add(fields[qi], fields[ti], n)
                else:
                    if len(fields) < 2:
                        raise ParseError("expected 'query id<TAB>text'", path=p, line=n, text=text)
                    add(fields[0], "\t".join(fields[1:]), n)
        return out
    for row, where in _rows(p, fmt):
        names = list(row)
        qc = _pick(names, id_col, QUERY_ID_NAMES, "query id", p) or ""
        tc = _pick(names, text_col, QUERY_TEXT_NAMES, "query text", p) or ""
        add(row[qc], row[tc], where)
    return out


def _tsv_header(path: str, id_names: tuple[str, ...], text_names: tuple[str, ...]) -> tuple[int, list[str]] | None:
    """``(line number, names)`` when the first non-blank line is a header (its first field is an id column
    name and another field a text column name), else None."""
    with _open_text(path) as f:
        for n, line in enumerate(f, start=1):
            if line.strip():
                fields = [x.strip().lower() for x in line.rstrip("\r\n").split("\t")]
                if fields[0] in id_names and any(x in text_names for x in fields[1:]):
                    return n, line.rstrip("\r\n").split("\t")
                return None
    return None


def _rows(path: str, fmt: str) -> Iterator[tuple[dict[str, Any], int | None]]:
    from ragrade.io import formats

    return formats.get(fmt).rows(path)


# -- passages ------------------------------------------------------------------------------------------

@dataclass
class Passages:
    """The wanted passages found in a corpus: ``texts[id] = (title, text)``; ``missing``: wanted ids not
    in the corpus; ``empty``: wanted ids whose title and text are both empty (not judged either);
    ``scanned``: passages read."""

    texts: dict[str, tuple[str, str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    scanned: int = 0
    reader: str = ""

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.texts

    def __len__(self) -> int:
        return len(self.texts)


def read_passages(path: PathLike, ids: set[str] | frozenset[str] | None, *, format: str | None = None,
                  id_col: str | None = None, text_col: str | None = None, title_col: str | None = None,
                  progress: Callable[[int, int], None] | None = None, block_size: int = BLOCK_SIZE) -> Passages:
    """Stream a corpus once and keep the passages whose id is in ``ids`` (``None``: keep all).

    Ids seen twice with different texts are an error (which one would be judged?); an exact repeat is
    ignored. ``progress(bytes_done, bytes_total)`` is called as the file is read. A pipe is read as a
    stream (copied once to a temporary file).
    """
    from ragrade.io import readable_path

    with readable_path(path) as p:
        return _read_passages(p, ids, format, id_col, text_col, title_col, progress, block_size)


def _read_passages(p: str, ids: set[str] | frozenset[str] | None, format: str | None, id_col: str | None,
                   text_col: str | None, title_col: str | None, progress: Callable[[int, int], None] | None,
                   block_size: int) -> Passages:
    fmt = _format(p, format)
    wanted = None if ids is None else frozenset(str(i) for i in ids)
    out = Passages()
    if wanted is not None and not wanted:
        return out
    import pyarrow as pa

    value_set = None if wanted is None else pa.array(sorted(wanted), type=pa.string())
    if fmt == "parquet":
        _stream_parquet(p, value_set, out, id_col, text_col, title_col, progress)
    elif fmt == "tsv":
        _stream_tsv(p, value_set, out, id_col, text_col, title_col, progress, block_size)
    else:
        try:
            _stream_jsonl_arrow(p, value_set, out, id_col, text_col, title_col, progress, block_size)
        except (pa.ArrowInvalid, pa.ArrowTypeError, _ArrowCannot):
            out = Passages()
            _stream_jsonl_python(p, wanted, out, id_col, text_col, title_col, progress)
    if wanted is not None:
        found = set(out.texts)
        empty = set(out.empty)
        out.missing = sorted(wanted - found - empty)
    return out


def _add(out: Passages, pid: str, title: str, text: str, where: str, line: int | None = None) -> None:
    old = out.texts.get(pid)
    if old is not None:
        if old != (title, text):
            raise ParseError(f"passage id {pid!r} appears twice with different texts", path=where, line=line)
        return
    if not title.strip() and not text.strip():
        if pid not in out.empty:
            out.empty.append(pid)
        return
    out.texts[pid] = (title, text)


def _keep_batch(batch: Any, idc: str, tc: str, tic: str | None, wanted: Any, out: Passages, where: str) -> None:
    """Keep the rows of ``batch`` whose id is in ``wanted`` (an Arrow string array, or None for all)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = batch.column(idc)
    if not pa.types.is_string(ids.type) and not pa.types.is_large_string(ids.type):
        ids = pc.cast(ids, pa.string())
    out.scanned += batch.num_rows
    if wanted is not None:
        mask = pc.is_in(ids, value_set=wanted)
        mask = pc.fill_null(mask, False)
        if not pc.any(mask).as_py():
            return
        batch = batch.filter(mask)
        ids = pc.filter(ids, mask)
    texts = batch.column(tc)
    titles = batch.column(tic).to_pylist() if tic is not None else None
    for i, (pid, text) in enumerate(zip(ids.to_pylist(), texts.to_pylist(), strict=True)):
        if pid is None:
            continue
        title = (titles[i] if titles is not None else "") or ""
        _add(out, str(pid), str(title), "" if text is None else str(text), where)


def _stream_parquet(path: str, wanted: Any, out: Passages, id_col: str | None,
                    text_col: str | None, title_col: str | None, progress: Callable[[int, int], None] | None) -> None:
    from ragrade.io.formats import PARQUET

    out.reader = "parquet"
    names = PARQUET.column_names(path)
    idc = _pick(names, id_col, PASSAGE_ID_NAMES, "passage id", path)
    tc = _pick(names, text_col, PASSAGE_TEXT_NAMES, "passage text", path)
    tic = _pick(names, title_col, TITLE_NAMES, "title", path, required=title_col is not None)
    for batch in PARQUET.batches(path, [c for c in (idc, tc, tic) if c is not None], progress=progress):
        _keep_batch(batch, idc or "", tc or "", tic, wanted, out, path)


def _stream_tsv(path: str, wanted: Any, out: Passages, id_col: str | None, text_col: str | None,
                title_col: str | None, progress: Callable[[int, int], None] | None, block_size: int) -> None:
    from ragrade.io.formats import TSV

    out.reader = "tsv (arrow)"
    header = _tsv_header(path, PASSAGE_ID_NAMES, PASSAGE_TEXT_NAMES)
    first = _first_line(path).split("\t")
    if header is not None:
        names = header[1]
        idc = _pick(names, id_col, PASSAGE_ID_NAMES, "passage id", path)
        tc = _pick(names, text_col, PASSAGE_TEXT_NAMES, "passage text", path)
        tic = _pick(names, title_col, TITLE_NAMES, "title", path, required=title_col is not None)
        given, skip = None, header[0] - 1
    else:
        if len(first) not in (2, 3):
            raise ParseError("a TSV corpus without a header must have 2 columns (id, text) or 3 (id, text, title)",
                             path=path, line=1, text="\t".join(first))
        if id_col or text_col or title_col:
            raise InputError(f"{path}: the TSV corpus has no header; column names do not apply")
        given, skip = ["id", "text", "title"][: len(first)], 0
        idc, tc, tic = "id", "text", ("title" if len(first) == 3 else None)
    cols = [c for c in (idc, tc, tic) if c is not None]
    for batch in TSV.batches(path, cols, block_size=block_size, progress=progress, names=given, skip_rows=skip):
        _keep_batch(batch, idc or "", tc or "", tic, wanted, out, path)


def _stream_jsonl_arrow(path: str, wanted: Any, out: Passages, id_col: str | None,
                        text_col: str | None, title_col: str | None, progress: Callable[[int, int], None] | None,
                        block_size: int) -> None:
    from ragrade.io.formats import JSONL

    out.reader = "jsonl (arrow)"
    line = _first_line(path)
    try:
        first = json.loads(line) if line else {}
    except ValueError:
        raise _ArrowCannot from None
    if not isinstance(first, dict):
        raise _ArrowCannot
    names = list(first)
    idc = _pick(names, id_col, PASSAGE_ID_NAMES, "passage id", path)
    tc = _pick(names, text_col, PASSAGE_TEXT_NAMES, "passage text", path)
    tic = _pick(names, title_col, TITLE_NAMES, "title", path, required=title_col is not None)
    if not isinstance(first.get(idc), str):
        raise _ArrowCannot  # numeric ids: Arrow would refuse or change them
    for batch in JSONL.batches(path, [c for c in (idc, tc, tic) if c is not None], block_size=block_size,
                               progress=progress):
        missing = [c for c in (idc, tc) if c not in batch.schema.names]
        if missing:
            raise _ArrowCannot
        _keep_batch(batch, idc or "", tc or "", tic, wanted, out, path)


def _stream_jsonl_python(path: str, wanted: frozenset[str] | None, out: Passages, id_col: str | None,
                         text_col: str | None, title_col: str | None,
                         progress: Callable[[int, int], None] | None) -> None:
    out.reader = "jsonl (python)"
    total = os.path.getsize(path)
    cols: tuple[str, str, str | None] | None = None
    done = 0
    with _open_text(path) as f:
        for n, line in enumerate(f, start=1):
            done += len(line)
            if progress and n % 65536 == 0:
                progress(min(done, total), total)
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ParseError(f"invalid JSON ({exc})", path=path, line=n, text=line.strip()) from None
            if not isinstance(row, dict):
                raise ParseError("each line must be a JSON object", path=path, line=n, text=line.strip())
            if cols is None:
                names = list(row)
                idc = _pick(names, id_col, PASSAGE_ID_NAMES, "passage id", path) or ""
                tc = _pick(names, text_col, PASSAGE_TEXT_NAMES, "passage text", path) or ""
                tic = _pick(names, title_col, TITLE_NAMES, "title", path, required=title_col is not None)
                cols = (idc, tc, tic)
            idc, tc, tic = cols
            out.scanned += 1
            if idc not in row or row[idc] is None:
                raise ParseError(f"no passage id {idc!r}", path=path, line=n, text=line.strip())
            raw_id = row[idc]
            if isinstance(raw_id, float) and raw_id.is_integer():
                raw_id = int(raw_id)
            pid = str(raw_id)
            if wanted is not None and pid not in wanted:
                continue
            text = row.get(tc)
            title = row.get(tic) if tic else ""
            if text is not None and not isinstance(text, str):
                raise ParseError(f"passage text {tc!r} must be a string", path=path, line=n, text=line.strip())
            _add(out, pid, str(title or ""), text or "", path, n)
    if progress:
        progress(total, total)


__all__ = ["Passages", "read_passages", "read_queries"]
