"""The trace conventions ragrade reads: which span is a retrieval call or a reranker, and what each
attribute means (docs/traces.md, "Conventions").

* OpenInference (Arize Phoenix; the ``openinference-instrumentation-*`` packages): ``openinference.span.kind``
  is ``RETRIEVER`` or ``RERANKER``; the query is ``input.value`` (``reranker.query`` for a reranker); the
  documents are flattened keys ``retrieval.documents.{i}.document.id / .score / .content / .metadata``
  (``reranker.input_documents.{i}...`` and ``reranker.output_documents.{i}...``); ``session.id``,
  ``llm.token_count.*`` and ``llm.cost.total`` where spans carry them.
* OpenTelemetry GenAI: ``gen_ai.operation.name = "retrieval"``; the query ``gen_ai.retrieval.query.text``;
  the documents ``gen_ai.retrieval.documents`` as ``[{id, score}]`` (a JSON string, or OTLP's array of
  key/value lists); ``gen_ai.data_source.id`` names the retriever; ``gen_ai.conversation.id`` is the
  session; ``gen_ai.usage.input_tokens`` / ``output_tokens``.
* Langfuse observations (``type`` RETRIEVER, or a SPAN whose output holds documents): ``input`` the query,
  ``output`` the documents, ``usage`` / ``usageDetails`` the tokens, ``calculatedTotalCost`` / ``costDetails``
  the cost; the trace's ``sessionId`` (:mod:`ragrade.traces.langfuse`).

:func:`classify` maps one attribute key to its :class:`Meaning`; the readers (OTLP's columnar one and the
record one) share it, so that a key means the same whatever the file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

#: Conventions, coded in the span tables (``convention`` column): index -> name shown in notes and tables.
CONVENTIONS = ("", "openinference", "genai", "langfuse")
OPENINFERENCE, GENAI, LANGFUSE = 1, 2, 3
CONVENTION_TITLES = {"openinference": "OpenInference", "genai": "OpenTelemetry GenAI", "langfuse": "Langfuse"}

#: What a span is (``role`` column).
OTHER, RETRIEVAL, RERANKER = 0, 1, 2

#: The document lists of a span (``list`` column of the document tables).
RETRIEVED, RERANK_IN, RERANK_OUT = 0, 1, 2

#: Attribute roles: what the value of a key is.
KIND, OPERATION, QUERY, RERANK_QUERY, DOC, DOCS, OUTPUT, SESSION, TOKENS, COST, SOURCE, KEY, KEY_PART = range(1, 14)
NONE = 0

_DOC = re.compile(r"^(retrieval\.documents|reranker\.input_documents|reranker\.output_documents)\.(\d+)\."
                  r"document\.(id|score|content|metadata)$")
_LISTS = {"retrieval.documents": RETRIEVED, "reranker.input_documents": RERANK_IN,
          "reranker.output_documents": RERANK_OUT, "gen_ai.retrieval.documents": RETRIEVED}
#: document fields coded in :class:`Meaning.field`
FIELDS = ("id", "score", "content", "metadata")

_FIXED = {
    "openinference.span.kind": KIND,
    "gen_ai.operation.name": OPERATION,
    "input.value": QUERY,
    "gen_ai.retrieval.query.text": QUERY,
    "reranker.query": RERANK_QUERY,
    "output.value": OUTPUT,
    "session.id": SESSION,
    "gen_ai.conversation.id": SESSION,
    "llm.token_count.total": TOKENS,
    "gen_ai.usage.total_tokens": TOKENS,
    "llm.cost.total": COST,
    "gen_ai.data_source.id": SOURCE,
    "reranker.model_name": SOURCE,
}
#: token counts added up when a span gives no total
_TOKEN_PARTS = ("llm.token_count.prompt", "llm.token_count.completion", "gen_ai.usage.input_tokens",
                "gen_ai.usage.output_tokens")


class Meaning(NamedTuple):
    """What one attribute key means: its role, and for a document its list, position and field (an index
    of :data:`FIELDS`); for :data:`TOKENS` ``field`` 1 marks a part (prompt or completion) of a total."""

    role: int
    list: int = -1
    position: int = -1
    field: int = -1


@lru_cache(maxsize=4096)
def classify(key: str, user_key: str | None = None) -> Meaning:
    """The meaning of attribute ``key`` (``user_key``: the attribute the user joins traces on, or a dotted
    path into a JSON attribute such as ``metadata.example_id``)."""
    if user_key is not None:
        if key == user_key:
            return Meaning(KEY)
        if user_key.startswith(key + "."):
            return Meaning(KEY_PART)
    fixed = _FIXED.get(key)
    if fixed is not None:
        return Meaning(fixed)
    m = _DOC.match(key)
    if m is not None:
        return Meaning(DOC, _LISTS[m.group(1)], int(m.group(2)), FIELDS.index(m.group(3)))
    if key in _LISTS:
        return Meaning(DOCS, _LISTS[key])
    if key in _TOKEN_PARTS:
        return Meaning(TOKENS, field=1)
    return Meaning(NONE)


def span_role(kind: str | None, operation: str | None) -> tuple[int, int]:
    """``(role, convention)`` of a span from its ``openinference.span.kind`` and ``gen_ai.operation.name``
    (OpenInference first when a span carries both)."""
    k = (kind or "").strip().upper()
    if k in ("RETRIEVER", "RERANKER"):
        return (RETRIEVAL if k == "RETRIEVER" else RERANKER), OPENINFERENCE
    op = (operation or "").strip().lower()
    if op == "retrieval":
        return RETRIEVAL, GENAI
    if op in ("rerank", "reranking"):
        return RERANKER, GENAI
    return OTHER, OPENINFERENCE if k else GENAI if op else 0


#: Names of a document id, score and text inside a JSON document object (GenAI's ``{id, score}``, LangChain's
#: serialised Document, Langfuse outputs, Phoenix's nested ``document.id``), in the order tried.
DOC_ID_NAMES = ("document.id", "id", "doc_id", "document_id", "node_id", "id_", "_id", "docid", "pid")
DOC_SCORE_NAMES = ("document.score", "score", "relevance_score", "similarity", "_score")
