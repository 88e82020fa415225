"""Kernels of the measures of a trajectory: several retrieval calls made for one question (an agent's
searches, a conversation's turns), scored together (docs/traces.md, "Measures").

Input is a :class:`Trajectories` table: every retrieved row with the call that returned it and its rank in
that call's list, the number of calls each trajectory made (a call that returned nothing counts), and the
matches between rows and the judgments of the trajectory's question. A judgment belongs to a *unit* (a
hop of a multi-hop question, a group of equivalent documents, or the document itself); a unit is relevant
at level ``rel`` through its judgments of grade >= rel. A cutoff ``@k`` keeps the top k of every call.

* trajectory_recall = relevant units found by any call / relevant units (BrowseComp-Plus's evidence recall);
* calls_to_first_relevant = the number of the first call that found a relevant unit (NaN when none did);
* redundancy = share of the retrieved rows whose document an earlier call had already returned;
* hop_success = 1 when every relevant unit (hop) was found at least once, else 0;
* session_dcg = sum over calls i and ranks j of gain / max(1, log_b j) / (1 + log_bq i), a document gaining only
  where the trajectory returns it first (Järvelin et al., ECIR 2008; the repeat rule is ours).

Every kernel is ``(Metric, Trajectories) -> float64[n]``: whole-array NumPy, no loop over trajectories.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric

__all__ = ["Trajectories", "calls_to_first_relevant", "hop_success", "redundancy", "session_dcg", "trajectory_recall"]


class Trajectories(NamedTuple):
    """The rows of ``n`` trajectories joined to their judgments (every array read-only)."""

    offsets: np.ndarray  #: int64[n + 1]: the rows of trajectory i are offsets[i]:offsets[i + 1]
    call: np.ndarray  #: int64[rows]: the call (1-based) that returned the row
    rank: np.ndarray  #: int64[rows]: the row's position in its call's list (1-based)
    doc: np.ndarray  #: int64[rows]: the document (equal codes: the same document)
    calls: np.ndarray  #: int64[n]: the calls each trajectory made, those that returned nothing included
    hit_row: np.ndarray  #: int64[h]: the row of each (row, judgment) match
    hit_truth: np.ndarray  #: int64[h]: the judgment of each match (an index into the truth arrays)
    truth_offsets: np.ndarray  #: int64[n + 1]: the judgments of trajectory i's question
    truth_grade: np.ndarray  #: float64[j]: each judgment's grade
    truth_unit: np.ndarray  #: int64[j]: each judgment's unit (hop, group or document)

    @property
    def n(self) -> int:
        return len(self.offsets) - 1

    def row_trajectory(self) -> np.ndarray:
        """The trajectory of every row."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.offsets))

    def truth_trajectory(self) -> np.ndarray:
        """The trajectory of every judgment."""
        return np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.truth_offsets))


