"""JSON Lines: one JSON object per line (a row, or one query with list columns such as ``retrieved``,
``gold`` or ``groups``). A file holding one JSON array of objects (``.json``, judge datasets) is read
as those objects."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from ragrade.errors import ParseError
from ragrade.io.formats.base import TableFormat


class JsonLines(TableFormat):
    name = "jsonl"
    aliases = ("json", "ndjson")
    extensions = (".jsonl", ".ndjson", ".json")
    sniff_order = 10  # before TREC: a JSON line is never taken for whitespace-separated fields
    description = "one JSON object per line (rows, or one query per line with list columns)"

    def sniff(self, head: bytes, line: str | None) -> bool:
        return line is not None and line.lstrip()[:1] in ("{", "[")

    def load(self, path: str, kind: str, progress: Any, opts: dict[str, Any]) -> Any:
        from ragrade.io import tables

        opts.pop("header", None)
        return tables.load_jsonl(path, progress)

    def write_run(self, run: Any, path: str | os.PathLike[str], *, tag: str | None, ties: str) -> None:
        from ragrade.io import writers

        writers.write_jsonl_rows(writers.run_table(run, ties), path)

    def write_qrels(self, qrels: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io import writers

        if qrels.has_groups:
            writers.write_jsonl_groups(qrels, path)
        else:
            writers.write_jsonl_rows(writers.qrels_table(qrels), path)

    def column_names(self, path: str) -> list[str]:
        from ragrade.io._common import first_line

        try:
            first = json.loads(first_line(path) or "{}")
        except (ValueError, TypeError, RecursionError):
            return []
        return list(first) if isinstance(first, dict) else []

    def records(self, path: str, *, strings: bool = False) -> Any:
        import pyarrow as pa

        rows = [r for r, _ in self.rows(path)]
        if strings:
            rows = [{k: (v if v is None or isinstance(v, str) else json.dumps(v)) for k, v in r.items()} for r in rows]
        try:
            return pa.Table.from_pylist(rows)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ParseError(f"the objects do not form one table ({exc})", path=path) from None

    def rows(self, path: str) -> Iterator[tuple[dict[str, Any], int | None]]:
        """Each object with its line; a file whose first non-blank character is ``[`` is one JSON array."""
        from ragrade.io._common import first_line, json_object_lines

        first = first_line(path)
        if first is not None and first.lstrip().startswith("["):
            from ragrade.io._common import open_binary

            stream, raw = open_binary(path)
            try:
                with stream:
                    data = json.loads(stream.read().decode("utf-8"))
            except json.JSONDecodeError as exc:
                raise ParseError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
            except UnicodeDecodeError:
                raise ParseError("the file is not UTF-8 text", path=path) from None
            finally:
                raw.close()
            if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
                raise ParseError("a JSON file must hold a list of objects", path=path)
            for row in data:
                yield row, None
            return
        for n, _, row in json_object_lines(path):
            yield row, n

    def batches(self, path: str, columns: list[str] | None = None, *, block_size: int = 1 << 20,
                progress: Any = None) -> Iterator[Any]:
        """Arrow's streaming JSON reader, ``columns`` read as text (other keys ignored). Raises
        ``pyarrow.ArrowInvalid`` / ``ArrowTypeError`` when Arrow cannot take the file (a caller may then
        fall back to :meth:`rows`)."""
        import pyarrow as pa
        import pyarrow.json as pj

        from ragrade.io.formats.base import counting_stream

        parse = pj.ParseOptions(unexpected_field_behavior="ignore", newlines_in_values=False,
                                explicit_schema=None if columns is None else pa.schema([(c, pa.string())
                                                                                       for c in columns]))
        src = counting_stream(path, progress)
        try:
            yield from pj.open_json(src, read_options=pj.ReadOptions(block_size=block_size), parse_options=parse)
        finally:
            src.close()


JSONL = JsonLines()
