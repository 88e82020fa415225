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
