"""Spans as records: one span given as a dict of flattened attributes (``{"retrieval.documents.0.document.id":
"d1", ...}``) read into the normalised span table, one span at a time in Python.

Every source but OTLP's common case goes through here: Phoenix's DataFrames and their files (attributes
nested by Phoenix, flattened back), Langfuse observations (mapped to these keys by
:mod:`ragrade.traces.langfuse`), the OpenTelemetry SDK's JSON, and the OTLP spans the columnar reader
(:mod:`ragrade.traces.otlp`) hands over because they need more than a column lookup (documents written as
a JSON string, LangChain's ids in ``output.value``, a key inside a JSON attribute, a query written as JSON).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.traces import conventions as cv
from ragrade.traces.notes import Notes

#: The normalised span table: one row per span that matters (retrieval calls, rerankers, and spans that
#: carry a session, the join key, tokens or a cost; roots too when traces are joined by their question).
SPAN_FIELDS = (("line", "int64"), ("trace", "string"), ("span", "string"), ("parent", "string"),
               ("name", "string"), ("start", "int64"), ("end", "int64"), ("role", "int8"), ("convention", "int8"),
               ("query", "string"), ("session", "string"), ("key", "string"), ("tokens", "float64"),
               ("cost", "float64"), ("source", "string"))
#: The documents of those spans: the span's row in its block, the list (retrieved, reranker input,
#: reranker output), the position in the list, the document id and its score (NaN when none).
DOC_FIELDS = (("span", "int64"), ("list", "int8"), ("pos", "int32"), ("doc", "string"), ("score", "float64"))


def span_schema() -> Any:
    import pyarrow as pa

    return pa.schema([(n, getattr(pa, t)()) for n, t in SPAN_FIELDS])


def doc_schema() -> Any:
    import pyarrow as pa

    return pa.schema([(n, getattr(pa, t)()) for n, t in DOC_FIELDS])


@dataclass
class Facts:
    """What one span says, read from its attributes."""

    role: int = cv.OTHER
    convention: int = 0
    query: str | None = None
    session: str | None = None
    key: str | None = None
    tokens: float | None = None
    cost: float | None = None
    source: str | None = None
    docs: dict[int, list[tuple[str, float | None]]] = field(default_factory=dict)


def text_of(value: Any) -> str | None:
    """A query's text: the string itself, or inside a JSON object (LlamaIndex's ``{"query_str": ...}``,
    LangChain's ``{"input": ...}``, Langfuse's ``{"query": ...}``), one level of nesting deep."""
    if value is None:
        return None
    if isinstance(value, str):
        s = value.strip()
        if not s.startswith(("{", "[")):
            return value
        try:
            parsed = json.loads(s)
        except ValueError:
            return value
        found = text_of_object(parsed)
        return value if found is None else found
    found = text_of_object(value)
    return found if found is not None else str(value)


def text_of_object(value: Any, depth: int = 2) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for name in ("query_str", "query", "question", "input", "text", "content"):
            if isinstance(value.get(name), str):
                return str(value[name])
        if depth:
            for inner in value.values():
                if isinstance(inner, Mapping | list):
                    found = text_of_object(inner, depth - 1)
                    if found is not None:
                        return found
    if isinstance(value, list) and value and depth:
        return text_of_object(value[-1], depth - 1)
    return None


def loads(value: Any) -> Any:
    """A JSON (or Python literal: pandas writes lists of dicts so in CSV) value held in a string; the value
    itself when it is not a string; raises ValueError when the string holds neither."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("not JSON") from None


def doc_of(obj: Any) -> tuple[str | None, float | None]:
    """``(id, score)`` of one document object: GenAI's ``{id, score}``, Phoenix's ``{"document.id": ...}``,
    ``{"document": {"id": ...}}``, LangChain's Document (``id``, or an id in its ``metadata``), LlamaIndex's
    ``{"node": {"id_": ...}, "score": ...}``; a bare string or number is the id."""
    if isinstance(obj, str | int) and not isinstance(obj, bool):
        return str(obj), None
    if not isinstance(obj, Mapping):
        return None, None
    places = [obj]
    for inner in ("document", "node", "metadata"):
        if isinstance(obj.get(inner), Mapping):
            places.append(obj[inner])
    ident = next((p[n] for p in places for n in cv.DOC_ID_NAMES if _scalar(p.get(n))), None)
    score = next((p[n] for p in places for n in cv.DOC_SCORE_NAMES if p.get(n) is not None), None)
    return (None if ident is None else str(ident)), _number(score)


