"""REMem's retrieval metric classes (in REMem's shapes) over the ``remem`` profile.

``calculate_metric_scores(gold_docs, retrieved_chunks, k_list)`` returns ``(pooled, per_example)``:
per-example dicts keyed ``"Recall@k"`` / ``"Recall_all@k"`` / ``"NDCG_any@k"`` for the sorted distinct
``k`` values, and pooled means (sum over examples / number of examples) rounded to 4 decimals. Empty
gold lists score 0 and count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragrade.errors import InputError


class _RememMetric:
    _metric = ""
    _key = ""

    def __init__(self, global_config: Any = None) -> None:
        self.global_config = global_config

    def calculate_metric_scores(self, gold_docs: Sequence[Sequence[str]], retrieved_chunks: Sequence[Sequence[str]],
                                k_list: Sequence[int] = (1, 5, 10, 20)
                                ) -> tuple[dict[str, float], list[dict[str, float]]]:
        from ragrade.evaluation import evaluate

        gold, ret = list(gold_docs), list(retrieved_chunks)
        if len(gold) != len(ret):
            raise InputError(f"gold_docs has {len(gold)} examples but retrieved_chunks has {len(ret)}")
        if not gold:
            raise InputError("no examples (REMem divides by the number of examples)")
        ks = sorted(set(int(k) for k in k_list))
        if not ks or ks[0] < 1:
            raise InputError("k_list needs positive cutoffs", value=list(k_list))
        labels = [f"{self._metric}@{k}" for k in ks]
        res = evaluate([[[str(d)] for d in g] for g in gold], [[str(c) for c in r] for r in ret],
                       labels, profile="remem")
        cols = [res.per_query[lab].tolist() for lab in labels]
        keys = [f"{self._key}@{k}" for k in ks]
        per_example = [{key: float(col[i]) for key, col in zip(keys, cols, strict=True)} for i in range(len(gold))]
        pooled = {key: round(sum(col) / len(gold), 4) for key, col in zip(keys, cols, strict=True)}
        return pooled, per_example


class RetrievalRecall(_RememMetric):
    """Recall@k = |set(top k) & set(gold)| / |set(gold)|, exact string equality."""

    metric_name = "retrieval_recall"
    _metric, _key = "recall", "Recall"


class RetrievalRecallAll(_RememMetric):
    """Recall_all@k = 1 if every gold doc is matched by a top-k chunk (REMem's substring rule)."""

    metric_name = "retrieval_recall_all"
    _metric, _key = "recall_all", "Recall_all"


class RetrievalNDCGAny(_RememMetric):
    """NDCG_any@k with REMem's discount (ranks 1 and 2 weigh 1) and the list's own labels as ideal."""

    metric_name = "retrieval_ndcg_any"
    _metric, _key = "ndcg", "NDCG_any"


__all__ = ["RetrievalNDCGAny", "RetrievalRecall", "RetrievalRecallAll"]
