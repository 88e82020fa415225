"""The command-line options of the ground truths beyond judged ids (character spans, nuggets, ...), the
counterparts of :data:`ragrade.engine.plan.TRUTH_OPTIONS`: every command that evaluates (``evaluate``,
``compare``, ``report``, ``gate``) takes them through :func:`ragrade.cli._plan_options.evaluation_options`,
and :func:`truth_keywords` turns them into the keywords the route of that ground truth reads.

Adding one: an entry of :data:`TRUTH_CLI_OPTIONS` (the keyword of ``TRUTH_OPTIONS`` it fills -> its click
option), nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

#: keyword (a name of ``TRUTH_OPTIONS``) -> the click option that fills it (its parameter name = the keyword).
TRUTH_CLI_OPTIONS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "hops": click.option("--hops", default=None, metavar="COLUMN",
                         help="Traces: the ground-truth column (numbers) naming each relevant document's hop "
                              "(hop_success; docs/traces.md)."),
}


def truth_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Every option of :data:`TRUTH_CLI_OPTIONS`, in their order."""
    for option in reversed(list(TRUTH_CLI_OPTIONS.values())):
        f = option(f)
    return f


def truth_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the options of :func:`truth_options` out of a command's ``kwargs``: the ones given, as keywords."""
    out = {name: kwargs.pop(name) for name in TRUTH_CLI_OPTIONS if name in kwargs}
    return {k: v for k, v in out.items() if v is not None and v != ()}
