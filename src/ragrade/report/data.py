"""The per-query data of the HTML report: scores, ranked items with their relevance, missed items, texts.

The payload is columnar: strings (query ids, document ids interned once, texts) in a small JSON header,
numbers in typed binary arrays (float64 scores, int32 document numbers and ranks, float32 grades and
retrieval scores), all deflate-compressed and base64-encoded into the page, where the page script
unpacks it with the browser's own ``DecompressionStream``. At 10,000 queries x 2 runs this is a few
megabytes and no JSON number parsing. :func:`read_payload` turns a report back into the same data.

It is built with NumPy over flat columns (no loop per query): the rank order of every run, the top
``depth`` rows of each query, and two hash joins (shown items -> grades; relevant judgments -> the
rank at which each run retrieved them).
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError

FORMAT = "ragrade-report-data/2"
"""Version of the payload layout (written into it; the page script checks it)."""

_ALIGN = 8


# --------------------------------------------------------------------------------------------- engine views
@dataclass
class RankedRows:
    """A run in rank order: query ids, row offsets per query, and per row (in rank order) accessors."""

    query_ids: np.ndarray  # object array of str
    offsets: np.ndarray  # int64, len = n_queries + 1
    order: np.ndarray  # storage rows in rank order (grouped by query)
    scores: np.ndarray | None  # per storage row
    run: Any

    def docs_at(self, rows: np.ndarray) -> np.ndarray:
        """Document ids (object array of str) of the given storage rows."""
        out: np.ndarray = self.run.docs_at(rows)
        return out

    def all_docs(self) -> np.ndarray:
        """Document ids of every storage row."""
        out: np.ndarray = self.run.per_row_docs()
        return out


def as_run(run: Any) -> Any:
    """A ``ragrade.Run`` from anything ``ragrade.evaluate`` takes as a run (the engine's coercion)."""
    from ragrade.engine.inputs import as_run as engine_as_run

    return engine_as_run(run)


def as_qrels(qrels: Any) -> Any:
    """A ``ragrade.Qrels`` from anything ``ragrade.evaluate`` takes as ground truth."""
    from ragrade.engine.inputs import as_qrels as engine_as_qrels

    return engine_as_qrels(qrels)


def ranked_rows(run: Any, ties: str = "docid_desc") -> RankedRows:
    """The run in rank order, through ``Run``'s columnar view (``offsets``, ``docs_at``, ``ranking``;
    ``docs/architecture.md``)."""
    r = as_run(run)
    return RankedRows(
        query_ids=np.asarray(r.query_ids, dtype=object),
        offsets=np.asarray(r.offsets, dtype=np.int64),
        order=np.asarray(r.ranking(ties), dtype=np.int64),
        scores=None if r.scores is None else np.asarray(r.scores, dtype=np.float64),
        run=r,
    )


def judged_rows(qrels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(query ids, row offsets per query, doc id per row, grade per row, unit per row or None)`` of the
    ground truth, through ``Qrels``' columnar view (units group the rows of one AutoRAG group)."""
    q = as_qrels(qrels)
    units = np.asarray(q.unit_ids()) if q.has_groups else None
    return (
        np.asarray(q.query_ids, dtype=object),
        np.asarray(q.offsets, dtype=np.int64),
        np.asarray(q.per_row_docs(), dtype=object),
        np.asarray(q.grades, dtype=np.float64),
        units,
    )


def ranked_lists(run: Any, query_ids: list[str], ties: str = "docid_desc") -> dict[str, list[tuple[str, float | None]]]:
    """The full ranking of each query, as ``ragrade.Run.ranked`` gives it (``ties`` is the tie policy)."""
    r = as_run(run)
    return {
        qid: [(str(d), None if s is None else float(s)) for d, s in r.ranked(qid, ties=ties)] if qid in r else []
        for qid in query_ids
    }


def default_depth(metrics: Sequence[str]) -> int:
    """The largest cutoff among the metric strings (``ndcg@10`` -> 10), or 10 when none has one."""
    cuts = [int(m.group(1)) for m in (re.search(r"@(\d+)", s) for s in metrics) if m]
    return max(cuts) if cuts else 10


# ------------------------------------------------------------------------------------------------ helpers
def _positions(keys: np.ndarray, index: pd.Index) -> np.ndarray:
    """Position of each key in ``index`` (-1 when absent)."""
    out: np.ndarray = index.get_indexer(_object_index(keys)).astype(np.int64)
    return out


def _object_index(values: Any) -> pd.Index:
    return pd.Index(np.asarray(values, dtype=object), dtype=object)


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray, fill: float = np.nan) -> np.ndarray:
    """``values`` at the position of each ``wanted`` key in ``keys`` (first match; keys < 0 never match)."""
    out = np.full(len(wanted), fill, dtype=np.float64)
    ok = keys >= 0
    keys, values = keys[ok], values[ok]
    if len(keys) == 0 or len(wanted) == 0:
        return out
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    hit = (wanted >= 0) & (keys[at] == wanted)
    out[hit] = values[at[hit]]
    return out


def _group_offsets(qpos: np.ndarray, n_queries: int) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.bincount(qpos, minlength=n_queries))]).astype(np.int32)


