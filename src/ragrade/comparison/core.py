"""Compare several runs on the same queries: means with bootstrap intervals, paired tests, effect sizes,
significance groups."""

from __future__ import annotations

import dataclasses
import itertools
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import ragrade.comparison.stats as stats
from ragrade.comparison.power import COMPARE_POWER, paired_mde
from ragrade.comparison.result import Comparison
from ragrade.engine.result import Result
from ragrade.errors import InputError, RagradeWarning
from ragrade.options import SOME_METRICS, ComparisonOptions, public, spelled


def run_letters(n: int) -> list[str]:
    """Short labels ``a, b, ..., z, aa, ab, ...`` for ``n`` runs (used as significance markers)."""
    return [label.lower() for label in stats.group_labels(n)]


# --------------------------------------------------------------------------------------------- inputs
def per_query_frame(value: Any, name: str) -> pd.DataFrame:
    """Per-query scores of one run as a DataFrame (index = query id as str, columns = metrics)."""
    if isinstance(value, Result):
        value = value.collect()  # a Spark result's values, on the driver
    frame = getattr(value, "per_query", value)
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if isinstance(frame, Mapping):
        frame = pd.DataFrame(frame)
    if not isinstance(frame, pd.DataFrame):
        raise InputError(
            f"scores of run {name!r} must be a Result, a DataFrame (queries x metrics) or a mapping",
            value=type(value).__name__,
        )
    index = frame.index
    if not (pd.api.types.is_string_dtype(index.dtype) and not pd.api.types.is_object_dtype(index.dtype)):
        index = pd.Index(np.asarray([str(q) for q in index.tolist()], dtype=object), dtype=object)
    if index.has_duplicates:
        raise InputError(f"scores of run {name!r} list a query twice", query=index[index.duplicated()][0])
    out = frame.set_axis(index, axis=0).set_axis([str(c) for c in frame.columns], axis=1)
    return out


def _column(frame: pd.DataFrame, metric: str, run: str) -> np.ndarray:
    """One metric's per-query scores as float64 (NaN: not scored); a non-number is an InputError."""
    raw = frame[metric]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isinf(values) | (np.isnan(values) & raw.notna().to_numpy())
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"run {run!r}, metric {metric!r}: per-query scores must be finite numbers",
            query=str(frame.index[i]),
            value=raw.iloc[i],
        )
    return values


def compared_pairs(names: Sequence[str], baseline: str | None = None) -> list[tuple[str, str]]:
    """The (control, treatment) pairs a comparison tests: every pair (the earlier run is the control),
    or the baseline against every other run."""
    if baseline is None:
        return list(itertools.combinations(names, 2))
    return [(baseline, name) for name in names if name != baseline]


def dispatch_named(plan: Any) -> dict[str, Any]:
    """Evaluate every run of ``plan`` (through the one dispatcher); what the policies did is warned once for
    all runs (one :class:`~ragrade.errors.PolicyNote`): a sentence that holds for every run as it is, any
    other prefixed by the runs it holds for (``run_dense: 1 ground-truth query missing from the run, ...``)."""
    from ragrade.errors import PolicyNote
    from ragrade.evaluation import dispatch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PolicyNote)  # said below, once, naming the runs
        results = dispatch(plan)
    holders: dict[str, list[str]] = {}
    for name, result in results.items():
        for note in result.notes():
            holders.setdefault(note, []).append(name)
    notes = [note if len(names) == len(results) else f"{', '.join(names)}: {note}" for note, names in holders.items()]
    if notes:
        from ragrade.engine.core import caller_stacklevel

        warnings.warn(PolicyNote(notes), stacklevel=caller_stacklevel())
    return results


