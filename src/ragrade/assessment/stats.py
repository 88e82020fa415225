"""Agreement statistics: Cohen's kappa (plain and weighted), Kendall's tau-b, Spearman's rho and the AP
rank correlation tau_AP. Pure functions over NumPy arrays.

Definitions (``docs/assessment.md`` gives them with references):

* **Cohen's kappa** (Cohen 1960): ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and
  ``p_e`` the agreement expected from the two sides' label frequencies. NaN when ``p_e = 1``.
* **Weighted kappa** (Cohen 1968): ``1 - sum(w * O) / sum(w * E)`` over the confusion matrix ``O`` and
  the matrix ``E`` expected from the margins, with disagreement weights on the grade *values*:
  ``w = (g_i - g_j)^2`` (quadratic) or ``|g_i - g_j|`` (linear). scikit-learn's ``cohen_kappa_score``
  weights label *positions* instead; the two agree when the labels are consecutive integers (pass
  ``labels=range(lo, hi + 1)`` to scikit-learn to compare when a grade is absent).
* **Kendall's tau-b**: ``(C - D) / sqrt((n0 - n1)(n0 - n2))`` over all pairs, ties counted as in SciPy's
  default variant.
* **Spearman's rho**: Pearson's correlation of the average ranks.
* **tau_AP** (Yilmaz, Aslam & Robertson, "A new rank correlation coefficient for information retrieval",
  SIGIR 2008): with the candidate ranking in order, ``2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1``, where
  ``C(i)`` counts the items above the i-th that the reference ranking also puts above it. It weights swaps
  near the top more than Kendall's tau, and is not symmetric: the first argument is the reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ragrade.errors import InputError


def _pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise InputError("the two label lists must be one-dimensional and of the same length",
                         value=(x.shape, y.shape))
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("labels and scores must be finite numbers")
    return x, y


def confusion(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
              labels: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, counts)``: ``counts[i, j]`` = pairs labelled ``labels[i]`` by ``a`` and ``labels[j]`` by ``b``."""
    x, y = _pair(a, b)
    lab = np.unique(np.concatenate([x, y])) if labels is None else np.asarray(labels, dtype=np.float64)
    ix = np.searchsorted(lab, x)
    iy = np.searchsorted(lab, y)
    k = len(lab)
    if len(x) and (ix.max(initial=0) >= k or iy.max(initial=0) >= k or not (np.array_equal(lab[np.minimum(ix, k - 1)], x)
                                                                          and np.array_equal(lab[np.minimum(iy, k - 1)], y))):
        raise InputError("a label is not among the given labels")
    counts = np.bincount(ix * k + iy, minlength=k * k).reshape(k, k).astype(np.int64)
    return lab, counts


def _kappa(counts: np.ndarray, w: np.ndarray) -> float:
    n = counts.sum()
    if n == 0:
        return math.nan
    o = counts.astype(np.float64)
    e = np.outer(o.sum(axis=1), o.sum(axis=0)) / n
    den = float(np.sum(w * e))
    if den == 0.0:
        return math.nan
    return 1.0 - float(np.sum(w * o)) / den


def cohen_kappa(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Cohen's kappa of two label lists (any labels; NaN when chance agreement is 1).

    >>> round(cohen_kappa([0, 1, 1, 0, 1], [0, 1, 0, 0, 1]), 4)
    0.6154
    """
    lab, counts = confusion(a, b)
    w = 1.0 - np.eye(len(lab))
    return _kappa(counts, w)


def weighted_kappa(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, weights: str = "quadratic") -> float:
    """Weighted kappa with disagreement weights on the label values (``"quadratic"`` or ``"linear"``).

    >>> round(weighted_kappa([0, 1, 2, 3], [0, 2, 2, 3]), 4)
    0.9
    """
    if weights not in ("quadratic", "linear"):
        raise InputError("weights must be 'quadratic' or 'linear'", value=weights)
    lab, counts = confusion(a, b)
    d = lab[:, None] - lab[None, :]
    w = d * d if weights == "quadratic" else np.abs(d)
    return _kappa(counts, w)


def average_ranks(x: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x`` ascending, tied values sharing their average rank."""
    v = np.asarray(x, dtype=np.float64)
    order = np.argsort(v, kind="mergesort")
    s = v[order]
    new = np.r_[True, s[1:] != s[:-1]]
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], len(s)]
    avg = (starts + ends + 1) / 2.0  # mean of positions start+1 .. end
    ranks = np.empty(len(v))
    ranks[order] = avg[group]
    return ranks


