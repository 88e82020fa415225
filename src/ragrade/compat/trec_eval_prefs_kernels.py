"""trec_eval 10's preference measures as array math: the kernel of ``ragrade trec_eval -R prefs`` and ``-R
qrels_prefs`` (:mod:`ragrade.compat.trec_eval_prefs` reads the files and prints).

One query at a time, as trec_eval computes it: :func:`form_query` numbers the judged documents by the
ranking (retrieved ones first, in ranking order, then the others by id), counts each judgment group's
preferences (fulfilled or failed among the retrieved, implied, not occurring) and the preference counts of
every document pair over the groups; :func:`query_values` turns these into the 14 ``prefs_*`` values with
trec_eval's operations in trec_eval's order. :class:`ScratchPool` stands for the scratch array trec_eval
keeps across queries, which ``prefs_avgjg_Rnonrel`` can read past a group's data (docs/trec_eval.md).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragrade.errors import JudgmentConflict, TrecEvalError


def strcmp_key(text: str) -> bytes:
    """The bytes trec_eval compares with strcmp."""
    return text.encode("utf-8", "surrogateescape")


# -- one query --------------------------------------------------------------------------------------------------


@dataclass
class Group:
    """One judgment group of one query, its preferences counted against the ranking."""

    ful_ret: int = 0
    poss_ret: int = 0  # fulfilled or not, both retrieved
    ful_imp: int = 0
    poss_imp: int = 0  # fulfilled or not, exactly one retrieved
    notoccur: int = 0  # neither retrieved
    rel: int = 0
    rel_ret: int = 0
    nonrel: int = 0
    nonrel_ret: int = 0
    classes: list[Any] = field(default_factory=list)  # classes of equal level: their numbers (ascending)
    last_start: int = 0  # where the last class starts in the scratch pool (see ScratchPool)
    matrix: Any = None  # several sub-groups: the closed preference matrix (bool, judged x judged)
    levels: Any = None  # several sub-groups: each document's level in the group (-1: not in it)


class ScratchPool:
    """trec_eval's scratch array of document numbers (``rank_pool``), kept across queries: the classes of the
    one-sub-group groups are written in it one after the other; it is reallocated (its content lost) when a
    query has more judgment lines than it holds. prefs_avgjg_Rnonrel can read past a group's last class: what
    an earlier group or query wrote there is read back; a cell trec_eval never wrote (or one past the array)
    holds whatever its heap held, most often bytes of text, a number larger than any document number: ragrade
    reads :data:`UNWRITTEN` there and notes (measure, query) in :attr:`guessed`."""

    def __init__(self) -> None:
        self.cells: list[int | None] = []
        self.guessed: set[tuple[str, str]] = set()

    def reserve(self, needed: int) -> None:
        if needed > len(self.cells):
            self.cells = [None] * (len(self.cells) + needed)

    def read(self, start: int, count: int, who: tuple[str, str], until: int | None = None) -> list[int]:
        """``count`` cells from ``start`` (``until``: stop before the first cell >= until)."""
        out: list[int] = []
        for i in range(start, start + count):
            value = self.cells[i] if i < len(self.cells) else None
            if value is None:
                self.guessed.add(who)
                value = UNWRITTEN
            if until is not None and value >= until:
                break
            out.append(value)
        return out


#: what ragrade reads where trec_eval reads scratch memory it never wrote (see :class:`ScratchPool`)
UNWRITTEN = 2**62


@dataclass
class QueryPrefs:
    qid: str
    groups: list[Group]
    counts: Any  # (judged x judged) uint16: over the groups, how many prefer document i to document j (mod 2^16)
    judged: int
    judged_ret: int


def _numbers(qid: str, lines: list[tuple[str, str, str, float]], rows: list[tuple[str, float]],
             max_docs: int | None, run_path: str) -> tuple[dict[str, int], int]:
    """Each judged document's number (retrieved judged documents in ranking order first, then the others by
    id) and the number retrieved."""
    ranked = sorted(rows, key=lambda r: (-r[1], strcmp_key(r[0])))
    if max_docs is not None:
        ranked = ranked[:max(max_docs, 0)]
    seen: set[str] = set()
    for doc, _ in ranked:
        if doc in seen:
            raise TrecEvalError(f"{run_path}: document {doc!r} is retrieved twice for query {qid!r} (trec_eval "
                                "stops: duplicate docs)")
        seen.add(doc)
    judged = {d for _, _, d, _ in lines}
    number: dict[str, int] = {}
    for doc, _ in ranked:
        if doc in judged:
            number[doc] = len(number)
    judged_ret = len(number)
    for doc in sorted(judged - number.keys(), key=strcmp_key):
        number[doc] = len(number)
    return number, judged_ret


def form_query(qid: str, lines: list[tuple[str, str, str, float]], rows: list[tuple[str, float]],
               max_docs: int | None, pool: ScratchPool, run_path: str) -> QueryPrefs:
    """trec_eval's preference counts of one query for one ranking (``rows``: (docno, score) as in the run)."""
    number, njr = _numbers(qid, lines, rows, max_docs, run_path)
    nj = len(number)
    pool.reserve(len(lines))
    ordered = sorted(((jg, jsg, rel, number[doc], doc) for jg, jsg, doc, rel in lines),
                     key=lambda t: (strcmp_key(t[0]), strcmp_key(t[1]), -t[2], t[3]))
    counts = np.zeros((nj, nj), dtype=np.uint16)  # wraps at 2^16 as trec_eval's unsigned short counts
    groups: list[Group] = []
    at = 0  # next free cell of the pool
    start = 0
    while start < len(ordered):
        end = start
        while end < len(ordered) and ordered[end][0] == ordered[start][0]:
            end += 1
        block = ordered[start:end]
        if len({t[1] for t in block}) > 1:
            groups.append(_matrix_group(qid, block, nj, njr, counts))
        else:
            g = _class_group(qid, block, njr, counts)
            ranks = [t[3] for t in block]
            pool.cells[at:at + len(ranks)] = ranks
            g.last_start = at + len(ranks) - len(g.classes[-1])
            at += len(ranks)
            groups.append(g)
        start = end
    return QueryPrefs(qid, groups, counts, nj, njr)


