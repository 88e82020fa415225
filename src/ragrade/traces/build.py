"""From the normalised span tables to :class:`~ragrade.traces.model.Traces` (docs/traces.md, "From traces
to runs"), in whole-array steps:

1. spans without a trace id, and the second span of a repeated span id, are dropped (counted);
2. retrieval spans nested in a retrieval span are one call (LlamaIndex wraps each ``retrieve()`` in two
   RETRIEVER spans, the outer one carrying the documents): a call is a retrieval span with no retrieval
   ancestor, its documents those of its shallowest span that has any;
3. each trace's join key, session, question, tokens and cost are its spans' (the root's first);
4. trajectories are traces (or sessions, ``by="session"``), named by their key; turns are the traces of
   a session in time order; calls are numbered in time order within their trajectory;
5. the runs: calls (``KEY/CALL``), trajectories (the calls' documents in call order, with the call of each
   row), reranker spans as pairs of runs; the table of calls and the table of documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragrade.errors import InputError
from ragrade.traces import conventions as cv
from ragrade.traces.notes import Notes

#: How traces are joined to ground truth (besides the name of a span attribute).
KEY_MODES = ("trace", "session", "question")


@dataclass
class Spans:
    """The kept spans as arrays (one entry per span), with the Arrow table for their text columns."""

    table: Any
    trace: np.ndarray  # int64 code of the trace
    traces: np.ndarray  # the trace ids (object), indexed by code
    parent: np.ndarray  # row of the parent span, -1 for a root (or a parent not in the file)
    role: np.ndarray
    start: np.ndarray  # float64 ns after :attr:`base` (NaN: unknown): exact over 100 days
    end: np.ndarray
    line: np.ndarray  # float64 (NaN: unknown)
    base: int  # Unix ns of the earliest start

    @property
    def n(self) -> int:
        return len(self.role)

    def arrow(self, column: str, rows: np.ndarray) -> Any:
        """A column's values at ``rows`` as one Arrow array (no Python object per value)."""
        return taken(self.table.column(column), rows)

    def text(self, column: str, rows: np.ndarray | None = None) -> np.ndarray:
        """A text column as an object array (None where null), for ``rows`` or every span."""
        import pyarrow as pa

        col = self.table.column(column)
        if rows is not None:
            col = col.take(pa.array(rows, type=pa.int64()))
        return np.asarray(col.to_pylist(), dtype=object)


def _codes(column: Any, vocabulary: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, vocabulary)`` of a string column (code -1 for null and empty; no vocabulary unless
    asked: an empty array)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    empty = pc.equal(column, "").fill_null(False)
    enc = pc.dictionary_encode(pc.if_else(empty, pa.scalar(None, column.type), column))
    if isinstance(enc, pa.ChunkedArray):  # one dictionary for every chunk: combining copies only the codes
        enc = enc.combine_chunks() if enc.num_chunks else pa.array([], pa.dictionary(pa.int32(), pa.string()))
    codes = np.asarray(enc.indices.fill_null(-1), dtype=np.int64)
    if not vocabulary:
        return codes, np.zeros(0, dtype=object)
    return codes, np.asarray(enc.dictionary.to_pylist(), dtype=object)


def _float(column: Any) -> np.ndarray:
    return np.asarray(column.cast("float64", safe=False).fill_null(np.nan), dtype=np.float64)


