"""The id pipeline: join -> credit -> kernels -> policies -> :class:`~ragrade.engine.result.Result`.

:class:`Evaluator` indexes the ground truth once (:class:`~ragrade.engine.join.TruthIndex`) and scores any
number of runs against it. Every other path (groups, texts, engine profiles) ends here too; list profiles
end in :mod:`ragrade.engine.lists`, which shares the result model.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Never

import numpy as np
import pandas as pd

from ragrade.engine.inputs import as_qrels, as_run
from ragrade.engine.join import Joined, TruthIndex, join_dict, join_run
from ragrade.engine.result import MetricsArg, Result, Summary, metric_labels
from ragrade.errors import InputError, MetricError, PolicyError, RagradeWarning, UnknownNameError
from ragrade.kernels import metrics as K
from ragrade.kernels.ranking import ties_straddling
from ragrade.metrics.parser import Metric
from ragrade.policies import (
    Duplicates,
    EmptyRun,
    IdenticalIds,
    MissingQrels,
    MissingRun,
    NoRelevant,
    Policies,
    Ties,
)


def check_id_metrics(labels: list[tuple[str, Metric]], where: str = "") -> None:
    """Every metric must be an id family (computed from relevance judgments)."""
    for label, m in labels:
        kind = m.family.kind
        if kind == "judge":
            raise MetricError(f"{label!r} is judged by an LLM or offline judge: compute it with "
                              f"`ragrade judge` / ragrade.judges.evaluate_judged{where}")
        if kind == "text":
            raise MetricError(f"{label!r} compares texts: give the items as texts with a matcher or a profile "
                              f"that defines it (e.g. ragrade.evaluate(truth, retrieved, [{label!r}], "
                              f"profile='autorag')){where}")


class Evaluator:
    """Scores many runs against the same ground truth without re-ingesting it.

    ``qrels`` is any ground-truth input of :func:`ragrade.engine.inputs.as_qrels`; ``metrics`` a metric
    string, a :class:`~ragrade.metrics.Metric` or a list of them; the keyword arguments set the policies
    (``docs/conventions.md``, "Policies"; None keeps the default).

    >>> ev = Evaluator({"q1": {"d1": 1, "d2": 1}}, ["P@2", "ndcg@2"])
    >>> ev.evaluate({"q1": {"d1": 0.9, "d3": 0.5}}).means
    {'P@2': 0.5, 'ndcg@2': 0.6131471927654584}
    """

    def __init__(self, qrels: Any, metrics: MetricsArg, *, missing_run: MissingRun | None = None,
                 missing_qrels: MissingQrels | None = None, no_relevant: NoRelevant | None = None,
                 duplicates: Duplicates | None = None, identical_ids: IdenticalIds | None = None,
                 ties: Ties | None = None, empty_run: EmptyRun | None = None,
                 policies: Policies | None = None, **unknown: Never) -> None:
        if unknown:
            raise UnknownNameError("option", next(iter(unknown)), [*Policies.choices(), "policies"])
        self.labels = metric_labels(metrics)
        check_id_metrics(self.labels)
        base = policies if policies is not None else Policies()
        self.policies = base.update(missing_run=missing_run, missing_qrels=missing_qrels, no_relevant=no_relevant,
                                    duplicates=duplicates, identical_ids=identical_ids, ties=ties,
                                    empty_run=empty_run)
        self.qrels = as_qrels(qrels)
        if self.qrels.n_queries == 0:
            raise InputError("the ground truth holds no query: there is nothing to evaluate")
        self.index = TruthIndex(self.qrels)

    def evaluate(self, run: Any, name: str | None = None) -> Result:
        """Score one run (a :class:`~ragrade.data.Run`, nested dicts, ranked lists, a DataFrame, a table
        or a path)."""
        joined = join_dict(self.index, run, self.policies) if isinstance(run, dict) else None
        if joined is None:
            joined = join_run(self.index, as_run(run), self.policies)
        return finish(self.index, self.labels, self.policies, joined, name)


def finish(index: TruthIndex, labels: list[tuple[str, Metric]], policies: Policies, j: Joined,
           name: str | None) -> Result:
    """Credit each unit once at its best rank, run the kernels, apply the definedness rule and the
    policies, and build the :class:`Result` (warning once with every note)."""
    pol = policies
    qrels = index.qrels
    nq = qrels.n_queries
    a = j.alignment
    summary = Summary(qrels_queries=nq, run_queries=a.run_queries, evaluated=0,
                      missing_from_run=a.missing_from_run, only_in_run=a.only_in_run, empty_lists=a.empty_lists,
                      duplicate_items=j.duplicate_items, identical_ids_dropped=j.identical_ids_dropped)
    notes = _alignment_notes(summary, pol)
    if summary.duplicate_items:
        what = "credited once" if pol.duplicates == "credit_once" else pol.duplicates
        scope = " (judged items; duplicates of unjudged items change no value)" if j.duplicates_judged_only else ""
        notes.append(f"{summary.duplicate_items} duplicate items in rankings{scope} ({what})")
    grade = qrels.grades[j.qrow]
    unit = index.row_unit[j.qrow]
    # Credit each unit once, at its best rank: sort by (qrels query, position).
    order = _order_by_query_and_position(j.qq, j.pos)
    if order is None:
        qq, pos = j.qq, j.pos
    else:
        qq, pos, grade, unit = j.qq[order], j.pos[order], grade[order], unit[order]
    first = ~pd.Series(unit).duplicated(keep="first").to_numpy() if len(unit) else np.zeros(0, dtype=bool)
    positive = first & (grade > 0)
    judged = K.Judged(nq=nq, n_ret=a.n_ret, q=qq[positive], pos=pos[positive], grade=grade[positive],
                      unit_q=index.unit_q, unit_grade=index.unit_grade)
    counted_rows = np.ones(nq, dtype=bool)
    if pol.missing_run == "drop":
        counted_rows &= a.in_run
    data: dict[str, np.ndarray] = {}
    nan_means: set[str] = set()
    cutoffs: set[int] = set()
    for label, m in labels:
        fam = m.family
        assert fam.kernel is not None
        values = fam.kernel(m, judged)
        undefined = ~defined_mask(m, judged) & counted_rows
        if undefined.any():
            summary.no_relevant[label] = qrels.query_ids[undefined].tolist()
            if pol.no_relevant == "error":
                raise PolicyError(f"{label}: {int(undefined.sum())} queries have no relevant judgments "
                                  f"(e.g. {summary.no_relevant[label][0]!r})")
            if pol.no_relevant == "zero":
                values = np.where(undefined, 0.0, values)
            else:
                values = np.where(undefined, np.nan, values)
                if pol.no_relevant == "nan":
                    nan_means.add(label)
        data[label] = values
        if m.k is not None:
            cutoffs.add(m.k)
    if any(summary.no_relevant.values()):
        worst = max(summary.no_relevant.values(), key=len)
        action = {"skip": "left out of the means", "zero": "scored 0", "nan": "NaN (means are NaN)"}
        notes.append(f"{len(worst)} queries have no relevant judgments and were "
                     f"{action[pol.no_relevant]} (e.g. {examples(worst)})")
    frame = pd.DataFrame(data, index=pd.Index(qrels.query_ids, name="query", dtype=object))
    if pol.missing_run == "drop":
        frame = frame[counted_rows]
    summary.evaluated = len(frame)
    if j.sorted_scores is not None:
        for k in sorted(cutoffs):
            t = ties_straddling(j.sorted_scores, j.offsets, k, j.evaluated_segments)
            if t:
                summary.ties_at_cutoff[k] = t
    if notes:
        warnings.warn("; ".join(notes), RagradeWarning, stacklevel=caller_stacklevel())
    return Result(frame, dict(labels), summary, pol, run_name=name or j.run_name, nan_means=nan_means)


def defined_mask(m: Metric, j: K.Judged) -> np.ndarray:
    """Queries on which ``m`` is defined, by its family's rule: ``"relevant"``: R > 0 at the metric's
    relevance level; ``"positive"``: at least one positive grade counted (DCG-type measures, at ``rel``
    when set); ``"always"``."""
    rule = m.family.defined
    if rule == "always":
        return np.ones(j.nq, dtype=bool)
    if rule == "positive":
        rel = m.get("rel")
        return j.n_relevant(1e-300 if rel is None else rel) > 0
    return j.n_relevant(m.rel) > 0


def _alignment_notes(summary: Summary, pol: Policies) -> list[str]:
    notes: list[str] = []
    if summary.only_in_run:
        notes.append(f"{len(summary.only_in_run)} run queries have no ground truth and were ignored "
                     f"(e.g. {examples(summary.only_in_run)})")
    if summary.missing_from_run:
        verb = "score 0" if pol.missing_run == "zero" else "were dropped"
        notes.append(f"{len(summary.missing_from_run)} ground-truth queries are missing from the run and {verb} "
                     f"(e.g. {examples(summary.missing_from_run)})")
    return notes


def _order_by_query_and_position(qq: np.ndarray, pos: np.ndarray) -> np.ndarray | None:
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


def examples(items: list[str], n: int = 3) -> str:
    shown = ", ".join(repr(x) for x in items[:n])
    return shown + (", ..." if len(items) > n else "")
