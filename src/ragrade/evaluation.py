"""``ragrade.evaluate`` and the one dispatcher every entry point evaluates through.

::

    entry point (evaluate, compare, report, gate, agreement, conventions, the commands)
      -> build_plan (engine/plan.py): keywords validated once   -> EvalPlan (immutable)
      -> dispatch (here): which executor runs the plan
           engine="spark"                         -> ragrade.scale.spark (Spark DataFrames)
           max_memory, or two files too large     -> out of core (pieces, each run in memory, combined)
           otherwise                              -> engine/executor.py (in memory)
      -> prepare (here): the in-memory executor's indexed ground truth, for callers that score many runs or
         rankings against one ground truth (the pytrec_eval drop-in, fusion's search)

This module sits above the engine and the scale executors (out of core, Spark): it imports them, they
never import it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragrade.engine.core import Evaluator
from ragrade.engine.executor import prepare as prepare_in_memory
from ragrade.engine.executor import run_in_memory
from ragrade.engine.labels import MetricsArg
from ragrade.engine.plan import TRUTH_OPTIONS, EvalPlan, build_plan, option_names
from ragrade.engine.result import Result
from ragrade.errors import InputError, UnknownNameError
from ragrade.metrics.parser import Names
from ragrade.options import public
from ragrade.policies import (
    Duplicates,
    EmptyRun,
    IdenticalIds,
    MissingQrels,
    MissingRun,
    NoRelevant,
    Ties,
    Unjudged,
)

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.matching.matchers import Matcher
    from ragrade.profiles import Profile

__all__ = ["EvalPlan", "build_plan", "dispatch", "dispatch_one", "evaluate", "judgments_of", "prepare"]


#: The routes of the ground truths beyond judged ids, one module each (imported when a plan is dispatched):
#: each has ``claims(plan) -> bool`` (whether the plan's ground truth, metrics or extras are its kind) and
#: ``run(plan) -> {run name: Result}`` (the id metrics of such a plan are computed by the engine's executor
#: on the ground truth it derives: spans projected onto chunks, nuggets as subtopics, ...); for the gate,
#: ``truth_stats(plan)`` (the fingerprint, queries, judgments and relevant items of the ground truth itself)
#: and ``SETTINGS`` (the keywords that are conventions a candidate shares with its baseline); for the report,
#: ``judgments(plan)`` (the judged ids shown next to the retrieved items). The first route that claims a plan
#: runs it; a plan no route claims goes to the engine's executors.
ROUTES: tuple[str, ...] = ()
ROUTES += ("ragrade.nuggets.route",)  # nuggets as ground truth (issue 38, docs/nuggets.md)
# character spans (issue 35): docs/spans.md. After nuggets: a nugget evaluation may carry corpus=, which alone
# would read as span truth's documents.
ROUTES += ("ragrade.spans.route",)
ROUTES += ("ragrade.traces.route",)  # runs read from traces, trajectory measures (issue 37, docs/traces.md)


def route_of(plan: EvalPlan) -> Any:
    """The route module that claims ``plan``, or None."""
    import importlib

    for name in ROUTES:
        module = importlib.import_module(name)
        if module.claims(plan):
            return module
    return None


def judgments_of(plan: EvalPlan) -> Any:
    """The judged ids behind ``plan``'s ground truth, as a :class:`~ragrade.data.Qrels` (what a report shows
    next to the retrieved items): the route's ``judgments(plan)`` (spans projected onto the chunking,
    nuggets' assignments as grades), else the ground truth itself."""
    from ragrade.engine.inputs import as_qrels

    route = route_of(plan)
    if route is not None and hasattr(route, "judgments"):
        return as_qrels(route.judgments(plan))
    if isinstance(plan.qrels, str) or hasattr(plan.qrels, "__fspath__"):
        from ragrade.io import read_qrels

        return read_qrels(plan.qrels, format=plan.qrels_format)
    return as_qrels(plan.qrels)


