"""Parity with Spark MLlib's ``RankingMetrics`` (pyspark.mllib.evaluation) on random binary cases.

Spark's ``meanAveragePrecisionAt(k)`` divides each query's precision sum by min(k, |relevant|): it is the mean
of ragrade's ``capped_ap@k``. Its other measures are ragrade's default ones: ``meanAveragePrecision`` is
``ap`` (over the whole list), ``precisionAt(k)`` divides by k, ``recallAt(k)`` by |relevant|, ``ndcgAt(k)``
is binary nDCG with the ideal cut at k. Spark gives 0 to a query without predictions (ragrade's default
``missing_run="zero"``); every query here has a relevant document, so both average over the same queries.
Spark counts a document listed twice twice, so the lists have no duplicates and distinct scores (no ties).

One local[2] session for the module (as tests/scale/test_spark.py), skipped only where Java is missing.
"""

from __future__ import annotations

import os
import shutil
import warnings

import numpy as np
import pytest

import ragrade

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")]

K = (1, 2, 3, 5, 10, 20)


@pytest.fixture(scope="module")
def spark():
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (home and os.path.exists(os.path.join(home, "bin", "java"))):
        if os.environ.get("RAGRADE_REQUIRE_SPARK"):
            pytest.fail("RAGRADE_REQUIRE_SPARK is set but no Java runtime was found")
        pytest.skip("Spark needs a Java runtime (.ci/run installs openjdk-17-jre-headless)")
    from ragrade.scale import spark as rs

    session = rs.session("local[2]", "ragrade-parity")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def binary_case(seed: int, n_queries: int = 60) -> tuple[dict, dict, list]:
    """Qrels (1..12 relevant documents per query), a run of distinct documents with distinct scores (some
    queries missing from it, some lists longer than every cutoff), and the same as Spark's (ranked
    predictions, relevant set) pairs."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(40)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    pairs = []
    for qi in range(n_queries):
        q = f"q{qi}"
        relevant = [str(d) for d in rng.choice(pool, size=int(rng.integers(1, 13)), replace=False)]
        qrels[q] = {d: 1 for d in relevant}
        n = 0 if rng.random() < 0.1 else int(rng.integers(1, 31))
        ranked = [str(d) for d in rng.choice(pool, size=n, replace=False)]
        if ranked:
            run[q] = {d: float(n - i) for i, d in enumerate(ranked)}
        pairs.append((ranked, relevant))
    return qrels, run, pairs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spark_ranking_metrics_equal_ragrade(spark, seed):
    from pyspark.mllib.evaluation import RankingMetrics

    qrels, run, pairs = binary_case(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pyspark's SQLContext deprecation
        sm = RankingMetrics(spark.sparkContext.parallelize(pairs, 3))
        want: dict[str, float] = {"ap": sm.meanAveragePrecision}
        for k in K:
            want[f"capped_ap@{k}"] = sm.meanAveragePrecisionAt(k)
            want[f"precision@{k}"] = sm.precisionAt(k)
            want[f"recall@{k}"] = sm.recallAt(k)
            want[f"ndcg@{k}"] = sm.ndcgAt(k)
    got = ragrade.evaluate(qrels, run, list(want)).means
    assert len(want) == 1 + 4 * len(K)
    for label, value in want.items():
        assert abs(got[label] - value) <= 1e-12, (label, got[label], value)
    # capped_ap differs from ap@k exactly where a query has more than k relevant documents
    assert got["capped_ap@3"] > ragrade.evaluate(qrels, run, ["ap@3"]).means["ap@3"]
