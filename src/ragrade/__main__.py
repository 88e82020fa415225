"""The ``ragrade`` program: ``python -m ragrade`` and the ``ragrade`` console script (:func:`program`)."""

from __future__ import annotations

import os
import sys


def program() -> None:
    """Run the command named on the command line. ``ragrade trec_eval ...`` runs the drop-in straight away,
    without importing click and the command table (a drop-in for trec_eval's binary is timed from its start;
    click's import is a thirtieth of its time on a run of two million rows); every other command goes through
    :func:`ragrade.cli.program`."""
    args = sys.argv[1:]
    if args[:1] == ["trec_eval"]:
        _trec_eval(args[1:])
    from ragrade.cli import program as cli_program

    cli_program()


def _trec_eval(args: list[str]) -> None:
    """``ragrade trec_eval`` as :mod:`ragrade.cli.trec_eval_cmd` runs it (the same note, messages and exit
    statuses: tests/cli/test_program.py), ending the process once the output is flushed (the
    interpreter's teardown would free the run's arrays one by one)."""
    import warnings

    from ragrade import _native

    message = _native.fallback_message()
    if message is not None:  # the note every command prints when the C helper is missing
        sys.stderr.write(f"note: {message}\n")
        warnings.filterwarnings("ignore", category=_native.AccelerationWarning)
    try:
        from ragrade.compat.trec_eval import main

        status = main(args)
    except KeyboardInterrupt:
        sys.stderr.write("\nerror: aborted\n")  # (as click prints it)
        sys.exit(1)
    except Exception as exc:  # a bug of ragrade: its traceback, exit status 70
        from ragrade.cli import report_uncaught

        report_uncaught(exc)
        raise
    if status:
        sys.exit(status)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    program()
