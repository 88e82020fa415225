"""Engine profiles that follow a peer's tie order and query set per measure (docs/conventions.md,
"Providers of ir-measures and ranx's tie order").

* ``ir_measures``: every metric is computed the way the ir-measures provider that owns it computes it
  (:func:`ragrade.profiles.providers.ir_measures_provider`): its tie order, score precision, the value of
  queries missing from the run, and the rounding of the values it prints. Metrics of one provider are
  computed together; the per-query columns are then put back in the order asked.
* ``ranx``: the run is put in ranx's own rank order (numba's quicksort over the input order,
  :mod:`ragrade.kernels.tie_orders`), so every metric sees the ranking ranx sees.

Both read the run as the peers' dicts hold it: a document listed twice keeps its first position and its
last score.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ragrade._arrays import member
from ragrade.engine.core import Evaluator
from ragrade.engine.inputs import as_qrels, as_run
from ragrade.engine.result import MetricsArg, Result, metric_labels
from ragrade.metrics.parser import Metric
from ragrade.policies import Policies
from ragrade.profiles import EngineProfile
from ragrade.profiles.providers import (
    Provider,
    as_float32,
    as_peer_dict,
    compat_values,
    ir_measures_provider,
    reorder_run,
)


def substituted(labels: list[tuple[str, Metric]], prof: EngineProfile) -> list[tuple[str, Metric]]:
    """Metrics whose family the profile computes with a peer's own family (ranx's rbp)."""
    out = []
    for label, m in labels:
        sub = prof.substitutes.get(m.name)
        out.append((label, Metric(sub, m.k, m.params) if sub else m))
    return out


def evaluate_ranx(truth: Any, retrieved: Any, metrics: MetricsArg, prof: EngineProfile,
                  policies: dict[str, Any]) -> Result:
    """The ranx profile: the run in ranx's rank order (``prof.tie_order``), then the default kernels."""
    labels = substituted(metric_labels(metrics), prof)
    run: Any = as_run(retrieved)
    pol = {**prof.policy_overrides(), **policies}
    if "ties" not in policies and run.scores is not None and prof.tie_order != "policy":
        ordered = reorder_run(run if isinstance(retrieved, Mapping) else as_peer_dict(run), prof.tie_order)
        pol["ties"] = "input"
        # without equal scores every tie rule ranks alike: the caller's dict keeps the engine's fast path
        run = ordered if ordered is not None else (retrieved if isinstance(retrieved, Mapping) else run)
    res = Evaluator(as_qrels(truth), labels, policies=Policies().update(**pol)).evaluate(run)
    return res.replace(profile=prof)


def evaluate_ir_measures(truth: Any, retrieved: Any, metrics: MetricsArg, prof: EngineProfile,
                         policies: dict[str, Any]) -> Result:
    """The ir_measures profile: each metric under its ir-measures provider's conventions."""
    labels = metric_labels(metrics)
    qrels = as_qrels(truth)
    if prof.empty_qrels == "drop":
        qrels = qrels.without_empty_queries()
    run = as_run(retrieved)
    if run.scores is not None and not isinstance(retrieved, Mapping):
        run = as_peer_dict(run)
    groups: dict[Provider, list[tuple[str, Metric]]] = {}
    for label, m in labels:
        groups.setdefault(ir_measures_provider(m), []).append((label, m))
    results: list[tuple[Provider, Result]] = []
    for i, (prov, items) in enumerate(groups.items()):
        pol = {**prof.policy_overrides(), "no_relevant": prov.no_relevant, **policies}
        this: Any = run
        if prov.float32:
            this = as_float32(run)
        if "ties" not in policies:
            if prov.ties in ("docid_desc", "docid_asc", "input"):
                pol["ties"] = prov.ties
            elif run.scores is not None:
                ordered = reorder_run(run, prov.ties)
                this = run if ordered is None else ordered
                pol["ties"] = "input"
        if this is run and isinstance(retrieved, Mapping):
            this = retrieved  # the engine's fast path for dicts
        ev = Evaluator(qrels, items, policies=Policies().update(**pol))
        if i == 0:
            res = ev.evaluate(this)
        else:  # the first group has warned about the run already
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = ev.evaluate(this)
        results.append((prov, res))
    base = results[0][1]
    index = base.per_query.index
    missing = member(np.asarray(index, dtype=object), base.summary.missing_from_run)  # linear, unlike np.isin
    columns: dict[str, np.ndarray] = {}
    upper: dict[str, np.ndarray] = {}
    no_relevant = dict(base.summary.no_relevant)  # every provider's, in one new summary
    for prov, res in results:
        frame = res.per_query
        for label in frame.columns:
            m = res.metrics[label]
            vals = frame[label].to_numpy(dtype=np.float64).copy()
            if m.name == "compat" and "ties" not in policies and res.policies.unjudged == "nonrelevant":
                full = pd.Series(compat_values(qrels, run, m), index=np.asarray(qrels.query_ids, dtype=object))
                vals = full.reindex(frame.index).to_numpy(dtype=np.float64, copy=True)
            if prov.rounding is not None:
                vals = np.round(vals, prov.rounding)
            if missing.any() and res.policies.missing_run == "zero":  # not reported: the provider's default
                vals[missing] = np.nan if prov.missing == "absent" else 0.0
            columns[label] = vals
            if res.upper is not None:
                upper[label] = res.upper[label].reindex(index).to_numpy(dtype=np.float64)
        no_relevant.update(res.summary.no_relevant)
    frame = pd.DataFrame({label: columns[label] for label, _ in labels}, index=index)
    upper_frame = pd.DataFrame({label: upper[label] for label, _ in labels if label in upper}, index=index) \
        if upper else None
    metrics_map = {label: m for label, m in labels}
    return Result(frame, metrics_map, base.summary.replace(no_relevant=no_relevant), base.policies,
                  run_name=base.run_name, profile=prof,
                  nan_means=set().union(*(r.nan_means for _, r in results)), hole_rate=base.hole_rate,
                  upper=upper_frame)


def evaluate_diversity_ir_measures(truth: Any, retrieved: Any, metrics: MetricsArg, prof: EngineProfile,
                                   policies: dict[str, Any]) -> Result:
    """Diversity measures as ir-measures' pyndeval provider computes them: ties by document id ascending,
    queries without a relevant subtopic 0 (nNRBP: 0 / 0 in ndeval, NaN, and so its mean), queries missing
    from the run 0."""
    from ragrade.engine.diversity import evaluate_diversity

    opts = {"ties": "docid_asc", "no_relevant": "zero", "missing_run": "zero", **policies}
    unknown = set(opts) - {"ties", "no_relevant", "missing_run", "max_docs", "unjudged", "upper_grade"}
    if unknown:
        from ragrade.errors import PolicyError

        raise PolicyError(f"diversity measures take no {', '.join(sorted(unknown))} policy")
    res = evaluate_diversity(truth, retrieved, metrics, **opts)
    frame = res.per_query.copy()
    nan_means = set(res.nan_means)
    if "no_relevant" not in policies:
        for label, m in res.metrics.items():
            undefined = res.summary.no_relevant.get(label, [])
            if m.name == "nnrbp" and undefined:
                frame.loc[list(undefined), label] = np.nan
                nan_means.add(label)
    return Result(frame, res.metrics, res.summary, res.policies, run_name=res.run_name, profile=prof,
                  nan_means=nan_means, hole_rate=res.hole_rate, upper=res.upper)


__all__ = ["evaluate_diversity_ir_measures", "evaluate_ir_measures", "evaluate_ranx"]
