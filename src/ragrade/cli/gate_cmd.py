"""``ragrade gate BASELINE QRELS RUN``: the regression gate for CI (``docs/gate.md``).

Exit status: 0 every metric passes; 1 a metric is significantly worse than the baseline by more than its
margin, or below its floor; 2 the comparison would be meaningless (other qrels, other conventions, a
metric not in the baseline) or the input is bad.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ragrade.cli._options import comparison_of, option, statistics_options
from ragrade.cli._output import EXIT_INPUT, emit, fail, input_errors, refuse_inputs, run_names, stdout_console
from ragrade.cli._plan_options import evaluation_options, plan_keywords
from ragrade.cli._slices import load_slices, slices_option
from ragrade.cli.compare_cmd import input_format_options
from ragrade.options import ALLOW_QRELS_CHANGE, DIGITS, FLOOR, GATE_TEST, MARGIN, STRICT, WORST, Option


def _pairs(values: tuple[str, ...], spec: Option, allow_bare: bool) -> dict[str, float]:
    """``METRIC=VALUE`` options (and, with ``allow_bare``, one bare value for every metric, as ``"*"``), each
    value read by ``spec`` (the margin's or the floor's declaration)."""
    from ragrade.errors import InputError

    out: dict[str, float] = {}
    for item in values:
        metric, sep, value = item.rpartition("=")
        if not sep and not allow_bare:
            raise InputError(f"{spec.label()} takes METRIC=NUMBER", value=item)
        try:
            out[metric.strip() if sep else "*"] = spec.parse(value)
        except InputError:
            form = "METRIC=NUMBER" + (" or NUMBER" if allow_bare else "")
            raise InputError(f"{spec.label()} takes {form}, the number {spec.takes()}",
                             value=item) from None
    return out


@click.command(name="gate")
@click.argument("baseline", type=click.Path(dir_okay=False))
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Check only these metrics of the baseline (default: all). Repeatable.")
@click.option("--margin", "margins", multiple=True, metavar="METRIC=M",
              help="Tolerated drop for a metric (e.g. ndcg@10=0.01), or a number for every metric. Repeatable.")
@click.option("--min", "floors", multiple=True, metavar="METRIC=F",
              help="Lowest acceptable candidate mean for a metric (e.g. recall@20=0.6). Repeatable.")
@statistics_options(GATE_TEST)
@option(STRICT)
@option(ALLOW_QRELS_CHANGE)
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True, help="Output format (markdown: a pull-request comment).")
@option(DIGITS)
@option(WORST, default=5)
@input_format_options
@evaluation_options
@slices_option
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the output to FILE (e.g. the PR comment; written whole, then renamed into place).")
def command(baseline: str, qrels: str, run: str, metrics: tuple[str, ...], margins: tuple[str, ...],
            floors: tuple[str, ...], strict: bool, allow_qrels_change: bool, fmt: str, digits: int, worst: int,
            qrels_format: str | None, run_format: str | None, output: str | None, slices: tuple[str, ...] = (),
            **options: Any) -> None:
    """Check RUN against the BASELINE file saved by `ragrade evaluate ... --save-baseline`.

    RUN is scored on QRELS with the baseline's metrics, profile and policies (a --profile, --matcher or policy
    option given must be the baseline's; --max-memory reads the files piece by piece); each metric is compared query
    by query with a one-sided paired test; the intervals are those `ragrade compare` gives the same pair with the
    same options. Exit status 0: pass; 1: a metric is significantly worse than the baseline by more than its
    margin, or below its floor; 2: the comparison would be meaningless (other qrels, other conventions, a metric
    the baseline does not hold) or bad input.

    \b
    Example:
      ragrade gate baseline.json qrels.tsv run.trec --margin ndcg@10=0.01 --min recall@20=0.6 --format markdown
    """
    from ragrade.gating import IncomparableError

    stats = comparison_of(options)
    with input_errors():
        refuse_inputs(output, [baseline, qrels, run])
        slice_labels = load_slices(slices)
        keywords = plan_keywords(options)
        thresholds = {"margins": _pairs(margins, MARGIN, True), "floors": _pairs(floors, FLOOR, False)}
        try:
            result = _gate(baseline, qrels, run, stats, thresholds, keywords, qrels_format, run_format,
                           metrics=list(metrics) or None, strict=strict, allow_qrels_change=allow_qrels_change,
                           worst=max(worst, 1))
        except IncomparableError as exc:
            fail(f"cannot compare {run} with {baseline}: {exc}", EXIT_INPUT)
        if slice_labels is not None:
            result = result.by(slice_labels)
    _show(result, fmt, digits, worst, output)
    sys.exit(result.exit_code)


def _gate(baseline: str, qrels: str, run: str, stats: Any, thresholds: dict[str, dict[str, float]],
          keywords: dict[str, Any], qrels_format: str | None, run_format: str | None, **settings: Any) -> Any:
    """The gate of RUN's file on QRELS's (read here, or piece by piece by the evaluation with --max-memory)."""
    from ragrade.engine.inputs import read_both
    from ragrade.engine.plan import TRUTH_OPTIONS
    from ragrade.gating import gate

    q: object = qrels
    r: object = run
    # with another ground truth (spans, nuggets: a ground-truth option given) its route reads the files
    if keywords.get("max_memory") is None and not set(keywords) & set(TRUTH_OPTIONS):
        q, r = read_both(qrels, run, qrels_format=qrels_format, run_format=run_format)
        r = r.with_name(run_names([run], [])[0])  # the file name, as every command names a run
    return gate(baseline, q, r, options=stats, margins=thresholds["margins"] or None,
                floors=thresholds["floors"], **settings, **keywords)


def _show(result: Any, fmt: str, digits: int, worst: int, output: str | None) -> None:
    """The verdict on stdout (a table, markdown or JSON), also written to ``output`` (the markdown for a
    table); the failing metrics and the notes on stderr."""
    if fmt == "json":
        text = result.to_json() + "\n"
        click.echo(text, nl=False)
    elif fmt == "markdown":
        text = result.to_markdown(digits=digits, worst=worst)
        click.echo(text, nl=False)
    else:
        stdout_console().print(result.to_rich(digits=digits, notes=False))
        text = result.to_markdown(digits=digits, worst=worst)
    for note in result.notes:  # on stderr, as every command's notes
        click.echo(f"note: {note}", err=True)
    if output:
        with input_errors():
            emit(text, output)
    if result.exit_code:
        failing = [v.metric for v in result.verdicts if not v.passed]
        click.echo(f"gate failed: {', '.join(failing)}", err=True)