def _class_group(qid: str, block: list[tuple[str, str, float, int, str]], njr: int, counts: np.ndarray) -> Group:
    """A group with one sub-group: classes of equal level, each preferred to every lower class."""
    g = Group()
    levels = np.array([t[2] for t in block], dtype=np.float64)
    ranks = np.array([t[3] for t in block], dtype=np.int64)
    bounds = np.flatnonzero(np.concatenate([[True], levels[1:] != levels[:-1], [True]]))
    g.classes = [ranks[a:b] for a, b in itertools.pairwise(bounds.tolist())]
    for members, level in zip(g.classes, levels[bounds[:-1]].tolist(), strict=True):
        ret = int((members < njr).sum())
        if level > 0.0:
            g.rel_ret += ret
            g.rel += len(members)
        else:
            g.nonrel_ret += ret
            g.nonrel += len(members)
    # a document in two classes: trec_eval stops
    members_of = np.concatenate([np.unique(c) for c in g.classes])
    seen, times = np.unique(members_of, return_counts=True)
    if (times > 1).any():
        bad = int(seen[times > 1][0])
        doc = next(t[4] for t in block if t[3] == bad)
        raise JudgmentConflict(f"query {qid!r}, judgment group {block[0][0]!r}: document {doc!r} has two different "
                    "rel_levels in one sub-group (trec_eval stops)", block[0][0], [doc])
    # every pair (a in a higher class, b in a lower one), counted class by class without listing the pairs
    higher = np.zeros(0, dtype=np.int64)  # the numbers of the higher classes' documents, sorted (repeats kept)
    ful_ret = ful_imp = fail_ret = fail_imp = notoccur = 0
    for members in g.classes:
        if len(higher):
            first = np.searchsorted(higher, members)  # per b: how many a come before it (a < b)
            h_ret = int(np.searchsorted(higher, njr))  # how many a are retrieved
            ret = members < njr
            ful_ret += int(first[ret].sum())  # a before b, both retrieved
            fail_ret += int((h_ret - first[ret]).sum())  # b before a, both retrieved
            fail_imp += (len(higher) - h_ret) * int(ret.sum())  # only b retrieved
            ful_imp += h_ret * int((~ret).sum())  # only a retrieved
            notoccur += int((first[~ret] - h_ret).sum() + (len(higher) - first[~ret]).sum())  # neither
        higher = np.sort(np.concatenate([higher, members]))
    _add_class_counts(g.classes, counts)
    g.ful_ret, g.ful_imp, g.notoccur = ful_ret, ful_imp, notoccur
    g.poss_ret, g.poss_imp = fail_ret + ful_ret, fail_imp + ful_imp
    return g


