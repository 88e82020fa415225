"""The provenance record of a test set (docs/synthesize.md, "Output"): who asked (the judge, never its key),
with which prompts, on which corpus, under which settings, and a summary of what came out — kept questions
per kind, rejects per stage, and the leakage summary (how many questions a keyword search alone answers)."""

from __future__ import annotations

import hashlib
import math
import urllib.parse
from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any

from ragrade.spans.model import Corpus

#: Depths at which the summary counts the questions whose gold passages BM25 alone ranks that high.
KEYWORD_DEPTHS = (1, 5, 10)


def safe_url(url: str) -> str:
    """``url`` without credentials, query or fragment."""
    u = urllib.parse.urlsplit(url)
    host = (u.hostname or "") + (f":{u.port}" if u.port else "")
    return urllib.parse.urlunsplit((u.scheme, host, u.path, "", ""))


def judge_info(judge: Any) -> dict[str, Any]:
    """Name, model, prompt version and the settings that shape the answers (never the key)."""
    judge = getattr(judge, "inner", judge)
    info: dict[str, Any] = {"name": getattr(judge, "name", type(judge).__name__),
                            "model": getattr(judge, "model", ""),
                            "prompt_version": getattr(judge, "prompt_version", "")}
    s = getattr(judge, "settings", None)
    if s is not None:
        info["base_url"] = safe_url(str(s.base_url))
        info.update({k: getattr(s, k) for k in ("temperature", "seed", "max_tokens", "response_format",
                                                 "max_retries", "parse_retries") if hasattr(s, k)})
    return info


def corpus_info(corpus: Corpus, passages: int | None = None) -> dict[str, Any]:
    """Source, size and a SHA-256 fingerprint of the documents (ids and texts, in order)."""
    h = hashlib.sha256()
    for doc in corpus:
        for part in (doc, corpus[doc]):
            data = part.encode("utf-8")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
    out: dict[str, Any] = {"source": corpus.source, "documents": len(corpus), "characters": corpus.characters,
                           "sha256": h.hexdigest()}
    if passages is not None:
        out["passages"] = passages
    return out


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else None


def leakage_summary(items: Sequence[Any]) -> dict[str, Any]:
    """Mean and median ``leakage``; how many questions have every gold passage in BM25's top 1, 5, 10."""
    lk = [v for v in (_number(it.scores.get("leakage")) for it in items) if v is not None]
    ranks = [int(r) for r in (it.scores.get("bm25_rank") for it in items) if isinstance(r, int)]
    out: dict[str, Any] = {"questions": len(items),
                           "leakage_mean": sum(lk) / len(lk) if lk else None,
                           "leakage_median": median(lk) if lk else None,
                           "bm25_rank_median": median(ranks) if ranks else None}
    for k in KEYWORD_DEPTHS:
        hits = sum(1 for r in ranks if r <= k)
        out[f"keyword_top_{k}"] = hits
        out[f"keyword_top_{k}_share"] = hits / len(ranks) if ranks else None
    return out


def summarize(items: Sequence[Any], rejects: Sequence[Any], wanted: Mapping[str, int] | None = None,
              complete: bool = True) -> dict[str, Any]:
    """The summary record: kept per kind (and the targets), rejects per stage, leakage."""
    kept: dict[str, int] = {}
    for it in items:
        kept[it.kind] = kept.get(it.kind, 0) + 1
    stages: dict[str, int] = {}
    for r in rejects:
        stages[r.stage] = stages.get(r.stage, 0) + 1
    out: dict[str, Any] = {"kept": len(items), "kept_by_kind": kept}
    if wanted is not None:
        out["targets"] = dict(wanted)
    out.update({"rejected": len(rejects), "rejected_by_stage": dict(sorted(stages.items())),
                "complete": complete, "leakage": leakage_summary(items)})
    return out


__all__ = ["KEYWORD_DEPTHS", "corpus_info", "judge_info", "leakage_summary", "safe_url", "summarize"]
