"""Fixtures of the nugget tests. ``tests/judges`` is put on ``sys.path`` so that its loopback fault server
(``fakeserver.py``) and llama.cpp launcher (``llama_server.py``) are reused, not copied."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "judges"))
sys.path.insert(0, str(HERE))


@pytest.fixture
def nugget_server(monkeypatch):
    """The judges' fault server answering the nugget prompts (``nugget_helpers.nugget_answer``)."""
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    import fakeserver
    import nugget_helpers

    monkeypatch.setattr(fakeserver, "answer_for", nugget_helpers.nugget_answer)
    monkeypatch.setattr(fakeserver, "json", nugget_helpers.JsonShim())
    monkeypatch.setattr(nugget_helpers, "FAULTS", {})
    with fakeserver.FakeLLMServer() as server:
        yield server


@pytest.fixture
def judge_for(nugget_server):
    """A judge of the nugget tasks on the fault server (one request at a time unless asked)."""
    from ragrade.nuggets import llm_judge

    def make(**settings):
        settings.setdefault("max_concurrency", 1)
        settings.setdefault("max_backoff", 0.01)
        settings.setdefault("backoff_base", 0.001)
        return llm_judge("scripted", nugget_server.base_url, api_key_env="RAGRADE_NO_KEY", **settings)

    return make