def kendall_tau_b(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b (NaN when either list is constant or has fewer than 2 items).

    >>> kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4])
    0.6666666666666666
    """
    x, y = _pair(a, b)
    n = len(x)
    if n < 2:
        return math.nan
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    iu = np.triu_indices(n, 1)
    sx, sy = sx[iu], sy[iu]
    n0 = len(sx)
    n1 = int(np.count_nonzero(sx == 0))
    n2 = int(np.count_nonzero(sy == 0))
    s = float(np.sum(sx * sy))
    den = math.sqrt(float(n0 - n1) * float(n0 - n2))
    return math.nan if den == 0 else s / den


def spearman_rho(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (NaN for a constant list).

    >>> spearman_rho([1, 2, 3, 4], [1, 3, 2, 4])
    0.8
    """
    x, y = _pair(a, b)
    if len(x) < 2:
        return math.nan
    rx = average_ranks(x)
    ry = average_ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    den = math.sqrt(float(np.dot(rx, rx)) * float(np.dot(ry, ry)))
    return math.nan if den == 0 else float(np.dot(rx, ry)) / den


def order_by_score(scores: Sequence[float] | np.ndarray, names: Sequence[str] | None = None) -> np.ndarray:
    """Item indices best first: score descending, ties by name (or index) ascending."""
    s = np.asarray(scores, dtype=np.float64)
    tie = np.arange(len(s)) if names is None else np.argsort(np.argsort(np.asarray(names, dtype=object), kind="stable"),
                                                             kind="stable")
    return np.lexsort((tie, -s))


def tau_ap(reference: Sequence[float] | np.ndarray, candidate: Sequence[float] | np.ndarray,
           names: Sequence[str] | None = None) -> float:
    """The AP rank correlation of the candidate's ranking against the reference's (Yilmaz, Aslam &
    Robertson, SIGIR 2008). Inputs are scores (higher = better) of the same items; tied scores are
    ordered by ``names`` (or position) in both rankings, as the coefficient is defined for rankings without
    ties. NaN for fewer than 2 items.

    >>> tau_ap([4, 3, 2, 1], [4, 3, 2, 1])
    1.0
    >>> round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), 4)   # the top two swapped
    0.3333
    >>> round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), 4)   # the bottom two swapped
    0.7778
    """
    x, y = _pair(reference, candidate)
    n = len(x)
    if n < 2:
        return math.nan
    ref_pos = np.empty(n, dtype=np.int64)
    ref_pos[order_by_score(x, names)] = np.arange(n)
    cand = order_by_score(y, names)  # items in candidate order, best first
    p = ref_pos[cand]  # reference position of the item at each candidate position
    # C(i) for i = 2..n: items above position i in the candidate that the reference also puts above it
    above = p[None, :] < p[:, None]  # above[i, j]: item at cand pos j is above item at cand pos i in the reference
    tri = np.tril(np.ones((n, n), dtype=bool), -1)
    c = np.sum(above & tri, axis=1)[1:]
    i = np.arange(2, n + 1)
    return float(2.0 / (n - 1) * np.sum(c / (i - 1)) - 1.0)


__all__ = ["average_ranks", "cohen_kappa", "confusion", "kendall_tau_b", "order_by_score", "spearman_rho", "tau_ap",
           "weighted_kappa"]
