"""``ragrade.retrieve``: ask a retriever every query and keep what it returns as a :class:`Run`, with
per-query latency, failures and an on-disk cache (``docs/retrieve.md``)."""

from __future__ import annotations

import asyncio
import itertools
import math
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ragrade._arrays import member
from ragrade.data import Run
from ragrade.errors import (
    IdMismatchError,
    InputError,
)
from ragrade.options import public
from ragrade.retrieval.adapters import Adapter, Hit, RetrieverConfigError
from ragrade.retrieval.queries import as_queries

Mode = Literal["auto", "threads", "asyncio"]
MODES = ("auto", "threads", "asyncio")

#: Longest failure message kept per query (characters).
MAX_MESSAGE = 500


@dataclass
class RetrievalSummary:
    """What happened while retrieving: counts, wall time and the latency percentiles (seconds).

    Latencies are those of the calls that produced the answers: measured now, or stored in the cache with
    the answer when it came from there (``cached``). Failed queries are left out of the percentiles."""

    retriever: str
    kind: str
    k: int
    mode: str
    concurrency: int
    queries: int
    answered: int
    failed: int
    cached: int
    calls: int
    empty: int
    wall_seconds: float
    latency_p50: float
    latency_p95: float
    latency_p99: float
    latency_mean: float
    latency_max: float
    unordered_scores: int = 0
    failures: dict[str, str] = field(default_factory=dict)

    @property
    def throughput(self) -> float:
        """Calls made per second of wall time (NaN when no call was made)."""
        return self.calls / self.wall_seconds if self.calls and self.wall_seconds > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "failures"}
        out["throughput"] = self.throughput
        out["failures"] = dict(self.failures)
        return out

    def lines(self) -> list[str]:
        """A short account (the same wording in the CLI and in ``repr``)."""
        out = [f"{self.queries} queries asked to {self.retriever} ({self.kind}, k={self.k}, {self.mode}, "
               f"concurrency {self.concurrency}): {self.answered} answered, {self.failed} failed, "
               f"{self.cached} from the cache, {self.calls} calls in {self.wall_seconds:.2f} s"
               + (f" ({self.throughput:.1f} calls/s)" if self.calls else "")]
        if self.answered:
            out.append(f"latency p50 {self.latency_p50 * 1e3:.1f} ms, p95 {self.latency_p95 * 1e3:.1f} ms, "
                       f"p99 {self.latency_p99 * 1e3:.1f} ms, max {self.latency_max * 1e3:.1f} ms")
        if self.empty:
            out.append(f"{self.empty} queries got an empty list (scored 0 by default: empty_run policy)")
        if self.unordered_scores:
            out.append(f"{self.unordered_scores} queries had tied scores or scores not in descending order "
                       f"(distances?): the run keeps the retriever's order as the ranking, without scores")
        for q, msg in list(self.failures.items())[:3]:
            out.append(f"query {q!r} failed: {msg}")
        if self.failed > 3:
            out.append(f"... and {self.failed - 3} more failures (RetrievedRun.failures has them all)")
        return out


class RetrievedRun(Run):
    """A :class:`~ragrade.data.Run` made by :func:`retrieve`, with what happened on the way:

    * ``latency``: a pandas Series of seconds per query (index: query id; failed queries included);
    * ``failures``: ``{query id: message}`` of the queries whose call failed (they are not in the run,
      so the ``missing_run`` policy scores them: 0 by default);
    * ``retrieval``: the :class:`RetrievalSummary` (counts, wall time, p50/p95/p99 latency).

    It is a Run in every other respect: evaluate it, compare it, write it (``ragrade.write_run``; Parquet
    and JSONL keep the retrieved texts)."""

    __slots__ = ("failures", "latency", "retrieval")

    latency: pd.Series
    failures: dict[str, str]
    retrieval: RetrievalSummary

    @classmethod
    def of_run(cls, run: Run, latency: pd.Series, failures: dict[str, str], summary: RetrievalSummary) -> RetrievedRun:
        out = cls(run.query_ids.copy(), run.offsets.copy(), run.doc_codes.copy(), run.doc_vocab.copy(),
                  None if run.scores is None else run.scores.copy(), name=run.name, texts=run.texts)
        out.latency = latency
        out.failures = failures
        out.retrieval = summary
        return out

    def __repr__(self) -> str:
        s = self.retrieval
        return (f"RetrievedRun({self.name!r}, {self.n_queries} queries, {self.n_rows} items, {s.failed} failed, "
                f"{s.cached} cached, p50 {s.latency_p50 * 1e3:.1f} ms)")


