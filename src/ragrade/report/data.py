"""The per-query data of the HTML report: scores, ranked items with their relevance, missed items, texts.

The payload is columnar and compact (document ids interned once, one array per column) so that a report
for 10,000 queries stays a few megabytes and parses fast in the browser.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ragrade.compare.core import Comparison
from ragrade.errors import InputError


def qrels_to_dict(qrels: Any) -> dict[str, dict[str, float]]:
    """``{qid: {doc: grade}}`` from a ``Qrels`` (``to_dict()``) or a nested mapping."""
    raw = qrels.to_dict() if hasattr(qrels, "to_dict") and not isinstance(qrels, Mapping) else qrels
    if not isinstance(raw, Mapping):
        raise InputError(
            "qrels must be a Qrels object or a mapping {query: {doc: grade}}", value=type(qrels).__name__
        )
    return {str(q): {str(d): _grade(g) for d, g in docs.items()} for q, docs in raw.items()}


def _grade(g: Any) -> int | float:
    value = float(g)
    if not math.isfinite(value):
        raise InputError("a relevance grade must be a finite number", value=g)
    return int(value) if value.is_integer() else value


def ranked_lists(run: Any, query_ids: list[str], ties: str = "docid_desc") -> dict[str, list[tuple[str, float | None]]]:
    """The full ranking of each query, as ``ragrade.Run.ranked`` gives it (``ties`` is the tie policy).

    A mapping ``{qid: {doc: score}}`` or ``{qid: [doc, ...]}`` (kept in order) is turned into a ``Run``
    first, so the report shows exactly the order the metrics were computed on.
    """
    from ragrade.data import Run

    if isinstance(run, Mapping):
        first = next(iter(run.values()), None)
        run = Run.from_dict(run) if first is None or isinstance(first, Mapping) else Run.from_ranked(run)
    if not isinstance(run, Run):
        raise InputError("a run must be a Run object or a mapping {query: {doc: score}}", value=type(run).__name__)
    out: dict[str, list[tuple[str, float | None]]] = {}
    for qid in query_ids:
        if qid in run:
            out[qid] = [(str(d), None if sc is None else float(sc)) for d, sc in run.ranked(qid, ties=ties)]
        else:
            out[qid] = []
    return out


def default_depth(metrics: list[str]) -> int:
    """The largest cutoff among the metric strings (``ndcg@10`` -> 10), or 10 when none has one."""
    cuts = [int(m.group(1)) for m in (re.search(r"@(\d+)", s) for s in metrics) if m]
    return max(cuts) if cuts else 10


def _num(x: float | None, digits: int = 6) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), digits)


def build_payload(
    comparison: Comparison,
    qrels: Any,
    runs: Mapping[str, Any],
    *,
    texts: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    depth: int | None = None,
    max_text_chars: int = 600,
    ties: str = "docid_desc",
) -> dict[str, Any]:
    """The JSON-ready payload of the report's per-query view.

    Queries are those of the comparison (union over metrics, in order). For each run: the top ``depth``
    items as ``[doc index, retrieval score, grade or None]`` and the relevant items outside the top
    ``depth`` as ``[doc index, grade, rank or None]`` (``None``: never retrieved).
    """
    names = list(comparison.runs)
    missing = [n for n in names if n not in runs]
    if missing:
        raise InputError(f"the comparison has run {missing[0]!r} but no ranking was given for it")
    depth = default_depth(comparison.metrics) if depth is None else int(depth)
    if depth < 1:
        raise InputError("depth must be a positive integer", value=depth)
    qrels_d = qrels_to_dict(qrels)

    qids: list[str] = []
    seen: set[str] = set()
    for frame in comparison.scores.values():
        for q in frame.index:
            if q not in seen:
                seen.add(q)
                qids.append(q)
    pos = {q: i for i, q in enumerate(qids)}

    scores: dict[str, dict[str, list[float | None]]] = {}
    for metric in comparison.metrics:
        scores[metric] = {}
        for run in names:
            col: list[float | None] = [None] * len(qids)
            series = comparison.scores[run][metric]
            for q, v in zip(series.index, series.to_numpy(), strict=True):
                col[pos[q]] = _num(v)
            scores[metric][run] = col

    doc_index: dict[str, int] = {}
    doc_ids: list[str] = []

    def intern(doc: str) -> int:
        idx = doc_index.get(doc)
        if idx is None:
            idx = doc_index[doc] = len(doc_ids)
            doc_ids.append(doc)
        return idx

    relevant_of: dict[str, list[tuple[str, int | float]]] = {}  # relevant items per query, grade desc
    ranked_out: dict[str, list[list[list[Any]]]] = {}
    missed_out: dict[str, list[list[list[Any]]]] = {}
    for run in names:
        full = ranked_lists(runs[run], qids, ties=ties)
        ranked_col: list[list[list[Any]]] = []
        missed_col: list[list[list[Any]]] = []
        for q in qids:
            judged = qrels_d.get(q, {})
            lst = full.get(q, [])
            top = lst[:depth]
            ranked_col.append([[intern(d), _num(s, 5), judged.get(d)] for d, s in top])
            relevant = relevant_of.get(q)
            if relevant is None:
                relevant = relevant_of[q] = sorted(
                    ((d, g) for d, g in judged.items() if g > 0), key=lambda t: (-t[1], t[0])
                )
            shown = {d for d, _ in top}
            outside = [(d, g) for d, g in relevant if d not in shown]
            if outside:
                docs_in_order = [d for d, _ in lst]
                # rank of each document's first occurrence (reversed so that earlier ranks win)
                rank_of = dict(zip(reversed(docs_in_order), range(len(docs_in_order), 0, -1), strict=True))
                missed_col.append([[intern(d), g, rank_of.get(d)] for d, g in outside])
            else:
                missed_col.append([])
        ranked_out[run] = ranked_col
        missed_out[run] = missed_col

    doc_texts = None
    if texts:
        doc_texts = []
        for d in doc_ids:
            t = texts.get(d)
            if t is None:
                doc_texts.append(None)
            else:
                t = str(t)
                doc_texts.append(t if len(t) <= max_text_chars else t[:max_text_chars] + " …")
    query_texts = [None if queries is None else queries.get(q) for q in qids] if queries else None
    n_relevant = [sum(1 for g in qrels_d.get(q, {}).values() if float(g) > 0) for q in qids]

    pairs = [[a, b] for (_, a, b) in comparison.pairs.index.unique()] if len(comparison.pairs) else []
    seen_pairs: list[list[str]] = []
    for p in pairs:
        if p not in seen_pairs:
            seen_pairs.append(p)

    return {
        "runs": names,
        "letters": [comparison.letters[r] for r in names],
        "metrics": list(comparison.metrics),
        "pairs": seen_pairs,
        "depth": depth,
        "qids": qids,
        "qtext": query_texts,
        "nrel": n_relevant,
        "scores": scores,
        "docs": doc_ids,
        "doctext": doc_texts,
        "ranked": ranked_out,
        "missed": missed_out,
    }
