"""Paired significance tests, bootstrap intervals, effect sizes, corrections and significance groups.

Everything here works on plain NumPy arrays and knows nothing about runs, qrels or metrics, so it can be
used on any per-query scores. Differences are laid out as a matrix ``D`` of shape ``(n_queries, n_tests)``:
one column per paired comparison (treatment minus control). Each function tests every column at once.

Randomness comes only from the ``numpy.random.Generator`` (or seed) passed in, and every resampling
function documents the exact stream it draws, so that a plain one-resample-at-a-time loop over the same
generator reproduces it (the tests do exactly that) and results do not depend on how resamples are
chunked:

- :func:`randomization_test`: resample ``r`` takes ``ceil(n / 64)`` raw 64-bit words from the generator's
  bit generator (``rng.bit_generator.random_raw``); bit ``i % 64`` (least significant first) of word
  ``i // 64`` is query ``i``'s sign (1: kept, 0: flipped). The sums are read from precomputed tables of
  the subset sums of every 8 consecutive queries, so a resample costs ``n / 8`` table reads per column.
- :func:`bootstrap_test`, :func:`bootstrap_means` and ``bootstrap_ci(method="resample")``: resample ``r``
  draws ``rng.integers(0, n, size=n)`` query indices.

:func:`saddlepoint_ci` computes the percentile bootstrap interval without resampling, from the
saddlepoint approximation of the bootstrap distribution of the mean (see its docstring); it is what
:func:`ragrade.compare` uses from 100 queries on.

The t-test, the Wilcoxon signed-rank test and Tukey's HSD need SciPy (extra ``stats``); everything else
needs NumPy only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ragrade.errors import InputError, require

TESTS: tuple[str, ...] = ("randomization", "bootstrap", "t", "wilcoxon", "tukey")
"""Significance tests :func:`ragrade.compare` accepts. The first four are paired tests of one difference
column (:func:`paired_test`); ``tukey`` (:func:`tukey_hsd`) compares all runs at once."""

PAIRED_TESTS: tuple[str, ...] = ("randomization", "bootstrap", "t", "wilcoxon")
"""Names accepted by :func:`paired_test`."""

TEST_ALIASES: dict[str, str] = {
    "permutation": "randomization",
    "fisher": "randomization",
    "student": "t",
    "ttest": "t",
    "t-test": "t",
    "paired-t": "t",
    "signed-rank": "wilcoxon",
    "hsd": "tukey",
    "tukey-hsd": "tukey",
    "tukey_hsd": "tukey",
}

CORRECTIONS: tuple[str, ...] = ("bonferroni", "holm", "bh")
"""Names accepted by :func:`adjust_pvalues` (``None`` means no correction)."""

CORRECTION_ALIASES: dict[str, str] = {
    "none": "none",
    "benjamini-hochberg": "bh",
    "fdr_bh": "bh",
    "fdr": "bh",
    "holm-bonferroni": "holm",
}

TEST_LABELS: dict[str, str] = {
    "randomization": "Fisher's randomization (paired permutation) test",
    "bootstrap": "paired bootstrap test",
    "t": "paired Student's t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "tukey": "Tukey's HSD test (two-way ANOVA with queries as blocks)",
}

CORRECTION_LABELS: dict[str, str] = {
    "none": "no multiple-testing",
    "bonferroni": "Bonferroni",
    "holm": "Holm",
    "bh": "Benjamini-Hochberg",
}

CIMethod = Literal["auto", "saddlepoint", "resample"]
CI_METHODS: tuple[str, ...] = ("auto", "saddlepoint", "resample")
"""How :func:`ragrade.compare` computes bootstrap intervals: ``saddlepoint`` (:func:`saddlepoint_ci`),
``resample`` (:func:`bootstrap_ci`) or ``auto`` (saddlepoint from :data:`SADDLEPOINT_MIN_QUERIES` on)."""

SADDLEPOINT_MIN_QUERIES = 100
"""From this many queries on, ``ci_method="auto"`` uses the saddlepoint approximation."""

# Resampling works in chunks of at most this many values (bounded memory whatever the sizes).
_CHUNK_ELEMENTS = 1 << 22
# Two statistics this close are treated as equal (counts ">= observed" robust to summation order).
_REL_TOL = 1e-9
_ABS_TOL = 1e-12


def normalize_test(test: str) -> str:
    """Return the canonical test name for ``test`` (accepts aliases), or raise :class:`InputError`."""
    key = str(test).strip().lower()
    key = TEST_ALIASES.get(key, key)
    if key not in TESTS:
        raise InputError(f"unknown significance test; choose one of {', '.join(TESTS)}", value=test)
    return key


def normalize_correction(correction: str | None) -> str:
    """Return the canonical correction name (``"none"`` for ``None``), or raise :class:`InputError`."""
    if correction is None:
        return "none"
    key = str(correction).strip().lower()
    key = CORRECTION_ALIASES.get(key, key)
    if key != "none" and key not in CORRECTIONS:
        raise InputError(
            f"unknown multiple-testing correction; choose one of none, {', '.join(CORRECTIONS)}",
            value=correction,
        )
    return key


def normalize_ci_method(method: str) -> str:
    """Return ``method`` if it is one of :data:`CI_METHODS`, else raise :class:`InputError`."""
    key = str(method).strip().lower()
    if key not in CI_METHODS:
        raise InputError(f"unknown interval method; choose one of {', '.join(CI_METHODS)}", value=method)
    return key


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """``numpy.random.default_rng(rng)`` unless ``rng`` already is a Generator; a seed that is not a
    non-negative integer (or None, a SeedSequence) is an :class:`~ragrade.errors.InputError`."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(check_seed(rng))


