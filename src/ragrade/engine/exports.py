"""The output formats of a :class:`~ragrade.engine.result.Result`, written from its public values only:
:func:`to_dict` / :func:`to_json` (the JSON of every command), :func:`to_csv`, :func:`to_markdown`,
:func:`summary_lines` and :func:`notes` (one sentence per policy that applied: the text of the
evaluation's warning and the ``note:`` lines of the command line). ``Result.to_json()`` and the other
methods of the same names call these."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade.engine.summary import plural

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.engine.result import Result


def to_dict(result: Result, per_query: bool = False) -> dict[str, Any]:
    """``{"run", "metrics", "counts", "queries", "summary"}`` (+ ``"per_query"``, and with
    ``per_query`` the ``"details"`` an evaluation kept); NaN stays NaN here (``to_json`` writes it as
    null). A judged evaluation also has ``"profile"`` (the judge profile), ``"judge"``, ``"model"`` and
    ``"means"`` (the same values as ``"metrics"``) first, and its summary has the judge's entries
    (:meth:`JudgeInfo.to_dict`): the keys ``ragrade judge --format json`` has always written."""
    out: dict[str, Any] = {}
    judge = result.judge
    if judge is not None:
        out.update({"profile": judge.profile, "judge": judge.name, "model": judge.model,
                    "means": dict(result.means)})
    out |= {
        "run": result.run_name,
        "metrics": dict(result.means),
        "counts": dict(result.counts),
        "queries": result.n_queries,
        "summary": result.summary.to_dict(),
    }
    if result.profile is not None and result.profile.name != "default":
        out["profile"] = result.profile.name
    if result.hole_rate is not None:
        out["hole_rate"] = result.hole_rate.to_dict(per_query=per_query)
    upper = result.upper_means
    if upper is not None:
        out["upper"] = dict(upper)
        if per_query:
            cols_u = result.upper_columns
            out["per_query_upper"] = {str(q): {c: float(v) for c, v in zip(cols_u, row, strict=True)}
                                      for q, row in result.per_query_rows(upper=True)}
    if per_query:
        cols = result.columns
        out["per_query"] = {str(q): {c: float(v) for c, v in zip(cols, row, strict=True)}
                            for q, row in result.per_query_rows()}
        if result.details:
            out["details"] = {str(q): d for q, d in result.details.items()}
    return out


def to_json(result: Result, per_query: bool = False, indent: int | None = 2) -> str:
    """The :meth:`to_dict` object as JSON, NaN written as null."""
    return json.dumps(nan_to_none(to_dict(result, per_query=per_query)), indent=indent)


def to_csv(result: Result, per_query: bool = False, digits: int = 4) -> str:
    """Means as ``metric,mean,queries`` rows; with ``per_query``, one row per query (``query,<metrics>``)
    followed by a row ``all`` with the means (as trec_eval). The rows are made here, the CSV text by io's
    writer (:func:`ragrade.io.writers.csv_text`)."""
    from ragrade.io.writers import csv_text

    return csv_text(csv_rows(result, per_query, digits))


def csv_rows(result: Result, per_query: bool = False, digits: int = 4) -> Iterator[list[Any]]:
    """The rows of :func:`to_csv`, header first."""
    means = result.means
    if per_query:
        cols = result.columns
        yield ["query", *cols]
        for q, row in result.per_query_rows():
            yield [q, *(format_number(float(v), digits) for v in row)]
        yield ["all", *(format_number(means[c], digits) for c in cols)]
    else:
        counts = result.counts
        upper = result.upper_means
        yield ["metric", "mean", "queries", *(["upper"] if upper is not None else [])]
        for label, mean in means.items():
            yield [label, format_number(mean, digits), counts[label],
                   *([format_number(upper[label], digits)] if upper is not None else [])]


def to_markdown(result: Result, per_query: bool = False, digits: int = 4) -> str:
    counts = result.counts
    upper = result.upper_means
    if upper is None:
        lines = ["| metric | mean | queries |", "|---|---:|---:|"]
    else:
        lines = ["| metric | mean (lower) | upper | queries |", "|---|---:|---:|---:|"]
    for label, mean in result.means.items():
        hi = "" if upper is None else f" {format_number(upper[label], digits)} |"
        lines.append(f"| {label} | {format_number(mean, digits)} |{hi} {counts[label]} |")
    if per_query:
        cols = result.columns
        lines += ["", "| query | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
        for q, row in result.per_query_rows():
            lines.append(f"| {q} | " + " | ".join(format_number(v, digits) for v in row) + " |")
    return "\n".join(lines) + "\n"


def summary_lines(result: Result) -> list[str]:
    """A short account of what the policies did: the first line counts queries, each further line
    is one note, in the words of :meth:`notes` (the same wording in every output format and in the
    :class:`~ragrade.errors.RagradeWarning` the evaluation emits), then the hole-rate line."""
    s = result.summary
    lines = [f"{plural(s.qrels_queries, 'query', 'queries')} in the ground truth, {s.run_queries} in the run, "
             f"{s.evaluated} evaluated", *notes(result)]
    if result.hole_rate is not None:
        lines.append(result.hole_rate.line())
    return lines


def notes(result: Result) -> list[str]:
    """One sentence per policy that applied (missing queries, empty lists, duplicates, ties at a
    cutoff, infinite scores, ...): the text of the evaluation's warning, and the ``note:`` lines of
    the command line in every format."""
    s = result.summary
    pol = result.policies
    out: list[str] = []
    if s.missing_from_run:
        what = result.missing_outcome() if pol.missing_run == "zero" else "dropped"
        out.append(f"{plural(len(s.missing_from_run), 'ground-truth query', 'ground-truth queries')} "
                   f"missing from the run, {what}{examples(s.missing_from_run)}")
    if s.only_in_run:
        out.append(f"{plural(len(s.only_in_run), 'run query', 'run queries')} without ground truth, "
                   f"ignored{examples(s.only_in_run)}")
    if s.no_relevant:
        worst = max(s.no_relevant.values(), key=len)
        action = {"skip": "left out of the means", "zero": "scored 0", "nan": "NaN (means are NaN)"}.get(
            pol.no_relevant, str(pol.no_relevant))
        if worst:
            out.append(f"{plural(len(worst), 'query', 'queries')} without relevant judgments, "
                       f"{action}{examples(worst)}")
    if s.empty_lists:
        out.append(f"{plural(len(s.empty_lists), 'query', 'queries')} with an empty retrieved list, "
                   f"scored 0{examples(s.empty_lists)}")
    if s.duplicate_items:
        what = "credited once" if pol.duplicates == "credit_once" else pol.duplicates
        scope = " (judged items; duplicates of unjudged items change no value)" if s.duplicates_judged_only else ""
        out.append(f"{plural(s.duplicate_items, 'duplicate item', 'duplicate items')} in rankings{scope} "
                   f"({what})")
    if s.identical_ids_dropped:
        out.append(f"{plural(s.identical_ids_dropped, 'item', 'items')} with the query's own id dropped")
    for k, n in sorted(s.ties_at_cutoff.items()):
        out.append(f"{plural(n, 'query has', 'queries have')} tied scores across cutoff {k} "
                   f"(values depend on the tie rule: {pol.ties})")
    if s.nonfinite_scores:
        out.append(f"{plural(s.nonfinite_scores, 'score is', 'scores are')} +inf or -inf (an overflowing "
                   f"number reads as inf), ranked as given: +inf first, -inf last")
    if pol.unjudged != "nonrelevant":
        out.append({"condensed": "unjudged documents removed before scoring (condensed lists)",
                    "bounds": "values are lower bounds (unjudged = non-relevant); upper bounds count every "
                              "unjudged document as relevant"}[pol.unjudged])
    if s.judge is not None:
        out += s.judge.notes()
    return out


def examples(items: list[str], n: int = 3) -> str:
    """`` (e.g. 'q1', 'q2', 'q3', ...)``: the first ``n`` items, for a note."""
    shown = ", ".join(repr(x) for x in items[:n])
    return f" (e.g. {shown}{', ...' if len(items) > n else ''})"


def format_number(v: Any, digits: int) -> str:
    """``v`` with ``digits`` decimals; ``nan`` for a missing value."""
    if v is None or (isinstance(v, float | np.floating) and math.isnan(v)):
        return "nan"
    return f"{float(v):.{digits}f}"


def nan_to_none(o: Any) -> Any:
    """``o`` with every NaN float (in nested dicts and lists) replaced by None, for JSON."""
    if isinstance(o, float) and math.isnan(o):
        return None
    if isinstance(o, dict):
        return {k: nan_to_none(v) for k, v in o.items()}
    if isinstance(o, list):
        return [nan_to_none(v) for v in o]
    return o


__all__ = ["examples", "format_number", "nan_to_none", "notes", "summary_lines", "to_csv", "to_dict", "to_json",
           "to_markdown"]
