"""Judge meta-evaluation at the level of TREC AutoJudge: more rank correlations between the system rankings
two sets of qrels give, Krippendorff's alpha on the labels, and percentile bootstrap intervals over queries.
Pure functions over NumPy arrays (definitions in docs/assessment.md).

* **Pearson's r** of the two lists of system means.
* **tau_AP,b** (the tie-aware tau_AP): walking down one ranking, each item not in the top tie group scores
  the share of the items in strictly higher tie groups that the other ranking puts strictly above it (a
  tie there counts as a disagreement); ``2 / (items scored) * sum - 1``, 0 when every item is tied. The
  coefficient is made symmetric by averaging the two directions (each side taken as the truth).
* **tau_GAP** (Gao & Oard, "A head-weighted gap-sensitive correlation coefficient", SIGIR 2015): one-sided,
  the reference gives the score gaps, the candidate the order (its ties broken by run name). At each
  position ``i >= 2`` of the candidate's order, the share of the reference gap mass between the item and
  those above it that is ordered as the reference orders it; ``2 / (positions used) * sum - 1``, where a
  position is used when some pair above it has a non-zero reference gap (NaN when none is).
* **kendall@k**: Kendall's tau-b over the reference's top ``k`` runs (ties at the cut by run name; all
  runs when ``k`` is at least their number).
* **Krippendorff's alpha** for two coders on the pairs both judged, ``1 - D_o / D_e`` from the coincidence
  matrix, with the nominal, ordinal or interval difference function (Krippendorff, *Content Analysis*,
  2004/2019).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragrade.assessment import stats
from ragrade.errors import InputError

LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval")
"""Levels of measurement :func:`krippendorff_alpha` accepts."""

SYSTEM_MEASURES: tuple[str, ...] = ("kendall_tau", "spearman", "pearson", "tau_ap", "tau_ap_b", "tau_gap",
                                    "kendall_at_k")
"""The rank correlations :func:`system_measures` computes (keys of its result)."""

DEFAULT_TOP_K = 10


def _pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError("the two lists must be one-dimensional and of the same length", value=(x.shape, y.shape))
    return x, y


def _name_rank(names: Sequence[str] | None, n: int) -> np.ndarray:
    """Position of every item when sorted by name (by index without names)."""
    if names is None:
        return np.arange(n)
    order = sorted(range(n), key=lambda i: str(names[i]))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    return rank


def pearson(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Pearson's correlation (NaN for fewer than 2 items or a constant list).

    >>> round(pearson([1, 2, 3, 4], [1, 3, 2, 5]), 4)
    0.8315
    """
    x, y = _pair(a, b)
    if len(x) < 2:
        return math.nan
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(float(np.dot(x, x)) * float(np.dot(y, y)))
    return math.nan if den == 0 else min(1.0, max(-1.0, float(np.dot(x, y)) / den))


def _tau_ap_one_way(truth: np.ndarray, walked: np.ndarray) -> float:
    above = walked[None, :] > walked[:, None]  # above[i, j]: j is in a strictly higher tie group of `walked`
    p = above.sum(axis=1)
    scored = p > 0
    if not scored.any():
        return 0.0
    concordant = (above & (truth[None, :] > truth[:, None])).sum(axis=1)
    return float(2.0 / int(scored.sum()) * np.sum(concordant[scored] / p[scored]) - 1.0)


