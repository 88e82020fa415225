"""Nuggets and their assignments as data (docs/nuggets.md, "Files").

A **nugget** is one atomic fact a good answer to a query should state: ``(query, nugget id, text,
importance, provenance)``, plus the query's text when known. ``importance`` is ``vital`` or ``okay``
(``failed`` when the labelling call failed; such a nugget counts as not vital, like okay). Nuggets files are
JSON Lines, one nugget per line, meant to be read and edited by hand::

    {"query": "q1", "query_text": "who wrote Dune", "nugget_id": "n1", "text": "Frank Herbert wrote Dune",
     "importance": "vital", "provenance": {"method": "ragrade.nuggets.create", "docs": ["d3", "d7"]}}

nuggetizer's output (one line per query: ``{"qid", "query", "nuggets": [{"text", "importance"}]}``) is read
too (ids ``n1``, ``n2``, ... in its order). Parquet, CSV and TSV files with the same columns work as well
(``provenance`` then holds JSON text).

An **assignment** says whether one text supports one nugget: ``(query, nugget id, label)`` and what the
text was — a retrieved passage (``doc``), the concatenated top k of a ranking (``context``: the list of
its document ids in rank order), or a generated answer (neither; ``run`` may name the system). Labels:
``support``, ``partial_support``, ``not_support``, and ``failed`` (the call failed: unknown, never 0).

Every file is read through the format registry (:mod:`ragrade.io.formats`) and written to a temporary name
renamed on success.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import InputError, ParseError

#: Importance labels: vital, okay, and failed (the labelling call failed; counted as not vital).
IMPORTANCE: tuple[str, ...] = ("vital", "okay", "failed")
#: Assignment labels, strongest first, and failed (unknown).
LABELS: tuple[str, ...] = ("support", "partial_support", "not_support", "failed")
#: The support a label gives (failed: NaN, unknown).
SUPPORT: dict[str, float] = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0, "failed": math.nan}


@dataclass(frozen=True)
class Nugget:
    """One nugget. ``provenance``: where it came from (free-form mapping; None when unknown)."""

    query: str
    nugget_id: str
    text: str
    importance: str = "okay"
    provenance: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    query_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query}
        if self.query_text is not None:
            out["query_text"] = self.query_text
        out.update({"nugget_id": self.nugget_id, "text": self.text, "importance": self.importance})
        if self.provenance is not None:
            out["provenance"] = dict(self.provenance)
        return out


class Nuggets:
    """An immutable set of nuggets, grouped by query in the order given.

    >>> n = Nuggets([Nugget("q1", "n1", "Paris is the capital", "vital"), Nugget("q1", "n2", "on the Seine")])
    >>> n.queries, [x.nugget_id for x in n.of("q1")], len(n)
    (['q1'], ['n1', 'n2'], 2)
    """

    __slots__ = ("_by_query", "_items")

    def __init__(self, items: Iterable[Nugget]) -> None:
        by_query: dict[str, list[Nugget]] = {}
        seen: set[tuple[str, str]] = set()
        for n in items:
            if not isinstance(n, Nugget):
                raise InputError("nuggets must be Nugget objects", value=type(n).__name__)
            _check_nugget(n)
            if (n.query, n.nugget_id) in seen:
                raise InputError("a nugget id appears twice", query=n.query, item=n.nugget_id)
            seen.add((n.query, n.nugget_id))
            by_query.setdefault(n.query, []).append(n)
        self._by_query = {q: tuple(v) for q, v in by_query.items()}
        self._items = tuple(n for v in self._by_query.values() for n in v)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Nugget]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Nuggets) and self._items == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Nuggets({len(self._items)} nuggets, {len(self._by_query)} queries)"

    @property
    def queries(self) -> list[str]:
        """The queries that have nuggets, in order."""
        return list(self._by_query)

    def of(self, query: str) -> tuple[Nugget, ...]:
        """The nuggets of one query (empty when it has none)."""
        return self._by_query.get(query, ())

    def query_text(self, query: str) -> str | None:
        """The query's text, from its first nugget that has one."""
        return next((n.query_text for n in self.of(query) if n.query_text), None)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per nugget (the lines of a nuggets file)."""
        return [n.to_dict() for n in self._items]

    def to_pandas(self) -> Any:
        """A DataFrame with columns query, query_text, nugget_id, text, importance, provenance."""
        import pandas as pd

        cols = ["query", "query_text", "nugget_id", "text", "importance", "provenance"]
        return pd.DataFrame([[n.query, n.query_text, n.nugget_id, n.text, n.importance,
                              None if n.provenance is None else dict(n.provenance)] for n in self._items], columns=cols)


@dataclass(frozen=True)
class Assignment:
    """One label: does this text support this nugget? The text is a passage (``doc``), the concatenated
    top k of a ranking (``context``: its document ids in rank order) or an answer (neither; ``run`` may
    name the system). ``reason``: why a ``failed`` label failed."""

    query: str
    nugget_id: str
    label: str
    doc: str | None = None
    context: tuple[str, ...] | None = None
    run: str | None = None
    reason: str | None = field(default=None, compare=False)

    @property
    def support(self) -> float:
        return SUPPORT[self.label]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "nugget_id": self.nugget_id}
        if self.doc is not None:
            out["doc"] = self.doc
        if self.context is not None:
            out["context"] = list(self.context)
        if self.run is not None:
            out["run"] = self.run
        out["label"] = self.label
        if self.reason is not None:
            out["reason"] = self.reason
        return out


class Assignments:
    """An immutable set of assignments with their three lookups: passages, joined contexts and answers.
    A later row for the same (text, nugget) replaces an earlier one (:meth:`merged` relies on it)."""

    __slots__ = ("_answers", "_items", "_joined", "_passages")

    def __init__(self, items: Iterable[Assignment] = ()) -> None:
        passages: dict[tuple[str, str], dict[str, str]] = {}
        joined: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}
        answers: dict[tuple[str | None, str], dict[str, str]] = {}
        kept: dict[tuple[Any, ...], Assignment] = {}
        for a in items:
            if not isinstance(a, Assignment):
                raise InputError("assignments must be Assignment objects", value=type(a).__name__)
            _check_assignment(a)
            kept[(a.query, a.nugget_id, a.doc, a.context, a.run)] = a
            if a.doc is not None:
                passages.setdefault((a.query, a.doc), {})[a.nugget_id] = a.label
            elif a.context is not None:
                joined.setdefault((a.query, a.context), {})[a.nugget_id] = a.label
            else:
                answers.setdefault((a.run, a.query), {})[a.nugget_id] = a.label
        self._items = tuple(kept.values())
        self._passages, self._joined, self._answers = passages, joined, answers

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Assignment]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Assignments) and set(self._items) == set(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Assignments({len(self._items)} labels: {len(self._passages)} passages, {len(self._joined)} joined "
                f"contexts, {len(self._answers)} answers)")

    def passage(self, query: str, doc: str) -> Mapping[str, str]:
        """``{nugget id: label}`` of one passage (empty when it has none)."""
        return self._passages.get((query, doc), {})

    def joined(self, query: str, context: tuple[str, ...]) -> Mapping[str, str]:
        """``{nugget id: label}`` of a concatenated top k (its ids in rank order)."""
        return self._joined.get((query, tuple(context)), {})

    def answer(self, query: str, run: str | None = None) -> Mapping[str, str]:
        """``{nugget id: label}`` of a generated answer."""
        return self._answers.get((run, query), {})

    def passages(self) -> list[tuple[str, str]]:
        """The (query, doc) pairs that have assignments."""
        return list(self._passages)

    def answer_keys(self) -> list[tuple[str | None, str]]:
        """The (run, query) pairs of answers that have assignments."""
        return list(self._answers)

    def merged(self, other: Assignments) -> Assignments:
        """These assignments, with ``other``'s added (``other`` wins where both label the same pair)."""
        return Assignments([*self._items, *other])

    def failed(self) -> list[Assignment]:
        """The assignments whose call failed."""
        return [a for a in self._items if a.label == "failed"]

    def to_records(self) -> list[dict[str, Any]]:
        return [a.to_dict() for a in self._items]

    def to_pandas(self) -> Any:
        """A DataFrame with columns query, nugget_id, doc, context, run, label, reason."""
        import pandas as pd

        cols = ["query", "nugget_id", "doc", "context", "run", "label", "reason"]
        return pd.DataFrame([[a.query, a.nugget_id, a.doc, None if a.context is None else list(a.context), a.run,
                              a.label, a.reason] for a in self._items], columns=cols)


