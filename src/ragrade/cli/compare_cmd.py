"""``ragrade compare QRELS RUN [RUN ...] -m METRIC ...``: means with CIs, paired tests, effect sizes."""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import click

from ragrade.cli._options import comparison_of, option, statistics_options
from ragrade.cli._output import emit, input_errors, output_option, reading, refuse_inputs, run_names
from ragrade.cli._plan_options import evaluation_options, plan_keywords
from ragrade.cli._slices import load_slices, slice_correction_option, slices_option
from ragrade.io import FORMATS
from ragrade.options import DIGITS


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
    """The options common to ``compare``, ``report`` and ``plot`` (shown in this order: the runs, the
    statistics, the input formats), plus those of an evaluation
    (:func:`ragrade.cli._plan_options.evaluation_options`: the same as ``ragrade evaluate``'s). The
    statistics are declared once (:mod:`ragrade.options`); :func:`ragrade.cli._options.comparison_of` makes
    them a :class:`ragrade.ComparisonOptions`."""
    from ragrade.options import BASELINE

    func = evaluation_options(func)
    func = input_format_options(func)
    func = statistics_options()(func)
    func = option(BASELINE)(func)
    return run_options(func)


def run_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """What is compared: the metrics and the runs' names."""
    func = click.option("--name", "names", multiple=True,
                        help="Name of each run, in order (default: the file names).")(func)
    return click.option("-m", "--metric", "metrics", multiple=True, required=True, metavar="METRIC",
                        help="Metric to compare, e.g. ndcg@10, 'recall@[5,10]'. Repeatable.")(func)


def input_format_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--qrels-format`` and ``--run-format``: the formats of QRELS and of the RUN files."""
    func = click.option("--run-format", type=click.Choice(FORMATS), default=None,
                        help="Format of the RUN files (default: from the extension).")(func)
    return click.option("--qrels-format", type=click.Choice(FORMATS), default=None,
                        help="Format of QRELS (default: from the extension).")(func)


@click.command(name="compare")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@comparison_options
@slices_option
@slice_correction_option
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "latex", "csv", "json"]), default="table",
              show_default=True, help="Output format.")
@click.option("--table", "which", type=click.Choice(["summary", "pairs"]), default="summary", show_default=True,
              help="For --format csv: which table to write.")
@option(DIGITS)
@output_option
def command(qrels: str, runs: tuple[str, ...], metrics: tuple[str, ...], names: tuple[str, ...],
            qrels_format: str | None, run_format: str | None, fmt: str, which: str, digits: int,
            output: str | None, slices: tuple[str, ...] = (), slice_correction: str = "holm", **options: Any) -> None:
    """Compare runs on QRELS: per metric and run the mean with a bootstrap confidence interval; per pair of
    runs the difference, p-value (with optional correction), Cohen's d_z and wins/ties/losses.

    A superscript letter marks a run significantly better than the run with that letter; when all pairs
    are compared, runs sharing a group letter (A, B, ...) cannot be told apart.
    """
    from ragrade.comparison import metric_labels

    if len(runs) < 2:
        raise click.UsageError("compare needs at least two runs")
    labels = run_names(runs, names)
    stats = comparison_of(options, resolve_baseline(options.get("baseline"), runs, labels))
    with input_errors():
        refuse_inputs(output, [qrels, *runs])
        slice_labels = load_slices(slices)
        keywords = plan_keywords(options)
        metric_list = metric_labels(list(metrics))  # fail on a typo before reading large files
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            q, loaded, keywords = plan_inputs(qrels, runs, labels, qrels_format, run_format, keywords)
            from ragrade.comparison import compare

            cmp = compare(q, loaded, metric_list, options=stats, **keywords)
            if slice_labels is not None:
                from ragrade.comparison.slice_compare import by_slices

                cmp = by_slices(cmp, slice_labels, slice_correction)
    echo_warnings(caught)
    with input_errors():
        _write_comparison(cmp, fmt, which, digits, output)


def _write_comparison(cmp: Any, fmt: str, which: str, digits: int, output: str | None) -> None:
    """Print the comparison (or write it to ``output``) as a rich table, Markdown, LaTeX, CSV or JSON."""
    if fmt == "table":
        from ragrade.cli._output import make_console

        if not output:
            make_console().print(cmp.to_rich(digits=digits))
            return
        buffer = io.StringIO()
        make_console(file=buffer, color_system=None).print(cmp.to_rich(digits=digits))
        text = buffer.getvalue()
    elif fmt == "markdown":
        text = cmp.to_markdown(digits=digits)
    elif fmt == "latex":
        text = cmp.to_latex(digits=digits)
    elif fmt == "csv":
        text = cmp.to_csv(table=which)
    else:
        text = cmp.to_json() + "\n"
    emit(text, output)
