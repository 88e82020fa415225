"""trec_eval 10's measures computed query by query, for the inputs of ``ragrade trec_eval`` that ragrade's
kernels do not express.

``ragrade trec_eval`` computes its values with ragrade's kernels (:mod:`ragrade.compat.trec_eval`). A few inputs
that trec_eval takes lie outside what those kernels express, and the measures they touch are computed here,
from trec_eval's definitions (in our own code), on each query's ranking as trec_eval marks it: each retrieved
document's grade (>= 0), -1 when it has no judgment and -2 when its judgment is negative.

- **Levels below 0** (``-l-1``, ``-l-2``...): a document counts as relevant in a ranking when its mark is at
  least the level, so the documents without a judgment (from -1; those with a negative grade too, from -2) are
  relevant *in the rankings*, while R (``num_rel``) and ``num_rel_ret`` still count the judgments of grade
  >= 0 only. The kernels keep the two consistent, so the measures that read the marks (:data:`MARKED`) come
  from here. The interpolated ones (``iprec_at_recall``, ``11pt_avg``, ``Rprec_mult``) walk the ranking from
  its end starting from ``num_rel_ret``, not from the number of marked documents.
- **Parameters outside the kernels' domain**, as trec_eval reads them (:mod:`ragrade.compat._trec_eval_c`):
  cutoffs it sorts out of order (two of them 2^32 apart), recall levels outside [0, 1], unsorted or not
  numbers, ``Rprec_mult`` multiples that are 0, negative or not numbers, ``set_F`` and ``utility``
  coefficients that are not positive or finite, ``rbp`` and ``rbp_resid`` persistences outside (0, 1), and
  every gain map (``ndcg.1=3,2=9``), which trec_eval holds in a table (:func:`gain_table`) sorted with a
  comparison that keeps only the integer part of two gains' difference (gains less than 1 apart may stay out of
  order, and its ideal ranking follows that order), and in which a gain for grade -1 or -2 is the gain of the
  retrieved documents marked so.

The same definitions serve ``ragrade.compat.pytrec_eval`` (trec_eval 9, as pytrec_eval runs it), whose
parameters they read alike; the one difference in these measures is the number of relevant documents at
which ``iprec_at_recall`` and ``11pt_avg`` read a recall level x: ``(long)(x R + 0.9)`` in trec_eval 9
(:func:`share_cut_9`, passed to :func:`values`), ``lround(x R)`` in trec_eval 10 (the default).

Arithmetic is C's: a division by zero gives an infinity or NaN (0 / 0 is the NaN x86-64 makes, printed
``-nan``), the logarithm of 0 is -infinity, and every sum is added in trec_eval's order.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragrade.compat._trec_eval_c import atol, c_int, c_long, is_valid_int, lround, merge_sort

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.compat.trec_eval_plan import Planned

#: The measures whose values change below level 0 (trec_eval output names, without their parameters).
MARKED = frozenset({"P", "success", "recip_rank", "map", "gm_map", "map_cut", "Rprec", "recall", "relative_P",
                    "binG", "yaap", "iprec_at_recall", "11pt_avg", "Rprec_mult"})

NONPOOL = -1  # the mark of a retrieved document without a judgment
UNJUDGED = -2  # the mark of a retrieved document judged with a negative grade

_X86_NAN = -math.nan  # what x86-64 makes of 0 / 0, inf - inf...: a NaN with its sign bit set


@dataclass(frozen=True)
class Query:
    """One query as trec_eval scores it: ``marks[i]`` the mark of the document at rank i + 1 (after -M and
    -J), ``levels[g]`` the number of judgments of grade g (0 up to the highest; what trec_eval last counted
    when the query has none), ``rel`` R (judgments of grade >= max(level, 0)), ``rel_ret`` the retrieved ones
    among them, ``level`` -l."""

    marks: tuple[int, ...]
    levels: tuple[int, ...]
    rel: int
    rel_ret: int
    level: int

    @property
    def num_ret(self) -> int:
        return len(self.marks)

    def relevant(self) -> list[bool]:
        """Whether each retrieved document counts as relevant: its mark is at least the level."""
        return [m >= self.level for m in self.marks]


def queries(level: int, judged_only: bool, items: Iterable[tuple[Mapping[str, float], Sequence[str]]]) -> list[Query]:
    """Each query as trec_eval scores it, from ``(judgments, ranking)`` pairs in trec_eval's order of queries:
    the query's grade of each judged document, and its ranking in trec_eval's order, cut by -M (the stand-in
    ranking for a judged query absent from the run under -c)."""
    marks: list[list[int]] = []
    grades: list[list[int]] = []
    for judged, ranked in items:
        marks.append([mark(judged.get(d)) for d in ranked])
        grades.append([int(g) for g in judged.values() if g >= 0])
    return marked_queries(level, judged_only, marks, grades)


def mark(grade: float | None) -> int:
    """A retrieved document's mark from its judgment's grade (None: no judgment)."""
    return NONPOOL if grade is None else (UNJUDGED if grade < 0 else int(grade))


def marked_queries(level: int, judged_only: bool, marks: Sequence[list[int]],
                   grades: Sequence[Sequence[int]]) -> list[Query]:
    """Each query as trec_eval scores it, from its rankings' marks (:func:`mark`; before -J) and the grades >= 0
    of its judgments, in trec_eval's order of queries."""
    out = []
    counts: tuple[int, ...] = ()
    for ranked, judged in zip(marks, grades, strict=True):
        if judged_only:
            ranked = [m for m in ranked if m >= 0]
        if judged:  # else trec_eval keeps the counts of the query it scored before
            tally = [0] * (max(judged) + 1)
            for g in judged:
                tally[g] += 1
            counts = tuple(tally)
            rel = sum(tally[max(level, 0):])
        else:
            rel = 0
        rel_ret = sum(1 for m in ranked if m >= 0 and m >= level)
        out.append(Query(tuple(ranked), counts, rel, rel_ret, level))
    return out


