"""The ``ragrade`` command line: a thin layer over the library.

Each sub-command lives in its own module of this package and exposes a ``click.Command`` named
``command``. Modules are imported only when their command runs (so ``ragrade --help`` stays fast and
optional extras are not imported up front). To add a command, add one line to ``_COMMANDS``.

This package imports nothing heavy at import time: no NumPy, pandas, pyarrow or rich until a command
needs them (``bench/bench_startup.py`` measures it). ``--version`` says which native accelerations are
active; ``ragrade info`` says more. When the C helper is missing because the build fell back, every
command prints one ``note:`` line on stderr saying so (the library warns once with
:class:`ragrade._native.AccelerationWarning` instead).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

import click

# name -> (module, one-line help shown in `ragrade --help`)
_COMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("ragrade.cli.evaluate_cmd", "Score a run against ground truth."),
    "conventions": ("ragrade.cli.conventions_cmd", "Compare metrics under every peer profile, side by side."),
    "metrics": ("ragrade.cli.metrics_cmd", "List every metric, its aliases and a one-line definition."),
    "convert": ("ragrade.cli.convert_cmd", "Convert qrels or runs between TREC, JSONL, CSV/TSV and Parquet."),
    "compare": ("ragrade.cli.compare_cmd", "Compare runs: means with CIs, significance tests, effect sizes."),
    "report": ("ragrade.cli.report_cmd", "Write a self-contained HTML report comparing runs, query by query."),
    "plot": ("ragrade.cli.plot_cmd", "Write the report's plots (per-query scatter, differences, curves) as SVG/PNG."),
    "judge": ("ragrade.cli.judge_cmd", "Judge-based context metrics (LLM or offline judge), cached and resumable."),
    "assess": ("ragrade.cli.assess_cmd", "Grade pooled (query, passage) pairs 0-3 with an LLM or offline assessor; write qrels."),
    "agreement": ("ragrade.cli.agreement_cmd", "Agreement of assessor qrels with human qrels: labels, system rankings, PPI."),
    "info": ("ragrade.cli.info_cmd", "Show the version, the active native accelerations and the installed extras."),
    "retrieve": ("ragrade.cli.retrieve_cmd", "Run a retriever (function, LangChain, LlamaIndex) over a topics file; write the run."),
    "gate": ("ragrade.cli.gate_cmd", "Regression gate for CI: a run against a saved baseline (exit 1 when worse)."),
    "fuse": ("ragrade.cli.fuse_cmd", "Fuse runs (RRF, CombSUM, weighted sums ... as ranx or a RAG framework); choose weights."),
    "plan": ("ragrade.cli.plan_cmd", "Test-set size: queries needed to detect a difference, minimal detectable effect."),
    "trec_eval": ("ragrade.cli.trec_eval_cmd", "trec_eval 10's command line and output, byte for byte (-q -c -m ...)."),
    "chunking": ("ragrade.cli.chunking_cmd", "Which chunker wins: chunkings compared on gold character spans."),
    "nuggets": ("ragrade.cli.nuggets_cmd", "Nuggets (TREC RAG): create them with an LLM, assign them to passages or answers, score answers."),
    "synthesize": ("ragrade.cli.synthesize_cmd", "A test set from a corpus: questions anchored to spans, checked for leakage."),
    "traces": ("ragrade.cli.traces_cmd", "Evaluate the retrieval recorded in traces (OTLP, Phoenix, Langfuse): calls, trajectories, rerankers."),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        return module.command

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        """As click's, but a usage error (an unknown option, a bad value, a missing argument) is printed as
        every other error of ragrade: one ``error: ...`` line on stderr naming the option or value, exit
        status 2, no usage block."""
        from ragrade.options import spelling

        if not standalone_mode:
            with spelling("cli"):
                return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            with spelling("cli"):  # messages name the command line's options (--resamples, not n_resamples)
                rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "ragrade"
            message = " ".join(exc.format_message().split()).rstrip(".")
            click.echo(f"error: {message} (see '{where} --help')", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        except Exception as exc:  # what no command caught: ragrade's error (exit 2) or a bug (exit 70)
            report_uncaught(exc)
        sys.exit(rv if isinstance(rv, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def report_uncaught(exc: BaseException) -> None:
    """An exception that left a command: ragrade's own error or a file error is bad input (exit 2, one
    line); anything else is a bug of ragrade (exit 70, with its traceback)."""
    from ragrade.cli._output import fail, internal, os_error
    from ragrade.errors import INPUT_EXCEPTIONS, RagradeError, input_error

    if isinstance(exc, RagradeError):
        fail(str(exc))
    if isinstance(exc, OSError):
        fail(os_error(exc))
    if isinstance(exc, INPUT_EXCEPTIONS):
        fail(str(input_error("ragrade", exc)).removeprefix("ragrade: "))
    internal(exc)


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ragrade.cli.info_cmd import version_line

    click.echo(version_line())
    ctx.exit()


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and whether the C helper is active, then exit.")
def main() -> None:
    """ragrade: grade the retrieval step of RAG pipelines and search systems."""
    from ragrade import _native

    message = _native.fallback_message()
    if message is not None:  # once per run, as a note; the library's warning would repeat it
        click.echo(f"note: {message}", err=True)
        warnings.filterwarnings("ignore", category=_native.AccelerationWarning)


def program() -> None:
    """The ``ragrade`` program (its console script and ``python -m ragrade``): :func:`main` in a process of its own,
    which a command may end as soon as its output is flushed (the trec_eval drop-in does, to skip the
    interpreter's teardown). Callers and tests use :func:`main`."""
    main(obj={"own_process": True})
