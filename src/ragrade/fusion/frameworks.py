"""The hybrid-search fusions of RAG frameworks and IR toolkits, computed as each library computes them.

Every profile reads each run's list in the order that library would see it, scores every entry, sums
(or takes the maximum) over the runs in their order, and orders the fused list by the library's rule
(docs/fusion.md, "Frameworks"):

* ``langchain``: LangChain's ``EnsembleRetriever``: weighted RRF, ``weight / (rank + c)``, rank from 1,
  c = 60, weights 1/n by default; equal scores keep first-seen order (Python's stable sort).
* ``llamaindex``: LlamaIndex's ``QueryFusionRetriever`` modes ``reciprocal_rerank`` (``1 / (rank + 60)``,
  rank from 0), ``relative_score`` (min-max per list, times the retriever's weight, weights normalised to
  sum 1), ``dist_based_score`` (the same with mean +- 3 population standard deviations as the bounds),
  ``simple`` (the highest score of a document). ``top_k`` cuts like ``similarity_top_k`` (LlamaIndex's
  default is 2; ours: no cut).
* ``qdrant``: Qdrant's client-side fusion: ``rrf`` (``1 / ((pos + 1) / weight + k - 1)``, k = 2) and
  ``dbsf`` (mean +- 3 sample standard deviations; a list of one, or whose variance as computed is 0, gives
  0.5). DBSF's and LlamaIndex's ``dist_based_score`` statistics are computed with Python's ``sum()``, as
  the libraries do: compensated from Python 3.12 on.

A document listed twice in one list counts at each of its entries under ``langchain`` and ``pyserini``,
keeps its first entry under ``llamaindex``, and is refused under ``qdrant`` and ``trectools`` (docs/fusion.md,
"Duplicates and empty runs").
* ``pyserini``: ``rrf`` (``1 / (k + rank)``, k = 60), ``interpolation`` (``alpha * s1 + (1 - alpha) * s2``,
  two runs), ``average`` and ``normalize`` (min-max over a query's whole list, a list of equal scores 1);
  the top ``depth`` = 1000 of each list, a document's values summed over the runs in order with Kahan's
  compensated sum (pandas' ``groupby().sum()``), the fused list ordered by ``(-score, docid)`` and cut at
  ``top_k`` = 1000.
* ``trectools``: ``rrf`` (``1 / (k + rank)``) and ``rbp`` (``(1 - p) p^(rank-1)``, p = 0.8) over each
  list sorted by ``(-score, docid)``, depth 1000, ``(-score, docid)`` order, 1000 kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragrade.data import Run
from ragrade.data.columns import offsets_from_counts
from ragrade.errors import InputError, UnknownNameError
from ragrade.fusion._lists import Lists, Space, _string_ranks, align, union
from ragrade.fusion.methods import _seq, lay_out
from ragrade.fusion.params import check_params, check_weights

# profile -> method -> (aliases, parameters with defaults, takes weights)
_SPEC: dict[str, dict[str, tuple[tuple[str, ...], dict[str, Any], bool]]] = {
    "langchain": {"rrf": (("rrf", "reciprocal_rank", "weighted_rrf", "ensemble"), {"c": 60}, True)},
    "llamaindex": {
        "reciprocal_rerank": (("reciprocal_rerank", "rrf"), {"top_k": None}, False),
        "relative_score": (("relative_score",), {"top_k": None, "num_queries": 1}, True),
        "dist_based_score": (("dist_based_score", "dbsf"), {"top_k": None, "num_queries": 1}, True),
        "simple": (("simple", "max"), {"top_k": None}, False),
    },
    "qdrant": {
        "rrf": (("rrf",), {"k": 2, "limit": None}, True),
        "dbsf": (("dbsf", "distribution_based_score_fusion"), {"limit": None}, False),
    },
    "pyserini": {
        "rrf": (("rrf",), {"k": 60, "depth": 1000, "top_k": 1000}, False),
        "interpolation": (("interpolation", "interpolate"), {"alpha": 0.5, "depth": 1000, "top_k": 1000}, False),
        "average": (("average", "avg"), {"depth": 1000, "top_k": 1000}, False),
        "normalize": (("normalize", "norm", "normalise"), {"depth": 1000, "top_k": 1000}, False),
    },
    "trectools": {
        "rrf": (("rrf",), {"k": 60, "depth": 1000, "top_k": 1000}, False),
        "rbp": (("rbp", "rank_biased_precision"), {"p": 0.8, "depth": 1000, "top_k": 1000}, False),
    },
}

FRAMEWORK_METHODS: dict[str, list[str]] = {p: list(m) for p, m in _SPEC.items()}


def _method(profile: str, method: str) -> str:
    key = str(method).strip().lower().replace("-", "_")
    for name, (aliases, _, _) in _SPEC[profile].items():
        if key in aliases:
            return name
    raise UnknownNameError(f"{profile} fusion method", method, list(_SPEC[profile]), show_known=True)


def _seg_stats(x: Lists) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = x.counts
    nz = counts > 0
    lo = np.zeros(len(counts))
    hi = np.zeros(len(counts))
    if nz.any():
        lo[nz] = np.minimum.reduceat(x.val, x.off[:-1][nz])
        hi[nz] = np.maximum.reduceat(x.val, x.off[:-1][nz])
    return lo, hi, counts


def _cut(x: Lists, depth: int | None) -> Lists:
    if depth is None:
        return x
    keep = x.positions() < int(depth)
    counts = np.minimum(x.counts, int(depth))
    return Lists(x.pair[keep], x.val[keep], offsets_from_counts(counts), x.ordered)


def _contributions(profile: str, method: str, lists: list[Lists], p: dict[str, Any], w: np.ndarray
                   ) -> list[np.ndarray]:
    out = []
    for r, x in enumerate(lists):
        pos = x.positions()
        counts = x.counts
        rep = np.repeat
        if profile == "langchain":
            v = w[r] / ((pos + 1) + p["c"])
        elif profile == "llamaindex" and method == "reciprocal_rerank":
            v = 1.0 / (pos + 60.0)
        elif profile == "llamaindex" and method in ("relative_score", "dist_based_score"):
            lo, hi = _seg_stats(x)[:2] if method == "relative_score" else _per_list(x, _llamaindex_bounds)[:2]
            lo_r, hi_r = rep(lo, counts), rep(hi, counts)
            same = lo_r == hi_r
            with np.errstate(divide="ignore", invalid="ignore"):
                scaled = np.where(same, np.where(hi_r > 0, 1.0, 0.0), (x.val - lo_r) / (hi_r - lo_r))
            v = scaled * w[r] / p["num_queries"]
        elif profile == "llamaindex":  # simple
            v = x.val
        elif profile == "qdrant" and method == "rrf":
            v = np.zeros(len(pos)) if w[r] <= 0 else 1 / ((pos + 1.0) / w[r] + p["k"] - 1.0)
        elif profile == "qdrant":  # dbsf: a list of one, or whose computed variance is 0, gives 0.5
            lo, hi, half_q = _per_list(x, _qdrant_bounds)
            half = rep(half_q, counts)
            with np.errstate(divide="ignore", invalid="ignore"):
                scaled = (x.val - rep(lo, counts)) / (rep(hi, counts) - rep(lo, counts))
            v = np.where(half, 0.5, scaled)
        elif method == "rrf":  # pyserini, trectools
            v = 1 / (p["k"] + (pos + 1))
        elif method == "rbp":
            v = (1.0 - p["p"]) * (float(p["p"]) ** (pos + 1 - 1))
        elif method == "interpolation":
            v = x.val * (p["alpha"] if r == 0 else (1 - p["alpha"]))
        elif method == "average":
            v = x.val * (1 / len(lists))
        else:  # pyserini's normalize: the values were scaled before the depth cut (_pyserini_normalized)
            v = x.val
        out.append(np.asarray(v, dtype=np.float64))
    return out


# -- statistics computed as the libraries compute them: in Python, with the built-in sum() ---------------
# Qdrant's DBSF and LlamaIndex's dist_based_score add a list's scores with sum(), which Python 3.12 made a
# compensated (Neumaier) sum: seven scores of 0.7 sum to 4.9 there (variance exactly 0: Qdrant gives 0.5),
# to 4.8999999999999995 on 3.11. Each list's bounds are computed here by the same Python expressions, so a
# profile follows the library on the Python it runs on, whatever that Python's sum() does.

def _per_list(x: Lists, bounds: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, half)`` of every query's list from ``bounds(scores as a list of floats)``; ``half``:
    where ``bounds`` gave None (every score of the list is 0.5)."""
    vals, off = x.val.tolist(), x.off.tolist()
    nq = len(off) - 1
    lo, hi, half = np.zeros(nq), np.zeros(nq), np.zeros(nq, dtype=bool)
    for q in range(nq):
        if off[q + 1] > off[q]:
            got = bounds(vals[off[q]: off[q + 1]])
            if got is None:
                half[q] = True
            else:
                lo[q], hi[q] = got
    return lo, hi, half


