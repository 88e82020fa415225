"""Passages and the seeded, stratified order in which they are asked about (docs/synthesize.md, "Sampling").

**Passages.** Every document is cut by the spans package's recursive splitter
(:func:`ragrade.spans.recursive`: paragraphs, then lines, sentences, words) into passages of at most
``size`` characters, no overlap. Passages shorter than ``min_chars`` are indexed (for the BM25 rank of the
leakage check) but never asked about.

**Order.** A question stream draws passages so that every document and every passage length is
represented early:

1. the passages that may be asked about fall into up to three length strata (the tertiles of their lengths);
2. each document's passages are shuffled (``numpy.random.default_rng((seed, stream))``) and reordered to
   cycle through the strata (its first passage of each stratum, then its second, ...);
3. the streams of the documents are interleaved: every document's first passage (documents in a shuffled
   order), then every document's second, and so on: equal allocation over documents, not proportional to
   their size.

A multi-hop stream pairs passage ``A[i]`` of one such order with the first passage of a second order
(another stream number), looked for from position ``i`` on, that lies in **another document** and forms a
pair not used before. Personas, when given, are taken in turn.

Everything depends only on the corpus, the sizes, the seed and the stream number: a run and its resumption
ask the same questions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ragrade.errors import InputError
from ragrade.spans.model import Corpus

#: Stream numbers of the question kinds (part of each stream's seed).
STREAMS = {"single": 1, "multi": 2, "abstract": 3}


@dataclass(frozen=True)
class Passage:
    """A stretch ``[start, end)`` of document ``doc`` (code points), numbered ``pid`` in its corpus."""

    pid: int
    doc: str
    start: int
    end: int
    text: str

    def to_dict(self) -> dict[str, object]:
        return {"passage": self.pid, "doc": self.doc, "start": self.start, "end": self.end}


@dataclass(frozen=True)
class Candidate:
    """One question to ask: its number (in the order asked), kind, passages and persona."""

    index: int
    kind: str
    passages: tuple[Passage, ...]
    persona: str = ""


class Passages:
    """The passages of a corpus (see the module docstring)."""

    def __init__(self, corpus: Corpus, size: int = 1200, min_chars: int = 200) -> None:
        from ragrade.spans.chunkers import recursive

        if isinstance(min_chars, bool) or not isinstance(min_chars, int) or min_chars < 1:
            raise InputError("min_passage_chars must be a positive integer", value=min_chars)
        if isinstance(size, bool) or not isinstance(size, int) or size < min_chars:
            raise InputError("passage_chars must be an integer >= min_passage_chars", value=size)
        cut = recursive(size)
        assert cut.spans is not None
        items: list[Passage] = []
        for doc in corpus:
            text = corpus[doc]
            for s, e in cut.spans(text):
                items.append(Passage(len(items), doc, s, e, text[s:e]))
        self.items = items
        self.size, self.min_chars = size, min_chars
        self.eligible = [p for p in items if p.end - p.start >= min_chars]
        if not self.eligible:
            raise InputError(f"no passage of the corpus has {min_chars} characters or more: nothing to ask about "
                             "(lower min_passage_chars)")

    def __len__(self) -> int:
        return len(self.items)

    def order(self, seed: int, stream: int) -> list[Passage]:
        """The stratified order of the eligible passages for stream number ``stream``."""
        rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, stream])
        lengths = np.array([p.end - p.start for p in self.eligible])
        edges = np.quantile(lengths, [1 / 3, 2 / 3]) if len(lengths) >= 3 else np.array([])
        stratum = np.searchsorted(edges, lengths, side="right")
        by_doc: dict[str, list[int]] = {}
        for i, p in enumerate(self.eligible):
            by_doc.setdefault(p.doc, []).append(i)
        docs = list(by_doc)
        doc_rank = {docs[i]: r for r, i in enumerate(rng.permutation(len(docs)).tolist())}
        keyed = []
        for d in docs:
            members = [by_doc[d][j] for j in rng.permutation(len(by_doc[d])).tolist()]
            seen: dict[int, int] = {}
            slots = []
            for i in members:  # the k-th passage of a stratum in this document goes to round k
                k = seen.get(int(stratum[i]), 0)
                seen[int(stratum[i])] = k + 1
                slots.append((k, int(stratum[i]), i))
            for pos, (_, _, i) in enumerate(sorted(slots)):
                keyed.append((pos, doc_rank[d], i))
        return [self.eligible[i] for _, _, i in sorted(keyed)]

    def singles(self, seed: int, personas: Sequence[str] = ()) -> Iterator[tuple[tuple[Passage, ...], str]]:
        """The single-hop stream: each passage once per persona (once without personas)."""
        order = self.order(seed, STREAMS["single"])
        rounds = max(1, len(personas))
        for r in range(rounds):
            for j, p in enumerate(order):
                yield (p,), (personas[(j + r) % len(personas)] if personas else "")

    def pairs(self, seed: int, kind: str, personas: Sequence[str] = ()) -> Iterator[tuple[tuple[Passage, ...], str]]:
        """A multi-hop stream: pairs of passages of different documents, each unordered pair once."""
        a = self.order(seed, STREAMS[kind])
        b = self.order(seed, STREAMS[kind] + 10)
        used: set[tuple[int, int]] = set()
        j = 0
        for i, first in enumerate(a):
            for step in range(len(b)):
                second = b[(i + step) % len(b)]
                key = (min(first.pid, second.pid), max(first.pid, second.pid))
                if second.doc != first.doc and key not in used:
                    used.add(key)
                    yield (first, second), (personas[j % len(personas)] if personas else "")
                    j += 1
                    break

    def documents(self) -> int:
        return len({p.doc for p in self.eligible})


__all__ = ["STREAMS", "Candidate", "Passage", "Passages"]
