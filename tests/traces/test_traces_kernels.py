"""The trajectory kernels (ragrade.kernels.trajectory) equal slow references written from the definitions
(docs/traces.md, "Measures") on hand-made trajectories (calls that return nothing, a document returned by
three calls, trajectories of one call) and on random ones; and the hand-computed examples of the docs."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import trajectory_reference as ref
from hypothesis import given
from hypothesis import strategies as st

from ragrade.kernels import trajectory as kernels
from ragrade.metrics import parse_metric
from reference import PROPERTY_SETTINGS

HAND: list[ref.Case] = [
    # three calls, the second returned nothing, d2 returned by all three other... calls 1 and 3
    ([["d1", "d2"], [], ["d2", "d3", "d1"]], {"d1": (1, "d1"), "d3": (2, "d3"), "d9": (1, "d9")}),
    # a document returned by three calls
    ([["d5", "d6"], ["d6"], ["d7", "d6"]], {"d6": (1, "d6"), "d7": (0, "d7")}),
    # one call (a session of one turn)
    ([["d1", "d2", "d3"]], {"d3": (3, "d3")}),
    # one call that returned nothing
    ([[]], {"d1": (1, "d1")}),
    # no relevant judgment: recall and hops undefined
    ([["d1"], ["d2"]], {"d1": (0, "d1")}),
    # two hops, each a group of two equivalent documents; only hop a is found
    ([["x", "a1"], ["a2", "y"]], {"a1": (1, "a"), "a2": (1, "a"), "b1": (1, "b"), "b2": (2, "b")}),
    # both hops found, by different calls
    ([["b2"], ["y", "a2"]], {"a1": (1, "a"), "a2": (1, "a"), "b1": (1, "b"), "b2": (2, "b")}),
    # the same document twice in one list, and again later
    ([["d1", "d1", "d2"], ["d1"]], {"d1": (2, "d1"), "d2": (1, "d2")}),
]

REFERENCES = {
    "trajectory_recall": lambda c, m: ref.trajectory_recall(c, m.k, m.rel),
    "hop_success": lambda c, m: ref.hop_success(c, m.k, m.rel),
    "calls_to_first_relevant": lambda c, m: ref.calls_to_first_relevant(c, m.k, m.rel),
    "redundancy": lambda c, m: ref.redundancy(c, m.k),
    "session_dcg": lambda c, m: ref.session_dcg(c, m.k, m.get("b"), m.get("bq")),
}

METRICS = ["trajectory_recall", "trajectory_recall@1", "trajectory_recall(rel=2)", "hop_success",
           "hop_success@1", "calls_to_first_relevant", "calls_to_first_relevant@1", "calls_to_first_relevant(rel=2)",
           "redundancy", "redundancy@1", "session_dcg", "session_dcg@2", "session_dcg(b=3,bq=2)@10"]


def _check(cases: list[ref.Case], text: str) -> None:
    m = parse_metric(text)
    got = getattr(kernels, m.name)(m, ref.build(cases))
    want = np.array([REFERENCES[m.name](c, m) for c in cases])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True, err_msg=text)


@pytest.mark.parametrize("text", METRICS)
def test_hand_made_trajectories_equal_the_reference(text: str) -> None:
    _check(HAND, text)


def _random_cases(seed: int, n: int) -> list[ref.Case]:
    rnd = random.Random(seed)
    docs = [f"d{i}" for i in range(12)]
    cases = []
    for _ in range(n):
        calls = [rnd.sample(docs, rnd.randint(0, 5)) for _ in range(rnd.randint(1, 5))]
        truth = {d: (rnd.choice([-1, 0, 1, 1, 2, 3]), rnd.choice("abcd")) for d in rnd.sample(docs, rnd.randint(0, 6))}
        cases.append((calls, truth))
    return cases


@pytest.mark.parametrize("text", METRICS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_trajectories_equal_the_reference(text: str, seed: int) -> None:
    _check(_random_cases(seed, 60), text)


def test_the_documented_example() -> None:
    """docs/traces.md, "Measures": the worked example, computed by hand there."""
    case = HAND[0]
    t = ref.build([case])

    def value(text: str) -> float:
        m = parse_metric(text)
        return float(getattr(kernels, m.name)(m, t)[0])

    assert value("trajectory_recall") == pytest.approx(2 / 3)
    assert value("calls_to_first_relevant") == 1.0
    assert value("redundancy") == pytest.approx(2 / 5)
    assert value("hop_success") == 0.0
    # d1 (grade 1) at call 1 rank 1; d3 (grade 2) at call 3 rank 2: 1 + 2 / (1 + log_4 3)
    assert value("session_dcg") == pytest.approx(1 + 2 / (1 + math.log(3, 4)))


def test_no_trajectory_and_no_row() -> None:
    empty = ref.build([])
    for text in METRICS:
        m = parse_metric(text)
        assert getattr(kernels, m.name)(m, empty).shape == (0,)


@given(st.integers(min_value=0, max_value=10_000))
@PROPERTY_SETTINGS
def test_invariants(seed: int) -> None:
    """Recall and hop success in [0, 1], non-decreasing in k; every hop found implies recall 1; the first
    relevant call is one of the calls; redundancy in [0, 1]; session DCG at most the sum of the gains."""
    cases = _random_cases(seed, 12)
    t = ref.build(cases)

    def run(text: str) -> np.ndarray:
        m = parse_metric(text)
        return getattr(kernels, m.name)(m, t)

    recall = [run(f"trajectory_recall@{k}") for k in (1, 2, 4, 8)]
    for low, high in itertools.pairwise(recall):
        assert np.all((low <= high) | np.isnan(low))
    assert np.all((recall[-1] >= 0) & (recall[-1] <= 1) | np.isnan(recall[-1]))
    hops = run("hop_success")
    assert np.all((hops != 1) | (run("trajectory_recall") == 1))
    first = run("calls_to_first_relevant")
    assert np.all(np.isnan(first) | ((first >= 1) & (first <= t.calls)))
    red = run("redundancy")
    assert np.all(np.isnan(red) | ((red >= 0) & (red <= 1)))
    sdcg = run("session_dcg")
    gains = [sum(max(g, 0) for g, _ in truth.values()) for _, truth in cases]
    assert np.all(np.isnan(sdcg) | (sdcg <= np.asarray(gains) + 1e-9))
