"""Read document or query texts for the report: ``{id: text}`` from any format of records of the registry
(:mod:`ragrade.io.formats`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ragrade.errors import ParseError

_ID_KEYS = ("_id", "id", "doc_id", "docid", "query_id", "qid", "pid")
_TEXT_KEYS = ("text", "contents", "content", "body", "passage", "query")
_HEADER_IDS = ("id", "_id", "doc_id", "docid", "qid", "query_id")


def read_texts(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{id: text}`` from a file, its format chosen by the extension.

    - records with named columns (JSONL, Parquet, Arrow IPC...): each record has an id (``_id``, ``id``,
      ``doc_id``, ``docid``, ``query_id``, ``qid`` or ``pid``) and a text (``text``, ``contents``,
      ``content``, ``body``, ``passage`` or ``query``), looked up record by record; a ``title`` is
      prepended when present (BEIR corpus layout);
    - CSV / TSV: two columns, id then text, no header (a first row whose id is ``id``, ``qid``... is
      skipped); the text takes the rest of a TSV line.
    """
    from ragrade.io import formats
    from ragrade.io.sources import readable_path

    out: dict[str, str] = {}
    with readable_path(path) as p:
        fmt = formats.records_format(p)
        for obj, line in _rows(fmt, p):
            key = next((k for k in _ID_KEYS if k in obj), None)
            tkey = next((k for k in _TEXT_KEYS if k in obj), None)
            if key is None or tkey is None or obj[key] is None:
                raise ParseError(f"needs an id ({', '.join(_ID_KEYS)}) and a text ({', '.join(_TEXT_KEYS)}) field",
                                 path=p, line=line, text=str(obj))
            text = "" if obj[tkey] is None else str(obj[tkey])
            if obj.get("title"):
                text = f"{obj['title']}\n{text}"
            out[str(obj[key])] = text
    return out


def _rows(fmt: Any, path: str) -> Iterator[tuple[dict[str, Any], int | None]]:
    if not fmt.headerless:
        yield from fmt.rows(path)
        return
    for i, (row, line) in enumerate(fmt.rows(path, names=["id", "text"])):
        if i == 0 and row["id"].strip().lower() in _HEADER_IDS:
            continue
        yield row, line