# -- C's arithmetic -------------------------------------------------------------------------------------------


def _div(a: float, b: float) -> float:
    """C's double division (x86-64): x / 0 is an infinity, 0 / 0 the x86 NaN, a NaN operand is kept."""
    if b == 0:
        if a != a:
            return a
        if a == 0:
            return _X86_NAN
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _add(a: float, b: float) -> float:
    """``a + b`` as x86-64 adds, ``a`` the first operand: a NaN ``a`` is kept (its sign too), else a NaN ``b``;
    inf + -inf is the x86 NaN. trec_eval's code (built without optimisation) adds a running sum and a computed
    term in a fixed order at each place, which decides the sign of a NaN sum; Python's ``+`` does not say which
    NaN it keeps (CPython's compiled code may swap the operands), hence this function."""
    if a != a:
        return a
    if b != b:
        return b
    out = a + b
    return _X86_NAN if out != out else out


def _mul(a: float, b: float) -> float:
    """``a * b`` as x86-64 multiplies, ``a`` the first operand (as :func:`_add`); 0 * inf is the x86 NaN."""
    if a != a:
        return a
    if b != b:
        return b
    out = a * b
    return _X86_NAN if out != out else out


def _log(x: float) -> float:
    """C's log: -inf at 0, the x86 NaN below 0, NaN kept, inf at inf."""
    if x != x:
        return x
    if x < 0:
        return _X86_NAN
    return -math.inf if x == 0 else math.log(x)


def _log2(x: float) -> float:
    """C's log2, as :func:`_log`."""
    if x != x:
        return x
    if x < 0:
        return _X86_NAN
    return -math.inf if x == 0 else math.log2(x)


# -- cutoffs ---------------------------------------------------------------------------------------------------


def _walk(cuts: Sequence[int], n: int, at: Callable[[int, int], float]) -> list[float]:
    """trec_eval's walk down a ranking of ``n`` positions with cutoffs in its order: a cutoff c is met at
    position c if no earlier cutoff was met at or beyond it and c < n, and takes ``at(c, c)``; from the first
    cutoff not met on, each takes ``at(c, n)`` (what is known at the end). ``at(cutoff, positions read)``."""
    out: list[float] = []
    start = 0
    for idx, c in enumerate(cuts):
        if start <= c < n:
            out.append(at(c, c))
            start = c + 1
        else:
            out.extend(at(cut, n) for cut in cuts[idx:])
            break
    return out


def _prefix_counts(flags: Sequence[bool]) -> list[int]:
    """``counts[k]``: how many of the first k flags are set."""
    counts = [0]
    for f in flags:
        counts.append(counts[-1] + (1 if f else 0))
    return counts


