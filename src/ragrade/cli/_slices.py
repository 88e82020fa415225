"""The ``--slices FILE[:COLUMN]`` option shared by ``evaluate``, ``compare``, ``gate`` and ``report``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click


def slices_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--slices`` (repeatable) as the keyword argument ``slices`` (a tuple of specs)."""
    return click.option(
        "--slices", "slices", multiple=True, metavar="FILE[:COLUMN]",
        help="Query labels for per-slice results: a TSV/CSV/JSONL/Parquet file with a query id column and "
        "label columns (all of them, or only COLUMN). Repeatable.",
    )(func)


def load_slices(specs: Sequence[str]) -> Any:
    """The labels of every ``--slices`` spec as one DataFrame (None when there is none)."""
    if not specs:
        return None
    from ragrade.engine.slices import slice_labels

    return slice_labels(list(specs))


def slice_correction_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--slice-correction`` (``slice_correction``): the correction across the slices of a column."""
    from ragrade.comparison.stats import CORRECTIONS

    return click.option(
        "--slice-correction", "slice_correction", type=click.Choice(["none", *CORRECTIONS]), default="holm",
        show_default=True, help="With --slices: multiple-testing correction of each pair's p-values across the "
        "slices of a column.",
    )(func)
