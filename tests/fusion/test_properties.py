"""Properties of ragrade.fuse: equal to ranx on arbitrary small runs (hypothesis), inputs not mutated,
framework profiles' documents are the union of the inputs."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

import ragrade

from ._gen import compare, need

ranx = need("ranx", "ranx is in the test extra")

# ids of one length: ranx types the ids of every run by the first run's longest id and truncates longer
# ones in a fusion (two ids may merge), a bug ragrade does not reproduce (docs/fusion.md)
_docs = st.dictionaries(st.sampled_from([f"d{i:02d}" for i in range(12)]), st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]),
                        min_size=1, max_size=12)
_run = st.fixed_dictionaries({"q1": _docs, "q2": _docs})


@settings(max_examples=40, deadline=None)
@given(st.lists(_run, min_size=2, max_size=4), st.sampled_from(["sum", "rrf", "mnz", "med", "isr", "rbc"]),
       st.sampled_from(["min-max", "rank", "zmuv", None]))
def test_equals_ranx(runs, method, norm) -> None:
    params = {"phi": 0.7} if method == "rbc" else {}
    before = copy.deepcopy(runs)
    ref = ranx.fuse([ranx.Run(r) for r in runs], method=method, norm=norm, params=params)
    ours = ragrade.fuse(runs, method=method, norm=norm, params=params)
    bad, worst, n = compare(ref, ours)
    assert bad == 0 and worst <= 1e-12 and n > 0
    assert runs == before


@settings(max_examples=30, deadline=None)
@given(st.lists(_run, min_size=2, max_size=3), st.sampled_from(["langchain", "qdrant", "pyserini", "trectools"]))
def test_framework_profiles_keep_every_document(runs, profile) -> None:
    fused = ragrade.fuse(runs, method="rrf", profile=profile)
    for q in ("q1", "q2"):
        assert set(fused.docs_of(q)) == set().union(*(r[q] for r in runs))
        scores = [s for _, s in fused.ranked(q, ties="input")]
        assert scores == sorted(scores, reverse=True)