def _prefix_ap(flags: Sequence[bool]) -> list[float]:
    """``sums[k]``: the sum of the precision at each set flag among the first k (map's running sum)."""
    sums = [0.0]
    found = 0
    total = 0.0
    for i, f in enumerate(flags):
        if f:
            found += 1
            total += found / (i + 1)
        sums.append(total)
    return sums


def _ndcg_cut(q: Query, cuts: Sequence[int]) -> list[float]:
    """ndcg_cut: the DCG of the marks above 0 at each cutoff, over the DCG of the ideal ranking of the grades
    above 0 (the grades as gains; no division where that is 0)."""
    dcg = [0.0]
    for i, m in enumerate(q.marks):
        dcg.append(dcg[-1] + m / math.log2(i + 2) if m > 0 else dcg[-1])
    ideal = [0.0]
    for grade in range(len(q.levels) - 1, 0, -1):
        for _ in range(q.levels[grade]):
            ideal.append(ideal[-1] + grade / math.log2(len(ideal) + 1))
    top = _walk(cuts, q.num_ret, lambda c, k: dcg[k])
    best = _walk(cuts, len(ideal) - 1, lambda c, k: ideal[k])
    return [v / b if b > 0 else v for v, b in zip(top, best, strict=True)]


# -- interpolated precision -------------------------------------------------------------------------------------


def _interpolated(q: Query, cuts: list[int], put: Callable[[int, float], None]) -> None:
    """trec_eval's interpolated precision walk for ``cuts`` (numbers of relevant documents, in the parameters'
    order): from the end of the ranking, starting at ``rel_ret``; ``put(index, value)`` for each cut, in the
    order the walk reaches them (never for a cut above ``rel_ret`` that the walk skips at its start)."""
    flags = q.relevant()
    n = len(flags)
    cur = len(cuts) - 1
    while cur >= 0 and cuts[cur] > q.rel_ret:
        cur -= 1
    best = _div(float(q.rel_ret), float(n))
    seen = q.rel_ret
    i = n
    while i > 0 and seen > 0:
        precision = seen / i
        if best < precision:
            best = precision
        if flags[i - 1]:
            while cur >= 0 and seen == cuts[cur]:
                put(cur, best)
                cur -= 1
            seen -= 1
        i -= 1
    while cur >= 0:
        put(cur, best)
        cur -= 1


def _share_cut(x: float, rel: int) -> int:
    """trec_eval 10's number of relevant documents for a recall level x: ``lround(x R)``."""
    return lround(x * rel)


def share_cut_9(x: float, rel: int) -> int:
    """trec_eval 9's number of relevant documents for a recall level x (``iprec_at_recall``, ``11pt_avg``; what
    pytrec_eval computes): ``(long)(x R + 0.9)``, toward zero."""
    return c_long(x * rel + 0.9)


def _iprec_at_recall(q: Query, levels: Sequence[float], cut: Callable[[float, int], int] = _share_cut) -> list[float]:
    out = [0.0] * len(levels)

    def put(i: int, v: float) -> None:
        out[i] = v

    _interpolated(q, [cut(x, q.rel) for x in levels], put)
    return out


def _eleven_point(q: Query, levels: Sequence[float], cut: Callable[[float, int], int] = _share_cut) -> float:
    total = [0.0]

    def put(i: int, v: float) -> None:
        total[0] += v

    _interpolated(q, [cut(x, q.rel) for x in levels], put)
    return total[0] / len(levels)


def _rprec_mult(q: Query, shares: Sequence[float]) -> list[float]:
    """Precision at ``(long)(x R + 0.9)`` documents for each x; a cut beyond the ranking divides num_rel_ret by
    the cut; the others are read walking the ranking from its end (0 where the walk stops first)."""
    flags = q.relevant()
    n = len(flags)
    cuts = [c_long(x * q.rel + 0.9) for x in shares]
    values = [0.0] * len(cuts)
    cur = len(cuts) - 1
    while cur >= 0 and cuts[cur] > n:
        values[cur] = _div(float(q.rel_ret), float(cuts[cur]))
        cur -= 1
    seen = q.rel_ret
    i = n
    while i > 0 and seen > 0:
        precision = seen / i
        while cur >= 0 and i == cuts[cur]:
            values[cur] = precision
            cur -= 1
        if flags[i - 1]:
            seen -= 1
        i -= 1
    return values


# -- gains ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gain:
    """One row of trec_eval's gain table: a grade, its gain, and how many judgments have that grade."""

    grade: int
    gain: float
    count: int


