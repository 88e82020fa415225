"""Kernels of trec_eval 10's measures that trec_eval 9 (and pytrec_eval) lack: ``yaap`` and ``ideal_dcg``.

Each takes ``(Metric, Judged)`` and returns one float64 value per query, like every id kernel
(:mod:`ragrade.kernels.metrics`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragrade.kernels.metrics import Judged, _weighted_precision

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric


def yaap(m: Metric, j: Judged) -> np.ndarray:
    """Robertson's "yet another AP" (ECIR 2012): ``log((1 + S) / (1 + R - S))``, S the sum of the precision at
    each relevant document retrieved (AP's numerator), as trec_eval 10 computes it."""
    s = _weighted_precision(m, j)
    return np.log((1.0 + s) / (1.0 + j.n_relevant(m.rel) - s))


def ideal_dcg(m: Metric, j: Judged) -> np.ndarray:
    """DCG of the ideal ranking (all positive gains of the ground truth, sorted), cut at k when given: the
    denominator of ``ndcg`` (trec_eval 10 ``ideal_dcg``)."""
    return np.asarray(j.ideal_dcg(m.get("rel"), m.get("gain"), m.k, m.get("gains")), dtype=np.float64)


def grade_at(m: Metric, j: Judged) -> np.ndarray:
    """The grade of the document at rank k (trec_eval 10's ``relstring``, character k): NaN when that document
    has no judgment or the list is shorter than k."""
    k = m.k
    assert k is not None
    q, pos, g, _ = j.judged_table()
    out = np.full(j.nq, np.nan, dtype=np.float64)
    at = pos == k - 1
    out[q[at]] = g[at]
    return out
