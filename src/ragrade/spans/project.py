"""Projection: gold spans onto a chunking as graded qrels, and judgments of documents or chunks as spans
(docs/spans.md, "Projection").

:func:`project` judges every chunk that overlaps a gold span of a query, under a rule:

* ``rule="chunk"``: the share of the chunk covered by the query's gold, ``|c ∩ R| / |c|``;
* ``rule="gold"``: the largest share of one gold span the chunk covers, ``max_r |c ∩ r| / |r|``;
* ``rule="iou"``: the largest IoU of the chunk and one gold span, ``max_r |c ∩ r| / |c ∪ r|``.

A chunk is relevant when its score reaches ``threshold`` (None: any overlap); its grade is the highest grade
of the gold spans it overlaps, times ``ceil(levels * score)`` when ``levels`` > 1 (grades that follow the
share: 1..levels). An overlapping chunk below the threshold is judged 0. Gold spans of grade 0 or less
(judged non-relevant text, e.g. from document qrels) make the chunks they overlap judged with that grade.

:func:`qrels_to_spans` turns judgments of whole documents (a document is the span ``[0, its length)``) or
of chunks of a chunk map (the chunk's extent) into span truth, so that document qrels (BEIR/MTEB, MS MARCO)
evaluate chunk runs and chunk or segment qrels evaluate any other chunking or whole documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

import ragrade.spans.arguments as A
from ragrade.data import Qrels
from ragrade.errors import InputError
from ragrade.kernels import spans as K
from ragrade.options import public
from ragrade.spans.model import ChunkMap, Corpus, SpanTruth

RULES = ("chunk", "gold", "iou")


def check_rule(rule: Any, threshold: Any, levels: Any) -> tuple[str, float | None, int]:
    """The projection's settings, validated (an :class:`InputError` naming the bad one)."""
    if rule not in RULES:
        raise InputError(f"span_rule must be one of {', '.join(RULES)}", value=rule)
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)
                                  or not 0 < float(threshold) <= 1):
        raise InputError("span_threshold must be a share in (0, 1]", value=threshold)
    if isinstance(levels, bool) or not isinstance(levels, int) or levels < 1:
        raise InputError("span_levels must be a positive integer", value=levels)
    return str(rule), None if threshold is None else float(threshold), int(levels)


