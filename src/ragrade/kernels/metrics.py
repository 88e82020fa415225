"""Vectorised metric kernels over flat arrays, for all queries at once.

Input is a :class:`Judged` table: only the *credited* retrieved rows that carry a positive grade (the
first rank at which each ground-truth unit was retrieved), as parallel arrays sorted by (query,
position), plus list lengths per query and the units' grades from the ground truth. Every metric of
the default convention (``docs/conventions.md``, "Default definitions") is a handful of ``bincount`` /
cumulative operations over those arrays; none loops over queries or items in Python.

Each kernel is ``(Metric, Judged) -> float64[nq]``, referenced by its family in the registry
(:mod:`ragrade.metrics.registry`); the engine applies the family's definedness rule and the policies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade.kernels._common import precision_sum, rank_within_group, safe_div, sum_by_query

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric


@dataclass
class Judged:
    """Flat arrays describing what was retrieved and what was relevant, for ``nq`` queries."""

    nq: int
    n_ret: np.ndarray  # int64[nq]: length of each retrieved list (duplicates included unless dropped)
    q: np.ndarray  # int64[m]: query of each credited row with positive grade
    pos: np.ndarray  # int64[m]: 0-based rank
    grade: np.ndarray  # float64[m]
    unit_q: np.ndarray  # int64[u]: query of each ground-truth unit
    unit_grade: np.ndarray  # float64[u]
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    # -- cached building blocks ------------------------------------------------------------------
    def n_relevant(self, rel: float) -> np.ndarray:
        """R: number of units with grade >= rel, per query."""
        key = ("R", rel)
        if key not in self._cache:
            self._cache[key] = np.bincount(
                self.unit_q, weights=(self.unit_grade >= rel).astype(np.float64), minlength=self.nq
            )
        return self._cache[key]

    def relevant_rows(self, rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, pos, hit number 1..) of credited rows with grade >= rel, sorted by (q, pos)."""
        key = ("rows", rel)
        if key not in self._cache:
            mask = self.grade >= rel
            q, pos = self.q[mask], self.pos[mask]
            hitnum = rank_within_group(q)
            self._cache[key] = (q, pos, hitnum)
        return self._cache[key]

    def ideal(self, rel: float | None, gain: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, pos, gain) of the ideal ranking: positive unit grades sorted descending per query."""
        key = ("ideal", rel, gain)
        if key not in self._cache:
            thr = 0.0 if rel is None else rel
            mask = (self.unit_grade > 0) & (self.unit_grade >= thr)
            q, g = self.unit_q[mask], self.unit_grade[mask]
            order = np.lexsort((-g, q))
            q, g = q[order], g[order]
            self._cache[key] = (q, rank_within_group(q) - 1, _gain(g, gain))
        return self._cache[key]


    def ideal_dcg(self, rel: float | None, gain: str, k: int | None) -> np.ndarray:
        """DCG of the ideal ranking at cutoff k, per query. With few distinct grades (the usual case) it
        is counted, not sorted: the ideal list holds, grade by grade from the highest, ``count`` items of
        that grade, whose discounts sum to a difference of the discount's prefix sums."""
        key = ("idcg", rel, gain, k)
        if key in self._cache:
            return self._cache[key]
        thr = 0.0 if rel is None else rel
        mask = (self.unit_grade > 0) & (self.unit_grade >= thr)
        q, g = self.unit_q[mask], self.unit_grade[mask]
        levels = np.unique(g)[::-1]
        if len(levels) > 16:  # many distinct grades: sort
            iq, ipos, igain = self.ideal(rel, gain)
            out = sum_by_query(iq, igain / np.log2(ipos + 2.0), self.nq, _within(ipos, k))
        else:
            longest = int(np.bincount(q, minlength=self.nq).max()) if len(q) else 0
            depth = longest if k is None else min(k, longest)
            prefix = np.zeros(depth + 1)
            np.cumsum(1.0 / np.log2(np.arange(depth) + 2.0), out=prefix[1:])
            out = np.zeros(self.nq)
            start = np.zeros(self.nq, dtype=np.int64)
            for level in levels.tolist():  # a handful of passes
                count = np.bincount(q[g == level], minlength=self.nq)
                end = start + count
                out += _gain(np.array([level]), gain)[0] * (prefix[np.minimum(end, depth)]
                                                            - prefix[np.minimum(start, depth)])
                start = end
        self._cache[key] = out
        return out


