"""Span measures of runs: gold spans, a chunk map and a run of chunk ids turned into the flat arrays of
:mod:`ragrade.kernels.spans`, and the per-query and pooled values (docs/spans.md, "Measures").

Each document is placed at its own offset of one line of **global coordinates** (:class:`DocSpace`), so
that the kernels see one interval per span and per retrieved chunk. A run's rows are its chunk ids in rank
order (the run's tie policy), joined with the chunk map; a chunk id the map does not know is an error
naming the query and the chunk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragrade.data import Run
from ragrade.errors import InputError, PolicyError
from ragrade.kernels import spans as K
from ragrade.metrics import Metric
from ragrade.policies import Policies
from ragrade.spans.model import ChunkMap, Corpus, SpanTruth


@dataclass(frozen=True)
class DocSpace:
    """Where each document sits on the line of global coordinates: ``base[doc]`` (documents one position
    apart, so that intervals of two documents never touch) and its length (the corpus's, or the furthest
    offset the spans and chunks reach)."""

    base: Mapping[str, int]
    length: Mapping[str, int]
    corpus: Corpus | None = None
    _tokens: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, truth: SpanTruth, chunks: ChunkMap | None, corpus: Corpus | None) -> DocSpace:
        length: dict[str, int] = {}
        if corpus is not None:
            length = {d: len(t) for d, t in corpus.items()}
        for doc, end in _extents(truth.doc, truth.end, chunks):
            if doc not in length or (corpus is None and end > length[doc]):
                length[doc] = end
        base, at = {}, 0
        for doc, n in length.items():
            base[doc] = at
            at += n + 1
        return cls(base, length, corpus)

    def bases(self, docs: np.ndarray) -> np.ndarray:
        """The base of each document id (an :class:`InputError` for one the space does not hold)."""
        from ragrade.spans.lookup import positions_of

        names = list(self.base)
        at = positions_of(docs, names)
        if len(at) and at.min() < 0:
            raise InputError("a span or chunk points into a document the corpus does not have",
                             item=str(docs[int(np.argmin(at))]))
        return np.asarray([self.base[d] for d in names], dtype=np.int64)[at] if len(at) else at

    def token_map(self, tokenizer: str) -> np.ndarray:
        """The global offsets at which the corpus's tokens start, sorted (needs the corpus's texts)."""
        if tokenizer not in self._tokens:
            if self.corpus is None:
                raise InputError(f"span measures counted in {tokenizer} tokens need the documents' texts: give "
                                 "the corpus (corpus=..., --corpus)")
            parts = [self.base[d] + K.token_starts(self.corpus[d], tokenizer) for d in self.base if d in self.corpus]
            self._tokens[tokenizer] = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return self._tokens[tokenizer]


def _extents(docs: np.ndarray, ends: np.ndarray, chunks: ChunkMap | None) -> list[tuple[str, int]]:
    """Each document's furthest end over the spans and chunks."""
    from ragrade.spans.lookup import group_max

    d = docs if chunks is None else np.concatenate([docs, chunks.doc])
    e = ends if chunks is None else np.concatenate([ends, chunks.end])
    if len(d) == 0:
        return []
    names, top = group_max(d, e)
    return list(zip(names, top.tolist(), strict=True))


@dataclass(frozen=True)
class RunRows:
    """A run's rows, in rank order, against the queries of the truth: ``query`` (index into ``queries``),
    ``rank`` (0-based), ``chunk`` (row of the chunk map). ``present``: the queries the run holds;
    ``only_in_run``: its queries the truth does not have."""

    queries: list[str]
    query: np.ndarray
    rank: np.ndarray
    chunk: np.ndarray
    present: np.ndarray
    only_in_run: list[str]
    duplicates: int = 0


def join_run(run: Run, chunks: ChunkMap, queries: Sequence[str], policies: Policies | None = None) -> RunRows:
    """The run's rows in rank order (its tie policy), joined with the chunk map (see :class:`RunRows`).
    Policies read: ``ties``, ``duplicates`` (``drop``: later copies of a chunk removed; ``error``) and
    ``max_docs`` (only the first rows of each ranking)."""
    from ragrade.spans.lookup import positions_of

    pol = policies or Policies()
    qids = run.query_ids.tolist()
    qpos = positions_of(qids, list(queries))
    perm = run.ranking(pol.ties)
    offsets = run.offsets
    seg = np.repeat(np.arange(len(qids)), np.diff(offsets))
    rank = np.arange(run.n_rows, dtype=np.int64) - offsets[seg]
    codes = run.doc_codes[perm]
    where = chunks.positions(run.doc_vocab)
    chunk = where[codes]
    keep = qpos[seg] >= 0
    dups = 0
    if pol.duplicates in ("drop", "error"):  # (else a repeat is read as retrieved: once under union, twice in sums)
        dup_mask = run.duplicate_mask()[perm]
        dups = int(dup_mask[keep].sum())
        if dups and pol.duplicates == "error":
            raise PolicyError(f"the run lists {dups} chunk{'s' if dups != 1 else ''} twice for one query "
                              "(duplicates='error')")
        if pol.duplicates == "drop":
            keep &= ~dup_mask
    if pol.max_docs is not None:
        keep &= rank < pol.max_docs
    unknown = keep & (chunk < 0)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise InputError(f"the run retrieves {int(unknown.sum())} chunk id(s) the chunk map does not have",
                         query=qids[seg[i]], item=str(run.doc_vocab[codes[i]]))
    if pol.duplicates == "drop":  # ranks close up over the dropped copies
        rank = _ranks_after_drop(seg, keep)
    present = np.zeros(len(queries), dtype=bool)
    present[qpos[qpos >= 0]] = True
    only = [q for q, p in zip(qids, qpos.tolist(), strict=True) if p < 0]
    return RunRows(list(queries), qpos[seg][keep], rank[keep], chunk[keep], present, only, dups)


