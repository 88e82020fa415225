"""Run judge metrics over a dataset: plan the judgments, reuse the cache, call the judge concurrently,
score every query, and say what failed.

Entry points: :func:`evaluate_judged` (synchronous) and :func:`aevaluate_judged` (inside a running event
loop). Both return a :class:`ragrade.Result` (the one result model): ``per_query``, ``means``, ``counts``,
``details`` (the judge's account behind every value), and ``summary`` whose ``judge``
(:class:`~ragrade.engine.result.JudgeInfo`, also ``result.judge``) names the judge, its model and profile
and counts the outcomes and the judgments.

Policies (documented in ``docs/judges.md``):

* A judgment that failed after the judge's retries makes the metrics that needed it NaN for that query,
  with the reason kept in ``details`` and counted in ``summary`` — never a silent 0. The run goes on.
* Degenerate inputs are scored without calling the judge: no non-empty retrieved chunk scores 0 on every
  metric (docs/conventions.md, Policies: an empty retrieved list scores 0) and is counted as ``degenerate``; an empty
  reference makes the reference-based metrics NaN and an empty question the question-based ones, counted
  as ``missing``. An empty chunk inside a list is a non-useful chunk with no statements (no call).
* A judgment the judge answered but from which the formula is undefined (a reference with no statements,
  no entities in the reference) is NaN and counted as ``undefined`` (the ragas profile follows ragas: its
  1e-8 epsilon makes entity recall 0 there).
* A configuration error (:class:`~ragrade.llm.base.JudgeConfigError`: wrong key, unknown model or URL,
  no server) stops the run: the first judgment is asked alone, so a wrong key costs one call; the error
  is raised and nothing about it is cached.
* Several processes may share one cache: each re-checks the cache just before asking the judge, and
  uses a judgment another process has written meanwhile (counted as a cache hit); each process starts
  its list of judgments at a different place (from its process id; only the order of the calls changes,
  never a result), so that concurrent runs of one dataset mostly ask different judgments.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.engine.result import JudgeInfo, QueryColumns, Result, Summary
from ragrade.errors import InputError, RagradeError
from ragrade.judges.metrics import (
    JudgeMetric,
    check_profile,
    normalize_entity,
    parse_many,
    profile_rules,
    ranked_precision,
    ratio,
    split_sentences,
)
from ragrade.llm.base import Judge, Judgment, Usage, judgment_key
from ragrade.llm.budget import Budget
from ragrade.llm.cache import JudgmentCache, open_cache
from ragrade.llm.runner import Execution, config_failure, execute, worst_of
from ragrade.llm.runner import rotate as _rotate  # noqa: F401  (its old name)
from ragrade.policies import Policies


@dataclass(frozen=True)
class Example:
    """One query of a judge dataset. ``contexts`` is the retrieved list, rank 1 first."""

    qid: str
    question: str
    reference: str
    contexts: tuple[str, ...]
    response: str = ""


@dataclass(frozen=True)
class Progress:
    """Counters passed to the progress callback after every judgment."""

    total: int  # judgments this run needs
    done: int  # answered so far (from the cache or the judge)
    calls: int  # judgments asked of the judge
    cache_hits: int
    failures: int
    tokens: int


# ----------------------------------------------------------------------------------------------------------
# Input


def examples_from(
    data: Any,
    *,
    question: str = "question",
    reference: str = "reference",
    contexts: str = "contexts",
    id: str | None = None,
    response: str | None = None,
    source: str | None = None,
) -> list[Example]:
    """Turn a DataFrame, a list of dicts or a list of :class:`Example` into examples (input is not mutated).

    ``id=None`` uses an ``id`` column when there is one, else the row position. ``contexts`` values must be
    lists of strings (a JSON-encoded list in a string is accepted, as CSV stores it).
    """
    if isinstance(data, pd.DataFrame):
        records: Sequence[Any] = data.to_dict(orient="records")
    elif isinstance(data, (Mapping, str | bytes)) or not hasattr(data, "__iter__"):
        raise InputError(f"judge dataset must be a table or a list of rows, got a {type(data).__name__}")
    else:
        records = list(data)
    out: list[Example] = []
    seen: set[str] = set()
    where = f"{source}: " if source else ""
    for pos, rec in enumerate(records):
        if isinstance(rec, Example):
            ex = rec
        else:
            if not isinstance(rec, Mapping):
                raise InputError(f"{where}row {pos + 1} is not a mapping", value=rec)
            id_col = id if id is not None else ("id" if "id" in rec else None)
            if id_col is not None and id_col not in rec:
                raise InputError(f"{where}row {pos + 1} has no id column {id_col!r}")
            qid = str(rec[id_col]) if id_col is not None else str(pos)
            for col in (question, reference, contexts):
                if col not in rec:
                    raise InputError(f"{where}row {pos + 1} has no column {col!r}", query=qid)
            ex = Example(
                qid=qid,
                question=_text(rec[question], question, qid, where),
                reference=_text(rec[reference], reference, qid, where),
                contexts=_contexts(rec[contexts], contexts, qid, where),
                response=_text(rec.get(response), response, qid, where) if response else "",
            )
        if ex.qid in seen:
            raise InputError(f"{where}duplicate query id", query=ex.qid)
        seen.add(ex.qid)
        out.append(ex)
    return out


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _text(v: Any, col: str | None, qid: str, where: str) -> str:
    if _is_missing(v):
        return ""
    if not isinstance(v, str):
        raise InputError(f"{where}column {col!r} must hold text", query=qid, value=v)
    return v


def _contexts(v: Any, col: str, qid: str, where: str) -> tuple[str, ...]:
    if _is_missing(v):
        return ()
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return ()
        try:
            v = json.loads(s)
        except ValueError:
            raise InputError(
                f"{where}column {col!r} must be a list of texts (or a JSON-encoded list)", query=qid, value=v
            ) from None
        if not isinstance(v, list):
            raise InputError(f"{where}column {col!r} must be a list of texts", query=qid, value=v)
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if not isinstance(v, list | tuple):
        raise InputError(f"{where}column {col!r} must be a list of texts", query=qid, value=v)
    out = []
    for item in v:
        if _is_missing(item):
            item = ""
        if not isinstance(item, str):
            raise InputError(f"{where}column {col!r} holds a non-text chunk", query=qid, value=item)
        out.append(item)
    return tuple(out)


# ----------------------------------------------------------------------------------------------------------
# Planning: which judgments each (query, metric) needs


@dataclass
class _Cell:
    """The plan and, later, the outcome for one (query, metric)."""

    status: str  # "pending", "degenerate", "missing"
    value: float = math.nan
    reason: str = ""
    keys: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)  # what each key is for (chunk index, "reference", ...)


def _join(chunks: Iterable[str]) -> str:
    return "\n\n".join(c for c in chunks if c.strip())


def _plan(
    metric: JudgeMetric, ex: Example, judge: Judge, requests: dict[str, tuple[str, dict[str, str]]]
) -> _Cell:
    def ask(task: str, inputs: dict[str, str]) -> str:
        key = judgment_key(judge, task, inputs)
        requests.setdefault(key, (task, inputs))
        return key

    name = metric.name
    for need in metric.family.needs:
        if not getattr(ex, need).strip():
            return _Cell("missing", reason=f"empty {need}")
    chunks = ex.contexts if metric.k is None else ex.contexts[: metric.k]
    if not any(c.strip() for c in chunks):
        return _Cell("degenerate", value=0.0, reason="no non-empty retrieved context")
    cell = _Cell("pending")
    if name in ("llm_context_precision", "llm_context_precision_noref"):
        answer = ex.reference if name == "llm_context_precision" else ex.response
        for i, c in enumerate(chunks):
            cell.roles.append(str(i))
            cell.keys.append(
                ask("chunk_verdict", {"question": ex.question, "context": c, "answer": answer}) if c.strip() else ""
            )
    elif name == "context_recall":
        cell.keys.append(
            ask("attribution", {"question": ex.question, "context": _join(chunks), "reference": ex.reference})
        )
        cell.roles.append("reference")
    elif name == "context_entities_recall":
        cell.keys += [ask("entities", {"text": ex.reference}), ask("entities", {"text": _join(chunks)})]
        cell.roles += ["reference", "context"]
    elif name == "context_relevancy":
        for i, c in enumerate(chunks):
            if c.strip():
                cell.keys.append(ask("relevance", {"question": ex.question, "context": c}))
                cell.roles.append(str(i))
    else:  # pragma: no cover - the registry and this function are kept in step by the tests
        raise AssertionError(name)
    return cell


# ----------------------------------------------------------------------------------------------------------
# Execution


async def _execute(
    judge: Judge,
    cache: JudgmentCache | None,
    requests: dict[str, tuple[str, dict[str, str]]],
    *,
    max_concurrency: int | None,
    retry_failed: bool,
    progress: Callable[[Progress], None] | None,
    budget: Budget | None = None,
) -> tuple[dict[str, Judgment], dict[str, int | float]]:
    """The LLM core's runner (:func:`ragrade.llm.runner.execute`), reported as the judges report it."""

    def report(ex: Execution) -> None:
        if progress is not None:
            progress(Progress(total=ex.needed, done=len(ex.results), calls=ex.calls, cache_hits=ex.cache_hits,
                              failures=ex.failed, tokens=ex.tokens))

    active = budget is not None and budget.active
    ex = await execute(judge, requests, cache=cache, max_concurrency=max_concurrency, retry_failed=retry_failed,
                       progress=report if progress is not None else None, budget=budget,
                       worst=worst_of(judge, requests) if active else None)
    counters: dict[str, int | float] = {
        "needed": ex.needed,
        "cache_hits": ex.cache_hits,
        "calls": ex.calls,
        "failed": ex.failed,
        "prompt_tokens": ex.prompt_tokens,
        "completion_tokens": ex.completion_tokens,
        "cost": ex.cost,
    }
    if active:
        # Judgments a budget left unasked make their metrics NaN, as failed ones, and are never cached.
        unasked = [k for k in requests if k not in ex.results]
        for k in unasked:
            ex.results[k] = Judgment.failed("not asked: the budget was reached (re-run to resume from the cache)",
                                            transient=True)
        counters["unasked"] = len(unasked)
        counters["budget_reached"] = ex.budget_reached
    return ex.results, counters


