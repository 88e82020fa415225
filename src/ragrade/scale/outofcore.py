"""Evaluation of files larger than memory, on one machine, with the results of the in-memory engine.

``ragrade.evaluate(qrels_path, run_path, metrics, max_memory="4GiB")`` (``ragrade evaluate ...
--max-memory 4GiB``) reads the inputs piece by piece (:mod:`ragrade.io.stream`), evaluates each piece with
the in-memory engine and puts the pieces' results together (:mod:`ragrade.scale.combine`). Without
``max_memory`` this happens on its own when the files would not fit: their estimated in-memory size is
above half the memory available (:func:`budget_for`); smaller inputs take the in-memory path, untouched.

Three ways to cut the inputs, tried in this order (``docs/scale.md`` gives their costs):

1. **stream, ground truth in memory**: when the ground truth is small next to the budget (the usual case:
   qrels are far smaller than runs), it is read whole and the run is streamed in windows of whole queries;
   each window is evaluated against the ground truth of its queries. Needs a run grouped by query (any
   order of queries).
2. **stream both**: when both files are grouped by query and list their common queries in the same order
   (e.g. both sorted by query id), both are streamed side by side (the ground truth's query ids are read
   first, as 8-byte hashes, to tell a query only in the run from one further down the ground truth).
3. **partition**: otherwise both files are split into temporary files by a hash of the query id (every row
   of a query, on both sides, in one partition), and each partition is evaluated in memory.

A file found not to be grouped (or the orders not to agree) while streaming sends the evaluation to the
next way, from the start. Results are the in-memory engine's: same per-query values, same order of rows,
same means, same summary counts (tests/scale/).
"""

from __future__ import annotations

import math
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ragrade.data import Qrels, Run
from ragrade.engine.result import Result, Summary
from ragrade.errors import InputError, PolicyError, RagradeWarning
from ragrade.errors import StartAgain as _Again
from ragrade.io import stream
from ragrade.io.stream import NotGrouped, RankRule, SeenIds, Source, hash_ids
from ragrade.scale.budget import (
    PARQUET_ROW_BYTES,
    PARTITION_BLOCK_SHARE,
    TREC_RUN_FACTOR,
    budget_for,
    estimated_memory,
    memory_available,
    parse_memory,
)
from ragrade.scale.combine import combine

PartEvaluator = Callable[[Qrels, Run], Result]


def evaluate_large(qrels: Any, run: Any, labels: Sequence[tuple[str, Any]], max_memory: Any, profile: Any,
                   matcher: Any, evaluate_part: Callable[..., Result],
                   options: dict[str, Any] | None = None, **read: Any) -> Result | None:
    """``ragrade.evaluate``'s way in: the out-of-core result, or None when the in-memory path applies
    (:func:`budget_for`). Out of core computes id metrics, under the default convention or an engine
    profile; asked for anything else (``max_memory`` with text metrics, a matcher or a list profile), it
    is an :class:`~ragrade.errors.InputError`.

    ``evaluate_part(qrels, run)`` evaluates one piece; with ``options`` (the policy settings given) it is
    also called as ``evaluate_part(qrels, run, labels, settings)`` when a value depends on the top grade of
    the whole ground truth (:func:`pin_collection`)."""
    from ragrade.engine.inputs import is_path

    eligible = (matcher is None and (profile is None or profile.kind != "list")
                and all(m.family.kind == "id" for _, m in labels))
    if max_memory is None and not eligible:
        return None
    budget = budget_for(qrels, run, max_memory)
    if budget is None:
        return None
    if not eligible:
        raise InputError("max_memory evaluates id metrics (under the default convention or an engine profile) "
                         "from two files; text metrics, matchers and list profiles read their inputs whole")
    if not (is_path(qrels) and is_path(run)):
        raise InputError("max_memory needs the ground truth and the run as file paths (TREC or Parquet)")
    if options is None:
        return evaluate_paths(qrels, run, evaluate_part, budget=budget, **read)
    return evaluate_budgeted(qrels, run, labels, evaluate_part, budget, options, **read)


