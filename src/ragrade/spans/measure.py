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
from ragrade.spans.model import ChunkMap, Coded, Corpus, SpanTruth


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
        for doc, end in _extents(truth, chunks):
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

    def coded_bases(self, coded: Coded) -> np.ndarray:
        """The base of each row of dictionary-encoded document ids (the lookup made once per distinct id)."""
        names = coded.names.tolist()
        at = np.fromiter((self.base.get(d, -1) for d in names), dtype=np.int64, count=len(names))
        if len(at) and int(at.min()) < 0:
            raise InputError("a span or chunk points into a document the corpus does not have",
                             item=str(names[int(np.argmin(at))]))
        return at[coded.codes]

    def token_map(self, tokenizer: str) -> np.ndarray:
        """The global offsets at which the corpus's tokens start, sorted (needs the corpus's texts)."""
        if tokenizer not in self._tokens:
            if self.corpus is None:
                raise InputError(f"span measures counted in {tokenizer} tokens need the documents' texts: give "
                                 "the corpus (corpus=..., --corpus)")
            parts = [self.base[d] + K.token_starts(self.corpus[d], tokenizer) for d in self.base if d in self.corpus]
            self._tokens[tokenizer] = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return self._tokens[tokenizer]


def _extents(truth: SpanTruth, chunks: ChunkMap | None) -> list[tuple[str, int]]:
    """Each document's furthest end over the spans and chunks, in order of first appearance (the spans'
    documents, then the chunks')."""
    out = dict(zip(truth.doc_codes.names.tolist(), truth.extents().tolist(), strict=True))
    if chunks is not None:
        for doc, end in zip(chunks.doc_codes.names.tolist(), chunks.extents().tolist(), strict=True):
            if end > out.get(doc, -1):
                out[doc] = end
    return list(out.items())


@dataclass(frozen=True)
class RunRows:
    """A run's rows, in rank order, against the queries of the truth: the rows of truth query ``q`` are
    ``seg_lo[q] .. seg_hi[q]-1`` of ``code``, each the code of a retrieved id in the run's vocabulary (-1: a
    repeat the duplicates policy dropped; ranks close up over it); ``chunk_of[code]`` is that id's row in the
    chunk map (-1: not there, in rows nobody reads). ``present``: the queries the run holds; ``only_in_run``:
    its queries the truth does not have; ``duplicates``: the repeats met in the truth's queries."""

    queries: Sequence[str] | np.ndarray
    seg_lo: np.ndarray
    seg_hi: np.ndarray
    code: np.ndarray
    chunk_of: np.ndarray
    present: np.ndarray
    only_in_run: list[str]
    duplicates: int = 0

    @property
    def chunk(self) -> np.ndarray:
        """Each row's chunk-map row (-1: a row not read)."""
        return np.where(self.code >= 0, self.chunk_of[np.maximum(self.code, 0)], -1) if len(self.chunk_of) \
            else np.full(len(self.code), -1, dtype=np.int64)

    def retrieved(self, chunk_start: np.ndarray, chunk_end: np.ndarray) -> K.Retrieved:
        """The rows as the kernels' :class:`~ragrade.kernels.spans.Retrieved`, over one interval per id of the
        run's vocabulary (an id the chunk map lacks: an empty interval nobody reads)."""
        known = self.chunk_of >= 0
        at = np.where(known, self.chunk_of, 0)
        start = np.where(known, chunk_start[at], 0) if len(chunk_start) else np.zeros(len(at), dtype=np.int64)
        end = np.where(known, chunk_end[at], 0) if len(chunk_end) else np.zeros(len(at), dtype=np.int64)
        return K.Retrieved(self.seg_lo, self.seg_hi, self.code, start, end)


def _query_positions(run_queries: np.ndarray, queries: Sequence[str] | np.ndarray) -> np.ndarray:
    """The position of each of the run's query ids among ``queries`` (-1: not there); no hashing when the run
    holds exactly the truth's queries in its order."""
    from ragrade.spans.lookup import positions_of

    if (len(run_queries) == len(queries) and (not isinstance(queries, np.ndarray) or queries.dtype == object)
            and bool((run_queries == np.asarray(queries, dtype=object)).all())):
        return np.arange(len(queries), dtype=np.int64)
    return positions_of(run_queries, queries)


