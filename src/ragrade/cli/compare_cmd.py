"""``ragrade compare QRELS RUN [RUN ...] -m METRIC ...``: means with CIs, paired tests, effect sizes."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import click

from ragrade.cli._output import AliasChoice, input_errors, reading, run_names
from ragrade.cli._plan_options import evaluation_options, plan_keywords
from ragrade.cli._slices import load_slices, slice_correction_option, slices_option
from ragrade.comparison.stats import CI_METHODS, CORRECTION_ALIASES, CORRECTIONS, TEST_ALIASES, TESTS
from ragrade.io import FORMATS

if TYPE_CHECKING:
    from ragrade.comparison.stats import CIMethod


def resolve_baseline(baseline: str | None, paths: Sequence[str], names: Sequence[str]) -> str | None:
    """``--baseline`` may be a run name or the path of a run as given on the command line."""
    if baseline is None or baseline in names:
        return baseline
    for path, name in zip(paths, names, strict=True):
        if os.path.normpath(path) == os.path.normpath(baseline):
            return name
    raise click.BadParameter(
        f"{baseline!r} is not one of the runs ({', '.join(names)})", param_hint="--baseline"
    )


def read_inputs(
    qrels_path: str,
    run_paths: Sequence[str],
    names: Sequence[str],
    qrels_format: str | None,
    run_format: str | None,
) -> tuple[Any, dict[str, Any]]:
    """Read the ground truth and the runs (with a progress bar on stderr for large files)."""
    from ragrade.io import read_qrels, read_run

    with reading(qrels_path, "ground truth") as progress:
        qrels = read_qrels(qrels_path, format=qrels_format, progress=progress)
    runs = {}
    for name, path in zip(names, run_paths, strict=True):
        with reading(path, f"run {name}") as progress:
            runs[name] = read_run(path, format=run_format, name=name, progress=progress)
    return qrels, runs


def plan_inputs(qrels_path: str, run_paths: Sequence[str], names: Sequence[str], qrels_format: str | None,
                run_format: str | None, keywords: dict[str, Any]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The inputs handed to the plan: the files read (with progress bars), or with ``--max-memory`` the
    paths themselves (the evaluation then reads them piece by piece, with the formats given)."""
    from ragrade.cli._truth_options import TRUTH_CLI_OPTIONS

    # (a ground truth beyond judged ids, e.g. nuggets with --assignments, is read by its route, not as qrels)
    if keywords.get("max_memory") is None and not set(keywords) & set(TRUTH_CLI_OPTIONS):
        q, loaded = read_inputs(qrels_path, run_paths, names, qrels_format, run_format)
        return q, loaded, keywords
    return (qrels_path, dict(zip(names, run_paths, strict=True)),
            {**keywords, "qrels_format": qrels_format, "run_format": run_format})


def echo_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Print ragrade's warnings on stderr, each sentence once: what the policies did as ``note: ...`` (as
    ``evaluate`` does), anything else (a reader's or the comparison's warning) as ``warning: ...``."""
    from ragrade.errors import PolicyNote, RagradeWarning

    seen: set[str] = set()
    for w in caught:
        if not issubclass(w.category, RagradeWarning):
            continue
        notes = w.message.notes if isinstance(w.message, PolicyNote) else [str(w.message)]
        kind = "note" if isinstance(w.message, PolicyNote) else "warning"
        for part in notes:
            if part not in seen:
                seen.add(part)
                click.echo(f"{kind}: {part}", err=True)


def comparison_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options common to ``compare`` and ``report`` (shown in this order: the runs, the statistics, the
    input formats), plus those of an evaluation (:func:`ragrade.cli._plan_options.evaluation_options`: the
    same as ``ragrade evaluate``'s)."""
    func = evaluation_options(func)
    for option in reversed([*_run_options(), *_statistics_options(), *_format_options()]):
        func = option(func)
    return func


def _run_options() -> list[Callable[..., Any]]:
    """What is compared: the metrics, the runs' names and the baseline."""
    return [
        click.option(
            "-m",
            "--metric",
            "metrics",
            multiple=True,
            required=True,
            metavar="METRIC",
            help="Metric to compare, e.g. ndcg@10, 'recall@[5,10]'. Repeatable.",
        ),
        click.option(
            "--name", "names", multiple=True, help="Name of each run, in order (default: file names)."
        ),
        click.option(
            "--baseline",
            default=None,
            help="Compare every run with this one (name or path); default: all pairs.",
        ),
    ]


