"""The route of traces (:data:`ragrade.evaluation.ROUTES`): evaluates a plan whose run was read from
traces (a :class:`~ragrade.traces.model.TraceRun`, or :class:`~ragrade.traces.model.Traces` itself: its
trajectories) or whose metrics are trajectory measures (docs/traces.md, "Evaluating").

* Each query of a trace run is scored against the judgments of its key (a call ``q17/2`` against q17's):
  the id metrics through the engine's executor, on the ground truth re-keyed to the run's query ids; a
  ground-truth query that no trace asked is reported missing from the run; a query whose trace had no key
  is a run query without ground truth (both counted in the result's notes).
* The trajectory measures (:mod:`ragrade.kernels.trajectory`) score the calls of each trajectory together;
  their values are added to the result as columns. On a run that is not a run of trajectories (the calls,
  a reranker's lists, any other run), each query is a trajectory of one call.
* ``hops``: the ground-truth column (numbers) naming each relevant document's hop: the units of
  ``hop_success`` and ``trajectory_recall`` (without it each relevant document is its own unit, and the
  groups of grouped ground truth are units).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ragrade.data import Qrels, Run
from ragrade.engine.plan import CORE_KINDS, EvalPlan
from ragrade.engine.result import QueryColumns, Result, Summary
from ragrade.errors import InputError, PolicyNote
from ragrade.kernels.trajectory import Trajectories
from ragrade.traces.model import TraceRun, Traces

__all__ = ["SETTINGS", "claims", "judgments", "run", "trajectories_of", "truth_stats"]


def claims(plan: EvalPlan) -> bool:
    """A plan with a run read from traces, trajectory measures, or the ``hops`` keyword."""
    return ("trajectory" in plan.kinds or "hops" in plan.extras
            or any(isinstance(run, TraceRun | Traces) for _, run in plan.runs))


def run(plan: EvalPlan) -> dict[str, Result]:
    """Every run of ``plan`` evaluated: ``{name: Result}``."""
    from ragrade.engine.inputs import as_qrels

    unknown = [k for k in plan.extras if k != "hops"]
    if unknown:
        raise InputError(f"{unknown[0]!r} is not a keyword of traces (their keyword: hops)")
    if plan.profile is not None or plan.matcher is not None or plan.engine != "memory":
        raise InputError("traces are evaluated under the default convention, in memory (no profile, matcher or "
                         "engine)")
    qrels = _read_qrels(plan.qrels, plan.qrels_format, None)
    hops = plan.extras.get("hops")
    units = qrels if hops is None else _read_qrels(plan.qrels, plan.qrels_format, str(hops))
    out = {}
    for name, given in plan.runs:
        trace_run = given.trajectories if isinstance(given, Traces) else given
        if not isinstance(trace_run, TraceRun):
            from ragrade.engine.inputs import as_run

            trace_run = as_run(trace_run) if not _is_path(trace_run) else _read_run(trace_run, plan.run_format)
        out[name] = _evaluate(plan, as_qrels(qrels), units, name, trace_run)
    return out


def _is_path(value: Any) -> bool:
    from ragrade.engine.inputs import is_path

    return is_path(value)


def _read_run(path: Any, fmt: str | None) -> Run:
    from ragrade.io import read_run

    return read_run(path, fmt)


def _read_qrels(qrels: Any, fmt: str | None, hops: str | None) -> Qrels:
    from ragrade.engine.inputs import as_qrels, is_path

    if hops is None:
        return as_qrels(qrels) if not is_path(qrels) else _qrels_file(qrels, fmt)
    if is_path(qrels):
        return _qrels_file(qrels, fmt, unit_col=hops)
    if hasattr(qrels, "columns") and hasattr(qrels, "to_dict"):
        import pyarrow as pa

        from ragrade.io.tables import table_to_qrels

        return table_to_qrels(pa.Table.from_pandas(qrels, preserve_index=False), "<DataFrame>", lambda i: (i, None),
                              unit_col=hops)
    truth = as_qrels(qrels)
    if not truth.has_groups:
        raise InputError("hops= names a column of the ground truth: give a file or a DataFrame with that column")
    return truth


def _qrels_file(path: Any, fmt: str | None, **opts: Any) -> Qrels:
    from ragrade.io import read_qrels

    return read_qrels(path, fmt, **opts)


def _split(plan: EvalPlan) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    core = [(label, m) for label, m in plan.labels if m.family.kind in CORE_KINDS]
    traj = [(label, m) for label, m in plan.labels if m.family.kind == "trajectory"]
    other = [label for label, m in plan.labels if m.family.kind not in CORE_KINDS | {"trajectory"}]
    if other:
        raise InputError(f"{other[0]!r} is not computed on traces (their measures: id measures and trajectory "
                         "measures)")
    return core, traj


def _evaluate(plan: EvalPlan, qrels: Qrels, units: Qrels, name: str, run: Run) -> Result:
    core, traj = _split(plan)
    keys = run.keys if isinstance(run, TraceRun) else run.query_ids
    truth = _rekeyed(qrels, run.query_ids, keys)
    asked = set(k for k in keys.tolist() if k is not None)
    missing = [q for q in qrels.query_ids.tolist() if q not in asked]
    if core:
        from ragrade.engine.executor import run_in_memory

        sub = plan.replace(qrels=truth, runs=((name, run),), labels=core, extras={})
        result = run_in_memory(sub)[name]
        result = result.replace(summary=result.summary.replace(qrels_queries=qrels.n_queries,
                                                               missing_from_run=missing))
    else:
        result = _empty_result(plan, qrels, truth, run, missing)
    if traj:
        result = _with_trajectories(plan, result, units, run, traj)
    extra = [n for n in result.notes() if n.startswith(("ground-truth", "1 ground-truth"))] if core else result.notes()
    if extra:
        warnings.warn(PolicyNote(extra), stacklevel=4)
    return result.replace(run_name=name)


def _rekeyed(qrels: Qrels, ids: np.ndarray, keys: np.ndarray) -> Qrels:
    """The judgments of each run query's key, under the run query's id."""
    import pandas as pd

    at = pd.Index(qrels.query_ids).get_indexer(np.asarray(keys, dtype=object))
    offsets = qrels.offsets
    counts = np.where(at >= 0, offsets[at + 1] - offsets[np.maximum(at, 0)], 0)
    rows = _ragged(offsets[np.maximum(at, 0)], counts)
    if np.array_equal(ids, keys) and len(rows) == qrels.n_rows:
        return qrels
    units = qrels.unit_ids()[rows] if qrels.has_groups else None
    return Qrels.from_columns(np.repeat(np.asarray(ids, dtype=object), counts), qrels.per_row_docs()[rows],
                              qrels.grades[rows], units=units, source="ground truth")


def _ragged(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + c) for s, c in zip(starts, counts)])`` without a loop."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.concatenate(([0], np.cumsum(counts)))[:-1]
    return np.arange(total, dtype=np.int64) - np.repeat(first - starts, counts)


def _empty_result(plan: EvalPlan, qrels: Qrels, truth: Qrels, run: Run, missing: list[str]) -> Result:
    """A result with no column yet: one row per run query that has ground truth."""
    judged = set(truth.query_ids.tolist())
    ids = [q for q in run.query_ids.tolist() if q in judged]
    summary = Summary(qrels_queries=qrels.n_queries, run_queries=run.n_queries, evaluated=len(ids),
                      missing_from_run=missing, only_in_run=[q for q in run.query_ids.tolist() if q not in judged])
    return Result(QueryColumns(np.asarray(ids, dtype=object), {}), {}, summary, plan.policy_object())


def trajectories_of(run: Run, truth: Qrels) -> Trajectories:
    """The kernels' input for ``run`` against ``truth`` (each query's judgments: its key's)."""
    import pandas as pd

    n = run.n_queries
    offsets = np.asarray(run.offsets, dtype=np.int64)
    rows = int(offsets[-1])
    if isinstance(run, TraceRun) and run.row_calls is not None and run.calls is not None:
        call, calls = run.row_calls, run.calls
    else:
        call, calls = np.ones(rows, dtype=np.int64), np.ones(n, dtype=np.int64)
    traj = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    block = np.ones(rows, dtype=bool)
    block[1:] = (traj[1:] != traj[:-1]) | (call[1:] != call[:-1])
    rank = np.arange(rows) - np.maximum.accumulate(np.where(block, np.arange(rows), 0)) + 1
    keys = run.keys if isinstance(run, TraceRun) else run.query_ids
    at = pd.Index(truth.query_ids).get_indexer(np.asarray(keys, dtype=object))
    counts = np.where(at >= 0, truth.offsets[at + 1] - truth.offsets[np.maximum(at, 0)], 0)
    truth_rows = _ragged(truth.offsets[np.maximum(at, 0)], counts)
    truth_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    order = run.ranking("input")
    codes = np.asarray(run.doc_codes, dtype=np.int64)[order]
    hit_row, hit_truth = _hits(traj, codes, np.asarray(run.doc_vocab, dtype=object), truth_offsets,
                               truth.per_row_docs()[truth_rows])
    return Trajectories(offsets, np.asarray(call, dtype=np.int64), rank.astype(np.int64), codes,
                        np.asarray(calls, dtype=np.int64), hit_row, hit_truth, truth_offsets,
                        np.asarray(truth.grades, dtype=np.float64)[truth_rows],
                        np.asarray(truth.unit_ids(), dtype=np.int64)[truth_rows])


