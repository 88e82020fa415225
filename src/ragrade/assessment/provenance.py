"""The provenance file written next to assessed qrels: who graded (judge, model, prompt version, whether
an offline approximation), what (pool parameters, inputs), how many (counts, grades, failures, missing
passages), at what cost, when, and with which ragrade. JSON, never holding an API key."""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any

from ragrade.assessment.pooling import Pool
from ragrade.assessment.runner import AssessResult

#: At most this many ids of each kind are listed (all are counted).
LIST_LIMIT = 1000


def provenance_path(qrels_path: str | os.PathLike[str]) -> str:
    """``llm.qrels`` -> ``llm.qrels.provenance.json``."""
    return os.fspath(qrels_path) + ".provenance.json"


def build(result: AssessResult, pool: Pool, *, inputs: dict[str, Any], outputs: dict[str, Any],
          passages: Any = None) -> dict[str, Any]:
    from ragrade import __version__

    missing = list(getattr(passages, "missing", []) or [])
    empty = list(getattr(passages, "empty", []) or [])
    missing_queries = sorted({r["query"] for r in result.not_judged if r["reason"].endswith("query text")})
    return {
        "ragrade_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "judge": result.judge,
        "approximation": bool(result.judge.get("approximation")),
        "note": ("offline approximation: grades from word overlap or embedding similarity, not from reading "
                 "the passage; check them with `ragrade agreement` before use") if result.judge.get("approximation")
        else "LLM grades: check them against human labels with `ragrade agreement`",
        "pool": {"runs": list(pool.run_names), "depth": pool.depth, "holes_only": pool.holes_only,
                 "pairs": pool.candidates, "already_judged": pool.judged, "to_assess": len(pool),
                 "queries_in_runs": pool.queries_in_runs},
        "inputs": inputs,
        "outputs": outputs,
        "counts": {k: result.counts[k] for k in ("pairs", "graded", "failed", "not_judged", "unasked", "needed",
                                                 "calls", "cache_hits", "failed_judgments")},
        "grades": result.histogram(),
        "usage": {"prompt_tokens": result.counts["prompt_tokens"],
                  "completion_tokens": result.counts["completion_tokens"],
                  "cost": result.counts["cost"],
                  "replies_without_usage": result.counts["tokens_estimated"]},
        "budget": {**result.budget.to_dict(), "reached": result.budget_reached},
        "complete": result.complete,
        "missing_passages": {"count": len(missing), "ids": missing[:LIST_LIMIT]},
        "empty_passages": {"count": len(empty), "ids": empty[:LIST_LIMIT]},
        "missing_queries": {"count": len(missing_queries), "ids": missing_queries[:LIST_LIMIT]},
        "failures": {"count": len(result.failures), "pairs": result.failures[:LIST_LIMIT]},
    }


def write(path: str | os.PathLike[str], data: dict[str, Any]) -> None:
    from ragrade.io.writers import write_text

    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


__all__ = ["build", "provenance_path", "write"]
