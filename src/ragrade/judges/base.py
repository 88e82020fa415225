"""The judgment tasks of the judge metrics (:data:`TASKS`). The judge protocol and its value types are the
LLM core's (:mod:`ragrade.llm.base`, shared with the assessor).

A judge never raises for a failed call: failures are values, so one bad call can never abort an evaluation.
"""

from __future__ import annotations

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


__all__ = ["TASKS"]
