"""Statistical power and test-set size ("topic set size design", Sakai, Information Retrieval Journal 19,
2016): how many queries a test set needs to detect a difference ``delta`` with a given power, and the
smallest difference it can detect with the queries it has.

- **Two runs**: a two-sided paired t-test on the per-query differences. ``sigma`` is their sample standard
  deviation (ddof = 1), the effect size ``e = delta / sigma``, and the power at ``n`` queries is computed
  exactly from the noncentral t distribution (``n - 1`` degrees of freedom, noncentrality
  ``e * sqrt(n)``), both tails counted.
- **More runs** (``m``): a one-way ANOVA on the *minimum detectable range* ``D`` (the difference between
  the best and the worst run when the others sit midway). ``sigma^2`` is the pooled within-system
  variance (each run's sample variance, ddof = 1, averaged over the runs), the noncentrality is
  ``lambda = n D^2 / (2 sigma^2)`` with ``(m - 1, m (n - 1))`` degrees of freedom.

``queries_needed`` is the smallest whole number of queries whose power reaches the target; the minimal
detectable effect (``mde``) is the exact root of the power function at the current number of queries
(bisection to adjacent floating-point numbers, not a normal approximation). Everything needs SciPy (extra
``stats``).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ragrade.errors import InputError, MissingDependencyError, require

#: The power at which :func:`ragrade.compare` states each pair's minimal detectable effect.
COMPARE_POWER = 0.8

# Largest number of queries the search for ``queries_needed`` considers (beyond it: None).
_MAX_QUERIES = 1 << 40


def _special() -> Any:
    # scipy.special only (its distribution functions): importing scipy.stats would add about half a second
    # to every comparison, which states the MDE of each pair.
    return require("scipy.special", package="scipy", extra="stats", purpose="power and test-set size")


def check_levels(alpha: float, power: float) -> tuple[float, float]:
    alpha, power = float(alpha), float(power)
    if not 0.0 < alpha < 1.0:
        raise InputError("alpha must be strictly between 0 and 1", value=alpha)
    if not alpha < power < 1.0:
        raise InputError("power must be above alpha and below 1", value=power)
    return alpha, power


# --------------------------------------------------------------------------------------- power functions
def ttest_power(effect: float, n: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired (one-sample) t-test at standardised effect ``effect`` (mean of the
    differences / their standard deviation) with ``n`` queries: ``P(|T| > t_crit)`` with ``T`` noncentral
    t, ``n - 1`` degrees of freedom, noncentrality ``effect * sqrt(n)``."""
    sp = _special()
    df = float(n) - 1.0
    if df <= 0:
        return math.nan
    if math.isinf(effect):
        return 1.0
    crit = -float(sp.stdtrit(df, alpha / 2.0))
    nc = float(effect) * math.sqrt(float(n))
    # upper tail P(T > crit | nc) = P(T < -crit | -nc), both computed as lower tails (no cancellation)
    return _nct_cdf(-crit, df, -nc) + _nct_cdf(-crit, df, nc)


def _nct_cdf(x: float, df: float, nc: float) -> float:
    """``P(T <= x)`` for the noncentral t; SciPy's value, or, where SciPy returns NaN (far tails at small
    degrees of freedom), the integral ``E[Phi(x sqrt(V / df) - nc)]`` over ``V ~ chi2(df)``."""
    value = float(_special().nctdtr(df, nc, x))
    if math.isfinite(value):
        return value
    from scipy import stats as st
    from scipy.integrate import quad

    def integrand(v: float) -> float:
        return float(st.norm.cdf(x * math.sqrt(v / df) - nc) * st.chi2.pdf(v, df))

    with warnings.catch_warnings():  # a far tail: the integral is tiny, its relative accuracy moot
        warnings.simplefilter("ignore")
        total, _ = quad(integrand, 0.0, math.inf, epsabs=1e-300, epsrel=1e-12, limit=200)
    return float(total)


