"""Depth-k pooling (TREC): the union of the top ``depth`` documents of every run, per query.

Each run is ranked as ragrade ranks it for evaluation (score descending, ties by the ``ties`` policy,
trec_eval's document id descending by default), so the pool holds exactly the documents that a metric
at cutoff ``depth`` can see. With ``qrels`` and ``holes_only=True`` the pairs already judged are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.data import Qrels, Run
from ragrade.errors import InputError


@dataclass(frozen=True)
class Pool:
    """The pooled (query, document) pairs.

    ``pairs``: DataFrame with columns ``query``, ``doc``, ``rank`` (best rank over the runs) and ``runs``
    (how many runs retrieved the pair within the depth), ordered by query (first appearance in the runs)
    then rank then document. ``judged``: pairs of the pool that ``qrels`` already judged (left out when
    ``holes_only``).
    """

    pairs: pd.DataFrame
    depth: int
    run_names: tuple[str, ...]
    holes_only: bool = False
    judged: int = 0
    candidates: int = 0  # pooled pairs before judged ones were removed
    queries_in_runs: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def doc_ids(self) -> set[str]:
        """The distinct pooled document ids (what must be read from the corpus)."""
        return set(self.pairs["doc"].tolist())

    @property
    def query_ids(self) -> list[str]:
        return list(dict.fromkeys(self.pairs["query"].tolist()))

    def as_tuples(self) -> list[tuple[str, str]]:
        return list(zip(self.pairs["query"].tolist(), self.pairs["doc"].tolist(), strict=True))


def _as_run(run: Any, i: int) -> Run:
    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        first = next(iter(run.values()), None)
        if first is None or isinstance(first, Mapping):
            return Run.from_dict(run, name=f"run{i + 1}")
        return Run.from_ranked(run, name=f"run{i + 1}")
    raise InputError("a run must be a ragrade.Run or a dict {query: {doc: score}} / {query: [docs]}", value=type(run).__name__)


def pool(runs: Iterable[Any] | Mapping[str, Any], depth: int = 10, *, qrels: Qrels | Mapping[str, Any] | None = None,
         holes_only: bool = False, ties: str = "docid_desc") -> Pool:
    """Pool the top ``depth`` documents of each run.

    ``runs``: a list of :class:`~ragrade.Run` (or run dicts), or a mapping name -> run. ``qrels`` with
    ``holes_only=True`` drops the pairs already judged (any grade, 0 included).

    >>> from ragrade import Run
    >>> a = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, name="a")
    >>> b = Run.from_dict({"q1": {"d4": 3.0, "d1": 2.0}}, name="b")
    >>> pool([a, b], depth=2).as_tuples()
    [('q1', 'd1'), ('q1', 'd4'), ('q1', 'd2')]
    >>> pool([a, b], depth=2, qrels={"q1": {"d1": 1}}, holes_only=True).as_tuples()
    [('q1', 'd4'), ('q1', 'd2')]
    """
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer) or depth < 1:
        raise InputError("depth must be a positive integer", value=depth)
    items: Sequence[tuple[str | None, Any]] = (
        [(str(k), v) for k, v in runs.items()] if isinstance(runs, Mapping) else [(None, r) for r in runs])
    if not items:
        raise InputError("pooling needs at least one run")
    frames = []
    names: list[str] = []
    order: dict[str, int] = {}
    for i, (name, r) in enumerate(items):
        run = _as_run(r, i)
        names.append(name or run.name or f"run{i + 1}")
        df = run.to_pandas(ties=ties)
        df = df.loc[df["rank"] <= depth, ["query", "doc", "rank"]]
        for q in run.query_ids.tolist():
            order.setdefault(q, len(order))
        frames.append(df.drop_duplicates(["query", "doc"]))
    all_rows = pd.concat(frames, ignore_index=True)
    all_rows["query"] = all_rows["query"].astype(str)
    all_rows["doc"] = all_rows["doc"].astype(str)
    grouped = all_rows.groupby(["query", "doc"], sort=False).agg(rank=("rank", "min"), runs=("rank", "size")).reset_index()
    grouped["qorder"] = grouped["query"].map(order)
    grouped = grouped.sort_values(["qorder", "rank", "doc"], kind="stable").drop(columns="qorder").reset_index(drop=True)
    grouped["rank"] = grouped["rank"].astype(np.int64)
    grouped["runs"] = grouped["runs"].astype(np.int64)
    candidates = len(grouped)
    judged = 0
    if qrels is not None:
        q = qrels if isinstance(qrels, Qrels) else Qrels.from_dict(qrels)
        known = q.to_pandas()[["query", "doc"]].astype(str)
        known["_judged"] = True
        merged = grouped.merge(known, on=["query", "doc"], how="left")
        is_judged = merged["_judged"].fillna(False).to_numpy(dtype=bool)
        judged = int(is_judged.sum())
        if holes_only:
            grouped = grouped.loc[~is_judged].reset_index(drop=True)
    elif holes_only:
        raise InputError("holes_only needs qrels (the judgments whose holes are to be filled)")
    return Pool(grouped, int(depth), tuple(names), holes_only, judged, candidates, len(order))


__all__ = ["Pool", "pool"]
