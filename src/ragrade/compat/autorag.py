"""AutoRAG-style per-row retrieval metrics (AutoRAG's per-row shapes) over the ``autorag`` profile.

Each function takes the rows' ground truth (``retrieval_gt``: per row a list of groups, every group
needed, any id of a group satisfies it) and retrieved ids, and returns one value per row; a row with an
empty list, an empty group or a blank id gets ``None`` (AutoRAG skips it).

>>> retrieval_map([[["test-1", "test-2"], ["test-3"]]], [["test-1", "pred-1", "test-2", "pred-3"]])
[0.41666666666666663]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragrade.errors import InputError


def _rows(metric: str, gt: Sequence, pred: Sequence, matcher: str | None = None) -> list[float | None]:
    from ragrade.evaluation import evaluate

    gt, pred = list(gt), list(pred)
    if len(gt) != len(pred):
        raise InputError(f"{len(gt)} ground-truth rows but {len(pred)} retrieved rows")
    groups = [[list(g) if isinstance(g, list | tuple) else [g] for g in row] for row in gt]
    res = evaluate(groups, [list(p) for p in pred], [metric], profile="autorag", matcher=matcher)
    return [None if (isinstance(v, float) and math.isnan(v)) else float(v) for v in res.per_query.iloc[:, 0]]


def retrieval_precision(retrieval_gt: Sequence, pred_ids: Sequence) -> list[float | None]:
    return _rows("precision", retrieval_gt, pred_ids)


def retrieval_recall(retrieval_gt: Sequence, pred_ids: Sequence) -> list[float | None]:
    return _rows("recall", retrieval_gt, pred_ids)


def retrieval_f1(retrieval_gt: Sequence, pred_ids: Sequence) -> list[float | None]:
    return _rows("f1", retrieval_gt, pred_ids)


def retrieval_mrr(retrieval_gt: Sequence, pred_ids: Sequence) -> list[float | None]:
    return _rows("rr", retrieval_gt, pred_ids)


def retrieval_map(retrieval_gt: Sequence, pred_ids: Sequence) -> list[float | None]:
    return _rows("ap", retrieval_gt, pred_ids)


def retrieval_ndcg(retrieval_gt: Sequence, pred_ids: Sequence) -> list[float | None]:
    return _rows("ndcg", retrieval_gt, pred_ids)


def retrieval_token_precision(gt_contents: Sequence, retrieved_contents: Sequence) -> list[float | None]:
    return _rows("token_precision", gt_contents, retrieved_contents, matcher="exact")


def retrieval_token_recall(gt_contents: Sequence, retrieved_contents: Sequence) -> list[float | None]:
    return _rows("token_recall", gt_contents, retrieved_contents, matcher="exact")


def retrieval_token_f1(gt_contents: Sequence, retrieved_contents: Sequence) -> list[float | None]:
    return _rows("token_f1", gt_contents, retrieved_contents, matcher="exact")


__all__ = ["retrieval_f1", "retrieval_map", "retrieval_mrr", "retrieval_ndcg", "retrieval_precision",
           "retrieval_recall", "retrieval_token_f1", "retrieval_token_precision", "retrieval_token_recall"]
