"""Compare runs: bootstrap confidence intervals, paired significance tests, corrections, effect sizes.

``compare(qrels, runs, metrics, ...)`` evaluates and compares; ``compare_scores(per_query, ...)`` compares
per-query scores you already have. Both return a :class:`Comparison` with ``summary`` and ``pairs`` tables
and exports (``to_markdown``, ``to_latex``, ``to_csv``, ``to_json``, ``to_rich``). The statistics live in
:mod:`ragrade.compare.stats` and work on plain NumPy arrays.
"""

from __future__ import annotations

from ragrade.compare.core import Comparison, compare, compare_scores, run_letters
from ragrade.compare.stats import (
    CORRECTIONS,
    TESTS,
    adjust_pvalues,
    bootstrap_ci,
    bootstrap_test,
    cohens_dz,
    paired_test,
    randomization_test,
    t_test,
    wilcoxon_test,
    win_tie_loss,
)

__all__ = [
    "CORRECTIONS",
    "TESTS",
    "Comparison",
    "adjust_pvalues",
    "bootstrap_ci",
    "bootstrap_test",
    "cohens_dz",
    "compare",
    "compare_scores",
    "paired_test",
    "randomization_test",
    "run_letters",
    "t_test",
    "wilcoxon_test",
    "win_tie_loss",
]