def _times(start: Any, end: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Start and end times as float64 nanoseconds after the earliest start (NaN where unknown): subtracting
    in int64 first keeps every nanosecond over a span of 100 days."""
    s = np.asarray(start.fill_null(0), dtype=np.int64)
    e = np.asarray(end.fill_null(0), dtype=np.int64)
    s_ok = np.asarray(start.is_valid())
    e_ok = np.asarray(end.is_valid())
    base = int(s[s_ok].min()) if s_ok.any() else (int(e[e_ok].min()) if e_ok.any() else 0)
    return (np.where(s_ok, (s - base).astype(np.float64), np.nan),
            np.where(e_ok, (e - base).astype(np.float64), np.nan), base)


def clean(spans: Any, docs: Any, notes: Notes) -> tuple[Spans, Any]:
    """The spans with a trace id, each span id once (counted notes for the others); the documents of the
    spans kept, renumbered."""
    import pyarrow as pa

    trace, _ = _codes(spans.column("trace"), vocabulary=False)
    ids, _ = _codes(pa.chunked_array(spans.column("span").chunks + spans.column("parent").chunks, pa.string()),
                    vocabulary=False)
    n = spans.num_rows
    span_code, parent_code = ids[:n], ids[n:]
    keep = trace >= 0
    _note_rows(notes, "no_trace", spans, ~keep)
    seen = np.zeros(n, dtype=bool)
    valid = np.flatnonzero(keep & (span_code >= 0))
    _, first = np.unique(span_code[valid], return_index=True)
    seen[valid[first]] = True
    dup = keep & (span_code >= 0) & ~seen
    _note_rows(notes, "duplicate_span", spans, dup)
    keep &= ~dup
    rows = np.flatnonzero(keep)
    new_row = np.cumsum(keep) - 1
    table = spans
    if not keep.all():  # (copies only when something is dropped)
        table = spans.take(pa.array(rows, type=pa.int64()))
        doc_span = np.asarray(docs.column("span"), dtype=np.int64)
        doc_keep = keep[doc_span] if len(doc_span) else np.zeros(0, dtype=bool)
        docs = docs.filter(pa.array(doc_keep)).set_column(0, "span", pa.array(new_row[doc_span[doc_keep]],
                                                                               type=pa.int64()))
    row_of = np.full(int(ids.max()) + 2 if len(ids) else 1, -1, dtype=np.int64)
    row_of[span_code[rows]] = np.arange(len(rows))
    parent = np.where(parent_code[rows] >= 0, row_of[parent_code[rows]], -1)
    trace_codes, trace_ids = _codes(table.column("trace"))
    parent = np.where((parent >= 0) & (trace_codes[np.maximum(parent, 0)] == trace_codes), parent, -1)
    start, end, base = _times(table.column("start"), table.column("end"))
    out = Spans(table, trace_codes, trace_ids, parent, np.asarray(table.column("role"), dtype=np.int64),
                start, end, _float(table.column("line")), base)
    return out, docs


def _note_rows(notes: Notes, kind: str, spans: Any, mask: np.ndarray) -> None:
    if mask.any():
        rows = np.flatnonzero(mask)
        names = spans.column("span").take(rows[:3]).to_pylist()
        lines = spans.column("line").take(rows[:3]).to_pylist()
        notes.add_many(kind, [f"span {s}" if s else f"line {ln}" for s, ln in zip(names, lines, strict=True)],
                       len(rows))


def call_groups(s: Spans, doc_counts: np.ndarray, notes: Notes) -> tuple[np.ndarray, np.ndarray]:
    """``(roots, chosen)``: the span of each retrieval call (a retrieval span with no retrieval ancestor)
    and the span whose documents the call returned (its shallowest span with documents; the root itself
    when none has any)."""
    is_ret = s.role == cv.RETRIEVAL
    idx = np.arange(s.n)
    up = idx.copy()
    nested = is_ret & (s.parent >= 0) & is_ret[np.maximum(s.parent, 0)]
    up[nested] = s.parent[nested]
    root, depth = idx.copy(), np.zeros(s.n, dtype=np.int64)
    for _ in range(64):  # pointer jumping: a chain of nested retrieval spans is short
        nxt = up[root]
        moved = nxt != root
        if not moved.any():
            break
        depth += moved
        root = nxt
    roots = np.flatnonzero(is_ret & (root == idx))
    candidates = np.flatnonzero(is_ret & (doc_counts > 0))
    order = np.lexsort((candidates, np.nan_to_num(s.start[candidates], nan=np.inf), depth[candidates],
                        root[candidates]))
    candidates = candidates[order]
    first = np.ones(len(candidates), dtype=bool)
    first[1:] = root[candidates][1:] != root[candidates][:-1]
    chosen_of_root = np.full(s.n, -1, dtype=np.int64)
    chosen_of_root[root[candidates[first]]] = candidates[first]
    others = candidates[~first]
    if len(others):
        notes.add_many("nested", [f"span {x}" for x in s.text("span", others[:3])], len(others))
    chosen = np.where(chosen_of_root[roots] >= 0, chosen_of_root[roots], roots)
    return roots, chosen


def latency_ms(s: Spans, rows: np.ndarray, notes: Notes) -> np.ndarray:
    """Each span's duration in milliseconds (NaN, with a note, where a time is missing or the span ends
    before it starts)."""
    start, end = s.start[rows], s.end[rows]
    missing = np.isnan(start) | np.isnan(end)
    backwards = ~missing & (end < start)
    for kind, mask in (("no_time", missing), ("end_before_start", backwards)):
        if mask.any():
            notes.add_many(kind, [f"span {x}" for x in s.text("span", rows[mask][:3])], int(mask.sum()))
    out = (end - start) / 1e6
    out[missing | backwards] = np.nan
    return out


def first_per_trace(s: Spans, column: str, roots_only: bool = False) -> np.ndarray:
    """Per trace, the first non-empty value of a text column (object, None where none), roots first, then
    by start time and file order; only the values found become Python strings."""
    import pyarrow.compute as pc

    col = s.table.column(column)
    has = np.asarray(pc.fill_null(pc.not_equal(col, ""), False))
    if roots_only:
        has &= s.parent < 0
    out = np.full(len(s.traces), None, dtype=object)
    rows = np.flatnonzero(has)
    if len(rows) == 0:
        return out
    order = np.lexsort((rows, np.nan_to_num(s.start[rows], nan=np.inf), s.parent[rows] >= 0, s.trace[rows]))
    rows = rows[order]
    firsts = np.ones(len(rows), dtype=bool)
    firsts[1:] = s.trace[rows][1:] != s.trace[rows][:-1]
    out[s.trace[rows[firsts]]] = np.asarray(s.arrow(column, rows[firsts]).to_pylist(), dtype=object)
    return out


def sum_per_trace(s: Spans, values: np.ndarray) -> np.ndarray:
    """Per trace, the sum of ``values`` over its spans (NaN when no span gives one)."""
    ok = ~np.isnan(values)
    total = np.bincount(s.trace[ok], weights=values[ok], minlength=len(s.traces))
    counted = np.bincount(s.trace[ok], minlength=len(s.traces))
    return np.where(counted > 0, total, np.nan)


def trace_keys(s: Spans, key: str | None, by: str, topics: Mapping[str, str] | None, questions: np.ndarray,
               sessions: np.ndarray, notes: Notes) -> np.ndarray:
    """The ground-truth query of every trace (None where it has none, with a note)."""
    if key is None:
        key = "session" if by == "session" else "trace"
    if key == "trace":
        if by == "session":
            raise InputError("trajectories by session need a key shared by the session's traces (key='session' "
                             "or a span attribute), not the trace id")
        return s.traces.copy()
    if key == "session":
        found = sessions.copy()
    elif key == "question":
        found = _match_topics(questions, topics, notes, s.traces)
    else:
        found = first_per_trace(s, "key")
    missing = np.flatnonzero(np.asarray([v is None for v in found.tolist()], dtype=bool))
    if len(missing) and key != "question":
        notes.add_many("no_key", [f"trace {t}" for t in s.traces[missing[:3]]], len(missing))
    return found


def normal_text(text: str) -> str:
    """A question as matched against a topics file: case folded, runs of whitespace made one space."""
    return " ".join(text.casefold().split())


def _match_topics(questions: np.ndarray, topics: Mapping[str, str] | None, notes: Notes,
                  traces: np.ndarray) -> np.ndarray:
    if topics is None:
        raise InputError("key='question' matches each trace's question against a topics file: give topics=")
    index: dict[str, str] = {}
    for qid, text in topics.items():
        index.setdefault(normal_text(str(text)), str(qid))
    out = np.asarray([None if q is None else index.get(normal_text(str(q))) for q in questions.tolist()],
                     dtype=object)
    missing = np.flatnonzero(np.asarray([v is None for v in out.tolist()], dtype=bool))
    if len(missing):
        notes.add_many("no_topic", [f"trace {t}" for t in traces[missing[:3]]], len(missing))
    return out


@dataclass
class Groups:
    """The trajectories: per trace its trajectory, turn and session; per trajectory its id and key."""

    of_trace: np.ndarray  # trajectory of every trace (-1: none)
    turn: np.ndarray  # turn of every trace (1-based)
    ids: np.ndarray  # trajectory ids, in trajectory order
    keys: np.ndarray  # the ground-truth query of each trajectory (None: no key)


def groups(s: Spans, has_calls: np.ndarray, key: str | None, by: str, topics: Mapping[str, str] | None,
           notes: Notes) -> tuple[Groups, dict[str, np.ndarray]]:
    """The trajectories (``by``: ``"trace"`` or ``"session"``) with their keys, and the per-trace facts
    (session, question, tokens, cost, start)."""
    facts = _trace_facts(s)
    sessions = facts["session"]
    key_of = trace_keys(s, key, by, topics, facts["question"], sessions, notes)
    start = np.nan_to_num(facts["start"], nan=np.inf)
    group_name = np.asarray([sess if by == "session" and sess is not None else t
                             for t, sess in zip(s.traces.tolist(), sessions.tolist(), strict=True)], dtype=object)
    turn = _turns(sessions, start)
    used = has_calls | np.asarray([k is not None for k in key_of.tolist()], dtype=bool)
    names, of_trace = np.unique(group_name.astype(str), return_inverse=True)
    of_trace = np.where(used, of_trace, -1)
    g_start = np.full(len(names), np.inf)
    np.minimum.at(g_start, of_trace[used], start[used])
    order = np.lexsort((names, g_start))
    order = order[np.isin(order, of_trace[used])]
    rank = np.full(len(names), -1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    of_trace = np.where(of_trace >= 0, rank[np.maximum(of_trace, 0)], -1)
    first = np.full(len(order), None, dtype=object)
    by_turn = np.lexsort((turn, of_trace))
    for t in by_turn[::-1].tolist():  # the key of a trajectory: its first trace's (in turn order) that has one
        if of_trace[t] >= 0 and key_of[t] is not None:
            first[of_trace[t]] = key_of[t]
    ids = _unique_names(first, names[order], notes)
    return Groups(of_trace, turn, ids, first), facts


def _trace_facts(s: Spans) -> dict[str, np.ndarray]:

    start = np.full(len(s.traces), np.inf)
    np.minimum.at(start, s.trace, np.nan_to_num(s.start, nan=np.inf))
    return {"session": first_per_trace(s, "session"), "question": first_per_trace(s, "query", roots_only=True),
            "tokens": sum_per_trace(s, _float(s.table.column("tokens"))),
            "cost": sum_per_trace(s, _float(s.table.column("cost"))), "start": np.where(np.isinf(start), np.nan, start)}


def _turns(sessions: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Each trace's turn in its session (1-based, in start-time order); 1 for a trace without a session."""
    turn = np.ones(len(sessions), dtype=np.int64)
    with_session = np.flatnonzero(np.asarray([x is not None for x in sessions.tolist()], dtype=bool))
    if len(with_session):
        names = sessions[with_session].astype(str)
        order = np.lexsort((with_session, start[with_session], names))
        ordered = names[order]
        begin = np.ones(len(order), dtype=bool)
        begin[1:] = ordered[1:] != ordered[:-1]
        group_start = np.maximum.accumulate(np.where(begin, np.arange(len(order)), 0))
        turn[with_session[order]] = np.arange(len(order)) - group_start + 1
    return turn


