"""A scripted OpenAI-compatible chat server on 127.0.0.1 (real sockets) answering ragrade's synthesis prompts,
and a small corpus with planted faults, for the synthesis tests and the benchmark.

Answers are deterministic functions of the prompt, so that concurrency, retries, resumption and a kill in
the middle never change them:

* a question prompt: the excerpt is one sentence of the passage (chosen by a hash of the passage), the
  question asks about that sentence's three longest words; a two-passage prompt takes one sentence of each;
* an answerability prompt: true, unless an excerpt holds ``UNANSWERABLE``.

Faults are planted in the documents as marker words; a prompt whose passage holds one is answered badly:

``BADJSON`` (not JSON), ``NOEXCERPT`` (no excerpt), ``NOTFOUND`` (an excerpt that is not in the passage),
``EMPTYQ`` (an empty question), ``CUTOFF`` (the reply cut at max_tokens: half a JSON object with
``finish_reason: length``), ``DUPLICATE`` (the same question as every other passage holding the marker),
``WHITESPACE`` (the excerpt copied with a line break and two spaces for each space), ``FUZZY`` (one character of the excerpt
changed), ``UNANSWERABLE`` (the answerability check says no).

``server.latency`` seconds are slept before each answer; ``server.log`` lists every request (its task and
prompt); ``server.faults`` takes one transport fault per request first (``500``, ``429``).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKERS = ("BADJSON", "NOEXCERPT", "NOTFOUND", "EMPTYQ", "CUTOFF", "DUPLICATE", "WHITESPACE", "FUZZY",
           "UNANSWERABLE")


def _passages(user: str) -> list[str]:
    found = re.findall(r"PASSAGE \d \(from \"[^\"]*\"\):\n(.*?)(?=\n\nPASSAGE \d \(from|\n\nReply as JSON)", user, re.S)
    return found


def _sentences(text: str) -> list[str]:
    parts = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.strip()) > 25]
    return parts or [text.strip()]


def _rare(sentence: str) -> list[str]:
    return [x for x in re.findall(r"[a-z]+", sentence) if x in _NOUNS or x in _VERBS]


def _pick(text: str) -> str:
    sents = [s for s in _sentences(text) if "Marker" not in s and len(_rare(s)) >= 2] or _sentences(text)
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    return sents[h % len(sents)]


def question_reply(user: str) -> tuple[str, str]:
    """(content, finish_reason) of a question prompt."""
    passages = _passages(user)
    whole = "\n".join(passages)
    excerpts = [{"passage": i, "text": _pick(p)} for i, p in enumerate(passages, 1)]
    take = 3 if len(excerpts) == 1 else 2
    rare = [w for e in excerpts for w in _rare(e["text"])[:take]]
    question = "Which " + " and ".join(dict.fromkeys(rare)) + "?"
    if "DUPLICATE" in whole:
        question = "Which planted duplicate question is this?"
    if "EMPTYQ" in whole:
        question = "  "
    if "NOEXCERPT" in whole:
        excerpts = []
    if "NOTFOUND" in whole:
        excerpts[0]["text"] = "This sentence appears nowhere in the corpus at all, not even close."
    if "WHITESPACE" in whole:
        excerpts[0]["text"] = excerpts[0]["text"].replace(" ", "\n  ")
    if "FUZZY" in whole:
        t = excerpts[0]["text"]
        excerpts[0]["text"] = t[:10] + ("x" if t[10] != "x" else "y") + t[11:]
    content = json.dumps({"question": question, "answer": "As the excerpts say.", "excerpts": excerpts})
    if "BADJSON" in whole:
        return '{"question": "broken', "stop"
    if "CUTOFF" in whole:
        return content[: len(content) // 2], "length"
    return content, "stop"


def answer_for(user: str) -> tuple[str, str]:
    """(content, finish_reason) of any synthesis prompt."""
    if user.startswith("Can the QUESTION be answered"):
        return json.dumps({"answerable": "UNANSWERABLE" not in user}), "stop"
    return question_reply(user)


def task_of(user: str) -> str:
    if user.startswith("Can the QUESTION be answered"):
        return "answerability"
    if user.startswith("Write one specific question that PASSAGE 1 answers"):
        return "single"
    return "multi" if "needs BOTH passages" in user else "abstract"


class ScriptedServer:
    """See the module docstring. ``with ScriptedServer() as s: s.base_url``."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.faults: deque[str] = deque()
        self.lock = threading.Lock()
        self.log: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once: no delayed-ACK stall per request
            wbufsize = 1 << 16

            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                user = body["messages"][-1]["content"]
                with server.lock:
                    fault = server.faults.popleft() if server.faults else "ok"
                    server.log.append({"task": task_of(user), "user": user, "fault": fault, "time": time.monotonic()})
                if server.latency:
                    time.sleep(server.latency)
                if fault == "500":
                    return self._send(500, b'{"error": "boom"}')
                if fault == "429":
                    return self._send(429, b'{"error": "slow down"}', {"Retry-After": "0.01"})
                content, finish = answer_for(user)
                reply = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                      "finish_reason": finish}],
                         "usage": {"prompt_tokens": len(user.split()), "completion_tokens": len(content.split())}}
                try:
                    return self._send(200, json.dumps(reply).encode())
                except (BrokenPipeError, ConnectionResetError):
                    return None

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

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def count(self, task: str | None = None) -> int:
        with self.lock:
            return sum(1 for e in self.log if task is None or e["task"] == task)


