"""``ragrade report QRELS RUN [RUN ...] -m METRIC ... -o report.html``: the self-contained HTML report."""

from __future__ import annotations

import warnings
from typing import Any

import click

from ragrade.cli._options import comparison_of, option
from ragrade.cli._output import input_errors, refuse_inputs
from ragrade.cli._plan_options import plan_keywords
from ragrade.cli._slices import load_slices, slice_correction_option, slices_option
from ragrade.cli.compare_cmd import (
    comparison_options,
    echo_warnings,
    plan_inputs,
    resolve_baseline,
    run_names,
)
from ragrade.options import DEPTH, KS, PLOTS, TITLE


@click.command(name="report")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@comparison_options
@slices_option
@slice_correction_option
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, metavar="FILE",
              help="The .html file to write (written whole, then renamed into place; an input is refused).")
@click.option("--texts", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Document texts (.jsonl with id/_id and text, or .tsv/.csv id,text) shown in the per-query view.")
@click.option("--queries", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Query texts, same formats as --texts.")
@option(TITLE)
@option(DEPTH)
@option(PLOTS, "--plots/--no-plots")
@option(KS)
def command(qrels: str, runs: tuple[str, ...], metrics: tuple[str, ...], names: tuple[str, ...],
            qrels_format: str | None, run_format: str | None, output: str, texts: str | None, queries: str | None,
            title: str, depth: int | None, plots: bool, ks: tuple[int, ...], slices: tuple[str, ...] = (),
            slice_correction: str = "holm", **options: Any) -> None:
    """Write one self-contained HTML file comparing the runs: summary tables with confidence intervals,
    significance markers and groups, interactive plots (per-query scatter and sorted differences per pair,
    metric@k curves, distributions), and a per-query view (retrieved items in rank order marked relevant
    or not, missed relevant items, texts) with sorting and filtering. It opens offline in any browser.
    """
    from ragrade.comparison import metric_labels
    from ragrade.report import write_html
    from ragrade.report.texts import read_texts

    if len(runs) < 2:
        raise click.UsageError("report needs at least two runs")
    if not output.lower().endswith((".html", ".htm")):
        raise click.BadParameter("the report file must end in .html", param_hint="-o/--output")
    labels = run_names(runs, names)
    stats = comparison_of(options, resolve_baseline(options.get("baseline"), runs, labels))
    with input_errors():
        refuse_inputs(output, [qrels, *runs, texts, queries])
        slice_labels = load_slices(slices)
        keywords = plan_keywords(options)
        metric_list = metric_labels(list(metrics))
        doc_texts = read_texts(texts) if texts else None
        query_texts = read_texts(queries) if queries else None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            q, loaded, keywords = plan_inputs(qrels, runs, labels, qrels_format, run_format, keywords)
            path = write_html(output, q, loaded, metric_list, texts=doc_texts, queries=query_texts, title=title,
                              options=stats, depth=depth, plots=plots, ks=list(ks) or None, slices=slice_labels,
                              slice_correction=slice_correction, **keywords)
    echo_warnings(caught)
    click.echo(f"wrote {path}", err=True)
