"""trec_eval 10 at a relevance level below 0 (``-l-1``, ``-l-2``...), for ``ragrade trec_eval``.

trec_eval marks each retrieved document with its grade (>= 0), -1 when the document has no judgment and -2
when its judgment is negative, and counts a document as relevant in a ranking when that mark is at least the
level. Below 0 the documents without a judgment (from -1; those with a negative grade too, from -2) are thus
relevant *in the rankings*, while R (``num_rel``) and ``num_rel_ret`` still count the judgments of grade >= 0
only. ragrade's kernels keep the two consistent, so the measures that read the rankings' marks are computed
here, query by query, from trec_eval's definitions (in our own code):

``P``, ``success``, ``recip_rank``, ``map`` (and ``gm_map``), ``map_cut``, ``Rprec``, ``recall``,
``relative_P``, ``binG``, ``yaap``, and the interpolated ones, ``iprec_at_recall``, ``11pt_avg`` and
``Rprec_mult``, which walk the ranking from its end starting from ``num_rel_ret`` (not from the number of
marked documents). Every other measure reads the counts or the grades, and is what it is at ``-l0``
(:func:`ragrade.compat.trec_eval.output_parts` computes those with ragrade's kernels). With ``-J`` nothing
unjudged is left in the rankings, and a level below 0 is ``-l0``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.compat.trec_eval import Planned

#: The measures whose values change below level 0 (trec_eval output names, without their parameters).
MARKED = frozenset({"P", "success", "recip_rank", "map", "gm_map", "map_cut", "Rprec", "recall", "relative_P",
                    "binG", "yaap", "iprec_at_recall", "11pt_avg", "Rprec_mult"})


@dataclass(frozen=True)
class Ranking:
    """One query at a level below 0: ``marked[i]`` whether the document at rank i + 1 counts as relevant,
    ``rel`` R (judgments of grade >= 0), ``rel_ret`` the retrieved ones among them."""

    marked: tuple[bool, ...]
    rel: int
    rel_ret: int


def rankings(level: int, qrels: Any, run: Any, qids: list[str], stand_in: list[str] | None,
             missing: list[bool]) -> list[Ranking]:
    """Each query's :class:`Ranking` (``run``: the rankings in trec_eval's order, cut by -M; ``stand_in``: the
    ranking of a judged query absent from the run under -c)."""
    import numpy as np

    grades = qrels.to_dict()
    docs = run.raw_docs.to_pylist() if run.raw_is_arrow else list(run.raw_docs)
    offsets = np.asarray(run.offsets).tolist()
    where = {q: i for i, q in enumerate(run.query_ids.tolist())}
    out = []
    for q, miss in zip(qids, missing, strict=True):
        judged = grades.get(q, {})
        if miss:
            ranked = stand_in or []
        else:
            i = where[q]
            ranked = docs[offsets[i]:offsets[i + 1]]
        marks = []
        rel_ret = 0
        for d in ranked:
            g = judged.get(d)
            if g is None:
                marks.append(level <= -1)
            elif g < 0:
                marks.append(level <= -2)
            else:
                marks.append(True)
                rel_ret += 1
        out.append(Ranking(tuple(marks), sum(1 for g in judged.values() if g >= 0), rel_ret))
    return out


def _div(a: float, b: float) -> float:
    """C's double division: x / 0 is inf (or nan for 0 / 0)."""
    if b == 0:
        return math.nan if a == 0 or a != a else math.copysign(math.inf, a)
    return a / b


def _log(x: float) -> float:
    """C's log: -inf at 0, nan below (and for nan), inf at inf."""
    if x != x or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return math.log(x)


def _prefix(r: Ranking, k: int) -> int:
    return sum(r.marked[:k])


def _ap_sum(r: Ranking, k: int | None = None) -> tuple[float, int]:
    """The sum of the precision at each marked document among the first k (all), and how many."""
    total, found = 0.0, 0
    for i, m in enumerate(r.marked if k is None else r.marked[:k]):
        if m:
            found += 1
            total += found / (i + 1)
    return total, found


def _round_half_up(v: float) -> int:
    whole = math.floor(v)
    return int(whole) + (1 if v - whole >= 0.5 else 0)


