"""The statistics layer: agreement with SciPy and with slow reference implementations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.comparison import stats
from ragrade.errors import InputError

scipy_stats = pytest.importorskip("scipy.stats", reason="the stats extra (scipy) is needed for these tests")


def _data(seed: int, n: int = 60, shift: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + rng.normal(shift, 0.2, n), 0, 1)
    return a, b


# ------------------------------------------------------------------ slow references (one resample at a time)
def ref_randomization(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """The documented stream: per resample ceil(n/64) raw words, bit i%64 of word i//64 keeps query i."""
    rng = np.random.default_rng(seed)
    obs = abs(d.mean())
    count = 0
    n = len(d)
    for _ in range(n_resamples):
        words = [int(w) for w in rng.bit_generator.random_raw(-(-n // 64))]
        signs = np.array([1.0 if (words[i // 64] >> (i % 64)) & 1 else -1.0 for i in range(n)])
        if abs((signs * d).mean()) >= obs - (1e-9 * obs + 1e-12):
            count += 1
    return (count + 1) / (n_resamples + 1)


def ref_bootstrap_means(d: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = len(d)
    out = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, size=n)
        out.append(d[idx].mean())
    return np.array(out)


def ref_bootstrap_test(d: np.ndarray, n_resamples: int, seed: int) -> float:
    obs = abs(d.mean())
    means = ref_bootstrap_means(d - d.mean(), n_resamples, seed)
    count = sum(abs(m) >= obs - (1e-9 * obs + 1e-12) for m in means)
    return (count + 1) / (n_resamples + 1)


# -------------------------------------------------------------------------------------- agreement with SciPy
@pytest.mark.parametrize("seed", range(8))
def test_t_test_matches_scipy_ttest_rel(seed: int) -> None:
    a, b = _data(seed, n=20 + 10 * seed, shift=0.02 * seed)
    expected = scipy_stats.ttest_rel(b, a).pvalue
    assert stats.t_test(b - a) == pytest.approx(expected, rel=1e-10, abs=1e-300)


def test_t_test_is_vectorised_over_columns() -> None:
    cols = [np.subtract(*reversed(_data(s))) for s in range(5)]
    p = stats.t_test(np.column_stack(cols))
    assert p.shape == (5,)
    np.testing.assert_allclose(p, [stats.t_test(c) for c in cols], rtol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_matches_scipy(seed: int) -> None:
    a, b = _data(seed, n=15 + 20 * seed)
    expected = scipy_stats.wilcoxon(b - a).pvalue
    assert stats.wilcoxon_test(b - a) == pytest.approx(expected, rel=1e-12)


def test_wilcoxon_with_zero_differences_matches_scipy() -> None:
    d = np.array([0.0, 0.0, 0.1, -0.2, 0.3, 0.4, 0.5, 0.25, -0.05, 0.6, 0.7, 0.0])
    assert stats.wilcoxon_test(d) == pytest.approx(scipy_stats.wilcoxon(d).pvalue, rel=1e-12)


def test_bh_matches_scipy_false_discovery_control() -> None:
    p = np.random.default_rng(3).random(40) ** 3
    np.testing.assert_allclose(
        stats.adjust_pvalues(p, "bh"), scipy_stats.false_discovery_control(p), rtol=1e-12
    )


# ---------------------------------------------------------------------------- agreement with slow references
@pytest.mark.parametrize(("seed", "shift"), [(0, 0.0), (1, 0.03), (2, 0.08)])
def test_randomization_matches_slow_reference(seed: int, shift: float) -> None:
    a, b = _data(seed, n=40, shift=shift)
    d = b - a
    assert stats.randomization_test(d, 500, np.random.default_rng(seed)) == ref_randomization(d, 500, seed)


def test_randomization_on_discrete_scores_counts_exact_ties_like_reference() -> None:
    rng = np.random.default_rng(9)
    a = (rng.random(30) < 0.4).astype(float)
    b = (rng.random(30) < 0.6).astype(float)
    d = b - a
    assert stats.randomization_test(d, 400, 11) == ref_randomization(d, 400, 11)


@pytest.mark.parametrize(("seed", "shift"), [(3, 0.0), (4, 0.05)])
def test_bootstrap_test_matches_slow_reference(seed: int, shift: float) -> None:
    a, b = _data(seed, n=35, shift=shift)
    d = b - a
    assert stats.bootstrap_test(d, 400, seed) == ref_bootstrap_test(d, 400, seed)


def test_bootstrap_means_and_ci_match_slow_reference() -> None:
    a, _ = _data(5, n=25)
    means = stats.bootstrap_means(a, 300, 7)
    np.testing.assert_allclose(means, ref_bootstrap_means(a, 300, 7), rtol=1e-12)
    lo, hi = stats.bootstrap_ci(a, 300, 0.9, 7)
    ref_lo, ref_hi = np.quantile(ref_bootstrap_means(a, 300, 7), [0.05, 0.95])
    assert (lo, hi) == pytest.approx((ref_lo, ref_hi), rel=1e-12)
    assert lo < a.mean() < hi


def test_results_do_not_depend_on_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _data(6, n=50, shift=0.03)
    d = np.column_stack([b - a, a - b, b - b])
    big = (
        stats.randomization_test(d, 700, 1),
        stats.bootstrap_test(d, 700, 1),
        stats.bootstrap_means(d, 700, 1),
    )
    monkeypatch.setattr(stats, "_CHUNK_ELEMENTS", 50 * 7)  # 7 resamples per chunk, last chunk partial
    small = (
        stats.randomization_test(d, 700, 1),
        stats.bootstrap_test(d, 700, 1),
        stats.bootstrap_means(d, 700, 1),
    )
    for x, y in zip(big, small, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_same_seed_same_result_and_generator_is_accepted() -> None:
    a, b = _data(7, shift=0.02)
    d = b - a
    assert stats.randomization_test(d, 300, 5) == stats.randomization_test(d, 300, np.random.default_rng(5))
    assert stats.bootstrap_test(d, 300, 5) == stats.bootstrap_test(d, 300, 5)


# ---------------------------------------------------------------------------------------- sanity of p-values
@pytest.mark.parametrize("test", stats.PAIRED_TESTS)
def test_identical_runs_give_p_equal_one(test: str) -> None:
    a, _ = _data(8)
    assert stats.paired_test(a - a, test, 500, 0) == 1.0


@pytest.mark.parametrize("test", stats.PAIRED_TESTS)
def test_clearly_different_runs_give_small_p(test: str) -> None:
    a, _ = _data(9, n=80)
    b = np.clip(a + 0.3 + np.random.default_rng(1).normal(0, 0.05, 80), 0, 2)
    assert stats.paired_test(b - a, test, 2000, 0) < 1e-3


def test_resampling_p_value_is_never_zero() -> None:
    d = np.full(50, 0.5)
    assert stats.randomization_test(d, 99, 0) == pytest.approx(1 / 100)


def test_degenerate_t_test_cases() -> None:
    assert stats.t_test(np.zeros(5)) == 1.0
    assert stats.t_test(np.full(5, 0.2)) == 0.0
    assert np.isnan(stats.t_test(np.array([0.3])))


def test_aliases_and_unknown_names() -> None:
    assert stats.normalize_test("Student") == "t"
    assert stats.normalize_test("fisher") == "randomization"
    assert stats.normalize_correction(None) == "none"
    assert stats.normalize_correction("fdr_bh") == "bh"
    assert stats.normalize_test("HSD") == "tukey"
    with pytest.raises(InputError, match="unknown significance test"):
        stats.normalize_test("sign-test")
    with pytest.raises(InputError, match="not one difference"):
        stats.paired_test([0.1, 0.2], "tukey")
    with pytest.raises(InputError, match="unknown interval method"):
        stats.normalize_ci_method("bca")
    with pytest.raises(InputError, match="unknown multiple-testing correction"):
        stats.normalize_correction("sidak")


def test_bad_input_is_a_typed_error() -> None:
    with pytest.raises(InputError, match="NaN"):
        stats.randomization_test([0.1, np.nan], 10, 0)
    with pytest.raises(InputError, match="empty"):
        stats.t_test([])
    with pytest.raises(InputError, match="n_resamples"):
        stats.bootstrap_test([0.1, 0.2], 0, 0)


# ------------------------------------------------------------------------------ corrections and effect sizes
def test_bonferroni_and_holm_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.5])
    np.testing.assert_allclose(stats.adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 1.0])
    # sorted: 0.01*4=0.04, 0.03*3=0.09, 0.04*2=0.08 -> max-accumulated 0.09, 0.5*1=0.5
    np.testing.assert_allclose(stats.adjust_pvalues(p, "holm"), [0.04, 0.09, 0.09, 0.5])
    np.testing.assert_allclose(stats.adjust_pvalues(p, None), p)


def test_corrections_skip_nan() -> None:
    out = stats.adjust_pvalues([0.01, np.nan, 0.02], "bonferroni")
    assert np.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2]], [0.02, 0.04])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.sampled_from(["bonferroni", "holm", "bh"]))
def test_adjusted_p_values_are_valid_and_keep_order(p: list[float], method: str) -> None:
    raw = np.array(p)
    adj = stats.adjust_pvalues(raw, method)
    assert ((adj >= raw - 1e-15) & (adj <= 1.0)).all()
    order = np.argsort(raw, kind="stable")
    assert (np.diff(adj[order]) >= -1e-15).all()
    assert (stats.adjust_pvalues(raw, "holm") <= stats.adjust_pvalues(raw, "bonferroni") + 1e-15).all()


def test_cohens_dz_and_win_tie_loss() -> None:
    d = np.array([0.1, 0.2, 0.0, -0.1, 0.3])
    assert stats.cohens_dz(d) == pytest.approx(d.mean() / d.std(ddof=1))
    assert stats.cohens_dz(np.zeros(4)) == 0.0
    assert stats.cohens_dz(np.full(4, -0.1)) == -np.inf
    assert list(stats.win_tie_loss(d)) == [3, 1, 1]
    assert stats.win_tie_loss(np.column_stack([d, -d])).tolist() == [[3, 1], [1, 1], [1, 3]]


# ------------------------------------------------------------------------------------------ property tests
_diffs = st.lists(st.floats(-1, 1, allow_nan=False, allow_infinity=False), min_size=2, max_size=40).map(
    np.array
)


@settings(max_examples=60, deadline=None)
@given(_diffs, st.integers(0, 2**32 - 1))
def test_resampling_p_values_are_valid_and_sign_symmetric(d: np.ndarray, seed: int) -> None:
    for fn in (stats.randomization_test, stats.bootstrap_test):
        p = fn(d, 64, seed)
        assert 1 / 65 <= p <= 1.0
        assert fn(-d, 64, seed) == p  # testing b - a or a - b gives the same two-sided p


@settings(max_examples=60, deadline=None)
@given(_diffs)
def test_t_test_agrees_with_scipy_on_arbitrary_data(d: np.ndarray) -> None:
    sd = d.std(ddof=1)
    if sd <= 1e-9 * max(1.0, np.abs(d).max()):
        return  # degenerate: covered by test_degenerate_t_test_cases
    expected = scipy_stats.ttest_1samp(d, 0.0).pvalue
    assert stats.t_test(d) == pytest.approx(expected, rel=1e-8, abs=1e-300)


@pytest.mark.parametrize("n", [1, 7, 63, 64, 65, 130])
def test_randomization_reads_the_stream_across_word_boundaries(n: int) -> None:
    d = np.random.default_rng(n).normal(0.05, 0.3, n)
    assert stats.randomization_test(d, 150, 4) == ref_randomization(d, 150, 4)


# ---------------------------------------------------------------------- saddlepoint bootstrap intervals
def _columns_of_every_kind(n: int, seed: int) -> np.ndarray:
    """Uniform, skewed, many ties at 0 (differences), reciprocal-rank-like and binary columns."""
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.random(n),
            rng.exponential(size=n) ** 2,
            np.where(rng.random(n) < 0.7, 0.0, rng.normal(0.05, 0.2, n)),
            rng.choice([0, 1, 1 / 2, 1 / 3, 1 / 4, 1 / 5], size=n, p=[0.5, 0.2, 0.1, 0.1, 0.05, 0.05]),
            (rng.random(n) < 0.3).astype(float),
        ]
    )