def gain_table(pairs: Sequence[tuple[str, float]], levels: Sequence[int]) -> list[Gain]:
    """trec_eval's gain table for a query: the map's levels in the order written (the pairs whose name is an
    integer; a grade given twice keeps its first row for the count), then each other grade from 0 up to the
    query's highest at its own value as gain; sorted with glibc's merge sort comparing ``(int)(gain1 -
    gain2)``, which keeps gains less than 1 apart (and any pair with a NaN) in the order they came in.
    ``levels``: the query's number of judgments of each grade."""
    return [Gain(grade, gain, levels[at] if at is not None else 0)
            for grade, gain, at in _table_order(tuple(pairs), len(levels))]


@functools.lru_cache(maxsize=256)
def _table_order(pairs: tuple[tuple[str, float], ...], n: int) -> tuple[tuple[int, float, int | None], ...]:
    """The sorted table for ``n`` grades (0 .. n - 1), each row ``(grade, gain, the grade whose count it holds or
    None)``: the order depends on the map and ``n`` only, not on the counts."""
    rows: list[tuple[int, float, int | None]] = [(atol(name), value, None) for name, value in pairs
                                                 if is_valid_int(name)]
    given = len(rows)
    for grade in range(n):
        at = next((i for i in range(given) if rows[i][0] == grade), None)
        if at is not None:
            rows[at] = (rows[at][0], rows[at][1], grade)
        else:
            rows.append((grade, float(grade), grade))
    return tuple(merge_sort(rows, lambda a, b: c_int(a[1] - b[1])))


def _gain_of(table: Sequence[Gain]) -> Callable[[int], float]:
    """A mark's gain: that of the first row of its grade in the sorted table, 0 if none."""
    first: dict[int, float] = {}
    for row in table:
        first.setdefault(row.grade, row.gain)
    return lambda mark: first.get(mark, 0.0)


def _ideal_steps(table: Sequence[Gain]) -> list[float]:
    """The ideal ranking trec_eval walks down its table, one gain per position: from the last row up, each row's
    gain as many times as its count (rows of count 0 skipped), 0 past the first row; the walk goes on while the
    gain before a step is above 0, so it starts only if the last row's gain (whatever its count) is, and its last
    step is the first gain that is not."""
    if not table or not table[-1].gain > 0:
        return []
    out: list[float] = []
    for row in reversed(table):
        if row.count == 0:
            continue
        if not row.gain > 0:
            out.append(row.gain)
            return out
        out += [row.gain] * row.count
    out.append(0.0)
    return out


_LOG2: list[float] = []


def _log2s(n: int) -> list[float]:
    """``log2(i + 2)`` for positions i = 0 .. n - 1 at least, through C's log2 (the list is made anew, larger, when
    a ranking needs more, and replaced at once: a thread never sees it half made)."""
    global _LOG2
    table = _LOG2
    if len(table) < n:
        table = [math.log2(i + 2) for i in range(max(n, 2 * len(table), 1024))]
        _LOG2 = table
    return table


@dataclass(frozen=True)
class _Walk:
    """A query's ranking and ideal ranking as trec_eval walks them together: ``gains[i]`` the gain of the
    document at position i, ``ideal[i]`` the ideal gain at position i (:func:`_ideal_steps`), ``log[i]`` log2(i + 2),
    ``add`` the addition of a running sum and a term (C's operands in order, :func:`_add`, where a gain is not a
    finite number; plain addition otherwise, where every NaN that can arise is the x86 one).

    trec_eval walks both while there is a document and an ideal gain (positions below ``min(n, k)``, n documents,
    k ideal steps), then the rest of the ranking (and takes an nDCG point at its end, in Rndcg), then the rest of
    the ideal ranking."""

    gains: list[float]
    ideal: list[float]
    log: list[float]
    add: Callable[[float, float], float]

    @classmethod
    def of(cls, q: Query, table: list[Gain]) -> _Walk:
        first: dict[int, float] = {}
        for row in table:
            first.setdefault(row.grade, row.gain)
        gains = [first.get(m, 0.0) for m in q.marks]
        ideal = _ideal_steps(table)
        finite = all(math.isfinite(row.gain) for row in table)
        return cls(gains, ideal, _log2s(max(len(gains), len(ideal))), operator.add if finite else _add)

    def best(self) -> list[float]:
        """The ideal DCG after each ideal position (the positive gains, added in order)."""
        total = 0.0
        out = []
        for gain, lg in zip(self.ideal, self.log, strict=False):
            if gain > 0:
                total += gain / lg
            out.append(total)
        return out