def name_runs(runs: Mapping[Any, Any] | Sequence[Any]) -> dict[str, Any]:
    """``{name: run}``: a mapping keeps its keys (as str); a sequence is named by each run's ``name``
    when every one has a distinct one, else ``run_1, run_2, ...``."""
    if isinstance(runs, Mapping):
        named = {str(k): v for k, v in runs.items()}
        if len(named) != len(runs):
            raise InputError("run names must be distinct", value=list(runs))
        return named
    if isinstance(runs, str | bytes) or not isinstance(runs, Sequence):
        raise InputError("runs must be a mapping {name: run} or a list of runs", value=type(runs).__name__)
    names = [getattr(r, "name", None) for r in runs]
    if all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names):
        return {str(n): r for n, r in zip(names, runs, strict=True)}
    return {f"run_{i + 1}": r for i, r in enumerate(runs)}


def metric_labels(metrics: Sequence[Any] | str | Any) -> list[str]:
    """The column labels ``ragrade.evaluate`` gives ``metrics`` (cutoff lists expanded: ``P@[5,10]`` ->
    ``P@5``, ``P@10``; metric objects by ``str``), validating each one (``MetricError`` on a typo)."""
    from ragrade.metrics import expand_labels, parse_metric

    if isinstance(metrics, str) or not isinstance(metrics, Sequence):
        metrics = [metrics]
    labels: list[str] = []
    for m in metrics:
        if isinstance(m, str):
            labels.extend(label for label, _ in expand_labels(m))
        else:
            labels.append(str(parse_metric(m)))
    if not labels:
        raise InputError("no metric given")
    return list(dict.fromkeys(labels))


# --------------------------------------------------------------------------------------------- compare
@public(metrics=SOME_METRICS)
def compare_scores(scores: Mapping[str, Any], metrics: Sequence[str] | None = None, *,
                   options: ComparisonOptions | None = None, **keywords: Any) -> Comparison:
    """Compare runs given their per-query scores (the engine-independent core of :func:`compare`).

    Args:
        scores: ``{run name: per-query scores}``; each value is a ``Result`` (its ``per_query`` is used), a
            DataFrame indexed by query id with one column per metric, or a mapping ``{metric: {qid: v}}``.
        metrics: metrics to compare (default: the columns common to all runs, in the first run's order).
        options: how the runs are compared, a :class:`ragrade.ComparisonOptions`; its fields may also be
            given as keywords (they override ``options``'s):

            - ``baseline``: compare every run with this one; ``None`` compares all pairs (earlier run =
              control) and also gives significance groups;
            - ``test``: ``"randomization"`` (default; NumPy only), ``"bootstrap"``, ``"t"``, ``"wilcoxon"``
              or ``"tukey"`` (SciPy, extra ``stats``). Tukey's HSD already controls the family-wise error
              over all pairs of runs, so it takes no ``correction``;
            - ``correction``: ``None``, ``"bonferroni"``, ``"holm"`` or ``"bh"``, per metric over its pairs;
            - ``alpha``: significance level for ``significant``, markers and groups (``p_adjusted <= alpha``);
            - ``confidence``: level of the bootstrap intervals (default ``1 - alpha``);
            - ``n_resamples``: resamples of the resampling tests, and of the intervals when resampled;
            - ``seed``: seed of ``numpy.random.default_rng``; equal seeds give equal results;
            - ``ci_method``: ``"auto"`` (default: the saddlepoint approximation of the bootstrap
              distribution for a metric scored on 100 queries or more, resampling below), ``"saddlepoint"``
              or ``"resample"`` (see :func:`ragrade.comparison.stats.saddlepoint_ci` and
              :func:`~ragrade.comparison.stats.bootstrap_ci`).

    Queries are aligned by id. A query missing from some run, or with a NaN score for a metric in some
    run, is left out of that metric (all runs of a metric use the same queries) with a
    :class:`~ragrade.errors.RagradeWarning` giving the count; a query that is NaN in every run (the
    engine's exclusion of queries without relevant judgments) is left out silently, as in the means. A
    metric scored on one query, or intervals from one resample, are computed as asked and said in a
    :class:`~ragrade.errors.RagradeWarning`: such intervals have no width to speak of.
    """
    o = ComparisonOptions.of(options, keywords)
    if not isinstance(scores, Mapping) or len(scores) < 2:
        raise InputError("compare needs a mapping of at least two named runs", value=type(scores).__name__)
    names = [str(k) for k in scores]
    if len(set(names)) != len(names):
        raise InputError("run names must be distinct", value=names)
    frames = {str(k): per_query_frame(v, str(k)) for k, v in scores.items()}
    metric_list = _metric_list(frames, names, metrics)
    if o.baseline is not None and str(o.baseline) not in frames:
        raise InputError(f"{spelled('baseline')} is not one of the runs {names}", value=o.baseline)
    base = None if o.baseline is None else str(o.baseline)
    frames, all_ids = _aligned(frames, names)
    pairs, letters, ctrl, trt = _pairing(names, base)
    kept = _kept(frames, names, metric_list, len(all_ids), ctrl, trt)
    _warn_degenerate(kept, metric_list, o)
    ci_of, p_of, ci_methods = _resampled(kept, metric_list, o, ctrl, trt, len(names), len(pairs))
    summary_rows, pair_rows, used_scores = _rows(kept, metric_list, names, pairs, all_ids, ci_of, p_of, o,
                                                 base, letters)
    summary = pd.DataFrame(summary_rows).set_index(["metric", "run"])
    pair_frame = pd.DataFrame(pair_rows).set_index(["metric", "control", "treatment"])
    per_run = {name: pd.DataFrame(cols) for name, cols in used_scores.items()}
    return Comparison(runs=names, metrics=metric_list, summary=summary, pairs=pair_frame, scores=per_run,
                      baseline=base, test=o.test, correction=o.correction, alpha=o.alpha, confidence=o.level,
                      n_resamples=o.n_resamples, seed=o.seed, letters=letters, ci_methods=ci_methods)


