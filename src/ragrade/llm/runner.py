"""The one runner of the LLM core: asks a judge (any backend) a set of judgments, for the judge metrics
(:mod:`ragrade.judges.runner`) and the assessor (:mod:`ragrade.assessment.runner`) alike.

:func:`execute` takes the judgments a caller planned (``{key: (task, inputs)}``, keyed by
:func:`~ragrade.llm.base.judgment_key`) and:

* takes from the cache what it can reuse: successes, and permanent failures unless ``retry_failed``
  (never a failure an older version cached for a configuration error);
* asks the **first judgment alone**, so that a wrong key, model or URL costs exactly one request whatever
  the concurrency; then keeps up to ``max_concurrency`` judgments in flight;
* re-checks the cache just before each call (another process sharing the cache may have answered it);
* stops at the first configuration error (:class:`~ragrade.llm.base.JudgeConfigError` raised by the judge,
  any other :class:`~ragrade.errors.RagradeError` it raises, or a failure whose reason is HTTP
  401/403/404 or, before anything succeeded, a refused connection): nothing about it is cached, everything
  finished before is;
* with a :class:`~ragrade.llm.budget.Budget`, starts a judgment only when the budget covers its worst case
  on top of what was spent and what is in flight (``worst(key) -> (tokens, cost)``);
* redacts every judgment with the judge's redactor (every piece of its key) before it is stored or returned.

The counters it keeps (:class:`Execution`) are those both callers report.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import RagradeError
from ragrade.llm.base import Judge, JudgeConfigError, Judgment, Redactor, redact_judgment
from ragrade.llm.budget import Budget
from ragrade.llm.cache import JudgmentCache

_FATAL_HTTP = re.compile(r"\bHTTP (401|403|404)\b")
# (a refused connection; not "connection error", which also names a connection that broke after an answer)
_CONNECT = re.compile(r"connect(ion)? ?refused|ConnectError|Errno 111|actively refused", re.IGNORECASE)


@dataclass
class Execution:
    """What :func:`execute` did: ``results`` (key -> judgment, from the cache or the judge), the counters,
    and whether a budget stopped it with judgments left."""

    results: dict[str, Judgment]
    needed: int = 0
    cache_hits: int = 0
    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    tokens_estimated: int = 0  # calls whose server reported no usage (counted at their worst case)
    budget_reached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def config_failure(j: Judgment) -> bool:
    """A failure an older version cached for a configuration error (HTTP 401/403/404): never reused."""
    return not j.ok and (j.error or "").startswith(("HTTP 401", "HTTP 403", "HTTP 404"))


def reusable(j: Judgment, retry_failed: bool) -> bool:
    """Whether a cached judgment is used instead of asking again."""
    return j.ok or (not j.transient and not retry_failed and not config_failure(j))


def fatal_reason(j: Judgment, any_success: bool) -> str | None:
    """The configuration error a failed judgment reveals (a judge that reports HTTP 401/403/404 as a failed
    judgment instead of raising, or a refused connection before anything succeeded), else None."""
    if j.ok:
        return None
    if getattr(j, "fatal", False):
        return j.error or "configuration error"
    err = j.error or ""
    m = _FATAL_HTTP.search(err)
    if m:
        what = {"401": "the server refused the API key (HTTP 401)", "403": "access forbidden (HTTP 403)",
                "404": "not found (HTTP 404): check --base-url and --model"}[m.group(1)]
        return f"{what}: {err}"
    if not any_success and _CONNECT.search(err):
        return f"cannot reach the judge's server: {err}"
    return None


#: Chat-template tokens allowed per message on top of the text when bounding a prompt's tokens.
TEMPLATE_TOKENS_PER_MESSAGE = 16


def worst_case(judge: Judge, task: str, inputs: Mapping[str, str]) -> tuple[int, int]:
    """(worst prompt tokens, worst completion tokens) of one judgment of an LLM judge, all attempts: every
    attempt that can spend tokens (the first ask and each re-ask after an unreadable reply) at ``prompt
    bytes + 16 tokens per message + max_tokens`` (a token of a byte-level tokenizer covers at least one
    byte; the reply is cut at ``max_tokens``). (0, 0) for a judge without LLM settings."""
    s = getattr(judge, "settings", None)
    if s is None or not hasattr(judge, "messages"):
        return 0, 0
    msgs = judge.messages(task, inputs)
    prompt = sum(len(m["content"].encode("utf-8")) + TEMPLATE_TOKENS_PER_MESSAGE for m in msgs) + TEMPLATE_TOKENS_PER_MESSAGE
    attempts = 1 + int(s.parse_retries)
    completion = int(s.max_tokens) if s.max_tokens is not None else 4096
    return attempts * prompt, attempts * completion


def worst_of(judge: Judge, requests: Mapping[str, tuple[str, Mapping[str, str]]]
             ) -> Callable[[str], tuple[int, float]] | None:
    """The ``worst`` argument of :func:`execute` for an LLM judge (tokens, cost from its prices); None for
    a judge without LLM settings (offline: no tokens, no cost)."""
    s = getattr(judge, "settings", None)
    if s is None:
        return None
    pp, cp = float(s.prompt_price), float(s.completion_price)

    def worst(key: str) -> tuple[int, float]:
        wp, wc = worst_case(judge, *requests[key])
        return wp + wc, (wp * pp + wc * cp) / 1e6

    return worst


def redactor_of(judge: Judge) -> Redactor:
    """The judge's redactor (its ``redact`` attribute: a judge that holds a key carries one), or one that
    removes credential-shaped tokens only."""
    r = getattr(judge, "redact", None)
    return r if isinstance(r, Redactor) else Redactor([])


def rotate(keys: list[str], pid: int) -> list[str]:
    """``keys`` started at a place given by the process id (a multiplicative hash): concurrent processes
    on one dataset and one cache then mostly ask different judgments first (order of calls only)."""
    if len(keys) < 2:
        return keys
    start = (pid * 2654435761) % len(keys)
    return keys[start:] + keys[:start]


async def execute(judge: Judge, requests: Mapping[str, tuple[str, Mapping[str, str]]], *,
                  cache: JudgmentCache | None, max_concurrency: int | None = None, retry_failed: bool = False,
                  budget: Budget | None = None, worst: Callable[[str], tuple[int, float]] | None = None,
                  order: str = "rotated", progress: Callable[[Execution], None] | None = None) -> Execution:
    """Ask ``judge`` the ``requests`` (see the module docstring). ``order``: ``"rotated"`` (each process
    starts at its own place: concurrent runs on one cache mostly ask different judgments) or ``"given"``
    (the caller's order: a budget then leaves the last ones unasked). ``worst``: the worst case (tokens,
    cost) of one judgment, for the budget and for replies without usage; None for an offline judge.
    Raises :class:`JudgeConfigError` at the first configuration error."""
    run = _Run(judge, requests, cache, retry_failed, budget or Budget(), worst, progress)
    run.take_from_cache()
    todo = [k for k in requests if k not in run.ex.results]
    if order == "rotated":
        todo = rotate(todo, os.getpid())
    limit = max(1, int(max_concurrency or getattr(judge, "max_concurrency", 1) or 1))
    run.report()
    await run.ask_all(todo, limit)
    if run.fatal:
        raise JudgeConfigError(f"{run.fatal[0]} (stopped; {len(run.ex.results)} judgments done are cached, nothing "
                               "else was kept)")
    if run.budget.calls is not None and run.started >= run.budget.calls and len(run.ex.results) < len(requests):
        run.ex.budget_reached = True
    return run.ex


class _Run:
    """The state of one :func:`execute`: the counters (:class:`Execution`), what is reserved for the
    judgments in flight, how many were started, whether any succeeded, and the first fatal error."""

    def __init__(self, judge: Judge, requests: Mapping[str, tuple[str, Mapping[str, str]]],
                 cache: JudgmentCache | None, retry_failed: bool, budget: Budget,
                 worst: Callable[[str], tuple[int, float]] | None,
                 progress: Callable[[Execution], None] | None) -> None:
        self.judge, self.requests, self.cache, self.retry_failed = judge, requests, cache, retry_failed
        self.budget, self.worst, self.progress = budget, worst, progress
        self.redactor = redactor_of(judge)
        self.ex = Execution(results={}, needed=len(requests))
        self.reserved_tokens = 0
        self.reserved_cost = 0.0
        self.started = 0
        self.success = False
        self.fatal: list[str] = []

    def report(self) -> None:
        if self.progress is not None:
            self.progress(self.ex)

    def take_from_cache(self) -> None:
        """The judgments the cache holds and may be reused, counted as cache hits (and failures)."""
        results = self.ex.results
        if self.cache is not None and self.requests:
            for key, j in self.cache.get_many(self.requests).items():
                if reusable(j, self.retry_failed):
                    results[key] = j
        self.ex.cache_hits = len(results)
        self.ex.failed = sum(1 for j in results.values() if not j.ok)
        self.success = any(j.ok for j in results.values())

    def cost_of(self, key: str) -> tuple[int, float]:
        return self.worst(key) if self.worst is not None else (0, 0.0)

    def fits(self, key: str) -> bool:
        """Whether the budget covers one more call, and its worst case on top of what was spent and what is
        reserved for the judgments in flight."""
        budget, ex = self.budget, self.ex
        if budget.calls is not None and self.started + 1 > budget.calls:
            return False
        if budget.tokens is None and budget.usd is None:
            return True
        t, c = self.cost_of(key)
        if budget.tokens is not None and ex.tokens + self.reserved_tokens + t > budget.tokens:
            return False
        return not (budget.usd is not None and ex.cost + self.reserved_cost + c > budget.usd + 1e-12)

    async def ask_all(self, todo: list[str], limit: int) -> None:
        """Start the judgments of ``todo`` in order, at most ``limit`` in flight and the first alone, each
        when the budget covers it; stop at the first fatal error or when the budget is spent."""
        inflight: set[asyncio.Future[None]] = set()
        try:
            for key in todo:
                while len(inflight) >= limit and not self.fatal:
                    _, inflight = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                while not self.fatal and not self.fits(key):
                    if not inflight:
                        self.ex.budget_reached = True
                        break
                    _, inflight = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                if self.fatal or self.ex.budget_reached:
                    break
                reserve = self.cost_of(key)
                self.reserved_tokens += reserve[0]
                self.reserved_cost += reserve[1]
                self.started += 1
                inflight.add(asyncio.ensure_future(self.ask(key, reserve)))
                if self.ex.calls == 0 and not self.success:
                    # The first call is asked alone: a wrong key or URL stops the run after one request.
                    _, inflight = await asyncio.wait(inflight)
            while inflight and not self.fatal:
                _, inflight = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in inflight:
                t.cancel()
            if inflight:
                await asyncio.gather(*inflight, return_exceptions=True)

    async def ask(self, key: str, reserve: tuple[int, float]) -> None:
        """One judgment: from the cache if another process answered it meanwhile, else from the judge; a
        configuration error is recorded as fatal (nothing cached), anything else is counted and cached."""
        task, inputs = self.requests[key]
        try:
            if self.answered_meanwhile(key):
                return
            try:
                j = await self.judge.judge(task, inputs)
            except RagradeError as exc:  # JudgeConfigError, or a judge that cannot work as configured
                self.fatal.append(self.redactor.text(str(exc)))
                return
            except Exception as exc:  # a judge must not raise; if one does, the run still goes on
                j = Judgment.failed(f"judge raised {type(exc).__name__}: {exc}", transient=True)
            self.ex.calls += 1
            reason = fatal_reason(j, self.success)
            if reason is not None:
                self.fatal.append(self.redactor.text(reason))
                return
            self.record(key, task, redact_judgment(j, self.redactor), reserve)
        finally:
            self.reserved_tokens -= reserve[0]
            self.reserved_cost -= reserve[1]
            self.report()

    def answered_meanwhile(self, key: str) -> bool:
        """Take a reusable judgment another process sharing the cache stored since the start (no call made)."""
        if self.cache is None:
            return False
        seen = self.cache.get(key)
        if seen is None or not reusable(seen, self.retry_failed):
            return False
        self.ex.results[key] = seen
        self.ex.cache_hits += 1
        self.ex.failed += 0 if seen.ok else 1
        self.started -= 1  # no call was made
        return True

    def record(self, key: str, task: str, j: Judgment, reserve: tuple[int, float]) -> None:
        """Count a (redacted) judgment's usage (its worst case when the server reported none), cache and keep it."""
        ex, u = self.ex, j.usage
        if self.worst is not None and u.total_tokens == 0:
            ex.tokens_estimated += 1
            ex.prompt_tokens += reserve[0]
            ex.cost += reserve[1]
        else:
            ex.prompt_tokens += u.prompt_tokens
            ex.completion_tokens += u.completion_tokens
            ex.cost += u.cost
        if j.ok:
            self.success = True
        else:
            ex.failed += 1
        if self.cache is not None:
            judge = self.judge
            self.cache.put(key, judge=judge.name, model=judge.model, prompt_version=judge.prompt_version, task=task,
                           judgment=j)
        ex.results[key] = j


__all__ = ["TEMPLATE_TOKENS_PER_MESSAGE", "Execution", "config_failure", "execute", "fatal_reason", "redactor_of",
           "reusable", "rotate", "worst_case", "worst_of"]
