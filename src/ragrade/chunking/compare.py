"""Which chunker wins: several chunkings of one corpus scored on one span truth, side by side, with the
significance of their differences over queries (docs/spans.md, "Which chunker wins").

Each chunking is a chunk map (given, or made by a chunker over the corpus) with a run of its chunk ids
(given, or retrieved here: ``retriever(texts, ids)`` builds a retriever over the chunking's texts, asked
every query through :func:`ragrade.retrieve`; the built-in :func:`~ragrade.chunking.lexical.lexical` BM25
when none is given). Every chunking is evaluated by :func:`ragrade.evaluate` (the span route), and the
per-query values are compared by :func:`ragrade.comparison.compare_scores`.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import ragrade.spans.arguments as A
from ragrade.comparison import Comparison, compare_scores
from ragrade.data import Run
from ragrade.engine.result import Result
from ragrade.errors import InputError, RagradeWarning
from ragrade.options import SOME_METRICS, public
from ragrade.spans import (
    ChunkMap,
    Corpus,
    SpanTruth,
    chunk_corpus,
    chunk_texts,
    read_chunks,
    read_corpus,
    read_spans,
)
from ragrade.spans.chunkers import Chunker, as_chunker

#: the cutoffs of the metric@k curves of the report
CURVE_KS = (1, 2, 3, 5, 10)
COLUMNS = ("chunks", "mean_length", "index_characters")


@dataclass(frozen=True)
class ChunkingComparison:
    """What :func:`compare_chunkings` found: ``table`` (one row per chunking: chunks, mean chunk length,
    index characters, the mean of every metric, and ``pooled`` values of the span measures), ``comparison``
    (the paired comparison over queries; None with one chunking), ``results`` (each chunking's
    :class:`~ragrade.Result`), ``chunks`` and ``runs`` (each chunking's map and run), ``metrics`` (the
    compared metrics) and ``k`` (the cutoff of the headline metrics)."""

    table: pd.DataFrame
    comparison: Comparison | None
    results: dict[str, Result]
    chunks: dict[str, ChunkMap]
    runs: dict[str, Run]
    truth: SpanTruth
    metrics: list[str]
    k: int
    corpus: Corpus | None = None
    notes: list[str] = field(default_factory=list)

    def best(self, metric: str | None = None) -> str:
        """The chunking with the highest mean of ``metric`` (default: span IoU at k)."""
        col = metric or f"span_iou@{self.k}"
        if col not in self.table:
            raise InputError(f"no metric {col!r} in the comparison", value=list(self.table.columns))
        return str(self.table[col].astype(float).idxmax())

    def to_markdown(self, digits: int = 4) -> str:
        cols = [*COLUMNS, *self.metrics]
        head = "| chunking | " + " | ".join(c.replace("_", " ") if c in COLUMNS else c for c in cols) + " |"
        rows = [head, "|---|" + "---:|" * len(cols)]
        best = {m: self.table[m].astype(float).max() for m in self.metrics}
        for name, row in self.table.iterrows():
            cells = [_cell(row[c], c, digits, bold=c in best and row[c] == best[c]) for c in cols]
            rows.append(f"| {name} | " + " | ".join(cells) + " |")
        out = "\n".join(rows) + "\n"
        if self.comparison is not None:
            out += "\n" + self.comparison.to_markdown(digits=digits)
        return out

    def to_dict(self) -> dict[str, Any]:
        table = json.loads(self.table.to_json(orient="index"))
        out: dict[str, Any] = {"k": self.k, "metrics": list(self.metrics), "chunkings": table,
                               "best": self.best() if f"span_iou@{self.k}" in self.table else None,
                               "notes": list(self.notes)}
        if self.comparison is not None:
            out["comparison"] = self.comparison.to_dict()
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, default=_json_default)

    def to_html(self, path: Any = None, *, title: str = "ragrade chunking report", plots: bool = True) -> str:
        """The HTML report (the comparison's report with a chunking section); written to ``path`` if given."""
        from ragrade.chunking.report import render_chunking_html

        page = render_chunking_html(self, title=title, plots=plots)
        if path is not None:
            from pathlib import Path

            Path(path).write_text(page, encoding="utf-8")
        return page


def _cell(v: Any, column: str, digits: int, bold: bool) -> str:
    if column in ("chunks", "index_characters"):
        return f"{int(v)}"
    if column == "mean_length":
        return f"{float(v):.1f}"
    text = "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.{digits}f}"
    return f"**{text}**" if bold else text


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if math.isnan(o) else float(o)
    raise TypeError(type(o).__name__)


@public(spans=None, chunkings=None, runs=A.RUNS, corpus=A.SOME_CORPUS, retriever=A.RETRIEVER, queries=None,
        k=A.K, metrics=SOME_METRICS)
def compare_chunkings(spans: Any, chunkings: Mapping[str, Any] | Sequence[Any], runs: Mapping[str, Any] | None = None,
                      *, corpus: Any = None, retriever: Callable[[list[str], list[str]], Any] | None = None,
                      queries: Any = None, k: int = 5, metrics: Sequence[str] | None = None,
                      ks: Sequence[int] = CURVE_KS, profile: str | None = None, baseline: str | None = None,
                      test: str = "randomization", correction: str | None = None, alpha: float = 0.05,
                      n_resamples: int = 10_000, seed: int | None = 0, **options: Any) -> ChunkingComparison:
    """Score several chunkings of one corpus on one span truth (see the module docstring).

    ``spans``: span truth (:func:`ragrade.read_spans` takes it). ``chunkings``: ``{name: chunk map or
    chunker}`` (a chunk map file or :class:`~ragrade.ChunkMap`; a chunker: :func:`ragrade.spans.fixed`,
    :func:`~ragrade.spans.recursive`, a LangChain splitter, a LlamaIndex node parser or a callable
    ``text -> list[str]``), or a list of chunkers named after themselves. ``runs``: ``{name: run of that
    chunking's chunk ids}``; a chunking without one is retrieved with ``retriever(texts, ids)`` (default:
    BM25, :func:`ragrade.chunking.lexical.lexical`) over ``queries`` (default: the questions the span file
    holds), ``max(k, ks)`` chunks per query. ``corpus``: the documents (needed to chunk, to retrieve and for
    token measures). ``metrics``: default span recall, precision and IoU at ``k`` and precision_omega (ks:
    cutoffs of the report's curves). The comparison keywords are :func:`ragrade.compare`'s; ``options`` go
    to :func:`ragrade.evaluate` (profile, span_threshold, policies...)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError("k must be a positive integer", value=k)
    truth = read_spans(spans)
    corp = read_corpus(corpus) if corpus is not None else None
    named = _named(chunkings)
    maps = {name: _chunk_map(name, value, corp) for name, value in named.items()}
    depth = max([k, *[int(x) for x in ks]])
    got = _runs(truth, maps, dict(runs or {}), corp, retriever, queries, depth)
    wanted = list(metrics) if metrics is not None else [f"span_recall@{k}", f"span_precision@{k}",
                                                        f"span_iou@{k}", "span_precision_omega"]
    curves = [f"{m}@{c}" for m in ("span_recall", "span_iou") for c in sorted({int(x) for x in ks})]
    every = list(dict.fromkeys([*wanted, *(c for c in curves if profile != "legalbench_rag" or "iou" not in c)]))
    results = {name: _evaluate(truth, got[name], every, maps[name], corp, profile, options) for name in maps}
    table = _table(maps, results, wanted, truth, got, corp, profile)
    comparison = None
    if len(results) >= 2:
        comparison = compare_scores({n: r for n, r in results.items()}, metrics=wanted, baseline=baseline, test=test,
                                    correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed)
    notes = [line for name, cm in maps.items() if cm.report is not None for line in
             (f"{name}: {x}" for x in cm.report.lines()) if "not found" in line or "more than once" in line]
    return ChunkingComparison(table, comparison, results, maps, got, truth, wanted, k, corp, notes)


def _named(chunkings: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
    if isinstance(chunkings, Mapping):
        out = {str(n): v for n, v in chunkings.items()}
    elif isinstance(chunkings, Sequence) and not isinstance(chunkings, str | bytes):
        out = {}
        for c in chunkings:
            name = as_chunker(c).name if not isinstance(c, ChunkMap) else (c.name or f"chunking-{len(out)}")
            if name in out:
                raise InputError(f"two chunkings are called {name!r}: give them names ({{name: chunker}})")
            out[name] = c
    else:
        raise InputError("chunkings must be a mapping {name: chunk map or chunker} or a list of chunkers",
                         value=type(chunkings).__name__)
    if not out:
        raise InputError("no chunking to compare")
    return out


def _chunk_map(name: str, value: Any, corpus: Corpus | None) -> ChunkMap:
    if isinstance(value, ChunkMap):
        return value
    if isinstance(value, str) or hasattr(value, "__fspath__"):
        return read_chunks(value, name=name)
    if isinstance(value, Chunker) or callable(value) or hasattr(value, "split_text") or \
            hasattr(value, "get_nodes_from_documents"):
        if corpus is None:
            raise InputError(f"chunking {name!r} is a chunker: give the corpus to chunk (corpus=...)")
        return chunk_corpus(corpus, value, name=name)
    return read_chunks(value, name=name)


def _runs(truth: SpanTruth, maps: dict[str, ChunkMap], runs: dict[str, Any], corpus: Corpus | None,
          retriever: Callable[[list[str], list[str]], Any] | None, queries: Any, depth: int) -> dict[str, Run]:
    from ragrade.engine.inputs import as_run

    unknown = [n for n in runs if n not in maps]
    if unknown:
        raise InputError(f"run {unknown[0]!r} names no chunking", value=sorted(maps))
    out = {name: as_run(run) for name, run in runs.items()}
    missing = [n for n in maps if n not in out]
    if not missing:
        return out
    if corpus is None:
        raise InputError(f"chunking {missing[0]!r} has no run: give its run, or the corpus to retrieve from")
    asked = _queries(truth, queries)
    for name in missing:
        out[name] = _retrieved(name, maps[name], corpus, retriever, asked, depth)
    return out


def _queries(truth: SpanTruth, queries: Any) -> dict[str, str]:
    if queries is None:
        asked = {q: truth.questions.get(q, "") for q in truth.queries}
        if not any(asked.values()):
            raise InputError("the span truth holds no question texts to retrieve with: give queries= (a topics file "
                             "or {query id: text}), or the runs")
        return asked
    from ragrade.retrieval.queries import as_queries

    return as_queries(queries)


def _retrieved(name: str, chunks: ChunkMap, corpus: Corpus, retriever: Any, queries: dict[str, str],
               depth: int) -> Run:
    from ragrade.chunking.lexical import lexical
    from ragrade.retrieval import retrieve

    texts = chunk_texts(corpus, chunks)
    ids = chunks.chunk_id.tolist()
    build = retriever if retriever is not None else lexical
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        got = retrieve(build(texts, ids), queries, k=depth, name=name, progress=False, texts=False)
    if got.retrieval.failed:
        raise InputError(f"chunking {name!r}: the retriever failed on {got.retrieval.failed} queries",
                         value=next(iter(got.retrieval.failures.values()), None))
    return got


def _evaluate(truth: SpanTruth, run: Run, metrics: list[str], chunks: ChunkMap, corpus: Corpus | None,
              profile: str | None, options: dict[str, Any]) -> Result:
    from ragrade.evaluation import evaluate

    return evaluate(truth, run, metrics, chunks=chunks, corpus=corpus, profile=profile, **options)


def _table(maps: dict[str, ChunkMap], results: dict[str, Result], metrics: list[str], truth: SpanTruth,
           runs: dict[str, Run], corpus: Corpus | None, profile: str | None) -> pd.DataFrame:
    from ragrade.metrics import parse_metric
    from ragrade.spans.measure import score
    from ragrade.spans.route import SPAN_PROFILES

    rows = {}
    span_labels = [(m, parse_metric(m)) for m in metrics if parse_metric(m).family.kind == "span"]
    semantics = SPAN_PROFILES.get(profile or "", "default")
    for name, cm in maps.items():
        row: dict[str, Any] = {"chunks": len(cm), "mean_length": cm.mean_length, "index_characters": cm.index_characters}
        row.update({m: float(results[name].means[m]) for m in metrics})
        if span_labels:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RagradeWarning)
                pooled = score(_positive(truth), runs[name], span_labels, cm, corpus, semantics=semantics).pooled
            row.update({f"pooled {m}": v for m, v in pooled.items()})
        rows[name] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "chunking"
    return frame


def _positive(truth: SpanTruth) -> SpanTruth:
    keep = np.flatnonzero(truth.grade > 0)
    if len(keep) == len(truth):
        return truth
    return SpanTruth.from_columns(truth.query[keep], truth.doc[keep], truth.start[keep], truth.end[keep],
                                  truth.grade[keep], questions=truth.questions, source=truth.source)




THRESHOLDS = (None, 0.1, 0.25, 0.5, 0.75, 1.0)


@public(spans=None, run=None, metrics=SOME_METRICS, chunks=A.CHUNKS, rule=A.RULE)
def threshold_sweep(spans: Any, run: Any, metrics: Sequence[str] | str, *, chunks: Any, rule: str = "chunk",
                    thresholds: Sequence[float | None] = THRESHOLDS, **options: Any) -> pd.DataFrame:
    """How much the projection's threshold moves the id measures: ``metrics`` of ``run`` evaluated on the spans
    projected onto ``chunks`` at each of ``thresholds`` (None: any overlap) under ``rule``; one row per
    threshold (``options``: the keywords of :func:`ragrade.evaluate`, e.g. ``corpus``)."""
    from ragrade.evaluation import evaluate

    if isinstance(thresholds, str | bytes) or not isinstance(thresholds, Sequence) or not thresholds:
        raise InputError("thresholds must be a non-empty list of shares in (0, 1] (None: any overlap)",
                         value=thresholds)
    rows = {}
    for t in thresholds:
        res = evaluate(spans, run, metrics, chunks=chunks, span_rule=rule, span_threshold=t, **options)
        rows["any overlap" if t is None else f"{float(t):g}"] = {m: float(v) for m, v in res.means.items()}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = f"{rule} threshold"
    return frame


__all__ = ["CURVE_KS", "THRESHOLDS", "ChunkingComparison", "compare_chunkings", "threshold_sweep"]
