"""``ragrade.gate``: is a candidate run worse than a saved baseline? (``docs/gate.md``)

For each metric, with per-query differences ``d_i = candidate_i - baseline_i`` over the queries both
count, mean ``delta`` and margin ``m >= 0``:

* default (a regression must be shown): ``H0: delta >= -m`` against ``H1: delta < -m``; the gate fails when
  ``H0`` is rejected at level ``alpha``;
* ``strict=True`` (non-inferiority must be shown): ``H0: delta <= -m`` against ``H1: delta > -m``; the gate
  fails unless ``H0`` is rejected.

Both are the chosen paired test of :mod:`ragrade.comparison.stats` applied to ``d_i + m``, one-sided: the
two-sided p-value ``p2`` of a test whose null distribution is symmetric gives ``p2 / 2`` in the direction
of the observed mean and ``1 - p2 / 2`` in the other. A metric also fails when the candidate's mean is
below its floor. The gate refuses (:class:`IncomparableError`, exit status 2) comparisons that would be
meaningless: other qrels (unless allowed), other conventions, a metric the baseline does not hold.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.comparison import stats
from ragrade.errors import (
    IncomparableError,
    RagradeError,
    RagradeWarning,
)
from ragrade.gating.baseline import Baseline, load_baseline, qrels_stats, truth_of, truth_stats
from ragrade.options import GATE_TEST, SOME_METRICS, public

#: Paired tests the gate can use.
GATE_TESTS = stats.PAIRED_TESTS


@dataclass(frozen=True)
class MetricVerdict:
    """The gate's finding for one metric (immutable)."""

    metric: str
    definition: str
    baseline: float
    baseline_ci: tuple[float, float]
    candidate: float
    candidate_ci: tuple[float, float]
    delta: float
    delta_ci: tuple[float, float]
    margin: float
    floor: float | None
    p_value: float
    paired: int
    passed: bool
    reasons: list[str] = field(default_factory=list)
    worst: list[dict[str, Any]] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "fail"


