"""What traces add to a report (docs/traces.md, "Reports"): for each run read from traces, the latency
percentiles of each retriever, the tokens and cost its traces carry, each reranker's lift (its output
against its input on the same spans, paired, with the comparison's significance test) and the notes of
reading the traces. Shared by the HTML report (:func:`traces_section_html`) and ``ragrade traces``
(:func:`reranker_lift`)."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragrade.formatting import number, pvalue, signed

#: The metrics a reranker's lift is measured with when none of the evaluated ones applies.
LIFT_METRICS = ("ndcg@10",)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def reranker_lift(qrels: Any, rerankers: Mapping[str, Any], metrics: Sequence[Any] = LIFT_METRICS,
                  **options: Any) -> Any:
    """One row per (reranker, metric): the mean of its input and of its output over the same spans, the
    lift (output - input) with its confidence interval, the paired test's p-value, wins and losses
    (:func:`ragrade.compare`, ``options`` its keywords: ``test``, ``alpha``, ``seed``, the policies)."""
    import pandas as pd

    from ragrade.comparison import compare

    rows = []
    for name, pair in rerankers.items():
        cmp = compare(qrels, pair.runs(), list(metrics), baseline="input", **options)
        for (metric, _, _), r in cmp.pairs.iterrows():
            rows.append({"reranker": name, "metric": metric, "input": r["mean_control"], "output": r["mean_treatment"],
                         "lift": r["delta"], "ci_low": r["delta_ci_low"], "ci_high": r["delta_ci_high"],
                         "p_value": r["p_value"], "wins": int(r["wins"]), "losses": int(r["losses"]),
                         "queries": int(r["n"])})
    columns = ["reranker", "metric", "input", "output", "lift", "ci_low", "ci_high", "p_value", "wins", "losses",
               "queries"]
    return pd.DataFrame(rows, columns=columns)


def id_metrics(metrics: Sequence[Any]) -> list[Any]:
    """The id measures among ``metrics`` (a reranker's lists are scored with those), else :data:`LIFT_METRICS`."""
    from ragrade.metrics import parse_labelled

    out = [label for m in metrics for label, parsed in parse_labelled(str(m)) if parsed.family.kind == "id"]
    return out or list(LIFT_METRICS)


def traces_section_html(qrels: Any, runs: Mapping[str, Any], metrics: Sequence[Any], digits: int = 4) -> str:
    """The ``<section id="traces">`` of the report: one part per run read from traces (empty when none is)."""
    parts = []
    for name, run in runs.items():
        traces = getattr(run, "traces", None)
        if traces is None or not hasattr(traces, "latency"):
            continue
        parts.append(f"<h3>{_e(name)}</h3>")
        parts.append(_latency_html(traces.latency(), digits))
        if traces.rerankers:
            parts.append(_lift_html(reranker_lift(qrels, traces.rerankers, id_metrics(metrics)), digits))
        if traces.notes:
            parts.append('<ul class="note">' + "".join(f"<li>{_e(n)}</li>" for n in traces.notes) + "</ul>")
    if not parts:
        return ""
    return '<section id="traces"><h2>Traces</h2>' + "\n".join(parts) + "</section>"


def _latency_html(table: Any, digits: int) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in ("calls", "timed", "p50 ms", "p95 ms", "p99 ms", "mean ms", "tokens",
                                                   "cost"))
    rows = []
    for retriever, r in table.iterrows():
        cells = [str(int(r["calls"])), str(int(r["timed"]))] + [
            number(r[c], 2) for c in ("p50_ms", "p95_ms", "p99_ms", "mean_ms")] + [
            _plain(r["tokens"]), _plain(r["cost"], digits)]
        rows.append(f'<tr><td class="l">{_e(retriever)}</td>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f'<table class="slices"><thead><tr><th class="l">retriever</th>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def _plain(v: Any, digits: int = 0) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{float(v):,.{digits}f}"


def _lift_html(lift: Any, digits: int) -> str:
    rows = []
    for r in lift.to_dict("records"):
        cls = ' class="sig-pos"' if r["p_value"] < 0.05 and r["lift"] > 0 else (
            ' class="sig-neg"' if r["p_value"] < 0.05 and r["lift"] < 0 else "")
        rows.append(f'<tr><td class="l">{_e(r["reranker"])}</td><td class="l">{_e(r["metric"])}</td>'
                    f"<td>{number(r['input'], digits)}</td><td>{number(r['output'], digits)}</td>"
                    f"<td{cls}>{signed(r['lift'], digits)}</td><td>{pvalue(r['p_value'])}</td>"
                    f"<td>{r['wins']}/{r['losses']}</td><td>{r['queries']}</td></tr>")
    return ('<table class="slices"><thead><tr><th class="l">reranker</th><th class="l">metric</th><th>input</th>'
            "<th>output</th><th>lift</th><th>p</th><th>wins/losses</th><th>spans</th></tr></thead><tbody>"
            + "".join(rows) + '</tbody></table><p class="note">Lift: the reranker\'s output against its input on '
            "the same spans, paired; p from the comparison's test.</p>")
