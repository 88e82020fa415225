"""The judge under hostile or misconfigured conditions (issue 11, items 6-11): an echoing server never gets
the key stored or printed, configuration errors stop the run after one call and are never cached, the
exit statuses follow the shared convention, the offline judge says it is not cached, and a process
uses judgments another process wrote to the same cache meanwhile."""

from __future__ import annotations

import json
import socket
import sqlite3

import pytest
from click.testing import CliRunner
from seed_data import SEED_ROWS

from ragrade.cli import main
from ragrade.judges import Judgment, JudgmentCache, ScriptedJudge, evaluate_judged, judgment_key
from ragrade.llm.base import JudgeConfigError, redact

httpx = pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")

from fakeserver import FakeLLMServer  # noqa: E402

SECRET = "sk-live-0123456789abcdefSECRETxyz"


@pytest.fixture
def server():
    with FakeLLMServer() as s:
        yield s


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _judge_cli(server, data, cache, *extra, env=None):
    args = ["judge", str(data), "--judge", "openai", "--base-url", server.base_url, "--model", "fake",
            "--api-key-env", "RAGRADE_TEST_KEY", "--cache", str(cache), "--no-progress", "--max-retries", "1",
            *map(str, extra)]
    return CliRunner().invoke(main, args, env=env or {"RAGRADE_TEST_KEY": SECRET})


def _everything_on_disk(directory) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


# -- 7. the key is scrubbed from everything stored or printed -------------------------------------------
FAULTS = ["echo_nochoices", "echo_text", "echo_content", "echo_json", "echo_500"]