# ---------------------------------------------------------------------------------------------- payload
@dataclass
class RunItems:
    """One run's rows of the payload, grouped by report query (offsets into the flat arrays); documents
    are numbers in the payload's shared vocabulary."""

    top_offsets: np.ndarray
    top_docs: np.ndarray  # int64 codes
    top_scores: np.ndarray  # float32, NaN when the run has no scores
    top_grades: np.ndarray  # float32, NaN when unjudged
    missed_offsets: np.ndarray
    missed_docs: np.ndarray  # int64 codes
    missed_grades: np.ndarray
    missed_ranks: np.ndarray  # int32, -1 when never retrieved


@dataclass
class _Shown:
    """The top rows of one run for the report's queries, before grading."""

    rows: RankedRows
    rpos: np.ndarray  # report position of each run query (-1: not in the report)
    seg: np.ndarray  # run query of each shown row
    qpos: np.ndarray  # report position of each shown row
    docs: np.ndarray  # object array of str
    scores: np.ndarray  # float32


def _ranks_by_hash(
    rows: RankedRows, rpos: np.ndarray, lengths: np.ndarray, miss_q: np.ndarray, miss_doc: np.ndarray
) -> np.ndarray:
    """Rank (first occurrence) of each missed item ``(report query, doc)`` in the run, -1 if absent, by
    hashing every document id of the run against the missed ones."""
    miss_rank = np.full(len(miss_q), -1, dtype=np.int64)
    if not len(miss_q) or rows.offsets[-1] == 0:
        return miss_rank
    rel_index = _object_index(pd.unique(miss_doc))
    raw = rows.run.raw_docs
    if rows.run.raw_is_arrow:  # Arrow strings read from a file
        import pyarrow as pa
        import pyarrow.compute as pc

        found = pc.index_in(raw, value_set=pa.array(np.asarray(rel_index, dtype=object), type=raw.type))
        doc_code = np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    else:
        doc_code = rel_index.get_indexer(_object_index(rows.all_docs())).astype(np.int64)
    hit_rows = np.flatnonzero(doc_code >= 0)
    if not len(hit_rows):
        return miss_rank
    seg = np.searchsorted(rows.offsets, hit_rows, side="right") - 1
    rank_of_row = np.empty(len(rows.order), dtype=np.int64)
    rank_of_row[rows.order] = np.arange(len(rows.order)) - np.repeat(rows.offsets[:-1], lengths)
    n_codes = np.int64(len(rel_index) + 1)
    ok = rpos[seg] >= 0
    row_keys = rpos[seg][ok] * n_codes + doc_code[hit_rows][ok]
    row_rank = rank_of_row[hit_rows[ok]] + 1
    first = np.lexsort((row_rank, row_keys))  # smallest rank first within each key
    want = miss_q * n_codes + rel_index.get_indexer(_object_index(miss_doc))
    return _lookup(row_keys[first], row_rank[first].astype(np.float64), want, fill=-1.0).astype(np.int64)


