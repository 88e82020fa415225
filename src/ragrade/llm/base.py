"""The judge protocol and the value types of the LLM core: what travels between a judge (any backend),
the runner, the cache and the scorers of the judges and of the assessor.

A *judgment* is one question put to a judge: a ``task`` name (e.g. one of :data:`ragrade.judges.TASKS`,
or the assessor's ``grade``) and a mapping of input strings. The judge answers with a :class:`Judgment`: the canonical output of the task (see
:mod:`ragrade.judges.prompts` and :mod:`ragrade.assessment.prompt` for each task's shape), or a failure with its reason. A judge never raises for
a failed call: failures are values, so one bad call can never abort an evaluation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ragrade.errors import JudgeConfigError
from ragrade.llm.secrets import MIN_SECRET_LENGTH, SECRET_PIECE, Redactor, redact

__all__ = ["MIN_SECRET_LENGTH", "SECRET_PIECE", "Judge", "JudgeConfigError", "Judgment", "Redactor", "Usage",
           "judgment_key", "redact", "redact_judgment"]



def redact_judgment(j: Judgment, secrets: Iterable[str | None] | Redactor = ()) -> Judgment:
    """A judgment whose output and error went through :func:`redact` (the same object when clean)."""
    r = secrets if isinstance(secrets, Redactor) else Redactor(secrets)
    output = r(j.output) if j.output is not None else None
    error = r(j.error) if j.error is not None else None
    if output == j.output and error == j.error:
        return j
    return replace(j, output=output, error=error)

@dataclass(frozen=True)
class Usage:
    """Tokens spent on one judgment (all attempts) and its cost in the judge's currency unit."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost + other.cost,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Judgment:
    """The answer to one judgment request.

    ``output`` is the task's canonical dict when ``ok``; otherwise ``None`` and ``error`` says why.
    ``transient`` marks failures that may succeed later (network, rate limit, server error): a cached
    transient failure is retried on the next run, a permanent one (the model's answer could not be parsed
    after the allowed re-asks, at temperature 0 and a fixed seed) is not, unless asked.
    """

    output: dict[str, Any] | None
    error: str | None = None
    transient: bool = False
    usage: Usage = field(default_factory=Usage)
    attempts: int = 1
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.output is not None

    @classmethod
    def failed(cls, reason: str, *, transient: bool, usage: Usage | None = None, attempts: int = 1) -> Judgment:
        return cls(None, reason, transient, usage or Usage(), attempts)


@runtime_checkable
class Judge(Protocol):
    """What the metrics need from a judge.

    ``name``, ``model`` and ``prompt_version`` identify the judge in the cache key: change any of them
    (another model, a reworded prompt, another threshold of an offline judge) and old judgments are not
    reused. ``cacheable`` is False for judges that are cheaper to run than to look up (the lexical judge).
    ``max_concurrency`` bounds how many judgments run at once.

    A judge does not raise for a failed judgment; the one exception is :class:`JudgeConfigError` (wrong
    key, unknown model or URL, no server), which stops the run.
    """

    name: str
    model: str
    prompt_version: str
    cacheable: bool
    max_concurrency: int

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        """Answer one judgment. Must not raise for a failed call: return :meth:`Judgment.failed` (raise
        :class:`JudgeConfigError` only when no judgment can succeed as configured)."""
        ...

    async def aclose(self) -> None:
        """Release connections or models."""
        ...


def judgment_key(judge: Judge, task: str, inputs: Mapping[str, str]) -> str:
    """The cache key of a judgment: SHA-256 over judge name, model, prompt version, task and inputs."""
    payload = json.dumps(
        {
            "judge": judge.name,
            "model": judge.model,
            "prompt_version": judge.prompt_version,
            "task": task,
            "inputs": dict(sorted(inputs.items())),
        },
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