def _ranks_after_drop(seg: np.ndarray, keep: np.ndarray) -> np.ndarray:
    c = np.cumsum(keep) - keep
    first = np.zeros(int(seg.max()) + 1 if len(seg) else 0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], seg[1:] != seg[:-1]])) if len(seg) else np.zeros(0, int)
    first[seg[starts]] = c[starts]
    return (c - first[seg]).astype(np.int64)


def span_inputs(truth: SpanTruth, joined: RunRows, chunks: ChunkMap, space: DocSpace,
                semantics: str = "default") -> K.SpanInputs:
    """The kernels' :class:`~ragrade.kernels.spans.SpanInputs` of a truth and a joined run."""
    from ragrade.spans.lookup import positions_of

    gq = positions_of(truth.query, joined.queries)
    gb = space.bases(truth.doc)
    cb = space.bases(chunks.doc)
    cs, ce = cb + chunks.start, cb + chunks.end
    order = np.argsort(cs, kind="stable")
    return K.SpanInputs(len(joined.queries), gq, gb + truth.start, gb + truth.end, joined.query, joined.rank,
                        cs[joined.chunk], ce[joined.chunk], cs[order], ce[order], semantics=semantics,
                        token_map=space.token_map)


@dataclass(frozen=True)
class SpanScores:
    """Span measures of one run: ``per_query[label]`` (one value per query of ``queries``), ``pooled[label]``
    (every query's lengths summed before dividing), ``present`` (the queries the run holds)."""

    queries: list[str]
    per_query: dict[str, np.ndarray]
    pooled: dict[str, float]
    present: np.ndarray
    only_in_run: list[str]


def score(truth: SpanTruth, run: Run, labels: Sequence[tuple[str, Metric]], chunks: ChunkMap,
          corpus: Corpus | None = None, *, semantics: str = "default", policies: Policies | None = None,
          space: DocSpace | None = None) -> SpanScores:
    """The span measures ``labels`` of ``run`` against ``truth`` (see the module docstring). A query of the
    truth that the run lacks scores 0 (``missing_run="zero"``, the default; precision_omega does not depend
    on the run), or is left out (``"drop"``), or is an error (``"error"``)."""
    pol = policies or Policies()
    check_metrics(labels, semantics)
    queries = truth.queries
    joined = join_run(run, chunks, queries, pol)
    missing = ~joined.present
    if missing.any() and pol.missing_run == "error":
        raise PolicyError(f"{int(missing.sum())} queries of the spans are missing from the run (missing_run='error')",)
    space = space or DocSpace.of(truth, chunks, corpus)
    inp = span_inputs(truth, joined, chunks, space, semantics)
    per_query: dict[str, np.ndarray] = {}
    pooled: dict[str, float] = {}
    for label, metric in labels:
        values = _call(metric, inp)
        if metric.name != "span_precision_omega":
            values[missing] = 0.0
        per_query[label] = values
        pooled[label] = K.pooled(metric, inp, np.flatnonzero(joined.present | (metric.name == "span_precision_omega")))
    return SpanScores(queries, per_query, pooled, joined.present, joined.only_in_run)


def check_metrics(labels: Sequence[tuple[str, Metric]], semantics: str, profile: str | None = None) -> None:
    """Refuse, before anything is computed, a span measure the semantics does not define (LegalBench-RAG
    defines precision and recall only) and a token count under LegalBench-RAG or Chroma (they count
    characters)."""
    for label, m in labels:
        if semantics == "legalbench_rag" and m.name in ("span_iou", "span_precision_omega"):
            raise InputError(f"{label}: the legalbench_rag profile defines span_precision and span_recall only "
                             "(LegalBench-RAG's run_benchmark has no IoU)")
        if semantics != "default" and m.get("tokenizer") != "chars":
            raise InputError(f"{label}: the {profile or semantics} profile counts characters; token counts are "
                             "ragrade's own (drop the profile or the tokenizer)")
        if semantics == "legalbench_rag" and m.get("retrieve") == -1:
            raise InputError(f"{label}: retrieve=-1 is Chroma's (profile chroma) or ragrade's, not LegalBench-RAG's")


def _call(metric: Metric, inp: K.SpanInputs) -> np.ndarray:
    kernel = metric.family.kernel
    assert kernel is not None
    return np.array(kernel(metric, inp), dtype=np.float64)


__all__ = ["DocSpace", "RunRows", "SpanScores", "check_metrics", "join_run", "score", "span_inputs"]
