"""Join: which retrieved rows are judged, at which rank. Pure functions over arrays.

The ground truth is indexed once (:class:`TruthIndex`); a run is then joined to it by one of two paths
that give identical results:

* :func:`join_run` (columnar): a :class:`~ragrade.data.Run` is ranked (only tied rows are reordered when
  it arrives best-first), its duplicates handled by policy, and each query's items compared with that
  query's judgments — by a C scan over Arrow buffers for runs read from files, else through a hash index
  over the judged ids.
* :func:`join_dict` (nested dicts ``{query: {doc: score}}``): the run already holds a hash table per
  query, so only the *judgments* are looked up in it (typically ten times fewer lookups than retrieved
  items), in the same C pass that reads every score; a judgment's rank is found by a binary search in its
  query's sorted scores (with trec_eval's tie rule on equal scores).

Which judgments are looked up is the index's choice (:class:`TruthIndex`, ``judged``): every judgment
(the default: the hole rate of every result and the measures that read judged non-relevant documents
need them) or the positive ones only. Both paths return a :class:`Joined`: one entry per (retrieved row,
judgment) pair with its 0-based rank, plus the query :class:`Alignment` and what the duplicate and
identical-id policies did. Nothing here mutates its inputs or any caller state; policy *errors*
(``"error"`` options) are raised here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any

import numpy as np

from ragrade._arrays import Lookup, duplicated, factorize, take_strings
from ragrade._ingest import OK, match_segments, rank_in_segments, scan_join
from ragrade.data import Qrels, Run
from ragrade.data.columns import first_duplicate
from ragrade.data.ids import first_nul, str_ids
from ragrade.data.ranking import argsort_desc_within, inverse_at
from ragrade.errors import PolicyError
from ragrade.policies import Policies


class TruthIndex:
    """The ground truth prepared for joining: per-row query and unit, the unit table, the judgments a join
    looks up (``judged="all"``: every one; ``"positive"``: grade > 0 only), and lookup structures built on
    first use. Read-only once built; one index serves any number of runs (:class:`ragrade.Evaluator` keeps
    one)."""

    def __init__(self, qrels: Qrels, judged: str = "all") -> None:
        self.qrels = qrels
        self.query_ids: list[str] = qrels.query_ids.tolist()
        self.row_q = np.repeat(np.arange(qrels.n_queries, dtype=np.int64), np.diff(qrels.offsets))
        # Unit table: one entry per unit with the query it belongs to and its grade (max of its rows).
        if qrels.has_groups:
            ucodes, uniq = factorize(qrels.unit_ids())
            self.row_unit = ucodes.astype(np.int64)
            self.unit_q = np.zeros(len(uniq), dtype=np.int64)
            self.unit_q[self.row_unit] = self.row_q
            self.unit_grade = np.full(len(uniq), -np.inf)
            np.maximum.at(self.unit_grade, self.row_unit, qrels.grades)
        else:
            self.row_unit = np.arange(qrels.n_rows, dtype=np.int64)
            self.unit_q = self.row_q
            self.unit_grade = qrels.grades
        # The rows a join finds: every judgment, or only those that can earn credit (grade > 0).
        if judged not in ("all", "positive"):
            raise ValueError(f"judged must be 'all' or 'positive', got {judged!r}")
        self.judged = judged
        self.lookup_rows = (np.arange(qrels.n_rows, dtype=np.int64) if judged == "all"
                            else np.flatnonzero(qrels.grades > 0))
        self._q_lookup: dict[str, int] | None = None
        self._columnar: tuple[Lookup, Any, Lookup, np.ndarray, int] | None = None
        self._gold: tuple[Any, np.ndarray] | None = None

    @property
    def n_queries(self) -> int:
        return self.qrels.n_queries

    def has_query(self, qid: str) -> bool:
        return qid in self._lookup()

    def _lookup(self) -> dict[str, int]:
        if self._q_lookup is None:
            self._q_lookup = dict(zip(self.query_ids, range(len(self.query_ids)), strict=True))
        return self._q_lookup

    def query_map(self, run_qids: list[str]) -> np.ndarray:
        """Row of the ground truth for each run query id (-1 if absent). When the run lists the same
        queries in the same order (the usual case), no lookup is made."""
        if run_qids == self.query_ids:
            return np.arange(len(run_qids), dtype=np.int64)
        return np.fromiter(map(self._lookup().get, run_qids, repeat(-1)), dtype=np.int64, count=len(run_qids))

    def columnar(self) -> tuple[Lookup, Any, Lookup, np.ndarray, int]:
        """Lookup structures over the looked-up judgments: their ids as an index (and as an Arrow
        array), and their (query, doc) keys as a hash index; built on first use."""
        if self._columnar is None:
            import pyarrow as pa

            rows = self.lookup_rows
            codes, vocab = factorize(self.qrels.docs_at(rows))
            vocab = np.asarray(vocab, dtype=object)
            nv = len(vocab) + 1
            keys = self.row_q[rows] * nv + codes.astype(np.int64)
            self._columnar = (Lookup(vocab), pa.array(vocab, type=pa.string()), Lookup(keys), rows, nv)
        return self._columnar

    def gold_strings(self) -> tuple[Any, np.ndarray]:
        """The looked-up judgments' ids grouped by query (one Arrow array, or a
        :class:`~ragrade._arrays.Utf8Column` for qrels the C tokenizer read), with per-query offsets."""
        if self._gold is None:
            rows = self.lookup_rows
            group_off = np.searchsorted(self.row_q[rows], np.arange(self.n_queries + 1))
            utf8 = self.qrels.raw_utf8
            if utf8 is not None:  # read by the C tokenizer: gathered without pyarrow
                self._gold = (utf8 if self.judged == "all" else utf8.take(rows), group_off)
                return self._gold
            import pyarrow as pa

            raw = self.qrels.raw_docs
            if self.qrels.raw_is_arrow and self.judged == "all":  # every row, in order: the ids as they are
                gold = raw
            elif self.qrels.raw_is_arrow:  # qrels read from a file: no Python objects
                gold = take_strings(raw, rows)
            else:
                gold = pa.array(self.qrels.docs_at(rows), type=pa.large_string())
            self._gold = (gold, group_off)
        return self._gold


@dataclass
class Alignment:
    """Queries on each side: the ground-truth row of each run query (-1: only in the run), which
    ground-truth queries the run has, and each one's retrieved list length."""

    qmap: np.ndarray  # int64[run queries]
    in_run: np.ndarray  # bool[qrels queries]
    n_ret: np.ndarray  # int64[qrels queries]
    run_queries: int
    only_in_run: list[str]
    missing_from_run: list[str]
    empty_lists: list[str]