@pytest.mark.parametrize(("n", "confidence"), [(120, 0.95), (400, 0.9), (1500, 0.99)])
def test_saddlepoint_interval_agrees_with_heavy_resampling(n: int, confidence: float) -> None:
    """Within a tenth of a standard error of 100,000 resamples (whose own Monte Carlo error is 0.01 to 0.03
    standard errors, more at 99%); binary columns sit on a lattice of step 1/n: half a step more."""
    x = _columns_of_every_kind(n, seed=n)
    lo, hi = stats.saddlepoint_ci(x, confidence)
    ref_lo, ref_hi = stats.bootstrap_ci(x, 100_000, confidence, 0)
    se = x.std(axis=0) / np.sqrt(n)
    lattice = np.array([0, 0, 0, 0, 0.5 / n])
    assert (np.abs(lo - ref_lo) <= 0.1 * se + lattice).all()
    assert (np.abs(hi - ref_hi) <= 0.1 * se + lattice).all()


def test_saddlepoint_interval_is_skewed_like_the_data() -> None:
    x = np.random.default_rng(3).exponential(size=200) ** 2
    lo, hi = stats.saddlepoint_ci(x)
    assert hi - x.mean() > x.mean() - lo  # a long right tail widens the upper side, unlike mean ± 1.96 se


