"""The route of span ground truth (:data:`ragrade.evaluation.ROUTES`; docs/spans.md, "Evaluating").

It claims a plan that asks for a span measure, gives a span keyword (``chunks``, ``corpus``,
``span_threshold``, ``span_rule``, ``span_levels``, ``aggregate``), names a span profile (``chroma``,
``legalbench_rag``) or whose ground truth is a :class:`~ragrade.spans.model.SpanTruth`. Then:

1. the ground truth becomes spans: a span file or table as it is; document judgments as whole-document
   spans; judgments of chunks of the chunk map as the chunks' extents (:func:`~ragrade.spans.project.qrels_to_spans`);
2. each run's items are placed: chunk ids of the chunk map, document ids (one chunk per document), or
   retrieved texts located in the corpus (:func:`~ragrade.spans.locate.locate_chunks`);
3. span measures come from :mod:`ragrade.kernels.spans` (:func:`~ragrade.spans.measure.score`), under the
   profile's semantics;
4. id measures (ndcg, map, recall@k, ...) are computed by the engine's executor on the spans projected onto
   the run's chunking (:func:`~ragrade.spans.project.project`; every retrieved chunk that no gold overlaps is
   judged 0 when the truth is spans), or, with ``aggregate``, on the run aggregated to documents
   (:func:`~ragrade.spans.passages.aggregate_passages`) against document judgments.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragrade.data import Qrels, Run
from ragrade.engine.plan import EvalPlan
from ragrade.engine.result import QueryColumns, Result, Summary
from ragrade.errors import InputError, MetricError, RagradeWarning
from ragrade.metrics import Metric
from ragrade.spans.model import ChunkMap, Corpus, SpanTruth

#: the plan keywords of span truth (engine/plan.TRUTH_OPTIONS)
OPTIONS = ("chunks", "corpus", "span_threshold", "span_rule", "span_levels", "aggregate")
#: span profiles of the catalogue (ragrade.profiles) -> the semantics of ragrade.kernels.spans
SPAN_PROFILES = {"chroma": "chroma", "legalbench_rag": "legalbench_rag"}
NO_CHUNK = "<no chunk holds the gold>"
#: the keywords of OPTIONS that are conventions: a gated candidate must be scored with its baseline's
SETTINGS = ("span_threshold", "span_rule", "span_levels", "aggregate")


def claims(plan: EvalPlan) -> bool:
    """Whether ``plan`` is span evaluation (see the module docstring)."""
    return ("span" in plan.kinds or any(k in plan.extras for k in OPTIONS)
            or (plan.profile is not None and plan.profile.name in SPAN_PROFILES)
            or isinstance(plan.qrels, SpanTruth))


@dataclass(frozen=True)
class Setup:
    """What every run of a plan is scored against."""

    truth: SpanTruth
    native: bool  # the truth was given as spans (not as judgments of documents or chunks)
    chunks: ChunkMap | None
    corpus: Corpus | None
    semantics: str
    rule: str
    threshold: float | None
    levels: int
    aggregate: str | None


def run(plan: EvalPlan) -> dict[str, Result]:
    """Every run of ``plan`` scored (see the module docstring)."""
    span_labels = [(lab, m) for lab, m in plan.labels if m.family.kind == "span"]
    id_labels = [(lab, m) for lab, m in plan.labels if m.family.kind != "span"]
    if plan.profile is not None and plan.profile.name in SPAN_PROFILES and id_labels:
        raise MetricError(f"{id_labels[0][0]}: the {plan.profile.name} profile defines the span measures only "
                          "(span_recall, span_precision" + ("" if plan.profile.name == "legalbench_rag" else
                                                            ", span_iou, span_precision_omega")
                          + "); evaluate the other metrics without it")
    setup = _setup(plan)
    if span_labels:
        from ragrade.spans.measure import check_metrics

        check_metrics(span_labels, setup.semantics, plan.profile.name if plan.profile is not None else None)
    out: dict[str, Result] = {}
    for name, given in plan.runs:
        r = _read_run(plan, given, name)
        chunks, r = _placed(setup, r, name)
        out[name] = _one(plan, setup, r, chunks, span_labels, id_labels).replace(run_name=name)
    return out


# -- the plan's ground truth, chunking and settings ----------------------------------------------------------

def _setup(plan: EvalPlan) -> Setup:
    from ragrade.spans.passages import METHODS
    from ragrade.spans.project import check_rule, qrels_to_spans
    from ragrade.spans.read import read_chunks, read_corpus, read_spans

    ex = plan.extras
    corpus = read_corpus(ex["corpus"]) if "corpus" in ex else None
    chunks = read_chunks(ex["chunks"]) if "chunks" in ex else None
    prof = plan.profile
    semantics = SPAN_PROFILES.get(prof.name, "default") if prof is not None else "default"
    rule, threshold, levels = check_rule(ex.get("span_rule", "chunk"), ex.get("span_threshold"),
                                         ex.get("span_levels", 1))
    aggregate = ex.get("aggregate")
    if aggregate is not None and str(aggregate).lower() not in METHODS:
        raise InputError(f"aggregate must be one of {', '.join(METHODS)}", value=aggregate)
    native = is_span_truth(plan.qrels, plan.qrels_format)
    if native:
        truth = read_spans(plan.qrels, plan.qrels_format)
    else:
        truth = qrels_to_spans(_read_qrels(plan), chunks=chunks, corpus=corpus)
    if corpus is not None:
        truth.check(corpus, overlapping="error" if semantics == "legalbench_rag" else "note")
        if chunks is not None:
            chunks.check(corpus)
    else:
        truth.check(None, overlapping="error" if semantics == "legalbench_rag" else "note")
    return Setup(truth, native, chunks, corpus, semantics, rule, threshold, levels,
                 None if aggregate is None else str(aggregate).lower())


def truth_stats(plan: EvalPlan) -> dict[str, Any]:
    """What the gate records of the plan's span truth: the fingerprint of its spans (query, document, start,
    end, grade; not the chunking, which is the candidate's), its queries, spans and gold spans."""
    from ragrade.data.fingerprint import rows_fingerprint

    t = _setup(plan).truth
    rows = zip(t.query.tolist(), t.doc.tolist(), t.start.tolist(), t.end.tolist(), t.grade.tolist(), strict=True)
    return {"fingerprint": rows_fingerprint(rows, kind="spans"), "queries": len(t.queries), "judgments": len(t),
            "relevant": int(np.count_nonzero(t.grade > 0))}


