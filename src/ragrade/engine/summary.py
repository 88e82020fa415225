"""What an evaluation says beside its values: :class:`Summary` (what the policies did to the queries),
:class:`HoleRate` (the share of unjudged documents in each top k) and, for a judged evaluation,
:class:`JudgeInfo` (who judged, and how the judgments went). All immutable."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade._arrays import is_pandas

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def plural(n: int, one: str, many: str) -> str:
    """``"1 query"``, ``"2 queries"``."""
    return f"{n} {one if n == 1 else many}"


class HoleRate:
    """The share of each query's top-k retrieved documents that have no judgment (any grade counts as a
    judgment). k is the largest cutoff asked (10 when none is). ``per_query`` (a Series indexed by query)
    is NaN for an empty list. When the ground truth holds no judged non-relevant item at all (the usual
    RAG case: only gold items are listed), every non-gold item is a hole, and ``only_relevant_judged`` says
    so. ``per_query`` may be given as a Series or as ``(query ids, rates)`` arrays (no pandas needed until
    the Series is asked for). Immutable, as the :class:`Result` that holds it: :meth:`subset` gives a
    modified copy."""

    __slots__ = ("_arrays", "_by_k", "_series", "k", "only_relevant_judged")
    k: int
    only_relevant_judged: bool
    _series: pd.Series | None
    _arrays: tuple[np.ndarray, np.ndarray] | None
    _by_k: Mapping[int, float]

    def __init__(self, k: int, per_query: Any, only_relevant_judged: bool = False,
                 by_k: Mapping[int, float] | None = None) -> None:
        init = object.__setattr__  # the one place the fields are set (assignment raises afterwards)
        init(self, "k", k)
        init(self, "_series", per_query if is_pandas(per_query) else None)
        arrays = None
        if self._series is None:
            index, values = per_query
            arrays = (np.asarray(index, dtype=object), np.asarray(values, dtype=np.float64))
        init(self, "_arrays", arrays)
        init(self, "only_relevant_judged", only_relevant_judged)
        init(self, "_by_k", MappingProxyType({} if by_k is None else dict(by_k)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a HoleRate is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a HoleRate is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        per_query = self._arrays if self._arrays is not None else self._series
        return (HoleRate, (self.k, per_query, self.only_relevant_judged, dict(self._by_k)))

    @property
    def by_k(self) -> Mapping[int, float]:
        """The mean hole rate at k and at the evaluator's ``hole_cutoffs`` (the report's), ``{k: mean}``
        (read-only)."""
        return self._by_k

    @property
    def per_query(self) -> pd.Series:
        if self._series is None:
            import pandas as pd

            assert self._arrays is not None
            index, values = self._arrays
            series = pd.Series(values, index=pd.Index(index, name="query", dtype=object),
                               name=f"hole_rate@{self.k}")
            object.__setattr__(self, "_series", series)  # made once, on first use (a cache, not a change)
        assert self._series is not None
        return self._series

    def _values(self) -> np.ndarray:
        return self._arrays[1] if self._arrays is not None else self.per_query.to_numpy(dtype=np.float64)

    def __repr__(self) -> str:
        return (f"HoleRate(k={self.k}, mean={self.mean:.4f}, queries={self.queries}, "
                f"only_relevant_judged={self.only_relevant_judged})")

    @property
    def mean(self) -> float:
        """Mean over the queries with a non-empty list (NaN when there is none)."""
        v = self._values()
        v = v[~np.isnan(v)]
        return float(v.mean()) if len(v) else math.nan

    @property
    def queries(self) -> int:
        return int((~np.isnan(self._values())).sum())

    def subset(self, mask: np.ndarray, by_k: Mapping[int, float] | None = None) -> HoleRate:
        kept: Any = ((self._arrays[0][mask], self._arrays[1][mask]) if self._arrays is not None
                     else self.per_query[mask])
        return HoleRate(self.k, kept, self.only_relevant_judged, self.by_k if by_k is None else by_k)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"k": self.k, "mean": self.mean, "queries": self.queries,
                               "only_relevant_judged": self.only_relevant_judged,
                               "by_k": {str(k): v for k, v in sorted(self.by_k.items())}}
        if per_query:
            pairs = (zip(self._arrays[0].tolist(), self._arrays[1].tolist(), strict=True)
                     if self._arrays is not None else self.per_query.items())
            out["per_query"] = {str(q): float(v) for q, v in pairs}
        return out

    def line(self) -> str:
        """One line for the summary: ``hole rate@10: 23.1% of the top 10 ... (mean over 40 queries)``."""
        mean = self.mean
        if math.isnan(mean):
            return f"hole rate@{self.k}: no retrieved documents"
        text = (f"hole rate@{self.k}: {100 * mean:.1f}% of the top-{self.k} retrieved documents have no judgment "
                f"(mean over {plural(self.queries, 'query', 'queries')})")
        if self.only_relevant_judged:
            text += "; the ground truth lists relevant items only, so every other item counts as unjudged"
        return text

    def exceeds(self, threshold: float) -> bool:
        """Whether the mean hole rate is above ``threshold`` (a share) while judged non-relevant items exist
        (with relevant-only ground truth, holes are expected and not a warning)."""
        mean = self.mean
        return not self.only_relevant_judged and not math.isnan(mean) and mean > threshold


@dataclass(frozen=True)
class JudgeInfo:
    """Who judged a judged evaluation (:func:`ragrade.judges.evaluate_judged`) and how its judgments went:
    data held by the :class:`Summary` of its :class:`Result` (``result.judge``), no behaviour of its own.

    ``name``, ``model``: the judge (``lexical``, ``openai`` ...) and its model. ``profile``: the judge profile
    the formulas followed (``default``, ``ragas``, ``deepeval``). ``outcomes``: per metric label, how many
    queries were ``scored``, ``failed``, ``missing`` (an empty question or reference), ``degenerate`` (no
    retrieved context: 0 without a call) and ``undefined`` (NaN by the formula). ``judgments``: needed,
    cache hits, calls, failed, prompt and completion tokens, cost (with a budget: ``unasked``,
    ``budget_reached``). ``cache``: the cache file (None: off or not used); ``cache_note``: why judgments
    were not cached, if they were not."""

    name: str
    model: str
    profile: str
    outcomes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    judgments: Mapping[str, Any] = field(default_factory=dict)
    cache: str | None = None
    cache_note: str | None = None

    def notes(self) -> list[str]:
        """The sentences a judged result adds to :meth:`Result.notes`: failed and unasked judgments (their
        metrics are NaN where they were needed)."""
        j = self.judgments
        out: list[str] = []
        failed, unasked = int(j.get("failed", 0)), int(j.get("unasked", 0))
        if failed:
            out.append(f"{plural(failed, 'judgment', 'judgments')} failed: the metrics "
                       f"that needed them are NaN for those queries (reasons in details)")
        if unasked:
            out.append(f"budget reached: {plural(unasked, 'judgment', 'judgments')} left unasked (their metrics "
                       f"are NaN); run again to resume from the cache")
        return out

    def to_dict(self, queries: int) -> dict[str, Any]:
        """The judged evaluation's entries of the summary export (as ``ragrade judge --format json`` has
        always written them): ``queries``, ``metrics`` (the outcomes), ``judgments``, ``cache``
        (+ ``cache_note``)."""
        out: dict[str, Any] = {"queries": queries, "metrics": {k: dict(v) for k, v in self.outcomes.items()},
                               "judgments": dict(self.judgments), "cache": self.cache}
        if self.cache_note is not None:
            out["cache_note"] = self.cache_note
        return out


@dataclass(frozen=True)
class Summary(Mapping[str, Any]):
    """What happened to the queries: counts and examples for every policy that applied (and, for a judged
    evaluation, ``judge``: who judged and how the judgments went).

    Immutable (``dataclasses.replace`` gives a modified copy). It also reads as the mapping of its export
    :meth:`to_dict` (``summary["evaluated"]``, ``summary["judgments"]["calls"]``): the attributes hold the
    query lists, the mapping their counts, as the JSON output does."""

    qrels_queries: int
    run_queries: int
    evaluated: int
    missing_from_run: list[str] = field(default_factory=list)
    only_in_run: list[str] = field(default_factory=list)
    no_relevant: dict[str, list[str]] = field(default_factory=dict)  # metric label -> queries
    empty_lists: list[str] = field(default_factory=list)
    duplicate_items: int = 0
    identical_ids_dropped: int = 0
    ties_at_cutoff: dict[int, int] = field(default_factory=dict)  # k -> queries with a tie across k
    duplicates_judged_only: bool = False  # duplicates were counted among judged items only
    nonfinite_scores: int = 0  # scores of +inf or -inf (ranked as given)
    judge: JudgeInfo | None = None  # a judged evaluation: the judge and its counters

    def to_dict(self) -> dict[str, Any]:
        out = {
            "qrels_queries": self.qrels_queries,
            "run_queries": self.run_queries,
            "evaluated": self.evaluated,
            "missing_from_run": len(self.missing_from_run),
            "only_in_run": len(self.only_in_run),
            "no_relevant": {k: len(v) for k, v in self.no_relevant.items()},
            "empty_lists": len(self.empty_lists),
            "duplicate_items": self.duplicate_items,
            "identical_ids_dropped": self.identical_ids_dropped,
            "ties_at_cutoff": {str(k): v for k, v in self.ties_at_cutoff.items()},
            "nonfinite_scores": self.nonfinite_scores,
        }
        if self.judge is not None:
            out.update(self.judge.to_dict(self.evaluated))
        return out

    def replace(self, **changes: Any) -> Summary:
        """A copy with some fields changed (as ``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    # -- read as the mapping of to_dict() ----------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    __hash__ = None  # type: ignore[assignment]  # holds lists and dicts


__all__ = ["HoleRate", "JudgeInfo", "Summary", "plural"]
