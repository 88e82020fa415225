"""``ragrade compare QRELS RUN [RUN ...] -m METRIC ...``: means with CIs, paired tests, effect sizes."""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from ragrade.compare.stats import CORRECTIONS, TESTS

_SPLIT = re.compile(r",(?![^()]*\))")  # commas outside parentheses


def split_metrics(values: Sequence[str]) -> list[str]:
    """``-m a -m b,c`` -> ``[a, b, c]`` (commas inside parentheses are kept)."""
    out: list[str] = []
    for v in values:
        out.extend(part.strip() for part in _SPLIT.split(v) if part.strip())
    return out


def run_names(paths: Sequence[str], names: Sequence[str]) -> list[str]:
    """Names of the runs: ``--name`` values, else file names without extension (made unique)."""
    if names:
        if len(names) != len(paths):
            raise click.UsageError(f"--name was given {len(names)} times for {len(paths)} runs")
        if len(set(names)) != len(names):
            raise click.UsageError("--name values must be distinct")
        return list(names)
    out: list[str] = []
    for path in paths:
        base = Path(path).name
        for ext in (".gz", ".bz2", ".xz"):
            base = base.removesuffix(ext)
        stem = Path(base).stem or base
        name, k = stem, 2
        while name in out:
            name, k = f"{stem}_{k}", k + 1
        out.append(name)
    return out


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
    qrels_path: str, run_paths: Sequence[str], names: Sequence[str]
) -> tuple[Any, dict[str, Any]]:
    import ragrade.io as rio

    qrels = rio.read_qrels(qrels_path)
    runs = {name: rio.read_run(path) for name, path in zip(names, run_paths, strict=True)}
    return qrels, runs


def comparison_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options common to both commands (applied bottom-up, shown in this order)."""
    options = [
        click.option(
            "-m",
            "--metric",
            "metrics",
            multiple=True,
            required=True,
            help="Metric to compare (repeat, or separate with commas), e.g. -m ndcg@10 -m recall@5.",
        ),
        click.option(
            "--name", "names", multiple=True, help="Name of each run, in order (default: file names)."
        ),
        click.option(
            "--baseline",
            default=None,
            help="Compare every run with this one (name or path); default all pairs.",
        ),
        click.option(
            "--test",
            type=click.Choice(list(TESTS)),
            default="randomization",
            show_default=True,
            help="Paired significance test (t and wilcoxon need the 'stats' extra).",
        ),
        click.option(
            "--correction",
            type=click.Choice(["none", *CORRECTIONS]),
            default="none",
            show_default=True,
            help="Multiple-testing correction, per metric over its pairs.",
        ),
        click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level."),
        click.option(
            "--resamples",
            "n_resamples",
            type=click.IntRange(min=1),
            default=10_000,
            show_default=True,
            help="Resamples for bootstrap intervals and resampling tests.",
        ),
        click.option(
            "--seed", type=int, default=0, show_default=True, help="Random seed (results are reproducible)."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn ragrade's typed errors into a clean ``Error: ...`` message and exit status 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ragrade.errors import RagradeError

        try:
            return func(*args, **kwargs)
        except RagradeError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


# The options and helpers above are shared with ``ragrade report`` (report_cmd).


@click.command(name="compare")
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@comparison_options
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
    "-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, help="Write to a file."
)
@handle_errors
def command(
    qrels: str,
    runs: tuple[str, ...],
    metrics: tuple[str, ...],
    names: tuple[str, ...],
    baseline: str | None,
    test: str,
    correction: str,
    alpha: float,
    n_resamples: int,
    seed: int,
    fmt: str,
    which: str,
    digits: int,
    output: str | None,
) -> None:
    """Compare runs on QRELS: per metric and run the mean with a bootstrap confidence interval; per pair of
    runs the difference, p-value (with optional correction), Cohen's d_z and wins/ties/losses.

    A superscript letter marks a run significantly better than the run with that letter.
    """
    from ragrade.compare import compare

    if len(runs) < 2:
        raise click.UsageError("compare needs at least two runs")
    labels = run_names(runs, names)
    base = resolve_baseline(baseline, runs, labels)
    metric_list = split_metrics(metrics)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        q, loaded = read_inputs(qrels, runs, labels)
        cmp = compare(
            q,
            loaded,
            metric_list,
            baseline=base,
            test=test,
            correction=correction,
            alpha=alpha,
            n_resamples=n_resamples,
            seed=seed,
        )
    for w in caught:
        click.echo(f"warning: {w.message}", err=True)
    if fmt == "table":
        from rich.console import Console

        if output:
            with open(output, "w", encoding="utf-8") as fh:
                Console(file=fh, width=200, color_system=None).print(cmp.to_rich(digits=digits))
        else:
            Console().print(cmp.to_rich(digits=digits))
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
