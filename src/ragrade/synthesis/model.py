"""What a synthesized (or imported) test set is: items anchored to character spans, the candidates refused
with their reasons, and the provenance (docs/synthesize.md, "Output").

* :class:`Excerpt` — one stretch ``[start, end)`` of a document (code points) that answers a question, with
  how it was located (``exact``, ``whitespace``, ``fuzzy``) and the locator's score (100 unless fuzzy);
* :class:`Item` — a kept question: its id, kind, text, answer, excerpts, the passages it was asked about and
  its check scores;
* :class:`Reject` — a candidate that was refused (or not used), with the stage and the reason;
* :class:`TestSet` — all of them, the corpus, the provenance record and this run's counters; ``spans``
  (a :class:`~ragrade.spans.model.SpanTruth`), ``topics`` and :meth:`TestSet.write`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.spans.model import Corpus, SpanTruth
from ragrade.synthesis.sample import Passage


@dataclass(frozen=True)
class Excerpt:
    """One located excerpt; ``text`` is ``document[start:end]`` (not the model's copy)."""

    doc: str
    start: int
    end: int
    text: str
    passage: int = -1
    method: str = "exact"
    score: float = 100.0

    def to_dict(self) -> dict[str, Any]:
        return {"doc": self.doc, "start": self.start, "end": self.end, "text": self.text, "passage": self.passage,
                "method": self.method, "score": self.score}


def _clean(v: Any) -> Any:
    """JSON-ready: NaN becomes None, tuples lists, mappings dicts."""
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, Mapping):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_clean(x) for x in v]
    return v


@dataclass(frozen=True)
class Item:
    """A kept question (see the module docstring). ``scores``: ``leakage``, ``bm25_rank`` (the rank at which
    every gold passage is in a BM25 ranking of all passages), ``bm25_ranks`` (each gold passage's),
    ``excerpt_quality``, ``excerpt_share``, ``location`` (the lowest locator score), ``duplicate`` (the
    highest lexical similarity to an earlier question), ``duplicate_embedding`` (when embeddings are used),
    ``answerable`` (1, or None when not checked)."""

    query: str
    kind: str
    question: str
    answer: str
    excerpts: tuple[Excerpt, ...]
    passages: tuple[Passage, ...]
    persona: str = ""
    candidate: int = -1
    scores: Mapping[str, Any] = field(default_factory=dict)

    def spans(self) -> list[tuple[str, int, int]]:
        """The excerpts as disjoint spans: overlapping or touching excerpts of one document merged."""
        out: list[tuple[str, int, int]] = []
        for doc, s, e in sorted((x.doc, x.start, x.end) for x in self.excerpts):
            if out and out[-1][0] == doc and s <= out[-1][2]:
                out[-1] = (doc, out[-1][1], max(out[-1][2], e))
            else:
                out.append((doc, s, e))
        return out

    def to_dict(self) -> dict[str, Any]:
        return _clean({"record": "item", "query": self.query, "kind": self.kind, "question": self.question,
                       "answer": self.answer, "persona": self.persona, "candidate": self.candidate,
                       "passages": [p.to_dict() for p in self.passages],
                       "excerpts": [x.to_dict() for x in self.excerpts], "scores": dict(self.scores)})


@dataclass(frozen=True)
class Reject:
    """A candidate not kept: ``stage`` (``generation``, ``location``, ``quality``, ``duplicate``,
    ``leakage``, ``answerability``, ``import``; ``unused`` for a good candidate its kind no longer needed,
    ``budget`` for one the budget left unchecked) and ``reason``."""

    candidate: int
    kind: str
    stage: str
    reason: str
    question: str | None = None
    passages: tuple[Passage, ...] = ()
    scores: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return _clean({"candidate": self.candidate, "kind": self.kind, "stage": self.stage, "reason": self.reason,
                       "question": self.question, "passages": [p.to_dict() for p in self.passages],
                       "scores": dict(self.scores)})


@dataclass(frozen=True, eq=False)
class TestSet:
    """A test set (see the module docstring). ``provenance``: the run record written first in
    ``provenance.jsonl`` (model, prompt hashes, parameters, seed, summary); ``counts``: this run's calls,
    cache hits, tokens and unasked judgments (shown, never written: a resumed run writes the same files);
    ``complete``: every kind reached its share of ``n``."""

    __test__ = False  # not a pytest class

    items: tuple[Item, ...]
    rejects: tuple[Reject, ...]
    corpus: Corpus
    provenance: Mapping[str, Any] = field(default_factory=dict)
    counts: Mapping[str, Any] = field(default_factory=dict)
    complete: bool = True

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        kinds: dict[str, int] = {}
        for it in self.items:
            kinds[it.kind] = kinds.get(it.kind, 0) + 1
        shown = ", ".join(f"{k} {v}" for k, v in kinds.items())
        return f"TestSet({len(self.items)} questions ({shown}), {len(self.rejects)} rejected)"

    @property
    def topics(self) -> dict[str, str]:
        """Query id -> question."""
        return {it.query: it.question for it in self.items}

    @property
    def spans(self) -> SpanTruth:
        """The span ground truth: one row per merged excerpt span, grade 1, with its text."""
        q: list[str] = []
        d: list[str] = []
        s: list[int] = []
        e: list[int] = []
        t: list[str] = []
        for it in self.items:
            for doc, a, b in it.spans():
                q.append(it.query)
                d.append(doc)
                s.append(a)
                e.append(b)
                t.append(self.corpus[doc][a:b])
        return SpanTruth.from_columns(q, d, s, e, None, t, questions=self.topics, source="synthesized test set")

    def summary(self) -> dict[str, Any]:
        """The summary record of the provenance (kept per kind, rejects per stage, leakage)."""
        return dict(self.provenance.get("summary", {}))

    def to_frame(self) -> Any:
        """One row per item: id, kind, question, spans and every score (a pandas DataFrame)."""
        import pandas as pd

        rows = []
        for it in self.items:
            row: dict[str, Any] = {"query": it.query, "kind": it.kind, "question": it.question,
                                   "spans": len(it.spans())}
            row.update({k: v for k, v in it.scores.items() if not isinstance(v, list | tuple)})
            rows.append(row)
        return pd.DataFrame(rows)

    def write(self, directory: Any) -> dict[str, str]:
        """Write ``spans.jsonl``, ``topics.tsv``, ``provenance.jsonl`` and ``rejects.jsonl`` into
        ``directory`` (created when missing), each to a temporary name renamed when complete. Returns
        the paths."""
        from ragrade.synthesis.write import write_test_set

        return write_test_set(self, directory)


__all__ = ["Excerpt", "Item", "Reject", "TestSet"]
