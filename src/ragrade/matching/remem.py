"""REMem's chunk-from-original rule as a batched matcher (used by the ``remem`` profile).

The rule (docs/profiles.md, remem): drop a first line starting with ``"Date: "``; for a chunk starting with ``"user: "``
or ``"assistant: "`` the needle is the text between the first and second ``": "`` (and likewise for its
JSON-escaped form, which keeps the trailing quote); otherwise the needle is the chunk or its
JSON-escaped form (``json.dumps``, quotes included). The chunk matches when a needle is a substring
of the gold document. Needles are built once per distinct chunk; substring tests run over aligned
pairs in NumPy's string kernels.

Like the original, an empty chunk matches every document: this matcher exists to reproduce REMem,
and ``allow_empty`` is therefore on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ragrade.matching._text import codes_of, find_pairs
from ragrade.matching.matchers import Matcher


def _needles(chunk: str) -> tuple[str, str]:
    if chunk.startswith("Date: "):
        chunk = "\n".join(chunk.split("\n")[1:])
    if chunk.startswith("user: ") or chunk.startswith("assistant: "):
        return chunk.split(": ")[1], json.dumps(chunk).split(": ")[1]
    return chunk, json.dumps(chunk)


@dataclass(frozen=True)
class RememChunk(Matcher):
    """REMem's ``is_chunk_from_original`` (retrieved chunk vs gold document), score 1 or 0."""

    threshold: float = 1.0
    allow_empty: bool = True
    name: ClassVar[str] = "remem_chunk"

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        codes, uniq = codes_of(a)
        n1, n2 = zip(*(_needles(c) for c in uniq.tolist()), strict=True) if len(uniq) else ((), ())
        first = [n1[c] for c in codes.tolist()]
        second = [n2[c] for c in codes.tolist()]
        hit = (find_pairs(b, first) >= 0) | (find_pairs(b, second) >= 0)
        return hit.astype(np.float64)

    def describe(self) -> str:
        return "REMem chunk-from-original (substring) rule"
