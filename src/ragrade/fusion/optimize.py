"""``ragrade.optimize_fusion``: choose a fusion's parameters on judged queries, honestly.

The search tries every configuration of a grid, scores the fused run of each with one metric, and keeps
the best. The trained methods learn what ranx learns (per-position relevance probabilities, MAP, log
odds) from the same queries. With ``cv=k`` the queries are split into k folds: for each fold the search
(training included) runs on the other folds and the chosen configuration is scored on the held-out fold,
so the cross-validated score is the score of the *procedure* on unseen queries, not of the best
configuration on the queries that chose it.

``profile="ranx"`` reproduces ranx's ``optimize_fusion``: its weight grid (0.1 steps whose float sum
equals 1.0: for three runs 62 of the 66 combinations of the simplex survive that test), its tie rule
(among equal scores the last configuration tried wins), the in-place re-sort its training does to the
normalised runs (ProbFuse and SlideFuse then score configurations on re-sorted lists), and its metric
conventions (ragrade's ``ranx`` profile, ties in ranx's order). By default the whole simplex is
searched and the first of equal configurations wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np

from ragrade.data import Run
from ragrade.errors import InputError
from ragrade.fusion._lists import Lists, Space, align, locate
from ragrade.fusion.api import as_runs, to_run
from ragrade.fusion.methods import METHODS, SEG_BOUNDS, combine, method_name, prepare
from ragrade.fusion.norms import norm_name, normalise
from ragrade.fusion.params import (
    GRID_STEP,
    MAX_CANDIDATES,
    Bound,
    check_grid,
    check_number,
    grid_size,
)
from ragrade.kernels.tie_orders import argsort_segments_desc
from ragrade.options import CV, STEP, public

TRAINING = ("posfuse", "probfuse", "segfuse", "slidefuse", "mapfuse", "bayesfuse")
BAYES_CUTS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass
class FusionSearch:
    """What :func:`optimize_fusion` found.

    ``params``: the chosen parameters (weights, k, trained probabilities ...), ready for
    ``ragrade.fuse(runs, method, norm=norm, params=params)``; ``run``: that fused run; ``score``: its
    metric mean; ``search_score``: the best mean of the search (equal to ``score`` except under
    ``profile="ranx"`` for ProbFuse and SlideFuse, whose search scores re-sorted lists as ranx does);
    ``table``: one row per configuration tried (its parameters and metric mean); ``config``: the row
    chosen. With ``cv=k``:
    ``cv_score`` (the mean over all queries of each query's score when it was held out),
    ``cv_per_query`` and ``cv_folds`` (per fold: the configuration chosen on the other folds, its
    training mean and its held-out mean)."""

    method: str
    norm: str
    metric: str
    profile: str
    params: dict[str, Any]
    score: float
    search_score: float
    run: Run
    table: list[dict[str, Any]]
    config: dict[str, Any] = field(default_factory=dict)
    cv: int | None = None
    cv_score: float | None = None
    cv_per_query: dict[str, float] | None = None
    cv_folds: list[dict[str, Any]] = field(default_factory=list)

    def to_pandas(self) -> Any:
        """The table of configurations as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.table)

    def __repr__(self) -> str:
        cfg = self.config
        cv = f", cv{self.cv}={self.cv_score:.4f}" if self.cv else ""
        return (f"FusionSearch({self.method}, norm={self.norm}, {self.metric}={self.score:.4f}, {cfg}, "
                f"{len(self.table)} configurations{cv})")


# -- grids --------------------------------------------------------------------------------------------


def _decimals(step: float) -> int:
    return str(step)[::-1].find(".")


