"""Arrow IPC files (Feather version 2): the same columns as Parquet (rows, or list columns), read
without decoding pages. Added as the registry's checklist says (docs/formats.md, "Adding a format"):
``records`` (and ``sniff``) for reading, the writers for writing; runs, ground truth, topics, corpora,
judge datasets and texts follow from ``records``."""

from __future__ import annotations

import os
from typing import Any

from ragrade.errors import ParseError
from ragrade.io.formats.base import TableFormat, as_strings


class ArrowIPC(TableFormat):
    name = "arrow"
    aliases = ("feather", "ipc")
    extensions = (".arrow", ".feather", ".ipc")
    binary = True
    description = "Arrow IPC file / Feather v2 (rows, or list columns)"

    def sniff(self, head: bytes, line: str | None) -> bool:
        return head[:4] == b"ARRO"  # the file magic is ARROW1

    def records(self, path: str, *, strings: bool = False) -> Any:
        import pyarrow as pa
        import pyarrow.feather as feather

        try:
            table = feather.read_table(path, memory_map=False)
        except (pa.ArrowException, OSError) as exc:
            raise ParseError(f"not a readable Arrow IPC file ({exc})", path=path) from None
        return as_strings(table) if strings else table

    def write_run(self, run: Any, path: str | os.PathLike[str], *, tag: str | None, ties: str) -> None:
        from ragrade.io import writers

        self.write_records(writers.run_table(run, ties), path)

    def write_qrels(self, qrels: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io import writers

        self.write_records(writers.qrels_table(qrels), path)

    def write_records(self, table: Any, path: str | os.PathLike[str]) -> None:
        import pyarrow.feather as feather

        feather.write_feather(table, os.fspath(path), compression="uncompressed")


ARROW_IPC = ArrowIPC()
