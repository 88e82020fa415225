"""``ragrade conventions QRELS RUN -m METRIC ...``: the metrics under every peer profile, side by side."""

from __future__ import annotations

import click

from ragrade.cli._output import input_errors, reading
from ragrade.io import FORMATS


@click.command(name="conventions")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True, required=True, metavar="METRIC",
              help="Metric to compare, e.g. ap, ndcg@10, rr. Repeatable.")
@click.option("-p", "--profile", "profiles", multiple=True, metavar="PROFILE",
              help="Profile to include (repeatable; default: every profile). See docs/profiles.md.")
@click.option("--top", type=click.IntRange(0, 1000), default=5, show_default=True,
              help="Queries listed per metric among those that move most across profiles.")
@click.option("--qrels-format", type=click.Choice(FORMATS), default=None,
              help="Format of QRELS (default: from the extension).")
@click.option("--run-format", type=click.Choice(FORMATS), default=None,
              help="Format of RUN (default: from the extension).")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True, help="Decimals shown.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the markdown report to this file instead of stdout.")
def command(qrels: str, run: str, metrics: tuple[str, ...], profiles: tuple[str, ...], top: int,
            qrels_format: str | None, run_format: str | None, digits: int, output: str | None) -> None:
    """Score RUN against QRELS under every profile (default, trec_eval, pytrec_eval, beir, ir_measures,
    autorag, ragas, continuous-eval, llamaindex, deepeval, remem), with the queries that move most and
    a one-line reason for each difference. Output is markdown.

    \b
    Example:
      ragrade conventions qrels.tsv run.tsv -m ap -m ndcg@10 -m rr -o conventions.md
    """
    from ragrade.io import read_qrels, read_run
    from ragrade.profiles import get_profile
    from ragrade.report.conventions import conventions

    with input_errors():
        for p in profiles:
            get_profile(p)
        with reading(qrels, "ground truth") as progress:
            q = read_qrels(qrels, format=qrels_format, progress=progress)
        with reading(run, "run") as progress:
            r = read_run(run, format=run_format, progress=progress)
        rep = conventions(q, r, list(metrics), profiles=list(profiles) or None, top=top)
    text = rep.to_markdown(digits=digits)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)