def _dcgs(q: Query, table: list[Gain]) -> tuple[float, float]:
    """(DCG of the ranking, DCG of the ideal ranking), added as trec_eval adds them: the ideal one while its
    gains stay above 0."""
    w = _Walk.of(q, table)
    dcg = 0.0
    for g, lg in zip(w.gains, w.log, strict=False):
        if g != 0:
            dcg = w.add(dcg, g / lg)
    best = w.best()
    return dcg, best[-1] if best else 0.0


def _g(q: Query, table: list[Gain]) -> float:
    """G: each document's gain over log2(2 + the ideal ranking's cumulated cost - the ranking's cumulated gain)
    (cost: the ideal gain, at least 1 per position), summed and divided by the ideal ranking's total gain."""
    w = _Walk.of(q, table)
    k = len(w.ideal)
    got = cost = total = 0.0
    for i, g in enumerate(w.gains):
        got = w.add(got, g)
        step = w.ideal[i] if i < k else 1.0
        cost += step if step >= 1.0 else 1.0
        if g != 0:
            total = w.add(total, _div(g, _log2(2 + cost - got)))
    best = 0.0
    for step in w.ideal:
        if step > 0:
            best += step
    return total / best if best > 0 else 0.0


def _ndcg_rel(q: Query, table: list[Gain]) -> float:
    """ndcg_rel: the nDCG at each retrieved document with a gain above 0, and for each ideal document above 0
    not matched so, the nDCG at the end, averaged over the ideal documents above 0 (0 unless the sum is above 0)."""
    w = _Walk.of(q, table)
    k = len(w.ideal)
    best = w.best()
    ideal_dcg = best[-1] if best else 0.0
    dcg = total = 0.0
    found = 0
    for i, g in enumerate(w.gains):
        if g != 0:
            dcg = w.add(dcg, g / w.log[i])
        if g > 0:
            total = w.add(_div(dcg, best[i] if i < k else ideal_dcg), total)
            found += 1
    wanted = sum(1 for step in w.ideal if step > 0)
    total = w.add(_div(float(wanted - found) * dcg, ideal_dcg), total)
    return _div(total, float(wanted)) if total > 0 else 0.0


def _rndcg(q: Query, table: list[Gain]) -> float:
    """Rndcg: the nDCG at each position where the ideal gain changes (and at the end of the ranking, when the
    ideal gains run out before it), averaged; 0 for a query without relevant judgments (R = 0)."""
    if q.rel == 0:
        return 0.0
    w = _Walk.of(q, table)
    n, k = len(w.gains), len(w.ideal)
    last = table[-1].gain if table else 0.0
    dcg = best = total = 0.0
    points = 0
    for i in range(max(n, k)):
        step = w.ideal[i] if i < k else None
        if step is not None and step != last:  # (NaN != NaN: a change)
            if best > 0:
                total = w.add(dcg / best, total)
                points += 1
            last = step
        if i < n and w.gains[i] != 0:
            dcg = w.add(dcg, w.gains[i] / w.log[i])
        if step is not None and step > 0:
            best += step / w.log[i]
        if i == n - 1 and k < n and best > 0:  # the ranking ends after the ideal gains ran out: one more point
            total = w.add(dcg / best, total)
            points += 1
    return _div(total, float(points))


def _persistence(pairs: Sequence[tuple[str, float]]) -> float:
    """rbp's and rbp_resid's p: the last pair named exactly ``p``, else 0.9."""
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def _rbp(q: Query, pairs: Sequence[tuple[str, float]], start: tuple[float, float] = (0.0, 0.0)) -> float:
    """rbp: (1 - p) times the sum of each document's gain times p^(rank - 1), the table's gains first scaled
    to [0, 1] by its lowest and highest (each compared with ``start`` first: trec_eval reads two uninitialised
    variables there, the leftovers of the measure computed before it, :mod:`ragrade.compat.trec_eval_leftovers`;
    0 in effect when rbp is alone) when one lies outside."""
    p = _persistence(pairs)
    table = gain_table(pairs, q.levels)
    low, high = start
    for row in table:
        if row.gain < low:
            low = row.gain
        if row.gain > high:
            high = row.gain
    if low < 0 or high > 1:
        table = [Gain(r.grade, _div(r.gain - low, high - low), r.count) for r in table]
    gain = _gain_of(table)
    total = 0.0
    weight = 1.0
    for mark in q.marks:
        g = gain(mark)
        if g != 0:
            total = _add(_mul(g, weight), total)
        weight = _mul(weight, p)
    return _mul(1.0 - p, total)


