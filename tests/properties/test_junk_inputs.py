"""Random junk fed to every public entry point: each call either succeeds or raises a ``RagradeError``
subclass (warnings are ``RagradeWarning``s) — never a bare ``TypeError``, ``KeyError``, ``IndexError``...
(docs/architecture.md, "Invariants")."""

from __future__ import annotations

import contextlib
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragrade
from ragrade.errors import RagradeError, RagradeWarning

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 10**12), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6), st.binary(max_size=4), st.just(object()), st.just(np.int64(3)), st.just(np.nan),
    st.sampled_from(["d1", "q1", "", " ", "ndcg@10", "P@5", "@", "[]"]),
)
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3), st.none()), inner, max_size=3),
        st.sets(st.integers(0, 5), max_size=3),
    ),
    max_leaves=12,
)
metric_junk = st.one_of(junk, st.sampled_from(["ndcg@10", "recall@[1,5]", "P(rel=2)@3", "rr", "ap"]),
                        st.lists(st.sampled_from(["ndcg@10", "P@x", "map", "token_f1@2", "nope"]), max_size=3))
QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
RUN = {"q1": {"d1": 0.9, "d4": 0.5}, "q2": {"d3": 0.1}}


def _only_ragrade_errors(fn: Any, *args: Any, **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning that escapes must be a RagradeWarning (checked below)
        warnings.simplefilter("ignore", RagradeWarning)
        with contextlib.suppress(RagradeError):
            fn(*args, **kwargs)


@SETTINGS
@given(junk, junk, metric_junk)
def test_evaluate_with_junk(qrels, run, metrics):
    _only_ragrade_errors(ragrade.evaluate, qrels, run, metrics)


@SETTINGS
@given(junk, metric_junk)
def test_evaluate_with_a_good_side_and_junk(side, metrics):
    _only_ragrade_errors(ragrade.evaluate, QRELS, side, metrics)
    _only_ragrade_errors(ragrade.evaluate, side, RUN, metrics)
    _only_ragrade_errors(ragrade.evaluate, QRELS, RUN, metrics)


@SETTINGS
@given(junk, st.sampled_from(["autorag", "ragas", "remem", "llamaindex", "pytrec_eval", "beir", "ranx"]))
def test_profiles_with_junk(side, profile):
    _only_ragrade_errors(ragrade.evaluate, side, [["a"]], ["recall"], profile=profile)
    _only_ragrade_errors(ragrade.evaluate, [["a"]], side, ["recall"], profile=profile)


@SETTINGS
@given(junk)
def test_metric_parser_and_names_with_junk(value):
    _only_ragrade_errors(ragrade.parse_metrics, value)
    _only_ragrade_errors(ragrade.parse_metric, value)
    _only_ragrade_errors(ragrade.get_profile, value)
    _only_ragrade_errors(ragrade.get_matcher, value)
    _only_ragrade_errors(ragrade.Policies().update, ties=value)
    _only_ragrade_errors(ragrade.evaluate, QRELS, RUN, ["ndcg@10"], ties=value)
    _only_ragrade_errors(ragrade.evaluate, QRELS, RUN, ["ndcg@10"], profile=value)
    _only_ragrade_errors(ragrade.evaluate, QRELS, RUN, ["ndcg@10"], matcher=value)


@SETTINGS
@given(junk, junk)
def test_data_model_constructors_with_junk(a, b):
    _only_ragrade_errors(ragrade.Qrels.from_dict, a)
    _only_ragrade_errors(ragrade.Run.from_dict, a)
    _only_ragrade_errors(ragrade.Qrels.from_lists, a)
    _only_ragrade_errors(ragrade.Run.from_lists, a)
    _only_ragrade_errors(ragrade.Qrels.from_groups, a)
    _only_ragrade_errors(ragrade.Run.from_ranked, a)
    _only_ragrade_errors(ragrade.Qrels.from_columns, a, b)
    _only_ragrade_errors(ragrade.Run.from_columns, a, b)


@SETTINGS
@given(st.lists(st.tuples(scalars, scalars, scalars), max_size=5))
def test_dataframes_with_junk_cells(rows):
    frame = pd.DataFrame(rows, columns=["query", "doc", "score"])
    _only_ragrade_errors(ragrade.evaluate, frame.rename(columns={"score": "grade"}), frame, ["ndcg@10"])
    _only_ragrade_errors(ragrade.evaluate, QRELS, frame, ["ndcg@10"])


@SETTINGS
@given(junk, junk)
def test_conventions_and_compare_with_junk(a, b):
    _only_ragrade_errors(ragrade.conventions, a, b, ["ap"])
    _only_ragrade_errors(ragrade.compare, a, {"x": b}, ["ndcg@10"], n_resamples=20)


@SETTINGS
@given(junk)
def test_judges_with_junk(rows):
    from ragrade.judges import ScriptedJudge, evaluate_judged

    _only_ragrade_errors(evaluate_judged, rows, ["context_recall"], judge=ScriptedJudge({}), cache=False)


@pytest.mark.parametrize("path", ["/nonexistent/x.trec", "", ".", "x.unknownext"])
def test_readers_with_bad_paths(path):
    _only_ragrade_errors(ragrade.read_qrels, path)
    _only_ragrade_errors(ragrade.read_run, path)
    _only_ragrade_errors(ragrade.evaluate, path, path, ["ndcg@10"])


def test_the_harness_catches_a_bare_exception():
    def bad() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        _only_ragrade_errors(bad)
    assert math.isfinite(1.0)
