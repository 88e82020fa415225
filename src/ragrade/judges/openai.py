"""The LLM judge of the judge metrics: the OpenAI-compatible backend of the LLM core
(:mod:`ragrade.llm.openai`) asking the judge metrics' tasks (:data:`ragrade.judges.prompts.TASK_SET`).
Re-exports the settings and the backend's helpers from their new home."""

from __future__ import annotations

from typing import Any

from ragrade.judges.prompts import TASK_SET
from ragrade.llm.openai import JudgeStats, OpenAIBackend, OpenAISettings
from ragrade.llm.tasks import TaskSet


class OpenAIJudge(OpenAIBackend):
    """LLM judge over an OpenAI-compatible ``/chat/completions`` endpoint, asking the judge metrics' tasks
    unless given another task set. ``OpenAIJudge(model=..., base_url=...)`` or ``OpenAIJudge(settings)``;
    keyword arguments override the settings (:class:`OpenAISettings`). Use ``async with`` or call
    :meth:`aclose`."""

    def __init__(self, settings: OpenAISettings | None = None, *, tasks: TaskSet | None = None,
                 **overrides: Any) -> None:
        super().__init__(settings, tasks=tasks or TASK_SET, **overrides)


__all__ = ["JudgeStats", "OpenAIJudge", "OpenAISettings"]
