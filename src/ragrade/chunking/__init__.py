"""Which chunker wins (docs/spans.md, "Which chunker wins"): :func:`compare_chunkings` scores several
chunkings of one corpus on one span truth and compares them over queries; ``ragrade chunking`` is its
command. Layer 8 (with ``report/``): it evaluates through :func:`ragrade.evaluate`, compares with
:mod:`ragrade.comparison` and draws its report section with :mod:`ragrade.chunking.report`."""

from __future__ import annotations

from ragrade.chunking.compare import (
    CURVE_KS,
    THRESHOLDS,
    ChunkingComparison,
    compare_chunkings,
    threshold_sweep,
)
from ragrade.chunking.lexical import lexical

__all__ = ["CURVE_KS", "THRESHOLDS", "ChunkingComparison", "compare_chunkings", "lexical", "threshold_sweep"]