def test_echoing_server_never_gets_the_key_stored_or_printed(server, tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    server.faults.extend(FAULTS * 40)  # every request gets an echo of itself, key included
    store = tmp_path / "store"
    store.mkdir()
    cache, details = store / "cache.sqlite3", store / "details.jsonl"
    res = _judge_cli(server, data, cache, "--details", details, "--format", "json", "--max-failed", "100")
    table = _judge_cli(server, data, store / "cache2.sqlite3", "--per-query", "--retry-failed",
                       "--max-failed", "100")
    assert res.exit_code == 0, res.output
    assert any(e["auth"] == f"Bearer {SECRET}" for e in server.log)  # the key was sent (only in the header)
    assert {e["fault"] for e in server.log} >= set(FAULTS)  # every echo was served
    stored = _everything_on_disk(store)  # the SQLite files (WAL included) and the details
    for text in (stored, res.output.encode(), table.output.encode()):
        assert SECRET.encode() not in text
        assert SECRET[:12].encode() not in text  # not even a clipped piece
        assert b"Bearer sk-" not in text
    assert details.read_text().count("***") > 0  # the echoes were kept, scrubbed
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT output, error FROM judgments").fetchall()
    assert rows and all(SECRET not in (o or "") + (e or "") for o, e in rows)


def test_redact_covers_the_usual_credential_shapes():
    text = ('Authorization: Bearer abcdefgh12345678 "authorization": "Bearer zzz.yyy.xxx" api_key=abcd1234efgh '
            "sk-proj-ABCDEFGHIJKLMNOPQRST hf_ABCDEFGHIJKLMNOPQRSTU AKIAABCDEFGHIJKLMNOP mykey-1234567890")
    out = redact({"t": [text, (text,)]}, ["mykey-1234567890", "short"])
    flat = json.dumps(out)
    for leaked in ("abcdefgh12345678", "zzz.yyy.xxx", "abcd1234efgh", "ABCDEFGHIJKLMNOPQRST", "hf_ABCD",
                   "AKIAABCD", "mykey-1234567890"):
        assert leaked not in flat, leaked
    assert redact("a short key is left alone: short", ["short"]).endswith("short")


# -- 8. configuration errors stop the run after one call, and are never cached ---------------------------
def test_wrong_key_stops_after_one_call_and_caches_nothing(server, tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    cache = tmp_path / "cache.sqlite3"
    server.api_key = "the-right-key-0123456789"
    res = _judge_cli(server, data, cache, "--max-concurrency", "8")
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: the server refused the API key (HTTP 401)")
    assert "RAGRADE_TEST_KEY" in res.stderr and SECRET not in res.output
    assert res.stdout == ""
    assert server.count() == 1
    with JudgmentCache(cache) as c:
        assert len(c) == 0
    # with the right key, the next run asks every judgment (nothing was cached as failed)
    ok = _judge_cli(server, data, cache, "--format", "json", env={"RAGRADE_TEST_KEY": server.api_key})
    assert ok.exit_code == 0, ok.output
    summary = json.loads(ok.stdout)["summary"]["judgments"]
    assert summary["calls"] == summary["needed"] and summary["failed"] == 0


def test_old_cached_auth_failures_are_not_reused(server, tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS[:1])
    cache = tmp_path / "cache.sqlite3"
    first = _judge_cli(server, data, cache, "--format", "json")
    needed = json.loads(first.stdout)["summary"]["judgments"]["needed"]
    with sqlite3.connect(cache) as db:  # what an older version left: permanent "HTTP 401" failures
        db.execute("UPDATE judgments SET status = 'failed', output = NULL, transient = 0, "
                   "error = 'HTTP 401: Incorrect API key provided'")
    again = _judge_cli(server, data, cache, "--format", "json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["summary"]["judgments"]["calls"] == needed


def test_unknown_model_stops_after_one_call(server, tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    server.always = "404"
    res = _judge_cli(server, data, tmp_path / "c.sqlite3")
    assert res.exit_code == 2 and "HTTP 404" in res.stderr and "--model (fake)" in res.stderr
    assert server.count() == 1


def test_nothing_listening_stops_at_once(tmp_path):
    with socket.socket() as s:  # a port that was free a moment ago: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    res = CliRunner().invoke(main, ["judge", str(data), "--judge", "openai", "--base-url",
                                    f"http://127.0.0.1:{port}/v1", "--model", "m", "--no-progress",
                                    "--cache", str(tmp_path / "c.sqlite3")])
    assert res.exit_code == 2 and res.stderr.startswith("error: cannot connect to the judge server")
    with JudgmentCache(tmp_path / "c.sqlite3") as c:
        assert len(c) == 0


def test_config_error_raises_from_the_api_too(server, tmp_path):
    from ragrade.judges import OpenAIJudge

    server.api_key = "the-right-key-0123456789"
    judge = OpenAIJudge(model="fake", base_url=server.base_url, api_key_env="NO_SUCH_VARIABLE_FOR_TESTS")
    with pytest.raises(JudgeConfigError, match="HTTP 401"):
        evaluate_judged(SEED_ROWS, judge=judge, cache=tmp_path / "c.sqlite3")
    assert server.count() == 1


# -- 9. exit statuses ---------------------------------------------------------------------------------
def test_every_judgment_failed_exits_1_with_results_printed(server, tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    server.always = "500"
    res = _judge_cli(server, data, tmp_path / "c.sqlite3", "--max-retries", "0", "--format", "json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)  # the results are printed all the same
    j = out["summary"]["judgments"]
    assert j["failed"] == j["needed"] > 0
    assert res.stderr.startswith(f"error: {j['failed']} of {j['needed']} judgments failed (100.0%")
    assert "HTTP 500" in res.stderr


@pytest.mark.parametrize(("allowed", "status"), [("0", 1), ("1.5%", 1), ("10", 0), ("100%", 0)])
def test_max_failed_threshold(server, tmp_path, allowed, status):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    probe = _judge_cli(server, data, tmp_path / "probe.sqlite3", "--format", "json")
    needed = json.loads(probe.stdout)["summary"]["judgments"]["needed"]
    server.faults.extend(["ok"] + ["500"] * 2 + ["ok"] * (needed - 1))  # exactly one judgment fails
    res = _judge_cli(server, data, tmp_path / "c.sqlite3", "--max-retries", "1", "--max-concurrency", "1",
                     "--max-failed", allowed)
    assert res.exit_code == status, res.output
    assert 1.5 < 100 / needed < 10  # one failure is above 1.5 % and below 10 %


def test_max_failed_is_validated(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    res = CliRunner().invoke(main, ["judge", str(data), "--max-failed", "120"])
    assert res.exit_code == 2 and "between 0 and 100" in res.output


@pytest.mark.parametrize(("name", "content"), [("d.jsonl", ""), ("d.jsonl", "\n\n"), ("d.json", "[]"),
                                               ("d.csv", "id,question,reference,contexts\n")])
def test_empty_dataset_exits_2_like_evaluate(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    res = CliRunner().invoke(main, ["judge", str(path), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"error: {path}: the file is empty") and res.stdout == ""


def test_missing_dataset_is_error_2_lowercase(tmp_path):
    res = CliRunner().invoke(main, ["judge", str(tmp_path / "none.jsonl")])
    assert res.exit_code == 2 and res.stderr.startswith("error: ") and "no such file" in res.stderr


# -- 10. the offline judge says it is not cached ---------------------------------------------------------
def test_offline_judge_says_it_is_not_cached(tmp_path):
    data = _jsonl(tmp_path / "d.jsonl", SEED_ROWS)
    res = CliRunner().invoke(main, ["judge", str(data), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "note: judgments of the lexical judge are not cached" in res.stdout
    js = CliRunner().invoke(main, ["judge", str(data), "--no-progress", "--format", "json"])
    assert "not cached" in json.loads(js.stdout)["summary"]["cache_note"]


# -- 11. another process's judgments are picked up before calling ----------------------------------------
def test_judgments_written_meanwhile_by_another_process_are_not_asked_again(tmp_path):
    from seed_data import seed_script

    from ragrade.judges.metrics import parse_many
    from ragrade.judges.prompts import normalize_output
    from ragrade.judges.runner import _plan, examples_from

    cache_path = tmp_path / "shared.sqlite3"
    other = JudgmentCache(cache_path)  # "another process": its own connection to the same file
    asked: list[str] = []

    def script(task, inputs):
        asked.append(judgment_key(judge, task, inputs))
        if len(asked) == 1:  # while this one is being answered, the other process answers all the rest
            for key, (t, inp) in plan.items():
                if key != asked[0]:
                    other.put(key, judge=judge.name, model=judge.model, prompt_version=judge.prompt_version,
                              task=t, judgment=Judgment(normalize_output(t, seed_script(t, inp))))
        return seed_script(task, inputs)

    judge = ScriptedJudge(script)
    plan: dict = {}
    for m in parse_many(None):
        for ex in examples_from(SEED_ROWS):
            _plan(m, ex, judge, plan)
    res = evaluate_judged(SEED_ROWS, judge=judge, cache=cache_path, max_concurrency=1)
    other.close()
    j = res.summary["judgments"]
    assert len(asked) == 1 and j["calls"] == 1
    assert j["cache_hits"] == j["needed"] - 1 == len(plan) - 1
    direct = evaluate_judged(SEED_ROWS, judge=ScriptedJudge(seed_script), cache=False)
    assert res.per_query.equals(direct.per_query)