def evaluate_budgeted(qrels: Any, run: Any, labels: Sequence[tuple[str, Any]], evaluate_part: Callable[..., Result],
                      budget: int, options: dict[str, Any], **kwargs: Any) -> Result:
    """:func:`evaluate_paths` for ``labels`` under the policy settings ``options``, the pieces told the top
    grade of the whole ground truth when a value depends on it (:func:`needs_top_grade`).
    ``evaluate_part(qrels, run, labels, settings)`` evaluates one piece (``labels``, ``settings``: those
    to use, defaulting to the caller's); ``kwargs`` go to :func:`evaluate_paths`."""
    pinned = None
    if needs_top_grade(labels, options):

        def pinned(top: float) -> PartEvaluator:
            lab, extra = pin_collection(labels, options, top)
            return lambda q, r: with_twins(evaluate_part(q, r, lab, extra), lab)

    result = evaluate_paths(qrels, run, evaluate_part, budget=budget, collection=pinned, **kwargs)
    if pinned is not None:
        result = unpin(result, labels, options)
    return result


# -- values that depend on the whole ground truth -------------------------------------------------------------
def needs_top_grade(labels: Sequence[tuple[str, Any]], options: dict[str, Any]) -> bool:
    """Whether a per-query value depends on the top grade of the *whole* ground truth (so a piece must be
    told it): a C/W/L measure without ``max_rel`` (its gain scale tops out there) or ``unjudged="bounds"``
    without ``upper_grade`` (the grade an unjudged document gets in the upper bound)."""
    if options.get("unjudged") == "bounds" and options.get("upper_grade") is None:
        return True
    return any(m.family.param("max_rel") is not None and m.get("max_rel") is None for _, m in labels)


def pin_collection(labels: Sequence[tuple[str, Any]], options: dict[str, Any], top: float
                   ) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """``labels`` and ``options`` with the whole ground truth's top grade ``top`` written in where the engine
    would read it from the ground truth it is given (see :func:`needs_top_grade`): ``max_rel`` of the C/W/L
    measures (the engine's rule: ``max(top, min_rel + 1)``) and ``upper_grade`` (``top``, or 1 when no grade
    is positive). A piece evaluated with them gives the values of the whole."""
    from ragrade.metrics import Metric

    out: list[tuple[str, Any]] = []
    for label, m in labels:
        fam = m.family
        if fam.param("max_rel") is not None and m.get("max_rel") is None:
            hi = float(max(top, float(m.get("min_rel")) + 1))
            params = dict(m.params)
            params["max_rel"] = hi
            names = [p.name for p in fam.params]
            m = Metric(m.name, m.k, tuple(sorted(params.items(), key=lambda kv: names.index(kv[0]))))
        out.append((label, m))
    extra = dict(options)
    if options.get("unjudged") == "bounds" and options.get("upper_grade") is None:
        extra["upper_grade"] = float(top) if top > 0 else 1.0
    return out, extra


def with_twins(result: Result, labels: Sequence[tuple[str, Any]]) -> Result:
    """The columns of labels whose pinned metric came out equal to an earlier one's (``rbp_cwl`` next to
    ``rbp_cwl(max_rel=3)`` when the top grade is 3: the engine keeps one of two equal metrics), copied from
    that one, with its notes, so that every label the caller gave has its column."""
    first: dict[Any, str] = {}
    twins: list[tuple[str, str]] = []
    for label, m in labels:
        if m in first:
            twins.append((label, first[m]))
        else:
            first[m] = label
    if not twins:
        return result
    order = [label for label, _ in labels]
    frame, upper = result.per_query.copy(), None if result.upper is None else result.upper.copy()
    no_relevant = dict(result.summary.no_relevant)
    nan_means, metrics = set(result.nan_means), dict(result.metrics)
    for label, src in twins:
        frame[label] = frame[src]
        if upper is not None:
            upper[label] = upper[src]
        if src in no_relevant:
            no_relevant[label] = list(no_relevant[src])
        if src in nan_means:
            nan_means.add(label)
        metrics[label] = metrics[src]
    summary = replace(result.summary, no_relevant={k: no_relevant[k] for k in order if k in no_relevant})
    return result.replace(per_query=frame[order], upper=None if upper is None else upper[order], summary=summary,
                          nan_means=nan_means, metrics={k: metrics[k] for k in order})