def _ranks_by_score(
    rows: RankedRows,
    source: Any,
    miss_seg: np.ndarray,
    miss_doc: np.ndarray,
    top_seg: np.ndarray,
    top_docs: np.ndarray,
) -> np.ndarray | None:
    """Ranks of the missed items when the run was given as ``{query: {doc: score}}``: each item's score
    is read from the dict and its rank found by binary search in its query's scores (in rank order),
    without hashing every retrieved id. ``None`` when this does not apply (then :func:`_ranks_by_hash`)."""
    if rows.scores is None or not isinstance(source, Mapping) or not len(miss_seg):
        return None
    by_id = {str(k): v for k, v in source.items()}
    qids = rows.query_ids
    try:  # the run's ids must be the dict's own keys: check the first shown item of every query
        first = np.flatnonzero(np.r_[True, top_seg[1:] != top_seg[:-1]]) if len(top_seg) else top_seg
        if not all(d in by_id[q] for q, d in zip(qids[top_seg[first]].tolist(), top_docs[first].tolist(), strict=True)):
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    ranks = np.full(len(miss_seg), -1, dtype=np.int64)
    present = np.flatnonzero(miss_seg >= 0)
    if not len(present):
        return ranks
    inner = [by_id[q] for q in qids[miss_seg[present]].tolist()]
    try:  # None (not retrieved) becomes NaN
        found = np.array(list(map(dict.get, inner, miss_doc[present].tolist())), dtype=np.float64)
    except (TypeError, ValueError):  # not plain dicts of numbers: hash the ids instead
        return None
    has = ~np.isnan(found)
    idx = present[has]
    if not len(idx):
        return ranks
    score = found[has]
    seg = miss_seg[idx]
    ordered = rows.scores[rows.order]  # descending within each query (ties in rank order)
    lo, hi = rows.offsets[seg].copy(), rows.offsets[seg + 1].copy()
    first_le = _segment_search(ordered, lo, hi, score, strict=False)  # first position with value <= score
    first_lt = _segment_search(ordered, lo, hi, score, strict=True)  # first position with value < score
    pos = first_le.copy()
    for k in np.flatnonzero(first_lt - first_le > 1).tolist():  # equal scores: find the doc among them
        block = rows.docs_at(rows.order[first_le[k] : first_lt[k]]).tolist()
        want = miss_doc[idx[k]]
        pos[k] = first_le[k] + (block.index(want) if want in block else 0)
    ranks[idx] = pos - rows.offsets[seg] + 1
    return ranks


def _segment_search(
    values: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: np.ndarray, *, strict: bool
) -> np.ndarray:
    """Per item, the first position in ``values[lo:hi]`` (sorted descending) whose value is ``<= target``
    (``< target`` when ``strict``); vectorised binary search over all items at once."""
    lo, hi = lo.copy(), hi.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        v = values[np.minimum(mid, len(values) - 1)]
        go_right = active & ((v >= target) if strict else (v > target))
        lo = np.where(go_right, mid + 1, lo)
        hi = np.where(active & ~go_right, mid, hi)


@dataclass
class Prepared:
    """What the per-query data needs before the runs are evaluated: the judgments, the top ``depth``
    rows of every query of every run in rank order, and one vocabulary over the judged documents and
    every top one (:func:`prepare_items`; :func:`build_payload` then keeps the report's queries)."""

    depth: int
    ties: str
    judged: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]  # as judged_rows gives
    tops: dict[str, tuple[RankedRows, np.ndarray, np.ndarray, np.ndarray]]  # run -> rows, seg, docs, scores
    codes: np.ndarray  # vocabulary code of every judged row, then of every top row of each run in turn
    vocab: np.ndarray


