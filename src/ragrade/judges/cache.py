"""The judgment cache (SQLite), now part of the LLM core shared with the assessor: :mod:`ragrade.llm.cache`
(re-exported here, its old home; cache files are unchanged)."""

from __future__ import annotations

from ragrade.llm.cache import JudgmentCache, default_cache_path, open_cache

__all__ = ["JudgmentCache", "default_cache_path", "open_cache"]