def unpin(result: Result, labels: Sequence[tuple[str, Any]], options: dict[str, Any]) -> Result:
    """Put back the metrics and policies the caller gave (undoing :func:`pin_collection` on the result)."""
    return result.replace(metrics=dict(labels), policies=replace(result.policies,
                                                                 upper_grade=options.get("upper_grade")))


def top_grade(src: Source, sizes: Sizes) -> float:
    """The highest grade of a ground-truth file (one streaming pass, as the pieces read it)."""
    top = -math.inf
    for w in stream.windows(src, sizes.window_bytes, sizes.window_rows):
        assert isinstance(w.data, Qrels)
        g = w.data.grades
        if len(g):
            top = max(top, float(np.max(g)))
    return top if math.isfinite(top) else 0.0


@dataclass(frozen=True)
class Sizes:
    """Piece sizes from a budget: bytes of TREC run text and rows of Parquet per window, rows per
    partition."""

    budget: int
    window_bytes: int
    window_rows: int
    partitions: int = 0  # 0: from the budget

    @classmethod
    def of(cls, budget: int) -> Sizes:
        window_bytes = max(1 << 20, int(budget / (2 * TREC_RUN_FACTOR)))
        window_rows = max(1 << 14, budget // (2 * PARQUET_ROW_BYTES))
        return cls(budget, window_bytes, window_rows)


def evaluate_paths(qrels: Any, run: Any, evaluate_part: PartEvaluator, *, budget: int,
                   qrels_format: str | None = None, run_format: str | None = None, run_name: str | None = None,
                   qrels_options: dict[str, Any] | None = None, run_options: dict[str, Any] | None = None,
                   tmpdir: str | None = None, how: str | None = None, sizes: Sizes | None = None,
                   report: dict[str, Any] | None = None,
                   collection: Callable[[float], PartEvaluator] | None = None) -> Result:
    """Evaluate the files ``qrels`` and ``run`` in about ``budget`` bytes of memory (see the module
    docstring). ``evaluate_part(qrels, run)`` evaluates one piece in memory (``ragrade.evaluate`` with the
    caller's metrics and policies). ``how`` forces a way: ``"memory_qrels"``, ``"stream"`` or
    ``"partition"`` (tests); ``tmpdir`` is where partitions are written (default: the system's); ``sizes``
    overrides the piece sizes derived from the budget (tests); ``report``, a dict, receives ``way`` (the
    way that finished), ``tried`` and ``pieces`` (the number of pieces evaluated). ``collection``: given
    the top grade of the whole ground truth, the part evaluator to use instead of ``evaluate_part`` (one
    more pass over the ground truth finds it; see :func:`needs_top_grade`)."""
    from contextlib import ExitStack

    from ragrade.io.sources import readable_path

    with ExitStack() as files:  # pipes are copied to files first (they are read more than once)
        qpath = files.enter_context(readable_path(qrels, directory_ok=True))
        rpath = files.enter_context(readable_path(run, directory_ok=True))
        return _evaluate_sources(stream.open_source(qpath, "qrels", qrels_format, **(qrels_options or {})),
                                 stream.open_source(rpath, "run", run_format, run_name, **(run_options or {})),
                                 evaluate_part, budget=budget, tmpdir=tmpdir, how=how, sizes=sizes, report=report,
                                 collection=collection)


def _evaluate_sources(src_q: Source, src_r: Source, evaluate_part: PartEvaluator, *, budget: int,
                      tmpdir: str | None, how: str | None, sizes: Sizes | None, report: dict[str, Any] | None,
                      collection: Callable[[float], PartEvaluator] | None) -> Result:
    sizes = sizes if sizes is not None else Sizes.of(budget)
    if collection is not None:
        evaluate_part = collection(top_grade(src_q, sizes))
    ways = ["memory_qrels", "stream", "partition"]
    if how is not None:
        if how not in ways:
            raise InputError(f"how must be one of {ways}", value=how)
        ways = [how] if how == "partition" else [how, "partition"]
    elif not starts_grouped(src_r, sizes):
        ways = ["partition"]  # a run seen not grouped in its first lines: no window is read in vain
    elif estimated_memory(src_q) > budget // 4:
        ways.remove("memory_qrels")

    def quiet(q: Qrels, r: Run) -> Result:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagradeWarning)
            return evaluate_part(q, r)

    info = report if report is not None else {}
    info["tried"] = []
    for way in ways:
        info["tried"].append(way)
        qorder = rorder = None
        try:
            if way == "memory_qrels":
                parts, qorder, rorder = _memory_qrels(src_q, src_r, sizes, quiet)
            elif way == "stream":
                parts, rorder = _stream_both(src_q, src_r, sizes, quiet)
            else:
                parts, qorder, rorder = _partition(src_q, src_r, sizes, quiet, tmpdir)
        except NotGrouped:
            continue
        info["way"], info["pieces"] = way, len(parts)
        return _finish(parts, qrels_order=qorder, run_order=rorder)
    raise AssertionError("the partitioned way always finishes")  # pragma: no cover


