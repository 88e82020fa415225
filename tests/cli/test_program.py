"""The ``ragrade`` program (:func:`ragrade.cli.program`: the console script and ``python -m ragrade``): the trec_eval
drop-in ends its own process as soon as its output is flushed (skipping the interpreter's teardown), with the
whole output and status 0; a failed flush is still one clean error (status 2); and :func:`ragrade.cli.main`, as a
caller or a test runner uses it, never ends the caller's process."""

from __future__ import annotations

import io
import os
import subprocess
import sys
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
