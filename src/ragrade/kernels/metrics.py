"""Vectorised metric kernels over flat arrays, for all queries at once.

Input is a :class:`Judged` table: the *credited* retrieved rows that carry a positive grade (the first
rank at which each ground-truth unit was retrieved), as parallel arrays sorted by (query, position), plus
list lengths per query and the units' grades from the ground truth; and, for the measures that look at
judged non-relevant and unjudged documents (bpref, infAP, Judged@k, gain maps, the hole rate...), every
retrieved row that has a judgment of any grade. Every metric of the default convention
(``docs/conventions.md``, "Default definitions") is a handful of ``bincount`` / cumulative operations over
those arrays; none loops over queries or items in Python. The measures of trec_eval and ir-measures that
the default convention does not have live in :mod:`ragrade.kernels.measures` (and
:mod:`ragrade.kernels.cascade`, :mod:`ragrade.kernels.diversity`) over the same table.

Each kernel is ``(Metric, Judged) -> float64[nq]``, referenced by its family in the registry
(:mod:`ragrade.metrics.registry`); the engine applies the family's definedness rule and the policies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade.kernels.common import pick, rank_within_group, safe_div, sum_by_query

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
    unit: np.ndarray | None = None  # int64[m]: the unit each credited row credits
    # Every retrieved row with a judgment of any grade, sorted by (query, position); ``jfirst`` is False
    # for a later copy of a unit (credited nothing). None when the join looked up positive grades only.
    jq: np.ndarray | None = None
    jpos: np.ndarray | None = None
    jgrade: np.ndarray | None = None
    jfirst: np.ndarray | None = None
    junit: np.ndarray | None = None
    num_docs: int | None = None  # documents in the collection (trec_eval -N; utility's fourth term)
    #: Building blocks computed once per table, by key (``("R", rel)``, ``("idcg", ...)``, ...): the scoring
    #: port (:mod:`ragrade.engine.scoring`) carries the ones that depend on the ground truth alone from one
    #: table to the next.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    # -- the judged table --------------------------------------------------------------------------
    def judged_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(q, pos, grade, first)`` of every retrieved row that has a judgment, sorted by (q, pos)."""
        if self.jq is None or self.jpos is None or self.jgrade is None or self.jfirst is None:
            raise RuntimeError("this measure needs every judged row: the join looked up positive grades only")
        return self.jq, self.jpos, self.jgrade, self.jfirst

    def n_nonrelevant(self, rel: float) -> np.ndarray:
        """Judged non-relevant units per query: grade in [0, rel) (negative grades excluded, trec_eval)."""
        key = ("N", rel)
        if key not in self.memo:
            g = self.unit_grade
            self.memo[key] = np.bincount(self.unit_q, weights=((g >= 0) & (g < rel)).astype(np.float64),
                                           minlength=self.nq)
        return self.memo[key]

    def judged_in_top(self, k: int | None) -> np.ndarray:
        """Retrieved rows with a judgment (any grade, later copies included) among the top k, per query."""
        q, pos, _, _ = self.judged_table()
        return sum_by_query(q, np.ones(len(q)), self.nq, _within(pos, k))

    def count_hits_at(self, rel: float, ks: list[int]) -> None:
        """The relevant rows among the top k of each query for every cutoff of ``ks`` at once (one counting pass
        instead of one per cutoff), cached for :func:`hits`: the same counts."""
        cuts = np.unique(np.asarray(ks, dtype=np.int64))
        if len(cuts) == 0:
            return
        q, pos, _ = self.relevant_rows(rel)
        bucket = np.searchsorted(cuts, pos, side="right")  # the first cutoff that holds the row
        keep = bucket < len(cuts)
        q, bucket = pick(keep, q, bucket)
        counts = np.bincount(q * len(cuts) + bucket, minlength=self.nq * len(cuts))
        table = np.cumsum(counts.reshape(self.nq, len(cuts)), axis=1).astype(np.float64).T.copy()
        for k, row in zip(cuts.tolist(), table, strict=True):
            self.memo.setdefault(("hits", rel, k), row)

    def hits_uncut(self, rel: float) -> np.ndarray:
        q, _, _ = self.relevant_rows(rel)
        return np.bincount(q, minlength=self.nq).astype(np.float64)

    # -- cached building blocks ------------------------------------------------------------------
    def n_relevant(self, rel: float) -> np.ndarray:
        """R: number of units with grade >= rel, per query."""
        key = ("R", rel)
        if key not in self.memo:
            self.memo[key] = np.bincount(
                self.unit_q, weights=(self.unit_grade >= rel).astype(np.float64), minlength=self.nq
            )
        return self.memo[key]

    def relevant_rows(self, rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, pos, hit number 1..) of credited rows with grade >= rel, sorted by (q, pos)."""
        key = ("rows", rel)
        if key not in self.memo:
            mask = self.grade >= rel
            q, pos = pick(mask, self.q, self.pos)
            hitnum = rank_within_group(q)
            self.memo[key] = (q, pos, hitnum)
        return self.memo[key]

    def unit_gains(self, rel: float | None, gain: str, gains: Gains = None) -> tuple[np.ndarray, np.ndarray]:
        """``(q, gain)`` of the units that enter the ideal ranking: positive gains only (grades at or above
        ``rel`` when set). With a gain map, a grade's gain is the map's value (unlisted grades >= 0 keep
        their grade as gain; negative grades gain nothing), as trec_eval's ``ndcg.1=3,2=9``."""
        key = ("ugain", rel, gain, gains)
        if key not in self.memo:
            g = self.unit_grade
            values = grade_gain(g, gain, gains)
            mask = values > 0
            if rel is not None:
                mask &= g >= rel
            self.memo[key] = pick(mask, self.unit_q, values)
        return self.memo[key]

    def gain_levels(self, rel: float | None, gain: str, gains: Gains = None) -> tuple[np.ndarray, np.ndarray] | None:
        """When the units of :meth:`unit_gains` come query after query with whole gains 1..64 (qrels of grades):
        ``(gain of each column, descending; int64[nq, columns] units of that gain per query)``, a counting
        table of the ideal ranking; else None."""
        key = ("glevels", rel, gain, gains)
        if key not in self.memo:
            q, g = self.unit_gains(rel, gain, gains)
            out = None
            if len(q) and float(g.max()) <= 64 and (len(q) < 2 or bool((q[1:] >= q[:-1]).all())):
                gi = g.astype(np.int64)
                top = int(gi.max())
                if np.array_equal(gi, g) and self.nq * top <= 8 * len(q) + 4096:  # gains 1..top; a small table
                    table = np.bincount(q * top + (top - gi), minlength=self.nq * top).reshape(self.nq, top)
                    out = (np.arange(top, 0, -1).astype(np.float64), table)
            self.memo[key] = out
        return self.memo[key]

    def ideal(self, rel: float | None, gain: str, gains: Gains = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, pos, gain) of the ideal ranking: positive unit gains sorted descending per query."""
        key = ("ideal", rel, gain, gains)
        if key not in self.memo:
            q, g = self.unit_gains(rel, gain, gains)
            levels = self.gain_levels(rel, gain, gains)
            if levels is not None:  # counted: each query's gains, highest first (q is sorted already)
                column_gain, table = levels
                g = np.repeat(np.tile(column_gain, self.nq), table.ravel())
            else:
                order = np.lexsort((-g, q))
                q, g = q[order], g[order]
            self.memo[key] = (q, rank_within_group(q) - 1, g)
        return self.memo[key]

    def ideal_dcg(self, rel: float | None, gain: str, k: int | None, gains: Gains = None) -> np.ndarray:
        """DCG of the ideal ranking at cutoff k, per query. With few distinct gains (the usual case) it
        is counted, not sorted: the ideal list holds, gain by gain from the highest, ``count`` items of
        that gain, whose discounts sum to a difference of the discount's prefix sums."""
        key = ("idcg", rel, gain, k, gains)
        if key in self.memo:
            return self.memo[key]
        lkey = ("ilevels", rel, gain, gains)  # the gain levels and their counts per query: shared by every k
        if lkey not in self.memo:
            counted = self.gain_levels(rel, gain, gains)
            if counted is not None:  # the same levels and counts, read off the counting table
                column_gain, table = counted
                present = np.flatnonzero(table.any(axis=0))
                levels = column_gain[present]
                counts = [] if len(levels) > 16 else [table[:, c] for c in present.tolist()]
                longest = int(table.sum(axis=1).max())
            else:
                q, g = self.unit_gains(rel, gain, gains)
                levels = np.unique(g)[::-1]
                counts = [] if len(levels) > 16 else [np.bincount(q[g == level], minlength=self.nq)
                                                      for level in levels.tolist()]
                longest = int(np.bincount(q, minlength=self.nq).max()) if len(q) else 0
            self.memo[lkey] = (levels, counts, longest)
        levels, counts, longest = self.memo[lkey]
        if len(levels) > 16:  # many distinct gains: sort
            iq, ipos, igain = self.ideal(rel, gain, gains)
            out = sum_by_query(iq, igain / np.log2(ipos + 2.0), self.nq, _within(ipos, k))
        else:
            depth = longest if k is None else min(k, longest)
            prefix = np.zeros(depth + 1)
            np.cumsum(1.0 / np.log2(np.arange(depth) + 2.0), out=prefix[1:])
            out = np.zeros(self.nq)
            start = np.zeros(self.nq, dtype=np.int64)
            for level, count in zip(levels.tolist(), counts, strict=True):  # a handful of passes
                end = start + count
                out += level * (prefix[np.minimum(end, depth)] - prefix[np.minimum(start, depth)])
                start = end
        self.memo[key] = out
        return out


