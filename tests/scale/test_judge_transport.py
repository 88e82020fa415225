"""The OpenAI-compatible judge answers the same through either HTTP client (aiohttp, the fast one the
judge picks when installed, and httpx): same judgments, same errors, same retries and counters, against
the fault-injecting loopback server of the judge tests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
pytest.importorskip("aiohttp", reason="the llm extra (aiohttp) is not installed")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judges"))

from fakeserver import FakeLLMServer

from ragrade.judges import OpenAIJudge
from ragrade.llm.base import JudgeConfigError

INPUTS = {"question": "Where is the Eiffel Tower?", "context": "The Eiffel Tower stands in Paris.", "answer": "Paris."}
KEY = "sk-test-0123456789abcdefghijklmnop"

SCENARIOS = {
    "clean": ([], None, {}),
    "429 then ok": (["429", "429"], None, {}),
    "500 then ok": (["500"], None, {}),
    "malformed then ok": (["malformed"], None, {}),
    "truncated then ok": (["truncated", "truncated"], None, {}),
    "chatter": (["chatter"], None, {}),
    "slow: timeout, retried": (["slow"], None, {"timeout": 0.3}),
    "always 500": ([], "500", {"max_retries": 2}),
    "always garbage": ([], "garbage", {"parse_retries": 1}),
    "schema rejected": (["reject_schema"], None, {}),
    "echo of the key in the reply": (["echo_content"], None, {}),
    "echo in an error body": ([], "echo_500", {"max_retries": 1}),
}


def run(server: FakeLLMServer, client: str, **kw):
    kw = {"backoff_base": 0.01, "max_backoff": 0.5, "timeout": 5.0, "jitter_seed": 0, **kw}
    judge = OpenAIJudge(model="fake", base_url=server.base_url, http_client=client, **kw)

    async def go():
        try:
            return await judge.judge("chunk_verdict", INPUTS)
        finally:
            await judge.aclose()

    return asyncio.run(go()), judge.stats, judge._mode


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_both_clients_answer_alike(scenario, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    faults, always, kw = SCENARIOS[scenario]
    got = {}
    for client in ("aiohttp", "httpx"):
        with FakeLLMServer() as server:
            server.faults.extend(faults)
            server.always = always
            server.slow_seconds = 1.5
            server.api_key = KEY
            judgment, stats, mode = run(server, client, **kw)
            got[client] = (judgment.output, judgment.error, judgment.transient, judgment.attempts, stats, mode,
                           [e["fault"] for e in server.log])
            assert KEY not in repr(judgment)
    assert got["aiohttp"] == got["httpx"]


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
def test_configuration_errors_stop_at_once(client, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key-0123456789")
    with FakeLLMServer() as server:
        server.api_key = KEY
        with pytest.raises(JudgeConfigError, match="401"):
            run(server, client)
        assert len(server.log) == 1
        url = server.base_url
    with pytest.raises(JudgeConfigError, match="cannot connect"):  # the server is gone: nothing listens
        judge = OpenAIJudge(model="fake", base_url=url, http_client=client)

        async def go():
            try:
                return await judge.judge("chunk_verdict", INPUTS)
            finally:
                await judge.aclose()

        asyncio.run(go())


def test_http_client_is_validated():
    from ragrade.errors import InputError

    with pytest.raises(InputError, match="http_client"):
        OpenAIJudge(model="m", http_client="curl")


def _redact_slowly(value, secrets):
    """Every piece rule and every pattern on every string, no shortcut (no anchors, no regular expression
    for the pieces, no look at the whole value first)."""
    from ragrade.llm.secrets import MIN_SECRET_LENGTH, SECRET_PIECE, TOKEN_PATTERNS

    keys = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
    windows = {k[i : i + SECRET_PIECE] for k in keys if len(k) >= SECRET_PIECE
               for i in range(len(k) - SECRET_PIECE + 1)}

    def cut(x):
        marked = [False] * len(x)
        for i in range(len(x) - SECRET_PIECE + 1):
            if x[i : i + SECRET_PIECE] in windows:
                marked[i : i + SECRET_PIECE] = [True] * SECRET_PIECE
        out, i = [], 0
        while i < len(x):
            if marked[i]:
                while i < len(x) and marked[i]:
                    i += 1
                out.append("***")
            else:
                out.append(x[i])
                i += 1
        return "".join(out)

    def clean(x):
        if isinstance(x, str):
            for k in keys:
                if len(k) < SECRET_PIECE:
                    x = x.replace(k, "***")
            x = cut(x)
            for pattern, repl in TOKEN_PATTERNS:
                x = pattern.sub(repl, x)
            return x
        if isinstance(x, dict):
            return {clean(k): clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        if isinstance(x, tuple):
            return tuple(clean(v) for v in x)
        return x

    return clean(value)


_PIECES = ["verdict", "Authorization: Bearer abcdefgh12345678", "bearer XYZabc12345678", "sk-" + "a" * 20,
           "api_key=supersecret99", "AIza" + "B" * 32, "hf_" + "c" * 20, "AKIA" + "D" * 16, KEY, "Paris",
           'he said "hi"', "ünïcödé", "API-KEY: 12345678abc", "GHP_" + "e" * 20, "x\nsk-" + "f" * 18,
           KEY[5:], KEY[-13:], "sk-te****" + KEY[-13:], KEY[3:14] + "!", KEY[:9]]


def test_redact_fast_paths_change_nothing():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ragrade.llm.secrets import redact

    text = st.lists(st.sampled_from(_PIECES), max_size=4).map(" ".join)
    leaf = st.one_of(text, st.integers(), st.none(), st.floats(allow_nan=False))
    tree = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(text, inner, max_size=3)), max_leaves=8)

    @settings(max_examples=300, deadline=None)
    @given(value=tree, secret=st.sampled_from([None, KEY, "short", 'quote"in-secret-123', "mid-len-9"]))
    def check(value, secret):
        assert redact(value, [secret]) == _redact_slowly(value, [secret])

    check()