def _add_class_counts(classes: list[Any], counts: np.ndarray) -> None:
    """counts[a, b] += 1 for every a in a higher class and b in a lower one (a document listed twice in its
    class counts twice)."""
    docs, times = np.unique(np.concatenate(classes), return_counts=True)
    nj = len(counts)
    rank_class = np.full(nj, len(classes), dtype=np.int64)  # documents not in the group: no pair
    for k, members in enumerate(classes):
        rank_class[members] = k
    dense = 2 * len(docs) >= nj
    cls = rank_class if dense else rank_class[docs]
    inside = cls < len(classes)
    pairs = (cls[:, None] < cls[None, :]) & inside[:, None] & inside[None, :]
    if (times > 1).any():
        weight = np.zeros(nj, dtype=np.int64) if dense else np.zeros(len(docs), dtype=np.int64)
        weight[docs if dense else slice(None)] = times
        add = (pairs * (weight[:, None] * weight[None, :])).astype(counts.dtype)
    else:
        add = pairs.astype(counts.dtype)
    if dense:
        counts += add
    else:
        counts[np.ix_(docs, docs)] += add


def _closure(m: np.ndarray) -> np.ndarray:
    """The reflexive-transitive closure of a boolean matrix."""
    reach = m | np.eye(len(m), dtype=bool)
    while True:
        f = reach.astype(np.float32)
        nxt = (f @ f) > 0
        if np.array_equal(nxt, reach):
            return reach
        reach = nxt


def _matrix_group(qid: str, block: list[tuple[str, str, float, int, str]], nj: int, njr: int,
                  counts: np.ndarray) -> Group:
    """A group with several sub-groups: a preference matrix over the query's judged documents, closed under
    transitivity."""
    g = Group()
    levels = np.full(nj, -1.0)
    m = np.zeros((nj, nj), dtype=bool)
    for jg, _, rel, rank, doc in block:
        now = levels[rank]
        if (now > 0.0 and rel == 0.0) or (now == 0.0 and rel > 0.0):
            raise JudgmentConflict(f"query {qid!r}, judgment group {jg!r}: document {doc!r} has both rel_level 0 and a "
                        "rel_level above 0 (trec_eval stops)", jg, [doc])
        levels[rank] = rel
    start = 0
    while start < len(block):
        end = start
        while end < len(block) and block[end][1] == block[start][1]:
            end += 1
        sub = np.array([t[2] for t in block[start:end]])
        ranks = np.array([t[3] for t in block[start:end]], dtype=np.int64)
        i, j = np.nonzero(sub[:, None] > sub[None, :])
        m[ranks[i], ranks[j]] = True
        start = end
    m = _closure(m)
    np.fill_diagonal(m, False)
    both = m & m.T
    if both.any():
        a, b = (int(x[0]) for x in np.nonzero(both))
        docs = {t[3]: t[4] for t in block}
        raise JudgmentConflict(f"query {qid!r}, judgment group {block[0][0]!r}: contradictory preferences between "
                    f"documents {docs[a]!r} and {docs[b]!r} (trec_eval aborts)", block[0][0], [docs[a], docs[b]])
    g.matrix, g.levels = m, levels
    ret = np.arange(nj) < njr
    g.rel_ret = int((ret & (levels > 0.0)).sum())
    g.nonrel_ret = int((ret & (levels == 0.0)).sum())
    g.rel = int((levels > 0.0).sum())
    g.nonrel = int((levels == 0.0).sum())
    counts += m
    rr = m[:njr, :njr]
    g.ful_ret = int(np.triu(rr, 1).sum())
    g.poss_ret = int(np.tril(rr, -1).sum()) + g.ful_ret
    g.ful_imp = int(m[:njr, njr:].sum())
    g.poss_imp = int(m[njr:, :njr].sum()) + g.ful_imp
    g.notoccur = int(m[njr:, njr:].sum())
    return g