#: A gain map as a metric parameter holds it: ``((grade, gain), ...)`` sorted by grade; None: no map.
Gains = tuple[tuple[int, float], ...] | None


def grade_gain(g: np.ndarray, kind: str, gains: Gains = None) -> np.ndarray:
    """Gain of each grade: ``g`` (linear) or ``2^g - 1`` (exp) for positive grades, 0 otherwise; with a
    gain map, the mapped value for listed grades, the grade itself for other grades >= 0."""
    g = np.asarray(g, dtype=np.float64)
    if gains:
        out = np.where(g >= 0, g, 0.0)
        for level, value in gains:
            out[g == level] = value
        return out
    pos = np.where(g > 0, g, 0.0)
    return np.exp2(pos) - 1.0 if kind == "exp" else pos


def _within(pos: np.ndarray, k: int | None) -> np.ndarray | None:
    return None if k is None else pos < k


# -- the kernels: Metric, Judged -> float64[nq] ------------------------------------------------------


def hits(m: Metric, j: Judged) -> np.ndarray:
    """Relevant rows among the top k per query (read, not to be changed: it may be the cached counts of
    :meth:`Judged.count_hits_at`)."""
    counted = j.memo.get(("hits", m.rel, m.k))
    if counted is not None:
        return counted
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
    """:func:`precision_sum`'s first value (the same terms, summed the same way), each row's term computed
    once per table for every cutoff."""
    q, pos, hitnum = j.relevant_rows(m.rel)
    key = ("wprec", m.rel)
    if key not in j.memo:
        j.memo[key] = hitnum / (pos + 1.0)
    return sum_by_query(q, j.memo[key], j.nq, None if m.k is None else pos < m.k)


