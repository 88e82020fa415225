"""Evaluation on Spark, where the data lives, with the results of ``ragrade.evaluate`` (``docs/scale.md``).

::

    from ragrade.scale import spark as rs
    res = rs.evaluate(qrels_df, run_df, ["ndcg@10", "map@100", "recall@[10,100]"], no_relevant="zero")
    res             # a ragrade.Result (the one result model) whose per-query values stay on Spark
    res.per_query   # a Spark DataFrame: query_id + one double column per metric label
    res.means       # {label: float}, equal to ragrade.evaluate on the same data
    res.counts      # {label: queries in the mean}
    res.summary     # what the policies did (missing queries, R = 0, duplicates, ties at cutoffs)
    res.collect()   # the same Result with its per-query values on the driver (pandas)

``means``, ``counts``, ``hole_rate``, the exports and :meth:`~ragrade.Result.collect` read the per-query
values collected to the driver, once, on first need (:class:`SparkValues`); ``unpersist()`` frees them on
the cluster.

Both inputs are sent to partitions by a hash of the query id (``xxhash64`` of the id in the one id form, so
``10``, ``10.0`` and ``"10"`` meet), and each partition's two sides meet in one task
(``groupBy(...).cogroup(...).applyInArrow`` on Spark 4, ``applyInPandas`` before): ragrade's engine
evaluates the partition's queries from two Arrow tables, with no Python per row. Every query is whole in
its partition, so every policy decides as on the whole collection; the tasks hand back per-query values
and a small summary, merged on the driver by :mod:`ragrade.scale.combine`.

Inputs: Spark DataFrames with the column names of ragrade's table readers (``query_id``/``qid``/``query``,
``doc_id``/``docid``/``doc``, ``score`` or ``rank``, ``relevance``/``grade``/``rel``/``label``), or paths Spark
reads (Parquet files or directories, Delta tables when Delta Lake is installed, CSV/TSV with a header, TREC
text files). Rows within a query keep the order Spark reads them in (what ``ties="input"`` and
``duplicates="keep_last"`` see); lists in the summary are sorted by query id, as are the per-query rows of
:meth:`Result.collect() <ragrade.Result.collect>`.

``pyspark`` is an extra: ``pip install 'ragrade[spark]'``.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ragrade.engine.labels import MetricsArg, metric_labels
from ragrade.engine.result import DeferredValues, HoleRate, LocalValues, Result, Summary
from ragrade.errors import InputError, RagradeError, RagradeWarning, require

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.scale.pieces import PieceScorer

#: Names of the columns the tasks use (kept apart from any metric label).
KEY, BUCKET, ORDER, STATE, HOLE = "__rg_key", "__rg_bucket", "__rg_order", "__rg_state", "__rg_hole"
_NOT_LISTED = -1.0  # a query the hole rate does not list
UPPER = "__rg_upper_"  # + the label's position: the upper bounds of unjudged="bounds"
_MARK = "RAGRADE_ERROR"


def require_pyspark() -> Any:
    return require("pyspark", extra="spark", purpose="Evaluation on Spark (ragrade.scale.spark)")


class SparkValues(DeferredValues):
    """The per-query values of a Spark evaluation, kept on Spark behind its :class:`ragrade.Result`:
    ``frame`` (the result's ``per_query``: ``query_id`` + one double column per label) and ``upper_frame``
    (``unjudged="bounds"``) are Spark DataFrames over ``cached`` (the tasks' output, persisted);
    :meth:`collect` brings the values, upper bounds and hole rates to the driver, in query-id order."""

    where = "Spark"

    def __init__(self, frame: Any, labels: list[str], cached: Any, hole: tuple[int, bool] | None = None,
                 upper_frame: Any = None) -> None:
        super().__init__(frame, labels, upper_frame)
        self._cached = cached
        self._hole = hole

    def collect(self) -> LocalValues:
        labels = self.columns
        values = self._cached.where(self._cached[STATE].isNull()).drop(STATE)
        # (toArrow: Spark 4; toPandas before)
        frame = values.toArrow().to_pandas() if hasattr(values, "toArrow") else values.toPandas()
        frame = frame.sort_values("query_id", kind="stable")
        index = pd.Index(frame["query_id"].to_numpy(dtype=object), name="query", dtype=object)
        per_query = pd.DataFrame({c: frame[c].to_numpy(dtype=np.float64) for c in labels}, index=index,
                                 columns=labels)
        upper = None
        if self.upper_frame is not None:
            upper = pd.DataFrame({c: frame[f"{UPPER}{i}"].to_numpy(dtype=np.float64) for i, c in enumerate(labels)},
                                 index=index, columns=labels)
        holes = None
        if self._hole is not None:
            k, only = self._hole
            rates = frame[HOLE].to_numpy(dtype=np.float64)
            listed = rates != _NOT_LISTED
            rates = rates[listed]
            valid = rates[~np.isnan(rates)]
            holes = HoleRate(k, pd.Series(rates, index=index[listed], name=f"hole_rate@{k}"), only,
                             {k: float(valid.mean())} if len(valid) else {})
        return LocalValues(per_query, upper, holes)

    def release(self) -> None:
        """Free the cached per-query values on the cluster."""
        self._cached.unpersist()


# -- inputs ----------------------------------------------------------------------------------------------
def _session(spark: Any, *frames: Any) -> Any:
    if spark is not None:
        return spark
    for f in frames:
        s = getattr(f, "sparkSession", None)
        if s is not None:
            return s
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is None:
        raise InputError("no SparkSession: start one, or pass spark=, or give Spark DataFrames")
    return active


def session(master: str = "local[2]", app_name: str = "ragrade") -> Any:
    """A SparkSession for one machine: bound to 127.0.0.1, the web UI off (what the CLI and tests use)."""
    require_pyspark()
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master(master).appName(app_name)
            .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


def read(spark: Any, path: str, kind: str, format: str | None = None) -> Any:
    """A Spark DataFrame from ``path``: a format of the registry that Spark reads (Parquet file or
    directory, CSV/TSV with a header, TREC: ``Format.spark_read``), or a Delta table."""
    from ragrade.io import formats
    from ragrade.io.sources import check_input, is_pipe

    p = os.fspath(path)
    if os.path.exists(p):
        check_input(p, directory_ok=True)
        if is_pipe(p):
            raise InputError(f"{p}: Spark's executors open their inputs by path and cannot read a pipe; write "
                             "it to a file (or evaluate without --engine spark, which reads pipes)")
    fmt = format
    if fmt is None:
        if os.path.isdir(p):
            fmt = "delta" if os.path.isdir(os.path.join(p, "_delta_log")) else "parquet"
        elif os.path.exists(p):
            fmt = formats.detect_format(p)
        else:
            fmt = "parquet"  # a path on a remote file system
    if fmt == "delta":
        return spark.read.format("delta").load(p)
    return formats.get(fmt).spark_read(spark, p, kind)


def _pick(names: list[str], candidates: tuple[str, ...], exclude: tuple[str | None, ...] = ()) -> str | None:
    lower = {n.lower(): n for n in names}
    return next((lower[c] for c in candidates if c in lower and lower[c] not in exclude), None)


def _id_column(df: Any, name: str) -> Any:
    """The ids of a column in the one id form (integral numbers written as integers)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    t = df.schema[name].dataType
    col = F.col(f"`{name}`")
    if isinstance(t, T.StringType):
        return col
    if isinstance(t, T.FloatType | T.DoubleType | T.DecimalType):
        as_long = col.cast("long")
        return F.when(as_long.cast("double") == col.cast("double"), as_long.cast("string")).otherwise(col.cast("string"))
    if isinstance(t, T.IntegralType):
        return col.cast("string")
    raise InputError(f"the column {name!r} holds {t.simpleString()}, not ids (strings or numbers)")


def _number(df: Any, name: str, alias: str, where: str) -> Any:
    """The column ``name`` as doubles. A boolean column is refused (docs/formats.md, "Values"); a string
    column is cast, and :func:`_bad_number` finds the value that Spark could not cast, should the cast fail
    (Spark's own NumberFormatException names neither the column nor the file)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    t = df.schema[name].dataType
    if isinstance(t, T.BooleanType):
        raise InputError(f"{where}: the {alias} column {name!r} holds booleans (true/false), not numbers: "
                         "write 1 and 0")
    if not isinstance(t, T.NumericType | T.StringType | T.NullType):
        raise InputError(f"{where}: the {alias} column {name!r} holds {t.simpleString()}, not numbers")
    return F.col(f"`{name}`").cast("double").alias(alias)


def _bad_number(df: Any, name: str, alias: str, where: str) -> InputError | None:
    """Error path: the first value of the string column ``name`` that is not a number, as an InputError
    naming the column and the value (None if every value is a number)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if not isinstance(df.schema[name].dataType, T.StringType):
        return None
    col = F.col(f"`{name}`")
    bad = df.where(col.isNotNull() & F.expr(f"try_cast(trim(`{name}`) AS DOUBLE)").isNull()).select(col).limit(1)
    rows = bad.collect()
    if not rows:
        return None
    return InputError(f"{where}: the {alias} column {name!r} holds {rows[0][0]!r}, not a number")


def _canonical(df: Any, kind: str, where: str | None = None) -> Any:
    """``query``, ``doc`` (strings in the one id form), the number column, the order of rows as read.
    The frame carries ``_ragrade_number`` = ``(source frame, column, role, where)`` for error reports."""
    from pyspark.sql import functions as F

    from ragrade.io.columns import DOC_NAMES, GRADE_NAMES, QUERY_NAMES, RANK_NAMES, SCORE_NAMES

    names = list(df.columns)
    q = _pick(names, QUERY_NAMES)
    d = _pick(names, DOC_NAMES, (q,))
    if q is None or d is None:
        raise InputError(f"{kind}: cannot find the {'query' if q is None else 'doc'} column (columns: {names}); "
                         f"name them query_id, doc_id and {'score' if kind == 'run' else 'relevance'}")
    cols = [_id_column(df, q).alias("query"), _id_column(df, d).alias("doc")]
    if kind == "run":
        sc = _pick(names, SCORE_NAMES, (q, d))
        rk = _pick(names, RANK_NAMES, (q, d)) if sc is None else None
        if sc is None and rk is None:
            raise InputError(f"run: a Spark DataFrame needs a score or a rank column (rows have no order): {names}")
        num, role = (sc, "score") if sc else (rk, "rank")
    else:
        num, role = _pick(names, GRADE_NAMES, (q, d)), "grade"
    where = where or kind
    if num is not None:
        cols.append(_number(df, num, role, where))
    out = df.select(*cols).withColumn(ORDER, F.monotonically_increasing_id())
    return out, (None if num is None else (df, num, role, where))


# -- the task --------------------------------------------------------------------------------------------
def _task(labels: list[tuple[str, Any]], pieces: PieceScorer, policies: Any, run_name: str | None) -> Any:
    """The function each task runs on one partition's two Arrow tables (``pieces``: how the partition is
    scored, through the engine's scoring port)."""

    def run_task(left: Any, right: Any) -> Any:
        import pyarrow as pa

        try:
            return _evaluate_partition(left, right, labels, pieces, policies, run_name)
        except RagradeError as exc:
            raise RuntimeError(f"{_MARK}[{type(exc).__name__}]: {exc}") from None
        except pa.ArrowException as exc:  # pragma: no cover - a bug, reported with its text
            raise RuntimeError(f"{_MARK}[InputError]: {exc}") from None

    return run_task


def _evaluate_partition(left: Any, right: Any, labels: list[tuple[str, Any]], pieces: PieceScorer,
                        policies: Any, run_name: str | None) -> Any:
    import pyarrow as pa

    from ragrade.io.tables import table_to_qrels, table_to_run
    from ragrade.scale.combine import part_state
    from ragrade.scale.outofcore import empty_run, with_twins

    def rows(r: int) -> tuple[int | None, str | None]:
        return None, f"row {r + 1} of a partition"

    def prepared(t: pa.Table) -> pa.Table:
        t = t.sort_by(ORDER) if t.num_rows else t
        return t.drop_columns([c for c in (BUCKET, ORDER, KEY) if c in t.column_names])

    pairs = list(labels)
    qt, rt = prepared(left), prepared(right)
    run = table_to_run(rt, "<spark run>", rows, name=run_name) if rt.num_rows else empty_run(run_name)
    if qt.num_rows == 0:
        if run.n_queries == 0:
            return _output(None, labels)
        if policies.missing_qrels == "error":
            from ragrade.errors import PolicyError

            raise PolicyError(f"{run.n_queries} run queries have no ground truth (e.g. {run.query_ids[0]!r}); "
                              "set missing_qrels='ignore' to leave them out")
        same = int((run.per_row_docs() == run.per_row_queries()).sum()) if policies.identical_ids == "drop" else 0
        summary = Summary(qrels_queries=0, run_queries=run.n_queries, evaluated=0,
                          only_in_run=run.query_ids.tolist(), identical_ids_dropped=same)
        frame = pd.DataFrame({lab: np.zeros(0) for lab, _ in labels}, index=pd.Index([], dtype=object, name="query"))
        result = Result(frame, dict(pairs), summary, policies, run_name=run_name)
    else:
        qrels = table_to_qrels(qt, "<spark qrels>", rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagradeWarning)
            result = with_twins(pieces(qrels, run), pairs)
    return _output((result, part_state(result)), labels)


def _output(got: tuple[Result, str] | None, labels: list[tuple[str, Any]]) -> Any:
    """One row per query (its values, hole rate, upper bounds) and one last row with the part's state."""
    import pyarrow as pa

    schema = _schema_arrow(labels)
    if got is None:
        return schema.empty_table()
    result, state = got
    frame = result.per_query
    n = len(frame)

    def column(values: np.ndarray | None) -> Any:
        v = np.full(n, np.nan) if values is None else values
        return pa.array(np.concatenate([v, [np.nan]]), type=pa.float64())

    cols: dict[str, Any] = {"query_id": pa.array([*frame.index.tolist(), None], type=pa.string())}
    for lab, _ in labels:
        cols[lab] = column(frame[lab].to_numpy(dtype=np.float64))
    hole = result.hole_rate
    # A query of the values that the hole rate does not list (BEIR's MRR counts every query; its hole rate
    # only the evaluated ones) is marked -1 (rates are shares in [0, 1], or NaN for an empty list).
    rates = None
    if hole is not None:
        rates = np.array(hole.per_query.reindex(frame.index).to_numpy(dtype=np.float64), copy=True)
        rates[~frame.index.isin(hole.per_query.index)] = _NOT_LISTED
    cols[HOLE] = column(rates)
    for i, (lab, _) in enumerate(labels):
        cols[f"{UPPER}{i}"] = column(None if result.upper is None else result.upper[lab].to_numpy(dtype=np.float64))
    cols[STATE] = pa.array([None] * n + [state], type=pa.string())
    return pa.table(cols, schema=schema)


def _value_columns(labels: list[tuple[str, Any]]) -> list[str]:
    return [lab for lab, _ in labels] + [HOLE] + [f"{UPPER}{i}" for i in range(len(labels))]


def _schema_arrow(labels: list[tuple[str, Any]]) -> Any:
    import pyarrow as pa

    return pa.schema([("query_id", pa.string()), *[(c, pa.float64()) for c in _value_columns(labels)],
                      (STATE, pa.string())])


def _schema_spark(labels: list[tuple[str, Any]]) -> Any:
    from pyspark.sql import types as T

    return T.StructType([T.StructField("query_id", T.StringType()),
                         *[T.StructField(c, T.DoubleType()) for c in _value_columns(labels)],
                         T.StructField(STATE, T.StringType())])


# -- the entry point -------------------------------------------------------------------------------------
def evaluate(qrels: Any, run: Any, metrics: MetricsArg, *, partitions: int | None = None, profile: Any = None,
             spark: Any = None, qrels_format: str | None = None, run_format: str | None = None,
             run_name: str | None = None, names: Any = "ragrade", rel_level: int | None = None,
             **policies: Any) -> Result:
    """Score ``run`` against ``qrels`` on Spark; see the module docstring.

    ``qrels``, ``run``: Spark DataFrames or paths Spark reads. ``metrics``, ``profile`` and the policy
    keywords are those of :func:`ragrade.evaluate` (id metrics; the default convention or any profile that
    scores ids). ``partitions``: how many partitions the queries are hashed into (default: the session's
    ``spark.sql.shuffle.partitions``); each task holds one partition's rows in memory.
    """
    require_pyspark()
    from ragrade.scale.pieces import PieceScorer

    labels = metric_labels(metrics, names=names, rel_level=rel_level)
    for label, m in labels:
        if m.family.kind != "id":
            raise InputError(f"{label!r}: Spark evaluates id metrics (judged documents by id); "
                             f"text and judge metrics read texts")
    options: dict[str, Any] = {k: v for k, v in policies.items() if v is not None}
    if options.get("matcher") is not None:
        raise InputError("Spark evaluates id metrics by id; a matcher reads the retrieved texts (evaluate them in "
                         "memory)")
    if profile is not None:
        options["profile"] = profile
    # Every option checked, and the policies in force (the profile's, then the caller's), on the driver: a
    # one-query piece scored as each partition will be.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        probe = PieceScorer.of_options(labels, options)({"q": {"d": 1}}, {"q": {"d": 1.0}})
    sess = _session(spark, qrels, run)
    q_where, r_where = "qrels", "run"
    if isinstance(qrels, str | os.PathLike):
        q_where = os.fspath(qrels)
        qrels = read(sess, os.fspath(qrels), "qrels", qrels_format)
    if isinstance(run, str | os.PathLike):
        r_where = os.fspath(run)
        if run_name is None:
            from ragrade.io import default_run_name

            run_name = default_run_name(os.fspath(run))
        run = read(sess, os.fspath(run), "run", run_format)
    n = int(partitions if partitions is not None else sess.conf.get("spark.sql.shuffle.partitions"))
    if n < 1:
        raise InputError("partitions must be a positive integer", value=partitions)
    q, q_number = _canonical(qrels, "qrels", q_where)
    r, r_number = _canonical(run, "run", r_where)
    try:
        return _evaluate_frames(q, r, labels, options, probe, run_name, n, q_where)
    except RagradeError:
        raise
    except Exception:  # a cast Spark could not do: say which column and value, as the readers do
        for number in (q_number, r_number):
            if number is not None:
                found = _bad_number(*number)
                if found is not None:
                    raise found from None
        raise


def _evaluate_frames(q: Any, r: Any, labels: list[tuple[str, Any]], options: dict[str, Any], probe: Any,
                     run_name: str | None, n: int, q_where: str) -> Result:
    from pyspark.sql import functions as F

    from ragrade.scale.combine import merge_summaries, summary_from_state
    from ragrade.scale.pieces import PieceScorer

    q = q.withColumn(BUCKET, F.pmod(F.xxhash64("query"), F.lit(n)))
    r = r.withColumn(BUCKET, F.pmod(F.xxhash64("query"), F.lit(n)))
    # A value that reads the top grade of the whole ground truth (C/W/L measures without max_rel,
    # unjudged="bounds" without upper_grade) is told it: one aggregation over the ground truth.
    from ragrade.scale.outofcore import needs_top_grade, pin_collection

    task_labels, task_options = list(labels), options
    if needs_top_grade(labels, options):
        top = 1.0  # ground truth without grades: every listed item is relevant at grade 1
        if "grade" in q.columns:
            got = q.agg(F.max("grade").alias("top")).collect()[0]["top"]
            top = float(got) if got is not None else 1.0
        task_labels, task_options = pin_collection(labels, options, top)
    fn = _task(task_labels, PieceScorer.of_options(task_labels, task_options), probe.policies, run_name)
    grouped = q.groupBy(BUCKET).cogroup(r.groupBy(BUCKET))
    if hasattr(grouped, "applyInArrow"):
        out = grouped.applyInArrow(fn, _schema_spark(labels))
    else:  # pragma: no cover - Spark 3.x: pandas in, pandas out (same engine call)
        out = grouped.applyInPandas(_pandas_task(fn), _schema_spark(labels))
    out = out.persist()
    try:
        states = [row[STATE] for row in out.where(F.col(STATE).isNotNull()).select(STATE).collect()]
    except Exception as exc:
        out.unpersist()
        raise _ragrade_error(exc) from None
    parts = [json.loads(s) for s in states]
    summaries = [summary_from_state(p["summary"]) for p in parts]
    summary = _sorted(merge_summaries(summaries, [lab for lab, _ in labels]))
    if summary.qrels_queries == 0:  # as every other path: nothing to evaluate is an error, not NaN means
        out.unpersist()
        raise InputError(f"{q_where}: the ground truth holds no query: there is nothing to evaluate")
    nan_means = {x for p in parts for x in p["nan_means"]}
    values = out.where(F.col(STATE).isNull())
    per_query = values.select("query_id", *[F.col(f"`{lab}`") for lab, _ in labels])
    upper = None
    if probe.upper is not None:
        upper = values.select("query_id", *[F.col(f"{UPPER}{i}").alias(lab) for i, (lab, _) in enumerate(labels)])
    hole = None
    holes = [p["hole_rate"] for p in parts if p.get("hole_rate") is not None]
    if holes:
        hole = (int(holes[0]["k"]), all(bool(h["only_relevant_judged"]) for h in holes))
    deferred = SparkValues(per_query, [lab for lab, _ in labels], out, hole=hole, upper_frame=upper)
    return Result(deferred, dict(labels), summary, probe.policies, run_name=run_name, nan_means=nan_means,
                  profile=probe.profile)


def _pandas_task(fn: Any) -> Any:  # pragma: no cover - Spark 3.x only
    def run_pandas(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
        import pyarrow as pa

        return fn(pa.Table.from_pandas(left, preserve_index=False),
                  pa.Table.from_pandas(right, preserve_index=False)).to_pandas()

    return run_pandas


def _sorted(s: Summary) -> Summary:
    """Query lists in query-id order (Spark gives the rows no other order)."""
    from ragrade.scale.combine import SUMMARY_RULES

    changes: dict[str, Any] = {}
    for name, rule in SUMMARY_RULES.items():
        v = getattr(s, name)
        if rule in ("qrels_list", "run_list"):
            changes[name] = sorted(v)
        elif rule == "qrels_lists_by_label":
            changes[name] = {k: sorted(x) for k, x in v.items()}
    return replace(s, **changes)


def _ragrade_error(exc: Exception) -> Exception:
    """The RagradeError a task raised, rebuilt on the driver from the message Spark carries back."""
    import re

    from ragrade import errors

    text = str(exc)
    m = re.search(_MARK + r"\[(\w+)\]: (.*)", text)
    if m is None:
        return exc
    cls = getattr(errors, m.group(1), errors.InputError)
    message = m.group(2).strip()
    if cls is errors.ParseError or cls is errors.InputError or not issubclass(cls, RagradeError):
        return errors.InputError(message)
    if cls is errors.UnknownNameError or cls is errors.MissingDependencyError:
        return errors.InputError(message)
    return cls(message)


__all__ = ["SparkValues", "evaluate", "read", "session"]