def align(index: TruthIndex, run_qids: np.ndarray, counts: np.ndarray, policies: Policies,
          qmap: np.ndarray | None = None) -> Alignment:
    """Match run queries to ground-truth queries; raises :class:`PolicyError` where a policy says
    ``"error"`` (``missing_qrels``, ``missing_run``, ``empty_run``)."""
    nq = index.n_queries
    if qmap is None:
        qmap = index.query_map(run_qids.tolist())
    only = np.flatnonzero(qmap < 0)
    only_in_run = run_qids[only].tolist() if len(only) else []
    if only_in_run and policies.missing_qrels == "error":
        raise PolicyError(f"{len(only_in_run)} run queries have no ground truth (e.g. {only_in_run[0]!r}); "
                          "set missing_qrels='ignore' to leave them out")
    in_run = np.zeros(nq, dtype=bool)
    in_run[qmap[qmap >= 0]] = True
    missing = np.flatnonzero(~in_run)
    missing_from_run = index.qrels.query_ids[missing].tolist() if len(missing) else []
    if missing_from_run and policies.missing_run == "error":
        raise PolicyError(f"{len(missing_from_run)} ground-truth queries are missing from the run "
                          f"(e.g. {missing_from_run[0]!r})")
    mapped = qmap >= 0
    n_ret = np.zeros(nq, dtype=np.int64)
    n_ret[qmap[mapped]] = counts[mapped]
    empty = mapped & (counts == 0)
    empty_lists = run_qids[empty].tolist() if empty.any() else []
    if empty_lists and policies.empty_run == "error":
        raise PolicyError(f"query {empty_lists[0]!r} has an empty retrieved list")
    return Alignment(qmap=qmap, in_run=in_run, n_ret=n_ret, run_queries=len(run_qids),
                     only_in_run=only_in_run, missing_from_run=missing_from_run, empty_lists=empty_lists)


@dataclass
class Joined:
    """The judged rows of one run, ready for crediting: one entry per (retrieved row, looked-up judgment)."""

    qq: np.ndarray  # ground-truth query index
    pos: np.ndarray  # 0-based rank in the run's list
    qrow: np.ndarray  # row of the qrels table
    alignment: Alignment
    sorted_scores: np.ndarray | None  # run scores in rank order (for tie reporting)
    offsets: np.ndarray  # run query offsets matching sorted_scores
    run_name: str | None = None
    duplicate_items: int = 0
    duplicates_judged_only: bool = False  # duplicates counted among judged items only
    unique_docs: bool = False  # no document can appear twice in a ranking (a dict's keys)
    identical_ids_dropped: int = 0
    nonfinite_scores: int = 0  # +inf / -inf scores (ranked as given, counted in the summary)
    notes: list[str] = field(default_factory=list)

    @property
    def evaluated_segments(self) -> np.ndarray:
        """Run queries that have ground truth (bool per run query)."""
        return self.alignment.qmap >= 0


