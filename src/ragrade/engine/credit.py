"""Crediting: the joined rows of a run -> the kernels' table -> per-query values -> :class:`Result`.

Each ground-truth unit is credited once, at its best rank; the kernels run on that table (or its condensed
view); each family's definedness rule and the policies are applied; :func:`finish` builds the
:class:`~ragrade.engine.result.Result`. :class:`~ragrade.engine.core.Evaluator` and the scoring port
(:mod:`ragrade.engine.scoring`) are the only callers: nothing outside the engine calls these.
"""

from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragrade._arrays import duplicated
from ragrade.data.ranking import ties_straddling
from ragrade.engine.join import Joined, TruthIndex
from ragrade.engine.result import HoleRate, QueryColumns, Result, Summary, distinct_metrics, spread_labels
from ragrade.errors import PolicyError, PolicyNote
from ragrade.kernels import metrics as K
from ragrade.kernels.common import rank_within_group
from ragrade.metrics.parser import Metric
from ragrade.policies import Policies


def finish(index: TruthIndex, labels: list[tuple[str, Metric]], policies: Policies, j: Joined,
           name: str | None, hole_cutoffs: tuple[int, ...] = ()) -> Result:
    """Credit each unit once at its best rank, run the kernels, apply the definedness rule and the
    policies, and build the :class:`Result` (warning once with every note)."""
    pol = policies
    qrels = index.qrels
    a = j.alignment
    judged, counted_rows = credited(index, pol, j)
    cols = kernel_columns(index, labels, pol, judged, counted_rows)
    data, upper = cols.data, cols.upper
    query_ids = np.asarray(qrels.query_ids, dtype=object)
    if pol.missing_run == "drop":
        query_ids = query_ids[counted_rows]
        data = {c: v[counted_rows] for c, v in data.items()}
        upper = {c: v[counted_rows] for c, v in upper.items()}
    frame = QueryColumns(query_ids, data)
    upper_frame = QueryColumns(query_ids, upper) if pol.unjudged == "bounds" else None
    cutoffs: set[int] = {m.k for _, m in labels if m.k is not None}
    holes = hole_rate(judged, max(cutoffs) if cutoffs else 10, index, query_ids,
                      keep=counted_rows if pol.missing_run == "drop" else None,
                      extra_cutoffs=hole_cutoffs) if index.judged == "all" else None
    ties_at_cutoff: dict[int, int] = {}
    if j.sorted_scores is not None:
        for k in sorted(cutoffs):
            t = ties_straddling(j.sorted_scores, j.offsets, k, j.evaluated_segments)
            if t:
                ties_at_cutoff[k] = t
    summary = Summary(qrels_queries=qrels.n_queries, run_queries=a.run_queries, evaluated=len(query_ids),
                      missing_from_run=a.missing_from_run, only_in_run=a.only_in_run, no_relevant=cols.no_relevant,
                      empty_lists=a.empty_lists, duplicate_items=j.duplicate_items,
                      identical_ids_dropped=j.identical_ids_dropped, ties_at_cutoff=ties_at_cutoff,
                      duplicates_judged_only=j.duplicates_judged_only, nonfinite_scores=j.nonfinite_scores)
    result = Result(frame, dict(labels), summary, pol, run_name=name or j.run_name, nan_means=cols.nan_means,
                    hole_rate=holes, upper=upper_frame)
    notes = result.notes()
    if notes:
        warnings.warn(PolicyNote(notes), stacklevel=caller_stacklevel())
    return result


