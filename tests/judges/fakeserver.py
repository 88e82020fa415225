"""A fault-injecting OpenAI-compatible chat-completions server on 127.0.0.1 (real sockets), for tests.

Answers are deterministic functions of the prompt (see :func:`answer_for`). Faults are taken, one per
request, from a queue (``server.faults``); when the queue is empty every request is answered normally,
unless ``server.always`` names a fault to give every time.

Faults: ``429`` (with ``Retry-After``: ``server.retry_after``), ``500``, ``malformed`` (a body that is not
JSON), ``truncated`` (Content-Length larger than the body, connection closed), ``slow`` (sleeps
``server.slow_seconds`` before answering), ``chatter`` (the JSON answer wrapped in prose and a code fence),
``garbage`` (a reply with no JSON in it), ``reject_schema`` (400 naming response_format when json_schema is
asked for), ``404`` (no such model).

Faults that echo the request back, headers (``Authorization: Bearer <key>``) and body, as a careless proxy
or a debugging server does: ``echo_nochoices`` (a 200 JSON body with the echo and no ``choices``),
``echo_text`` (a 200 body that is not JSON), ``echo_content`` (a reply whose message is the echo, not
JSON), ``echo_json`` (a valid answer whose reason quotes the echo), ``echo_401`` and ``echo_500`` (error
bodies with the echo).

Faults that echo *pieces* of the key the request carried (``server.key_pieces``), as a server or proxy
that quotes or masks it does: ``piece_json`` (a valid answer whose reason quotes the key without its first
five characters), ``piece_content`` (an unreadable reply quoting a middle piece), ``piece_text`` (a
non-JSON 200 body with a piece), ``piece_500`` (an error body with a piece) and ``piece_401`` (OpenAI's
masked-key message: ``Incorrect API key provided: sk-te****`` + the key's last 13 characters).

``server.api_key``: when set, a request without ``Authorization: Bearer <api_key>`` gets a 401.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def detect_task(user: str) -> str:
    if "REFERENCE ANSWER:" in user:
        return "attribution"
    if user.startswith("List the named entities"):
        return "entities"
    if user.startswith("Split the CONTEXT"):
        return "relevance"
    return "chunk_verdict"


def _field(user: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*?)(?=\n[A-Z ]+: |\n\nReply as JSON|\Z)", user, re.S | re.M)
    return m.group(1) if m else ""


def answer_for(user: str) -> dict[str, Any]:
    """A deterministic 'judgment': a chunk is useful / a statement supported when it shares a capitalised
    word with the answer; entities are the capitalised words."""
    task = detect_task(user)
    if task == "entities":
        return {"entities": sorted(set(re.findall(r"\b[A-Z][a-z]+\b", _field(user, "TEXT"))))}
    if task == "chunk_verdict":
        ctx = set(re.findall(r"\b[A-Z][a-z]+\b", _field(user, "CONTEXT")))
        ans = set(re.findall(r"\b[A-Z][a-z]+\b", _field(user, "ANSWER") or _field(user, "QUESTION")))
        return {"reason": "shared capitalised words", "verdict": int(bool(ctx & ans))}
    if task == "attribution":
        ctx = _field(user, "CONTEXT").lower()
        stmts = [s.strip() for s in re.split(r"(?<=\.)\s+", _field(user, "REFERENCE ANSWER")) if s.strip()]
        return {
            "statements": [
                {"statement": s, "reason": "word overlap", "attributed": int(s.split()[-1].strip(".").lower() in ctx)}
                for s in stmts
            ]
        }
    ctx = _field(user, "CONTEXT")
    q = set(_field(user, "QUESTION").lower().split())
    stmts = [s.strip() for s in re.split(r"(?<=\.)\s+", ctx) if s.strip()]
    return {
        "statements": [
            {"statement": s, "reason": "overlap", "relevant": int(len(q & set(s.lower().split())) >= 2)}
            for s in stmts
        ]
    }


class FakeLLMServer:
    def __init__(self) -> None:
        self.faults: deque[str] = deque()
        self.always: str | None = None
        self.retry_after = "0.05"
        self.slow_seconds = 1.0
        self.latency = 0.0
        self.api_key: str | None = None
        self.lock = threading.Lock()
        self.log: list[dict[str, Any]] = []  # one entry per request: time, fault, task, user, headers
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                user = body["messages"][-1]["content"]
                with server.lock:
                    fault = server.faults.popleft() if server.faults else (server.always or "ok")
                    server.log.append(
                        {
                            "time": time.monotonic(),
                            "fault": fault,
                            "task": detect_task(user),
                            "user": user,
                            "auth": self.headers.get("Authorization"),
                            "body": body,
                        }
                    )
                if server.latency:
                    time.sleep(server.latency)
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self._send(401, b'{"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}')
                if fault.startswith("echo"):
                    return self._echo(fault, user, body)
                if fault.startswith("piece"):
                    return self._piece(fault, user)
                if fault == "404":
                    return self._send(404, b'{"error": {"message": "The model does not exist", "code": "model_not_found"}}')
                rf = body.get("response_format") or {}
                if fault == "reject_schema" and rf.get("type") == "json_schema":
                    return self._send(400, b'{"error": {"message": "response_format json_schema is not supported"}}')
                if fault == "429":
                    return self._send(429, b'{"error": "slow down"}', {"Retry-After": server.retry_after})
                if fault == "500":
                    return self._send(500, b'{"error": "boom"}')
                if fault == "malformed":
                    return self._send(200, b'{"choices": [{"message": {"content": "{\\"verd')
                if fault == "truncated":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "5000")
                    self.end_headers()
                    self.wfile.write(b'{"choices": [')
                    self.wfile.flush()
                    self.close_connection = True
                    return None
                if fault == "slow":
                    time.sleep(server.slow_seconds)
                content = json.dumps(answer_for(user))
                if fault == "chatter":
                    content = f"Sure! Here is my grading:\n```json\n{content}\n```\nHope this helps {{not json}}."
                if fault == "garbage":
                    content = "I would say yes, it is relevant."
                reply = {
                    "id": "x",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": len(user.split()), "completion_tokens": len(content.split()), "total_tokens": 0},
                }
                try:
                    return self._send(200, json.dumps(reply).encode())
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    return None

            def _echo(self, fault: str, user: str, body: dict[str, Any]) -> None:
                echo = json.dumps({"headers": dict(self.headers.items()), "request": body})
                if fault == "echo_nochoices":
                    return self._send(200, json.dumps({"object": "debug", "echo": echo}).encode())
                if fault == "echo_text":
                    return self._send(200, f"debug dump\n{echo}\n".encode())
                if fault == "echo_401":
                    return self._send(401, echo.encode())
                if fault == "echo_500":
                    return self._send(500, echo.encode())
                if fault == "echo_content":
                    content = f"I received: {echo}"
                else:  # echo_json: a valid answer that quotes the request in its reason
                    answer = answer_for(user)
                    answer["reason"] = f"as asked in {echo}"
                    content = json.dumps(answer)
                reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
                return self._send(200, json.dumps(reply).encode())

            def _piece(self, fault: str, user: str) -> None:
                key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                if fault == "piece_401":
                    masked = f"Incorrect API key provided: {key[:5]}****{key[-13:]}. You can find your API key at ..."
                    return self._send(401, json.dumps({"error": {"message": masked}}).encode())
                if fault == "piece_500":
                    return self._send(500, f"upstream refused token ...{key[4:-3]}... (debug)".encode())
                if fault == "piece_text":
                    return self._send(200, f"proxy log: key tail {key[-14:]} mid {key[6:20]}".encode())
                if fault == "piece_content":
                    content = f"Your token was {key[3:]}, I cannot grade."
                else:  # piece_json: a valid answer quoting the key without its first five characters
                    answer = answer_for(user)
                    answer["reason"] = f"noted credential {key[5:]} and graded"
                    content = json.dumps(answer)
                reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
                return self._send(200, json.dumps(reply).encode())

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeLLMServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, fault: str | None = None) -> int:
        with self.lock:
            return sum(1 for e in self.log if fault is None or e["fault"] == fault)


def main() -> None:  # pragma: no cover - manual use: python fakeserver.py
    with FakeLLMServer() as s:
        print(s.base_url, flush=True)
        s.thread.join()


if __name__ == "__main__":  # pragma: no cover
    main()
