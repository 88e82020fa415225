"""Vectorised kernels for RAG-style inputs: a flat *match table* and the peer-profile metrics.

:class:`Matches` describes, for ``nq`` queries at once, the retrieved rows (rank order), the ground-truth
units (an AutoRAG group, a gold id, a gold text) and every (row, unit) pair that matches. It is built
once (by id equality or by a text matcher) and read by

* :func:`greedy_credit`: SPEC section 5's crediting by rank (each row credits at most one unit not yet
  credited), whose output feeds the default kernels of :mod:`ragrade.kernels.metrics` (one engine);
* the profile kernels below, which read the named conventions of a
  :class:`ragrade.profiles.Profile` (``ap_denominator``, ``ndcg_ideal``, ``epsilon``, ...).

All kernels are ``bincount``/``minimum.at``/cumulative operations over the flat arrays; none loops over
queries, rows or pairs in Python (greedy crediting loops over *rank positions*, each step vectorised
over all queries).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from ragrade.kernels.metrics import rank_within_group

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.profiles import Profile


@dataclass(frozen=True)
class Matches:
    """Flat match table for ``nq`` queries. Rows are sorted by (query, position)."""

    nq: int
    n_ret: np.ndarray  # int64[nq] retrieved list length
    r_q: np.ndarray  # int64[n] query of each retrieved row
    r_pos: np.ndarray  # int64[n] 0-based rank
    r_first: np.ndarray  # bool[n] first occurrence of its item (id or text) in the query's list
    n_units: np.ndarray  # int64[nq] ground-truth units as listed
    u_q: np.ndarray  # int64[u] query of each unit
    u_key: np.ndarray  # int64[u] global code of the unit's content (equal content -> equal code)
    u_first: np.ndarray  # bool[u] first unit with its content in the query
    gt_len: np.ndarray  # int64[nq] total entries over all units (AutoRAG's flattened gt length)
    p_row: np.ndarray  # int64[m] matching pairs: retrieved row ...
    p_unit: np.ndarray  # int64[m] ... and unit; sorted by (row, unit), unique
    invalid: np.ndarray = field(default=None)  # bool[nq] rows a peer rejects (AutoRAG's None)
    r_code: np.ndarray = field(default=None)  # int64[n] code of the row's item (equal text -> equal code)

    def __post_init__(self) -> None:
        if self.invalid is None:
            object.__setattr__(self, "invalid", np.zeros(self.nq, dtype=bool))

    # -- derived ---------------------------------------------------------------------------------
    @property
    def n_distinct_units(self) -> np.ndarray:
        return np.bincount(self.u_q[self.u_first], minlength=self.nq).astype(np.int64)

    @property
    def n_distinct_ret(self) -> np.ndarray:
        return np.bincount(self.r_q[self.r_first], minlength=self.nq).astype(np.int64)

    def row_rel(self) -> np.ndarray:
        """bool[n]: the row matches at least one unit."""
        return np.bincount(self.p_row, minlength=len(self.r_q)) > 0

    def cut(self, k: int | None) -> Matches:
        """The table restricted to the top ``k`` rows of every list (``None``: unchanged)."""
        if k is None:
            return self
        keep = self.r_pos < k
        if keep.all():
            return self
        new_index = np.cumsum(keep) - 1
        pk = keep[self.p_row]
        return replace(
            self, n_ret=np.minimum(self.n_ret, k), r_q=self.r_q[keep], r_pos=self.r_pos[keep],
            r_first=self.r_first[keep], p_row=new_index[self.p_row[pk]], p_unit=self.p_unit[pk],
            r_code=None if self.r_code is None else self.r_code[keep],
        )


# -- helpers ---------------------------------------------------------------------------------------


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(a, b).shape, dtype=np.float64)
    np.divide(a, b, out=out, where=b > 0)
    return out


def _qkey(m: Matches) -> np.ndarray:
    """Unit content code made unique per query (equal texts in different queries are different)."""
    return m.u_q * (int(m.u_key.max()) + 1 if len(m.u_key) else 1) + m.u_key


def _sum_by_q(q: np.ndarray, w: np.ndarray, nq: int) -> np.ndarray:
    return np.bincount(q, weights=w, minlength=nq).astype(np.float64, copy=False)


def _ln_ratio_log2(x: np.ndarray) -> np.ndarray:
    # math.log(x, 2) == log(x) / log(2) (continuous-eval), which differs from log2 in the last bit.
    return np.log(x) / np.log(2.0)


# -- greedy crediting (SPEC 5) ---------------------------------------------------------------------


def greedy_credit(m: Matches, by: str = "unit") -> np.ndarray:
    """int64[n]: the unit each retrieved row is credited with (-1 for none).

    Rows are visited in rank order; a row credits the first unit (in ground-truth order) that it
    matches and that no higher-ranked row has credited. ``by="content"`` treats units with equal
    content as one (continuous-eval's set of matched ground-truth strings).
    """
    n = len(m.r_q)
    out = np.full(n, -1, dtype=np.int64)
    if len(m.p_row) == 0:
        return out
    # by content: equal content within one query is one key
    key = _qkey(m) if by == "content" else np.arange(len(m.u_q), dtype=np.int64)
    _, kcode = np.unique(key, return_inverse=True)
    credited = np.zeros(int(kcode.max()) + 1 if len(kcode) else 0, dtype=bool)
    pos = m.r_pos[m.p_row]
    order = np.lexsort((m.p_unit, m.p_row, pos))
    prow, punit, ppos = m.p_row[order], m.p_unit[order], pos[order]
    bounds = np.flatnonzero(np.diff(ppos)) + 1
    starts = np.concatenate(([0], bounds))
    stops = np.concatenate((bounds, [len(ppos)]))
    for a, b in zip(starts.tolist(), stops.tolist(), strict=True):
        rows, units = prow[a:b], punit[a:b]
        free = ~credited[kcode[units]]
        rows, units = rows[free], units[free]
        if len(rows) == 0:
            continue
        first = np.ones(len(rows), dtype=bool)
        first[1:] = rows[1:] != rows[:-1]
        out[rows[first]] = units[first]
        credited[kcode[units[first]]] = True
    return out


# -- profile kernels: (Matches, Profile) -> float64[nq] -------------------------------------------


def precision(m: Matches, p: Profile) -> np.ndarray:
    rel = m.row_rel()
    if p.precision_hits == "distinct":
        hits = _sum_by_q(m.r_q, (rel & m.r_first).astype(np.float64), m.nq)
    else:
        hits = _sum_by_q(m.r_q, rel.astype(np.float64), m.nq)
    denom = m.n_distinct_ret if p.precision_denominator == "distinct" else m.n_ret
    return _div(hits, denom.astype(np.float64))


def _unit_hit(m: Matches) -> np.ndarray:
    return np.bincount(m.p_unit, minlength=len(m.u_q)) > 0


def recall(m: Matches, p: Profile, distinct: bool | None = None) -> np.ndarray:
    hit = _unit_hit(m)
    use_distinct = p.recall_denominator == "distinct_units" if distinct is None else distinct
    if use_distinct:
        # a content is recalled if any unit with that content is matched
        _, kc = np.unique(_qkey(m), return_inverse=True)
        content_hit = np.zeros(int(kc.max()) + 1 if len(kc) else 0, dtype=bool)
        content_hit[kc[hit]] = True
        num = _sum_by_q(m.u_q[m.u_first], content_hit[kc[m.u_first]].astype(np.float64), m.nq)
        return _div(num, m.n_distinct_units.astype(np.float64))
    return _div(_sum_by_q(m.u_q, hit.astype(np.float64), m.nq), m.n_units.astype(np.float64))


def f1(m: Matches, p: Profile) -> np.ndarray:
    pr, rc = precision(m, p), recall(m, p)
    return _div(2.0 * (pr * rc), pr + rc)


def hit_rate(m: Matches, p: Profile) -> np.ndarray:
    return (_sum_by_q(m.r_q, m.row_rel().astype(np.float64), m.nq) > 0).astype(np.float64)


def recall_all(m: Matches, p: Profile) -> np.ndarray:
    """remem: every gold doc matched. Matched docs are counted as distinct contents and compared with
    the gold *list* length (so a gold list with a repeated doc never scores 1, as in remem)."""
    hit = _unit_hit(m)
    _, kc = np.unique(_qkey(m), return_inverse=True)
    content_hit = np.zeros(int(kc.max()) + 1 if len(kc) else 0, dtype=bool)
    content_hit[kc[hit]] = True
    matched = _sum_by_q(m.u_q[m.u_first], content_hit[kc[m.u_first]].astype(np.float64), m.nq)
    target = m.n_units if p.recall_all_target == "list" else m.n_distinct_units
    return ((matched == target) & (m.n_units > 0)).astype(np.float64)


def rr(m: Matches, p: Profile) -> np.ndarray:
    if p.rr_mode == "per_unit":
        # AutoRAG: for each unit 1/first rank (0 if missed), summed, / number of units
        first = np.full(len(m.u_q), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, m.p_unit, m.r_pos[m.p_row])
        ok = first < np.iinfo(np.int64).max
        return _div(_sum_by_q(m.u_q[ok], 1.0 / (first[ok] + 1.0), m.nq), m.n_units.astype(np.float64))
    rel = m.row_rel()
    best = np.full(m.nq, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, m.r_q[rel], m.r_pos[rel])
    ok = best < np.iinfo(np.int64).max
    out = np.zeros(m.nq)
    out[ok] = 1.0 / (best[ok] + 1.0)
    return out


def _weighted_precision_sum(m: Matches) -> tuple[np.ndarray, np.ndarray]:
    """(sum over relevant rows of hits_so_far / rank, number of relevant rows) per query; duplicates
    of a relevant item count again (as in Ragas, continuous-eval and LlamaIndex)."""
    rel = m.row_rel()
    q, pos = m.r_q[rel], m.r_pos[rel]
    hitnum = rank_within_group(q)
    return _sum_by_q(q, hitnum / (pos + 1.0), m.nq), _sum_by_q(q, np.ones(len(q)), m.nq)


def ap(m: Matches, p: Profile) -> np.ndarray:
    if p.ap_denominator == "per_unit":
        # AutoRAG: AP_g = mean over rows in g of (g's hits so far / rank); MAP = sum AP_g / groups
        order = np.lexsort((m.r_pos[m.p_row], m.p_unit))
        unit, pos = m.p_unit[order], m.r_pos[m.p_row[order]]
        hitnum = rank_within_group(unit)
        s = np.bincount(unit, weights=hitnum / (pos + 1.0), minlength=len(m.u_q))
        c = np.bincount(unit, minlength=len(m.u_q)).astype(np.float64)
        ap_g = _div(s, c)
        return _div(_sum_by_q(m.u_q, ap_g, m.nq), m.n_units.astype(np.float64))
    num, hits = _weighted_precision_sum(m)
    if p.ap_denominator == "retrieved_hits":
        if p.epsilon:
            return num / (hits + p.epsilon)
        return _div(num, hits)
    if p.ap_denominator == "distinct_units":
        return _div(num, m.n_distinct_units.astype(np.float64))
    return _div(num, m.n_units.astype(np.float64))


def context_precision(m: Matches, p: Profile) -> np.ndarray:
    num, hits = _weighted_precision_sum(m)
    if p.epsilon:
        return num / (hits + p.epsilon)
    return _div(num, hits)


def _discount(pos: np.ndarray, kind: str) -> np.ndarray:
    if kind == "remem":  # rank 1 and rank 2 both weigh 1: rel_1 + sum_{i>=2} rel_i / log2(i)
        return np.where(pos == 0, 1.0, np.log2(np.maximum(pos, 1) + 1.0))
    if kind == "ln_ratio":
        return _ln_ratio_log2(pos + 2.0)
    return np.log2(pos + 2.0)


def _ideal_sum(count: np.ndarray, kind: str) -> np.ndarray:
    """Sum of ``1/discount(i)`` for i < count, per query (ones at the top of the ideal list)."""
    c = count.astype(np.int64)
    total = int(c.sum())
    if total == 0:
        return np.zeros(len(c))
    q = np.repeat(np.arange(len(c), dtype=np.int64), c)
    pos = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(c) - c, c)
    return _sum_by_q(q, 1.0 / _discount(pos, kind), len(c))


def ndcg(m: Matches, p: Profile, full: Matches | None = None, k: int | None = None) -> np.ndarray:
    """Profile NDCG on a table already cut at ``k``. The 'own_labels' ideal (remem) re-sorts the
    relevance labels of the *whole* list (``full``, the uncut table) and then cuts at ``k``."""
    if p.ndcg_gain == "greedy_once":
        credited = greedy_credit(m, by=p.ndcg_credit_key) >= 0
        gain = credited
    else:
        gain = m.row_rel()
    dcg = _sum_by_q(m.r_q[gain], 1.0 / _discount(m.r_pos[gain], p.ndcg_discount), m.nq)
    if p.ndcg_ideal == "min_gt_list":
        ideal_n = np.minimum(m.gt_len, m.n_ret)
    elif p.ndcg_ideal == "gt_list":
        ideal_n = m.gt_len
    else:  # own labels of the whole list, cut at k
        src = m if full is None else full
        ideal_n = _sum_by_q(src.r_q, src.row_rel().astype(np.float64), src.nq).astype(np.int64)
        if k is not None:
            ideal_n = np.minimum(ideal_n, k)
    return _div(dcg, _ideal_sum(ideal_n, p.ndcg_discount))


KERNELS = {
    "precision": precision,
    "recall": recall,
    "f1": f1,
    "hit_rate": hit_rate,
    "recall_all": recall_all,
    "rr": rr,
    "ap": ap,
    "context_precision": context_precision,
    "ndcg": ndcg,
}