def _unique_names(keys: np.ndarray, fallback: np.ndarray, notes: Notes) -> np.ndarray:
    """Trajectory ids: the key (``KEY#2``, ``KEY#3`` ... for later trajectories sharing it), or the trace or
    session id where there is no key."""
    seen: dict[str, int] = {}
    out = []
    shared = []
    for k, f in zip(keys.tolist(), fallback.tolist(), strict=True):
        name = str(f) if k is None else str(k)
        n = seen.get(name, 0) + 1
        seen[name] = n
        if n > 1:
            shared.append(f"{name} ({n})")
            name = f"{name}#{n}"
        out.append(name)
    if shared:
        notes.add_many("shared_key", shared, len(shared))
    return np.asarray(out, dtype=object)


@dataclass
class Calls:
    """The retrieval calls in run order (by trajectory, then call index)."""

    root: np.ndarray  # the call's span
    chosen: np.ndarray  # the span whose documents it returned
    group: np.ndarray  # its trajectory
    index: np.ndarray  # its number within the trajectory (1-based)
    ids: np.ndarray  # KEY/CALL


def order_calls(s: Spans, roots: np.ndarray, chosen: np.ndarray, g: Groups) -> Calls:
    """The calls sorted by trajectory, turn, start time and file order, numbered within their trajectory."""
    group = g.of_trace[s.trace[roots]]
    keep = group >= 0
    roots, chosen, group = roots[keep], chosen[keep], group[keep]
    turn = g.turn[s.trace[roots]]
    order = np.lexsort((roots, np.nan_to_num(s.line[roots], nan=np.inf), np.nan_to_num(s.start[roots], nan=np.inf),
                        turn, group))
    roots, chosen, group = roots[order], chosen[order], group[order]
    begin = np.ones(len(group), dtype=bool)
    begin[1:] = group[1:] != group[:-1]
    first_of = np.maximum.accumulate(np.where(begin, np.arange(len(group)), 0)) if len(group) else group
    index = np.arange(len(group)) - first_of + 1
    ids = np.asarray([f"{g.ids[x]}/{i}" for x, i in zip(group.tolist(), index.tolist(), strict=True)], dtype=object)
    return Calls(roots, chosen, group, index.astype(np.int64), ids)