def _output(j: Judgment) -> dict[str, Any]:
    """The output of a judgment known to have succeeded."""
    assert j.output is not None
    return j.output


_config_failure = config_failure  # (its old name)


# ----------------------------------------------------------------------------------------------------------
# Scoring


def _score(
    metric: JudgeMetric, examples: list[Example], cells: list[_Cell], results: dict[str, Judgment], profile: str
) -> tuple[np.ndarray, list[dict[str, Any]], dict[str, int]]:
    """Values, details and outcome counts of one metric for all queries (the profile's conventions are
    data: :class:`~ragrade.judges.metrics.JudgeProfile`)."""
    rules = profile_rules(profile)
    n = len(examples)
    values = np.full(n, np.nan)
    details: list[dict[str, Any]] = [{} for _ in range(n)]
    counts = {"scored": 0, "failed": 0, "missing": 0, "degenerate": 0, "undefined": 0}
    ready: list[int] = []
    for q, cell in enumerate(cells):
        if cell.status in ("missing", "degenerate"):
            values[q] = cell.value
            details[q] = {"status": cell.status, "reason": cell.reason}
            counts[cell.status] += 1
            continue
        errors = [f"{role}: {results[k].error}" for k, role in zip(cell.keys, cell.roles, strict=True) if k and not results[k].ok]
        if errors:
            details[q] = {"status": "failed", "reason": "; ".join(errors)}
            counts["failed"] += 1
            continue
        ready.append(q)

    name = metric.name
    num = np.zeros(len(ready))
    den = np.zeros(len(ready))
    if name in ("llm_context_precision", "llm_context_precision_noref"):
        flat: list[int] = []
        offsets = [0]
        for q in ready:
            cell = cells[q]
            verdicts = []
            for k in cell.keys:
                out: dict[str, Any] = _output(results[k]) if k else {"verdict": 0, "reason": "empty chunk"}
                verdicts.append(out)
                flat.append(int(out["verdict"]))
            offsets.append(len(flat))
            details[q] = {"status": "ok", "verdicts": verdicts}
        scores = ranked_precision(np.array(flat, dtype=np.float64), np.array(offsets), metric.k, profile)
    elif name == "context_recall":
        for i, q in enumerate(ready):
            stmts = _output(results[cells[q].keys[0]])["statements"]
            num[i] = sum(s["attributed"] for s in stmts)
            den[i] = len(stmts)
            details[q] = {"status": "ok", "statements": stmts}
        scores = ratio(num, den)
    elif name == "context_entities_recall":
        for i, q in enumerate(ready):
            ref = _output(results[cells[q].keys[0]])["entities"]
            ctx = _output(results[cells[q].keys[1]])["entities"]
            if rules.entity_match == "exact":
                ref_set, ctx_set = set(ref), set(ctx)
            else:
                ref_set = {normalize_entity(e) for e in ref} - {""}
                ctx_set = {normalize_entity(e) for e in ctx} - {""}
            common = ref_set & ctx_set
            num[i], den[i] = len(common), len(ref_set)
            details[q] = {
                "status": "ok",
                "reference_entities": ref,
                "context_entities": ctx,
                "common": sorted(common),
            }
        scores = ratio(num, den, eps=rules.entity_eps)
    elif name == "context_relevancy":
        for i, q in enumerate(ready):
            stmts = [s for k in cells[q].keys for s in _output(results[k])["statements"]]
            num[i] = sum(s["relevant"] for s in stmts)
            if rules.relevancy_denominator == "sentences":
                den[i] = len(split_sentences(_join(examples[q].contexts)))
            else:
                den[i] = len(stmts)
            details[q] = {"status": "ok", "statements": stmts}
        scores = ratio(num, den, empty=rules.relevancy_empty, cap=rules.relevancy_cap)
    else:  # pragma: no cover
        raise AssertionError(name)

    for i, q in enumerate(ready):
        values[q] = scores[i]
        if math.isnan(scores[i]):
            counts["undefined"] += 1
            details[q]["status"] = "undefined"
        else:
            counts["scored"] += 1
    return values, details, counts


