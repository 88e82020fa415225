"""The merge rules of scale/merge.py: for every id family of the registry (its ``aggregate`` declares the
rule), the pieces' aggregate states merged give the whole collection's means, and the per-query values
concatenated give its per-query values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scale_metrics import METRICS

import ragrade
from ragrade.metrics import parse_metric
from ragrade.scale import merge
from ragrade.scale.combine import combine
from reference import random_case

# Values that read the top grade of the whole ground truth (C/W/L measures without max_rel) are told it
# by pinning (scale/outofcore.py: pin_collection, tested in test_outofcore.py); here the merge rules alone.
PIECEWISE = [m for m in METRICS if not (parse_metric(m).family.param("max_rel") is not None
                                        and parse_metric(m).get("max_rel") is None)]


def test_every_aggregate_kind_has_a_rule():
    merge.check_reductions()
    from ragrade.metrics import ID_FAMILIES

    assert {d.aggregate for d in ID_FAMILIES} <= set(merge.REDUCTIONS)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("pieces", [2, 5])
def test_merged_states_equal_the_whole(seed, pieces):
    case = random_case(np.random.default_rng(seed), n_queries=40)
    qrels, run = case.qrels, case.run
    queries = sorted(set(qrels) | set(run))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ragrade.evaluate(qrels, run, PIECEWISE, missing_qrels="ignore")
        parts = []
        for i in range(pieces):
            mine = set(queries[i::pieces])
            q = {k: v for k, v in qrels.items() if k in mine}
            r = {k: v for k, v in run.items() if k in mine}
            if q:
                parts.append(ragrade.evaluate(q, r, PIECEWISE, missing_qrels="ignore"))
    got = merge.merged_means([merge.piece_state(p) for p in parts], whole.metrics)
    want = whole.means
    assert set(got) == set(want)
    for label, value in want.items():
        assert got[label] == pytest.approx(value, rel=1e-12, abs=1e-12, nan_ok=True), label
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joined = combine(parts, warn=False)
    assert joined.per_query.sort_index().equals(whole.per_query.sort_index())


def test_sum_and_gmean_rules():
    v = np.array([0.5, np.nan, 0.0, 2.0])
    assert merge.REDUCTIONS["sum"].value(merge.REDUCTIONS["sum"].state(v)) == 2.5
    g = merge.REDUCTIONS["gmean"]
    a, b = g.state(v[:2]), g.state(v[2:])
    assert g.value(g.merge([a, b])) == pytest.approx(float(np.exp(np.mean(np.log([0.5, 1e-5, 2.0])))), rel=1e-14)
    assert np.isnan(merge.REDUCTIONS["mean"].value((0.0, 0)))
