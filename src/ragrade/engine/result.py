"""The one result model: :class:`Result` (per-query values, aggregates, counts, summary) and :class:`Summary`.

Every evaluation path (ids, groups, texts, engine profiles, list profiles, diversity, out of core, judge
metrics, Spark) returns a :class:`Result`, and the CLI prints a :class:`Result` in every output format
through the methods here (``to_dict``, ``to_json``, ``to_csv``, ``to_markdown``, ``summary_lines``). What
is particular to a path is data held by the result, not a subclass: where its per-query values live
(:class:`QueryColumns`, a DataFrame, or :class:`DeferredValues` kept on Spark and collected once), and a
judged evaluation's :class:`JudgeInfo` (in its :class:`Summary`) and ``details``. A result, its summary and
its hole rate are immutable: ``replace`` gives modified copies.

Metrics are keyed by the parsed :class:`~ragrade.metrics.Metric`: two spellings of one metric (``P@2``
and ``precision@2``) are computed once and shown under every label the user wrote, and ``means`` /
``counts`` / ``per_query`` accept any spelling of it.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ragrade._arrays import is_frame, is_pandas
from ragrade.errors import InputError
from ragrade.metrics.parser import Metric, Names, expand_labels, parse_metric
from ragrade.policies import Policies

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ragrade.profiles import Profile

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


class QueryColumns:
    """Per-query values before they are a DataFrame: the query ids and one float64 array per column.

    The engine builds a :class:`Result` from these, and :attr:`Result.per_query` makes the DataFrame on
    first use: printing means, counts or the per-query rows needs no pandas (``ragrade evaluate`` on a small
    file then never imports it: issue 11, start-up)."""

    __slots__ = ("data", "index")

    def __init__(self, index: Any, data: Mapping[str, Any]) -> None:
        self.index = np.asarray(index, dtype=object)
        self.data = {c: np.asarray(v, dtype=np.float64) for c, v in data.items()}
        for c, v in self.data.items():
            if v.shape != self.index.shape:
                raise ValueError(f"column {c!r} has {len(v)} values for {len(self.index)} queries")

    @property
    def columns(self) -> list[str]:
        return list(self.data)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.data, index=pd.Index(self.index, name="query", dtype=object))


def _table_columns(t: Any) -> list[str]:
    return list(t.columns)


def _table_column(t: Any, c: str) -> np.ndarray:
    if isinstance(t, QueryColumns):
        return t.data[c]
    return t[c].to_numpy(dtype=np.float64)


def _table_rows(t: Any) -> list[tuple[Any, tuple[float, ...]]]:
    """``[(query, (value per column))]`` of a :class:`QueryColumns` or a DataFrame."""
    if isinstance(t, QueryColumns):
        cols = [t.data[c].tolist() for c in t.data]
        return list(zip(t.index.tolist(), zip(*cols, strict=True) if cols else [()] * len(t.index), strict=True))
    return list(zip(t.index.tolist(), t.itertuples(index=False, name=None), strict=True))


class HoleRate:
    """The share of each query's top-k retrieved documents that have no judgment (any grade counts as a
    judgment). k is the largest cutoff asked (10 when none is). ``per_query`` (a Series indexed by query)
    is NaN for an empty list. When the ground truth holds no judged non-relevant item at all (the usual
    RAG case: only gold items are listed), every non-gold item is a hole, and ``only_relevant_judged`` says
    so. ``per_query`` may be given as a Series or as ``(query ids, rates)`` arrays (no pandas needed until
    the Series is asked for). Immutable, as the :class:`Result` that holds it: :meth:`subset` gives a
    modified copy."""

    __slots__ = ("_arrays", "_by_k", "_series", "k", "only_relevant_judged")
    k: int
    only_relevant_judged: bool
    _series: pd.Series | None
    _arrays: tuple[np.ndarray, np.ndarray] | None
    _by_k: Mapping[int, float]

    def __init__(self, k: int, per_query: Any, only_relevant_judged: bool = False,
                 by_k: Mapping[int, float] | None = None) -> None:
        init = object.__setattr__  # the one place the fields are set (assignment raises afterwards)
        init(self, "k", k)
        init(self, "_series", per_query if is_pandas(per_query) else None)
        arrays = None
        if self._series is None:
            index, values = per_query
            arrays = (np.asarray(index, dtype=object), np.asarray(values, dtype=np.float64))
        init(self, "_arrays", arrays)
        init(self, "only_relevant_judged", only_relevant_judged)
        init(self, "_by_k", MappingProxyType({} if by_k is None else dict(by_k)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a HoleRate is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a HoleRate is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        per_query = self._arrays if self._arrays is not None else self._series
        return (HoleRate, (self.k, per_query, self.only_relevant_judged, dict(self._by_k)))

    @property
    def by_k(self) -> Mapping[int, float]:
        """The mean hole rate at k and at the evaluator's ``hole_cutoffs`` (the report's), ``{k: mean}``
        (read-only)."""
        return self._by_k

    @property
    def per_query(self) -> pd.Series:
        if self._series is None:
            import pandas as pd

            assert self._arrays is not None
            index, values = self._arrays
            series = pd.Series(values, index=pd.Index(index, name="query", dtype=object),
                               name=f"hole_rate@{self.k}")
            object.__setattr__(self, "_series", series)  # made once, on first use (a cache, not a change)
        assert self._series is not None
        return self._series

    def _values(self) -> np.ndarray:
        return self._arrays[1] if self._arrays is not None else self.per_query.to_numpy(dtype=np.float64)

    def __repr__(self) -> str:
        return (f"HoleRate(k={self.k}, mean={self.mean:.4f}, queries={self.queries}, "
                f"only_relevant_judged={self.only_relevant_judged})")

    @property
    def mean(self) -> float:
        """Mean over the queries with a non-empty list (NaN when there is none)."""
        v = self._values()
        v = v[~np.isnan(v)]
        return float(v.mean()) if len(v) else math.nan

    @property
    def queries(self) -> int:
        return int((~np.isnan(self._values())).sum())

    def subset(self, mask: np.ndarray, by_k: Mapping[int, float] | None = None) -> HoleRate:
        kept: Any = ((self._arrays[0][mask], self._arrays[1][mask]) if self._arrays is not None
                     else self.per_query[mask])
        return HoleRate(self.k, kept, self.only_relevant_judged, self.by_k if by_k is None else by_k)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"k": self.k, "mean": self.mean, "queries": self.queries,
                               "only_relevant_judged": self.only_relevant_judged,
                               "by_k": {str(k): v for k, v in sorted(self.by_k.items())}}
        if per_query:
            pairs = (zip(self._arrays[0].tolist(), self._arrays[1].tolist(), strict=True)
                     if self._arrays is not None else self.per_query.items())
            out["per_query"] = {str(q): float(v) for q, v in pairs}
        return out

    def line(self) -> str:
        """One line for the summary: ``hole rate@10: 23.1% of the top 10 ... (mean over 40 queries)``."""
        mean = self.mean
        if math.isnan(mean):
            return f"hole rate@{self.k}: no retrieved documents"
        text = (f"hole rate@{self.k}: {100 * mean:.1f}% of the top-{self.k} retrieved documents have no judgment "
                f"(mean over {plural(self.queries, 'query', 'queries')})")
        if self.only_relevant_judged:
            text += "; the ground truth lists relevant items only, so every other item counts as unjudged"
        return text

    def exceeds(self, threshold: float) -> bool:
        """Whether the mean hole rate is above ``threshold`` (a share) while judged non-relevant items exist
        (with relevant-only ground truth, holes are expected and not a warning)."""
        mean = self.mean
        return not self.only_relevant_judged and not math.isnan(mean) and mean > threshold


@dataclass(frozen=True)
class JudgeInfo:
    """Who judged a judged evaluation (:func:`ragrade.judges.evaluate_judged`) and how its judgments went:
    data held by the :class:`Summary` of its :class:`Result` (``result.judge``), no behaviour of its own.

    ``name``, ``model``: the judge (``lexical``, ``openai`` ...) and its model. ``profile``: the judge profile
    the formulas followed (``default``, ``ragas``, ``deepeval``). ``outcomes``: per metric label, how many
    queries were ``scored``, ``failed``, ``missing`` (an empty question or reference), ``degenerate`` (no
    retrieved context: 0 without a call) and ``undefined`` (NaN by the formula). ``judgments``: needed,
    cache hits, calls, failed, prompt and completion tokens, cost (with a budget: ``unasked``,
    ``budget_reached``). ``cache``: the cache file (None: off or not used); ``cache_note``: why judgments
    were not cached, if they were not."""

    name: str
    model: str
    profile: str
    outcomes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    judgments: Mapping[str, Any] = field(default_factory=dict)
    cache: str | None = None
    cache_note: str | None = None

    def notes(self) -> list[str]:
        """The sentences a judged result adds to :meth:`Result.notes`: failed and unasked judgments (their
        metrics are NaN where they were needed)."""
        j = self.judgments
        out: list[str] = []
        failed, unasked = int(j.get("failed", 0)), int(j.get("unasked", 0))
        if failed:
            out.append(f"{plural(failed, 'judgment', 'judgments')} failed: the metrics "
                       f"that needed them are NaN for those queries (reasons in details)")
        if unasked:
            out.append(f"budget reached: {plural(unasked, 'judgment', 'judgments')} left unasked (their metrics "
                       f"are NaN); run again to resume from the cache")
        return out

    def to_dict(self, queries: int) -> dict[str, Any]:
        """The judged evaluation's entries of the summary export (as ``ragrade judge --format json`` has
        always written them): ``queries``, ``metrics`` (the outcomes), ``judgments``, ``cache``
        (+ ``cache_note``)."""
        out: dict[str, Any] = {"queries": queries, "metrics": {k: dict(v) for k, v in self.outcomes.items()},
                               "judgments": dict(self.judgments), "cache": self.cache}
        if self.cache_note is not None:
            out["cache_note"] = self.cache_note
        return out


@dataclass(frozen=True)
class Summary(Mapping[str, Any]):
    """What happened to the queries: counts and examples for every policy that applied (and, for a judged
    evaluation, ``judge``: who judged and how the judgments went).

    Immutable (``dataclasses.replace`` gives a modified copy). It also reads as the mapping of its export
    :meth:`to_dict` (``summary["evaluated"]``, ``summary["judgments"]["calls"]``): the attributes hold the
    query lists, the mapping their counts, as the JSON output does."""

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
    duplicates_judged_only: bool = False  # duplicates were counted among judged items only
    nonfinite_scores: int = 0  # scores of +inf or -inf (ranked as given)
    judge: JudgeInfo | None = None  # a judged evaluation: the judge and its counters

    def to_dict(self) -> dict[str, Any]:
        out = {
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
            "nonfinite_scores": self.nonfinite_scores,
        }
        if self.judge is not None:
            out.update(self.judge.to_dict(self.evaluated))
        return out

    def replace(self, **changes: Any) -> Summary:
        """A copy with some fields changed (as ``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    # -- read as the mapping of to_dict() ----------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    __hash__ = None  # type: ignore[assignment]  # holds lists and dicts


class LocalValues(NamedTuple):
    """What a :class:`DeferredValues` hands back when collected: the per-query values, the upper bounds
    (``unjudged="bounds"``) and the hole rate, on this machine."""

    per_query: pd.DataFrame | QueryColumns
    upper: pd.DataFrame | QueryColumns | None = None
    hole_rate: HoleRate | None = None


class DeferredValues(ABC):
    """Per-query values kept where they were computed (a Spark cluster: :mod:`ragrade.scale.spark`) behind
    a :class:`Result`: the result's ``per_query`` and ``upper`` are :attr:`frame` and :attr:`upper_frame`
    (e.g. Spark DataFrames); its means, counts, hole rate and exports read the values collected to this
    machine by :meth:`collect`, once, on first need. ``columns`` are the metric labels, in order.

    A subclass implements :meth:`collect` (and :meth:`release`, to free what it holds elsewhere); the
    collected values are kept by this object (a cache: the result never changes)."""

    #: Shown before ``Result(...)`` in the repr (e.g. ``Spark``).
    where: str = ""

    def __init__(self, frame: Any, columns: Iterable[str], upper_frame: Any = None) -> None:
        self.frame = frame
        self.upper_frame = upper_frame
        self.columns = list(columns)
        self._local: LocalValues | None = None

    @abstractmethod
    def collect(self) -> LocalValues:
        """The values on this machine (called once, by :meth:`local`)."""

    def local(self) -> LocalValues:
        """The collected values (collected on the first call)."""
        if self._local is None:
            self._local = self.collect()
        return self._local

    def release(self) -> None:  # noqa: B027 - optional: nothing to free by default
        """Free what is held elsewhere (the collected values stay usable)."""


class Result:
    """The outcome of one evaluation: per-query values, means with the number of queries counted, and a
    :class:`Summary` of what the policies did. Every evaluation returns one: ids, texts, lists, diversity,
    judge metrics (:func:`ragrade.judges.evaluate_judged`) and Spark (:func:`ragrade.scale.spark.evaluate`).

    ``per_query`` is a DataFrame with one row per query (index ``query``) and one column per metric,
    labelled as the metric was first written. NaN marks a query the metric does not count (e.g. no
    relevant judgments under the default policy). ``metrics`` maps each label to its parsed
    :class:`~ragrade.metrics.Metric`; ``profile`` is the profile the values follow (None: the default
    convention). ``details`` (``{query: {label: {...}}}``, empty unless the evaluation keeps them) is the
    account behind each value: a judge's verdicts, statements and failure reasons. ``judge`` (the
    summary's :class:`JudgeInfo`) says who judged a judged evaluation, None otherwise.

    A result of :func:`ragrade.scale.spark.evaluate` keeps its per-query values on Spark
    (:class:`DeferredValues`): ``per_query`` and ``upper`` are then Spark DataFrames (column ``query_id``
    plus one per label), everything else is collected to the driver once, on first need, and
    :meth:`collect` gives the local (pandas-backed) result.

    Immutable: assignment raises; :meth:`replace` and :meth:`with_columns` give modified copies.
    """

    __slots__ = ("_hole_rate", "_missing_said", "_nan_means", "_table", "_upper_table", "details", "metrics",
                 "policies", "profile", "run_name", "summary")
    _table: pd.DataFrame | QueryColumns | DeferredValues
    _upper_table: pd.DataFrame | QueryColumns | None
    _nan_means: frozenset[str]
    _missing_said: str | None
    _hole_rate: HoleRate | None
    metrics: dict[str, Metric]
    summary: Summary
    policies: Policies
    run_name: str | None
    profile: Profile | None
    details: Mapping[str, Mapping[str, Any]]

    def __init__(self, per_query: pd.DataFrame | QueryColumns | DeferredValues, metrics: Mapping[str, Metric],
                 summary: Summary, policies: Policies, run_name: str | None = None, nan_means: Iterable[str] = (),
                 profile: Profile | None = None, hole_rate: HoleRate | None = None,
                 upper: pd.DataFrame | QueryColumns | None = None,
                 details: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        deferred = isinstance(per_query, DeferredValues)
        if not (deferred or isinstance(per_query, QueryColumns) or is_frame(per_query)):
            raise InputError("per_query must be a pandas DataFrame, QueryColumns or DeferredValues",
                             value=type(per_query).__name__)
        if deferred and (upper is not None or hole_rate is not None):
            raise InputError("a result whose per-query values are deferred takes its upper bounds and hole rate "
                             "from them (give neither upper= nor hole_rate=)")
        init = object.__setattr__  # the one place the fields are set (assignment raises afterwards)
        init(self, "_table", per_query)
        init(self, "_upper_table", upper)
        init(self, "metrics", dict(metrics))
        init(self, "summary", summary)
        init(self, "policies", policies)
        init(self, "run_name", run_name)
        init(self, "profile", profile)
        init(self, "_nan_means", frozenset(nan_means))
        init(self, "_missing_said", None)  # _missing_outcome's words, found once (a cache, not a change)
        init(self, "_hole_rate", hole_rate)
        init(self, "details", {} if details is None else dict(details))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Result is immutable: use result.replace({name}=...) for a modified copy")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a Result is immutable")

    def __reduce__(self) -> tuple[Any, ...]:  # pickling and copying go through the constructor
        if isinstance(self._table, DeferredValues):  # a Spark frame does not travel: its values do
            return self.collect().__reduce__()
        return (Result, (self._table, self.metrics, self.summary, self.policies, self.run_name, self._nan_means,
                         self.profile, self._hole_rate, self._upper_table, self.details))

    def replace(self, **changes: Any) -> Result:
        """A copy with some fields changed: ``per_query``, ``metrics``, ``summary``, ``policies``,
        ``run_name``, ``nan_means``, ``profile``, ``hole_rate``, ``upper``, ``details`` (the constructor's
        arguments). A result whose values are deferred (Spark) changes its per-query values, ``upper`` or
        ``hole_rate`` on its collected copy (:meth:`collect`).

        >>> r = Result(QueryColumns(["q1"], {"P@1": [1.0]}), {}, Summary(1, 1, 1), Policies())
        >>> r.replace(run_name="bm25").run_name, r.run_name
        ('bm25', None)
        """
        fields: dict[str, Any] = {"per_query": self._table, "metrics": self.metrics, "summary": self.summary,
                                  "policies": self.policies, "run_name": self.run_name,
                                  "nan_means": self._nan_means, "profile": self.profile,
                                  "hole_rate": self._hole_rate, "upper": self._upper_table, "details": self.details}
        unknown = [k for k in changes if k not in fields]
        if unknown:
            from ragrade.errors import UnknownNameError

            raise UnknownNameError("Result field", unknown[0], fields)
        if self.deferred and {"per_query", "upper", "hole_rate"} & set(changes):
            return self.collect().replace(**changes)
        fields.update(changes)
        return Result(**fields)

    def with_columns(self, values: Mapping[str, Any], metrics: Mapping[str, Metric]) -> Result:
        """A copy with the per-query ``values`` (``{label: array in row order}``) added as columns (or
        replacing the columns of those labels), each label's metric given by ``metrics`` (on the collected
        values of a deferred result)."""
        base = self.collect()
        frame = base.per_query.copy()
        for label, v in values.items():
            frame[label] = np.asarray(v, dtype=np.float64)
        return base.replace(per_query=frame, metrics={**base.metrics, **metrics})

    # -- where the per-query values are ------------------------------------------------------------
    @property
    def deferred(self) -> bool:
        """Whether the per-query values are kept elsewhere (on Spark): ``per_query`` is then not a pandas
        DataFrame, and :meth:`collect` gives the local result."""
        return isinstance(self._table, DeferredValues)

    def collect(self) -> Result:
        """The result with its per-query values on this machine (pandas-backed): this result itself unless
        it is :attr:`deferred`; then a copy built from the values collected (once) to the driver."""
        t = self._table
        if not isinstance(t, DeferredValues):
            return self
        loc = t.local()
        return Result(loc.per_query, self.metrics, self.summary, self.policies, run_name=self.run_name,
                      nan_means=self._nan_means, profile=self.profile, hole_rate=loc.hole_rate, upper=loc.upper,
                      details=self.details)

    def unpersist(self) -> None:
        """Free the per-query values a deferred result keeps on the cluster (Spark's cache); the values
        collected already stay usable. Nothing to do for a local result."""
        if isinstance(self._table, DeferredValues):
            self._table.release()

    @property
    def _values(self) -> pd.DataFrame | QueryColumns:
        """The per-query values on this machine (collected first when deferred)."""
        t = self._table
        return t.local().per_query if isinstance(t, DeferredValues) else t

    @property
    def _upper_values(self) -> pd.DataFrame | QueryColumns | None:
        t = self._table
        return t.local().upper if isinstance(t, DeferredValues) else self._upper_table

    @property
    def per_query(self) -> pd.DataFrame:
        """One row per query (index ``query``), one column per metric label (a Spark DataFrame with a
        ``query_id`` column when the result is :attr:`deferred`)."""
        t = self._table
        if isinstance(t, DeferredValues):
            return t.frame
        if isinstance(t, QueryColumns):
            t = t.to_frame()
            object.__setattr__(self, "_table", t)  # made once, on first use (a cache, not a change)
        return t

    @property
    def upper(self) -> pd.DataFrame | None:
        """With ``unjudged="bounds"``: the per-query upper bounds (every unjudged retrieved document relevant
        at ``upper_grade``); ``per_query`` then holds the lower bounds. None otherwise."""
        t = self._table
        if isinstance(t, DeferredValues):
            return t.upper_frame
        if isinstance(self._upper_table, QueryColumns):
            object.__setattr__(self, "_upper_table", self._upper_table.to_frame())
        return self._upper_table

    @property
    def hole_rate(self) -> HoleRate | None:
        """The share of unjudged documents in each query's top k (with ground-truth lists, as list profiles
        read them, every retrieved item matching no listed item counts as unjudged). None for a result
        without one (judge metrics, a result built by hand)."""
        t = self._table
        return t.local().hole_rate if isinstance(t, DeferredValues) else self._hole_rate

    @property
    def judge(self) -> JudgeInfo | None:
        """A judged evaluation's :class:`JudgeInfo` (``summary.judge``): the judge, its model, the judge
        profile and the judgments' counters. None for every other evaluation."""
        return self.summary.judge

    @property
    def columns(self) -> list[str]:
        """The metric labels, in column order."""
        return _table_columns(self._table)

    def per_query_rows(self, upper: bool = False) -> list[tuple[Any, tuple[float, ...]]]:
        """``[(query, (value of each column))]`` in row order: :attr:`per_query` (or :attr:`upper`) as
        plain tuples, without building a DataFrame."""
        table = self._upper_values if upper else self._values
        return [] if table is None else _table_rows(table)

    @property
    def nan_means(self) -> frozenset[str]:
        """Labels whose mean is NaN by policy (``no_relevant="nan"`` with an undefined query)."""
        return self._nan_means

    # -- aggregates --------------------------------------------------------------------------------
    @property
    def counts(self) -> MetricValues:
        """Number of queries counted in each metric's mean."""
        t = self._values
        return MetricValues({c: int((~np.isnan(_table_column(t, c))).sum()) for c in _table_columns(t)},
                            self.metrics)

    @property
    def means(self) -> MetricValues:
        """Each metric aggregated over its counted queries: the mean, or what its family says (trec_eval's
        counts are summed, ``gm_map`` is a geometric mean); rounded as the profile says, if it does."""
        return self._aggregate(self._values)

    @property
    def upper_means(self) -> MetricValues | None:
        """With ``unjudged="bounds"``: the aggregated upper bounds (``means`` are the lower bounds)."""
        return None if self._upper_values is None else self._aggregate(self._upper_values)

    def _aggregate(self, table: pd.DataFrame | QueryColumns) -> MetricValues:
        rounding = None if self.profile is None else self.profile.rounding
        out: dict[str, float] = {}
        for c in _table_columns(table):
            col = _table_column(table, c)
            m = self.metrics.get(c)
            value = math.nan if (c in self._nan_means or bool(np.isnan(col).all())) else aggregate(
                col, m.family.aggregate if m is not None else "mean")
            out[c] = value if rounding is None or math.isnan(value) else round(value, rounding)
        return MetricValues(out, self.metrics)

    @property
    def n_queries(self) -> int:
        """Queries counted by at least one metric."""
        t = self._values
        cols = _table_columns(t)
        if not cols:
            return 0
        counted = np.zeros(len(_table_column(t, cols[0])), dtype=bool)
        for c in cols:
            counted |= ~np.isnan(_table_column(t, c))
        return int(counted.sum())

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

    def by(self, labels: Any) -> Any:
        """Per-slice means, query counts and hole rates (:func:`ragrade.engine.slices.slice_result`):
        ``labels`` maps query ids to labels (a dict, Series, DataFrame of several slicing columns, or a file
        ``FILE[:COLUMN]``). Returns a new :class:`~ragrade.engine.slices.Slices`; this result is not
        changed."""
        from ragrade.engine.slices import slice_result

        return slice_result(self.collect(), labels, aggregate)

    # -- outputs -----------------------------------------------------------------------------------
    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """``{"run", "metrics", "counts", "queries", "summary"}`` (+ ``"per_query"``, and with
        ``per_query`` the ``"details"`` an evaluation kept); NaN stays NaN here (``to_json`` writes it as
        null). A judged evaluation also has ``"profile"`` (the judge profile), ``"judge"``, ``"model"`` and
        ``"means"`` (the same values as ``"metrics"``) first, and its summary has the judge's entries
        (:meth:`JudgeInfo.to_dict`): the keys ``ragrade judge --format json`` has always written."""
        out: dict[str, Any] = {}
        judge = self.judge
        if judge is not None:
            out.update({"profile": judge.profile, "judge": judge.name, "model": judge.model,
                        "means": dict(self.means)})
        out |= {
            "run": self.run_name,
            "metrics": dict(self.means),
            "counts": dict(self.counts),
            "queries": self.n_queries,
            "summary": self.summary.to_dict(),
        }
        if self.profile is not None and self.profile.name != "default":
            out["profile"] = self.profile.name
        if self.hole_rate is not None:
            out["hole_rate"] = self.hole_rate.to_dict(per_query=per_query)
        upper = self.upper_means
        if upper is not None and self._upper_values is not None:
            out["upper"] = dict(upper)
            if per_query:
                cols_u = _table_columns(self._upper_values)
                out["per_query_upper"] = {str(q): {c: float(v) for c, v in zip(cols_u, row, strict=True)}
                                          for q, row in self.per_query_rows(upper=True)}
        if per_query:
            cols = self.columns
            out["per_query"] = {str(q): {c: float(v) for c, v in zip(cols, row, strict=True)}
                                for q, row in self.per_query_rows()}
            if self.details:
                out["details"] = {str(q): d for q, d in self.details.items()}
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
            cols = self.columns
            w.writerow(["query", *cols])
            for q, row in self.per_query_rows():
                w.writerow([q, *(format_number(float(v), digits) for v in row)])
            w.writerow(["all", *(format_number(means[c], digits) for c in cols)])
        else:
            counts = self.counts
            upper = self.upper_means
            w.writerow(["metric", "mean", "queries", *(["upper"] if upper is not None else [])])
            for label, mean in means.items():
                w.writerow([label, format_number(mean, digits), counts[label],
                            *([format_number(upper[label], digits)] if upper is not None else [])])
        return buf.getvalue()

    def to_markdown(self, per_query: bool = False, digits: int = 4) -> str:
        counts = self.counts
        upper = self.upper_means
        if upper is None:
            lines = ["| metric | mean | queries |", "|---|---:|---:|"]
        else:
            lines = ["| metric | mean (lower) | upper | queries |", "|---|---:|---:|---:|"]
        for label, mean in self.means.items():
            hi = "" if upper is None else f" {format_number(upper[label], digits)} |"
            lines.append(f"| {label} | {format_number(mean, digits)} |{hi} {counts[label]} |")
        if per_query:
            cols = self.columns
            lines += ["", "| query | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
            for q, row in self.per_query_rows():
                lines.append(f"| {q} | " + " | ".join(format_number(v, digits) for v in row) + " |")
        return "\n".join(lines) + "\n"

    def summary_lines(self) -> list[str]:
        """A short account of what the policies did: the first line counts queries, each further line
        is one note, in the words of :meth:`notes` (the same wording in every output format and in the
        :class:`~ragrade.errors.RagradeWarning` the evaluation emits), then the hole-rate line."""
        s = self.summary
        lines = [f"{plural(s.qrels_queries, 'query', 'queries')} in the ground truth, {s.run_queries} in the run, "
                 f"{s.evaluated} evaluated", *self.notes()]
        if self.hole_rate is not None:
            lines.append(self.hole_rate.line())
        return lines

    def notes(self) -> list[str]:
        """One sentence per policy that applied (missing queries, empty lists, duplicates, ties at a
        cutoff, infinite scores, ...): the text of the evaluation's warning, and the ``note:`` lines of
        the command line in every format."""
        s = self.summary
        pol = self.policies
        out: list[str] = []
        if s.missing_from_run:
            what = self._missing_outcome() if pol.missing_run == "zero" else "dropped"
            out.append(f"{plural(len(s.missing_from_run), 'ground-truth query', 'ground-truth queries')} "
                       f"missing from the run, {what}{_examples(s.missing_from_run)}")
        if s.only_in_run:
            out.append(f"{plural(len(s.only_in_run), 'run query', 'run queries')} without ground truth, "
                       f"ignored{_examples(s.only_in_run)}")
        if s.no_relevant:
            worst = max(s.no_relevant.values(), key=len)
            action = {"skip": "left out of the means", "zero": "scored 0", "nan": "NaN (means are NaN)"}.get(
                pol.no_relevant, str(pol.no_relevant))
            if worst:
                out.append(f"{plural(len(worst), 'query', 'queries')} without relevant judgments, "
                           f"{action}{_examples(worst)}")
        if s.empty_lists:
            out.append(f"{plural(len(s.empty_lists), 'query', 'queries')} with an empty retrieved list, "
                       f"scored 0{_examples(s.empty_lists)}")
        if s.duplicate_items:
            what = "credited once" if pol.duplicates == "credit_once" else pol.duplicates
            scope = " (judged items; duplicates of unjudged items change no value)" if s.duplicates_judged_only else ""
            out.append(f"{plural(s.duplicate_items, 'duplicate item', 'duplicate items')} in rankings{scope} "
                       f"({what})")
        if s.identical_ids_dropped:
            out.append(f"{plural(s.identical_ids_dropped, 'item', 'items')} with the query's own id dropped")
        for k, n in sorted(s.ties_at_cutoff.items()):
            out.append(f"{plural(n, 'query has', 'queries have')} tied scores across cutoff {k} "
                       f"(values depend on the tie rule: {pol.ties})")
        if s.nonfinite_scores:
            out.append(f"{plural(s.nonfinite_scores, 'score is', 'scores are')} +inf or -inf (an overflowing "
                       f"number reads as inf), ranked as given: +inf first, -inf last")
        if pol.unjudged != "nonrelevant":
            out.append({"condensed": "unjudged documents removed before scoring (condensed lists)",
                        "bounds": "values are lower bounds (unjudged = non-relevant); upper bounds count every "
                                  "unjudged document as relevant"}[pol.unjudged])
        if s.judge is not None:
            out += s.judge.notes()
        return out

    def _missing_outcome(self) -> str:
        """What the values of the queries missing from the run are, in words: 0 under the default
        engine; NaN (left out of the mean) where a list profile's empty-list rule says so."""
        if self._missing_said is None:
            object.__setattr__(self, "_missing_said", self._find_missing_outcome())
        assert self._missing_said is not None
        return self._missing_said

    def _find_missing_outcome(self) -> str:
        from ragrade._arrays import member

        table = self._values
        index = table.index if isinstance(table, QueryColumns) else np.asarray(table.index, dtype=object)
        rows = member(index, self.summary.missing_from_run)  # linear (np.isin on objects: quadratic)
        if not rows.any():
            return "dropped"
        nan = [bool(np.isnan(_table_column(table, c)[rows]).all()) for c in _table_columns(table)]
        zero = [bool((_table_column(table, c)[rows] == 0).all()) for c in _table_columns(table)]
        if nan and all(nan):
            return "NaN, left out of the means"
        if all(zero):
            return "scored 0"
        return "scored 0 or NaN (left out of the mean), depending on the metric"

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={format_number(v, 4)}" for k, v in self.means.items())
        prefix = "" if self.profile is None or self.profile.name == "default" else f"{self.profile.name}:"
        if isinstance(self._table, DeferredValues):
            prefix = self._table.where + prefix
        judge = self.judge
        by = "" if judge is None else f"; judge {judge.name} ({judge.model}), profile {judge.profile}"
        return f"{prefix}Result({inner}; {self.n_queries} queries{by})"


def plural(n: int, one: str, many: str) -> str:
    """``"1 query"``, ``"2 queries"``."""
    return f"{n} {one if n == 1 else many}"


def _examples(items: list[str], n: int = 3) -> str:
    shown = ", ".join(repr(x) for x in items[:n])
    return f" (e.g. {shown}{', ...' if len(items) > n else ''})"


def aggregate(values: np.ndarray, how: str) -> float:
    """One number from per-query values (NaN values left out): ``"mean"``, ``"sum"`` or ``"gmean"`` (the
    geometric mean of the values floored at 1e-5, as trec_eval's gm_map)."""
    v = values[~np.isnan(values)]
    if len(v) == 0:
        return math.nan
    if how == "sum":
        return float(v.sum())
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(v, 1e-5)))))
    return float(v.mean())


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
