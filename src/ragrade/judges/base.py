"""The judge protocol and value types (defined in the LLM core, :mod:`ragrade.llm.base`, shared with the
assessor; re-exported here, their old home) and the judgment tasks of the judge metrics (:data:`TASKS`).

A judge never raises for a failed call: failures are values, so one bad call can never abort an evaluation.
"""

from __future__ import annotations

from ragrade.llm.base import (
    MIN_SECRET_LENGTH,
    SECRET_PIECE,
    Judge,
    JudgeConfigError,
    Judgment,
    Redactor,
    Usage,
    judgment_key,
    redact,
    redact_judgment,
)
from ragrade.llm.secrets import TOKEN_PATTERNS  # noqa: F401  (kept importable from here)

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


__all__ = ["MIN_SECRET_LENGTH", "SECRET_PIECE", "TASKS", "Judge", "JudgeConfigError", "Judgment", "Redactor", "Usage",
           "judgment_key", "redact", "redact_judgment"]
