"""The checks of a candidate question (docs/synthesize.md, "Checks"), each a recorded score with a threshold:

1. **location** — every excerpt is found in the passage it was copied from by the spans package's locator
   (:func:`ragrade.spans.locate_chunks`: exact, whitespace-normalised, then rapidfuzz with a floor); an
   excerpt not found refuses the candidate (never kept as loose text). A multi-hop candidate needs an
   excerpt in each of its two passages.
2. **excerpt quality** — :func:`~ragrade.synthesis.lexical.excerpt_quality` of its worst excerpt (at least
   ``min_excerpt_quality``), at most ``max_excerpts`` excerpts, and the excerpts cover at most
   ``max_excerpt_share`` of the passages' characters (an "excerpt" that is the whole passage anchors nothing);
3. **leakage** — ``leakage`` (share of the question's content words found in its excerpts) and ``bm25_rank``
   (the rank, in a BM25 ranking of every passage of the corpus under the question, at which all its gold
   passages have appeared); thresholds ``max_leakage`` and ``min_bm25_rank`` (off by default: recorded);
4. **duplicates** — :class:`Duplicates`: the highest similarity to an earlier question (lexical: rapidfuzz's
   Indel ratio of the normalised questions; embeddings: cosine, when an encoder is available), refused at
   ``max_duplicate`` / ``max_duplicate_embedding``;
5. **answerability** — a second LLM call (:mod:`ragrade.synthesis.generate`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ragrade.synthesis.lexical import BM25, excerpt_quality, leakage, normalised
from ragrade.synthesis.model import Excerpt
from ragrade.synthesis.sample import Candidate, Passage


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of the checks (see the module docstring); None: recorded only."""

    fuzzy_floor: float = 90.0
    max_excerpts: int = 5
    min_excerpt_quality: float = 0.5
    max_excerpt_share: float = 0.6
    max_leakage: float | None = None
    min_bm25_rank: int | None = None
    max_duplicate: float = 0.9
    max_duplicate_embedding: float = 0.9

    def __post_init__(self) -> None:
        from ragrade.errors import InputError

        shares = {"min_excerpt_quality": (0, 1), "max_excerpt_share": (0, 1), "max_leakage": (0, 1),
                  "max_duplicate": (0, 1), "max_duplicate_embedding": (-1, 1), "fuzzy_floor": (0, 100)}
        for name, (lo, hi) in shares.items():
            v = getattr(self, name)
            if v is None and name == "max_leakage":
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
                raise InputError(f"{name} must be a number from {lo} to {hi}", value=v)
        for name in ("max_excerpts", "min_bm25_rank"):
            v = getattr(self, name)
            if (v is not None or name == "max_excerpts") and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise InputError(f"{name} must be a positive integer", value=v)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class Draft:
    """A candidate whose reply was read: its question, answer, located excerpts and scores so far."""

    candidate: Candidate
    question: str
    answer: str
    excerpts: list[Excerpt]
    scores: dict[str, Any]


class Refusal(NamedTuple):
    """Why a check refused a candidate: the ``stage`` (the check) and the ``reason``."""

    stage: str
    reason: str


# -- location -------------------------------------------------------------------------------------------------

def _hints(c: Candidate, where: int) -> list[Passage]:
    """The passages an excerpt said to come from passage ``where`` (0: not said) is looked for in, in turn."""
    ps = list(c.passages)
    if len(ps) == 1:
        return ps
    first = ps[where - 1] if where in (1, 2) else ps[0]
    return [first, *[p for p in ps if p is not first]]