def _top_rows(rows: RankedRows, depth: int) -> tuple[RankedRows, np.ndarray, np.ndarray, np.ndarray]:
    """The first ``depth`` rows of every query of a run in rank order: (rows, run query of each, doc ids,
    retrieval scores as float32, NaN when the run has none)."""
    take = np.minimum(np.diff(rows.offsets), depth)
    total = int(take.sum())
    starts = np.repeat(rows.offsets[:-1], take)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(take) - take, take)
    top = rows.order[starts + local]
    scores = rows.scores[top] if rows.scores is not None else np.full(total, np.nan)
    seg = np.repeat(np.arange(len(take), dtype=np.int64), take)
    return rows, seg, rows.docs_at(top), scores.astype(np.float32)


def prepare_items(
    qrels: Any,
    runs: Mapping[str, Any],
    depth: int,
    ties: str = "docid_desc",
    ranked: Mapping[str, RankedRows] | None = None,
) -> Prepared:
    """The part of :func:`build_payload` that needs no evaluation (the report builds it while the engine
    evaluates the runs): rank order, top rows and the shared vocabulary. ``ranked``: runs already put in
    rank order by :func:`ranked_rows` with the same ``ties``."""
    depth = int(depth)
    if depth < 1:
        raise InputError("depth must be a positive integer", value=depth)
    given = ranked or {}
    judged = judged_rows(qrels)
    tops = {str(name): _top_rows(given[name] if name in given else ranked_rows(run, ties), depth)
            for name, run in runs.items()}
    codes, vocab = pd.factorize(np.concatenate([judged[2], *(t[2] for t in tops.values())]))
    return Prepared(depth, ties, judged, tops, codes.astype(np.int64), np.asarray(vocab, dtype=object))


def run_items(
    shown: _Shown,
    shown_codes: np.ndarray,
    n_queries: int,
    judged: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    width: int,
    source: Any = None,
) -> RunItems:
    """Grade the shown items of one run and find the relevant items it did not show, with the rank of
    their first retrieval. ``judged`` holds the judgments of report queries: (report position, doc id,
    grade, doc code); codes are in one vocabulary of ``width - 1`` ids shared with ``shown_codes``.
    ``source`` is the run as given (a dict of dicts lets the ranks of missed items be found without
    hashing every retrieved id)."""
    rows = shown.rows
    jpos, j_doc, j_grade, j_code = judged
    j_keys = jpos * np.int64(width) + j_code
    top_keys = shown.qpos * np.int64(width) + shown_codes
    top_grades = _lookup(j_keys, j_grade, top_keys).astype(np.float32)

    relevant = np.flatnonzero(j_grade > 0)
    shown_keys = np.sort(top_keys)
    at = np.minimum(np.searchsorted(shown_keys, j_keys[relevant]), max(len(shown_keys) - 1, 0))
    is_shown = shown_keys[at] == j_keys[relevant] if len(shown_keys) else np.zeros(len(relevant), dtype=bool)
    miss = relevant[~is_shown]
    miss_q, miss_doc, miss_grade = jpos[miss], j_doc[miss], j_grade[miss]
    # Rank of each missed relevant item in the full ranking (its first occurrence), -1 if absent.
    run_of_report = np.full(n_queries, -1, dtype=np.int64)
    run_of_report[shown.rpos[shown.rpos >= 0]] = np.flatnonzero(shown.rpos >= 0)
    miss_rank = _ranks_by_score(rows, source, run_of_report[miss_q], miss_doc, shown.seg, shown.docs)
    if miss_rank is None:
        miss_rank = _ranks_by_hash(rows, shown.rpos, np.diff(rows.offsets), miss_q, miss_doc)
    # Missed items ordered by query, then grade descending, then id.
    order = np.lexsort((miss_doc.astype(str), -miss_grade, miss_q)) if len(miss) else np.zeros(0, dtype=np.int64)
    top_order = np.argsort(shown.qpos, kind="stable")  # rank order within each query is kept
    return RunItems(
        top_offsets=_group_offsets(shown.qpos, n_queries),
        top_docs=shown_codes[top_order],
        top_scores=shown.scores[top_order],
        top_grades=top_grades[top_order],
        missed_offsets=_group_offsets(miss_q, n_queries),
        missed_docs=j_code[miss][order],
        missed_grades=miss_grade[order].astype(np.float32),
        missed_ranks=miss_rank[order].astype(np.int32),
    )


