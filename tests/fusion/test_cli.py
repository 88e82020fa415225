"""ragrade fuse on the command line: files in, fused TREC run out; --optimize; errors exit 2 on one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main

EX = Path(__file__).resolve().parents[2] / "examples"
RUNS = [str(EX / "run.tsv"), str(EX / "run_dense.tsv")]


def test_fuse_writes_the_library_result(tmp_path: Path) -> None:
    out = tmp_path / "fused.trec"
    res = CliRunner().invoke(main, ["fuse", *RUNS, "--method", "rrf", "--param", "k=20", "-o", str(out)])
    assert res.exit_code == 0, res.output
    written = ragrade.read_run(str(out))
    lib = ragrade.fuse({"run": RUNS[0], "run_dense": RUNS[1]}, method="rrf", params={"k": 20})
    assert written.to_lists(ties="input") == lib.to_lists(ties="input")
    assert written.n_queries == 36


def test_weights_and_profile(tmp_path: Path) -> None:
    out = tmp_path / "w.tsv"
    res = CliRunner().invoke(main, ["fuse", *RUNS, "--method", "CombSUM", "--norm", "zmuv", "-o", str(out)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["fuse", *RUNS, "--method", "wsum", "--weights", "0.3,0.7", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert ragrade.read_run(str(out)).n_rows > 0


def test_optimize_prints_the_choice(tmp_path: Path) -> None:
    out = tmp_path / "o.trec"
    res = CliRunner().invoke(main, ["fuse", *RUNS, "--method", "wsum", "--optimize", str(EX / "qrels.tsv"),
                                    "-m", "ndcg@10", "--cv", "3", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "best weights=" in res.output and "3-fold cross-validated ndcg@10" in res.output
    assert out.exists()


@pytest.mark.parametrize("args, message", [
    (["--method", "bogus"], "unknown fusion method"),
    (["--method", "wsum"], "needs weights"),
    (["--method", "rrf", "--param", "k"], "NAME=VALUE"),
    (["--method", "wsum", "--weights", "1,x"], "--weights"),
    (["--method", "wsum", "--weights", "1,2,3"], "2 runs need 2 weights"),
    (["--norm", "nope"], "unknown normalisation"),
])
def test_errors_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(main, ["fuse", *RUNS, *args, "-o", str(tmp_path / "x.trec")])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], res.output
    assert "Traceback" not in res.output


def test_missing_file_exit_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["fuse", RUNS[0], str(tmp_path / "none.tsv"), "-o", str(tmp_path / "x.trec")])
    assert res.exit_code == 2 and res.output.startswith("error:")
