"""The result of a comparison: :class:`Comparison` (tables, settings, exports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

import ragrade.comparison.export as export
from ragrade.comparison.stats import CORRECTION_LABELS, TEST_LABELS


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`ragrade.compare` / :func:`ragrade.comparison.compare_scores`.

    Attributes:
        runs: run names, in input order; ``letters`` gives each one's marker letter.
        metrics: metric names, in input order.
        summary: one row per (metric, run): ``letter``, ``mean``, ``ci_low``, ``ci_high``, ``n``,
            ``better_than`` (names of runs this one is significantly better than, after correction),
            ``worse_than``, ``marker`` (their letters), ``best`` (highest mean of the metric) and
            ``group`` (significance-group letters, see :func:`ragrade.comparison.stats.significance_groups`;
            empty when only pairs against a baseline were tested).
        pairs: one row per (metric, control, treatment): ``mean_control``, ``mean_treatment``, ``delta``
            (treatment minus control), ``delta_ci_low``/``delta_ci_high`` (bootstrap interval of the mean
            difference), ``p_value``, ``p_adjusted``, ``significant`` (``p_adjusted <= alpha``),
            ``cohens_dz`` (mean difference / sd of differences), ``wins``/``ties``/``losses`` (queries where
            the treatment scores higher/equal/lower), ``n``.
        scores: per-query scores used, ``{run: DataFrame(index=query id, columns=metrics)}``.
        baseline: control run of every pair, or ``None`` when all pairs were compared.
        ci_methods: how each metric's intervals were computed (``"saddlepoint"`` or ``"resample"``).
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
    ci_methods: dict[str, str] = field(default_factory=dict)
    #: Per run, the mean share of unjudged documents in the top ``hole_k`` (empty when the scores were
    #: given without judgments, as to :func:`compare_scores`).
    hole_rates: dict[str, float] = field(default_factory=dict)
    hole_k: int | None = None
    #: Per-slice comparison (:class:`ragrade.comparison.slice_compare.SliceComparison`), or None; a copy with it
    #: comes from :func:`ragrade.comparison.slice_compare.by_slices`.
    slices: Any = None

    def hole_note(self) -> str:
        """One sentence on the hole rates (empty without them); it warns when they differ by more than ten
        points, since a run with more unjudged documents is scored lower by construction."""
        if not self.hole_rates or self.hole_k is None:
            return ""
        shown = ", ".join(f"{r} {100 * self.hole_rates[r]:.1f}%" for r in self.runs if r in self.hole_rates)
        text = f"Hole rate@{self.hole_k} (unjudged share of the top {self.hole_k}): {shown}."
        values = [v for v in self.hole_rates.values() if v == v]
        if values and max(values) - min(values) > 0.10:
            text += (" The runs differ by more than ten points: the one with more holes is scored lower by "
                     "construction, so compare them with unjudged='bounds' or 'condensed' too.")
        return text
    @property
    def options(self) -> Any:
        """The :class:`ragrade.ComparisonOptions` this comparison was made with (its interval method:
        ``auto``)."""
        from ragrade.options import ComparisonOptions

        return ComparisonOptions(baseline=self.baseline, test=self.test, correction=self.correction,
                                 alpha=self.alpha, confidence=self.confidence, n_resamples=self.n_resamples,
                                 seed=self.seed)

    # ----------------------------------------------------------------- accessors
    def mean(self, metric: str, run: str) -> float:
        value: Any = self.summary.at[(metric, run), "mean"]
        return float(value)

    def pair(self, metric: str, control: str, treatment: str) -> pd.Series:
        """The row of :attr:`pairs` for (metric, control, treatment)."""
        return pd.Series(self.pairs.loc[[(metric, control, treatment)]].iloc[0])

    @property
    def has_groups(self) -> bool:
        """Whether significance groups were computed (all pairs compared)."""
        return bool(len(self.summary)) and bool((self.summary["group"] != "").any())

    def settings(self) -> dict[str, Any]:
        """How the comparison was made, as plain data."""
        return {
            "baseline": self.baseline,
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "ci_methods": dict(self.ci_methods),
        }

    @property
    def description(self) -> str:
        """One sentence saying how the comparison was made (used in captions and footers)."""
        return self.describe()

    def describe(self, ci: bool = True) -> str:
        """:attr:`description`; with ``ci=False`` (a table that shows means without their intervals) the
        first sentence says "Means" and nothing about intervals."""
        test = TEST_LABELS[self.test]
        if self.test in ("randomization", "bootstrap"):
            test += f" ({self.n_resamples} resamples)"
        scope = f"against baseline {self.baseline}" if self.baseline is not None else "between all pairs"
        if self.test == "tukey":
            family = "family-wise error controlled over all pairs of runs"
        else:
            family = f"{CORRECTION_LABELS[self.correction]} correction per metric"
        methods = set(self.ci_methods.values())
        resampled = f"{self.n_resamples} resamples, seed {self.seed}"
        if methods == {"saddlepoint"}:
            how = "saddlepoint approximation of the bootstrap distribution"
        elif methods == {"resample"} or not methods:
            how = resampled
        else:
            how = f"saddlepoint approximation where a metric has 100 queries or more, else {resampled}"
        level = f"{self.confidence * 100:.4g}"
        first = f"Means with {level}% percentile bootstrap CIs ({how}). " if ci else "Means. "
        return (
            first + f"Two-sided {test} {scope}, {family}, alpha = {self.alpha:g}; "
            "a superscript letter marks a run significantly better than the run with that letter."
        )

    # ----------------------------------------------------------------- exports
    def to_dict(self) -> dict[str, Any]:
        return export.to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return export.to_json(self, indent=indent)

    def to_csv(self, table: str = "summary") -> str:
        return export.to_csv(self, table=table)

    def to_markdown(self, digits: int = 4, ci: bool = True) -> str:
        return export.to_markdown(self, digits=digits, ci=ci)

    def to_latex(
        self, digits: int = 4, ci: bool = False, caption: str | None = None, label: str | None = None
    ) -> str:
        return export.to_latex(self, digits=digits, ci=ci, caption=caption, label=label)

    def to_rich(self, digits: int = 4) -> Any:
        return export.to_rich(self, digits=digits)

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