def _kept(m: Metric, t: Trajectories) -> np.ndarray:
    """Rows within the cutoff (the top k of each call; every row without a cutoff)."""
    return np.ones(len(t.call), dtype=bool) if m.k is None else t.rank <= m.k


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One int64 per (a, b) pair of non-negative ints, equal pairs equal (for np.unique)."""
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64)
    _, codes = np.unique(b, return_inverse=True)
    width = int(codes.max()) + 1
    return a.astype(np.int64) * width + codes.astype(np.int64)


def _count_units(traj: np.ndarray, units: np.ndarray, coded: np.ndarray, n: int) -> np.ndarray:
    """Distinct units per trajectory among ``(traj, unit)`` pairs; ``coded`` holds every unit that may occur,
    sorted and unique."""
    if len(units) == 0:
        return np.zeros(n)
    width = len(coded)
    keys = np.unique(traj.astype(np.int64) * width + np.searchsorted(coded, units))
    return np.bincount(keys // width, minlength=n).astype(np.float64)


def _units_found(m: Metric, t: Trajectories) -> tuple[np.ndarray, np.ndarray]:
    """``(R, found)`` per trajectory: its question's relevant units, and those some call returned within
    the cutoff."""
    rel = t.truth_grade >= m.rel
    coded = np.unique(t.truth_unit[rel])
    r = _count_units(t.truth_trajectory()[rel], t.truth_unit[rel], coded, t.n)
    hit = _kept(m, t)[t.hit_row] & rel[t.hit_truth]
    found = _count_units(t.row_trajectory()[t.hit_row[hit]], t.truth_unit[t.hit_truth[hit]], coded, t.n)
    return r, found


def _found_units(m: Metric, t: Trajectories) -> tuple[np.ndarray, np.ndarray]:
    """``(trajectory, call)`` of every relevant match within the cutoff."""
    kept = _kept(m, t)[t.hit_row] & (t.truth_grade[t.hit_truth] >= m.rel)
    rows = t.hit_row[kept]
    return t.row_trajectory()[rows], t.call[rows]


def trajectory_recall(m: Metric, t: Trajectories) -> np.ndarray:
    """Relevant units found by any call / relevant units (NaN where the question has none)."""
    r, found = _units_found(m, t)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r > 0, found / np.where(r > 0, r, 1.0), np.nan)


def hop_success(m: Metric, t: Trajectories) -> np.ndarray:
    """1 when every relevant unit (hop) was found by some call, else 0 (NaN where there is none)."""
    r, found = _units_found(m, t)
    return np.where(r > 0, (found >= r).astype(np.float64), np.nan)


def calls_to_first_relevant(m: Metric, t: Trajectories) -> np.ndarray:
    """The number of the first call that returned a relevant unit within the cutoff; NaN when no call did
    (or the question has no relevant unit)."""
    traj, call = _found_units(m, t)
    out = np.full(t.n, np.inf)
    np.minimum.at(out, traj, call.astype(np.float64))
    out[~np.isfinite(out)] = np.nan
    return out


def _first_call(traj: np.ndarray, doc: np.ndarray, call: np.ndarray) -> np.ndarray:
    """For every row, the earliest call of its trajectory that returned its document."""
    if len(doc) == 0:
        return np.zeros(0, dtype=np.int64)
    key = _pairs(traj, doc)
    order = np.lexsort((call, key))
    sorted_key = key[order]
    start = np.ones(len(order), dtype=bool)
    start[1:] = sorted_key[1:] != sorted_key[:-1]
    group = np.cumsum(start) - 1
    first = call[order][start][group]
    out = np.empty(len(order), dtype=np.int64)
    out[order] = first
    return out


def redundancy(m: Metric, t: Trajectories) -> np.ndarray:
    """Share of the retrieved rows (within the cutoff) whose document an earlier call of the same trajectory
    had already returned; NaN for a trajectory that retrieved nothing."""
    kept = _kept(m, t)
    traj = t.row_trajectory()[kept]
    call = t.call[kept]
    repeated = call > _first_call(traj, t.doc[kept], call)
    rows = np.bincount(traj, minlength=t.n).astype(np.float64)
    seen = np.bincount(traj, weights=repeated.astype(np.float64), minlength=t.n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rows > 0, seen / np.where(rows > 0, rows, 1.0), np.nan)


def _row_gain(t: Trajectories) -> np.ndarray:
    """Each row's gain: the largest grade among its judgments, 0 when it has none or a negative one."""
    gain = np.zeros(len(t.call))
    if len(t.hit_row):
        np.maximum.at(gain, t.hit_row, np.maximum(t.truth_grade[t.hit_truth], 0.0))
    return gain


def session_dcg(m: Metric, t: Trajectories) -> np.ndarray:
    """Session DCG: the gain of each document where the trajectory first returns it, discounted by
    max(1, log_b rank) within its call and by 1 + log_bq(call) across calls; NaN where the question has no
    positive grade."""
    b, bq = float(m.get("b")), float(m.get("bq"))
    kept = np.flatnonzero(_kept(m, t))
    traj = t.row_trajectory()
    # among the rows within the cutoff, in call order then rank order: each document's first row
    order = kept[np.lexsort((t.rank[kept], t.call[kept], traj[kept]))]
    use = np.zeros(len(t.call), dtype=bool)
    if len(order):
        _, at = np.unique(_pairs(traj[order], t.doc[order]), return_index=True)
        use[order[at]] = True
    rank = t.rank.astype(np.float64)
    rank_discount = np.maximum(1.0, np.log(np.maximum(rank, 1.0)) / np.log(b))
    call_discount = 1.0 + np.log(t.call.astype(np.float64)) / np.log(bq)
    value = np.where(use, _row_gain(t) / rank_discount / call_discount, 0.0)
    out = np.bincount(traj, weights=value, minlength=t.n)
    positive = np.bincount(t.truth_trajectory(), weights=(t.truth_grade > 0).astype(np.float64), minlength=t.n)
    return np.where(positive > 0, out, np.nan)
