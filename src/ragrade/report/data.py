"""The per-query data of the HTML report: scores, ranked items with their relevance, missed items, texts.

The payload is columnar and compact (document ids interned once, one array per column) so that a report
for 10,000 queries stays a few megabytes and parses fast in the browser. It is built with pandas/NumPy
joins over flat columns (``Run.to_pandas`` in rank order, ``Qrels.to_pandas``), not a loop per query.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ragrade.compare.core import Comparison
from ragrade.errors import InputError


def as_run(run: Any) -> Any:
    """A ``ragrade.Run`` from a Run, ``{qid: {doc: score}}`` or ``{qid: [doc, ...]}`` (order kept)."""
    from ragrade.data import Run

    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        first = next(iter(run.values()), None)
        return Run.from_dict(run) if first is None or isinstance(first, Mapping) else Run.from_ranked(run)
    raise InputError("a run must be a Run object or a mapping {query: {doc: score}}", value=type(run).__name__)


def as_qrels(qrels: Any) -> Any:
    """A ``ragrade.Qrels`` from a Qrels or ``{qid: {doc: grade}}``."""
    from ragrade.data import Qrels

    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    raise InputError("qrels must be a Qrels object or a mapping {query: {doc: grade}}", value=type(qrels).__name__)


def ranked_lists(
    run: Any, query_ids: list[str], ties: str = "docid_desc"
) -> dict[str, list[tuple[str, float | None]]]:
    """The full ranking of each query, as ``ragrade.Run.ranked`` gives it (``ties`` is the tie policy)."""
    r = as_run(run)
    return {
        qid: [(str(d), None if s is None else float(s)) for d, s in r.ranked(qid, ties=ties)] if qid in r else []
        for qid in query_ids
    }


def default_depth(metrics: list[str]) -> int:
    """The largest cutoff among the metric strings (``ndcg@10`` -> 10), or 10 when none has one."""
    cuts = [int(m.group(1)) for m in (re.search(r"@(\d+)", s) for s in metrics) if m]
    return max(cuts) if cuts else 10


def _floats(values: np.ndarray, digits: int | None = None) -> list[float | None]:
    """Python floats (rounded), ``None`` where not finite."""
    arr = np.asarray(values, dtype=np.float64)
    if digits is not None:
        arr = np.round(arr, digits)
    out: list[float | None] = arr.tolist()
    bad = np.flatnonzero(~np.isfinite(arr))
    for i in bad.tolist():
        out[i] = None
    return out


def _grades(values: np.ndarray) -> list[int | float | None]:
    """Grades as ints when integral (``2`` not ``2.0``), ``None`` for NaN (unjudged)."""
    arr = np.asarray(values, dtype=np.float64)
    out: list[Any] = arr.tolist()
    integral = np.isfinite(arr) & (arr == np.round(arr))
    for i in np.flatnonzero(integral).tolist():
        out[i] = int(arr[i])
    for i in np.flatnonzero(np.isnan(arr)).tolist():
        out[i] = None
    return out


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` at the position of each ``wanted`` key in ``keys`` (keys < 0 never match); NaN if absent."""
    ok = keys >= 0
    keys, values = keys[ok], values[ok]
    out = np.full(len(wanted), np.nan)
    if len(keys) == 0 or len(wanted) == 0:
        return out
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    hit = (wanted >= 0) & (keys[at] == wanted)
    out[hit] = values[at[hit]]
    return out


