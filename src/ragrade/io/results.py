"""The output formats of an evaluation's result, written here with io's other writers: the plain data of
:func:`result_dict` and its JSON (:func:`result_json`: the JSON of ``Result.to_json`` and of every command's
``--format json``), CSV (:func:`result_csv`, its text by :func:`ragrade.io.writers.csv_text`) and Markdown
(:func:`result_markdown`). ``Result.to_dict``, ``to_json``, ``to_csv`` and ``to_markdown`` call these.

A result is read through its public values alone (:class:`ResultView`: means, counts, per-query rows, the
summary's and the hole rate's own ``to_dict``); this module imports nothing of the engine, which sits above
io/ (``tests/test_layers.py``). The words of the policy notes (``Result.notes``, ``summary_lines``) are the
engine's (:mod:`ragrade.engine.notes`): the same sentences are its warnings.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from ragrade.formatting import decimals


class ResultView(Protocol):
    """What the formats read of a :class:`ragrade.Result`."""

    @property
    def run_name(self) -> str | None: ...
    @property
    def means(self) -> Mapping[str, float]: ...
    @property
    def counts(self) -> Mapping[str, int]: ...
    @property
    def n_queries(self) -> int: ...
    @property
    def summary(self) -> Any: ...  # has to_dict()
    @property
    def profile(self) -> Any: ...  # has .name, or None
    @property
    def hole_rate(self) -> Any: ...  # has to_dict(per_query=...), or None
    @property
    def upper_means(self) -> Mapping[str, float] | None: ...
    @property
    def upper_columns(self) -> list[str]: ...
    @property
    def columns(self) -> list[str]: ...
    @property
    def details(self) -> Mapping[Any, Any]: ...
    @property
    def judge(self) -> Any: ...  # has .profile, .name, .model, or None
    def per_query_rows(self, upper: bool = False) -> list[tuple[Any, tuple[float, ...]]]: ...


def result_dict(result: ResultView, per_query: bool = False) -> dict[str, Any]:
    """``{"run", "metrics", "counts", "queries", "summary"}`` (+ ``"per_query"``, and with ``per_query`` the
    ``"details"`` an evaluation kept); NaN stays NaN here (:func:`result_json` writes it as null). A judged
    evaluation also has ``"profile"`` (the judge profile), ``"judge"``, ``"model"`` and ``"means"`` (the same
    values as ``"metrics"``) first, and its summary has the judge's entries: the keys ``ragrade judge --format
    json`` has always written."""
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
            out["per_query_upper"] = _rows_by_query(result.upper_columns, result.per_query_rows(upper=True))
    if per_query:
        out["per_query"] = _rows_by_query(result.columns, result.per_query_rows())
        if result.details:
            out["details"] = {str(q): d for q, d in result.details.items()}
    return out


def _rows_by_query(cols: list[str], rows: list[tuple[Any, tuple[float, ...]]]) -> dict[str, dict[str, float]]:
    return {str(q): {c: float(v) for c, v in zip(cols, row, strict=True)} for q, row in rows}


def result_json(result: ResultView, per_query: bool = False, indent: int | None = 2) -> str:
    """The :func:`result_dict` object as JSON text, NaN written as null."""
    return json_text(result_dict(result, per_query=per_query), indent)


def json_text(data: Any, indent: int | None = 2) -> str:
    """``data`` (dicts, lists, numbers, strings) as JSON text, every NaN float written as null."""
    return json.dumps(nan_to_none(data), indent=indent)


def result_csv(result: ResultView, per_query: bool = False, digits: int = 4) -> str:
    """Means as ``metric,mean,queries`` rows (and ``upper`` with bounds); with ``per_query``, one row per query
    (``query,<metrics>``) followed by a row ``all`` with the means (as trec_eval)."""
    from ragrade.io.writers import csv_text

    return csv_text(csv_rows(result, per_query, digits))


def csv_rows(result: ResultView, per_query: bool = False, digits: int = 4) -> Iterator[list[Any]]:
    """The rows of :func:`result_csv`, header first."""
    means = result.means
    if per_query:
        cols = result.columns
        yield ["query", *cols]
        for q, row in result.per_query_rows():
            yield [q, *(decimals(float(v), digits) for v in row)]
        yield ["all", *(decimals(means[c], digits) for c in cols)]
    else:
        counts = result.counts
        upper = result.upper_means
        yield ["metric", "mean", "queries", *(["upper"] if upper is not None else [])]
        for label, mean in means.items():
            yield [label, decimals(mean, digits), counts[label],
                   *([decimals(upper[label], digits)] if upper is not None else [])]


def result_markdown(result: ResultView, per_query: bool = False, digits: int = 4) -> str:
    """The means (and upper bounds) as a Markdown table; with ``per_query``, a table of every query too."""
    counts = result.counts
    upper = result.upper_means
    if upper is None:
        lines = ["| metric | mean | queries |", "|---|---:|---:|"]
    else:
        lines = ["| metric | mean (lower) | upper | queries |", "|---|---:|---:|---:|"]
    for label, mean in result.means.items():
        hi = "" if upper is None else f" {decimals(upper[label], digits)} |"
        lines.append(f"| {label} | {decimals(mean, digits)} |{hi} {counts[label]} |")
    if per_query:
        cols = result.columns
        lines += ["", "| query | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
        for q, row in result.per_query_rows():
            lines.append(f"| {q} | " + " | ".join(decimals(v, digits) for v in row) + " |")
    return "\n".join(lines) + "\n"


def nan_to_none(o: Any) -> Any:
    """``o`` with every NaN float (in nested dicts and lists) replaced by None, for JSON."""
    if isinstance(o, float) and math.isnan(o):
        return None
    if isinstance(o, dict):
        return {k: nan_to_none(v) for k, v in o.items()}
    if isinstance(o, list):
        return [nan_to_none(v) for v in o]
    return o


__all__ = ["ResultView", "csv_rows", "json_text", "nan_to_none", "result_csv", "result_dict", "result_json",
           "result_markdown"]