def test_saddlepoint_degenerate_and_tiny_samples() -> None:
    lo, hi = stats.saddlepoint_ci(np.column_stack([np.full(50, 0.25), np.zeros(50)]))
    np.testing.assert_array_equal(lo, [0.25, 0.0])
    np.testing.assert_array_equal(hi, [0.25, 0.0])
    assert stats.saddlepoint_ci([0.7]) == (0.7, 0.7)
    lo1, hi1 = stats.saddlepoint_ci([1.0, 0.0, 0.0, 1.0, 0.0])
    assert 0.0 <= lo1 < 0.4 < hi1 <= 1.0
    with pytest.raises(InputError, match="confidence"):
        stats.saddlepoint_ci([0.1, 0.2], 1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False, allow_infinity=False), min_size=2, max_size=60).map(np.array))
def test_saddlepoint_interval_is_inside_the_data_range_and_holds_the_mean(x: np.ndarray) -> None:
    lo, hi = stats.saddlepoint_ci(x, 0.95)
    assert x.min() - 1e-12 <= lo <= x.mean() + 1e-12 <= hi + 2e-12 <= x.max() + 3e-12
    lo90, hi90 = stats.saddlepoint_ci(x, 0.9)
    assert lo - 1e-12 <= lo90 and hi90 <= hi + 1e-12  # a lower level never widens the interval


