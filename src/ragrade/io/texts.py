"""Read topics (queries) and corpora (passages): the assessor's and the retriever's text inputs, in any format
of records of the registry (:mod:`ragrade.io.formats`: TSV, CSV, JSONL, Parquet, Arrow IPC, and whatever is
registered next).

* :func:`read_queries` — a topics file: ``qid<TAB>text`` lines (no header; a ``.txt`` topics file is such
  lines), or a file of records whose columns are named as below (or given explicitly).
* :func:`read_passages` — a corpus: records, or ``id<TAB>text[<TAB>title]`` lines, **streamed**: the file
  is read once, in blocks (the format's ``batches``), and only the passages whose id is wanted (the pooled
  ids) are kept. Memory grows with the pool, not with the corpus. A file that Arrow cannot type (JSONL ids
  written as numbers, a field whose type changes) is read again record by record (the format's ``rows``),
  still keeping only the wanted passages.

Column names are recognised case-insensitively: ids ``_id``, ``id``, ``docid``, ``doc_id``, ``pid``,
``passage_id``, ``docno`` (passages) or ``qid``, ``query_id``, ``_id``, ``id``, ``topic`` (queries); texts
``text``, ``contents``, ``content``, ``passage``, ``body`` (passages) or ``text``, ``query``, ``question``,
``title`` (queries); titles ``title``. Ids are read as text, exactly as written. A CSV or TSV file has a
header when its first row names an id column and a text column; otherwise its columns are id, text (and
title, for a corpus).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from ragrade.io.formats import Format

PathLike = str | os.PathLike[str]

BLOCK_SIZE = 1 << 20  # bytes per Arrow block while streaming (Arrow's JSON reader holds more with larger blocks)


def _format(path: str, fmt: str | None) -> Format:
    from ragrade.io import formats

    return formats.records_format(path, fmt)


def _pick(names: list[str], wanted: str | None, candidates: tuple[str, ...], what: str, path: str,
          required: bool = True) -> str | None:
    option = {"query id": "id_col", "passage id": "id_col", "title": "title_col"}.get(what, "text_col")
    return pick_column(names, wanted, candidates, what, path, required=required, option=option)


def has_header(fmt: Format, path: str, id_names: tuple[str, ...], text_names: tuple[str, ...]) -> bool:
    """Whether a file of records names its columns: always, unless the format may lack a header
    (CSV/TSV); then when the first row's first field is an id column name and another a text column name."""
    if not fmt.headerless:
        return True
    fields = [x.strip().lower() for x in fmt.column_names(path)]
    return bool(fields) and fields[0] in id_names and any(x in text_names for x in fields[1:])


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
    cols: tuple[str, str] | None = None
    for row, line in _query_rows(fmt, p):
        if cols is None:
            names = list(row)
            cols = (_pick(names, id_col, QUERY_ID_NAMES, "query id", p) or "",
                    _pick(names, text_col, QUERY_TEXT_NAMES, "query text", p) or "")
        qid, text = row.get(cols[0]), row.get(cols[1])
        if qid is None or str(qid).strip() == "":
            raise ParseError("empty query id", path=p, line=line)
        q = str(qid)
        if not isinstance(text, str):
            text = "" if text is None else str(text)
        if q in out:
            raise ParseError(f"query {q!r} appears twice", path=p, line=line)
        out[q] = text
    return out


def _query_rows(fmt: Format, p: str) -> Iterator[tuple[dict[str, Any], int | None]]:
    if has_header(fmt, p, QUERY_ID_NAMES, QUERY_TEXT_NAMES):
        return fmt.rows(p)
    return fmt.rows(p, names=["qid", "text"])  # the text takes the rest of the line


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
    layout = _corpus_layout(fmt, p, id_col, text_col, title_col)
    try:
        _stream_batches(fmt, p, layout, value_set, out, progress, block_size)
    except (pa.ArrowInvalid, pa.ArrowTypeError, _ArrowCannot):
        out = Passages()
        _stream_rows(fmt, p, layout, wanted, out, progress)
    if wanted is not None:
        found = set(out.texts)
        empty = set(out.empty)
        out.missing = sorted(wanted - found - empty)
    return out