def finish_columns(index: TruthIndex, labels: list[tuple[str, Metric]], policies: Policies,
                   j: Joined) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The per-query values :func:`finish` reports (on every ground-truth query) and which queries it
    reports (``missing_run="drop"``: those of the run), without the summary, hole rate and notes."""
    judged, counted_rows = credited(index, policies, j)
    return kernel_columns(index, labels, policies, judged, counted_rows).data, counted_rows


def credited(index: TruthIndex, pol: Policies, j: Joined) -> tuple[K.Judged, np.ndarray]:
    """The kernels' table of the joined rows, each unit credited once at its best rank (the rows sorted by
    query and position, trec_eval's -M cut applied), and the ground-truth queries the result reports."""
    qrels = index.qrels
    nq = qrels.n_queries
    a = j.alignment
    grade = qrels.grades[j.qrow]
    unit = index.row_unit[j.qrow]
    # Credit each unit once, at its best rank: sort by (qrels query, position).
    order = order_by_query_and_position(j.qq, j.pos)
    if order is None:
        qq, pos = j.qq, j.pos
    else:
        qq, pos, grade, unit = j.qq[order], j.pos[order], grade[order], unit[order]
    n_ret = a.n_ret
    if pol.max_docs is not None:  # trec_eval -M: only the first max_docs documents are read
        keep = pos < pol.max_docs
        if not keep.all():
            qq, pos, grade, unit = qq[keep], pos[keep], grade[keep], unit[keep]
        n_ret = np.minimum(n_ret, pol.max_docs)
    if j.unique_docs and not qrels.has_groups:  # every judged row is its own unit's only copy
        first = np.ones(len(unit), dtype=bool)
    else:
        first = ~duplicated(unit, keep="first") if len(unit) else np.zeros(0, dtype=bool)
    judged = judged_view(nq, n_ret, qq, pos, grade, unit, first, index, pol.num_docs, index.judged == "all")
    counted_rows = np.ones(nq, dtype=bool)
    if pol.missing_run == "drop":
        counted_rows &= a.in_run
    return judged, counted_rows


@dataclass
class _Columns:
    data: dict[str, np.ndarray]  # label -> value per ground-truth query
    upper: dict[str, np.ndarray]  # label -> upper bound (unjudged="bounds")
    no_relevant: dict[str, list[str]]  # label -> queries on which it is undefined (the summary's)
    nan_means: set[str]


def kernel_columns(index: TruthIndex, labels: list[tuple[str, Metric]], pol: Policies, judged: K.Judged,
                   counted_rows: np.ndarray) -> _Columns:
    """Each label's kernel on ``judged`` (or its condensed view), with its family's definedness rule and
    the ``no_relevant`` policy applied; with ``unjudged="bounds"``, the upper bounds too."""
    views: dict[str, K.Judged] = {"nonrelevant": judged}

    def view(kind: str) -> K.Judged:
        if kind not in views:
            views[kind] = condensed(judged) if kind == "condensed" else with_unjudged_relevant(
                judged, pol.upper_grade if pol.upper_grade is not None else _top_grade(index))
        return views[kind]

    cols = _Columns({}, {}, {}, set())
    fill = 0.0 if pol.no_relevant == "zero" else np.nan
    for label, m in distinct_metrics(labels):  # a metric under two labels (P@5, precision@5) is computed once
        fam = m.family
        assert fam.kernel is not None
        only_judged = pol.unjudged == "condensed" or metric_param(m, "judged_only", False)
        values = fam.kernel(m, view("condensed") if only_judged else judged)
        undefined = (np.isnan(values) if fam.defined == "value" else ~defined_mask(m, judged)) & counted_rows
        if undefined.any():
            cols.no_relevant[label] = index.qrels.query_ids[undefined].tolist()
            if pol.no_relevant == "error":
                raise PolicyError(f"{label}: {int(undefined.sum())} queries have no relevant judgments "
                                  f"(e.g. {cols.no_relevant[label][0]!r})")
            if pol.no_relevant == "nan":
                cols.nan_means.add(label)
        cols.data[label] = np.where(undefined, fill, values) if undefined.any() else values
        if pol.unjudged == "bounds":
            hi = fam.kernel(m, view("condensed") if metric_param(m, "judged_only", False) else view("upper"))
            # a family defined by its value (accuracy): by the upper bound's own value, on queries with R > 0
            hi_undefined = ((np.isnan(hi) | (judged.n_relevant(m.rel) == 0)) & counted_rows
                            if fam.defined == "value" else undefined)
            cols.upper[label] = np.where(hi_undefined, fill, hi) if hi_undefined.any() else hi
    return _Columns(spread_labels(labels, cols.data), spread_labels(labels, cols.upper),
                    spread_labels(labels, cols.no_relevant), set(spread_labels(labels, dict.fromkeys(cols.nan_means))))