def _texts_for(ids: list[str], texts: Mapping[str, Any], limit: int | None) -> list[str | None]:
    """The text of each id (``None`` when there is none), cut to ``limit`` characters."""
    found = list(map(texts.get, ids))
    kinds = set(map(type, found))
    if kinds <= {str, type(None)} and (
        limit is None or max(map(len, filter(None, found)), default=0) <= limit
    ):  # the common case, checked without a loop in Python: plain strings, none too long
        return found
    if limit is None:
        return [t if t is None or type(t) is str else str(t) for t in found]
    return [
        t if t is None or (type(t) is str and len(t) <= limit) else _cut(t if type(t) is str else str(t), limit)
        for t in found
    ]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def report_queries(per_query: Mapping[str, pd.DataFrame], metrics: Sequence[str]) -> list[str]:
    """The report's queries: those with a score in every run for at least one compared metric (the union
    of the queries the comparison uses), in first-seen order."""
    frames = list(per_query.values())
    first = frames[0].index
    if all(f.index.equals(first) for f in frames):
        ids = first
    else:
        ids = pd.Index(list(dict.fromkeys(q for f in frames for q in f.index)), dtype=object)
        frames = [f.reindex(ids) for f in frames]
    scored = np.zeros(len(ids), dtype=bool)
    for m in metrics:
        scored |= np.all([f[m].notna().to_numpy() for f in frames], axis=0)
    return [str(q) for q in np.asarray(ids, dtype=object)[scored].tolist()]


