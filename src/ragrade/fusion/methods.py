"""ranx's 25 fusion methods over aligned flat lists (see docs/fusion.md for every formula).

A fusion happens in two steps. :func:`prepare` lays the runs out over the fused list of every query (the
documents in ranx's insertion order: run 0's list, then what run 1 adds, ...) as ``[runs x rows]``
arrays: each run's value, position and list length for each fused row. :func:`combine` then computes
the fused value of every row from those arrays and the method's parameters: a few array operations, so a
search over parameters (``optimize_fusion``) prepares once and combines many times.

Sums run over the runs in their order, starting from zero, as ranx's compiled loops do, so fused values
agree with ranx's to the last bit where the arithmetic allows and equal values tie as they do in ranx.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

import numpy as np

from ragrade.errors import InputError, UnknownNameError
from ragrade.fusion._lists import Lists, Space, layout, locate, run_rows
from ragrade.fusion.norms import candidates


@dataclass(frozen=True)
class MethodInfo:
    name: str  # ranx's name
    title: str
    params: tuple[str, ...] = ()  # parameters fuse() needs (besides weights)
    defaults: dict[str, Any] = field(default_factory=dict)
    weighted: bool = False  # takes one weight per run
    trained: bool = False  # its parameters are learnt from qrels (optimize_fusion)
    hash_values: bool = False  # ranx's values depend on PYTHONHASHSEED
    hash_ties: bool = False  # ranx's order among equal values depends on PYTHONHASHSEED


_M = [
    MethodInfo("min", "CombMIN"),
    MethodInfo("max", "CombMAX"),
    MethodInfo("med", "CombMED"),
    MethodInfo("sum", "CombSUM"),
    MethodInfo("anz", "CombANZ"),
    MethodInfo("mnz", "CombMNZ"),
    MethodInfo("gmnz", "CombGMNZ", ("gamma",)),
    MethodInfo("isr", "ISR"),
    MethodInfo("log_isr", "Log_ISR"),
    MethodInfo("logn_isr", "LogN_ISR", ("sigma",), {"sigma": 0.01}),
    MethodInfo("rrf", "RRF", ("k",), {"k": 60}),
    MethodInfo("rbc", "RBC", ("phi",)),
    MethodInfo("posfuse", "PosFuse", ("probs",), trained=True),
    MethodInfo("probfuse", "ProbFuse", ("probs",), trained=True),
    MethodInfo("segfuse", "SegFuse", ("probs",), trained=True),
    MethodInfo("slidefuse", "SlideFuse", ("probs", "w"), trained=True),
    MethodInfo("mapfuse", "MAPFuse", ("map_scores",), trained=True),
    MethodInfo("bayesfuse", "BayesFuse", ("log_odds",), trained=True),
    MethodInfo("bordafuse", "BordaFuse", hash_ties=True),
    MethodInfo("w_bordafuse", "Weighted BordaFuse", weighted=True, trained=True, hash_ties=True),
    MethodInfo("condorcet", "Condorcet", hash_values=True),
    MethodInfo("w_condorcet", "Weighted Condorcet", weighted=True, trained=True, hash_values=True),
    MethodInfo("mixed", "Mixed", weighted=True, trained=True),
    MethodInfo("wmnz", "WMNZ", weighted=True, trained=True),
    MethodInfo("wsum", "WSum", weighted=True, trained=True),
]
METHODS: dict[str, MethodInfo] = {m.name: m for m in _M}


def _key(s: str) -> str:
    return s.strip().lower().replace("-", "").replace("_", "").replace(" ", "")


_ALIASES: dict[str, str] = {}
for _m in _M:
    for _a in (_m.name, _m.title):
        _ALIASES[_key(_a)] = _m.name
for _c in ("min", "max", "med", "sum", "anz", "mnz", "gmnz"):
    _ALIASES["comb" + _c] = _c
_ALIASES.update({"weightedsum": "wsum", "weightedbordafuse": "w_bordafuse", "wborda": "w_bordafuse",
                 "weightedcondorcet": "w_condorcet", "borda": "bordafuse", "reciprocalrankfusion": "rrf",
                 "median": "med"})


def method_name(method: str) -> str:
    key = _key(str(method))
    if key not in _ALIASES:
        raise UnknownNameError("fusion method", str(method), [m.name for m in _M])
    return _ALIASES[key]


MIN_ODD = float(np.log(0.001 / 0.999))
#: methods that read the runs' positions only (their values never)
POSITIONAL = frozenset({"rrf", "isr", "log_isr", "logn_isr", "rbc", "posfuse", "mapfuse", "bayesfuse"})
#: methods that read the runs' values only (their positions never)
BY_VALUE = frozenset({"sum", "min", "max", "med", "anz", "mnz", "gmnz", "wsum", "mixed", "wmnz"})


@dataclass
class Prepared:
    """The runs laid out over the fused rows (``u_pair`` grouped by query, ``u_off`` offsets): ``at[r, u]``
    is the index of row u's document in run r's lists (-1 where run r lacks it); positions, values and
    list lengths are derived from it on first use."""

    space: Space
    lists: list[Lists]
    u_pair: np.ndarray
    u_off: np.ndarray
    at_given: np.ndarray | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def at(self) -> np.ndarray:
        """[runs, rows] int64: the index into each run's lists of the row's document, -1 where absent
        (from the positions when the layout gave those only)."""
        if self.at_given is not None:
            return self.at_given

        def make() -> np.ndarray:
            pos = self.extra["P"]
            out = np.empty(pos.shape, dtype=np.int64)
            for r, x in enumerate(self.lists):
                out[r] = np.where(pos[r] >= 0, pos[r] + x.off[:-1][self.row_query], -1)
            return out
        return self.cached("at", make)

    def cached(self, key: str, make: Any) -> np.ndarray:
        if key not in self.extra:
            self.extra[key] = make()
        return self.extra[key]

    @property
    def H(self) -> np.ndarray:
        """[runs, rows] bool: the run returned the row's document."""
        return self.cached("H", lambda: (self.at_given if self.at_given is not None else self.P) >= 0)

    @property
    def row_query(self) -> np.ndarray:
        return self.cached("q", lambda: np.repeat(np.arange(len(self.u_off) - 1), np.diff(self.u_off)))

    @property
    def P(self) -> np.ndarray:
        """[runs, rows] int64: 0-based position in the run's list, -1 where absent."""
        def make() -> np.ndarray:
            out = np.empty(self.at.shape, dtype=np.int64)
            for r, x in enumerate(self.lists):
                out[r] = np.where(self.at[r] >= 0, self.at[r] - x.off[:-1][self.row_query], -1)
            return out
        return self.cached("P", make)

    @property
    def V(self) -> np.ndarray:
        """[runs, rows] float64: the run's value, 0.0 where absent."""
        def make() -> np.ndarray:
            out = np.empty(self.at.shape)
            for r, x in enumerate(self.lists):
                # index -1 (absent) reads the 0.0 appended at the end
                np.take(np.append(np.asarray(x.val, dtype=np.float64), 0.0), self.at[r], out=out[r])
            return out
        return self.cached("V", make)

    @property
    def N(self) -> np.ndarray:
        """[runs, rows] int64: the run's list length for the row's query."""
        return self.cached("N", lambda: np.stack([x.counts[self.row_query] for x in self.lists]))

    def weighted_values(self, w: np.ndarray) -> np.ndarray:
        """``w[:, None] * V`` (the same products: ``w[r] * 0.0`` where the run lacks the row), in one
        gather per run when V is not computed already."""
        if "V" in self.extra:
            return w[:, None] * self.V
        out = np.empty(self.at.shape)
        for r, x in enumerate(self.lists):
            vals = np.asarray(x.val, dtype=np.float64) * w[r]
            np.take(np.append(vals, w[r] * 0.0), self.at[r], out=out[r])
        return out

    def by_position(self, table: Any) -> np.ndarray:
        """[runs, rows]: ``table(positions)`` at each run's position of the row, 0.0 where the run lacks
        it. ``table`` maps an int64 array of positions 0..n-1 to float64 values (computed once per
        position, elementwise as over the rows)."""
        P = self.P
        longest = max((int(x.counts.max()) for x in self.lists if len(x.counts)), default=0)
        t = np.append(np.asarray(table(np.arange(longest, dtype=np.int64)), dtype=np.float64), 0.0)
        return np.take(t, P)  # -1 (absent) reads the 0.0 appended at the end

    @property
    def count(self) -> np.ndarray:
        return self.cached("count", lambda: self.H.sum(axis=0))