def starts_grouped(src: Source, sizes: Sizes, sample_bytes: int = 4 << 20, sample_rows: int = 1 << 16) -> bool:
    """Whether the first lines of a file (a few MiB) hold each query's rows together. A run that is not
    grouped is found out here, before a whole window of it is read (for a run in random order, a window
    read as a run costs several times its size in memory) only to be sent to the partitioned way."""
    import pyarrow.compute as pc

    first = next(iter(stream.blocks(src, min(sizes.window_bytes, sample_bytes), min(sizes.window_rows, sample_rows))),
                 None)
    if first is None or len(first.keys) < 2:
        return True
    keys = first.keys.combine_chunks()
    n = len(keys)
    changes = int(pc.sum(pc.not_equal(keys.slice(1), keys.slice(0, n - 1))).as_py() or 0)
    distinct = len(pc.unique(keys))
    return changes + 1 == distinct


# -- pieces ----------------------------------------------------------------------------------------------
@dataclass
class _OnlyInRun:
    """A piece of the run none of whose queries is in the ground truth: summarised once the policies
    in force are known (they come from the first evaluated piece)."""

    query_ids: list[str]
    identical_rows: int

    @classmethod
    def of(cls, run: Run) -> _OnlyInRun:
        same = int((run.per_row_docs() == run.per_row_queries()).sum()) if run.n_rows else 0
        return cls(run.query_ids.tolist(), same)


Piece = Result | _OnlyInRun


def _finish(pieces: Sequence[Piece], qrels_order: pd.Series | None = None,
            run_order: pd.Series | None = None) -> Result:
    first = next(p for p in pieces if isinstance(p, Result))
    pol = first.policies
    parts: list[Result] = []
    for p in pieces:
        if isinstance(p, Result):
            parts.append(p)
            continue
        if pol.missing_qrels == "error":
            raise PolicyError(f"{len(p.query_ids)} run queries have no ground truth (e.g. {p.query_ids[0]!r}); "
                              "set missing_qrels='ignore' to leave them out")
        frame = first.per_query.iloc[:0]
        summary = Summary(qrels_queries=0, run_queries=len(p.query_ids), evaluated=0, only_in_run=p.query_ids,
                          identical_ids_dropped=p.identical_rows if pol.identical_ids == "drop" else 0)
        parts.append(Result(frame, first.metrics, summary, pol, run_name=first.run_name, profile=first.profile))
    return combine(parts, qrels_order=qrels_order, run_order=run_order)


def empty_run(name: str | None) -> Run:
    """A run with no query (the ground-truth queries of a piece that the run does not have)."""
    return Run(np.zeros(0, dtype=object), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32),
               np.zeros(0, dtype=object), np.zeros(0, dtype=np.float64), name=name)


def take_queries(qrels: Qrels, which: np.ndarray) -> Qrels:
    """The judgments of queries ``which`` (indices into ``qrels.query_ids``, in the order given)."""
    off = qrels.offsets
    which = np.asarray(which, dtype=np.int64)
    counts = off[which + 1] - off[which]
    new_off = np.zeros(len(which) + 1, dtype=np.int64)
    np.cumsum(counts, out=new_off[1:])
    rows = np.repeat(off[which] - new_off[:-1], counts) + np.arange(int(new_off[-1]), dtype=np.int64)
    units = qrels.unit_ids()[rows] if qrels.has_groups else None
    qids = qrels.query_ids[which]
    grades = qrels.grades[rows]
    if qrels.raw_is_arrow:
        raw = qrels.raw_docs.take(pa.array(rows))
        if isinstance(raw, pa.ChunkedArray):
            raw = raw.combine_chunks()
        return Qrels(qids, new_off, None, None, grades, units, raw_docs=raw)
    return Qrels(qids, new_off, qrels.doc_codes[rows], qrels.doc_vocab, grades, units)


