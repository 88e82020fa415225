"""One result from results computed part by part.

Every per-query value depends on that query's judgments and ranking alone, so a collection can be split
by query, each part evaluated on its own, and the parts' results put together: the per-query rows
concatenated (and put back in the order the whole collection would give), the aggregates recomputed from
the per-query values by :class:`~ragrade.engine.result.Result` itself (never an average of averages), the
counts summed, and the :class:`~ragrade.engine.result.Summary` merged field by field. The out-of-core
path (:mod:`ragrade.scale.outofcore`) and Spark (:mod:`ragrade.scale.spark`, public as :mod:`ragrade.scale.spark`) both end here.

The parts must split the collection *by query*: every row of a query, on both sides, in the same part
(partition both sides by the same function of the query id). Then the query-level policies decide the
same way as on the whole: a query missing from the run, or only in the run, is so in its part exactly
when it is so in the whole.

Order: ``qrels_order`` gives each ground-truth query its place in the whole ground truth (the engine lists
queries in their order of first appearance), ``run_order`` each run query its place in the run; with them
the combined per-query rows and the summary's lists come out in the order :func:`ragrade.evaluate` gives
on the whole collection. Without them, parts are taken in the order given and rows in each part's order.

Every field of :class:`~ragrade.engine.result.Summary` has a rule here (:data:`SUMMARY_RULES`); a field
without one is refused (:func:`check_rules`), so a new field cannot be dropped silently.
"""

from __future__ import annotations

import inspect
import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any, Literal

import numpy as np
import pandas as pd

from ragrade.engine.result import HoleRate, Result, Summary
from ragrade.errors import InputError, PolicyNote

Rule = Literal["sum", "any", "qrels_list", "run_list", "qrels_lists_by_label", "sum_by_key", "absent"]

#: How each field of :class:`Summary` is merged across parts: ``sum`` (counts), ``any`` (a flag true when
#: it is true in a part), ``qrels_list`` (query ids
#: in ground-truth order), ``run_list`` (query ids in run order), ``qrels_lists_by_label`` (a dict of
#: ground-truth-ordered lists, keyed as the metrics are ordered), ``sum_by_key`` (a dict of counts),
#: ``absent`` (None in every part: what no split evaluation has, a judged evaluation's judge).
SUMMARY_RULES: dict[str, Rule] = {
    "qrels_queries": "sum",
    "run_queries": "sum",
    "evaluated": "sum",
    "missing_from_run": "qrels_list",
    "only_in_run": "run_list",
    "no_relevant": "qrels_lists_by_label",
    "empty_lists": "run_list",
    "duplicate_items": "sum",
    "identical_ids_dropped": "sum",
    "ties_at_cutoff": "sum_by_key",
    "duplicates_judged_only": "any",
    "nonfinite_scores": "sum",
    "judge": "absent",
}

#: The arguments of :class:`Result` that :func:`combine` sets (a new one must be added here, with its rule):
#: ``per_query`` and ``upper`` (the upper bounds of ``unjudged="bounds"``) concatenated and put in the whole's
#: order, ``hole_rate`` merged by :func:`merge_hole_rates`, ``nan_means`` and ``details`` (per query) united,
#: the rest from the first part.
RESULT_ARGUMENTS = frozenset({"per_query", "metrics", "summary", "policies", "run_name", "nan_means", "profile",
                              "hole_rate", "upper", "details"})


def check_rules() -> None:
    """Raise ``TypeError`` when :class:`Summary` or :class:`Result` has grown a field that :func:`combine`
    has no rule for (a programming error: the tests call this)."""
    missing = sorted({f.name for f in fields(Summary)} - set(SUMMARY_RULES))
    if missing:
        raise TypeError(f"scale/combine.py has no merge rule for Summary field(s) {missing}")
    params = set(inspect.signature(Result.__init__).parameters) - {"self"}
    unknown = sorted(params - RESULT_ARGUMENTS)
    if unknown:
        raise TypeError(f"scale/combine.py does not combine Result argument(s) {unknown}")