# ----------------------------------------------------------------------------------------------------------
# Public entry points


def _open_cache(cache: Any) -> tuple[JudgmentCache | None, bool]:
    """(cache, whether we opened it and must close it)."""
    return open_cache(cache)


async def aevaluate_judged(
    data: Any,
    metrics: Iterable[str | JudgeMetric] | str | None = None,
    *,
    judge: Judge | None = None,
    profile: str = "default",
    cache: Any = True,
    max_concurrency: int | None = None,
    retry_failed: bool = False,
    progress: Callable[[Progress], None] | None = None,
    columns: Mapping[str, str] | None = None,
    budget: Budget | None = None,
) -> Result:
    """Asynchronous :func:`evaluate_judged`."""
    profile = check_profile(profile)
    mlist = parse_many(metrics)
    if judge is None:
        from ragrade.judges.offline import LexicalJudge

        judge = LexicalJudge()
    examples = examples_from(data, **dict(columns or {}))
    requests: dict[str, tuple[str, dict[str, str]]] = {}
    plans = {m: [_plan(m, ex, judge, requests) for ex in examples] for m in mlist}
    store, owned = _open_cache(cache) if judge.cacheable else (None, False)
    try:
        results, counters = await _execute(
            judge, store, requests, max_concurrency=max_concurrency, retry_failed=retry_failed, progress=progress,
            budget=budget,
        )
    finally:
        if owned and store is not None:
            store.close()
    ids = [ex.qid for ex in examples]
    table: dict[str, np.ndarray] = {}
    details: dict[str, dict[str, dict[str, Any]]] = {q: {} for q in ids}
    per_metric: dict[str, dict[str, int]] = {}
    for m in mlist:
        values, dets, counts = _score(m, examples, plans[m], results, profile)
        table[str(m)] = values
        per_metric[str(m)] = counts
        for q, d in zip(ids, dets, strict=True):
            details[q][str(m)] = d
    cache_note = None
    if not judge.cacheable:
        cache_note = (f"judgments of the {judge.name} judge are not cached: it answers one in about the "
                      "time storing it would take (the LLM and semantic judges use the cache)")
    elif store is None:
        cache_note = "the cache is off (--no-cache / cache=False): every judgment was asked"
    info = JudgeInfo(name=judge.name, model=judge.model, profile=profile, outcomes=per_metric, judgments=counters,
                     cache=str(store.path) if store is not None and store.path else None, cache_note=cache_note)
    n = len(examples)
    return Result(QueryColumns(ids, table), {str(m): m for m in mlist},
                  Summary(qrels_queries=n, run_queries=n, evaluated=n, judge=info), Policies(), details=details)


