"""The drop-ins' C helpers (:mod:`ragrade.compat._speedups`, built from ``_speedups.c`` by ``pip install`` when a C
compiler is present), and the few Arrow buffer helpers their callers need. ``RAGRADE_NO_ACCEL=1`` turns them off
as it turns off ragrade's own; without them the drop-ins use equivalent NumPy/Arrow code (the same output, slower).

The drop-ins (:mod:`ragrade.compat`) use ragrade's public API, the scoring port and this module only, as if they
were a separate package (``tests/compat/test_compat_imports.py``). This module imports nothing heavy."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any


def _load() -> ModuleType | None:
    if os.environ.get("RAGRADE_NO_ACCEL"):
        return None
    import importlib

    try:
        return importlib.import_module("ragrade.compat._speedups")
    except ImportError:
        return None


#: The C helpers, or None (not built, or turned off by ``RAGRADE_NO_ACCEL``). Tests set it to None to take the
#: fallbacks; callers read it at each use.
speedups = _load()


def arrow_int64(values: Any) -> Any:
    """``values`` as an Arrow int64 array (indices for ``take``), built from the buffer (no pandas import)."""
    import numpy as np
    import pyarrow as pa

    v = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(v), [None, pa.py_buffer(v)])


def contiguous(col: Any) -> Any:
    """One contiguous Arrow array of a chunked string column (fast ``take``); 64-bit offsets when the text
    exceeds 2 GiB."""
    import pyarrow as pa

    try:
        return col.combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowCapacityError, OverflowError):
        return col.cast(pa.large_string()).combine_chunks()


def arrow_strings(arr: Any) -> tuple[Any, Any] | None:
    """``(int64 offsets, data buffer)`` of an Arrow string array (chunks combined, no copy of one chunk), or None
    (another type, or nulls)."""
    from ragrade.data import Utf8Column

    col = Utf8Column.from_arrow(arr)
    return None if col is None else col.contiguous()


def each(fn: Callable[[Any], None], items: Sequence[Any]) -> None:
    """``fn(item)`` for every item at the same time: a thread for each but the last, which runs here (the C
    helpers release the GIL). The first exception is raised once every call has ended. (The drop-ins' own copy
    of ragrade's internal splitter, as they import nothing private of ragrade; plain threads: the import of
    ``concurrent.futures`` loads ``logging``, a few milliseconds of the drop-in's start-up.)"""
    errors: list[BaseException] = []

    def call(item: Any) -> None:
        try:
            fn(item)
        except BaseException as exc:  # (raised again below)
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(item,), daemon=True) for item in items[:-1]]
    for t in threads:
        t.start()
    try:
        if items:
            call(items[-1])
    finally:
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
