"""The options of an evaluation, declared once for every command that evaluates (``evaluate``, ``compare``,
``report``, ``gate``): ``--profile``, ``--matcher``, ``--max-memory``, ``--names``, trec_eval's ``-M -J -l -c
-N``, ``--upper-grade`` and one option per policy. :func:`plan_keywords` turns them into the keywords of
:func:`ragrade.engine.plan.build_plan` (the same keywords ``ragrade.evaluate`` takes), so the commands only
parse options into the one plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ragrade import options as o
from ragrade.cli._options import option
from ragrade.cli._truth_options import truth_keywords, truth_options
from ragrade.errors import PolicyError
from ragrade.policies import Policies

#: The keyword arguments the options below add to a command (taken out by :func:`plan_keywords`).
OPTION_NAMES = ("profile", "matcher", "max_memory", "metric_names", "max_docs", "judged_only", "rel_level",
                "complete", "num_docs", "upper_grade", *Policies.choices())


def policy_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """One ``--<policy>`` option per named policy (their declarations: :data:`ragrade.options.POLICY_OPTIONS`)."""
    for name in reversed(list(Policies.choices())):
        f = option(o.POLICY_OPTIONS[name])(f)
    return f


def evaluation_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Every option of an evaluation (see the module docstring), each made from its declaration in
    :mod:`ragrade.options` (the keyword of ``ragrade.evaluate`` it fills takes the same values)."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        option(o.PROFILE), option(o.MATCHER), option(o.MAX_MEMORY),
        option(o.NAMES, dest="metric_names"),
        option(o.MAX_DOCS, "-M", "--max-docs"),
        click.option("-J", "--judged-only", "judged_only", is_flag=True,
                     help="trec_eval -J: remove unjudged documents before scoring (same as --unjudged condensed)."),
        option(o.REL_LEVEL, "-l", "--level"),
        click.option("-c", "--complete", is_flag=True,
                     help="trec_eval -c: queries of QRELS missing from RUN score 0 (ragrade's default; needed "
                          "with --profile trec_eval, which leaves them out)."),
        option(o.NUM_DOCS, "-N", "--num-docs"),
        option(o.UPPER_GRADE),
    ]
    f = truth_options(policy_options(f))
    for decorate in reversed(options):
        f = decorate(f)
    return f


def plan_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the options of :func:`evaluation_options` out of a command's ``kwargs`` and return them as the
    keywords of ``build_plan`` / ``ragrade.evaluate`` (``-J`` and ``-c`` written as the policies they
    set; unset options left out)."""
    truth = truth_keywords(kwargs)
    opts = {name: kwargs.pop(name) for name in OPTION_NAMES if name in kwargs}
    policies = {k: opts.pop(k) for k in list(opts) if k in Policies.choices()}
    if opts.pop("judged_only", False):
        if policies.get("unjudged") not in (None, "condensed"):
            raise PolicyError("-J/--judged-only and --unjudged " + str(policies["unjudged"]) + " disagree")
        policies["unjudged"] = "condensed"
    if opts.pop("complete", False):
        if policies.get("missing_run") not in (None, "zero"):
            raise PolicyError("-c/--complete and --missing-run " + str(policies["missing_run"]) + " disagree")
        policies["missing_run"] = "zero"
    names = opts.pop("metric_names", None)
    out = {k: v for k, v in {**opts, **policies}.items() if v is not None}
    if names is not None:
        out["names"] = names
    return {**out, **truth}