def build_payload(
    per_query: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    qrels: Any,
    runs: Mapping[str, Any],
    *,
    letters: Mapping[str, str] | None = None,
    pairs: Sequence[tuple[str, str]] = (),
    texts: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    depth: int | None = None,
    max_text_chars: int = 600,
    ties: str = "docid_desc",
    ranked: Mapping[str, RankedRows] | None = None,
    prepared: Prepared | None = None,
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The report's per-query data: a JSON-ready header and the named numeric arrays.

    ``per_query``: per run, the per-query scores (e.g. ``Result.per_query`` or ``Comparison.scores``);
    ``runs``: the rankings (anything ``ragrade.evaluate`` takes as a run); ``qrels``: the grades. For each
    run and report query: the top ``depth`` items (document number, retrieval score, grade or NaN for
    unjudged) and the relevant items outside them (document number, grade, rank of first retrieval or
    -1), ordered by grade descending then id. ``ranked``: runs already put in rank order with
    :func:`ranked_rows` (same ``ties``), by name; the others are ranked here. ``prepared``: the
    result of :func:`prepare_items` for these runs, ``depth`` and ``ties`` (computed here otherwise).
    """
    names = [str(n) for n in per_query]
    missing = [n for n in names if n not in runs]
    if missing:
        raise InputError(f"the comparison has run {missing[0]!r} but no ranking was given for it")
    depth = default_depth(metrics) if depth is None else int(depth)
    if depth < 1:
        raise InputError("depth must be a positive integer", value=depth)
    if prepared is None or prepared.depth != depth or prepared.ties != ties or any(n not in prepared.tops for n in names):
        prepared = prepare_items(qrels, {n: runs[n] for n in names}, depth, ties, ranked)
    qids = report_queries(per_query, metrics)
    qindex = _object_index(qids)

    arrays = _score_arrays(per_query, metrics, names, qindex)
    judged, n_relevant = _report_judgments(prepared, qindex)
    items = _items_of_runs(prepared, names, runs, qindex, judged)
    kept, renumber = _shown_documents(items, len(prepared.vocab) + 1)
    for ri, run in enumerate(names):
        arrays.update(_item_arrays(items[run], ri, renumber))

    doc_list = np.asarray(prepared.vocab, dtype=object)[kept].tolist()
    doc_texts = _texts_for(doc_list, texts, max_text_chars) if texts else None
    query_texts = _texts_for(qids, queries, None) if queries else None
    header = {
        "format": FORMAT,
        "runs": names,
        "letters": [str((letters or {}).get(r, "")) for r in names],
        "metrics": list(metrics),
        "pairs": [list(p) for p in pairs],
        "depth": depth,
        "qids": qids,
        "qtext": query_texts,
        "nrel": n_relevant.astype(int).tolist(),
        "docs": doc_list,
        "doctext": doc_texts,
    }
    return header, arrays


def _score_arrays(per_query: Mapping[str, pd.DataFrame], metrics: Sequence[str], names: list[str],
                  qindex: pd.Index) -> dict[str, np.ndarray]:
    """``s{metric}_{run}``: the per-query scores of each metric and run over the report's queries (NaN where
    a run has none)."""
    arrays: dict[str, np.ndarray] = {}
    for mi, metric in enumerate(metrics):
        for ri, run in enumerate(names):
            arrays[f"s{mi}_{ri}"] = per_query[run][metric].reindex(qindex).to_numpy(dtype=np.float64, na_value=np.nan)
    return arrays


def _report_judgments(prepared: Prepared, qindex: pd.Index
                      ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The judgments of the report's queries as ``(report position, document, grade, document code)``, and
    the number of relevant units per query (AutoRAG groups counted once)."""
    nq = len(qindex)
    j_qids, j_off, j_doc, j_grade, units = prepared.judged
    jpos = np.repeat(_positions(j_qids, qindex), np.diff(j_off))  # report position of every judgment
    keep = jpos >= 0
    jpos, j_doc, j_grade = jpos[keep], j_doc[keep], j_grade[keep]
    rel = j_grade > 0
    if units is None:
        n_relevant = np.bincount(jpos[rel], minlength=nq)
    else:  # AutoRAG groups: a query needs each group once
        pairs_u = np.unique(np.column_stack([jpos[rel], units[keep][rel]]), axis=0) if rel.any() else np.zeros((0, 2), np.int64)
        n_relevant = np.bincount(pairs_u[:, 0], minlength=nq)
    return (jpos, j_doc, j_grade, prepared.codes[: len(keep)][keep]), n_relevant