# -- validation -----------------------------------------------------------------------------------------

def _nonempty(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _check_nugget(n: Nugget) -> None:
    if not _nonempty(n.query) or not _nonempty(n.nugget_id):
        raise InputError("a nugget needs a query id and a nugget id", query=n.query, item=n.nugget_id)
    if not _nonempty(n.text):
        raise InputError("a nugget's text is empty", query=n.query, item=n.nugget_id)
    if n.importance not in IMPORTANCE:
        raise InputError(f"importance must be one of {', '.join(IMPORTANCE)}", query=n.query, item=n.nugget_id,
                         value=n.importance)


def _check_assignment(a: Assignment) -> None:
    if not _nonempty(a.query) or not _nonempty(a.nugget_id):
        raise InputError("an assignment needs a query id and a nugget id", query=a.query, item=a.nugget_id)
    if a.label not in LABELS:
        raise InputError(f"label must be one of {', '.join(LABELS)}", query=a.query, item=a.nugget_id, value=a.label)
    if a.doc is not None and a.context is not None:
        raise InputError("an assignment labels a passage (doc) or a joined context, not both", query=a.query,
                         item=a.nugget_id)
    if a.context is not None and (not a.context or not all(_nonempty(d) for d in a.context)):
        raise InputError("a joined context is a non-empty list of document ids", query=a.query, value=a.context)


# -- conversion from what users give ------------------------------------------------------------------------

def as_nuggets(value: Any, *, format: str | None = None) -> Nuggets:
    """Nuggets from a :class:`Nuggets`, a path (any format of the registry), a DataFrame, a list of dicts
    (the lines of a file) or ``{query: [text, ...]}`` (ids n1, n2, ..., importance okay)."""
    if isinstance(value, Nuggets):
        return value
    if isinstance(value, str | os.PathLike):
        return read(value, format=format)
    if hasattr(value, "to_dict") and hasattr(value, "columns"):
        return nuggets_from_rows(((r, None) for r in value.to_dict("records")), "<DataFrame>")
    if isinstance(value, Mapping):
        return Nuggets(Nugget(str(q), f"n{i}", str(t)) for q, texts in value.items()
                       for i, t in enumerate(_texts(texts, str(q)), 1))
    if isinstance(value, Iterable):
        rows = list(value)
        if all(isinstance(r, Nugget) for r in rows):
            return Nuggets(rows)
        return nuggets_from_rows(((r, None) for r in rows), "<rows>")
    raise InputError("nuggets must be a Nuggets, a path, a DataFrame, a list of dicts or {query: [texts]}",
                     value=type(value).__name__)


def _texts(texts: Any, query: str) -> list[str]:
    if not isinstance(texts, list | tuple) or not all(isinstance(t, str) for t in texts):
        raise InputError("nuggets given as a mapping need a list of nugget texts per query ({query: [text, ...]})",
                         query=query, value=type(texts).__name__)
    return [str(t) for t in texts]


def as_assignments(value: Any, *, format: str | None = None) -> Assignments:
    """Assignments from an :class:`Assignments`, a path, a DataFrame or a list of dicts."""
    if isinstance(value, Assignments):
        return value
    if isinstance(value, str | os.PathLike):
        return read_assignments(value, format=format)
    if hasattr(value, "to_dict") and hasattr(value, "columns"):
        return assignments_from_rows(((r, None) for r in value.to_dict("records")), "<DataFrame>")
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        rows = list(value)
        if all(isinstance(r, Assignment) for r in rows):
            return Assignments(rows)
        return assignments_from_rows(((r, None) for r in rows), "<rows>")
    raise InputError("assignments must be an Assignments, a path, a DataFrame or a list of dicts",
                     value=type(value).__name__)


def _cell(row: Mapping[str, Any], name: str) -> Any:
    v = row.get(name)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return v


def _id(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"an id must be text, got {value!r}")
    return str(value)


def _provenance(value: Any) -> Mapping[str, Any] | None:
    if value is None or isinstance(value, Mapping):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        parsed = json.loads(value)
        if isinstance(parsed, dict):
            return parsed
    if isinstance(value, str) and not value.strip():
        return None
    return {"note": value}


def _row_error(exc: Exception, where: str, line: int | None, row: Mapping[str, Any]) -> ParseError:
    return ParseError(str(exc), path=where, line=line, text=json.dumps(row, ensure_ascii=False, default=str)[:300])


def nuggets_from_rows(rows: Iterable[tuple[Mapping[str, Any], int | None]], where: str) -> Nuggets:
    """Nuggets from ``(row, line)`` pairs: one nugget per row, or nuggetizer's one query per row."""
    out: list[Nugget] = []
    counters: dict[str, int] = {}
    for row, line in rows:
        try:
            out.extend(_nuggets_of_row(row, counters))
        except (ValueError, TypeError, KeyError) as exc:
            raise _row_error(exc, where, line, row) from None
    try:
        return Nuggets(out)
    except InputError as exc:
        raise ParseError(str(exc), path=where) from None


def _nuggets_of_row(row: Mapping[str, Any], counters: dict[str, int]) -> list[Nugget]:
    if not isinstance(row, Mapping):
        raise ValueError("each line must be a JSON object")
    if isinstance(row.get("nuggets"), list):  # nuggetizer: one query per line
        q = _id(_cell(row, "qid") if _cell(row, "qid") is not None else _cell(row, "query"))
        if q is None:
            raise ValueError("a query line needs 'qid'")
        qt = _cell(row, "query") if _cell(row, "qid") is not None else _cell(row, "query_text")
        return [Nugget(q, f"n{i}", str(n["text"]), str(n.get("importance") or "okay"),
                       {"source": "nuggetizer"}, None if qt is None else str(qt))
                for i, n in enumerate(row["nuggets"], 1)]
    q = _id(_cell(row, "query"))
    if q is None:
        raise ValueError("a nugget needs a 'query' (the query id)")
    text = _cell(row, "text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a nugget needs a non-empty 'text'")
    counters[q] = counters.get(q, 0) + 1
    nid = _id(_cell(row, "nugget_id")) or f"n{counters[q]}"
    importance = _cell(row, "importance")
    if importance is None:
        raise ValueError("a nugget needs an 'importance' (vital or okay)")
    importance = str(importance).strip().lower()
    if importance not in IMPORTANCE:
        raise ValueError(f"importance must be vital or okay (or failed), got {importance!r}")
    qt = _cell(row, "query_text")
    return [Nugget(q, nid, text.strip(), importance, _provenance(_cell(row, "provenance")),
                   None if qt is None else str(qt))]


def _normal_label(value: Any) -> str:
    label = str(value).strip().lower().replace(" ", "_").replace("-", "_")
    if label not in LABELS:
        raise ValueError(f"label must be one of {', '.join(LABELS)}, got {value!r}")
    return label


def _context(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, list | tuple) or not value:
        raise ValueError("'context' must be a non-empty list of document ids")
    return tuple(str(_id(v)) for v in value)


def assignments_from_rows(rows: Iterable[tuple[Mapping[str, Any], int | None]], where: str) -> Assignments:
    """Assignments from ``(row, line)`` pairs (columns query, nugget_id, label, and doc, context or run)."""
    out: list[Assignment] = []
    for row, line in rows:
        try:
            if not isinstance(row, Mapping):
                raise ValueError("each line must be a JSON object")
            q, nid = _id(_cell(row, "query")), _id(_cell(row, "nugget_id"))
            if q is None or nid is None:
                raise ValueError("an assignment needs 'query' and 'nugget_id'")
            if _cell(row, "label") is None:
                raise ValueError("an assignment needs a 'label'")
            reason = _cell(row, "reason")
            out.append(Assignment(q, nid, _normal_label(row["label"]), _id(_cell(row, "doc")),
                                  _context(_cell(row, "context")), _id(_cell(row, "run")),
                                  None if reason is None else str(reason)))
            _check_assignment(out[-1])
        except (ValueError, TypeError, InputError) as exc:
            raise _row_error(exc, where, line, row) from None
    return Assignments(out)


# -- files ----------------------------------------------------------------------------------------------------

def _rows(path: str | os.PathLike[str], format: str | None) -> Iterator[tuple[dict[str, Any], int | None]]:
    from ragrade.io import formats

    p = os.fspath(path)
    if not os.path.isfile(p):
        raise InputError(f"{p}: no such file")
    return formats.records_format(p, format).rows(p)


def read(path: str | os.PathLike[str], *, format: str | None = None) -> Nuggets:
    """A nuggets file (JSON Lines by default; any format of the registry with the same columns)."""
    return nuggets_from_rows(_rows(path, format), os.fspath(path))


def read_assignments(path: str | os.PathLike[str], *, format: str | None = None) -> Assignments:
    """An assignments file (JSON Lines by default)."""
    return assignments_from_rows(_rows(path, format), os.fspath(path))


def _write_records(records: list[dict[str, Any]], path: str | os.PathLike[str], nested: tuple[str, ...]) -> None:
    """JSON Lines (one object per line, absent fields left out: human-editable) or Parquet (the ``nested``
    columns as JSON text), as the format registry reads the file name; to a temporary name renamed on
    success."""
    from ragrade.io import formats

    p = os.fspath(path)
    fmt = formats.out_format(p, None)
    parquet = fmt is formats.get("parquet")
    if not parquet and fmt is not formats.get("jsonl"):
        raise InputError(f"{p}: nuggets and assignments are written as JSON Lines or Parquet, not {fmt.name}")
    tmp = f"{p}.tmp-{os.getpid()}"
    try:
        if parquet:
            import pyarrow as pa

            names = list(dict.fromkeys(k for r in records for k in r))  # every column, even if the first row lacks it
            flat = [{k: (json.dumps(r[k], ensure_ascii=False) if k in nested and r.get(k) is not None else r.get(k))
                     for k in names} for r in records]
            fmt.write_records(pa.Table.from_pylist(flat), tmp)
        else:
            data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
            if formats.suffixes(p)[1]:
                import gzip

                data = gzip.compress(data)
            with open(tmp, "wb") as fh:
                fh.write(data)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write(nuggets: Nuggets, path: str | os.PathLike[str]) -> None:
    """Write a nuggets file (``.jsonl``: one nugget per line, human-editable; or ``.parquet``)."""
    _write_records(as_nuggets(nuggets).to_records(), path, ("provenance",))


def write_assignments(assignments: Assignments, path: str | os.PathLike[str]) -> None:
    """Write an assignments file (``.jsonl`` or ``.parquet``)."""
    _write_records(as_assignments(assignments).to_records(), path, ("context",))


__all__ = ["IMPORTANCE", "LABELS", "SUPPORT", "Assignment", "Assignments", "Nugget", "Nuggets", "as_assignments",
           "as_nuggets", "assignments_from_rows", "nuggets_from_rows", "read", "read_assignments", "write",
           "write_assignments"]
