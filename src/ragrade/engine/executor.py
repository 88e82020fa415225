"""The in-memory executor: runs an :class:`~ragrade.engine.plan.EvalPlan` in this process.

::

    plan (engine/plan.py)
      -> diversity measures             -> engine/diversity.py (subtopic judgments)
      -> a list profile                 -> engine/lists.py (list kernels; texts with a matcher)
      -> an engine profile              -> engine/lists.py (the profile's policies) -> Evaluator
      -> texts (a matcher)              -> engine/texts.py (match, greedy credit) -> id pipeline
      -> ids                            -> Evaluator (engine/core.py), one per plan: every run scored
                                           against the ground truth indexed once
      [+ token-overlap text metrics     -> kernels/text.py, as columns of the same Result]

Which executor runs a plan (this one, out of core, Spark) is decided by the one dispatcher,
:func:`ragrade.evaluation.dispatch`; this module never reads the memory budget nor imports the layers
above the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ragrade.engine.core import Evaluator
from ragrade.engine.inputs import is_path, read_both
from ragrade.engine.plan import EvalPlan
from ragrade.engine.result import QueryColumns, Result, Summary
from ragrade.metrics import Metric
from ragrade.policies import Policies


def run_in_memory(plan: EvalPlan) -> dict[str, Result]:
    """Every run of ``plan`` evaluated in memory, ``{name: Result}`` in the plan's order."""
    kinds = plan.kinds
    if "diversity" not in kinds:
        plan = _read_qrels_once(plan)
    prof = plan.profile
    if "diversity" in kinds:
        return {name: _diversity(plan, run) for name, run in plan.runs}
    if prof is not None:
        from ragrade.engine.lists import evaluate_engine_profile, evaluate_list_profile
        from ragrade.errors import InputError
        from ragrade.profiles import EngineProfile, ListProfile

        out: dict[str, Result] = {}
        for name, run in plan.runs:
            q, r = _read(plan, plan.qrels, run)
            if isinstance(prof, ListProfile):
                out[name] = evaluate_list_profile(q, r if plan.matcher is None else texts_of(r), list(plan.labels),
                                                  prof, plan.matcher, plan.policy_object())
            elif isinstance(prof, EngineProfile):
                out[name] = evaluate_engine_profile(q, r, list(plan.labels), prof, dict(plan.policies))
            else:  # a kind no route claimed: its ground truth was not given
                raise InputError(f"the {prof.name} profile ({prof.kind} profile) is evaluated with its own ground "
                                 f"truth; give it (see docs/profiles.md)")
        return out
    pol = plan.policy_object()
    id_labels = [(lab, m) for lab, m in plan.labels if m.family.kind != "text"]
    text_labels = [(lab, m) for lab, m in plan.labels if m.family.kind == "text"]
    results: dict[str, Result] = {}
    evaluator: Evaluator | None = None
    for name, run in plan.runs:
        q, r = _read(plan, plan.qrels, run)
        if not id_labels:
            results[name] = text_metrics(q, texts_of(r), text_labels, pol)
            continue
        if plan.matcher is not None:
            from ragrade.engine.texts import evaluate_texts
            from ragrade.matching.matchers import get_matcher

            result = evaluate_texts(q, texts_of(r), id_labels, get_matcher(plan.matcher), pol)
        else:
            if evaluator is None:  # the ground truth indexed once for every run
                evaluator = Evaluator(q, id_labels, policies=pol)
                evaluator.hole_cutoffs = plan.hole_cutoffs
            result = evaluator.evaluate(r)
        if text_labels:
            extra = text_metrics(q, texts_of(r), text_labels, pol)
            index = result.per_query.index
            result = result.with_columns({label: extra.per_query[label].reindex(index).to_numpy()
                                          for label, _ in text_labels}, dict(text_labels))
        results[name] = result
    return results


def id_setup(plan: EvalPlan) -> tuple[list[tuple[str, Metric]], Policies]:
    """The ``(label, Metric)`` pairs and the policies this executor scores the id metrics of ``plan`` with:
    under an engine profile, the profile's reading of each metric (trec_eval 9's interpolated precision,
    a peer's own family such as ranx's rbp) and its policies under the ones the plan gives."""
    from ragrade.profiles import EngineProfile

    labels = list(plan.labels)
    prof = plan.profile
    if not isinstance(prof, EngineProfile):  # none (a list profile never reaches the id pipeline)
        return labels, plan.policy_object()
    from ragrade.engine.peer_profiles import substituted

    return substituted([(lab, prof.adapt(m)) for lab, m in labels], prof), Policies().update(**prof.policy_overrides()).update(**plan.policies)