def _warn_degenerate(kept: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], metric_list: list[str],
                     o: ComparisonOptions) -> None:
    """Say when the numbers cannot mean much: a metric scored on one query (no interval, no test has any
    power), or resampled intervals from a single resample."""
    from ragrade.engine.core import caller_stacklevel

    single = [m for m in metric_list if kept[m][1].shape[0] == 1]
    if single:
        warnings.warn(f"{', '.join(single)}: one query is scored in every run: its interval is that one value "
                      "and no test can tell the runs apart", RagradeWarning, stacklevel=caller_stacklevel())
    if o.n_resamples == 1 and (o.test in ("randomization", "bootstrap") or o.ci_method != "saddlepoint"):
        warnings.warn(f"{spelled('n_resamples')} is 1: a resampled interval is one draw (its two ends are equal) "
                      "and a resampling test's p-value is 1 or 1/2; use 1000 or more", RagradeWarning,
                      stacklevel=caller_stacklevel())


def _pairing(names: list[str], base: str | None
             ) -> tuple[list[tuple[str, str]], dict[str, str], np.ndarray, np.ndarray]:
    """The compared pairs, the runs' letters, and each pair's control and treatment run as indices."""
    pairs = compared_pairs(names, base)
    index_of = {name: i for i, name in enumerate(names)}
    letters = dict(zip(names, run_letters(len(names)), strict=True))
    ctrl = np.array([index_of[a] for a, _ in pairs], dtype=np.intp)
    trt = np.array([index_of[b] for _, b in pairs], dtype=np.intp)
    return pairs, letters, ctrl, trt


def _metric_list(frames: dict[str, pd.DataFrame], names: list[str], metrics: Sequence[str] | None) -> list[str]:
    """The compared metrics: those given (each scored in every run), else the columns all runs share."""
    if metrics is None:
        first = frames[names[0]]
        metric_list = [c for c in first.columns if all(c in f.columns for f in frames.values())]
        if not metric_list:
            raise InputError("the runs have no metric column in common")
    else:
        metric_list = [str(m) for m in metrics]
        if not metric_list:
            raise InputError("no metric given")
        if len(set(metric_list)) != len(metric_list):
            raise InputError("a metric is listed twice", value=metric_list)
        for name, frame in frames.items():
            missing = [m for m in metric_list if m not in frame.columns]
            if missing:
                raise InputError(
                    f"run {name!r} has no scores for metric {missing[0]!r} (it has {list(frame.columns)})"
                )
    return metric_list


