"""Ids to positions in one vectorised pass (Arrow's hash kernels): the joins of span evaluation (a run's
chunk ids into a chunk map, spans' documents into the line of documents, queries into the truth's list)
with no Python dictionary lookup per row."""

from __future__ import annotations

from typing import Any

import numpy as np


def positions_of(values: Any, keys: Any) -> np.ndarray:
    """For each of ``values``, its position in ``keys`` (the first one, for a key listed twice), -1 where
    it is not there. Both are sequences of strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    v = values if isinstance(values, pa.Array | pa.ChunkedArray) else pa.array(_strings(values), type=pa.string())
    k = keys if isinstance(keys, pa.Array | pa.ChunkedArray) else pa.array(_strings(keys), type=pa.string())
    found = pc.index_in(v, value_set=k)
    return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def _strings(values: Any) -> Any:
    if isinstance(values, np.ndarray):
        return values.tolist() if values.dtype == object else values.astype(str).tolist()
    return values


def group_max(keys: Any, values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """``(distinct keys in order of first appearance, the largest value of each)``."""
    import pyarrow as pa

    table = pa.table({"k": pa.array(_strings(keys), type=pa.string()), "v": pa.array(np.asarray(values))})
    out = table.group_by("k", use_threads=False).aggregate([("v", "max")])
    return out.column("k").to_pylist(), np.asarray(out.column("v_max").to_numpy(), dtype=np.int64)


__all__ = ["group_max", "positions_of"]
