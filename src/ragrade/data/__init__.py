"""Columnar, immutable ground truth (:class:`Qrels`) and results (:class:`Run`), and the string column the TREC
readers keep document ids in (:class:`Utf8Column`)."""

from ragrade._arrays import Utf8Column
from ragrade.data.qrels import Qrels
from ragrade.data.run import TIE_POLICIES, Run

__all__ = ["TIE_POLICIES", "Qrels", "Run", "Utf8Column"]
