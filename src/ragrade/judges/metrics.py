"""The judge-based context metrics: their registry, parser, conventions and formulas.

Every judge metric is defined once here (:data:`JUDGE_METRICS`); the CLI listing, the docs and the
parametrised tests read this table. ``parse(str(m)) == m`` for every metric.

Conventions (``profile``): ``default`` (ragrade's own), ``ragas`` and ``deepeval``; see ``docs/judges.md``.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ragrade.errors import MetricError

PROFILES: tuple[str, ...] = ("default", "ragas", "deepeval")

#: Epsilons of the ragas profile (SPEC 4.2).
RAGAS_PRECISION_EPS = 1e-10
RAGAS_ENTITY_EPS = 1e-8


@dataclass(frozen=True)
class MetricInfo:
    name: str
    aliases: tuple[str, ...]
    needs: tuple[str, ...]  # example fields that must be non-empty
    takes_k: bool
    summary: str


JUDGE_METRICS: dict[str, MetricInfo] = {
    m.name: m
    for m in (
        MetricInfo(
            "context_precision",
            ("llm_context_precision_with_reference", "llm_context_precision", "contextual_precision"),
            ("reference",),
            True,
            "Ranked precision of the chunks the judge finds useful for the reference answer: "
            "sum over useful ranks i<=k of precision@i / number of useful chunks in the top k.",
        ),
        MetricInfo(
            "context_precision_noref",
            ("llm_context_precision_without_reference", "context_precision_without_reference"),
            ("question",),
            True,
            "As context_precision, but each chunk is judged against the question (and the generated "
            "response, when the dataset has one) instead of a reference answer.",
        ),
        MetricInfo(
            "context_recall",
            ("llm_context_recall", "contextual_recall"),
            ("reference",),
            False,
            "Statements of the reference answer that the retrieved context supports / all its statements.",
        ),
        MetricInfo(
            "context_entities_recall",
            ("context_entity_recall", "entity_recall"),
            ("reference",),
            False,
            "Entities of the reference found among the entities of the retrieved context / reference entities.",
        ),
        MetricInfo(
            "context_relevancy",
            ("context_relevance", "contextual_relevancy"),
            ("question",),
            False,
            "Statements of the retrieved context that help answer the question / all its statements.",
        ),
    )
}

_ALIASES: dict[str, str] = {}
for _m in JUDGE_METRICS.values():
    _ALIASES[_m.name] = _m.name
    for _a in _m.aliases:
        _ALIASES[_a] = _m.name


@dataclass(frozen=True)
class JudgeMetric:
    """A judge metric with its parameter: ``name`` and, for the precision metrics, a cutoff ``k``."""

    name: str
    k: int | None = None

    def __post_init__(self) -> None:
        info = JUDGE_METRICS.get(self.name)
        if info is None:
            raise MetricError(_unknown(self.name))
        if self.k is not None:
            if not info.takes_k:
                raise MetricError(f"judge metric {self.name!r} takes no cutoff (got @{self.k})")
            if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
                raise MetricError(f"cutoff of {self.name!r} must be a positive integer, got {self.k!r}")

    def __str__(self) -> str:
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def info(self) -> MetricInfo:
        return JUDGE_METRICS[self.name]


def _unknown(name: str) -> str:
    close = difflib.get_close_matches(name, list(_ALIASES), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown judge metric {name!r}{hint} Known: {', '.join(JUDGE_METRICS)}"


_METRIC_RE = re.compile(r"^\s*([A-Za-z_]+)\s*(?:@\s*(\S+))?\s*$")


def parse(text: str | JudgeMetric) -> JudgeMetric:
    """Parse ``"context_precision@3"``, ``"context_recall"`` or an alias into a :class:`JudgeMetric`."""
    if isinstance(text, JudgeMetric):
        return text
    m = _METRIC_RE.match(text)
    if not m:
        raise MetricError(f"cannot parse judge metric {text!r}; expected NAME or NAME@K")
    alias = m.group(1).lower()
    name = _ALIASES.get(alias)
    if name is None:
        raise MetricError(_unknown(alias))
    k: int | None = None
    if m.group(2) is not None:
        try:
            k = int(m.group(2))
        except ValueError:
            raise MetricError(f"cutoff in {text!r} must be a positive integer, got {m.group(2)!r}") from None
    return JudgeMetric(name, k)


def parse_many(items: Iterable[str | JudgeMetric] | str | None) -> list[JudgeMetric]:
    """Parse a list of metrics (or a comma-separated string); ``None`` means every judge metric."""
    if items is None:
        return [JudgeMetric(n) for n in JUDGE_METRICS]
    if isinstance(items, str):
        items = [p for p in items.split(",") if p.strip()]
    out: list[JudgeMetric] = []
    for it in items:
        m = parse(it)
        if m not in out:
            out.append(m)
    if not out:
        raise MetricError("no judge metric given")
    return out


def check_profile(profile: str) -> str:
    if profile not in PROFILES:
        raise MetricError(f"unknown judge profile {profile!r}; expected one of {', '.join(PROFILES)}")
    return profile


# ----------------------------------------------------------------------------------------------------------
# Formulas over flat arrays (one call for all queries)


def ranked_precision(v: np.ndarray, offsets: np.ndarray, k: int | None, profile: str) -> np.ndarray:
    """Context precision for many queries at once.

    ``v`` holds the 0/1 verdicts of every query's chunks in rank order, concatenated; query ``q`` owns
    ``v[offsets[q]:offsets[q+1]]``. Score = ``sum_{i<=k} precision@i * v_i / sum_{i<=k} v_i``; 0 when no chunk
    in the top k is useful; the ragas profile adds 1e-10 to the denominator (SPEC 4.2).
    """
    v = np.asarray(v, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.int64)
    nq = len(offsets) - 1
    lengths = np.diff(offsets)
    seg = np.repeat(np.arange(nq), lengths)
    rank = np.arange(len(v)) - np.repeat(offsets[:-1], lengths) + 1
    if k is not None:
        keep = rank <= k
        v, seg, rank = v[keep], seg[keep], rank[keep]
    csum = np.cumsum(v)
    # cumulative sum restarted at every query: subtract the total before the query's first kept item
    starts = np.searchsorted(seg, np.arange(nq))
    before = np.concatenate([[0.0], csum])[starts]
    hits_so_far = csum - before[seg]
    num = np.bincount(seg, weights=hits_so_far / rank * v, minlength=nq)
    den = np.bincount(seg, weights=v, minlength=nq)
    if profile == "ragas":
        return num / (den + RAGAS_PRECISION_EPS)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def ratio(num: np.ndarray, den: np.ndarray, *, eps: float = 0.0, empty: float = math.nan, cap: bool = False) -> np.ndarray:
    """``num / (den + eps)`` element-wise; ``empty`` where ``den + eps == 0``; optionally capped at 1."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64) + eps
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), empty)
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