def ranx_weight_grid(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """ranx's weight combinations: values ``round(x, d)`` for x in ``np.arange(0, 1 + step, step)``,
    every combination whose Python float sum equals 1.0 exactly (some of the simplex fails that test).
    A grid whose enumeration passes :data:`~ragrade.fusion.params.MAX_CANDIDATES` combinations, or whose
    simplex passes :data:`~ragrade.fusion.params.MAX_CONFIGURATIONS`, is refused (saying its size)."""
    step = check_number("step", step, GRID_STEP)
    n_values = len(np.arange(0, 1 + step, step))
    check_grid(n_values ** n_runs, f"ranx's weight grid (step {step}, {n_runs} runs)", MAX_CANDIDATES,
               "combinations to enumerate")
    check_grid(grid_size(n_runs, n_values - 1), f"ranx's weight grid (step {step}, {n_runs} runs)")
    d = _decimals(step)
    values = [float(round(x, d)) for x in np.arange(0, 1 + step, step)]
    return [c for c in product(values, repeat=n_runs) if sum(c) == 1.0]


def simplex_grid(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """Every combination of multiples of ``step`` summing to 1 (counted in whole steps, so none is lost
    to rounding). A grid of more than :data:`~ragrade.fusion.params.MAX_CONFIGURATIONS` weightings is
    refused, saying its size."""
    step = check_number("step", step, GRID_STEP)
    m = round(1 / step)
    if m <= 0 or abs(m * step - 1) > 1e-9:
        raise InputError(f"step must divide 1 into whole steps (0.1, 0.05, 0.25 ...), got {step}")
    check_grid(grid_size(n_runs, m), f"the weight grid of step {step} over {n_runs} runs")
    return [tuple(c / m for c in combo) for combo in _compositions(m, n_runs)]


def _compositions(m: int, n: int) -> list[tuple[int, ...]]:
    """Every tuple of ``n`` non-negative integers summing to ``m``, in ``product(range(m + 1), repeat=n)``
    order (without enumerating the whole product)."""
    if n == 1:
        return [(m,)]
    return [(first, *rest) for first in range(m + 1) for rest in _compositions(m - first, n - 1)]


def _hundredths() -> list[float]:
    return [float(round(x, 2)) for x in np.arange(0.01, 1.0 + 0.01, 0.01)]


def configurations(method: str, n_runs: int, step: float, ranx_grid: bool) -> list[dict[str, Any]]:
    info = METHODS[method]
    if info.weighted:
        grid = ranx_weight_grid(n_runs, step) if ranx_grid else simplex_grid(n_runs, step)
        return [{"weights": list(w)} for w in grid]
    if method == "rrf":
        return [{"k": k} for k in range(10, 101, 10)]
    if method in ("rbc", "gmnz", "logn_isr"):
        key = {"rbc": "phi", "gmnz": "gamma", "logn_isr": "sigma"}[method]
        return [{key: v} for v in _hundredths()]
    if method == "probfuse":
        return [{"n_segments": n} for n in range(1, 101)]
    if method == "slidefuse":
        return [{"w": w} for w in range(1, 101)]
    return [{}]


# -- training (what ranx learns) ------------------------------------------------------------------------


def _hits(space: Space, lists: list[Lists], rel_pairs: np.ndarray) -> list[np.ndarray]:
    """1.0 where a run's entry is a relevant document (grade >= 1), else 0.0."""
    return [rel_pairs[x.pair].astype(np.float64) for x in lists]


def _seq_rows(mat: np.ndarray) -> np.ndarray:
    """Sum over rows (queries) in order."""
    if len(mat) == 0:
        return np.zeros(mat.shape[1])
    return np.cumsum(mat, axis=0)[-1]


def _position_probs(x: Lists, hit: np.ndarray) -> np.ndarray:
    pos = x.positions()
    size = int(x.counts.max()) if len(x.counts) else 0
    num = np.bincount(pos, weights=hit, minlength=size)
    den = np.bincount(pos, minlength=size)
    return num / np.maximum(den, 1)


def _segment_sums(x: Lists, hit: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``[queries, segments]``: the hits of each query's list within [start, end) (per query bounds)."""
    cum = np.concatenate([[0.0], np.cumsum(hit)])
    base = x.off[:-1, None]
    n = x.counts[:, None]
    a = base + np.minimum(starts, n)
    b = base + np.minimum(ends, n)
    return cum[b] - cum[a]


def train(method: str, space: Space, lists: list[Lists], rel_pairs: np.ndarray, config: dict[str, Any],
          qrels: Any, profile: str) -> dict[str, Any]:
    """The learnt parameters of ``method`` (plus the configuration's own)."""
    params = {k: v for k, v in config.items() if k != "n_segments"}
    if method not in TRAINING:
        return params
    hits = _hits(space, lists, rel_pairs)
    nq = space.n_queries
    if method in ("posfuse", "slidefuse"):
        params["probs"] = [_position_probs(x, h) for x, h in zip(lists, hits, strict=True)]
    elif method == "probfuse":
        n_seg = int(config["n_segments"])
        probs = []
        for x, h in zip(lists, hits, strict=True):
            size = np.ceil(x.counts / n_seg).astype(np.int64)[:, None]
            k = np.arange(n_seg)[None, :]
            starts, ends = k * size, (k + 1) * size
            seg_len = np.minimum(ends, x.counts[:, None]) - np.minimum(starts, x.counts[:, None])
            sums = _segment_sums(x, h, starts, ends)
            contrib = np.where(seg_len > 0, sums / np.maximum(seg_len, 1), 0.0)
            probs.append(_seq_rows(contrib) / max(nq, 1))
        params["probs"] = probs
    elif method == "segfuse":
        starts, ends = SEG_BOUNDS[:-1][None, :], SEG_BOUNDS[1:][None, :]
        params["probs"] = [_seq_rows(_segment_sums(x, h, starts, ends) / (ends - starts)) / max(nq, 1)
                           for x, h in zip(lists, hits, strict=True)]
    elif method == "bayesfuse":
        cuts = np.asarray(BAYES_CUTS)
        starts, ends = cuts[:-1][None, :], cuts[1:][None, :]
        odds_all = []
        for x, h in zip(lists, hits, strict=True):
            prec = _segment_sums(x, h, starts, ends) / (ends - starts) / max(nq, 1)
            avg = _seq_rows(prec)
            avg = np.where(avg == 0, avg + 0.001, avg)
            neg = 1 - avg
            neg = np.where(neg == 0, neg + 0.001, neg)
            odds = np.zeros(int(cuts[-1]))
            for i in range(len(cuts) - 1):
                odds[cuts[i]: cuts[i + 1]] = np.log(avg[i] / neg[i])
            odds_all.append(odds)
        params["log_odds"] = odds_all
    elif method == "mapfuse":
        params["map_scores"] = [_evaluate(space, x.pair, x.off, x.val, qrels, "ap", profile)[0] for x in lists]
    return params


# -- scoring ------------------------------------------------------------------------------------------


def _evaluate(space: Space, pairs: np.ndarray, off: np.ndarray, values: np.ndarray, qrels: Any, metric: str,
              profile: str) -> tuple[float, Any]:
    """Mean and per-query scores of a run given in rank order."""
    run = Run(space.query_ids.astype(object), off.astype(np.int64), space.pair_code[pairs], space.doc_vocab,
              values.astype(np.float64), unique=True)
    return _mean_and_rows(qrels, run, metric, profile)


def _mean_and_rows(qrels: Any, run: Run, metric: str, profile: str) -> tuple[float, Any]:
    import warnings

    from ragrade.errors import RagradeWarning
    from ragrade.evaluation import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)  # tied scores at the cutoff: expected in fused runs
        res = evaluate(qrels, run, metric, profile="ranx" if profile == "ranx" else None, ties="input")
    col = res.per_query.columns[0]
    return float(res.means[col]), res.per_query[col]


def _score_fused(space: Space, prep: Any, fused: np.ndarray, qrels: Any, metric: str, profile: str
                 ) -> tuple[float, Any, Run]:
    run = to_run(space, prep.u_pair, prep.u_off, fused, "fused")
    mean, rows = _mean_and_rows(qrels, run, metric, profile)
    return mean, rows, run


class _Scorer:
    """Scores fused values over one prepared layout without building a run per configuration: the
    judgments of every fused row are found once (the engine's join, :meth:`ragrade.Evaluator.locate`), and
    each configuration only ranks its values (numba's order, as :func:`~ragrade.fusion.api.to_run`) and hands
    the judged rows' ranks to the scoring port (:meth:`ragrade.Evaluator.score`). The values are those of
    :func:`_mean_and_rows` on the fused run (tests/fusion/test_optimize.py compares them)."""

    def __init__(self, space: Space, prep: Any, qrels: Any, metric: str, profile: str) -> None:
        from ragrade.evaluation import build_plan, prepare

        plan = build_plan(qrels, None, metric, profile="ranx" if profile == "ranx" else None, ties="input")
        self.evaluator = prepare(plan)  # the dispatcher's door: the ground truth indexed once
        self.space, self.u_off = space, prep.u_off
        union_run = Run(space.query_ids.astype(object), prep.u_off.astype(np.int64), space.pair_code[prep.u_pair],
                        space.doc_vocab, np.zeros(len(prep.u_pair)), unique=True)
        self.queries = union_run.query_ids
        self.positions = self.evaluator.truth.positions(self.queries)
        self.counts = np.diff(prep.u_off)
        self.rows, self.judgments = self.evaluator.locate(union_run)
        self.row_start = prep.u_off[np.searchsorted(prep.u_off, self.rows, side="right") - 1]

    @staticmethod
    def applies(profile: str, qrels: Any, metric: str) -> bool:
        """Whether the direct path computes ``metric`` as the evaluation of the fused run does."""
        from ragrade.engine.plan import build_plan
        from ragrade.profiles import EngineProfile

        try:
            plan = build_plan(qrels, None, metric, profile="ranx" if profile == "ranx" else None, ties="input")
        except Exception:  # the general path reports the problem
            return False
        prof = plan.profile
        if plan.kinds != frozenset({"id"}) or plan.policy_object().identical_ids != "keep":
            return False
        return prof is None or (prof.name == "ranx" and isinstance(prof, EngineProfile) and not prof.providers
                                and prof.iprec_cut == "round" and prof.rounding is None
                                and prof.policy_overrides().get("identical_ids", "keep") == "keep")

    def score(self, fused: np.ndarray) -> tuple[float, Any]:
        perm, _ = argsort_segments_desc(fused, self.u_off)
        rank = np.empty(len(perm), dtype=np.int64)
        rank[perm] = np.arange(len(perm), dtype=np.int64)
        res = self.evaluator.score(self.judgments, rank[self.rows] - self.row_start, self.counts, self.queries,
                                   positions=self.positions, notes=False)
        col = res.per_query.columns[0]
        return float(res.means[col]), res.per_query[col]


# -- the search ---------------------------------------------------------------------------------------


def _relevant_pairs(space: Space, qrels_dict: dict[str, dict[str, float]]) -> np.ndarray:
    """Per pair: whether the qrels grade the document >= 1 for the query."""
    import pandas as pd

    rel = np.zeros(len(space.pair_query), dtype=bool)
    qpos = {q: i for i, q in enumerate(space.query_ids.tolist())}
    qs, ds = [], []
    for q, docs in qrels_dict.items():
        if q in qpos:
            for d, g in docs.items():
                if g >= 1:
                    qs.append(qpos[q])
                    ds.append(d)
    if not qs:
        return rel
    codes = pd.Index(space.doc_vocab).get_indexer(np.asarray(ds, dtype=object))
    ok = codes >= 0
    n_docs = max(len(space.doc_vocab), 1)
    keys = np.asarray(qs, dtype=np.int64)[ok] * n_docs + codes[ok]
    pkeys = space.pair_query * n_docs + space.pair_code
    order = np.argsort(pkeys)
    at = np.searchsorted(pkeys[order], keys)
    found = (at < len(pkeys)) & (pkeys[order][np.minimum(at, len(pkeys) - 1)] == keys)
    rel[order[at[found]]] = True
    return rel


def _subset(space: Space, lists: list[Lists], keep_q: np.ndarray) -> tuple[Space, list[Lists]]:
    newidx = np.cumsum(keep_q) - 1
    sub = Space(space.query_ids[keep_q], newidx[space.pair_query], space.pair_code, space.doc_vocab)
    out = []
    for x in lists:
        rows = keep_q[x.query_of_rows()]
        counts = x.counts[keep_q]
        off = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=off[1:])
        out.append(Lists(x.pair[rows], x.val[rows], off, x.ordered))
    return sub, out


def _search(space: Space, normed: list[Lists], method: str, configs: list[dict[str, Any]], qrels: dict,
            metric: str, profile: str, python_set: bool,
            keep: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
    """(table rows, index of the best, best params) on these queries. ``keep``, when given and the search
    fused the lists as given (``fuse`` would), receives the best configuration's fused run and score."""
    from ragrade.engine.inputs import as_qrels

    ranx = profile == "ranx"
    rel = _relevant_pairs(space, qrels) if method in TRAINING else np.zeros(0, dtype=bool)
    judged = as_qrels(qrels)  # once: every configuration is scored against it
    trained_lists = [x.trained_view() for x in normed] if (ranx and method in TRAINING) else normed
    # ranx scores ProbFuse/SlideFuse configurations on the lists its training re-sorted in place
    search_lists = trained_lists if method in ("probfuse", "slidefuse") else normed
    prep = prepare(space, search_lists, method, python_set=python_set)
    scorer = _Scorer(space, prep, judged, metric, profile) if _Scorer.applies(profile, judged, metric) else None
    rows: list[dict[str, Any]] = []
    best, best_score, best_params = -1, -math.inf, {}
    best_fused: np.ndarray | None = None
    best_run: Run | None = None
    slide_probs = None
    for i, cfg in enumerate(configs):
        if method == "slidefuse" and slide_probs is not None:
            params = {**cfg, "probs": slide_probs}
        else:
            params = train(method, space, trained_lists, rel, cfg, judged, profile)
            slide_probs = params.get("probs") if method == "slidefuse" else None
        fused = combine(prep, method, params)
        run = None
        if scorer is not None:
            score = scorer.score(fused)[0]
        else:
            score, _, run = _score_fused(space, prep, fused, judged, metric, profile)
        rows.append({**{k: v for k, v in cfg.items()}, metric: score})
        better = score >= best_score if ranx else score > best_score
        if ranx and best < 0:
            better = score >= 0.0  # ranx starts from a best score of 0.0
        if better:
            best, best_score, best_params, best_fused, best_run = i, score, params, fused, run
    if keep is not None and search_lists is normed and best >= 0 and best_fused is not None:
        if best_run is None:
            best_run = to_run(space, prep.u_pair, prep.u_off, best_fused, "fused")
        keep.update(run=best_run, score=best_score)
    if best < 0:  # every score below ranx's starting 0.0 (not with IR metrics); keep the first
        best, best_params = 0, train(method, space, trained_lists, rel, configs[0], judged, profile)
        if keep is not None:
            keep.clear()
    return rows, best, best_params


@public(step=STEP, cv=CV)
def optimize_fusion(qrels: Any, runs: Any, method: str = "wsum", metric: str = "ndcg@100",
                    norm: str | None = "default", step: float = 0.1, cv: int | None = None,
                    profile: str | None = None, seed: int = 0,
                    candidate_order: str = "first_seen") -> FusionSearch:
    """Search the parameters of ``method`` that maximise ``metric`` over ``qrels``'s queries.

    ``runs``: a dict name -> run or a list (any run input). ``norm`` as in :func:`ragrade.fuse` (default
    min-max). ``step``: the weight grid's step for the weighted methods (every combination of multiples
    of ``step`` summing to 1). ``cv=k``: also the k-fold cross-validated score by query (folds drawn
    with ``seed``). ``profile="ranx"``: ranx's grid, tie rule, training and metric conventions, so the
    choice and its score equal ranx's ``optimize_fusion``.
    """
    from ragrade.engine.inputs import as_qrels

    prof = "ranx" if profile is not None and str(profile).strip().lower() == "ranx" else "ragrade"
    if profile is not None and prof != "ranx" and str(profile).strip().lower() != "ragrade":
        raise InputError(f"optimize_fusion profiles: 'ranx' or None (ragrade's), got {profile!r}")
    m = method_name(method)
    nm = "min-max" if norm == "default" else norm_name(norm)
    run_list, names = as_runs(runs)
    q = as_qrels(qrels)
    qrels_dict = {k: {d: float(g) for d, g in v.items()} for k, v in q.to_dict().items()}
    space, lists = align(run_list, names, same_queries=prof == "ranx")
    _check_search(space, qrels_dict, cv)
    if prof == "ranx":
        missing = set(space.query_ids.tolist()) ^ set(qrels_dict)
        if missing:
            raise InputError("under profile='ranx' the runs and the qrels must have the same queries (ranx "
                             f"asserts it); {len(missing)} differ", query=str(sorted(missing)[0]))
    python_set = candidate_order == "python_set"
    normed = normalise(lists, space, nm, python_set=python_set)
    configs = configurations(m, len(run_list), step, prof == "ranx")
    kept: dict[str, Any] = {}
    rows, best, params = _search(space, normed, m, configs, qrels_dict, metric, prof, python_set, keep=kept)
    if kept:  # the search fused the normalised runs as fuse() does: its best run is the answer
        score, run = float(kept["score"]), kept["run"]
    else:
        prep = prepare(space, normed, m, python_set=python_set)
        score, _, run = _score_fused(space, prep, combine(prep, m, params), q, metric, prof)
    run = run.with_name(f"{m}({'+'.join(names)})")
    result = FusionSearch(m, nm, metric, prof, params, score, float(rows[best][metric]), run, rows,
                          config=dict(configs[best]))
    if cv:
        _cross_validate(result, space, normed, m, configs, qrels_dict, metric, prof, python_set, int(cv), seed)
    return result


def _check_search(space: Space, qrels: dict[str, Any], cv: Any) -> None:
    """Before any search: the qrels must judge some query of the runs (else every configuration scores
    0 and the "best" is arbitrary), and ``cv`` must be a whole number of folds from 2 to the number of
    queries."""
    shared = sum(1 for q in space.query_ids.tolist() if q in qrels)
    if shared == 0:
        raise InputError(f"the qrels share no query with the runs (runs: {space.n_queries} queries, qrels: "
                         f"{len(qrels)}): there is nothing to choose a fusion on; check the query ids",
                         query=str(space.query_ids[0]) if space.n_queries else None)
    if cv is not None and cv is not False:
        k = check_number("cv", cv, Bound("a whole number of folds >= 2", low=2, integer=True))
        if k > space.n_queries:
            raise InputError(f"cv: {k} folds need at least {k} queries, the runs have {space.n_queries}")


def _cross_validate(result: FusionSearch, space: Space, normed: list[Lists], method: str,
                    configs: list[dict[str, Any]], qrels: dict, metric: str, profile: str, python_set: bool,
                    k: int, seed: int) -> None:
    nq = space.n_queries
    if k < 2 or k > nq:
        raise InputError(f"cv needs 2 <= k <= the number of queries ({nq}), got {k}")
    fold = np.empty(nq, dtype=np.int64)
    fold[np.random.default_rng(seed).permutation(nq)] = np.arange(nq) % k
    per_query: dict[str, float] = {}
    for f in range(k):
        train_q, test_q = fold != f, fold == f
        s_tr, l_tr = _subset(space, normed, train_q)
        q_tr = {q: qrels[q] for q in s_tr.query_ids.tolist() if q in qrels}
        rows, best, params = _search(s_tr, l_tr, method, configs, q_tr, metric, profile, python_set)
        s_te, l_te = _subset(space, normed, test_q)
        q_te = {q: qrels[q] for q in s_te.query_ids.tolist() if q in qrels}
        prep = prepare(s_te, l_te, method, python_set=python_set)
        mean, pq, _ = _score_fused(s_te, prep, combine(prep, method, params), q_te, metric, profile)
        per_query.update({str(q): float(v) for q, v in pq.items()})
        cfg = {kk: v for kk, v in configs[best].items()}
        result.cv_folds.append({"fold": f, **cfg, "train": float(rows[best][metric]), "test": mean,
                                "queries": int(test_q.sum())})
    result.cv = k
    result.cv_per_query = per_query
    vals = np.asarray(list(per_query.values()), dtype=np.float64)
    # queries whose metric is undefined (NaN under the no_relevant policy) are left out, as in Result.means
    result.cv_score = float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")


__all__ = ["FusionSearch", "configurations", "locate", "optimize_fusion", "ranx_weight_grid", "simplex_grid"]
