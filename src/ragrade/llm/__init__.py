"""The LLM core shared by the judges (:mod:`ragrade.judges`) and the assessor (:mod:`ragrade.assessment`):

* :mod:`ragrade.llm.base` — the judge protocol and the values it returns (:class:`Judgment`, :class:`Usage`,
  :class:`JudgeConfigError`), and the cache key (:func:`judgment_key`);
* :mod:`ragrade.llm.backends` — the one backend registry (``offline``, ``semantic``, ``openai``, ``ollama``)
  and the judge factory of both commands;
* :mod:`ragrade.llm.tasks` — task sets: the prompts, reply schemas and reply readers a backend is given;
* :mod:`ragrade.llm.runner` — the one runner (cache reuse, first call alone, budget, stop on a
  configuration error, redaction);
* :mod:`ragrade.llm.openai` — the OpenAI-compatible backend and the one retry policy;
  :mod:`ragrade.llm.ollama` — Ollama's native API;
* :mod:`ragrade.llm.cache`, :mod:`ragrade.llm.budget`, :mod:`ragrade.llm.secrets` — the SQLite cache, the
  budget, and :func:`redact` (no piece of the API key in anything stored or shown).

See docs/judges.md ("One LLM core", "Adding a backend"). Nothing heavy is imported here.
"""

from __future__ import annotations

from ragrade.llm.base import Judge, JudgeConfigError, Judgment, Usage, judgment_key
from ragrade.llm.secrets import SECRET_PIECE, Redactor, redact

__all__ = ["SECRET_PIECE", "Judge", "JudgeConfigError", "Judgment", "Redactor", "Usage", "judgment_key", "redact"]
