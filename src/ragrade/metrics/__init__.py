"""Metric definitions: the registry (single source of truth) and the metric-string parser."""

from ragrade.metrics.parser import Metric, expand_labels, parse_metric, parse_metrics
from ragrade.metrics.registry import REGISTRY, MetricDef, ParamSpec, all_names, lookup

__all__ = [
    "REGISTRY",
    "Metric",
    "MetricDef",
    "ParamSpec",
    "all_names",
    "expand_labels",
    "lookup",
    "parse_metric",
    "parse_metrics",
]
