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

from ragrade.engine.result import MetricsArg, metric_labels
from ragrade.errors import InputError, MetricError, UnknownNameError
from ragrade.metrics.parser import Metric
from ragrade.policies import Policies

if TYPE_CHECKING:  # pragma: no cover
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
TRUTH_OPTIONS: dict[str, str] = {
    "hops": "traces: the ground-truth column (numbers) naming each relevant document's hop (hop_success)",
}

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


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``options`` split into ``(plan keywords, the rest)``: the caller's own keywords stay in the rest."""
    known = set(option_names())
    return ({k: v for k, v in options.items() if k in known}, {k: v for k, v in options.items() if k not in known})


def build_plan(qrels: Any, runs: Any, metrics: MetricsArg, *, profile: Any = None, matcher: Any = None,
               names: Any = None, rel_level: Any = None, max_memory: Any = None, engine: Any = "memory",
               master: str = "local[2]", qrels_format: str | None = None, run_format: str | None = None,
               qrels_progress: Progress = None, run_progress: Progress = None,
               hole_cutoffs: Sequence[int] = (), many: bool = False, **policies: Any) -> EvalPlan:
    """The :class:`EvalPlan` of an evaluation, after the one validation every entry point shares.

    ``runs`` is one run, or with ``many=True`` a mapping ``{name: run}`` (names as given) or a sequence of
    ``(name, run)`` pairs. ``policies`` are the policy keywords of :class:`~ragrade.policies.Policies`
    (None keeps the default or the profile's); any other keyword is an
    :class:`~ragrade.errors.UnknownNameError` naming the nearest known ones.
    """
    known = set(Policies.choices()) | set(Policies.settings())
    unknown = [k for k in policies if k not in known and k not in TRUTH_OPTIONS]
    if unknown:
        raise UnknownNameError("option", unknown[0], option_names())
    extras = {k: v for k, v in policies.items() if k in TRUTH_OPTIONS and v is not None}
    given = {k: v for k, v in policies.items() if v is not None and k not in TRUTH_OPTIONS}
    Policies().update(**given)  # a bad value is a PolicyError here, before anything is read
    if names is None:  # a profile decides how bare names read (trec_eval's under trec_eval/pytrec_eval)
        from ragrade.profiles import profile_names

        names = profile_names(profile)
    if names not in ("ragrade", "trec_eval"):
        raise UnknownNameError("names", names, ["ragrade", "trec_eval"], show_known=True)
    if rel_level is not None and (isinstance(rel_level, bool) or not isinstance(rel_level, int) or rel_level < 1):
        raise InputError("rel_level must be a positive integer", value=rel_level)
    if engine not in ENGINES:
        raise UnknownNameError("engine", engine, ENGINES, show_known=True)
    if max_memory is not None and (isinstance(max_memory, bool) or not isinstance(max_memory, int | str)
                                   or (isinstance(max_memory, int) and max_memory <= 0)):
        raise InputError("max_memory must be a size such as '4GiB' or a positive number of bytes", value=max_memory)
    labels = tuple(metric_labels(metrics, names=names, rel_level=rel_level))
    kinds = {m.family.kind for _, m in labels}
    prof = _profile(profile)
    if "diversity" in kinds and kinds <= CORE_KINDS and not extras:
        if kinds != {"diversity"}:
            raise MetricError("diversity measures (alpha_ndcg, err_ia) read subtopic judgments: evaluate them "
                              "separately from the other metrics")
        # ir-measures' pyndeval provider is the one profile of the diversity measures (issue 22)
        if matcher is not None or (prof is not None and prof.providers != "ir_measures"):
            raise InputError("diversity measures take neither a profile (but ir_measures) nor a matcher")
    if matcher is not None:
        _check_matcher(matcher, prof)
    if engine == "spark" and (extras or matcher is not None or (prof is not None and prof.kind == "list")
                              or kinds - {"id"}):
        raise InputError("engine='spark' evaluates id metrics under the default convention or an engine profile")
    return EvalPlan(qrels=qrels, runs=_named_runs(runs, many), labels=labels, profile=prof,
                    policies=MappingProxyType(given), matcher=matcher, engine=engine, max_memory=max_memory,
                    master=master, qrels_format=qrels_format, run_format=run_format,
                    qrels_progress=qrels_progress, run_progress=run_progress,
                    hole_cutoffs=tuple(int(k) for k in hole_cutoffs), extras=MappingProxyType(extras))


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
