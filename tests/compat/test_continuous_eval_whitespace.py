"""continuous-eval's RougeChunkMatch on ground-truth chunks that are whitespace only (issue 34, item 5): the rouge
package reads such a text as one sentence of one empty word, so it matches a retrieved chunk that also holds an
empty sentence (whitespace only, or a piece such as ``"a. "`` after a period) and nothing else; an empty string
never matches. ragrade.compat.continuous_eval gives continuous-eval's values there, per pair and per metric."""

from __future__ import annotations

import math
import os
import random

import pytest

from ragrade.compat import continuous_eval as ours

os.environ.setdefault("CONTINUOUS_EVAL_DO_NOT_TRACK", "true")
ce = pytest.importorskip("continuous_eval.metrics.retrieval", reason="continuous-eval is in the test extra")

BLANK = [" ", "\n", "  \t ", "\u00a0", "", ". ", " . ", ".", "a. ", "Paris. Lyon. ", "x .  .y", "Paris is big."]
WORDS = ["Paris", "is", "the", "capital", "of", "France", "Lyon", "a", "big", "city"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(BLANK)
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 8)))
    return words + rng.choice(["", ".", ". ", " . ", "\n"])


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@pytest.mark.parametrize("gt", BLANK[:5])
def test_each_pair_as_continuous_eval_decides_it(gt):
    theirs, mine = ce.RougeChunkMatch(), ours.RougeChunkMatch()
    for ret in [*BLANK, "Paris is the capital. ", "Paris"]:
        assert mine.is_relevant(ret, gt) == theirs.is_relevant(ret, gt), (ret, gt)


def test_metrics_on_whitespace_truths_equal_continuous_eval():
    rng = random.Random(5)
    ranked, prf = ce.RankedRetrievalMetrics(ce.RougeChunkMatch()), ce.PrecisionRecallF1(ce.RougeChunkMatch())
    my_ranked, my_prf = ours.RankedRetrievalMetrics(ours.RougeChunkMatch()), ours.PrecisionRecallF1(ours.RougeChunkMatch())
    differs = 0
    for _ in range(300):
        gts = [_text(rng) for _ in range(rng.randrange(1, 4))]
        ret = [_text(rng) for _ in range(rng.randrange(1, 6))]
        args = {"retrieved_context": ret, "ground_truth_context": gts}
        for peer, mine in ((prf, my_prf), (ranked, my_ranked)):
            try:
                want = peer.compute(**args)
            except ZeroDivisionError:
                with pytest.raises(ZeroDivisionError):
                    mine.compute(**args)
                continue
            got = mine.compute(**args)
            assert all(_close(got[k], v) for k, v in want.items()), (gts, ret, got, want)
        differs += any(g.strip() == "" and g for g in gts)
    assert differs > 50  # whitespace-only truths were exercised
