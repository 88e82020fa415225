"""One voice across the commands: full-width tables outside a terminal, notes that say what happened,
one error-line format, one vocabulary (issue 23, items 10, 11, 15, 16)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragrade.cli import main

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
Q, RUN, DENSE, JUDGE = (str(EX / n) for n in ("qrels.tsv", "run.tsv", "run_dense.tsv", "judge.jsonl"))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command in a fresh process with stdout a pipe (not a terminal), as in CI logs or `| cat`."""
    env = {"PYTHONPATH": str(Path(__import__("ragrade").__file__).parents[1]), "PATH": "/usr/bin:/bin",
           "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "ragrade", *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=ROOT)


def test_judge_table_is_not_truncated_when_piped(tmp_path):
    r = cli("judge", JUDGE)
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout
    assert "undef" in r.stdout
    means = re.findall(r"\b[01]\.\d{4}\b", r.stdout)
    assert len(means) >= 5  # every mean printed with its 4 digits


def test_gate_table_is_not_wrapped_when_piped(tmp_path):
    base = tmp_path / "b.json"
    r = cli("evaluate", Q, RUN, "-m", "ndcg@10", "-m", "recall@5", "-m", "P@5", "-m", "map@100",
            "--save-baseline", str(base))
    assert r.returncode == 0, r.stderr
    r = cli("gate", str(base), Q, DENSE)
    assert r.returncode in (0, 1), r.stderr
    assert "baseline" in r.stdout and "candidate" in r.stdout
    assert "baseli\n" not in r.stdout and "…" not in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("│ ")]
    assert len(rows) == 4  # one line per metric: no cell wrapped onto a second line


def test_compare_table_is_not_truncated_when_piped():
    r = cli("compare", Q, RUN, DENSE, "-m", "ndcg@10", "-m", "recall@5", "-m", "P@5", "-m", "map@100",
            "-m", "mrr@10")
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout


@pytest.mark.parametrize("profile", ["autorag", "llamaindex"])
def test_list_profiles_say_a_missing_query_is_nan_not_zero(profile):
    r = CliRunner().invoke(main, ["evaluate", Q, RUN, "-m", "recall@5", "--profile", profile])
    assert r.exit_code == 0, r.output
    assert "missing from the run, NaN, left out of the means (e.g. 'q31')" in r.output
    assert "scored 0 (e.g. 'q31')" not in r.output


def test_default_engine_still_scores_a_missing_query_0():
    r = CliRunner().invoke(main, ["evaluate", Q, RUN, "-m", "recall@5"])
    assert "missing from the run, scored 0 (e.g. 'q31')" in r.output


def test_a_profile_that_scores_missing_queries_0_says_so():
    r = CliRunner().invoke(main, ["evaluate", Q, RUN, "-m", "recall@5", "--profile", "ragas"])
    assert "missing from the run, scored 0 (e.g. 'q31')" in r.output
    assert "│ recall@5 │ 0.5434 │      34 │" in r.output  # 36 queries - 2 without relevant ones: q31 counted


def test_usage_errors_are_one_error_line_with_status_2():
    for args in (["evaluate", Q], ["evaluate", Q, RUN, "--bogus"], ["compare", Q, RUN, DENSE, "-m", "ndcg@10",
                                                                   "--test", "nope"], ["nope"]):
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
        assert "Usage:" not in r.stderr and "Traceback" not in r.stderr
    assert "'--bogus'" in cli("evaluate", Q, RUN, "--bogus").stderr
    assert "'nope'" in cli("compare", Q, RUN, DENSE, "-m", "ndcg@10", "--test", "nope").stderr


@pytest.mark.parametrize(("alias", "name"), [("fisher", "randomization"), ("permutation", "randomization"),
                                             ("student", "t"), ("hsd", "tukey")])
def test_compare_takes_the_test_aliases_python_takes(alias, name):
    r = CliRunner().invoke(main, ["compare", Q, RUN, DENSE, "-m", "ndcg@10", "--test", alias,
                                  "--format", "json", "--resamples", "200"])
    assert r.exit_code == 0, r.output
    assert f'"{name}"' in r.output


