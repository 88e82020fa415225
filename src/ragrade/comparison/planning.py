"""Test-set size planning on runs: :func:`plan` (also ``ragrade.plan``) and its result :class:`Plan`.

The statistics are in :mod:`ragrade.comparison.power`; this module evaluates the runs, aligns their
queries and applies them per metric (see docs/statistics.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.comparison.power import (
    anova_mde,
    anova_power,
    anova_queries_needed,
    check_levels,
    ttest_mde,
    ttest_power,
    ttest_queries_needed,
)
from ragrade.errors import InputError
from ragrade.options import public


# ------------------------------------------------------------------------------------------------ result
@dataclass(frozen=True)
class Plan:
    """The result of :func:`ragrade.plan`: per metric, what the test set can detect.

    ``metrics[label]`` holds ``queries`` (queries scored in every run), ``runs``, ``test`` (``"paired t"``
    or ``"anova"``), ``delta``, ``sd_diff`` (two runs: sample sd of the per-query differences),
    ``within_variance`` (more runs: pooled within-system variance, and ``within_sd`` its root),
    ``effect_size`` (``delta / sd_diff``; for the ANOVA Cohen's ``f = delta / sqrt(2 m within_variance)``),
    ``queries_needed`` (``None`` when the runs do not vary or it exceeds 2^40), ``mde`` (in the metric's
    units; the range ``D`` for more runs) and ``power`` (at the current queries, to detect ``delta``).
    """

    runs: list[str]
    metrics: dict[str, dict[str, Any]]
    alpha: float
    target_power: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        from ragrade.formatting import jsonable

        out = {
            "metrics": {m: dict(row) for m, row in self.metrics.items()},
            "alpha": self.alpha,
            "target_power": self.target_power,
            "runs": list(self.runs),
            "description": self.description,
        }
        return dict(jsonable(out))

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    @property
    def description(self) -> str:
        if len(self.runs) == 2:
            test = "a two-sided paired t-test (exact noncentral t)"
            spread = "sd_diff: sample sd of the per-query differences"
        else:
            test = f"a one-way ANOVA over {len(self.runs)} runs on the minimum detectable range"
            spread = "within_variance: pooled within-run variance"
        return (
            f"Queries needed to detect delta with power {self.target_power:g} at alpha {self.alpha:g} by {test}; "
            f"mde: the smallest difference detectable with that power at the current number of queries; "
            f"power: the chance to detect delta now ({spread})."
        )

    def _cells(self, row: dict[str, Any], digits: int) -> list[str]:
        spread = row.get("sd_diff") if len(self.runs) == 2 else row.get("within_sd")
        needed = row["queries_needed"]
        return [
            str(row["queries"]),
            _num(row["delta"], digits),
            _num(spread, digits),
            "—" if needed is None else str(needed),
            _num(row["mde"], digits),
            _num(row["power"], 3),
        ]

    def _headers(self) -> list[str]:
        spread = "sd(diff)" if len(self.runs) == 2 else "sd(within)"
        return ["metric", "queries", "delta", spread, "queries needed", "mde", "power"]

    def to_markdown(self, digits: int = 4) -> str:
        from ragrade.formatting import markdown_escape

        heads = self._headers()
        lines = ["| " + " | ".join(heads) + " |", "|---|" + "|".join("---:" for _ in heads[1:]) + "|"]
        for metric, row in self.metrics.items():
            lines.append(f"| {markdown_escape(metric)} | " + " | ".join(self._cells(row, digits)) + " |")
        lines += ["", f"_{markdown_escape(self.description)}_"]
        lines += [f"_{markdown_escape(n)}_" for n in self.notes]
        return "\n".join(lines) + "\n"

    def to_rich(self, digits: int = 4) -> Any:
        from rich.table import Table
        from rich.text import Text

        table = Table(title="Test-set size and power (" + ", ".join(self.runs) + ")",
                      caption=" ".join([self.description, *self.notes]), caption_justify="left")
        for i, head in enumerate(self._headers()):
            table.add_column(head, justify="left" if i == 0 else "right")
        for metric, row in self.metrics.items():
            cells = self._cells(row, digits)
            style = "green" if row["power"] == row["power"] and row["power"] >= self.target_power else "red"
            table.add_row(Text(metric), *cells[:-1], Text(cells[-1], style=style))
        return table

    def __rich__(self) -> Any:
        return self.to_rich()

    def __str__(self) -> str:
        return self.to_markdown()


def _frame(value: Any, name: str) -> pd.DataFrame:
    """Per-query scores of one run (a Result, a DataFrame or a mapping ``{metric: {qid: v}}``), indexed by
    query id as str: the comparison's own reading (:func:`ragrade.comparison.core.compare_scores`)."""
    from ragrade.comparison.core import per_query_frame

    return per_query_frame(value, name)


def _values(frame: pd.DataFrame, metric: str, run: str) -> np.ndarray:
    """One metric's scores as float64 (NaN: not scored); anything else that is not a finite number is an
    InputError naming the query."""
    raw = frame[metric]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isinf(values) | (np.isnan(values) & raw.notna().to_numpy())
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"run {run!r}, metric {metric!r}: per-query scores must be finite numbers",
                         query=str(frame.index[i]), value=raw.iloc[i])
    return values


