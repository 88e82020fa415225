"""Where a result's per-query values live: :class:`QueryColumns` (query ids and one float64 array per
column, made a DataFrame on first use), a pandas DataFrame, or :class:`DeferredValues` kept where they were
computed (Spark) and collected once; the readers every result uses on any of them (:func:`table_columns`,
:func:`table_column`, :func:`table_rows`) and :func:`aggregate`, one number from a column."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ragrade.engine.summary import HoleRate


class QueryColumns:
    """Per-query values before they are a DataFrame: the query ids and one float64 array per column.

    The engine builds a :class:`Result` from these, and :attr:`Result.per_query` makes the DataFrame on
    first use: printing means, counts or the per-query rows needs no pandas (``ragrade evaluate`` on a small
    file then never imports it: issue 11, start-up)."""

    __slots__ = ("data", "index")

    def __init__(self, index: Any, data: Mapping[str, Any]) -> None:
        self.index = np.asarray(index, dtype=object)
        self.data = {c: np.asarray(v, dtype=np.float64) for c, v in data.items()}
        for c, v in self.data.items():
            if v.shape != self.index.shape:
                raise ValueError(f"column {c!r} has {len(v)} values for {len(self.index)} queries")

    @property
    def columns(self) -> list[str]:
        return list(self.data)

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.data, index=pd.Index(self.index, name="query", dtype=object))


def table_columns(t: Any) -> list[str]:
    """The column labels of a :class:`QueryColumns` or a DataFrame."""
    return list(t.columns)


def table_column(t: Any, c: str) -> np.ndarray:
    """Column ``c`` of a :class:`QueryColumns` or a DataFrame, as float64."""
    if isinstance(t, QueryColumns):
        return t.data[c]
    return t[c].to_numpy(dtype=np.float64)


def table_rows(t: Any) -> list[tuple[Any, tuple[float, ...]]]:
    """``[(query, (value per column))]`` of a :class:`QueryColumns` or a DataFrame."""
    if isinstance(t, QueryColumns):
        cols = [t.data[c].tolist() for c in t.data]
        return list(zip(t.index.tolist(), zip(*cols, strict=True) if cols else [()] * len(t.index), strict=True))
    return list(zip(t.index.tolist(), t.itertuples(index=False, name=None), strict=True))


class LocalValues(NamedTuple):
    """What a :class:`DeferredValues` hands back when collected: the per-query values, the upper bounds
    (``unjudged="bounds"``) and the hole rate, on this machine."""

    per_query: pd.DataFrame | QueryColumns
    upper: pd.DataFrame | QueryColumns | None = None
    hole_rate: HoleRate | None = None


class DeferredValues(ABC):
    """Per-query values kept where they were computed (a Spark cluster: :mod:`ragrade.scale.spark`) behind
    a :class:`Result`: the result's ``per_query`` and ``upper`` are :attr:`frame` and :attr:`upper_frame`
    (e.g. Spark DataFrames); its means, counts, hole rate and exports read the values collected to this
    machine by :meth:`collect`, once, on first need. ``columns`` are the metric labels, in order.

    A subclass implements :meth:`collect` (and :meth:`release`, to free what it holds elsewhere); the
    collected values are kept by this object (a cache: the result never changes)."""

    #: Shown before ``Result(...)`` in the repr (e.g. ``Spark``).
    where: str = ""

    def __init__(self, frame: Any, columns: Iterable[str], upper_frame: Any = None) -> None:
        self.frame = frame
        self.upper_frame = upper_frame
        self.columns = list(columns)
        self._local: LocalValues | None = None

    @abstractmethod
    def collect(self) -> LocalValues:
        """The values on this machine (called once, by :meth:`local`)."""

    def local(self) -> LocalValues:
        """The collected values (collected on the first call)."""
        if self._local is None:
            self._local = self.collect()
        return self._local

    def release(self) -> None:  # noqa: B027 - optional: nothing to free by default
        """Free what is held elsewhere (the collected values stay usable)."""


def aggregate(values: np.ndarray, how: str) -> float:
    """One number from per-query values (NaN values left out): ``"mean"``, ``"sum"`` or ``"gmean"`` (the
    geometric mean of the values floored at 1e-5, as trec_eval's gm_map)."""
    v = values[~np.isnan(values)]
    if len(v) == 0:
        return math.nan
    if how == "sum":
        return float(v.sum())
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(v, 1e-5)))))
    return float(v.mean())


__all__ = ["DeferredValues", "LocalValues", "QueryColumns", "aggregate", "table_column", "table_columns", "table_rows"]
