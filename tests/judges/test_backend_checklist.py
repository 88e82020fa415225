"""The judge-backend checklist (docs/judges.md, "Adding a backend"; docs/architecture.md), done by a test: a
toy HTTP backend — one class subclassing ``OpenAIBackend`` through its public hooks only — and a toy offline
backend — one class with ``judge`` —, each added with one ``Backend`` line to ``BACKENDS``, serve ``ragrade
judge`` and ``ragrade assess`` with no other change. Neither uses a private name of ragrade."""

from __future__ import annotations

import ast
import json
import sys
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from seed_data import SEED_ROWS

from ragrade.cli import main
from ragrade.llm import backends
from ragrade.llm.base import Judgment, Usage
from ragrade.llm.openai import OpenAIBackend
from ragrade.llm.tasks import OutputError

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "assessment"))
import assess_helpers  # noqa: E402
from fakeserver import answer_for  # noqa: E402

# -- the toy backends (what a contributor writes: one class each) ---------------------------------------

class ToyHTTPJudge(OpenAIBackend):
    """A toy API: ``POST {base_url}/toy/ask`` with ``{"model", "prompt"}``; the reply is ``{"answer": text,
    "tokens": [prompt, completion], "stopped": "end" | "cap"}``."""

    name = "toyhttp"
    endpoint = "toy/ask"

    def request_body(self, task: str, inputs: Mapping[str, str], mode: str) -> dict[str, Any]:
        return {"model": self.settings.model, "prompt": self.messages(task, inputs)[-1]["content"]}

    @staticmethod
    def reply_text(data: Mapping[str, Any]) -> str:
        if not isinstance(data.get("answer"), str):
            raise OutputError("no answer")
        return str(data["answer"])

    @staticmethod
    def reply_cut(data: Mapping[str, Any]) -> bool:
        return data.get("stopped") == "cap"

    def reply_usage(self, data: Mapping[str, Any]) -> Usage:
        pt, ct = data.get("tokens") or (0, 0)
        return Usage(int(pt), int(ct), 0.0)


class ToyOfflineJudge:
    """Answers every task of both task sets the same way, with no server."""

    name = "toyoffline"
    model = "constant"
    prompt_version = "toy-1"
    cacheable = False
    max_concurrency = 1

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        if task == "graded_relevance":
            return Judgment({"grade": 1})
        if task == "chunk_verdict":
            return Judgment({"verdict": 1, "reason": "toy"})
        if task == "entities":
            return Judgment({"entities": ["X"]})
        key = "attributed" if task == "attribution" else "relevant"
        return Judgment({"statements": [{"statement": "s", key: 1, "reason": "toy"}]})

    async def aclose(self) -> None:
        return None


# -- a server speaking the toy API ------------------------------------------------------------------------

class ToyServer:
    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        me = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                me.log.append({"path": self.path, "body": body})
                prompt = body["prompt"]
                answer = (assess_helpers.grade_answer(prompt) if prompt.startswith("Grade the PASSAGE")
                          else answer_for(prompt))
                data = json.dumps({"answer": json.dumps(answer), "tokens": [7, 2], "stopped": "end"}).encode()
                self.send_response(200 if self.path == "/v1/toy/ask" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    s = ToyServer()
    yield s
    s.close()


@pytest.fixture
def registered(monkeypatch):
    """The checklist's one line per backend."""
    monkeypatch.setitem(backends.BACKENDS, "toyhttp", backends.Backend(
        "toyhttp", "a toy HTTP API", llm=f"{__name__}:ToyHTTPJudge"))
    monkeypatch.setitem(backends.BACKENDS, "toyoffline", backends.Backend(
        "toyoffline", "a toy offline answerer", offline={"context": f"{__name__}:ToyOfflineJudge",
                                                         "grade": f"{__name__}:ToyOfflineJudge"}))


def _judge(tmp_path: Path, *args: Any) -> Any:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in SEED_ROWS))
    return CliRunner().invoke(main, ["judge", str(data), "--no-progress", "--format", "json", *map(str, args)],
                              env={"RAGRADE_TOY_KEY": "sk-toy"})


def _assess(*args: Any) -> Any:
    base = ["assess", EXAMPLES / "run.tsv", "--queries", EXAMPLES / "topics.tsv", "--corpus",
            EXAMPLES / "corpus.jsonl", "--depth", "2", "--no-progress", "--no-cache"]
    return CliRunner().invoke(main, [str(a) for a in [*base, *args]], env={"RAGRADE_TOY_KEY": "sk-toy"})


def test_a_toy_http_backend_serves_both_commands(tmp_path, server, registered):
    llm = ["--judge", "toyhttp", "--base-url", server.url, "--model", "m", "--api-key-env", "RAGRADE_TOY_KEY"]
    res = _judge(tmp_path, *llm, "-m", "llm_context_precision@2", "--no-cache")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert 0.0 <= out["means"]["llm_context_precision@2"] <= 1.0
    assert out["summary"]["judgments"]["calls"] == len(server.log) > 0
    assert {e["path"] for e in server.log} == {"/v1/toy/ask"}
    calls = len(server.log)
    res = _assess(*llm, "-o", tmp_path / "o.qrels")
    assert res.exit_code == 0, res.output
    assert len(server.log) > calls
    grades = {line.split()[3] for line in (tmp_path / "o.qrels").read_text().splitlines()}
    assert grades <= {"0", "1", "2", "3"} and grades


def test_a_toy_offline_backend_serves_both_commands(tmp_path, registered):
    res = _judge(tmp_path, "--judge", "toyoffline", "-m", "llm_context_precision@2")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["means"]["llm_context_precision@2"] == 1.0
    res = _assess("--judge", "toyoffline", "-o", tmp_path / "o.qrels")
    assert res.exit_code == 0, res.output
    assert {line.split()[3] for line in (tmp_path / "o.qrels").read_text().splitlines()} == {"1"}


def test_both_choices_are_listed(registered):
    for command in ("judge", "assess"):
        res = CliRunner().invoke(main, [command, "--help"])
        flat = res.output.replace("\n", "").replace(" ", "")
        assert "toyhttp" in flat and "toyoffline" in flat


def test_the_toy_backends_use_no_private_name_of_ragrade():
    """The checklist needs no private base class, hook or helper: the classes above define no underscored
    name but dunders, and this module imports none from ragrade."""
    for cls in (ToyHTTPJudge, ToyOfflineJudge):
        own = [n for n in vars(cls) if n.startswith("_") and not n.startswith("__")]
        assert own == [], f"{cls.__name__} overrides private names {own}"
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    private = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("ragrade")
               for a in n.names if a.name.startswith("_")]
    assert private == []


def test_the_llm_core_names_no_module_above_it():
    """Every ``module:Class`` of the registry lives in the LLM core; the offline answerers of the judge
    metrics and the assessor are named by their task sets."""
    from ragrade.assessment.prompt import TASK_SET as GRADE
    from ragrade.judges.prompts import TASK_SET as CONTEXT

    targets = [b.llm for b in backends.BACKENDS.values() if b.llm] + \
        [t for b in backends.BACKENDS.values() for t in b.offline.values()]
    assert all(t.startswith("ragrade.llm.") for t in targets), targets
    assert set(CONTEXT.offline) == set(GRADE.offline) == {"offline", "semantic"}
    from ragrade.assessment.graders import LexicalGrader
    from ragrade.judges import LexicalJudge

    assert isinstance(backends.make_judge("offline", CONTEXT), LexicalJudge)
    assert isinstance(backends.make_judge("offline", GRADE), LexicalGrader)
