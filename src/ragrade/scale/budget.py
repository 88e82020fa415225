"""How much memory an evaluation may take: ``max_memory`` parsed, the memory available, and whether two
input files need the out-of-core path (:func:`budget_for`).

Kept apart from :mod:`ragrade.scale.outofcore` so that the in-memory path decides it without importing
the out-of-core machinery (``ragrade evaluate`` start-up).
"""

from __future__ import annotations

import math
import os
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.io.stream import Source

#: Peak resident memory of the in-memory engine per byte of a TREC run file (measured by
#: bench/bench_scale.py: about 1 byte per byte, with a margin), per byte of a TREC qrels file (its
#: index included), and per row of a Parquet file.
TREC_RUN_FACTOR = 1.5
TREC_QRELS_FACTOR = 3.0
PARQUET_ROW_BYTES = 80
#: Blocks written to partitions are this fraction of a window: a block of a run not grouped by query holds
#: one Python string per row while it is cut (bench/bench_scale.py: about 11 bytes resident per byte of
#: TREC text at the peak), so blocks are kept small next to the budget.
PARTITION_BLOCK_SHARE = 8

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 10**3, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6, "mib": 1 << 20,
          "g": 1 << 30, "gb": 10**9, "gib": 1 << 30, "t": 1 << 40, "tb": 10**12, "tib": 1 << 40}


def parse_memory(value: Any) -> int:
    """Bytes from ``4GiB``, ``500MB``, ``2g``, ``1.5G`` or a number of bytes (at least 16 MiB).

    >>> parse_memory("4GiB"), parse_memory("500MB"), parse_memory(2**30)
    (4294967296, 500000000, 1073741824)
    """
    if isinstance(value, bool):
        raise InputError("max_memory must be a size such as '4GiB' or a number of bytes", value=value)
    if isinstance(value, int | float | np.integer | np.floating):
        n = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(value))
        if m is None or m.group(2).lower() not in _UNITS:
            raise InputError("max_memory must be a size such as '4GiB', '500MB' or a number of bytes", value=value)
        n = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not math.isfinite(n) or n < (16 << 20):
        raise InputError("max_memory must be at least 16MiB", value=value)
    return int(n)


def memory_available() -> int:
    """Memory available to a new allocation (Linux: ``MemAvailable``), else the machine's memory."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not a POSIX system
        return 8 << 30


def estimated_memory(src: Source) -> int:
    """Bytes the in-memory engine would hold for this input (a deliberate over-estimate)."""
    if src.is_trec:
        factor = TREC_RUN_FACTOR if src.kind == "run" else TREC_QRELS_FACTOR
        return int(src.size * (4.0 if src.path.endswith(".gz") else 1.0) * factor)
    return int(src.rows * PARQUET_ROW_BYTES * (1 if src.kind == "run" else 2))


def budget_for(qrels: Any, run: Any, max_memory: Any = None) -> int | None:
    """The memory budget (bytes) for evaluating ``qrels`` and ``run`` out of core, or None for the
    in-memory path. With ``max_memory``, always that budget; without, only for two paths whose estimated
    size in memory is above half the memory available (then a quarter of it is the budget). The automatic
    check costs a ``stat`` of each file and a look at its first lines."""
    if max_memory is not None:
        return parse_memory(max_memory)
    from ragrade.engine.inputs import is_path

    if not (is_path(qrels) and is_path(run)):
        return None
    from ragrade.io.sources import is_pipe

    if is_pipe(qrels) or is_pipe(run):  # a pipe's size is unknown; looking at it would consume it
        return None
    avail = memory_available()
    if any(os.path.isdir(os.fspath(p)) for p in (qrels, run)):  # a Parquet dataset: read piece by piece
        return max(16 << 20, avail // 4)
    try:
        total = sum(_disk_size(os.fspath(p)) for p in (qrels, run))
    except OSError:
        return None
    if total * TREC_RUN_FACTOR <= avail / 2:  # cannot need more than this: no need to look further
        return None
    try:
        from ragrade.io import stream

        need = sum(estimated_memory(stream.open_source(p, kind)) for p, kind in ((qrels, "qrels"), (run, "run")))
    except InputError:
        return None  # not a format read piece by piece: the in-memory reader reports any problem
    return None if need <= avail / 2 else max(16 << 20, avail // 4)


def _disk_size(p: str) -> int:
    if os.path.isdir(p):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)
    return os.path.getsize(p)