def rbp_value(q: Query, pairs: Sequence[tuple[str, float]], start: tuple[float, float]) -> float:
    """rbp of one query when trec_eval's two uninitialised variables start at ``start`` (lowest, highest)."""
    return _rbp(q, pairs, start)


def ideal_walk(table: Sequence[Gain]) -> tuple[list[float], float]:
    """The ideal ranking's gains as trec_eval's dcg walks them (:func:`_ideal_steps`, its last step the first gain
    not above 0) and the ideal DCG it adds up (the positive steps over log2(i + 2), in order)."""
    steps = _ideal_steps(table)
    logs = _log2s(len(steps))
    total = 0.0
    for gain, lg in zip(steps, logs, strict=False):
        if gain > 0:
            total += gain / lg
    return steps, total


def _rbp_resid(q: Query, pairs: Sequence[tuple[str, float]]) -> float:
    """rbp_resid: p^n + (1 - p) times the sum of p^(rank - 1) over the retrieved documents marked below 0;
    0 when there is none."""
    p = _persistence(pairs)
    unjudged = 0
    total = 0.0
    weight = 1.0
    for mark in q.marks:
        if mark < 0:
            unjudged += 1
            total = _add(total, weight)
        weight = _mul(weight, p)
    return _add(_mul(1 - p, total), weight) if unjudged else 0.0


# -- one query --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    """What a measure reads besides the query and its parameters: -N, and the number of relevant documents at
    which a recall level is read (:func:`values`)."""

    num_docs: int
    share_cut: Callable[[float, int], int]


_Measure = Callable[[Query, list[Any], _Context], list[float]]


def _cutoffs(value: Callable[[Query, list[int], int, int], float], counts: str = "relevant",
             needs_rel: bool = False) -> _Measure:
    """A cutoff measure (P, success, recall, ...): ``value(q, prefix, cutoff, positions read)`` at each cutoff of
    trec_eval's walk, ``prefix[k]`` the number of relevant (``counts="unjudged"``: unjudged) documents among the
    first k; all 0 for a query without relevant judgments when ``needs_rel``."""
    def measure(q: Query, cuts: list[Any], ctx: _Context) -> list[float]:
        if needs_rel and q.rel == 0:
            return [0.0] * len(cuts)
        prefix = _prefix_counts([m < 0 for m in q.marks] if counts == "unjudged" else q.relevant())
        return _walk(cuts, q.num_ret, lambda c, k: value(q, prefix, c, k))
    return measure


def _map_cut(q: Query, cuts: list[Any], ctx: _Context) -> list[float]:
    if q.rel == 0:
        return [0.0] * len(cuts)
    ap = _prefix_ap(q.relevant())
    return _walk(cuts, q.num_ret, lambda c, k: ap[k] / q.rel)


def _recip_rank(q: Query, params: list[Any], ctx: _Context) -> list[float]:
    first = next((i for i, f in enumerate(q.relevant()) if f), None)
    return [0.0 if first is None else 1.0 / (first + 1)]


def _map(q: Query, params: list[Any], ctx: _Context) -> list[float]:
    flags = q.relevant()
    return [_div(_prefix_ap(flags)[-1], float(q.rel)) if any(flags) else 0.0]


def _yaap(q: Query, params: list[Any], ctx: _Context) -> list[float]:
    total = _prefix_ap(q.relevant())[-1]
    return [_log(_div(1.0 + total, 1.0 + q.rel - total))]


def _bin_g(q: Query, params: list[Any], ctx: _Context) -> list[float]:
    total, found = 0.0, 0
    for i, f in enumerate(q.relevant()):
        if f:
            found += 1
            total += _div(1.0, _log2(float(3 + i - found)))
    return [_div(total, float(q.rel)) if found else 0.0]


def _r_prec(q: Query, params: list[Any], ctx: _Context) -> list[float]:
    look = min(q.num_ret, q.rel)
    return [sum(q.relevant()[:look]) / q.rel if look else 0.0]


def _set_f(q: Query, params: list[Any], ctx: _Context) -> list[float]:
    if not q.rel_ret:
        return [0.0]
    precision = q.rel_ret / q.num_ret
    recall = q.rel_ret / q.rel
    x = params[0]
    return [_div((x + 1.0) * precision * recall, x * precision + recall)]


def _utility(q: Query, params: list[Any], ctx: _Context) -> list[float]:
    a, b, c, d = params  # (added as trec_eval's code adds: the last term first, which decides a NaN's sign)
    n = q.num_ret
    summed = _add(_add(a * q.rel_ret, b * (n - q.rel_ret)), c * (q.rel - q.rel_ret))
    size = (ctx.num_docs + q.rel_ret - n - q.rel + 2 ** 63) % 2 ** 64 - 2 ** 63  # C's long: wraps at 64 bits
    return [_add(d * size, summed)]


def _with_table(value: Callable[[Query, list[Gain]], float]) -> _Measure:
    """A measure of a query's gain table (:func:`gain_table` of the map in its parameters)."""
    return lambda q, params, ctx: [value(q, gain_table(params, q.levels))]


