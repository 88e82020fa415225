"""Fixtures of the synthesis tests: the scripted server (``scripted.py``) and corpora written to folders."""

from __future__ import annotations

import pytest

from . import scripted


@pytest.fixture
def server():
    pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")
    with scripted.ScriptedServer() as s:
        yield s


@pytest.fixture
def folder(tmp_path):
    """A function writing a scripted corpus to a folder and returning its path."""

    def make(markers=None, paragraphs=3, every=False, name="docs"):
        path = tmp_path / name
        scripted.write_corpus(path, scripted.corpus(markers, paragraphs, every))
        return path

    return make