def lay_out(space: Space, lists: list[Lists], u_pair: np.ndarray, u_off: np.ndarray) -> Prepared:
    return Prepared(space, lists, u_pair, u_off, run_rows(lists, u_pair, len(space.pair_query)))


def prepare(space: Space, lists: list[Lists], method: str, *, python_set: bool = False) -> Prepared:
    if method in ("bordafuse", "w_bordafuse", "condorcet", "w_condorcet"):
        cand, coff = candidates(lists, space, python_set)
        if method in ("condorcet", "w_condorcet"):
            return lay_out(space, lists, cand, coff)
        # borda points make every candidate part of every run: run 0's list first, then the other
        # candidates in the candidates' order
        n_pairs = len(space.pair_query)
        in0 = locate(lists[0], cand, n_pairs) >= 0
        rest_q = space.pair_query[cand[~in0]]
        allp = np.concatenate([lists[0].pair, cand[~in0]])
        allq = np.concatenate([lists[0].query_of_rows(), rest_q])
        o = np.argsort(allq, kind="stable")
        return lay_out(space, lists, allp[o], coff)
    need = "pos" if method in POSITIONAL else ("at" if method in BY_VALUE else "both")
    u_pair, u_off, at, pos = layout(lists, space, need=need)
    prep = Prepared(space, lists, u_pair, u_off, at)
    if pos is not None:
        prep.extra["P"] = pos
    return prep