# -- the measures --------------------------------------------------------------------------------------------


def _pairs_fulfilled(a: np.ndarray, b: np.ndarray, limit: int | None = None) -> tuple[int, int]:
    """Over every pair (x in a, y in b): (#x < y [and x < limit], #other pairs)."""
    if not len(a) or not len(b):
        return 0, 0
    sb = np.sort(b)
    above = len(sb) - np.searchsorted(sb, a, side="right")  # per x: how many y > x
    if limit is not None:
        above = np.where(a < limit, above, 0)
    ful = int(above.sum())
    return ful, len(a) * len(b) - ful


def _rnonrel(q: QueryPrefs, g: Group, pool: ScratchPool, retrieved_only: bool) -> tuple[int, int]:
    """prefs_avgjg_Rnonrel(_ret) of one group: (fulfilled, possible) once its non-relevant documents are cut to
    as many as it has relevant ones (R, N: all judged, or the retrieved ones for _ret)."""
    njr = q.judged_ret
    r, n = (g.rel_ret, g.nonrel_ret) if retrieved_only else (g.rel, g.nonrel)
    if r >= n:
        if retrieved_only:
            return g.ful_ret + g.rel_ret * (r - n), g.poss_ret + g.rel * (r - n)
        return (g.ful_ret + g.ful_imp + g.rel_ret * (r - n),
                g.poss_ret + g.poss_imp + g.notoccur + g.rel * (r - n))
    ful = poss = 0
    if g.matrix is None:
        classes = g.classes
        if retrieved_only:
            classes = [c[c < njr] for c in classes]
            who = ("prefs_avgjg_Rnonrel_ret", q.qid)
            cut = np.array(pool.read(g.last_start, g.rel_ret, who, until=njr), dtype=np.int64)
        else:
            cut = np.array(pool.read(g.last_start, g.rel, ("prefs_avgjg_Rnonrel", q.qid)), dtype=np.int64)
        limit = None if retrieved_only else njr
        for c1 in range(len(classes)):
            for c2 in range(c1 + 1, len(classes) - 1):
                f, p = _pairs_fulfilled(classes[c1], classes[c2], limit)
                ful, poss = ful + f, poss + p
        for c1 in range(len(classes)):
            f, p = _pairs_fulfilled(classes[c1], cut, limit)
            ful, poss = ful + f, poss + p
        return ful, poss + ful
    levels, m = g.levels, g.matrix
    nonrel = levels == 0.0
    scan = nonrel[:njr] if retrieved_only else nonrel
    seen = np.cumsum(scan)
    hit = np.flatnonzero(seen == g.rel + 1)
    first_dropped = int(hit[0]) if len(hit) else len(scan)
    keep = ~(nonrel & (np.arange(q.judged) >= first_dropped))
    k = m & keep[:, None] & keep[None, :]
    rr = k[:njr, :njr]
    ful = int(np.triu(rr, 1).sum())
    poss = int(np.tril(rr, -1).sum())
    if not retrieved_only:
        ful += int(k[:njr, njr:].sum())
        poss += int(k[njr:, :].sum())
    return ful, poss + ful