def evaluate_judged(data: Any, metrics: Iterable[str | JudgeMetric] | str | None = None, **kwargs: Any) -> Result:
    """Score judge-based context metrics over a dataset.

    ``data``: a DataFrame or a list of rows with a question, a reference answer and the retrieved contexts
    (rank order); ``columns`` maps the names (``question``, ``reference``, ``contexts``, ``id``,
    ``response``) to yours. ``metrics``: names such as ``"llm_context_precision@3"`` (default: all five).
    ``judge``: any :class:`~ragrade.llm.base.Judge` (default: the offline lexical judge). ``profile``:
    ``"default"``, ``"ragas"`` or ``"deepeval"``. ``cache``: True (user cache directory), a path, a
    :class:`JudgmentCache`, or False. Failed transient judgments in the cache are retried; permanent failures
    only with ``retry_failed=True``. ``budget``: a :class:`ragrade.llm.budget.Budget` (calls, tokens, cost)
    never exceeded; judgments it leaves unasked make their metrics NaN (counted as failed, reason "not
    asked"; ``summary["judgments"]["unasked"]``), and a re-run resumes from the cache.

    Returns a :class:`ragrade.Result` (see the module docstring).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(aevaluate_judged(data, metrics, **kwargs))
    raise RagradeError(
        "evaluate_judged() cannot run inside a running event loop (e.g. Jupyter); "
        "use `await aevaluate_judged(...)` there"
    )


__all__ = ["Example", "Progress", "Usage", "aevaluate_judged", "evaluate_judged", "examples_from"]