def _seq(terms: np.ndarray) -> np.ndarray:
    """Sum over runs (axis 0), in run order, from zero."""
    acc = np.zeros(terms.shape[1])
    for t in terms:
        acc += t
    return acc


def _powi(base: float, exp: np.ndarray) -> np.ndarray:
    """``base ** exp`` for integer exponents by repeated squaring, as numba computes it."""
    r = np.ones(exp.shape)
    e = exp.copy()
    a = float(base)
    while e.any():
        odd = (e & 1).astype(bool)
        r = np.where(odd, r * a, r)
        e >>= 1
        a *= a
    return r


def _weights(params: dict[str, Any], R: int) -> np.ndarray:
    w = params.get("weights")
    if w is None:
        raise InputError("this fusion method needs one weight per run (weights=[...], or optimize_fusion)")
    arr = np.asarray(list(w), dtype=np.float64)
    if arr.shape != (R,):
        raise InputError(f"weights: {R} runs need {R} weights, got {len(arr)}", value=list(w))
    return arr


def _per_run(params: dict[str, Any], key: str, R: int) -> list[Any]:
    v = params.get(key)
    if v is None:
        raise InputError(f"this fusion method needs trained {key!r} (one per run): train them with "
                         "ragrade.optimize_fusion, or pass params={...}")
    v = list(v)
    if len(v) != R:
        raise InputError(f"{key}: {R} runs need {R} entries, got {len(v)}")
    return v


def _table(table: np.ndarray, idx: np.ndarray, present: np.ndarray) -> np.ndarray:
    """``table[idx]`` where present and ``idx < len(table)``, else 0."""
    ok = present & (idx < len(table)) & (idx >= 0)
    out = np.zeros(idx.shape)
    if len(table):
        out[ok] = table[idx[ok]]
    return out