@public
def retrieve(retriever: Any, queries: Any, k: int = 20, *, id_key: str | None = None, name: str | None = None,
             concurrency: int = 8, mode: Mode = "auto", cache: Any = None, progress: bool | None = None,
             texts: bool = True, qrels: Any = None, timeout: float | None = None) -> RetrievedRun:
    """Ask ``retriever`` every query and return what it retrieved as a :class:`RetrievedRun`.

    ``retriever``: a callable ``query text -> list`` (ids, ``(id, score)`` pairs, dicts, documents), an
    async callable, a LangChain retriever or a LlamaIndex retriever (:mod:`ragrade.retrieval.adapters`
    says how ids, scores and texts are read; LlamaIndex needs ``id_key``). ``queries``: a mapping of
    query id -> text, a list of ``(id, text)`` pairs, a list of texts, or a topics file (TSV, JSONL,
    Parquet). The first ``k`` results of each query are kept, in the retriever's order: its scores are
    kept when they strictly descend in every query; otherwise (ties, distances) the order alone is the
    ranking, so that no tie rule ever reorders what the retriever returned.

    ``concurrency`` calls run at once: in threads, or as asyncio tasks for async retrievers
    (``mode="auto"``; ``"asyncio"`` also awaits LangChain's ``ainvoke`` and LlamaIndex's ``aretrieve``).
    A call that raises is recorded with its message in ``failures`` and the run goes on. ``cache`` (a
    file path) stores every answer keyed by retriever name, ``id_key``, ``k`` and query text: a re-run
    makes no call. ``progress`` shows a bar on stderr (default: when stderr is a terminal). ``texts=False``
    drops the retrieved texts. With ``qrels``, an :class:`IdMismatchError` is raised when no retrieved id
    is judged there at all (the classic "every metric is 0" mistake: chunk ids against document qrels).
    ``timeout`` (seconds, default None: no limit) bounds each call: a call still running after it is
    recorded as a failure (``TimeoutError: no answer within ... s``) and the run goes on. An async call is
    cancelled (an ``async def`` that blocks without awaiting cannot be); a blocking call cannot be
    stopped (Python cannot stop a thread), so it is left running in a background daemon thread that
    neither holds a concurrency slot nor keeps the process alive.

    >>> run = retrieve(lambda q: ["d1", "d2"] if "bm25" in q else ["d3"], {"q1": "what is bm25", "q2": "dense"},
    ...                k=10, progress=False)
    >>> run.to_lists()
    {'q1': ['d1', 'd2'], 'q2': ['d3']}
    >>> run.retrieval.failed, run.retrieval.calls
    (0, 2)
    """
    qs = as_queries(queries)
    k, concurrency, limit = _checked_arguments(k, concurrency, mode, timeout)
    adapter = Adapter(retriever, id_key=id_key, name=name)
    use_async = _uses_asyncio(adapter, mode)
    answers = _ask(adapter, qs, k, id_key, concurrency, use_async, limit, cache, progress)
    order = [q for q in qs if q in answers.results]
    lists = [answers.results[q] for q in order]
    ordered = [_descending(hits) for hits in lists]
    run = _as_run(lists, order, ordered, texts, adapter.name)
    summary = _summarise(adapter, qs, k, "asyncio" if use_async else "threads", concurrency, answers, order, lists,
                         ordered)
    lat = pd.Series([answers.latency.get(q, math.nan) for q in qs],
                    index=pd.Index(list(qs), name="query", dtype=object), name="latency_seconds", dtype=np.float64)
    out = RetrievedRun.of_run(run, lat, dict(summary.failures), summary)
    if qrels is not None:
        check_ids(out, qrels, id_key=id_key, kind=adapter.kind)
    return out


