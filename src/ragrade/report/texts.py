"""Read document or query texts for the report: ``{id: text}`` from JSONL, TSV or CSV files."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from ragrade.errors import ParseError

_ID_KEYS = ("_id", "id", "doc_id", "docid", "query_id", "qid", "pid")
_TEXT_KEYS = ("text", "contents", "content", "body", "passage", "query")


def read_texts(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{id: text}`` from a file, chosen by extension.

    - ``.jsonl`` / ``.json``: one object per line with an id (``_id``, ``id``, ``doc_id``, ``docid``,
      ``query_id``, ``qid`` or ``pid``) and a text (``text``, ``contents``, ``content``, ``body``,
      ``passage`` or ``query``); a ``title`` is prepended when present (BEIR corpus layout).
    - ``.tsv`` / ``.csv``: two columns, id then text, no header (a first row ``id, text`` is skipped).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    out: dict[str, str] = {}
    if suffix in (".jsonl", ".json", ".ndjson"):
        with p.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ParseError(
                        f"not a JSON object ({exc.msg})", path=str(p), line=lineno, text=line
                    ) from None
                if not isinstance(obj, dict):
                    raise ParseError("expected a JSON object", path=str(p), line=lineno, text=line)
                key = next((k for k in _ID_KEYS if k in obj), None)
                tkey = next((k for k in _TEXT_KEYS if k in obj), None)
                if key is None or tkey is None:
                    raise ParseError(
                        f"needs an id ({', '.join(_ID_KEYS)}) and a text ({', '.join(_TEXT_KEYS)}) field",
                        path=str(p),
                        line=lineno,
                        text=line,
                    )
                text = str(obj[tkey])
                if obj.get("title"):
                    text = f"{obj['title']}\n{text}"
                out[str(obj[key])] = text
        return out
    if suffix in (".tsv", ".csv"):
        delimiter = "\t" if suffix == ".tsv" else ","
        with p.open(encoding="utf-8", newline="") as fh:
            for lineno, row in enumerate(csv.reader(fh, delimiter=delimiter), start=1):
                if not row:
                    continue
                if len(row) < 2:
                    raise ParseError(
                        "expected two columns: id and text",
                        path=str(p),
                        line=lineno,
                        text=delimiter.join(row),
                    )
                if lineno == 1 and row[0].strip().lower() in (
                    "id",
                    "_id",
                    "doc_id",
                    "docid",
                    "qid",
                    "query_id",
                ):
                    continue
                out[row[0]] = delimiter.join(row[1:]) if suffix == ".tsv" else row[1]
        return out
    raise ParseError("texts must be a .jsonl, .tsv or .csv file", path=str(p))
