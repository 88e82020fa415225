"""Score normalisations applied to every run before fusion (ranx's seven, with its exact arithmetic).

Each works per query on one run's list, vectorised over all queries: sums are accumulated in list order
(one pass per position, across every query at once), as ranx's compiled loops accumulate them, so the
values agree to the last bit wherever the arithmetic allows.
"""

from __future__ import annotations

import numpy as np

from ragrade.errors import UnknownNameError
from ragrade.fusion._lists import Lists, Space, locate, python_set_candidates, union

#: ranx's names, ours (the canonical one first in each tuple)
NORMS: dict[str, tuple[str, ...]] = {
    "none": ("none",),
    "min-max": ("min-max", "min_max", "minmax"),
    "min-max-inverted": ("min-max-inverted", "min_max_inverted", "minmaxinverted"),
    "max": ("max",),
    "sum": ("sum",),
    "zmuv": ("zmuv", "z-score", "zscore"),
    "rank": ("rank",),
    "borda": ("borda",),
}
_ALIASES = {a: k for k, names in NORMS.items() for a in names}

FLOOR = 1e-9  # ranx floors every denominator at 1e-9


def norm_name(norm: str | None) -> str:
    if norm is None:
        return "none"
    key = str(norm).strip().lower()
    if key not in _ALIASES:
        raise UnknownNameError("normalisation", str(norm), list(NORMS))
    return _ALIASES[key]


def seq_sum(values: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Per-segment sums accumulated left to right (one vectorised step per position)."""
    counts = np.diff(off)
    acc = np.zeros(len(counts))
    if len(values) == 0:
        return acc
    starts = off[:-1]
    by_len = np.argsort(-counts, kind="stable")  # segments longest first: the active ones are a prefix
    sorted_counts = counts[by_len]
    for j in range(int(sorted_counts[0])):
        n_active = int(np.searchsorted(-sorted_counts, -j, side="left"))  # counts > j
        act = by_len[:n_active]
        acc[act] = acc[act] + values[starts[act] + j]
    return acc


def _seg_min_max(val: np.ndarray, off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    counts = np.diff(off)
    nz = counts > 0
    lo = np.zeros(len(counts))
    hi = np.zeros(len(counts))
    if nz.any():
        starts = off[:-1][nz]
        lo[nz] = np.minimum.reduceat(val, starts)
        hi[nz] = np.maximum.reduceat(val, starts)
    return lo, hi


def normalise(lists: list[Lists], space: Space, norm: str, *, python_set: bool = False) -> list[Lists]:
    """``lists`` normalised by ``norm`` (a canonical name from :data:`NORMS`)."""
    if norm == "none":
        return list(lists)
    if norm == "borda":
        return _borda(lists, space, python_set)
    return [_one(x, norm) for x in lists]


def _one(x: Lists, norm: str) -> Lists:
    counts = x.counts
    rep = np.repeat
    if norm in ("min-max", "min-max-inverted"):
        lo, hi = _seg_min_max(x.val, x.off)
        den = np.maximum(hi - lo, FLOOR)
        if norm == "min-max":
            return x.replace((x.val - rep(lo, counts)) / rep(den, counts), ordered=False)
        return x.replace((rep(hi, counts) - x.val) / rep(den, counts), ordered=False).resorted()
    if norm == "max":
        _, hi = _seg_min_max(x.val, x.off)
        return x.replace(x.val / rep(np.maximum(hi, FLOOR), counts), ordered=False)
    if norm == "sum":
        lo, _ = _seg_min_max(x.val, x.off)
        den = np.maximum(seq_sum(x.val, x.off) - lo * counts, FLOOR)
        return x.replace((x.val - rep(lo, counts)) / rep(den, counts), ordered=False)
    if norm == "zmuv":
        n = np.maximum(counts, 1)
        mean = seq_sum(x.val, x.off) / n
        dev = x.val - rep(mean, counts)
        std = (seq_sum(dev * dev, x.off) / n) ** 0.5
        return x.replace(dev / rep(np.maximum(std, FLOOR), counts), ordered=False)
    if norm == "rank":
        return x.replace(1 - x.positions() / np.repeat(counts, counts), ordered=False)
    raise AssertionError(norm)  # pragma: no cover


def candidates(lists: list[Lists], space: Space, python_set: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every query's candidate documents (all runs' documents): first-seen order by default; with
    ``python_set`` the order of a Python ``set`` in this process, as ranx takes them."""
    return python_set_candidates(lists, space) if python_set else union(lists, space)


def _borda(lists: list[Lists], space: Space, python_set: bool) -> list[Lists]:
    """Every candidate gets ``1 - position / n_candidates`` in each run; one a run did not return gets
    ``0.5 - (n - 1) / (2 n_candidates)`` (n: the run's list length). The lists become the candidates,
    in the candidates' order."""
    cand, coff = candidates(lists, space, python_set)
    n_c = np.diff(coff)
    nc_rows = np.repeat(n_c, n_c).astype(np.float64)
    n_pairs = len(space.pair_query)
    out = []
    for x in lists:
        at = locate(x, cand, n_pairs)
        pos = x.positions() if len(x.pair) else np.zeros(1, dtype=np.int64)
        n_run = np.repeat(x.counts, n_c).astype(np.float64)
        found = at >= 0
        val = np.where(found, 1 - pos[np.where(found, at, 0)] / nc_rows, 0.5 - (n_run - 1) / (2 * nc_rows))
        out.append(Lists(cand, val, coff, False))
    return out
