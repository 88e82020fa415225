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
import socket
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.assessment import prompt as _prompt
from ragrade.assessment.pooling import Pool
from ragrade.errors import RagradeError
from ragrade.io.texts import Passages
from ragrade.llm.base import Judge, JudgeConfigError, Judgment, judgment_key
from ragrade.llm.budget import Budget
from ragrade.llm.cache import JudgmentCache, open_cache
from ragrade.llm.runner import (
    Execution,
    execute,
    fatal_reason,
    reusable,
    worst_case,
)
from ragrade.llm.secrets import Redactor

#: Rough characters per token, for the *estimates* of ``--dry-run`` (never for enforcing a budget).
CHARS_PER_TOKEN = 4.0
#: Expected completion tokens of one graded reply (``{"grade": 2}``), for the estimates.
EXPECTED_COMPLETION_TOKENS = 8


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


@dataclass(frozen=True)
class AssessResult:
    """What an assessment produced: a set of grades (not an evaluation: no per-query values, so not a
    :class:`ragrade.Result`). Immutable (``dataclasses.replace`` gives a modified copy).

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
    return worst_case(judge, _prompt.TASK, inputs)


def _estimate_tokens(judge: Judge, inputs: Mapping[str, str]) -> tuple[int, int]:
    if not _is_llm(judge):
        return 0, 0
    msgs = judge.messages(_prompt.TASK, inputs)  # type: ignore[attr-defined]
    chars = sum(len(m["content"]) for m in msgs)
    return math.ceil(chars / CHARS_PER_TOKEN) + 4 * len(msgs), EXPECTED_COMPLETION_TOKENS


def _open_cache(cache: Any, judge: Judge) -> tuple[JudgmentCache | None, bool]:
    return open_cache(cache, cacheable=getattr(judge, "cacheable", True))


def _usable(j: Judgment, retry_failed: bool) -> bool:
    return reusable(j, retry_failed)


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


def scrub(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every piece of the given secrets (10 characters or more, see
    :mod:`ragrade.llm.secrets`) and anything that looks like a bearer token or an API key removed."""
    return Redactor(secrets).text(text)


def _secrets(judge: Judge) -> tuple[str, ...]:
    """The secrets the judge's redactor removes (its ``redact`` attribute: a judge that holds a key carries
    one)."""
    r = getattr(judge, "redact", None)
    return r.keys if isinstance(r, Redactor) else ()


_fatal = fatal_reason  # (its old name)


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
    llm = _is_llm(judge)
    prices = _prices(judge) or (0.0, 0.0)

    def worst(key: str) -> tuple[int, float]:
        wp, wc = _worst_tokens(judge, requests[key])
        return wp + wc, (wp * prices[0] + wc * prices[1]) / 1e6

    def report(ex: Execution) -> None:
        if progress is not None:
            progress(AssessProgress(ex.needed, len(ex.results), ex.calls, ex.cache_hits, ex.failed, ex.tokens,
                                    float(ex.cost)))

    try:
        if check_server and store is not None and requests:
            todo = len(requests) - sum(1 for j in store.get_many(requests).values() if reusable(j, retry_failed))
        else:
            todo = len(requests)
        if todo and check_server:
            preflight(judge)
        ex = await execute(judge, {k: (_prompt.TASK, v) for k, v in requests.items()}, cache=store,
                           max_concurrency=max_concurrency, retry_failed=retry_failed, budget=budget,
                           worst=worst if llm else None, order="given",
                           progress=report if progress is not None else None)
    finally:
        if owned and store is not None:
            store.close()
    results = ex.results
    counters: dict[str, Any] = {"needed": ex.needed, "calls": ex.calls, "cache_hits": ex.cache_hits,
                                "failed_judgments": ex.failed, "prompt_tokens": ex.prompt_tokens,
                                "completion_tokens": ex.completion_tokens, "cost": ex.cost,
                                "tokens_estimated": ex.tokens_estimated}
    budget_reached = ex.budget_reached

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

    ``queries``: ``{query id: text}``; ``passages``: a :class:`~ragrade.io.texts.Passages` from
    :func:`~ragrade.io.texts.read_passages`, or ``{doc id: text}`` / ``{doc id: (title, text)}``.
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