def documents_of(docs: Any, spans: np.ndarray, lst: int, n_spans: int) -> tuple[np.ndarray, np.ndarray]:
    """``(rows of the document table, count per span)``: the documents of list ``lst`` of ``spans`` (in that
    order), each span's in position order."""
    doc_span = np.asarray(docs.column("span"), dtype=np.int64)
    where = np.full(n_spans, -1, dtype=np.int64)
    where[spans] = np.arange(len(spans))
    sel = np.flatnonzero((np.asarray(docs.column("list")) == lst) & (where[doc_span] >= 0))
    owner = where[doc_span[sel]]
    order = np.lexsort((np.asarray(docs.column("pos"))[sel], owner))
    return sel[order], np.bincount(owner, minlength=len(spans))


def taken(column: Any, rows: np.ndarray) -> Any:
    """``column[rows]`` as one Arrow array."""
    import pyarrow as pa

    out = column.take(pa.array(rows, type=pa.int64()))
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def trace_run(raw: Any, counts: np.ndarray, ids: np.ndarray, keys: np.ndarray, level: str, **extra: Any) -> Any:
    """A :class:`TraceRun` of ranked lists: the document ids ``raw`` (Arrow strings, coded when an evaluation
    needs them), ``counts`` per query."""
    from ragrade.traces.model import TraceRun

    if raw.null_count:
        raise InputError("a retrieved document without an id reached a run (a bug of ragrade's trace reader)")
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return TraceRun(ids, offsets, None, None, None, keys=keys, level=level, raw_docs=raw, **extra)