def scores(truth: SpanTruth, chunks: ChunkMap, space: Any, rule: str = "chunk"
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(query index, chunk row, score, grade)`` of every (query, chunk) pair that overlaps, each once;
    the score of a pair overlapping only non-positive spans is 0 (its grade: their highest)."""
    queries = truth.queries
    index = {q: i for i, q in enumerate(queries)}
    gq = np.fromiter((index[q] for q in truth.query.tolist()), dtype=np.int64, count=len(truth))
    gb, cb = space.bases(truth.doc), space.bases(chunks.doc)
    gs, ge = gb + truth.start, gb + truth.end
    cs, ce = cb + chunks.start, cb + chunks.end
    order = np.argsort(cs, kind="stable")
    rows, idx = K.overlap_pairs(gs, ge, cs[order], ce[order], touch=False)
    chunk = order[idx]
    positive = truth.grade[rows] > 0
    inter = np.minimum(ce[chunk], ge[rows]) - np.maximum(cs[chunk], gs[rows])
    clen, glen = ce[chunk] - cs[chunk], ge[rows] - gs[rows]
    if rule == "gold":
        pair_score = inter / glen
    elif rule == "iou":
        pair_score = inter / (clen + glen - inter)
    else:
        pair_score = np.zeros(len(rows))
    pair_score = np.where(positive, pair_score, 0.0)
    n = max(len(chunks), 1)
    key = gq[rows] * n + chunk
    uniq, inv = np.unique(key, return_inverse=True)
    best = np.zeros(len(uniq))
    np.maximum.at(best, inv, pair_score)
    grade = np.full(len(uniq), -np.inf)
    pos_grade = np.where(positive, truth.grade[rows], -np.inf)
    np.maximum.at(grade, inv, pos_grade)
    neg = np.full(len(uniq), -np.inf)
    np.maximum.at(neg, inv, np.where(positive, -np.inf, truth.grade[rows]))
    has_pos = np.isfinite(grade)
    q_of, c_of = uniq // n, uniq % n
    if rule == "chunk":
        best = _chunk_shares(gq, gs, ge, positive_rows=truth.grade > 0, q=q_of, c=c_of, cs=cs, ce=ce)
    return q_of, c_of, np.where(has_pos, best, 0.0), np.where(has_pos, grade, neg)


def _chunk_shares(gq: np.ndarray, gs: np.ndarray, ge: np.ndarray, *, positive_rows: np.ndarray, q: np.ndarray,
                  c: np.ndarray, cs: np.ndarray, ce: np.ndarray) -> np.ndarray:
    """``|c ∩ R_q| / |c|`` for each (query, chunk) pair (R_q: the query's positive gold)."""
    width = K.key_width(ge, ce)
    K.check_width(int(q.max()) + 1 if len(q) else 1, width)
    gp = K.pieces(K.keys(gq[positive_rows], gs[positive_rows], width), K.keys(gq[positive_rows], ge[positive_rows],
                                                                               width))
    cov = K.covered(K.keys(q, cs[c], width), K.keys(q, ce[c], width), gp)
    length = ce[c] - cs[c]
    return np.where(length > 0, cov / np.maximum(length, 1), 0.0)


@public(truth=None, chunks=None, rule=A.RULE, threshold=A.THRESHOLD, levels=A.LEVELS, corpus=A.SOME_CORPUS,
        space=None)
def project(truth: SpanTruth, chunks: ChunkMap, *, rule: str = "chunk", threshold: float | None = None,
            levels: int = 1, corpus: Corpus | None = None, space: Any = None) -> Qrels:
    """Graded qrels of the chunks of ``chunks`` from the gold spans (see the module docstring)."""
    from ragrade.spans.measure import DocSpace
    from ragrade.spans.read import read_chunks, read_corpus, read_spans

    truth, chunks = read_spans(truth), read_chunks(chunks)
    corpus = None if corpus is None else read_corpus(corpus)
    rule, threshold, levels = check_rule(rule, threshold, levels)
    space = space or DocSpace.of(truth, chunks, corpus)
    q, c, score, grade = scores(truth, chunks, space, rule)
    relevant = (score > 0) if threshold is None else (score >= threshold - 1e-12)
    out = np.where(relevant, grade, np.minimum(grade, 0.0))
    if levels > 1:
        out = np.where(relevant, grade * np.ceil(levels * score - 1e-12), out)
    queries = np.asarray(truth.queries, dtype=object)
    return Qrels.from_columns(queries[q], chunks.chunk_id[c], out, source="projected spans")


@public(qrels=None, chunks=A.CHUNKS, corpus=A.SOME_CORPUS, level=A.LEVEL)
def qrels_to_spans(qrels: Qrels, *, chunks: ChunkMap | None = None, corpus: Mapping[str, str] | None = None,
                   level: str = "auto") -> SpanTruth:
    """Span truth from judgments of documents (``level="doc"``: each judged document is the span ``[0, its
    length)``, its length from the corpus or the furthest chunk of the map) or of chunks (``level="chunk"``:
    the chunk's extent in the map). ``auto``: chunks when every judged id is a chunk id of the map, else
    documents. Grades are kept (a grade of 0 or less: text judged non-relevant)."""
    from ragrade.engine.inputs import as_qrels
    from ragrade.spans.read import read_chunks

    qrels = as_qrels(qrels)
    chunks = None if chunks is None else read_chunks(chunks)
    qids = qrels.per_row_queries()
    docs = qrels.per_row_docs()
    grades = qrels.grades
    if level == "auto":
        level = "chunk" if chunks is not None and len(docs) and bool((chunks.positions(docs) >= 0).all()) else "doc"
    if level == "chunk":
        if chunks is None:
            raise InputError("judgments of chunks become spans through a chunk map (chunks=...)")
        at = chunks.positions(docs)
        if len(at) and at.min() < 0:
            raise InputError("a judged chunk is not in the chunk map", item=str(docs[int(np.argmin(at))]))
        return SpanTruth.from_columns(qids, chunks.doc[at], chunks.start[at], chunks.end[at], grades,
                                      source="chunk judgments")
    if level != "doc":
        raise InputError("level must be auto, doc or chunk", value=level)
    lengths = _document_lengths(docs, chunks, corpus)
    keep = lengths > 0
    if not keep.all():
        bad = str(docs[int(np.argmin(keep))])
        raise InputError("a judged document's length is unknown (give the corpus, or a chunk map holding its "
                         "chunks) or it is empty", item=bad)
    return SpanTruth.from_columns(qids, docs, np.zeros(len(docs), dtype=np.int64), lengths, grades,
                                  source="document judgments")


def _document_lengths(docs: np.ndarray, chunks: ChunkMap | None, corpus: Mapping[str, str] | None) -> np.ndarray:
    known: dict[str, int] = {}
    if chunks is not None:
        for d, e in zip(chunks.doc.tolist(), chunks.end.tolist(), strict=True):
            known[d] = max(known.get(d, 0), e)
    if corpus is not None:
        known.update({d: len(t) for d, t in corpus.items()})
    return np.fromiter((known.get(d, 0) for d in docs.tolist()), dtype=np.int64, count=len(docs))


def whole_documents(space: Any, docs: Any = None) -> ChunkMap:
    """The chunking of one chunk per document (chunk id = document id), over the documents of a
    :class:`~ragrade.spans.measure.DocSpace` (or those of ``docs``)."""
    names = list(space.length) if docs is None else [d for d in dict.fromkeys(docs) if d in space.length]
    return ChunkMap.from_columns(names, names, [0] * len(names), [space.length[d] for d in names],
                                 name="documents")


__all__ = ["RULES", "check_rule", "project", "qrels_to_spans", "scores", "whole_documents"]
