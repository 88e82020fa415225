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
# character spans (issue 35; ragrade.spans.route, docs/spans.md)
TRUTH_CLI_OPTIONS.update({
    "chunks": click.option("--chunks", "chunks", default=None, metavar="CHUNKS",
                           help="Chunk map of the run's chunk ids: (chunk_id, doc, start, end) rows, JSONL/CSV/TSV/"
                                "Parquet. QRELS is then a span file (query, doc, start, end) or judgments of "
                                "documents or chunks. See docs/spans.md."),
    "corpus": click.option("--corpus", "corpus", default=None, metavar="DIR|FILE",
                           help="The texts of the documents or passages: a folder of text files or a corpus file "
                                "(JSONL/Parquet/TSV of id and text). Spans: checks them and locates retrieved texts; "
                                "nuggets: the passages --nugget-judge reads."),
    "span_threshold": click.option("--span-threshold", "span_threshold", type=click.FloatRange(0, 1, min_open=True),
                                   default=None, metavar="SHARE",
                                   help="Spans projected onto chunks for id metrics: the share a chunk needs to "
                                        "be relevant (default: any overlap)."),
    "span_rule": click.option("--span-rule", "span_rule", type=click.Choice(["chunk", "gold", "iou"]), default=None,
                              help="What --span-threshold measures: the share of the chunk that is gold (chunk, "
                                   "default), the share of a gold span the chunk holds (gold), or their IoU."),
    "span_levels": click.option("--span-levels", "span_levels", type=click.IntRange(min=1), default=None,
                                metavar="L", help="Grades of projected chunks: L > 1 grades by share (1..L)."),
    "aggregate": click.option("--aggregate", "aggregate", type=click.Choice(["maxp", "firstp", "sump"]), default=None,
                             help="Id metrics on the run aggregated to documents (MaxP: pyserini's --max-passage)."),
})
# nuggets (issue 38, docs/nuggets.md)
TRUTH_CLI_OPTIONS["assignments"] = click.option(
    "--assignments", "assignments", type=click.Path(exists=True, dir_okay=False), default=None,
    help="Nugget assignments (ragrade nuggets assign): which passages support which nuggets of the QRELS nuggets file.")
TRUTH_CLI_OPTIONS["judge"] = click.option(
    "--nugget-judge", "judge", default=None, metavar="BACKEND:MODEL",
    help="Assign the nuggets the assignments lack with this LLM (e.g. openai:gpt-4o-mini; server from "
         "RAGRADE_JUDGE_BASE_URL, key from OPENAI_API_KEY; cached). Needs --corpus.")
# traces (issue 37; ragrade.traces.route, docs/traces.md)
TRUTH_CLI_OPTIONS["hops"] = click.option(
    "--hops", default=None, metavar="COLUMN",
    help="Traces: the ground-truth column (numbers) naming each relevant document's hop (hop_success; docs/traces.md).")


def truth_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Every option of :data:`TRUTH_CLI_OPTIONS`, in their order."""
    for option in reversed(list(TRUTH_CLI_OPTIONS.values())):
        f = option(f)
    return f


def truth_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the options of :func:`truth_options` out of a command's ``kwargs``: the ones given, as keywords."""
    out = {name: kwargs.pop(name) for name in TRUTH_CLI_OPTIONS if name in kwargs}
    return {k: v for k, v in out.items() if v is not None and v != ()}
