"""Chunk location (exact, whitespace-normalised, fuzzy; the report of texts not found and found twice) and the
chunkers (fixed, recursive, a LangChain splitter, a LlamaIndex node parser, a callable)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ragrade
from ragrade.spans import as_chunker, chunk_corpus, chunk_texts, fixed, locate_chunks, recursive
from reference import PROPERTY_SETTINGS

TEXT = ("# Title\n\nFirst paragraph, with two sentences. It goes on.\n\nA repeated line.\nA repeated line.\n\n"
        "Second paragraph: " + "words and more words " * 12 + "\n\nThe end.")


def test_exact_whitespace_fuzzy_and_the_report() -> None:
    corpus = {"a": TEXT, "b": "Hello   world,\n\nthis is   a test of whitespace normalisation, in a second document."}
    texts = ["First paragraph, with two sentences. It goes on.", "A repeated line.", "A repeated line.",
             "Hello world, this is a test of whitespace", "this is a tset of whitespace normalisaton in a second",
             "nothing like this appears in the corpus anywhere"]
    chunks = locate_chunks(corpus, texts)
    by_id = {c: (d, int(s), int(e)) for c, d, s, e in zip(chunks.chunk_id, chunks.doc, chunks.start, chunks.end,
                                                           strict=True)}
    assert corpus["a"][slice(*by_id["chunk-0"][1:])] == texts[0]
    assert by_id["chunk-1"][1] == by_id["chunk-2"][1]  # no order: both take the first occurrence
    assert corpus["b"][slice(*by_id["chunk-3"][1:])] == "Hello   world,\n\nthis is   a test of whitespace"
    assert by_id["chunk-4"][0] == "b" and chunks.report.fuzzy_scores[4] >= 90
    rep = chunks.report
    assert [u[1] for u in rep.unlocated] == ["chunk-5"] and "chunk-5" not in by_id
    assert {d[1] for d in rep.duplicated} == {"chunk-1", "chunk-2"} and all(d[2] == 2 for d in rep.duplicated)
    assert rep.methods == {"exactly": 3, "after normalising whitespace": 1, "by fuzzy matching": 1}
    ordered = locate_chunks(corpus, texts[1:3], docs=["a", "a"])
    assert ordered.start[1] > ordered.start[0]  # in order: the second copy goes to the second occurrence
    assert locate_chunks(corpus, texts[4:5], fuzzy=False).report.unlocated


@PROPERTY_SETTINGS
@given(st.integers(0, 10_000), st.integers(20, 120), st.integers(0, 19))
def test_every_chunk_of_a_chunker_is_found_where_it_was_cut(seed: int, size: int, overlap: int) -> None:
    rng = np.random.default_rng(seed)  # random words: a window of 20 characters is (almost surely) found once
    letters = list("abcdefghijklmnopqrstuvwxyzé日本\n\t")
    words = ["".join(rng.choice(letters, int(rng.integers(1, 8)))) for _ in range(300)]
    corpus = {f"d{i}": " ".join(rng.choice(words, int(rng.integers(0, 200)))) for i in range(3)}
    chunks = chunk_corpus(corpus, fixed(size, overlap))
    texts = chunk_texts(corpus, chunks)
    located = locate_chunks(corpus, texts, docs=chunks.doc.tolist(), ids=chunks.chunk_id.tolist())
    assert not located.report.unlocated
    assert located.start.tolist() == chunks.start.tolist() and located.end.tolist() == chunks.end.tolist()


@PROPERTY_SETTINGS
@given(st.integers(0, 10_000), st.integers(8, 80), st.integers(0, 7))
def test_recursive_chunks_cover_the_text_within_size(seed: int, size: int, overlap: int) -> None:
    rng = np.random.default_rng(seed)
    text = "".join(rng.choice(list("ab c.\n"), int(rng.integers(0, 400))))
    spans = recursive(size, overlap).spans(text)  # type: ignore[misc]
    assert all(0 <= s < e <= len(text) and e - s <= size for s, e in spans)
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)
    covered = np.zeros(len(text), dtype=bool)
    for s, e in spans:
        covered[s:e] = True
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))


def test_foreign_chunkers_are_located() -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from llama_index.core.node_parser import SentenceSplitter

    corpus = {"a": TEXT, "b": TEXT.replace("words", "terms")}
    for splitter in (RecursiveCharacterTextSplitter(chunk_size=60, chunk_overlap=10),
                     SentenceSplitter(chunk_size=40, chunk_overlap=5), lambda t: t.split("\n\n")):
        chunks = chunk_corpus(corpus, splitter)
        assert len(chunks) > 4 and not chunks.report.unlocated
        for d, s, e in zip(chunks.doc.tolist(), chunks.start.tolist(), chunks.end.tolist(), strict=True):
            assert corpus[d][s:e].strip()
    named = as_chunker(lambda t: [t], name="whole")
    assert chunk_corpus(corpus, named).name == "whole"
    with pytest.raises(ragrade.InputError, match="a chunker is"):
        as_chunker(5)
    with pytest.raises(ragrade.InputError, match="overlap"):
        fixed(10, 10)


def test_a_chunker_that_returns_a_string_is_refused() -> None:
    with pytest.raises(ragrade.InputError, match="must return a list of texts"):
        chunk_corpus({"a": "text"}, lambda t: t)
