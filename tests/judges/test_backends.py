"""The one LLM core (issue 21, item 4): one backend registry builds the judges of ``ragrade judge`` and
``ragrade assess``; a backend added as one file plus one registry line (Ollama's native API, tried here
against a fake Ollama server on 127.0.0.1) serves both commands, inherits the retry policy, and keeps the
key out of everything; a backend registered at run time is a valid ``--judge`` choice of both commands;
the budget is the same for both."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from seed_data import SEED_ROWS

from ragrade.cli import main
from ragrade.judges import Judgment
from ragrade.llm import backends
from ragrade.llm.base import JudgeConfigError

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
KEY = "sk-ollama-Zq81mWx7890abcdefXYZ"

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "assessment"))
import assess_helpers  # noqa: E402
from fakeserver import answer_for  # noqa: E402


class FakeOllama:
    """Ollama's ``POST /api/chat`` (non-streaming): answers with the fake server's deterministic judgments
    (or grades), or the faults queued in ``faults`` (``429``, ``500``, ``401``, ``piece``: a reply quoting the
    key without its first five characters)."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        self.faults: list[str] = []
        me = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                fault = me.faults.pop(0) if me.faults else "ok"
                me.log.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization"),
                               "fault": fault})
                if self.path != "/api/chat":
                    return self._send(404, {"error": "404 page not found"})
                if fault in ("429", "500"):
                    return self._send(int(fault), {"error": "busy"})
                if fault == "401":
                    return self._send(401, {"error": "unauthorized"})
                user = body["messages"][-1]["content"]
                answer = (assess_helpers.grade_answer(user) if user.startswith("Grade the PASSAGE")
                          else answer_for(user))
                if fault == "piece":
                    answer = {**answer, "reason": f"token {KEY[5:]}"}
                self._send(200, {"model": body["model"], "message": {"role": "assistant",
                                                                     "content": json.dumps(answer)},
                                 "done": True, "done_reason": "stop", "prompt_eval_count": 11, "eval_count": 3})

            def _send(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def ollama():
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    s = FakeOllama()
    yield s
    s.close()


def _dataset(tmp_path: Path) -> Path:
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in SEED_ROWS))
    return p


def _judge(tmp_path, *args, env=None):
    return CliRunner().invoke(main, ["judge", str(_dataset(tmp_path)), "--no-progress", *map(str, args)],
                              env=env or {"RAGRADE_OLLAMA_KEY": KEY})


def _assess(*args, env=None):
    base = ["assess", EXAMPLES / "run.tsv", "--queries", EXAMPLES / "topics.tsv", "--corpus",
            EXAMPLES / "corpus.jsonl", "--depth", "2", "--no-progress"]
    return CliRunner().invoke(main, [str(a) for a in [*base, *args]], env=env or {"RAGRADE_OLLAMA_KEY": KEY})


# -- the registry -----------------------------------------------------------------------------------------


def test_the_registry_builds_every_judge_of_both_commands():
    from ragrade.assessment.graders import LexicalGrader, LLMGrader
    from ragrade.assessment.prompt import TASK_SET as GRADE
    from ragrade.judges import LexicalJudge, OpenAIJudge
    from ragrade.judges.prompts import TASK_SET as CONTEXT

    assert isinstance(backends.make_judge("offline", CONTEXT), LexicalJudge)
    assert isinstance(backends.make_judge("offline", GRADE), LexicalGrader)
    j = backends.make_judge("openai", CONTEXT, model="m", base_url="http://127.0.0.1:1/v1")
    g = backends.make_judge("openai", GRADE, model="m", base_url="http://127.0.0.1:1/v1")
    # the same values, hence the same cache keys, as the classes built directly
    assert (j.name, j.prompt_version, j.settings.max_tokens) == ("openai", OpenAIJudge(model="m").prompt_version, 1024)
    assert (g.name, g.prompt_version, g.settings.max_tokens) == ("openai", LLMGrader(model="m").prompt_version, 64)
    assert g.messages("graded_relevance", {"query": "q", "title": "", "passage": "p"}) == \
        LLMGrader(model="m").messages("graded_relevance", {"query": "q", "title": "", "passage": "p"})
    from ragrade.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="judge backend"):
        backends.make_judge("nope", CONTEXT)


@pytest.mark.parametrize("command", ["judge", "assess"])
def test_the_backend_choices_of_both_commands_come_from_the_registry(command):
    res = CliRunner().invoke(main, [command, "--help"])
    assert res.exit_code == 0
    assert "[" + "|".join(backends.names()) + "]" in res.output.replace("\n", "").replace(" ", "")


# -- one file + one registry line: Ollama's native API ---------------------------------------------------