def dispatch(plan: EvalPlan) -> dict[str, Result]:
    """Run ``plan``: ``{run name: Result}`` in the plan's order, every run by the executor its inputs call
    for (a route of another kind of ground truth, Spark, out of core, in memory). The values do not depend
    on the executor."""
    route = route_of(plan)
    if route is not None:
        results: dict[str, Result] = route.run(plan)
        return {name: results[name] for name, _ in plan.runs}
    if plan.engine == "spark":
        return {name: _on_spark(plan, run) for name, run in plan.runs}
    out: dict[str, Result] = {}
    rest: list[tuple[str, Any]] = []
    for name, run in plan.runs:
        big = _out_of_core(plan, run)
        if big is None:
            rest.append((name, run))
        else:
            out[name] = big
    if rest:
        out.update(run_in_memory(plan if len(rest) == len(plan.runs) else plan.replace(runs=tuple(rest))))
    return {name: out[name] for name, _ in plan.runs}


def dispatch_one(plan: EvalPlan) -> Result:
    """The result of a plan holding one run."""
    return next(iter(dispatch(plan).values()))


def prepare(plan: EvalPlan) -> Evaluator:
    """The ground truth of ``plan`` indexed once for scoring many runs (or many rankings) against it in this
    process: the in-memory executor's :class:`~ragrade.engine.core.Evaluator`
    (:func:`ragrade.engine.executor.prepare`). Only a plan the in-memory id pipeline runs can be prepared:
    id metrics, no matcher, no list profile, no memory budget, not on Spark (an
    :class:`~ragrade.errors.InputError` says which)."""
    reason = ("engine='spark'" if plan.engine == "spark" else "max_memory" if plan.max_memory is not None
              else "a matcher" if plan.matcher is not None
              else "a list profile" if plan.profile is not None and plan.profile.kind == "list"
              else "metrics that are not id metrics" if plan.kinds - {"id"} else None)
    if reason is not None:
        raise InputError(f"a prepared evaluation scores id metrics in memory; this plan has {reason}")
    return prepare_in_memory(plan)


def _out_of_core(plan: EvalPlan, run: Any) -> Result | None:
    """The out-of-core result, or None when the in-memory executor applies (no ``max_memory`` and inputs
    that fit, or inputs that are not two files)."""
    from ragrade.engine.inputs import is_path

    if plan.max_memory is None and not (is_path(plan.qrels) and is_path(run)):
        return None
    if "diversity" in plan.kinds:
        return None
    if plan.max_memory is None:
        from ragrade.scale.budget import budget_for

        if budget_for(plan.qrels, run, None) is None:  # two files that fit: the in-memory executor
            return None
    from ragrade.scale.outofcore import evaluate_large
    from ragrade.scale.pieces import PieceScorer

    # each piece is scored through the engine's scoring port (a layer below: no call climbs back)
    return evaluate_large(plan.qrels, run, list(plan.labels), plan.max_memory, plan.profile, plan.matcher,
                          PieceScorer.of_plan(plan), dict(plan.policies), qrels_format=plan.qrels_format,
                          run_format=plan.run_format)


def _on_spark(plan: EvalPlan, run: Any) -> Result:
    from ragrade.scale import spark as rs

    rs.require_pyspark()  # the install hint, before anything else
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    session = active if active is not None else rs.session(plan.master)
    try:
        if active is None:
            session.sparkContext.setLogLevel("ERROR")
        res = rs.evaluate(plan.qrels, run, list(plan.labels), spark=session, profile=plan.profile,
                          qrels_format=plan.qrels_format, run_format=plan.run_format, **dict(plan.policies))
        result = res.collect()  # the session stops below: the values come to this process first
        res.unpersist()
        return result
    finally:
        if active is None:
            session.stop()