def join_run(run: Run, chunks: ChunkMap, queries: Sequence[str] | np.ndarray, policies: Policies | None = None
             ) -> RunRows:
    """The run's rows in rank order (its tie policy), joined with the chunk map (see :class:`RunRows`): the
    chunk ids are looked up once per distinct id. Policies read: ``ties``, ``duplicates`` (``drop``: later
    copies of a chunk not read; ``error``) and ``max_docs`` (only the first rows of each ranking)."""
    pol = policies or Policies()
    qids = run.query_ids
    qpos = _query_positions(qids, queries)
    perm, _ = run.ranking_sparse(pol.ties)
    codes = run.doc_codes if perm is None else run.doc_codes[perm]
    where = chunks.positions(run.doc_vocab)
    offsets = run.offsets
    lo, hi = offsets[:-1], offsets[1:]
    if pol.max_docs is not None:
        hi = np.minimum(hi, lo + pol.max_docs)
    here = qpos >= 0
    if len(where) and int(where.min()) < 0:
        _check_known(run, where[codes], codes, lo, hi, here)
    dups = 0
    if pol.duplicates in ("drop", "error"):  # (else a repeat is read as retrieved: once under union, twice in sums)
        dup = run.duplicate_mask() if perm is None else run.duplicate_mask()[perm]
        dup = dup & np.repeat(here, np.diff(offsets))
        dups = int(dup.sum())
        if dups and pol.duplicates == "error":
            raise PolicyError(f"the run lists {dups} chunk{'s' if dups != 1 else ''} twice for one query "
                              "(duplicates='error')")
        if pol.duplicates == "drop" and dups:
            codes = np.where(dup, -1, codes)
    n = len(queries)
    seg_lo, seg_hi = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    at = qpos[here]
    seg_lo[at], seg_hi[at] = lo[here], hi[here]
    present = np.zeros(n, dtype=bool)
    present[at] = True
    only = qids[~here].tolist() if not here.all() else []
    return RunRows(queries, seg_lo, seg_hi, codes, where, present, only, dups)


def _check_known(run: Run, chunk: np.ndarray, codes: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 here: np.ndarray) -> None:
    """An :class:`InputError` for the first chunk id the chunk map does not have among the rows read."""
    n_rows = len(chunk)
    seg = np.repeat(np.arange(len(lo)), np.diff(np.append(lo, n_rows)))
    rank = np.arange(n_rows) - lo[seg]
    unknown = (chunk < 0) & here[seg] & (rank < (hi - lo)[seg])
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise InputError(f"the run retrieves {int(unknown.sum())} chunk id(s) the chunk map does not have",
                         query=str(run.query_ids[seg[i]]), item=str(run.doc_vocab[codes[i]]))


def span_inputs(truth: SpanTruth, joined: RunRows, chunks: ChunkMap, space: DocSpace,
                semantics: str = "default", *, chunking: bool = True) -> K.SpanInputs:
    """The kernels' :class:`~ragrade.kernels.spans.SpanInputs` of a truth and a joined run (``chunking``: with
    the whole chunking sorted by start, which precision_omega and retrieve=-1 read)."""
    from ragrade.spans.lookup import positions_of

    coded = truth.query_codes
    if joined.queries is coded.names or list(joined.queries) == coded.names.tolist():
        gq = coded.codes
    else:
        gq = positions_of(coded.names, joined.queries)[coded.codes]
    gb = space.coded_bases(truth.doc_codes)
    cb = space.coded_bases(chunks.doc_codes)
    cs, ce = cb + chunks.start, cb + chunks.end
    whole_s = whole_e = None
    if chunking:
        whole_s, whole_e = cs, ce
        if len(cs) > 1 and bool((cs[1:] < cs[:-1]).any()):
            order = np.argsort(cs, kind="stable")
            whole_s, whole_e = cs[order], ce[order]
    return K.SpanInputs(len(joined.queries), gq, gb + truth.start, gb + truth.end, chunk_start=whole_s,
                        chunk_end=whole_e, semantics=semantics, token_map=space.token_map,
                        retrieved=joined.retrieved(cs, ce))


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
    queries = truth.query_codes.names
    joined = join_run(run, chunks, queries, pol)
    missing = ~joined.present
    if missing.any() and pol.missing_run == "error":
        raise PolicyError(f"{int(missing.sum())} queries of the spans are missing from the run (missing_run='error')",)
    space = space or DocSpace.of(truth, chunks, corpus)
    whole = any(m.name == "span_precision_omega" or m.get("retrieve") == -1 for _, m in labels)
    inp = span_inputs(truth, joined, chunks, space, semantics, chunking=whole)
    per_query: dict[str, np.ndarray] = {}
    pooled: dict[str, float] = {}
    for label, metric in labels:
        values = _call(metric, inp)
        if metric.name != "span_precision_omega":
            values[missing] = 0.0
        per_query[label] = values
        pooled[label] = K.pooled(metric, inp, np.flatnonzero(joined.present | (metric.name == "span_precision_omega")))
    return SpanScores(queries.tolist(), per_query, pooled, joined.present, joined.only_in_run)


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
