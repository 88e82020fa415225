"""How each metric's per-piece state merges, declared once per family (as torchmetrics'
``dist_reduce_fx``), so that the out-of-core path and Spark hold no code for any one metric.

A family declares its ``aggregate`` in the metric registry (``mean``, ``sum`` or ``gmean``); this module
maps each to a :class:`Reduction`:

* the **per-query values** of every piece are concatenated (``per_query="cat"``): each value depends on its
  own query's judgments and ranking alone, so a piece holding every row of its queries computes them as
  the whole would;
* the **aggregate** of a piece is a small state ``(total, count)`` that merges by addition: ``mean`` —
  the sum of the counted values and their number; ``sum`` — the sum; ``gmean`` — the sum of
  ``log(max(v, 1e-5))`` (trec_eval's floor) and the number. The aggregate of the whole is read from the
  merged state.

:func:`piece_state` and :func:`merged_means` apply these rules to results; :func:`check_reductions`
fails when an aggregate kind has no rule (tests call it), so a new kind cannot be merged wrongly.
:mod:`ragrade.scale.combine` (out of core, Spark) concatenates per-query values by the same rule and lets
:class:`~ragrade.engine.result.Result` aggregate them, which gives the same numbers (tests/scale).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

import numpy as np

_FLOOR = 1e-5  # gm_map's floor (engine.result.aggregate)


@dataclass(frozen=True)
class Reduction:
    """The merge rule of one aggregate kind: per-query values concatenate; the aggregate's state is
    ``(total, count)`` of the transformed counted values, merged by addition."""

    aggregate: str
    per_query: str = "cat"

    def _transform(self, v: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(v, _FLOOR)) if self.aggregate == "gmean" else v

    def state(self, values: np.ndarray) -> tuple[float, int]:
        """The state of one piece's per-query values (NaN values are not counted)."""
        v = np.asarray(values, dtype=np.float64)
        v = v[~np.isnan(v)]
        return float(self._transform(v).sum()), len(v)

    @staticmethod
    def merge(states: Sequence[tuple[float, int]]) -> tuple[float, int]:
        return float(sum(s for s, _ in states)), int(sum(n for _, n in states))

    def value(self, state: tuple[float, int]) -> float:
        total, n = state
        if n == 0:
            return math.nan
        if self.aggregate == "sum":
            return total
        if self.aggregate == "gmean":
            return float(np.exp(total / n))
        return total / n


REDUCTIONS: dict[str, Reduction] = {k: Reduction(k) for k in ("mean", "sum", "gmean")}


def check_reductions() -> None:
    """Raise ``TypeError`` when the registry's ``Aggregate`` kinds have grown one without a rule here."""
    from ragrade.metrics.registry import Aggregate

    missing = sorted(set(get_args(Aggregate)) - set(REDUCTIONS))
    if missing:
        raise TypeError(f"scale/merge.py has no reduction for aggregate kind(s) {missing}")


def reduction_of(metric: Any) -> Reduction:
    """The :class:`Reduction` a metric's family declares (by its ``aggregate``); ``mean`` for a label
    without a metric."""
    how = "mean" if metric is None else metric.family.aggregate
    return REDUCTIONS[how]  # every aggregate has one (checked on import above): a KeyError here is a bug


def piece_state(result: Any) -> dict[str, tuple[float, int] | None]:
    """Each metric's aggregate state in one piece's result (None: the metric has no mean on this
    evaluation, e.g. a list profile's NaN means)."""
    out: dict[str, tuple[float, int] | None] = {}
    for label in result.per_query.columns:
        if label in result.nan_means:
            out[label] = None
            continue
        out[label] = reduction_of(result.metrics.get(label)).state(result.per_query[label].to_numpy(dtype=np.float64))
    return out


def merged_means(states: Sequence[Mapping[str, tuple[float, int] | None]], metrics: Mapping[str, Any]
                 ) -> dict[str, float]:
    """The aggregate of the whole for each metric, from the pieces' states."""
    out: dict[str, float] = {}
    for label, metric in metrics.items():
        got = [s.get(label) for s in states]
        if any(g is None for g in got):
            out[label] = math.nan
            continue
        red = reduction_of(metric)
        out[label] = red.value(red.merge([g for g in got if g is not None]))
    return out


__all__ = ["REDUCTIONS", "Reduction", "check_reductions", "merged_means", "piece_state", "reduction_of"]