def _scalar(v: Any) -> bool:
    return isinstance(v, str | int) and not isinstance(v, bool) and str(v) != ""


def _number(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def docs_of(value: Any) -> list[Any] | None:
    """The list of document objects a value holds: a list, or ``{"documents": [...]}`` / ``{"nodes": [...]}``
    (LangChain's and LlamaIndex's outputs); None when it holds none."""
    try:
        value = loads(value)
    except ValueError:
        return None
    if isinstance(value, Mapping):
        for name in ("documents", "nodes", "results", "docs", "output"):
            if isinstance(value.get(name), list):
                return list(value[name])
        return None
    return list(value) if isinstance(value, list) else None


def path_value(value: Any, path: list[str]) -> Any:
    """``value[path[0]][path[1]]...`` through dicts and JSON strings; None where the path stops."""
    for part in path:
        try:
            value = loads(value)
        except ValueError:
            return None
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def read_flat(attrs: Mapping[str, Any], user_key: str | None, notes: Notes, where: str) -> Facts:
    """The :class:`Facts` of one span from its flattened attributes (``where`` names it in notes)."""
    facts = Facts()
    facts.role, facts.convention = cv.span_role(_str(attrs.get("openinference.span.kind")),
                                                _str(attrs.get("gen_ai.operation.name")))
    by_position: dict[int, dict[int, dict[int, Any]]] = {}
    whole: dict[int, list[Any]] = {}
    output = None
    parts: list[float] = []
    for key, value in attrs.items():
        if value is None:
            continue
        m = cv.classify(key, user_key)
        if m.role == cv.DOC:
            by_position.setdefault(m.list, {}).setdefault(m.position, {})[m.field] = value
        elif m.role == cv.DOCS:
            _whole_list(whole, m.list, key, value, facts, notes, where)
        elif m.role == cv.OUTPUT:
            output = value
        elif m.role == cv.TOKENS and m.field == 1:
            parts.append(_number(value) or 0.0)
        else:
            _scalar_fact(facts, m.role, key, value, user_key, notes, where)
    if facts.tokens is None and parts:
        facts.tokens = float(sum(parts))
    facts.docs = _documents(by_position, whole, output, notes, where)
    return facts


def _whole_list(whole: dict[int, list[Any]], lst: int, key: str, value: Any, facts: Facts, notes: Notes,
                where: str) -> None:
    items = docs_of(value)
    if items is None:
        notes.add("not_json", f"{where} {key}")
        return
    if isinstance(value, str) and not key.startswith("gen_ai."):
        notes.add("json_documents", where)  # OpenInference documents written as one JSON string
    whole[lst] = items


def _scalar_fact(facts: Facts, role: int, key: str, value: Any, user_key: str | None, notes: Notes,
                 where: str) -> None:
    if (role == cv.QUERY and facts.query is None) or role == cv.RERANK_QUERY:
        facts.query = text_of(value)
    elif role == cv.SESSION:
        facts.session = str(value)
    elif role == cv.TOKENS:
        facts.tokens = _number(value)
    elif role == cv.COST:
        facts.cost = _number(value)
    elif role == cv.SOURCE:
        facts.source = str(value)
    elif role == cv.KEY:
        facts.key = _key_text(value)
    elif role == cv.KEY_PART and facts.key is None and user_key is not None:
        found = path_value(value, user_key[len(key) + 1:].split("."))
        facts.key = None if found is None else _key_text(found)


def _key_text(value: Any) -> str | None:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return None if value is None or value == "" else str(value)


def _documents(by_position: dict[int, dict[int, dict[int, Any]]], whole: dict[int, list[Any]], output: Any,
               notes: Notes, where: str) -> dict[int, list[tuple[str, float | None]]]:
    """Each list's documents in position order, ids completed from ``output.value`` where the flattened
    keys give none (LangChain); a document still without an id is left out, with a note."""
    lists: dict[int, list[tuple[str | None, float | None]]] = {lst: [doc_of(o) for o in items]
                                                                for lst, items in whole.items()}
    for lst, at in by_position.items():
        positions = sorted(at)
        if positions != list(range(len(positions))):
            notes.add("bad_position", where)
        lists[lst] = [(_doc_id(at[p].get(0)), _score(at[p].get(1), notes, where)) for p in positions]
    out: dict[int, list[tuple[str, float | None]]] = {}
    for lst, docs in lists.items():
        if lst == cv.RETRIEVED and any(d is None for d, _ in docs) and output is not None:
            docs = _ids_from_output(docs, output, notes, where)
        missing = sum(d is None for d, _ in docs)
        if missing:
            notes.add("no_id", where, missing)
        out[lst] = [(d, s) for d, s in docs if d is not None]
    return out


def _doc_id(v: Any) -> str | None:
    if v is None or isinstance(v, bool) or str(v) == "":
        return None
    return _key_text(v)


def _score(v: Any, notes: Notes, where: str) -> float | None:
    if v is None:
        return None
    out = _number(v)
    if out is None:
        notes.add("bad_score", where)
    return out


def _ids_from_output(docs: list[tuple[str | None, float | None]], output: Any, notes: Notes,
                     where: str) -> list[tuple[str | None, float | None]]:
    objects = docs_of(output)
    if not objects or len(objects) != len(docs):
        return docs
    read = [doc_of(o) for o in objects]
    if all(i is None for i, _ in read):
        return docs
    notes.add("output_ids", where)
    return [(d if d is not None else r, s if s is not None else rs) for (d, s), (r, rs) in zip(docs, read, strict=True)]


class Records:
    """Spans given one at a time (flattened attributes, or :class:`Facts` read already), gathered into a
    block of the normalised tables (:data:`SPAN_FIELDS`, :data:`DOC_FIELDS`)."""

    def __init__(self, user_key: str | None, notes: Notes, keep_roots: bool = False) -> None:
        self.user_key = user_key
        self.notes = notes
        self.keep_roots = keep_roots  # root spans are kept for their question (key="question")
        self._spans: dict[str, list[Any]] = {n: [] for n, _ in SPAN_FIELDS}
        self._docs: dict[str, list[Any]] = {n: [] for n, _ in DOC_FIELDS}

    def __len__(self) -> int:
        return len(self._spans["span"])

    def add(self, *, line: int | None, trace: str | None, span: str | None, parent: str | None, name: str | None,
            start: int | None, end: int | None, attrs: Mapping[str, Any] | None = None,
            facts: Facts | None = None) -> None:
        """One span (``facts``, or read from ``attrs``); kept when it matters (:data:`SPAN_FIELDS`)."""
        if facts is None:
            facts = read_flat(attrs or {}, self.user_key, self.notes, _where(span, line))
        if not (facts.role != cv.OTHER or facts.session or facts.key or facts.tokens or facts.cost
                or (self.keep_roots and not parent)):
            return
        row = len(self)
        values = (line, trace, span, parent or None, name, start, end, facts.role, facts.convention, facts.query,
                  facts.session, facts.key, facts.tokens, facts.cost, facts.source)
        for (n, _), v in zip(SPAN_FIELDS, values, strict=True):
            self._spans[n].append(v)
        for lst, docs in facts.docs.items():
            for pos, (doc, score) in enumerate(docs):
                for n, v in zip(("span", "list", "pos", "doc", "score"), (row, lst, pos, doc, score), strict=True):
                    self._docs[n].append(v)

    def block(self) -> tuple[Any, Any]:
        """``(spans, documents)`` tables of the spans added since the last block."""
        import pyarrow as pa

        spans = pa.Table.from_pydict(self._spans, schema=span_schema())
        docs = pa.Table.from_pydict(self._docs, schema=doc_schema())
        self._spans = {n: [] for n, _ in SPAN_FIELDS}
        self._docs = {n: [] for n, _ in DOC_FIELDS}
        return spans, docs


def _where(span: str | None, line: int | None) -> str:
    if span:
        return f"span {span}"
    return f"line {line}" if line is not None else "a span"