def _aligned(frames: dict[str, pd.DataFrame], names: list[str]) -> tuple[dict[str, pd.DataFrame], pd.Index]:
    """Align queries: the union of ids, in first-seen order (no work when every run has the same index)."""
    first_index = frames[names[0]].index
    if all(f.index.equals(first_index) for f in frames.values()):
        all_ids = first_index
    else:
        all_ids = pd.Index(
            list(dict.fromkeys(itertools.chain.from_iterable(f.index for f in frames.values()))),
            dtype=object,
        )
        frames = {name: f.reindex(all_ids) for name, f in frames.items()}
    return frames, all_ids


def _kept(frames: dict[str, pd.DataFrame], names: list[str], metric_list: list[str], n_ids: int, ctrl: np.ndarray,
          trt: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    # Per metric: the queries scored in every run, their scores x (n_q, n_runs), differences d (n_q, n_pairs).
    from ragrade.engine.core import caller_stacklevel

    kept: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for metric in metric_list:
        mat = np.column_stack([_column(frames[name], metric, name) for name in names])
        nan = np.isnan(mat)
        keep = ~nan.any(axis=1)
        # NaN in every run is the engine's own exclusion (e.g. no relevant judgments), already reported by
        # it and left out of its means too; NaN or absence in only some runs is worth a warning here.
        partial = int((nan.any(axis=1) & ~nan.all(axis=1)).sum())
        if partial:
            warnings.warn(
                f"{metric}: {partial} of {n_ids} queries are missing or NaN in some runs only and are "
                "left out of this metric's comparison",
                RagradeWarning,
                stacklevel=caller_stacklevel(),
            )
        if not keep.any():
            raise InputError(f"{metric}: no query has a score in every run")
        x = mat if keep.all() else mat[keep]
        kept[metric] = (keep, x, x[:, trt] - x[:, ctrl])
    return kept


def _resampled(kept: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], metric_list: list[str],
               o: ComparisonOptions, ctrl: np.ndarray, trt: np.ndarray, n_runs: int, n_pairs: int
               ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray], dict[str, str]]:
    # Metrics scored on the same queries form a group, resampled together: one pass per group over all
    # their columns. Each group gets two independent streams spawned from the seed (intervals, test), in
    # order of the group's first metric; since every resample is drawn for all columns at once, a metric's
    # numbers do not depend on which other metrics share its group.
    groups: dict[bytes, list[str]] = {}
    for metric in metric_list:
        groups.setdefault(np.packbits(kept[metric][0]).tobytes(), []).append(metric)
    method, test_name, n_resamples, level = o.ci_method, o.test, o.n_resamples, o.level
    children = np.random.default_rng(o.seed).spawn(2 * len(groups))
    width = n_runs + n_pairs
    ci_of: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    p_of: dict[str, np.ndarray] = {}
    ci_methods: dict[str, str] = {}
    for gi, members in enumerate(groups.values()):
        block = np.column_stack([np.column_stack([kept[m][1], kept[m][2]]) for m in members])
        n_q = block.shape[0]
        use = method if method != "auto" else (
            "saddlepoint" if n_q >= stats.SADDLEPOINT_MIN_QUERIES else "resample"
        )
        if use == "saddlepoint":
            lo_all, hi_all = stats.saddlepoint_ci(block, level)
        else:
            lo_all, hi_all = stats.bootstrap_ci(block, n_resamples, level, children[2 * gi])
        if test_name == "tukey":
            p_all = np.concatenate([_tukey_pairs(kept[m][1], ctrl, trt) for m in members])
        else:
            d_cols = np.concatenate([np.arange(k * width + n_runs, (k + 1) * width) for k in range(len(members))])
            p_all = stats.paired_test(block[:, d_cols], test_name, n_resamples, children[2 * gi + 1])
        for k, m in enumerate(members):
            ci_of[m] = (lo_all[k * width : (k + 1) * width], hi_all[k * width : (k + 1) * width])
            p_of[m] = np.atleast_1d(p_all)[k * n_pairs : (k + 1) * n_pairs]
            ci_methods[m] = use
    return ci_of, p_of, ci_methods


