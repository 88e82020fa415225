"""Slices: results per group of queries (a query category, a length bucket, a source...).

Labels map a query id to a label, in one or several *slicing columns*: a dict ``{qid: label}``, a pandas
Series, a DataFrame (index: query id; one column per slicing), or a file ``FILE[:COLUMN]`` (TSV, CSV,
JSONL or Parquet; see :func:`read_slices`).

- :func:`slice_result` (``Result.by(labels)``): per slice, each metric's mean, the number of queries and
  the mean hole rate. Returns a new :class:`Slices`; the result is not changed.
- :func:`ragrade.comparison.slice_compare.compare_slices` (and ``by_slices``, a copy of the comparison
  holding them): per slice, the comparison's paired test on the
  slice's queries, its p-values corrected across the slices of a column (Holm by default).
- :func:`drop_slices`: the slices that account for most of a fall in a mean (the gate uses it).

A query of the result that has no label in a column belongs to the slice ``(no label)`` of that column;
labels of queries the result does not hold are ignored.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError

NO_LABEL = "(no label)"
"""The slice of the queries without a label in a column."""

ID_COLUMNS: tuple[str, ...] = ("query", "query_id", "qid", "topic", "topic_id", "id")
"""Names of the query id column of a labels file (a file without one is refused: its first column could be
anything)."""

SLICE_CORRECTION = "holm"
"""Default correction of the per-slice p-values, across the slices of one column."""


# ----------------------------------------------------------------------------------------------- labels
def read_slices(spec: str | os.PathLike[str]) -> pd.DataFrame:
    """Read ``FILE[:COLUMN]``: a table (``.tsv``, ``.csv``, ``.jsonl``/``.ndjson``, ``.parquet``; a first
    line naming the columns for TSV/CSV) with a query id column (``query``, ``query_id``, ``qid``,
    ``topic``, ``topic_id`` or ``id``; a file without one is refused) and label columns. With ``:COLUMN`` only that
    column is kept; without it, every other column is a slicing column. Returns a DataFrame indexed by
    query id (str), one column per slicing, labels as str (missing: NaN)."""
    text = os.fspath(spec)
    path, column = text, None
    if not os.path.exists(text) and ":" in text:
        path, column = text.rsplit(":", 1)
    if not os.path.exists(path):
        raise InputError("slices file not found", value=path)
    from ragrade.io import formats

    fmt = formats.detect(path)  # the readers name the file and the line of what they cannot read
    if not fmt.holds_records:
        raise InputError(f"{path}: slices must be a table of records (.tsv, .csv, .jsonl, .parquet...)", value=path)
    frame = fmt.records(path, strings=True).to_pandas()
    if frame.shape[1] < 2:
        raise InputError(f"{path}: a slices file needs a query id column and at least one label column",
                         value=list(frame.columns))
    names = [str(c) for c in frame.columns]
    id_col = next((c for c in names if c.lower() in ID_COLUMNS), None)
    if id_col is None:
        raise InputError(f"{path}: no query id column: name it one of {', '.join(ID_COLUMNS)} (the columns are "
                         f"{', '.join(names)})", value=names[0])
    frame = frame.set_axis(names, axis=1)
    if column is not None and column not in names:
        raise InputError(f"{path}: no column {column!r} (it has {', '.join(names)})", value=column)
    keep = [column] if column is not None else [c for c in names if c != id_col]
    if column == id_col:
        raise InputError(f"{path}: {column!r} is the query id column", value=column)
    out = frame[[id_col, *keep]]
    return _normalise(out.set_index(id_col), path)


def _normalise(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    index = pd.Index([str(q) for q in frame.index], dtype=object, name="query")
    if index.has_duplicates:
        raise InputError(f"{where}: query {index[index.duplicated()][0]!r} is labelled twice",
                         query=str(index[index.duplicated()][0]))
    data = {}
    for c in frame.columns:
        col = frame[c]
        data[str(c)] = [None if v is None or (isinstance(v, float) and math.isnan(v)) or v == "" else str(v)
                        for v in col.tolist()]
    return pd.DataFrame(data, index=index, dtype=object)


def slice_labels(labels: Any) -> pd.DataFrame:
    """Labels as a DataFrame (index: query id as str; one column per slicing; labels as str or None) from a
    file spec, a mapping ``{qid: label}``, a Series, a DataFrame, or a list of any of those (columns
    joined)."""
    if isinstance(labels, str | os.PathLike):
        return read_slices(labels)
    if isinstance(labels, pd.DataFrame):
        return _normalise(labels, "labels")
    if isinstance(labels, pd.Series):
        name = str(labels.name) if labels.name is not None else "slice"
        return _normalise(labels.to_frame(name), "labels")
    if isinstance(labels, Mapping):
        return _normalise(pd.DataFrame({"slice": pd.Series(dict(labels), dtype=object)}), "labels")
    if isinstance(labels, Sequence) and labels and not isinstance(labels, str | bytes):
        frames = [slice_labels(x) for x in labels]
        out = frames[0]
        for f in frames[1:]:
            clash = [c for c in f.columns if c in out.columns]
            if clash:
                raise InputError("two slicing columns have the same name", value=clash[0])
            out = out.join(f, how="outer")
        return out
    raise InputError("labels must be a file, a mapping {query: label}, a Series or a DataFrame",
                     value=type(labels).__name__)


def label_groups(ids: Sequence[str], column: pd.Series) -> dict[str, np.ndarray]:
    """``{label: boolean mask over ids}`` in order of the labels' first appearance in the labels, the
    ``(no label)`` slice last."""
    mapping = {str(k): v for k, v in column.items() if v is not None}
    labels = np.array([mapping.get(str(q)) for q in ids], dtype=object)
    order = [lab for lab in dict.fromkeys(column.tolist()) if lab is not None]
    out = {str(lab): labels == lab for lab in order}
    out = {k: m for k, m in out.items() if m.any()}
    none = np.array([lab is None for lab in labels], dtype=bool)
    if none.any():
        out[NO_LABEL] = none
    return out


# ----------------------------------------------------------------------------------------- one result
@dataclass(frozen=True)
class Slices:
    """Per-slice means of one result (see :func:`slice_result`).

    ``table``: one row per (column, label) with each metric's mean, ``queries`` (queries of the result in
    the slice) and ``hole_rate`` (their mean hole rate, NaN without one)."""

    columns: list[str]
    metrics: list[str]
    table: pd.DataFrame
    hole_k: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{column: {label: {"metrics": {metric: mean}, "queries": n, "hole_rate": h}}}`` (NaN: None)."""
        out: dict[str, Any] = {}
        for (column, label), row in self.table.iterrows():
            entry: dict[str, Any] = {"metrics": {m: plain(row[m]) for m in self.metrics},
                                     "queries": int(row["queries"])}
            if self.hole_k is not None:
                entry["hole_rate"] = plain(row["hole_rate"])
            out.setdefault(str(column), {})[str(label)] = entry
        return out

    def to_markdown(self, digits: int = 4) -> str:
        from ragrade.formatting import markdown_escape, number

        lines: list[str] = []
        holes = self.hole_k is not None
        for column in self.columns:
            part = self.table.loc[column]
            head = ["slice", *self.metrics, "queries", *([f"holes@{self.hole_k}"] if holes else [])]
            lines += [f"**Slices by {markdown_escape(column)}**", "",
                      "| " + " | ".join(markdown_escape(h) for h in head) + " |",
                      "|---|" + "|".join("---:" for _ in head[1:]) + "|"]
            for label, row in part.iterrows():
                cells = [number(row[m], digits) for m in self.metrics] + [str(int(row["queries"]))]
                if holes:
                    cells.append(_percent(row["hole_rate"]))
                lines.append(f"| {markdown_escape(str(label))} | " + " | ".join(cells) + " |")
            lines.append("")
        return "\n".join(lines)

    def to_rich(self, digits: int = 4) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        from ragrade.formatting import number

        tables = []
        for column in self.columns:
            t = Table(title=f"slices by {column}", title_justify="left")
            t.add_column("slice")
            for m in self.metrics:
                t.add_column(Text(m), justify="right")
            t.add_column("queries", justify="right")
            if self.hole_k is not None:
                t.add_column(f"holes@{self.hole_k}", justify="right")
            for label, row in self.table.loc[column].iterrows():
                cells = [number(row[m], digits) for m in self.metrics] + [str(int(row["queries"]))]
                if self.hole_k is not None:
                    cells.append(_percent(row["hole_rate"]))
                t.add_row(Text(str(label)), *cells)
            tables.append(t)
        return Group(*tables)

    def __rich__(self) -> Any:
        return self.to_rich()

    def __str__(self) -> str:
        return self.to_markdown()


