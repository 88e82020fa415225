"""Everything the report and the plot files need, computed once: the evaluation of every run (the
compared metrics and the metric@k curves in one pass), the comparison and the curve tables."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.comparison import Comparison, compare_scores, name_runs
from ragrade.comparison.core import dispatch_named
from ragrade.comparison.stats import (
    SADDLEPOINT_MIN_QUERIES,
    CIMethod,
    bootstrap_ci,
    normalize_ci_method,
    saddlepoint_ci,
)
from ragrade.errors import InputError
from ragrade.options import public

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10, 20, 50, 100)
"""Cutoffs of the metric@k curves when none are given."""


def metric_family(metric: str) -> str | None:
    """The metric without its cutoff (``ndcg@10`` -> ``ndcg``), or ``None`` when it has none."""
    base = re.sub(r"@\d+$", "", str(metric))
    return None if base == str(metric) else base


def curve_table(
    per_query: Mapping[str, pd.DataFrame],
    family: str,
    ks: Sequence[int],
    *,
    confidence: float = 0.95,
    ci_method: CIMethod = "auto",
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Mean ``family@k`` of every run at every cutoff with its percentile bootstrap interval, from
    per-query values (columns ``family@k``): a long table with columns ``run``, ``k``, ``mean``,
    ``ci_low``, ``ci_high``, ``n`` (queries counted). Intervals follow ``ci_method`` as in
    :func:`ragrade.compare` (``auto``: saddlepoint from 100 queries on, else ``n_resamples`` resamples
    from ``seed``)."""
    method = normalize_ci_method(ci_method)
    cuts = sorted({int(k) for k in ks})
    labels = [f"{family}@{k}" for k in cuts]
    rows: list[dict[str, Any]] = []
    for run, frame in per_query.items():
        values = frame[labels].to_numpy(dtype=np.float64)
        lo = np.full(len(cuts), np.nan)
        hi = np.full(len(cuts), np.nan)
        # cutoffs scored on the same queries get their intervals in one call
        groups: dict[bytes, list[int]] = {}
        for j in range(len(cuts)):
            groups.setdefault(np.packbits(~np.isnan(values[:, j])).tobytes(), []).append(j)
        for members in groups.values():
            block = values[:, members]
            block = block[~np.isnan(block[:, 0])]
            if not len(block):
                continue
            use = method if method != "auto" else (
                "saddlepoint" if len(block) >= SADDLEPOINT_MIN_QUERIES else "resample"
            )
            if use == "saddlepoint":
                lo[members], hi[members] = saddlepoint_ci(block, confidence)
            else:
                lo[members], hi[members] = bootstrap_ci(block, n_resamples, confidence, seed)
        counts = (~np.isnan(values)).sum(axis=0)
        with np.errstate(invalid="ignore"):
            means = np.nanmean(values, axis=0) if len(values) else np.full(len(cuts), np.nan)
        for j, k in enumerate(cuts):
            rows.append({"run": str(run), "k": k, "mean": float(means[j]) if counts[j] else math.nan,
                         "ci_low": float(lo[j]), "ci_high": float(hi[j]), "n": int(counts[j])})
    table = pd.DataFrame(rows, columns=["run", "k", "mean", "ci_low", "ci_high", "n"])
    table.attrs["metric"] = family
    table.attrs["confidence"] = confidence
    return table


def check_cutoffs(ks: Sequence[int]) -> list[int]:
    cuts = sorted({int(k) for k in ks})
    if not cuts or cuts[0] < 1:
        raise InputError("cutoffs must be positive integers", value=list(ks))
    return cuts


@public
def metric_at_k(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metric: str,
    ks: Sequence[int] = DEFAULT_KS,
    *,
    confidence: float = 0.95,
    ci_method: CIMethod = "auto",
    n_resamples: int = 10_000,
    seed: int | None = 0,
    **options: Any,
) -> pd.DataFrame:
    """Mean of ``metric@k`` for every run and cutoff, with percentile bootstrap intervals (the input of
    :func:`ragrade.report.plots.curve_plot`).

    ``metric`` is a metric name with or without a cutoff (``"ndcg"`` or ``"ndcg@10"``: the cutoff is
    replaced by each ``k``); ``options`` are the keywords of :func:`ragrade.evaluate` (profile, matcher,
    max_memory, policies). See :func:`curve_table` for the columns.
    """
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import dispatch

    family = metric_family(metric) or str(metric)
    cuts = check_cutoffs(ks)
    plan = build_plan(qrels, name_runs(runs), [f"{family}@{k}" for k in cuts], many=True, **options)
    per_query = {name: r.per_query for name, r in dispatch(plan).items()}
    return curve_table(per_query, family, cuts, confidence=confidence, ci_method=ci_method,
                       n_resamples=n_resamples, seed=seed)


@dataclass
class Evaluated:
    """Every run evaluated once on the compared metrics and the metric@k cutoffs."""

    labels: list[str]  # the compared metrics
    per_query: dict[str, pd.DataFrame]  # run -> every metric evaluated (compared and curves)
    qrels: Any  # the ground truth as the engine read it
    runs: dict[str, Any]  # name -> run as given, or read from a path
    families: list[str]  # metric families drawn as metric@k curves
    cuts: list[int]
    ties: str
    hole_rates: dict[str, dict[int, float]] = field(default_factory=dict)  # run -> {k: mean hole rate}
    hole_k: int | None = None


