"""The ``ragrade`` program (:func:`ragrade.__main__.program`: the console script and ``python -m ragrade``): the
trec_eval drop-in ends its own process as soon as its output is flushed (skipping the interpreter's teardown), with
the whole output and status 0; a failed flush is still one clean error (status 2); and :func:`ragrade.cli.main`, as
a caller or a test runner uses it, never ends the caller's process. ``ragrade trec_eval`` runs without importing
click (issue 34, item 4) and says what the click command says: the same output, the same ``error:`` line and exit
status where trec_eval stops, exit status 70 with a traceback for a bug."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragrade.cli import main
from ragrade.compat.trec_eval import run


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    qrels, runf = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    runf.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d9 2 1.0 r\nq2 Q0 d3 1 0.5 r\n")
    return str(qrels), str(runf)


def test_the_program_prints_everything_and_ends_with_status_0(files):
    want = io.StringIO()
    run(["-q", "-m", "all_trec", *files], want)
    got = subprocess.run([sys.executable, "-m", "ragrade", "trec_eval", "-q", "-m", "all_trec", *files],
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.getvalue()
    assert got.stderr == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_failed_flush_is_one_clean_error(files):
    with open("/dev/full", "w") as full:
        got = subprocess.run([sys.executable, "-m", "ragrade", "trec_eval", "-m", "map", *files], stdout=full,
                             stderr=subprocess.PIPE, text=True)
    assert got.returncode == 2
    assert got.stderr.startswith("error:") and "Traceback" not in got.stderr


def test_main_returns_to_its_caller(files):
    result = CliRunner().invoke(main, ["trec_eval", "-m", "map", *files])
    assert result.exit_code == 0
    assert result.output.startswith("map")  # (this test still runs: the process was not ended)


_ROOT = Path(__file__).resolve().parents[2]

#: Runs ``ragrade.__main__.program`` with ``sys.argv[1:]`` and reports, as the process ends (``os._exit`` on
#: success, ``SystemExit`` otherwise), whether click was imported.
_PROGRAM = """
import os, sys
real_exit = os._exit
def report(code):
    sys.stderr.write(f"\\nCLICK {'click' in sys.modules} STATUS {code}\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = report
{patch}
sys.argv = ["ragrade", *sys.argv[1:]]
from ragrade.__main__ import program
try:
    program()
except SystemExit as e:
    report(e.code if isinstance(e.code, int) else 1)
"""


def _program(*args: str, patch: str = "") -> tuple[str, str, bool, int]:
    res = subprocess.run([sys.executable, "-c", _PROGRAM.replace("{patch}", patch), *args], capture_output=True,
                         text=True, cwd=_ROOT)
    err, _, tail = res.stderr.rpartition("\nCLICK ")
    words = tail.split()
    return res.stdout, err, words[0] == "True", int(words[2])


def _click(*args: str) -> tuple[str, str, int]:
    from ragrade.cli import main

    res = CliRunner().invoke(main, ["trec_eval", *args])
    return res.stdout, res.stderr, res.exit_code


def test_the_program_prints_what_the_click_command_prints_without_importing_click(files):
    for extra in ([], ["-q"], ["-m", "ndcg_cut.5", "-c"]):
        out, err, clicked, status = _program("trec_eval", *extra, *files)
        assert (status, clicked, err.strip()) == (0, False, "")
        assert "map" in out or "ndcg_cut_5" in out
        assert _click(*extra, *files) == (out, "", 0)


def test_where_trec_eval_stops_both_ways_say_the_same(files, tmp_path):
    bad_measure = ("-m", "no_such_measure", *files)
    missing = (files[0], str(tmp_path / "absent"))
    broken = tmp_path / "broken"
    broken.write_text("q1 0 d1\n")  # three fields: trec_eval stops on a malformed line
    for args in (bad_measure, missing, (str(broken), files[1]), (files[0],)):
        out, err, clicked, status = _program("trec_eval", *args)
        assert status == 2 and not clicked and out == "", args
        assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), (args, err)
        assert _click(*args) == ("", err, 2), args


def test_a_bug_in_the_drop_in_is_reported_as_a_bug(files):
    patch = ("import ragrade.compat.trec_eval as te\n"
             "def boom(argv, out=None, value_format=''):\n    raise ZeroDivisionError('inside')\n"
             "te.run = boom")
    out, err, _, status = _program("trec_eval", *files, patch=patch)
    assert status == 70 and out == ""
    assert "Traceback" in err and "ZeroDivisionError: inside" in err
    assert "this is a bug in ragrade" in err.splitlines()[-1]


def test_other_commands_still_go_through_click(files):
    out, _, clicked, status = _program("metrics")
    assert status == 0 and clicked and "ndcg" in out


def test_the_console_script_is_the_program():
    scripts = tomllib.loads((_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["ragrade"] == "ragrade.__main__:program"
