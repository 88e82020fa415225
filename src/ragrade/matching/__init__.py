"""Text matchers: turn (retrieved texts, ground-truth texts) into match decisions, batched.

See ``docs/matching.md``. Fuzzy and ROUGE matchers need the ``text`` extra (rapidfuzz); the semantic
matcher needs the ``semantic`` extra.
"""

from ragrade.matching.matchers import (
    Callback,
    Containment,
    Exact,
    Fuzzy,
    Matcher,
    NormalizedExact,
    RougeL,
    Semantic,
    TokenF1,
    get_matcher,
    token_overlap,
)
from ragrade.matching.remem import RememChunk

__all__ = [
    "Callback",
    "Containment",
    "Exact",
    "Fuzzy",
    "Matcher",
    "NormalizedExact",
    "RememChunk",
    "RougeL",
    "Semantic",
    "TokenF1",
    "get_matcher",
    "token_overlap",
]
