"""Slow, obviously-correct per-query references for the measures of issue 12 (trec_eval's and ir-measures'
families beyond the core ones), written from each measure's definition, one query at a time, walking the
ranked list as the definition reads. ``tests/reference.py`` calls :func:`value` for these families.

Sources (definitions, not code): trec_eval 9 and 10's measure descriptions (``trec_eval -h -m all_trec``)
and the papers they cite — bpref: Buckley & Voorhees, SIGIR 2004; infAP: Yilmaz & Aslam, CIKM 2006; RBP
and its residual: Moffat & Zobel, TOIS 2008; ERR: Chapelle et al., CIKM 2009 with gdeval.pl's gains;
C/W/L measures (NERR8-11, INST, INSQ, BPM, SDCG): Azzopardi, Thomas & Moffat's C/W/L framework (cwl-eval)
and Azzopardi, Mackenzie & Moffat, ICTIR 2021; Compat: Clarke, Vtyurina & Smucker, TOIS 2020; Judged@k
and Accuracy: ir-measures' documentation.

A ranked list is read into one label per rank: the document's grade when it is the first copy of a
judged unit, ``DUP`` for a later copy of a judged unit (judged, earns nothing), ``None`` when unjudged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

DUP = "dup"
#: The highest grade of the whole ground truth (C/W/L's max_rel when unset); set by ``ref_evaluate``.
TOP_GRADE: list[float | None] = [None]
ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def labels(ranked: Sequence[str], grades: Mapping[str, float], units: Mapping[str, Any] | None = None) -> list:
    seen: set[Any] = set()
    out: list = []
    for d in ranked:
        if d not in grades:
            out.append(None)
            continue
        u = d if units is None or d not in units else ("unit", units[d])
        out.append(DUP if u in seen else grades[d])
        seen.add(u)
    return out


def unit_grades(grades: Mapping[str, float], units: Mapping[str, Any] | None = None) -> list[float]:
    best: dict[Any, float] = {}
    for d, g in grades.items():
        u = d if units is None or d not in units else ("unit", units[d])
        best[u] = max(best.get(u, g), g)
    return list(best.values())


def _is_rel(x: Any, rel: float) -> bool:
    return x is not None and x != DUP and x >= rel


def _gain(x: Any, gains: Mapping[int, float] | None) -> float:
    if x is None or x == DUP or x < 0:
        return 0.0
    if gains and int(x) in gains and float(x).is_integer():
        return float(gains[int(x)])
    return float(x)


def _ideal_gains(ugrades: list[float], gains: Mapping[int, float] | None) -> list[float]:
    return sorted((g for g in (_gain(x, gains) for x in ugrades) if g > 0), reverse=True)


def _param(m: Any, name: str, default: Any = None) -> Any:
    return m.get(name) if m.family.param(name) is not None else default


def value(m: Any, ranked: Sequence[str], grades: Mapping[str, float], units: Mapping[str, Any] | None = None,
          num_docs: int | None = None) -> float:
    """The value of metric ``m`` (a parsed :class:`ragrade.metrics.Metric`) on one query."""
    name, k = m.name, m.k
    lab = labels(ranked, grades, units)
    ug = unit_grades(grades, units)
    rel = m.rel
    R = sum(1 for g in ug if g >= rel)
    n = len(lab)
    gains_map = dict(_param(m, "gains") or ())
    top = lab if k is None else lab[:k]
    hits = sum(1 for x in top if _is_rel(x, rel))
    all_hits = sum(1 for x in lab if _is_rel(x, rel))

    if name == "num_q":
        return 1.0
    if name == "num_ret":
        r = _param(m, "rel")
        return float(n) if r is None else float(sum(1 for x in lab if _is_rel(x, r)))
    if name == "num_rel":
        return float(R)
    if name == "num_rel_ret":
        return float(all_hits)
    if name == "num_nonrel_judged_ret":
        return float(sum(1 for x in lab if x is not None and x != DUP and 0 <= x < rel))
    if name == "gm_map":
        return _ap(lab, rel, R)
    if name == "grade_at":  # trec_eval 10's relstring, one rank: NaN for no judgment or past the end
        g = grades.get(ranked[k - 1]) if k <= len(ranked) else None
        return math.nan if g is None else float(g)
    if name == "yaap":  # trec_eval 10: log((1 + S) / (1 + R - S)), S = AP's sum of precisions
        found, total = 0, 0.0
        for i, x in enumerate(lab):
            if _is_rel(x, rel):
                found += 1
                total += found / (i + 1)
        return math.log((1 + total) / (1 + R - total))
    if name in ("bpref", "gm_bpref"):
        N = sum(1 for g in ug if 0 <= g < rel)
        total, nonrel = 0.0, 0
        for x in lab:
            if x is None or x == DUP or x < 0:
                continue
            if x < rel:
                nonrel += 1
            else:
                total += 1.0 if nonrel == 0 else 1.0 - min(nonrel, R) / min(N, R)
        return total / R if R else 0.0
    if name == "infap":
        total = 0.0
        r_above = n_above = u_above = 0
        for i, x in enumerate(lab):
            if x is None or x == DUP:
                continue
            if x < 0:
                u_above += 1
            elif x < rel:
                n_above += 1
            else:
                if i == 0:
                    total += 1.0
                else:
                    e = 1e-5
                    total += 1 / (i + 1) + (i / (i + 1)) * ((r_above + n_above + u_above) / i) * (
                        (r_above + e) / (r_above + n_above + 2 * e))
                r_above += 1
        return total / R if R else 0.0
    if name == "iprec":
        return _iprec(lab, rel, R, float(m.get("recall")), m.get("cut"))
    if name == "iprec_11pt":
        levels = ELEVEN if m.get("levels") is None else [float(x) for x in m.get("levels").split(";")]
        return sum(_iprec(lab, rel, R, x, m.get("cut")) for x in reversed(levels)) / len(levels)
    if name == "r_precision":
        c = math.floor(float(m.get("mult")) * R + 0.9)
        return sum(1 for x in lab[:c] if _is_rel(x, rel)) / c if c else 0.0
    if name == "relative_precision":
        den = min(n if k is None else k, R)
        return hits / den if den else 0.0
    if name == "set_ap":
        return all_hits * all_hits / (n * R) if n and R else 0.0
    if name == "f1":
        x = float(m.get("beta"))
        p = hits / (n if k is None else k) if (n if k is None else k) else 0.0
        r = hits / R if R else 0.0
        return (1 + x) * p * r / (x * p + r) if x * p + r > 0 else 0.0
    if name == "binary_gain":
        total, found = 0.0, 0
        for i, x in enumerate(lab):
            if _is_rel(x, rel):
                found += 1
                total += 1 / math.log2(2 + (i + 1 - found))
        return total / R if R else 0.0
    if name == "judged":
        denom = min(n, k) if k is not None else n
        return sum(1 for x in top if x is not None) / denom if denom else 0.0
    def unjudged(d: str) -> bool:  # no judgment, or a negative grade (any copy)
        return d not in grades or grades[d] < 0

    if name == "unj":
        return sum(1 for d in list(ranked)[:k] if unjudged(d)) / k
    if name == "utility":
        a, b, c, d = (float(m.get(x)) for x in "abcd")
        out = a * all_hits + b * (n - all_hits) + c * (R - all_hits)
        if d:
            out += d * (num_docs + all_hits - n - R)
        return out
    if name == "ndcg_rel":
        return _ndcg_rel(lab, ug, gains_map)
    if name == "rndcg":
        return _rndcg(lab, ug, gains_map) if R else 0.0
    if name == "normalized_gain":
        return _g(lab, ug, gains_map)
    if name == "rbp":
        return _rbp(m, lab, ug, gains_map, k)
    if name == "rbp_resid":
        p = float(m.get("p"))
        unj = [i for i, d in enumerate(ranked) if unjudged(d)]
        if not unj:
            return 0.0
        return p**n + (1 - p) * sum(p**i for i in unj)
    if name == "accuracy":
        top_k = lab if k is None else lab[:k]
        nonrel_above, pairs_sum, n_rel = 0, 0, 0
        for x in top_k:
            if _is_rel(x, rel):
                n_rel += 1
                pairs_sum += nonrel_above
            else:
                nonrel_above += 1
        if n_rel == 0 or nonrel_above == 0:
            return math.nan
        return 1 - pairs_sum / (nonrel_above * n_rel)
    if name == "err":
        score, decay = 0.0, 1.0
        for i, x in enumerate(top):
            g = min(x, 4) if x is not None and x != DUP and x > 0 else 0
            r = (2**g - 1) / 16
            score += r * decay / (i + 1)
            decay *= 1 - r
        return score
    if name in ("rbp_cwl", "nerr8", "nerr9", "nerr10", "nerr11", "sdcg", "inst", "insq", "bpm"):
        return _cwl(m, lab, ug)
    if name == "compat":
        return _compat(m, ranked, grades, units)
    if name == "rbp_ranx":  # ranx's rbp: raw grades at or above rel as gains (issue 22)
        p = float(m.get("p"))
        return (1 - p) * sum(x * p**i for i, x in enumerate(lab) if _is_rel(x, rel))
    if name == "bpref_ranx":  # ranx's bpref: every judged grade below rel is non-relevant (issue 22)
        N = sum(1 for g in ug if g < rel)
        total, nonrel = 0.0, 0
        for x in lab:
            if x is None or x == DUP:
                continue
            if x < rel:
                nonrel += 1
            else:
                total += 1.0 - min(nonrel, R) / min(N, R) if min(N, R) else math.nan
        return total / R if R else 0.0
    raise KeyError(f"no reference for {name!r}")


def _ap(lab: list, rel: float, R: int) -> float:
    found, total = 0, 0.0
    for i, x in enumerate(lab):
        if _is_rel(x, rel):
            found += 1
            total += found / (i + 1)
    return total / R if R else 0.0


def _iprec(lab: list, rel: float, R: int, level: float, cut: str = "round") -> float:
    """Best precision at or after the c-th relevant document, c = round(level R) half away from zero
    (trec_eval 10), or floor(level R + 0.9) (``cut="trec9"``)."""
    if cut == "trec9":
        c = math.floor(level * R + 0.9)
    else:
        whole = math.floor(level * R)
        c = whole + (1 if level * R - whole >= 0.5 else 0)
    ranks = [i + 1 for i, x in enumerate(lab) if _is_rel(x, rel)]
    precisions = [(j + 1) / r for j, r in enumerate(ranks)]
    c = max(c, 1)
    if c > len(ranks):
        return 0.0
    return max(precisions[c - 1:])


def _prefix_dcg(gains: list[float]) -> list[float]:
    out, total = [], 0.0
    for i, g in enumerate(gains):
        total += g / math.log2(i + 2)
        out.append(total)
    return out


def _ndcg_rel(lab: list, ug: list[float], gains_map: dict) -> float:
    ideal = _ideal_gains(ug, gains_map)
    if not ideal:
        return 0.0
    ideal_prefix = _prefix_dcg(ideal)
    run_gains = [_gain(x, gains_map) for x in lab]
    run_prefix = _prefix_dcg(run_gains)
    total, found = 0.0, 0
    for i, g in enumerate(run_gains):
        if g > 0:
            found += 1
            total += run_prefix[i] / ideal_prefix[min(i, len(ideal) - 1)]
    whole = run_prefix[-1] if run_prefix else 0.0
    total += (len(ideal) - found) * whole / ideal_prefix[-1]
    return total / len(ideal) if total > 0 else 0.0


def _rndcg(lab: list, ug: list[float], gains_map: dict) -> float:
    ideal = _ideal_gains(ug, gains_map)
    if not ideal:
        return 0.0
    ideal_prefix = _prefix_dcg(ideal)
    run_prefix = _prefix_dcg([_gain(x, gains_map) for x in lab])

    def run_at(t: int) -> float:
        return run_prefix[min(t, len(run_prefix) - 1)] if run_prefix else 0.0

    terms = []
    for b in range(1, len(ideal) + 1):
        nxt = ideal[b] if b < len(ideal) else 0.0
        if nxt != ideal[b - 1]:
            terms.append(run_at(b - 1) / ideal_prefix[b - 1])
    if len(lab) > len(ideal) + 1:
        terms.append(run_prefix[-1] / ideal_prefix[-1])
    return sum(terms) / len(terms)


def _g(lab: list, ug: list[float], gains_map: dict) -> float:
    ideal = _ideal_gains(ug, gains_map)
    total_ideal = sum(ideal)
    if total_ideal <= 0:
        return 0.0
    cost = gained = 0.0
    score = 0.0
    for i, x in enumerate(lab):
        g = _gain(x, gains_map)
        gained += g
        cost += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
        if g != 0:
            score += g / math.log2(2 + cost - gained)
    return score / total_ideal


def _rbp(m: Any, lab: list, ug: list[float], gains_map: dict, k: int | None) -> float:
    p = float(m.get("p"))
    rel = m.get("rel")
    seq = lab if k is None else lab[:k]
    if rel is not None:
        return (1 - p) * sum(p**i for i, x in enumerate(seq) if _is_rel(x, rel))
    top = max((g for g in ug if g >= 0), default=None)
    if top is None:
        return 0.0
    level_gains = [_gain(level, gains_map) for level in range(int(top) + 1)] + list(gains_map.values()) + [
        _gain(top, gains_map)]
    lo, hi = min(0.0, *level_gains), max(0.0, *level_gains)

    def scaled(x: Any) -> float:
        g = _gain(x, gains_map) if x is not None and x != DUP and x >= 0 else 0.0
        if x is None or x == DUP or x < 0:
            return 0.0
        return (g - lo) / (hi - lo) if (lo < 0 or hi > 1) and hi > lo else g

    return (1 - p) * sum(p**i * scaled(x) for i, x in enumerate(seq))


def _cwl(m: Any, lab: list, ug: list[float]) -> float:
    """C/W/L expected utility over a ranking read to depth 1000 (cwl-eval)."""
    name = m.name
    depth = 1000
    lo = float(m.get("min_rel"))
    hi_p = m.get("max_rel")
    top = TOP_GRADE[0] if TOP_GRADE[0] is not None else (max(ug) if ug else None)
    hi = float(hi_p) if hi_p is not None else float(max(top, lo + 1)) if top is not None else lo + 1

    def gain(x: Any) -> float:
        if x is None or x == DUP:
            return 0.0
        g = min(max(max(x, 0.0), lo), hi)
        return (g - lo) / (hi - lo)

    gains = [gain(x) for x in lab[:depth]] + [0.0] * max(0, depth - len(lab))
    k = m.k
    c = []
    cum = 0.0
    for i, g in enumerate(gains):
        cum += g
        r = i + 1
        if name == "rbp_cwl":
            c.append(float(m.get("p")))
        elif name == "nerr8":
            c.append(1 - g if i < k - 1 else 0.0)
        elif name == "nerr9":
            c.append(r / (r + 1) * (1 - g) if i < k - 1 else 0.0)
        elif name == "nerr10":
            c.append(float(m.get("p")) * (1 - g))
        elif name == "nerr11":
            t = float(m.get("t"))
            c.append(((r + 2 * t - 1) / (r + 2 * t)) ** 2 * (1 - g))
        elif name == "sdcg":
            c.append(math.log(r + 1) / math.log(r + 2) if r < k else 0.0)
        elif name == "inst":
            t = float(m.get("t"))
            ti = t - cum
            c.append(((r + t + ti - 1) / (r + t + ti)) ** 2)
        elif name == "insq":
            t = float(m.get("t"))
            c.append(((r + 2 * t - 1) / (r + 2 * t)) ** 2)
        elif name == "bpm":
            c.append(1.0 if cum < float(m.get("t")) and r < k else 0.0)
    reach = [1.0]
    for ci in c[:-1]:
        reach.append(reach[-1] * ci)
    total = sum(reach)
    return sum(w * g for w, g in zip(reach, gains, strict=True)) / total


def _compat(m: Any, ranked: Sequence[str], grades: Mapping[str, float], units: Mapping[str, Any] | None) -> float:
    """RBO between the run and the closest ideal ranking (relevant units by grade, then by run rank), over
    units: a group of ids is one unit."""
    p = float(m.get("p"))

    def key(d: str) -> Any:
        return ("unit", units[d]) if units is not None and d in units else d

    unit_grade: dict[Any, float] = {}
    for d, g in grades.items():
        unit_grade[key(d)] = max(unit_grade.get(key(d), g), g)
    run = [key(d) for d in ranked]
    first_rank: dict[Any, int] = {}
    for i, u in enumerate(run):
        first_rank.setdefault(u, i)
    ideal = sorted((u for u, g in unit_grade.items() if g > 0),
                   key=lambda u: (-unit_grade[u], first_rank.get(u, math.inf)))
    depth = max(len(run), len(ideal))

    def rbo(a: list, b: list) -> float:
        sa: set = set()
        sb: set = set()
        score = norm = 0.0
        for i in range(depth):
            if i < len(a):
                sa.add(a[i])
            if i < len(b):
                sb.add(b[i])
            score += p**i * len(sa & sb) / (i + 1)
            norm += p**i
        return score / norm if norm else 0.0

    score = rbo(run, ideal)
    if m.get("normalize"):
        best = rbo(ideal, ideal)
        if best > 0:
            score /= best
    return score
