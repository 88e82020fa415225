"""A backend for Ollama's native chat API (``POST {base_url}/api/chat``), written as the checklist of
docs/judges.md ("Adding a backend") says: this one file plus one line in :data:`ragrade.llm.backends.BACKENDS`.

It inherits everything but the wire format from :class:`~ragrade.llm.openai.OpenAIBackend`: retries with
backoff and ``Retry-After``, configuration errors (401/403/404, nothing listening) that stop the run after
one call, the structured-output fallback, the key's handling and redaction, token and cost counting. What
differs: the request (``format`` holds the JSON schema, or ``"json"``; ``options`` holds temperature, seed
and ``num_predict``; ``stream`` is off), the reply (``message.content``), the cut reply
(``done_reason == "length"``) and the usage (``prompt_eval_count``, ``eval_count``).

``base_url`` is the server's root, e.g. ``http://localhost:11434`` (not ``.../v1``: that is Ollama's
OpenAI-compatible endpoint, served by the ``openai`` backend).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragrade.llm.base import Usage
from ragrade.llm.openai import OpenAIBackend, bounded_schema
from ragrade.llm.tasks import OutputError


class OllamaJudge(OpenAIBackend):
    """Ollama's native ``/api/chat`` (see the module docstring). Built as ``OllamaJudge(settings, tasks=...)``."""

    name = "ollama"
    endpoint = "api/chat"
    format_field = "format"

    def request_body(self, task: str, inputs: Mapping[str, str], mode: str) -> dict[str, Any]:
        s = self.settings
        options: dict[str, Any] = {"temperature": s.temperature}
        if s.seed is not None:
            options["seed"] = s.seed
        if s.max_tokens is not None:
            options["num_predict"] = s.max_tokens
        body: dict[str, Any] = {"model": s.model, "messages": self.messages(task, inputs), "stream": False,
                                "options": options}
        if mode in ("json_schema", "json_object_schema"):
            body["format"] = bounded_schema(self.schema(task) or {}, s.max_items)
        elif mode == "json_object":
            body["format"] = "json"
        body.update(s.extra_body)
        return body

    @staticmethod
    def reply_text(data: Mapping[str, Any]) -> str:
        msg = data.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise OutputError(f"response has no message.content: {json.dumps(data)[:200]!r}")
        return content

    @staticmethod
    def reply_cut(data: Mapping[str, Any]) -> bool:
        return data.get("done_reason") == "length"

    def reply_usage(self, data: Mapping[str, Any]) -> Usage:
        pt, ct = data.get("prompt_eval_count") or 0, data.get("eval_count") or 0
        pt, ct = (int(pt), int(ct)) if isinstance(pt, int | float) and isinstance(ct, int | float) else (0, 0)
        s = self.settings
        return Usage(pt, ct, (pt * s.prompt_price + ct * s.completion_price) / 1e6)


__all__ = ["OllamaJudge"]
