"""A small lexical retriever over chunk texts: Okapi BM25 (k1 = 0.9, b = 0.4, Lucene's idf) on lower-cased
word tokens, ties by chunk order. It lets ``ragrade chunking`` rank the chunks of each chunking with no
retriever of your own (a baseline, not a serious retriever: bring yours with ``retriever=``)."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

_WORD = re.compile(r"\w+")

K1 = 0.9
B = 0.4


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def lexical(texts: Sequence[str], ids: Sequence[str]) -> Callable[[str, int], list[tuple[str, float]]]:
    """A retriever over ``texts`` (one per chunk, ``ids`` their chunk ids): ``search(query, k)`` gives the
    ``k`` best ``(chunk id, score)`` pairs, best first, chunks sharing no word with the query left out."""
    postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
    lengths = []
    for i, text in enumerate(texts):
        counts = Counter(words(text))
        lengths.append(sum(counts.values()))
        for term, tf in counts.items():
            postings[term].append((i, tf))
    n = len(texts)
    avg = (sum(lengths) / n) if n else 1.0
    norm = [K1 * (1 - B + B * (length / avg if avg else 0.0)) for length in lengths]
    idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}

    def search(query: str, k: int = 10) -> list[tuple[str, float]]:
        scores: dict[int, float] = defaultdict(float)
        for term in set(words(query)):
            w = idf.get(term)
            if w is None:
                continue
            for i, tf in postings[term]:
                scores[i] += w * tf * (K1 + 1) / (tf + norm[i])
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        return [(ids[i], s) for i, s in best]

    return search


__all__ = ["lexical", "words"]
