"""Compare several runs on the same queries: means with bootstrap intervals, paired tests, effect sizes."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.compare import stats
from ragrade.errors import InputError, RagradeWarning


def run_letters(n: int) -> list[str]:
    """Short labels ``a, b, ..., z, aa, ab, ...`` for ``n`` runs (used as significance markers)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: list[str] = []
    size = 1
    while len(out) < n:
        for combo in itertools.product(letters, repeat=size):
            out.append("".join(combo))
            if len(out) == n:
                break
        size += 1
    return out


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare` / :func:`compare_scores`.

    Attributes:
        runs: run names, in input order; ``letters`` gives each one's marker letter.
        metrics: metric names, in input order.
        summary: one row per (metric, run): ``letter``, ``mean``, ``ci_low``, ``ci_high``, ``n``,
            ``better_than`` (names of runs this one is significantly better than, after correction),
            ``worse_than``, ``marker`` (their letters) and ``best`` (highest mean of the metric).
        pairs: one row per (metric, control, treatment): ``mean_control``, ``mean_treatment``, ``delta``
            (treatment minus control), ``delta_ci_low``/``delta_ci_high`` (bootstrap interval of the mean
            difference), ``p_value``, ``p_adjusted``, ``significant`` (``p_adjusted <= alpha``),
            ``cohens_dz`` (mean difference / sd of differences), ``wins``/``ties``/``losses`` (queries where
            the treatment scores higher/equal/lower), ``n``.
        scores: per-query scores used, ``{run: DataFrame(index=query id, columns=metrics)}``.
        baseline: control run of every pair, or ``None`` when all pairs were compared.
    """

    runs: list[str]
    metrics: list[str]
    summary: pd.DataFrame
    pairs: pd.DataFrame
    scores: dict[str, pd.DataFrame]
    baseline: str | None
    test: str
    correction: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: int | None
    letters: dict[str, str] = field(default_factory=dict)

    # ----------------------------------------------------------------- accessors
    def mean(self, metric: str, run: str) -> float:
        return float(self.summary.loc[(metric, run), "mean"])

    def pair(self, metric: str, control: str, treatment: str) -> pd.Series:
        """The row of :attr:`pairs` for (metric, control, treatment)."""
        return self.pairs.loc[(metric, control, treatment)]

    @property
    def description(self) -> str:
        """One sentence saying how the comparison was made (used in captions and footers)."""
        test = stats.TEST_LABELS[self.test]
        if self.test in ("randomization", "bootstrap"):
            test += f" ({self.n_resamples} resamples)"
        corr = stats.CORRECTION_LABELS[self.correction]
        scope = f"against baseline {self.baseline}" if self.baseline is not None else "between all pairs"
        ci = f"{self.confidence * 100:.4g}"
        return (
            f"Means with {ci}% percentile bootstrap CIs ({self.n_resamples} resamples, seed {self.seed}). "
            f"Two-sided {test} {scope}, {corr} correction per metric, alpha = {self.alpha:g}; "
            "a superscript letter marks a run significantly better than the run with that letter."
        )

    # ----------------------------------------------------------------- exports
    def to_dict(self) -> dict[str, Any]:
        from ragrade.compare.export import to_dict

        return to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        from ragrade.compare.export import to_json

        return to_json(self, indent=indent)

    def to_csv(self, table: str = "summary") -> str:
        from ragrade.compare.export import to_csv

        return to_csv(self, table=table)

    def to_markdown(self, digits: int = 4, ci: bool = True) -> str:
        from ragrade.compare.export import to_markdown

        return to_markdown(self, digits=digits, ci=ci)

    def to_latex(
        self, digits: int = 4, ci: bool = False, caption: str | None = None, label: str | None = None
    ) -> str:
        from ragrade.compare.export import to_latex

        return to_latex(self, digits=digits, ci=ci, caption=caption, label=label)

    def to_rich(self, digits: int = 4) -> Any:
        from ragrade.compare.export import to_rich

        return to_rich(self, digits=digits)

    def __repr__(self) -> str:
        n = sorted({int(v) for v in self.summary["n"]}) if len(self.summary) else []
        return (
            f"Comparison(runs={self.runs!r}, metrics={self.metrics!r}, baseline={self.baseline!r}, "
            f"test={self.test!r}, correction={self.correction!r}, alpha={self.alpha:g}, queries={n}, "
            f"seed={self.seed!r})"
        )

    def __rich__(self) -> Any:
        return self.to_rich()

    def __str__(self) -> str:
        return self.to_markdown()


# --------------------------------------------------------------------------------------------- inputs
def _per_query_frame(value: Any, name: str) -> pd.DataFrame:
    """Per-query scores of one run as a DataFrame (index = query id as str, columns = metrics)."""
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
    frame = frame.copy()
    frame.index = frame.index.map(str)
    if frame.index.has_duplicates:
        dup = frame.index[frame.index.duplicated()][0]
        raise InputError(f"scores of run {name!r} list a query twice", query=dup)
    frame.columns = [str(c) for c in frame.columns]
    return frame


def compare_scores(
    scores: Mapping[str, Any],
    metrics: Sequence[str] | None = None,
    *,
    baseline: str | None = None,
    test: str = "randomization",
    correction: str | None = None,
    alpha: float = 0.05,
    confidence: float | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> Comparison:
    """Compare runs given their per-query scores (the engine-independent core of :func:`compare`).

    Args:
        scores: ``{run name: per-query scores}``; each value is a ``Result`` (its ``per_query`` is used), a
            DataFrame indexed by query id with one column per metric, or a mapping ``{metric: {qid: v}}``.
        metrics: metrics to compare (default: the columns common to all runs, in the first run's order).
        baseline: compare every run with this one; ``None`` compares all pairs (earlier run = control).
        test: ``"randomization"`` (default; NumPy only), ``"bootstrap"``, ``"t"`` or ``"wilcoxon"``
            (SciPy, extra ``stats``).
        correction: ``None``, ``"bonferroni"``, ``"holm"`` or ``"bh"``, applied per metric over its pairs.
        alpha: significance level for ``significant`` and markers (``p_adjusted <= alpha``).
        confidence: level of the bootstrap intervals (default ``1 - alpha``).
        n_resamples: resamples for the bootstrap intervals and the resampling tests.
        seed: seed of ``numpy.random.default_rng``; equal seeds give equal results.

    Queries are aligned by id. A query missing from some run, or with a NaN score for a metric in some
    run, is left out of that metric (all runs of a metric use the same queries) with a
    :class:`~ragrade.errors.RagradeWarning` giving the count; a query that is NaN in every run (the
    engine's exclusion of queries without relevant judgments) is left out silently, as in the means.
    """
    if not isinstance(scores, Mapping) or len(scores) < 2:
        raise InputError("compare needs a mapping of at least two named runs", value=type(scores).__name__)
    names = [str(k) for k in scores]
    if len(set(names)) != len(names):
        raise InputError("run names must be distinct", value=names)
    frames = {str(k): _per_query_frame(v, str(k)) for k, v in scores.items()}
    if metrics is None:
        first = frames[names[0]]
        metrics = [c for c in first.columns if all(c in f.columns for f in frames.values())]
        if not metrics:
            raise InputError("the runs have no metric column in common")
    else:
        metrics = [str(m) for m in metrics]
        if not metrics:
            raise InputError("no metric given")
        if len(set(metrics)) != len(metrics):
            raise InputError("a metric is listed twice", value=metrics)
        for name, frame in frames.items():
            missing = [m for m in metrics if m not in frame.columns]
            if missing:
                raise InputError(
                    f"run {name!r} has no scores for metric {missing[0]!r} (it has {list(frame.columns)})"
                )
    if baseline is not None and str(baseline) not in frames:
        raise InputError(f"baseline is not one of the runs {names}", value=baseline)
    baseline = None if baseline is None else str(baseline)
    test = stats.normalize_test(test)
    correction = stats.normalize_correction(correction)
    if not 0.0 < float(alpha) < 1.0:
        raise InputError("alpha must be strictly between 0 and 1", value=alpha)
    alpha = float(alpha)
    confidence = 1.0 - alpha if confidence is None else float(confidence)
    n_resamples = int(n_resamples)
    if n_resamples < 1:
        raise InputError("n_resamples must be a positive integer", value=n_resamples)

    # Align queries: the union of ids, in first-seen order.
    all_ids = pd.Index(list(dict.fromkeys(itertools.chain.from_iterable(f.index for f in frames.values()))))
    aligned: dict[str, pd.DataFrame] = {}
    for name in names:
        frame = frames[name].reindex(index=all_ids, columns=metrics)
        for metric in metrics:
            col = pd.to_numeric(frame[metric], errors="coerce")
            bad = (col.isna() & frame[metric].notna()) | np.isinf(col.to_numpy(dtype=np.float64))
            if bad.any():
                q = str(frame.index[np.flatnonzero(bad.to_numpy())[0]])
                raise InputError(
                    f"run {name!r}, metric {metric!r}: per-query scores must be finite numbers",
                    query=q,
                    value=frame[metric].iloc[np.flatnonzero(bad.to_numpy())[0]],
                )
        aligned[name] = frame.apply(pd.to_numeric).astype(np.float64)

    if baseline is None:
        pairs = list(itertools.combinations(names, 2))
    else:
        pairs = [(baseline, name) for name in names if name != baseline]
    index_of = {name: i for i, name in enumerate(names)}
    letters = dict(zip(names, run_letters(len(names)), strict=True))

    ctrl = np.array([index_of[a] for a, _ in pairs], dtype=np.intp)
    trt = np.array([index_of[b] for _, b in pairs], dtype=np.intp)
    n_runs, n_pairs = len(names), len(pairs)

    # Per metric: the queries scored in every run, their scores x (n_q, n_runs), differences d (n_q, n_pairs).
    kept: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for metric in metrics:
        mat = np.column_stack([aligned[name][metric].to_numpy() for name in names])
        nan = np.isnan(mat)
        keep = ~nan.any(axis=1)
        # NaN in every run is the engine's own exclusion (e.g. no relevant judgments), already reported by
        # it and left out of its means too; NaN or absence in only some runs is worth a warning here.
        partial = int((nan.any(axis=1) & ~nan.all(axis=1)).sum())
        if partial:
            warnings.warn(
                f"{metric}: {partial} of {len(all_ids)} queries are missing or NaN in some runs only and are "
                "left out of this metric's comparison",
                RagradeWarning,
                stacklevel=2,
            )
        if not keep.any():
            raise InputError(f"{metric}: no query has a score in every run")
        x = mat[keep]
        kept[metric] = (keep, x, x[:, trt] - x[:, ctrl])

    # Metrics scored on the same queries form a group, resampled together: one bootstrap pass and one
    # test pass over all their columns. Each group gets two independent streams spawned from the seed
    # (intervals, test), in order of the group's first metric; since every resample is drawn for all
    # columns at once, a metric's numbers do not depend on which other metrics share its group.
    groups: dict[bytes, list[str]] = {}
    for metric in metrics:
        groups.setdefault(np.packbits(kept[metric][0]).tobytes(), []).append(metric)
    children = np.random.default_rng(seed).spawn(2 * len(groups))
    ci_of: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    p_of: dict[str, np.ndarray] = {}
    for gi, members in enumerate(groups.values()):
        block = np.column_stack([np.column_stack([kept[m][1], kept[m][2]]) for m in members])
        lo_all, hi_all = stats.bootstrap_ci(block, n_resamples, confidence, children[2 * gi])
        width = n_runs + n_pairs
        d_cols = np.concatenate([np.arange(k * width + n_runs, (k + 1) * width) for k in range(len(members))])
        p_all = stats.paired_test(block[:, d_cols], test, n_resamples, children[2 * gi + 1])
        for k, m in enumerate(members):
            ci_of[m] = (lo_all[k * width : (k + 1) * width], hi_all[k * width : (k + 1) * width])
            p_of[m] = p_all[k * n_pairs : (k + 1) * n_pairs]

    summary_rows: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    used_scores: dict[str, dict[str, pd.Series]] = {name: {} for name in names}
    for metric in metrics:
        keep, x, d = kept[metric]
        n = x.shape[0]
        for name in names:
            used_scores[name][metric] = pd.Series(x[:, index_of[name]], index=all_ids[keep])
        lo, hi = ci_of[metric]
        p = p_of[metric]
        p_adj = stats.adjust_pvalues(p, correction)
        dz = stats.cohens_dz(d)
        wtl = stats.win_tie_loss(d)
        means = x.mean(axis=0)
        dmeans = d.mean(axis=0)
        significant = p_adj <= alpha

        better: dict[str, list[str]] = {name: [] for name in names}
        worse: dict[str, list[str]] = {name: [] for name in names}
        for j, (a, b) in enumerate(pairs):
            if significant[j] and dmeans[j] != 0:
                winner, loser = (b, a) if dmeans[j] > 0 else (a, b)
                better[winner].append(loser)
                worse[loser].append(winner)
            pair_rows.append(
                {
                    "metric": metric,
                    "control": a,
                    "treatment": b,
                    "mean_control": float(means[index_of[a]]),
                    "mean_treatment": float(means[index_of[b]]),
                    "delta": float(dmeans[j]),
                    "delta_ci_low": float(lo[len(names) + j]),
                    "delta_ci_high": float(hi[len(names) + j]),
                    "p_value": float(p[j]),
                    "p_adjusted": float(p_adj[j]),
                    "significant": bool(significant[j]),
                    "cohens_dz": float(dz[j]),
                    "wins": int(wtl[0, j]),
                    "ties": int(wtl[1, j]),
                    "losses": int(wtl[2, j]),
                    "n": n,
                }
            )
        best = float(means.max())
        for i, name in enumerate(names):
            better_sorted = sorted(better[name], key=index_of.__getitem__)
            summary_rows.append(
                {
                    "metric": metric,
                    "run": name,
                    "letter": letters[name],
                    "mean": float(means[i]),
                    "ci_low": float(lo[i]),
                    "ci_high": float(hi[i]),
                    "n": n,
                    "better_than": better_sorted,
                    "worse_than": sorted(worse[name], key=index_of.__getitem__),
                    "marker": "".join(letters[o] for o in better_sorted),
                    "best": bool(means[i] == best),
                }
            )

    summary = pd.DataFrame(summary_rows).set_index(["metric", "run"])
    pair_frame = pd.DataFrame(pair_rows)
    if pair_frame.empty:  # a single run against itself cannot happen (>= 2 runs); keep columns anyway
        pair_frame = pd.DataFrame(columns=["metric", "control", "treatment"])
    pair_frame = pair_frame.set_index(["metric", "control", "treatment"])
    per_run = {name: pd.DataFrame(cols) for name, cols in used_scores.items()}
    return Comparison(
        runs=names,
        metrics=list(metrics),
        summary=summary,
        pairs=pair_frame,
        scores=per_run,
        baseline=baseline,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        letters=letters,
    )


def _name_runs(runs: Sequence[Any]) -> dict[str, Any]:
    """Name a sequence of runs by their ``name`` when every one has a distinct one, else ``run_1, ...``."""
    names = [getattr(r, "name", None) for r in runs]
    if all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names):
        return dict(zip(names, runs, strict=True))
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
    return labels


def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Sequence[Any] | str,
    *,
    baseline: str | None = None,
    test: str = "randomization",
    correction: str | None = None,
    alpha: float = 0.05,
    confidence: float | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    **policies: Any,
) -> Comparison:
    """Evaluate several runs on ``qrels`` and compare them (see :func:`compare_scores` for the options).

    ``qrels`` and each run may be objects, nested dicts or file paths (anything ``ragrade.evaluate``
    takes). ``runs`` maps a name to a run; a plain sequence is named ``run_1, run_2, ...``. ``metrics`` are
    metric strings as for ``evaluate`` (``"P@[5,10]"`` expands to two metrics). Other keyword arguments
    are evaluation policies (:class:`ragrade.policies.Policies`), so queries follow the engine's rules: by
    default a qrels query missing from a run scores 0, and a query without relevant judgments is left out
    (of the means and of the comparison).

    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> one = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"x": 2.0, "b": 1.0}, "q3": {"x": 2.0, "c": 1.0}}
    >>> two = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "x": 1.0}, "q3": {"c": 2.0, "x": 1.0}}
    >>> cmp = compare(qrels, {"one": one, "two": two}, ["rr"], n_resamples=1000, seed=0)
    >>> row = cmp.pair("rr", "one", "two")
    >>> print(f"delta {row['delta']:.4f}, wins/ties/losses {row['wins']}/{row['ties']}/{row['losses']}")
    delta 0.3333, wins/ties/losses 2/1/0
    """
    from ragrade.engine.core import Evaluator

    labels = metric_labels(metrics)
    if not isinstance(runs, Mapping):
        runs = _name_runs(runs)
    evaluator = Evaluator(qrels, labels, **policies)
    per_query = {str(name): evaluator.evaluate(run).per_query for name, run in runs.items()}
    return compare_scores(
        per_query,
        labels,
        baseline=baseline,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
    )
