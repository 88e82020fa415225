"""Familiar entry points in peers' shapes, as thin layers over ragrade's one engine.

Switch by changing one import:

* :mod:`ragrade.compat.relevance` — functions over a bare relevance list (``precision_at_k(rel, k)``,
  ``recall_at_k``, ``hit_rate_at_k``, ``f1_at_k``, ``reciprocal_rank``, ``average_precision``,
  ``ndcg_at_k`` and their means), as in order-aware-metrics tutorials;
* :mod:`ragrade.compat.remem` — ``RetrievalRecall``, ``RetrievalRecallAll``, ``RetrievalNDCGAny`` with
  ``calculate_metric_scores(gold_docs, retrieved_chunks, k_list)`` (REMem's shapes);
* :mod:`ragrade.compat.continuous_eval` — ``RankedRetrievalMetrics``, ``PrecisionRecallF1`` and the
  matching strategies ``ExactChunkMatch``, ``RougeChunkMatch`` (continuous-eval's shapes);
* :mod:`ragrade.compat.autorag` — AutoRAG-style per-row functions ``retrieval_precision``,
  ``retrieval_recall``, ``retrieval_f1``, ``retrieval_mrr``, ``retrieval_map``, ``retrieval_ndcg`` and
  the token metrics (AutoRAG's shapes).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.compat.relevance import (
        average_precision,
        f1_at_k,
        hit_rate_at_k,
        mean_average_precision,
        mean_reciprocal_rank,
        ndcg_at_k,
        precision_at_k,
        recall_at_k,
        reciprocal_rank,
    )

__all__ = [
    "average_precision",
    "f1_at_k",
    "hit_rate_at_k",
    "mean_average_precision",
    "mean_reciprocal_rank",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
]


def __getattr__(name: str) -> Any:
    """The relevance-list functions, imported on first use: the package is also the home of the trec_eval
    drop-in, whose start-up should not load the evaluation front end it does not call."""
    if name in __all__:
        from ragrade.compat import relevance

        return getattr(relevance, name)
    raise AttributeError(f"module 'ragrade.compat' has no attribute {name!r}")
