"""The options of an evaluation, declared once for every command that evaluates (``evaluate``, ``compare``,
``report``, ``gate``): ``--profile``, ``--matcher``, ``--max-memory``, ``--names``, trec_eval's ``-M -J -l -c
-N``, ``--upper-grade`` and one option per policy. :func:`plan_keywords` turns them into the keywords of
:func:`ragrade.engine.plan.build_plan` (the same keywords ``ragrade.evaluate`` takes), so the commands only
parse options into the one plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ragrade.cli._truth_options import truth_keywords, truth_options
from ragrade.errors import PolicyError
from ragrade.policies import Policies

POLICY_HELP = {
    "missing_run": "Query in the ground truth but not in the run",
    "missing_qrels": "Query in the run but not in the ground truth",
    "no_relevant": "Query with no relevant judgment (R = 0)",
    "duplicates": "Same item twice in one ranking",
    "ties": "Order of equal scores",
    "identical_ids": "Items whose id equals the query id",
    "empty_run": "Query with an empty retrieved list",
    "unjudged": "Retrieved document without a judgment: nonrelevant (trec_eval), condensed (removed before "
                "scoring, as trec_eval -J), bounds (lower and upper bound)",
}

#: The keyword arguments the options below add to a command (taken out by :func:`plan_keywords`).
OPTION_NAMES = ("profile", "matcher", "max_memory", "metric_names", "max_docs", "judged_only", "rel_level",
                "complete", "num_docs", "upper_grade", *Policies.choices())


def policy_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """One ``--<policy>`` option per named policy."""
    defaults = Policies()
    for name, choices in reversed(list(Policies.choices().items())):
        flag = "--" + name.replace("_", "-")
        f = click.option(
            flag, name, type=click.Choice(choices), default=None,
            help=f"{POLICY_HELP.get(name, name)} (default: {getattr(defaults, name)}).",
        )(f)
    return f


def evaluation_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Every option of an evaluation (see the module docstring)."""
    options = [
        click.option("--profile", default=None, metavar="PROFILE",
                     help="Score under a peer's conventions (autorag, ragas, continuous-eval, remem, llamaindex, "
                          "deepeval, trec_eval, pytrec_eval, beir, ir_measures, ranx). See docs/profiles.md."),
        click.option("--matcher", default=None, metavar="MATCHER",
                     help="Items are texts matched by MATCHER (exact, fuzzy, rouge_l, token_f1, ...; 'profile' for "
                          "a list profile's own). See docs/matching.md."),
        click.option("--max-memory", default=None, metavar="SIZE",
                     help="Evaluate in about SIZE of memory (e.g. 4GiB), reading the files piece by piece; same "
                          "results. Files too large for the memory available are read so anyway. See docs/scale.md."),
        click.option("--names", "metric_names", type=click.Choice(["ragrade", "trec_eval"]), default=None,
                     help="How bare metric names are read: trec_eval reads every trec_eval name as trec_eval does "
                          "(recall = recall_5 ... recall_1000); ragrade keeps ragrade's meaning of its own family "
                          "names (recall = the whole list's recall) and reads every other trec_eval name as "
                          "trec_eval does. Default: trec_eval under --profile trec_eval or pytrec_eval, else ragrade."),
        click.option("-M", "--max-docs", "max_docs", type=click.IntRange(min=1), default=None,
                     help="trec_eval -M: read only the first N documents of each ranking."),
        click.option("-J", "--judged-only", "judged_only", is_flag=True,
                     help="trec_eval -J: remove unjudged documents before scoring (same as --unjudged condensed)."),
        click.option("-l", "--level", "rel_level", type=click.IntRange(min=1), default=None,
                     help="trec_eval -l: relevance level of every metric not given one (e.g. P(rel=2)@5)."),
        click.option("-c", "--complete", is_flag=True,
                     help="trec_eval -c: queries of QRELS missing from RUN score 0 (ragrade's default; needed "
                          "with --profile trec_eval, which leaves them out)."),
        click.option("-N", "--num-docs", "num_docs", type=click.IntRange(min=0), default=None,
                     help="trec_eval -N: documents in the collection (utility's fourth coefficient)."),
        click.option("--upper-grade", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="With --unjudged bounds: the grade of an unjudged document in the upper bound "
                          "(default: the highest grade in QRELS)."),
    ]
    f = truth_options(policy_options(f))
    for option in reversed(options):
        f = option(f)
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