def metric_param(m: Metric, name: str, default: Any) -> Any:
    """A parameter of ``m`` if its family has it, else ``default``."""
    return m.get(name) if m.family.param(name) is not None else default


def _top_grade(index: TruthIndex) -> float:
    g = index.unit_grade
    return float(g.max()) if len(g) and g.max() > 0 else 1.0


def judged_view(nq: int, n_ret: np.ndarray, qq: np.ndarray, pos: np.ndarray, grade: np.ndarray, unit: np.ndarray,
                first: np.ndarray, index: TruthIndex, num_docs: int | None, all_judged: bool = True) -> K.Judged:
    """The kernels' input from the judged rows sorted by (query, position)."""
    positive = first & (grade > 0)
    return K.Judged(nq=nq, n_ret=n_ret, q=qq[positive], pos=pos[positive], grade=grade[positive],
                    unit_q=index.unit_q, unit_grade=index.unit_grade, unit=unit[positive],
                    jq=qq if all_judged else None, jpos=pos if all_judged else None,
                    jgrade=grade if all_judged else None, jfirst=first if all_judged else None,
                    junit=unit if all_judged else None, num_docs=num_docs)


def condensed(j: K.Judged) -> K.Judged:
    """The rankings without their unjudged and negative-grade documents, ranks closed up (Sakai's condensed
    lists; trec_eval -J; ir-measures judged_only)."""
    q, _, g, first = j.judged_table()
    assert j.junit is not None
    keep = g >= 0
    q, g, first, unit = q[keep], g[keep], first[keep], j.junit[keep]
    pos = rank_within_group(q) - 1
    n_ret = np.bincount(q, minlength=j.nq).astype(np.int64)
    positive = first & (g > 0)
    return K.Judged(nq=j.nq, n_ret=n_ret, q=q[positive], pos=pos[positive], grade=g[positive], unit_q=j.unit_q,
                    unit_grade=j.unit_grade, unit=unit[positive], jq=q, jpos=pos, jgrade=g, jfirst=first, junit=unit,
                    num_docs=j.num_docs)


