"""Columnar, immutable ground truth (:class:`Qrels`) and results (:class:`Run`)."""

from ragrade.data.qrels import Qrels
from ragrade.data.run import TIE_POLICIES, Run

__all__ = ["TIE_POLICIES", "Qrels", "Run"]
