"""Merged qrels: human and assessor (LLM or offline) judgments in one table, told apart by an ``origin``
column, and the policy that picks one judgment per (query, document) when both exist.

This module is what :func:`ragrade.read_qrels` calls on every table it reads (JSONL, Parquet, CSV/TSV):
a table without an ``origin`` column comes back unchanged. It imports nothing from the rest of ragrade but
the errors, so the readers can use it without an import circle.

Origins are ``human`` and ``llm`` (any automatic assessor, the offline approximations included; the
``assessor`` column of a merged file says which one). Policies (``prefer=``):

* ``"human"`` (default): where a pair has both, the human judgment wins;
* ``"llm"``: the assessor's judgment wins;
* ``"error"``: a pair judged by both is an error (naming the pair and both rows).

A pair judged by only one side is kept whatever the policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ragrade.errors import InputError, ParseError

ORIGINS = ("human", "llm")
ORIGIN_POLICIES = ("human", "llm", "error")
ORIGIN_COLUMN = "origin"

_QUERY = ("query", "query_id", "qid", "query-id", "queryid", "topic", "q")
_DOC = ("doc", "doc_id", "docid", "docno", "corpus-id", "corpus_id", "document", "document_id", "pid", "id")

RowText = Callable[[int], tuple[int | None, str | None]]


def check_policy(prefer: str | None) -> str:
    if prefer is None:
        return "human"
    if prefer not in ORIGIN_POLICIES:
        raise InputError(f"prefer must be one of {', '.join(ORIGIN_POLICIES)}", value=prefer)
    return prefer


def _col(names: list[str], candidates: tuple[str, ...]) -> str | None:
    lower = {n.lower(): n for n in names}
    for c in candidates:
        if c in lower:
            return lower[c]
    return None


def resolve_origins(table: Any, locate: RowText, path: str, prefer: str | None = None,
                    query_col: str | None = None, doc_col: str | None = None) -> tuple[Any, RowText]:
    """One judgment per (query, doc) of a merged qrels table (a ``pyarrow.Table``), chosen by ``prefer``.

    Returns the table without its ``origin`` column (rows in file order) and a ``locate`` that maps the
    new row numbers to the file's lines. A table without an ``origin`` column is returned unchanged.
    """
    policy = check_policy(prefer)
    names = list(table.column_names)
    oc = _col(names, (ORIGIN_COLUMN,))
    if oc is None:
        return table, locate
    import pyarrow as pa
    import pyarrow.compute as pc

    q = query_col if query_col in names else _col(names, _QUERY)
    d = doc_col if doc_col in names else _col(names, tuple(c for c in _DOC if c != (q or "").lower()))
    if q is None or d is None:
        raise ParseError("a table with an 'origin' column needs one row per judgment, with query and document "
                         "columns", path=path)
    origin = table.column(oc)
    if not (pa.types.is_string(origin.type) or pa.types.is_large_string(origin.type)
            or pa.types.is_dictionary(origin.type)):
        raise ParseError(f"column {oc!r} must hold text (human or llm), found {origin.type}", path=path)
    values = np.asarray(pc.utf8_lower(pc.cast(origin, pa.string())).to_numpy(zero_copy_only=False), dtype=object)
    bad = np.flatnonzero(~np.isin(values, np.asarray(ORIGINS, dtype=object)))
    if len(bad):
        line, text = locate(int(bad[0]))
        raise ParseError(f"origin must be 'human' or 'llm', found {values[bad[0]]!r}", path=path, line=line, text=text)
    import pandas as pd

    df = pd.DataFrame({"q": pc.cast(table.column(q), pa.string()).to_numpy(zero_copy_only=False),
                       "d": pc.cast(table.column(d), pa.string()).to_numpy(zero_copy_only=False),
                       "human": values == "human"})
    has = df.groupby(["q", "d"], sort=False)["human"].agg(["any", "all"])
    both = has[has["any"] & ~has["all"]]
    if len(both) and policy == "error":
        qid, did = both.index[0]
        rows = np.flatnonzero((df["q"] == qid).to_numpy() & (df["d"] == did).to_numpy())
        lines = [locate(int(r))[0] for r in rows]
        where = ", ".join(f"line {x}" if x is not None else f"row {int(r) + 1}" for x, r in zip(lines, rows, strict=True))
        raise ParseError(f"query {qid!r} document {did!r} is judged by both origins ({where}) and prefer='error'",
                         path=path)
    keep = np.ones(len(df), dtype=bool)
    if len(both):
        key = pd.MultiIndex.from_frame(df[["q", "d"]])
        in_both = key.isin(both.index)
        loser = ~df["human"].to_numpy() if policy == "human" else df["human"].to_numpy()
        keep = ~(in_both & loser)
    kept = np.flatnonzero(keep)
    out = table.drop_columns([oc])
    if len(kept) != len(df):
        out = out.take(pa.array(kept))

        def new_locate(r: int) -> tuple[int | None, str | None]:
            return locate(int(kept[r]))

        return out, new_locate
    return out, locate


__all__ = ["ORIGINS", "ORIGIN_COLUMN", "ORIGIN_POLICIES", "check_policy", "resolve_origins"]