def judgments(plan: EvalPlan) -> Qrels:
    """The judgments a report shows next to the retrieved chunks: the spans projected onto the plan's chunk
    map (or onto whole documents without one) with the plan's rule, threshold and levels."""
    from ragrade.spans.measure import DocSpace
    from ragrade.spans.project import project, whole_documents

    setup = _setup(plan)
    space = DocSpace.of(setup.truth, setup.chunks, setup.corpus)
    target = setup.chunks if setup.chunks is not None else whole_documents(space)
    return project(setup.truth, target, rule=setup.rule, threshold=setup.threshold, levels=setup.levels,
                   space=space)


def is_span_truth(value: Any, format: str | None = None) -> bool:
    """Whether a ground truth is spans: a :class:`SpanTruth`, or a table (file, pyarrow Table, DataFrame,
    list of dicts) with start and end columns, or Chroma's ``questions_df.csv``."""
    from ragrade.spans.read import END, START

    if isinstance(value, SpanTruth):
        return True
    names: list[str] = []
    if isinstance(value, str) or hasattr(value, "__fspath__"):
        from ragrade.io import formats

        try:
            fmt = formats.detect(value, format)
            names = [] if fmt.layout is not None else fmt.column_names(str(value))
        except (OSError, InputError):
            return False
    elif hasattr(value, "column_names"):
        names = list(value.column_names)
    elif hasattr(value, "columns") and hasattr(value, "to_dict"):
        names = [str(c) for c in value.columns]
    elif isinstance(value, list) and value and isinstance(value[0], Mapping):
        names = [str(k) for k in value[0]]
    lower = {n.lower() for n in names}
    return bool((lower & set(START) and lower & set(END)) or {"question", "references"} <= lower)


def _read_qrels(plan: EvalPlan) -> Qrels:
    from ragrade.engine.inputs import as_qrels, is_path

    if is_path(plan.qrels):
        from ragrade.io import read_qrels

        return read_qrels(plan.qrels, format=plan.qrels_format, progress=plan.qrels_progress)
    return as_qrels(plan.qrels)


def _read_run(plan: EvalPlan, given: Any, name: str) -> Run:
    from ragrade.engine.inputs import as_run, is_path

    if is_path(given):
        from ragrade.io import read_run

        return read_run(given, format=plan.run_format, name=name, progress=plan.run_progress)
    return as_run(given)