def assemble(spans: Any, docs: Any, *, key: str | None, by: str, topics: Mapping[str, str] | None,
             notes: Notes) -> Any:
    """The :class:`~ragrade.traces.model.Traces` of the normalised span and document tables."""
    from ragrade.traces.model import Traces

    s, docs = clean(spans, docs, notes)
    doc_span = np.asarray(docs.column("span"), dtype=np.int64)
    retrieved = np.asarray(docs.column("list"), dtype=np.int64) == cv.RETRIEVED
    roots, chosen = call_groups(s, np.bincount(doc_span[retrieved], minlength=s.n), notes)
    has_calls = np.bincount(s.trace[roots], minlength=len(s.traces)) > 0
    g, facts = groups(s, has_calls, key, by, topics, notes)
    c = order_calls(s, roots, chosen, g)
    rows, counts = documents_of(docs, c.chosen, cv.RETRIEVED, s.n)
    empty = counts == 0
    if empty.any():
        notes.add_many("no_documents", [f"span {x}" for x in s.text("span", c.root[empty][:3])], int(empty.sum()))
    raw = taken(docs.column("doc"), rows)  # one copy of the retrieved ids, shared by both runs and the table
    calls = trace_run(raw, counts, c.ids, g.keys[c.group], "call")
    per_group = np.bincount(c.group, minlength=len(g.ids))
    row_groups = np.bincount(c.group, weights=counts, minlength=len(g.ids)).astype(np.int64)
    trajectories = trace_run(raw, row_groups, g.ids, g.keys, "trajectory", row_calls=np.repeat(c.index, counts),
                             calls=per_group)
    table = call_table(s, c, g, facts, counts, notes)
    documents = document_table(raw, taken(docs.column("score"), rows), counts, c.ids)
    rerankers = reranker_pairs(s, docs, g)
    conventions = _conventions(s, notes)
    traces = Traces(calls, trajectories, rerankers, table, documents, tuple(notes.lines()), conventions, s.n)
    for run in (calls, trajectories, *(r for pair in rerankers.values() for r in (pair.input, pair.output))):
        run.traces = traces  # the report's section of traces finds the latency, rerankers and notes here
    return traces