def concat_qrels(pieces: Sequence[Qrels]) -> Qrels:
    """Judgments of several pieces (distinct queries) as one :class:`Qrels`, in the order given."""
    if len(pieces) == 1:
        return pieces[0]
    qids = np.concatenate([p.query_ids for p in pieces])
    counts = np.concatenate([np.diff(p.offsets) for p in pieces])
    off = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    grades = np.concatenate([p.grades for p in pieces])
    units = np.concatenate([p.unit_ids() for p in pieces]) if any(p.has_groups for p in pieces) else None
    arrays: list[pa.Array] = []
    for p in pieces:
        raw = p.raw_docs if p.raw_is_arrow else pa.array(p.per_row_docs(), type=pa.large_string())
        chunks = raw.chunks if isinstance(raw, pa.ChunkedArray) else [raw]
        arrays.extend(c.cast(pa.large_string()) for c in chunks)
    docs = pa.chunked_array(arrays, type=pa.large_string()).combine_chunks()
    return Qrels(qids, off, None, None, grades, units, raw_docs=docs)


def _read_whole_qrels(src: Source) -> Qrels:
    """The whole ground truth, read as the in-memory path reads it."""
    from ragrade.io import read_qrels

    if src.is_trec:
        return read_qrels(src.path, src.format)
    if not os.path.isdir(src.path):
        return read_qrels(src.path, "parquet", **src.options)
    import pyarrow.dataset as ds

    from ragrade.io.origins import resolve_origins
    from ragrade.io.tables import table_to_qrels

    table = ds.dataset(src.path, format="parquet").to_table()
    locate = src.locator(0, table)
    opts = src.options
    table, locate = resolve_origins(table, locate, src.path, opts.get("prefer"), opts.get("query_col"),
                                    opts.get("doc_col"))
    keep = {k: v for k, v in opts.items() if k in ("query_col", "doc_col", "grade_col", "list_col", "unit_col")}
    return table_to_qrels(table, src.path, locate, **keep)


def _windows_with_rule(src_r: Source, sizes: Sizes, ranks: bool | None, rule: RankRule | None
                       ) -> Iterator[stream.Window]:
    yield from stream.windows(src_r, sizes.window_bytes, sizes.window_rows, ranks=ranks, rule=rule)


#: Added to the order key of a query with an empty retrieved list: the readers list those after the others.
_EMPTY_LAST = 1 << 62


class RunOrder:
    """The run's order of queries, gathered window by window: the readers list queries in their order of
    first appearance, those with an empty retrieved list (Parquet list layout) after the others. Kept only
    once a window has such a query (otherwise the windows' order is the run's)."""

    def __init__(self) -> None:
        self.keys: list[pd.Series] = []
        self.needed = False

    def add(self, w: stream.Window, only_in_run: np.ndarray | None = None) -> None:
        """``only_in_run``: which of the window's queries are not in the ground truth. The order is only
        read for the summary's run-ordered lists (queries only in the run, empty lists), so only those
        queries are kept (a million run queries would otherwise hold a million ids)."""
        run = w.data
        keys = w.first_row + np.arange(run.n_queries, dtype=np.int64)
        empty = np.diff(run.offsets) == 0
        if empty.any():
            self.needed = True
            keys[empty] += _EMPTY_LAST
        ids = run.query_ids
        if only_in_run is not None:
            keep = only_in_run | empty
            keys, ids = keys[keep], ids[keep]
        self.keys.append(pd.Series(keys, index=pd.Index(ids, dtype=object)))

    def series(self) -> pd.Series | None:
        return pd.concat(self.keys) if self.needed and self.keys else None


