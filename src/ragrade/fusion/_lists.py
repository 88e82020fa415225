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
from ragrade.data._columns import offsets_from_counts
from ragrade.errors import InputError
from ragrade.fusion._numba_sort import argsort_segments


@dataclass(frozen=True)
class Space:
    """The queries (sorted, as ranx orders them) and the (query, document) pairs of all runs."""

    query_ids: np.ndarray  # object, sorted
    pair_query: np.ndarray  # int64: query index of each pair
    pair_doc: np.ndarray  # object: document id of each pair

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)


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


def align(runs: list[Run], names: list[str], *, same_queries: bool) -> tuple[Space, list[Lists]]:
    """Align runs on one pair space; each run's lists sorted as ranx sorts them (numba's quicksort of
    ``-score`` over the input order). A document listed twice in one query keeps its first place and
    its last score (a dict filled line by line). ``same_queries``: refuse runs whose query sets differ
    (ranx's rule); otherwise a query missing from a run is an empty list there."""
    qsets = [run.query_ids for run in runs]
    all_q = np.unique(np.concatenate(qsets).astype(object)) if runs else np.empty(0, dtype=object)
    if same_queries:
        for name, q in zip(names, qsets, strict=True):
            if len(q) != len(all_q):
                missing = np.setdiff1d(all_q, q.astype(object))
                raise InputError(f"run {name!r} lacks query {missing[0]!r} that another run has: ranx fuses "
                                 "runs with the same queries only (use another profile, or filter the runs)",
                                 query=str(missing[0]))
    q_index = {q: i for i, q in enumerate(all_q.tolist())}
    nq = len(all_q)
    # one document code space over all runs
    vocabs = [run.doc_vocab for run in runs]
    gcodes, gvocab = factorize(np.concatenate(vocabs) if vocabs else np.empty(0, dtype=object))
    gcodes = np.asarray(gcodes, dtype=np.int64)
    starts = np.cumsum([0] + [len(v) for v in vocabs])
    rows_q: list[np.ndarray] = []
    rows_d: list[np.ndarray] = []
    rows_s: list[np.ndarray] = []
    for i, run in enumerate(runs):
        qi = np.fromiter((q_index[q] for q in run.query_ids.tolist()), dtype=np.int64, count=run.n_queries)
        per_row_q = np.repeat(qi, np.diff(run.offsets))
        per_row_d = gcodes[starts[i] + np.asarray(run.doc_codes, dtype=np.int64)]
        order = np.argsort(per_row_q, kind="stable")  # rows grouped by common query, input order kept
        rows_q.append(per_row_q[order])
        rows_d.append(per_row_d[order])
        rows_s.append(_scores_of(run)[order])
    n_docs = max(len(gvocab), 1)
    keys = np.concatenate([q * n_docs + d for q, d in zip(rows_q, rows_d, strict=True)]) if runs else \
        np.empty(0, dtype=np.int64)
    pair_keys, pair_of_row = np.unique(keys, return_inverse=True)
    space = Space(all_q, pair_keys // n_docs, np.asarray(gvocab, dtype=object)[pair_keys % n_docs]
                  if len(pair_keys) else np.empty(0, dtype=object))
    lists: list[Lists] = []
    at = 0
    for q, s in zip(rows_q, rows_s, strict=True):
        pair = pair_of_row[at: at + len(q)].astype(np.int64)
        at += len(q)
        pair, s, q = _dedupe(pair, s, q)
        off = offsets_from_counts(np.bincount(q, minlength=nq))
        perm = argsort_segments(-s, off)
        lists.append(Lists(pair[perm], s[perm], off, True))
    return space, lists


def _dedupe(pair: np.ndarray, s: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, first = np.unique(pair, return_index=True)
    if len(first) == len(pair):
        return pair, s, q
    _, last_rev = np.unique(pair[::-1], return_index=True)
    last = len(pair) - 1 - last_rev  # aligned with `first` (both ordered by pair id)
    keep = np.sort(first)
    score = np.empty(len(s))
    score[first] = s[last]
    return pair[keep], score[keep], q[keep]


def union(lists: list[Lists], space: Space) -> tuple[np.ndarray, np.ndarray]:
    """Every query's documents in first-seen order over the runs (run 0's list, then what run 1 adds,
    ...): the insertion order of ranx's fused dictionary. Returns ``(pairs, offsets)``."""
    allp = np.concatenate([x.pair for x in lists])
    allq = space.pair_query[allp]
    o = np.argsort(allq, kind="stable")
    ps = allp[o]
    _, first = np.unique(ps, return_index=True)
    first.sort()
    u = ps[first]
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
