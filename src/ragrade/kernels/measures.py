"""Kernels of the trec_eval and ir-measures families beyond the default convention's core measures.

Same contract as :mod:`ragrade.kernels.metrics`: ``(Metric, Judged) -> float64[nq]``, vectorised over flat
arrays sorted by (query, position), no Python loop over queries or items. Most of these measures read
the *judged table* (every retrieved row that has a judgment of any grade), because they treat judged
non-relevant and unjudged documents differently (bpref, infAP, Judged@k, unj, rbp_resid) or give grade 0
a gain (gain maps). Each formula is stated in ``docs/metrics.md`` (generated from the registry) with its
source; where trec_eval has a quirk we follow it and the registry's notes say so.

Vocabulary: a retrieved row is *relevant* (grade >= rel), *judged non-relevant* (0 <= grade < rel),
*pool-unjudged* (negative grade: trec_eval's "in the pool but not judged") or *unjudged* (no judgment).
Only a unit's first copy counts (``first``); later copies of a judged unit earn nothing and count for
nothing in bpref and infAP (they still count as judged in Judged@k and the hole rate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragrade.kernels.common import (
    cumsum_within,
    group_starts,
    max_by_query,
    pick,
    safe_div,
    suffix_max_within,
    sum_by_query,
    value_at,
)
from ragrade.kernels.metrics import Judged, grade_gain, hits, precision, recall

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric

MIN_GEO_MEAN = 1e-5  # trec_eval: floor of a value before its logarithm (gm_map, gm_bpref)
INFAP_EPSILON = 1e-5  # trec_eval: smoothing of infAP's precision estimate
#: trec_eval's recall levels of iprec_at_recall and 11pt_avg.
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _ones(j: Judged) -> np.ndarray:
    return np.ones(j.nq, dtype=np.float64)


# -- counts (summed over queries, not averaged) -----------------------------------------------------------


def num_q(m: Metric, j: Judged) -> np.ndarray:
    return _ones(j)


def num_ret(m: Metric, j: Judged) -> np.ndarray:
    rel = m.get("rel")
    return j.n_ret.astype(np.float64) if rel is None else j.hits_uncut(rel)


def num_rel(m: Metric, j: Judged) -> np.ndarray:
    return j.n_relevant(m.rel)


def num_rel_ret(m: Metric, j: Judged) -> np.ndarray:
    return j.hits_uncut(m.rel)


def num_nonrel_judged_ret(m: Metric, j: Judged) -> np.ndarray:
    q, _, g, first = j.judged_table()
    mask = first & (g >= 0) & (g < m.rel)
    return np.bincount(pick(mask, q)[0], minlength=j.nq).astype(np.float64)


# -- set measures (over the whole retrieved list) ---------------------------------------------------------


def relative_precision(m: Metric, j: Judged) -> np.ndarray:
    """hits@k / min(k, R); without k, hits / min(|L|, R) (trec_eval relative_P, set_relative_P)."""
    r = j.n_relevant(m.rel)
    den = np.minimum(j.n_ret.astype(np.float64), r) if m.k is None else np.minimum(float(m.k), r)
    return safe_div(hits(m, j), den)


def set_ap(m: Metric, j: Judged) -> np.ndarray:
    """hits^2 / (|L| R) (trec_eval set_map)."""
    h = j.hits_uncut(m.rel)
    return safe_div(h * h, j.n_ret.astype(np.float64) * j.n_relevant(m.rel))


def f_measure(m: Metric, j: Judged) -> np.ndarray:
    """(1 + x) P R / (x P + R) with trec_eval's weight x (``beta``); 0 when nothing relevant was found."""
    x = float(m.get("beta"))
    p, r = precision(m, j), recall(m, j)
    return safe_div((1.0 + x) * p * r, x * p + r)


# -- judgment-aware ranked measures -----------------------------------------------------------------------


