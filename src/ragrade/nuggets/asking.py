"""How the nugget procedures ask the LLM core: rounds of judgments through the one runner
(:func:`ragrade.llm.runner.execute`), the one cache and one budget spread over the rounds, and the
procedure's own rule for unreadable replies (docs/nuggets.md, "Calls, retries and costs").

Each round is one :func:`~ragrade.llm.runner.execute` over the judgments the procedure needs next (the next
window of every query, every labelling batch, every (passage, nugget batch)). A reply that cannot be read,
or that the procedure refuses (a label list of the wrong length), is asked again **at the retry temperature
(0.2)**, up to ``retries`` times, each attempt a judgment of its own (its temperature and number are part of
its cache key, not of the prompt): a resumed run finds every attempt it made in the cache and repeats no
call. The first ask is at ``temperature`` (0). The backend's own re-ask at the same temperature is switched
off (``parse_retries=0``): the attempts here are the only ones. A transient failure (network, rate limit,
server errors after the backend's retries) is not asked again in this run: it is a failure, counted, and the
next run asks it again (the cache keeps no transient failure).

The budget (:class:`~ragrade.llm.budget.Budget`) covers every round together: each round gets what is left.
:class:`Costs` adds up what the rounds did, as the judge and the assessor report it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ragrade.errors import InputError, RagradeError
from ragrade.llm.base import Judge, judgment_key
from ragrade.llm.budget import Budget
from ragrade.llm.cache import JudgmentCache, open_cache
from ragrade.llm.runner import Execution, execute, worst_of
from ragrade.nuggets.prompts import TASK_SET

T = TypeVar("T")


@dataclass
class Costs:
    """What the calls of one procedure cost: judgments needed (distinct, all attempts), calls made, cache
    hits, failed judgments, tokens, cost, calls counted at their worst case (no usage reported), and whether
    the budget stopped it (``unasked``: judgments left)."""

    needed: int = 0
    calls: int = 0
    cache_hits: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    tokens_estimated: int = 0
    retries: int = 0
    unasked: int = 0
    budget_reached: bool = False

    def add(self, ex: Execution) -> None:
        self.needed += ex.needed
        self.calls += ex.calls
        self.cache_hits += ex.cache_hits
        self.failed += ex.failed
        self.prompt_tokens += ex.prompt_tokens
        self.completion_tokens += ex.completion_tokens
        self.cost += float(ex.cost)
        self.tokens_estimated += ex.tokens_estimated
        self.budget_reached = self.budget_reached or ex.budget_reached

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class Outcome:
    """The end of one request: its output, or why it has none (``unasked``: the budget stopped first)."""

    output: dict[str, Any] | None
    error: str | None = None
    attempts: int = 0
    unasked: bool = False

    @property
    def ok(self) -> bool:
        return self.output is not None


def variant(judge: Judge, **settings: Any) -> Judge:
    """The judge with other LLM settings (temperature, parse retries), asking the nugget tasks; a judge without
    LLM settings (offline, scripted) as it is."""
    s: Any = getattr(judge, "settings", None)
    if s is None or not dataclasses.is_dataclass(s) or isinstance(s, type):
        return judge
    changes = {k: v for k, v in settings.items() if hasattr(s, k)}
    made: Judge = type(judge)(dataclasses.replace(s, **changes), tasks=TASK_SET)  # type: ignore[call-arg]
    return made


def llm_judge(model: str, base_url: str, *, backend: str = "openai", **settings: Any) -> Judge:
    """An LLM judge of the one backend registry asking the nugget tasks (``settings``: those of
    :class:`ragrade.llm.backends.LLMSettings`: ``api_key_env``, ``max_concurrency``, ``timeout`` ...)."""
    from ragrade.llm.backends import make_judge

    made: Judge = make_judge(backend, TASK_SET, model=model, base_url=base_url, **settings)
    return made


@dataclass
class Asker:
    """Asks rounds of judgments for one procedure (see the module docstring) and adds up their costs."""

    judge: Judge
    cache: Any = True
    budget: Budget = field(default_factory=Budget)
    max_concurrency: int | None = None
    retry_failed: bool = False
    temperature: float = 0.0
    retry_temperature: float = 0.2
    retries: int = 2
    costs: Costs = field(default_factory=Costs)
    #: called as judgments finish: ``progress(costs so far, this round's Execution)``
    progress: Callable[[Costs, Execution], None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.retries, int) or isinstance(self.retries, bool) or self.retries < 0:
            raise InputError("retries must be a whole number >= 0", value=self.retries)
        if not isinstance(self.budget, Budget):
            raise InputError("budget must be a ragrade.llm.budget.Budget", value=type(self.budget).__name__)
        self._first = variant(self.judge, temperature=self.temperature, parse_retries=0)
        self._retry = variant(self.judge, temperature=self.retry_temperature, parse_retries=0)
        self._store: JudgmentCache | None
        self._store, self._owned = open_cache(self.cache, cacheable=getattr(self.judge, "cacheable", True))

    @property
    def cache_path(self) -> str | None:
        return None if self._store is None or self._store.path is None else str(self._store.path)

    async def aclose(self) -> None:
        for j in {id(self._first): self._first, id(self._retry): self._retry}.values():
            if j is not self.judge:
                with contextlib.suppress(Exception):
                    await j.aclose()
        if self._owned and self._store is not None:
            self._store.close()
            self._store = None

    def _report(self, ex: Execution) -> None:
        if self.progress is not None:
            self.progress(self.costs, ex)

    def _left(self) -> Budget:
        b, c = self.budget, self.costs
        return Budget(None if b.calls is None else max(0, b.calls - c.calls),
                      None if b.tokens is None else max(0, b.tokens - c.tokens),
                      None if b.usd is None else max(0.0, b.usd - c.cost))

    async def ask(self, requests: Mapping[str, tuple[str, Mapping[str, str]]],
                  check: Callable[[str, dict[str, Any]], str | None] | None = None) -> dict[str, Outcome]:
        """``{name: Outcome}`` of the ``requests`` (``{name: (task, inputs)}``; names with equal inputs share one
        judgment). ``check(name, output)`` returns why an output cannot be used (asked again), or None."""
        pending = dict(requests)
        out: dict[str, Outcome] = {}
        last: dict[str, str] = {}
        for attempt in range(self.retries + 1):
            if not pending:
                break
            if self.costs.budget_reached:
                break
            judge, temp = (self._first, self.temperature) if attempt == 0 else (self._retry, self.retry_temperature)
            if attempt:
                self.costs.retries += len(pending)
            pending = await self._round(judge, temp, attempt, pending, check, out, last)
        for name in pending:
            out[name] = Outcome(None, last.get(name, "unasked: the budget was spent"), self.retries + 1,
                                unasked=name not in last)
            self.costs.unasked += name not in last
        return out

    async def _round(self, judge: Judge, temp: float, attempt: int,
                     pending: Mapping[str, tuple[str, Mapping[str, str]]],
                     check: Callable[[str, dict[str, Any]], str | None] | None,
                     out: dict[str, Outcome], last: dict[str, str]) -> dict[str, tuple[str, Mapping[str, str]]]:
        keyed: dict[str, tuple[str, Mapping[str, str]]] = {}
        names: dict[str, list[str]] = {}
        for name, (task, inputs) in pending.items():
            inp = {**inputs, "sampling": f"temperature={temp:g};attempt={attempt}"}
            key = judgment_key(judge, task, inp)
            keyed.setdefault(key, (task, inp))
            names.setdefault(key, []).append(name)
        ex = await execute(judge, keyed, cache=self._store, max_concurrency=self.max_concurrency,
                           retry_failed=self.retry_failed, budget=self._left(), worst=worst_of(judge, keyed),
                           order="given", progress=self._report if self.progress is not None else None)
        self.costs.add(ex)
        again: dict[str, tuple[str, Mapping[str, str]]] = {}
        for key, who in names.items():
            j = ex.results.get(key)
            for name in who:
                if j is None:  # the budget stopped the round first
                    again[name] = pending[name]
                    continue
                why = (j.error or "failed") if not j.ok or j.output is None else (check(name, j.output) if check else None)
                if why is None:
                    out[name] = Outcome(j.output, None, attempt + 1)
                elif not j.ok and j.transient:
                    out[name] = Outcome(None, why, attempt + 1)
                else:
                    last[name] = why
                    again[name] = pending[name]
        return again


def run_sync(make: Callable[[], Awaitable[T]], what: str) -> T:
    """Run a coroutine from synchronous code (refused inside a running event loop: use the ``a...`` function)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())  # type: ignore[arg-type]
    raise RagradeError(f"{what}() cannot run inside a running event loop (e.g. Jupyter); use `await a{what}(...)`")


__all__ = ["Asker", "Budget", "Costs", "Judge", "Outcome", "llm_judge", "run_sync", "variant"]