def _qdrant_bounds(scores: list[float]) -> tuple[float, float] | None:
    """qdrant_client's ``distribution_based_score_fusion``: mean +- 3 sample standard deviations; a list of
    one, or whose variance is 0 as computed, gives every point 0.5 (None)."""
    n = len(scores)
    if n == 1:
        return None
    mean = sum(scores) / n
    variance = sum([(s - mean) ** 2 for s in scores]) / (n - 1)
    if variance == 0:
        return None
    std_dev = variance ** 0.5
    return mean - 3 * std_dev, mean + 3 * std_dev


def _llamaindex_bounds(scores: list[float]) -> tuple[float, float]:
    """LlamaIndex's ``dist_based_score``: mean +- 3 population standard deviations."""
    mean = sum(scores) / len(scores)
    std_dev = (sum((x - mean) ** 2 for x in scores) / len(scores)) ** 0.5
    return mean - 3 * std_dev, mean + 3 * std_dev


#: What each library does with a document listed twice in one list (docs/fusion.md).
_DUPLICATES = {"langchain": "keep", "pyserini": "keep", "llamaindex": "first", "qdrant": "refuse",
               "trectools": "refuse"}


def _layers(lists: list[Lists]) -> list[Lists]:
    """Each run's lists as layers: its first entry of every document, then its second entries (of the
    documents it lists twice) ..., each a list of its own, in that order. Summed over in order, the
    layers give what LangChain and pyserini give: every entry counts, in the order of the run's list."""
    out: list[Lists] = []
    for x in lists:
        q = x.query_of_rows()
        n_pairs = int(x.pair.max()) + 1 if len(x.pair) else 1
        rank = _occurrence(q * n_pairs + x.pair)
        for k in range(int(rank.max()) + 1 if len(rank) else 1):
            keep = rank == k
            counts = np.bincount(q[keep], minlength=len(x.off) - 1)
            out.append(Lists(x.pair[keep], x.val[keep], offsets_from_counts(counts), x.ordered))
    return out