def plain(v: Any) -> Any:
    if v is None:
        return None
    x = float(v)
    return None if math.isnan(x) or math.isinf(x) else x


def _percent(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * float(v):.1f}%"


def _mean(values: np.ndarray, how: str) -> float:
    v = values[~np.isnan(values)]
    return float(v.mean()) if len(v) else math.nan


def slice_result(result: Any, labels: Any, aggregate: Any = None) -> Slices:
    """Per-slice means, query counts and mean hole rates of ``result`` (a :class:`ragrade.Result`; it is
    not changed). ``aggregate(values, how)`` aggregates a metric's values the way its family says
    (``Result.by`` passes the engine's: mean, sum or geometric mean); default: the mean of the non-NaN
    values."""
    aggregate = _mean if aggregate is None else aggregate
    frame = slice_labels(labels)
    per_query = result.per_query
    ids = [str(q) for q in per_query.index]
    metrics = [str(c) for c in per_query.columns]
    holes = getattr(result, "hole_rate", None)
    hole_values = None
    if holes is not None:
        hp = holes.per_query
        hole_values = pd.Series(hp.to_numpy(dtype=np.float64), index=[str(q) for q in hp.index]).reindex(ids)
        hole_values = hole_values.to_numpy(dtype=np.float64)
    rows = []
    index = []
    for column in frame.columns:
        for label, mask in label_groups(ids, frame[column]).items():
            row: dict[str, Any] = {}
            for m in metrics:
                spec = result.metrics.get(m) if hasattr(result, "metrics") else None
                how = spec.family.aggregate if spec is not None else "mean"
                row[m] = aggregate(per_query[m].to_numpy(dtype=np.float64)[mask], how)
            row["queries"] = int(mask.sum())
            if hole_values is not None:
                h = hole_values[mask]
                h = h[~np.isnan(h)]
                row["hole_rate"] = float(h.mean()) if len(h) else math.nan
            rows.append(row)
            index.append((str(column), label))
    table = pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["column", "slice"]))
    return Slices(columns=[str(c) for c in frame.columns], metrics=metrics, table=table,
                  hole_k=None if holes is None else int(holes.k))


