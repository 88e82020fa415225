"""One rule for every writer (issue 34, item 7; docs/cli.md, "Writing files"), a test per kind over every command
that writes: a failed command leaves an existing file as it was; an output that is an input is refused; ``-o
/dev/full``, ``> /dev/full`` and ``-o`` into a folder that cannot be written end in one ``error:`` line, exit
status 2, no traceback; a successful write keeps the file's mode."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragrade.cli import main

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"


@pytest.fixture
def ex(tmp_path, monkeypatch):
    """A copy of the examples to write next to, the working directory."""
    shutil.copytree(EX, tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "examples"


def _baseline(ex: Path) -> str:
    out = ex / "baseline.json"
    res = CliRunner().invoke(main, ["evaluate", str(ex / "qrels.tsv"), str(ex / "run.tsv"), "-m", "ndcg@10",
                                    "--save-baseline", str(out)])
    assert res.exit_code == 0, res.output
    return str(out)


def writers(ex: Path) -> dict[str, tuple[list[str], str]]:
    """Every command that writes a file: its arguments with ``OUT`` for the file written, and one of its
    inputs (for output = input)."""
    q, r, d = str(ex / "qrels.tsv"), str(ex / "run.tsv"), str(ex / "run_dense.tsv")
    return {
        "evaluate -o": (["evaluate", q, r, "-m", "P@5", "-o", "OUT"], q),
        "evaluate --save-baseline": (["evaluate", q, r, "-m", "P@5", "--save-baseline", "OUT"], r),
        "compare": (["compare", q, r, d, "-m", "P@5", "--resamples", "50", "-o", "OUT"], d),
        "gate": (["gate", _baseline(ex), q, d, "--resamples", "50", "-o", "OUT"], q),
        "conventions": (["conventions", q, r, "-m", "ap", "-p", "trec_eval", "-o", "OUT"], r),
        "report": (["report", q, r, d, "-m", "P@5", "--resamples", "50", "--no-plots", "-o", "OUT.html"], r),
        "fuse": (["fuse", r, d, "-o", "OUT"], d),
        "convert": (["convert", r, "OUT"], r),
        "retrieve": (["retrieve", "examples.toy_retriever:search", "--queries", str(ex / "topics.tsv"), "-k", "5",
                      "-o", "OUT"], str(ex / "topics.tsv")),
        "judge --details": (["judge", str(ex / "judge.jsonl"), "-m", "context_recall", "--details", "OUT"],
                            str(ex / "judge.jsonl")),
        "assess": (["assess", r, "--queries", str(ex / "topics.tsv"), "--corpus", str(ex / "corpus.jsonl"),
                    "--depth", "2", "--no-cache", "-o", "OUT"], str(ex / "topics.tsv")),
    }


def _args(args: list[str], out: str) -> list[str]:
    return [a.replace("OUT", out) if "OUT" in a else a for a in args]


def _cli(args: list[str], cwd: Path, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
    """The command in a fresh process (a real stdout, so that ``> /dev/full`` is what a user gets)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__import__("ragrade").__file__).parents[1]),
                                                        str(cwd.parent)])}
    return subprocess.run([sys.executable, "-m", "ragrade", *args], cwd=cwd.parent, env=env, text=True,
                          stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)


NAMES = ["evaluate -o", "evaluate --save-baseline", "compare", "gate", "conventions", "report", "fuse", "convert",
         "retrieve", "judge --details", "assess"]


