"""Judge-based context metrics: LLM context precision (with and without a reference), context recall,
context entities recall and context relevancy.

A *judge* answers small, cacheable questions ("is this chunk useful for this answer?", "which statements
of the reference does the context support?"). Backends:

* :class:`OpenAIJudge` — any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp),
  needs the ``llm`` extra (httpx);
* :class:`LexicalJudge` — offline, no server: statement splitting and fuzzy word overlap (``text`` extra,
  rapidfuzz); the default;
* :class:`SemanticJudge` — offline, sentence embeddings from the packaged all-MiniLM-L6-v2 model
  (``semantic`` extra);
* :class:`ScriptedJudge` — fixed answers, for tests.

Run them with :func:`evaluate_judged`, which returns a :class:`ragrade.Result`. Judgments are cached in SQLite (:class:`JudgmentCache`). Nothing
heavy is imported until it is used.
"""

from __future__ import annotations

from typing import Any

from ragrade.judges.base import TASKS
from ragrade.judges.metrics import JUDGE_METRICS, PROFILES, JudgeMetric, parse, parse_many
from ragrade.judges.runner import (
    Example,
    Progress,
    aevaluate_judged,
    evaluate_judged,
    examples_from,
)
from ragrade.judges.scripted import ScriptedJudge
from ragrade.llm.base import Judge, Judgment, Usage, judgment_key
from ragrade.llm.cache import JudgmentCache, default_cache_path

_LAZY = {
    "OpenAIJudge": "ragrade.judges.openai",
    "OpenAISettings": "ragrade.judges.openai",
    "LexicalJudge": "ragrade.judges.offline",
    "SemanticJudge": "ragrade.judges.offline",
    "extract_entities": "ragrade.judges.offline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragrade.judges' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "JUDGE_METRICS",
    "PROFILES",
    "TASKS",
    "Example",
    "Judge",
    "JudgeMetric",
    "Judgment",
    "JudgmentCache",
    "LexicalJudge",
    "OpenAIJudge",
    "OpenAISettings",
    "Progress",
    "ScriptedJudge",
    "SemanticJudge",
    "Usage",
    "aevaluate_judged",
    "default_cache_path",
    "evaluate_judged",
    "examples_from",
    "extract_entities",
    "judgment_key",
    "parse",
    "parse_many",
]