def _gain(g: np.ndarray, kind: str) -> np.ndarray:
    return np.exp2(g) - 1.0 if kind == "exp" else g.astype(np.float64, copy=False)


def _within(pos: np.ndarray, k: int | None) -> np.ndarray | None:
    return None if k is None else pos < k


# -- the kernels: Metric, Judged -> float64[nq] ------------------------------------------------------


def hits(m: Metric, j: Judged) -> np.ndarray:
    q, pos, _ = j.relevant_rows(m.rel)
    return sum_by_query(q, np.ones(len(q)), j.nq, _within(pos, m.k))


def hit_rate(m: Metric, j: Judged) -> np.ndarray:
    return (hits(m, j) > 0).astype(np.float64)


def precision(m: Metric, j: Judged) -> np.ndarray:
    h = hits(m, j)
    if m.k is None:
        return safe_div(h, j.n_ret.astype(np.float64))
    return h / float(m.k)


def recall(m: Metric, j: Judged) -> np.ndarray:
    return safe_div(hits(m, j), j.n_relevant(m.rel))


def f1(m: Metric, j: Judged) -> np.ndarray:
    p, r = precision(m, j), recall(m, j)
    return safe_div(2.0 * p * r, p + r)


def recall_all(m: Metric, j: Judged) -> np.ndarray:
    r = j.n_relevant(m.rel)
    return ((hits(m, j) >= r) & (r > 0)).astype(np.float64)


def r_precision(m: Metric, j: Judged) -> np.ndarray:
    q, pos, _ = j.relevant_rows(m.rel)
    r = j.n_relevant(m.rel)
    h = sum_by_query(q, np.ones(len(q)), j.nq, pos < r[q])
    return safe_div(h, r)


def rr(m: Metric, j: Judged) -> np.ndarray:
    q, pos, hitnum = j.relevant_rows(m.rel)
    first = hitnum == 1
    if m.k is not None:
        first &= pos < m.k
    out = np.zeros(j.nq, dtype=np.float64)
    out[q[first]] = 1.0 / (pos[first] + 1.0)
    return out


def _weighted_precision(m: Metric, j: Judged) -> np.ndarray:
    q, pos, hitnum = j.relevant_rows(m.rel)
    return precision_sum(q, pos, j.nq, m.k, hitnum)[0]


def ap(m: Metric, j: Judged) -> np.ndarray:
    return safe_div(_weighted_precision(m, j), j.n_relevant(m.rel))


def context_precision(m: Metric, j: Judged) -> np.ndarray:
    return safe_div(_weighted_precision(m, j), hits(m, j))


def _dcg_rows(m: Metric, j: Judged) -> np.ndarray:
    rel = m.get("rel")
    gain = m.get("gain")
    mask = j.grade > 0 if rel is None else j.grade >= rel
    if m.k is not None:
        mask &= j.pos < m.k
    w = _gain(j.grade[mask], gain) / np.log2(j.pos[mask] + 2.0)
    return np.bincount(j.q[mask], weights=w, minlength=j.nq).astype(np.float64, copy=False)


def dcg(m: Metric, j: Judged) -> np.ndarray:
    return _dcg_rows(m, j)


def ndcg(m: Metric, j: Judged) -> np.ndarray:
    return safe_div(_dcg_rows(m, j), j.ideal_dcg(m.get("rel"), m.get("gain"), m.k))