def tau_ap_b(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """The symmetric, tie-aware AP rank correlation of two score lists (higher = better): the mean of
    tau_AP,b with each list taken as the truth.

    >>> tau_ap_b([4, 3, 2, 1], [4, 3, 2, 1])
    1.0
    >>> round(tau_ap_b([4, 3, 2, 1], [3, 4, 2, 1]), 4)   # the top two swapped
    0.3333
    """
    x, y = _pair(a, b)
    if len(x) < 2:
        return math.nan
    return (_tau_ap_one_way(x, y) + _tau_ap_one_way(y, x)) / 2.0


def tau_gap(reference: Sequence[float] | np.ndarray, candidate: Sequence[float] | np.ndarray,
            names: Sequence[str] | None = None) -> float:
    """tau_GAP of the candidate's order against the reference's scores (one-sided: the reference gives the
    gaps). Candidate ties are broken by ``names`` (by position without names). NaN for fewer than 2 items
    or when every pair is tied in the reference.

    >>> tau_gap([4, 3, 2, 1], [4, 3, 2, 1])
    1.0
    >>> round(tau_gap([10, 9, 2, 1], [9, 10, 2, 1]), 4)   # a swap across a small gap near the top
    0.3333
    """
    x, y = _pair(reference, candidate)
    n = len(x)
    if n < 2:
        return math.nan
    order = np.lexsort((_name_rank(names, n), -y))
    t = x[order]
    gap = np.abs(t[None, :] - t[:, None])  # gap[i, j]
    lower = np.tril(np.ones((n, n), dtype=bool), -1)  # j above i in the candidate's order
    gaps = np.where(lower, gap, 0.0).sum(axis=1)
    correct = np.where(lower & (t[None, :] > t[:, None]), gap, 0.0).sum(axis=1)
    used = gaps > 0
    if not used.any():
        return math.nan
    return float(2.0 / int(used.sum()) * np.sum(correct[used] / gaps[used]) - 1.0)


def top_k(reference: Sequence[float] | np.ndarray, k: int, names: Sequence[str] | None = None) -> np.ndarray:
    """Indices of the reference's ``k`` best items (ties by name), best first."""
    x = np.asarray(reference, dtype=np.float64)
    if int(k) < 1:
        raise InputError("k must be a positive integer", value=k)
    return np.lexsort((_name_rank(names, len(x)), -x))[: int(k)]


def kendall_at_k(reference: Sequence[float] | np.ndarray, candidate: Sequence[float] | np.ndarray,
                 k: int = DEFAULT_TOP_K, names: Sequence[str] | None = None) -> float:
    """Kendall's tau-b over the reference's top ``k`` items (all of them when ``k >= len``)."""
    x, y = _pair(reference, candidate)
    keep = top_k(x, k, names)
    return stats.kendall_tau_b(x[keep], y[keep])


def krippendorff_alpha(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                       level: str = "interval", weights: Sequence[float] | np.ndarray | None = None) -> float:
    """Krippendorff's alpha of two coders who both labelled every unit (``a[i]``, ``b[i]``), at ``level``
    ``"nominal"``, ``"ordinal"`` or ``"interval"``. ``weights`` counts each unit that many times (the
    bootstrap uses it). NaN when every value is the same.

    >>> round(krippendorff_alpha([0, 1, 2, 3], [0, 2, 2, 3], "interval"), 4)
    0.9114
    """
    if level not in LEVELS:
        raise InputError(f"level must be one of {', '.join(LEVELS)}", value=level)
    x, y = _pair(a, b)
    values = np.unique(np.concatenate([x, y]))
    if len(values) < 2:
        return math.nan
    return _alpha(_coincidence(x, y, values, weights), values, level)


def _coincidence(x: np.ndarray, y: np.ndarray, values: np.ndarray, weights: Any = None) -> np.ndarray:
    """Coincidence matrix over ``values``: every unit adds its weight to ``o[x, y]`` and ``o[y, x]``."""
    k = len(values)
    w = np.ones(len(x)) if weights is None else np.asarray(weights, dtype=np.float64)
    o = np.bincount(np.searchsorted(values, x) * k + np.searchsorted(values, y), weights=w,
                    minlength=k * k).reshape(k, k)
    out: np.ndarray = o + o.T
    return out


def _alpha(o: np.ndarray, values: np.ndarray, level: str) -> float:
    """Krippendorff's alpha from a coincidence matrix (see :func:`krippendorff_alpha`)."""
    k = len(values)
    nv = o.sum(axis=1)
    n = float(nv.sum())
    if n <= 1:
        return math.nan
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    elif level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    else:  # ordinal: (sum of n_g from c to k, minus half of n_c and n_k)^2
        cum = np.cumsum(nv)
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0)
        delta = (between - (nv[:, None] + nv[None, :]) / 2.0) ** 2
    observed = float(np.sum(o * delta)) / n
    expected = float(np.sum(np.outer(nv, nv) * delta)) / (n * (n - 1.0))
    return math.nan if expected == 0 else 1.0 - observed / expected