def _classes(m: Metric, j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """First copies of the judged rows: ``(q, pos, relevant, judged non-relevant, pool-unjudged)`` (computed
    once per table: bpref and infAP read them)."""
    key = ("classes", m.rel)
    if key not in j.memo:
        q, pos, g, first = j.judged_table()
        q, pos, g = pick(first, q, pos, g)
        rel = g >= m.rel
        j.memo[key] = (q, pos, rel, (g >= 0) & ~rel, g < 0)
    return j.memo[key]


def bpref(m: Metric, j: Judged) -> np.ndarray:
    """Buckley & Voorhees (SIGIR 2004) as trec_eval computes it: for each retrieved relevant document,
    1 - min(n, R) / min(N, R), n the judged non-relevant documents above it, N all judged non-relevant
    ones; summed and divided by R."""
    q, _, rel, non, _ = _classes(m, j)
    n_above, rq = pick(rel, cumsum_within(q, non), q)
    r = j.n_relevant(m.rel)
    cap = np.minimum(j.n_nonrelevant(m.rel), r)[rq]
    term = np.ones(len(rq))
    some = np.flatnonzero(n_above > 0)  # implies N > 0 and so cap > 0
    term[some] = 1.0 - np.minimum(n_above[some], r[rq[some]]) / cap[some]
    return safe_div(sum_by_query(rq, term, j.nq), r)


def infap(m: Metric, j: Judged) -> np.ndarray:
    """Inferred AP (Yilmaz & Aslam, CIKM 2006) as trec_eval computes it: at each retrieved relevant
    document at 0-based rank i > 0, 1/(i+1) + i/(i+1) * (judged above / i) * (relevant above + e) /
    (relevant above + non-relevant above + 2e), with pool-unjudged (negative grade) documents counted as
    judged above; 1 at rank 0; summed and divided by R."""
    q, pos, rel, non, unj = _classes(m, j)
    r_above, n_above, u_above, rq, fj = pick(rel, cumsum_within(q, rel) - rel, cumsum_within(q, non) - non,
                                             cumsum_within(q, unj) - unj, q, pos.astype(np.float64))
    safe_j = np.where(fj > 0, fj, 1.0)
    term = (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r_above + n_above + u_above) / safe_j)
            * ((r_above + INFAP_EPSILON) / (r_above + n_above + 2 * INFAP_EPSILON)))
    term = np.where(fj == 0, 1.0, term)
    return safe_div(sum_by_query(rq, term, j.nq), j.n_relevant(m.rel))


def cut_by_share(share: float, r: np.ndarray) -> np.ndarray:
    """trec_eval 9's number of documents for a share of R: ``(long) (share * R + 0.9)``."""
    return np.floor(share * r + 0.9).astype(np.int64)


def cut_by_round(share: float, r: np.ndarray) -> np.ndarray:
    """trec_eval 10's number of documents for a share of R: ``lround(share * R)`` (half away from zero)."""
    v = share * r.astype(np.float64)
    whole = np.floor(v)
    return (whole + (v - whole >= 0.5)).astype(np.int64)


def iprec_at(share: float, m: Metric, j: Judged) -> np.ndarray:
    """Interpolated precision at recall ``share``: the best precision at or after the c-th relevant
    document retrieved, c = round(share R) (trec_eval 10; ``cut=trec9``: floor(share R + 0.9), trec_eval 9);
    0 when fewer than c were retrieved."""
    done = ("iprec_at", share, m.rel, m.get("cut"))  # iprec_at_recall's levels are 11pt_avg's too
    if done in j.memo:
        return j.memo[done]
    key = ("iprec", m.rel)
    if key not in j.memo:  # shared by every recall level (11 of them in 11pt_avg and iprec_at_recall)
        q, pos, hitnum = j.relevant_rows(m.rel)
        starts = group_starts(q, j.nq)
        j.memo[key] = (suffix_max_within(q, hitnum / (pos + 1.0)), starts, np.diff(starts))
    best, starts, found = j.memo[key]
    r = j.n_relevant(m.rel)
    c = cut_by_share(share, r) if m.get("cut") == "trec9" else cut_by_round(share, r)
    c = np.where(c == 0, 1, c)  # recall 0: the best precision anywhere, as at the first relevant document
    out = np.zeros(j.nq, dtype=np.float64)
    ok = np.flatnonzero((c <= found) & (found > 0))
    out[ok] = best[starts[ok] + c[ok] - 1]
    j.memo[done] = out
    return out


def iprec(m: Metric, j: Judged) -> np.ndarray:
    return iprec_at(float(m.get("recall")), m, j)


def recall_levels(m: Metric) -> tuple[float, ...]:
    """The recall levels of an ``iprec_11pt`` metric (its ``levels``, or 0.0, 0.1, ..., 1.0)."""
    text = m.get("levels")
    return ELEVEN_POINTS if text is None else tuple(float(x) for x in str(text).split(";"))