def _rows(kept: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], metric_list: list[str], names: list[str],
          pairs: list[tuple[str, str]], all_ids: pd.Index, ci_of: dict[str, tuple[np.ndarray, np.ndarray]],
          p_of: dict[str, np.ndarray], o: ComparisonOptions, base: str | None, letters: dict[str, str]
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, pd.Series]]]:
    """The summary rows (metric x run), the pair rows (metric x pair) and the scores each metric used."""
    index_of = {name: i for i, name in enumerate(names)}
    summary_rows: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    used_scores: dict[str, dict[str, pd.Series]] = {name: {} for name in names}
    for metric in metric_list:
        keep, x, d = kept[metric]
        ids = all_ids if keep.all() else all_ids[keep]
        for name in names:
            used_scores[name][metric] = pd.Series(x[:, index_of[name]], index=ids)
        p = p_of[metric]
        p_adj = p if o.test == "tukey" else stats.adjust_pvalues(p, o.correction)
        means = x.mean(axis=0)
        rows, better, worse, different = _pair_rows(metric, x, d, pairs, index_of, ci_of[metric], p, p_adj, o.alpha)
        pair_rows += rows
        group = stats.significance_groups(means, different) if base is None else [""] * len(names)
        summary_rows += _summary_rows(metric, names, means, ci_of[metric], x.shape[0], better, worse, letters,
                                      group, index_of)
    return summary_rows, pair_rows, used_scores


def _pair_rows(metric: str, x: np.ndarray, d: np.ndarray, pairs: list[tuple[str, str]], index_of: dict[str, int],
               ci: tuple[np.ndarray, np.ndarray], p: np.ndarray, p_adj: np.ndarray, alpha: float
               ) -> tuple[list[dict[str, Any]], dict[str, list[str]], dict[str, list[str]], np.ndarray]:
    """One metric's pair rows, which run is significantly better than which, and the runs told apart."""
    n_runs, n = x.shape[1], x.shape[0]
    lo, hi = ci
    dz, mde, wtl = stats.cohens_dz(d), paired_mde(d, alpha, COMPARE_POWER), stats.win_tie_loss(d)
    means, dmeans = x.mean(axis=0), d.mean(axis=0)
    significant = p_adj <= alpha
    better: dict[str, list[str]] = {name: [] for name in index_of}
    worse: dict[str, list[str]] = {name: [] for name in index_of}
    different = np.zeros((n_runs, n_runs), dtype=bool)
    rows = []
    for j, (a, b) in enumerate(pairs):
        if significant[j]:
            different[index_of[a], index_of[b]] = different[index_of[b], index_of[a]] = True
        if significant[j] and dmeans[j] != 0:
            winner, loser = (b, a) if dmeans[j] > 0 else (a, b)
            better[winner].append(loser)
            worse[loser].append(winner)
        rows.append({"metric": metric, "control": a, "treatment": b, "mean_control": float(means[index_of[a]]),
                     "mean_treatment": float(means[index_of[b]]), "delta": float(dmeans[j]),
                     "delta_ci_low": float(lo[n_runs + j]), "delta_ci_high": float(hi[n_runs + j]),
                     "p_value": float(p[j]), "p_adjusted": float(p_adj[j]), "significant": bool(significant[j]),
                     "cohens_dz": float(dz[j]), "mde": float(mde[j]), "wins": int(wtl[0, j]),
                     "ties": int(wtl[1, j]), "losses": int(wtl[2, j]), "n": n})
    return rows, better, worse, different