def _checked_arguments(k: Any, concurrency: Any, mode: Any, timeout: Any) -> tuple[int, int, float | None]:
    """``(k, concurrency, timeout in seconds or None)`` after the checks of :func:`retrieve`."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError("k must be a positive integer", value=k)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int | np.integer) or concurrency < 1:
        raise InputError("concurrency must be a positive integer", value=concurrency)
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}", value=mode)
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float | np.integer
                                                                             | np.floating)
                                or not 0 < float(timeout) < math.inf):
        raise InputError("timeout must be a positive number of seconds (or None: no limit)", value=timeout)
    return int(k), int(concurrency), None if timeout is None else float(timeout)


def _uses_asyncio(adapter: Adapter, mode: Mode) -> bool:
    """Whether the calls run as asyncio tasks (else in threads); a mode the retriever cannot take is refused."""
    if mode == "asyncio" and not adapter.supports_asyncio():
        raise InputError(f"mode='asyncio' needs an async retriever (a coroutine function, or ainvoke/aretrieve); "
                         f"{adapter.name} is a blocking {adapter.kind}: use mode='threads'")
    if mode == "threads" and adapter.is_async:
        raise InputError("an async callable is awaited: use mode='auto' or 'asyncio'")
    return adapter.is_async or mode == "asyncio"


@dataclass
class _Answers:
    """What the retriever (or the cache) answered: hits and latency per query, the failures, how many
    answers came from the cache, and the wall time of the whole."""

    results: dict[str, list[Hit]] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    cached: int = 0
    wall: float = 0.0


def _ask(adapter: Adapter, qs: dict[str, str], k: int, id_key: str | None, concurrency: int, use_async: bool,
         limit: float | None, cache: Any, progress: bool | None) -> _Answers:
    """Every query answered from the cache or by a call (those stored in the cache as they come); a
    :class:`RetrieverConfigError` stops the whole, any other failure is recorded per query."""
    from ragrade.retrieval.cache import RetrievalCache

    store = None if cache is None else (cache if isinstance(cache, RetrievalCache) else RetrievalCache(cache))
    answers = _Answers()
    start = time.perf_counter()
    try:
        pending: list[str] = []
        for q, text in qs.items():
            hit = None if store is None else store.get(adapter.name, id_key, k, text)
            if hit is None:
                pending.append(q)
            else:
                answers.results[q], answers.latency[q] = hit
                answers.cached += 1

        def done(q: str, hits: list[Hit] | None, seconds: float, error: BaseException | None) -> None:
            answers.latency[q] = seconds
            if error is not None:
                if isinstance(error, RetrieverConfigError):
                    raise error
                answers.failures[q] = _message(error)
            else:
                assert hits is not None
                answers.results[q] = hits
                if store is not None:
                    store.put(adapter.name, id_key, k, qs[q], hits, seconds)

        with _progress_bar(progress, len(qs), answers.cached, adapter.name) as advance:
            if pending:
                calls = [(q, qs[q]) for q in pending]
                if use_async:
                    _run_async(adapter, calls, k, concurrency, done, advance, limit)
                else:
                    _run_threads(adapter, calls, k, concurrency, done, advance, limit)
    finally:
        if store is not None and store is not cache:
            store.close()
    answers.wall = time.perf_counter() - start
    return answers


def _as_run(lists: list[list[Hit]], order: list[str], ordered: list[bool], texts: bool, name: str) -> Run:
    """The answered queries as a Run: with the retriever's scores only when they strictly descend in every
    list (otherwise the order alone is the ranking), with the texts when asked for and any were returned."""
    with_scores = all(ordered) and any(len(h) for h in lists)
    return Run.from_lists([[h.doc for h in hits] for hits in lists], query_ids=order,
                          scores=[[float(h.score) for h in hits] for hits in lists] if with_scores else None,  # type: ignore[arg-type]
                          texts=([[h.text for h in hits] for hits in lists]
                                 if texts and any(h.text is not None for hits in lists for h in hits) else None),
                          name=name)


def _summarise(adapter: Adapter, qs: dict[str, str], k: int, mode: str, concurrency: int, answers: _Answers,
               order: list[str], lists: list[list[Hit]], ordered: list[bool]) -> RetrievalSummary:
    """Counts and latency percentiles of the answered queries (failed ones left out of the percentiles)."""
    answered = np.array([answers.latency[q] for q in order], dtype=np.float64)
    pct = np.percentile(answered, [50, 95, 99]) if len(answered) else np.full(3, np.nan)
    return RetrievalSummary(
        retriever=adapter.name, kind=adapter.kind, k=k, mode=mode,
        concurrency=concurrency, queries=len(qs), answered=len(order), failed=len(answers.failures),
        cached=answers.cached, calls=len(qs) - answers.cached, empty=sum(1 for hits in lists if not hits),
        wall_seconds=answers.wall, latency_p50=float(pct[0]), latency_p95=float(pct[1]), latency_p99=float(pct[2]),
        latency_mean=float(answered.mean()) if len(answered) else math.nan,
        latency_max=float(answered.max()) if len(answered) else math.nan,
        unordered_scores=sum(1 for hits, ok in zip(lists, ordered, strict=True)
                             if not ok and all(h.score is not None for h in hits)),
        failures={q: answers.failures[q] for q in qs if q in answers.failures},
    )


def check_ids(run: Any, qrels: Any, *, id_key: str | None = None, kind: str | None = None) -> None:
    """Raise :class:`IdMismatchError` when not one retrieved id (of the queries the qrels judge) is a
    judged id there: every metric would be 0, and the ids are almost surely of another kind (chunk ids
    against document ids, ``"12"`` against ``"doc-12"``). The message shows ids from both sides."""
    from ragrade.engine.inputs import as_qrels, as_run

    r, q = as_run(run), as_qrels(qrels)
    judged = set(q.doc_vocab.tolist())
    common = [x for x in r.query_ids.tolist() if x in q]
    docs = r.per_row_docs()
    in_common = member(r.per_row_queries(), common) if common else np.zeros(0, bool)
    ours = docs[in_common] if len(in_common) else docs[:0]
    if not common:
        raise IdMismatchError(f"no retrieved query is in the qrels (run: {_sample(r.query_ids.tolist())}; qrels: "
                              f"{_sample(q.query_ids.tolist())}): check the query ids", run if isinstance(run, Run)
                              else r)
    if len(ours) == 0 or any(d in judged for d in ours.tolist()):
        return
    hint = ""
    if kind == "llamaindex" and id_key == "node_id":
        hint = " Node ids are chunk ids: use id_key='ref_doc_id' or a metadata field holding the document id."
    elif kind == "llamaindex":
        hint = f" The ids come from id_key={id_key!r}: is that where the document ids are?"
    elif kind == "langchain":
        hint = (" LangChain Document.id is often a chunk or vector-store id: pass id_key='<metadata field>' "
                "holding the document id.")
    raise IdMismatchError(
        f"not one retrieved id is judged in the qrels, so every metric would be 0: retrieved ids look like "
        f"{_sample(ours.tolist())}, judged ids like {_sample(sorted(judged))}.{hint}", run if isinstance(run, Run)
        else r)


def judge_rows(run: Run, queries: Any, references: Any = None) -> list[dict[str, Any]]:
    """Rows for ``ragrade judge`` / :mod:`ragrade.judges` from a run that carries texts: one row per query
    with ``id``, ``question``, ``reference`` (from ``references``, ``{query id: text}``; empty when not
    given: only the judge metrics without a reference can then be used) and ``contexts`` (the retrieved
    texts in rank order). Write them as JSONL for the command line."""
    qs = as_queries(queries)
    refs = {} if references is None else {str(k): v for k, v in dict(references).items()}
    lists = run.text_lists()
    rows = []
    for q, contexts in lists.items():
        if q not in qs:
            raise InputError("a query of the run has no text in the queries given", query=q)
        ref = refs.get(q, "")
        if not isinstance(ref, str):
            raise InputError("a reference must be a string", query=q, value=ref)
        rows.append({"id": q, "question": qs[q], "reference": ref, "contexts": contexts})
    return rows


# -- running the calls ---------------------------------------------------------------------------------
Done = Callable[[str, "list[Hit] | None", float, "BaseException | None"], None]


def _within(fn: Callable[[], list[Hit]], timeout: float) -> list[Hit]:
    """``fn()`` run in a daemon thread of its own, waited for at most ``timeout`` seconds: a call that hangs
    is abandoned there (its thread ends when the call returns, and never keeps the process alive)."""
    box: dict[str, Any] = {}
    finished = threading.Event()

    def target() -> None:
        try:
            box["hits"] = fn()
        except BaseException as exc:
            box["error"] = exc
        finally:
            finished.set()

    threading.Thread(target=target, name="ragrade-retrieve-call", daemon=True).start()
    if not finished.wait(timeout):
        raise TimeoutError(f"no answer within {timeout:g} s (--timeout)")
    if "error" in box:
        raise box["error"]
    return box["hits"]


def _run_threads(adapter: Adapter, calls: list[tuple[str, str]], k: int, concurrency: int, done: Done,
                 advance: Callable[[], None], timeout: float | None = None) -> None:
    def one(text: str) -> tuple[list[Hit] | None, float, BaseException | None]:
        t0 = time.perf_counter()
        try:
            hits = adapter.call(text, k) if timeout is None else _within(lambda: adapter.call(text, k), timeout)
        except Exception as exc:
            return None, time.perf_counter() - t0, exc
        return hits, time.perf_counter() - t0, None

    if concurrency == 1:
        for q, text in calls:
            done(q, *one(text))
            advance()
        return
    with ThreadPoolExecutor(max_workers=min(concurrency, len(calls))) as pool:
        futures = {pool.submit(one, text): q for q, text in calls}
        try:
            for fut in as_completed(futures):
                done(futures[fut], *fut.result())
                advance()
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def _run_async(adapter: Adapter, calls: list[tuple[str, str]], k: int, concurrency: int, done: Done,
               advance: Callable[[], None], timeout: float | None = None) -> None:
    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(q: str, text: str) -> tuple[str, list[Hit] | None, float, BaseException | None]:
            async with gate:
                t0 = time.perf_counter()
                try:
                    if timeout is None:
                        hits = await adapter.acall(text, k)
                    else:
                        try:
                            hits = await asyncio.wait_for(adapter.acall(text, k), timeout)
                        except TimeoutError:
                            raise TimeoutError(f"no answer within {timeout:g} s (--timeout)") from None
                except Exception as exc:
                    return q, None, time.perf_counter() - t0, exc
                return q, hits, time.perf_counter() - t0, None

        tasks = [asyncio.ensure_future(one(q, text)) for q, text in calls]
        try:
            for fut in asyncio.as_completed(tasks):
                done(*(await fut))
                advance()
        finally:
            for t in tasks:
                t.cancel()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
        return
    # Called from inside a running event loop (a notebook): run ours in a thread of its own.
    error: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(main())
        except BaseException as exc:
            error.append(exc)

    t = threading.Thread(target=target, name="ragrade-retrieve")
    t.start()
    t.join()
    if error:
        raise error[0]


@contextmanager
def _progress_bar(show: bool | None, total: int, already: int, name: str) -> Iterator[Callable[[], None]]:
    if show is None:
        show = sys.stderr.isatty()
    if not show:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True)
    with bar:
        task = bar.add_task(f"retrieving ({name})", total=total, completed=already)
        yield lambda: bar.advance(task)


def _descending(hits: list[Hit]) -> bool:
    """Every hit has a finite score and the scores strictly decrease down the list (so that ranking by
    score, with any tie rule, gives back the retriever's order)."""
    scores = [h.score for h in hits]
    if any(s is None or not math.isfinite(s) for s in scores):
        return False
    return all(a > b for a, b in itertools.pairwise(scores))  # type: ignore[operator]


def _message(exc: BaseException) -> str:
    from ragrade.llm.base import redact

    text = f"{type(exc).__name__}: {exc}".strip()
    text = str(redact(text))
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _sample(ids: list[Any], n: int = 3) -> str:
    shown = ", ".join(repr(str(x)) for x in ids[:n])
    return shown + (", ..." if len(ids) > n else "")
