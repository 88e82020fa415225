"""The one registry of judge backends, for the judge metrics and the assessor alike.

A backend is one entry of :data:`BACKENDS`: its name (the ``--judge`` choice of ``ragrade judge`` and
``ragrade assess``), where its class lives (imported only when it is used), whether it is an LLM backend
(it then takes the shared :class:`LLMSettings`: model, base URL, key variable, concurrency, timeout,
retries, ...) and the task sets it serves. An LLM backend serves every task set (it is given one); an
offline backend answers the task sets it names: with its own class (``offline=``, a plug-in), or with the
answerer a task set defines for it (``tasks=``: :attr:`ragrade.llm.tasks.TaskSet.offline`; the built-in
``offline`` and ``semantic`` backends, whose answerers live with the judge metrics and the assessor). The
LLM core names no module above it (docs/architecture.md, "Layers").

Adding a backend is one file plus one line here (docs/judges.md, "Adding a backend"):

1. a module with a class built as ``Cls(settings, tasks=task_set)`` (LLM backends, e.g. a subclass of
   :class:`ragrade.llm.openai.OpenAIBackend` speaking another HTTP API) or ``Cls()`` (offline), that
   answers ``await judge(task, inputs) -> Judgment`` (:class:`ragrade.llm.base.Judge`);
2. a :class:`Backend` line in :data:`BACKENDS`.

The command-line choices, the judge factory of both commands, and the cache key (the backend's ``name``)
follow from it. :func:`register` adds a backend at run time (a plug-in, a test).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import UnknownNameError
from ragrade.llm.openai import OpenAISettings as LLMSettings
from ragrade.llm.tasks import TaskSet


@dataclass(frozen=True)
class Backend:
    """One judge backend. ``llm``: ``"module:Class"`` of an LLM backend (serves every task set, takes the
    shared settings); ``offline``: ``{task set name: "module:Class"}`` of a backend that needs no server;
    ``tasks``: the task sets whose own answerer of this backend's name serves it (``TaskSet.offline``).
    ``help``: one line for ``--help``."""

    name: str
    help: str
    llm: str | None = None
    offline: Mapping[str, str] = field(default_factory=dict)
    tasks: tuple[str, ...] = ()

    def serves(self, tasks: str) -> bool:
        return self.llm is not None or tasks in self.offline or tasks in self.tasks


BACKENDS: dict[str, Backend] = {
    "offline": Backend("offline", "offline word overlap (rapidfuzz), no server: an approximation",
                       tasks=("context", "grade")),
    "semantic": Backend("semantic", "offline sentence embeddings (needs ragrade[semantic]): an approximation",
                        tasks=("context", "grade")),
    "openai": Backend("openai", "any OpenAI-compatible chat-completions server (needs ragrade[llm])",
                      llm="ragrade.llm.openai:OpenAIBackend"),
    "ollama": Backend("ollama", "Ollama's native /api/chat (needs ragrade[llm])", llm="ragrade.llm.ollama:OllamaJudge"),
}


def register(backend: Backend) -> None:
    """Add (or replace) a backend at run time."""
    BACKENDS[backend.name] = backend


def names(tasks: str | None = None) -> list[str]:
    """The backends (serving the task set ``tasks``, when given)."""
    return [n for n, b in BACKENDS.items() if tasks is None or b.serves(tasks)]


def get(name: str, tasks: str | None = None) -> Backend:
    b = BACKENDS.get(name)
    if b is None or (tasks is not None and not b.serves(tasks)):
        raise UnknownNameError("judge backend", name, names(tasks), show_known=True)
    return b


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_judge(name: str, tasks: TaskSet, settings: LLMSettings | None = None, **overrides: Any) -> Any:
    """A judge of backend ``name`` for the task set ``tasks``. LLM backends get ``settings`` (the shared
    :class:`LLMSettings`) with ``overrides``; the reply cap defaults to the task set's. Offline backends
    take no setting."""
    b = get(name, tasks.name)
    if b.llm is None:
        target = b.offline.get(tasks.name) or tasks.offline.get(b.name)
        if target is None:
            raise UnknownNameError("judge backend", name, names(tasks.name), show_known=True)
        return _load(target)()
    if settings is None and "max_tokens" not in overrides:
        overrides["max_tokens"] = tasks.max_tokens
    return _load(b.llm)(settings, tasks=tasks, **overrides)


def is_llm(name: str) -> bool:
    return get(name).llm is not None


__all__ = ["BACKENDS", "Backend", "LLMSettings", "get", "is_llm", "make_judge", "names", "register"]