def _with_three_columns(src_r: Source, sizes: Sizes, body: Callable[[Iterator[stream.Window]], Any]) -> Any:
    """Run ``body`` over the run's windows; a three-column run's numbers read as ranks or scores by the
    whole file's rule (the first window's verdict is a guess, checked at the end; a wrong guess means a
    second reading with the right one)."""
    if not src_r.three_columns:
        return body(_windows_with_rule(src_r, sizes, None, None))
    rule = RankRule(src_r)
    guess: list[bool] = []

    def observed() -> Iterator[stream.Window]:
        for i, run in enumerate(_windows_with_rule(src_r, sizes, guess[0] if guess else False, rule)):
            if i == 0 and not guess:
                try:
                    guess.append(rule.ranks())
                except InputError:
                    guess.append(False)
                if guess[0]:  # read as scores so far: start again as ranks
                    raise _Again
            yield run
            run = None  # type: ignore[assignment]

    try:
        out = body(observed())
    except _Again:
        rule = RankRule(src_r)
        out = body(observed())
    final = rule.ranks()
    if final != (guess[0] if guess else False):
        return body(_windows_with_rule(src_r, sizes, final, None))
    return out


def _memory_qrels(src_q: Source, src_r: Source, sizes: Sizes, evaluate_part: PartEvaluator
                  ) -> tuple[list[Piece], pd.Series, pd.Series | None]:
    qrels = _read_whole_qrels(src_q)
    qindex = pd.Index(qrels.query_ids, dtype=object)
    name = src_r.name

    def body(runs: Iterator[stream.Window]) -> tuple[list[Piece], pd.Series | None]:
        used = np.zeros(qrels.n_queries, dtype=bool)
        seen = SeenIds()
        pieces: list[Piece] = []
        order = RunOrder()
        def step(w: stream.Window) -> Piece:
            run = w.data
            assert isinstance(run, Run)
            if not seen.add(hash_ids(run.query_ids)):
                raise NotGrouped
            pos = qindex.get_indexer(run.query_ids)
            order.add(w, pos < 0)
            sel = np.sort(pos[pos >= 0])
            if len(sel) == 0:
                return _OnlyInRun.of(run)
            used[sel] = True
            return evaluate_part(take_queries(qrels, sel), run)

        for w in runs:
            pieces.append(step(w))
            del w  # the window is not held while the next one is read
        rest = np.flatnonzero(~used)
        if len(rest):
            pieces.append(evaluate_part(take_queries(qrels, rest), empty_run(name)))
        return pieces, order.series()

    pieces, rorder = _with_three_columns(src_r, sizes, body)
    return pieces, pd.Series(np.arange(qrels.n_queries), index=qindex), rorder


