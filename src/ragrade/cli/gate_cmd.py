"""``ragrade gate BASELINE QRELS RUN``: the regression gate for CI (``docs/gate.md``).

Exit status: 0 every metric passes; 1 a metric is significantly worse than the baseline by more than its
margin, or below its floor; 2 the comparison would be meaningless (other qrels, other conventions, a
metric not in the baseline) or the input is bad.
"""

from __future__ import annotations

import sys

import click

from ragrade.cli._output import EXIT_INPUT, AliasChoice, fail, input_errors, run_names, stdout_console
from ragrade.cli._plan_options import evaluation_options, plan_keywords
from ragrade.cli._slices import load_slices, slices_option
from ragrade.comparison.stats import CORRECTION_ALIASES, CORRECTIONS, PAIRED_TESTS, TEST_ALIASES
from ragrade.io import FORMATS


def _pairs(values: tuple[str, ...], what: str, allow_bare: bool) -> tuple[float | None, dict[str, float]]:
    """``metric=value`` options (and, for margins, a bare value applying to every metric)."""
    from ragrade.errors import InputError

    every: float | None = None
    out: dict[str, float] = {}
    for item in values:
        metric, sep, value = item.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"--{what} takes METRIC=NUMBER", value=item) from None
        if not sep:
            if not allow_bare:
                raise InputError(f"--{what} takes METRIC=NUMBER", value=item)
            every = number
        else:
            out[metric.strip()] = number
    return every, out


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
@click.option("--test", type=AliasChoice(PAIRED_TESTS, TEST_ALIASES), default="randomization", show_default=True,
              help="Paired test on the per-query differences (used one-sided; aliases: permutation, fisher, "
                   "student, ttest, signed-rank).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level.")
@click.option("--correction", type=AliasChoice(["none", *CORRECTIONS], CORRECTION_ALIASES), default="none",
              show_default=True, help="Multiple-testing correction over the metrics.")
@click.option("--strict", is_flag=True,
              help="Non-inferiority must be shown: fail unless the drop is significantly smaller than the margin.")
@click.option("--resamples", "n_resamples", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Permutations / bootstrap resamples.")
@click.option("--n-resamples", "n_resamples_alias", type=click.IntRange(min=1), default=None, hidden=True,
              help="Former name of --resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed (same seed, same numbers).")
@click.option("--allow-qrels-change", is_flag=True,
              help="Compare even though the qrels differ from the baseline's (the change is reported).")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table",
              show_default=True, help="Output format (markdown: a pull-request comment).")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True, help="Decimals shown.")
@click.option("--worst", type=click.IntRange(min=0), default=5, show_default=True,
              help="Queries that got most worse, listed per metric.")
@click.option("--qrels-format", type=click.Choice(FORMATS), default=None, help="Format of QRELS.")
@click.option("--run-format", type=click.Choice(FORMATS), default=None, help="Format of RUN.")
@evaluation_options
@slices_option
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Also write the output to this file (e.g. the PR comment).")
def command(baseline: str, qrels: str, run: str, metrics: tuple[str, ...], margins: tuple[str, ...],
            floors: tuple[str, ...], test: str, alpha: float, correction: str, strict: bool, n_resamples: int,
            n_resamples_alias: int | None, seed: int, allow_qrels_change: bool, fmt: str, digits: int, worst: int,
            qrels_format: str | None, run_format: str | None, output: str | None, slices: tuple[str, ...] = (),
            **options: object) -> None:
    """Check RUN against the BASELINE file saved by `ragrade evaluate ... --save-baseline`.

    RUN is scored on QRELS with the baseline's metrics, profile and policies (a --profile, --matcher or policy
    option given must be the baseline's; --max-memory reads the files piece by piece); each metric is compared query
    by query with a one-sided paired test. Exit status 0: pass; 1: a metric is significantly worse than the
    baseline by more than its margin, or below its floor; 2: the comparison would be meaningless (other
    qrels, other conventions, a metric the baseline does not hold) or bad input.

    \b
    Example:
      ragrade gate baseline.json qrels.tsv run.trec --margin ndcg@10=0.01 --min recall@20=0.6 --format markdown
    """
    from ragrade.engine.inputs import read_both
    from ragrade.gating import IncomparableError, gate

    if n_resamples_alias is not None:
        n_resamples = n_resamples_alias

    with input_errors():
        slice_labels = load_slices(slices)
        keywords = plan_keywords(dict(options))
        every, margin_map = _pairs(margins, "margin", allow_bare=True)
        _, floor_map = _pairs(floors, "min", allow_bare=False)
        q: object = qrels
        r: object = run  # with --max-memory the evaluation reads the files piece by piece
        from ragrade.engine.plan import TRUTH_OPTIONS

        # with another ground truth (spans, nuggets: a ground-truth option given) its route reads the files
        if keywords.get("max_memory") is None and not set(keywords) & set(TRUTH_OPTIONS):
            q, r = read_both(qrels, run, qrels_format=qrels_format, run_format=run_format)
            r = r.with_name(run_names([run], [])[0])  # the file name, as every command names a run
        try:
            result = gate(baseline, q, r, metrics=list(metrics) or None,
                          margins=margin_map if every is None else {"*": every, **margin_map}, floors=floor_map,
                          test=test, alpha=alpha, n_resamples=n_resamples, seed=seed, confidence=0.95,
                          correction=correction, strict=strict, allow_qrels_change=allow_qrels_change,
                          worst=max(worst, 1), **keywords)
        except IncomparableError as exc:
            fail(f"cannot compare {run} with {baseline}: {exc}", EXIT_INPUT)
        if slice_labels is not None:
            result = result.by(slice_labels)
    if fmt == "json":
        text = result.to_json()
        click.echo(text)
    elif fmt == "markdown":
        text = result.to_markdown(digits=digits, worst=worst)
        click.echo(text, nl=False)
    else:
        stdout_console().print(result.to_rich(digits=digits))
        text = result.to_markdown(digits=digits, worst=worst)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    if result.exit_code:
        failing = [v.metric for v in result.verdicts if not v.passed]
        click.echo(f"gate failed: {', '.join(failing)}", err=True)
    sys.exit(result.exit_code)

