"""Prediction-powered inference (PPI) for the mean of a per-query metric.

Setting: ``n`` queries drawn at random have human labels, so their metric value ``Y`` (under human qrels)
and ``Yhat`` (under the assessor's qrels) are both known; ``N`` further queries have only ``Yhat``. The
assessor may be biased in any way. PPI (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic,
"Prediction-powered inference", Science 382, 2023) estimates the mean of ``Y`` by the assessor's mean on the
unlabelled queries corrected by the average error measured on the labelled ones (the *rectifier*). With a
power-tuning weight ``lam`` (PPI++: Angelopoulos, Duchi & Zrnic, 2023; ``lam = 1`` is plain PPI):

    theta = lam * mean(Yhat_u) + mean(Y_l - lam * Yhat_l)
    var   = lam^2 * var(Yhat_u) / N + var(Y_l - lam * Yhat_l) / n

and the interval is ``theta +/- z_(1 - alpha/2) * sqrt(var)`` (normal approximation, valid as ``n`` and ``N``
grow, whatever the assessor's bias). ``lam="auto"`` picks the variance-minimising weight
``cov(Y, Yhat) / ((1 + n/N) var(Yhat))`` estimated from the data, clipped to [0, 1].

The labelled queries must be a uniform random sample of all queries (not the easy ones, not the first
ones): that is what makes the correction unbiased.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ragrade.errors import InputError


@dataclass(frozen=True)
class MeanInterval:
    """A point estimate with its two-sided confidence interval."""

    estimate: float
    low: float
    high: float
    n_labeled: int
    n_unlabeled: int
    method: str
    lam: float = 1.0
    alpha: float = 0.05

    @property
    def width(self) -> float:
        return self.high - self.low

    def covers(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, float | int | str]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "width": self.width,
                "n_labeled": self.n_labeled, "n_unlabeled": self.n_unlabeled, "method": self.method,
                "lam": self.lam, "alpha": self.alpha}


def _vec(x: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    v = np.asarray(x, dtype=np.float64).ravel()
    if not np.isfinite(v).all():
        raise InputError(f"{what} must be finite numbers (drop undefined queries first)")
    return v


def _z(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise InputError("alpha must be between 0 and 1", value=alpha)
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def _var(x: np.ndarray) -> float:
    return float(np.var(x, ddof=1)) if len(x) > 1 else math.nan


def ppi_mean(y_labeled: Sequence[float] | np.ndarray, yhat_labeled: Sequence[float] | np.ndarray,
             yhat_unlabeled: Sequence[float] | np.ndarray, *, alpha: float = 0.05,
             lam: float | str = 1.0) -> MeanInterval:
    """The prediction-powered mean of ``Y`` and its ``1 - alpha`` confidence interval.

    ``y_labeled[i]`` and ``yhat_labeled[i]``: a labelled query's metric under human and assessor labels;
    ``yhat_unlabeled``: the other queries' metric under assessor labels. ``lam``: 1 (plain PPI), a number in
    [0, 1], or ``"auto"`` (PPI++ power tuning).

    >>> r = ppi_mean([1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [1.0] * 8 + [0.0] * 8)
    >>> round(r.estimate, 4), r.method
    (0.25, 'ppi')
    """
    y = _vec(y_labeled, "y_labeled")
    fl = _vec(yhat_labeled, "yhat_labeled")
    fu = _vec(yhat_unlabeled, "yhat_unlabeled")
    if len(y) != len(fl):
        raise InputError("y_labeled and yhat_labeled must have the same length", value=(len(y), len(fl)))
    n, big_n = len(y), len(fu)
    if n < 2 or big_n < 2:
        raise InputError("PPI needs at least 2 labelled and 2 unlabelled queries", value=(n, big_n))
    z = _z(alpha)
    if lam == "auto":
        vf = float(np.var(np.concatenate([fl, fu]), ddof=1))
        cov = float(np.cov(y, fl, ddof=1)[0, 1])
        lam_v = 0.0 if vf == 0 else cov / ((1.0 + n / big_n) * vf)
        lam_v = min(1.0, max(0.0, lam_v))
    elif isinstance(lam, int | float) and not isinstance(lam, bool) and 0.0 <= float(lam) <= 1.0:
        lam_v = float(lam)
    else:
        raise InputError("lam must be a number in [0, 1] or 'auto'", value=lam)
    rect = y - lam_v * fl
    est = lam_v * float(fu.mean()) + float(rect.mean())
    se = math.sqrt(lam_v * lam_v * _var(fu) / big_n + _var(rect) / n)
    return MeanInterval(est, est - z * se, est + z * se, n, big_n, "ppi" if lam == 1.0 else "ppi++", lam_v, alpha)


def classical_mean(y: Sequence[float] | np.ndarray, *, alpha: float = 0.05, method: str = "classical",
                   n_unlabeled: int = 0) -> MeanInterval:
    """The sample mean with its normal-approximation interval (the human-only or the naive assessor-only
    interval, depending on what ``y`` holds)."""
    v = _vec(y, "values")
    if len(v) < 2:
        raise InputError("a confidence interval needs at least 2 values", value=len(v))
    z = _z(alpha)
    m = float(v.mean())
    se = math.sqrt(_var(v) / len(v))
    return MeanInterval(m, m - z * se, m + z * se, len(v), n_unlabeled, method, 1.0, alpha)


__all__ = ["MeanInterval", "classical_mean", "ppi_mean"]