# -- where a run's items lie ---------------------------------------------------------------------------------

def _placed(setup: Setup, r: Run, name: str) -> tuple[ChunkMap, Run]:
    """The chunking the run's items belong to (and the run, its items renamed when texts were located)."""
    from ragrade.spans.project import whole_documents

    vocab = np.asarray(r.doc_vocab, dtype=object)
    if setup.chunks is not None and len(vocab) and bool((setup.chunks.positions(vocab) >= 0).any()):
        return setup.chunks, r
    docs = set(setup.corpus) if setup.corpus is not None else set(setup.truth.doc.tolist())
    if len(vocab) and all(v in docs for v in vocab.tolist()):
        if setup.corpus is None:
            _note(f"run {name!r}: the documents' lengths are taken from the furthest gold span (give the corpus "
                  "for exact document-level measures)")
        from ragrade.spans.measure import DocSpace

        return whole_documents(DocSpace.of(setup.truth, setup.chunks, setup.corpus), vocab.tolist()), r
    if r.has_texts and setup.corpus is not None:
        return _located(setup, r, name)
    what = "chunk ids of the chunk map" if setup.chunks is not None else "documents of the corpus or the spans"
    raise InputError(f"run {name!r}: its items are not {what}" + ("" if r.has_texts else
                     ", and it holds no texts to locate") + "; give the chunk map (chunks=..., --chunks)",
                     item=str(vocab[0]) if len(vocab) else None)


def _located(setup: Setup, r: Run, name: str) -> tuple[ChunkMap, Run]:
    """The run's retrieved texts located in the corpus: one chunk per distinct text (texts not found become
    chunks of a document of their own, which no gold span is in)."""
    from ragrade.spans.locate import locate_chunks

    assert setup.corpus is not None and r.texts is not None
    perm = r.ranking()
    texts = np.asarray(r.texts, dtype=object)[perm]
    distinct = list(dict.fromkeys(t for t in texts.tolist() if isinstance(t, str)))
    ids = [f"text-{i}" for i in range(len(distinct))]
    found = locate_chunks(setup.corpus, distinct, ids=ids, ordered=False)
    for line in found.report.lines():
        _note(f"run {name!r}: {line}")
    lost = {ids[i]: distinct[i] for i, *_ in found.report.unlocated}
    chunk_id = [*found.chunk_id.tolist(), *lost]
    docs = [*found.doc.tolist(), *(f"<text not found: {c}>" for c in lost)]
    starts = [*found.start.tolist(), *([0] * len(lost))]
    ends = [*found.end.tolist(), *(len(t) for t in lost.values())]
    chunks = ChunkMap.from_columns(chunk_id, docs, starts, ends, name=f"{name} (located texts)")
    index = {t: ids[i] for i, t in enumerate(distinct)}
    seg = np.repeat(np.arange(r.n_queries), np.diff(r.offsets))
    rows = [index.get(t, "") for t in texts.tolist()]
    if "" in rows:
        raise InputError(f"run {name!r}: a retrieved item has no text to locate")
    located = Run.from_columns(np.asarray(r.query_ids, dtype=object)[seg], rows, name=r.name, source="located run")
    return chunks, located


# -- one run -------------------------------------------------------------------------------------------------

def _one(plan: EvalPlan, setup: Setup, r: Run, chunks: ChunkMap, span_labels: list[tuple[str, Metric]],
         id_labels: list[tuple[str, Metric]]) -> Result:
    from ragrade.spans.measure import DocSpace, score

    space = DocSpace.of(setup.truth, chunks, setup.corpus)
    pol = plan.policy_object()
    scores = None
    if span_labels:
        positive = _positive(setup.truth)
        scores = score(positive, r, span_labels, chunks, setup.corpus, semantics=setup.semantics,
                       policies=pol, space=space)
    if not id_labels:
        assert scores is not None
        return _span_result(plan, scores, r)
    result = _id_result(plan, setup, r, chunks, space, id_labels)
    if scores is None:
        return result
    return _with_spans(plan, result, scores)


def _positive(truth: SpanTruth) -> SpanTruth:
    """The spans of grade > 0 (the gold of the span measures)."""
    keep = truth.grade > 0
    if keep.all():
        return truth
    if not keep.any():
        raise InputError("no gold span has a positive grade: the span measures have no gold")
    pick = np.flatnonzero(keep)
    return SpanTruth.from_columns(truth.query[pick], truth.doc[pick], truth.start[pick], truth.end[pick],
                                  truth.grade[pick], None if truth.text is None else truth.text[pick],
                                  questions=truth.questions, source=truth.source,
                                  rows=None if truth.rows is None else truth.rows[pick])