@public
def evaluate(qrels: Any, run: Any, metrics: MetricsArg, *, profile: str | Profile | None = None,
             matcher: Matcher | str | None = None, missing_run: MissingRun | None = None,
             missing_qrels: MissingQrels | None = None, no_relevant: NoRelevant | None = None,
             duplicates: Duplicates | None = None, identical_ids: IdenticalIds | None = None,
             ties: Ties | None = None, empty_run: EmptyRun | None = None, unjudged: Unjudged | None = None,
             max_docs: int | None = None, num_docs: int | None = None, upper_grade: float | None = None,
             names: Names | None = None, rel_level: int | None = None, max_memory: int | str | None = None,
             **truth_options: Any) -> Result:
    """Score ``run`` against ``qrels`` with ``metrics``.

    ``qrels`` and ``run`` may be :class:`~ragrade.data.Qrels` / :class:`~ragrade.data.Run` objects, nested
    dicts (``{query: {doc: grade}}``, ``{query: {doc: score}}``), ranked lists (``{query: [docs]}``,
    ``[[docs], ...]``), AutoRAG groups, DataFrames, pyarrow Tables or file paths (``docs/formats.md``).
    ``metrics`` is a metric string (``"ndcg@10"``, ``"recall@[5,10]"``), a :class:`~ragrade.metrics.Metric`
    or a list of them (``ragrade metrics`` lists every family).

    ``profile`` (``"autorag"``, ``"ragas"``, ``"pytrec_eval"``, ...) computes the metrics under a peer's
    conventions (``docs/profiles.md``); ``matcher`` (``"rouge_l"``, ``"fuzzy"``, a
    :class:`~ragrade.matching.Matcher`; ``"profile"`` for the peer's own) makes the items texts
    (``docs/matching.md``). The remaining keywords set the policies for undefined cases
    (``docs/conventions.md``, "Policies"; None keeps the default or the profile's), among them ``unjudged``
    (``"nonrelevant"``, ``"condensed"``, ``"bounds"``: what an unjudged retrieved document is), and
    trec_eval's options: ``max_docs`` (``-M``), ``num_docs`` (``-N``), ``rel_level`` (``-l``: the relevance
    level of every metric not given one), ``unjudged="condensed"`` (``-J``), ``missing_run="zero"`` (``-c``).
    ``names="trec_eval"`` (unset: the profile decides; ``trec_eval`` and ``pytrec_eval`` read names as
    trec_eval does) reads every trec_eval name as trec_eval does (``recall`` is recall_5 ...
    recall_1000; by default a bare ``recall`` keeps ragrade's meaning, see :mod:`ragrade.metrics.parser`).

    Every result carries the hole rate (``result.hole_rate``): the share of each query's top-k documents
    without a judgment, k the largest cutoff asked (10 when none is).

    ``truth_options``: the keywords of a ground truth beyond judged ids (character spans, nuggets, traces:
    :data:`ragrade.engine.plan.TRUTH_OPTIONS`), read by the route that evaluates that kind (:data:`ROUTES`).

    ``max_memory`` (``"4GiB"``, bytes) evaluates two files in about that much memory, piece by piece, with
    the same results (``docs/scale.md``); files too large for the memory available are evaluated so even
    without it.

    The same keywords are taken by :func:`ragrade.compare`, :func:`ragrade.report.write_html` and
    :func:`ragrade.gate`: each builds the same plan (:func:`ragrade.engine.plan.build_plan`) and evaluates
    it through :func:`dispatch`.

    >>> r = evaluate({"q1": {"t1": 1, "t2": 1, "t3": 1}},
    ...              {"q1": {"t1": 4.0, "p1": 3.0, "t2": 2.0, "p3": 1.0}}, ["ndcg@4", "ap@4", "P@10", "rr"])
    >>> {k: round(v, 10) for k, v in r.means.items()}
    {'ndcg@4': 0.703918089, 'ap@4': 0.5555555556, 'P@10': 0.2, 'rr': 1.0}
    """
    unknown = [k for k in truth_options if k not in TRUTH_OPTIONS]
    if unknown:
        raise UnknownNameError("option", unknown[0], option_names())
    plan = build_plan(qrels, run, metrics, profile=profile, matcher=matcher, names=names, rel_level=rel_level,
                      max_memory=max_memory, missing_run=missing_run, missing_qrels=missing_qrels,
                      no_relevant=no_relevant, duplicates=duplicates, identical_ids=identical_ids, ties=ties,
                      empty_run=empty_run, unjudged=unjudged, max_docs=max_docs, num_docs=num_docs,
                      upper_grade=upper_grade, **truth_options)
    return dispatch_one(plan)
