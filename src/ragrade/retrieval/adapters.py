"""Turn what a retriever returns into ranked hits ``(doc id, score or None, text or None)``.

Four kinds of retriever are recognised, by what they offer (duck typing: nothing is imported):

* **LangChain** retrievers and runnables (an ``invoke`` method): ``invoke(query)`` gives ``Document``\\ s;
  the id is ``Document.id``, or ``metadata[id_key]`` when ``id_key`` is given; the text is
  ``page_content``. ``ainvoke`` is used in asyncio mode.
* **LlamaIndex** retrievers (a ``retrieve`` method): ``retrieve(query)`` gives ``NodeWithScore``\\ s. A
  node's own id is a *chunk* id, which qrels never hold, so the id must be chosen explicitly:
  ``id_key="ref_doc_id"`` (the source document the node was split from), ``id_key="node_id"`` (the
  chunk id, when the qrels judge chunks), or the name of a metadata field. The score is
  ``NodeWithScore.score``, the text ``node.get_content()``. ``aretrieve`` is used in asyncio mode.
* **async callables** (``async def search(query)``), awaited in asyncio mode.
* **plain callables** ``query text -> list``. A callable with a parameter named ``k`` or ``top_k`` gets
  the cutoff as that keyword.

Each element of the returned list may be an id (``str`` or ``int``), an ``(id, score)`` pair, a
``(document, score)`` pair, a dict (id from ``id_key`` or ``id``/``doc_id``/``docid``/``_id``/``doc``,
score from ``score``, text from ``text``/``page_content``/``content``/``contents``/``passage``), a
LangChain ``Document`` or a LlamaIndex node. Anything else is a failure of that query, with a message.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragrade.data.ids import normalize_id as id_string
from ragrade.errors import (
    InputError,
    RetrieverConfigError,
)

ID_FIELDS = ("id", "doc_id", "docid", "_id", "doc")
TEXT_FIELDS = ("text", "page_content", "content", "contents", "passage")
KINDS = ("langchain", "llamaindex", "async", "callable")


@dataclass(frozen=True)
class Hit:
    """One retrieved item: its document id, the retriever's score (None if it gives none) and text."""

    doc: str
    score: float | None = None
    text: str | None = None


