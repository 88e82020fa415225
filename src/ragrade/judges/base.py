"""The judge protocol and the value types that travel between judges, the cache and the metrics.

A *judgment* is one question put to a judge: a ``task`` name (one of :data:`TASKS`) and a mapping of
input strings. The judge answers with a :class:`Judgment`: the canonical output of the task (see
:mod:`ragrade.judges.prompts` for each task's shape), or a failure with its reason. A judge never raises for
a failed call: failures are values, so one bad call can never abort an evaluation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from ragrade.errors import JudgeConfigError  # noqa: F401  (the class lives in ragrade.errors; this path is kept)

#: Secrets shorter than this are not searched for (replacing a 3-letter "key" everywhere would mangle the
#: judge's answers; real API keys are 20 characters or more).
MIN_SECRET_LENGTH = 8

_TOKEN_PATTERNS = (
    # an Authorization header or a bearer token, however it is quoted
    (re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(?:bearer\s+|basic\s+|token\s+)?[^\s'\",}]+"), r"\1***"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1***"),
    # API keys in the usual shapes (OpenAI, Anthropic, Groq, Google, Hugging Face, GitHub, AWS)
    (re.compile(r"\b(?:sk|pk|rk|gsk|xai)-[A-Za-z0-9_-]{16,}"), "***"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), "***"),
    (re.compile(r"\b(?:hf|ghp|gho|github_pat)_[A-Za-z0-9_]{16,}"), "***"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "***"),
    # "api_key": "...", api-key=...
    (re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]{8,}"), r"\1***"),
)


#: What every pattern above starts with (lower case): a string holding none of these cannot match a
#: pattern, so it skips them (most strings: a judge's reply holds no credential). Substring tests on the
#: lower-cased text: a few microseconds where one case-insensitive regular expression took tens.
_TOKEN_HINTS = ("authorization", "bearer", "api_key", "api-key", "apikey", "sk-", "pk-", "rk-", "xai-", "aiza",
                "hf_", "ghp_", "gho_", "github_pat_", "akia")


def _may_hold_token(text: str) -> bool:
    low = text.lower()
    return any(h in low for h in _TOKEN_HINTS)


#: Characters JSON writes escaped: a secret holding one may not appear as is in a value's JSON text.
_JSON_ESCAPED = ('"', "\\", *map(chr, range(32)))


def redact(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """``value`` with every secret and every token that looks like a credential replaced by ``***``: the
    given ``secrets`` (the API key, when at least :data:`MIN_SECRET_LENGTH` characters), ``Authorization``
    headers, bearer tokens and API keys in the usual shapes. Strings, lists, tuples and dicts (keys and
    values) are walked; anything else is returned as is. Everything a judge stores (the cache) or shows
    (details, errors) goes through this."""
    keys = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
    if isinstance(value, dict | list | tuple) and not any(c in k for k in keys for c in _JSON_ESCAPED):
        # One look at the whole value: nothing to replace (the usual case) means nothing to walk.
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = None
        if text is not None and not _may_hold_token(text) and not any(k in text for k in keys):
            return value

    def clean(x: Any) -> Any:
        if isinstance(x, str):
            for k in keys:
                if k in x:
                    x = x.replace(k, "***")
            if not _may_hold_token(x):
                return x
            for pattern, repl in _TOKEN_PATTERNS:
                x = pattern.sub(repl, x)
            return x
        if isinstance(x, dict):
            return {clean(k): clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        if isinstance(x, tuple):
            return tuple(clean(v) for v in x)
        return x

    return clean(value)


def redact_judgment(j: Judgment, secrets: Iterable[str | None] = ()) -> Judgment:
    """A judgment whose output and error went through :func:`redact` (the same object when clean)."""
    secrets = list(secrets)
    output = redact(j.output, secrets) if j.output is not None else None
    error = redact(j.error, secrets) if j.error is not None else None
    if output == j.output and error == j.error:
        return j
    return replace(j, output=output, error=error)

#: The judgment tasks every judge answers.
#:
#: ``chunk_verdict``    inputs ``question``, ``context`` (one retrieved chunk), ``answer`` (the reference, a
#:                      response, or ``""``): is the chunk useful for that answer / question?
#:                      output ``{"verdict": 0|1, "reason": str}``
#: ``attribution``      inputs ``question``, ``context`` (joined chunks), ``reference``: split the reference
#:                      into statements and say which ones the context supports.
#:                      output ``{"statements": [{"statement": str, "attributed": 0|1, "reason": str}]}``
#: ``entities``         input ``text``: the named entities (people, places, organisations, dates, numbers)
#:                      output ``{"entities": [str]}``
#: ``relevance``        inputs ``question``, ``context`` (one chunk): split the chunk into statements and say
#:                      which ones help answer the question.
#:                      output ``{"statements": [{"statement": str, "relevant": 0|1, "reason": str}]}``
TASKS: tuple[str, ...] = ("chunk_verdict", "attribution", "entities", "relevance")


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
