"""What trec_eval 10's ``rbp`` reads before it has written it: leftovers of the measure computed before it.

trec_eval 10's rbp scales a query's gains to [0, 1] by their lowest and highest, found by comparing each gain with
two local variables that are never set first (``min`` and ``max`` in ``m_rbp.c``). The binary is built without
optimisation (``-g``, no ``-O``): every local lives in the stack frame, and every measure's computation is called
from the same place of trec_eval's loop over queries, so each one's frame lies where the previous one's did. rbp's
``min`` and ``max`` (16 and 24 bytes below the frame base) thus hold whatever the measure computed just before it,
for the same query, left in those two places: a local variable of that measure (the debugging information of the
binary names it, ``DW_OP_fbreg -32`` and ``-40``), or the value left by an earlier one when it writes neither.
Between queries, the accumulation of every requested measure writes two pointers there, which read as a number
next to 0: a query's first measure finds ``0`` (in effect) in both.

Per measure, in trec_eval's table order (``trec_eval_measures.MEASURES``), what it leaves (``(at -32, at -40)``):

* counters and pointers, which read as 0 (non-negative integers are subnormal numbers): ``runid``, ``num_q``,
  ``map``, ``Rprec``, ``bpref``, ``P``, ``recall``, ``infAP``, ``Rprec_mult``, ``binG``, ``map_cut``, ``relative_P``,
  ``success``, ``relstring`` and, through their ``RES_RELS`` (its number of grade levels and a pointer), the counts
  ``num_ret``, ``num_rel``, ``num_rel_ret``, ``num_nonrel_judged_ret`` and ``set_P``, ``set_recall``,
  ``set_relative_P``, ``set_map`` (both places); ``gm_bpref``, ``recip_rank``, ``utility`` (the second only);
* ``iprec_at_recall``, ``11pt_avg``: the second holds their last cutoff index, -1: a NaN (all bits set);
* ``gm_map``: the second holds its sum, average precision (0 without a relevant document retrieved);
* ``yaap``: the second holds its sum of precisions at the relevant documents;
* ``set_F``: precision and recall of the set, when a relevant document was retrieved (else nothing);
* ``dcg``, ``ideal_dcg``, ``ndcg``, ``ndcg_rel``: the ideal gain where its walk stopped (the first that is not above
  0) and the ideal DCG; ``G``: that gain and the sum of the ideal gains;
* ``ndcg_cut``: the DCG and the ideal DCG at the largest cutoff (grades as gains);
* nothing else writes there.

* ``Rndcg``: ``old_ideal_gain`` and ``ideal_gain``, both the ideal gain where its walk stopped (as dcg's), when the
  query has a relevant judgment (else it returns before writing either).
rbp starts from these two values: a lowest below 0 or a highest above 1 rescales the gains, a NaN as the highest
leaves them unscaled (every comparison with it is false) unless the lowest is below 0, and then gives NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ragrade.compat.trec_eval_measures import MEASURES

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.compat.trec_eval_plan import Planned
    from ragrade.compat.trec_eval_query import Query

Slots = tuple[float | None, float | None]  # (at -32, at -40); None: left as it was
_NAN = -math.nan  # all bits set: a NaN with its sign bit

#: Measures that write a counter or a pointer to both places (read as 0), or to one of them. A measure whose
#: ``RES_RELS`` lies over them leaves two of its fields there (the number of grade levels and a pointer, or a pointer
#: in the second place only); relstring's one-byte character lands in the top byte of the second.
_ZERO_BOTH = frozenset({"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "bpref", "P",
                        "relstring", "recall", "infAP", "Rprec_mult", "binG", "map_cut", "relative_P", "success",
                        "set_P", "set_relative_P", "set_recall", "set_map", "num_nonrel_judged_ret"})
_ZERO_FIRST: frozenset[str] = frozenset()
_ZERO_SECOND = frozenset({"gm_bpref", "recip_rank", "utility"})
#: Measures whose leftovers ragrade does not reproduce (none left).
UNKNOWN: frozenset[str] = frozenset()
#: Measures whose leftovers can change rbp whatever its gains (the others are 0, or within [0, 1]).
STRONG = frozenset({"iprec_at_recall", "11pt_avg", "yaap", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "G", "ndcg_cut",
                    "Rndcg"}) | UNKNOWN
_ORDER = {m.name: i for i, m in enumerate(MEASURES)}


def _sum_of_precisions(q: Query) -> tuple[float, int]:
    total, found = 0.0, 0
    for i, m in enumerate(q.marks):
        if m >= q.level:
            found += 1
            total += found / (i + 1)
    return total, found


def _gm_map(q: Query, p: Planned) -> Slots:
    total, found = _sum_of_precisions(q)
    return None, (total / q.rel if found else total)


def _yaap(q: Query, p: Planned) -> Slots:
    return None, _sum_of_precisions(q)[0]


def _set_f(q: Query, p: Planned) -> Slots:
    if not q.rel_ret:
        return None, None
    return q.rel_ret / q.num_ret, q.rel_ret / q.rel


def _ndcg(q: Query, p: Planned) -> Slots:
    from ragrade.compat.trec_eval_query import gain_table, ideal_walk

    table = gain_table(p.values, q.levels)
    steps, best = ideal_walk(table)
    last = steps[-1] if steps else (table[-1].gain if table else 0.0)
    return last, best


def _rndcg(q: Query, p: Planned) -> Slots:
    """Rndcg's ``old_ideal_gain`` and ``ideal_gain``: both end at the ideal gain where its walk stopped (the first not
    above 0; each change of the ideal gain is copied to the old one in the same step). A query without a relevant
    judgment returns before either is written."""
    from ragrade.compat.trec_eval_query import gain_table, ideal_walk

    if q.rel == 0:
        return None, None
    table = gain_table(p.values, q.levels)
    steps, _ = ideal_walk(table)
    last = steps[-1] if steps else (table[-1].gain if table else 0.0)
    return last, last


def _g(q: Query, p: Planned) -> Slots:
    from ragrade.compat.trec_eval_query import gain_table, ideal_walk

    table = gain_table(p.values, q.levels)
    steps, _ = ideal_walk(table)
    last = steps[-1] if steps else (table[-1].gain if table else 0.0)
    total = 0.0
    for gain in steps:
        if gain > 0:
            total += gain
    return last, total


def _ndcg_cut(q: Query, p: Planned) -> Slots:
    k = int(max(p.values)) if p.values else 0
    dcg = 0.0
    for i, m in enumerate(q.marks[:k]):
        if m > 0:
            dcg += m / math.log2(i + 2)
    ideal = 0.0
    level, count = len(q.levels) - 1, 0
    for i in range(k):
        count += 1
        while level > 0 and count > q.levels[level]:
            level -= 1
            count = 1
        if level <= 0:
            break
        ideal += level / math.log2(i + 2)
    return dcg, ideal


_WRITERS: dict[str, Callable[[Query, Planned], Slots]] = {
    "iprec_at_recall": lambda q, p: (None, _NAN), "11pt_avg": lambda q, p: (None, _NAN), "gm_map": _gm_map,
    "yaap": _yaap, "set_F": _set_f, "dcg": _ndcg, "ideal_dcg": _ndcg, "ndcg": _ndcg, "ndcg_rel": _ndcg, "G": _g,
    "ndcg_cut": _ndcg_cut, "Rndcg": _rndcg}


def before_rbp(planned: Sequence[Planned], gain_map: bool) -> list[Planned] | None:
    """The requested measures computed before rbp whose leftovers can change it (in trec_eval's order, from the
    last one that writes 0 to both places), or None when rbp reads 0 in effect (or is not requested). ``gain_map``:
    rbp has gains of its own (then precision-like leftovers in [0, 1] count too)."""
    names = {p.measure.name for p in planned}
    if "rbp" not in names:
        return None
    ahead = sorted((p for p in planned if _ORDER[p.measure.name] < _ORDER["rbp"]), key=lambda p: _ORDER[p.measure.name])
    start = max((i + 1 for i, p in enumerate(ahead) if p.measure.name in _ZERO_BOTH), default=0)
    tail = ahead[start:]
    strong = any(p.measure.name in STRONG or (gain_map and p.measure.name in _WRITERS) for p in tail)
    return tail if strong else None


def rbp_start(tail: Sequence[Planned], q: Query) -> tuple[float, float] | None:
    """rbp's starting lowest and highest gain for query ``q`` after the measures ``tail`` (:func:`before_rbp`); None
    when one of them leaves values ragrade does not reproduce."""
    low: float = 0.0
    high: float = 0.0
    for p in tail:
        name = p.measure.name
        if name in UNKNOWN:
            return None
        if name in _ZERO_FIRST:
            low = 0.0
        elif name in _ZERO_SECOND:
            high = 0.0
        elif name in _WRITERS:
            a, b = _WRITERS[name](q, p)
            low = low if a is None else a
            high = high if b is None else b
    return low, high
