"""What an LLM backend asks: a *task set* — the prompt of each task, the JSON schema of its reply and the
reader of the reply — as data, so that every backend serves the judge metrics and the assessor alike.

Two task sets exist: the judge metrics' (``ragrade.judges.prompts.TASK_SET``: ``chunk_verdict``,
``attribution``, ``entities``, ``relevance``) and the assessor's (``ragrade.assessment.prompt.TASK_SET``:
``graded_relevance``). A backend gets one at construction (``tasks=``) and never knows which it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import OutputError


@dataclass(frozen=True)
class TaskSet:
    """``name``: what the tasks are for (``"context"``: the judge metrics, ``"grade"``: the assessor).
    ``prompt_version``: part of every cache key (bumped when a prompt changes). ``messages(task, inputs)``:
    the chat messages; ``schema(task)``: the JSON schema of the reply, None for a task not in the set;
    ``parse(task, text)``: the canonical output (raises :class:`OutputError`).
    ``max_tokens``: the reply cap a backend uses unless told otherwise. ``offline``: the answerers that
    need no server, ``{backend name: "module:Class"}`` (built as ``Class()``), defined with the tasks they
    answer: the LLM core names no module above it."""

    name: str
    prompt_version: str
    messages: Callable[[str, Mapping[str, str]], list[dict[str, str]]]
    schema: Callable[[str], dict[str, Any] | None]
    parse: Callable[[str, str], dict[str, Any]]
    max_tokens: int | None = 1024
    offline: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)


__all__ = ["OutputError", "TaskSet"]
