"""The kernels' shortcuts give what the plain computations give, to the last bit: the ideal ranking counted
instead of sorted (and its gain levels), hit counts for many cutoffs in one pass, masks applied through their
indices, the compensated running sums with and without the C helper."""

from __future__ import annotations

import numpy as np
import pytest

from ragrade import _ingest
from ragrade.kernels import common
from ragrade.kernels.common import pick, rank_within_group, sum_by_query
from ragrade.kernels.metrics import Judged


def table(rng: np.random.Generator, nq: int, grades: list[float], sort: bool) -> Judged:
    n = int(rng.integers(0, 12 * nq))
    unit_q = rng.integers(0, nq, n)
    if sort:
        unit_q = np.sort(unit_q)
    unit_grade = rng.choice(grades, n).astype(np.float64)
    m = int(rng.integers(0, 3 * nq))
    q = np.sort(rng.integers(0, nq, m))
    pos = np.concatenate([np.sort(rng.choice(60, c, replace=False)) for c in np.bincount(q, minlength=nq)])
    return Judged(nq=nq, n_ret=np.full(nq, 60), q=q, pos=pos.astype(np.int64), grade=np.ones(m),
                  unit_q=unit_q.astype(np.int64), unit_grade=unit_grade)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("grades,sort", [([0, 1, 2, 3], True), ([-1, 0, 1, 4, 60], True), ([0, 0.5, 1, 2.5], True),
                                         ([0, 1, 2, 3], False), ([1, 200], True)])
def test_the_counted_ideal_ranking_is_the_sorted_one(seed, grades, sort):
    rng = np.random.default_rng(seed)
    j = table(rng, int(rng.integers(1, 40)), grades, sort)
    q, g = j.unit_gains(None, "linear")
    order = np.lexsort((-g, q))
    want = (q[order], rank_within_group(q[order]) - 1, g[order])
    got = j.ideal(None, "linear")
    counted = j.memo[("glevels", None, "linear", None)]
    assert (counted is not None) == (sort and grades in ([0, 1, 2, 3], [-1, 0, 1, 4, 60]) and len(q) > 0)
    for x, y in zip(want, got, strict=True):
        assert x.tobytes() == y.tobytes()
    for k in (None, 1, 3, 10):
        fresh = Judged(nq=j.nq, n_ret=j.n_ret, q=j.q, pos=j.pos, grade=j.grade, unit_q=j.unit_q,
                       unit_grade=j.unit_grade)
        fresh.memo[("glevels", None, "linear", None)] = None  # the sorted way
        assert j.ideal_dcg(None, "linear", k).tobytes() == fresh.ideal_dcg(None, "linear", k).tobytes()


@pytest.mark.parametrize("seed", range(5))
def test_hit_counts_of_many_cutoffs_in_one_pass(seed):
    rng = np.random.default_rng(seed)
    j = table(rng, 30, [0, 1, 2], True)
    cuts = [1, 3, 5, 10, 100, 1000]
    j.count_hits_at(1, cuts)
    q, pos, _ = j.relevant_rows(1)
    for k in cuts:
        assert j.memo[("hits", 1, k)].tobytes() == sum_by_query(q, np.ones(len(q)), j.nq, pos < k).tobytes()


def test_pick_is_boolean_indexing():
    rng = np.random.default_rng(1)
    for n in (0, 1, 100, 5000):
        a, b = rng.random(n), rng.integers(0, 9, n)
        for mask in (rng.random(n) < 0.5, np.zeros(n, dtype=bool), np.ones(n, dtype=bool)):
            x, y = pick(mask, a, b)
            assert x.tobytes() == a[mask].tobytes() and y.tobytes() == b[mask].tobytes() and y.dtype == b.dtype


def test_running_sums_with_and_without_the_helper(monkeypatch):
    rng = np.random.default_rng(2)
    q = np.sort(rng.integers(0, 300, 20_000))
    w = rng.random(20_000) / 7.0
    with_helper = common.cumsum_within(q, w)
    monkeypatch.setattr(_ingest, "_accel", None)
    assert common.cumsum_within(q, w).tobytes() == with_helper.tobytes()
