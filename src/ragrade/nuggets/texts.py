"""The texts the nugget procedures show an LLM: query texts and passage texts, from what users give (a mapping,
a topics file or corpus read through :mod:`ragrade.io.texts`, a :class:`~ragrade.io.texts.Passages`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from ragrade.errors import InputError


def passage_text(value: Any) -> str:
    """A passage as shown to the model: ``title`` on its own line before the text when there is one."""
    if isinstance(value, tuple | list) and len(value) == 2:
        title, text = str(value[0] or "").strip(), str(value[1] or "").strip()
        return f"{title}\n{text}" if title else text
    return "" if value is None else str(value).strip()


def passage_texts(passages: Any, ids: Iterable[str]) -> dict[str, str]:
    """``{doc id: text}`` of the wanted ``ids`` found in ``passages`` (a corpus path, a
    :class:`~ragrade.io.texts.Passages`, or ``{doc id: text or (title, text)}``); empty texts are left out."""
    wanted = set(ids)
    if passages is None:
        raise InputError("the passages' texts are needed (a corpus file or {doc id: text}: corpus= / --corpus when evaluating, passages= when assigning)")
    if isinstance(passages, str | os.PathLike):
        from ragrade.io.texts import read_passages

        passages = read_passages(passages, wanted)
    texts = getattr(passages, "texts", passages)
    if not isinstance(texts, Mapping):
        raise InputError("passages must be a corpus path, a Passages or {doc id: text}", value=type(passages).__name__)
    out = {}
    for d in wanted:
        if d in texts:
            t = passage_text(texts[d])
            if t:
                out[d] = t
    return out


def query_texts(queries: Any) -> dict[str, str]:
    """``{query id: text}`` from a topics path or a mapping (None: no texts)."""
    if queries is None:
        return {}
    if isinstance(queries, str | os.PathLike):
        from ragrade.io.texts import read_queries

        return read_queries(queries)
    if not isinstance(queries, Mapping):
        raise InputError("queries must be a topics path or {query id: text}", value=type(queries).__name__)
    return {str(q): str(t) for q, t in queries.items() if t is not None and str(t).strip()}


__all__ = ["passage_text", "passage_texts", "query_texts"]
