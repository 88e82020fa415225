"""Word tokens, content words and a small vectorised BM25: what the leakage check measures with
(docs/synthesize.md, "Leakage").

* :func:`words`: the lower-cased word tokens of a text — maximal runs of letters and digits (Unicode), so
  ``"Don't stop-loss"`` is ``["don", "t", "stop", "loss"]``;
* :func:`content_words`: those tokens minus :data:`~ragrade.synthesis.stopwords.STOP_WORDS`;
* :class:`BM25`: Okapi BM25 over a list of texts, with Lucene's weights (the ``lucene`` method of bm25s and
  of Kamphuis et al., "Which BM25 do you mean?", ECIR 2020): for a query term ``t`` and a passage ``p``,
  ``idf(t) = log(1 + (N - df + 0.5) / (df + 0.5))`` and the term's part of the score is
  ``idf(t) * tf / (tf + k1 * (1 - b + b * len(p) / avglen))``, summed over the query's terms (a term twice
  in the query counts twice); ``k1 = 1.5``, ``b = 0.75``; texts and queries are :func:`content_words`
  (lengths are counted in them). No stemming.

The index is a term-sorted postings array (term, passage, weight) built with NumPy in one pass; a query
sums the postings of its terms with one ``bincount``. ``bm25s`` gives the same scores (a test compares them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragrade.synthesis.stopwords import STOP_WORDS

_TOKEN = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """The lower-cased word tokens of ``text`` (maximal runs of letters and digits)."""
    return _TOKEN.findall(text.lower())


def content_words(text: str) -> list[str]:
    """:func:`words` without the stop words, in order, repeats kept."""
    return [w for w in words(text) if w not in STOP_WORDS]


def normalised(text: str) -> str:
    """The text as its word tokens joined by single spaces (what the lexical duplicate check compares)."""
    return " ".join(words(text))


@dataclass(frozen=True)
class BM25:
    """An index of ``n`` texts (see the module docstring). ``vocab``: term -> id; ``ptr``: the postings
    of term ``t`` are ``passage[ptr[t]:ptr[t + 1]]`` with ``weight[...]`` (idf times the term-frequency
    part)."""

    vocab: dict[str, int]
    ptr: np.ndarray
    passage: np.ndarray
    weight: np.ndarray
    n: int
    k1: float = 1.5
    b: float = 0.75

    @classmethod
    def build(cls, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> BM25:
        vocab: dict[str, int] = {}
        ids: list[int] = []
        lengths = np.zeros(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            toks = content_words(text)
            lengths[i] = len(toks)
            ids.extend(vocab.setdefault(w, len(vocab)) for w in toks)
        n = len(texts)
        terms = np.asarray(ids, dtype=np.int64)
        owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
        key, tf = np.unique(terms * max(n, 1) + owner, return_counts=True)  # sorted by term, then passage
        term, passage = key // max(n, 1), key % max(n, 1)
        df = np.bincount(term, minlength=len(vocab)).astype(np.float64)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        avg = float(lengths.mean()) if n else 0.0
        norm = k1 * (1.0 - b + b * lengths[passage] / avg) if avg > 0 else np.full(len(passage), k1)
        weight = idf[term] * tf / (tf + norm)
        ptr = np.searchsorted(term, np.arange(len(vocab) + 1))
        return cls(vocab, ptr, passage, weight, n, k1, b)

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every text for ``query`` (a text: its content words are the terms)."""
        ids = [self.vocab[w] for w in content_words(query) if w in self.vocab]
        if not ids:
            return np.zeros(self.n)
        picks = np.concatenate([np.arange(self.ptr[t], self.ptr[t + 1]) for t in ids])
        return np.bincount(self.passage[picks], weights=self.weight[picks], minlength=self.n)

    def ranks(self, query: str, targets: Sequence[int]) -> list[int]:
        """The rank of each target text under ``query``, ties counted against it: the number of texts
        scoring at least as high as the target (1 = strictly first)."""
        s = self.scores(query)
        return [int(np.count_nonzero(s >= s[t])) for t in targets]


def leakage(question: str, excerpts: Sequence[str]) -> float:
    """The share of the question's distinct content words that occur as word tokens of its excerpts
    (NaN when the question has no content word)."""
    asked = set(content_words(question))
    if not asked:
        return float("nan")
    found = set()
    for e in excerpts:
        found.update(words(e))
    return len(asked & found) / len(asked)


def excerpt_quality(text: str, min_words: int = 3) -> float:
    """How much an excerpt reads as text, in [0, 1]: the share of its non-space characters that are letters
    or digits, times ``min(1, words / min_words)`` (an excerpt of one word, a rule of dashes or a table's
    pipes scores low)."""
    marks = [c for c in text if not c.isspace()]
    if not marks:
        return 0.0
    letters = sum(1 for c in marks if c.isalnum())
    return min(1.0, len(words(text)) / max(1, min_words)) * letters / len(marks)


__all__ = ["BM25", "content_words", "excerpt_quality", "leakage", "normalised", "words"]
