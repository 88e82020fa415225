"""Runs to fuse, aligned on one space of (query, document) pairs, stored flat.

Every run becomes a :class:`Lists`: per query (in one common, sorted query order) its documents as *pair
ids* in the order ranx's dictionary holds them, with one value each. A pair id names one (query,
document) couple across all runs, so "the same document in two runs" is an integer comparison, and every
fusion step is a handful of NumPy operations over flat arrays (no loop per query).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragrade._arrays import factorize
from ragrade.data import Run
from ragrade.data.columns import first_duplicate, offsets_from_counts
from ragrade.errors import InputError
from ragrade.fusion._numba_sort import argsort_segments
from ragrade.kernels.tie_orders import argsort_segments_desc


@dataclass(frozen=True)
class Space:
    """The queries (sorted, as ranx orders them) and the (query, document) pairs of all runs."""

    query_ids: np.ndarray  # object, sorted
    pair_query: np.ndarray  # int64: query index of each pair
    pair_code: np.ndarray  # int64: document code of each pair (into doc_vocab)
    doc_vocab: np.ndarray  # object: the document ids of all runs

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def pair_doc(self) -> np.ndarray:
        """The document id of every pair (object array)."""
        return self.doc_vocab[self.pair_code]


@dataclass(frozen=True)
class Lists:
    """One run's lists: ``pair[off[q]:off[q+1]]`` are query q's documents in order, ``val`` their values.

    ``ordered`` mirrors ranx's ``Run.sorted`` flag: False after a normalisation that builds new
    dictionaries, so ranx re-sorts the run (in place) the first time it trains on it."""

    pair: np.ndarray
    val: np.ndarray
    off: np.ndarray
    ordered: bool = True

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.off)

    def positions(self) -> np.ndarray:
        """0-based position of every entry within its query's list."""
        return np.arange(len(self.pair), dtype=np.int64) - np.repeat(self.off[:-1], self.counts)

    def query_of_rows(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.off) - 1, dtype=np.int64), self.counts)

    def replace(self, val: np.ndarray, *, ordered: bool | None = None) -> Lists:
        return Lists(self.pair, val, self.off, self.ordered if ordered is None else ordered)

    def resorted(self) -> Lists:
        """Sorted by value, descending, with numba's quicksort over the current order (ranx ``Run.sort``)."""
        perm = argsort_segments(-self.val, self.off)
        return Lists(self.pair[perm], self.val[perm], self.off, True)

    def trained_view(self) -> Lists:
        """What ranx's training sees: the run re-sorted in place unless it already was sorted."""
        return self if self.ordered else self.resorted()


def _scores_of(run: Run) -> np.ndarray:
    if run.scores is not None:
        return np.asarray(run.scores, dtype=np.float64)
    # ranked lists: descending pseudo-scores n - position (Run.to_dict's rule)
    counts = np.diff(run.offsets)
    pos = np.arange(run.n_rows) - np.repeat(run.offsets[:-1], counts)
    return (np.repeat(counts, counts) - pos).astype(np.float64)


def _common_queries(runs: list[Run]) -> np.ndarray | None:
    """The runs' query ids when every run holds the same ones, in the same strictly rising order (the
    usual case: no lookup per query is then needed), else None."""
    first = runs[0].query_ids
    if any(len(run.query_ids) != len(first) for run in runs[1:]):
        return None
    ids = np.asarray(first, dtype=object)
    try:
        if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
            return None
        for run in runs[1:]:
            if run.query_ids is not first and not bool(np.all(np.asarray(run.query_ids, dtype=object) == ids)):
                return None
    except TypeError:  # ids that do not compare (mixed types): the general path
        return None
    return ids


#: What :func:`align` does with a document listed twice in one query of one run (docs/fusion.md,
#: "Duplicates and empty runs"): refuse the run (ranx, Qdrant, trectools), keep every entry (LangChain and
#: pyserini add both), or keep the first in the list's order (LlamaIndex's retrievers drop the others).
DUPLICATES = ("refuse", "keep", "first")