def anova_power(d_range: float, variance: float, runs: int, n: float, alpha: float = 0.05) -> float:
    """Power of the one-way ANOVA F-test over ``runs`` systems of ``n`` queries each to detect a minimum
    range ``d_range`` between the best and the worst system, within-system variance ``variance``:
    noncentral F with ``(runs - 1, runs (n - 1))`` degrees of freedom and noncentrality
    ``n d_range^2 / (2 variance)``."""
    sp = _special()
    df1, df2 = runs - 1.0, runs * (float(n) - 1.0)
    if df1 <= 0 or df2 <= 0:
        return math.nan
    if variance == 0:
        return 1.0 if d_range > 0 else float(alpha)
    lam = float(n) * float(d_range) ** 2 / (2.0 * float(variance))
    crit = float(sp.fdtri(df1, df2, 1.0 - alpha))
    return 1.0 - float(sp.ncfdtr(df1, df2, lam, crit))


def _smallest_n(power_at: Any, target: float, start: int = 2) -> int | None:
    """The smallest whole ``n >= start`` with ``power_at(n) >= target`` (power increasing in ``n``), or
    ``None`` beyond :data:`_MAX_QUERIES`."""
    if power_at(start) >= target:
        return start
    lo, hi = start, start * 2
    while power_at(hi) < target:
        lo, hi = hi, hi * 2
        if hi > _MAX_QUERIES:
            return None
    while hi - lo > 1:  # invariant: power(lo) < target <= power(hi)
        mid = (lo + hi) // 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def _root(func: Any, target: float) -> float:
    """The ``x > 0`` where the increasing ``func`` reaches ``target`` (``func(0) < target``), to machine
    precision."""
    lo, hi = 0.0, 1.0
    while func(hi) < target:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return math.inf
    for _ in range(200):  # bisection down to adjacent floating-point numbers
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if func(mid) < target:
            lo = mid
        else:
            hi = mid
    return hi


def ttest_queries_needed(effect: float, power: float = 0.8, alpha: float = 0.05) -> int | None:
    """Smallest number of queries at which the two-sided paired t-test detects the standardised effect
    ``effect`` with at least ``power`` (``None``: more than 2^40 queries; at least 2)."""
    alpha, power = check_levels(alpha, power)
    if effect == 0:
        return None
    return _smallest_n(lambda n: ttest_power(abs(effect), n, alpha), power)


def ttest_mde(n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """The standardised effect (mean difference / sd of the differences) that the two-sided paired t-test
    detects with exactly ``power`` at ``n`` queries (NaN below 2 queries)."""
    alpha, power = check_levels(alpha, power)
    if n < 2:
        return math.nan
    return _root(lambda e: ttest_power(e, n, alpha), power)


def anova_queries_needed(d_range: float, variance: float, runs: int, power: float = 0.8,
                         alpha: float = 0.05) -> int | None:
    """Smallest number of queries (per system) at which the one-way ANOVA over ``runs`` systems detects a
    minimum range ``d_range`` with at least ``power`` (``None``: more than 2^40)."""
    alpha, power = check_levels(alpha, power)
    if d_range == 0:
        return None
    return _smallest_n(lambda n: anova_power(abs(d_range), variance, runs, n, alpha), power)


def anova_mde(variance: float, runs: int, n: int, power: float = 0.8, alpha: float = 0.05) -> float:
    """The minimum detectable range ``D`` of the one-way ANOVA over ``runs`` systems at ``n`` queries."""
    alpha, power = check_levels(alpha, power)
    if n < 2:
        return math.nan
    if variance == 0:
        return 0.0
    # Solve in the standardised range D / sigma, then scale (the power depends on D / sigma only).
    sigma = math.sqrt(variance)
    return sigma * _root(lambda x: anova_power(x, 1.0, runs, n, alpha), power)


def paired_mde(d: np.ndarray, alpha: float = 0.05, power: float = COMPARE_POWER) -> np.ndarray:
    """Per column of the differences matrix ``d`` (queries x comparisons): the mean difference the
    two-sided paired t-test detects with ``power`` at this number of queries, in the metric's units (the
    standardised root times the column's standard deviation). NaN below 2 queries; NaN without SciPy."""
    d = np.asarray(d, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    n = d.shape[0]
    out = np.full(d.shape[1], np.nan)
    if n < 2:
        return out
    try:
        e = ttest_mde(n, power, alpha)
    except MissingDependencyError:
        return out
    sd = d.std(axis=0, ddof=1)
    return np.asarray(e * sd, dtype=np.float64)
