"""The judge client's own cost per judgment (issue 14, docs/scale.md "Judging at scale").

Judged metrics are bound by the LLM server; this measures what ragrade adds around each judgment, against
a loopback server that answers instantly (a canned chat-completions reply, written by a small asyncio
server in a separate process, HTTP/1.1 keep-alive), so the figures are the client's:

1. ``OpenAIJudge.judge`` alone, through each HTTP client (aiohttp, the default when installed, and
   httpx): N distinct chunk verdicts gathered at once (``--concurrency`` requests in flight): judgments
   per second, and client CPU per judgment;
2. ``aevaluate_judged`` end to end (plan, prompts, requests, parsing, scoring) with the SQLite cache: a
   first run (every judgment a miss: asked, then stored) and a second run (every judgment a hit, no request).

Target: at least 2,000 judgments/s through the client on a miss. The machine is shared (2 cores, the server
on one of them): figures are indicative.

Usage: python bench/bench_judge_client.py [--judgments 5000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

REPLY = json.dumps({
    "id": "bench", "object": "chat.completion", "model": "instant",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": json.dumps({"reason": "instant", "verdict": 1})}}],
    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
}).encode()
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(REPLY)).encode() + b"\r\n\r\n" + REPLY)


class _Instant(asyncio.Protocol):
    """Reads requests (headers, then Content-Length bytes) and answers each with the canned reply."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            length = 0
            for line in self.buf[:end].split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if len(self.buf) < end + 4 + length:
                return
            self.buf = self.buf[end + 4 + length:]
            self.transport.write(RESPONSE)


def serve(port: int) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(_Instant, "127.0.0.1", port, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                break
        except OSError:
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}/v1"


def rows(n_queries: int, contexts: int) -> list[dict]:
    return [{"id": f"q{i}", "question": f"What is fact {i} about Topic{i}?",
             "reference": f"Topic{i} was founded in Paris in {1900 + i % 100}.",
             "contexts": [f"Context {j} of query {i}: Topic{i} and Paris." for j in range(contexts)]}
            for i in range(n_queries)]


async def judge_alone(url: str, n: int, concurrency: int, client: str) -> tuple[float, float, int]:
    from ragrade.judges import OpenAIJudge

    judge = OpenAIJudge(model="instant", base_url=url, max_concurrency=concurrency, response_format="none",
                        http_client=client)
    items = [{"question": f"Question {i}?", "context": f"Context {i}.", "answer": f"Answer {i}."} for i in range(n)]
    try:
        await asyncio.gather(*(judge.judge("chunk_verdict", it) for it in items[:concurrency]))  # connections up
        t0, c0 = time.perf_counter(), time.process_time()
        out = await asyncio.gather(*(judge.judge("chunk_verdict", it) for it in items))
        return time.perf_counter() - t0, time.process_time() - c0, sum(r.ok for r in out)
    finally:
        await judge.aclose()


def end_to_end(url: str, n_queries: int, concurrency: int, cache: Path) -> list[tuple[str, float, float, int, int]]:
    from ragrade.judges import OpenAIJudge, aevaluate_judged

    data = rows(n_queries, 5)
    out = []
    for label in ("miss (asked, stored)", "hit (no request)"):
        async def go() -> tuple[float, float, Any]:
            judge = OpenAIJudge(model="instant", base_url=url, max_concurrency=concurrency, response_format="none")
            try:
                t0, c0 = time.perf_counter(), time.process_time()
                res = await aevaluate_judged(data, ["llm_context_precision@5"], judge=judge, cache=cache)
                return time.perf_counter() - t0, time.process_time() - c0, res
            finally:
                await judge.aclose()

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wall, cpu, res = asyncio.run(go())
        j = res.summary["judgments"]
        out.append((label, wall, cpu, int(j["needed"]), int(j.get("calls", 0))))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judgments", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.serve)
        return 0
    proc, url = start_server()
    try:
        print(f"Judge client against an instant loopback server ({url}), concurrency {args.concurrency}; "
              f"shared 2-core machine, the server in its own process")
        print("\n| path | judgments | wall (s) | judgments/s | client CPU per judgment (µs) |")
        print("|---|---:|---:|---:|---:|")
        for client in ("aiohttp", "httpx"):
            n = args.judgments if client == "aiohttp" else max(args.concurrency, args.judgments // 10)
            wall, cpu, ok = asyncio.run(judge_alone(url, n, args.concurrency, client))
            print(f"| OpenAIJudge.judge ({client}), no cache | {ok} | {wall:.2f} | {ok / wall:,.0f} | "
                  f"{cpu / ok * 1e6:,.0f} |")
        with tempfile.TemporaryDirectory() as tmp:
            for label, w, c, needed, calls in end_to_end(url, args.judgments // 5, args.concurrency,
                                                         Path(tmp) / "cache.sqlite3"):
                print(f"| aevaluate_judged, cache {label}, {calls} requests | {needed} | {w:.2f} | "
                      f"{needed / w:,.0f} | {c / needed * 1e6:,.0f} |")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
