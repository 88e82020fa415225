"""Work split across cores for the C helpers (which release the GIL): :func:`each` calls a function on every
item, the first items on threads of their own and the last on the calling thread, which would otherwise only
wait. Plain :mod:`threading`: ``concurrent.futures`` would do the same, but its import loads :mod:`logging`,
a few milliseconds of the start-up of the trec_eval drop-in, whose reading, ordering and matching all split
this way."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def each(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(item) for item in items]``, the calls running at the same time (one thread per item but the last,
    which runs here). Every call is waited for; then the first item's exception, if any, is raised with its
    own traceback."""
    items = list(items)
    if len(items) <= 1:
        return [fn(item) for item in items]
    results: list[R | None] = [None] * len(items)
    errors: list[BaseException | None] = [None] * len(items)

    def call(i: int) -> None:
        try:
            results[i] = fn(items[i])
        except BaseException as exc:  # (raised again by the caller, below)
            errors[i] = exc

    threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(len(items) - 1)]
    for t in threads:
        t.start()
    try:
        call(len(items) - 1)
    finally:
        for t in threads:
            t.join()
    for exc in errors:
        if exc is not None:
            raise exc
    return results  # type: ignore[return-value]