def test_saddlepoint_intervals_nest_where_r_star_dips() -> None:
    # r* is not monotone in the tilt for these three values (it dips, rises and falls again): the 90%
    # upper end once landed on the maximum while the 95% one was solved below it.
    x = np.array([0.75, 0.875, -0.75])
    levels = [0.8, 0.85, 0.9, 0.93, 0.95, 0.96, 0.99]
    ends = [stats.saddlepoint_ci(x, c) for c in levels]
    lows, highs = [float(lo) for lo, _ in ends], [float(hi) for _, hi in ends]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(lows))
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(highs))
    assert highs[2] < x.max()  # the 90% end is solved, not the maximum
    assert x.min() <= lows[-1] <= x.mean() <= highs[-1] <= x.max()


# --------------------------------------------------------------------------------------------- Tukey's HSD
def test_tukey_for_two_runs_is_the_paired_t_test() -> None:
    a, b = _data(11, n=70, shift=0.04)
    p = stats.tukey_hsd(np.column_stack([a, b]))
    assert p[0, 1] == p[1, 0] == pytest.approx(stats.t_test(b - a), rel=1e-8)
    assert p[0, 0] == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_unpaired_tukey_matches_scipy_and_ranx_form(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.random((40, 4)) + np.array([0.0, 0.05, 0.2, 0.21])
    expected = scipy_stats.tukey_hsd(*x.T).pvalue
    np.testing.assert_allclose(stats.tukey_hsd(x, paired=False), expected, rtol=1e-6, atol=1e-12)


def test_paired_tukey_by_hand_and_degenerate_cases() -> None:
    rng = np.random.default_rng(5)
    base = rng.random(30)
    x = np.column_stack([base, base + 0.02 + rng.normal(0, 0.01, 30), base + 0.1])
    n, k = x.shape
    resid = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0) + x.mean()
    mse = (resid**2).sum() / ((n - 1) * (k - 1))
    q = abs(x[:, 2].mean() - x[:, 0].mean()) / np.sqrt(mse / n)
    expected = scipy_stats.studentized_range.sf(q, k, (n - 1) * (k - 1))
    assert stats.tukey_hsd(x)[0, 2] == pytest.approx(expected, rel=1e-10)
    # queries vary a lot but runs differ by a constant: blocks remove the query effect entirely
    same = stats.tukey_hsd(np.column_stack([base, base, base + 0.1]))
    assert same[0, 1] == 1.0 and same[0, 2] == 0.0
    with pytest.raises(InputError, match="two runs"):
        stats.tukey_hsd(np.ones((5, 1)))


# ------------------------------------------------------------------------------------- significance groups
def test_significance_groups_examples() -> None:
    none = np.zeros((3, 3), dtype=bool)
    assert stats.significance_groups([0.3, 0.2, 0.1], none) == ["A", "A", "A"]
    allpairs = ~np.eye(3, dtype=bool)
    assert stats.significance_groups([0.1, 0.3, 0.2], allpairs) == ["C", "A", "B"]
    chain = np.zeros((4, 4), dtype=bool)  # 0~1, 1~2, 2~3 not different; everything else different
    for i, j in [(0, 2), (0, 3), (1, 3)]:
        chain[i, j] = chain[j, i] = True
    assert stats.significance_groups([0.4, 0.3, 0.2, 0.1], chain) == ["A", "AB", "BC", "C"]
    assert stats.group_labels(28)[-3:] == ["Z", "AA", "AB"]


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 7).flatmap(lambda k: st.tuples(
    st.lists(st.floats(0, 1), min_size=k, max_size=k),
    st.lists(st.booleans(), min_size=k * k, max_size=k * k),
)))
def test_runs_share_a_letter_exactly_when_not_significantly_different(data) -> None:
    means, flags = data
    k = len(means)
    diff = np.array(flags).reshape(k, k)
    diff = np.triu(diff, 1)
    diff = diff | diff.T
    labels = stats.significance_groups(means, diff)
    for i in range(k):
        assert labels[i]  # every run is in at least one group
        for j in range(k):
            if i != j:
                assert bool(set(labels[i]) & set(labels[j])) == (not diff[i, j])