@dataclass(frozen=True)
class _Layout:
    """Where a corpus keeps ids, texts and titles: the column names, and for a file without a header the
    names given to its columns (``given``) and the blank lines before its first row (``skip``)."""

    idc: str
    tc: str
    tic: str | None
    given: list[str] | None = None
    skip: int = 0

    @property
    def columns(self) -> list[str]:
        return [c for c in (self.idc, self.tc, self.tic) if c is not None]


def _corpus_layout(fmt: Format, path: str, id_col: str | None, text_col: str | None,
                   title_col: str | None) -> _Layout:
    from ragrade.io._common import first_data_line

    if has_header(fmt, path, PASSAGE_ID_NAMES, PASSAGE_TEXT_NAMES):
        names = fmt.column_names(path)
        skip = 0
        if fmt.headerless:  # the rows before the header are blank lines
            at = first_data_line(path, skip_comments=False)
            skip = 0 if at is None else at[0] - 1
        return _Layout(_pick(names, id_col, PASSAGE_ID_NAMES, "passage id", path) or "",
                       _pick(names, text_col, PASSAGE_TEXT_NAMES, "passage text", path) or "",
                       _pick(names, title_col, TITLE_NAMES, "title", path, required=title_col is not None),
                       None, skip)
    first = fmt.column_names(path)
    if len(first) not in (2, 3):
        raise ParseError(f"a {fmt.name.upper()} corpus without a header must have 2 columns (id, text) or 3 (id, "
                         "text, title)", path=path, line=1, text=getattr(fmt, "delimiter", "\t").join(first))
    if id_col or text_col or title_col:
        raise InputError(f"{path}: the {fmt.name.upper()} corpus has no header; column names do not apply")
    return _Layout("id", "text", "title" if len(first) == 3 else None, ["id", "text", "title"][: len(first)])


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


def _stream_batches(fmt: Format, path: str, layout: _Layout, wanted: Any, out: Passages,
                    progress: Callable[[int, int], None] | None, block_size: int) -> None:
    """The corpus in Arrow blocks (the format's ``batches``)."""
    out.reader = f"{fmt.name} (arrow)"
    if not fmt.binary and not fmt.headerless:  # a text format whose reader types values: ids must be text
        first = next(iter(fmt.rows(path)), None)
        if first is not None and not isinstance(first[0].get(layout.idc), str):
            raise _ArrowCannot  # numeric ids: Arrow would refuse or change them
    for batch in fmt.batches(path, layout.columns, names=layout.given, skip_rows=layout.skip,
                             block_size=block_size, progress=progress):
        if any(c not in batch.schema.names for c in (layout.idc, layout.tc)):
            raise _ArrowCannot
        _keep_batch(batch, layout.idc, layout.tc, layout.tic, wanted, out, path)


def _stream_rows(fmt: Format, path: str, layout: _Layout, wanted: frozenset[str] | None, out: Passages,
                 progress: Callable[[int, int], None] | None) -> None:
    """The corpus record by record (the format's ``rows``), for files Arrow cannot type."""
    out.reader = f"{fmt.name} (python)"
    idc, tc, tic = layout.idc, layout.tc, layout.tic
    rows = fmt.rows(path) if layout.given is None else fmt.rows(path, names=layout.given)
    for row, n in rows:
        out.scanned += 1
        raw_id = row.get(idc)
        if raw_id is None:
            raise ParseError(f"no passage id {idc!r}", path=path, line=n, text=_shown(row))
        if isinstance(raw_id, float) and raw_id.is_integer():
            raw_id = int(raw_id)
        pid = str(raw_id)
        if wanted is not None and pid not in wanted:
            continue
        text = row.get(tc)
        title = row.get(tic) if tic else ""
        if text is not None and not isinstance(text, str):
            raise ParseError(f"passage text {tc!r} must be a string", path=path, line=n, text=_shown(row))
        _add(out, pid, str(title or ""), text or "", path, n)
    if progress:
        total = os.path.getsize(path)
        progress(total, total)


def _shown(row: dict[str, Any]) -> str:
    import json

    return json.dumps(row, ensure_ascii=False, default=str)


__all__ = ["Passages", "has_header", "read_passages", "read_queries"]
