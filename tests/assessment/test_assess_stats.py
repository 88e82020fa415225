"""Agreement statistics against the reference packages (scikit-learn, SciPy) and against a slow tau_AP
written from the paper's definition."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.assessment import stats

sklearn_metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is not installed (test extra)")
scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is not installed (test extra)")

TRIALS = 300
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # scikit-learn warns on undefined kappa


def _labels(rng: np.random.Generator, n: int, k: int, agree: float) -> tuple[np.ndarray, np.ndarray]:
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < agree, a, rng.integers(0, k, n))
    return a, b


def test_kappa_equals_sklearn_on_random_labels():
    rng = np.random.default_rng(7)
    worst = 0.0
    for t in range(TRIALS):
        n = int(rng.integers(2, 400))
        a, b = _labels(rng, n, 2, float(rng.random()))
        ours = stats.cohen_kappa(a, b)
        theirs = sklearn_metrics.cohen_kappa_score(a, b)
        if math.isnan(theirs):
            assert math.isnan(ours), t
            continue
        worst = max(worst, abs(ours - theirs))
    assert worst <= 1e-12


def test_weighted_kappa_equals_sklearn_on_random_grades():
    rng = np.random.default_rng(8)
    worst = 0.0
    for _ in range(TRIALS):
        n = int(rng.integers(2, 400))
        a, b = _labels(rng, n, 4, float(rng.random()))
        labels = list(range(int(min(a.min(), b.min())), int(max(a.max(), b.max())) + 1))
        for weights in ("quadratic", "linear"):
            ours = stats.weighted_kappa(a, b, weights)
            theirs = sklearn_metrics.cohen_kappa_score(a, b, labels=labels, weights=weights)
            if math.isnan(theirs):
                assert math.isnan(ours)
                continue
            worst = max(worst, abs(ours - theirs))
    assert worst <= 1e-12


def test_weighted_kappa_uses_grade_values_not_positions():
    # grade 2 never used: scikit-learn's default (positions) puts 3 next to 1, the grade values do not
    a = [0, 1, 3, 3, 1, 0]
    b = [0, 3, 1, 3, 1, 0]
    ours = stats.weighted_kappa(a, b)
    assert ours == pytest.approx(sklearn_metrics.cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="quadratic"), abs=1e-12)
    assert ours != pytest.approx(sklearn_metrics.cohen_kappa_score(a, b, weights="quadratic"), abs=1e-6)


def test_kendall_tau_b_and_spearman_equal_scipy_on_random_scores():
    rng = np.random.default_rng(9)
    worst_tau = worst_rho = 0.0
    for t in range(TRIALS):
        n = int(rng.integers(2, 60))
        x = rng.normal(size=n)
        y = x + rng.normal(scale=float(rng.random() * 2), size=n)
        if t % 3 == 0:  # ties on both sides
            x, y = np.round(x, 0), np.round(y, 0)
        tau = scipy_stats.kendalltau(x, y).statistic
        rho = scipy_stats.spearmanr(x, y).statistic
        ours_tau, ours_rho = stats.kendall_tau_b(x, y), stats.spearman_rho(x, y)
        if math.isnan(tau):
            assert math.isnan(ours_tau)
        else:
            worst_tau = max(worst_tau, abs(ours_tau - tau))
        if math.isnan(rho):
            assert math.isnan(ours_rho)
        else:
            worst_rho = max(worst_rho, abs(ours_rho - rho))
    assert worst_tau <= 1e-12
    assert worst_rho <= 1e-12


def slow_tau_ap(reference_order: list[str], candidate_order: list[str]) -> float:
    """tau_AP as defined by Yilmaz, Aslam & Robertson, "A new rank correlation coefficient for information
    retrieval", SIGIR 2008, section 3: for each item at position i = 2..N of the candidate (estimated)
    ranking, C(i) is the number of items above it in the candidate ranking that are also above it in the
    reference (true) ranking; tau_AP = 2/(N-1) * sum_i C(i)/(i-1) - 1. Rankings are lists, best first."""
    n = len(candidate_order)
    pos_true = {item: k for k, item in enumerate(reference_order)}
    total = 0.0
    for i in range(1, n):  # 0-based position i is rank i + 1
        item = candidate_order[i]
        correct = sum(1 for above in candidate_order[:i] if pos_true[above] < pos_true[item])
        total += correct / i
    return 2.0 / (n - 1) * total - 1.0


def test_tau_ap_equals_the_slow_reference_on_random_rankings():
    rng = np.random.default_rng(10)
    worst = 0.0
    for _ in range(TRIALS):
        n = int(rng.integers(2, 40))
        names = [f"run{i:02d}" for i in range(n)]
        ref = rng.permutation(n).astype(float)  # distinct scores, no ties
        cand = ref + rng.normal(scale=float(rng.random() * n), size=n)
        ref_order = [names[i] for i in np.argsort(-ref)]
        cand_order = [names[i] for i in np.argsort(-cand)]
        worst = max(worst, abs(stats.tau_ap(ref, cand, names) - slow_tau_ap(ref_order, cand_order)))
    assert worst <= 1e-12


def test_tau_ap_on_every_permutation_of_five():
    items = list("abcde")
    ref = {x: 5 - i for i, x in enumerate(items)}
    for perm in itertools.permutations(items):
        cand = {x: 5 - i for i, x in enumerate(perm)}
        ours = stats.tau_ap([ref[x] for x in items], [cand[x] for x in items], items)
        assert ours == pytest.approx(slow_tau_ap(items, list(perm)), abs=1e-12)


def test_tau_ap_weights_the_top_more_than_kendall():
    top = stats.tau_ap([4, 3, 2, 1], [3, 4, 2, 1])
    bottom = stats.tau_ap([4, 3, 2, 1], [4, 3, 1, 2])
    assert top < bottom
    assert stats.kendall_tau_b([4, 3, 2, 1], [3, 4, 2, 1]) == stats.kendall_tau_b([4, 3, 2, 1], [4, 3, 1, 2])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=30, unique=True))
def test_correlations_are_one_on_identical_and_minus_one_on_reversed(xs):
    x = np.array(xs)
    assert stats.kendall_tau_b(x, x) == pytest.approx(1.0)
    assert stats.spearman_rho(x, x) == pytest.approx(1.0)
    assert stats.tau_ap(x, x) == pytest.approx(1.0)
    assert stats.kendall_tau_b(x, -x) == pytest.approx(-1.0)
    assert stats.tau_ap(x, -x) == pytest.approx(-1.0)
    assert -1.0 - 1e-12 <= stats.tau_ap(x, np.roll(x, 1)) <= 1.0 + 1e-12


def test_degenerate_inputs_are_nan_not_zero():
    assert math.isnan(stats.cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert math.isnan(stats.kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert math.isnan(stats.spearman_rho([2, 2], [1, 2]))
    assert math.isnan(stats.tau_ap([1], [1]))


def test_bad_inputs_raise_typed_errors():
    from ragrade.errors import InputError

    with pytest.raises(InputError):
        stats.cohen_kappa([0, 1], [0])
    with pytest.raises(InputError):
        stats.kendall_tau_b([0, float("nan")], [0, 1])
    with pytest.raises(InputError):
        stats.weighted_kappa([0, 1], [0, 1], weights="cubic")
