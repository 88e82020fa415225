"""The two join strategies (dict fast path and columnar Run path) give identical per-query values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ragrade
from ragrade import Run, _ingest
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


@pytest.mark.parametrize("accel", [False] + ([True] if _ingest.has_accel() else []))
@pytest.mark.parametrize("bad", [
    {"q\x00": {"d0": 1.0}},  # a run query (judged for no query) holding a NUL
    {"q0": {"d0": 1.0, "d\x00": 0.5}},  # a run document holding a NUL
    {"q0": {"d0": True}},  # a boolean score
    {"q0": {"d0": 1.0, "d1": np.bool_(False)}},
])
def test_the_dict_path_leaves_what_the_id_rule_refuses_to_the_columnar_path(monkeypatch, accel, bad):
    """join_dict declines (None) what the id and value rules refuse, and the columnar path then names it: the
    same error as building the Run directly, with and without the C helper."""
    from ragrade.engine.core import Evaluator
    from ragrade.engine.join import join_dict

    if not accel:
        monkeypatch.setattr(_ingest, "_accel", None)
    qrels = {"q0": {"d0": 1, "d1": 0}}
    run = {"q0": {"d0": 2.0, "d1": 1.0}} | bad if "q0" not in bad else bad
    evaluator = Evaluator(ragrade.Qrels.from_dict(qrels), ["ndcg@10"])
    assert join_dict(evaluator.index, run, evaluator.policies) is None
    with pytest.raises(ragrade.InputError) as direct:
        Run.from_dict(run)
    with pytest.raises(ragrade.InputError) as through:
        ragrade.evaluate(qrels, run, ["ndcg@10"])
    assert str(through.value) == str(direct.value)
    assert "NUL character" in str(direct.value) or "is a boolean, not a number" in str(direct.value)
