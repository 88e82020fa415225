"""A ceiling on the HTTP requests of a synthesis run (``--budget-calls N``: at most N requests reach the
server, retries, re-asks and answerability checks included; docs/synthesize.md, "Budget").

The LLM core's :class:`~ragrade.llm.budget.Budget` counts judgments started; one judgment may send several
requests (a transient error retried, an unreadable reply asked again, a structured-output mode refused and
stepped down). :class:`RequestLimit` wraps the judge the core asks: a judgment starts only when the requests
already sent, plus the worst case of the judgments in flight, plus its own worst case stay within the limit
(the core's rule for tokens, applied to requests). A judgment's worst case is ``1 + max_retries +
parse_retries`` requests, plus the three structured-output steps before any judgment has succeeded
(afterwards the server's mode is known). Each judgment reports the requests it sent (``Judgment.attempts``).
A judgment that does not fit is not asked: it comes back as a transient failure with the reason
:data:`NOT_ASKED` (so the cache never keeps it as an answer and a later run asks it), and the run reports
it as unasked, never as rejected. The last few requests of a budget may stay unused.

Cache keys are the wrapped judge's (name, model, prompt version): a run with a limit and one without share
their cached judgments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragrade.llm.base import Judgment

NOT_ASKED = "not asked: the request budget (--budget-calls) is spent"
#: Structured-output modes a server may refuse in turn before one is known to work (llm.openai).
FORMAT_STEPS = 3


class RequestLimit:
    """A judge sending at most ``limit`` requests in all (see the module docstring)."""

    def __init__(self, judge: Any, limit: int) -> None:
        self.inner = judge
        self.limit = int(limit)
        self.sent = 0
        self.reserved = 0
        self.refused = 0
        self.answered = False
        self.name, self.model = judge.name, judge.model
        self.prompt_version = judge.prompt_version
        self.cacheable = getattr(judge, "cacheable", True)
        self.max_concurrency = getattr(judge, "max_concurrency", 1)
        # what the runner reads of an LLM judge: its settings and prompts (worst cases), its redactor
        for attr in ("settings", "redact", "messages", "schema", "tasks", "approximation"):
            if hasattr(judge, attr):
                setattr(self, attr, getattr(judge, attr))

    def worst(self) -> int:
        """The most requests one judgment may send now (0 for a judge that sends none)."""
        s = getattr(self.inner, "settings", None)
        if s is None:
            return 0
        steps = FORMAT_STEPS if getattr(s, "response_format", "auto") == "auto" and not self.answered else 0
        return 1 + int(s.max_retries) + int(s.parse_retries) + steps

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        w = self.worst()
        if w and self.sent + self.reserved + w > self.limit:
            self.refused += 1
            return Judgment.failed(NOT_ASKED, transient=True, attempts=0)
        self.reserved += w
        try:
            j = await self.inner.judge(task, inputs)
        finally:
            self.reserved -= w
        if w:
            self.sent += max(0, int(j.attempts))
        if j.ok:
            self.answered = True
        return j

    async def aclose(self) -> None:
        await self.inner.aclose()


__all__ = ["NOT_ASKED", "RequestLimit"]
