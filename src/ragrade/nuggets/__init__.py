"""Nugget evaluation of retrieved context, the TREC RAG way (issue 38; docs/nuggets.md).

* Nuggets and assignments as data: :class:`Nugget`, :class:`Nuggets`, :class:`Assignment`,
  :class:`Assignments`; :func:`read` / :func:`write` (nuggets files, JSON Lines), :func:`read_assignments` /
  :func:`write_assignments`.
* :func:`create` — nuggets from judged passages with an LLM (windows of 10, vital/okay labels, vital first,
  cut to 20); :func:`assign` — labels of support for retrieved passages, joined top-k contexts or answers;
  both through the LLM core (cache, budget, retries): :func:`llm_judge` makes a judge for them.
* :func:`score` — answer-level scores as nuggetizer's or open-rag-eval's profile; :func:`subtopic_qrels` —
  nuggets as the subtopics of α-nDCG, ERR-IA and subtopic recall.
* The retrieval measures ``nugget_recall(weight=...,strict=...,context=...)@k`` and ``nugget_precision@k``
  are ordinary metrics: ``ragrade.evaluate(nuggets, run, ["nugget_recall@5"], assignments=..., judge=...)``
  (the route :mod:`ragrade.nuggets.route`).
* :func:`erag_labels` — eRAG's document labels from answers generated from one document each.

Importing this package loads nothing heavy; each name is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY: dict[str, str] = {
    "Nugget": "ragrade.nuggets.data", "Nuggets": "ragrade.nuggets.data", "Assignment": "ragrade.nuggets.data",
    "Assignments": "ragrade.nuggets.data", "read": "ragrade.nuggets.data", "write": "ragrade.nuggets.data",
    "read_assignments": "ragrade.nuggets.data", "write_assignments": "ragrade.nuggets.data",
    "as_nuggets": "ragrade.nuggets.data", "as_assignments": "ragrade.nuggets.data",
    "create": "ragrade.nuggets.creation", "acreate": "ragrade.nuggets.creation",
    "CreateResult": "ragrade.nuggets.creation", "CreateSettings": "ragrade.nuggets.creation",
    "assign": "ragrade.nuggets.assignment", "aassign": "ragrade.nuggets.assignment", "AssignResult": "ragrade.nuggets.assignment",
    "score": "ragrade.nuggets.scores", "subtopic_qrels": "ragrade.nuggets.scores", "PROFILES": "ragrade.nuggets.scores",
    "llm_judge": "ragrade.nuggets.asking", "Assigner": "ragrade.nuggets.route",
    "erag_labels": "ragrade.nuggets.erag", "aerag_labels": "ragrade.nuggets.erag", "ERAGLabels": "ragrade.nuggets.erag",
    "TASK_SET": "ragrade.nuggets.prompts", "PROMPT_VERSION": "ragrade.nuggets.prompts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragrade.nuggets' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


if TYPE_CHECKING:  # pragma: no cover
    from ragrade.nuggets.asking import llm_judge
    from ragrade.nuggets.assignment import AssignResult, aassign, assign
    from ragrade.nuggets.creation import CreateResult, CreateSettings, acreate, create
    from ragrade.nuggets.data import (
        Assignment,
        Assignments,
        Nugget,
        Nuggets,
        as_assignments,
        as_nuggets,
        read,
        read_assignments,
        write,
        write_assignments,
    )
    from ragrade.nuggets.erag import ERAGLabels, aerag_labels, erag_labels
    from ragrade.nuggets.prompts import PROMPT_VERSION, TASK_SET
    from ragrade.nuggets.route import Assigner
    from ragrade.nuggets.scores import PROFILES, score, subtopic_qrels

__all__ = [
    "PROFILES",
    "PROMPT_VERSION",
    "TASK_SET",
    "AssignResult",
    "Assigner",
    "Assignment",
    "Assignments",
    "CreateResult",
    "CreateSettings",
    "ERAGLabels",
    "Nugget",
    "Nuggets",
    "aassign",
    "acreate",
    "aerag_labels",
    "as_assignments",
    "as_nuggets",
    "assign",
    "create",
    "erag_labels",
    "llm_judge",
    "read",
    "read_assignments",
    "score",
    "subtopic_qrels",
    "write",
    "write_assignments",
]
