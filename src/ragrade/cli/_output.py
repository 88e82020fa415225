"""Helpers shared by the CLI commands: error reporting, the progress bar, number formatting.

Conventions: results go to stdout; warnings, progress and errors go to stderr (so ``--format json``
output stays parseable). Exit statuses, the same for every command:

* 0: success;
* 1: the command completed and printed its results, but some of them are missing beyond what was allowed
  (``ragrade judge``: judgments failed beyond ``--max-failed``); stderr says why, as ``error: ...``;
* 2: bad input or usage (a file that cannot be read, a metric typo, a wrong API key or judge URL):
  ``error: <message>`` on stderr, no traceback, nothing on stdout;
* 70: a bug in ragrade (:class:`ragrade.errors.InternalError`, or any exception no input explains): the
  traceback, then ``error: this is a bug in ragrade: please report it ...`` on stderr (:func:`internal`).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from ragrade.errors import RagradeError

#: Inputs at least this large (bytes, on disk) get a progress bar while they are read.
PROGRESS_THRESHOLD = 50 * 1024 * 1024

EXIT_OK = 0
EXIT_INCOMPLETE = 1
EXIT_INPUT = 2
#: A bug in ragrade (EX_SOFTWARE of BSD's sysexits.h).
EXIT_INTERNAL = 70


#: Width of the consoles when the stream is not a terminal (a pipe, a file, a CI log): wide enough that no
#: table is ever cut or wrapped (tables take their natural width, never more).
UNBOUNDED_WIDTH = 10_000


def make_console(*, stderr: bool = False, file: Any = None, **kwargs: Any):
    """A rich Console for a command's output: the terminal's width on a terminal; outside one (``| cat``,
    a file, CI logs) no width limit at all, so numbers and headers are never truncated or wrapped."""
    from rich.console import Console

    console = Console(stderr=stderr, file=file, highlight=False, **kwargs)
    if not console.is_terminal and "width" not in kwargs:
        console = Console(stderr=stderr, file=file, highlight=False, width=UNBOUNDED_WIDTH, **kwargs)
    return console


def stderr_console():
    return make_console(stderr=True)


def stdout_console():
    return make_console(soft_wrap=False)


class AliasChoice(click.Choice):
    """A choice that also takes the aliases the Python API takes (``--test fisher`` = ``randomization``),
    converted to the canonical name; ``--help`` lists the canonical names only."""

    def __init__(self, choices: Sequence[str], aliases: dict[str, str]) -> None:
        super().__init__(list(choices), case_sensitive=False)
        self.aliases = {k.lower(): v for k, v in aliases.items() if v in choices}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.lower() in self.aliases:
            return self.aliases[value.lower()]
        return super().convert(value, param, ctx)


def fail(message: str, status: int = EXIT_INPUT) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``status`` (2: bad input or usage)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(status)


def incomplete(message: str) -> NoReturn:
    """The results are printed but incomplete beyond what was allowed: ``error: message``, exit status 1."""
    fail(message, EXIT_INCOMPLETE)


def internal(exc: BaseException) -> NoReturn:
    """Report a bug of ragrade: the whole traceback (the original exception chained), then one
    ``error: ...`` line saying it is a bug, on stderr; exit status 70."""
    import traceback

    from ragrade.errors import InternalError

    click.echo("".join(traceback.format_exception(exc)).rstrip("\n"), err=True)
    if not isinstance(exc, InternalError):
        exc = InternalError("ragrade", exc)
    fail(str(exc), EXIT_INTERNAL)


@contextlib.contextmanager
def input_errors() -> Iterator[None]:
    """Turn ragrade's errors (bad files, metric typos, policy errors) and OS errors into ``error: ...``
    on stderr with exit status 2."""
    try:
        yield
    except RagradeError as exc:
        fail(str(exc))
    except OSError as exc:
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        fail(f"{name}{exc.strerror or exc}")


@contextlib.contextmanager
def reading(path: str, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """Yield a progress callback showing a transient rich progress bar on stderr when ``path`` is larger
    than :data:`PROGRESS_THRESHOLD`; otherwise yield None."""
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    if size < PROGRESS_THRESHOLD:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
        console=stderr_console(), transient=True,
    )
    with progress:
        task = progress.add_task(f"reading {label}", total=size)

        def update(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total or size)

        yield update


@contextlib.contextmanager
def reading_all(items: list[tuple[str, str]]) -> Iterator[list[Callable[[int, int], None] | None]]:
    """As :func:`reading`, for several files read at the same time: one progress display with a bar
    per large file (rich's Progress is thread-safe); a None callback for small files."""
    sizes = []
    for path, _ in items:
        try:
            sizes.append(os.path.getsize(path))
        except OSError:
            sizes.append(0)
    if all(size < PROGRESS_THRESHOLD for size in sizes):
        yield [None] * len(items)
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
        console=stderr_console(), transient=True,
    )
    with progress:
        callbacks: list[Callable[[int, int], None] | None] = []
        for (_, label), size in zip(items, sizes, strict=True):
            if size < PROGRESS_THRESHOLD:
                callbacks.append(None)
                continue
            task = progress.add_task(f"reading {label}", total=size)

            def update(done: int, total: int, task=task, size=size) -> None:
                progress.update(task, completed=done, total=total or size)

            callbacks.append(update)
        yield callbacks