def iprec_11pt(m: Metric, j: Judged) -> np.ndarray:
    """Mean of the interpolated precision at recall 0.0, 0.1, ..., 1.0 or at ``levels`` (trec_eval 11pt_avg)."""
    # Added point by point from the last level to the first (as trec_eval 10 does): np.sum over a stacked
    # array sums one query's points pairwise, so a query's value would depend on how many queries are
    # evaluated with it.
    levels = recall_levels(m)
    total = np.zeros(j.nq, dtype=np.float64)
    for x in reversed(levels):
        total += iprec_at(x, m, j)
    return total / len(levels)


def r_precision_mult(m: Metric, j: Judged) -> np.ndarray:
    """Precision at c = floor(mult R + 0.9) documents (trec_eval Rprec_mult; mult = 1 is R-precision)."""
    q, pos, _ = j.relevant_rows(m.rel)
    c = cut_by_share(float(m.get("mult")), j.n_relevant(m.rel))
    h = sum_by_query(q, np.ones(len(q)), j.nq, pos < c[q])
    return safe_div(h, c.astype(np.float64))


def binary_gain(m: Metric, j: Judged) -> np.ndarray:
    """trec_eval binG: sum over retrieved relevant documents of 1 / log2(2 + non-relevant above), / R."""
    q, pos, hitnum = j.relevant_rows(m.rel)
    w = 1.0 / np.log2(3.0 + pos - hitnum)
    return safe_div(sum_by_query(q, w, j.nq), j.n_relevant(m.rel))


def judged_at(m: Metric, j: Judged) -> np.ndarray:
    """Judged@k (ir-measures): judged documents among the top k / min(k, |L|); 0 for an empty list."""
    n = j.n_ret.astype(np.float64)
    den = n if m.k is None else np.minimum(n, float(m.k))
    return safe_div(j.judged_in_top(m.k), den)


def unjudged_at(m: Metric, j: Judged) -> np.ndarray:
    """trec_eval 10 unj@k: documents without a judgment or with a negative grade among the top k, / k
    (missing ranks count as judged)."""
    q, pos, g, _ = j.judged_table()
    k = m.k
    assert k is not None
    judged = sum_by_query(q, (g >= 0).astype(np.float64), j.nq, pos < k)
    return (np.minimum(j.n_ret, k) - judged) / float(k)


# -- gain-based measures with trec_eval's gain maps ---------------------------------------------------------


def _gain_table(m: Metric, j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, pos, gain)`` of the retrieved judged rows with a non-zero gain (first copies), linear gains
    or the metric's gain map (computed once per table: G, ndcg_rel and Rndcg read it)."""
    key = ("gtable", m.get("gains"))
    if key not in j.memo:
        q, pos, g, first = j.judged_table()
        w = grade_gain(g, "linear", m.get("gains"))
        keep = first & (w != 0)
        j.memo[key] = pick(keep, q, pos, w)
    return j.memo[key]


def _discounted(m: Metric, j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of :func:`_gain_table`'s rows: ``(gain / log2(pos + 2), its running sum within the query, its sum per
    query)`` (computed once per table: ndcg_rel and Rndcg read them)."""
    key = ("gdcg", m.get("gains"))
    if key not in j.memo:
        q, pos, w = _gain_table(m, j)
        d = w / np.log2(pos + 2.0)
        j.memo[key] = (d, cumsum_within(q, d), sum_by_query(q, d, j.nq))
    return j.memo[key]


def _ideal_value_at(m: Metric, j: Judged, cum: np.ndarray, tq: np.ndarray, tpos: np.ndarray) -> np.ndarray:
    """:func:`value_at` over the ideal ranking of :func:`_ideal_prefix` (``cum`` one value per ideal row): its rows
    hold ranks 0, 1, ... of each query, query after query, so a rank's row is read, not searched."""
    key = ("istarts", m.get("gains"))
    if key not in j.memo:
        iq = _ideal_prefix(m, j)[0]
        n = np.bincount(iq, minlength=j.nq)
        starts = np.zeros(j.nq, dtype=np.int64)
        np.cumsum(n[:-1], out=starts[1:])
        j.memo[key] = (starts, n)
    starts, n = j.memo[key]
    tq = np.asarray(tq, dtype=np.int64)
    count = n[tq]
    idx = np.flatnonzero((count > 0) & (tpos >= 0))
    out = np.zeros(len(tq), dtype=np.float64)
    out[idx] = cum[starts[tq[idx]] + np.minimum(tpos[idx], count[idx] - 1)]
    return out


