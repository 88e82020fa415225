"""The LLM core shared by the judges (:mod:`ragrade.judges`) and the assessor (:mod:`ragrade.assessment`).

* :mod:`ragrade.llm.secrets` — :func:`redact`: no piece of the API key in anything stored or shown;

Nothing heavy is imported here.
"""

from __future__ import annotations

from ragrade.llm.secrets import SECRET_PIECE, Redactor, redact

__all__ = ["SECRET_PIECE", "Redactor", "redact"]