def system_measures(reference: Sequence[float] | np.ndarray, candidate: Sequence[float] | np.ndarray,
                    names: Sequence[str], k: int = DEFAULT_TOP_K) -> dict[str, float]:
    """Every rank correlation of :data:`SYSTEM_MEASURES` between the runs' means under the reference and
    under the candidate qrels (``names``: the runs, for tie-breaking)."""
    x, y = _pair(reference, candidate)
    return {
        "kendall_tau": stats.kendall_tau_b(x, y),
        "spearman": stats.spearman_rho(x, y),
        "pearson": pearson(x, y),
        "tau_ap": stats.tau_ap(x, y, names),
        "tau_ap_b": tau_ap_b(x, y),
        "tau_gap": tau_gap(x, y, names),
        "kendall_at_k": kendall_at_k(x, y, k, names),
    }


def _percentile(values: np.ndarray, level: float) -> list[float | None]:
    finite = values[np.isfinite(values)]
    if not len(finite):
        return [None, None]
    lo, hi = np.quantile(finite, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return [float(lo), float(hi)]


def bootstrap_systems(reference: np.ndarray, candidate: np.ndarray, names: Sequence[str], *,
                      k: int = DEFAULT_TOP_K, n_resamples: int = 1000, level: float = 0.95,
                      seed: int | None = 0) -> dict[str, list[float | None]]:
    """Percentile bootstrap intervals over queries of every :data:`SYSTEM_MEASURES` entry.

    ``reference`` and ``candidate`` are ``(queries, runs)`` per-query scores under each qrels (NaN: the
    query is not scored for that run, left out of its mean as the engine does). Resample ``r`` draws
    ``rng.integers(0, queries, size=queries)`` from ``numpy.random.default_rng(seed)``; each run's mean
    under both qrels is recomputed on the drawn queries, then the correlations. A resample where a
    coefficient is undefined is left out of that coefficient's interval.
    """
    ref = np.asarray(reference, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    if ref.shape != cand.shape or ref.ndim != 2:
        raise InputError("per-query scores must be two matrices of the same shape (queries x runs)")
    q = ref.shape[0]
    rng = np.random.default_rng(seed)
    out = {m: np.full(n_resamples, np.nan) for m in SYSTEM_MEASURES}
    if q == 0:
        return {f"{m}_ci": [None, None] for m in SYSTEM_MEASURES}
    ok_ref, ok_cand = np.isfinite(ref), np.isfinite(cand)
    ref0, cand0 = np.where(ok_ref, ref, 0.0), np.where(ok_cand, cand, 0.0)
    for r in range(n_resamples):
        counts = np.bincount(rng.integers(0, q, size=q), minlength=q).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mr = counts @ ref0 / (counts @ ok_ref)
            mc = counts @ cand0 / (counts @ ok_cand)
        good = np.isfinite(mr) & np.isfinite(mc)
        if good.sum() < 2:
            continue
        kept = [n for n, g in zip(names, good, strict=True) if g]
        for m, v in system_measures(mr[good], mc[good], kept, k).items():
            out[m][r] = v
    return {f"{m}_ci": _percentile(v, level) for m, v in out.items()}


def bootstrap_alpha(a: np.ndarray, b: np.ndarray, queries: Sequence[str] | np.ndarray, *,
                    n_resamples: int = 1000, level: float = 0.95, seed: int | None = 0) -> dict[str, list[float | None]]:
    """Percentile bootstrap intervals over queries of Krippendorff's alpha at every level: queries are
    drawn with replacement (``rng.integers(0, distinct queries, size=distinct queries)``) and each pair
    counts as often as its query was drawn."""
    x, y = _pair(a, b)
    _, code = np.unique(np.asarray(queries, dtype=object).astype(str), return_inverse=True)
    q = int(code.max()) + 1 if len(code) else 0
    rng = np.random.default_rng(seed)
    out = {lv: np.full(n_resamples, np.nan) for lv in LEVELS}
    if q == 0:
        return {lv: [None, None] for lv in LEVELS}
    values = np.unique(np.concatenate([x, y]))
    for r in range(n_resamples):
        counts = np.bincount(rng.integers(0, q, size=q), minlength=q).astype(np.float64)
        o = _coincidence(x, y, values, counts[code])
        present = o.sum(axis=1) > 0  # grades no drawn pair uses leave the matrix (as if never seen)
        if present.sum() < 2:
            continue
        sub, vals = o[np.ix_(present, present)], values[present]
        for lv in LEVELS:
            out[lv][r] = _alpha(sub, vals, lv)
    return {lv: _percentile(v, level) for lv, v in out.items()}


def label_measures(a: np.ndarray, b: np.ndarray, queries: Sequence[str] | np.ndarray, *,
                   n_resamples: int = 1000, level: float = 0.95, seed: int | None = 0) -> dict[str, Any]:
    """``{"krippendorff_alpha": {level: alpha}, "krippendorff_alpha_ci": {level: [low, high]}}``."""
    alpha = {lv: krippendorff_alpha(a, b, lv) for lv in LEVELS} if len(a) else {lv: math.nan for lv in LEVELS}
    ci = bootstrap_alpha(a, b, queries, n_resamples=n_resamples, level=level, seed=seed)
    return {"krippendorff_alpha": alpha, "krippendorff_alpha_ci": ci}


def system_report(metric: str, ref_frames: Mapping[str, Any], cand_frames: Mapping[str, Any],
                  ref_means: Mapping[str, float], cand_means: Mapping[str, float], *, k: int = DEFAULT_TOP_K,
                  n_resamples: int = 1000, level: float = 0.95, seed: int | None = 0) -> dict[str, Any]:
    """The new system-level measures of one metric and their bootstrap intervals (per-query frames of
    every run under both qrels, indexed by query id)."""
    import pandas as pd

    names = [n for n in ref_means if math.isfinite(ref_means[n]) and math.isfinite(cand_means[n])]
    x = np.array([ref_means[n] for n in names], dtype=np.float64)
    y = np.array([cand_means[n] for n in names], dtype=np.float64)
    measures: dict[str, Any] = system_measures(x, y, names, k) if names else {m: math.nan for m in SYSTEM_MEASURES}
    measures["kendall_at_k_k"] = int(k)
    index = pd.Index([], dtype=object)
    for frames in (ref_frames, cand_frames):
        for n in names:
            idx = pd.Index([str(v) for v in frames[n].index], dtype=object)
            index = index.append(idx.difference(index, sort=False))

    def matrix(frames: Mapping[str, Any]) -> np.ndarray:
        cols = []
        for n in names:
            s = frames[n][metric]
            s = pd.Series(s.to_numpy(dtype=np.float64), index=[str(v) for v in s.index])
            cols.append(s.reindex(index).to_numpy(dtype=np.float64))
        return np.column_stack(cols) if cols else np.empty((len(index), 0))

    measures.update(bootstrap_systems(matrix(ref_frames), matrix(cand_frames), names, k=k,
                                      n_resamples=n_resamples, level=level, seed=seed))
    return measures



__all__ = ["DEFAULT_TOP_K", "LEVELS", "SYSTEM_MEASURES", "bootstrap_alpha", "bootstrap_systems", "kendall_at_k",
           "krippendorff_alpha", "label_measures", "pearson", "system_measures", "system_report", "tau_ap_b",
           "tau_gap", "top_k"]
