"""Fusion of several runs into one: ranx's methods and normalisations exactly, the hybrid-search
fusions of RAG frameworks, and a search for the best fusion (docs/fusion.md)."""

from __future__ import annotations

from ragrade.fusion.api import PROFILES, fuse
from ragrade.fusion.methods import METHODS, method_name
from ragrade.fusion.norms import NORMS, norm_name

__all__ = ["METHODS", "NORMS", "PROFILES", "fuse", "method_name", "norm_name"]