def number(v: Any, digits: int) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def run_names(paths: Sequence[str], names: Sequence[str]) -> list[str]:
    """Names of the runs on the command line (one rule for every command): the ``--name`` values, else the
    file names without extension (made unique). A TREC run's tag is not used: many runs share one."""
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


# -- an evaluation's output (ragrade evaluate; ragrade traces) ---------------------------------------------
def print_result(result: Any, caught: list[Any], fmt: str, per_query: bool, digits: int, hole_threshold: float,
                 sliced: Any = None) -> None:
    """An evaluation's result in ``fmt`` (table, json, csv, markdown) on stdout, its notes and the warnings
    ``caught`` during it on stderr (``ragrade evaluate``'s output, shared by the commands that evaluate)."""
    from ragrade.errors import PolicyNote, RagradeWarning

    # The engine's own warning (a PolicyNote) repeats result.notes(), printed below as notes, once; anything
    # else (readers, profiles) is printed as a warning, in every format.
    own = set(result.notes())
    extra = [str(w.message) for w in caught if issubclass(w.category, RagradeWarning)
             and not issubclass(w.category, PolicyNote) and str(w.message) not in own]
    _output(result, fmt, per_query, digits, list(dict.fromkeys(extra)), hole_threshold, sliced)


def _output(result: Any, fmt: str, per_query: bool, digits: int, extra: list[str], hole_threshold: float,
            sliced: Any = None) -> None:
    """The result in ``fmt`` on stdout; its notes (one wording in every format:
    :meth:`Result.notes`) and warnings on stderr."""
    holes = result.hole_rate
    warned = list(extra)
    if holes is not None and holes.exceeds(hole_threshold):
        warned.append(f"{100 * holes.mean:.1f}% of the top-{holes.k} documents are unjudged (above "
                      f"{100 * hole_threshold:g}%): the values are lower bounds (try --unjudged bounds)")
    if fmt == "table":
        _print_table(result, per_query, digits, warned)
        if sliced is not None:
            stdout_console().print(sliced.to_rich(digits=digits))
        return
    for note in result.notes():
        click.echo(f"note: {note}", err=True)
    for note in warned:
        click.echo(f"warning: {note}", err=True)
    if fmt == "json" and sliced is not None:
        import json

        data = json.loads(result.to_json(per_query=per_query))
        data["slices"] = sliced.to_dict()
        click.echo(json.dumps(data, indent=2))
    elif fmt == "json":
        click.echo(result.to_json(per_query=per_query))
    elif fmt == "csv":
        click.echo(result.to_csv(per_query=per_query, digits=digits), nl=False)
    else:
        click.echo(result.to_markdown(per_query=per_query, digits=digits), nl=False)
        if sliced is not None:
            click.echo("\n" + sliced.to_markdown(digits=digits), nl=False)


def _print_table(result: Any, per_query: bool, digits: int, warned: list[str]) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    out = stdout_console()
    title = Text(f"run {result.run_name}") if result.run_name else None
    table = Table(title=title, title_justify="left")
    upper = result.upper_means
    table.add_column("metric")
    table.add_column("mean" if upper is None else "lower", justify="right")
    if upper is not None:
        table.add_column("upper", justify="right")
    table.add_column("queries", justify="right")
    counts = result.counts
    for label, mean in result.means.items():
        bound = [number(upper[label], digits)] if upper is not None else []
        table.add_row(Text(label), number(mean, digits), *bound, str(counts[label]))
    out.print(table)
    if per_query:
        pq = Table(title="per query", title_justify="left")
        pq.add_column("query")
        for c in result.columns:
            pq.add_column(Text(c), justify="right")
        for q, row in result.per_query_rows():
            pq.add_row(Text(str(q)), *(number(float(v), digits) for v in row))
        out.print(pq)
    lines = result.summary_lines()
    err = stderr_console()
    for i, line in enumerate(lines):
        if i == 0 or line.startswith("hole rate@"):
            out.print(Text(line, style="dim"))
        else:
            err.print(f"[yellow]note:[/yellow] {escape(line)}")
    for note in warned:
        err.print(f"[yellow]warning:[/yellow] {escape(note)}")
