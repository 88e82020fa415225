"""The route of a nugget ground truth (:data:`ragrade.evaluation.ROUTES`): ``ragrade.evaluate(nuggets, run,
[...], assignments=..., judge=...)``, and ``compare``, ``report``, ``gate`` and their commands alike.

It claims a plan whose metrics include a nugget measure (``nugget_recall``, ``nugget_precision``), that
gives ``assignments=`` or ``judge=``, or whose ground truth is a :class:`~ragrade.nuggets.Nuggets`. For each
run it:

1. ranks every query's list (the plan's ``ties``; a repeated passage earns nothing after its first rank,
   or is removed with ``duplicates="drop"``; ``"error"`` refuses it);
2. takes the assignments given (``assignments=``) and asks ``judge=`` for the texts they lack: the top-k
   passages every measure reads and, for ``context=joined``, the concatenated top k
   (:func:`ragrade.nuggets.assignment`, cached and under its budget);
3. computes the nugget measures with :mod:`ragrade.kernels.nuggets`, the diversity measures (α-nDCG, ERR-IA,
   subtopic recall ...) on the nuggets as subtopics (:func:`~ragrade.nuggets.scores.subtopic_qrels`) and the
   id measures on the qrels the assignments imply (grade 2: supports a nugget, 1: only partly, 0: none),
   both through the engine's in-memory executor.

The result's summary carries a :class:`~ragrade.engine.result.JudgeInfo` (who assigned, what failed, the
calls, tokens and cache hits). Failed assignments make the values they could change NaN, never 0.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragrade.engine.plan import EvalPlan
from ragrade.engine.result import JudgeInfo, Result, Summary
from ragrade.errors import InputError, PolicyError
from ragrade.metrics import Metric
from ragrade.nuggets.asking import Budget
from ragrade.nuggets.data import Assignments, Nuggets, as_assignments, as_nuggets

#: The keywords of ``TRUTH_OPTIONS`` this route reads.
OPTIONS = ("assignments", "judge", "corpus")


@dataclass(frozen=True)
class Assigner:
    """How ``judge=`` assigns what ``assignments=`` lacks: the judge (a judge object asking the nugget tasks, or
    ``"backend:model"``, the server from ``RAGRADE_JUDGE_BASE_URL``), the texts (``passages``: a corpus path or
    ``{doc: text}``; ``queries`` when the nuggets file has no query texts), and the options of
    :func:`ragrade.nuggets.assignment`."""

    judge: Any
    passages: Any = None
    queries: Any = None
    cache: Any = True
    budget: Budget | None = None
    max_concurrency: int | None = None
    grades: int = 3
    batch: int = 10
    retries: int = 2


def claims(plan: EvalPlan) -> bool:
    """Whether the plan is a nugget evaluation (see the module docstring)."""
    if any(m.family.kind == "nugget" for _, m in plan.labels):
        return True
    return bool({"assignments", "judge"} & set(plan.extras)) or isinstance(plan.qrels, Nuggets)


def _judge_of(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    backend, sep, model = value.partition(":")
    if not sep or not model:
        raise InputError("judge must be a judge object or 'backend:model' (e.g. 'openai:gpt-4o-mini')", value=value)
    from ragrade.nuggets.asking import llm_judge

    return llm_judge(model, os.environ.get("RAGRADE_JUDGE_BASE_URL", "https://api.openai.com/v1"), backend=backend)


def _assigner(extras: Mapping[str, Any]) -> Assigner | None:
    value = extras.get("judge")
    if value is None:
        return None
    if isinstance(value, Assigner):
        return value if value.passages is not None or "corpus" not in extras else \
            dataclasses.replace(value, passages=extras["corpus"])
    return Assigner(_judge_of(value), passages=extras.get("corpus"))


def _lists(plan: EvalPlan, run: Any) -> dict[str, list[str | None]]:
    """Each query's ranking under the plan's ties and duplicates policies (None: a later copy, earning nothing)."""
    from ragrade.engine.inputs import as_run, is_path

    pol = plan.policy_object()
    if is_path(run):
        from ragrade.io import read_run

        run = read_run(run, format=plan.run_format)
    out: dict[str, list[str | None]] = {}
    for q, docs in as_run(run).to_lists(pol.ties).items():
        seen: set[str] = set()
        ranked: list[str | None] = []
        for d in docs:
            if d in seen:
                if pol.duplicates == "error":
                    raise PolicyError(f"duplicates='error': document {d!r} is retrieved twice for query {q!r}")
                if pol.duplicates == "drop":
                    continue
                ranked.append(None)
            else:
                seen.add(d)
                ranked.append(d)
        out[q] = ranked
    return out


def _joined(m: Metric) -> bool:
    return m.name == "nugget_recall" and m.get("context") == "joined"


def _depths(labels: list[tuple[str, Metric]]) -> tuple[int | None, list[int]]:
    """(passages per query to assign: the largest cutoff, None when a measure reads whole lists; the joined ks)."""
    ks = [m.k for _, m in labels if not _joined(m)]
    joined = sorted({int(m.k) for _, m in labels if _joined(m) and m.k is not None})
    depth = None if any(k is None for k in ks) else max((int(k) for k in ks if k is not None), default=0)
    return depth, joined


def _assignments(plan: EvalPlan, nuggets: Nuggets, lists: Mapping[str, Mapping[str, list[str | None]]]
                 ) -> tuple[Assignments, dict[str, Any]]:
    """The assignments to score with (given, then judged) and who made them (for the summary)."""
    given = as_assignments(plan.extras["assignments"]) if "assignments" in plan.extras else Assignments()
    assigner = _assigner(plan.extras)
    if assigner is None:
        return given, {"name": "assignments", "model": "", "cache": None,
                       "judgments": {"failed": len(given.failed())}}
    from ragrade.nuggets.assignment import assign

    depth, joined = _depths(list(plan.labels))
    clean = {name: {q: [d for d in docs if d is not None] for q, docs in ls.items()} for name, ls in lists.items()}
    res = assign(nuggets, judge=assigner.judge, passages=assigner.passages, queries=assigner.queries,
                 runs=clean, depth=depth, joined=joined, assignments=given, grades=assigner.grades,
                 batch=assigner.batch, cache=assigner.cache, budget=assigner.budget,
                 max_concurrency=assigner.max_concurrency, retries=assigner.retries, ties="input")
    info = {"name": res.judge["judge"], "model": res.judge["model"], "cache": res.judge["cache"],
            "judgments": {**res.costs, "failed_attempts": res.costs["failed"], "failed": len(res.failures),
                          "unasked": res.unasked, "not_judged": len(res.not_judged)}}
    return res.assignments, info


def _rows(plan: EvalPlan, nuggets: Nuggets, lists: Mapping[str, list[str | None]]) -> tuple[list[str], Summary]:
    """The queries scored (those with nuggets, under ``missing_run``) and the summary of what happened."""
    pol = plan.policy_object()
    missing = [q for q in nuggets.queries if q not in lists]
    if missing and pol.missing_run == "error":
        raise PolicyError(f"missing_run='error': {len(missing)} queries with nuggets are not in the run "
                          f"(first: {missing[0]!r})")
    rows = [q for q in nuggets.queries if q in lists or pol.missing_run != "drop"]
    only = [q for q in lists if not nuggets.of(q)]
    empty = [q for q in rows if q in lists and not lists[q]]
    dupes = sum(d is None for q in rows for d in lists.get(q, ()))
    return rows, Summary(len(nuggets.queries), len(lists), len(rows), missing_from_run=missing, only_in_run=only,
                         empty_lists=empty, duplicate_items=dupes)


def nugget_columns(nuggets: Nuggets, rows: list[str], lists: Mapping[str, list[str | None]],
                   assignments: Assignments, labels: list[tuple[str, Metric]]
                   ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, int]]]:
    """``{label: per-query values}`` of the nugget measures, and per label how many queries were scored,
    undefined (no weight), missing (a joined context never assigned) or failed (a failed assignment)."""
    from ragrade.kernels import nuggets as kn
    from ragrade.nuggets.scores import joined_values, support_matrix, weights

    depth = max((int(m.k) for _, m in labels if m.k is not None), default=0)
    values, owner, importance = support_matrix(nuggets, rows, lists, assignments, depth)
    out: dict[str, np.ndarray] = {}
    outcomes: dict[str, dict[str, int]] = {}
    for label, m in labels:
        k, strict = int(m.k or 0), bool(m.get("strict"))
        missing = np.zeros(len(rows), dtype=bool)
        if m.name == "nugget_precision":
            v = kn.nugget_precision(values, owner, len(rows), k, strict)
            undefined = np.bincount(owner, minlength=len(rows)) == 0
        else:
            w = weights(importance, m.get("weight"))
            undefined = np.bincount(owner, weights=w, minlength=len(rows)) == 0
            if m.get("context") == "joined":
                j = joined_values(nuggets, rows, lists, assignments, k)
                missing = np.array([_context_missing(q, lists, assignments, k) for q in rows], dtype=bool)
                v = kn.nugget_recall(j, owner, w, len(rows), 1, strict)
            else:
                v = kn.nugget_recall(values, owner, w, len(rows), k, strict)
        out[label] = v
        nan = np.isnan(v)
        outcomes[label] = {"scored": int((~nan).sum()), "undefined": int((nan & undefined).sum()),
                           "missing": int((nan & missing & ~undefined).sum()),
                           "failed": int((nan & ~missing & ~undefined).sum())}
    return out, outcomes


def _context_missing(q: str, lists: Mapping[str, list[str | None]], assignments: Assignments, k: int) -> bool:
    """Whether the query's top ``k`` joined was never assigned."""
    context = tuple(d for d in list(lists.get(q, ()))[:k] if d is not None)
    return bool(context) and not assignments.joined(q, context)


