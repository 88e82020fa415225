"""LLM relevance assessment: qrels where there are none, holes filled, and calibration against humans.

* :func:`pool` — depth-k pooling of runs (optionally only the pairs not judged yet);
* :func:`read_queries`, :func:`read_passages` — topics and a corpus, the corpus streamed so that only the
  pooled passages are kept;
* :func:`assess` / :func:`plan` — grade the pool 0-3 with an assessor (:class:`LLMGrader` over any
  OpenAI-compatible server, or the offline approximations :class:`LexicalGrader` and
  :class:`SemanticGrader`), cached, resumable, within a :class:`Budget`;
* :func:`merge` / :func:`write_merged` — human and assessor judgments in one file with an ``origin``
  column, read back by :func:`ragrade.read_qrels` (``prefer=`` picks the winner, human by default);
* :func:`agreement` — kappa, weighted kappa, confusion, precision/recall and system-ranking correlations
  (Kendall's tau-b, tau_AP, Spearman) against reference labels;
* :func:`ppi_mean` — prediction-powered mean and confidence interval of a per-query metric.

See ``docs/assessment.md``. Submodules are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Pool": "pooling", "pool": "pooling",
    "Passages": "ragrade.io.texts", "read_passages": "ragrade.io.texts", "read_queries": "ragrade.io.texts",
    "AssessProgress": "runner", "AssessResult": "runner", "Budget": "runner", "JudgeConfigError": "runner",
    "Plan": "runner", "aassess": "runner", "assess": "runner", "plan": "runner",
    "LLMGrader": "graders", "LexicalGrader": "graders", "SemanticGrader": "graders",
    "merge": "merged", "write_merged": "merged", "assessor_label": "merged",
    "resolve_origins": "ragrade.io.origins", "ORIGIN_POLICIES": "ragrade.io.origins",
    "Agreement": "calibration", "SystemAgreement": "calibration", "agreement": "calibration",
    "MeanInterval": "ppi", "ppi_mean": "ppi", "classical_mean": "ppi",
    "cohen_kappa": "stats", "weighted_kappa": "stats", "kendall_tau_b": "stats", "spearman_rho": "stats",
    "tau_ap": "stats",
    "PROMPT_VERSION": "prompt", "parse_grade": "prompt",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragrade.assessment' has no attribute {name!r}")
    path = module if "." in module else f"ragrade.assessment.{module}"
    return getattr(importlib.import_module(path), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = sorted(_LAZY)
