"""Passage runs to document runs: MaxP, FirstP, SumP (Dai & Callan, SIGIR 2019; docs/spans.md, "Passages
and documents").

A passage's document is taken from the chunk map (``chunks=``), else from its id up to the first
``delimiter`` (``msmarco_v2.1_doc_00_0#3`` -> ``msmarco_v2.1_doc_00_0``; an id without the delimiter is its
own document), as pyserini's ``--max-passage-delimiter`` splits it.

* ``maxp``: a document's score is its best passage's; the passages are read by score (highest first, equal
  scores by passage id, as pyserini's ``tie_breaker`` orders hits) and each document is ranked where its
  first passage is: pyserini's ``--max-passage`` exactly (``hits`` is ``--max-passage-hits``).
* ``firstp``: the score of the document's first retrieved passage (the lowest position in its document:
  the chunk map's start, else the number after the delimiter, else the passage id).
* ``sump``: the sum of the document's retrieved passage scores.

Documents are ranked by their score, equal scores by the id of the passage that gave it (FirstP: the first
passage; MaxP and SumP: the best one), as pyserini would rank them; ``hits`` keeps that many
documents per query (None: all). A run without scores (ranked lists) scores each passage ``n - position``.
The result is a run with scores stored in that order (``ties="input"`` reads it back as written).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ragrade.spans.arguments as A
from ragrade.data import Run
from ragrade.errors import InputError
from ragrade.options import public
from ragrade.spans.model import ChunkMap

METHODS = ("maxp", "firstp", "sump")


@public(run=None, method=A.METHOD, hits=A.HITS, delimiter=A.DELIMITER, chunks=A.CHUNKS)
def aggregate_passages(run: Any, method: str = "maxp", hits: int | None = None, delimiter: str = "#", *,
                       chunks: ChunkMap | None = None, name: str | None = None) -> Run:
    """A document run from a passage (chunk) run (see the module docstring). ``run``: anything
    :func:`ragrade.evaluate` takes as a run."""
    from ragrade.engine.inputs import as_run

    method = str(method).lower()
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}", value=method)
    if hits is not None and (isinstance(hits, bool) or not isinstance(hits, int) or hits < 1):
        raise InputError("hits must be a positive integer (documents kept per query) or None", value=hits)
    if not isinstance(delimiter, str) or not delimiter:
        raise InputError("delimiter must be a non-empty string", value=delimiter)
    r = as_run(run)
    if chunks is not None and not isinstance(chunks, ChunkMap):
        from ragrade.spans.read import read_chunks

        chunks = read_chunks(chunks)
    rows = _rows(r)
    pvocab = np.asarray(r.doc_vocab, dtype=object)
    order = np.argsort(pvocab.astype(str), kind="stable")  # passage codes in id order
    rank_of = np.empty(len(order), dtype=np.int64)
    rank_of[order] = np.arange(len(order))
    pcode = rank_of[rows["code"]]
    doc_vocab, dcode, position = _documents(pvocab, chunks, delimiter)
    return _aggregate(r, rows["query"], pcode, pvocab[order], dcode[rows["code"]], doc_vocab,
                      position[rows["code"]], rows["score"], method, hits, name)


def _rows(r: Run) -> dict[str, np.ndarray]:
    n = r.n_rows
    seg = np.repeat(np.arange(r.n_queries), np.diff(r.offsets))
    if r.has_scores:
        assert r.scores is not None
        score = np.asarray(r.scores, dtype=np.float64)
    else:  # ranked lists: n - position within the query
        pos = np.arange(n) - r.offsets[seg]
        score = (np.diff(r.offsets)[seg] - pos).astype(np.float64)
    return {"query": seg, "code": np.asarray(r.doc_codes, dtype=np.int64), "score": score}


def _documents(pvocab: np.ndarray, chunks: ChunkMap | None, delimiter: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(document vocabulary, document code of each passage, position of each passage in its document)``."""
    if chunks is not None:
        at = chunks.positions(pvocab)
        if len(at) and at.min() < 0:
            raise InputError("a retrieved passage is not in the chunk map", item=str(pvocab[int(np.argmin(at))]))
        docs = chunks.doc[at]
        position = chunks.start[at].astype(np.float64)
    else:
        parts = [str(p).split(delimiter, 1) for p in pvocab.tolist()]
        docs = np.array([x[0] for x in parts], dtype=object)
        position = np.array([_number(x[1]) if len(x) == 2 else np.nan for x in parts], dtype=np.float64)
    vocab, code = np.unique(docs.astype(str), return_inverse=True)
    return vocab.astype(object), code.astype(np.int64), position


def _number(text: str) -> float:
    try:
        return float(int(text))
    except ValueError:
        return np.nan


def _aggregate(r: Run, query: np.ndarray, pcode: np.ndarray, pids: np.ndarray, dcode: np.ndarray,
               dvocab: np.ndarray, position: np.ndarray, score: np.ndarray, method: str, hits: int | None,
               name: str | None) -> Run:
    nd = max(len(dvocab), 1)
    key = query.astype(np.int64) * nd + dcode
    best = np.lexsort((pcode, -score, query))  # the passages as pyserini reads them
    _, first = np.unique(key[best], return_index=True)
    rep = best[np.sort(first)]  # each document's best passage, in reading order
    if method == "maxp":
        doc_score = score[rep]
    elif method == "sump":
        uniq, inv = np.unique(key, return_inverse=True)
        sums = np.bincount(inv, weights=score)
        doc_score = sums[np.searchsorted(uniq, key[rep])]
    else:  # firstp: the lowest position, then the lowest passage id; ties by that passage's id
        pos = np.where(np.isnan(position), np.inf, position)
        firsts = np.lexsort((pcode, pos, key))
        _, f = np.unique(key[firsts], return_index=True)
        rep = firsts[f]
        doc_score = score[rep]
    order = np.lexsort((pcode[rep], -doc_score, query[rep]))
    rep, doc_score = rep[order], doc_score[order]
    qrows = query[rep]
    if hits is not None:
        starts = np.searchsorted(qrows, np.arange(r.n_queries))
        keep = (np.arange(len(rep)) - starts[qrows]) < hits
        rep, doc_score, qrows = rep[keep], doc_score[keep], qrows[keep]
    qids = np.asarray(r.query_ids, dtype=object)
    return Run.from_columns(qids[qrows], dvocab[dcode[rep]], doc_score, name=name or r.name, source="passages")


__all__ = ["METHODS", "aggregate_passages"]
