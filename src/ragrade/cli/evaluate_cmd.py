"""``ragrade evaluate QRELS RUN -m METRIC ...``: score a run file against a ground-truth file."""

from __future__ import annotations

import warnings
from typing import Any

import click

from ragrade.cli._loop import finish, loop_options, pop_loop_options
from ragrade.cli._output import input_errors, reading_all, run_names
from ragrade.cli._output import print_result as _print
from ragrade.cli._plan_options import evaluation_options, plan_keywords
from ragrade.cli._slices import load_slices, slices_option
from ragrade.io import FORMATS

OUTPUT_FORMATS = ("table", "json", "csv", "markdown")


@click.command(name="evaluate")
@click.argument("qrels", type=click.Path())
@click.argument("run", type=click.Path())
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
@click.option("--name", "run_name", default=None, metavar="NAME",
              help="Name of the run in the output (default: the file name without extension, as in compare).")
@click.option("--hole-threshold", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="Warn when the mean hole rate (share of unjudged documents in the top k) exceeds it.")
@click.option("--engine", type=click.Choice(["memory", "spark"]), default="memory", show_default=True,
              help="Where to evaluate: in this process, or on Spark (pip install 'ragrade[spark]'; the files "
                   "are read by Spark: Parquet, Delta, CSV/TSV with a header, TREC). See docs/scale.md.")
@click.option("--master", default="local[2]", show_default=True, metavar="URL",
              help="Spark master for --engine spark (unless a Spark session is already running).")
@slices_option
@evaluation_options
@loop_options
def command(qrels: str, run: str, metrics: tuple[str, ...], per_query: bool, fmt: str, qrels_format: str | None,
            run_format: str | None, digits: int, hole_threshold: float = 0.1, engine: str = "memory",
            master: str = "local[2]", run_name: str | None = None, slices: tuple[str, ...] = (),
            **options: Any) -> None:
    """Score RUN against the ground truth QRELS.

    Formats are detected from the file extensions (TREC, TSV/CSV, JSONL, Parquet, optionally
    gzipped). Results go to stdout; warnings about undefined cases go to stderr. Under the table:
    the hole rate (the share of each query's top-k documents without a judgment).

    trec_eval's measure names and options work as in trec_eval: -m P, -m ndcg_cut.5,10, -m all_trec,
    -M, -J, -l, -c, -N (see docs/metrics.md).

    \b
    Examples:
      ragrade evaluate examples/qrels.tsv examples/run.tsv -m ndcg@10 -m recall@5
      ragrade evaluate qrels.txt run.txt -m all_trec --names trec_eval --per-query --format json
    """
    from ragrade.engine.plan import build_plan
    from ragrade.errors import RagradeWarning
    from ragrade.evaluation import dispatch_one

    if slices and fmt == "csv":
        raise click.UsageError("--slices needs --format table, markdown or json")
    loop = pop_loop_options(options)
    label = run_names([run], [run_name] if run_name else [])[0]
    with input_errors():
        slice_labels = load_slices(slices)
        keywords = plan_keywords(options)
        # the options parsed into the one plan (a metric typo fails here, before any file is read)
        plan = build_plan(qrels, run, list(metrics), engine=engine, master=master, qrels_format=qrels_format,
                          run_format=run_format, **keywords)
        with reading_all([(qrels, "ground truth"), (run, "run")]) as (q_progress, r_progress):
            plan = plan.replace(qrels_progress=q_progress, run_progress=r_progress)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", RagradeWarning)
                result = dispatch_one(plan).replace(run_name=label)
        finish(loop, result, qrels, run, dict(plan.extras))
        sliced = None if slice_labels is None else result.by(slice_labels)
    _print(result, caught, fmt, per_query, digits, hole_threshold, sliced)