def implied_qrels(assignments: Assignments) -> Any:
    """The passages' assignments as graded qrels (a DataFrame ``query, doc, grade``): 2 when the passage
    supports a nugget, 1 when it only partly supports some, 0 when it supports none (``failed`` labels add
    nothing)."""
    import pandas as pd

    best: dict[tuple[str, str], float] = {}
    for a in assignments:
        if a.doc is None:
            continue
        g = {"support": 2.0, "partial_support": 1.0}.get(a.label, 0.0)
        key = (a.query, a.doc)
        best[key] = max(best.get(key, 0.0), g)
    return pd.DataFrame([(q, d, g) for (q, d), g in best.items()], columns=["query", "doc", "grade"])


def _engine_part(plan: EvalPlan, name: str, run: Any, qrels: Any, labels: list[tuple[str, Metric]]) -> Any:
    """The per-query frame of ``labels`` computed by the engine on a derived ground truth (None: no labels)."""
    if not labels:
        return None
    from ragrade.engine.executor import run_in_memory

    piece = plan.replace(qrels=qrels, runs=((name, run),), labels=labels, extras={}, qrels_format=None)
    return run_in_memory(piece)[name].per_query


def _warn(name: str, outcomes: Mapping[str, Mapping[str, int]]) -> None:
    """A warning for the joined contexts that were never assigned (their values are NaN)."""
    import warnings

    from ragrade.errors import RagradeWarning

    missing = {label: o["missing"] for label, o in outcomes.items() if o.get("missing")}
    if missing:
        what = ", ".join(f"{label}: {n}" for label, n in missing.items())
        warnings.warn(f"run {name}: the joined top k of some queries has no assignment (NaN; assign them with "
                      f"ragrade nuggets assign --joined K, or give judge=): {what}", RagradeWarning, stacklevel=2)


