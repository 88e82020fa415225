"""Fast join for runs given as nested dicts ``{query: {doc: score}}``.

A run handed over as dicts already holds a hash table per query. Instead of integer-coding every
retrieved id (one string hash per retrieved item), this join looks up only the *judged, positive* items
of the ground truth in those tables (typically ten times fewer), and finds each one's rank by a
vectorised binary search over its query's scores: rank = number of items with a higher score, plus
the number of items with an equal score that the tie rule puts first.

It returns None (and the caller takes the general columnar path) for anything unusual: non-dict
values, non-string ids, non-numeric or NaN scores, empty ids — the general path reports those
precisely. The dicts are only read, and only during the call.
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ragrade._ingest import OK, rank_in_segments, scan_join
from ragrade.kernels.ranking import argsort_desc_within

if TYPE_CHECKING:
    from ragrade.evaluation import Evaluator, Summary, _Joined


def join_dict_run(ev: Evaluator, run: dict, summary: Summary, notes: list[str]) -> _Joined | None:
    from ragrade.evaluation import _Joined

    qids_list = list(run.keys())
    values = list(run.values())
    qids = np.fromiter(qids_list, dtype=object, count=len(qids_list))
    if len(qids) and pd.api.types.infer_dtype(qids, skipna=False) != "string":
        return None
    # Which positive judgments to look up, in which run dict (queries matched by id first, so that the
    # lookups can run inside the one pass over the run's values).
    qmap = ev.query_map(qids_list)
    q2r = np.full(ev.qrels.n_queries, -1, dtype=np.int64)
    mapped = qmap >= 0
    q2r[qmap[mapped]] = np.flatnonzero(mapped)
    rows = ev._pos_rows
    rq = q2r[ev._row_q[rows]]
    keep = rq >= 0
    rows, rq = rows[keep], rq[keep]
    raw = ev.qrels._raw
    if isinstance(raw, np.ndarray):  # ids kept as given (dict qrels): looked up in place, no gathered copy
        status, counts, scores, found_scores = scan_join(values, rq, raw, key_rows=rows)
    else:
        status, counts, scores, found_scores = scan_join(values, rq, ev.qrels._docs_at(rows))
    if status != OK or np.isnan(scores).any():
        return None
    n = len(scores)
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])

    # Sorted scores per query (descending); most runs arrive sorted, so this is usually a check only.
    starts = offsets[1:-1]
    starts = starts[(starts > 0) & (starts < n)]
    out_of_order = scores[1:] > scores[:-1]
    out_of_order[starts - 1] = False
    if out_of_order.any():
        perm = argsort_desc_within(scores, offsets)
        sorted_scores = scores[perm]
    else:
        perm = None
        sorted_scores = scores

    qmap, in_run, n_ret = ev._align(qids, counts, summary, notes, qmap=qmap)
    found = ~np.isnan(found_scores)
    rows, rq, s = rows[found], rq[found], found_scores[found]
    a, b = offsets[rq], offsets[rq + 1]
    above, upto = rank_in_segments(sorted_scores, a, b, s)  # first index with score <= s, < s
    pos = above - a
    tied = np.flatnonzero(upto - above > 1)
    if len(tied):
        # Rank among equal scores by document id (descending by default, trec_eval). Ids are read
        # only from the queries that have such ties.
        width = (upto - above)[tied]
        idx = np.repeat(above[tied], width) + (np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width, width))
        storage = idx if perm is None else perm[idx]
        involved = np.unique(rq[tied])
        local_counts = counts[involved]
        local_off = np.zeros(len(involved) + 1, dtype=np.int64)
        np.cumsum(local_counts, out=local_off[1:])
        local_keys = np.fromiter(chain.from_iterable(values[i] for i in involved.tolist()), dtype=object,
                                 count=int(local_off[-1]))
        owner_q = np.repeat(rq[tied], width)
        slot = np.searchsorted(involved, owner_q)
        other = local_keys[local_off[slot] + (storage - offsets[owner_q])]
        mine = np.repeat(ev.qrels._docs_at(rows[tied]), width)
        before = other > mine if ev.policies.ties == "docid_desc" else other < mine
        owner = np.repeat(np.arange(len(tied)), width)
        pos[tied] += np.bincount(owner, weights=before.astype(np.float64), minlength=len(tied)).astype(np.int64)
    return _Joined(qq=ev._row_q[rows], pos=pos, qrow=rows, n_ret=n_ret, in_run=in_run,
                   sorted_scores=sorted_scores, offsets=offsets, run_name=None, evaluated_segments=qmap >= 0)
