"""``ragrade plot QRELS RUN [RUN ...] -m METRIC ... -o DIR``: the report's plots as SVG or PNG files."""

from __future__ import annotations

import warnings
from typing import Any

import click

from ragrade.cli._options import comparison_of, option
from ragrade.cli._output import input_errors
from ragrade.cli._plan_options import plan_keywords
from ragrade.cli.compare_cmd import (
    comparison_options,
    echo_warnings,
    plan_inputs,
    resolve_baseline,
    run_names,
)
from ragrade.options import KS, PLOT_FORMAT, SCALE


@click.command(name="plot")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@comparison_options
@click.option("-o", "--output", type=click.Path(file_okay=False), required=True, metavar="FOLDER",
              help="Folder to write the plots to (each file written whole, then renamed into place).")
@option(PLOT_FORMAT, dest="fmt")
@option(KS)
@option(SCALE)
def command(qrels: str, runs: tuple[str, ...], metrics: tuple[str, ...], names: tuple[str, ...],
            qrels_format: str | None, run_format: str | None, output: str, fmt: str, ks: tuple[int, ...],
            scale: float, **options: Any) -> None:
    """Write the plots of the HTML report as files for papers: per metric the metric@k curves, the
    distribution of per-query values, and for every pair of runs the per-query scatter and the sorted
    differences with the confidence interval of their mean.
    """
    from ragrade.comparison import metric_labels
    from ragrade.report.plots import write_plots

    if len(runs) < 2:
        raise click.UsageError("plot needs at least two runs")
    labels = run_names(runs, names)
    stats = comparison_of(options, resolve_baseline(options.get("baseline"), runs, labels))
    with input_errors():
        keywords = plan_keywords(options)
        metric_list = metric_labels(list(metrics))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            q, loaded, keywords = plan_inputs(qrels, runs, labels, qrels_format, run_format, keywords)
            paths = write_plots(output, q, loaded, metric_list, format=fmt, ks=list(ks) or None, scale=scale,
                                options=stats, **keywords)
    echo_warnings(caught)
    for path in paths:
        click.echo(str(path))