# -- the columnar path -----------------------------------------------------------------------------------


def join_run(index: TruthIndex, run: Run, policies: Policies) -> Joined:
    """Join a :class:`Run` (any origin) under ``policies`` (ties, duplicates, identical ids)."""
    pol = policies
    # A full duplicate scan hashes every retrieved id. Under the default policy only duplicates of
    # judged items change a value, so runs read lazily from files are checked on those alone.
    judged_dups_only = pol.duplicates == "credit_once" and not run.duplicates_known and run.raw_is_arrow
    run, identical, duplicate_items = _apply_row_policies(index, run, pol, judged_dups_only)
    offsets = run.offsets
    counts = np.diff(offsets)
    ranked, moved = run.ranking_sparse(pol.ties)
    identity = ranked is None
    perm = ranked
    dup_ranked = None
    shift = None
    if pol.duplicates == "drop" and run.duplicate_mask().any():
        seg_sorted = np.repeat(np.arange(run.n_queries, dtype=np.int64), counts)
        codes = run.doc_codes if perm is None else run.doc_codes[perm]
        dup_ranked = first_duplicate(seg_sorted, codes, len(run.doc_vocab))
        cum_before = np.concatenate(([0], np.cumsum(dup_ranked)))
        shift = cum_before[:-1] - np.repeat(cum_before[offsets[:-1]], counts)  # dups earlier in query
        counts = counts - np.bincount(seg_sorted[dup_ranked], minlength=run.n_queries)
    alignment = align(index, run.query_ids, counts, pol)
    qmap = alignment.qmap

    # Storage rows whose document is a looked-up judgment of their query.
    cand, qq, seg_c, qrow = judged_rows(index, run, qmap, offsets)
    slot = cand if perm is None else inverse_at(perm, moved, cand)
    if dup_ranked is not None:
        keep_c = ~dup_ranked[slot]
        slot, qq, seg_c, qrow = slot[keep_c], qq[keep_c], seg_c[keep_c], qrow[keep_c]
    pos = slot - offsets[seg_c]
    if shift is not None:
        pos = pos - shift[slot]
    if judged_dups_only and len(qrow):
        duplicate_items = int(duplicated(qrow).sum())
    # Only tied rows moved: the scores in rank order are the stored ones.
    in_place = identity or moved is not None
    scores = run.scores
    sorted_scores = None if scores is None else (scores if in_place or perm is None else scores[perm])
    return Joined(qq=qq, pos=pos, qrow=qrow, alignment=alignment, sorted_scores=sorted_scores, offsets=offsets,
                  run_name=run.name, duplicate_items=duplicate_items, duplicates_judged_only=judged_dups_only,
                  identical_ids_dropped=identical, nonfinite_scores=run.nonfinite_scores)


def _apply_row_policies(index: TruthIndex, run: Run, pol: Policies, judged_dups_only: bool
                        ) -> tuple[Run, int, int]:
    """``(run, identical ids dropped, duplicate items)``: the rows the identical-id and duplicate policies
    remove taken out (``duplicates="error"`` raises on the first duplicate of a query with ground truth)."""
    offsets = run.offsets
    n = run.n_rows
    keep = None  # rows removed by policies (storage order)
    identical = 0
    if pol.identical_ids == "drop" and n:
        same = run.per_row_docs() == run.per_row_queries()
        if same.any():
            keep = ~same
            identical = int(same.sum())
    dups = run.duplicate_mask() if n and not judged_dups_only else np.zeros(0, dtype=bool)
    if dups.any():
        known = np.fromiter(map(index.has_query, run.query_ids.tolist()), dtype=bool, count=run.n_queries)
        dups = dups & np.repeat(known, np.diff(offsets))  # queries without ground truth are ignored
    duplicate_items = int(dups.sum()) if len(dups) else 0
    if duplicate_items:
        if pol.duplicates == "error":
            i = int(np.flatnonzero(dups)[0])
            qi = int(np.searchsorted(offsets, i, side="right") - 1)
            raise PolicyError(f"duplicate item {run.docs_at(np.array([i]))[0]!r} in the ranking of "
                              f"query {run.query_ids[qi]!r} ({duplicate_items} duplicates in all)")
        if pol.duplicates == "keep_last":
            seg = np.repeat(np.arange(run.n_queries), np.diff(offsets))
            key = seg.astype(np.int64) * (len(run.doc_vocab) + 1) + run.doc_codes
            later = duplicated(key, keep="last")
            keep = ~later if keep is None else keep & ~later
    if keep is not None:
        run = subset_rows(run, keep)
    return run, identical, duplicate_items