def align(runs: list[Run], names: list[str], *, same_queries: bool, order: str = "ranx",
          duplicates: str = "refuse") -> tuple[Space, list[Lists]]:
    """Align runs on one pair space; each run's lists sorted as ranx sorts them (numba's quicksort of
    ``-score`` over the input order). ``duplicates``: a document listed twice in one query of a run is an
    :class:`InputError` naming the run, the query and the document (``"refuse"``), is kept twice (``"keep"``:
    both entries stay in the list, each at its own place), or keeps its first entry in the sorted list
    (``"first"``). ``same_queries``: refuse runs whose query sets differ (ranx's rule); otherwise a query
    missing from a run (an empty run included) is an empty list there. ``order``: ``"ranx"`` (numba's
    quicksort), ``"stable"`` (score descending, equal scores in input order) or ``"score_docid"`` (score
    descending, then document id ascending)."""
    all_q, q_index = _query_space(runs, names, same_queries)
    nq = len(all_q)
    gcodes, gvocab, starts = _document_codes(runs)
    rows_off: list[np.ndarray] = []
    rows_d: list[np.ndarray] = []
    rows_s: list[np.ndarray] = []
    for i, run in enumerate(runs):
        run_codes = gcodes[starts[i]: starts[i + 1]]
        dup = run.duplicate_mask()
        if dup.any() and duplicates == "refuse":
            raise _listed_twice(run, names[i], dup)
        if q_index is None and not dup.any() and order == "ranx":  # the run's own lists, in ranx's order
            codes_sorted, s_sorted = ranx_sorted(run)
            rows_off.append(np.asarray(run.offsets, dtype=np.int64))
            rows_d.append(run_codes[codes_sorted])
            rows_s.append(s_sorted)
            continue
        off, per_row_d, scores = _rows_by_query(run, run_codes, q_index, nq)
        perm, s_sorted = _sorted_lists(off, per_row_d, scores, order, gvocab)
        d_sorted = per_row_d[perm]
        if dup.any() and duplicates == "first":
            off, d_sorted, s_sorted = _first_entries(off, d_sorted, s_sorted, len(gvocab))
        rows_off.append(off)
        rows_d.append(d_sorted)
        rows_s.append(s_sorted)
    space, row_pairs = _number_pairs(all_q, rows_d, rows_off, gvocab, max(len(gvocab), 1))
    lists = [Lists(p, s, off, True) for p, s, off in zip(row_pairs, rows_s, rows_off, strict=True)]
    return space, lists


def _query_space(runs: list[Run], names: list[str], same_queries: bool) -> tuple[np.ndarray, dict | None]:
    """``(every query id, sorted; {query: index}, or None when every run holds the same queries)``."""
    common = _common_queries(runs) if runs else None
    if common is not None:
        return common, None
    qsets = [run.query_ids for run in runs]
    all_q = np.unique(np.concatenate(qsets).astype(object)) if runs else np.empty(0, dtype=object)
    if same_queries:
        for name, q in zip(names, qsets, strict=True):
            if len(q) != len(all_q):
                missing = np.setdiff1d(all_q, q.astype(object))
                raise InputError(f"run {name!r} lacks query {missing[0]!r} that another run has: ranx fuses "
                                 "runs with the same queries only (use another profile, or filter the runs)",
                                 query=str(missing[0]))
    return all_q, {q: i for i, q in enumerate(all_q.tolist())}


