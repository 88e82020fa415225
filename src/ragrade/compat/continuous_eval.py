"""continuous-eval's retrieval metrics (in continuous-eval's shapes) over the ``continuous-eval`` profile.

>>> m = RankedRetrievalMetrics(RougeChunkMatch())
>>> m.calculate(retrieved_contexts=["Lyon is a major city in France.",
...             "Paris is the capital of France and also the largest city in the country."],
...             ground_truth_contexts=["Paris is the capital of France."])
{'average_precision': 0.5, 'reciprocal_rank': 0.5, 'ndcg': 0.6309297535714574}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ragrade.errors import InputError, require
from ragrade.matching import Exact, Matcher, RougeL


class MatchingStrategy:
    """A continuous-eval matching strategy: a ragrade matcher plus its level (chunk or sentence)."""

    level = "chunk"

    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher

    def is_relevant(self, retrieved_component: str, ground_truth_component: str) -> bool:
        return bool(self.matcher.match([retrieved_component], [ground_truth_component])[0])


class ExactChunkMatch(MatchingStrategy):
    def __init__(self) -> None:
        super().__init__(Exact(allow_empty=True))


class RougeChunkMatch(MatchingStrategy):
    def __init__(self, threshold: float = 0.7) -> None:
        # allow_empty: the rouge package reads a whitespace-only text as one empty word (docs/profiles.md)
        super().__init__(RougeL(threshold=threshold, variant="union", measure="recall", allow_empty=True))
        self.threshold = threshold


class ExactSentenceMatch(ExactChunkMatch):
    level = "sentence"


class RougeSentenceMatch(RougeChunkMatch):
    level = "sentence"

    def __init__(self, threshold: float = 0.8) -> None:
        super().__init__(threshold)


def _args(kwargs: dict[str, Any]) -> tuple[list[str], list[str]]:
    ret = kwargs.get("retrieved_context", kwargs.get("retrieved_contexts"))
    gt = kwargs.get("ground_truth_context", kwargs.get("ground_truth_contexts"))
    if ret is None or gt is None:
        raise InputError("pass retrieved_context(s)= and ground_truth_context(s)=")
    return list(ret), list(gt)


def _sentences(chunks: list[str]) -> list[str]:
    """NLTK's punkt sentence splitter, as continuous-eval (needs ``nltk`` and its punkt data)."""
    nltk = require("nltk", extra="text", purpose="continuous-eval's sentence matching strategies")
    try:
        return [s for c in chunks for s in nltk.tokenize.sent_tokenize(c)]
    except LookupError as exc:
        raise InputError("continuous-eval's sentence strategies need NLTK's punkt data "
                         "(python -m nltk.downloader punkt punkt_tab)") from exc


class _Metric:
    def __init__(self, matching_strategy: MatchingStrategy | None = None) -> None:
        self.matching_strategy = matching_strategy or RougeChunkMatch()

    def calculate(self, **kwargs: Any) -> dict[str, float]:
        return self.compute(**kwargs)

    def __call__(self, **kwargs: Any) -> dict[str, float]:
        return self.compute(**kwargs)

    def batch(self, retrieved_context: Sequence[Sequence[str]], ground_truth_context: Sequence[Sequence[str]]
              ) -> list[dict[str, float]]:
        return self._many([list(r) for r in retrieved_context], [list(g) for g in ground_truth_context])

    def compute(self, **kwargs: Any) -> dict[str, float]:
        ret, gt = _args(kwargs)
        return self._many([ret], [gt])[0]

    def _many(self, rets: list[list[str]], gts: list[list[str]]) -> list[dict[str, float]]:  # pragma: no cover
        raise NotImplementedError


def _run(rets: list[list[str]], gts: list[list[str]], metrics: list[str], matcher: Matcher) -> list[dict]:
    import warnings

    from ragrade.errors import RagradeWarning
    from ragrade.evaluation import evaluate

    if len(rets) != len(gts):
        raise InputError(f"{len(rets)} retrieved lists but {len(gts)} ground-truth lists")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        res = evaluate([[[g] for g in gt] for gt in gts], rets, metrics, profile="continuous-eval",
                       matcher=matcher)
    return res.per_query.to_dict(orient="records")


class RankedRetrievalMetrics(_Metric):
    """Average precision, reciprocal rank and NDCG at chunk level."""

    def __init__(self, matching_strategy: MatchingStrategy | None = None) -> None:
        super().__init__(matching_strategy)
        if self.matching_strategy.level != "chunk":
            raise InputError("ranked metrics are calculated at chunk level")

    def _many(self, rets: list[list[str]], gts: list[list[str]]) -> list[dict[str, float]]:
        rows = _run(rets, gts, ["ap", "rr", "ndcg"], self.matching_strategy.matcher)
        out = []
        for r in rows:
            nd = r["ndcg"]
            if isinstance(nd, float) and math.isnan(nd):
                raise ZeroDivisionError("continuous-eval's NDCG is undefined for an empty ground truth")
            out.append({"average_precision": r["ap"], "reciprocal_rank": r["rr"], "ndcg": nd})
        return out


class PrecisionRecallF1(_Metric):
    """Context precision, recall and F1 (chunk or sentence level)."""

    def _many(self, rets: list[list[str]], gts: list[list[str]]) -> list[dict[str, float]]:
        if self.matching_strategy.level == "sentence":
            rets = [_sentences(r) for r in rets]
            gts = [_sentences(g) for g in gts]
        rows = _run(rets, gts, ["precision", "recall", "f1"], self.matching_strategy.matcher)
        return [{"context_precision": r["precision"], "context_recall": r["recall"], "context_f1": r["f1"]}
                for r in rows]


__all__ = ["ExactChunkMatch", "ExactSentenceMatch", "PrecisionRecallF1", "RankedRetrievalMetrics",
           "RougeChunkMatch", "RougeSentenceMatch"]