def _conventions(s: Spans, notes: Notes) -> dict[str, int]:
    """Retrieval and reranker spans per convention (a sentence when a file mixes them)."""
    used = s.role != cv.OTHER
    conv = np.asarray(s.table.column("convention"), dtype=np.int64)[used]
    counts = {cv.CONVENTIONS[c]: int(n) for c, n in enumerate(np.bincount(conv, minlength=len(cv.CONVENTIONS)))
              if n and c}
    if len(counts) > 1:
        parts = ", ".join(f"{n} {cv.CONVENTION_TITLES[name]}" for name, n in counts.items())
        notes.sentence(f"retrieval spans of {len(counts)} conventions in one input: {parts} (all read)")
    return counts


def call_table(s: Spans, c: Calls, g: Groups, facts: dict[str, np.ndarray], counts: np.ndarray,
               notes: Notes) -> Any:
    """One row per call, indexed by the call's id (text columns kept as Arrow strings where pandas can)."""
    import pandas as pd
    import pyarrow.compute as pc

    trace = s.trace[c.root]
    query = pc.coalesce(s.arrow("query", c.root), s.arrow("query", c.chosen))
    retriever = pc.coalesce(s.arrow("source", c.root), s.arrow("name", c.root))
    conv = np.asarray(s.table.column("convention"), dtype=np.int64)[c.root]
    frame = pd.DataFrame({
        "trajectory": g.ids[c.group], "key": g.keys[c.group], "trace": s.traces[trace],
        "session": facts["session"][trace], "turn": g.turn[trace], "call_index": c.index,
        "query": query.to_pandas(), "retriever": retriever.to_pandas(), "span": s.arrow("span", c.root).to_pandas(),
        "convention": np.asarray(cv.CONVENTIONS, dtype=object)[conv],
        "documents": counts, "start": _datetimes(s.start[c.root], s.base),
        "latency_ms": latency_ms(s, c.root, notes), "tokens": _float(s.table.column("tokens"))[c.root],
        "cost": _float(s.table.column("cost"))[c.root], "trace_tokens": facts["tokens"][trace],
        "trace_cost": facts["cost"][trace]})
    return frame.set_axis(pd.Index(c.ids, name="call", dtype=object), axis=0)


