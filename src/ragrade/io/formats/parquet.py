"""Parquet files (rows, or one query per row with list columns); out of core and on Spark also a
directory of Parquet files (a dataset)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ragrade.errors import ParseError
from ragrade.io.formats.base import TableFormat, as_strings


class Parquet(TableFormat):
    name = "parquet"
    aliases = ("pq",)
    extensions = (".parquet", ".pq")
    binary = True
    out_of_core = True
    description = "Apache Parquet (rows, or list columns); a directory of them out of core and on Spark"

    def sniff(self, head: bytes, line: str | None) -> bool:
        return head[:4] == b"PAR1"

    def load(self, path: str, kind: str, progress: Any, opts: dict[str, Any]) -> Any:
        from ragrade.io import tables

        opts.pop("header", None)
        return tables.load_parquet(path, progress)

    def write_run(self, run: Any, path: str | os.PathLike[str], *, tag: str | None, ties: str) -> None:
        from ragrade.io import writers

        writers.write_parquet(writers.run_table(run, ties), path)

    def write_qrels(self, qrels: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io import writers

        writers.write_parquet(writers.qrels_table(qrels), path)

    def write_records(self, table: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io import writers

        writers.write_parquet(table, path)

    def _file(self, path: str, **kwargs: Any) -> Any:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path, **kwargs)
        except (pa.ArrowException, OSError) as exc:
            raise ParseError(f"not a readable Parquet file ({exc})", path=path) from None

    def column_names(self, path: str) -> list[str]:
        return list(self._file(path).schema_arrow.names)

    def records(self, path: str, *, strings: bool = False) -> Any:
        import pyarrow as pa

        try:
            table = self._file(path).read()
        except (pa.ArrowException, OSError) as exc:
            raise ParseError(f"cannot read Parquet: {exc}", path=path) from None
        return as_strings(table) if strings else table

    def rows(self, path: str, *, names: list[str] | None = None) -> Iterator[tuple[dict[str, Any], int | None]]:
        import pyarrow as pa

        self._no_names(names)
        try:
            for batch in self._file(path).iter_batches(batch_size=65536):
                for row in batch.to_pylist():
                    yield row, None
        except (pa.ArrowException, OSError) as exc:
            raise ParseError(f"cannot read Parquet: {exc}", path=path) from None

    def batches(self, path: str, columns: list[str] | None = None, *, names: list[str] | None = None,
                skip_rows: int = 0, block_size: int = 1 << 20, progress: Any = None) -> Iterator[Any]:
        """Row batches of ``columns`` (column chunks read piecewise, in their stored types);
        ``progress(rows done, rows)``."""
        import pyarrow as pa

        self._no_names(names, skip_rows)
        pf = self._file(path, pre_buffer=False, buffer_size=1 << 20)
        total = pf.metadata.num_rows
        done = 0
        try:
            for batch in pf.iter_batches(batch_size=8192, columns=columns):
                yield batch
                done += batch.num_rows
                if progress:
                    progress(done, total)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
            raise ParseError(f"cannot read Parquet: {exc}", path=path) from None

    def spark_read(self, spark: Any, path: str, kind: str) -> Any:
        return spark.read.format("parquet").load(path)


PARQUET = Parquet()
