"""The one result model: :class:`Result` (per-query values, aggregates, counts, summary) and :class:`Summary`.

Every evaluation path (ids, groups, texts, engine profiles, list profiles) returns a :class:`Result`, and
the CLI prints a :class:`Result` in every output format through the methods here (``to_dict``,
``to_json``, ``to_csv``, ``to_markdown``, ``summary_lines``).

Metrics are keyed by the parsed :class:`~ragrade.metrics.Metric`: two spellings of one metric (``P@2``
and ``precision@2``) are one column, labelled as the user first wrote it, and ``means`` / ``counts`` /
``per_query`` accept any spelling of it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError
from ragrade.metrics.parser import Metric, expand_labels, parse_metric
from ragrade.policies import Policies

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.profiles import Profile

MetricsArg = str | Metric | Iterable[str | Metric] | Iterable[tuple[str, Metric]]


def metric_labels(metrics: MetricsArg) -> list[tuple[str, Metric]]:
    """``(label, Metric)`` pairs for a metric argument: each string parsed once (cutoff lists expanded,
    labelled as written), and a metric written twice (under any spelling) kept once, with its first label.

    >>> [(label, str(m)) for label, m in metric_labels(["P@[5,10]", "precision@5", "ndcg@10"])]
    [('P@5', 'precision@5'), ('P@10', 'precision@10'), ('ndcg@10', 'ndcg@10')]
    """
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    elif not isinstance(metrics, Iterable):
        raise InputError("metrics must be a metric string, a Metric, or a list of them", value=metrics)
    out: list[tuple[str, Metric]] = []
    seen: set[Metric] = set()
    for m in metrics:
        if isinstance(m, tuple) and len(m) == 2 and isinstance(m[1], Metric):  # already labelled
            pairs = [(str(m[0]), m[1])]
        else:
            pairs = [(str(m), m)] if isinstance(m, Metric) else expand_labels(m)
        for label, metric in pairs:
            if metric not in seen:
                seen.add(metric)
                out.append((label, metric))
    if not out:
        raise InputError("no metric given")
    return out


class MetricValues(dict[str, Any]):
    """A ``{label: value}`` dict that also answers to any other spelling of a metric, or to a
    :class:`~ragrade.metrics.Metric` (``means["precision@2"]`` when the column is ``P@2``)."""

    def __init__(self, values: Mapping[str, Any], metrics: Mapping[str, Metric]) -> None:
        super().__init__(values)
        self._by_metric = {m: label for label, m in metrics.items()}

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


@dataclass
class Summary:
    """What happened to the queries: counts and examples for every policy that applied."""

    qrels_queries: int
    run_queries: int
    evaluated: int
    missing_from_run: list[str] = field(default_factory=list)
    only_in_run: list[str] = field(default_factory=list)
    no_relevant: dict[str, list[str]] = field(default_factory=dict)  # metric label -> queries
    empty_lists: list[str] = field(default_factory=list)
    duplicate_items: int = 0
    identical_ids_dropped: int = 0
    ties_at_cutoff: dict[int, int] = field(default_factory=dict)  # k -> queries with a tie across k

    def to_dict(self) -> dict[str, Any]:
        return {
            "qrels_queries": self.qrels_queries,
            "run_queries": self.run_queries,
            "evaluated": self.evaluated,
            "missing_from_run": len(self.missing_from_run),
            "only_in_run": len(self.only_in_run),
            "no_relevant": {k: len(v) for k, v in self.no_relevant.items()},
            "empty_lists": len(self.empty_lists),
            "duplicate_items": self.duplicate_items,
            "identical_ids_dropped": self.identical_ids_dropped,
            "ties_at_cutoff": {str(k): v for k, v in self.ties_at_cutoff.items()},
        }


class Result:
    """The outcome of one evaluation: per-query values, means with the number of queries counted, and a
    :class:`Summary` of what the policies did.

    ``per_query`` is a DataFrame with one row per query (index ``query``) and one column per metric,
    labelled as the metric was first written. NaN marks a query the metric does not count (e.g. no
    relevant judgments under the default policy). ``metrics`` maps each label to its parsed
    :class:`~ragrade.metrics.Metric`; ``profile`` is the profile the values follow (None: the default
    convention).
    """

    def __init__(self, per_query: pd.DataFrame, metrics: Mapping[str, Metric], summary: Summary,
                 policies: Policies, run_name: str | None = None, nan_means: Iterable[str] = (),
                 profile: Profile | None = None) -> None:
        self.per_query = per_query
        self.metrics: dict[str, Metric] = dict(metrics)
        self.summary = summary
        self.policies = policies
        self.run_name = run_name
        self.profile = profile
        self._nan_means = set(nan_means)

    # -- aggregates --------------------------------------------------------------------------------
    @property
    def counts(self) -> MetricValues:
        """Number of queries counted in each metric's mean."""
        return MetricValues({c: int(self.per_query[c].notna().sum()) for c in self.per_query.columns},
                            self.metrics)

    @property
    def means(self) -> MetricValues:
        """The mean of each metric over its counted queries (rounded as the profile says, if it does)."""
        rounding = None if self.profile is None else self.profile.rounding
        out: dict[str, float] = {}
        for c in self.per_query.columns:
            col = self.per_query[c]
            value = math.nan if (c in self._nan_means or col.notna().sum() == 0) else float(col.mean())
            out[c] = value if rounding is None or math.isnan(value) else round(value, rounding)
        return MetricValues(out, self.metrics)

    @property
    def n_queries(self) -> int:
        """Queries counted by at least one metric."""
        return int(self.per_query.notna().any(axis=1).sum())

    def __getitem__(self, label: str | Metric) -> float:
        key = self.means.label_of(label)
        if key is None:
            raise KeyError(label)
        return float(self.means[key])

    def label_of(self, metric: str | Metric) -> str:
        """The column label of ``metric`` (any spelling)."""
        label = self.means.label_of(metric)
        if label is None:
            raise KeyError(metric)
        return label

    # -- outputs -----------------------------------------------------------------------------------
    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """``{"run", "metrics", "counts", "queries", "summary"}`` (+ ``"per_query"``); NaN stays NaN
        here (``to_json`` writes it as null)."""
        out: dict[str, Any] = {
            "run": self.run_name,
            "metrics": dict(self.means),
            "counts": dict(self.counts),
            "queries": self.n_queries,
            "summary": self.summary.to_dict(),
        }
        if self.profile is not None and self.profile.name != "default":
            out["profile"] = self.profile.name
        if per_query:
            frame = self.per_query
            cols = list(frame.columns)
            out["per_query"] = {
                str(q): {c: float(v) for c, v in zip(cols, row, strict=True)}
                for q, row in zip(frame.index.tolist(), frame.itertuples(index=False, name=None), strict=True)
            }
        return out

    def to_json(self, per_query: bool = False, indent: int | None = 2) -> str:
        """The :meth:`to_dict` object as JSON, NaN written as null."""
        return json.dumps(_nan_to_none(self.to_dict(per_query=per_query)), indent=indent)

    def to_csv(self, per_query: bool = False, digits: int = 4) -> str:
        """Means as ``metric,mean,queries`` rows; with ``per_query``, one row per query (``query,<metrics>``)
        followed by a row ``all`` with the means (as trec_eval)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        means = self.means
        if per_query:
            cols = list(self.per_query.columns)
            w.writerow(["query", *cols])
            for q, row in zip(self.per_query.index.tolist(),
                              self.per_query.itertuples(index=False, name=None), strict=True):
                w.writerow([q, *(format_number(float(v), digits) for v in row)])
            w.writerow(["all", *(format_number(means[c], digits) for c in cols)])
        else:
            counts = self.counts
            w.writerow(["metric", "mean", "queries"])
            for label, mean in means.items():
                w.writerow([label, format_number(mean, digits), counts[label]])
        return buf.getvalue()

    def to_markdown(self, per_query: bool = False, digits: int = 4) -> str:
        counts = self.counts
        lines = ["| metric | mean | queries |", "|---|---:|---:|"]
        for label, mean in self.means.items():
            lines.append(f"| {label} | {format_number(mean, digits)} | {counts[label]} |")
        if per_query:
            cols = list(self.per_query.columns)
            lines += ["", "| query | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
            for q, row in self.per_query.iterrows():
                lines.append(f"| {q} | " + " | ".join(format_number(v, digits) for v in row.tolist()) + " |")
        return "\n".join(lines) + "\n"

    def summary_lines(self) -> list[str]:
        """A short account of what the policies did: the first line counts queries, each further line
        is one note (the same wording in every output format)."""
        s = self.summary
        pol = self.policies
        lines = [f"{s.qrels_queries} queries in the ground truth, {s.run_queries} in the run, "
                 f"{s.evaluated} evaluated"]

        def ex(items: list[str]) -> str:
            shown = ", ".join(items[:3])
            return f" (e.g. {shown}{', ...' if len(items) > 3 else ''})"

        if s.missing_from_run:
            what = "scored 0" if pol.missing_run == "zero" else "dropped"
            lines.append(f"{len(s.missing_from_run)} missing from the run, {what}{ex(s.missing_from_run)}")
        if s.only_in_run:
            lines.append(f"{len(s.only_in_run)} only in the run, ignored{ex(s.only_in_run)}")
        if s.no_relevant:
            worst = max(s.no_relevant.values(), key=len)
            action = {"skip": "left out of the means", "zero": "scored 0", "nan": "NaN"}.get(pol.no_relevant, "")
            lines.append(f"{len(worst)} without relevant judgments, {action}{ex(worst)}")
        if s.empty_lists:
            lines.append(f"{len(s.empty_lists)} with an empty retrieved list, scored 0{ex(s.empty_lists)}")
        if s.duplicate_items:
            lines.append(f"{s.duplicate_items} duplicate items in rankings ({pol.duplicates})")
        if s.identical_ids_dropped:
            lines.append(f"{s.identical_ids_dropped} items with the query's own id dropped")
        for k, n in sorted(s.ties_at_cutoff.items()):
            lines.append(f"{n} {'query has' if n == 1 else 'queries have'} tied scores across cutoff {k} "
                         f"(values depend on the tie rule: {pol.ties})")
        return lines

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={format_number(v, 4)}" for k, v in self.means.items())
        prefix = "" if self.profile is None or self.profile.name == "default" else f"{self.profile.name}:"
        return f"{prefix}Result({inner}; {self.n_queries} queries)"


def format_number(v: Any, digits: int) -> str:
    """``v`` with ``digits`` decimals; ``nan`` for a missing value."""
    if v is None or (isinstance(v, float | np.floating) and math.isnan(v)):
        return "nan"
    return f"{float(v):.{digits}f}"


def _nan_to_none(o: Any) -> Any:
    if isinstance(o, float) and math.isnan(o):
        return None
    if isinstance(o, dict):
        return {k: _nan_to_none(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_nan_to_none(v) for v in o]
    return o
