"""Validity of a test set against another: do two test sets — a synthetic one and a small human-labelled one —
rank the same systems alike? (docs/synthesize.md, "Validity"; ``ragrade agreement ... --candidate-run``.)

Each system is a pair of runs: one over the reference set's queries, one over the candidate set's. Every run
is evaluated on its own set (:func:`ragrade.evaluate`, so span truth with ``chunks=`` / ``corpus=`` works
as everywhere); each system's mean under the two sets gives two rankings, compared with the measures of
:func:`ragrade.assessment.metaeval.system_measures` (Kendall's tau-b, Spearman, Pearson, tau_AP with the
reference as truth, tau_AP,b, tau_GAP, Kendall's tau over the reference's top ``k``) and the **top-k
overlap**: the share of the reference's ``k`` best systems that are among the candidate's ``k`` best.

Confidence intervals: a percentile bootstrap that draws the queries of the two sets **independently** (they
are different queries): resample ``r`` draws ``rng.integers(0, Q, size=Q)`` for the reference's ``Q``
queries, then for the candidate's, from ``numpy.random.default_rng(seed)``; each system's two means are
recomputed on the drawn queries (a query a run does not score is left out of its mean), then the measures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragrade.assessment import metaeval
from ragrade.errors import InputError

MEASURES = (*metaeval.SYSTEM_MEASURES, "top_k_overlap")


def top_k_overlap(reference: np.ndarray, candidate: np.ndarray, k: int, names: Sequence[str]) -> float:
    """The share of the reference's ``k`` best items (ties by name) among the candidate's ``k`` best."""
    kk = min(int(k), len(reference))
    if kk < 1:
        return math.nan
    a = set(metaeval.top_k(reference, kk, names).tolist())
    b = set(metaeval.top_k(candidate, kk, names).tolist())
    return len(a & b) / kk


def measures(reference: np.ndarray, candidate: np.ndarray, names: Sequence[str], k: int) -> dict[str, float]:
    out = metaeval.system_measures(reference, candidate, names, k)
    out["top_k_overlap"] = top_k_overlap(reference, candidate, k, names)
    return out


@dataclass(frozen=True)
class SetAgreement:
    """One metric: the systems' means under both sets, the rank measures and their intervals."""

    metric: str
    systems: tuple[str, ...]
    reference_means: tuple[float, ...]
    candidate_means: tuple[float, ...]
    values: Mapping[str, float]
    intervals: Mapping[str, tuple[float | None, float | None]]
    k: int
    queries: tuple[int, int]
    level: float = 0.95
    extra: Mapping[str, Any] = field(default_factory=dict)

    def ranks(self) -> dict[str, tuple[int, int]]:
        """System -> (rank under the reference, rank under the candidate), 1 = best, ties by name."""
        ref = np.asarray(self.reference_means)
        cand = np.asarray(self.candidate_means)
        out: dict[str, list[int]] = {s: [0, 0] for s in self.systems}
        for j, v in enumerate((ref, cand)):
            for r, i in enumerate(metaeval.top_k(v, len(v), self.systems).tolist(), 1):
                out[self.systems[i]][j] = r
        return {s: (a, b) for s, (a, b) in out.items()}

    def to_dict(self) -> dict[str, Any]:
        def num(v: float) -> float | None:
            return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

        return {"metric": self.metric, "k": self.k, "level": self.level,
                "queries": {"reference": self.queries[0], "candidate": self.queries[1]},
                "systems": {s: {"reference": num(a), "candidate": num(b), "ranks": list(self.ranks()[s])}
                            for s, a, b in zip(self.systems, self.reference_means, self.candidate_means, strict=True)},
                **{m: num(self.values[m]) for m in MEASURES},
                **{f"{m}_ci": list(self.intervals[m]) for m in MEASURES}}


def _matrix(results: Mapping[str, Any], label: str, systems: Sequence[str]) -> np.ndarray:
    """(queries, systems) per-query values, queries the union over the runs (NaN where a run has none)."""
    import pandas as pd

    index = pd.Index([], dtype=object)
    for s in systems:
        index = index.append(pd.Index([str(q) for q in results[s].per_query.index]).difference(index, sort=False))
    cols = []
    for s in systems:
        col = results[s].per_query[results[s].label_of(label)]
        cols.append(pd.Series(col.to_numpy(dtype=np.float64), index=[str(q) for q in col.index]).reindex(index))
    return np.column_stack([c.to_numpy(dtype=np.float64) for c in cols]) if cols else np.empty((0, 0))


