"""A regression gate for CI (``docs/gate.md``): save an evaluation as a baseline file
(:func:`save_baseline`, ``ragrade evaluate ... --save-baseline``), then check a candidate run against it
(:func:`gate`, ``ragrade gate``) with a paired one-sided test per metric, margins and floors.

Modules: :mod:`~ragrade.gating.baseline` (the file, the qrels fingerprint), :mod:`~ragrade.gating.core`
(:func:`gate`, :class:`GateResult` and its exports).
"""

from __future__ import annotations

from ragrade.gating.baseline import Baseline, load_baseline, qrels_fingerprint, save_baseline
from ragrade.gating.core import GATE_TESTS, GateResult, IncomparableError, MetricVerdict, gate

__all__ = [
    "GATE_TESTS",
    "Baseline",
    "GateResult",
    "IncomparableError",
    "MetricVerdict",
    "gate",
    "load_baseline",
    "qrels_fingerprint",
    "save_baseline",
]
