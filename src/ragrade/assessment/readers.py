"""The topics and corpus readers of assessment, kept under their old import path: they are
:mod:`ragrade.io.texts` (the io layer, where every reader lives)."""

from ragrade.io.texts import FORMATS, Passages, read_passages, read_queries

__all__ = ["FORMATS", "Passages", "read_passages", "read_queries"]
