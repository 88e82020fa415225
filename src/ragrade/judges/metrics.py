"""The judge-based context metrics: conventions and formulas.

The judge metrics are families of kind ``"judge"`` in the one metric registry
(:mod:`ragrade.metrics.registry`) and are parsed by the one parser; this module keeps the judge
profiles and the formulas over flat arrays of verdicts.

Conventions (``profile``): ``default`` (ragrade's own), ``ragas`` and ``deepeval``; see ``docs/judges.md``.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ragrade.errors import MetricError, UnknownNameError
from ragrade.kernels.common import safe_div
from ragrade.metrics.parser import Metric, parse_metric, parse_metrics
from ragrade.metrics.registry import Family, families

#: Epsilons of the ragas profile (docs/profiles.md, ragas).
RAGAS_PRECISION_EPS = 1e-10
RAGAS_ENTITY_EPS = 1e-8


@dataclass(frozen=True)
class JudgeProfile:
    """A peer's conventions for the judge formulas, as data (the judgments are the same under every
    profile; only the formulas read them differently; docs/judges.md, Metrics).

    ``precision_eps``: added to the denominator of context precision. ``entity_match``: ``"normalized"``
    (NFKC, case folded, trimmed; empty entities dropped) or ``"exact"`` strings. ``entity_eps``: added to
    the denominator of entities recall (so that no reference entity scores 0, not NaN).
    ``relevancy_denominator``: ``"statements"`` (the judge's) or ``"sentences"`` (of the retrieved context,
    by :func:`split_sentences`); ``relevancy_empty``: the score when the denominator is 0;
    ``relevancy_cap``: cap the score at 1."""

    name: str
    precision_eps: float = 0.0
    entity_match: str = "normalized"
    entity_eps: float = 0.0
    relevancy_denominator: str = "statements"
    relevancy_empty: float = math.nan
    relevancy_cap: bool = False


#: The judge profiles, by name: adding one is one line here.
JUDGE_PROFILES: dict[str, JudgeProfile] = {
    "default": JudgeProfile("default"),
    "ragas": JudgeProfile("ragas", precision_eps=RAGAS_PRECISION_EPS, entity_match="exact",
                          entity_eps=RAGAS_ENTITY_EPS, relevancy_denominator="sentences", relevancy_empty=0.0,
                          relevancy_cap=True),
    "deepeval": JudgeProfile("deepeval"),
}

PROFILES: tuple[str, ...] = tuple(JUDGE_PROFILES)


JudgeMetric = Metric  #: a judge metric is a :class:`~ragrade.metrics.Metric` of a ``"judge"`` family

#: The judge families of the registry, by canonical name (the registry is the one source of truth).
JUDGE_METRICS: dict[str, Family] = {f.name: f for f in families("judge")}


def parse(text: str | Metric) -> Metric:
    """Parse a judge metric (``"llm_context_precision@3"``, ``"context_recall"`` or an alias) with the one
    metric parser; a metric of another kind is a :class:`MetricError` saying where it is computed."""
    m = text if isinstance(text, Metric) else parse_metric(text)
    if m.family.kind != "judge":
        hint = (" (the LLM-judged one is llm_context_precision)" if m.name == "context_precision" else "")
        raise MetricError(f"{str(text)!r} is computed from relevance judgments by `ragrade evaluate`, not by a "
                          f"judge{hint}; judge metrics: {', '.join(JUDGE_METRICS)}")
    return m


def parse_many(items: Iterable[str | Metric] | str | None) -> list[Metric]:
    """Parse a list of judge metrics (or a comma-separated string); ``None`` means every judge metric."""
    if items is None:
        return [Metric(n) for n in JUDGE_METRICS]
    if isinstance(items, str):
        items = [p for p in items.split(",") if p.strip()]
    out: list[Metric] = []
    for it in items:
        found = [it] if isinstance(it, Metric) else parse_metrics(it)
        for m in found:
            m = parse(m)
            if m not in out:
                out.append(m)
    if not out:
        raise MetricError("no judge metric given")
    return out


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise UnknownNameError("judge profile", profile, PROFILES, show_known=True)
    return profile


def profile_rules(profile: str | JudgeProfile) -> JudgeProfile:
    """The :class:`JudgeProfile` of a name (or the profile itself)."""
    return profile if isinstance(profile, JudgeProfile) else JUDGE_PROFILES[check_profile(profile)]


# ----------------------------------------------------------------------------------------------------------
# Formulas over flat arrays (one call for all queries)


def ranked_precision(v: np.ndarray, offsets: np.ndarray, k: int | None, profile: str | JudgeProfile) -> np.ndarray:
    """Context precision for many queries at once, scored through the scoring port
    (:class:`~ragrade.engine.scoring.Scorer`): the judge's verdicts are the ground truth of each query's chunks
    (chunk ``i`` of query ``q`` judged ``v_i``), its ranking the chunks in their order, and the value the registry's
    ``context_precision@k`` of that ranking.

    ``v`` holds the 0/1 verdicts of every query's chunks in rank order, concatenated; query ``q`` owns
    ``v[offsets[q]:offsets[q+1]]``. Score = ``sum_{i<=k} precision@i * v_i / sum_{i<=k} v_i``; 0 when no chunk
    in the top k is useful. The profile's ``precision_eps`` is added to the denominator (ragas: 1e-10,
    ``docs/judges.md``): the port also gives that denominator (``hits@k``), and the value is taken to it.
    """
    from ragrade.engine.scoring import Scorer
    from ragrade.metrics import Metric as RetrievalMetric
    from ragrade.policies import Policies

    v = np.asarray(v, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    counts = np.diff(offsets)
    out = np.zeros(len(counts), dtype=np.float64)
    ranked = np.flatnonzero(counts > 0)  # (a query without a chunk scores 0: the port's truth has a row per query)
    if not len(ranked):
        return out
    eps = profile_rules(profile).precision_eps
    labels = [("precision", RetrievalMetric("context_precision", k)), ("hits", RetrievalMetric("hits", k))]
    rows = np.concatenate([np.arange(offsets[q], offsets[q + 1]) for q in ranked.tolist()])
    ranks = np.concatenate([np.arange(counts[q]) for q in ranked.tolist()])
    scorer = Scorer.from_rows([str(q) for q in ranked.tolist()], counts[ranked], [str(r) for r in ranks.tolist()],
                              v[rows], labels, Policies(no_relevant="zero", missing_run="zero"))
    values = scorer.values(np.arange(len(rows), dtype=np.int64), ranks, counts[ranked])
    precision, hits = values["precision"], values["hits"]
    if eps:  # num / (hits + eps), num = precision * hits
        precision = safe_div(precision * hits, hits, eps=eps)
    out[ranked] = precision
    return out


def ratio(num: np.ndarray, den: np.ndarray, *, eps: float = 0.0, empty: float = math.nan, cap: bool = False) -> np.ndarray:
    """``num / (den + eps)`` element-wise; ``empty`` where ``den + eps == 0``; optionally capped at 1."""
    out = safe_div(num, den, eps=eps, empty=empty)
    return np.minimum(out, 1.0) if cap else out


def normalize_entity(entity: str) -> str:
    """Default-profile entity matching: Unicode NFKC, case folded, whitespace collapsed, outer punctuation
    stripped. (The ragas profile compares the strings exactly.)"""
    s = unicodedata.normalize("NFKC", entity).casefold()
    s = " ".join(s.split())
    return s.strip(" .,;:!?\"'()[]{}")


_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences: after ``.``/``!``/``?`` followed by space and a capital or digit, or at
    line breaks. Used by the offline judges and by the ragas profile of context relevancy (its denominator)."""
    return [s.strip() for s in _SENT_SPLIT.split(text or "") if s and s.strip()]