def locate(replies: Sequence[tuple[Candidate, Mapping[str, Any]]], floor: float) -> list[list[Excerpt] | str]:
    """For each (candidate, reply), its excerpts located in the documents, or why one could not be."""
    from ragrade.spans.locate import locate_chunks

    wanted: list[tuple[int, int, list[Passage]]] = []  # (reply, excerpt, passages to try)
    texts: list[str] = []
    for r, (c, out) in enumerate(replies):
        for x, e in enumerate(out["excerpts"]):
            wanted.append((r, x, _hints(c, int(e.get("passage", 0)))))
            texts.append(e["text"])
    found: dict[int, Excerpt] = {}
    for attempt in range(2):  # the passage named first, then the other passage of a pair
        todo = [i for i, (_, _, hints) in enumerate(wanted) if i not in found and attempt < len(hints)]
        if not todo:
            break
        passages = {f"p{wanted[i][2][attempt].pid}": wanted[i][2][attempt] for i in todo}
        located = locate_chunks({k: p.text for k, p in passages.items()}, [texts[i] for i in todo],
                                docs=[f"p{wanted[i][2][attempt].pid}" for i in todo], ids=[str(i) for i in todo],
                                ordered=False, floor=floor)
        scores = {todo[j]: s for j, s in located.report.fuzzy_scores.items()}
        for cid, key, s, e in zip(located.chunk_id.tolist(), located.doc.tolist(), located.start.tolist(),
                                  located.end.tolist(), strict=True):
            i, p = int(cid), passages[key]
            method = "exact" if p.text[s:e] == texts[i] else "fuzzy" if i in scores else "whitespace"
            found[i] = Excerpt(p.doc, p.start + s, p.start + e, p.text[s:e], p.pid, method,
                               float(scores.get(i, 100.0)))
    return _collect(replies, wanted, texts, found)


def _collect(replies: Sequence[tuple[Candidate, Mapping[str, Any]]], wanted: list[tuple[int, int, list[Passage]]],
             texts: list[str], found: dict[int, Excerpt]) -> list[list[Excerpt] | str]:
    """Each reply's located excerpts in its order, or why its first missing excerpt was not found."""
    located: list[list[Excerpt]] = [[] for _ in replies]
    missing: dict[int, str] = {}
    for i, (r, _x, hints) in enumerate(wanted):
        if r in missing:
            continue
        if i not in found:
            where = " or ".join(f"passage {replies[r][0].passages.index(h) + 1}" for h in hints)
            missing[r] = f"an excerpt is not in {where}: {_clip(texts[i])!r}"
        else:
            located[r].append(found[i])
    return [missing.get(r, located[r]) for r in range(len(replies))]


