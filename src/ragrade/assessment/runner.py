"""Run an assessor over a pool: plan the judgments, reuse the cache, respect a budget, stop on a
configuration error, and say what was graded, what failed and what could not be asked.

Entry points: :func:`plan` (what a run would cost, with no call) and :func:`assess` /
:func:`aassess` (the run). Policies (``docs/assessment.md``):

* A pair whose passage is missing from the corpus, or empty, or whose query has no text, is **not judged**
  (never graded as empty text); it is listed with its ids in the result.
* A judgment that fails after the judge's retries (including a reply that cannot be read as a grade) is a
  failed pair, listed with its reason, never a 0. Failures are cached: transient ones (network, rate
  limit, server errors) are asked again by the next run, permanent ones only with ``retry_failed``.
* An authentication or configuration error (HTTP 401, 403, 404, or a server that refuses the connection
  before anything was graded) stops the run at once with :class:`JudgeConfigError`; it is never cached.
* A budget (calls, tokens or cost) is never exceeded: a judgment starts only when the budget still covers
  its worst case (see :class:`Budget`); the run then stops cleanly, everything finished is kept (and
  cached), and a re-run resumes from the cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
import socket
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragrade.assessment import prompt as _prompt
from ragrade.assessment.pooling import Pool
from ragrade.assessment.readers import Passages
from ragrade.errors import InputError, RagradeError
from ragrade.judges.base import Judge, JudgeConfigError, Judgment, judgment_key
from ragrade.judges.cache import JudgmentCache
from ragrade.llm.secrets import Redactor

#: Chat-template tokens allowed per message on top of the text when bounding a prompt's tokens.
TEMPLATE_TOKENS_PER_MESSAGE = 16
#: Rough characters per token, for the *estimates* of ``--dry-run`` (never for enforcing a budget).
CHARS_PER_TOKEN = 4.0
#: Expected completion tokens of one graded reply (``{"grade": 2}``), for the estimates.
EXPECTED_COMPLETION_TOKENS = 8


@dataclass(frozen=True)
class Budget:
    """Limits of one run: judgments asked (``calls``), tokens (prompt + completion, as the server reports
    them) or cost (``usd``, from the judge's prices). ``None`` = no limit.

    A judgment is started only when ``spent + worst case of the judgments in flight + its own worst case``
    stays within every limit. The worst case of one judgment counts every attempt that can spend tokens
    (the first ask and each re-ask after an unreadable reply) at ``prompt bytes + 16 tokens per message +
    max_tokens``: a token of a byte-level tokenizer covers at least one byte of text, and the reply is cut
    at ``max_tokens``. A reply whose server reports no usage is counted at its worst case.
    """

    calls: int | None = None
    tokens: int | None = None
    usd: float | None = None

    def __post_init__(self) -> None:
        for name in ("calls", "tokens"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise InputError(f"budget {name} must be a whole number >= 0", value=v)
        if self.usd is not None and (not isinstance(self.usd, int | float) or not self.usd >= 0):
            raise InputError("budget usd must be a number >= 0", value=self.usd)

    @property
    def active(self) -> bool:
        return self.calls is not None or self.tokens is not None or self.usd is not None

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens": self.tokens, "usd": self.usd}


@dataclass(frozen=True)
class AssessProgress:
    """Counters passed to the progress callback."""

    total: int  # judgments this run needs (distinct (query text, passage) pairs)
    done: int
    calls: int
    cache_hits: int
    failures: int
    tokens: int
    cost: float


@dataclass
class AssessResult:
    """What an assessment produced.

    ``grades``: DataFrame ``query, doc, grade`` of the graded pairs in pool order. ``failures``: one dict
    per failed pair (``query``, ``doc``, ``reason``). ``not_judged``: pairs that could not be asked
    (``query``, ``doc``, ``reason``: ``missing passage``, ``empty passage``, ``missing query text``).
    ``unasked``: pairs left when a budget stopped the run. ``counts``: pairs, graded, failed, not judged,
    unasked, judgments needed, calls, cache hits, tokens, cost.
    """

    grades: pd.DataFrame
    failures: list[dict[str, str]]
    not_judged: list[dict[str, str]]
    unasked: list[tuple[str, str]]
    counts: dict[str, Any]
    judge: dict[str, Any]
    budget: Budget
    budget_reached: bool
    complete: bool

    def to_qrels(self) -> Any:
        """The grades as a :class:`ragrade.Qrels`."""
        from ragrade.data import Qrels

        g = self.grades
        return Qrels.from_columns(g["query"].to_numpy(), g["doc"].to_numpy(), g["grade"].to_numpy(dtype=np.float64),
                                  source="assessment")

    def histogram(self) -> dict[str, int]:
        vc = self.grades["grade"].value_counts()
        return {str(g): int(vc.get(g, 0)) for g in _prompt.GRADES}


@dataclass(frozen=True)
class Plan:
    """The judgments a run needs (no call made): see :func:`plan`."""

    pairs: int
    requests: int  # distinct judgments (identical query text and passage share one)
    cached: int
    calls: int  # judgments that would be asked
    not_judged: list[dict[str, str]]
    prompt_tokens: int  # estimate for the calls (characters / 4)
    completion_tokens: int  # estimate for the calls
    worst_tokens: int  # the bound a token budget would use
    cost: float | None  # estimate, None without prices
    worst_cost: float | None
    judge: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("pairs", "requests", "cached", "calls", "prompt_tokens",
                                              "completion_tokens", "worst_tokens", "cost", "worst_cost")} | {
            "not_judged": len(self.not_judged), "judge": self.judge}


# ----------------------------------------------------------------------------------------------------------


def judge_info(judge: Judge) -> dict[str, Any]:
    """Name, model, prompt version, whether it is an offline approximation, and the LLM settings that
    shape the answers (never the key)."""
    info: dict[str, Any] = {
        "name": judge.name,
        "model": judge.model,
        "prompt_version": judge.prompt_version,
        "approximation": bool(getattr(judge, "approximation", False)),
    }
    s = getattr(judge, "settings", None)
    if s is not None:
        info["base_url"] = _safe_url(s.base_url)
        info.update({k: getattr(s, k) for k in ("temperature", "seed", "max_tokens", "response_format",
                                                 "prompt_price", "completion_price", "parse_retries", "max_retries")})
    return info


def _safe_url(url: str) -> str:
    """The URL without credentials or query string."""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    if u.port:
        host += f":{u.port}"
    return urllib.parse.urlunsplit((u.scheme, host, u.path, "", ""))


def _prices(judge: Judge) -> tuple[float, float] | None:
    s = getattr(judge, "settings", None)
    if s is None:
        return None
    return float(s.prompt_price), float(s.completion_price)


def _is_llm(judge: Judge) -> bool:
    return getattr(judge, "settings", None) is not None


def _build(pool: Pool, queries: Mapping[str, str], passages: Passages | Mapping[str, Any], judge: Judge
           ) -> tuple[list[tuple[str, str, str]], dict[str, dict[str, str]], list[dict[str, str]]]:
    """(pair -> key rows, key -> inputs, pairs not judged)."""
    texts: Mapping[str, Any] = passages.texts if isinstance(passages, Passages) else passages
    empty = set(passages.empty) if isinstance(passages, Passages) else set()
    rows: list[tuple[str, str, str]] = []
    requests: dict[str, dict[str, str]] = {}
    not_judged: list[dict[str, str]] = []
    for q, d in pool.as_tuples():
        qt = queries.get(q)
        if qt is None or not str(qt).strip():
            not_judged.append({"query": q, "doc": d, "reason": "missing query text" if qt is None else "empty query text"})
            continue
        p = texts.get(d)
        if p is None:
            not_judged.append({"query": q, "doc": d, "reason": "empty passage" if d in empty else "missing passage"})
            continue
        title, text = (p if isinstance(p, tuple) else ("", str(p)))
        if not str(title).strip() and not str(text).strip():
            not_judged.append({"query": q, "doc": d, "reason": "empty passage"})
            continue
        inputs = {"query": str(qt), "title": str(title), "passage": str(text)}
        key = judgment_key(judge, _prompt.TASK, inputs)
        requests.setdefault(key, inputs)
        rows.append((q, d, key))
    return rows, requests, not_judged


def _worst_tokens(judge: Judge, inputs: Mapping[str, str]) -> tuple[int, int]:
    """(worst prompt tokens, worst completion tokens) of one judgment, all attempts."""
    if not _is_llm(judge):
        return 0, 0
    s = judge.settings  # type: ignore[attr-defined]
    msgs = judge.messages(_prompt.TASK, inputs)  # type: ignore[attr-defined]
    prompt = sum(len(m["content"].encode("utf-8")) + TEMPLATE_TOKENS_PER_MESSAGE for m in msgs) + TEMPLATE_TOKENS_PER_MESSAGE
    attempts = 1 + int(s.parse_retries)
    completion = int(s.max_tokens) if s.max_tokens is not None else 4096
    return attempts * prompt, attempts * completion


def _estimate_tokens(judge: Judge, inputs: Mapping[str, str]) -> tuple[int, int]:
    if not _is_llm(judge):
        return 0, 0
    msgs = judge.messages(_prompt.TASK, inputs)  # type: ignore[attr-defined]
    chars = sum(len(m["content"]) for m in msgs)
    return math.ceil(chars / CHARS_PER_TOKEN) + 4 * len(msgs), EXPECTED_COMPLETION_TOKENS


def _open_cache(cache: Any, judge: Judge) -> tuple[JudgmentCache | None, bool]:
    if not getattr(judge, "cacheable", True) or cache is None or cache is False:
        return None, False
    if isinstance(cache, JudgmentCache):
        return cache, False
    if cache is True:
        return JudgmentCache(), True
    if isinstance(cache, str | Path):
        return JudgmentCache(cache), True
    raise InputError("cache must be True, False/None, a path or a JudgmentCache", value=cache)


def _usable(j: Judgment, retry_failed: bool) -> bool:
    return j.ok or (not j.transient and not retry_failed)


def plan(pool: Pool, queries: Mapping[str, str], passages: Passages | Mapping[str, Any], *, judge: Judge,
         cache: Any = True, retry_failed: bool = False) -> Plan:
    """What :func:`assess` would do, without asking anything: pairs, distinct judgments, how many the cache
    already holds, and for the rest the estimated tokens (characters / 4 for the prompt, 8 for the reply)
    and cost (the judge's prices), plus the worst case a token budget would reserve."""
    rows, requests, not_judged = _build(pool, queries, passages, judge)
    store, owned = _open_cache(cache, judge)
    try:
        found = store.get_many(requests) if store is not None and requests else {}
    finally:
        if owned and store is not None:
            store.close()
    todo = [k for k in requests if not (k in found and _usable(found[k], retry_failed))]
    pt = ct = wp = wc = 0
    for k in todo:
        a, b = _estimate_tokens(judge, requests[k])
        c, d = _worst_tokens(judge, requests[k])
        pt, ct, wp, wc = pt + a, ct + b, wp + c, wc + d
    prices = _prices(judge)
    cost = worst = None
    if prices is not None and (prices[0] or prices[1]):
        cost = (pt * prices[0] + ct * prices[1]) / 1e6
        worst = (wp * prices[0] + wc * prices[1]) / 1e6
    return Plan(len(rows) + len(not_judged), len(requests), len(requests) - len(todo), len(todo), not_judged,
                pt, ct, wp + wc, cost, worst, judge_info(judge))


_FATAL_HTTP = re.compile(r"\bHTTP (401|403|404)\b")
# (a refused connection; not "connection error", which also names a connection that broke after an answer)
_CONNECT = re.compile(r"connect(ion)? ?refused|ConnectError|Errno 111|actively refused", re.IGNORECASE)


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every piece of the given secrets (10 characters or more, see
    :mod:`ragrade.llm.secrets`) and anything that looks like a bearer token or an API key removed."""
    return Redactor(secrets).text(text)


def _secrets(judge: Judge) -> tuple[str, ...]:
    key = getattr(judge, "_api_key", None)
    return (key,) if isinstance(key, str) and key else ()


def _fatal(j: Judgment, any_success: bool) -> str | None:
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


def preflight(judge: Judge, timeout: float = 5.0) -> None:
    """For an LLM judge: open (and close) a TCP connection to its server, so that a server that is not
    there stops the run before any work (:class:`JudgeConfigError`)."""
    s = getattr(judge, "settings", None)
    if s is None:
        return
    u = urllib.parse.urlsplit(s.base_url)
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        with socket.create_connection((u.hostname or "", port), timeout=min(timeout, float(s.connect_timeout))):
            pass
    except OSError as exc:
        raise JudgeConfigError(f"cannot connect to the judge's server {_safe_url(s.base_url)}: "
                               f"{exc.strerror or exc}") from None


async def aassess(pool: Pool, queries: Mapping[str, str], passages: Passages | Mapping[str, Any], *, judge: Judge,
                  cache: Any = True, budget: Budget | None = None, max_concurrency: int | None = None,
                  retry_failed: bool = False, progress: Callable[[AssessProgress], None] | None = None,
                  check_server: bool = True) -> AssessResult:
    """Asynchronous :func:`assess`."""
    budget = budget or Budget()
    rows, requests, not_judged = _build(pool, queries, passages, judge)
    store, owned = _open_cache(cache, judge)
    secrets = _secrets(judge)
    results: dict[str, Judgment] = {}
    counters: dict[str, Any] = {"needed": len(requests), "calls": 0, "cache_hits": 0, "failed_judgments": 0,
                                "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0, "tokens_estimated": 0}
    budget_reached = False
    try:
        if store is not None and requests:
            for key, j in store.get_many(requests).items():
                if _usable(j, retry_failed):
                    results[key] = j
        counters["cache_hits"] = len(results)
        counters["failed_judgments"] = sum(1 for j in results.values() if not j.ok)
        todo = [k for k in requests if k not in results]
        if todo and check_server:
            preflight(judge)
        limit = max(1, int(max_concurrency or getattr(judge, "max_concurrency", 1) or 1))
        llm = _is_llm(judge)
        prices = _prices(judge) or (0.0, 0.0)
        state = {"reserved_tokens": 0, "reserved_cost": 0.0, "started": 0, "success": any(j.ok for j in results.values())}
        fatal: list[str] = []

        def report() -> None:
            if progress is not None:
                progress(AssessProgress(len(requests), len(results), int(counters["calls"]), int(counters["cache_hits"]),
                                        int(counters["failed_judgments"]),
                                        int(counters["prompt_tokens"] + counters["completion_tokens"]),
                                        float(counters["cost"])))

        def worst(key: str) -> tuple[int, float]:
            if not llm:
                return 0, 0.0
            wp, wc = _worst_tokens(judge, requests[key])
            return wp + wc, (wp * prices[0] + wc * prices[1]) / 1e6

        def fits(key: str) -> bool:
            if budget.calls is not None and state["started"] + 1 > budget.calls:
                return False
            t, c = worst(key)
            spent_t = counters["prompt_tokens"] + counters["completion_tokens"]
            if budget.tokens is not None and spent_t + state["reserved_tokens"] + t > budget.tokens:
                return False
            return not (budget.usd is not None and counters["cost"] + state["reserved_cost"] + c > budget.usd + 1e-12)

        async def one(key: str, reserve: tuple[int, float]) -> None:
            inputs = requests[key]
            try:
                j: Judgment | None = None
                if store is not None:  # another process may have answered it meanwhile
                    hit = store.get(key)
                    if hit is not None and hit.ok:
                        j = hit
                if j is not None:
                    results[key] = j
                    counters["cache_hits"] += 1
                    state["started"] -= 1  # no call was made
                    return
                try:
                    j = await judge.judge(_prompt.TASK, inputs)
                except RagradeError as exc:
                    fatal.append(scrub(str(exc), secrets))
                    return
                except Exception as exc:  # a judge must not raise; if one does, the run goes on
                    j = Judgment.failed(f"judge raised {type(exc).__name__}: {exc}", transient=True)
                counters["calls"] += 1
                reason = _fatal(j, bool(state["success"]))
                if reason is not None:
                    fatal.append(scrub(reason, secrets))
                    return
                if j.error:
                    j = Judgment(j.output, scrub(j.error, secrets), j.transient, j.usage, j.attempts)
                u = j.usage
                if llm and u.total_tokens == 0:
                    counters["tokens_estimated"] += 1
                    counters["prompt_tokens"] += reserve[0]
                    counters["cost"] += reserve[1]
                else:
                    counters["prompt_tokens"] += u.prompt_tokens
                    counters["completion_tokens"] += u.completion_tokens
                    counters["cost"] += u.cost
                if j.ok:
                    state["success"] = True
                else:
                    counters["failed_judgments"] += 1
                if store is not None:
                    store.put(key, judge=judge.name, model=judge.model, prompt_version=judge.prompt_version,
                              task=_prompt.TASK, judgment=j)
                results[key] = j
            finally:
                state["reserved_tokens"] -= reserve[0]
                state["reserved_cost"] -= reserve[1]
                report()

        report()
        inflight: set[asyncio.Task[None]] = set()
        try:
            for key in todo:
                while len(inflight) >= limit and not fatal:
                    _, inflight = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                while not fatal and not fits(key):
                    if not inflight:
                        budget_reached = True
                        break
                    _, inflight = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
                if fatal or budget_reached:
                    break
                reserve = worst(key)
                state["reserved_tokens"] += reserve[0]
                state["reserved_cost"] += reserve[1]
                state["started"] += 1
                inflight.add(asyncio.ensure_future(one(key, reserve)))
                if counters["calls"] == 0 and not state["success"]:
                    # The first call is asked alone: a wrong key or URL stops the run after one request.
                    _, inflight = await asyncio.wait(inflight)
            while inflight and not fatal:
                _, inflight = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in inflight:
                t.cancel()
            if inflight:
                await asyncio.gather(*inflight, return_exceptions=True)
        if fatal:
            raise JudgeConfigError(f"{fatal[0]} (stopped; {len(results)} judgments done are cached, nothing else "
                                   "was kept)")
        if budget.calls is not None and state["started"] >= budget.calls and len(results) < len(requests):
            budget_reached = True
    finally:
        if owned and store is not None:
            store.close()

    graded: list[tuple[str, str, int]] = []
    failures: list[dict[str, str]] = []
    unasked: list[tuple[str, str]] = []
    for q, d, key in rows:
        got = results.get(key)
        if got is None:
            unasked.append((q, d))
        elif got.ok and got.output is not None:
            graded.append((q, d, int(got.output["grade"])))
        else:
            failures.append({"query": q, "doc": d, "reason": scrub(got.error or "failed", secrets)})
    grades = pd.DataFrame(graded, columns=["query", "doc", "grade"])
    grades["grade"] = grades["grade"].astype(np.int64)
    counts = {
        "pairs": len(rows) + len(not_judged),
        "graded": len(graded),
        "failed": len(failures),
        "not_judged": len(not_judged),
        "unasked": len(unasked),
        **counters,
    }
    counts["cost"] = float(counts["cost"])
    return AssessResult(grades, failures, not_judged, unasked, counts, judge_info(judge), budget,
                        budget_reached and bool(unasked), complete=not unasked)


def assess(pool: Pool, queries: Mapping[str, str], passages: Passages | Mapping[str, Any], *, judge: Judge | None = None,
           **kwargs: Any) -> AssessResult:
    """Grade every pooled pair 0-3 with ``judge`` (default: the offline lexical approximation).

    ``queries``: ``{query id: text}``; ``passages``: a :class:`~ragrade.assessment.readers.Passages` from
    :func:`~ragrade.assessment.readers.read_passages`, or ``{doc id: text}`` / ``{doc id: (title, text)}``.
    Keyword arguments: ``cache`` (True: the user cache, a path, a JudgmentCache, or False), ``budget``
    (:class:`Budget`), ``max_concurrency``, ``retry_failed``, ``progress`` (a callback taking
    :class:`AssessProgress`), ``check_server`` (connect to an LLM judge's server before starting).

    >>> from ragrade.assessment import pool, assess
    >>> from ragrade import Run
    >>> p = pool([Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}})], depth=2)
    >>> r = assess(p, {"q1": "capital of France"}, {"d1": "Paris is the capital of France.", "d2": "Cats purr."},
    ...            cache=False)
    >>> r.grades.values.tolist()
    [['q1', 'd1', 3], ['q1', 'd2', 0]]
    """
    if judge is None:
        from ragrade.assessment.graders import LexicalGrader

        judge = LexicalGrader()
    j = judge

    async def go() -> AssessResult:
        try:
            return await aassess(pool, queries, passages, judge=j, **kwargs)
        finally:
            with contextlib.suppress(Exception):
                await j.aclose()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(go())
    raise RagradeError("assess() cannot run inside a running event loop (e.g. Jupyter); use `await aassess(...)`")


__all__ = ["AssessProgress", "AssessResult", "Budget", "JudgeConfigError", "Plan", "aassess", "assess", "plan",
           "preflight", "scrub"]