def _ideal_prefix(m: Metric, j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ideal ranking ``(q, pos, gain, inclusive per-query DCG prefix)`` (computed once per table: it
    depends on the ground truth alone)."""
    key = ("iprefix", m.get("gains"))
    if key not in j.memo:
        iq, ipos, ig = j.ideal(None, "linear", m.get("gains"))
        j.memo[key] = (iq, ipos, ig, cumsum_within(iq, ig / np.log2(ipos + 2.0)))
    return j.memo[key]


def ndcg_rel(m: Metric, j: Judged) -> np.ndarray:
    """trec_eval ndcg_rel: the mean, over the n relevant documents of the ideal list, of nDCG at the rank
    of each retrieved relevant one (the whole list's nDCG for the ones not retrieved)."""
    q, pos, w = _gain_table(m, j)
    _, rdcg, whole_r = _discounted(m, j)
    iq, ipos, ig, icum = _ideal_prefix(m, j)
    n_ideal = np.bincount(iq, minlength=j.nq)
    good = w > 0
    gq, gpos, grdcg = pick(good, q, pos, rdcg)
    idcg_at = _ideal_value_at(m, j, icum, gq, np.minimum(gpos, n_ideal[gq] - 1))
    total = sum_by_query(gq, safe_div(grdcg, idcg_at), j.nq)
    found = np.bincount(gq, minlength=j.nq)
    whole_i = sum_by_query(iq, ig / np.log2(ipos + 2.0), j.nq)
    total = total + (n_ideal - found) * safe_div(whole_r, whole_i)
    out = safe_div(total, n_ideal.astype(np.float64))
    return np.where(total > 0, out, 0.0)


def rndcg(m: Metric, j: Judged) -> np.ndarray:
    """trec_eval Rndcg: the mean of nDCG at each rank where the ideal list's gain drops to the next level
    (and at the end of the list when it is longer than the ideal list plus one)."""
    q, pos, _ = _gain_table(m, j)
    key = ("irndcg", m.get("gains"))  # the ideal list's part: the qrels' alone
    if key not in j.memo:
        iq, ipos, ig, icum = _ideal_prefix(m, j)
        n_ideal = np.bincount(iq, minlength=j.nq)
        # Boundaries: ideal ranks b >= 1 whose gain differs from rank b - 1's (the rank after the last is 0).
        nxt = np.zeros(len(ig))
        same_q = np.zeros(len(ig), dtype=bool)
        if len(ig) > 1:
            same_q[:-1] = iq[1:] == iq[:-1]
        nxt[same_q] = ig[1:][same_q[:-1]]
        at = nxt != ig  # the boundary is at ipos + 1; nDCG measured through ipos
        bq, bpos = pick(at, iq, ipos)
        j.memo[key] = (n_ideal, bq, bpos, _ideal_value_at(m, j, icum, bq, bpos),
                         np.bincount(bq, minlength=j.nq).astype(np.float64),
                         _ideal_value_at(m, j, icum, np.arange(j.nq), n_ideal - 1))
    n_ideal, bq, bpos, ideal_at, ideal_count, whole_i = j.memo[key]
    _, rcum, whole_r = _discounted(m, j)
    terms = safe_div(value_at(q, pos, rcum, bq, bpos), ideal_at)
    total = sum_by_query(bq, terms, j.nq)
    count = ideal_count.copy()
    longer = j.n_ret > n_ideal + 1
    extra = longer & (whole_i > 0)
    total[extra] += whole_r[extra] / whole_i[extra]
    count[extra] += 1
    out = safe_div(total, count)
    return np.where(j.n_relevant(m.rel) > 0, out, 0.0)


def normalized_gain(m: Metric, j: Judged) -> np.ndarray:
    """trec_eval G: sum over retrieved documents of gain / log2(2 + cost - gain so far), cost the sum of
    max(ideal gain, 1) through the rank; divided by the ideal total gain."""
    q, pos, w = _gain_table(m, j)
    iq, _, ig, _ = _ideal_prefix(m, j)
    n_ideal = np.bincount(iq, minlength=j.nq)
    key = ("icost", m.get("gains"))
    if key not in j.memo:
        j.memo[key] = cumsum_within(iq, np.maximum(ig, 1.0) - 1.0)
    extra_cost = j.memo[key]
    cost = (pos + 1.0) + _ideal_value_at(m, j, extra_cost, q, np.minimum(pos, n_ideal[q] - 1))
    gained = cumsum_within(q, w)
    total = sum_by_query(q, w / np.log2(2.0 + cost - gained), j.nq)
    return safe_div(total, sum_by_query(iq, ig, j.nq))


def utility(m: Metric, j: Judged) -> np.ndarray:
    """trec_eval utility: a * relevant retrieved + b * non-relevant retrieved + c * relevant missed + d *
    non-relevant missed (the last needs the collection size, trec_eval's -N)."""
    a, b, c, d = (float(m.get(x)) for x in ("a", "b", "c", "d"))
    h = j.hits_uncut(m.rel)
    n = j.n_ret.astype(np.float64)
    r = j.n_relevant(m.rel)
    out = a * h + b * (n - h) + c * (r - h)
    if d != 0.0:
        if j.num_docs is None:
            from ragrade.errors import MetricError

            raise MetricError(f"{m}: the fourth coefficient counts non-relevant documents not retrieved, which "
                              "needs the collection size (num_docs=..., trec_eval's -N)")
        out = out + d * (j.num_docs + h - n - r)
    return out


def _rbp_gains(m: Metric, j: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, pos, gain in [0, 1])`` of the retrieved rows that gain. Binary with ``rel``; graded without
    (trec_eval 10: a grade's gain, or the gain map's, rescaled per query to [0, 1] as (g - lo) / (hi - lo)
    when any gain lies outside, lo and hi the smallest and largest of 0 and the gains of the grades
    0..max grade of that query and of the map)."""
    rel = m.get("rel")
    if rel is not None:
        q, pos, _ = j.relevant_rows(rel)
        return q, pos, np.ones(len(q))
    gains = m.get("gains")
    q, pos, g, first = j.judged_table()
    w = grade_gain(g, "linear", gains)
    # Per query: the gains of the levels 0..max grade (and of every mapped level), their min and max.
    ug = j.unit_grade
    keep_u = ug >= 0
    top = max_by_query(j.unit_q[keep_u], ug[keep_u], j.nq, -1.0)
    has = top >= 0
    lo = np.where(has, 0.0, np.inf)
    hi = np.where(has, top, -np.inf)
    if gains:
        levels = np.arange(int(top.max()) + 1 if has.any() else 0)
        lg = grade_gain(levels, "linear", gains)
        present = levels[None, :] <= top[:, None]
        lo = np.where(present, lg[None, :], np.inf).min(axis=1) if len(levels) else lo
        hi = np.where(present, lg[None, :], -np.inf).max(axis=1) if len(levels) else hi
        mapped = np.array([v for _, v in gains])
        own = np.where(has, grade_gain(np.maximum(top, 0.0), "linear", gains), 0.0)  # a fractional top grade
        lo = np.minimum(np.minimum(lo, mapped.min()), own)
        hi = np.maximum(np.maximum(hi, mapped.max()), own)
    # trec_eval 10 starts its min and max at 0 (uninitialised variables, zero in practice): a map that
    # gives every level a gain above 0 still rescales from 0.
    lo = np.minimum(lo, 0.0)
    hi = np.maximum(hi, 0.0)
    scale = has & ((lo < 0) | (hi > 1)) & (hi > lo)
    keep = first & (g >= 0)
    q, pos, w = q[keep], pos[keep], w[keep]
    s = scale[q]
    w = np.where(s, (w - lo[q]) / np.where(s, hi[q] - lo[q], 1.0), w)
    nz = w != 0
    return q[nz], pos[nz], w[nz]


def rbp(m: Metric, j: Judged) -> np.ndarray:
    """Rank-biased precision (Moffat & Zobel, TOIS 2008): (1 - p) sum_i p^(i-1) gain_i."""
    p = float(m.get("p"))
    q, pos, w = _rbp_gains(m, j)
    if m.k is not None:
        keep = pos < m.k
        q, pos, w = q[keep], pos[keep], w[keep]
    return (1.0 - p) * sum_by_query(q, w * np.power(p, pos.astype(np.float64)), j.nq)


def rbp_resid(m: Metric, j: Judged) -> np.ndarray:
    """trec_eval 10 rbp_resid: p^|L| + (1 - p) sum over unjudged (or negative-grade) ranks of p^(i-1), the
    most RBP could still rise; 0 when every retrieved document is judged (trec_eval's rule)."""
    p = float(m.get("p"))
    q, pos, g, _ = j.judged_table()
    n = j.n_ret.astype(np.float64)
    judged_w = sum_by_query(q, np.power(p, pos.astype(np.float64)), j.nq, g >= 0)
    all_w = safe_div(1.0 - np.power(p, n), np.full(j.nq, 1.0 - p))  # sum_{i < n} p^i
    n_judged = sum_by_query(q, np.ones(len(q)), j.nq, g >= 0)
    out = np.power(p, n) + (1.0 - p) * (all_w - judged_w)
    return np.where(n_judged < n, out, 0.0)
