"""A toy lexical retriever over ``examples/corpus.jsonl``, for the examples of the documentation.

    ragrade retrieve examples.toy_retriever:search --queries examples/topics.tsv -k 20 -o run.parquet

``search(query)`` returns ``(doc id, score)`` pairs, best first: the number of the query's words found in
each passage (title and text). It stands in for a real retriever (a function, a LangChain or a LlamaIndex
retriever) so that the documented commands run offline.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus.jsonl"


@lru_cache(maxsize=1)
def _passages() -> list[tuple[str, frozenset[str]]]:
    out = []
    with CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            words = frozenset(re.findall(r"\w+", f"{row.get('title', '')} {row['text']}".lower()))
            out.append((row["_id"], words))
    return out


def search(query: str, k: int = 20) -> list[tuple[str, float]]:
    """The ``k`` passages sharing the most words with ``query`` (ties: the lower document id first)."""
    words = set(re.findall(r"\w+", query.lower()))
    scored = [(doc, float(len(words & terms))) for doc, terms in _passages()]
    scored = [s for s in scored if s[1] > 0]
    scored.sort(key=lambda s: (-s[1], s[0]))
    return scored[:k]
