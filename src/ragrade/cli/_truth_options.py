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
TRUTH_CLI_OPTIONS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {}
# nuggets (issue 38, docs/nuggets.md)
TRUTH_CLI_OPTIONS["assignments"] = click.option(
    "--assignments", "assignments", type=click.Path(exists=True, dir_okay=False), default=None,
    help="Nugget assignments (ragrade nuggets assign): which passages support which nuggets of the QRELS nuggets file.")
TRUTH_CLI_OPTIONS["judge"] = click.option(
    "--nugget-judge", "judge", default=None, metavar="BACKEND:MODEL",
    help="Assign the nuggets the assignments lack with this LLM (e.g. openai:gpt-4o-mini; server from "
         "RAGRADE_JUDGE_BASE_URL, key from OPENAI_API_KEY; cached). Needs --passages.")
TRUTH_CLI_OPTIONS["passages"] = click.option(
    "--passages", "passages", type=click.Path(exists=True, dir_okay=False), default=None,
    help="Corpus (JSONL, Parquet or TSV: id, text) with the passages' texts for --nugget-judge.")


def truth_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Every option of :data:`TRUTH_CLI_OPTIONS`, in their order."""
    for option in reversed(list(TRUTH_CLI_OPTIONS.values())):
        f = option(f)
    return f


def truth_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the options of :func:`truth_options` out of a command's ``kwargs``: the ones given, as keywords."""
    out = {name: kwargs.pop(name) for name in TRUTH_CLI_OPTIONS if name in kwargs}
    return {k: v for k, v in out.items() if v is not None and v != ()}