#: the keywords of OPTIONS that are conventions (none: the assignments and the judge serve the run's passages)
SETTINGS: tuple[str, ...] = ()


def truth_stats(plan: EvalPlan) -> dict[str, Any]:
    """What the gate records of the plan's nuggets: the fingerprint of the nuggets (query, id, text,
    importance; not the assignments, which grow with the passages each run retrieves), the queries, the
    nuggets and the vital ones."""
    from ragrade.data.fingerprint import rows_fingerprint

    nuggets = as_nuggets(plan.qrels, format=plan.qrels_format)
    rows = [(n.query, n.nugget_id, n.text, n.importance) for n in nuggets]
    return {"fingerprint": rows_fingerprint(rows, kind="nuggets"), "queries": len(nuggets.queries),
            "judgments": len(nuggets), "relevant": sum(1 for n in nuggets if n.importance == "vital")}


def judgments(plan: EvalPlan) -> Any:
    """The judgments a report shows next to the retrieved passages: the given assignments as graded qrels
    (:func:`implied_qrels`; those a judge makes during the evaluation are not asked for this)."""
    from ragrade.engine.inputs import as_qrels

    given = as_assignments(plan.extras["assignments"]) if "assignments" in plan.extras else Assignments()
    frame = implied_qrels(given)
    if not len(frame):
        nuggets = as_nuggets(plan.qrels, format=plan.qrels_format)
        import pandas as pd

        frame = pd.DataFrame({"query": nuggets.queries, "doc": [""] * len(nuggets.queries), "grade": 0.0})
    return as_qrels(frame)


