"""``ragrade plot QRELS RUN [RUN ...] -m METRIC ... -o DIR``: the report's plots as SVG or PNG files."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, cast

import click

from ragrade.cli._output import input_errors
from ragrade.cli._plan_options import plan_keywords
from ragrade.cli.compare_cmd import (
    comparison_options,
    echo_warnings,
    plan_inputs,
    resolve_baseline,
    run_names,
)
from ragrade.cli.report_cmd import parse_cutoffs

if TYPE_CHECKING:
    from ragrade.comparison.stats import CIMethod


@click.command(name="plot")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@comparison_options
@click.option(
    "-o", "--output", type=click.Path(file_okay=False), required=True, help="Directory to write the plots to."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["svg", "png"]),
    default="svg",
    show_default=True,
    help="File format (png needs the 'plots' extra: matplotlib).",
)
@click.option(
    "--ks",
    default="1,3,5,10,20,50,100",
    show_default=True,
    metavar="K,K,...",
    help="Cutoffs of the metric@k curves ('' for none).",
)
@click.option("--scale", type=click.FloatRange(0.5, 8), default=2.0, show_default=True,
              help="PNG pixels per SVG pixel.")
def command(
    qrels: str,
    runs: tuple[str, ...],
    metrics: tuple[str, ...],
    names: tuple[str, ...],
    baseline: str | None,
    test: str,
    ci_method: str,
    correction: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    qrels_format: str | None,
    run_format: str | None,
    output: str,
    fmt: str,
    ks: str,
    scale: float,
    **options: Any,
) -> None:
    """Write the plots of the HTML report as files for papers: per metric the metric@k curves, the
    distribution of per-query values, and for every pair of runs the per-query scatter and the sorted
    differences with the confidence interval of their mean.
    """
    from ragrade.comparison import metric_labels
    from ragrade.report.plots import write_plots

    if len(runs) < 2:
        raise click.UsageError("plot needs at least two runs")
    labels = run_names(runs, names)
    base = resolve_baseline(baseline, runs, labels)
    cutoffs = parse_cutoffs(ks)
    with input_errors():
        keywords = plan_keywords(options)
        metric_list = metric_labels(list(metrics))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            q, loaded, keywords = plan_inputs(qrels, runs, labels, qrels_format, run_format, keywords)
            paths = write_plots(
                output,
                q,
                loaded,
                metric_list,
                format=fmt,
                ks=cutoffs,
                scale=scale,
                baseline=base,
                test=test,
                correction=correction,
                alpha=alpha,
                n_resamples=n_resamples,
                seed=seed,
                ci_method=cast("CIMethod", ci_method),
                **keywords,
            )
    echo_warnings(caught)
    for path in paths:
        click.echo(str(path))
