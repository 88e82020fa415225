"""``ragrade trec_eval [trec_eval's options] QRELS RUN``: a drop-in for the trec_eval 10 binary.

The arguments are read as trec_eval reads them (``-m P.5,10``, ``-l2``, ``-qc``, options after the files), by
:mod:`ragrade.compat.trec_eval`, which computes with ragrade's kernels and prints what trec_eval 10 prints.
Where trec_eval stops on an error, this command prints one ``error:`` line and exits with status 2.
"""

from __future__ import annotations

import os
import sys

import click


@click.command(name="trec_eval", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                 "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(args: tuple[str, ...]) -> None:
    """trec_eval 10's command line (`ragrade trec_eval -h` for its options): same options, measures and output."""
    from ragrade.compat.trec_eval import main

    status = main(list(args))
    if status:
        sys.exit(status)
    _end_own_process()


def _end_own_process() -> None:
    """In the ``ragrade`` program's own process (:func:`ragrade.cli.program`, not a caller's ``main([...])`` or a
    test runner), end it now that the output is flushed: the interpreter's teardown (freeing the run's arrays,
    finalizing NumPy and Arrow) is a tenth of the drop-in's time on a run of millions of rows, and the command
    holds nothing that needs it (no temporary file, thread or open output is left)."""
    root = click.get_current_context().find_root()
    if isinstance(root.obj, dict) and root.obj.get("own_process"):
        sys.stderr.flush()
        os._exit(0)
