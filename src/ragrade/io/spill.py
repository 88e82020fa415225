"""Scratch files of the out-of-core executor (:mod:`ragrade.scale.outofcore`): the rows of a file too large
for memory, hashed by query into partitions, each partition an Arrow IPC stream in a temporary folder, written
block after block and read back whole, one partition at a time. Kept with io's other writers: no module outside
io/ opens a file format itself (docs/architecture.md, "Results").
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["Partitions", "read_partition"]


class Partitions:
    """One Arrow IPC stream per partition, ``{stem}-{p:04d}.arrow``, opened on its first rows (a partition
    never written has no file: :func:`read_partition` gives None for it). Every table written must have the
    schema of the first; :meth:`close` (or leaving the ``with`` block) closes every stream."""

    def __init__(self, stem: str, n_parts: int) -> None:
        self.files = [f"{stem}-{p:04d}.arrow" for p in range(n_parts)]
        self.writers: dict[int, Any] = {}
        self.sinks: dict[int, Any] = {}

    def write(self, p: int, table: pa.Table) -> None:
        """Append ``table``'s rows to partition ``p``."""
        if p not in self.writers:
            self.sinks[p] = pa.OSFile(self.files[p], "wb")
            self.writers[p] = pa.ipc.new_stream(self.sinks[p], table.schema)
        self.writers[p].write_table(table)

    def close(self) -> None:
        for p, w in self.writers.items():
            w.close()
            self.sinks[p].close()
        self.writers, self.sinks = {}, {}

    def __enter__(self) -> Partitions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_partition(path: str) -> pa.Table | None:
    """The rows of one partition (None: never written, or empty)."""
    import os

    if not os.path.exists(path):
        return None
    with pa.OSFile(path, "rb") as f:
        table = pa.ipc.open_stream(f).read_all()
    return table if table.num_rows else None

