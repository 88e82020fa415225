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

    def write_records(self, table: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io import writers

        writers.write_jsonl_rows(table, path)

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

    def rows(self, path: str, *, names: list[str] | None = None) -> Iterator[tuple[dict[str, Any], int | None]]:
        """Each object with its line (nested values as Python lists and dicts); a file whose first
        non-blank character is ``[`` is one JSON array of objects (no line numbers then)."""
        from ragrade.io._common import first_line, json_object_lines

        self._no_names(names)
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

    def batches(self, path: str, columns: list[str] | None = None, *, names: list[str] | None = None,
                skip_rows: int = 0, block_size: int = 1 << 20, progress: Any = None) -> Iterator[Any]:
        """Arrow's streaming JSON reader. ``columns``: only these, scalar values read as text (ids stay as
        written); a column whose first value is a list or an object keeps its nested type (a list of
        objects is a ``list<struct>`` column), as every column does without ``columns``. Raises
        ``pyarrow.ArrowInvalid`` / ``ArrowTypeError`` when Arrow cannot take the file (a caller may then
        fall back to :meth:`rows`). A file holding one JSON array is read whole."""
        import pyarrow.json as pj

        from ragrade.io._common import first_line
        from ragrade.io.formats.base import counting_stream

        self._no_names(names, skip_rows)
        first = first_line(path)
        if first is not None and first.lstrip().startswith("["):
            yield from super().batches(path, columns)
            return
        parse, nested = self._parse_options(path, columns)
        src = counting_stream(path, progress)
        try:
            for batch in pj.open_json(src, read_options=pj.ReadOptions(block_size=block_size), parse_options=parse):
                yield batch.select([c for c in columns or () if c in batch.schema.names]) if nested else batch
        finally:
            src.close()

    def _parse_options(self, path: str, columns: list[str] | None) -> tuple[Any, bool]:
        """Arrow's options for ``columns`` (scalars as text, nested values inferred), and whether columns
        other than those are read too (to be dropped from each batch)."""
        import pyarrow as pa
        import pyarrow.json as pj

        if columns is None:
            return pj.ParseOptions(newlines_in_values=False), False
        head = next(iter(self.rows(path)), None)
        nested = {c for c in columns if head is not None and isinstance(head[0].get(c), list | dict)}
        schema = pa.schema([(c, pa.string()) for c in columns if c not in nested])
        behaviour = "infer" if nested else "ignore"
        return pj.ParseOptions(unexpected_field_behavior=behaviour, newlines_in_values=False,
                               explicit_schema=schema), bool(nested)


JSONL = JsonLines()