def _means(values: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    ok = np.isfinite(values)
    w = np.ones(values.shape[0]) if counts is None else counts
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(w @ np.where(ok, values, 0.0) / (w @ ok))


def bootstrap(ref: np.ndarray, cand: np.ndarray, names: Sequence[str], k: int, n_resamples: int, level: float,
              seed: int | None) -> dict[str, tuple[float | None, float | None]]:
    """Percentile intervals of every measure, the two sets' queries drawn independently."""
    rng = np.random.default_rng(seed)
    draws = {m: np.full(n_resamples, np.nan) for m in MEASURES}
    qr, qc = ref.shape[0], cand.shape[0]
    for r in range(n_resamples):
        wr = np.bincount(rng.integers(0, qr, size=qr), minlength=qr).astype(np.float64)
        wc = np.bincount(rng.integers(0, qc, size=qc), minlength=qc).astype(np.float64)
        mr, mc = _means(ref, wr), _means(cand, wc)
        good = np.isfinite(mr) & np.isfinite(mc)
        if good.sum() < 2:
            continue
        kept = [n for n, g in zip(names, good, strict=True) if g]
        for m, v in measures(mr[good], mc[good], kept, k).items():
            draws[m][r] = v
    out: dict[str, tuple[float | None, float | None]] = {}
    for m, drawn in draws.items():
        finite = drawn[np.isfinite(drawn)]
        if not len(finite):
            out[m] = (None, None)
            continue
        q = np.quantile(finite, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
        out[m] = (float(q[0]), float(q[1]))
    return out


def set_agreement(reference: Any, reference_runs: Mapping[str, Any], candidate: Any,
                      candidate_runs: Mapping[str, Any], metrics: Sequence[str] | str = ("ndcg@10",), *,
                      top_k: int = metaeval.DEFAULT_TOP_K, n_resamples: int = 1000, alpha: float = 0.05,
                      seed: int | None = 0, reference_options: Mapping[str, Any] | None = None,
                      candidate_options: Mapping[str, Any] | None = None) -> dict[str, SetAgreement]:
    """Metric -> :class:`SetAgreement` of the system rankings two test sets give (see the module docstring).
    ``reference_runs`` and ``candidate_runs``: system name -> run, the same names in both.
    ``*_options``: keywords of :func:`ragrade.evaluate` for each set (e.g. ``chunks=``, ``corpus=``)."""
    from ragrade.evaluation import evaluate

    names = list(reference_runs)
    if sorted(names) != sorted(candidate_runs):
        raise InputError("the two sets must have runs of the same systems", value=(names, list(candidate_runs)))
    if len(names) < 2:
        raise InputError("ranking systems needs at least two of them", value=names)
    mlist = [metrics] if isinstance(metrics, str) else list(metrics)
    ref_results = {s: evaluate(reference, reference_runs[s], mlist, **dict(reference_options or {})) for s in names}
    cand_results = {s: evaluate(candidate, candidate_runs[s], mlist, **dict(candidate_options or {})) for s in names}
    level = 1.0 - float(alpha)
    out = {}
    for label in mlist:
        ref, cand = _matrix(ref_results, label, names), _matrix(cand_results, label, names)
        mr, mc = _means(ref), _means(cand)
        good = [i for i in range(len(names)) if math.isfinite(mr[i]) and math.isfinite(mc[i])]
        kept = [names[i] for i in good]
        values = measures(mr[good], mc[good], kept, top_k) if len(good) >= 2 else dict.fromkeys(MEASURES, math.nan)
        ci = bootstrap(ref[:, good], cand[:, good], kept, top_k, n_resamples, level, seed)
        out[label] = SetAgreement(label, tuple(kept), tuple(mr[good].tolist()), tuple(mc[good].tolist()), values, ci,
                                  int(top_k), (ref.shape[0], cand.shape[0]), level)
    return out


__all__ = ["MEASURES", "SetAgreement", "bootstrap", "measures", "set_agreement", "top_k_overlap"]
