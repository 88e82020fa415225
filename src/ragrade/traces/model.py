"""What :func:`ragrade.read_traces` returns: :class:`Traces`, whose runs are :class:`TraceRun` objects (a
:class:`~ragrade.data.Run` that also knows the ground-truth query each of its queries joins, and for a
trajectory the call that returned each row)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragrade.data import Run
from ragrade.errors import InputError


class TraceRun(Run):
    """A run read from traces. Its query ids are the trajectory's key (``q17``; ``q17#2`` for a second
    trajectory with the same key), a call's ``KEY/CALL`` (``q17/2``: the second call of q17's trajectory);
    :attr:`keys` gives, for each query, the ground-truth query it is scored against (None: the trace had no
    key). A trajectory run also has :attr:`row_calls` (the call, 1-based, that returned each stored row) and
    :attr:`calls` (the calls each trajectory made, those that returned nothing included).

    Everything that takes a run takes it (``evaluate``, ``compare``, ``report``, ``gate``, slices): the route
    of traces (:mod:`ragrade.traces.route`) scores each query against its key's judgments."""

    __slots__ = ("calls", "keys", "level", "row_calls", "traces")

    def __init__(self, query_ids: Any, offsets: Any, doc_codes: Any, doc_vocab: Any, scores: Any = None, *,
                 keys: Any, level: str, row_calls: Any = None, calls: Any = None, traces: Any = None,
                 name: str | None = None, **kw: Any) -> None:
        super().__init__(query_ids, offsets, doc_codes, doc_vocab, scores, name=name, **kw)
        self.keys = _frozen(np.asarray(keys, dtype=object))
        self.level = level
        self.row_calls = None if row_calls is None else _frozen(np.asarray(row_calls, dtype=np.int64))
        self.calls = None if calls is None else _frozen(np.asarray(calls, dtype=np.int64))
        self.traces = traces
        if len(self.keys) != self.n_queries:
            raise InputError("a trace run needs one key per query")

    def with_name(self, name: str) -> TraceRun:
        coded = self.is_coded or self.raw_docs is None
        return TraceRun(self.query_ids, self.offsets, self.doc_codes if coded else None,
                        self.doc_vocab if coded else None, self.scores, keys=self.keys, level=self.level,
                        row_calls=self.row_calls, calls=self.calls, traces=self.traces, name=name,
                        raw_docs=None if coded else self.raw_docs)

    def key_of(self) -> dict[str, str | None]:
        """``{query id: ground-truth query id}``."""
        return dict(zip(self.query_ids.tolist(), self.keys.tolist(), strict=True))

    def __repr__(self) -> str:
        return f"TraceRun({self.level}, {self.n_queries} queries, {self.n_rows} items)"


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class RerankerPair:
    """The reranker spans of one reranker: what it was given (:attr:`input`) and what it returned
    (:attr:`output`), as two runs with the same query ids, so that ``ragrade.compare(qrels, pair.runs(),
    metrics)`` tests the reranker's lift query by query, paired."""

    name: str
    input: TraceRun
    output: TraceRun
    documents_table: Any = field(default=None, repr=False)

    @property
    def documents(self) -> Any:
        """One row per document given to and returned by the reranker: query (id), list (``input`` or
        ``output``), rank, doc, score."""
        return self.documents_table.to_pandas()

    def runs(self) -> dict[str, TraceRun]:
        """``{"input": ..., "output": ...}`` (compare's runs; output is the treatment)."""
        return {"input": self.input, "output": self.output}


@dataclass(frozen=True)
class Traces:
    """Retrieval read from traces (:func:`ragrade.read_traces`).

    * :attr:`calls`: a :class:`TraceRun` with one query per retrieval call, ids ``KEY/CALL``;
    * :attr:`trajectories`: one query per trajectory (a trace, or a session with ``by="session"``), its
      calls' documents in call order, documents returned twice kept twice (the duplicates policy decides
      what id measures make of them; the trajectory measures read the calls);
    * :attr:`rerankers`: ``{reranker name: RerankerPair}``;
    * :attr:`table`: one row per call (index: the call's id): trajectory, key, trace, session, turn,
      call_index, query, retriever, span, convention, documents, start, latency_ms, tokens, cost,
      trace_tokens, trace_cost;
    * :attr:`documents`: one row per retrieved document (call, rank, doc, score);
    * :attr:`notes`: what reading met (counted, naming spans); :attr:`conventions`: spans per convention.
    """

    calls: TraceRun
    trajectories: TraceRun
    rerankers: Mapping[str, RerankerPair]
    table: Any
    documents_table: Any = field(repr=False)
    notes: tuple[str, ...] = ()
    conventions: Mapping[str, int] = field(default_factory=dict)
    spans: int = 0

    @property
    def documents(self) -> Any:
        """One row per retrieved document: call (id), rank (1-based), doc, score (NaN when the span gave
        none), as a pandas DataFrame."""
        import pandas as pd

        frame = self.documents_table.to_pandas()
        frame["call"] = pd.Categorical.from_codes(frame["call"].to_numpy(), categories=pd.Index(self.table.index))
        return frame

    @property
    def slices(self) -> Any:
        """The call index and the turn of every call (a DataFrame indexed by call id): the labels of
        ``result.by(traces.slices)`` on a per-call result (later calls and later turns worse or not)."""
        return self.table[["call_index", "turn"]]

    def latency(self) -> Any:
        """Latency percentiles per retriever: p50, p95, p99 and the mean in milliseconds, with the number
        of calls timed, and the tokens and cost the calls carry."""
        from ragrade.traces.summary import latency_table

        return latency_table(self.table)

    def __repr__(self) -> str:
        return (f"Traces({len(self.table)} calls in {self.trajectories.n_queries} trajectories, "
                f"{len(self.rerankers)} rerankers, {len(self.notes)} notes)")
