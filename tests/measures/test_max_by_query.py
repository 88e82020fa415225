"""kernels.common.max_by_query (rbp's per-query top grade): equal to numpy's maximum.at for grouped and for
scattered rows, with the fill where a query has none or only smaller values."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.kernels.common import max_by_query


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.floats(-3, 5, allow_nan=False)), max_size=40), st.booleans(),
       st.sampled_from([-1.0, 0.0, 2.5]))
def test_equals_maximum_at(rows, grouped, fill):
    if grouped:
        rows = sorted(rows, key=lambda r: r[0])
    q = np.array([r[0] for r in rows], dtype=np.int64)
    w = np.array([r[1] for r in rows], dtype=np.float64)
    want = np.full(7, fill)
    np.maximum.at(want, q, w)
    assert np.array_equal(max_by_query(q, w, 7, fill), want)