def _statistics_options() -> list[Callable[..., Any]]:
    """How runs are compared: the test, the intervals, the correction, the level, resamples and seed."""
    return [
        click.option(
            "--test",
            type=AliasChoice(list(TESTS), TEST_ALIASES),
            default="randomization",
            show_default=True,
            help="Two-sided significance test (t, wilcoxon and tukey need the 'stats' extra; tukey: "
            "Tukey's HSD over all runs, no correction). Aliases as in Python: permutation, fisher, student, "
            "ttest, signed-rank, hsd.",
        ),
        click.option(
            "--ci-method",
            type=click.Choice(list(CI_METHODS)),
            default="auto",
            show_default=True,
            help="Bootstrap intervals: saddlepoint approximation (no resampling), resampling, or auto "
            "(saddlepoint from 100 queries on).",
        ),
        click.option(
            "--correction",
            type=AliasChoice(["none", *CORRECTIONS], CORRECTION_ALIASES),
            default="none",
            show_default=True,
            help="Multiple-testing correction, per metric over its pairs (aliases: benjamini-hochberg, fdr_bh, "
            "fdr, holm-bonferroni).",
        ),
        click.option(
            "--alpha",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.05,
            show_default=True,
            help="Significance level (also sets the CI level, 1 - alpha).",
        ),
        click.option(
            "--resamples",
            "n_resamples",
            type=click.IntRange(min=1),
            default=10_000,
            show_default=True,
            help="Resamples for bootstrap intervals and resampling tests.",
        ),
        click.option(
            "--seed", type=int, default=0, show_default=True, help="Random seed (same seed, same numbers)."
        ),
    ]


def _format_options() -> list[Callable[..., Any]]:
    """The formats of the input files."""
    return [
        click.option(
            "--qrels-format",
            type=click.Choice(FORMATS),
            default=None,
            help="Format of QRELS (default: from the extension).",
        ),
        click.option(
            "--run-format",
            type=click.Choice(FORMATS),
            default=None,
            help="Format of the RUN files (default: from the extension).",
        ),
    ]


@click.command(name="compare")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@comparison_options
@slices_option
@slice_correction_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "latex", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--table",
    "which",
    type=click.Choice(["summary", "pairs"]),
    default="summary",
    show_default=True,
    help="For --format csv: which table to write.",
)
@click.option("--digits", type=click.IntRange(0, 12), default=4, show_default=True, help="Decimals shown.")
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=None,
    help="Level of the confidence intervals (default: 1 - alpha, i.e. 0.95).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, help="Write to a file."
)
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
    fmt: str,
    which: str,
    digits: int,
    confidence: float | None,
    output: str | None,
    slices: tuple[str, ...] = (),
    slice_correction: str = "holm",
    **options: Any,
) -> None:
    """Compare runs on QRELS: per metric and run the mean with a bootstrap confidence interval; per pair of
    runs the difference, p-value (with optional correction), Cohen's d_z and wins/ties/losses.

    A superscript letter marks a run significantly better than the run with that letter; when all pairs
    are compared, runs sharing a group letter (A, B, ...) cannot be told apart.
    """
    from ragrade.comparison import metric_labels

    if len(runs) < 2:
        raise click.UsageError("compare needs at least two runs")
    labels = run_names(runs, names)
    base = resolve_baseline(baseline, runs, labels)
    with input_errors():
        slice_labels = load_slices(slices)
        keywords = plan_keywords(options)
        metric_list = metric_labels(list(metrics))  # fail on a typo before reading large files
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cmp = _compare(qrels, runs, labels, metric_list, qrels_format, run_format, keywords, baseline=base, test=test,
                           correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed,
                           confidence=confidence, ci_method=cast("CIMethod", ci_method))
            if slice_labels is not None:
                from ragrade.comparison.slice_compare import by_slices

                cmp = by_slices(cmp, slice_labels, slice_correction)
    echo_warnings(caught)
    _write_comparison(cmp, fmt, which, digits, output)


def _compare(qrels: str, runs: Sequence[str], labels: Sequence[str], metric_list: Any,
             qrels_format: str | None, run_format: str | None, keywords: dict[str, Any], **statistics: Any) -> Any:
    """The comparison of the runs' files on the qrels file, through the plan (read here, or piece by piece
    by the evaluation with ``--max-memory``)."""
    from ragrade.comparison import compare

    q, loaded, keywords = plan_inputs(qrels, runs, labels, qrels_format, run_format, keywords)
    return compare(q, loaded, metric_list, **statistics, **keywords)


def _write_comparison(cmp: Any, fmt: str, which: str, digits: int, output: str | None) -> None:
    """Print the comparison (or write it to ``output``) as a rich table, Markdown, LaTeX, CSV or JSON."""
    if fmt == "table":
        from ragrade.cli._output import make_console

        if output:
            with open(output, "w", encoding="utf-8") as fh:
                make_console(file=fh, color_system=None).print(cmp.to_rich(digits=digits))
        else:
            make_console().print(cmp.to_rich(digits=digits))
        return
    if fmt == "markdown":
        text = cmp.to_markdown(digits=digits)
    elif fmt == "latex":
        text = cmp.to_latex(digits=digits)
    elif fmt == "csv":
        text = cmp.to_csv(table=which)
    else:
        text = cmp.to_json() + "\n"
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