def judged_rows(index: TruthIndex, run: Run, qmap: np.ndarray,
                 offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(storage rows, qrels query, run query, qrels row)`` of the retrieved items that are looked-up
    judgments of their query."""
    if run.raw_is_arrow:
        gold, group_off = index.gold_strings()
        utf8 = run.raw_utf8
        hit = match_segments(run.raw_docs if utf8 is None else utf8, offsets, qmap, group_off, gold)
        if hit is not None:  # the C scan: each query's items against its few judgments
            cand = np.flatnonzero(hit >= 0)
            seg_c = np.searchsorted(offsets, cand, side="right") - 1
            return cand, qmap[seg_c], seg_c, index.lookup_rows[hit[cand]]
    _, _, key_index, key_rows, nv = index.columnar()
    qdoc = _map_docs(index, run)
    cand = np.flatnonzero(qdoc >= 0)
    seg_c = np.searchsorted(offsets, cand, side="right") - 1
    qq = qmap[seg_c]
    ok = qq >= 0
    cand, qq, seg_c = cand[ok], qq[ok], seg_c[ok]
    loc = key_index.get_indexer(qq * nv + qdoc[cand])
    hit = loc >= 0
    return cand[hit], qq[hit], seg_c[hit], key_rows[loc[hit]]


def _map_docs(index: TruthIndex, run: Run) -> np.ndarray:
    """Per storage row of ``run``: index of its document among the looked-up judged ids, or -1."""
    vocab_index, vocab_arrow, _, _, _ = index.columnar()
    if run.raw_is_arrow:
        return _parallel_index_in(run.raw_docs, vocab_arrow)
    if not run.is_coded and run.raw_docs is not None:
        return vocab_index.get_indexer(run.raw_docs).astype(np.int64)
    dmap = vocab_index.get_indexer(run.doc_vocab).astype(np.int64)
    return dmap[run.doc_codes]


def _parallel_index_in(values: Any, value_set: Any) -> np.ndarray:
    """``pyarrow.compute.index_in`` (-1 where absent) over slices in threads: Arrow releases the GIL,
    so this uses every core for the one step that hashes every retrieved id."""
    import os

    import pyarrow.compute as pc

    from ragrade._threads import each

    n = len(values)
    workers = min(os.cpu_count() or 1, 8, max(1, n // 1_000_000))

    def part(bounds: tuple[int, int]) -> np.ndarray:
        a, b = bounds
        found = pc.index_in(values.slice(a, b - a), value_set=value_set)
        if hasattr(found, "combine_chunks"):
            found = found.combine_chunks()
        return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)

    cuts = np.linspace(0, n, workers + 1).astype(np.int64)
    bounds = list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))
    if workers == 1:
        return part((0, n))
    return np.concatenate(each(part, bounds))


def subset_rows(run: Run, keep: np.ndarray) -> Run:
    """The run with only the rows where ``keep`` is True (same queries, same order)."""
    seg = np.repeat(np.arange(run.n_queries), np.diff(run.offsets))
    new_counts = np.bincount(seg[keep], minlength=run.n_queries)
    off = np.zeros(run.n_queries + 1, dtype=np.int64)
    np.cumsum(new_counts, out=off[1:])
    scores = None if run.scores is None else run.scores[keep]
    return Run(run.query_ids.copy(), off, run.doc_codes[keep], run.doc_vocab.copy(), scores, name=run.name)


# -- the nested-dict path ----------------------------------------------------------------------------------


def join_dict(index: TruthIndex, run: dict[Any, Any], policies: Policies) -> Joined | None:
    """Join a run given as ``{query: {doc: score}}`` without building a :class:`Run`.

    Returns None (the caller then builds a :class:`Run` and takes :func:`join_run`, which reports every
    problem precisely) for anything unusual: non-dict values, non-string ids, ids holding a NUL character,
    non-numeric, boolean or NaN scores, empty ids, or a policy this path does not implement
    (``ties="input"``, ``identical_ids="drop"``). The dicts are only read, and only during the call.
    """
    if policies.ties == "input" or policies.identical_ids != "keep":
        return None
    qids_list = list(run.keys())
    values = list(run.values())
    qids = np.fromiter(qids_list, dtype=object, count=len(qids_list))
    all_str, nul = str_ids(qids)  # (one pass: the kind, and a search for NUL)
    if not all_str:
        return None
    # Which judgments to look up, in which run dict (queries matched by id first, so that the lookups run
    # inside the one pass over the run's values).
    qmap = index.query_map(qids_list)
    unmatched = qmap < 0
    if nul is not None and unmatched.any() and first_nul(qids[unmatched]) is not None:
        # A run query id holding a NUL: the Run the caller builds refuses it, naming it. (Only the queries
        # without ground truth are looked at: the others equal query ids of the qrels, checked when read.)
        return None
    q2r = np.full(index.n_queries, -1, dtype=np.int64)
    mapped = qmap >= 0
    q2r[qmap[mapped]] = np.flatnonzero(mapped)
    rows = index.lookup_rows
    rq = q2r[index.row_q if index.judged == "all" else index.row_q[rows]]
    keep = rq >= 0
    if not keep.all():
        rows, rq = rows[keep], rq[keep]
    raw = index.qrels.raw_docs
    if isinstance(raw, np.ndarray):  # ids kept as given (dict qrels): looked up in place, no gathered copy
        status, counts, scores, found_scores = scan_join(values, rq, raw, key_rows=rows)
    else:
        status, counts, scores, found_scores = scan_join(values, rq, index.qrels.docs_at(rows))
    if status != OK:
        return None
    nonfinite = 0
    if not np.isfinite(scores).all():  # one pass in the usual case
        if np.isnan(scores).any():
            return None
        nonfinite = int(np.count_nonzero(np.isinf(scores)))
    n = len(scores)
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    # Sorted scores per query (descending); most runs arrive sorted, so this is usually a check only.
    starts = offsets[1:-1]
    starts = starts[(starts > 0) & (starts < n)]
    out_of_order = scores[1:] > scores[:-1]
    out_of_order[starts - 1] = False
    perm: np.ndarray | None = None
    if out_of_order.any():
        perm = argsort_desc_within(scores, offsets)
        sorted_scores = scores[perm]
    else:
        sorted_scores = scores

    alignment = align(index, qids, counts, policies, qmap=qmap)
    found = ~np.isnan(found_scores)
    rows, rq, s = rows[found], rq[found], found_scores[found]
    a, b = offsets[rq], offsets[rq + 1]
    above, upto = rank_in_segments(sorted_scores, a, b, s)  # first index with score <= s, < s
    pos = above - a
    tied = np.flatnonzero(upto - above > 1)
    if len(tied):
        pos = pos + _tie_offsets(index, values, counts, offsets, perm, rows, rq, above, upto, tied,
                                 policies.ties)
    return Joined(qq=index.row_q[rows], pos=pos, qrow=rows, alignment=alignment, sorted_scores=sorted_scores,
                  offsets=offsets, run_name=None, unique_docs=True, nonfinite_scores=nonfinite)


def _tie_offsets(index: TruthIndex, values: list[Any], counts: np.ndarray, offsets: np.ndarray,
                 perm: np.ndarray | None, rows: np.ndarray, rq: np.ndarray, above: np.ndarray, upto: np.ndarray,
                 tied: np.ndarray, ties: str) -> np.ndarray:
    """Rank among equal scores by document id (descending by default, trec_eval): for each judgment
    whose score is tied, how many tied items the tie rule puts before it. Ids are read only from the
    queries that have such ties."""
    width = (upto - above)[tied]
    idx = np.repeat(above[tied], width) + (np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width, width))
    storage = idx if perm is None else perm[idx]
    involved = np.unique(rq[tied])
    local_off = np.zeros(len(involved) + 1, dtype=np.int64)
    np.cumsum(counts[involved], out=local_off[1:])
    local_keys = np.fromiter(chain.from_iterable(values[i] for i in involved.tolist()), dtype=object,
                             count=int(local_off[-1]))
    owner_q = np.repeat(rq[tied], width)
    slot = np.searchsorted(involved, owner_q)
    other = local_keys[local_off[slot] + (storage - offsets[owner_q])]
    mine = np.repeat(index.qrels.docs_at(rows[tied]), width)
    before: np.ndarray = other > mine if ties == "docid_desc" else other < mine
    owner = np.repeat(np.arange(len(tied)), width)
    extra = np.zeros(len(rows), dtype=np.int64)
    extra[tied] = np.bincount(owner, weights=before.astype(np.float64), minlength=len(tied)).astype(np.int64)
    return extra


JoinFn = Callable[[TruthIndex, Any, Policies], Joined | None]