def ap(m: Metric, j: Judged) -> np.ndarray:
    return safe_div(_weighted_precision(m, j), j.n_relevant(m.rel))


def context_precision(m: Metric, j: Judged) -> np.ndarray:
    return safe_div(_weighted_precision(m, j), hits(m, j))


def capped_ap(m: Metric, j: Judged) -> np.ndarray:
    """AP@k over min(k, R) instead of R: the ideal ranking scores 1 at every k (Spark's
    ``meanAveragePrecisionAt``). The family's cutoff is required, so ``m.k`` is set."""
    return safe_div(_weighted_precision(m, j), np.minimum(j.n_relevant(m.rel), float(m.k or 0)))


def gain_rows(m: Metric, j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, pos, gain)`` of the retrieved rows that earn a non-zero gain under ``m``'s ``rel``, ``gain``
    and ``gains`` parameters (credited rows only), sorted by (q, pos); computed once per table (every cutoff
    of a DCG family reads it)."""
    rel = m.get("rel")
    gains = m.get("gains")
    key = ("grows", rel, m.get("gain"), gains)
    if key in j.memo:
        return j.memo[key]
    if gains:  # a map may give grade 0 (or a negative value) a gain: every judged row is looked at
        q, pos, g, first = j.judged_table()
        w = grade_gain(g, "linear", gains)
        mask = first & (w != 0)
    else:
        q, pos, g = j.q, j.pos, j.grade
        mask = g > 0
        w = grade_gain(g, m.get("gain"))
    if rel is not None:
        mask &= g >= rel
    q, pos, w = pick(mask, q, pos, w)
    j.memo[key] = (q, pos, w)
    return q, pos, w


def _dcg_rows(m: Metric, j: Judged) -> np.ndarray:
    q, pos, w = gain_rows(m, j)
    if m.k is not None:
        keep = pos < m.k
        q, pos, w = pick(keep, q, pos, w)
    return np.bincount(q, weights=w / np.log2(pos + 2.0), minlength=j.nq).astype(np.float64, copy=False)


def dcg(m: Metric, j: Judged) -> np.ndarray:
    return _dcg_rows(m, j)


def ndcg(m: Metric, j: Judged) -> np.ndarray:
    return safe_div(_dcg_rows(m, j), j.ideal_dcg(m.get("rel"), m.get("gain"), m.k, m.get("gains")))
