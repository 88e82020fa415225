"""Retrievers evaluated in place: :func:`retrieve` asks a retriever (a function, an async function, a
LangChain or LlamaIndex retriever) every query and returns a :class:`RetrievedRun` — a
:class:`~ragrade.data.Run` with per-query latency, failures and, when the retriever returns them, the
retrieved texts — concurrently, with a progress bar and an on-disk cache (``docs/retrieve.md``).

Modules: :mod:`~ragrade.retrieval.queries` (queries from dicts, lists, DataFrames, topics files),
:mod:`~ragrade.retrieval.adapters` (what each kind of retriever returns -> hits),
:mod:`~ragrade.retrieval.cache` (the SQLite cache), :mod:`~ragrade.retrieval.core` (:func:`retrieve`).
"""

from __future__ import annotations

from ragrade.retrieval.adapters import Adapter, Hit, RetrieverConfigError, kind_of
from ragrade.retrieval.cache import RetrievalCache
from ragrade.retrieval.core import (
    IdMismatchError,
    RetrievalSummary,
    RetrievedRun,
    check_ids,
    judge_rows,
    retrieve,
)
from ragrade.retrieval.queries import as_queries

__all__ = [
    "Adapter",
    "Hit",
    "IdMismatchError",
    "RetrievalCache",
    "RetrievalSummary",
    "RetrievedRun",
    "RetrieverConfigError",
    "as_queries",
    "check_ids",
    "judge_rows",
    "kind_of",
    "retrieve",
]