def _interpolated(r: Ranking, cuts: list[int], values: list[float] | None, sums: list[float] | None) -> None:
    """trec_eval's interpolated precision walk for ``cuts`` (numbers of relevant documents, in the order of the
    parameters): from the end of the ranking, starting at ``rel_ret``; each cut's value goes to ``values`` (by
    position) or is added to ``sums[0]`` (11pt_avg), in the order the walk reaches them."""
    n = len(r.marked)
    cur = len(cuts) - 1
    while cur >= 0 and cuts[cur] > r.rel_ret:
        cur -= 1

    def put(value: float) -> None:
        if values is not None:
            values[cur] = value
        elif sums is not None:
            sums[0] += value

    best = _div(float(r.rel_ret), float(n))
    seen = r.rel_ret
    i = n
    while i > 0 and seen > 0:
        precision = seen / i
        if best < precision:
            best = precision
        if r.marked[i - 1]:
            while cur >= 0 and seen == cuts[cur]:
                put(best)
                cur -= 1
            seen -= 1
        i -= 1
    while cur >= 0:
        put(best)
        cur -= 1


def _rprec_mult(r: Ranking, shares: list[float]) -> list[float]:
    n = len(r.marked)
    cuts = [int(x * r.rel + 0.9) for x in shares]
    values = [0.0] * len(cuts)
    cur = len(cuts) - 1
    while cur >= 0 and cuts[cur] > n:
        values[cur] = _div(float(r.rel_ret), float(cuts[cur]))
        cur -= 1
    seen = r.rel_ret
    i = n
    while i > 0 and seen > 0:
        precision = seen / i
        while cur >= 0 and i == cuts[cur]:
            values[cur] = precision
            cur -= 1
        if r.marked[i - 1]:
            seen -= 1
        i -= 1
    return values


def values(p: Planned, r: Ranking) -> list[float]:
    """The values of the planned measure ``p`` (one per output name) for one query."""
    from ragrade.kernels.measures import recall_levels

    name = p.measure.name
    n = len(r.marked)
    if name == "P":
        return [_prefix(r, m.k) / m.k for m in p.metrics if m is not None and m.k]
    if name == "success":
        return [1.0 if _prefix(r, m.k) else 0.0 for m in p.metrics if m is not None and m.k]
    if name == "recip_rank":
        first = next((i for i, m in enumerate(r.marked) if m), None)
        return [0.0 if first is None else 1.0 / (first + 1)]
    if name in ("map", "gm_map"):
        total, found = _ap_sum(r)
        return [_div(total, float(r.rel)) if found else 0.0]
    if name == "yaap":
        total, _ = _ap_sum(r)
        return [_log(_div(1.0 + total, 1.0 + r.rel - total))]
    if name == "binG":
        total, found = 0.0, 0
        for i, m in enumerate(r.marked):
            if m:
                found += 1
                total += 1.0 / math.log2(3 + i - found)
        return [_div(total, float(r.rel)) if found else 0.0]
    if name == "Rprec":
        look = min(n, r.rel)
        return [_prefix(r, look) / r.rel if look else 0.0]
    ks = [m.k for m in p.metrics if m is not None and m.k]
    if name == "map_cut":
        return [_ap_sum(r, k)[0] / r.rel if r.rel else 0.0 for k in ks]
    if name == "recall":
        return [_prefix(r, k) / r.rel if r.rel else 0.0 for k in ks]
    if name == "relative_P":
        return [_prefix(r, k) / min(k, r.rel) if r.rel else 0.0 for k in ks]
    metrics = [m for m in p.metrics if m is not None]
    if name == "iprec_at_recall":
        cuts = [_round_half_up(float(m.get("recall")) * r.rel) for m in metrics]
        out = [0.0] * len(cuts)
        _interpolated(r, cuts, out, None)
        return out
    if name == "11pt_avg":
        levels = recall_levels(metrics[0])
        sums = [0.0]
        _interpolated(r, [_round_half_up(x * r.rel) for x in levels], None, sums)
        return [sums[0] / len(levels)]
    if name == "Rprec_mult":
        return _rprec_mult(r, [float(m.get("mult")) for m in metrics])
    raise AssertionError(name)  # pragma: no cover (MARKED lists the names above)


__all__ = ["MARKED", "Ranking", "rankings", "values"]