# ------------------------------------------------------------------------------------------------ gate
def drop_slices(differences: pd.Series, labels: Any, share: float = 0.5) -> dict[str, Any]:
    """Which slices account for a fall in the mean.

    ``differences``: per-query ``candidate - baseline`` (index: query id). A slice's contribution is the
    sum of its queries' differences divided by the number of queries, so the contributions of a column's
    slices add up to the mean difference. When the mean fell, the slices are taken from the most negative
    contribution down until their sum reaches ``share`` (50 %) of the fall: the smallest set of slices that
    explains at least that much (no set of fewer slices can, since each step takes the largest remaining
    contribution). Returns ``{column: {"delta": mean, "slices": [{"slice", "queries", "delta",
    "contribution", "share"}], "explaining": [labels]}}``; ``explaining`` is empty when the mean did not
    fall."""
    frame = slice_labels(labels)
    d = pd.Series(differences.to_numpy(dtype=np.float64), index=[str(q) for q in differences.index]).dropna()
    ids = list(d.index)
    values = d.to_numpy(dtype=np.float64)
    n = len(values)
    total = float(values.mean()) if n else math.nan
    out: dict[str, Any] = {}
    for column in frame.columns:
        rows: list[dict[str, Any]] = []
        for label, mask in label_groups(ids, frame[column]).items():
            part = values[mask]
            contribution = float(part.sum()) / n
            rows.append({"slice": label, "queries": int(mask.sum()), "delta": float(part.mean()),
                         "contribution": contribution,
                         "share": contribution / total if total and not math.isnan(total) else math.nan})
        explaining: list[str] = []
        if n and total < 0:
            acc = 0.0
            for row in sorted(rows, key=lambda r: r["contribution"]):
                if row["contribution"] >= 0:
                    break
                explaining.append(row["slice"])
                acc += row["contribution"]
                if acc <= share * total:
                    break
            if acc > share * total:  # the negative slices together do not reach the share
                explaining = []
        out[str(column)] = {"delta": total, "slices": rows, "explaining": explaining}
    return out


def drop_markdown(drops: Mapping[str, Mapping[str, Any]], metric: str, digits: int = 4,
                  markdown: bool = True) -> list[str]:
    """Lines naming the slices that explain a metric's drop (empty when none): markdown list items, or
    plain text with ``markdown=False``."""
    from ragrade.formatting import markdown_escape as _escape
    from ragrade.formatting import signed

    def markdown_escape(text: str) -> str:
        return _escape(text) if markdown else text

    lines = []
    for column, info in drops.items():
        if not info["explaining"]:
            continue
        rows = {r["slice"]: r for r in info["slices"]}
        strong = "**" if markdown else ""
        named = ", ".join(f"{strong}{markdown_escape(s)}{strong} ({rows[s]['queries']} queries, mean Δ "
                          f"{signed(rows[s]['delta'], digits)}, {100 * rows[s]['share']:.0f}% of the fall)"
                          for s in info["explaining"])
        lines.append(f"{'- ' if markdown else ''}{markdown_escape(metric)}, by {markdown_escape(column)}: {named}")
    return lines


__all__ = ["NO_LABEL", "SLICE_CORRECTION", "Slices", "drop_markdown", "drop_slices", "label_groups", "plain",
           "read_slices", "slice_labels", "slice_result"]