def test_ollama_backend_judges_and_assesses(ollama, tmp_path):
    common = ["--judge", "ollama", "--base-url", ollama.url, "--model", "llama3.2", "--api-key-env",
              "RAGRADE_OLLAMA_KEY", "--max-retries", "3"]
    ollama.faults = ["429", "500"]  # retried by the policy the backend inherits
    res = _judge(tmp_path, *common, "--cache", tmp_path / "j.sqlite3", "--format", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["judge"] == "ollama" and out["summary"]["judgments"]["failed"] == 0
    assert out["means"]["context_recall"] is not None
    first = ollama.log[0]["body"]
    assert ollama.log[0]["path"] == "/api/chat" and first["stream"] is False
    assert first["options"] == {"temperature": 0.0, "seed": 0, "num_predict": 1024}
    assert isinstance(first["format"], dict)  # the task's JSON schema
    assert ollama.log[0]["auth"] == f"Bearer {KEY}"
    assert out["summary"]["judgments"]["prompt_tokens"] > 0
    n = len(ollama.log)
    again = _judge(tmp_path, *common, "--cache", tmp_path / "j.sqlite3", "--format", "json")
    assert again.exit_code == 0 and len(ollama.log) == n  # the one cache: zero calls

    res = _assess(*common, "-o", tmp_path / "o.qrels", "--cache", tmp_path / "a.sqlite3")
    assert res.exit_code == 0, res.output
    grades = (tmp_path / "o.qrels").read_text().splitlines()
    assert grades and all(line.split()[3] in "0123" for line in grades)
    assert any(e["body"]["options"]["num_predict"] == 64 for e in ollama.log[n:])  # the assessor's reply cap


def test_ollama_backend_wrong_key_costs_one_request_and_no_piece_of_the_key_leaks(ollama, tmp_path):
    common = ["--judge", "ollama", "--base-url", ollama.url, "--model", "m", "--api-key-env", "RAGRADE_OLLAMA_KEY"]
    ollama.faults = ["401"]
    res = _judge(tmp_path, *common, "--cache", tmp_path / "c.sqlite3", "--max-concurrency", "8")
    assert res.exit_code == 2 and "HTTP 401" in res.stderr and len(ollama.log) == 1
    ollama.faults = ["piece"] * 50
    details = tmp_path / "details.jsonl"
    res = _judge(tmp_path, *common, "--cache", tmp_path / "c.sqlite3", "--details", details)
    assert res.exit_code == 0, res.output
    blob = details.read_bytes() + (tmp_path / "c.sqlite3").read_bytes() + res.output.encode()
    wal = tmp_path / "c.sqlite3-wal"
    blob += wal.read_bytes() if wal.exists() else b""
    assert not [KEY[i : i + 10] for i in range(len(KEY) - 9) if KEY[i : i + 10].encode() in blob]
    assert b"***" in details.read_bytes()


def test_unknown_endpoint_is_a_configuration_error(ollama, tmp_path):
    from ragrade.judges import evaluate_judged
    from ragrade.judges.prompts import TASK_SET

    judge = backends.make_judge("ollama", TASK_SET, model="m", base_url=ollama.url + "/v1")  # wrong root
    with pytest.raises(JudgeConfigError, match="HTTP 404"):
        evaluate_judged(SEED_ROWS, ["context_recall"], judge=judge, cache=False)
    assert len(ollama.log) == 1


# -- a backend registered at run time --------------------------------------------------------------------


class _Constant:
    """An offline backend answering every task with a fixed output (for the registry test)."""

    name, model, prompt_version, cacheable, max_concurrency = "constant", "none", "c1", False, 1

    async def judge(self, task: str, inputs: Any) -> Judgment:
        if task == "graded_relevance":
            return Judgment({"grade": 2})
        if task == "chunk_verdict":
            return Judgment({"verdict": 1, "reason": "always"})
        if task == "entities":
            return Judgment({"entities": ["X"]})
        key = "attributed" if task == "attribution" else "relevant"
        return Judgment({"statements": [{"statement": "s", key: 1, "reason": "always"}]})

    async def aclose(self) -> None:
        return None


def test_a_backend_registered_at_run_time_serves_both_commands(tmp_path, monkeypatch):
    monkeypatch.setitem(backends.BACKENDS, "constant", backends.Backend(
        "constant", "a fixed answer", offline={"context": f"{__name__}:_Constant", "grade": f"{__name__}:_Constant"}))
    res = _judge(tmp_path, "--judge", "constant", "-m", "llm_context_precision@2", "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["means"]["llm_context_precision@2"] == 1.0
    res = _assess("--judge", "constant", "-o", tmp_path / "o.qrels", "--no-cache")
    assert res.exit_code == 0, res.output
    assert {line.split()[3] for line in (tmp_path / "o.qrels").read_text().splitlines()} == {"2"}


# -- one budget for both ---------------------------------------------------------------------------------


def test_judge_budget_is_never_exceeded_and_a_rerun_resumes(ollama, tmp_path):
    common = ["--judge", "ollama", "--base-url", ollama.url, "--model", "m", "--api-key-env", "RAGRADE_OLLAMA_KEY",
              "--cache", tmp_path / "c.sqlite3", "--format", "json"]
    res = _judge(tmp_path, *common, "--budget-calls", "3")
    assert res.exit_code == 0, res.output
    j = json.loads(res.stdout)["summary"]["judgments"]
    assert len(ollama.log) == 3 and j["calls"] == 3 and j["budget_reached"] is True
    assert j["unasked"] == j["needed"] - 3 and "budget reached" in res.stderr
    rest = _judge(tmp_path, *common)
    j2 = json.loads(rest.stdout)["summary"]["judgments"]
    assert rest.exit_code == 0 and j2["cache_hits"] == 3 and j2["calls"] == j2["needed"] - 3
    assert len(ollama.log) == j2["needed"]  # nothing asked twice
    usage = _judge(tmp_path, "--budget-usd", "1")
    assert usage.exit_code == 2 and "--budget-usd needs --prompt-price" in usage.output