def check_seed(seed: Any) -> Any:
    """``seed`` when NumPy can seed a generator with it (None, a non-negative integer, a SeedSequence or a
    Generator), else an :class:`~ragrade.errors.InputError` naming it."""
    if seed is None or isinstance(seed, np.random.Generator | np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InputError("seed must be a non-negative integer (or None)", value=seed)
    return seed


def _as_matrix(d: npt.ArrayLike, name: str = "differences") -> tuple[np.ndarray, bool]:
    arr = np.asarray(d, dtype=np.float64)
    squeeze = arr.ndim == 1
    if squeeze:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise InputError(f"{name} must be a 1-D or 2-D array", value=arr.shape)
    if arr.shape[0] == 0:
        raise InputError(f"{name} are empty: there is no query to compare")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} contain NaN or infinite values; drop those queries first")
    return arr, squeeze


def _chunk_rows(row_size: int, n_resamples: int) -> int:
    return max(1, min(n_resamples, _CHUNK_ELEMENTS // max(1, row_size)))


def _check_resamples(n_resamples: int) -> int:
    n = int(n_resamples)
    if n < 1:
        raise InputError("n_resamples must be a positive integer", value=n_resamples)
    return n


def _check_confidence(confidence: float) -> float:
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise InputError("confidence must be strictly between 0 and 1", value=confidence)
    return c


def _at_least(stat: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Elementwise ``|stat| >= |observed|`` with a small tolerance (ties count as 'at least')."""
    obs = np.abs(observed)
    return np.abs(stat) >= obs - (_REL_TOL * obs + _ABS_TOL)


# ------------------------------------------------------------------------------------------- bootstrap
def bootstrap_weights(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """Draw ``rows`` bootstrap resamples of ``n`` queries as a count matrix of shape ``(rows, n)``.

    Query indices are ``rng.integers(0, n, size=(rows, n))``; ``W[r, i]`` counts how often query ``i``
    was drawn in resample ``r`` (each row sums to ``n``), so ``W @ x / n`` are the resampled means of every
    column of ``x``.
    """
    idx = rng.integers(0, n, size=(rows, n), dtype=np.int64)
    idx += (np.arange(rows, dtype=np.int64) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


def bootstrap_means(
    x: np.ndarray | Sequence[float], n_resamples: int, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples (of rows) of ``x``: shape ``(n_resamples, n_columns)``.

    All columns share the same resampled query sets (a paired bootstrap).
    """
    mat, squeeze = _as_matrix(x, "scores")
    n_resamples = _check_resamples(n_resamples)
    gen = as_generator(rng)
    n = mat.shape[0]
    out = np.empty((n_resamples, mat.shape[1]))
    step = _chunk_rows(n, n_resamples)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        out[start : start + rows] = bootstrap_weights(gen, rows, n) @ mat / n
    return out[:, 0] if squeeze else out


def bootstrap_ci(
    x: np.ndarray | Sequence[float],
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap confidence interval of the mean of each column of ``x``, by resampling.

    Returns ``(low, high)`` arrays (scalars for 1-D input), the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles (linear interpolation) of ``n_resamples`` resampled means
    (:func:`bootstrap_means`).
    """
    confidence = _check_confidence(confidence)
    means = bootstrap_means(x, n_resamples, rng)
    lo, hi = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
    return lo, hi


def saddlepoint_ci(
    x: np.ndarray | Sequence[float], confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the mean of each column of ``x``, without resampling.

    The bootstrap distribution of the mean of ``n`` values (the distribution of the mean of ``n`` draws
    with replacement from them, which resampling estimates) has the cumulant generating function
    ``K(s) = n log(mean_i exp(s x_i / n))``. Its CDF is approximated by the saddlepoint method in the
    Barndorff-Nielsen form ``F(m) ≈ Φ(r*)``, ``r* = w + log(u / w) / w``, where for the tilt ``t``
    solving ``m = Σ x_i e^{t x_i} / Σ e^{t x_i}``: ``w = sign(t) sqrt(2 n (t m - log mean e^{t x}))`` and
    ``u = t sqrt(n v(t))`` with ``v(t)`` the tilted variance (Davison and Hinkley, *Bootstrap Methods and
    their Application*, 1997, section 9.5). Each end of the interval solves ``r*(t) = ±z`` for ``t`` by
    safeguarded Newton steps, ``z`` the normal quantile of ``(1 + confidence) / 2``.

    The relative error of the tail probabilities is of order ``n^(-3/2)``: from a hundred queries on it
    is far below the Monte Carlo error of 10,000 resamples, at a cost of a few passes over the data.
    A column whose values are all equal gets the interval ``[value, value]``; an end the bootstrap
    distribution cannot reach (tiny samples) is the column's minimum or maximum.
    """
    confidence = _check_confidence(confidence)
    mat, squeeze = _as_matrix(x, "scores")
    mean = mat.mean(axis=0)
    centred = mat - mean
    z = NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    ends = _saddlepoint_upper(np.concatenate([centred, -centred], axis=1), z)
    m = mat.shape[1]
    lo, hi = mean - ends[m:], mean + ends[:m]
    return (lo[0], hi[0]) if squeeze else (lo, hi)


def _tilted(c: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each column of ``c`` (centred values) and tilt ``t``: ``log mean e^{t c}``, the tilted mean
    and the tilted variance."""
    a = c * t
    top = a.max(axis=0)
    np.subtract(a, top, out=a)
    e = np.exp(a, out=a)
    s0 = e.sum(axis=0)
    ec = e * c
    s1 = ec.sum(axis=0)
    s2 = (ec * c).sum(axis=0)
    mu = s1 / s0
    var = np.maximum(s2 / s0 - mu * mu, 0.0)
    return top + np.log(s0 / c.shape[0]), mu, var


def _r_star(c: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(r*, d r*/dt (approximately d w/dt), tilted mean, tilted variance)`` at positive tilts ``t``."""
    n = c.shape[0]
    log_mgf, mu, var = _tilted(c, t)
    w = np.sqrt(np.maximum(2.0 * n * (t * mu - log_mgf), 0.0))
    u = t * np.sqrt(n * var)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(w > 1e-8, w + np.log(u / w) / w, w)
        slope = np.where(w > 1e-8, n * t * var / w, np.sqrt(n * var))
    return r, slope, mu, var


def _saddlepoint_upper(c: np.ndarray, z: float) -> np.ndarray:
    """For each column of centred values ``c``: the tilted mean at which the saddlepoint CDF of the
    bootstrap mean reaches ``Φ(z)`` (``z > 0``), i.e. the upper interval end minus the mean.

    Starting near the normal approximation's tilt, the tilt is doubled until ``r*`` passes ``z`` (a
    bracket). If the tilted variance vanishes first (all weight on the largest value: tiny samples), the
    end cannot be reached and is the column's maximum. Safeguarded Newton steps from the last tilt below
    ``z`` then solve ``r*(t) = z`` inside the bracket. The tilts tried do not depend on ``z``, so a lower
    level's end is never above a higher level's (the intervals nest)."""
    n, m = c.shape
    out = np.zeros(m)
    sd = c.std(axis=0)
    top = c.max(axis=0)
    live = sd > _ABS_TOL * np.maximum(1.0, np.abs(c).max(axis=0))
    if n < 2 or not live.any():
        return out
    cols = np.flatnonzero(live)
    cc = c[:, cols]
    var0 = sd[cols] ** 2
    k = len(cols)
    # The normal approximation's tilt z / (sqrt(n) sd), rounded down to a power of two times
    # 1 / (sqrt(n) sd): every level then searches the same grid of tilts, so the bracket of a lower
    # level is never past that of a higher one and the intervals nest.
    t = 2.0 ** math.floor(math.log2(z)) / (math.sqrt(n) * sd[cols])
    lo, hi = np.zeros(k), np.full(k, np.inf)
    lost = np.zeros(k, dtype=bool)
    done = np.zeros(k, dtype=bool)
    mu_at = np.zeros(k)
    for _ in range(64):  # bracket
        grow = ~lost & ~done & ~np.isfinite(hi)
        if not grow.any():
            break
        idx = np.flatnonzero(grow)
        r, _, mu, var = _r_star(cc[:, idx] if len(idx) < k else cc, t[idx])
        # r* need not grow with the tilt on tiny samples (it can dip and rise again): keep doubling
        # until it passes z or the tilted variance vanishes (all weight on the largest value).
        broken = ~np.isfinite(r) | (var <= 1e-12 * var0[idx])
        lost[idx[broken]] = True
        close = ~broken & (np.abs(r - z) < 1e-10)
        done[idx[close]], mu_at[idx[close]] = True, mu[close]
        above = ~broken & ~close & (r > z)
        hi[idx[above]] = t[idx[above]]
        below = ~broken & ~close & (r < z)
        lo[idx[below]] = t[idx[below]]
        t[idx[below]] *= 2.0
    lost |= ~done & ~np.isfinite(hi)
    ends = top[cols].copy()
    ends[done] = np.minimum(mu_at[done], top[cols][done])
    solve = np.flatnonzero(~lost & ~done)
    if len(solve):
        sc, a, b = cc[:, solve], lo[solve], hi[solve]
        t = np.where(a > 0, a, 0.5 * b)
        mu = np.zeros(len(solve))
        for _ in range(100):  # Newton inside the bracket, bisecting when a step leaves it
            r, slope, mu, _ = _r_star(sc, t)
            if np.all(np.abs(r - z) < 1e-10) or np.all(b - a <= 1e-12 * b):
                break
            below = r < z
            a, b = np.where(below, t, a), np.where(below, b, t)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                step = t - (r - z) / slope
            inside = np.isfinite(step) & (step > a) & (step < b)
            t = np.where(inside, step, 0.5 * (a + b))
        ends[solve] = np.minimum(mu, top[cols][solve])
    out[cols] = ends
    return out


# -------------------------------------------------------------------------------------- paired tests
def _subset_sum_tables(mat: np.ndarray, words: int) -> np.ndarray:
    """``T[c, 256 g + b]``: the sum of column ``c`` over the queries ``8 g + j`` whose bit ``j`` is set
    in byte ``b`` (queries past the end count 0). Shape ``(n_columns, 32 words * 256)``."""
    n, m = mat.shape
    groups = words * 8
    padded = np.zeros((groups * 8, m))
    padded[:n] = mat
    blocks = padded.reshape(groups, 8, m).transpose(2, 0, 1)  # (m, groups, 8)
    table = np.zeros((m, groups, 256))
    for j in range(8):
        table[:, :, 1 << j : 2 << j] = table[:, :, : 1 << j] + blocks[:, :, j, None]
    return table.reshape(m, groups * 256)


def randomization_test(
    d: np.ndarray | Sequence[float], n_resamples: int = 10_000, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Two-sided Fisher randomization (sign-flip permutation) test of mean difference 0 for each column.

    Under the null hypothesis the two systems are exchangeable on every query, so each per-query difference
    keeps or flips its sign with probability 1/2. The signs of one resample are the bits of
    ``ceil(n / 64)`` raw 64-bit words of ``rng.bit_generator.random_raw`` (bit ``i % 64`` of word
    ``i // 64`` for query ``i``, least significant bit first; 1 keeps the sign). The p-value is
    ``(1 + #{resamples with |mean| >= |observed mean|}) / (1 + n_resamples)``: never 0, and exactly 1 when
    all differences are 0.
    """
    mat, squeeze = _as_matrix(d)
    n_resamples = _check_resamples(n_resamples)
    gen = as_generator(rng)
    n, m = mat.shape
    words = -(-n // 64)
    groups = words * 8
    tables = _subset_sum_tables(mat, words)
    total = mat.sum(axis=0)
    observed = total / n
    base = np.arange(groups, dtype=np.intp) * 256
    count = np.zeros(m, dtype=np.int64)
    step = _chunk_rows(groups, n_resamples)
    kept = np.empty((step, m))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        raw = gen.bit_generator.random_raw(rows * words).astype("<u8", copy=False)
        index = raw.view(np.uint8).reshape(rows, groups) + base
        for c in range(m):  # sum of the kept differences of every resample
            np.take(tables[c], index).sum(axis=1, out=kept[:rows, c])
        count += _at_least((2.0 * kept[:rows] - total) / n, observed).sum(axis=0)
    p = (count + 1.0) / (n_resamples + 1.0)
    return p[0] if squeeze else p


def bootstrap_test(
    d: np.ndarray | Sequence[float], n_resamples: int = 10_000, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Two-sided paired bootstrap test of mean difference 0 for each column (shift method).

    The differences are centred on their mean (imposing the null hypothesis), resampled with replacement
    (:func:`bootstrap_weights`), and the p-value is
    ``(1 + #{resamples with |mean of centred resample| >= |observed mean|}) / (1 + n_resamples)``.
    """
    mat, squeeze = _as_matrix(d)
    n_resamples = _check_resamples(n_resamples)
    gen = as_generator(rng)
    n = mat.shape[0]
    observed = mat.mean(axis=0)
    centred = mat - observed
    count = np.zeros(mat.shape[1], dtype=np.int64)
    step = _chunk_rows(n, n_resamples)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        count += _at_least(bootstrap_weights(gen, rows, n) @ centred / n, observed).sum(axis=0)
    p = (count + 1.0) / (n_resamples + 1.0)
    return p[0] if squeeze else p


def t_test(d: np.ndarray | Sequence[float]) -> np.ndarray:
    """Two-sided paired Student's t-test of mean difference 0 for each column (needs SciPy).

    Matches ``scipy.stats.ttest_rel(treatment, control)``, except in degenerate cases SciPy leaves
    undefined: all differences 0 gives p = 1; all differences equal and non-zero gives p = 0. Fewer than
    two queries gives NaN.
    """
    special = require("scipy.special", package="scipy", extra="stats", purpose="The paired t-test")
    mat, squeeze = _as_matrix(d)
    n = mat.shape[0]
    mean = mat.mean(axis=0)
    if n < 2:
        p = np.full(mat.shape[1], np.nan)
        return p[0] if squeeze else p
    sd = mat.std(axis=0, ddof=1)
    degenerate = sd <= _ABS_TOL * np.maximum(1.0, np.abs(mat).max(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / np.sqrt(n))
    p = 2.0 * special.stdtr(n - 1, -np.abs(np.where(degenerate, 0.0, t)))
    p = np.where(degenerate, np.where(np.abs(mean) <= _ABS_TOL, 1.0, 0.0), np.minimum(p, 1.0))
    return p[0] if squeeze else p


def wilcoxon_test(d: np.ndarray | Sequence[float]) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank test of each column (needs SciPy).

    Calls ``scipy.stats.wilcoxon`` with its defaults (zero differences dropped: ``zero_method="wilcox"``;
    exact or normal-approximation p-value chosen by SciPy). A column whose differences are all 0 gets
    p = 1 (SciPy leaves it undefined).
    """
    scipy_stats = require(
        "scipy.stats", package="scipy", extra="stats", purpose="The Wilcoxon signed-rank test"
    )
    mat, squeeze = _as_matrix(d)
    p = np.ones(mat.shape[1])
    nonzero = (np.abs(mat) > _ABS_TOL).any(axis=0)
    for j in np.flatnonzero(nonzero):  # one call per comparison column, not per query
        p[j] = float(scipy_stats.wilcoxon(mat[:, j]).pvalue)
    return p[0] if squeeze else p


def paired_test(
    d: np.ndarray | Sequence[float],
    test: str = "randomization",
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Two-sided p-values of ``test`` (see :data:`PAIRED_TESTS`) for each column of differences ``d``."""
    name = normalize_test(test)
    if name == "randomization":
        return randomization_test(d, n_resamples, rng)
    if name == "bootstrap":
        return bootstrap_test(d, n_resamples, rng)
    if name == "t":
        return t_test(d)
    if name == "wilcoxon":
        return wilcoxon_test(d)
    raise InputError("Tukey's HSD compares every run's scores at once, not one difference: use tukey_hsd")


def tukey_hsd(x: np.ndarray | Sequence[Sequence[float]], *, paired: bool = True) -> np.ndarray:
    """Tukey's honestly significant difference test between the columns (runs) of ``x`` (needs SciPy).

    ``x`` has one row per query and one column per run (``k >= 2`` runs). Returns the ``(k, k)`` matrix of
    p-values (1 on the diagonal), which control the family-wise error rate over all ``k (k - 1) / 2``
    pairs: ``p_ij = P(Q > |mean_i - mean_j| / sqrt(MSE / n))`` with ``Q`` the studentized range
    distribution for ``k`` groups and ``df`` error degrees of freedom.

    - ``paired=True`` (default; what :func:`ragrade.compare` uses): queries are blocks of a two-way
      ANOVA (run + query, no interaction), ``MSE`` is the residual mean square, ``df = (k - 1)(n - 1)``.
      This is the form used for IR experiments, where every run answers the same queries; for two runs it
      gives exactly the paired t-test's p-value.
    - ``paired=False``: one-way ANOVA (runs as independent samples), ``MSE`` the pooled within-run
      variance, ``df = k (n - 1)``: the same as ``scipy.stats.tukey_hsd`` and ranx's ``tukey`` test.

    When ``MSE`` is 0, equal means get p = 1 and different means p = 0.
    """
    scipy_stats = require("scipy.stats", package="scipy", extra="stats", purpose="Tukey's HSD test")
    mat, _ = _as_matrix(x, "scores")
    n, k = mat.shape
    if k < 2:
        raise InputError("Tukey's HSD needs at least two runs", value=k)
    means = mat.mean(axis=0)
    if paired:
        resid = mat - mat.mean(axis=1, keepdims=True) - means + mat.mean()
        df = (k - 1) * (n - 1)
    else:
        resid = mat - means
        df = k * (n - 1)
    p = np.ones((k, k))
    if df < 1:
        p[~np.eye(k, dtype=bool)] = np.nan
        return p
    mse = float((resid**2).sum()) / df
    diff = np.abs(means[:, None] - means[None, :])
    tol = _ABS_TOL * max(1.0, float(np.abs(mat).max()))
    off = ~np.eye(k, dtype=bool)
    if mse <= tol * tol:
        p[off] = np.where(diff[off] <= tol, 1.0, 0.0)
        return p
    q = diff[off] / math.sqrt(mse / n)
    p[off] = np.clip(scipy_stats.studentized_range.sf(q, k, df), 0.0, 1.0)
    return p


# --------------------------------------------------------------------------- effect sizes and counts
def cohens_dz(d: np.ndarray | Sequence[float]) -> np.ndarray:
    """Cohen's d_z for paired data: mean difference / standard deviation of the differences (ddof=1).

    0 when all differences are 0; ``±inf`` when they are all equal and non-zero; NaN for one query.
    """
    mat, squeeze = _as_matrix(d)
    mean = mat.mean(axis=0)
    if mat.shape[0] < 2:
        out = np.full(mat.shape[1], np.nan)
    else:
        sd = mat.std(axis=0, ddof=1)
        degenerate = sd <= _ABS_TOL * np.maximum(1.0, np.abs(mat).max(axis=0))
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(
                degenerate,
                np.where(np.abs(mean) <= _ABS_TOL, 0.0, np.sign(mean) * np.inf),
                mean / np.where(degenerate, 1.0, sd),
            )
    return out[0] if squeeze else out


def win_tie_loss(d: np.ndarray | Sequence[float], tol: float = 1e-12) -> np.ndarray:
    """Counts of queries with difference ``> tol`` (win), ``|d| <= tol`` (tie), ``< -tol`` (loss).

    Returns an int array of shape ``(3, n_columns)`` (``(3,)`` for 1-D input).
    """
    mat, squeeze = _as_matrix(d)
    wins = (mat > tol).sum(axis=0)
    losses = (mat < -tol).sum(axis=0)
    ties = mat.shape[0] - wins - losses
    out = np.vstack([wins, ties, losses]).astype(np.int64)
    return out[:, 0] if squeeze else out


# ----------------------------------------------------------------------------------------- corrections
def adjust_pvalues(p: np.ndarray | Sequence[float], method: str | None) -> np.ndarray:
    """Adjust a family of p-values for multiple testing (NaN entries are left out of the family).

    - ``bonferroni``: ``min(1, m p)``;
    - ``holm``: step-down, ``p_(i) -> max_{j<=i} min(1, (m - j + 1) p_(j))``;
    - ``bh`` (Benjamini-Hochberg, false discovery rate): step-up, ``p_(i) -> min_{j>=i} min(1, m p_(j) / j)``;
    - ``None`` / ``"none"``: unchanged.
    """
    name = normalize_correction(method)
    arr = np.asarray(p, dtype=np.float64)
    out = arr.astype(np.float64, copy=True)
    ok = ~np.isnan(arr)
    vals = arr[ok]
    m = vals.size
    if name == "none" or m == 0:
        return out
    if name == "bonferroni":
        adj = np.minimum(1.0, vals * m)
    else:
        order = np.argsort(vals, kind="stable")
        ranked = vals[order]
        i = np.arange(1, m + 1)
        if name == "holm":
            adj_sorted = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * ranked))
        else:  # bh
            adj_sorted = np.minimum.accumulate(np.minimum(1.0, ranked * m / i)[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = adj_sorted
    out[ok] = adj
    return out


# ---------------------------------------------------------------------------------- significance groups
def group_labels(n: int) -> list[str]:
    """Labels ``A, B, ..., Z, AA, AB, ...`` for ``n`` significance groups."""
    out: list[str] = []
    width, letters = 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    while len(out) < n:
        for i in range(len(letters) ** width):
            if len(out) == n:
                break
            label, rest = "", i
            for _ in range(width):
                rest, r = divmod(rest, len(letters))
                label = letters[r] + label
            out.append(label)
        width += 1
    return out


def significance_groups(means: np.ndarray | Sequence[float], different: np.ndarray) -> list[str]:
    """Which runs cannot be told apart: a letter display of the significance matrix.

    ``different[i, j]`` says whether runs ``i`` and ``j`` differ significantly (symmetric). A group is a
    largest set of runs no two of which differ significantly (a maximal clique of the "not different"
    graph); groups are lettered ``A, B, ...`` in order of their best mean (then of their size). Each run
    gets the letters of the groups it belongs to, so **two runs share a letter exactly when they do not
    differ significantly**, and a run whose label shares no letter with another's is significantly
    different from it.

    >>> significance_groups([0.5, 0.4, 0.3], np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool))
    ['A', 'AB', 'B']
    """
    mu = np.asarray(means, dtype=np.float64)
    k = mu.size
    diff = np.asarray(different, dtype=bool)
    if diff.shape != (k, k):
        raise InputError("the significance matrix must be square, one row per run", value=diff.shape)
    same = ~(diff | diff.T)
    np.fill_diagonal(same, False)
    neighbours = [set(np.flatnonzero(same[i]).tolist()) for i in range(k)]
    cliques: list[frozenset[int]] = []

    def expand(clique: set[int], candidates: set[int], excluded: set[int]) -> None:  # Bron-Kerbosch
        if not candidates and not excluded:
            cliques.append(frozenset(clique))
            return
        pivot = max(candidates | excluded, key=lambda v: len(neighbours[v] & candidates))
        for v in sorted(candidates - neighbours[pivot]):
            expand(clique | {v}, candidates & neighbours[v], excluded & neighbours[v])
            candidates = candidates - {v}
            excluded = excluded | {v}

    expand(set(), set(range(k)), set())
    order = sorted(
        cliques,
        key=lambda c: (-max(mu[i] for i in c), -len(c), sorted(c)),
    )
    names = group_labels(len(order))
    out = [""] * k
    for label, clique in zip(names, order, strict=True):
        for i in clique:
            out[i] += label
    return out