def prepare(plan: EvalPlan) -> Evaluator:
    """The ground truth of an id plan indexed once, as this executor scores runs against it: an
    :class:`~ragrade.engine.core.Evaluator` with the labels and policies of :func:`id_setup` (the run-side
    rules of a profile, its tie order and score precision, are the caller's). The dispatcher's
    :func:`ragrade.evaluation.prepare` is the door to it: callers that score many runs or many rankings
    against one ground truth (the pytrec_eval drop-in, fusion's search) take it from there."""
    qrels = plan.qrels
    if is_path(qrels):
        from ragrade.io import read_qrels

        qrels = read_qrels(qrels, format=plan.qrels_format, progress=plan.qrels_progress)
    labels, pol = id_setup(plan)
    evaluator = Evaluator(qrels, labels, policies=pol)
    evaluator.hole_cutoffs = plan.hole_cutoffs
    return evaluator


def _read(plan: EvalPlan, qrels: Any, run: Any) -> tuple[Any, Any]:
    """Two paths are read at the same time (Arrow parses without holding the GIL); anything else is read
    by the executor that takes it."""
    if is_path(qrels) and is_path(run):
        return read_both(qrels, run, qrels_format=plan.qrels_format, run_format=plan.run_format,
                         qrels_progress=plan.qrels_progress, run_progress=plan.run_progress)
    if is_path(run) and plan.run_format is not None:
        from ragrade.io import read_run

        run = read_run(run, format=plan.run_format, progress=plan.run_progress)
    return qrels, run


def _read_qrels_once(plan: EvalPlan) -> EvalPlan:
    """A plan of several runs reads a ground-truth file once."""
    if len(plan.runs) < 2 or not is_path(plan.qrels):
        return plan
    from ragrade.io import read_qrels

    return plan.replace(qrels=read_qrels(plan.qrels, format=plan.qrels_format, progress=plan.qrels_progress))


def _diversity(plan: EvalPlan, run: Any) -> Result:
    from ragrade.engine.diversity import evaluate_diversity

    if is_path(run) and plan.run_format is not None:
        from ragrade.io import read_run

        run = read_run(run, format=plan.run_format)
    p = plan.policies
    if plan.profile is not None:  # ir-measures' pyndeval provider (the plan allows no other profile here)
        from ragrade.engine.peer_profiles import evaluate_diversity_ir_measures
        from ragrade.profiles import EngineProfile

        assert isinstance(plan.profile, EngineProfile)

        return evaluate_diversity_ir_measures(plan.qrels, run, list(plan.labels), plan.profile, dict(p))
    return evaluate_diversity(plan.qrels, run, list(plan.labels), missing_run=p.get("missing_run"),
                              no_relevant=p.get("no_relevant"), ties=p.get("ties"), max_docs=p.get("max_docs"),
                              unjudged=p.get("unjudged"), upper_grade=p.get("upper_grade"))


def texts_of(run: Any) -> Any:
    """The text paths (matchers, token-overlap metrics) read the retrieved texts (``{query: [texts]}``) of
    a :class:`~ragrade.data.Run` that carries them (``ragrade.retrieve``, a run file with a ``text``
    column); any other run is taken as given."""
    from ragrade.data import Run

    return run.text_lists() if isinstance(run, Run) and run.has_texts else run


def text_metrics(truth: Any, run: Any, labels: list[Any], pol: Policies) -> Result:
    """Text families (token overlap) over the items as texts, one row per ground-truth query."""
    from ragrade.engine.texts import align_texts
    from ragrade.kernels.text import TextLists

    qids, units, lists, missing, only = align_texts(truth, run, pol.ties)
    texts = TextLists(units, lists)
    data = {}
    for label, m in labels:
        assert m.family.kernel is not None
        data[label] = np.asarray(m.family.kernel(m, texts), dtype=np.float64)
    frame = QueryColumns(qids, data)
    summary = Summary(qrels_queries=len(qids), run_queries=len(qids) - len(missing) + len(only),
                      evaluated=len(qids), missing_from_run=missing, only_in_run=only)
    return Result(frame, dict(labels), summary, pol)
