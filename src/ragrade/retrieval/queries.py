"""The queries a retriever is asked: ``{query id: text}`` from a dict, a list of ``(id, text)`` pairs, a
list of texts (ids ``"0"``, ``"1"``...), a DataFrame, or a topics file (TSV/JSONL/Parquet, read by
:func:`ragrade.io.texts.read_queries`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ragrade.data.ids import normalize_id as id_string
from ragrade.errors import InputError


def as_queries(queries: Any, *, id_col: str | None = None, text_col: str | None = None) -> dict[str, str]:
    """``{query id: text}`` in the given order. Ids follow ragrade's id rule (``10`` and ``"10"`` are one
    id); a repeated id, an empty text or a text that is not a string is an :class:`InputError` naming the
    query.

    >>> as_queries([("q1", "what is bm25"), (2, "dense retrieval")])
    {'q1': 'what is bm25', '2': 'dense retrieval'}
    >>> as_queries(["first question", "second"])
    {'0': 'first question', '1': 'second'}
    """
    pairs = _pairs(queries, id_col, text_col)
    out: dict[str, str] = {}
    for qid, text in pairs:
        q = id_string(qid, "query id")
        if q in out:
            raise InputError("a query id appears twice", query=q)
        if not isinstance(text, str):
            raise InputError("a query text must be a string", query=q, value=text)
        if not text.strip():
            raise InputError("a query text is empty", query=q)
        out[q] = text
    if not out:
        raise InputError("no query to retrieve for")
    return out


def _pairs(queries: Any, id_col: str | None, text_col: str | None) -> list[tuple[Any, Any]]:
    """``[(query id, text)]`` from a topics file, a mapping, a DataFrame, texts or pairs."""
    if isinstance(queries, str | os.PathLike):
        from ragrade.io.texts import read_queries

        return list(read_queries(queries, id_col=id_col, text_col=text_col).items())
    if isinstance(queries, Mapping):
        return list(queries.items())
    if type(queries).__name__ == "DataFrame" and hasattr(queries, "columns"):
        return _frame_pairs(queries, id_col, text_col)
    if isinstance(queries, Sequence) and not isinstance(queries, bytes):
        return _sequence_pairs(list(queries))
    raise InputError(f"cannot use a {type(queries).__name__} as queries: give a mapping of query id -> "
                     f"text, a list of (id, text) pairs, a list of texts or a topics file")


def _frame_pairs(queries: Any, id_col: str | None, text_col: str | None) -> list[tuple[Any, Any]]:
    from ragrade.io.columns import QUERY_ID_NAMES, QUERY_TEXT_NAMES

    cols = {str(c).lower(): c for c in queries.columns}
    qc = id_col or next((cols[n] for n in QUERY_ID_NAMES if n in cols), None)
    tc = text_col or next((cols[n] for n in QUERY_TEXT_NAMES if n in cols and cols[n] != qc), None)
    if qc is None or tc is None:
        raise InputError(f"queries DataFrame: cannot find the query id and text columns (columns: "
                         f"{list(queries.columns)}); name them qid and text, or pass id_col= and text_col=")
    return list(zip(queries[qc].tolist(), queries[tc].tolist(), strict=True))


def _sequence_pairs(items: list[Any]) -> list[tuple[Any, Any]]:
    if all(isinstance(x, str) for x in items):
        return [(str(i), x) for i, x in enumerate(items)]
    pairs = []
    for i, x in enumerate(items):
        if not (isinstance(x, Sequence) and not isinstance(x, str | bytes) and len(x) == 2):
            raise InputError("queries: give (query id, text) pairs, texts, a mapping or a file",
                             query=str(i), value=x)
        pairs.append((x[0], x[1]))
    return pairs