@dataclass(frozen=True)
class GateResult:
    """What :func:`gate` found: one :class:`MetricVerdict` per metric, notes, and the settings used.
    ``exit_code`` is 0 when every metric passes, 1 otherwise. A verdict, not an evaluation (the candidate's
    :class:`ragrade.Result` is not kept), so a type of its own; immutable: :meth:`by` and
    ``dataclasses.replace`` give modified copies."""

    verdicts: list[MetricVerdict]
    baseline: Baseline
    candidate: str | None
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    #: Per metric, the paired per-query differences (candidate - baseline), index: query id.
    differences: dict[str, Any] = field(default_factory=dict, repr=False)
    #: Per metric, the slices that account for most of a drop (:meth:`by`), or None.
    slices: dict[str, Any] | None = None

    def by(self, labels: Any, share: float = 0.5) -> GateResult:
        """A copy with, per metric, the slices that account for most of its drop (the smallest set of
        slices explaining at least ``share`` of the fall in the mean; see
        :func:`ragrade.engine.slices.drop_slices`), named in the markdown."""
        from dataclasses import replace

        from ragrade.engine.slices import drop_slices

        return replace(self, slices={m: drop_slices(d, labels, share) for m, d in self.differences.items()})

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def __getitem__(self, metric: str) -> MetricVerdict:
        for v in self.verdicts:
            if v.metric == metric:
                return v
        raise KeyError(metric)

    # -- exports -----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "exit_code": self.exit_code,
            "baseline": {"run": self.baseline.run, "created": self.baseline.created,
                         "ragrade_version": self.baseline.ragrade_version, "qrels": self.baseline.qrels,
                         "path": self.baseline.path},
            "candidate": self.candidate,
            "settings": self.settings,
            "metrics": [_jsonable({**asdict(v), "verdict": v.verdict}) for v in self.verdicts],
            "notes": list(self.notes),
            **({"slices": self.slices} if self.slices is not None else {}),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(_jsonable(self.to_dict()), indent=indent)

    def description(self) -> str:
        s = self.settings
        label = stats.TEST_LABELS[s["test"]]
        resamples = f", {s['n_resamples']:,} resamples, seed {s['seed']}" if s["test"] in ("randomization",
                                                                                        "bootstrap") else ""
        corr = "" if s["correction"] == "none" else f", {stats.CORRECTION_LABELS[s['correction']]} correction"
        design = ("the candidate must show it is no worse than the margin (non-inferiority)" if s["strict"]
                  else "a metric fails when it is shown worse than the baseline by more than its margin")
        return (f"One-sided {label} on the per-query differences at α = {s['alpha']:g}{resamples}{corr}; "
                f"{design}. Intervals: {s['confidence']:.0%} percentile bootstrap.")

    def to_markdown(self, digits: int = 4, worst: int = 5) -> str:
        b = self.baseline
        head = "✅ pass" if self.passed else "❌ fail"
        lines = [f"### ragrade gate: {head}", ""]
        cand = f"`{self.candidate}`" if self.candidate else "the candidate"
        base = f"`{b.run}`" if b.run else "the baseline"
        paired = sorted({v.paired for v in self.verdicts})
        lines.append(f"{cand} against {base} (saved {b.created} by ragrade {b.ragrade_version}), "
                     f"{'/'.join(map(str, paired))} queries paired. {self.description()}")
        lines += ["", "| metric | baseline | candidate | Δ | margin | floor | p | verdict |",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        for v in self.verdicts:
            verdict = "✅ pass" if v.passed else "❌ " + "; ".join(v.reasons)
            lines.append(
                f"| {_md(v.metric)} | {_num(v.baseline, digits)} {_ci(v.baseline_ci, digits)} | "
                f"{_num(v.candidate, digits)} {_ci(v.candidate_ci, digits)} | {_signed(v.delta, digits)} "
                f"{_ci(v.delta_ci, digits, signed=True)} | {_num(v.margin, digits) if v.margin else '0'} | "
                f"{'–' if v.floor is None else _num(v.floor, digits)} | {stats_p(v.p_value)} | {verdict} |")
        rows = [(v.metric, w) for v in self.verdicts for w in v.worst[:worst]]
        if rows:
            lines += ["", "<details><summary>Queries that got most worse</summary>", "",
                      "| metric | query | baseline | candidate | Δ |", "|---|---|---:|---:|---:|"]
            for metric, w in rows:
                lines.append(f"| {_md(metric)} | {_md(str(w['query']))} | {_num(w['baseline'], digits)} | "
                             f"{_num(w['candidate'], digits)} | {_signed(w['delta'], digits)} |")
            lines += ["", "</details>"]
        if self.notes:
            lines += [""] + [f"- {_md(n)}" for n in self.notes]
        if self.slices is not None:
            from ragrade.engine.slices import drop_markdown

            named = [line for m, drops in self.slices.items() for line in drop_markdown(drops, m, digits)]
            lines += ["", "Slices accounting for most of each drop (the fewest slices explaining at least half "
                      "of the fall in the mean):", ""] + (named or ["- no metric's mean fell"])
        return "\n".join(lines) + "\n"

    def to_rich(self, digits: int = 4) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        table = Table(title=Text(f"ragrade gate: {'PASS' if self.passed else 'FAIL'}"), title_justify="left")
        for col, just in [("metric", "left"), ("baseline", "right"), ("candidate", "right"), ("Δ", "right"),
                          (f"Δ {self.settings['confidence']:.0%} CI", "right"), ("margin", "right"), ("floor", "right"), ("p", "right"),
                          ("verdict", "left")]:
            table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
        for v in self.verdicts:
            table.add_row(Text(v.metric), _num(v.baseline, digits), _num(v.candidate, digits),
                          _signed(v.delta, digits), _ci(v.delta_ci, digits, signed=True),
                          _num(v.margin, digits) if v.margin else "0",
                          "-" if v.floor is None else _num(v.floor, digits), stats_p(v.p_value),
                          Text("pass", style="green") if v.passed else Text("FAIL: " + "; ".join(v.reasons),
                                                                            style="bold red"))
        parts: list[Any] = [table, Text(self.description(), style="dim")]
        for v in self.verdicts:
            if v.worst and not v.passed:
                shown = ", ".join(f"{w['query']} ({_signed(w['delta'], digits)})" for w in v.worst[:5])
                parts.append(Text(f"{v.metric}: most worse: {shown}", style="dim"))
        parts += [Text(f"note: {n}", style="yellow") for n in self.notes]
        if self.slices is not None:
            from ragrade.engine.slices import drop_markdown

            parts += [Text(f"most of the drop: {line}", style="dim") for m, drops in self.slices.items()
                      for line in drop_markdown(drops, m, digits, markdown=False)]
        return Group(*parts)


@public(baseline=None, test=GATE_TEST, metrics=SOME_METRICS)
def gate(baseline: Any, qrels: Any, run: Any, *, metrics: Any = None, margins: Any = None,
         floors: Any = None, test: str = "randomization", alpha: float = 0.05, n_resamples: int = 10_000,
         seed: int = 0, confidence: float = 0.95, correction: str | None = None, strict: bool = False,
         allow_qrels_change: bool = False, profile: Any = None, policies: dict[str, Any] | None = None,
         worst: int = 10, matcher: Any = None, max_memory: Any = None, **policy_keywords: Any) -> GateResult:
    """Compare ``run`` with ``baseline`` (a :class:`Baseline` or the path of a baseline file) on ``qrels``.

    ``run`` is evaluated with the baseline's metrics, profile and policies. ``metrics`` restricts the
    check to some of the baseline's metrics (any spelling). ``margins``: a number for every metric, or
    ``{metric: margin}`` (key ``"*"``: every metric not named); ``floors``: ``{metric: lowest acceptable candidate mean}``. ``test`` is one of
    :data:`GATE_TESTS` (randomization by default, ``n_resamples`` and ``seed`` for the resampling tests).
    ``correction`` adjusts the p-values over the metrics (``holm``, ``bonferroni``, ``bh``).

    The keywords of :func:`ragrade.evaluate` are taken too: ``profile`` and the policies (as keywords, or
    as a ``policies`` mapping), when given, must equal the baseline's; ``matcher`` scores the candidate's
    items as texts (it must equal the baseline's when the baseline records one); ``max_memory`` evaluates
    the candidate out of core (the qrels and the run as paths). Raises :class:`IncomparableError` when the
    comparison would be meaningless (also when the run shares no query with the qrels);
    ``allow_qrels_change=True`` accepts other qrels and says so.
    """
    from ragrade.engine.inputs import as_qrels
    from ragrade.engine.plan import TRUTH_OPTIONS

    b = _as_baseline(baseline)
    settings = _gate_settings(test, alpha, n_resamples, seed, confidence, correction, worst)
    truth = {k: v for k, v in policy_keywords.items() if k in TRUTH_OPTIONS and v is not None}
    given = {**(_policy_mapping(policies)),
             **{k: v for k, v in policy_keywords.items() if v is not None and k not in TRUTH_OPTIONS}}
    _check_conventions(b, profile, given, matcher)
    defined = _baseline_metrics(b)
    chosen, margin_of, floor_of = _thresholds(defined, metrics, margins, floors)
    labels = [(label, defined[label]) for label in chosen]
    notes: list[str] = []
    route, truth_settings = truth_of(qrels, labels, truth)
    _check_truth_settings(b, truth_settings)
    q = qrels if max_memory is not None or route is not None else as_qrels(qrels)
    notes += _check_qrels(b, truth_stats(q, labels, truth) if route is not None else qrels_stats(q),
                          allow_qrels_change)
    result, name, more = _evaluate_candidate(b, q, run, labels, matcher, max_memory, truth)
    notes += more
    verdicts, differences = _verdicts(b, result, chosen, defined, margin_of, floor_of, settings, strict, worst,
                                      notes)
    report = {"test": settings["test"], "alpha": settings["alpha"], "n_resamples": settings["n_resamples"],
              "seed": seed, "confidence": settings["confidence"], "correction": settings["correction"],
              "strict": bool(strict), "margins": margin_of, "floors": floor_of, "profile": b.profile,
              "policies": b.policies}
    return GateResult(verdicts, b, name, report, notes, differences)


def _as_baseline(baseline: Any) -> Baseline:
    import os

    from ragrade.errors import InputError

    if isinstance(baseline, Baseline):
        return baseline
    if not isinstance(baseline, str | os.PathLike):
        raise InputError("baseline must be a Baseline or the path of a baseline file", value=type(baseline).__name__)
    return load_baseline(baseline)


def _gate_settings(test: Any, alpha: Any, n_resamples: Any, seed: Any, confidence: Any, correction: Any,
                   worst: Any) -> dict[str, Any]:
    """The statistical settings, each checked (a wrong type or value is an InputError)."""
    from ragrade.errors import InputError

    if not isinstance(test, str):
        raise InputError("test must be a test name", value=test)
    test_name = stats.normalize_test(test)
    if test_name not in GATE_TESTS:
        raise InputError(f"the gate takes a paired test: {', '.join(GATE_TESTS)}", value=test)
    corr = stats.normalize_correction(correction)
    for what, value in (("alpha", alpha), ("confidence", confidence)):
        if isinstance(value, bool) or not (isinstance(value, int | float) and 0 < value < 1):
            raise InputError(f"{what} must be between 0 and 1", value=value)
    for what, value, low in (("n_resamples", n_resamples, 1), ("worst", worst, 0)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or not low <= value < 2**31:
            raise InputError(f"{what} must be an integer from {low} to 2**31 - 1", value=value)
    stats.check_seed(seed)
    return {"test": test_name, "alpha": float(alpha), "n_resamples": int(n_resamples),
            "confidence": float(confidence), "correction": corr, "seed": seed}


def _policy_mapping(policies: Any) -> dict[str, Any]:
    from ragrade.errors import InputError

    if policies is None:
        return {}
    if not isinstance(policies, Mapping):
        raise InputError("policies must be a mapping of policy name -> value", value=type(policies).__name__)
    return {str(k): v for k, v in policies.items() if v is not None}


def _check_conventions(b: Baseline, profile: Any, given: dict[str, Any], matcher: Any) -> None:
    """The candidate is scored as the baseline was: a profile, policy or matcher given must be the
    baseline's."""
    from ragrade.engine.plan import option_names
    from ragrade.errors import UnknownNameError

    if profile is not None:
        pname = profile if isinstance(profile, str) else getattr(profile, "name", profile)
        if (None if pname in ("default", "") else pname) != b.profile:
            raise IncomparableError(f"the baseline was scored with profile {b.profile or 'default'!r}, not "
                                    f"{profile!r}: the numbers would not be comparable")
    known = [n for n in option_names() if n not in ("profile", "matcher", "max_memory", "names", "rel_level")]
    for name, value in given.items():
        if name in ("names", "rel_level"):
            from ragrade.errors import InputError

            raise InputError(f"{name} does not apply to the gate: it scores the baseline's metrics as the baseline "
                             f"file defines them", value=value)
        if name not in known:
            raise UnknownNameError("option", name, [*known, "profile", "matcher", "max_memory"])
        if b.policies.get(name) != value:
            raise IncomparableError(f"the baseline was scored with {name}={b.policies.get(name)!r}, not {value!r}")
    recorded = b.matcher
    mname = matcher if matcher is None or isinstance(matcher, str) else getattr(matcher, "name", None)
    if recorded is not None and mname != recorded:
        raise IncomparableError(f"the baseline was scored with matcher {recorded!r}, not {mname!r}")


def _baseline_metrics(b: Baseline) -> dict[str, Any]:
    """``{label: Metric}`` of the baseline, each read back exactly as it was written."""
    from ragrade.metrics.parser import parse_metric

    defined: dict[str, Any] = {}
    for label, definition in b.metrics.items():
        try:
            m = parse_metric(definition)
        except RagradeError as exc:
            raise IncomparableError(f"this ragrade cannot read the baseline's metric {definition!r}: {exc}") from None
        if str(m) != definition:
            raise IncomparableError(f"this ragrade reads the baseline's metric {definition!r} as {str(m)!r}")
        defined[label] = m
    return defined


def _resolver(defined: dict[str, Any]) -> Any:
    from ragrade.metrics.parser import parse_metric

    by_metric = {m: label for label, m in defined.items()}

    def resolve(key: Any, what: str) -> str:
        if isinstance(key, str) and key in defined:
            return key
        try:
            m = parse_metric(str(key))
        except RagradeError as exc:
            raise IncomparableError(f"{what} {key!r}: {exc}") from None
        if m not in by_metric:
            raise IncomparableError(f"{what} {key!r} is not in the baseline (it holds: {', '.join(defined)})")
        return by_metric[m]

    return resolve


def _thresholds(defined: dict[str, Any], metrics: Any, margins: Any, floors: Any
                ) -> tuple[list[str], dict[str, float], dict[str, float]]:
    """The metrics checked, their margins and their floors."""
    from ragrade.errors import InputError

    resolve = _resolver(defined)
    if metrics is not None and not isinstance(metrics, str | list | tuple):
        raise InputError("metrics must be a metric name or a list of them", value=metrics)
    if (margins is not None and not isinstance(margins, int | float | Mapping)) or isinstance(margins, bool):
        raise InputError("margins must be a number or a mapping of metric -> margin", value=margins)
    if floors is not None and not isinstance(floors, Mapping):
        raise InputError("floors must be a mapping of metric -> lowest acceptable mean", value=floors)
    for what, values in (("margin", margins if isinstance(margins, Mapping) else {}), ("floor", floors or {})):
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
                raise InputError(f"a {what} must be a number", item=str(key), value=value)
    chosen = list(defined) if metrics is None else list(dict.fromkeys(resolve(x, "metric") for x in
                                                                   ([metrics] if isinstance(metrics, str) else metrics)))
    margin_of = {label: 0.0 for label in chosen}
    if isinstance(margins, int | float) and not isinstance(margins, bool):
        margin_of = {label: float(margins) for label in chosen}
    elif isinstance(margins, Mapping) and margins:
        given = dict(margins)
        if "*" in given:  # a margin for every metric, some set apart
            every = float(given.pop("*"))
            margin_of = {label: every for label in chosen}
        for key, value in given.items():
            label = resolve(key, "margin for metric")
            if label not in margin_of:
                raise IncomparableError(f"a margin is given for {key!r}, which is not among the metrics checked")
            margin_of[label] = float(value)
    if any(not math.isfinite(v) or v < 0 for v in margin_of.values()):
        raise InputError("margins must be finite numbers >= 0", value=margins)
    floor_of: dict[str, float] = {}
    for key, value in dict(floors or {}).items():
        label = resolve(key, "floor for metric")
        if label not in margin_of:
            raise IncomparableError(f"a floor is given for {key!r}, which is not among the metrics checked")
        if not math.isfinite(float(value)):
            raise InputError("a floor must be a finite number", item=str(key), value=value)
        family = getattr(defined[label], "family", None)
        if family is not None and family.bounded and not 0 <= float(value) <= 1:
            raise InputError(f"{label} lies in [0, 1]: a floor outside it can never be met", item=str(key),
                             value=value)
        floor_of[label] = float(value)
    return chosen, margin_of, floor_of


def _check_truth_settings(b: Baseline, settings: dict[str, Any]) -> None:
    """The candidate's ground truth is read as the baseline's was (a span threshold, a passage aggregation...:
    the route's conventions), or the numbers would not be comparable."""
    for name in sorted({*b.truth, *settings}):
        if b.truth.get(name) != settings.get(name):
            raise IncomparableError(f"the baseline was scored with {name}={b.truth.get(name)!r}, not "
                                    f"{settings.get(name)!r}: the numbers would not be comparable")


def _check_qrels(b: Baseline, now: dict[str, Any], allow_qrels_change: bool) -> list[str]:
    """Notes about the ground truth (``now``: its stats) and the version (an IncomparableError when the
    ground truth changed, unless allowed)."""
    from ragrade import __version__

    notes: list[str] = []
    if now["fingerprint"] != b.qrels.get("fingerprint"):
        change = (f"the qrels differ from the baseline's ({b.qrels.get('queries')} queries, "
                  f"{b.qrels.get('judgments')} judgments, {str(b.qrels.get('fingerprint', '?'))[:19]}...; now "
                  f"{now['queries']} queries, {now['judgments']} judgments, {now['fingerprint'][:19]}...)")
        if not allow_qrels_change:
            raise IncomparableError(change + ": the comparison would mix two ground truths (pass "
                                    "--allow-qrels-change to compare all the same)")
        notes.append(change + "; compared as allowed, on the queries both count")
    if b.ragrade_version != __version__:
        notes.append(f"the baseline was saved by ragrade {b.ragrade_version}, this is {__version__} (metric "
                     f"definitions and conventions checked equal)")
    return notes


def _evaluate_candidate(b: Baseline, q: Any, run: Any, labels: list[tuple[str, Any]], matcher: Any,
                        max_memory: Any, truth: dict[str, Any]) -> tuple[Any, str | None, list[str]]:
    """The candidate scored with the baseline's metrics, profile and policies, through the one plan."""
    from ragrade.engine.inputs import as_run, is_path
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import dispatch_one
    from ragrade.policies import Policies

    known = Policies.choices()
    numeric = set(Policies.settings())  # numeric settings (max_docs, num_docs, upper_grade): any value
    unknown = [k for k in b.policies if k not in known and k not in numeric]
    if unknown:
        raise IncomparableError(f"the baseline was scored with a policy this ragrade does not have: {unknown[0]!r}")
    bad = [k for k, v in b.policies.items() if k in known and v not in known[k]]
    if bad:
        raise IncomparableError(f"the baseline's policy {bad[0]}={b.policies[bad[0]]!r} is not one this ragrade "
                                f"knows ({', '.join(known[bad[0]])})")
    r = run if (max_memory is not None or truth) and is_path(run) else as_run(run)
    name = getattr(r, "name", None)
    plan = build_plan(q, r, labels, profile=b.profile, matcher=matcher, max_memory=max_memory,
                      **{k: v for k, v in b.policies.items() if v is not None}, **truth)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RagradeWarning)
        result = dispatch_one(plan)
    s = result.summary
    if s.qrels_queries and len(s.missing_from_run) >= s.qrels_queries:
        raise IncomparableError(f"the candidate run shares no query with the qrels ({s.qrels_queries} queries in "
                                f"the qrels, {s.run_queries} in the run): is it the run of another collection?")
    notes = [f"candidate: {part}" for w in caught if issubclass(w.category, RagradeWarning)
             for part in getattr(w.message, "notes", [str(w.message)])]  # a PolicyNote keeps its sentences whole
    return result, name, notes


def _verdicts(b: Baseline, result: Any, chosen: list[str], defined: dict[str, Any], margin_of: dict[str, float],
              floor_of: dict[str, float], settings: dict[str, Any], strict: bool, worst: int,
              notes: list[str]) -> tuple[list[MetricVerdict], dict[str, pd.Series]]:
    """One verdict per metric (the one-sided paired test, the intervals, the floor), and per metric the
    paired per-query differences (candidate - baseline)."""
    test_name, n_resamples, confidence = settings["test"], settings["n_resamples"], settings["confidence"]
    rng = stats.as_generator(settings["seed"])
    verdicts: list[MetricVerdict] = []
    differences: dict[str, pd.Series] = {}
    raw_p: list[float] = []
    for label in chosen:
        base = b.per_query[label]
        cand = result.per_query[result.label_of(defined[label])]
        both = base.index.intersection(cand.index, sort=False)
        pair = pd.DataFrame({"b": base.reindex(both), "c": cand.reindex(both)}).dropna()
        only_base = int(base.notna().sum()) - len(pair)
        if len(pair) == 0:
            raise IncomparableError(f"{label}: no query is counted by both the baseline and the candidate")
        if only_base > 0 or int(cand.notna().sum()) > len(pair):
            notes.append(f"{label}: {len(pair)} queries paired ({only_base} counted only in the baseline, "
                         f"{int(cand.notna().sum()) - len(pair)} only in the candidate)")
        bv, cv = pair["b"].to_numpy(np.float64), pair["c"].to_numpy(np.float64)
        d = cv - bv
        differences[label] = pd.Series(d, index=pair.index)
        margin = margin_of[label]
        shifted = d + margin
        p2 = float(stats.paired_test(shifted, test_name, n_resamples, rng))
        if math.isnan(p2):
            p2 = 1.0
            notes.append(f"{label}: the {test_name} test is undefined on {len(d)} queries (p taken as 1)")
        observed = float(shifted.mean())
        toward_h1 = observed > 0 if strict else observed < 0  # H1: delta > -m (strict) or delta < -m
        p = p2 / 2 if toward_h1 else 1 - p2 / 2
        raw_p.append(min(max(p, 0.0), 1.0))
        worst_rows = sorted(zip(pair.index.tolist(), bv.tolist(), cv.tolist(), d.tolist(), strict=True),
                            key=lambda t: (t[3], str(t[0])))
        b_all, c_all = base.dropna().to_numpy(np.float64), cand.dropna().to_numpy(np.float64)
        verdicts.append(MetricVerdict(
            metric=label, definition=str(defined[label]), baseline=float(b_all.mean()),
            baseline_ci=_interval(b_all, confidence, n_resamples, rng), candidate=float(c_all.mean()),
            candidate_ci=_interval(c_all, confidence, n_resamples, rng), delta=float(d.mean()),
            delta_ci=_interval(d, confidence, n_resamples, rng), margin=margin, floor=floor_of.get(label),
            p_value=math.nan, paired=len(d), passed=True,
            worst=[{"query": qid, "baseline": x, "candidate": y, "delta": z}
                   for qid, x, y, z in worst_rows[:worst] if z < 0]))
    corr = settings["correction"]
    adjusted = stats.adjust_pvalues(np.asarray(raw_p), None if corr == "none" else corr)
    alpha = settings["alpha"]
    final: list[MetricVerdict] = []
    for v, p in zip(verdicts, adjusted.tolist(), strict=True):
        shown = "" if v.margin == 0 else f" {v.margin:g}"
        reasons: list[str] = []
        if strict and not p < alpha:
            reasons.append(f"not shown within{shown or ' 0'} of the baseline (p = {stats_p(p)})")
        elif not strict and p < alpha:
            reasons.append(f"worse than the baseline by more than{shown or ' 0'} (p = {stats_p(p)})")
        if v.floor is not None and not v.candidate >= v.floor:
            reasons.append(f"below the floor {v.floor:g}")
        final.append(dataclasses.replace(v, p_value=float(p), passed=not reasons, reasons=reasons))
    return final, differences


def _interval(x: np.ndarray, confidence: float, n_resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    if len(x) >= stats.SADDLEPOINT_MIN_QUERIES:
        lo, hi = stats.saddlepoint_ci(x, confidence)
    else:
        lo, hi = stats.bootstrap_ci(x, n_resamples, confidence, rng)
    return float(lo), float(hi)


def stats_p(p: float) -> str:
    from ragrade.formatting import pvalue

    return pvalue(p)


def _num(v: Any, digits: int) -> str:
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.{digits}f}"


def _signed(v: float, digits: int) -> str:
    return "nan" if math.isnan(v) else f"{v:+.{digits}f}".replace("-", "−")


def _ci(ci: tuple[float, float], digits: int, signed: bool = False) -> str:
    f = _signed if signed else _num
    return f"[{f(ci[0], digits)}, {f(ci[1], digits)}]"


def _md(text: str) -> str:
    from ragrade.formatting import markdown_escape

    return markdown_escape(text)


def _jsonable(o: Any) -> Any:
    if isinstance(o, float):
        return None if math.isnan(o) else o
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_jsonable(v) for v in o]
    if isinstance(o, np.generic):
        return _jsonable(o.item())
    return o
