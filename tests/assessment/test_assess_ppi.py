"""Prediction-powered inference: coverage by simulation with a biased simulated assessor.

A population of 20,000 synthetic queries, each with 20 retrieved documents graded 0-3 by "humans"; a
simulated LLM assessor re-grades them with a bias towards higher grades. The per-query metric is
ragrade's nDCG@10 under each set of labels. Each trial draws 200 labelled and 2,000 unlabelled queries
(with replacement, so draws are independent from the population's distribution) and checks whether the
95% interval covers the population's true mean (nDCG@10 under human labels).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ragrade
from ragrade.assessment import classical_mean, ppi_mean

POPULATION = 20_000
TRIALS = 1_000
N_LABELED = 200
N_UNLABELED = 2_000


def _population(seed: int = 2023) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    depth = 20
    qids = np.repeat([f"q{i}" for i in range(POPULATION)], depth)
    docs = np.tile([f"d{j}" for j in range(depth)], POPULATION)
    ranks = np.tile(np.arange(depth), POPULATION)
    # relevant documents are likelier near the top; query difficulty varies
    difficulty = np.repeat(rng.beta(2, 2, POPULATION), depth)
    p_rel = np.clip(0.7 * (1 - difficulty) * np.exp(-ranks / 8), 0, 1)
    human = np.where(rng.random(len(qids)) < p_rel, rng.choice([1, 2, 3], len(qids), p=[0.5, 0.3, 0.2]), 0)
    # the biased assessor: grades up often, down rarely
    up = rng.random(len(qids))
    llm = human.copy()
    llm[(human == 0) & (up < 0.20)] = 1
    llm[(human == 0) & (up < 0.05)] = 2
    llm[(human == 1) & (up < 0.35)] = 2
    llm[(human == 2) & (up < 0.25)] = 3
    llm[(human == 3) & (up > 0.90)] = 2
    scores = -ranks.astype(float)
    run = ragrade.Run.from_columns(qids, docs, scores)
    out = []
    for grades in (human, llm):
        qrels = ragrade.Qrels.from_columns(qids, docs, grades.astype(float))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ragrade.RagradeWarning)  # a few queries have no relevant document
            r = ragrade.evaluate(qrels, run, ["ndcg@10"], no_relevant="zero")
        out.append(r.per_query["ndcg@10"].to_numpy(dtype=np.float64))
    return out[0], out[1]


@pytest.fixture(scope="module")
def population() -> tuple[np.ndarray, np.ndarray]:
    return _population()


def _coverage(y: np.ndarray, f: np.ndarray, lam: float | str = 1.0) -> dict[str, float]:
    rng = np.random.default_rng(11)
    truth = float(y.mean())
    cover = {"ppi": 0, "naive": 0, "human": 0}
    width = {"ppi": 0.0, "naive": 0.0, "human": 0.0}
    for _ in range(TRIALS):
        lab = rng.integers(0, len(y), N_LABELED)
        unl = rng.integers(0, len(y), N_UNLABELED)
        intervals = {
            "ppi": ppi_mean(y[lab], f[lab], f[unl], lam=lam),
            "naive": classical_mean(np.concatenate([f[lab], f[unl]])),
            "human": classical_mean(y[lab]),
        }
        for k, ci in intervals.items():
            cover[k] += ci.covers(truth)
            width[k] += ci.width
    return {**{f"{k}_coverage": v / TRIALS for k, v in cover.items()},
            **{f"{k}_width": v / TRIALS for k, v in width.items()}, "bias": float(f.mean() - truth)}


def test_ppi_interval_covers_the_true_mean_and_the_naive_one_does_not(population, capsys):
    y, f = population
    res = _coverage(y, f)
    with capsys.disabled():
        print("\nPPI simulation (1,000 trials, 200 labelled + 2,000 unlabelled queries, nDCG@10): "
              + ", ".join(f"{k} {v:.4f}" for k, v in res.items()))
    assert res["bias"] > 0.02  # the simulated assessor is clearly biased
    assert res["ppi_coverage"] >= 0.94
    assert res["naive_coverage"] < 0.5
    assert res["human_coverage"] >= 0.93
    assert res["ppi_width"] < res["human_width"]  # the assessor's labels do help


def test_power_tuned_ppi_also_covers(population):
    y, f = population
    res = _coverage(y, f, lam="auto")
    assert res["ppi_coverage"] >= 0.935


def test_ppi_point_estimate_is_the_rectified_mean():
    y = np.array([0.2, 0.4, 0.9])
    fl = np.array([0.5, 0.5, 1.0])
    fu = np.array([0.6, 0.8, 1.0, 0.4])
    r = ppi_mean(y, fl, fu)
    assert r.estimate == pytest.approx(fu.mean() + (y - fl).mean())
    se = math.sqrt(np.var(fu, ddof=1) / 4 + np.var(y - fl, ddof=1) / 3)
    assert r.high - r.estimate == pytest.approx(1.959963984540054 * se)


def test_ppi_rejects_bad_input():
    from ragrade.errors import InputError

    with pytest.raises(InputError):
        ppi_mean([1.0], [1.0], [1.0, 0.0])
    with pytest.raises(InputError):
        ppi_mean([1.0, 0.0], [1.0], [1.0, 0.0])
    with pytest.raises(InputError):
        ppi_mean([1.0, float("nan")], [1.0, 0.0], [1.0, 0.0])
    with pytest.raises(InputError):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0, 0.0], lam=2)
