"""A toy lexical retriever over ``examples/corpus.jsonl``, for the examples of the documentation.

    ragrade retrieve examples.toy_retriever:search --queries examples/topics.tsv -k 20 -o run.parquet

``search(query)`` returns dicts ``{"doc_id", "score", "text"}``, best first: the score is the number of the
query's words found in each passage (title and text). It stands in for a real retriever (a function, a LangChain or a LlamaIndex
retriever) so that the documented commands run offline.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus.jsonl"


@lru_cache(maxsize=1)
def _passages() -> list[tuple[str, frozenset[str], str]]:
    out = []
    with CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            words = frozenset(re.findall(r"\w+", f"{row.get('title', '')} {row['text']}".lower()))
            out.append((row["_id"], words, row["text"]))
    return out


def search(query: str, k: int = 20) -> list[dict[str, object]]:
    """The ``k`` passages sharing the most words with ``query`` (ties: the lower document id first)."""
    words = set(re.findall(r"\w+", query.lower()))
    scored = [(doc, float(len(words & terms)), text) for doc, terms, text in _passages()]
    scored = [s for s in scored if s[1] > 0]
    scored.sort(key=lambda s: (-s[1], s[0]))
    return [{"doc_id": doc, "score": score, "text": text} for doc, score, text in scored[:k]]
