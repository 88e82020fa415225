"""The conventions report: one dataset, the chosen metrics under every applicable profile, side by side.

>>> rep = conventions([[["t1", "t2"], ["t3"]]], [["t1", "p1", "t2", "p3"]], ["ap", "ndcg"],
...                   profiles=["default", "autorag"])
>>> rep.table.loc["ap"].round(4).to_dict()
{'default': 0.5, 'autorag': 0.4167}
>>> print(rep.reasons[("ap", "autorag")])
AutoRAG divides each group's AP by the group's hits, not its size, and averages groups
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError, MetricError, RagradeWarning
from ragrade.metrics.parser import parse_metrics
from ragrade.options import public
from ragrade.profiles import PROFILES, Profile, get_profile

_TOL = 1e-12


@dataclass
class ConventionsReport:
    """Means per (metric, profile), per-query values, the queries that move most, and reasons."""

    table: pd.DataFrame  # index: metric label, columns: profile names (NaN: not applicable)
    per_query: dict[str, pd.DataFrame]  # profile -> per-query frame (metric columns)
    movers: dict[str, pd.DataFrame]  # metric -> queries with the largest spread across profiles
    reasons: dict[tuple[str, str], str] = field(default_factory=dict)  # (metric, profile) -> reason
    skipped: dict[str, str] = field(default_factory=dict)  # profile -> why it was not applicable
    #: The default convention under each reading of an unjudged document (columns ``nonrelevant``,
    #: ``condensed``, ``upper``: the ``bounds`` policy's upper bound); empty for text input.
    unjudged: pd.DataFrame = field(default_factory=pd.DataFrame)
    hole_rate: Any = None  # the run's HoleRate (None for text input)

    def to_markdown(self, digits: int = 4) -> str:
        cols = list(self.table.columns)
        lines = ["# Metric conventions", "",
                 "Each column is the same data scored under one profile's conventions.", "",
                 "| metric | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
        for label, row in self.table.iterrows():
            cells = ["—" if (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}" for v in row.tolist()]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        if self.reasons:
            lines += ["", "## Why the numbers differ", ""]
            for (metric, prof), why in self.reasons.items():
                lines.append(f"- **{metric}**, `{prof}`: {why}.")
        if self.movers:
            lines += ["", "## Queries that move most", ""]
            for metric, frame in self.movers.items():
                if frame.empty:
                    continue
                pcols = [c for c in frame.columns if c != "spread"]
                lines += [f"### {metric}", "", "| query | spread | " + " | ".join(pcols) + " |",
                          "|---|---:|" + "---:|" * len(pcols)]
                for q, row in frame.iterrows():
                    vals = ["—" if pd.isna(row[c]) else f"{row[c]:.{digits}f}" for c in pcols]
                    lines.append(f"| {q} | {row['spread']:.{digits}f} | " + " | ".join(vals) + " |")
                lines.append("")
        if not self.unjudged.empty:
            lines += ["", "## Unjudged documents", ""]
            if self.hole_rate is not None:
                lines += [self.hole_rate.line() + ".", ""]
            lines += ["How far the reading of an unjudged retrieved document moves each metric (default "
                      "convention): as non-relevant (trec_eval), removed before scoring (condensed lists, "
                      "trec_eval -J), or as relevant (the upper bound of unjudged='bounds').", "",
                      "| metric | nonrelevant | condensed | upper | upper − nonrelevant |", "|---|---:|---:|---:|---:|"]
            for label, row in self.unjudged.iterrows():
                vals = [row["nonrelevant"], row["condensed"], row["upper"], row["upper"] - row["nonrelevant"]]
                cells = ["—" if pd.isna(v) else f"{v:.{digits}f}" for v in vals]
                lines.append(f"| {label} | " + " | ".join(cells) + " |")
        if self.skipped:
            lines += ["", "## Profiles not applicable", ""]
            lines += [f"- `{p}`: {why}" for p, why in self.skipped.items()]
        return "\n".join(lines).rstrip() + "\n"


def _labels(metrics: str | Iterable[str]) -> list[str]:
    items = [metrics] if isinstance(metrics, str) else list(metrics)
    if not items:
        raise InputError("no metric given")
    return [str(m) for m in items]


def _base(label: str) -> str:
    return parse_metrics(label)[0].name


@public
def conventions(qrels: Any, run: Any, metrics: str | Iterable[str],
                profiles: Sequence[str | Profile] | None = None, matcher: Any = None,
                top: int = 5) -> ConventionsReport:
    """Score ``run`` against ``qrels`` under every applicable profile.

    ``profiles`` defaults to every profile; a metric a profile does not define is left blank (``—``),
    and engine profiles are skipped for text input (``matcher`` given; ``"profile"`` lets each peer
    match texts its own way). ``top``: how many moving queries to list per metric.
    """
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import dispatch_one

    labels = _labels(metrics)
    bases = {lab: _base(lab) for lab in labels}
    chosen = [get_profile(p) for p in (profiles or list(PROFILES))]
    results: dict[str, pd.DataFrame] = {}
    means_of: dict[str, dict[str, float]] = {}
    skipped: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        for prof in chosen:
            wanted = [lab for lab in labels if prof.defines(bases[lab])]
            if not wanted:
                skipped[prof.name] = "defines none of the requested metrics"
                continue
            try:
                if prof.name == "default":
                    m = None if (isinstance(matcher, str) and matcher == "profile") else matcher
                    plan = build_plan(qrels, run, wanted, matcher=m)
                elif prof.kind == "engine":
                    if matcher is not None:
                        skipped[prof.name] = "scores ids only (text input given)"
                        continue
                    plan = build_plan(qrels, run, wanted, profile=prof)
                else:
                    plan = build_plan(qrels, run, wanted, profile=prof, matcher=matcher)
                res = dispatch_one(plan)
            except (InputError, MetricError) as exc:
                skipped[prof.name] = str(exc)
                continue
            results[prof.name] = res.per_query
            means_of[prof.name] = dict(res.means)
    if not results:
        raise InputError("no profile applies to these metrics and inputs")
    table = pd.DataFrame(index=pd.Index(labels, name="metric"), columns=list(results), dtype=np.float64)
    per_query: dict[str, pd.DataFrame] = {}
    for name, frame in results.items():
        for lab, v in means_of[name].items():
            table.loc[lab, name] = v
        per_query[name] = frame
    reasons: dict[tuple[str, str], str] = {}
    ref = "default" if "default" in table.columns else table.columns[0]
    for lab in labels:
        for name in table.columns:
            if name == ref:
                continue
            a, b = table.loc[lab, ref], table.loc[lab, name]
            prof = get_profile(name)
            if prof.rounding is not None and not pd.isna(a):
                a = round(float(a), prof.rounding)  # a difference that is only the peer's rounding is none
            if pd.isna(a) or pd.isna(b) or abs(a - b) <= _TOL:
                continue
            reasons[(lab, name)] = (prof.reason(bases[lab]) or prof.reason("*")
                                    or f"{prof.title} uses different conventions")
    movers: dict[str, pd.DataFrame] = {}
    for lab in labels:
        cols = {n: f[lab] for n, f in per_query.items() if lab in f.columns}
        if len(cols) < 2:
            continue
        frame = pd.DataFrame(cols)
        spread = frame.max(axis=1) - frame.min(axis=1)
        frame.insert(0, "spread", spread)
        frame = frame[spread > _TOL].sort_values("spread", ascending=False, kind="stable").head(top)
        movers[lab] = frame
    unjudged, holes = _unjudged_table(qrels, run, [lab for lab in labels if "default" in results
                                                   and lab in results["default"].columns], matcher)
    return ConventionsReport(table, per_query, movers, reasons, skipped, unjudged, holes)


def _unjudged_table(qrels: Any, run: Any, labels: list[str], matcher: Any) -> tuple[pd.DataFrame, Any]:
    """Means of the default convention with unjudged documents non-relevant, removed (condensed) and
    relevant (the upper bound); empty for text input, where nothing is judged beyond the gold items."""
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import dispatch_one

    if matcher is not None or not labels:
        return pd.DataFrame(), None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagradeWarning)
            bounds = dispatch_one(build_plan(qrels, run, labels, unjudged="bounds"))
            condensed = dispatch_one(build_plan(qrels, run, labels, unjudged="condensed"))
    except (InputError, MetricError):
        return pd.DataFrame(), None
    upper: dict[str, float] = dict(bounds.upper_means or {})
    frame = pd.DataFrame({"nonrelevant": [bounds.means[lab] for lab in labels],
                          "condensed": [condensed.means[lab] for lab in labels],
                          "upper": [upper.get(lab, math.nan) for lab in labels]},
                         index=pd.Index(labels, name="metric"), dtype=np.float64)
    return frame, bounds.hole_rate