def _occurrence(keys: np.ndarray) -> np.ndarray:
    """0 for the first row of each key, 1 for its second ... (in row order)."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    start = np.r_[True, sk[1:] != sk[:-1]] if len(sk) else np.zeros(0, dtype=bool)
    group_start = np.maximum.accumulate(np.where(start, np.arange(len(sk)), 0))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(sk)) - group_start
    return rank


def fuse_framework(profile: str, runs: list[Run], names: list[str], method: str, norm: Any,
                   params: Mapping[str, Any] | None, weights: Sequence[float] | None, *,
                   name: str | None = None) -> Run:
    m = _method(profile, "rrf" if method is None else method)
    _, defaults, weighted = _SPEC[profile][m]
    if norm not in ("default", None, "none"):
        raise InputError(f"the {profile} profile normalises as {profile} does: drop norm= (got {norm!r})")
    p = dict(defaults)
    if params:
        unknown = set(params) - set(defaults)
        if unknown:
            raise UnknownNameError(f"parameter of {profile}'s {m}", sorted(unknown)[0], list(defaults),
                                   show_known=True)
        p.update(params)
    p = check_params(p)
    R = len(runs)
    if weights is not None and not weighted:
        raise InputError(f"{profile}'s {m} takes no weights")
    w = _framework_weights(profile, weights, R)
    if profile == "pyserini" and m == "interpolation" and R != 2:
        raise InputError(f"pyserini's interpolation fuses exactly two runs, got {R}")
    order = "score_docid" if profile == "trectools" else "stable"
    space, lists = align(runs, names, same_queries=False, order=order, duplicates=_DUPLICATES[profile])
    if profile == "pyserini" and m == "normalize":
        lists = [_pyserini_normalized(x) for x in lists]
    if "depth" in p:
        lists = [_cut(x, p["depth"]) for x in lists]
    contrib = _contributions(profile, m, lists, p, w)
    scored = _layers([Lists(x.pair, v, x.off) for x, v in zip(lists, contrib, strict=True)])
    u_pair, u_off = union(scored, space)
    prep = lay_out(space, scored, u_pair, u_off)
    if profile == "llamaindex" and m == "simple":
        fused = np.max(np.where(prep.H, prep.V, -np.inf), axis=0)
    elif profile == "pyserini":
        fused = _kahan(prep.V, prep.H)
    else:
        fused = _seq(prep.V)
    return _ordered_run(space, u_pair, u_off, fused, by_docid=profile in ("pyserini", "trectools"),
                        keep=p.get("top_k", p.get("limit")), name=name or f"{profile}-{m}({'+'.join(names)})")


def _framework_weights(profile: str, weights: Sequence[float] | None, n_runs: int) -> np.ndarray:
    """One weight per run: given (finite numbers), or the library's default (Qdrant 1, LangChain and
    LlamaIndex 1/n); LlamaIndex rescales them to sum 1."""
    if weights is None:
        w = np.full(n_runs, 1.0 if profile == "qdrant" else 1.0 / n_runs)
    else:
        w = np.asarray(check_weights(weights, n_runs), dtype=np.float64)
    if profile == "llamaindex":
        total = sum(w.tolist())
        if total == 0:
            raise InputError("weights: LlamaIndex divides the weights by their sum, which is 0 here",
                             value=w.tolist())
        w = w / total
    return w


def _pyserini_normalized(x: Lists) -> Lists:
    """pyserini's ``normalize``: each query's whole list (before the depth cut) scaled by min-max, a list
    whose scores are all equal set to 1."""
    lo, hi, counts = _seg_stats(x)
    lo_r, hi_r = np.repeat(lo, counts), np.repeat(hi, counts)
    span = hi_r - lo_r
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(span == 0, 1.0, (x.val - lo_r) / span)
    return Lists(x.pair, v, x.off, x.ordered)


def _kahan(terms: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Sum over runs (axis 0), in run order, of the terms present only, with Kahan's compensation as
    pandas' ``groupby().sum()`` takes it: NaN terms (``normalize`` of a list with infinite scores) are
    skipped, and a compensation that turns NaN (an infinite term) is reset to 0. pyserini's
    ``TrecRun.merge`` sums a document's rows so, and its order rests on the last bit."""
    total = np.zeros(terms.shape[1])
    comp = np.zeros(terms.shape[1])
    with np.errstate(invalid="ignore"):
        for t, h in zip(terms, present, strict=True):
            y = t - comp
            s = total + y
            c = (s - total) - y
            c[np.isnan(c)] = 0.0
            h = h & ~np.isnan(t)
            total = np.where(h, s, total)
            comp = np.where(h, c, comp)
    return total


def _ordered_run(space: Space, u_pair: np.ndarray, u_off: np.ndarray, fused: np.ndarray, *, by_docid: bool,
                 keep: int | None, name: str) -> Run:
    seg = np.repeat(np.arange(len(u_off) - 1), np.diff(u_off))
    if by_docid:
        perm = np.lexsort((_string_ranks(space.doc_vocab)[space.pair_code[u_pair]], -fused, seg))
    else:
        perm = np.lexsort((-fused, seg))  # stable: equal scores in first-seen order
    counts = np.diff(u_off)
    if keep is not None:
        pos = np.arange(len(perm)) - np.repeat(u_off[:-1], counts)
        perm = perm[pos < int(keep)]
        counts = np.minimum(counts, int(keep))
    return Run(space.query_ids.astype(object), offsets_from_counts(counts), None, None, fused[perm],
               name=name, unique=True, raw_docs=space.doc_vocab[space.pair_code[u_pair[perm]]])
