"""CSV and TSV tables (a header row naming the columns, or headerless ``query doc value`` rows). A
``.tsv``/``.csv`` file whose first line is a TREC line is read as TREC (docs/formats.md, "Detection")."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ragrade.io.formats.base import Format, TableFormat


class Delimited(TableFormat):
    headerless = True

    def __init__(self, name: str, delimiter: str, extensions: tuple[str, ...]) -> None:
        self.name = name
        self.delimiter = delimiter
        self.extensions = extensions
        self.description = f"a table of {'tab' if delimiter == chr(9) else 'comma'}-separated columns with a header"

    def refine(self, path: str) -> Format:
        from ragrade.io._common import first_line, sniff_trec
        from ragrade.io.formats.trec import TREC

        first = first_line(path, skip_comments=True)
        return TREC if first is not None and sniff_trec(first) is not None else self

    def load(self, path: str, kind: str, progress: Any, opts: dict[str, Any]) -> Any:
        from ragrade.io import tables

        return tables.load_delimited(path, self.delimiter, header=opts.pop("header", None), kind=kind,
                                     progress=progress)

    def write_run(self, run: Any, path: str | os.PathLike[str], *, tag: str | None, ties: str) -> None:
        from ragrade.io import writers

        writers.write_delimited(writers.run_table(run, ties), path, self.delimiter)

    def write_qrels(self, qrels: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io import writers

        writers.write_delimited(writers.qrels_table(qrels), path, self.delimiter)

    def column_names(self, path: str) -> list[str]:
        from ragrade.io._common import first_line

        line = first_line(path) or ""
        return [f.strip().strip('"') for f in line.split(self.delimiter)]

    def records(self, path: str, *, strings: bool = False) -> Any:
        """The rows under the header; with ``strings`` every cell as text (empty cells stay empty
        strings), a quoted CSV cell may span lines."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        from ragrade.errors import ParseError
        from ragrade.io._common import open_binary

        parse = pacsv.ParseOptions(delimiter=self.delimiter, newlines_in_values=True)
        stream, raw = open_binary(path)
        try:
            with stream:
                data = stream.read()
        finally:
            raw.close()
        try:
            convert = pacsv.ConvertOptions()
            if strings:
                with pacsv.open_csv(pa.BufferReader(data), parse_options=parse) as reader:
                    names = reader.schema.names
                convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, strings_can_be_null=False)
            return pacsv.read_csv(pa.BufferReader(data), parse_options=parse, convert_options=convert)
        except pa.ArrowInvalid as exc:
            raise ParseError(f"cannot read {self.name.upper()}: {exc}", path=path) from None

    def write_records(self, table: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io import writers
        from ragrade.io.formats.base import as_strings

        writers.write_delimited_records(as_strings(table), path, self.delimiter)

    def rows(self, path: str, *, names: list[str] | None = None) -> Iterator[tuple[dict[str, Any], int | None]]:
        """Every cell as text. TSV: one row per line, cells taken literally (never quoted), each row with its
        line number. CSV: cells may be quoted (a quoted cell may span lines), no line numbers. ``names``: the
        columns of a file without a header; the last takes the rest of a longer row (TSV: joined with tabs;
        CSV refuses it)."""
        if self.delimiter != "\t":
            if names is None:
                for row in self.records(path, strings=True).to_pylist():
                    yield row, None
                return
            for row in self._headerless_csv(path, names).to_pylist():
                yield row, None
            return
        yield from self._tsv_rows(path, names)

    def _tsv_rows(self, path: str, names: list[str] | None) -> Iterator[tuple[dict[str, Any], int | None]]:
        from ragrade.errors import ParseError
        from ragrade.io.formats.base import text_lines

        header = names
        for n, line in text_lines(path):
            if not line.strip():
                continue
            if header is None:
                header = line.split("\t")
                continue
            if names is not None:
                fields = line.split("\t", len(names) - 1)
                if len(fields) < len(names):
                    raise ParseError(f"expected {len(names)} tab-separated fields ({', '.join(names)}), found "
                                     f"{len(fields)}", path=path, line=n, text=line)
            else:
                fields = line.split("\t")
                if len(fields) != len(header):
                    raise ParseError(f"expected {len(header)} tab-separated fields, found {len(fields)}", path=path,
                                     line=n, text=line)
            yield dict(zip(header, fields, strict=True)), n

    def _headerless_csv(self, path: str, names: list[str]) -> Any:
        import pyarrow as pa
        import pyarrow.csv as pacsv

        from ragrade.errors import ParseError
        from ragrade.io._common import open_binary

        stream, raw = open_binary(path)
        try:
            with stream:
                data = stream.read()
        finally:
            raw.close()
        try:
            return pacsv.read_csv(pa.BufferReader(data), read_options=pacsv.ReadOptions(column_names=names),
                                  parse_options=pacsv.ParseOptions(delimiter=self.delimiter, newlines_in_values=True),
                                  convert_options=pacsv.ConvertOptions(
                                      column_types={c: pa.string() for c in names}, strings_can_be_null=False))
        except pa.ArrowInvalid as exc:
            raise ParseError(f"cannot read {self.name.upper()}: {exc}", path=path) from None

    def batches(self, path: str, columns: list[str] | None = None, *, names: list[str] | None = None,
                skip_rows: int = 0, block_size: int = 1 << 20, progress: Any = None) -> Iterator[Any]:
        """Arrow's streaming CSV reader, every column as text; TSV cells are never quoted (a passage may
        hold quotes), CSV cells may be (and then span lines). ``names``: the columns of a file without a
        header (else the first row after ``skip_rows`` is the header); ``columns``: only these."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        from ragrade.errors import ParseError
        from ragrade.io.formats.base import counting_stream

        if names is None:
            with counting_stream(path) as head:
                first = pacsv.open_csv(head, read_options=pacsv.ReadOptions(skip_rows=skip_rows, block_size=block_size),
                                       parse_options=self._stream_parse())
                all_names = first.schema.names
            read = pacsv.ReadOptions(block_size=block_size, skip_rows=skip_rows)
        else:
            all_names = names
            read = pacsv.ReadOptions(block_size=block_size, column_names=names, skip_rows=skip_rows)
        parse = self._stream_parse()
        convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in all_names}, strings_can_be_null=False,
                                       include_columns=columns)
        src = counting_stream(path, progress)
        try:
            with pacsv.open_csv(src, read_options=read, parse_options=parse, convert_options=convert) as reader:
                yield from reader
        except pa.ArrowInvalid as exc:
            raise ParseError(f"cannot read the {self.name.upper()} file: {exc}", path=path) from None
        finally:
            src.close()

    def _stream_parse(self) -> Any:
        import pyarrow.csv as pacsv

        if self.delimiter == "\t":
            return pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False, newlines_in_values=False)
        return pacsv.ParseOptions(delimiter=self.delimiter, newlines_in_values=True)

    def spark_read(self, spark: Any, path: str, kind: str) -> Any:
        return spark.read.options(header=True, sep=self.delimiter).csv(path)


TSV = Delimited("tsv", "\t", (".tsv", ".tab"))
CSV = Delimited("csv", ",", (".csv",))
