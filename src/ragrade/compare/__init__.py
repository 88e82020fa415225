"""Compare runs: bootstrap confidence intervals, paired significance tests, corrections, effect sizes.

``compare(qrels, runs, metrics, ...)`` evaluates and compares; ``compare_scores(per_query, ...)`` compares
per-query scores you already have. Both return a :class:`Comparison` with ``summary`` and ``pairs`` tables
and exports (``to_markdown``, ``to_latex``, ``to_csv``, ``to_json``, ``to_rich``). The statistics live in
:mod:`ragrade.compare.stats` and work on plain NumPy arrays.

The module itself is callable: ``ragrade.compare(qrels, runs, metrics)`` is :func:`compare`, so the
package can be exposed at the top level as ``ragrade.compare`` while ``ragrade.compare.stats`` and
``import ragrade.compare.stats`` keep working (binding the function to that name would shadow the package).
"""

from __future__ import annotations

import sys
import types
from typing import Any

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


class _CallableModule(types.ModuleType):
    """This package's module type: calling it calls :func:`compare`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Comparison:
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
