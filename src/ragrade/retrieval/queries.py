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
    if isinstance(queries, str | os.PathLike):
        from ragrade.io.texts import read_queries

        pairs: list[tuple[Any, Any]] = list(read_queries(queries, id_col=id_col, text_col=text_col).items())
    elif isinstance(queries, Mapping):
        pairs = list(queries.items())
    elif type(queries).__name__ == "DataFrame" and hasattr(queries, "columns"):
        from ragrade.io.texts import QUERY_ID_NAMES, QUERY_TEXT_NAMES

        cols = {str(c).lower(): c for c in queries.columns}
        qc = id_col or next((cols[n] for n in QUERY_ID_NAMES if n in cols), None)
        tc = text_col or next((cols[n] for n in QUERY_TEXT_NAMES if n in cols and cols[n] != qc), None)
        if qc is None or tc is None:
            raise InputError(f"queries DataFrame: cannot find the query id and text columns (columns: "
                             f"{list(queries.columns)}); name them qid and text, or pass id_col= and text_col=")
        pairs = list(zip(queries[qc].tolist(), queries[tc].tolist(), strict=True))
    elif isinstance(queries, Sequence) and not isinstance(queries, bytes):
        items = list(queries)
        if all(isinstance(x, str) for x in items):
            pairs = [(str(i), x) for i, x in enumerate(items)]
        else:
            pairs = []
            for i, x in enumerate(items):
                if not (isinstance(x, Sequence) and not isinstance(x, str | bytes) and len(x) == 2):
                    raise InputError("queries: give (query id, text) pairs, texts, a mapping or a file",
                                     query=str(i), value=x)
                pairs.append((x[0], x[1]))
    else:
        raise InputError(f"cannot use a {type(queries).__name__} as queries: give a mapping of query id -> "
                         f"text, a list of (id, text) pairs, a list of texts or a topics file")
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
