"""Ground truth that survives re-chunking: character spans of documents (docs/spans.md).

* the data: :class:`SpanTruth` (``(query, doc, start, end[, grade])``, code points, half-open),
  :class:`ChunkMap` (``(chunk_id, doc, start, end)``) and :class:`Corpus` (``{doc id: text}``);
* files: :func:`read_spans` (JSONL/CSV/TSV/Parquet through the format registry, Chroma's
  ``questions_df.csv`` as it is), :func:`read_chunks`, :func:`read_corpus`, :func:`write_spans`,
  :func:`write_chunks`;
* chunkings: :func:`locate_chunks` (texts -> offsets: exact, whitespace-normalised, fuzzy), the chunkers
  :func:`fixed` and :func:`recursive`, any LangChain splitter, LlamaIndex node parser or callable
  (:func:`chunk_corpus`);
* measures: ``span_recall@k``, ``span_precision@k``, ``span_iou@k``, ``span_precision_omega`` (registered
  metrics; :func:`ragrade.evaluate` takes spans through :mod:`ragrade.spans.route`), and :func:`score` for
  per-query and pooled values;
* :func:`project` (spans -> graded qrels of any chunking), :func:`qrels_to_spans` (document or chunk
  judgments -> spans) and :func:`aggregate_passages` (MaxP / FirstP / SumP, pyserini's ``--max-passage``).

This package sits at layer 5 (with ``scale/``): it uses the engine, the format registry and the kernels;
``ragrade.compare_chunkings`` (layer 8) builds on it.
"""

from __future__ import annotations

from ragrade.spans.chunkers import Chunker, as_chunker, chunk_corpus, chunk_texts, fixed, recursive
from ragrade.spans.locate import LocationReport, locate_chunks
from ragrade.spans.measure import DocSpace, SpanScores, score
from ragrade.spans.model import ChunkMap, Corpus, SpanTruth
from ragrade.spans.passages import aggregate_passages
from ragrade.spans.project import project, qrels_to_spans
from ragrade.spans.read import read_chunks, read_corpus, read_spans, write_chunks, write_spans

__all__ = ["ChunkMap", "Chunker", "Corpus", "DocSpace", "LocationReport", "SpanScores", "SpanTruth",
           "aggregate_passages", "as_chunker", "chunk_corpus", "chunk_texts", "fixed", "locate_chunks", "project",
           "qrels_to_spans", "read_chunks", "read_corpus", "read_spans", "recursive", "score", "write_chunks",
           "write_spans"]
