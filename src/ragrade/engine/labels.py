"""Metric labels: the ``(label, Metric)`` pairs of an evaluation (every label the user wrote, each metric
computed once under its first label and shown under each) and :class:`MetricValues`, the ``{label: value}``
mapping that answers to any spelling of a metric."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragrade.errors import InputError
from ragrade.metrics.parser import Metric, Names, expand_labels, parse_metric

MetricsArg = str | Metric | Iterable[str | Metric] | Iterable[tuple[str, Metric]]


def metric_labels(metrics: MetricsArg, names: Names = "ragrade",
                  rel_level: int | None = None) -> list[tuple[str, Metric]]:
    """``(label, Metric)`` pairs for a metric argument: each string parsed once (cutoff lists expanded,
    labelled as written; trec_eval's names labelled with its output names, ``names`` as in
    :func:`~ragrade.metrics.parse_metrics`). Every label the user wrote is kept, in order: a metric written
    under two spellings (``P@5`` and ``precision@5``) gives two labels for one metric (the engine computes
    it once and shows it under both); the same label written twice is kept once. ``rel_level``
    (trec_eval's ``-l``) is the relevance level of every metric that has one and was not given one
    (DCG-type measures ignore it, as trec_eval does).

    >>> [(label, str(m)) for label, m in metric_labels(["P@[5,10]", "precision@5", "ndcg@10", "P@5"])]
    [('P@5', 'precision@5'), ('P@10', 'precision@10'), ('precision@5', 'precision@5'), ('ndcg@10', 'ndcg@10')]
    """
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    elif not isinstance(metrics, Iterable):
        raise InputError("metrics must be a metric string, a Metric, or a list of them", value=metrics)
    out: list[tuple[str, Metric]] = []
    labels: set[str] = set()
    for m in metrics:
        if isinstance(m, tuple) and len(m) == 2 and isinstance(m[1], Metric):  # labelled by an earlier call
            pairs = [(str(m[0]), m[1])]
        elif isinstance(m, Metric):
            pairs = [(str(m), m)]
        else:
            pairs = expand_labels(m, names)
        for label, metric in pairs:
            if rel_level is not None:
                metric = with_rel_level(metric, rel_level)
            # a requested label never vanishes: P@5 and precision@5 (trec_eval's Rprec and Rprec_mult_1.00)
            # are one metric shown under each name
            if label not in labels:
                labels.add(label)
                out.append((label, metric))
    if not out:
        raise InputError("no metric given")
    return out


def distinct_metrics(labels: Iterable[tuple[str, Metric]]) -> list[tuple[str, Metric]]:
    """The pairs to compute: each metric once, under its first label (see :func:`spread_labels`)."""
    first: dict[Metric, str] = {}
    for label, m in labels:
        first.setdefault(m, label)
    return [(label, m) for m, label in first.items()]


def spread_labels(labels: Iterable[tuple[str, Metric]], values: Mapping[str, Any]) -> dict[str, Any]:
    """``{label: value}`` for every label of ``labels`` (in their order), from ``values`` computed under the
    first label of each metric (:func:`distinct_metrics`): a metric written under two spellings is shown
    under both. Labels whose metric has no value are left out."""
    pairs = list(labels)
    first: dict[Metric, str] = {}
    for label, m in pairs:
        first.setdefault(m, label)
    return {label: values[first[m]] for label, m in pairs if first[m] in values}


def with_rel_level(m: Metric, level: int) -> Metric:
    """``m`` at relevance level ``level`` unless it has its own (families whose ``rel`` defaults to 1)."""
    spec = m.family.param("rel")
    if spec is None or spec.default != 1 or any(k == "rel" for k, _ in m.params):
        return m
    return m.with_params(rel=level)


class MetricValues(dict[str, Any]):
    """A ``{label: value}`` dict that also answers to any other spelling of a metric, or to a
    :class:`~ragrade.metrics.Metric` (``means["precision@2"]`` when the column is ``P@2``)."""

    def __init__(self, values: Mapping[str, Any], metrics: Mapping[str, Metric]) -> None:
        super().__init__(values)
        self._by_metric: dict[Metric, str] = {}
        for label, m in metrics.items():
            self._by_metric.setdefault(m, label)  # a metric under two labels: its first

    def __missing__(self, key: object) -> Any:
        label = self.label_of(key)
        if label is None or not dict.__contains__(self, label):
            raise KeyError(key)
        return dict.__getitem__(self, label)

    def label_of(self, key: object) -> str | None:
        """The label under which the metric ``key`` (a label, any spelling or a Metric) is stored."""
        if isinstance(key, str) and dict.__contains__(self, key):
            return key
        try:
            metric = key if isinstance(key, Metric) else parse_metric(str(key))
        except Exception:
            return None
        return self._by_metric.get(metric)

    def __contains__(self, key: object) -> bool:
        return self.label_of(key) is not None

    def get(self, key: object, default: Any = None) -> Any:  # any spelling of the metric
        label = self.label_of(key)
        return default if label is None else dict.__getitem__(self, label)


__all__ = ["MetricValues", "MetricsArg", "distinct_metrics", "metric_labels", "spread_labels", "with_rel_level"]
