"""The two join strategies (dict fast path and columnar Run path) give identical per-query values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ragrade
from ragrade import Run
from ragrade.metrics import ID_FAMILIES

METRICS = [f"{d.name}@{k}" for d in ID_FAMILIES if d.cutoff != "none" for k in (1, 3, 10)] + [
    "r_precision", "rr", "ap", "ndcg", "precision(rel=2)@5", "ndcg(gain=exp)@5", "ndcg(rel=2)@5",
]


def random_case(seed: int, shuffle: bool):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(40):
        docs = [f"d{i}" for i in rng.choice(60, size=int(rng.integers(1, 12)), replace=False)]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs}
    for q in range(5, 45):  # some queries only on one side
        n = int(rng.integers(0, 25))
        docs = [f"d{i}" for i in rng.choice(60, size=n, replace=False)]
        scores = (rng.integers(0, 6, size=n) / 4.0).tolist()  # many ties
        items = sorted(zip(docs, scores, strict=True), key=lambda x: -x[1])
        if shuffle:
            rng.shuffle(items)
        run[f"q{q}"] = dict(items)
    return qrels, run


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("ties", ["docid_desc", "docid_asc"])
def test_dict_path_equals_columnar_path(seed, shuffle, ties):
    qrels, run = random_case(seed, shuffle)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ragrade.RagradeWarning)
        fast = ragrade.evaluate(qrels, run, METRICS, ties=ties)
        slow = ragrade.evaluate(qrels, Run.from_dict(run), METRICS, ties=ties)
    assert fast.per_query.shape == slow.per_query.shape
    np.testing.assert_allclose(fast.per_query.to_numpy(), slow.per_query.to_numpy(), rtol=0, atol=1e-12)
    assert fast.summary.to_dict() == slow.summary.to_dict()