def combine(parts: Sequence[Result], *, qrels_order: pd.Series | None = None, run_order: pd.Series | None = None,
            warn: bool = True) -> Result:
    """The result of the whole collection from the results of its parts (split by query).

    ``qrels_order`` / ``run_order``: a Series mapping each query id to its place (any sortable number) in
    the whole ground truth / run; None keeps the parts' order. With ``warn``, one
    :class:`~ragrade.errors.RagradeWarning` lists what the policies did on the whole (the parts are
    expected to have been evaluated with their own warnings silenced).

    >>> import ragrade
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 0}}
    >>> run = {"q1": {"d1": 1.0}, "q2": {"d9": 1.0, "d2": 0.5}, "q3": {"d3": 2.0}}
    >>> a = ragrade.evaluate({q: qrels[q] for q in ("q1", "q3")}, {q: run[q] for q in ("q1", "q3")}, "rr")
    >>> b = ragrade.evaluate({"q2": qrels["q2"]}, {"q2": run["q2"]}, "rr")
    >>> whole = combine([a, b], qrels_order=pd.Series([0, 1, 2], index=["q1", "q2", "q3"]), warn=False)
    >>> whole.per_query["rr"].to_dict(), whole.means["rr"], whole.summary.no_relevant
    ({'q1': 1.0, 'q2': 0.5, 'q3': nan}, 0.75, {'rr': ['q3']})
    """
    check_rules()
    if not parts:
        raise InputError("nothing to combine: no part was evaluated")
    first = parts[0]
    labels = list(first.per_query.columns)
    for p in parts[1:]:
        if list(p.per_query.columns) != labels:
            raise InputError("the parts were evaluated with different metrics", value=[labels, list(p.per_query.columns)])
        if p.policies != first.policies:
            raise InputError("the parts were evaluated under different policies")
    # Each metric's family declares how a piece's values merge (scale/merge.py): per-query values
    # concatenate, and Result aggregates them as the family says; no metric has code of its own here.
    from ragrade.scale.merge import check_reductions, reduction_of

    check_reductions()
    rules = {reduction_of(first.metrics.get(label)).per_query for label in labels}
    assert rules <= {"cat"}, f"combine concatenates per-query values; a family asks for {rules}"
    frame = _concat_frames([p.per_query for p in parts], labels)
    order = None
    if qrels_order is not None and len(frame):
        order = _stable_order(qrels_order, frame.index.to_numpy(dtype=object), "ground-truth")
        frame = frame.iloc[order]
    upper = None
    if first.upper is not None:
        if any(p.upper is None for p in parts if len(p.per_query)):
            raise InputError("some parts were evaluated with unjudged='bounds' and some without")
        upper = _concat_frames([p.upper if p.upper is not None else p.per_query.iloc[:0] for p in parts], labels)
        upper = upper if order is None else upper.iloc[order]
    summary = merge_summaries([p.summary for p in parts], labels, qrels_order=qrels_order, run_order=run_order)
    nan_means: set[str] = set()
    for p in parts:
        nan_means |= p.nan_means
    details = {q: d for p in parts for q, d in p.details.items()}
    result = Result(frame, first.metrics, summary, first.policies, run_name=first.run_name, nan_means=nan_means,
                    profile=first.profile, hole_rate=merge_hole_rates(parts, qrels_order), upper=upper,
                    details=details)
    if warn:
        notes = result.notes()  # the engine's own warning text (the hole rate is not a policy note)
        if notes:
            from ragrade.engine.core import caller_stacklevel

            warnings.warn(PolicyNote(notes), stacklevel=caller_stacklevel())
    return result


def merge_summaries(summaries: Sequence[Summary], labels: Sequence[str] = (), *,
                    qrels_order: pd.Series | None = None, run_order: pd.Series | None = None) -> Summary:
    """One :class:`Summary` from the parts' summaries, field by field (:data:`SUMMARY_RULES`); ``labels``
    orders the per-metric lists as the metrics are ordered."""
    check_rules()
    values: dict[str, Any] = {}
    for f in fields(Summary):
        rule = SUMMARY_RULES[f.name]
        got = [getattr(s, f.name) for s in summaries]
        if rule == "sum":
            values[f.name] = int(sum(got))
        elif rule == "any":
            values[f.name] = any(got)
        elif rule in ("qrels_list", "run_list"):
            order = qrels_order if rule == "qrels_list" else run_order
            values[f.name] = _ordered([q for lst in got for q in lst], order, f.name)
        elif rule == "qrels_lists_by_label":
            keys = list(dict.fromkeys([*labels, *(k for d in got for k in d)]))
            merged = {k: _ordered([q for d in got for q in d.get(k, [])], qrels_order, f.name) for k in keys}
            values[f.name] = {k: v for k, v in merged.items() if v}
        elif rule == "absent":
            if any(v is not None for v in got):
                raise InputError(f"the parts hold a {f.name!r}: such an evaluation is not combined from parts")
            values[f.name] = None
        else:  # sum_by_key
            total: dict[Any, int] = {}
            for d in got:
                for k, v in d.items():
                    total[k] = total.get(k, 0) + int(v)
            values[f.name] = {k: total[k] for k in sorted(total) if total[k]}
    return Summary(**values)