@dataclass
class Prepared:
    """The evaluated and compared runs of a report."""

    comparison: Comparison
    curves: dict[str, pd.DataFrame]  # metric family -> curve_table
    per_query: dict[str, pd.DataFrame]
    qrels: Any
    runs: dict[str, Any]
    ties: str
    hole_rates: dict[str, dict[int, float]] = field(default_factory=dict)  # run -> {k: mean hole rate}


def read_input(value: Any, kind: str) -> Any:
    """``value`` read as qrels or a run (``kind``) when it is a path, else as given."""
    if isinstance(value, str | os.PathLike):
        from ragrade.io import read_qrels, read_run

        return read_qrels(value) if kind == "qrels" else read_run(value)
    return value


def evaluate_runs(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Sequence[Any] | str,
    *,
    ks: Sequence[int] | None = DEFAULT_KS,
    **options: Any,
) -> Evaluated:
    """Evaluate every run once: the compared metrics plus ``family@k`` for every cutoff in ``ks`` and
    every compared metric with a cutoff. Inputs are what :func:`ragrade.compare` takes (paths are read
    once); ``options`` are the keywords of :func:`ragrade.evaluate` (profile, matcher, max_memory,
    policies), evaluated through the same plan. With ``max_memory`` the evaluation reads two files piece
    by piece; the report still reads them whole for its per-query views."""
    from ragrade.engine.inputs import as_qrels
    from ragrade.engine.plan import build_plan
    from ragrade.engine.result import metric_labels as parsed_labels

    given = name_runs(runs)
    if len(given) < 2:
        raise InputError("a report compares at least two runs", value=len(given))
    from ragrade.evaluation import judgments_of, route_of

    plan = build_plan(qrels, given, metrics, many=True, **options)  # checked before anything is read
    named = {name: read_input(run, "run") for name, run in given.items()}
    routed = route_of(plan) is not None  # another ground truth (spans, nuggets): its route reads it
    truth = judgments_of(plan) if routed else as_qrels(read_input(qrels, "qrels"))
    if routed:
        plan = plan.replace(runs=tuple(named.items()))
    elif options.get("max_memory") is None:  # else the evaluation reads the files piece by piece
        plan = plan.replace(qrels=truth, runs=tuple(named.items()))
    labels = plan.columns
    families = list(dict.fromkeys(f for f in (metric_family(m) for m in labels) if f is not None))
    cuts = check_cutoffs(ks) if ks else []
    extra = [f"{f}@{k}" for f in families for k in cuts]
    # The hole rate shown next to the means is taken at the compared metrics' largest cutoff, as `compare`
    # and `evaluate` take it (not at the largest cutoff of the metric@k curves); the plot shows every k.
    metric_ks = [m.k for _, m in plan.labels if m.k is not None]
    main_k = max(metric_ks) if metric_ks else 10
    if extra:
        all_metrics: list[Any] = [*plan.labels, *extra]
        plan = plan.replace(labels=parsed_labels(all_metrics, names=options.get("names", "ragrade"),
                                                 rel_level=options.get("rel_level")))
    plan = plan.replace(hole_cutoffs=tuple(sorted({1, 3, 5, 10, 20, main_k, *cuts})))  # for the hole-rate plot
    results = dispatch_named(plan)
    per_query = {name: r.per_query for name, r in results.items()}
    ties = str(options.get("ties") or "docid_desc")
    holes = {name: r.hole_rate for name, r in results.items() if r.hole_rate is not None}
    by_k = {name: dict(h.by_k) for name, h in holes.items()}
    return Evaluated(labels, per_query, truth, named, families if cuts else [], cuts, ties, by_k,
                     main_k if holes else None)


def compare_evaluated(
    ev: Evaluated,
    *,
    baseline: str | None = None,
    test: str = "randomization",
    correction: str | None = None,
    alpha: float = 0.05,
    confidence: float | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    ci_method: CIMethod = "auto",
) -> tuple[Comparison, dict[str, pd.DataFrame]]:
    """The comparison of the evaluated runs and their metric@k tables."""
    cmp = compare_scores(
        {name: frame[ev.labels] for name, frame in ev.per_query.items()},
        ev.labels,
        baseline=baseline,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        ci_method=ci_method,
    )
    curves = {
        f: curve_table(ev.per_query, f, ev.cuts, confidence=cmp.confidence, ci_method=ci_method,
                       n_resamples=n_resamples, seed=seed)
        for f in ev.families
    }
    if ev.hole_rates and ev.hole_k is not None:
        cmp = dataclasses.replace(cmp, hole_k=ev.hole_k, hole_rates={
            name: by_k.get(ev.hole_k, float("nan")) for name, by_k in ev.hole_rates.items()})
    return cmp, curves


def evaluate_for_report(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Sequence[Any] | str,
    *,
    baseline: str | None = None,
    test: str = "randomization",
    correction: str | None = None,
    alpha: float = 0.05,
    confidence: float | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    ci_method: CIMethod = "auto",
    ks: Sequence[int] | None = DEFAULT_KS,
    **options: Any,
) -> Prepared:
    """:func:`evaluate_runs` then :func:`compare_evaluated`."""
    ev = evaluate_runs(qrels, runs, metrics, ks=ks, **options)
    cmp, curves = compare_evaluated(
        ev, baseline=baseline, test=test, correction=correction, alpha=alpha, confidence=confidence,
        n_resamples=n_resamples, seed=seed, ci_method=ci_method,
    )
    return Prepared(cmp, curves, ev.per_query, ev.qrels, ev.runs, ev.ties, ev.hole_rates)
