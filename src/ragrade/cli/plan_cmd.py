"""``ragrade plan QRELS RUN [RUN ...] -m METRIC --delta D``: queries needed, minimal detectable effect and
power (topic set size design)."""

from __future__ import annotations

import warnings
from typing import Any

import click

from ragrade.cli._options import option
from ragrade.cli._output import input_errors, run_names
from ragrade.cli._plan_options import evaluation_options, plan_keywords
from ragrade.io import FORMATS
from ragrade.options import ALPHA, DIGITS, POWER


@click.command(name="plan")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True, required=True, metavar="METRIC",
              help="Metric, e.g. ndcg@10. Repeatable.")
@click.option("--delta", type=click.FloatRange(0, min_open=True), required=True,
              help="The difference to detect, in the metric's units (e.g. 0.02); for more than two runs, "
              "the minimum detectable range between the best and the worst run.")
@option(POWER)
@option(ALPHA, help="Significance level of the two-sided test.")
@click.option("--name", "names", multiple=True, help="Name of each run, in order (default: file names).")
@click.option("--qrels-format", type=click.Choice(FORMATS), default=None,
              help="Format of QRELS (default: from the extension).")
@click.option("--run-format", type=click.Choice(FORMATS), default=None,
              help="Format of the RUN files (default: from the extension).")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True, help="Output format.")
@option(DIGITS)
@evaluation_options
def command(
    qrels: str,
    runs: tuple[str, ...],
    metrics: tuple[str, ...],
    delta: float,
    power: float,
    alpha: float,
    names: tuple[str, ...],
    qrels_format: str | None,
    run_format: str | None,
    fmt: str,
    digits: int,
    **options: Any,
) -> None:
    """How many queries are needed to detect a difference of DELTA with the given power, the minimal
    detectable effect and the power at the current number of queries (two runs: paired t-test; more: one-way
    ANOVA on the range, Sakai's topic set size design). Needs the 'stats' extra (SciPy)."""
    from ragrade.cli.compare_cmd import echo_warnings, plan_inputs
    from ragrade.comparison.core import metric_labels
    from ragrade.comparison.planning import plan

    if len(runs) < 2:
        raise click.UsageError("plan needs at least two runs")
    if not alpha < power:
        raise click.BadParameter("must be above --alpha", param_hint="--power")
    labels = run_names(runs, names)
    with input_errors():
        keywords = plan_keywords(options)
        metric_list = metric_labels(list(metrics))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            q, loaded, keywords = plan_inputs(qrels, runs, labels, qrels_format, run_format, keywords)
            result = plan(q, loaded, metric_list, delta=delta, power=power, alpha=alpha, **keywords)
    echo_warnings(caught)
    if fmt == "json":
        click.echo(result.to_json())
    elif fmt == "markdown":
        click.echo(result.to_markdown(digits=digits), nl=False)
    else:
        from rich.console import Console

        console = Console()
        if not console.is_terminal:
            console = Console(width=200)
        console.print(result.to_rich(digits=digits))
