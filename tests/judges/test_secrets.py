"""No piece of the API key anywhere (issue 23, item 8): every piece of 10 characters or more of the key is
removed from judgments, the cache, ``--details``, error messages and the output, even when a server echoes
the key without its first characters, quotes a middle piece or prints OpenAI's masked key with a
13-character tail. The fake server on 127.0.0.1 serves those fragments (``piece_*`` faults)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from seed_data import SEED_ROWS

from ragrade.cli import main
from ragrade.llm.secrets import MIN_SECRET_LENGTH, SECRET_PIECE, Redactor, redact

KEY = "sk-test-Zq81mWx7890abcdefXYZ"
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


def pieces(key: str, n: int = SECRET_PIECE) -> list[bytes]:
    return [key[i : i + n].encode() for i in range(len(key) - n + 1)]


def leaked(blob: bytes, key: str = KEY) -> list[bytes]:
    """The pieces of ``SECRET_PIECE`` characters of ``key`` found in ``blob``."""
    return [p for p in pieces(key) if p in blob]


# -- the redactor ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fragment", [KEY, KEY[5:], KEY[:-5], KEY[3:20], KEY[-13:], KEY[-SECRET_PIECE:],
                                      KEY[4 : 4 + SECRET_PIECE]])
def test_every_piece_of_the_key_is_removed(fragment):
    text = f"the server said: {fragment}! and more"
    out = redact(text, [KEY])
    assert not leaked(out.encode())
    assert out.startswith("the server said: ") and out.endswith("! and more")
    assert "***" in out


def test_masked_openai_message_loses_its_tail():
    msg = f"Incorrect API key provided: {KEY[:5]}****{KEY[-13:]}. You can find your API key at ..."
    out = redact(msg, [KEY])
    assert not leaked(out.encode())
    assert out.startswith("Incorrect API key provided: ") and out.endswith("You can find your API key at ...")


def test_pieces_shorter_than_the_bound_and_other_text_are_kept():
    short = KEY[2 : 2 + SECRET_PIECE - 1]
    text = f"a {short} b; Paris is the capital of France (12345678901234)"
    assert redact(text, [KEY]) == text
    assert redact({"x": [text]}, [KEY]) == {"x": [text]}


def test_a_short_key_is_removed_whole_and_a_tiny_one_not_searched():
    assert redact("key=abc12345xy here", ["abc12345x"]) == "key=***y here"
    tiny = "abc"
    assert len(tiny) < MIN_SECRET_LENGTH and redact("abcabc", [tiny]) == "abcabc"


def test_structures_are_walked_keys_included():
    value = {KEY[4:]: [f"x{KEY[2:]}", (KEY[-12:], 3)], "n": 1.5}
    out = redact(value, [KEY])
    assert not leaked(json.dumps(out).encode())
    assert out["n"] == 1.5


@settings(max_examples=200, deadline=None)
@given(key=st.text(ALPHABET, min_size=MIN_SECRET_LENGTH, max_size=64),
       before=st.text(min_size=0, max_size=40), after=st.text(min_size=0, max_size=40),
       data=st.data())
def test_no_piece_survives_property(key, before, after, data):
    start = data.draw(st.integers(0, len(key) - 1))
    stop = data.draw(st.integers(start + 1, len(key)))
    text = before + key[start:stop] + after + key
    out = Redactor([key]).text(text)
    if len(key) >= SECRET_PIECE:
        assert not [p for p in pieces(key) if p.decode() in out]
    else:
        assert key not in out


# -- end to end: judge and assess against a server that echoes pieces of the key -------------------------

httpx = pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")

from fakeserver import FakeLLMServer  # noqa: E402

PIECE_FAULTS = ["piece_json", "piece_content", "piece_text", "piece_500"]
EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"


@pytest.fixture
def server():
    with FakeLLMServer() as s:
        yield s


def _on_disk(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file())


def _judge(server, tmp_path, *extra):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in SEED_ROWS))
    args = ["judge", str(data), "--judge", "openai", "--base-url", server.base_url, "--model", "fake",
            "--api-key-env", "RAGRADE_PIECE_KEY", "--no-progress", "--max-retries", "1", *map(str, extra)]
    return CliRunner().invoke(main, args, env={"RAGRADE_PIECE_KEY": KEY})


def test_judge_stores_and_prints_no_piece_of_the_key(server, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    server.faults.extend(PIECE_FAULTS * 40)
    res = _judge(server, tmp_path, "--cache", store / "c.sqlite3", "--details", store / "details.jsonl",
                 "--format", "json", "--max-failed", "100")
    table = _judge(server, tmp_path, "--cache", store / "c2.sqlite3", "--per-query", "--max-failed", "100")
    assert res.exit_code == 0, res.output
    assert {e["fault"] for e in server.log} >= set(PIECE_FAULTS)
    assert any(e["auth"] == f"Bearer {KEY}" for e in server.log)  # the key travelled, in the header only
    for blob in (_on_disk(store), res.stdout.encode(), res.stderr.encode(), table.stdout.encode(),
                 table.stderr.encode()):
        assert not leaked(blob)
    assert b"***" in (store / "details.jsonl").read_bytes()  # the echoes were kept, scrubbed


def test_judge_401_with_the_masked_key_prints_no_tail(server, tmp_path):
    server.faults.append("piece_401")
    res = _judge(server, tmp_path, "--cache", tmp_path / "c.sqlite3")
    assert res.exit_code == 2
    assert res.stderr.startswith("error: the server refused the API key (HTTP 401)")
    assert "Incorrect API key provided" in res.stderr
    assert not leaked(res.stderr.encode()) and not leaked(res.stdout.encode())
    assert server.count() == 1


def _assess(server, tmp_path, *extra):
    args = ["assess", EXAMPLES / "run.tsv", "--queries", EXAMPLES / "topics.tsv", "--corpus",
            EXAMPLES / "corpus.jsonl", "--judge", "openai", "--base-url", server.base_url, "--model", "fake",
            "--api-key-env", "RAGRADE_PIECE_KEY", "--no-progress", "--max-retries", "0", "--depth", "2", *extra]
    return CliRunner().invoke(main, [str(a) for a in args], env={"RAGRADE_PIECE_KEY": KEY})


@pytest.fixture
def grading(monkeypatch, server):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "assessment"))
    import assess_helpers
    import fakeserver

    monkeypatch.setattr(fakeserver, "answer_for", assess_helpers.grade_answer)
    return server


def test_assess_stores_and_prints_no_piece_of_the_key(grading, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    grading.always = "piece_content"
    grading.faults.extend(["piece_text", "piece_500", "piece_json"] * 5)
    res = _assess(grading, tmp_path, "-o", store / "o.qrels", "--cache", store / "c.sqlite3", "--format", "json",
                  "--max-failed", "100%")
    assert res.exit_code == 0, res.output
    assert {e["fault"] for e in grading.log} >= {"piece_text", "piece_500", "piece_content"}
    for blob in (_on_disk(store), res.stdout.encode(), res.stderr.encode()):
        assert not leaked(blob)
    assert b"***" in res.stdout.encode() + res.stderr.encode() + _on_disk(store)


def test_assess_401_with_the_masked_key_prints_no_tail(grading, tmp_path):
    grading.always = "piece_401"
    res = _assess(grading, tmp_path, "-o", tmp_path / "o.qrels", "--cache", tmp_path / "c.sqlite3")
    assert res.exit_code == 2
    assert "HTTP 401" in res.stderr and "Incorrect API key provided" in res.stderr
    assert not leaked(res.stderr.encode()) and not leaked(res.stdout.encode())