def _datetimes(start: np.ndarray, base: int) -> Any:
    import pandas as pd

    ok = ~np.isnan(start)
    ns = np.where(ok, start, 0).astype(np.int64) + base
    return pd.to_datetime(np.where(ok, ns, np.iinfo(np.int64).min), unit="ns", utc=True)


def document_table(raw: Any, scores: Any, counts: np.ndarray, ids: np.ndarray) -> Any:
    """One row per retrieved document (Arrow; pandas on demand): the call (its number in ``ids``), the rank,
    the doc id and the score."""
    import pyarrow as pa

    first = np.concatenate(([0], np.cumsum(counts)))[:-1]
    rank = np.arange(len(raw)) - np.repeat(first, counts) + 1
    return pa.table({"call": pa.array(np.repeat(np.arange(len(ids), dtype=np.int32), counts)),
                     "rank": pa.array(rank, type=pa.int64()), "doc": raw, "score": scores})


def reranker_pairs(s: Spans, docs: Any, g: Groups) -> dict[str, Any]:
    """``{reranker name: RerankerPair}``: each reranker span's input and output documents, its query id the
    trajectory's id and the reranker's number in it (``KEY/N``)."""
    import pyarrow as pa

    from ragrade.traces.model import RerankerPair

    rr = np.flatnonzero((s.role == cv.RERANKER) & (g.of_trace[s.trace] >= 0))
    if len(rr) == 0:
        return {}
    names = np.asarray([src if src and src.lower() != "unknown" else (n or "reranker") for src, n in
                        zip(s.text("source", rr).tolist(), s.text("name", rr).tolist(), strict=True)], dtype=object)
    group = g.of_trace[s.trace[rr]]
    out = {}
    for name in dict.fromkeys(names.tolist()):
        mine = rr[names == name]
        grp = group[names == name]
        order = np.lexsort((mine, np.nan_to_num(s.start[mine], nan=np.inf), grp))
        mine, grp = mine[order], grp[order]
        begin = np.ones(len(grp), dtype=bool)
        begin[1:] = grp[1:] != grp[:-1]
        index = np.arange(len(grp)) - np.maximum.accumulate(np.where(begin, np.arange(len(grp)), 0)) + 1
        ids = np.asarray([f"{g.ids[x]}/{i}" for x, i in zip(grp.tolist(), index.tolist(), strict=True)], dtype=object)
        runs, tables = [], []
        for lst, label in ((cv.RERANK_IN, "input"), (cv.RERANK_OUT, "output")):
            rows, counts = documents_of(docs, mine, lst, s.n)
            raw = taken(docs.column("doc"), rows)
            runs.append(trace_run(raw, counts, ids, g.keys[grp], "reranker", name=f"{name} {label}"))
            part = document_table(raw, taken(docs.column("score"), rows), counts, ids)
            tables.append(pa.table({"query": pa.array(ids[np.asarray(part.column("call"))].tolist(), pa.string()),
                                    "list": pa.array([label] * part.num_rows, pa.string()),
                                    **{c: part.column(c) for c in ("rank", "doc", "score")}}))
        out[str(name)] = RerankerPair(str(name), runs[0], runs[1], pa.concat_tables(tables))
    return out
