"""Langfuse's observations (``GET /api/public/observations``: ``{"data": [...], "meta": ...}``, the UI's
JSON, JSONL or CSV exports), and traces holding their observations (``GET /api/public/traces/{id}``),
mapped onto the record reader.

An observation is a retrieval call when its ``type`` is ``RETRIEVER``, or when it is a ``SPAN`` whose name
says it retrieves (``...Retriever``, ``retrieve...``) and whose ``output`` holds documents. Its ``input`` is
the query (a string, or ``{"query": ...}``), its ``output`` the documents (a list, or ``{"documents":
[...]}``; each a LangChain Document, a LlamaIndex node or ``{id, score}``), ``usage`` / ``usageDetails`` /
``totalTokens`` the tokens, ``calculatedTotalCost`` / ``costDetails`` the cost, ``sessionId`` (on the trace,
or on the observation where the export has it) the session. The join key is looked up in the observation
(or its trace) as a dotted path: ``metadata.example_id``, ``datasetItemId``...
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ragrade.traces import conventions as cv
from ragrade.traces.records import Facts, doc_of, docs_of, loads, path_value, text_of
from ragrade.traces.rows import nanos

_RETRIEVING = re.compile(r"retriev", re.IGNORECASE)


def is_langfuse(names: set[str] | list[str]) -> bool:
    """Whether records with these fields are Langfuse observations or traces."""
    names = set(names)
    return ("traceId" in names and ("type" in names or "startTime" in names)) or \
        ("observations" in names and "id" in names)


def _number(*values: Any) -> float | None:
    for v in values:
        if v is not None and not isinstance(v, bool):
            try:
                return float(v)
            except (TypeError, ValueError):
                continue
    return None


def _tokens(obs: Mapping[str, Any]) -> float | None:
    usage = _mapping(obs.get("usageDetails")) or _mapping(obs.get("usage")) or {}
    total = _number(usage.get("total"), usage.get("totalTokens"), obs.get("totalTokens"))
    if total is None:
        parts = [_number(usage.get(k)) for k in ("input", "output", "promptTokens", "completionTokens")]
        total = sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None
    return total


def _mapping(value: Any) -> Mapping[str, Any] | None:
    try:
        value = loads(value)
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None


def facts_of(obs: Mapping[str, Any], user_key: str | None, notes: Any, where: str,
             trace: Mapping[str, Any] | None = None) -> Facts:
    """The :class:`Facts` of one observation (``trace``: the trace it belongs to, when known)."""
    facts = Facts(convention=cv.LANGFUSE)
    kind = str(obs.get("type") or "").upper()
    items = docs_of(obs.get("output"))
    named = bool(_RETRIEVING.search(str(obs.get("name") or "")))
    if kind == "RETRIEVER" or (kind == "SPAN" and named and items is not None):
        facts.role = cv.RETRIEVAL
        docs = [doc_of(o) for o in items or ()]
        missing = sum(d is None for d, _ in docs)
        if missing:
            notes.add("no_id", where, missing)
        facts.docs = {cv.RETRIEVED: [(d, s) for d, s in docs if d is not None]}
        facts.query = text_of(obs.get("input"))
    cost = _mapping(obs.get("costDetails")) or {}
    facts.tokens = _tokens(obs)
    facts.cost = _number(obs.get("calculatedTotalCost"), cost.get("total"), obs.get("totalCost"))
    session = obs.get("sessionId") or (trace or {}).get("sessionId")
    facts.session = None if session is None else str(session)
    if user_key is not None:
        found = path_value(obs, user_key.split("."))
        if found is None and trace is not None:
            found = path_value(trace, user_key.split("."))
        facts.key = None if found is None else str(found)
    return facts


def observation_rows(rows: Iterator[tuple[Mapping[str, Any], int | None]], records: Any, notes: Any,
                     size: int = 65536) -> Iterator[tuple[Any, Any]]:
    """Blocks of the normalised tables from Langfuse records (observations, or traces with observations)."""
    for row, line in rows:
        observations = row.get("observations")
        if isinstance(observations, list) and "traceId" not in row:
            _trace(row, observations, records, notes)
        else:
            _observation(row, line, records, notes, None)
        if len(records) >= size:
            yield records.block()
    if len(records):
        yield records.block()


def _observation(obs: Mapping[str, Any], line: int | None, records: Any, notes: Any,
                 trace: Mapping[str, Any] | None) -> None:
    oid = obs.get("id")
    where = f"observation {oid}" if oid is not None else f"line {line}"
    trace_id = obs.get("traceId") or (trace or {}).get("id")
    if trace_id is None:
        notes.add("no_trace", where)
        return
    facts = facts_of(obs, records.user_key, notes, where, trace)
    parent = obs.get("parentObservationId") or (None if trace is None else str(trace.get("id")))
    records.add(line=line, trace=str(trace_id), span=None if oid is None else str(oid), parent=parent,
                name=None if obs.get("name") is None else str(obs["name"]), start=nanos(obs.get("startTime")),
                end=nanos(obs.get("endTime")), facts=facts)


def _trace(trace: Mapping[str, Any], observations: list[Any], records: Any, notes: Any) -> None:
    """A trace with its observations: the trace itself is the root (its input the question), then each
    observation (ids only, as the trace list endpoint gives them, are skipped with a note)."""
    tid = str(trace.get("id"))
    facts = Facts(convention=cv.LANGFUSE, query=text_of(trace.get("input")))
    session = trace.get("sessionId")
    facts.session = None if session is None else str(session)
    if records.user_key is not None:
        found = path_value(trace, records.user_key.split("."))
        facts.key = None if found is None else str(found)
    records.add(line=None, trace=tid, span=tid, parent=None, name=trace.get("name"),
                start=nanos(trace.get("timestamp")), end=None, facts=facts)
    for obs in observations:
        if isinstance(obs, Mapping):
            _observation(obs, None, records, notes, trace)
        else:
            notes.add("bad_record", f"trace {tid}")