def combine(prep: Prepared, method: str, params: dict[str, Any]) -> np.ndarray:
    """The fused value of every row of ``prep`` under ``method`` with ``params``."""
    if method == "rrf":
        k = params.get("k", 60)
        return _seq(prep.by_position(lambda p: 1 / (k + p + 1)))
    if method == "rbc":
        phi = float(params["phi"])
        return _seq(prep.by_position(lambda p: (1 - phi) * _powi(phi, p)))
    if method in ("isr", "log_isr", "logn_isr"):
        return _isr(prep, method, params)
    if method == "wsum":
        return _seq(prep.weighted_values(_weights(params, len(prep.lists))))
    if method in ("anz", "mnz", "gmnz"):
        return _isr(prep, method, params)
    H, V = prep.H, prep.V
    R = len(prep.lists)
    if method == "sum":
        return _seq(V)
    if method == "min":
        return np.min(np.where(H, V, 1e9), axis=0)
    if method == "max":
        return np.max(np.where(H, V, -1e9), axis=0)
    if method == "med":
        c = prep.count
        s = np.sort(np.where(H, V, np.inf), axis=0)
        cols = np.arange(s.shape[1])
        lo = s[(np.maximum(c, 1) - 1) // 2, cols]
        hi = s[np.minimum(c // 2, R - 1), cols]
        return np.where(c % 2 == 1, lo, (lo + hi) / 2)
    if method == "mixed":
        w = _weights(params, R)
        return _seq(np.where(H, V * w[:, None], 0.0)) * np.sqrt(prep.count)
    if method == "wmnz":
        w = _weights(params, R)
        return _seq(V) * _seq(np.where(H, w[:, None], 0.0))
    if method in ("posfuse", "probfuse", "segfuse", "slidefuse", "mapfuse", "bayesfuse"):
        return _trained(prep, method, params)
    if method in ("bordafuse", "w_bordafuse"):
        n_c = np.repeat(np.diff(prep.u_off), np.diff(prep.u_off)).astype(np.float64)
        P = prep.cached("P0", lambda: np.maximum(prep.P, 0))  # absent rows are masked by H
        pts = np.where(H, n_c - P, (n_c - prep.N + 1) / 2)
        if method == "bordafuse":
            return _seq(pts)
        return _seq(_weights(params, R)[:, None] * pts)
    if method in ("condorcet", "w_condorcet"):
        return _condorcet(prep, _weights(params, R) if method == "w_condorcet" else None)
    raise AssertionError(method)  # pragma: no cover


def _trained(prep: Prepared, method: str, params: dict[str, Any]) -> np.ndarray:
    """The fused values of the trained methods (PosFuse, ProbFuse, SegFuse, SlideFuse, MAPFuse, BayesFuse)."""
    H, V = prep.H, prep.V
    R = len(prep.lists)
    P = prep.cached("P0", lambda: np.maximum(prep.P, 0))  # absent rows are masked by H
    if method == "posfuse":
        probs = _per_run(params, "probs", R)
        return _seq(np.stack([_table(np.asarray(p, dtype=np.float64), P[r], H[r])
                              for r, p in enumerate(probs)]))
    if method == "probfuse":
        probs = _per_run(params, "probs", R)
        N = prep.N
        return _seq(np.stack([_probfuse_run(np.asarray(p, dtype=np.float64), P[r], N[r], H[r])
                              for r, p in enumerate(probs)]))
    if method == "segfuse":
        probs = _per_run(params, "probs", R)
        return _seq(np.stack([np.where(H[r], _table(np.asarray(p, dtype=np.float64)[:len(SEG_BOUNDS) - 1],
                                                     _segment_of(P[r]), H[r]) * (V[r] + 1), 0.0)
                              for r, p in enumerate(probs)]))
    if method == "slidefuse":
        probs = _per_run(params, "probs", R)
        width = int(params["w"])
        N = prep.N
        return _seq(np.stack([_slide_run(np.asarray(p, dtype=np.float64), P[r], N[r], H[r], width)
                              for r, p in enumerate(probs)]))
    if method == "mapfuse":
        maps = _per_run(params, "map_scores", R)
        return _seq(np.stack([np.where(H[r], float(m) / (P[r] + 1), 0.0) for r, m in enumerate(maps)]))
    odds = _per_run(params, "log_odds", R)  # bayesfuse
    return _seq(np.stack([np.where(H[r] & (P[r] < len(o)), _table(np.asarray(o, dtype=np.float64), P[r], H[r]),
                                   MIN_ODD) for r, o in enumerate(odds)]))


def _isr(prep: Prepared, method: str, params: dict[str, Any]) -> np.ndarray:
    """CombANZ, CombMNZ, CombGMNZ (over values) and ISR, Log_ISR, LogN_ISR (over 1 / position²)."""
    terms = prep.by_position(lambda p: 1 / (p + 1) ** 2) if method in ("isr", "log_isr", "logn_isr") else prep.V
    s = _seq(terms)
    c = prep.count
    if method == "anz":
        return s / c
    if method in ("mnz", "isr"):
        return s * c
    if method == "gmnz":
        return s * np.power(c.astype(np.float64), float(params["gamma"]))
    if method == "log_isr":
        with np.errstate(divide="ignore"):
            return s * np.log(c)
    return s * np.log(c + float(params.get("sigma", 0.01)))


# segment bounds of SegFuse: 0, 5, 15, 35, ... (10 * 2**(k-1) - 5)
SEG_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)


def _segment_of(pos: np.ndarray) -> np.ndarray:
    """SegFuse's segment of each position (10 segments; positions past the last get index 10: none)."""
    return np.searchsorted(SEG_BOUNDS, pos, side="right") - 1


def _probfuse_run(probs: np.ndarray, P: np.ndarray, N: np.ndarray, H: np.ndarray) -> np.ndarray:
    n_seg = len(probs)
    size = np.ceil(N / max(n_seg, 1)).astype(np.int64)
    k = np.where(size > 0, P // np.maximum(size, 1), 0)
    ok = H & (k < n_seg)
    out = np.zeros(P.shape)
    out[ok] = probs[k[ok]] / (k[ok] + 1)
    return out


def _slide_run(probs: np.ndarray, P: np.ndarray, N: np.ndarray, H: np.ndarray, w: int) -> np.ndarray:
    """mean of ``probs[a:b+1]`` with ``a = max(p - w, 0)``, ``b = min(p + w, N - 1)`` (the slice stops at
    the end of ``probs``; the divisor does not), summed left to right."""
    out = np.zeros(P.shape)
    if not H.any():
        return out
    p = P[H]
    a = np.maximum(p - w, 0)
    b = np.minimum(p + w, N[H] - 1)
    key = a * (int(b.max()) + 2) + b
    uk, inv = np.unique(key, return_inverse=True)
    ua, ub = uk // (int(b.max()) + 2), uk % (int(b.max()) + 2)
    acc = np.zeros(len(uk))
    for t in range(int((ub - ua).max()) + 1 if len(uk) else 0):
        j = ua + t
        ok = (j <= ub) & (j < len(probs))
        acc[ok] = acc[ok] + probs[j[ok]]
    out[H] = (acc / (ub - ua + 1))[inv]
    return out


def _condorcet(prep: Prepared, w: np.ndarray | None) -> np.ndarray:
    """Candidates sorted with ranx's pairwise vote (Python's sort with that comparison, whose result
    depends on the candidates' order); the i-th gets ``n - i``."""
    R = len(prep.P)
    P = np.where(prep.H, prep.P, 1_000_000)
    off = prep.u_off.tolist()
    out = np.empty(len(prep.u_pair))
    for qi in range(len(off) - 1):
        a, b = off[qi], off[qi + 1]
        n = b - a
        if n == 0:
            continue
        idx = P[:, a:b]
        lt = idx[:, :, None] < idx[:, None, :]  # [run, x, y]: run ranks x above y
        if w is None:
            xv = lt.sum(axis=0)
            wins = (xv >= R - xv).tolist()
        else:
            xs = np.zeros((n, n))
            ys = np.zeros((n, n))
            for r in range(R):
                xs = xs + np.where(lt[r], w[r], 0.0)
                ys = ys + np.where(lt[r], 0.0, w[r])
            wins = (xs >= ys).tolist()
        def vote(x: int, y: int, wins: list[list[bool]] = wins) -> int:
            return -1 if wins[x][y] else 1

        order = sorted(range(n), key=cmp_to_key(vote))
        vals = np.empty(n)
        vals[np.asarray(order, dtype=np.int64)] = n - np.arange(n, dtype=np.float64)
        out[a:b] = vals
    return out