def _document_codes(runs: list[Run]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One document code space over all runs: ``(codes of every run's vocabulary, concatenated; the
    vocabulary; where each run's codes start)``."""
    vocabs = [run.doc_vocab for run in runs]
    if vocabs and all(v is vocabs[0] for v in vocabs[1:]):  # runs sharing one vocabulary (fused runs)
        gvocab: np.ndarray = vocabs[0]
        gcodes = np.tile(np.arange(len(gvocab), dtype=np.int64), len(vocabs))
    else:
        codes, uniq = factorize(np.concatenate(vocabs) if vocabs else np.empty(0, dtype=object))
        gcodes, gvocab = np.asarray(codes, dtype=np.int64), np.asarray(uniq, dtype=object)
    return gcodes, gvocab, np.cumsum([0] + [len(v) for v in vocabs])


def _rows_by_query(run: Run, run_codes: np.ndarray, q_index: dict | None, nq: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(offsets over the common queries, document code of every row, score of every row)``: the run's
    rows grouped by the common query order, input order kept within a query."""
    per_row_d = run_codes[np.asarray(run.doc_codes, dtype=np.int64)]
    scores = _scores_of(run)
    if q_index is None:
        return np.asarray(run.offsets, dtype=np.int64), per_row_d, scores
    qi = np.fromiter((q_index[q] for q in run.query_ids.tolist()), dtype=np.int64, count=run.n_queries)
    per_row_q = np.repeat(qi, np.diff(run.offsets))
    if not np.all(qi[1:] > qi[:-1]):
        by_q = np.argsort(per_row_q, kind="stable")  # rows grouped by common query, input order kept
        per_row_q, per_row_d, scores = per_row_q[by_q], per_row_d[by_q], scores[by_q]
    return offsets_from_counts(np.bincount(per_row_q, minlength=nq)), per_row_d, scores


def _sorted_lists(off: np.ndarray, per_row_d: np.ndarray, scores: np.ndarray, order: str, gvocab: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``(permutation, sorted scores)`` of every query's list in ``order``."""
    if order == "ranx":
        return argsort_segments_desc(scores, off)
    q_rows = np.repeat(np.arange(len(off) - 1, dtype=np.int64), np.diff(off))
    if order == "stable":
        perm = np.lexsort((-scores, q_rows))
    else:
        perm = np.lexsort((_string_ranks(gvocab)[per_row_d], -scores, q_rows))
    return perm, scores[perm]


def _listed_twice(run: Run, name: str, dup: np.ndarray) -> InputError:
    row = int(np.flatnonzero(dup)[0])
    query = run.query_ids[int(np.searchsorted(run.offsets, row, side="right") - 1)]
    doc = run.doc_vocab[int(run.doc_codes[row])]
    return InputError(f"run {name!r} lists document {doc!r} twice for query {query!r}: ranx, Qdrant and trectools "
                      "take a document once per list (trectools refuses such a file, a Qdrant response never holds "
                      "a point twice); LangChain and pyserini add both entries and LlamaIndex keeps the first: "
                      "fuse under one of their profiles, or remove the duplicate", query=str(query), item=str(doc))


def _first_entries(off: np.ndarray, docs: np.ndarray, scores: np.ndarray, n_docs: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's list without the later entries of a document it lists twice (in the list's order)."""
    q_rows = np.repeat(np.arange(len(off) - 1, dtype=np.int64), np.diff(off))
    keep = ~first_duplicate(q_rows, docs, max(n_docs, 1))
    return offsets_from_counts(np.bincount(q_rows[keep], minlength=len(off) - 1)), docs[keep], scores[keep]


def ranx_sorted(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """``(document codes, scores)`` of every query's list in ranx's order (numba's quicksort of ``-score``
    over the storage order), kept with the run: ranx's ``Run`` sorts once when it is built, and so a run
    fused again (another method, a search over parameters) is not sorted again. Read-only arrays."""

    def make() -> tuple[np.ndarray, np.ndarray]:
        perm, s_sorted = argsort_segments_desc(_scores_of(run), np.asarray(run.offsets, dtype=np.int64))
        codes = np.asarray(run.doc_codes, dtype=np.int64)[perm]
        codes.setflags(write=False)
        s_sorted.setflags(write=False)
        return codes, s_sorted

    result: tuple[np.ndarray, np.ndarray] = run.derived(("fusion", "ranx_order"), make)
    return result


def _number_pairs(all_q: np.ndarray, docs: list[np.ndarray], offs: list[np.ndarray], vocab: np.ndarray,
                  n_docs: int) -> tuple[Space, list[np.ndarray]]:
    """The (query, document) pairs of all runs (rows grouped by query): ``(space, each row's pair)``. The
    C helper numbers pairs in first-seen order over the runs, NumPy in (query, document) order: the
    fusion reads the pairs' identity only, never their numbering."""
    from ragrade._native import accel

    nq = len(all_q)
    total = sum(len(d) for d in docs)
    if accel is not None and hasattr(accel, "fusion_pairs") and docs:
        row_pair = [np.empty(len(d), dtype=np.int64) for d in docs]
        pair_doc = np.empty(total, dtype=np.int64)
        pair_off = np.empty(nq + 1, dtype=np.int64)
        n = accel.fusion_pairs(tuple(np.ascontiguousarray(d, dtype=np.int64) for d in docs),
                               tuple(np.ascontiguousarray(o, dtype=np.int64) for o in offs), n_docs,
                               tuple(row_pair), pair_doc, pair_off)
        pair_query = np.repeat(np.arange(nq, dtype=np.int64), np.diff(pair_off))
        return Space(all_q, pair_query, pair_doc[:n].copy(), vocab), row_pair
    keys = [np.repeat(np.arange(nq, dtype=np.int64), np.diff(o)) * n_docs + d for d, o in zip(docs, offs, strict=True)]
    all_keys = np.concatenate(keys) if keys else np.empty(0, dtype=np.int64)
    pair_of_row, pair_keys = _pair_ids(all_keys, nq * n_docs)
    bounds = np.cumsum([0] + [len(k) for k in keys])
    return (Space(all_q, pair_keys // n_docs, pair_keys % n_docs, vocab),
            [pair_of_row[bounds[i]: bounds[i + 1]] for i in range(len(keys))])


def _string_ranks(values: np.ndarray) -> np.ndarray:
    """Rank of every string in Python's (code point) order."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(values), dtype=np.int64)
    return ranks


def _pair_ids(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """``(id of every key, key of every id)``: a direct table when the keys are dense enough, else a hash."""
    if span <= 8 * len(keys) + 1024:
        seen = np.zeros(span, dtype=bool)
        seen[keys] = True
        ids = np.cumsum(seen, dtype=np.int64) - 1
        return ids[keys], np.flatnonzero(seen)
    codes, uniq = factorize(keys)
    return codes, np.asarray(uniq, dtype=np.int64)


def union(lists: list[Lists], space: Space) -> tuple[np.ndarray, np.ndarray]:
    """Every query's documents in first-seen order over the runs (run 0's list, then what run 1 adds,
    ...): the insertion order of ranx's fused dictionary. Returns ``(pairs, offsets)``."""
    counts = np.stack([x.counts for x in lists])  # [runs, queries]
    moff = offsets_from_counts(counts.sum(axis=0))
    before = np.cumsum(counts, axis=0) - counts  # entries of earlier runs within each query
    merged = np.empty(int(moff[-1]), dtype=np.int64)
    for r, x in enumerate(lists):
        dest = np.repeat(moff[:-1] + before[r], x.counts) + x.positions()
        merged[dest] = x.pair
    first = np.full(len(space.pair_query), -1, dtype=np.int64)
    idx = np.arange(len(merged), dtype=np.int64)
    first[merged[::-1]] = idx[::-1]  # the last write wins: the earliest place of every pair
    keep = np.zeros(len(merged), dtype=bool)
    keep[first[first >= 0]] = True
    u = merged[keep]
    return u, offsets_from_counts(np.bincount(space.pair_query[u], minlength=space.n_queries))


def python_set_candidates(lists: list[Lists], space: Space) -> tuple[np.ndarray, np.ndarray]:
    """ranx's candidates: per query, ``list({doc for run in runs for doc in run})`` built in *this*
    process, so in the order this process's ``PYTHONHASHSEED`` gives (a loop per query)."""
    per_q: list[list[str]] = [[] for _ in range(space.n_queries)]
    maps: list[dict[str, int]] = [{} for _ in range(space.n_queries)]
    for x in lists:
        docs = space.pair_doc[x.pair].tolist()
        pairs = x.pair.tolist()
        off = x.off.tolist()
        for qi in range(space.n_queries):
            a, b = off[qi], off[qi + 1]
            per_q[qi].extend(docs[a:b])
            m = maps[qi]
            for d, p in zip(docs[a:b], pairs[a:b], strict=True):
                m[d] = p
    out: list[int] = []
    counts = []
    for qi in range(space.n_queries):
        cands = list(set(per_q[qi]))
        out.extend(maps[qi][d] for d in cands)
        counts.append(len(cands))
    return np.asarray(out, dtype=np.int64), offsets_from_counts(counts)


def locate(lists: Lists, pairs: np.ndarray, n_pairs: int) -> np.ndarray:
    """Index into ``lists`` of every pair in ``pairs`` (-1 where the run lacks it)."""
    where = np.full(n_pairs, -1, dtype=np.int64)
    where[lists.pair] = np.arange(len(lists.pair), dtype=np.int64)
    return where[pairs]


def layout(lists: list[Lists], space: Space, need: str = "both"
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The fused rows of every query (its pairs in first-seen order over the runs, as :func:`union`) and
    where each run holds them: ``(u_pair, u_off, at, pos)``, ``at[r, u]`` the index into ``lists[r]`` of
    row u's pair (-1: absent), ``pos[r, u]`` its place in its query's list (-1: absent; None when the
    C helper is not built: derived from ``at`` on use). ``need``: ``"both"``, or ``"at"`` / ``"pos"``
    when the other is not needed (the C helper then leaves it out: None)."""
    from ragrade._native import accel

    n_pairs = len(space.pair_query)
    if accel is not None and hasattr(accel, "fusion_layout") and lists:
        cap = min(sum(len(x.pair) for x in lists), n_pairs)
        u_pair = np.empty(cap, dtype=np.int64)
        u_off = np.empty(space.n_queries + 1, dtype=np.int64)
        at = np.empty((len(lists), cap), dtype=np.int64) if need != "pos" else None
        pos = np.empty((len(lists), cap), dtype=np.int64) if need != "at" else None
        n = accel.fusion_layout(tuple(np.ascontiguousarray(x.pair, dtype=np.int64) for x in lists),
                                tuple(np.ascontiguousarray(x.off, dtype=np.int64) for x in lists), n_pairs,
                                u_pair, u_off, at, pos)
        if n < cap:
            return (u_pair[:n], u_off, None if at is None else at[:, :n], None if pos is None else pos[:, :n])
        return u_pair, u_off, at, pos
    u_pair, u_off = union(lists, space)
    return u_pair, u_off, run_rows(lists, u_pair, n_pairs), None


def run_rows(lists: list[Lists], u_pair: np.ndarray, n_pairs: int) -> np.ndarray:
    """``at[r, u]``: run r's row holding fused row u's pair (its last such row), or -1."""
    at = np.empty((len(lists), len(u_pair)), dtype=np.int64)
    where = np.empty(n_pairs, dtype=np.int64)
    for r, x in enumerate(lists):
        where.fill(-1)
        where[x.pair] = np.arange(len(x.pair), dtype=np.int64)
        at[r] = where[u_pair]
    return at