def _items_of_runs(prepared: Prepared, names: list[str], runs: Mapping[str, Any], qindex: pd.Index,
                   judged: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> dict[str, RunItems]:
    """Per run of the report, in its order: the top rows of the report's queries and the relevant items
    outside them. The document codes of the prepared runs follow the judged ones, run after run."""
    codes, width, nq = prepared.codes, len(prepared.vocab) + 1, len(qindex)
    items: dict[str, RunItems] = {}
    start = len(prepared.judged[2])
    for run, (rows, seg, docs, scores) in prepared.tops.items():
        n = len(docs)
        if run in names:  # the top rows of the report's queries
            rpos = _positions(rows.query_ids, qindex)
            row_pos = rpos[seg]
            mine = row_pos >= 0
            shown = _Shown(rows=rows, rpos=rpos, seg=seg[mine], qpos=row_pos[mine], docs=docs[mine], scores=scores[mine])
            items[run] = run_items(shown, codes[start : start + n][mine], nq, judged, width, runs[run])
        start += n
    return {run: items[run] for run in names}


def _shown_documents(items: Mapping[str, RunItems], width: int) -> tuple[np.ndarray, np.ndarray]:
    """The codes of the documents the page shows, in order of first use, and the map from a code to its
    number on the page (-1 for the others)."""
    used = np.concatenate([np.concatenate([it.top_docs, it.missed_docs]) for it in items.values()])
    kept, first_use = np.unique(used, return_index=True)
    kept = kept[np.argsort(first_use, kind="stable")]
    renumber = np.full(width, -1, dtype=np.int64)
    renumber[kept] = np.arange(len(kept))
    return kept, renumber


def _item_arrays(it: RunItems, ri: int, renumber: np.ndarray) -> dict[str, np.ndarray]:
    """The arrays of run number ``ri``: its top items (offsets, documents, scores, grades) and the relevant
    items it missed (offsets, documents, grades, rank of first retrieval)."""
    return {
        f"to{ri}": it.top_offsets,
        f"td{ri}": renumber[it.top_docs].astype(np.int32),
        f"ts{ri}": it.top_scores,
        f"tg{ri}": it.top_grades,
        f"mo{ri}": it.missed_offsets,
        f"md{ri}": renumber[it.missed_docs].astype(np.int32),
        f"mg{ri}": it.missed_grades,
        f"mr{ri}": it.missed_ranks,
    }


_DTYPES = {"f8": "<f8", "f4": "<f4", "i4": "<i4"}


def pack_payload(header: dict[str, Any], arrays: Mapping[str, np.ndarray], *, level: int = 6) -> str:
    """The payload as it sits in the page: base64 of the deflate-compressed bytes
    ``[u32 header length][header JSON][pad to 8][arrays, each 8-aligned]``, the header listing every
    array as ``[dtype, byte offset from the start of the arrays, length]``."""
    table: dict[str, list[Any]] = {}
    chunks: list[bytes] = []
    offset = 0
    for name, arr in arrays.items():
        kind = {"f": "f8" if arr.dtype.itemsize == 8 else "f4", "i": "i4", "u": "i4"}[arr.dtype.kind]
        data = np.ascontiguousarray(arr, dtype=_DTYPES[kind]).tobytes()
        table[name] = [kind, offset, len(arr)]
        pad = (-len(data)) % _ALIGN
        chunks.append(data + b"\0" * pad)
        offset += len(data) + pad
    text = json.dumps({**header, "arrays": table}, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    head = text.encode("utf-8")
    pre = struct.pack("<I", len(head)) + head
    pre += b"\0" * ((-len(pre)) % _ALIGN)
    raw = pre + b"".join(chunks)
    return base64.b64encode(zlib.compress(raw, level)).decode("ascii")


def unpack_payload(text: str) -> dict[str, Any]:
    """The inverse of :func:`pack_payload`: the header with every array under ``header["arrays"][name]``
    as a NumPy array."""
    raw = zlib.decompress(base64.b64decode(text))
    (n,) = struct.unpack_from("<I", raw, 0)
    header: dict[str, Any] = json.loads(raw[4 : 4 + n].decode("utf-8"))
    base = 4 + n + ((-(4 + n)) % _ALIGN)
    arrays = {}
    for name, (kind, off, length) in header["arrays"].items():
        arrays[name] = np.frombuffer(raw, dtype=_DTYPES[kind], count=length, offset=base + off)
    header["arrays"] = arrays
    return header


def read_payload(page: str) -> dict[str, Any]:
    """The per-query data of a report written by ragrade (the text of the HTML file)."""
    m = re.search(r'<script type="application/octet-stream" id="ragrade-data">([A-Za-z0-9+/=\s]*)</script>', page)
    if m is None:
        raise InputError("no ragrade report data found in this page")
    return unpack_payload(m.group(1))
