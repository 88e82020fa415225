"""Simulation on the shipped examples' real per-query values: the number of queries ``ragrade.plan`` asks
for reaches the target power (± 2 points), and every test of ``compare`` keeps its type I error within
[4 %, 6 %] at alpha = 5 % (fixed seeds; about 20 s)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import ragrade
from ragrade.comparison import stats
from ragrade.comparison.power import anova_power, anova_queries_needed, ttest_power, ttest_queries_needed

pytest.importorskip("scipy", reason="the t-test, Wilcoxon and Tukey need SciPy (test extra)")
st = pytest.importorskip("scipy.stats")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRIALS = 4000
N_NULL = 200  # queries per simulated test set in the type I error checks
ALPHA = 0.05


@pytest.fixture(scope="module")
def scores() -> tuple[np.ndarray, np.ndarray]:
    """nDCG@10 of bm25 and dense on the example queries scored in both (34)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = (ragrade.evaluate(str(EXAMPLES / "qrels.tsv"), str(EXAMPLES / f), ["ndcg@10"])
                .per_query["ndcg@10"].to_numpy() for f in ("run.tsv", "run_dense.tsv"))
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def _null_differences(a: np.ndarray, b: np.ndarray, n: int, seed: int) -> np.ndarray:
    """(n, TRIALS): per-query differences resampled with replacement, their mean removed (H0 true)."""
    d = b - a
    d0 = d - d.mean()
    return d0[np.random.default_rng(seed).integers(0, len(d0), size=(n, TRIALS))]


@pytest.mark.parametrize("delta", [0.05, -0.05])
def test_planned_queries_reach_the_target_power(scores, delta: float) -> None:
    a, b = scores
    d0 = (b - a) - (b - a).mean()
    sigma = d0.std(ddof=0)  # the standard deviation of the resampled population
    n = ttest_queries_needed(abs(delta) / sigma, 0.8, ALPHA)
    assert n is not None and 300 < n < 400
    d = _null_differences(a, b, n, seed=1) + delta
    simulated = float((stats.t_test(d) <= ALPHA).mean())
    assert ttest_power(abs(delta) / sigma, n, ALPHA) >= 0.8
    assert abs(simulated - 0.8) <= 0.02, simulated


def test_planned_queries_reach_the_target_power_anova(scores) -> None:
    a, b = scores
    columns = [a, b, (a + b) / 2]
    centred = [c - c.mean() for c in columns]
    variance = float(np.mean([c.var(ddof=0) for c in centred]))
    d_range = 0.1
    n = anova_queries_needed(d_range, variance, 3, 0.8, ALPHA)
    assert n is not None and n > 50
    rng = np.random.default_rng(2)
    shifts = (-d_range / 2, 0.0, d_range / 2)  # the least favourable configuration of the range
    groups = [c[rng.integers(0, len(c), size=(n, TRIALS))] + s for c, s in zip(centred, shifts, strict=True)]
    x = np.stack(groups)  # (runs, n, trials)
    means = x.mean(axis=1)
    between = n * ((means - means.mean(axis=0)) ** 2).sum(axis=0) / 2
    within = ((x - means[:, None, :]) ** 2).sum(axis=(0, 1)) / (3 * (n - 1))
    p = st.f.sf(between / within, 2, 3 * (n - 1))
    simulated = float((p <= ALPHA).mean())
    assert anova_power(d_range, variance, 3, n, ALPHA) >= 0.8
    assert abs(simulated - 0.8) <= 0.02, simulated


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_type_one_error_of_the_paired_tests(scores, test: str) -> None:
    d = _null_differences(*scores, N_NULL, seed=3)
    p = stats.paired_test(d, test, 1000, np.random.default_rng(4))
    rate = float((p <= ALPHA).mean())
    assert 0.04 <= rate <= 0.06, rate


def test_type_one_error_of_wilcoxon(scores) -> None:
    # The signed-rank test's null hypothesis is symmetry about 0, not a zero mean: differences of a skewed
    # metric with the mean removed are rejected more often as n grows (about 10 % at 100 queries here).
    # Under its own null (the same resampled differences with random signs) it holds its level.
    d = _null_differences(*scores, N_NULL, seed=5)
    signs = np.random.default_rng(6).choice([-1.0, 1.0], size=d.shape)
    rate = float((stats.wilcoxon_test(d * signs) <= ALPHA).mean())
    assert 0.04 <= rate <= 0.06, rate


def test_type_one_error_of_tukey(scores) -> None:
    # Three runs whose labels are exchangeable on every query: the real per-query values of bm25, dense and
    # their average, each with its mean removed, assigned to the runs in a random order per query.
    a, b = scores
    values = np.column_stack([a - a.mean(), b - b.mean(), (a + b) / 2 - ((a + b) / 2).mean()])
    rng = np.random.default_rng(7)
    x = values[rng.integers(0, len(a), size=(TRIALS, N_NULL))]
    x = np.take_along_axis(x, np.argsort(rng.random(x.shape), axis=2), axis=2)
    # The HSD statistic (largest studentized range, two-way ANOVA with queries as blocks) for all trials
    # at once; ragrade's tukey_hsd decides the same on a sample of the trials (it is slow per call).
    k, df = 3, 2 * (N_NULL - 1)
    means = x.mean(axis=1)
    resid = x - x.mean(axis=2, keepdims=True) - means[:, None, :] + x.mean(axis=(1, 2))[:, None, None]
    mse = (resid**2).sum(axis=(1, 2)) / df
    q = (means.max(axis=1) - means.min(axis=1)) / np.sqrt(mse / N_NULL)
    reject = q > st.studentized_range.isf(ALPHA, k, df)
    for i in range(0, TRIALS, 400):
        assert (stats.tukey_hsd(x[i]).min() <= ALPHA) == reject[i]
    rate = float(reject.mean())
    assert 0.04 <= rate <= 0.06, rate