def _span_result(plan: EvalPlan, scores: Any, r: Run) -> Result:
    pol = plan.policy_object()
    keep = scores.present | (pol.missing_run == "zero")
    index = np.asarray(scores.queries, dtype=object)[keep]
    data = {label: scores.per_query[label][keep] for label in scores.per_query}
    missing = [q for q, p in zip(scores.queries, scores.present.tolist(), strict=True) if not p]
    summary = Summary(qrels_queries=len(scores.queries), run_queries=r.n_queries, evaluated=int(keep.sum()),
                      missing_from_run=missing, only_in_run=list(scores.only_in_run))
    return Result(QueryColumns(index, data), dict(plan.labels), summary, pol, profile=plan.profile)


def _with_spans(plan: EvalPlan, result: Result, scores: Any) -> Result:
    where = {q: i for i, q in enumerate(scores.queries)}
    index = result.per_query.index
    at = np.array([where.get(q, -1) for q in index.tolist()], dtype=np.int64)
    values = {label: np.where(at >= 0, v[np.maximum(at, 0)], np.nan) for label, v in scores.per_query.items()}
    span_metrics = {label: m for label, m in plan.labels if label in values}
    combined = result.with_columns(values, span_metrics)
    frame = combined.per_query[[c for c in plan.columns if c in combined.per_query.columns]]
    return combined.replace(per_query=frame, metrics={lab: m for lab, m in plan.labels})


def _id_result(plan: EvalPlan, setup: Setup, r: Run, chunks: ChunkMap, space: Any,
               id_labels: list[tuple[str, Metric]]) -> Result:
    from ragrade.engine.executor import run_in_memory
    from ragrade.spans.project import project, whole_documents

    target, scored = chunks, r
    if setup.aggregate is not None:
        from ragrade.spans.passages import aggregate_passages

        scored = aggregate_passages(r, setup.aggregate, chunks=chunks if chunks.name != "documents" else None)
        target = whole_documents(space, scored.doc_vocab.tolist())
    qrels = project(setup.truth, target, rule=setup.rule, threshold=setup.threshold, levels=setup.levels,
                    space=space)
    qrels = _complete(qrels, setup.truth.queries, scored if setup.native else None)
    prof = plan.profile if plan.profile is not None and plan.profile.name not in SPAN_PROFILES else None
    piece = plan.replace(qrels=qrels, runs=(("run", scored),), labels=tuple(id_labels), extras={}, profile=prof,
                         qrels_format=None, run_format=None, qrels_progress=None, run_progress=None)
    return next(iter(run_in_memory(piece).values()))


def _complete(qrels: Qrels, queries: list[str], run: Run | None) -> Qrels:
    """The projected judgments plus: every retrieved chunk no gold overlaps, judged 0 (spans say what is not
    gold); a query with no judgment at all gets one non-relevant entry, so that it is a query of the ground
    truth (no relevant chunk: the no_relevant policy decides)."""
    import pandas as pd

    frames = [pd.DataFrame({"q": qrels.per_row_queries(), "d": qrels.per_row_docs(), "g": qrels.grades})]
    if run is not None:
        seg = np.repeat(np.arange(run.n_queries), np.diff(run.offsets))
        rq = np.asarray(run.query_ids, dtype=object)[seg]
        frames.append(pd.DataFrame({"q": rq, "d": run.per_row_docs(), "g": 0.0}))
    have = set(frames[0]["q"].tolist())
    lacking = [q for q in queries if q not in have]
    frames.append(pd.DataFrame({"q": lacking, "d": [NO_CHUNK] * len(lacking), "g": 0.0}))
    both = pd.concat(frames, ignore_index=True)
    both = both[both["q"].isin(set(queries))].drop_duplicates(["q", "d"], keep="first")
    return Qrels.from_columns(both["q"].to_numpy(dtype=object), both["d"].to_numpy(dtype=object),
                              both["g"].to_numpy(dtype=np.float64), source="projected spans")


def _note(text: str) -> None:
    warnings.warn(text, RagradeWarning, stacklevel=3)


__all__ = ["OPTIONS", "SETTINGS", "SPAN_PROFILES", "claims", "is_span_truth", "judgments", "run", "truth_stats"]
