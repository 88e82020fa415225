"""Fuzzing the engine against the reference with hypothesis: small inputs (duplicates, ids equal to the
query id, empty lists, queries on one side only, fractional and negative grades), a random combination of
policies and every registry metric; on failure hypothesis shrinks to a minimal input."""

from __future__ import annotations

import warnings

from hypothesis import given
from hypothesis import strategies as st

import ragrade
from ragrade import RagradeWarning, Run
from ragrade.metrics import ID_FAMILIES
from ragrade.policies import Policies
from reference import PROPERTY_SETTINGS, assert_same, frame_to_dict, metric_variants, ref_evaluate

QIDS = ["q1", "q2", "q3"]
DOCS = ["a", "b", "c", "d9", "d10", "q1", "q2"]  # q1/q2 can equal their query id

METRICS = []
for d in ID_FAMILIES:
    for params in ("", "(rel=2)"):
        if params and not any(p.name == "rel" for p in d.params):
            continue
        METRICS += metric_variants(d, [None, 1, 3], [params])


@st.composite
def fuzz_cases(draw):
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True))
    grade = st.sampled_from([-1, 0, 0.5, 1, 2, 3])
    qrels = {q: draw(st.dictionaries(st.sampled_from(DOCS), grade, max_size=5)) for q in qids
             if draw(st.booleans()) or q == qids[0]}
    scored = draw(st.booleans())
    run = {}
    for q in qids:
        if draw(st.integers(0, 4)) == 0:
            continue  # missing from the run
        docs = draw(st.lists(st.sampled_from(DOCS), max_size=6))
        scores = [draw(st.sampled_from([0.0, 0.5, 1.0])) for _ in docs] if scored else [None] * len(docs)
        run[q] = list(zip(docs, scores, strict=True))
    choices = {k: [o for o in v if o != "error"] for k, v in Policies.choices().items()}
    policies = {k: draw(st.sampled_from(v)) for k, v in choices.items()}
    return qrels, run, scored, policies


@PROPERTY_SETTINGS
@given(fuzz_cases())
def test_engine_equals_reference_on_fuzzed_inputs(case):
    qrels, run, scored, policies = case
    if scored:
        rows = [(q, d, s) for q, r in run.items() for d, s in r]
        run_obj = Run.from_columns([x[0] for x in rows], [x[1] for x in rows], [x[2] for x in rows])
        ref_run = {q: r for q, r in run.items() if r}  # an empty scored list has no row: missing
    else:
        run_obj = Run.from_lists([[d for d, _ in r] for r in run.values()], query_ids=list(run))
        ref_run = run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        got = frame_to_dict(ragrade.evaluate(qrels, run_obj, METRICS, **policies).per_query)
    assert_same(got, ref_evaluate(qrels, ref_run, METRICS, **policies))
