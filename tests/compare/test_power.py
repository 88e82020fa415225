"""Power and test-set size (``ragrade.plan``, ``ragrade plan``, the MDE column of ``compare``), checked
against statsmodels' ``TTestPower`` and ``FTestAnovaPower`` (test dependency)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.comparison import power as P
from ragrade.errors import InputError

smp = pytest.importorskip("statsmodels.stats.power", reason="statsmodels is a test dependency (test extra)")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS, BM25, DENSE = (str(EXAMPLES / f) for f in ("qrels.tsv", "run.tsv", "run_dense.tsv"))

EFFECTS = [0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.8, 1.2]
LEVELS = [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5), (0.05, 0.95)]


@pytest.mark.parametrize(("alpha", "target"), LEVELS)
def test_ttest_queries_needed_and_power_equal_statsmodels(alpha: float, target: float) -> None:
    sm = smp.TTestPower()
    for e in EFFECTS:
        n = P.ttest_queries_needed(e, target, alpha)
        expected = max(2, math.ceil(sm.solve_power(effect_size=e, power=target, alpha=alpha)))
        assert n == expected, (e, alpha, target)
        assert P.ttest_power(e, n, alpha) >= target > P.ttest_power(e, n - 1, alpha) if n > 2 else True
        for nobs in (5, 17, 34, 120, 1000):
            ref = sm.power(e, nobs, alpha)
            if math.isnan(ref):  # SciPy's noncentral t gives NaN in far tails; statsmodels passes it on
                continue
            assert P.ttest_power(e, nobs, alpha) == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize(("alpha", "target"), LEVELS)
def test_ttest_mde_is_the_exact_root_and_matches_statsmodels(alpha: float, target: float) -> None:
    sm = smp.TTestPower()
    for n in (5, 10, 34, 100, 500, 5000):
        e = P.ttest_mde(n, target, alpha)
        assert P.ttest_power(e, n, alpha) == pytest.approx(target, abs=1e-12)
        # statsmodels' solver stops at a tolerance of about 1e-5 in the effect size
        assert e == pytest.approx(sm.solve_power(nobs=n, power=target, alpha=alpha), abs=2e-5)
        assert sm.power(e, n, alpha) == pytest.approx(target, abs=1e-12)


@pytest.mark.parametrize("runs", [3, 5, 10])
def test_anova_matches_statsmodels(runs: int) -> None:
    sm = smp.FTestAnovaPower()
    variance = 0.09
    for d_range in (0.02, 0.05, 0.1, 0.2):
        f = d_range / math.sqrt(2 * runs * variance)
        n = P.anova_queries_needed(d_range, variance, runs, 0.8, 0.05)
        nobs = sm.solve_power(effect_size=f, nobs=None, alpha=0.05, power=0.8, k_groups=runs)
        assert n == max(2, math.ceil(nobs / runs)), (runs, d_range)
        for q in (10, 50, 300):
            assert P.anova_power(d_range, variance, runs, q, 0.05) == pytest.approx(
                sm.power(f, runs * q, 0.05, runs), abs=1e-12)
    for q in (10, 50, 300):
        mde = P.anova_mde(variance, runs, q, 0.8, 0.05)
        assert P.anova_power(mde, variance, runs, q, 0.05) == pytest.approx(0.8, abs=1e-12)
        # statsmodels' own power function at our root is the target (its solver is not precise enough
        # here, and fails for some sizes)
        f = mde / math.sqrt(2 * runs * variance)
        assert sm.power(f, runs * q, 0.05, runs) == pytest.approx(0.8, abs=1e-12)


def test_noncentral_t_tail_where_scipy_gives_nan() -> None:
    # scipy.stats.nct.cdf returns NaN far in the lower tail at few degrees of freedom; the power is still
    # defined (statsmodels returns NaN there).
    value = P.ttest_power(4.0, 4, 0.05)
    assert 0.99 < value < 1.0
    assert P.ttest_mde(3, 0.8, 0.05) > 0


def _per_query() -> dict[str, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {n: ragrade.evaluate(QRELS, f, ["ndcg@10"]).per_query["ndcg@10"].to_numpy()
               for n, f in (("bm25", BM25), ("dense", DENSE))}
    keep = ~(np.isnan(out["bm25"]) | np.isnan(out["dense"]))
    return {k: v[keep] for k, v in out.items()}


def test_plan_two_runs_on_the_examples() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = ragrade.plan(QRELS, {"bm25": BM25, "dense": DENSE}, ["ndcg@10", "recall@5"], delta=0.05)
    x = _per_query()
    d = x["dense"] - x["bm25"]
    row = plan.metrics["ndcg@10"]
    assert row["queries"] == len(d) == 34
    assert row["sd_diff"] == pytest.approx(d.std(ddof=1), rel=1e-12)
    e = 0.05 / d.std(ddof=1)
    assert row["queries_needed"] == math.ceil(smp.TTestPower().solve_power(effect_size=e, power=0.8, alpha=0.05))
    assert row["power"] == pytest.approx(smp.TTestPower().power(e, 34, 0.05), abs=1e-12)
    assert row["mde"] == pytest.approx(P.ttest_mde(34) * d.std(ddof=1), rel=1e-12)
    data = json.loads(plan.to_json())
    assert {"queries", "sd_diff", "queries_needed", "mde", "power"} <= set(data["metrics"]["ndcg@10"])
    assert data["alpha"] == 0.05 and data["target_power"] == 0.8
    assert "queries needed" in plan.to_markdown()


def test_plan_more_runs_uses_the_pooled_within_variance() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = ragrade.plan(QRELS, [BM25, DENSE, BM25], "ndcg@10", delta=0.05, power=0.9, alpha=0.01)
    x = _per_query()
    var = np.mean([x["bm25"].var(ddof=1), x["dense"].var(ddof=1), x["bm25"].var(ddof=1)])
    row = plan.metrics["ndcg@10"]
    assert row["test"] == "anova" and row["runs"] == 3
    assert row["within_variance"] == pytest.approx(var, rel=1e-12)
    f = 0.05 / math.sqrt(2 * 3 * var)
    nobs = smp.FTestAnovaPower().solve_power(effect_size=f, alpha=0.01, power=0.9, k_groups=3)
    assert row["queries_needed"] == math.ceil(nobs / 3)
    assert row["power"] == pytest.approx(smp.FTestAnovaPower().power(f, 3 * 34, 0.01, 3), abs=1e-12)


def test_plan_bad_input() -> None:
    scores = {"a": {"m": {"q1": 0.1, "q2": 0.5}}, "b": {"m": {"q1": 0.2, "q2": 0.4}}}
    from ragrade.comparison.planning import plan_scores

    with pytest.raises(InputError, match="delta"):
        plan_scores(scores, delta=0.0)
    with pytest.raises(InputError, match="power"):
        P.ttest_queries_needed(0.5, power=0.04, alpha=0.05)

    with pytest.raises(InputError, match="fewer than two"):
        plan_scores({"a": {"m": {"q1": 0.1}}, "b": {"m": {"q1": 0.2}}}, delta=0.1)
    same = plan_scores({"a": {"m": {"q1": 0.1, "q2": 0.2}}, "b": {"m": {"q1": 0.2, "q2": 0.3}}}, delta=0.1)
    assert same.metrics["m"]["queries_needed"] == 2 and same.metrics["m"]["mde"] == 0.0
    assert same.notes


def test_plan_cli() -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["plan", QRELS, BM25, DENSE, "-m", "ndcg@10", "--delta", "0.02", "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    row = data["metrics"]["ndcg@10"]
    assert row["queries"] == 34 and row["queries_needed"] > 1000 and row["power"] < 0.1
    out = runner.invoke(main, ["plan", QRELS, BM25, DENSE, "-m", "ndcg@10", "--delta", "0"])
    assert out.exit_code == 2
    out = runner.invoke(main, ["plan", QRELS, BM25, DENSE, "-m", "ndcg@10", "--delta", "0.1", "--power", "0.01"])
    assert out.exit_code == 2 and "--power" in out.output
    out = runner.invoke(main, ["plan", QRELS, BM25, DENSE, "-m", "ndcg@1O", "--delta", "0.1"])
    assert out.exit_code == 2 and "error:" in out.output and "Traceback" not in out.output
    out = runner.invoke(main, ["plan", QRELS, BM25, DENSE, "-m", "ndcg@10", "--delta", "0.1", "--format", "markdown"])
    assert out.exit_code == 0 and "| ndcg@10 | 34 |" in out.stdout


def test_compare_states_the_mde_of_every_pair() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = ragrade.compare(QRELS, {"bm25": BM25, "dense": DENSE}, ["ndcg@10"], test="t", alpha=0.05)
    x = _per_query()
    sd = (x["dense"] - x["bm25"]).std(ddof=1)
    row = cmp.pair("ndcg@10", "bm25", "dense")
    assert row["mde"] == pytest.approx(sm_mde := P.ttest_mde(34, 0.8, 0.05) * sd, rel=1e-12)
    assert sm_mde == pytest.approx(smp.TTestPower().solve_power(nobs=34, power=0.8, alpha=0.05) * sd, abs=1e-5)
    assert "| MDE |" in cmp.to_markdown() and f"{row['mde']:.4f}" in cmp.to_markdown()
    assert json.loads(cmp.to_json())["pairs"][0]["mde"] == pytest.approx(row["mde"])
    assert "mde" in json.loads(cmp.to_json())