class Adapter:
    """A retriever seen through one interface: :meth:`call` (blocking) and :meth:`acall` (a coroutine)."""

    def __init__(self, retriever: Any, *, id_key: str | None = None, name: str | None = None) -> None:
        self.retriever = retriever
        self.id_key = id_key
        self.kind = kind_of(retriever)
        if self.kind == "llamaindex" and id_key is None:
            raise RetrieverConfigError(
                "a LlamaIndex retriever returns nodes whose own ids are chunk ids, which qrels do not hold "
                "(every metric would be 0): choose the id explicitly with id_key='ref_doc_id' (the source "
                "document's id), id_key='node_id' (when your qrels judge chunks), or id_key='<metadata field>'")
        self.name = name or default_name(retriever)
        self._k_param = _k_parameter(retriever) if self.kind in ("callable", "async") else None

    @property
    def is_async(self) -> bool:
        """Whether the retriever is an async callable (it is then awaited, never called in a thread)."""
        return self.kind == "async"

    def supports_asyncio(self) -> bool:
        if self.kind == "langchain":
            return hasattr(self.retriever, "ainvoke")
        if self.kind == "llamaindex":
            return hasattr(self.retriever, "aretrieve")
        return self.kind == "async"

    def call(self, query: str, k: int) -> list[Hit]:
        r = self.retriever
        if self.kind == "langchain":
            out = r.invoke(query)
        elif self.kind == "llamaindex":
            out = r.retrieve(query)
        elif self.kind == "async":
            raise RuntimeError("an async retriever is awaited, not called")  # pragma: no cover
        else:
            out = r(query, **{self._k_param: k}) if self._k_param else r(query)
        return self.hits(out, k)

    async def acall(self, query: str, k: int) -> list[Hit]:
        r = self.retriever
        if self.kind == "langchain":
            out = await r.ainvoke(query)
        elif self.kind == "llamaindex":
            out = await r.aretrieve(query)
        elif self.kind == "async":
            out = await (r(query, **{self._k_param: k}) if self._k_param else r(query))
        else:
            raise RuntimeError("a blocking retriever runs in threads")  # pragma: no cover
        return self.hits(out, k)

    # -- answers -> hits ---------------------------------------------------------------------------
    def hits(self, out: Any, k: int) -> list[Hit]:
        """The first ``k`` hits of one answer (a :class:`TypeError` or :class:`ValueError` describes an
        answer that is not a list of usable items; :class:`RetrieverConfigError` a configuration problem)."""
        if isinstance(out, str | bytes | Mapping) or not isinstance(out, Sequence | np.ndarray):
            if hasattr(out, "__iter__") and not isinstance(out, str | bytes | Mapping):
                out = list(out)
            else:
                raise TypeError(f"the retriever returned a {type(out).__name__}, not a list of results")
        return [self.hit(item) for item in list(out)[:k]]

    def hit(self, item: Any) -> Hit:
        if isinstance(item, str | int | np.integer) and not isinstance(item, bool):
            return Hit(id_string(item, "retrieved id"))
        if isinstance(item, tuple) and len(item) == 2 and _is_number(item[1]):
            first, score = item
            inner = (self.hit(first) if not isinstance(first, str | int | np.integer)
                     else Hit(id_string(first, "retrieved id")))
            return Hit(inner.doc, float(score), inner.text)
        if _is_llamaindex_node(item):
            return self._llamaindex(item)
        if hasattr(item, "page_content") and hasattr(item, "metadata"):
            return self._langchain(item)
        if isinstance(item, Mapping):
            return self._mapping(item)
        raise TypeError(f"cannot read a retrieved {type(item).__name__} ({item!r:.80}): return ids, (id, score) "
                        f"pairs, dicts, LangChain Documents or LlamaIndex nodes")

    def _langchain(self, doc: Any) -> Hit:
        meta = doc.metadata or {}
        if self.id_key is None or self.id_key == "id":
            raw = getattr(doc, "id", None)
            if raw is None:
                hint = f" (its metadata has: {', '.join(map(str, meta))})" if meta else ""
                raise RetrieverConfigError(f"a retrieved Document has no id{hint}; give the metadata field that "
                                           f"holds the document id with id_key=")
        else:
            if self.id_key not in meta:
                raise RetrieverConfigError(f"a retrieved Document has no metadata field {self.id_key!r} (it has: "
                                           f"{', '.join(map(str, meta)) or 'none'})")
            raw = meta[self.id_key]
        score = meta.get("score") if _is_number(meta.get("score")) else None
        return Hit(id_string(raw, "retrieved id"), None if score is None else float(score),
                   _text_or_none(doc.page_content))

    def _llamaindex(self, item: Any) -> Hit:
        node = item.node if hasattr(item, "node") else item
        score = getattr(item, "score", None) if hasattr(item, "node") else None
        key = self.id_key
        if key == "ref_doc_id":
            raw = node.ref_doc_id
            if raw is None:
                raise RetrieverConfigError(f"node {node.node_id!r} has no source document (ref_doc_id is None): "
                                           f"use id_key='node_id' or a metadata field")
        elif key == "node_id":
            raw = node.node_id
        else:
            meta = node.metadata or {}
            if key not in meta:
                raise RetrieverConfigError(f"node {node.node_id!r} has no metadata field {key!r} (it has: "
                                           f"{', '.join(map(str, meta)) or 'none'}); or use id_key='ref_doc_id'")
            raw = meta[key]
        try:
            text = node.get_content()
        except Exception:  # a node kind without text content
            text = None
        return Hit(id_string(raw, "retrieved id"), None if score is None else float(score), _text_or_none(text))

    def _mapping(self, item: Mapping[str, Any]) -> Hit:
        if self.id_key is not None:
            if self.id_key not in item:
                raise RetrieverConfigError(f"a retrieved dict has no field {self.id_key!r} (it has: "
                                           f"{', '.join(map(str, item))})")
            raw = item[self.id_key]
        else:
            key = next((f for f in ID_FIELDS if f in item), None)
            if key is None:
                raise RetrieverConfigError(f"a retrieved dict has no id field (looked for {', '.join(ID_FIELDS)}; "
                                           f"it has: {', '.join(map(str, item))}); name it with id_key=")
            raw = item[key]
        score: Any = item.get("score")
        text = next((item[f] for f in TEXT_FIELDS if f in item), None)
        return Hit(id_string(raw, "retrieved id"), float(score) if _is_number(score) else None,
                   _text_or_none(text))


def kind_of(retriever: Any) -> str:
    """``"langchain"``, ``"llamaindex"``, ``"async"`` or ``"callable"``; anything else is an
    :class:`InputError`."""
    if _has_method(retriever, "invoke"):
        return "langchain"
    if _has_method(retriever, "retrieve"):
        return "llamaindex"
    if inspect.iscoroutinefunction(retriever) or inspect.iscoroutinefunction(type(retriever).__call__):
        return "async"
    if callable(retriever):
        return "callable"
    raise InputError(f"cannot use a {type(retriever).__name__} as a retriever: give a callable (query text -> "
                     f"list of results), an async callable, a LangChain retriever or a LlamaIndex retriever")


def default_name(retriever: Any) -> str:
    """The name a retriever's cache entries and run go under when none is given: the function's
    ``module.qualname``, else the class's."""
    target = retriever if inspect.isfunction(retriever) or inspect.ismethod(retriever) else type(retriever)
    module = getattr(target, "__module__", None) or ""
    qual = getattr(target, "__qualname__", None) or type(retriever).__name__
    return f"{module}.{qual}" if module and module != "builtins" else str(qual)


def _has_method(obj: Any, name: str) -> bool:
    return not isinstance(obj, type) and callable(getattr(obj, name, None))


def _k_parameter(fn: Callable[..., Any]) -> str | None:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    return next((p for p in ("k", "top_k") if p in params), None)


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)


def _is_llamaindex_node(item: Any) -> bool:
    node = getattr(item, "node", item)
    return hasattr(node, "node_id") and hasattr(node, "ref_doc_id")


def _text_or_none(text: Any) -> str | None:
    return text if isinstance(text, str) else None
