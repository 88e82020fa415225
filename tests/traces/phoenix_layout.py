"""Spans in Phoenix's span DataFrame layout, written here from Phoenix's documented layout (arize-phoenix
itself is not installed: it pins the openai client and many server packages the rest of the suite uses in
other versions). ``px.Client().get_spans_dataframe()`` gives one row per span, indexed by
``context.span_id`` (kept as a column): ``name``, ``span_kind``, ``parent_id``, ``start_time``, ``end_time``
(UTC timestamps), ``status_code``, ``status_message``, ``events``, ``context.span_id``, ``context.trace_id``
and one ``attributes.<name>`` column per attribute. Phoenix nests the attributes at the dots, except that a
semantic convention's key stays whole (``input.value``, ``retrieval.documents``); numbered keys under a
convention become a list of objects whose own keys are conventions (``retrieval.documents.0.document.id`` ->
``attributes.retrieval.documents`` = ``[{"document.id": ...}]``); any other attribute is nested under its
first part (``example.id`` -> ``attributes.example`` = ``{"id": ...}``); JSON-string attributes
(``metadata``, ``document.metadata``) are loaded."""

from __future__ import annotations

import contextlib
import inspect
import json
from typing import Any

import pandas as pd
from openinference.semconv import trace as semconv

CONVENTIONS = sorted({getattr(k, a) for n in dir(semconv) if n.endswith("Attributes")
                      and inspect.isclass(k := getattr(semconv, n)) for a in dir(k) if a.isupper()}, key=len,
                     reverse=True)
JSON_KEYS = ("metadata", "document.metadata", "tool.parameters", "llm.prompt_template.variables")


def _convention(key: str) -> str | None:
    return next((c for c in CONVENTIONS if key == c or key.startswith(c + ".")), None)


def _assign(tree: dict[str, Any], key: str, value: Any) -> None:
    c = _convention(key)
    if c == key:
        tree[key] = value
        return
    if c is not None:
        rest = key[len(c) + 1:]
        head, _, tail = rest.partition(".")
        if head.isdigit():
            items = tree.setdefault(c, {})
            _assign(items.setdefault(int(head), {}), tail, value)
            return
    head, _, tail = key.partition(".")
    if not tail:
        tree[key] = value
    else:
        _assign(tree.setdefault(head, {}), tail, value)


def _lists(tree: Any) -> Any:
    if isinstance(tree, dict):
        if tree and all(isinstance(k, int) for k in tree):
            return [_lists(tree[k]) for k in sorted(tree)]
        return {k: _lists(v) for k, v in tree.items()}
    return tree


def nest(attributes: dict[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for key, value in attributes.items():
        if isinstance(value, str) and key.endswith(JSON_KEYS):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        _assign(tree, key, list(value) if isinstance(value, tuple) else value)
    return _lists(tree)


def spans_dataframe(spans: Any) -> pd.DataFrame:
    rows = []
    for s in spans:
        attrs = dict(s.attributes or {})
        row = {"name": s.name, "span_kind": attrs.get("openinference.span.kind", "UNKNOWN"),
               "parent_id": None if s.parent is None else f"{s.parent.span_id:016x}",
               "start_time": pd.Timestamp(s.start_time, unit="ns", tz="UTC"),
               "end_time": pd.Timestamp(s.end_time, unit="ns", tz="UTC"), "status_code": s.status.status_code.name,
               "status_message": s.status.description or "", "events": [],
               "context.span_id": f"{s.context.span_id:016x}", "context.trace_id": f"{s.context.trace_id:032x}"}
        row.update({f"attributes.{k}": v for k, v in nest(attrs).items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("context.span_id", drop=False)