def _nest(qpos: np.ndarray, n_queries: int, rows: list[list[Any]]) -> list[list[list[Any]]]:
    """Split ``rows`` (sorted by query position ``qpos``) into one list per query."""
    bounds = np.searchsorted(qpos, np.arange(n_queries + 1)).tolist()
    return [rows[bounds[i] : bounds[i + 1]] for i in range(n_queries)]


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
    ``depth`` as ``[doc index, grade, rank or None]`` (``None``: never retrieved), ordered by grade
    descending then id.
    """
    names = list(comparison.runs)
    missing = [n for n in names if n not in runs]
    if missing:
        raise InputError(f"the comparison has run {missing[0]!r} but no ranking was given for it")
    depth = default_depth(comparison.metrics) if depth is None else int(depth)
    if depth < 1:
        raise InputError("depth must be a positive integer", value=depth)

    qids = list(dict.fromkeys(q for frame in comparison.scores.values() for q in frame.index))
    qindex = pd.Index(qids)
    nq = len(qids)

    scores: dict[str, dict[str, list[float | None]]] = {}
    for metric in comparison.metrics:
        scores[metric] = {}
        for run in names:
            series = comparison.scores[run][metric].reindex(qindex)
            scores[metric][run] = _floats(series.to_numpy(), 6)

    judged = as_qrels(qrels).to_pandas()
    judged = judged[judged["query"].isin(qindex)]
    judged = judged.assign(grade=judged["grade"].astype(np.float64))
    relevant = judged[judged["grade"] > 0]
    relevant = relevant.assign(qpos=qindex.get_indexer(relevant["query"])).sort_values(
        ["qpos", "grade", "doc"], ascending=[True, False, True], kind="stable"
    )
    n_relevant = relevant.groupby("qpos").size().reindex(range(nq), fill_value=0).astype(int).tolist()

    # Per run: the shown items and the missed relevant ones, as flat frames sorted by query position.
    # Joins use int64 keys (query position x document code): far cheaper than joining string columns.
    rel_qpos = relevant["qpos"].to_numpy()
    parts: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    for run in names:
        full = as_run(runs[run]).to_pandas(ties)
        qpos = qindex.get_indexer(full["query"])
        dcodes, dvocab = pd.factorize(full["doc"])
        width = max(len(dvocab), 1)
        keys = np.where(qpos >= 0, qpos.astype(np.int64) * width + dcodes, -1)
        rank = full["rank"].to_numpy()
        # first occurrence of every (query, doc): rows are in rank order within each query
        uniq_keys, first_row = np.unique(keys, return_index=True)

        in_top = (rank <= depth) & (qpos >= 0)
        top = pd.DataFrame({"qpos": qpos[in_top], "rank": rank[in_top], "doc": full["doc"][in_top].to_numpy()})
        top["score"] = full["score"].to_numpy()[in_top] if "score" in full else np.nan
        top_keys = keys[in_top]
        # grades of the shown items (NaN: unjudged)
        j_codes = dvocab.get_indexer(judged["doc"])
        j_keys = np.where(j_codes >= 0, qindex.get_indexer(judged["query"]).astype(np.int64) * width + j_codes, -1)
        top["grade"] = _lookup(j_keys, judged["grade"].to_numpy(np.float64), top_keys)
        top = top.sort_values(["qpos", "rank"], kind="stable")

        # relevant items not shown, with the rank of their first retrieval (NaN: never retrieved)
        r_codes = dvocab.get_indexer(relevant["doc"])
        r_keys = np.where(r_codes >= 0, rel_qpos.astype(np.int64) * width + r_codes, -1)
        shown = (r_keys >= 0) & np.isin(r_keys, top_keys)
        missed = relevant.loc[~shown, ["qpos", "doc", "grade"]].copy()
        missed["rank"] = _lookup(uniq_keys, rank[first_row].astype(np.float64), r_keys[~shown])
        parts[run] = (top, missed)

    # Intern document ids once over everything shown.
    all_docs = pd.concat([pd.concat([t["doc"], m["doc"]]) for t, m in parts.values()], ignore_index=True)
    codes, doc_ids = pd.factorize(all_docs)
    ranked_out: dict[str, list[list[list[Any]]]] = {}
    missed_out: dict[str, list[list[list[Any]]]] = {}
    start = 0
    for run in names:
        top, missed = parts[run]
        top_codes = codes[start : start + len(top)].tolist()
        start += len(top)
        miss_codes = codes[start : start + len(missed)].tolist()
        start += len(missed)
        top_scores = _floats(top["score"].to_numpy(), 5) if "score" in top else [None] * len(top)
        rows = [list(t) for t in zip(top_codes, top_scores, _grades(top["grade"].to_numpy()), strict=True)]
        ranked_out[run] = _nest(top["qpos"].to_numpy(), nq, rows)
        ranks: list[Any] = _grades(missed["rank"].to_numpy())
        rows = [list(t) for t in zip(miss_codes, _grades(missed["grade"].to_numpy()), ranks, strict=True)]
        missed_out[run] = _nest(missed["qpos"].to_numpy(), nq, rows)

    doc_list = [str(d) for d in doc_ids.tolist()]
    doc_texts = None
    if texts:
        doc_texts = []
        for d in doc_list:
            t = texts.get(d)
            if t is None:
                doc_texts.append(None)
            else:
                t = str(t)
                doc_texts.append(t if len(t) <= max_text_chars else t[:max_text_chars] + " …")
    query_texts = None
    if queries:
        query_texts = [None if (t := queries.get(q)) is None else str(t) for q in qids]

    pairs: list[list[str]] = []
    for _, a, b in comparison.pairs.index:
        if [a, b] not in pairs:
            pairs.append([a, b])

    return {
        "runs": names,
        "letters": [comparison.letters[r] for r in names],
        "metrics": list(comparison.metrics),
        "pairs": pairs,
        "depth": depth,
        "qids": qids,
        "qtext": query_texts,
        "nrel": n_relevant,
        "scores": scores,
        "docs": doc_list,
        "doctext": doc_texts,
        "ranked": ranked_out,
        "missed": missed_out,
    }
