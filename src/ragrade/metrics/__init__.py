"""Metric definitions: the registry (single source of truth), parameters, and the metric-string parser."""

from ragrade.metrics.params import Param
from ragrade.metrics.parser import Metric, Names, expand_labels, parse_labelled, parse_metric, parse_metrics
from ragrade.metrics.registry import ID_FAMILIES, REGISTRY, Family, all_names, families, find, lookup

__all__ = [
    "ID_FAMILIES",
    "REGISTRY",
    "Family",
    "Metric",
    "Names",
    "Param",
    "all_names",
    "expand_labels",
    "families",
    "find",
    "lookup",
    "parse_labelled",
    "parse_metric",
    "parse_metrics",
]
