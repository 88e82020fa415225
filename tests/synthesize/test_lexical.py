"""Word tokens, leakage, BM25 ranks and excerpt quality against slow, obviously-correct references, and BM25
scores against bm25s (the ``lucene`` method) and rank-bm25's formula."""

from __future__ import annotations

import math
import re
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.synthesis.lexical import BM25, content_words, excerpt_quality, leakage, words
from ragrade.synthesis.stopwords import STOP_WORDS

VOCAB = ["the", "harbor", "Harbor", "of", "what", "dredged", "channel", "2019", "ships", "is", "a", "ship", "x1",
         "Ünïcode", "naïve", "don't", "stop-loss", "co_op", "and", "why", "How", "café", "42", "été"]
texts = st.lists(st.sampled_from(VOCAB), min_size=0, max_size=12).map(" ".join)


# -- slow references -------------------------------------------------------------------------------------------

def slow_words(text: str) -> list[str]:
    """Character by character: a token is a maximal run of characters that are letters or digits."""
    out, cur = [], ""
    for ch in text.lower():
        if ch.isalnum():
            cur += ch
        else:
            if cur:
                out.append(cur)
            cur = ""
    if cur:
        out.append(cur)
    return out


def slow_leakage(question: str, excerpts: list[str]) -> float:
    asked = []
    for w in slow_words(question):
        if w not in STOP_WORDS and w not in asked:
            asked.append(w)
    if not asked:
        return math.nan
    pool = []
    for e in excerpts:
        pool.extend(slow_words(e))
    return sum(1 for w in asked if w in pool) / len(asked)


def slow_bm25(docs: list[str], query: str, k1: float = 1.5, b: float = 0.75) -> list[float]:
    toks = [[w for w in slow_words(d) if w not in STOP_WORDS] for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in toks) / n
    out = []
    for t in toks:
        s = 0.0
        for q in [w for w in slow_words(query) if w not in STOP_WORDS]:
            df = sum(1 for u in toks if q in u)
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = t.count(q)
            s += idf * tf / (tf + k1 * (1 - b + b * len(t) / avg)) if avg > 0 else 0.0
        out.append(s)
    return out


def slow_rank(scores: list[float], target: int) -> int:
    return sum(1 for s in scores if s >= scores[target])


# -- tests ---------------------------------------------------------------------------------------------------------

def test_words_and_content_words():
    assert words("Don't stop-loss, co_op: ÉTÉ 2019!") == ["don", "t", "stop", "loss", "co", "op", "été", "2019"]
    assert content_words("What is the capital of France?") == ["capital", "france"]
    assert len(STOP_WORDS) == 153 and {"what", "which", "how", "don", "t"} <= STOP_WORDS


@settings(max_examples=200, deadline=None)
@given(texts, st.lists(texts, min_size=0, max_size=3))
def test_leakage_equals_the_slow_reference(question, excerpts):
    got, want = leakage(question, excerpts), slow_leakage(question, excerpts)
    assert (math.isnan(got) and math.isnan(want)) or got == want
    assert words(question) == slow_words(question)


def test_leakage_examples():
    assert leakage("When was the northern channel dredged?", ["The harbor dredged the northern channel in 2019."]) == 1.0
    assert leakage("Which port admits larger vessels?", ["The harbor dredged the channel to admit larger ships."]) == 0.25
    assert math.isnan(leakage("What is it?", ["anything"]))


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8), texts)
def test_bm25_scores_and_ranks_equal_the_slow_reference(docs, query):
    index = BM25.build(docs)
    want = slow_bm25(docs, query)
    np.testing.assert_allclose(index.scores(query), want, rtol=1e-12, atol=1e-12)
    targets = list(range(len(docs)))
    assert index.ranks(query, targets) == [slow_rank(want, t) for t in targets]


def test_bm25_equals_bm25s_lucene():
    bm25s = pytest.importorskip("bm25s")
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(40)]
    docs = [" ".join(rng.choice(vocab, size=int(rng.integers(3, 30)))) for _ in range(60)]
    ours = BM25.build(docs)
    peer = bm25s.BM25(method="lucene", k1=1.5, b=0.75, dtype="float64")
    peer.index([content_words(d) for d in docs], show_progress=False)
    for _ in range(25):
        q = " ".join(rng.choice(vocab, size=int(rng.integers(1, 6))))
        toks = [t for t in content_words(q) if t in peer.vocab_dict]
        np.testing.assert_allclose(ours.scores(q), peer.get_scores(toks), rtol=1e-12)


def test_ranks_count_ties_against_the_target():
    index = BM25.build(["alpha beta", "alpha beta", "gamma"])
    assert index.ranks("alpha", [0, 1, 2]) == [2, 2, 3]
    assert index.ranks("nothing here", [0]) == [3]  # every passage scores 0: last


def test_excerpt_quality_examples():
    assert excerpt_quality("| --- | --- |") == 0.0
    assert excerpt_quality("Paris") == pytest.approx(1 / 3)
    good = "The harbor authority dredged the northern channel in 2019."
    assert excerpt_quality(good) == pytest.approx(49 / 50)
    assert excerpt_quality("   ") == 0.0


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=string.printable + "éß", max_size=80))
def test_excerpt_quality_is_a_share(text):
    q = excerpt_quality(text)
    assert 0.0 <= q <= 1.0
    marks = [c for c in text if not c.isspace()]
    if marks and len(re.findall(r"[^\W_]+", text.lower())) >= 3:
        assert q == pytest.approx(sum(c.isalnum() for c in marks) / len(marks))