def _summary_rows(metric: str, names: list[str], means: np.ndarray, ci: tuple[np.ndarray, np.ndarray], n: int,
                  better: dict[str, list[str]], worse: dict[str, list[str]], letters: dict[str, str],
                  group: list[str], index_of: dict[str, int]) -> list[dict[str, Any]]:
    """One metric's summary rows: each run's mean and interval, markers and group."""
    lo, hi = ci
    best = float(means.max())
    rows = []
    for i, name in enumerate(names):
        better_sorted = sorted(better[name], key=index_of.__getitem__)
        rows.append({"metric": metric, "run": name, "letter": letters[name], "mean": float(means[i]),
                     "ci_low": float(lo[i]), "ci_high": float(hi[i]), "n": n, "better_than": better_sorted,
                     "worse_than": sorted(worse[name], key=index_of.__getitem__),
                     "marker": "".join(letters[o] for o in better_sorted), "best": bool(means[i] == best),
                     "group": group[i]})
    return rows


def _tukey_pairs(x: np.ndarray, ctrl: np.ndarray, trt: np.ndarray) -> np.ndarray:
    """Tukey's HSD p-values (paired form, over all runs) of the compared pairs."""
    matrix = stats.tukey_hsd(x, paired=True)
    out: np.ndarray = matrix[ctrl, trt]
    return out


@public
def compare(qrels: Any, runs: Mapping[str, Any] | Sequence[Any], metrics: Sequence[Any] | str, *,
            options: ComparisonOptions | None = None, **keywords: Any) -> Comparison:
    """Evaluate several runs on ``qrels`` and compare them.

    ``qrels`` and each run may be objects, nested dicts or file paths (anything ``ragrade.evaluate``
    takes). ``runs`` maps a name to a run; a plain sequence is named by the runs' names, else
    ``run_1, run_2, ...``. ``metrics`` are metric strings as for ``evaluate`` (``"P@[5,10]"`` expands to
    two metrics). ``options`` (a :class:`ragrade.ComparisonOptions`), or its fields as keywords
    (``baseline``, ``test``, ``correction``, ``alpha``, ``confidence``, ``n_resamples``, ``seed``,
    ``ci_method``; see :func:`compare_scores`), say how the runs are compared. The other keywords are those
    of :func:`ragrade.evaluate` (``profile``, ``matcher``, ``max_memory``, ``names``, ``rel_level`` and the
    policies of :class:`ragrade.policies.Policies`), with the same meaning and values: every run is evaluated
    through the same plan. So queries follow the engine's rules: by default a qrels query missing from a run
    scores 0, and a query without relevant judgments is left out (of the means and of the comparison).

    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> one = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"x": 2.0, "b": 1.0}, "q3": {"x": 2.0, "c": 1.0}}
    >>> two = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "x": 1.0}, "q3": {"c": 2.0, "x": 1.0}}
    >>> cmp = compare(qrels, {"one": one, "two": two}, ["rr"], n_resamples=1000, seed=0)
    >>> row = cmp.pair("rr", "one", "two")
    >>> print(f"delta {row['delta']:.4f}, wins/ties/losses {row['wins']}/{row['ties']}/{row['losses']}")
    delta 0.3333, wins/ties/losses 2/1/0
    """
    from ragrade.engine.plan import build_plan

    rest = dict(keywords)
    o = ComparisonOptions.take(rest, options)
    # the evaluation keywords of ragrade.evaluate (profile, matcher, max_memory, policies...), one plan
    plan = build_plan(qrels, name_runs(runs), metrics, many=True, **rest)
    results = dispatch_named(plan)
    cmp = compare_scores({name: r.per_query for name, r in results.items()}, plan.columns, options=o)
    holes = {name: r.hole_rate for name, r in results.items() if r.hole_rate is not None}
    if holes:
        cmp = dataclasses.replace(cmp, hole_rates={name: h.mean for name, h in holes.items()},
                                  hole_k=next(iter(holes.values())).k)
    return cmp