def _hits(traj: np.ndarray, codes: np.ndarray, vocab: np.ndarray, truth_offsets: np.ndarray,
          truth_docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (row, judgment) pair of the same trajectory and document."""
    import pandas as pd

    n = len(truth_offsets) - 1
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(truth_offsets))
    code = pd.Index(vocab).get_indexer(truth_docs) if len(vocab) else np.full(len(truth_docs), -1)
    ok = code >= 0
    width = max(len(vocab), 1)
    truth_key = owner[ok] * width + code[ok]
    truth_idx = np.flatnonzero(ok)
    order = np.argsort(truth_key, kind="stable")
    truth_key, truth_idx = truth_key[order], truth_idx[order]
    row_key = traj * width + codes
    lo = np.searchsorted(truth_key, row_key, side="left")
    hi = np.searchsorted(truth_key, row_key, side="right")
    count = hi - lo
    hit_row = np.repeat(np.arange(len(row_key), dtype=np.int64), count)
    hit_truth = truth_idx[_ragged(lo, count)]
    return hit_row, hit_truth


def _with_trajectories(plan: EvalPlan, result: Result, units: Qrels, run: Run, labels: list[tuple[str, Any]]) -> Result:
    """``result`` with the trajectory measures' columns (one value per query of its index)."""
    import pandas as pd

    t = trajectories_of(run, units)
    pol = plan.policy_object()
    index = pd.Index(run.query_ids)
    rows = index.get_indexer(np.asarray(result.per_query.index, dtype=object))
    values, undefined = {}, dict(result.summary.no_relevant)
    nan_means = set(result.nan_means)
    for label, m in labels:
        v = np.asarray(m.family.kernel(m, t), dtype=np.float64)[rows]
        if m.family.defined in ("relevant", "positive"):
            none = np.isnan(v)
            if none.any():
                undefined[label] = [str(q) for q in np.asarray(result.per_query.index, dtype=object)[none]]
                if pol.no_relevant == "zero":
                    v = np.where(none, 0.0, v)
                elif pol.no_relevant == "nan":
                    nan_means.add(label)
        values[label] = v
    out = result.with_columns(values, dict(labels))
    return out.replace(summary=out.summary.replace(no_relevant=undefined), nan_means=frozenset(nan_means))


#: The keywords of traces that are conventions a gate's candidate shares with its baseline.
SETTINGS: tuple[str, ...] = ("hops",)


def truth_stats(plan: EvalPlan) -> dict[str, Any]:
    """What the gate records of the ground truth: the fingerprint of its judgments (query, document, grade,
    and the hop of each with ``hops``), its queries, judgments and relevant ones."""
    from ragrade.data.fingerprint import rows_fingerprint

    hops = plan.extras.get("hops")
    q = _read_qrels(plan.qrels, plan.qrels_format, None if hops is None else str(hops))
    units = q.unit_ids().tolist() if hops is not None else [None] * q.n_rows
    rows = zip(q.per_row_queries().tolist(), q.per_row_docs().tolist(), q.grades.tolist(), units, strict=True)
    return {"fingerprint": rows_fingerprint(rows, kind="traces qrels"), "queries": q.n_queries,
            "judgments": q.n_rows, "relevant": int(np.count_nonzero(q.grades > 0))}


def judgments(plan: EvalPlan) -> Qrels:
    """The judgments a report shows next to the retrieved items: the ground truth, plus each trace run's
    queries under their own ids (a call ``q17/2`` shows q17's judgments)."""
    qrels = _read_qrels(plan.qrels, plan.qrels_format, None)
    ids: list[Any] = []
    keys: list[Any] = []
    for _, given in plan.runs:
        trace_run = given.trajectories if isinstance(given, Traces) else given
        if isinstance(trace_run, TraceRun):
            differ = np.asarray([q != k for q, k in zip(trace_run.query_ids.tolist(), trace_run.keys.tolist(),
                                                        strict=True)], dtype=bool)
            ids += trace_run.query_ids[differ].tolist()
            keys += trace_run.keys[differ].tolist()
    if not ids:
        return qrels
    all_ids = np.asarray(qrels.query_ids.tolist() + ids, dtype=object)
    all_keys = np.asarray(qrels.query_ids.tolist() + keys, dtype=object)
    _, first = np.unique(all_ids.astype(str), return_index=True)
    first.sort()
    return _rekeyed(qrels, all_ids[first], all_keys[first])
