"""The one result model: :class:`Result` — per-query values, aggregates, counts, a summary.

Every evaluation path (ids, groups, texts, engine profiles, list profiles, diversity, out of core, judge
metrics, Spark, the routes of other ground truths) returns a :class:`Result`. What is particular to a path
is data held by the result, not a subclass: where its per-query values live (:mod:`ragrade.engine.values`:
:class:`QueryColumns`, a DataFrame, or :class:`DeferredValues` kept on Spark and collected once), what the
policies did (:mod:`ragrade.engine.summary`: :class:`Summary`, :class:`HoleRate`, and a judged
evaluation's :class:`JudgeInfo`) and ``details``. Its labels and their values are
:mod:`ragrade.engine.labels`; its output formats (``to_dict``, ``to_json``, ``to_csv``, ``to_markdown``) are
written by io/ (:mod:`ragrade.io.results`), the words of its notes (``notes``, ``summary_lines``) by
:mod:`ragrade.engine.notes`. A result, its summary and its
hole rate are immutable: ``replace`` gives modified copies.

Metrics are keyed by the parsed :class:`~ragrade.metrics.Metric`: two spellings of one metric (``P@2``
and ``precision@2``) are computed once and shown under every label the user wrote, and ``means`` /
``counts`` / ``per_query`` accept any spelling of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade._arrays import is_frame
from ragrade.engine import notes as policy_notes
from ragrade.engine.labels import MetricValues
from ragrade.engine.summary import HoleRate, JudgeInfo, Summary
from ragrade.engine.values import (
    DeferredValues,
    LocalValues,
    QueryColumns,
    aggregate,
    table_column,
    table_columns,
    table_rows,
)
from ragrade.errors import InputError
from ragrade.formatting import decimals
from ragrade.metrics.parser import Metric
from ragrade.policies import Policies

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ragrade.profiles import Profile


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
        return table_columns(self._table)

    def per_query_rows(self, upper: bool = False) -> list[tuple[Any, tuple[float, ...]]]:
        """``[(query, (value of each column))]`` in row order: :attr:`per_query` (or :attr:`upper`) as
        plain tuples, without building a DataFrame."""
        table = self._upper_values if upper else self._values
        return [] if table is None else table_rows(table)

    @property
    def upper_columns(self) -> list[str]:
        """The labels of the upper bounds' columns (``unjudged="bounds"``), in order; empty without them."""
        table = self._upper_values
        return [] if table is None else table_columns(table)

    @property
    def nan_means(self) -> frozenset[str]:
        """Labels whose mean is NaN by policy (``no_relevant="nan"`` with an undefined query)."""
        return self._nan_means

    # -- aggregates --------------------------------------------------------------------------------
    @property
    def counts(self) -> MetricValues:
        """Number of queries counted in each metric's mean."""
        t = self._values
        return MetricValues({c: int((~np.isnan(table_column(t, c))).sum()) for c in table_columns(t)},
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
        for c in table_columns(table):
            col = table_column(table, c)
            m = self.metrics.get(c)
            value = math.nan if (c in self._nan_means or bool(np.isnan(col).all())) else aggregate(
                col, m.family.aggregate if m is not None else "mean")
            out[c] = value if rounding is None or math.isnan(value) else round(value, rounding)
        return MetricValues(out, self.metrics)

    @property
    def n_queries(self) -> int:
        """Queries counted by at least one metric."""
        t = self._values
        cols = table_columns(t)
        if not cols:
            return 0
        counted = np.zeros(len(table_column(t, cols[0])), dtype=bool)
        for c in cols:
            counted |= ~np.isnan(table_column(t, c))
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

    # -- outputs (the formats: ragrade.io.results, with io's writers; the notes' words: engine/notes.py) -----
    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """``{"run", "metrics", "counts", "queries", "summary"}`` (+ ``"per_query"``, and with
        ``per_query`` the ``"details"`` an evaluation kept); NaN stays NaN here (``to_json`` writes it as
        null). A judged evaluation also has ``"profile"`` (the judge profile), ``"judge"``, ``"model"`` and
        ``"means"`` (the same values as ``"metrics"``) first, and its summary has the judge's entries
        (:meth:`JudgeInfo.to_dict`): the keys ``ragrade judge --format json`` has always written."""
        from ragrade.io.results import result_dict

        return result_dict(self, per_query)

    def to_json(self, per_query: bool = False, indent: int | None = 2) -> str:
        """The :meth:`to_dict` object as JSON, NaN written as null."""
        from ragrade.io.results import result_json

        return result_json(self, per_query, indent)

    def to_csv(self, per_query: bool = False, digits: int = 4) -> str:
        """Means as ``metric,mean,queries`` rows; with ``per_query``, one row per query (``query,<metrics>``)
        followed by a row ``all`` with the means (as trec_eval)."""
        from ragrade.io.results import result_csv

        return result_csv(self, per_query, digits)

    def to_markdown(self, per_query: bool = False, digits: int = 4) -> str:
        """The means (and upper bounds) as a markdown table; with ``per_query``, a table of every query too."""
        from ragrade.io.results import result_markdown

        return result_markdown(self, per_query, digits)

    def summary_lines(self) -> list[str]:
        """A short account of what the policies did: the first line counts queries, each further line
        is one note, in the words of :meth:`notes` (the same wording in every output format and in the
        :class:`~ragrade.errors.RagradeWarning` the evaluation emits), then the hole-rate line."""
        return policy_notes.summary_lines(self)

    def notes(self) -> list[str]:
        """One sentence per policy that applied (missing queries, empty lists, duplicates, ties at a
        cutoff, infinite scores, ...): the text of the evaluation's warning, and the ``note:`` lines of
        the command line in every format."""
        return policy_notes.notes(self)

    def missing_outcome(self) -> str:
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
        nan = [bool(np.isnan(table_column(table, c)[rows]).all()) for c in table_columns(table)]
        zero = [bool((table_column(table, c)[rows] == 0).all()) for c in table_columns(table)]
        if nan and all(nan):
            return "NaN, left out of the means"
        if all(zero):
            return "scored 0"
        return "scored 0 or NaN (left out of the mean), depending on the metric"

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={decimals(v, 4)}" for k, v in self.means.items())
        prefix = "" if self.profile is None or self.profile.name == "default" else f"{self.profile.name}:"
        if isinstance(self._table, DeferredValues):
            prefix = self._table.where + prefix
        judge = self.judge
        by = "" if judge is None else f"; judge {judge.name} ({judge.model}), profile {judge.profile}"
        return f"{prefix}Result({inner}; {self.n_queries} queries{by})"


#: The result model's vocabulary: the result and the values it is built from and holds.
__all__ = ["DeferredValues", "HoleRate", "JudgeInfo", "LocalValues", "MetricValues", "QueryColumns", "Result",
           "Summary"]
