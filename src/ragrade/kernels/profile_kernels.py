"""Vectorised kernels for RAG-style inputs: a flat *match table* and the peer-profile metrics.

:class:`Matches` describes, for ``nq`` queries at once, the retrieved rows (rank order), the ground-truth
units (an AutoRAG group, a gold id, a gold text) and every (row, unit) pair that matches. It is built
once (by id equality or by a text matcher) and read by

* :func:`greedy_credit`: the crediting by rank of ``docs/matching.md`` (each row credits at most one unit
  not yet credited), whose output feeds the default kernels of :mod:`ragrade.kernels.metrics` (one engine);
* the list-profile kernels below, ``(Matches, ListContext) -> float64[nq]``, referenced by their family in
  the registry; each reads its rule from the profile (:mod:`ragrade.kernels.rules`) through the context.

All kernels are ``bincount``/``minimum.at``/cumulative operations over the flat arrays; none loops over
queries, rows or pairs in Python (greedy crediting loops over *rank positions*, each step vectorised
over all queries).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

from ragrade.kernels.common import precision_sum, safe_div, sum_by_query
from ragrade.kernels.rules import AP, NDCG, RR, ContextPrecision, Precision, Recall, RecallAll

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.kernels.rules import Rule

    RuleT = TypeVar("RuleT", bound=Rule)


class RuleSource(Protocol):
    """What the kernels need of a profile: its rule of a given class (the default rule if unchanged)."""

    def rule(self, cls: type[RuleT]) -> RuleT: ...


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
    invalid: np.ndarray = field(default=None)  # type: ignore[arg-type]  # bool[nq] rows a peer rejects
    r_code: np.ndarray | None = field(default=None)  # int64[n] code of the row's item (equal text -> equal code)
    # What makes a row invalid, kept apart so that a cut recomputes it: the ground-truth side (bool[nq]) and
    # blank retrieved items (bool[n]); None: ``invalid`` as given.
    invalid_truth: np.ndarray | None = field(default=None)
    r_blank: np.ndarray | None = field(default=None)

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
        n_ret = np.minimum(self.n_ret, k)
        invalid, r_blank = self.invalid, self.r_blank
        if self.invalid_truth is not None and r_blank is not None:
            # A blank item beyond k is not in the cut list (AutoRAG scores the top-k list).
            r_blank = r_blank[keep]
            invalid = self.invalid_truth | (n_ret == 0)
            if r_blank.any():
                invalid = invalid | (np.bincount(self.r_q[keep][r_blank], minlength=self.nq) > 0)
        return replace(
            self, n_ret=n_ret, r_q=self.r_q[keep], r_pos=self.r_pos[keep],
            r_first=self.r_first[keep], p_row=new_index[self.p_row[pk]], p_unit=self.p_unit[pk],
            r_code=None if self.r_code is None else self.r_code[keep], invalid=invalid, r_blank=r_blank,
        )


# -- helpers ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListContext:
    """What a list kernel reads besides the (cut) table: the profile's rules, the uncut table, the cutoff
    and whether the items are texts."""

    rules: RuleSource
    full: Matches
    k: int | None
    texts: bool = False

    def rule(self, cls: type[RuleT]) -> RuleT:
        return self.rules.rule(cls)


def _qkey(m: Matches) -> np.ndarray:
    """Unit content code made unique per query (equal texts in different queries are different)."""
    return m.u_q * (int(m.u_key.max()) + 1 if len(m.u_key) else 1) + m.u_key


def _ln_ratio_log2(x: np.ndarray) -> np.ndarray:
    # math.log(x, 2) == log(x) / log(2) (continuous-eval), which differs from log2 in the last bit.
    return np.log(x) / np.log(2.0)


# -- greedy crediting (docs/matching.md) ---------------------------------------------------------------------


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


# -- list kernels: (Matches, ListContext) -> float64[nq] -------------------------------------------


def precision(m: Matches, ctx: ListContext) -> np.ndarray:
    rule = ctx.rule(Precision)
    rel = m.row_rel()
    if rule.hits == "distinct":
        hits = sum_by_query(m.r_q, (rel & m.r_first).astype(np.float64), m.nq)
    else:
        hits = sum_by_query(m.r_q, rel.astype(np.float64), m.nq)
    denom = m.n_distinct_ret if rule.denominator == "distinct" else m.n_ret
    return safe_div(hits, denom.astype(np.float64))


def _unit_hit(m: Matches) -> np.ndarray:
    return np.bincount(m.p_unit, minlength=len(m.u_q)) > 0


def _distinct_matched(m: Matches) -> np.ndarray:
    """Per query, the distinct unit contents matched by at least one row."""
    hit = _unit_hit(m)
    _, kc = np.unique(_qkey(m), return_inverse=True)
    content_hit = np.zeros(int(kc.max()) + 1 if len(kc) else 0, dtype=bool)
    content_hit[kc[hit]] = True
    return sum_by_query(m.u_q[m.u_first], content_hit[kc[m.u_first]].astype(np.float64), m.nq)


def recall(m: Matches, ctx: ListContext) -> np.ndarray:
    rule = ctx.rule(Recall)
    denominator = rule.text_denominator if ctx.texts and rule.text_denominator else rule.denominator
    if denominator == "distinct_units":  # a content is recalled if any unit with that content is matched
        return safe_div(_distinct_matched(m), m.n_distinct_units.astype(np.float64))
    return safe_div(sum_by_query(m.u_q, _unit_hit(m).astype(np.float64), m.nq), m.n_units.astype(np.float64))


def f1(m: Matches, ctx: ListContext) -> np.ndarray:
    pr, rc = precision(m, ctx), recall(m, ctx)
    return safe_div(2.0 * (pr * rc), pr + rc)


def hit_rate(m: Matches, ctx: ListContext) -> np.ndarray:
    return (sum_by_query(m.r_q, m.row_rel().astype(np.float64), m.nq) > 0).astype(np.float64)


def recall_all(m: Matches, ctx: ListContext) -> np.ndarray:
    """Every gold unit matched. Matched units are counted as distinct contents and compared with the
    distinct units, or with the gold *list* length (REMem: a gold list with a repeated doc never scores 1)."""
    target = m.n_units if ctx.rule(RecallAll).target == "list" else m.n_distinct_units
    return ((_distinct_matched(m) == target) & (m.n_units > 0)).astype(np.float64)


def rr(m: Matches, ctx: ListContext) -> np.ndarray:
    if ctx.rule(RR).mode == "per_unit":
        # AutoRAG: for each unit 1/first rank (0 if missed), summed, / number of units
        first = np.full(len(m.u_q), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, m.p_unit, m.r_pos[m.p_row])
        ok = first < np.iinfo(np.int64).max
        return safe_div(sum_by_query(m.u_q[ok], 1.0 / (first[ok] + 1.0), m.nq), m.n_units.astype(np.float64))
    rel = m.row_rel()
    best = np.full(m.nq, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, m.r_q[rel], m.r_pos[rel])
    ok = best < np.iinfo(np.int64).max
    out = np.zeros(m.nq)
    out[ok] = 1.0 / (best[ok] + 1.0)
    return out


def _weighted_precision(m: Matches) -> tuple[np.ndarray, np.ndarray]:
    """(sum over relevant rows of hits_so_far / rank, number of relevant rows) per query; duplicates
    of a relevant item count again (as in Ragas, continuous-eval and LlamaIndex)."""
    rel = m.row_rel()
    return precision_sum(m.r_q[rel], m.r_pos[rel], m.nq)


def ap(m: Matches, ctx: ListContext) -> np.ndarray:
    rule = ctx.rule(AP)
    if rule.denominator == "per_unit":
        # AutoRAG: AP_g = mean over rows in g of (g's hits so far / rank); MAP = sum AP_g / groups
        order = np.lexsort((m.r_pos[m.p_row], m.p_unit))
        unit, pos = m.p_unit[order], m.r_pos[m.p_row[order]]
        s, c = precision_sum(unit, pos, len(m.u_q))
        return safe_div(sum_by_query(m.u_q, safe_div(s, c), m.nq), m.n_units.astype(np.float64))
    num, hits = _weighted_precision(m)
    if rule.denominator == "retrieved_hits":
        return safe_div(num, hits, eps=rule.epsilon)
    if rule.denominator == "distinct_units":
        return safe_div(num, m.n_distinct_units.astype(np.float64))
    return safe_div(num, m.n_units.astype(np.float64))


def context_precision(m: Matches, ctx: ListContext) -> np.ndarray:
    num, hits = _weighted_precision(m)
    return safe_div(num, hits, eps=ctx.rule(ContextPrecision).epsilon)


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
    return sum_by_query(q, 1.0 / _discount(pos, kind), len(c))


def ndcg(m: Matches, ctx: ListContext) -> np.ndarray:
    """Profile NDCG on a table already cut at ``k``. The 'own_labels' ideal (REMem) re-sorts the
    relevance labels of the *whole* list (``ctx.full``, the uncut table) and then cuts at ``k``."""
    rule = ctx.rule(NDCG)
    gain = greedy_credit(m, by=rule.credit_key) >= 0 if rule.gain == "greedy_once" else m.row_rel()
    dcg = sum_by_query(m.r_q[gain], 1.0 / _discount(m.r_pos[gain], rule.discount), m.nq)
    if rule.ideal == "min_gt_list":
        ideal_n = np.minimum(m.gt_len, m.n_ret)
    elif rule.ideal == "gt_list":
        ideal_n = m.gt_len
    else:  # own labels of the whole list, cut at k
        src = ctx.full
        ideal_n = sum_by_query(src.r_q, src.row_rel().astype(np.float64), src.nq).astype(np.int64)
        if ctx.k is not None:
            ideal_n = np.minimum(ideal_n, ctx.k)
    return safe_div(dcg, _ideal_sum(ideal_n, rule.discount))
