"""Calibration of an assessor against reference (human) labels: label agreement on the pairs both judged,
and, given runs, agreement of the system rankings the two sets of qrels produce.

:func:`agreement` returns an :class:`Agreement`; ``to_dict()`` is the JSON of ``ragrade agreement
--format json``. Statistics are defined in :mod:`ragrade.assessment.stats`.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.assessment import metaeval, stats
from ragrade.assessment.ppi import MeanInterval, classical_mean, ppi_mean
from ragrade.data import Qrels, Run
from ragrade.errors import InputError, RagradeWarning
from ragrade.options import public


def _num(v: float) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _plain(value: Any) -> Any:
    """``value`` with NaN floats as ``None`` (JSON-ready), recursively through dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float | np.floating):
        return _num(float(value))
    return value


def _grade(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


@dataclass
class SystemAgreement:
    """Agreement of the system rankings under one metric."""

    metric: str
    means: dict[str, tuple[float, float]]  # run -> (reference mean, candidate mean)
    kendall_tau: float
    tau_ap: float
    spearman: float
    same_top: bool
    top: tuple[str, str]  # best run under the reference, under the candidate
    largest_change: tuple[str, int, int]  # run, reference rank, candidate rank (1 = best)
    ties: int  # tied pairs of runs (either side), ordered by name for tau_ap
    #: Meta-evaluation measures and bootstrap intervals (:func:`ragrade.assessment.metaeval.system_report`).
    extra: dict[str, Any] = field(default_factory=dict)

    def ranks(self) -> dict[str, tuple[int, int]]:
        names = list(self.means)
        ref = np.array([self.means[r][0] for r in names])
        cand = np.array([self.means[r][1] for r in names])
        rr = np.empty(len(names), dtype=int)
        rc = np.empty(len(names), dtype=int)
        rr[stats.order_by_score(ref, names)] = np.arange(1, len(names) + 1)
        rc[stats.order_by_score(cand, names)] = np.arange(1, len(names) + 1)
        return {r: (int(rr[i]), int(rc[i])) for i, r in enumerate(names)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "kendall_tau": _num(self.kendall_tau),
            "tau_ap": _num(self.tau_ap),
            "spearman": _num(self.spearman),
            "same_top": self.same_top,
            "top": {"reference": self.top[0], "candidate": self.top[1]},
            "largest_rank_change": {"run": self.largest_change[0], "reference_rank": self.largest_change[1],
                                    "candidate_rank": self.largest_change[2],
                                    "change": self.largest_change[2] - self.largest_change[1]},
            "tied_pairs": self.ties,
            "means": {r: [_num(a), _num(b)] for r, (a, b) in self.means.items()},
            "ranks": {r: list(v) for r, v in self.ranks().items()},
            **_plain(self.extra),
        }


@dataclass
class Agreement:
    """Label and system agreement between reference and candidate qrels. See :func:`agreement`."""

    pairs: int
    rel: float
    kappa: float
    weighted_kappa: float
    grades: list[int | float]
    confusion: np.ndarray
    precision: float
    recall: float
    reference_pairs: int
    candidate_pairs: int
    reference_only: int
    candidate_only: int
    systems: dict[str, SystemAgreement] = field(default_factory=dict)
    ppi: dict[str, dict[str, dict[str, MeanInterval]]] = field(default_factory=dict)
    #: Krippendorff's alpha and its bootstrap intervals (:func:`ragrade.assessment.metaeval.label_measures`).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def union(self) -> int:
        return self.pairs + self.reference_only + self.candidate_only

    def to_dict(self) -> dict[str, Any]:
        u = self.union or 1
        out: dict[str, Any] = {
            "pairs": self.pairs,
            "rel": _grade(self.rel),
            "kappa": _num(self.kappa),
            "weighted_kappa": _num(self.weighted_kappa),
            "confusion": {"grades": self.grades, "matrix": self.confusion.tolist(),
                          "rows": "reference grade", "columns": "candidate grade"},
            "precision": _num(self.precision),
            "recall": _num(self.recall),
            "reference_pairs": self.reference_pairs,
            "candidate_pairs": self.candidate_pairs,
            "reference_only": {"pairs": self.reference_only, "share": self.reference_only / u},
            "candidate_only": {"pairs": self.candidate_only, "share": self.candidate_only / u},
        }
        out.update(_plain(self.extra))
        if self.systems:
            out["systems"] = {m: s.to_dict() for m, s in self.systems.items()}
        if self.ppi:
            out["ppi"] = {m: {r: {k: v.to_dict() for k, v in d.items()} for r, d in runs.items()}
                          for m, runs in self.ppi.items()}
        return out


def _qrels(x: Any, what: str) -> Qrels:
    if isinstance(x, Qrels):
        return x
    if isinstance(x, str | os.PathLike):
        from ragrade.io import read_qrels

        return read_qrels(x)
    if isinstance(x, Mapping):
        return Qrels.from_dict(x)
    raise InputError(f"{what} qrels must be a ragrade.Qrels, a dict or a path", value=type(x).__name__)


def _runs(runs: Any) -> dict[str, Run]:
    if runs is None:
        return {}
    items: list[tuple[str | None, Any]] = (
        [(str(k), v) for k, v in runs.items()] if isinstance(runs, Mapping) else [(None, r) for r in runs])
    out: dict[str, Run] = {}
    for i, (name, r) in enumerate(items):
        if isinstance(r, str | os.PathLike):
            from ragrade.io import read_run

            run = read_run(r)
            label = name or os.path.basename(os.fspath(r))
        elif isinstance(r, Run):
            run, label = r, name or r.name or f"run{i + 1}"
        elif isinstance(r, Mapping):
            run, label = Run.from_dict(r), name or f"run{i + 1}"
        else:
            raise InputError("a run must be a ragrade.Run, a dict or a path", value=type(r).__name__)
        if label in out:
            raise InputError("two runs have the same name; name them with a mapping", value=label)
        out[label] = run
    return out


def _per_query(qrels: Qrels, runs: dict[str, Run], metrics: Sequence[str]) -> dict[str, pd.DataFrame]:
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import dispatch

    plan = build_plan(qrels, runs, list(metrics), many=True)  # the one plan, the one dispatcher
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return {name: r.per_query for name, r in dispatch(plan).items()}


def _means(frames: dict[str, pd.DataFrame]) -> dict[str, dict[str, float]]:
    return {name: {str(c): float(df[c].mean(skipna=True)) if df[c].notna().any() else math.nan for c in df.columns}
            for name, df in frames.items()}


def _system(metric: str, ref: dict[str, float], cand: dict[str, float]) -> SystemAgreement:
    names = list(ref)
    r = np.array([ref[n] for n in names])
    c = np.array([cand[n] for n in names])
    ok = np.isfinite(r) & np.isfinite(c)
    nm = [n for n, k in zip(names, ok, strict=True) if k]
    r, c = r[ok], c[ok]
    if len(nm) == 0:
        nan = math.nan
        return SystemAgreement(metric, {n: (ref[n], cand[n]) for n in names}, nan, nan, nan, False, ("", ""), ("", 0, 0), 0)
    tr = stats.order_by_score(r, nm)
    tc = stats.order_by_score(c, nm)
    rr = np.empty(len(nm), dtype=int)
    rc = np.empty(len(nm), dtype=int)
    rr[tr] = np.arange(1, len(nm) + 1)
    rc[tc] = np.arange(1, len(nm) + 1)
    change = np.abs(rc - rr)
    big = int(np.lexsort((np.arange(len(nm)), -change))[0])
    ties = 0
    if len(nm) > 1:
        iu = np.triu_indices(len(nm), 1)
        ties = int(np.count_nonzero((r[:, None] == r[None, :])[iu] | (c[:, None] == c[None, :])[iu]))
    return SystemAgreement(
        metric, {n: (ref[n], cand[n]) for n in names},
        stats.kendall_tau_b(r, c), stats.tau_ap(r, c, nm), stats.spearman_rho(r, c),
        nm[int(tr[0])] == nm[int(tc[0])], (nm[int(tr[0])], nm[int(tc[0])]),
        (nm[big], int(rr[big]), int(rc[big])), ties)


@public
def agreement(reference: Any, candidate: Any, runs: Any = None, metrics: Iterable[str] | str = ("ndcg@10",), *,
              rel: float = 1, ppi: bool = False, alpha: float = 0.05, lam: float | str = 1.0,
              top_k: int = metaeval.DEFAULT_TOP_K, n_resamples: int = 1000, seed: int | None = 0) -> Agreement:
    """Agreement of ``candidate`` labels (an assessor's) with ``reference`` labels (human).

    Labels, on the (query, doc) pairs judged in both: Cohen's kappa on relevant (grade >= ``rel``) / not
    relevant, quadratic-weighted kappa on the grades, the confusion matrix, the candidate's precision and
    recall for "relevant", and the pairs each side judged alone. Systems, when ``runs`` are given: each
    run's mean of each metric under both qrels and the rank correlations of the two system orderings
    (Kendall's tau-b, tau_AP with the reference as truth, Spearman's rho). ``ppi=True`` also gives, per
    metric and run, the prediction-powered mean and interval (:func:`~ragrade.assessment.ppi.ppi_mean`)
    treating the reference's queries as the labelled random sample and the candidate's other queries as
    unlabelled, next to the naive candidate-only interval and the reference-only one.

    Meta-evaluation (:mod:`ragrade.assessment.metaeval`): Krippendorff's alpha (nominal, ordinal, interval)
    on the labels; per metric Pearson's r, tau_AP,b, tau_GAP and Kendall's tau over the reference's
    ``top_k`` runs; percentile bootstrap intervals over queries at level ``1 - alpha`` (``n_resamples``
    resamples from ``seed``) for those, Kendall's tau, Spearman's rho and tau_AP.
    """
    ref = _qrels(reference, "reference")
    cand = _qrels(candidate, "candidate")
    rd = ref.to_pandas()[["query", "doc", "grade"]].astype({"query": str, "doc": str})
    cd = cand.to_pandas()[["query", "doc", "grade"]].astype({"query": str, "doc": str})
    both = rd.merge(cd, on=["query", "doc"], suffixes=("_ref", "_cand"))
    a = both["grade_ref"].to_numpy(dtype=np.float64)
    b = both["grade_cand"].to_numpy(dtype=np.float64)
    labels, conf = stats.confusion(a, b)
    ra, rb = a >= rel, b >= rel
    kappa = stats.cohen_kappa(ra.astype(float), rb.astype(float)) if len(a) else math.nan
    wk = stats.weighted_kappa(a, b) if len(a) else math.nan
    tp = int(np.count_nonzero(ra & rb))
    precision = tp / int(rb.sum()) if rb.any() else math.nan
    recall = tp / int(ra.sum()) if ra.any() else math.nan
    result = Agreement(len(both), float(rel), kappa, wk, [_grade(g) for g in labels], conf, precision, recall,
                       len(rd), len(cd), len(rd) - len(both), len(cd) - len(both))
    result.extra.update(metaeval.label_measures(a, b, both["query"].to_numpy(), n_resamples=n_resamples,
                                                level=1.0 - alpha, seed=seed))
    run_map = _runs(runs)
    if not run_map:
        if ppi:
            raise InputError("ppi needs runs (the per-query metric comes from them)")
        return result
    mlist = [metrics] if isinstance(metrics, str) else list(metrics)
    pref = _per_query(ref, run_map, mlist)
    pcand = _per_query(cand, run_map, mlist)
    mref, mcand = _means(pref), _means(pcand)
    columns = [str(c) for c in next(iter(pref.values())).columns]
    for col in columns:
        result.systems[col] = _system(col, {n: mref[n][col] for n in run_map}, {n: mcand[n][col] for n in run_map})
        result.systems[col].extra.update(metaeval.system_report(
            col, pref, pcand, {n: mref[n][col] for n in run_map}, {n: mcand[n][col] for n in run_map}, k=top_k,
            n_resamples=n_resamples, level=1.0 - alpha, seed=seed))
    if ppi:
        labeled = set(rd["query"].unique().tolist())
        for col in columns:
            result.ppi[col] = {}
            for name in run_map:
                y = pref[name][col]
                f = pcand[name][col]
                y.index = y.index.astype(str)
                f.index = f.index.astype(str)
                lab = [q for q in y.index if q in labeled and q in f.index]
                yl = y.loc[lab].to_numpy(dtype=np.float64)
                fl = f.loc[lab].to_numpy(dtype=np.float64)
                keep = np.isfinite(yl) & np.isfinite(fl)
                yl, fl = yl[keep], fl[keep]
                fu = f.loc[[q for q in f.index if q not in labeled]].to_numpy(dtype=np.float64)
                fu = fu[np.isfinite(fu)]
                allf = f.to_numpy(dtype=np.float64)
                allf = allf[np.isfinite(allf)]
                result.ppi[col][name] = {
                    "ppi": ppi_mean(yl, fl, fu, alpha=alpha, lam=lam),
                    "naive": classical_mean(allf, alpha=alpha, method="naive (candidate labels only)"),
                    "human": classical_mean(yl, alpha=alpha, method="classical (reference labels only)"),
                }
    return result


__all__ = ["Agreement", "SystemAgreement", "agreement"]
