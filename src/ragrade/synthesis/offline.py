"""An offline stand-in for the LLM: ``synthesize(..., backend="offline")`` (docs/synthesize.md, "Without a
server").

:class:`ExtractiveJudge` answers the synthesis task set with no model: for each passage it takes the
sentence with the most content words (the first of equals) as the excerpt, and asks about that sentence's
four longest content words; a two-passage task takes one sentence of each. The answerability check says
yes when half the question's content words are in the excerpts. Its questions leak their excerpts by
construction (leakage near 1, BM25 ranks near 1): it shows the mechanics — sampling, location, checks,
files, evaluation under any chunking — without a server, it does not make a test set to trust.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ragrade.llm.base import Judgment
from ragrade.synthesis import prompts
from ragrade.synthesis.lexical import content_words

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def _sentence(passage: str) -> str:
    best, score = passage.strip(), -1
    for m in _SENTENCE.finditer(passage):
        s = m.group(0).strip()
        n = len(set(content_words(s)))
        if n > score and len(s.split()) >= 4:
            best, score = s, n
    return best


class ExtractiveJudge:
    """The offline question writer (see the module docstring): a judge of the LLM core."""

    name = "offline-extractive"
    model = "extractive"
    prompt_version = prompts.PROMPT_VERSION + "+extractive-1"
    cacheable = False  # cheaper to run than to look up
    max_concurrency = 64
    approximation = True

    def __repr__(self) -> str:
        return "ExtractiveJudge()"

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        if task == prompts.ANSWERABILITY:
            asked = set(content_words(inputs["question"]))
            found = set(content_words(inputs["excerpts"]))
            return Judgment({"answerable": int(bool(asked) and len(asked & found) * 2 >= len(asked))})
        if task not in prompts.KIND_TASK.values():
            return Judgment.failed(f"unknown task {task!r}", transient=False)
        passages = [inputs[k] for k in ("passage_1", "passage_2") if inputs.get(k)]
        sentences = [_sentence(p) for p in passages]
        words: list[str] = []
        for s in sentences:
            words += sorted(dict.fromkeys(content_words(s)), key=lambda w: (-len(w), w))[:4 // len(sentences)]
        question = ("What do the records say about " if task == prompts.KIND_TASK["abstract"] else "Which ") + \
            ", ".join(words) + "?"
        out: dict[str, Any] = {"question": question, "answer": " ".join(sentences),
                               "excerpts": [{"passage": i, "text": s} for i, s in enumerate(sentences, 1)]}
        return Judgment(out)

    async def aclose(self) -> None:
        return None


__all__ = ["ExtractiveJudge"]