def _ndcg(q: Query, table: list[Gain]) -> float:
    dcg, best = _dcgs(q, table)
    return dcg / best if best > 0 else 0.0


#: trec_eval 10's measures computed query by query: each takes the query, the parameters as trec_eval reads
#: them (cutoffs, numbers or name=value pairs) and the context.
_MEASURES: dict[str, _Measure] = {
    "P": _cutoffs(lambda q, hits, c, k: _div(float(hits[k]), float(c))),
    "success": _cutoffs(lambda q, hits, c, k: 1.0 if hits[k] else 0.0),
    "recall": _cutoffs(lambda q, hits, c, k: hits[k] / q.rel, needs_rel=True),
    "relative_P": _cutoffs(lambda q, hits, c, k: _div(float(hits[k]), float(q.rel if c > q.rel else c)),
                           needs_rel=True),
    "unj": _cutoffs(lambda q, hits, c, k: _div(float(hits[k]), float(c)), counts="unjudged"),
    "map_cut": _map_cut,
    "ndcg_cut": lambda q, params, ctx: _ndcg_cut(q, params),
    "recip_rank": _recip_rank,
    "map": _map,
    "gm_map": _map,  # (its logarithm is taken when printed)
    "yaap": _yaap,
    "binG": _bin_g,
    "Rprec": _r_prec,
    "iprec_at_recall": lambda q, params, ctx: _iprec_at_recall(q, params, ctx.share_cut),
    "11pt_avg": lambda q, params, ctx: [_eleven_point(q, params, ctx.share_cut)],
    "Rprec_mult": lambda q, params, ctx: _rprec_mult(q, params),
    "set_F": _set_f,
    "utility": _utility,
    "rbp": lambda q, params, ctx: [_rbp(q, params)],
    "rbp_resid": lambda q, params, ctx: [_rbp_resid(q, params)],
    "G": _with_table(_g),
    "ndcg_rel": _with_table(_ndcg_rel),
    "Rndcg": _with_table(_rndcg),
    "dcg": _with_table(lambda q, table: _dcgs(q, table)[0]),
    "ideal_dcg": _with_table(lambda q, table: _dcgs(q, table)[1]),
    "ndcg": _with_table(_ndcg),
}
#: Every measure this module computes.
MEASURES = frozenset(_MEASURES)


def values(p: Planned, q: Query, num_docs: int = 0,
           share_cut: Callable[[float, int], int] | None = None) -> list[float]:
    """The values of the planned measure ``p`` (one per output name, ``p.values`` its parameters as trec_eval
    reads them) for one query; ``num_docs``: -N. ``share_cut(x, R)``: the number of relevant documents at which
    ``iprec_at_recall`` and ``11pt_avg`` read recall level x (None: trec_eval 10's ``lround(x R)``;
    :func:`share_cut_9` for trec_eval 9's, as pytrec_eval computes)."""
    context = _Context(num_docs, _share_cut if share_cut is None else share_cut)
    return _MEASURES[p.measure.name](q, list(p.values), context)


__all__ = ["MARKED", "MEASURES", "NONPOOL", "UNJUDGED", "Gain", "Query", "gain_table", "ideal_walk", "mark",
           "marked_queries", "queries", "rbp_value", "share_cut_9", "values"]