def merge_hole_rates(parts: Sequence[Result], qrels_order: pd.Series | None = None) -> HoleRate | None:
    """The hole rate of the whole from the parts' (None when no part has one: text paths).

    Per-query rates are concatenated and put in the whole ground truth's order (``qrels_order``, as the
    per-query rows; a profile may list other queries in its rates than in its values, e.g. BEIR's MRR
    counts every query); "only relevant judged" holds for the whole when it holds for every part
    (the whole has a judged non-relevant item when some part has); the mean at k is recomputed from the
    per-query rates exactly as the engine computes it. Means at other cutoffs (``by_k``, set only by the
    report's evaluator) are weighted by the parts' numbers of queries with a list: equal to the whole's
    up to rounding."""
    have = [p for p in parts if p.hole_rate is not None]
    if not have:
        return None
    if any(p.hole_rate is None for p in parts if len(p.per_query)):
        raise InputError("some parts carry a hole rate and some do not")
    k = have[0].hole_rate.k  # type: ignore[union-attr]
    rates = [p.hole_rate for p in have]
    values = np.concatenate([h.per_query.to_numpy(dtype=np.float64) for h in rates if h is not None])
    ids = np.concatenate([h.per_query.index.to_numpy(dtype=object) for h in rates if h is not None])
    if qrels_order is not None and len(values):
        order = _stable_order(qrels_order, ids, "ground-truth")
        values, ids = values[order], ids[order]
    per_query = pd.Series(values, index=pd.Index(ids, name="query", dtype=object), name=f"hole_rate@{k}")
    by_k: dict[int, float] = {}
    valid = values[~np.isnan(values)]
    if len(valid):
        by_k[k] = float(valid.mean())
    totals: dict[int, list[float]] = {}
    for h in rates:
        assert h is not None
        n = h.queries
        for cut, mean in h.by_k.items():
            if cut != k and n:
                acc = totals.setdefault(cut, [0.0, 0.0])
                acc[0] += mean * n
                acc[1] += n
    for cut, (total, count) in totals.items():
        by_k[cut] = total / count
    only = all(h.only_relevant_judged for h in rates if h is not None)
    return HoleRate(k, per_query, only, {c: by_k[c] for c in sorted(by_k)})


def _concat_frames(frames: list[pd.DataFrame], labels: list[str]) -> pd.DataFrame:
    nonempty = [f for f in frames if len(f)]
    if not nonempty:
        return frames[0].iloc[:0]
    if len(nonempty) == 1:
        return nonempty[0]
    data = {c: np.concatenate([f[c].to_numpy(dtype=np.float64) for f in nonempty]) for c in labels}
    ids = np.concatenate([f.index.to_numpy(dtype=object) for f in nonempty])
    return pd.DataFrame(data, index=pd.Index(ids, name="query", dtype=object), columns=labels)


def _stable_order(order: pd.Series, ids: np.ndarray, what: str) -> np.ndarray:
    keys = order.reindex(ids)
    if keys.isna().any():
        raise InputError(f"combine: a query has no place in the {what} order", query=str(ids[keys.isna().to_numpy()][0]))
    return np.argsort(keys.to_numpy(), kind="stable")


def _ordered(ids: list[str], order: pd.Series | None, what: str) -> list[str]:
    if order is None or len(ids) < 2:
        return ids
    arr = np.asarray(ids, dtype=object)
    return arr[_stable_order(order, arr, what)].tolist()


# -- parts that travel (Spark tasks hand back a per-query table and a small state) -----------------------
def part_state(result: Result) -> str:
    """The part of a :class:`Result` that is not per-query values, as JSON (summary, NaN means, run name)."""
    check_rules()
    s = result.summary
    state = {
        "summary": {f.name: _jsonable(getattr(s, f.name), SUMMARY_RULES[f.name]) for f in fields(Summary)},
        "nan_means": sorted(result.nan_means),
        "run_name": result.run_name,
        "hole_rate": None if result.hole_rate is None else {
            "k": result.hole_rate.k, "only_relevant_judged": result.hole_rate.only_relevant_judged},
    }
    return json.dumps(state)


def result_from_state(per_query: pd.DataFrame, state: str, metrics: Mapping[str, Any], policies: Any,
                      profile: Any = None) -> Result:
    """The inverse of :func:`part_state`: a :class:`Result` from a part's per-query values and its state."""
    data = json.loads(state)
    return Result(per_query, metrics, summary_from_state(data["summary"]), policies, run_name=data["run_name"],
                  nan_means=data["nan_means"], profile=profile)


def summary_from_state(raw: Mapping[str, Any]) -> Summary:
    """The :class:`Summary` of a part's state (the ``"summary"`` entry of :func:`part_state`'s JSON)."""
    values: dict[str, Any] = {}
    for f in fields(Summary):
        v = raw[f.name]
        if SUMMARY_RULES[f.name] == "sum_by_key":
            v = {int(k): int(n) for k, n in v}
        values[f.name] = v
    return Summary(**values)


def _jsonable(v: Any, rule: Rule | None = None) -> Any:
    if rule == "sum_by_key":
        return [[int(k), int(n)] for k, n in v.items()]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, Iterable) and not isinstance(v, str):
        return [str(x) for x in v]
    if isinstance(v, np.integer):
        return int(v)
    return v


__all__ = ["RESULT_ARGUMENTS", "SUMMARY_RULES", "check_rules", "combine", "merge_summaries", "part_state",
           "result_from_state", "summary_from_state"]
