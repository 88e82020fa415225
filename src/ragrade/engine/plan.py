"""The evaluation plan: what one request asks for, validated once.

Every entry point (``ragrade.evaluate``, ``compare``, ``report.write_html``, ``gate``, ``agreement``,
``conventions`` and the commands of the same names) turns its arguments into an :class:`EvalPlan` with
:func:`build_plan`, the one place where the keywords of an evaluation are checked, and hands it to the one
dispatcher (:func:`ragrade.evaluation.dispatch`), which picks the executor: the in-memory engine
(:mod:`ragrade.engine.executor`: ids, texts, list and engine profiles, diversity), out of core, or Spark.

A plan is immutable: :meth:`EvalPlan.replace` gives a modified copy (the out-of-core path evaluates each
piece with a copy of the plan holding that piece).

>>> p = build_plan({"q1": {"d1": 1}}, {"q1": ["d1"]}, "P@[1,2]", ties="input")
>>> [label for label, _ in p.labels], dict(p.policies)
(['P@1', 'P@2'], {'ties': 'input'})
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from ragrade.engine.labels import MetricsArg, metric_labels
from ragrade.errors import InputError, MetricError, UnknownNameError
from ragrade.metrics.parser import Metric
from ragrade.policies import Policies

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.options import Option
    from ragrade.profiles import Profile

#: Where an evaluation runs: in this process (in memory, or out of core within ``max_memory``) or on Spark.
ENGINES: tuple[str, ...] = ("memory", "spark")

#: The keywords of an evaluation besides the policies (what ``evaluate`` accepts; ``compare``,
#: ``report.write_html`` and ``gate`` accept the same).
PLAN_OPTIONS: tuple[str, ...] = ("profile", "matcher", "names", "rel_level", "max_memory")

#: The keywords of the ground truths beyond judged ids, each read by the route that evaluates that kind of
#: ground truth (:data:`ragrade.evaluation.ROUTES`: spans, nuggets, traces), declared here once so that every
#: entry point (``evaluate``, ``compare``, ``report``, ``gate``) takes them: name -> what it is. They travel in
#: :attr:`EvalPlan.extras`; the route validates their values.
TRUTH_OPTIONS: dict[str, str] = {}
# character spans (issue 35; ragrade.spans.route, docs/spans.md)
TRUTH_OPTIONS.update({
    "chunks": "the chunk map of the run's chunk ids: (chunk_id, doc, start, end) rows (a file, a table, a ChunkMap)",
    "corpus": "the texts of the documents or passages (the documents spans point into; the passages an LLM assigns "
              "nuggets to): a folder of text files, a corpus file or {id: text}",
    "span_threshold": "projection of spans onto chunks: the share (0, 1] a chunk needs to be relevant "
                      "(default: any overlap)",
    "span_rule": "projection: what the threshold measures: chunk (share of the chunk that is gold), gold (share "
                 "of a gold span the chunk holds) or iou",
    "span_levels": "projection: 1 (a relevant chunk takes its span's grade) or L > 1 (grade times ceil(L * share))",
    "aggregate": "id measures on the run aggregated to documents: maxp, firstp or sump (pyserini's --max-passage)",
})
# nuggets (issue 38, docs/nuggets.md; the route ragrade.nuggets.route)
TRUTH_OPTIONS["assignments"] = "nugget assignments (a file or ragrade.nuggets.Assignments): which passages support which nuggets"
TRUTH_OPTIONS["judge"] = ("an LLM judge assigning the nuggets the assignments lack ('backend:model', a judge, a "
                          "nuggets.Assigner; the passages' texts from corpus=)")
# traces (issue 37; ragrade.traces.route, docs/traces.md)
TRUTH_OPTIONS["hops"] = "traces: the ground-truth column (numbers) naming each relevant document's hop (hop_success)"

#: The metric kinds the engine's own executors compute; any other kind (span, nugget, trajectory) is computed
#: by the route of its ground truth (:data:`ragrade.evaluation.ROUTES`).
CORE_KINDS = frozenset({"id", "text", "judge", "diversity"})

Engine = Literal["memory", "spark"]
Progress = Callable[[int, int], None] | None


def option_names() -> list[str]:
    """Every keyword :func:`build_plan` takes from a caller's ``**options``: the policies, their numeric
    settings and :data:`PLAN_OPTIONS`."""
    return [*Policies.choices(), *Policies.settings(), *PLAN_OPTIONS, *TRUTH_OPTIONS]


@dataclass(frozen=True)
class EvalPlan:
    """One evaluation request, validated: the inputs (ground truth and named runs, each as given: an object
    or a path), the metrics as parsed ``(label, Metric)`` pairs, the profile (None: ragrade's default
    convention), the policies given explicitly (the profile's and the defaults fill in the rest), the
    matcher, where to run (``engine``, ``max_memory``) and how files are read (formats, progress)."""

    qrels: Any
    runs: tuple[tuple[str, Any], ...]
    labels: tuple[tuple[str, Metric], ...]
    profile: Profile | None = None
    policies: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    matcher: Any = None
    engine: Engine = "memory"
    max_memory: int | str | None = None
    master: str = "local[2]"
    qrels_format: str | None = None
    run_format: str | None = None
    qrels_progress: Progress = None
    run_progress: Progress = None
    #: Cutoffs at which the hole rate's ``by_k`` is also computed (the report's plot).
    hole_cutoffs: tuple[int, ...] = ()
    #: The keywords of :data:`TRUTH_OPTIONS` given (not None), for the route that evaluates the plan.
    extras: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def kinds(self) -> frozenset[str]:
        """The metric kinds asked for (``id``, ``text``, ``diversity``)."""
        return frozenset(m.family.kind for _, m in self.labels)

    @property
    def columns(self) -> list[str]:
        """The column labels of the results, in order."""
        return [label for label, _ in self.labels]

    def replace(self, **changes: Any) -> EvalPlan:
        """A copy with ``changes`` (fields of the plan); the copy is not validated again."""
        for name in ("policies", "extras"):
            if name in changes:
                changes[name] = MappingProxyType(dict(changes[name]))
        if "labels" in changes:
            changes["labels"] = tuple(changes["labels"])
        return dataclasses.replace(self, **changes)

    def policy_object(self) -> Policies:
        """The :class:`~ragrade.policies.Policies` of the default convention with the given ones applied."""
        return Policies().update(**self.policies)


def declaration(name: str) -> Option | None:
    """The declaration :func:`build_plan` checks the keyword ``name`` with (:data:`ragrade.options.OPTIONS`:
    the plan options and the policies with their settings); None for a keyword of :data:`TRUTH_OPTIONS`
    (its route checks it) or an unknown one."""
    from ragrade.options import OPTIONS

    known = {*PLAN_OPTIONS, *Policies.choices(), *Policies.settings()}
    return OPTIONS.get(name) if name in known else None


def build_plan(qrels: Any, runs: Any, metrics: MetricsArg, *, engine: Any = "memory", master: str = "local[2]",
               qrels_format: str | None = None, run_format: str | None = None, qrels_progress: Progress = None,
               run_progress: Progress = None, hole_cutoffs: Sequence[int] = (), many: bool = False,
               **options: Any) -> EvalPlan:
    """The :class:`EvalPlan` of an evaluation, after the one validation every entry point shares.

    ``runs`` is one run, or with ``many=True`` a mapping ``{name: run}`` (names as given) or a sequence of
    ``(name, run)`` pairs. ``options`` are the keywords of :func:`option_names`: :data:`PLAN_OPTIONS`
    (``profile``, ``matcher``, ``names``, ``rel_level``, ``max_memory``) and the policies of
    :class:`~ragrade.policies.Policies` with their settings, each checked by its declaration in
    :mod:`ragrade.options` (None keeps the default or the profile's), and the keywords of
    :data:`TRUTH_OPTIONS` (carried to the route in :attr:`EvalPlan.extras`); any other keyword is an
    :class:`~ragrade.errors.UnknownNameError` naming the nearest known ones.
    """
    given = _declared(options)
    extras = {k: v for k, v in options.items() if k in TRUTH_OPTIONS and v is not None}
    policies = {k: v for k, v in given.items() if k not in PLAN_OPTIONS}
    Policies().update(**policies)  # a bad combination is a PolicyError here, before anything is read
    if engine not in ENGINES:
        raise UnknownNameError("engine", engine, ENGINES, show_known=True)
    profile, matcher, max_memory = given.get("profile"), given.get("matcher"), given.get("max_memory")
    if given.get("names") is None:  # a profile decides how bare names read (trec_eval's under trec_eval/pytrec_eval)
        from ragrade.profiles import profile_names

        given["names"] = profile_names(profile)
    from ragrade.engine.nicknames import profile_metrics  # (all_trec under pytrec_eval: trec_eval 9's set)

    labels = tuple(metric_labels(profile_metrics(metrics, profile), names=given["names"],
                                 rel_level=given.get("rel_level")))
    prof = _profile(profile)
    _check_kinds(frozenset(m.family.kind for _, m in labels), prof, matcher, engine, extras)
    return EvalPlan(qrels=qrels, runs=_named_runs(runs, many), labels=labels, profile=prof,
                    policies=MappingProxyType(policies), matcher=matcher, engine=engine, max_memory=max_memory,
                    master=master, qrels_format=qrels_format, run_format=run_format,
                    qrels_progress=qrels_progress, run_progress=run_progress,
                    hole_cutoffs=tuple(int(k) for k in hole_cutoffs), extras=MappingProxyType(extras))


def _declared(options: Mapping[str, Any]) -> dict[str, Any]:
    """The given keywords of ``options`` with a declaration, each checked (a value refused: an InputError or,
    for a policy, a PolicyError naming it); an unknown keyword: an UnknownNameError naming the nearest."""
    out: dict[str, Any] = {}
    for name, value in options.items():
        spec = declaration(name)
        if spec is None and name not in TRUTH_OPTIONS:
            raise UnknownNameError("option", name, option_names())
        if spec is not None and value is not None:
            out[name] = spec.check(value)
    return out


def _check_kinds(kinds: frozenset[str], prof: Profile | None, matcher: Any, engine: str,
                 extras: Mapping[str, Any]) -> None:
    """What the metric kinds, the profile, the matcher and the engine allow together (the engine's rules;
    a kind of profile or metric the engine does not run is its route's)."""
    from ragrade.profiles import ENGINE_KINDS, EngineProfile

    if "diversity" in kinds and kinds <= CORE_KINDS and not extras:
        if kinds != {"diversity"}:
            raise MetricError("diversity measures (alpha_ndcg, err_ia) read subtopic judgments: evaluate them "
                              "separately from the other metrics")
        # ir-measures' pyndeval provider is the one profile of the diversity measures (issue 22)
        if matcher is not None or (prof is not None and not (isinstance(prof, EngineProfile)
                                                              and prof.providers == "ir_measures")):
            raise InputError("diversity measures take neither a profile (but ir_measures) nor a matcher")
    if matcher is not None and (prof is None or prof.kind in ENGINE_KINDS):
        _check_matcher(matcher, prof)
    if engine == "spark" and (extras or matcher is not None or (prof is not None and prof.kind != "engine")
                              or kinds - {"id"}):
        raise InputError("engine='spark' evaluates id metrics under the default convention or an engine profile")


def _profile(profile: Any) -> Profile | None:
    if profile is None:
        return None
    from ragrade.profiles import Profile, get_profile

    if not isinstance(profile, str | Profile):
        raise InputError("profile must be a profile name or a ragrade.Profile", value=type(profile).__name__)
    prof = get_profile(profile)
    return None if prof.name == "default" else prof


def _check_matcher(matcher: Any, prof: Profile | None) -> None:
    if prof is not None and prof.kind != "list":
        raise InputError(f"the {prof.name} profile scores ids; text matchers apply to list profiles "
                         f"and to the default convention")
    if isinstance(matcher, str) and matcher.lower() == "profile":
        if prof is None:
            raise InputError("matcher='profile' needs a list profile (e.g. profile='ragas')")
        return
    from ragrade.matching.matchers import get_matcher

    get_matcher(matcher)  # an unknown name or a wrong type fails here


def _named_runs(runs: Any, many: bool) -> tuple[tuple[str, Any], ...]:
    if not many:
        return (("run", runs),)
    if isinstance(runs, Mapping):
        items = [(str(k), v) for k, v in runs.items()]
    elif isinstance(runs, Sequence) and not isinstance(runs, str | bytes):
        items = list(runs)
    else:
        raise InputError("runs must be a mapping {name: run} or a list of (name, run) pairs",
                         value=type(runs).__name__)
    names = [n for n, _ in items]
    if len(set(names)) != len(names):
        raise InputError("run names must be distinct", value=names)
    return tuple(items)