def _num(value: Any, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{float(value):.{digits}f}"


# -------------------------------------------------------------------------------------------------- plan
def plan_scores(
    scores: Mapping[str, Any],
    metrics: Sequence[str] | None = None,
    *,
    delta: float | Mapping[str, float],
    power: float = 0.8,
    alpha: float = 0.05,
) -> Plan:
    """:func:`plan` on per-query scores you already have (``{run: Result | DataFrame | mapping}``, as for
    :func:`ragrade.comparison.compare_scores`). Queries are those scored in every run."""
    alpha, power = check_levels(alpha, power)
    if not isinstance(scores, Mapping) or len(scores) < 2:
        raise InputError("plan needs a mapping of at least two named runs", value=type(scores).__name__)
    names = [str(k) for k in scores]
    frames = {str(k): _frame(v, str(k)) for k, v in scores.items()}
    if metrics is None:
        first = frames[names[0]]
        metric_list = [c for c in first.columns if all(c in f.columns for f in frames.values())]
    else:
        metric_list = [str(m) for m in metrics]
    if not metric_list:
        raise InputError("no metric given")
    deltas: dict[str, float] = {}
    for m in metric_list:
        value = delta.get(m) if isinstance(delta, Mapping) else delta
        if value is None:
            raise InputError(f"no delta given for metric {m!r}", value=dict(delta) if isinstance(delta, Mapping)
                             else delta)
        v = float(value)
        if not (v > 0 and math.isfinite(v)):
            raise InputError("delta must be a positive number", value=value)
        deltas[m] = v
    index = frames[names[0]].index
    for f in frames.values():
        if not f.index.equals(index):
            index = index.append(f.index.difference(index, sort=False))
    rows: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    m_runs = len(names)
    for metric in metric_list:
        for name, frame in frames.items():
            if metric not in frame.columns:
                raise InputError(f"run {name!r} has no scores for metric {metric!r}")
        x = np.column_stack([_values(frames[name].reindex(index), metric, name) for name in names])
        x = x[~np.isnan(x).any(axis=1)]
        n = int(x.shape[0])
        if n < 2:
            raise InputError(f"{metric}: fewer than two queries are scored in every run", value=n)
        d = deltas[metric]
        row: dict[str, Any] = {"queries": n, "runs": m_runs, "delta": d}
        if m_runs == 2:
            diff = x[:, 1] - x[:, 0]
            sd = float(diff.std(ddof=1))
            row["test"] = "paired t"
            row["sd_diff"] = sd
            row["mean_diff"] = float(diff.mean())
            if sd <= 1e-12 * max(1.0, float(np.abs(diff).max())):  # equal differences (up to rounding)
                row.update(effect_size=math.inf, queries_needed=2, mde=0.0, power=1.0)
                notes.append(f"{metric}: every query has the same difference, so any change is detected.")
            else:
                e = d / sd
                row["effect_size"] = e
                row["queries_needed"] = ttest_queries_needed(e, power, alpha)
                row["mde"] = ttest_mde(n, power, alpha) * sd
                row["power"] = ttest_power(e, n, alpha)
        else:
            variance = float(x.var(axis=0, ddof=1).mean())
            row["test"] = "anova"
            row["sd_diff"] = None
            row["within_variance"] = variance
            row["within_sd"] = math.sqrt(variance)
            row["effect_size"] = d / math.sqrt(2.0 * m_runs * variance) if variance > 0 else math.inf
            row["queries_needed"] = anova_queries_needed(d, variance, m_runs, power, alpha)
            row["mde"] = anova_mde(variance, m_runs, n, power, alpha)
            row["power"] = anova_power(d, variance, m_runs, n, alpha)
        rows[metric] = row
    return Plan(runs=names, metrics=rows, alpha=alpha, target_power=power, notes=notes)


@public
def plan(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Sequence[Any] | str,
    *,
    delta: float | Mapping[str, float],
    power: float = 0.8,
    alpha: float = 0.05,
    **policies: Any,
) -> Plan:
    """How many queries the test set needs to detect a difference ``delta`` with ``power`` at level
    ``alpha``, the minimal detectable effect and the power at the current number of queries.

    Two runs: two-sided paired t-test on the per-query differences; more runs: one-way ANOVA on the minimum
    detectable range, with the pooled within-run variance (Sakai's topic set size design). ``qrels``,
    ``runs`` (a mapping ``{name: run}`` or a list) and ``metrics`` are as for :func:`ragrade.compare`;
    ``delta`` is one number or ``{metric: number}``; other keyword arguments are those of
    :func:`ragrade.evaluate` (``profile``, ``matcher``, ``max_memory``, the policies), with the same meaning.
    """
    from ragrade.comparison.core import dispatch_named, name_runs
    from ragrade.engine.plan import build_plan

    named = name_runs(runs)
    if len(named) < 2:
        raise InputError("plan needs at least two runs", value=list(named))
    # the evaluation keywords of ragrade.evaluate (profile, matcher, max_memory, policies...), one plan
    evaluation = build_plan(qrels, named, metrics, many=True, **policies)
    per_query = {name: r.per_query for name, r in dispatch_named(evaluation).items()}
    return plan_scores(per_query, list(evaluation.columns), delta=delta, power=power, alpha=alpha)
