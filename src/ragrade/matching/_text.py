"""Text helpers shared by the matchers: normalisation, tokenisation, token coding.

Everything here works per *distinct text* (never per pair), so its cost is linear in the input size;
the per-pair work happens in C (rapidfuzz) or in NumPy over flat arrays.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

from ragrade._arrays import factorize

_PUNCT_TABLE = {ord(c): None for c in string.punctuation}
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def squad_normalize(text: str) -> str:
    """SQuAD answer normalisation: lower case, strip ASCII punctuation, drop the articles a/an/the,
    collapse whitespace (the order SQuAD's evaluation script applies them)."""
    s = text.lower().translate(_PUNCT_TABLE)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def fold(text: str) -> str:
    """Normalised form for the normalised-exact matcher: Unicode NFKC, case-folded, every punctuation
    character (Unicode category P*) removed, whitespace collapsed."""
    s = unicodedata.normalize("NFKC", text).casefold()
    s = "".join(ch for ch in s if not unicodedata.category(ch).startswith("P"))
    return " ".join(s.split())


def rouge_score_tokens(text: str) -> list[str]:
    """Tokens of the standard ROUGE implementation (Google's rouge-score without stemming): lower case,
    every run of non-alphanumeric characters is a separator."""
    return _NON_ALNUM.sub(" ", text.lower()).split()


def find_pairs(haystacks: Sequence[str], needles: Sequence[str]) -> np.ndarray:
    """``haystacks[i].find(needles[i])`` for aligned lists, in NumPy's string kernels (``np.strings`` with
    variable-width strings on NumPy >= 2, ``np.char`` on fixed-width arrays before)."""
    if hasattr(np, "strings") and hasattr(np, "dtypes") and hasattr(np.dtypes, "StringDType"):
        sd = np.dtypes.StringDType()
        return np.strings.find(np.array(list(haystacks), dtype=sd), np.array(list(needles), dtype=sd))
    return np.char.find(np.array(list(haystacks), dtype=str), np.array(list(needles), dtype=str))


def stripped_lengths(texts: Sequence[str]) -> np.ndarray:
    return np.fromiter((len(t.strip()) for t in texts), dtype=np.int64, count=len(texts))


def codes_of(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of ``texts`` (first appearance) and the distinct texts."""
    codes, uniq = factorize(np.asarray(texts, dtype=object))
    return codes.astype(np.int64, copy=False), np.asarray(uniq, dtype=object)


class TokenCoder:
    """Maps tokens to dense integer codes (0, 1, ...) and token lists to compact strings in which each
    token is one character, so that rapidfuzz's C kernels (LCS) work on token sequences."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def encode(self, tokens: Iterable[str]) -> list[int]:
        d = self._codes
        out = []
        for t in tokens:
            c = d.get(t)
            if c is None:
                c = len(d)
                d[t] = c
            out.append(c)
        return out

    @staticmethod
    def as_chars(codes: Sequence[int]) -> str | list[int]:
        """One character per token (skipping the surrogate block); a list when codes run out."""
        if codes and max(codes) >= 0x10FFFF - 0x800 - 1:
            return list(codes)
        return "".join(chr(c + 1 if c + 1 < 0xD800 else c + 0x801) for c in codes)

    def __len__(self) -> int:
        return len(self._codes)
