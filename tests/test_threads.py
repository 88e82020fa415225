"""The C helpers' work split across cores (ragrade._threads.each, and the drop-ins' own copy in
ragrade.compat._native): every item is called, the last on the calling thread, results in order, and an
exception is raised only once every call has ended."""

from __future__ import annotations

import threading
import time

import pytest

from ragrade._threads import each
from ragrade.compat._native import each as compat_each


def test_results_come_back_in_item_order_and_the_last_item_runs_here():
    where = {}

    def fn(i: int) -> int:
        where[i] = threading.get_ident()
        time.sleep(0.01 * (3 - i))  # the first items end last
        return i * i

    assert each(fn, [0, 1, 2, 3]) == [0, 1, 4, 9]
    assert where[3] == threading.get_ident()
    assert len({where[i] for i in range(3)} | {where[3]}) == 4


@pytest.mark.parametrize("split", [each, compat_each], ids=["ragrade", "compat"])
def test_an_exception_is_raised_after_every_call_has_ended(split):
    ended = []

    def fn(i: int) -> None:
        if i == 0:
            raise ValueError("item 0")
        time.sleep(0.05)
        ended.append(i)

    with pytest.raises(ValueError, match="item 0"):
        split(fn, [0, 1, 2])
    assert sorted(ended) == [1, 2]


@pytest.mark.parametrize("split", [each, compat_each], ids=["ragrade", "compat"])
def test_no_item_and_one_item(split):
    seen = []
    split(seen.append, [])
    split(seen.append, [7])
    assert seen == [7]