def _clip(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


# -- quality and leakage --------------------------------------------------------------------------------------

def covered(excerpts: Sequence[Excerpt]) -> int:
    """Characters covered by the excerpts (overlaps counted once)."""
    total, doc, lo, hi = 0, None, 0, 0
    for d, s, e in sorted((x.doc, x.start, x.end) for x in excerpts):
        if d == doc and s <= hi:
            hi = max(hi, e)
        else:
            total += hi - lo
            doc, lo, hi = d, s, e
    return total + hi - lo


def quality(d: Draft, t: Thresholds) -> Refusal | None:
    """Record and check the excerpts' number, quality and share of the passages (a :class:`Refusal` or None)."""
    c = d.candidate
    d.scores["excerpts"] = len(d.excerpts)
    d.scores["location"] = min(x.score for x in d.excerpts)
    d.scores["excerpt_quality"] = min(excerpt_quality(x.text) for x in d.excerpts)
    d.scores["excerpt_share"] = covered(d.excerpts) / sum(p.end - p.start for p in c.passages)
    if len(c.passages) > 1 and {x.passage for x in d.excerpts} != {p.pid for p in c.passages}:
        return Refusal("location", "a multi-hop question needs an excerpt from each of its two passages")
    if len(d.excerpts) > t.max_excerpts:
        return Refusal("quality", f"{len(d.excerpts)} excerpts (at most {t.max_excerpts})")
    if d.scores["excerpt_quality"] < t.min_excerpt_quality:
        return Refusal("quality", f"excerpt quality {d.scores['excerpt_quality']:.2f} is below "
                                  f"{t.min_excerpt_quality:g}")
    if d.scores["excerpt_share"] > t.max_excerpt_share:
        return Refusal("quality", f"the excerpts cover {d.scores['excerpt_share']:.0%} of the passages (at most "
                                  f"{t.max_excerpt_share:.0%})")
    return None


def gold_passages(excerpts: Sequence[Excerpt]) -> list[int]:
    """The passages holding the excerpts (each excerpt's ``passage``), in order of first appearance."""
    return list(dict.fromkeys(x.passage for x in excerpts if x.passage >= 0))


def leak(d: Draft, index: BM25, t: Thresholds) -> Refusal | None:
    """Record ``leakage``, ``bm25_ranks`` and ``bm25_rank``; check their thresholds (a :class:`Refusal` or None)."""
    d.scores["leakage"] = leakage(d.question, [x.text for x in d.excerpts])
    ranks = index.ranks(d.question, gold_passages(d.excerpts))
    d.scores["bm25_ranks"] = ranks
    d.scores["bm25_rank"] = max(ranks) if ranks else None
    lk = d.scores["leakage"]
    if t.max_leakage is not None and lk == lk and lk > t.max_leakage:
        return Refusal("leakage", f"leakage {lk:.2f} is above {t.max_leakage:g}")
    if t.min_bm25_rank is not None and ranks and max(ranks) < t.min_bm25_rank:
        return Refusal("leakage", f"BM25 ranks its gold passages by {max(ranks)} (at least {t.min_bm25_rank} "
                                  "asked)")
    return None


# -- duplicates -----------------------------------------------------------------------------------------------

Encoder = Callable[[list[str]], Any]


class Duplicates:
    """The questions kept or waiting so far, and the similarity of a new one to them (see the module
    docstring). ``encoder``: texts -> embeddings (None: lexical only)."""

    def __init__(self, thresholds: Thresholds, encoder: Encoder | None = None) -> None:
        from ragrade.errors import require

        self.fuzz = require("rapidfuzz.fuzz", package="rapidfuzz", extra="text", purpose="the duplicate check")
        self.process = require("rapidfuzz.process", package="rapidfuzz", extra="text", purpose="the duplicate check")
        self.t, self.encoder = thresholds, encoder
        self.texts: list[str] = []
        self.queries: list[str] = []
        self.vectors: list[np.ndarray] = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        assert self.encoder is not None
        v = np.asarray(self.encoder(texts), dtype=np.float64)
        norm = np.linalg.norm(v, axis=1, keepdims=True)
        return np.divide(v, norm, out=np.zeros_like(v), where=norm > 0)

    def check(self, question: str, label: str, scores: dict[str, Any]) -> Refusal | None:
        """Record ``duplicate`` (and ``duplicate_embedding``) of ``question`` against those added before;
        a :class:`Refusal` above a threshold, else adds it under ``label`` (None)."""
        norm = normalised(question)
        lexical = 0.0
        if self.texts:
            sims = self.process.cdist([norm], self.texts, scorer=self.fuzz.ratio, dtype=np.float64)[0] / 100.0
            best = int(np.argmax(sims))
            lexical = float(sims[best])
            scores["duplicate"] = lexical
            if lexical >= self.t.max_duplicate:
                return Refusal("duplicate", f"a duplicate of {self.queries[best]} (lexical similarity "
                                            f"{lexical:.2f})")
        else:
            scores["duplicate"] = 0.0
        vec = None
        if self.encoder is not None:
            vec = self._embed([question])[0]
            cos = [float(vec @ v) for v in self.vectors]
            best_e = int(np.argmax(cos)) if cos else -1
            scores["duplicate_embedding"] = cos[best_e] if cos else 0.0
            if cos and cos[best_e] >= self.t.max_duplicate_embedding:
                return Refusal("duplicate", f"a duplicate of {self.queries[best_e]} (embedding similarity "
                                            f"{cos[best_e]:.2f})")
        self.texts.append(norm)
        self.queries.append(label)
        if vec is not None:
            self.vectors.append(vec)
        return None

    def remove(self, label: str) -> None:
        """Forget the question added under ``label`` (it was refused later)."""
        if label in self.queries:
            i = self.queries.index(label)
            del self.texts[i], self.queries[i]
            if self.vectors:
                del self.vectors[i]


def default_encoder(embeddings: Any) -> Encoder | None:
    """The encoder of the embedding duplicate check: ``embeddings`` None (the semantic extra's MiniLM when
    installed, else none), False (none), True (the extra's, required) or a callable ``texts -> vectors``."""
    if embeddings is False:
        return None
    if callable(embeddings):
        return embeddings
    from ragrade.errors import MissingDependencyError

    try:
        from ragrade.matching.semantic import default_encoder as minilm

        return minilm()
    except MissingDependencyError:
        if embeddings is True:
            raise
        return None


__all__ = ["Draft", "Duplicates", "Refusal", "Thresholds", "covered", "default_encoder", "gold_passages", "leak",
           "locate", "quality"]
