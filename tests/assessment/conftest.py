"""Fixtures of the assessment tests. ``tests/judges`` is put on ``sys.path`` so that its loopback fault
server (``fakeserver.py``) and llama.cpp launcher (``llama_server.py``) are reused, not copied."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "judges"))
sys.path.insert(0, str(HERE))

EXAMPLES = HERE.parent.parent / "examples"


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


@pytest.fixture
def grading_server(monkeypatch):
    """The judges' fault server, answering the graded prompt (see ``assess_helpers.grade_answer``)."""
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    import assess_helpers
    import fakeserver

    monkeypatch.setattr(fakeserver, "answer_for", assess_helpers.grade_answer)
    with fakeserver.FakeLLMServer() as server:
        yield server