def with_unjudged_relevant(j: K.Judged, grade: float) -> K.Judged:
    """The upper bound's input: every retrieved document without a judgment becomes a relevant unit of
    grade ``grade`` (each retrieved row its own unit)."""
    q, pos, g, first = j.judged_table()
    assert j.junit is not None and j.unit is not None
    total = int(j.n_ret.sum())
    starts = np.zeros(j.nq + 1, dtype=np.int64)
    np.cumsum(j.n_ret, out=starts[1:])
    all_q = np.repeat(np.arange(j.nq, dtype=np.int64), j.n_ret)
    all_pos = np.arange(total, dtype=np.int64) - starts[all_q]
    hole = np.ones(total, dtype=bool)
    hole[starts[q] + pos] = False
    uq, upos = all_q[hole], all_pos[hole]
    new_units = len(j.unit_grade) + np.arange(len(uq), dtype=np.int64)
    ug = np.full(len(uq), float(grade))
    unit_q = np.concatenate([j.unit_q, uq])
    unit_grade = np.concatenate([j.unit_grade, ug])

    def merged(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        cols = [np.concatenate([x, y]) for x, y in zip(a, b, strict=True)]
        order = np.lexsort((cols[1], cols[0]))
        return tuple(c[order] for c in cols)

    pq, pp, pg, pu = merged((j.q, j.pos, j.grade, j.unit), (uq, upos, ug, new_units))
    jq, jp, jg, jf, ju = merged((q, pos, g, first, j.junit), (uq, upos, ug, np.ones(len(uq), dtype=bool), new_units))
    return K.Judged(nq=j.nq, n_ret=j.n_ret, q=pq, pos=pp, grade=pg, unit_q=unit_q, unit_grade=unit_grade, unit=pu,
                    jq=jq, jpos=jp, jgrade=jg, jfirst=jf.astype(bool), junit=ju, num_docs=j.num_docs)


def _judged_counts(j: K.Judged, cuts: list[int]) -> np.ndarray:
    """Judged rows among the top ``cuts[i]`` of each query, for every cutoff at once: ``int64[nq, len(cuts)]``
    (one counting pass over the judged rows)."""
    q, pos, _, _ = j.judged_table()
    c = np.asarray(cuts, dtype=np.int64)
    bucket = np.searchsorted(c, pos, side="right")  # first cutoff that includes the row
    keep = bucket < len(c)
    counts = np.bincount(q[keep] * len(c) + bucket[keep], minlength=j.nq * len(c)).reshape(j.nq, len(c))
    return np.cumsum(counts, axis=1)


def hole_rate(j: K.Judged, k: int, index: TruthIndex, query_index: np.ndarray, keep: np.ndarray | None = None,
              extra_cutoffs: tuple[int, ...] = ()) -> HoleRate:
    """Share of the top k retrieved documents without a judgment, per query (NaN for an empty list), and
    its mean at ``extra_cutoffs`` too; ``keep``: the queries reported (``query_index`` holds their ids)."""
    cuts = sorted({*extra_cutoffs, k})
    judged = _judged_counts(j, cuts)
    top = np.minimum(j.n_ret[:, None], np.asarray(cuts)[None, :]).astype(np.float64)
    if keep is not None:
        judged, top = judged[keep], top[keep]
    rates = np.full(top.shape, np.nan)
    ok = top > 0
    rates[ok] = 1.0 - judged[ok] / top[ok]
    by_k = {}
    for i, cut in enumerate(cuts):
        v = rates[:, i]
        v = v[~np.isnan(v)]
        if len(v):
            by_k[cut] = float(v.mean())
    only_relevant = not bool((index.unit_grade <= 0).any())
    return HoleRate(k, (query_index, rates[:, cuts.index(k)]), only_relevant, by_k)


def defined_mask(m: Metric, j: K.Judged) -> np.ndarray:
    """Queries on which ``m`` is defined, by its family's rule: ``"relevant"``: R > 0 at the metric's
    relevance level; ``"positive"``: at least one positive grade counted (DCG-type measures, at ``rel``
    when set); ``"always"``."""
    rule = m.family.defined
    if rule in ("always", "value"):
        return np.ones(j.nq, dtype=bool)
    if rule == "positive":  # a unit with a positive gain (at rel when set; through the gain map if any)
        uq, _ = j.unit_gains(metric_param(m, "rel", None), "linear", metric_param(m, "gains", None))
        return np.bincount(uq, minlength=j.nq) > 0
    return j.n_relevant(m.rel) > 0


def order_by_query_and_position(qq: np.ndarray, pos: np.ndarray) -> np.ndarray | None:
    """Stable order of the rows by (query, position); None when they are already in it (the usual case:
    a run read in rank order). Nearly sorted input (only ties reordered) sorts in about linear time
    (one combined integer key, timsort)."""
    if len(qq) < 2:
        return None
    up = qq[1:] > qq[:-1]
    same = qq[1:] == qq[:-1]
    if np.all(up | (same & (pos[1:] >= pos[:-1]))):
        return None
    span = int(pos.max()) + 1 if len(pos) else 1
    if int(qq.max()) < (1 << 62) // max(span, 1):
        return np.argsort(qq.astype(np.int64) * span + pos, kind="stable")
    return np.lexsort((pos, qq))


def caller_stacklevel() -> int:
    """Stack level of the first frame outside the ragrade package, so warnings point at user code."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg + os.sep):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