_TOPICS = [
    ("harbor", "The harbor authority dredged the northern channel in 2019 to admit larger container ships."),
    ("orchard", "Apple growers in the valley switched to drip irrigation after the drought of 2012 halved yields."),
    ("library", "The municipal library digitised forty thousand maps, most of them surveys from the colonial era."),
    ("bridge", "Engineers replaced the suspension cables of the old bridge without closing it to pedestrians."),
    ("observatory", "The mountain observatory measured the brightness of variable stars every clear night for decades."),
    ("railway", "The narrow gauge railway carried timber down the gorge until a landslide cut the line in 1957."),
]


_NOUNS = ("lantern", "granary", "quarry", "vineyard", "tannery", "foundry", "ferryman", "chapel", "mill", "aqueduct",
          "schoolhouse", "apothecary", "brewery", "smithy", "lighthouse", "causeway", "monastery", "bakery",
          "shipwright", "weaver", "cooper", "glassworks", "saltpan", "kiln", "dovecote", "tollhouse", "almshouse",
          "printworks", "ropewalk", "icehouse", "boathouse", "courthouse", "watchtower", "sawmill", "tramway",
          "marketplace", "observatory", "infirmary", "barracks", "reservoir", "distillery", "pottery", "cannery",
          "creamery", "hatchery", "nursery", "tavern", "dockyard", "signalbox", "waterwheel")
_VERBS = ("restored", "surveyed", "insured", "repainted", "catalogued", "rebuilt", "licensed", "photographed",
          "measured", "auctioned", "inspected", "relocated")


def _paragraph(t: int, topic: str, lead: str, i: int) -> str:
    def noun(j: int) -> str:
        return _NOUNS[(t * 17 + i * 5 + j * 3) % len(_NOUNS)]

    def verb(j: int) -> str:
        return _VERBS[(t * 5 + i * 3 + j) % len(_VERBS)]

    return (f"{lead} In season {i} the {topic} council {verb(0)} the {noun(0)} beside the {noun(1)}, spending "
            f"{i * 7 + 2} thousand crowns. Chroniclers of the {noun(2)} wrote that {i + 2} guilds {verb(1)} the "
            f"{noun(3)} before the {noun(4)} closed. A later ledger lists {i * 11 + 5} apprentices who {verb(2)} "
            f"the {noun(5)} and the {noun(6)} of the {topic}.")


def corpus(markers: dict[str, list[str]] | None = None, paragraphs: int = 3, every: bool = False) -> dict[str, str]:
    """Six documents of ``paragraphs`` paragraphs (blank lines between); ``markers``: doc -> marker words
    appended to its first paragraph (to every paragraph with ``every``)."""
    out = {}
    for t, (topic, lead) in enumerate(_TOPICS):
        paras = [_paragraph(t, topic, lead if i == 1 else "", i).strip() for i in range(1, paragraphs + 1)]
        extra = (markers or {}).get(topic, [])
        for j in range(len(paras) if every else 1 if extra else 0):
            paras[j] += " " + " ".join(f"Marker {m} is planted here in this sentence." for m in extra)
        out[topic] = "\n\n".join(paras) + "\n"
    return out


def write_corpus(folder: Any, docs: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")


class ScriptedJudge:
    """An in-process judge of the LLM core answering like the server (no HTTP): for tests and the overhead
    measurement of the benchmark."""

    name = "scripted"
    model = "scripted"
    cacheable = True
    max_concurrency = 8

    def __init__(self) -> None:
        from ragrade.synthesis.prompts import PROMPT_VERSION, TASK_SET

        self.tasks = TASK_SET
        self.prompt_version = PROMPT_VERSION
        self.calls = 0

    async def judge(self, task: str, inputs: Any) -> Any:
        from ragrade.llm.base import Judgment
        from ragrade.llm.tasks import OutputError

        self.calls += 1
        user = self.tasks.messages(task, inputs)[-1]["content"]
        content, finish = answer_for(user)
        try:
            return Judgment(self.tasks.parse(task, content))
        except OutputError as exc:
            why = f"reply cut at max_tokens; {exc}" if finish == "length" else f"unreadable reply: {exc}"
            return Judgment.failed(why, transient=False)

    async def aclose(self) -> None:
        return None


def main() -> None:  # pragma: no cover - the benchmark runs the server in its own process
    """``python scripted.py LATENCY``: serve until killed; prints the base URL."""
    import sys

    with ScriptedServer(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0) as s:
        print(s.base_url, flush=True)
        s.thread.join()


if __name__ == "__main__":  # pragma: no cover
    main()
