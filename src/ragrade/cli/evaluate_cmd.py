"""``ragrade evaluate QRELS RUN -m METRIC ...``: score a run file against a ground-truth file."""

from __future__ import annotations

import warnings
from typing import Any

import click

from ragrade.cli._loop import finish, loop_options, pop_loop_options
from ragrade.cli._output import input_errors, number, reading_all, stderr_console, stdout_console
from ragrade.io import FORMATS
from ragrade.policies import Policies

OUTPUT_FORMATS = ("table", "json", "csv", "markdown")

_POLICY_HELP = {
    "missing_run": "Query in the ground truth but not in the run",
    "missing_qrels": "Query in the run but not in the ground truth",
    "no_relevant": "Query with no relevant judgment (R = 0)",
    "duplicates": "Same item twice in one ranking",
    "ties": "Order of equal scores",
    "identical_ids": "Items whose id equals the query id",
    "empty_run": "Query with an empty retrieved list",
}


def _policy_options(f):
    defaults = Policies()
    for name, choices in reversed(list(Policies.choices().items())):
        flag = "--" + name.replace("_", "-")
        f = click.option(
            flag, name, type=click.Choice(choices), default=None,
            help=f"{_POLICY_HELP.get(name, name)} (default: {getattr(defaults, name)}).",
        )(f)
    return f


@click.command(name="evaluate")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True, required=True, metavar="METRIC",
              help="Metric to compute, e.g. ndcg@10, 'recall@[5,10]', 'precision(rel=2)@5'. Repeatable.")
@click.option("--per-query", is_flag=True, help="Also output the value of every query.")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="Output format.")
@click.option("--qrels-format", type=click.Choice(FORMATS), default=None,
              help="Format of QRELS (default: from the extension).")
@click.option("--run-format", type=click.Choice(FORMATS), default=None,
              help="Format of RUN (default: from the extension).")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True,
              help="Decimals shown in table, csv and markdown output (json is exact).")
@click.option("--profile", default=None, metavar="PROFILE",
              help="Score under a peer's conventions (autorag, ragas, continuous-eval, remem, llamaindex, "
                   "deepeval, trec_eval, pytrec_eval, beir, ir_measures, ranx). See docs/profiles.md.")
@_policy_options
@loop_options
def command(qrels: str, run: str, metrics: tuple[str, ...], per_query: bool, fmt: str, qrels_format: str | None,
            run_format: str | None, digits: int, profile: str | None = None, **policies: Any) -> None:
    """Score RUN against the ground truth QRELS.

    Formats are detected from the file extensions (TREC, TSV/CSV, JSONL, Parquet, optionally
    gzipped). Results go to stdout; warnings about undefined cases go to stderr.

    \b
    Example:
      ragrade evaluate examples/qrels.tsv examples/run.tsv -m ndcg@10 -m recall@5
    """
    from ragrade.engine.api import evaluate
    from ragrade.engine.inputs import read_both
    from ragrade.engine.result import metric_labels
    from ragrade.errors import RagradeWarning

    loop = pop_loop_options(policies)
    with input_errors():
        metric_labels(list(metrics))  # fail on a typo before reading large files
        with reading_all([(qrels, "ground truth"), (run, "run")]) as (q_progress, r_progress):
            # Both files at once: Arrow parses without holding the GIL.
            q, r = read_both(qrels, run, qrels_format=qrels_format, qrels_progress=q_progress,
                             run_format=run_format, run_progress=r_progress)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RagradeWarning)
            result = evaluate(q, r, list(metrics), profile=profile, **policies)
        finish(loop, result, q, r)
    notes = [part for w in caught if issubclass(w.category, RagradeWarning) for part in str(w.message).split("; ")]
    if fmt == "table":
        _print_table(result, per_query, digits)
    else:
        for note in notes:
            click.echo(f"warning: {note}", err=True)
        if fmt == "json":
            click.echo(result.to_json(per_query=per_query))
        elif fmt == "csv":
            click.echo(result.to_csv(per_query=per_query, digits=digits), nl=False)
        else:
            click.echo(result.to_markdown(per_query=per_query, digits=digits), nl=False)


def _print_table(result: Any, per_query: bool, digits: int) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    out = stdout_console()
    title = Text(f"run {result.run_name}") if result.run_name else None
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("queries", justify="right")
    counts = result.counts
    for label, mean in result.means.items():
        table.add_row(Text(label), number(mean, digits), str(counts[label]))
    out.print(table)
    if per_query:
        pq = Table(title="per query", title_justify="left")
        pq.add_column("query")
        cols = list(result.per_query.columns)
        for c in cols:
            pq.add_column(Text(c), justify="right")
        for q, row in zip(result.per_query.index.tolist(), result.per_query.itertuples(index=False, name=None),
                          strict=True):
            pq.add_row(Text(str(q)), *(number(float(v), digits) for v in row))
        out.print(pq)
    lines = result.summary_lines()
    err = stderr_console()
    for i, line in enumerate(lines):
        if i == 0:
            out.print(Text(line, style="dim"))
        else:
            err.print(f"[yellow]note:[/yellow] {escape(line)}")
