"""Read a judge dataset (question, reference, retrieved contexts per row) from JSONL, JSON, CSV/TSV or
Parquet. Rows come back as a list of dicts for :func:`ragrade.judges.runner.examples_from`.

In CSV/TSV files the contexts column holds a JSON-encoded list of strings. Parquet and JSONL hold real lists.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ragrade.errors import InputError, ParseError

FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")


def detect_format(path: str | os.PathLike[str]) -> str:
    name = str(path).lower()
    for suffix, fmt in ((".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json"), (".csv", "csv"),
                        (".tsv", "tsv"), (".parquet", "parquet"), (".pq", "parquet")):
        if name.endswith(suffix) or name.endswith(suffix + ".gz"):
            return fmt
    raise InputError(f"{path}: cannot tell the format from the file name; give it explicitly", value=str(path))


def read_rows(path: str | os.PathLike[str], fmt: str | None = None) -> list[dict[str, Any]]:
    """The rows of a dataset file (possibly none). Errors name the file and, where known, the line."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a file")
    fmt = fmt or detect_format(p)
    if fmt == "jsonl":
        return _read_jsonl(p)
    if fmt == "json":
        try:
            data = json.loads(_read_text(p))
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON: {exc.msg}", path=str(p), line=exc.lineno) from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ParseError("a JSON dataset must be a list of objects", path=str(p))
        return data
    if fmt in ("csv", "tsv"):
        import pyarrow as pa
        import pyarrow.csv as pacsv

        parse = pacsv.ParseOptions(delimiter="," if fmt == "csv" else "\t", newlines_in_values=True)
        try:
            with pacsv.open_csv(p, parse_options=parse) as reader:
                names = reader.schema.names
            # every column as text: ids such as 007 stay as written, empty cells stay empty strings
            convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, strings_can_be_null=False)
            table = pacsv.read_csv(p, parse_options=parse, convert_options=convert)
        except pa.ArrowInvalid as exc:
            raise ParseError(f"cannot read {fmt.upper()}: {exc}", path=str(p)) from None
        return table.to_pylist()
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.read_table(p).to_pylist()
        except (pa.ArrowInvalid, OSError) as exc:
            raise ParseError(f"cannot read Parquet: {exc}", path=str(p)) from None
    raise InputError(f"unknown dataset format {fmt!r}; expected one of {', '.join(FORMATS)}")


def _read_text(p: Path) -> str:
    if str(p).endswith(".gz"):
        import gzip

        with gzip.open(p, "rt", encoding="utf-8") as f:
            return f.read()
    return p.read_text(encoding="utf-8")


def _read_jsonl(p: Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(_read_text(p).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON ({exc.msg})", path=str(p), line=n, text=line) from None
        if not isinstance(row, dict):
            raise ParseError("each line must be a JSON object", path=str(p), line=n, text=line)
        rows.append(row)
    return rows