def run(plan: EvalPlan) -> dict[str, Result]:
    """Evaluate every run of ``plan`` against its nuggets (see the module docstring)."""
    unknown = [k for k in plan.extras if k not in OPTIONS]
    if unknown:
        raise InputError(f"{unknown[0]}= does not apply to a nugget ground truth (it takes {', '.join(OPTIONS)})")
    if "assignments" not in plan.extras and "judge" not in plan.extras:
        raise InputError("a nugget evaluation needs assignments= (which passages support which nuggets: ragrade "
                         "nuggets assign) or judge= (an LLM that assigns them; with corpus=)")
    nuggets = as_nuggets(plan.qrels, format=plan.qrels_format)
    lists = {name: _lists(plan, r) for name, r in plan.runs}
    assignments, who = _assignments(plan, nuggets, lists)
    from ragrade.nuggets.scores import subtopic_qrels

    kinds = {"nugget": [], "diversity": [], "id": []}  # type: dict[str, list[tuple[str, Metric]]]
    for label, m in plan.labels:
        kind = m.family.kind
        if kind not in kinds:
            raise InputError(f"{label!r} is a {kind} measure: a nugget ground truth gives nugget, diversity and id "
                             "measures")
        kinds[kind].append((label, m))
    subtopics = subtopic_qrels(nuggets, assignments) if kinds["diversity"] else None
    implied = implied_qrels(assignments) if kinds["id"] else None
    return {name: _one(plan, name, r, nuggets, lists[name], assignments, who, kinds, subtopics, implied)
            for name, r in plan.runs}


def _one(plan: EvalPlan, name: str, run: Any, nuggets: Nuggets, lists: Mapping[str, list[str | None]],
         assignments: Assignments, who: Mapping[str, Any], kinds: Mapping[str, list[tuple[str, Metric]]],
         subtopics: Any, implied: Any) -> Result:
    import pandas as pd

    rows, summary = _rows(plan, nuggets, lists)
    values, outcomes = nugget_columns(nuggets, rows, lists, assignments, kinds["nugget"])
    frame = pd.DataFrame(values, index=pd.Index(rows, name="query", dtype=object))
    for part in (_engine_part(plan, name, run, subtopics, kinds["diversity"]),
                 _engine_part(plan, name, run, implied, kinds["id"])):
        if part is not None:
            frame = frame.join(part, how="outer") if len(frame.columns) else part.copy()
    frame = frame[[label for label, _ in plan.labels]]
    judgments = dict(who["judgments"])
    _warn(name, outcomes)
    info = JudgeInfo(name=str(who["name"]), model=str(who["model"]), profile="nuggets", outcomes=outcomes,
                     judgments=judgments, cache=who["cache"])
    summary = summary.replace(evaluated=int(frame.notna().any(axis=1).sum()), judge=info)
    return Result(frame, dict(plan.labels), summary, plan.policy_object(), run_name=name)


__all__ = ["OPTIONS", "SETTINGS", "Assigner", "claims", "implied_qrels", "judgments", "nugget_columns", "run",
           "truth_stats"]