def _clean_error(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 2, (what, proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, (what, proc.stderr[-2000:])
    assert proc.stderr.strip().splitlines()[-1].startswith("error: "), (what, proc.stderr[-2000:])


@pytest.mark.parametrize("name", NAMES)
def test_output_equal_to_an_input_is_refused_and_the_input_kept(ex, name):
    args, an_input = writers(ex)[name]
    if name == "report":  # the report's file ends in .html: an input of that name (--texts) is refused the same
        html = ex / "texts.html"
        html.write_text("id\ttext\nd1\tone\n", encoding="utf-8")
        args, an_input = [*args, "--texts", str(html)], str(html)
    before = Path(an_input).read_bytes()
    proc = _cli([a if "OUT" not in a else an_input for a in args], ex)
    _clean_error(proc, name)
    assert "is also an input" in proc.stderr, proc.stderr
    assert Path(an_input).read_bytes() == before


@pytest.mark.parametrize("name", NAMES)
def test_a_full_disk_is_one_clean_error(ex, name):
    args, _ = writers(ex)[name]
    out = "/dev/full" if name != "report" else "/dev/full.html"
    if name == "report":
        pytest.skip("the report's file must end in .html: /dev/full has no such name (its writer is the one "
                    "write_text, checked by every other command)")
    _clean_error(_cli(_args(args, out), ex), name)


@pytest.mark.parametrize("name", ["evaluate -o", "compare", "gate", "conventions", "fuse"])
def test_stdout_to_a_full_disk_is_one_clean_error(ex, name):
    args, _ = writers(ex)[name]
    args = [a for a in args if a not in ("-o", "OUT")] if name != "fuse" else ["metrics"]
    with open("/dev/full", "w") as full:
        proc = _cli(args, ex, stdout=full.fileno())
    _clean_error(proc, name)
    assert "cannot write the output" in proc.stderr


@pytest.fixture
def unwritable(tmp_path):
    """A folder no file can be created in (a read-only folder; root may write in any, but not in /sys)."""
    if os.geteuid() == 0:
        yield Path("/sys")
        return
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


@pytest.mark.parametrize("name", NAMES)
def test_a_folder_that_cannot_be_written_is_one_clean_error(ex, name, unwritable):
    args, _ = writers(ex)[name]
    out = str(unwritable / ("out.html" if name == "report" else "out.tsv"))
    proc = _cli([a if "OUT" not in a else out for a in args], ex)
    _clean_error(proc, name)
    assert "cannot write" in proc.stderr or "Permission denied" in proc.stderr, proc.stderr


@pytest.mark.parametrize("name", ["evaluate -o", "compare", "fuse", "convert", "conventions"])
def test_a_failed_command_leaves_the_existing_file_as_it_was(ex, name):
    args, _ = writers(ex)[name]
    target = ex / "kept.tsv"
    target.write_text("what was there\n", encoding="utf-8")
    target.chmod(0o640)
    broken = [a if a != str(ex / "run.tsv") else str(ex / "missing.tsv") for a in args]  # fails on reading
    proc = _cli([a if "OUT" not in a else str(target) for a in broken], ex)
    assert proc.returncode == 2, proc.stderr
    assert target.read_text(encoding="utf-8") == "what was there\n"
    ok = _cli([a if "OUT" not in a else str(target) for a in args], ex)  # a success replaces it, mode kept
    assert ok.returncode == 0, ok.stderr
    assert target.read_text(encoding="utf-8") != "what was there\n"
    assert (target.stat().st_mode & 0o777) == 0o640
    assert not [p for p in ex.iterdir() if p.name.startswith(".ragrade-")]  # no temporary file left


def test_an_interrupted_write_leaves_the_file_and_no_temporary(tmp_path):
    from ragrade.io.writers import output_path

    target = tmp_path / "run.tsv"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError), output_path(target) as tmp:
        Path(tmp).write_text("half", encoding="utf-8")
        raise RuntimeError("interrupted")
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.tsv"]


def test_retrieve_whose_every_query_fails_writes_nothing(ex):
    (ex / "broken.py").write_text("def search(query):\n    raise RuntimeError('down')\n", encoding="utf-8")
    target = ex / "run.parquet"
    target.write_bytes(b"an earlier run")
    proc = _cli(["retrieve", "examples.broken:search", "--queries", str(ex / "topics.tsv"), "-o", str(target)], ex)
    assert proc.returncode == 1 and "nothing written" in proc.stderr, proc.stderr
    assert target.read_bytes() == b"an earlier run"
