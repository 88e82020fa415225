"""Paired significance tests, bootstrap intervals, effect sizes and multiple-testing corrections.

Everything here works on plain NumPy arrays and knows nothing about runs, qrels or metrics, so it can be
used on any per-query scores. Differences are laid out as a matrix ``D`` of shape ``(n_queries, n_tests)``:
one column per paired comparison (treatment minus control). Each function tests every column at once.

Resampling tests (``randomization``, ``bootstrap``) and bootstrap intervals are vectorised: resamples are
drawn in chunks of rows (bounded memory) and applied to all columns with one matrix product per chunk; no
Python loop runs per resample. Randomness comes only from the ``numpy.random.Generator`` (or seed) passed
in. Resamples are drawn row by row from the generator (``rng.random(n)`` per resample for the sign flips,
``rng.integers(0, n, size=n)`` per resample for bootstrap indices), so results do not depend on the chunk
size, and a straightforward one-resample-at-a-time loop over the same generator reproduces them (the
tests do exactly that).

The t-test and Wilcoxon signed-rank test need SciPy (extra ``stats``); the randomization and bootstrap
tests need NumPy only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragrade.errors import InputError, require

TESTS: tuple[str, ...] = ("randomization", "bootstrap", "t", "wilcoxon")
"""Names accepted by :func:`paired_test`."""

TEST_ALIASES: dict[str, str] = {
    "permutation": "randomization",
    "fisher": "randomization",
    "student": "t",
    "ttest": "t",
    "t-test": "t",
    "paired-t": "t",
    "signed-rank": "wilcoxon",
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
}

CORRECTION_LABELS: dict[str, str] = {
    "none": "no multiple-testing",
    "bonferroni": "Bonferroni",
    "holm": "Holm",
    "bh": "Benjamini-Hochberg",
}

# Resamples drawn at once are limited so that one chunk holds at most this many float64 values.
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


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """``numpy.random.default_rng(rng)`` unless ``rng`` already is a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def _as_matrix(d: np.ndarray | Sequence[float], name: str = "differences") -> tuple[np.ndarray, bool]:
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


def _chunk_rows(n_queries: int, n_resamples: int) -> int:
    return max(1, min(n_resamples, _CHUNK_ELEMENTS // max(1, n_queries)))


def _check_resamples(n_resamples: int) -> int:
    n = int(n_resamples)
    if n < 1:
        raise InputError("n_resamples must be a positive integer", value=n_resamples)
    return n


def _at_least(stat: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Elementwise ``|stat| >= |observed|`` with a small tolerance (ties count as 'at least')."""
    obs = np.abs(observed)
    return np.abs(stat) >= obs - (_REL_TOL * obs + _ABS_TOL)


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
    """Percentile bootstrap confidence interval of the mean of each column of ``x``.

    Returns ``(low, high)`` arrays (scalars for 1-D input), the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles (linear interpolation) of the resampled means.
    """
    if not 0.0 < confidence < 1.0:
        raise InputError("confidence must be strictly between 0 and 1", value=confidence)
    means = bootstrap_means(x, n_resamples, rng)
    lo, hi = np.quantile(means, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
    return lo, hi


def randomization_test(
    d: np.ndarray | Sequence[float], n_resamples: int = 10_000, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Two-sided Fisher randomization (sign-flip permutation) test of mean difference 0 for each column.

    Under the null hypothesis the two systems are exchangeable on every query, so each per-query difference
    keeps or flips its sign with probability 1/2 (sign ``+1`` where ``u < 0.5`` for ``u = rng.random(n)``).
    The p-value is ``(1 + #{resamples with |mean| >= |observed mean|}) / (1 + n_resamples)``: never 0, and
    exactly 1 when all differences are 0.
    """
    mat, squeeze = _as_matrix(d)
    n_resamples = _check_resamples(n_resamples)
    gen = as_generator(rng)
    n = mat.shape[0]
    observed = mat.mean(axis=0)
    count = np.zeros(mat.shape[1], dtype=np.int64)
    step = _chunk_rows(n, n_resamples)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        signs = np.where(gen.random((rows, n)) < 0.5, 1.0, -1.0)
        count += _at_least(signs @ mat / n, observed).sum(axis=0)
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
    """Two-sided p-values of ``test`` (see :data:`TESTS`) for each column of differences ``d``."""
    name = normalize_test(test)
    if name == "randomization":
        return randomization_test(d, n_resamples, rng)
    if name == "bootstrap":
        return bootstrap_test(d, n_resamples, rng)
    if name == "t":
        return t_test(d)
    return wilcoxon_test(d)


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
