"""Synthesis against a scripted OpenAI-compatible server on 127.0.0.1, through the LLM core's OpenAI backend:
excerpts are document text, the kind mix holds, planted duplicates and broken replies are refused with their
reasons (never written), and --budget-calls bounds the requests the server receives."""

from __future__ import annotations

import json

import pytest

import ragrade
from ragrade.io.texts import read_queries
from ragrade.llm.budget import Budget
from ragrade.spans import read_corpus, read_spans

from . import scripted


def _run(server, corpus, n, tmp_path, **kw):
    kw.setdefault("cache", tmp_path / "cache.sqlite3")
    kw.setdefault("passage_chars", 500)
    kw.setdefault("min_passage_chars", 100)
    return ragrade.synthesize(corpus, n, base_url=server.base_url, model="scripted", api_key_env="NO_KEY_HERE",
                              max_retries=0, **kw)


def _lines(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("mix, n", [(None, 12), ("single=0.2,multi=0.4,abstract=0.4", 7)])
def test_excerpts_are_document_text_and_the_mix_holds(server, folder, tmp_path, mix, n):
    docs = folder({"harbor": ["WHITESPACE"], "orchard": ["FUZZY"]}, paragraphs=3, every=True)
    out = tmp_path / "set"
    ts = _run(server, docs, n, tmp_path, mix=mix, output=out)
    corpus = read_corpus(docs)
    assert len(ts) == n and ts.complete
    wanted = ts.provenance["parameters"]["targets"]
    kinds = {k: sum(1 for it in ts.items if it.kind == k) for k in wanted}
    assert all(abs(kinds[k] - n * ts.provenance["parameters"]["mix"][k]) <= 1 for k in kinds)
    assert kinds == wanted
    methods = set()
    for it in ts.items:
        for x in it.excerpts:
            assert x.text == corpus[x.doc][x.start:x.end]
            methods.add(x.method)
        assert (it.kind == "single") == (len({p.doc for p in it.passages}) == 1)
    # the spans file and the provenance say the same, and every span is document text
    spans = read_spans(out / "spans.jsonl", corpus=docs)
    assert set(spans.query.tolist()) == {it.query for it in ts.items}
    prov = _lines(out / "provenance.jsonl")
    assert prov[0]["record"] == "run" and prov[0]["prompts"] and prov[0]["parameters"]["seed"] == 0
    assert [p["query"] for p in prov[1:]] == [it.query for it in ts.items]
    for p in prov[1:]:
        for x in p["excerpts"]:
            assert corpus[x["doc"]][x["start"]:x["end"]] == x["text"]
    topics = (out / "topics.tsv").read_text(encoding="utf-8").splitlines()
    assert topics[0] == "qid\ttext" and len(topics) == n + 1
    assert read_queries(out / "topics.tsv") == ts.topics
    if mix is None:
        assert {"exact", "whitespace", "fuzzy"} <= methods


def test_broken_replies_are_retried_or_rejected_never_written(server, folder, tmp_path):
    faults = {"harbor": ["BADJSON"], "orchard": ["NOEXCERPT"], "library": ["NOTFOUND"], "bridge": ["EMPTYQ"],
              "observatory": ["CUTOFF"]}
    docs = folder(faults, paragraphs=2, every=True)
    out = tmp_path / "set"
    ts = _run(server, docs, 12, tmp_path, mix="single=1", output=out)
    assert not ts.complete and len(ts) == 2  # only the railway's two passages answer well
    assert {p.doc for it in ts.items for p in it.passages} == {"railway"}
    reasons = {}
    for r in ts.rejects:
        reasons.setdefault(r.passages[0].doc, set()).add((r.stage, r.reason.split(":")[0]))
    assert reasons["harbor"] == {("generation", "unreadable reply")}
    assert reasons["orchard"] == {("generation", "unreadable reply")}
    assert all("no excerpt" in r.reason for r in ts.rejects if r.passages[0].doc == "orchard")
    assert reasons["library"] == {("location", "an excerpt is not in passage 1")}
    assert all("no question" in r.reason for r in ts.rejects if r.passages[0].doc == "bridge")
    assert all("cut at max_tokens" in r.reason for r in ts.rejects if r.passages[0].doc == "observatory")
    summary = ts.provenance["summary"]
    assert summary["rejected_by_stage"] == {"generation": 8, "location": 2}
    # an unreadable reply is asked once more; a reply cut at max_tokens is not (it would be cut again)
    asked = {}
    for e in server.log:
        if e["task"] == "single":
            doc = next(d for d in faults if d in e["user"]) if any(d in e["user"] for d in faults) else "railway"
            asked[doc] = asked.get(doc, 0) + 1
    assert asked == {"harbor": 4, "orchard": 4, "bridge": 4, "library": 2, "observatory": 2, "railway": 2}
    written = (out / "spans.jsonl").read_text() + (out / "topics.tsv").read_text()
    assert not any(d in written for d in faults)
    assert len(_lines(out / "rejects.jsonl")) == 10


def test_planted_duplicates_are_filtered(server, folder, tmp_path):
    docs = folder({"harbor": ["DUPLICATE"], "orchard": ["DUPLICATE"]}, paragraphs=2, every=True)
    ts = _run(server, docs, 10, tmp_path, mix="single=1")
    planted = [it for it in ts.items if it.question == "Which planted duplicate question is this?"]
    assert len(planted) == 1 and len(ts) == 9  # 12 passages, 4 share one question: 9 distinct
    dups = [r for r in ts.rejects if r.stage == "duplicate"]
    assert len(dups) == 3 and all("lexical similarity 1.00" in r.reason for r in dups)
    assert all(r.question == planted[0].question for r in dups)


def test_an_embedding_encoder_finds_paraphrases(server, folder, tmp_path):
    docs = folder(paragraphs=2)

    def encoder(texts):  # every question about the harbor's passages is "the same" to this encoder
        import numpy as np

        return np.array([[1.0, 0.0] if "foundry" in t or "schoolhouse" in t else [0.0, 1.0 + len(t) % 7]
                         for t in texts])

    ts = _run(server, docs, 12, tmp_path, mix="single=1", embeddings=encoder, max_duplicate_embedding=0.999)
    assert all("duplicate_embedding" in it.scores for it in ts.items)
    assert any(r.stage == "duplicate" and "embedding similarity" in r.reason for r in ts.rejects)


@pytest.mark.parametrize("calls", [1, 4, 9, 20])
def test_budget_calls_bounds_the_requests(server, folder, tmp_path, calls):
    docs = folder(paragraphs=2)
    server.faults.extend(["500", "429", "500"])  # retries count too
    ts = ragrade.synthesize(docs, 12, base_url=server.base_url, model="scripted", api_key_env="NO_KEY_HERE",
                            max_retries=1, backoff_base=0.01, budget=Budget(calls=calls),
                            cache=tmp_path / "c.sqlite3", passage_chars=500, min_passage_chars=100)
    assert server.count() <= calls
    assert ts.counts["requests"] == server.count()
    assert ts.counts["budget_reached"] and not ts.complete
    # a second run with a larger budget goes on from the cache (a transient failure is asked again)
    server.faults.clear()
    before = server.count()
    more = ragrade.synthesize(docs, 12, base_url=server.base_url, model="scripted", api_key_env="NO_KEY_HERE",
                              max_retries=1, backoff_base=0.01, budget=Budget(calls=200),
                              cache=tmp_path / "c.sqlite3", passage_chars=500, min_passage_chars=100)
    assert more.complete and server.count() - before <= 200
    # and keeps what a run never stopped keeps
    whole = ragrade.synthesize(docs, 12, base_url=server.base_url, model="scripted", api_key_env="NO_KEY_HERE",
                               max_retries=1, backoff_base=0.01, cache=False, passage_chars=500, min_passage_chars=100)
    assert [it.to_dict() for it in more.items] == [it.to_dict() for it in whole.items]


def test_a_judge_object_and_no_cache(folder):
    ts = ragrade.synthesize(folder(paragraphs=2), 6, judge=scripted.ScriptedJudge(), cache=False,
                            passage_chars=500, min_passage_chars=100)
    assert len(ts) == 6 and ts.counts["cache_hits"] == 0
    frame = ts.to_frame()
    assert list(frame["query"]) == [f"q{i}" for i in range(1, 7)] and "leakage" in frame