def test_compare_confidence_sets_the_interval_level():
    import json

    outs = []
    for level in ("0.5", "0.99"):
        r = CliRunner().invoke(main, ["compare", Q, RUN, DENSE, "-m", "ndcg@10", "--confidence", level,
                                      "--format", "json"])
        assert r.exit_code == 0, r.output
        outs.append(json.loads(r.stdout[r.stdout.index("{"):]))
    assert json.dumps(outs[0]) != json.dumps(outs[1])
    assert "0.99" in json.dumps(outs[1])


def test_gate_resamples_and_no_former_name(tmp_path):
    base = tmp_path / "b.json"
    assert CliRunner().invoke(main, ["evaluate", Q, RUN, "-m", "ndcg@10", "--save-baseline", str(base)]).exit_code == 0
    new = CliRunner().invoke(main, ["gate", str(base), Q, DENSE, "--resamples", "500", "--format", "json"])
    old = CliRunner().invoke(main, ["gate", str(base), Q, DENSE, "--n-resamples", "500", "--format", "json"])
    assert new.exit_code == 0 and old.exit_code == 2  # version 0.x: the former name is gone (CHANGELOG.md)
    helptext = CliRunner().invoke(main, ["gate", "--help"]).output
    assert "--resamples" in helptext and "--n-resamples" not in helptext


def test_run_names_are_file_names_in_baseline_gate_and_agreement(tmp_path):
    import json

    base = tmp_path / "b.json"
    CliRunner().invoke(main, ["evaluate", Q, RUN, "-m", "ndcg@10", "--save-baseline", str(base)])
    assert json.loads(base.read_text())["run"] == "run"  # not the TREC tag 'bm25'
    r = CliRunner().invoke(main, ["gate", str(base), Q, DENSE, "--format", "json"])
    assert '"run_dense"' in r.stdout and '"dense"' not in r.stdout
    r = CliRunner().invoke(main, ["agreement", Q, Q, RUN, DENSE, "-m", "ndcg@10", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "\"run_dense\"" in r.stdout and "\"dense\"" not in r.stdout


def test_duplicates_note_is_printed_once_as_a_note(tmp_path):
    dup = tmp_path / "dup.tsv"
    lines = Path(RUN).read_text().splitlines()
    dup.write_text("\n".join([*lines, lines[0]]) + "\n")
    base = tmp_path / "b.json"
    assert cli("evaluate", Q, RUN, "-m", "ndcg@10", "--save-baseline", str(base)).returncode == 0
    for args in (["evaluate", Q, str(dup), "-m", "ndcg@10"], ["compare", Q, str(dup), DENSE, "-m", "ndcg@10"],
                 ["gate", str(base), Q, str(dup)]):
        r = cli(*args)
        assert r.returncode in (0, 1), r.stderr
        hits = [line for line in (r.stderr + r.stdout).splitlines() if "duplicate item" in line]  # gate: in its table
        assert len(hits) == 1 and hits[0].startswith("note: ") and "(credited once)" in hits[0], r.stderr + r.stdout


def test_info_lists_every_extra_and_says_plots_is_for_png():
    import json

    r = CliRunner().invoke(main, ["info", "--format", "json"])
    assert r.exit_code == 0, r.output
    extras = json.loads(r.stdout)["extras"]
    assert {"spark", "mlflow", "plots", "llm", "text", "stats"} <= set(extras)
    assert "PNG" in extras["plots"]["for"] and "HTML" not in extras["plots"]["for"].split("(")[0]


def test_assess_names_pooled_runs_by_file_name(tmp_path):
    import json

    out = tmp_path / "a.qrels"
    r = CliRunner().invoke(main, ["assess", RUN, DENSE, "--queries", str(EX / "topics.tsv"), "--corpus",
                                  str(EX / "corpus.jsonl"), "--depth", "2", "-o", str(out), "--no-cache"])
    assert r.exit_code == 0, r.output
    prov = json.loads((tmp_path / "a.qrels.provenance.json").read_text())
    assert prov["pool"]["runs"] == ["run", "run_dense"]


def test_compare_notes_name_the_run_they_hold_for():
    r = cli("compare", Q, RUN, DENSE, "-m", "ndcg@10")
    assert r.returncode == 0, r.stderr
    # q31 is missing from run.tsv only; the queries without relevant judgments are the qrels', for every run
    assert "note: run: 1 ground-truth query missing from the run, scored 0 (e.g. 'q31')" in r.stderr
    assert "note: 2 queries without relevant judgments, left out of the means (e.g. 'q09', 'q27')" in r.stderr
