"""Compare runs: bootstrap confidence intervals, paired significance tests, Tukey's HSD, corrections,
effect sizes and significance groups.

``compare(qrels, runs, metrics, ...)`` (also ``ragrade.compare``) evaluates and compares;
``compare_scores(per_query, ...)`` compares per-query scores you already have. Both return a
:class:`Comparison` with ``summary`` and ``pairs`` tables and exports (``to_markdown``, ``to_latex``,
``to_csv``, ``to_json``, ``to_rich``).

Modules, each depending only on the ones before it: :mod:`~ragrade.comparison.stats` (the statistics, on
plain NumPy arrays), :mod:`~ragrade.comparison.export` (the exports), :mod:`~ragrade.comparison.result` (:class:`Comparison`),
:mod:`~ragrade.comparison.core` (:func:`compare`, :func:`compare_scores`). How numbers are written is the
leaf module :mod:`ragrade.formatting`, shared with the engine's slice tables and the report.
"""

from __future__ import annotations

from ragrade.comparison.core import (
    compare,
    compare_scores,
    compared_pairs,
    metric_labels,
    name_runs,
    run_letters,
)
from ragrade.comparison.result import Comparison
from ragrade.comparison.stats import (
    CI_METHODS,
    CORRECTIONS,
    TESTS,
    adjust_pvalues,
    bootstrap_ci,
    bootstrap_test,
    cohens_dz,
    paired_test,
    randomization_test,
    saddlepoint_ci,
    significance_groups,
    t_test,
    tukey_hsd,
    wilcoxon_test,
    win_tie_loss,
)

__all__ = [
    "CI_METHODS",
    "CORRECTIONS",
    "TESTS",
    "Comparison",
    "adjust_pvalues",
    "bootstrap_ci",
    "bootstrap_test",
    "cohens_dz",
    "compare",
    "compare_scores",
    "compared_pairs",
    "metric_labels",
    "name_runs",
    "paired_test",
    "randomization_test",
    "run_letters",
    "saddlepoint_ci",
    "significance_groups",
    "t_test",
    "tukey_hsd",
    "wilcoxon_test",
    "win_tie_loss",
]