def _stream_both(src_q: Source, src_r: Source, sizes: Sizes, evaluate_part: PartEvaluator
                 ) -> tuple[list[Piece], pd.Series | None]:
    # The ground truth's query ids, as hashes (and a check that it is grouped).
    qset = SeenIds()
    qbytes, qrows = max(1, sizes.window_bytes // 8), max(1, sizes.window_rows // 8)
    for w in stream.windows(src_q, qbytes, qrows):
        if not qset.add(hash_ids(w.data.query_ids)):
            raise NotGrouped
    name = src_r.name
    limit = max(1024, sizes.budget // 4 // 64)  # rows of ground truth held ahead at most (about 64 bytes each)

    def body(runs: Iterator[stream.Window]) -> tuple[list[Piece], pd.Series | None]:
        qwindows = stream.windows(src_q, qbytes, qrows)
        buffer: list[Qrels] = []  # ground-truth windows read, not yet used (the first one from `start`)
        start = 0
        buffered_h = np.zeros(0, dtype=np.uint64)  # hashes of their unused queries, in order
        consumed = SeenIds()
        seen = SeenIds()
        pieces: list[Piece] = []
        order = RunOrder()

        def take_prefix(n: int) -> Qrels:
            nonlocal start, buffered_h
            out: list[Qrels] = []
            left = n
            while left:
                w = buffer[0]
                avail = w.n_queries - start
                k = min(avail, left)
                out.append(w if (start == 0 and k == w.n_queries) else
                           take_queries(w, np.arange(start, start + k)))
                left -= k
                if k == avail:
                    buffer.pop(0)
                    start = 0
                else:
                    start += k
            consumed.add(buffered_h[:n])
            buffered_h = buffered_h[n:]
            return concat_qrels(out)

        def step(win: stream.Window) -> Piece:
            nonlocal buffered_h
            run = win.data
            assert isinstance(run, Run)
            h = hash_ids(run.query_ids)
            if not seen.add(h):
                raise NotGrouped
            inside = qset.contains(h)
            order.add(win, ~inside)
            needed = h[inside]
            if len(needed) == 0:
                return _OnlyInRun.of(run)
            if consumed.contains(needed).any():
                raise NotGrouped  # a query the ground truth listed earlier: the orders differ
            while True:
                loc = pd.Index(buffered_h).get_indexer(needed)
                if (loc >= 0).all():
                    break
                w = next(qwindows, None)
                unused = sum(q.n_rows for q in buffer) - (int(buffer[0].offsets[start]) if buffer else 0)
                if w is None or unused > limit:
                    raise NotGrouped  # not ahead within reach: the orders differ
                assert isinstance(w.data, Qrels)
                buffer.append(w.data)
                buffered_h = np.concatenate([buffered_h, hash_ids(w.data.query_ids)])
            return evaluate_part(take_prefix(int(loc.max()) + 1), run)

        for win in runs:
            pieces.append(step(win))
            del win  # the window is not held while the next one is read
        if len(buffered_h):
            pieces.append(evaluate_part(take_prefix(len(buffered_h)), empty_run(name)))
        for w in qwindows:
            assert isinstance(w.data, Qrels)
            pieces.append(evaluate_part(w.data, empty_run(name)))
        return pieces, order.series()

    return _with_three_columns(src_r, sizes, body)


# -- partitions --------------------------------------------------------------------------------------------
ROW = "__ragrade_row"


def _partition(src_q: Source, src_r: Source, sizes: Sizes, evaluate_part: PartEvaluator, tmpdir: str | None
               ) -> tuple[list[Piece], pd.Series, pd.Series]:
    from ragrade.io.spill import read_partition

    need = estimated_memory(src_q) + estimated_memory(src_r)
    n_parts = sizes.partitions or int(min(_max_open_files(), max(1, math.ceil(need / max(sizes.budget // 4, 1)))))
    rule = RankRule(src_r) if src_r.three_columns else None
    with tempfile.TemporaryDirectory(prefix="ragrade-", dir=tmpdir) as tmp:
        qfiles = _write_partitions(src_q, sizes, n_parts, os.path.join(tmp, "qrels"), None)
        rfiles = _write_partitions(src_r, sizes, n_parts, os.path.join(tmp, "run"), rule)
        ranks = rule.ranks() if rule is not None else None
        pieces: list[Piece] = []
        qorders: list[pd.Series] = []
        rorders: list[pd.Series] = []
        for p in range(n_parts):
            qt = read_partition(qfiles[p])
            rt = read_partition(rfiles[p])
            if qt is None and rt is None:
                continue
            rt = None if rt is None else _grouped(src_r, rt)
            qt = None if qt is None else _grouped(src_q, qt)
            run = None if rt is None else _partition_run(src_r, rt, ranks)
            if run is not None:
                rorders.append(_first_rows(src_r, rt, run))
            if qt is None:
                assert run is not None
                pieces.append(_OnlyInRun.of(run))
                continue
            qrels = _partition_qrels(src_q, qt)
            qorders.append(_first_rows(src_q, qt, qrels))
            pieces.append(evaluate_part(qrels, run if run is not None else empty_run(src_r.name)))
            del qt, rt, run, qrels
    qorder = pd.concat(qorders) if qorders else pd.Series(dtype=np.int64)
    rorder = pd.concat(rorders) if rorders else pd.Series(dtype=np.int64)
    return pieces, qorder, rorder


def _max_open_files() -> int:
    """Partitions written at once: one open file each, well below the process's limit."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - not a POSIX system
        soft = 512
    return int(max(8, min(1024, (soft if soft > 0 else 1024) - 64)))


def _write_partitions(src: Source, sizes: Sizes, n_parts: int, stem: str, rule: RankRule | None) -> list[str]:
    from ragrade.io.spill import Partitions

    schema = None
    with Partitions(stem, n_parts) as parts:
        for block in stream.blocks(src, max(1, sizes.window_bytes // PARTITION_BLOCK_SHARE),
                                   max(1, sizes.window_rows // PARTITION_BLOCK_SHARE), rule):
            t = block.table.append_column(ROW, pa.array(np.arange(block.first_row, block.first_row + block.table.num_rows,
                                                                  dtype=np.int64)))
            if schema is None:
                schema = t.schema
            elif t.schema != schema:
                try:
                    t = t.cast(schema)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
                    raise InputError(f"{src.path}: the columns change type between row groups ({exc})") from None
            part = stream.bucket_of(block.keys, n_parts)
            order = np.argsort(part, kind="stable")
            t = t.take(pa.array(order))
            bounds = np.searchsorted(part[order], np.arange(n_parts + 1))
            for p in np.flatnonzero(np.diff(bounds)).tolist():
                parts.write(p, t.slice(int(bounds[p]), int(bounds[p + 1] - bounds[p])))
    return parts.files


def _partition_locator(src: Source, table: pa.Table) -> Callable[[int], tuple[int | None, str | None]]:
    rows = table.column(ROW).to_numpy()
    if src.is_trec:
        whole = src.locator(0)
        return lambda r: whole(int(rows[r]))
    data = table.drop_columns([ROW])

    def locate(r: int) -> tuple[int | None, str | None]:
        values = data.slice(r, 1).to_pylist()[0]
        shown = ", ".join(f"{k}={stream.short_repr(v)}" for k, v in values.items())
        return None, f"row {int(rows[r]) + 1}: {shown}"

    return locate


def _grouped(src: Source, table: pa.Table) -> pa.Table:
    """A partition's rows grouped by query (in order of first appearance), each query's rows in file order
    (rows are written to a partition in file order): the readers then take their grouped path."""
    import pyarrow.compute as pc

    col = table.column(stream.query_column(src, table.column_names))
    codes = pc.dictionary_encode(col).combine_chunks().indices.to_numpy(zero_copy_only=False)
    if len(codes) < 2 or bool((codes[1:] >= codes[:-1]).all()):
        return table  # already grouped
    return table.take(pa.array(np.argsort(codes, kind="stable")))


def _partition_run(src: Source, table: pa.Table, ranks: bool | None) -> Run:
    from ragrade.io.tables import table_to_run

    locate = _partition_locator(src, table)
    data = table.drop_columns([ROW])
    if src.is_trec and src.three_columns:
        data = data.rename_columns(["query", "doc", "rank" if ranks else "score"])
    opts = {k: v for k, v in src.options.items() if k in ("query_col", "doc_col", "score_col", "rank_col", "list_col")}
    return table_to_run(data, src.path, locate, name=src.name, **opts)


def _partition_qrels(src: Source, table: pa.Table) -> Qrels:
    from ragrade.io.origins import resolve_origins
    from ragrade.io.tables import table_to_qrels

    locate = _partition_locator(src, table)
    data = table.drop_columns([ROW])
    opts = src.options
    if not src.is_trec:
        data, locate = resolve_origins(data, locate, src.path, opts.get("prefer"), opts.get("query_col"),
                                       opts.get("doc_col"))
    keep = {k: v for k, v in opts.items() if k in ("query_col", "doc_col", "grade_col", "list_col", "unit_col")}
    return table_to_qrels(data, src.path, locate, **keep)


def _first_rows(src: Source, table: pa.Table, data: Qrels | Run) -> pd.Series:
    """Each query's first data row in the whole file (its place in the file's order of queries), from a
    partition grouped by :func:`_grouped`."""
    import pyarrow.compute as pc

    keys = stream.query_keys(table.column(stream.query_column(src, table.column_names))).combine_chunks()
    n = len(keys)
    change = np.flatnonzero(pc.not_equal(keys.slice(1), keys.slice(0, n - 1)).to_numpy(zero_copy_only=False)) + 1
    starts = pa.array(np.concatenate(([0], change)).astype(np.int64))
    first = pd.Series(table.column(ROW).take(starts).to_numpy(),
                      index=pd.Index(keys.take(starts).to_numpy(zero_copy_only=False), dtype=object))
    out = first.reindex(pd.Index(data.query_ids, dtype=object))
    if isinstance(data, Run):
        empty = np.diff(data.offsets) == 0
        if empty.any():
            out = out + np.where(empty, _EMPTY_LAST, 0)
    return out


__all__ = ["budget_for", "concat_qrels", "empty_run", "evaluate_budgeted", "evaluate_paths", "memory_available", "needs_top_grade",
           "parse_memory", "pin_collection", "take_queries", "top_grade", "unpin"]