def _pairs(q: QueryPrefs) -> dict[str, float]:
    """prefs_pair, prefs_pair_imp, prefs_pair_ret: the mean, over the document pairs some group has a preference
    about, of the share of those preferences that the ranking fulfils. Pairs: both retrieved (_ret); at least
    one retrieved (_imp); all (prefs_pair, where a pair with neither retrieved counts 0)."""
    c, njr = q.counts, q.judged_ret
    t = c.T
    # area 1: both retrieved (i < j); area 2: i retrieved, j not; area 3: neither (i < j)
    a1 = np.triu((c[:njr, :njr] != 0) | (t[:njr, :njr] != 0), 1)
    a2 = (c[:njr, njr:] != 0) | (t[:njr, njr:] != 0)
    u = c[njr:, njr:]
    n3 = int(np.triu((u != 0) | (u.T != 0), 1).sum())
    x1, y1 = c[:njr, :njr][a1].astype(np.int64), t[:njr, :njr][a1].astype(np.int64)
    x2, y2 = c[:njr, njr:][a2].astype(np.int64), t[:njr, njr:][a2].astype(np.int64)
    r1, r2 = x1 / (x1 + y1), x2 / (x2 + y2)
    sums = np.cumsum(np.concatenate([r1, r2]))  # added one pair after the other, row by row, as trec_eval does
    s1 = float(sums[len(r1) - 1]) if len(r1) else 0.0
    s2 = float(sums[-1]) if len(sums) else 0.0
    n1, n2 = len(r1), len(r1) + len(r2)
    return {"prefs_pair_ret": s1 / n1 if n1 else 0.0, "prefs_pair_imp": s2 / n2 if n2 else 0.0,
            "prefs_pair": s2 / (n2 + n3) if n2 + n3 else 0.0}


def query_values(q: QueryPrefs, pool: ScratchPool, wanted: set[str]) -> dict[str, float]:
    """The preference measures of one query (trec_eval 10's definitions, in its order of operations)."""
    out: dict[str, float] = {}
    gs = q.groups
    ful_ret = sum(g.ful_ret for g in gs)
    ful = ful_ret + sum(g.ful_imp for g in gs)
    poss_ret = sum(g.poss_ret for g in gs)
    poss_imp = poss_ret + sum(g.poss_imp for g in gs)
    poss = poss_imp + sum(g.notoccur for g in gs)
    out["prefs_num_prefs_poss"] = float(poss)
    out["prefs_num_prefs_ful"] = float(ful)
    out["prefs_num_prefs_ful_ret"] = float(ful_ret)
    out["prefs_simp"] = ful / poss if poss else 0.0
    out["prefs_simp_ret"] = ful_ret / poss_ret if poss_ret else 0.0
    out["prefs_simp_imp"] = ful / poss_imp if poss_imp else 0.0
    for name, f_of, p_of in (
            ("prefs_avgjg", lambda g: g.ful_ret + g.ful_imp, lambda g: g.poss_ret + g.poss_imp + g.notoccur),
            ("prefs_avgjg_ret", lambda g: g.ful_ret, lambda g: g.poss_ret),
            ("prefs_avgjg_imp", lambda g: g.ful_ret + g.ful_imp, lambda g: g.poss_ret + g.poss_imp)):
        total = 0.0
        for g in gs:
            p = p_of(g)
            if p:
                total += f_of(g) / p
        out[name] = total / len(gs) if total > 0.0 else 0.0
    for name, ret_only in (("prefs_avgjg_Rnonrel", False), ("prefs_avgjg_Rnonrel_ret", True)):
        if name not in wanted:
            continue
        total = 0.0
        for g in gs:
            f, p = _rnonrel(q, g, pool, ret_only)
            total += f / p if p else math.nan  # trec_eval divides 0 by 0 here: NaN, and the value stays 0
        out[name] = total / len(gs) if total > 0.0 else 0.0
    if wanted & {"prefs_pair", "prefs_pair_imp", "prefs_pair_ret"}:
        out.update(_pairs(q))
    return out


__all__ = ["UNWRITTEN", "Group", "JudgmentConflict", "QueryPrefs", "ScratchPool", "form_query", "query_values",
           "strcmp_key"]
