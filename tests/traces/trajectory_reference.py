"""Slow, obviously-correct references of the trajectory measures (docs/traces.md, "Measures"), one
trajectory at a time in plain Python, and a builder of the kernels' input from the same plain data.

A trajectory is ``(calls, truth)``: ``calls`` a list of ranked lists of document ids (a call that returned
nothing is ``[]``), ``truth`` ``{doc: (grade, unit)}`` (unit: the hop or group the judgment belongs to)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ragrade.kernels.trajectory import Trajectories

Case = tuple[list[list[str]], dict[str, tuple[float, Any]]]


def build(cases: list[Case]) -> Trajectories:
    offsets, call, rank, doc, calls = [0], [], [], [], []
    hit_row, hit_truth, t_off, grade, unit = [], [], [0], [], []
    codes: dict[str, int] = {}
    units: dict[Any, int] = {}
    for calls_of, truth in cases:
        base = len(grade)
        index = {}
        for j, (d, (g, u)) in enumerate(truth.items()):
            index[d] = base + j
            grade.append(float(g))
            unit.append(units.setdefault(u, len(units)))
        t_off.append(len(grade))
        for c, lst in enumerate(calls_of, 1):
            for r, d in enumerate(lst, 1):
                if d in index:
                    hit_row.append(len(doc))
                    hit_truth.append(index[d])
                call.append(c)
                rank.append(r)
                doc.append(codes.setdefault(d, len(codes)))
        offsets.append(len(doc))
        calls.append(len(calls_of))

    def a(x: list[Any], t: Any = np.int64) -> np.ndarray:
        return np.asarray(x, dtype=t)

    return Trajectories(a(offsets), a(call), a(rank), a(doc), a(calls), a(hit_row), a(hit_truth), a(t_off),
                        a(grade, np.float64), a(unit))


def _cut(lst: list[str], k: int | None) -> list[str]:
    return lst if k is None else lst[:k]


def _relevant_units(truth: dict[str, tuple[float, Any]], rel: int) -> set[Any]:
    return {u for g, u in truth.values() if g >= rel}


def _found(calls: list[list[str]], truth: dict[str, tuple[float, Any]], rel: int, k: int | None) -> set[Any]:
    found = set()
    for lst in calls:
        for d in _cut(lst, k):
            if d in truth and truth[d][0] >= rel:
                found.add(truth[d][1])
    return found


def trajectory_recall(case: Case, k: int | None = None, rel: int = 1) -> float:
    calls, truth = case
    units = _relevant_units(truth, rel)
    return math.nan if not units else len(_found(calls, truth, rel, k)) / len(units)


def hop_success(case: Case, k: int | None = None, rel: int = 1) -> float:
    calls, truth = case
    units = _relevant_units(truth, rel)
    return math.nan if not units else float(_found(calls, truth, rel, k) == units)


def calls_to_first_relevant(case: Case, k: int | None = None, rel: int = 1) -> float:
    calls, truth = case
    for i, lst in enumerate(calls, 1):
        if any(d in truth and truth[d][0] >= rel for d in _cut(lst, k)):
            return float(i)
    return math.nan


def redundancy(case: Case, k: int | None = None) -> float:
    calls, _ = case
    seen_before: set[str] = set()
    rows = repeated = 0
    for lst in calls:
        cut = _cut(lst, k)
        for d in cut:
            rows += 1
            repeated += d in seen_before
        seen_before |= set(cut)
    return math.nan if rows == 0 else repeated / rows


def session_dcg(case: Case, k: int | None = None, b: float = 2.0, bq: float = 4.0) -> float:
    calls, truth = case
    if not any(g > 0 for g, _ in truth.values()):
        return math.nan
    seen: set[str] = set()
    total = 0.0
    for i, lst in enumerate(calls, 1):
        for j, d in enumerate(_cut(lst, k), 1):
            if d in seen:
                continue
            seen.add(d)
            gain = max(truth[d][0], 0.0) if d in truth else 0.0
            total += gain / max(1.0, math.log(j, b)) / (1.0 + math.log(i, bq))
    return total
