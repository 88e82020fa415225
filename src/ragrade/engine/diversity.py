"""Diversity measures (alpha-nDCG@k, ERR-IA@k) from subtopic judgments.

Subtopic judgments say which documents are relevant to which subtopic (aspect, intent) of a query: TREC's
``qid subtopic docno rel`` files (the TREC Web track's diversity qrels), a DataFrame with columns
``query``, ``subtopic``, ``doc`` and ``grade`` (or ir-measures' ``query_id``, ``iteration``, ``doc_id``,
``relevance``), or nested dicts ``{query: {subtopic: {doc: grade}}}``. A grade at or above ``rel`` (1 by
default) makes the document relevant to that subtopic (binary, as ndeval).

:func:`evaluate_diversity` ranks a run (any input :func:`ragrade.evaluate` takes), finds its judged documents
through the scoring port (:meth:`ragrade.Evaluator.locate` over one truth row per judged query and document),
expands each to its subtopic judgments and runs the kernels of :mod:`ragrade.kernels.diversity`;
``ragrade.evaluate`` calls it when every metric is a diversity family.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragrade.engine.inputs import as_run, is_path
from ragrade.engine.labels import MetricsArg, metric_labels
from ragrade.engine.result import HoleRate, Result, Summary
from ragrade.errors import InputError, MetricError, ParseError, PolicyError
from ragrade.kernels.diversity import Subtopics
from ragrade.options import public
from ragrade.policies import Policies

_COLUMNS = {"query": ("query", "query_id", "qid", "topic"), "subtopic": ("subtopic", "iteration", "aspect", "intent"),
            "doc": ("doc", "doc_id", "docno", "docid"), "grade": ("grade", "relevance", "rel", "label")}


def read_subtopic_qrels(path: str | Path) -> pd.DataFrame:
    """A TREC diversity qrels file (``qid subtopic docno rel`` per line, whitespace-separated) as a frame
    with columns ``query``, ``subtopic``, ``doc`` (str) and ``grade`` (float); :class:`ParseError` naming
    the line otherwise."""
    from ragrade.io import readable_path, text_lines

    rows: list[tuple[str, str, str, float]] = []
    with readable_path(path) as p:  # a regular file or a pipe (devices refused), gzip told by content
        for n, line in text_lines(p):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise ParseError("expected 4 fields: query subtopic document grade", path=str(path), line=n,
                                 text=line)
            if "\x00" in line:
                raise ParseError("an id contains a NUL byte (\\x00)", path=str(path), line=n, text=line)
            try:
                grade = float(parts[3])
            except ValueError:
                raise ParseError("the grade must be a number", path=str(path), line=n, text=line) from None
            rows.append((parts[0], parts[1], parts[2], grade))
    return pd.DataFrame(rows, columns=["query", "subtopic", "doc", "grade"])


def as_subtopic_qrels(qrels: Any) -> pd.DataFrame:
    """Subtopic judgments in any accepted shape as a ``query, subtopic, doc, grade`` frame (ids as str)."""
    if is_path(qrels):
        frame = read_subtopic_qrels(qrels)
    elif isinstance(qrels, pd.DataFrame):
        cols = {}
        for want, options in _COLUMNS.items():
            found = next((c for c in options if c in qrels.columns), None)
            if found is None:
                raise InputError(f"subtopic judgments need a {want!r} column (one of {', '.join(options)}); "
                                 f"got columns {list(qrels.columns)}")
            cols[want] = qrels[found]
        frame = pd.DataFrame(cols)
    elif isinstance(qrels, dict):
        rows = [(q, s, d, g) for q, subs in qrels.items() for s, docs in _items(subs, q) for d, g in _items(docs, q)]
        frame = pd.DataFrame(rows, columns=["query", "subtopic", "doc", "grade"])
    else:
        raise InputError("subtopic judgments must be a path, a DataFrame or {query: {subtopic: {doc: grade}}}",
                         value=qrels)
    for c in ("query", "subtopic", "doc"):
        frame[c] = frame[c].astype(str)
    try:
        frame["grade"] = pd.to_numeric(frame["grade"]).astype(np.float64)
    except (TypeError, ValueError):
        raise InputError("subtopic grades must be numbers") from None
    if frame["grade"].isna().any():
        raise InputError("subtopic grades must be numbers (found a missing grade)")
    dup = frame.duplicated(["query", "subtopic", "doc"])
    if dup.any():
        row = frame[dup].iloc[0]
        raise InputError(f"document {row['doc']!r} is judged twice for subtopic {row['subtopic']!r} of query "
                         f"{row['query']!r}")
    return frame


def _items(value: Any, q: Any) -> Any:
    if not isinstance(value, dict):
        raise InputError(f"query {q!r}: expected {{subtopic: {{doc: grade}}}}", value=value)
    return value.items()


@public
def evaluate_diversity(qrels: Any, run: Any, metrics: MetricsArg, *, missing_run: str | None = None,
                       no_relevant: str | None = None, ties: str | None = None,
                       max_docs: int | None = None, unjudged: str | None = None,
                       upper_grade: float | None = None) -> Result:
    """Score ``run`` with diversity measures (``alpha_ndcg@k``, ``err_ia@k``) against subtopic judgments.

    A query whose judgments mark no document relevant to any subtopic is undefined (``no_relevant``: skip
    by default, ``"zero"`` as ndeval). Queries missing from the run score 0 (``missing_run="drop"`` leaves
    them out); a document retrieved twice counts at its first rank only. A document is judged for a query
    when any of its subtopic judgments names it (any grade): ``unjudged="condensed"`` removes the others
    before scoring, ``"bounds"`` adds an upper bound in which each of them is relevant to every subtopic of
    the query (``upper_grade`` is accepted for symmetry: the measures are binary). The hole rate is the
    share of the top k (the largest cutoff asked) without a judgment.

    >>> r = evaluate_diversity({"q": {"1": {"a": 1}, "2": {"b": 1}}}, {"q": {"a": 2.0, "c": 1.0, "b": 0.5}},
    ...                        ["alpha_ndcg@3"])
    >>> round(r.means["alpha_ndcg@3"], 4), round(float(r.hole_rate.per_query["q"]), 4)
    (0.9197, 0.3333)
    """
    labels = metric_labels(metrics)
    for label, m in labels:
        if m.family.kind != "diversity":
            raise MetricError(f"{label!r} is not a diversity measure; evaluate it with ragrade.evaluate")
    pol = Policies().update(missing_run=missing_run, no_relevant=no_relevant, ties=ties, max_docs=max_docs,
                            unjudged=unjudged, upper_grade=upper_grade)
    judged = as_subtopic_qrels(qrels)
    runs = as_run(run)
    qids = list(dict.fromkeys(judged["query"].tolist()))
    qindex = {q: i for i, q in enumerate(qids)}
    nq = len(qids)
    rows, in_run = _ranked_rows(runs, qindex, pol)
    only_in_run = [q for q in runs.query_ids.tolist() if q not in qindex]
    missing = [q for i, q in enumerate(qids) if not in_run[i]]
    if missing and pol.missing_run == "error":
        raise PolicyError(f"{len(missing)} ground-truth queries are missing from the run (e.g. {missing[0]!r})")
    judged = _with_subtopic_codes(judged, qindex)
    rows = rows.assign(is_judged=_Joined.of(rows, judged, qids).row_key >= 0)
    cuts = [m.k for _, m in labels if m.k is not None]
    k = max(cuts) if cuts else 10
    holes = _hole_rates(rows, k, nq)
    if pol.unjudged == "condensed":
        rows = rows[rows["is_judged"]]
        rows = rows.assign(pos=rows.groupby("q").cumcount().to_numpy())
    summary = Summary(qrels_queries=nq, run_queries=runs.n_queries, evaluated=0, missing_from_run=missing,
                      only_in_run=only_in_run)
    counted = in_run if pol.missing_run == "drop" else np.ones(nq, dtype=bool)
    data = _score(labels, rows, judged, nq, qids, summary, pol, counted)
    upper = _upper_bound(labels, rows, judged, qids, pol, counted) if pol.unjudged == "bounds" else None
    index = pd.Index(qids, name="query", dtype=object)
    frame = pd.DataFrame(data, index=index)
    hole_series = pd.Series(holes, index=index, name=f"hole_rate@{k}")
    if pol.missing_run == "drop":
        frame = frame[counted]
        hole_series = hole_series[counted]
        upper = None if upper is None else upper[counted]
    valid = hole_series.dropna()
    hole = HoleRate(k, hole_series, not bool((judged["grade"] <= 0).any()),
                    {k: float(valid.mean())} if len(valid) else {})
    summary = summary.replace(evaluated=len(frame))  # (Summary is frozen)
    return Result(frame, dict(labels), summary, pol, run_name=runs.name,
                  nan_means={lab for lab in data if pol.no_relevant == "nan" and lab in summary.no_relevant},
                  hole_rate=hole, upper=upper)


def _ranked_rows(runs: Any, qindex: dict[Any, int], pol: Policies) -> tuple[pd.DataFrame, np.ndarray]:
    """The run's rows of the judged queries in rank order as ``(q, pos, doc)`` (``q``: the query's index in
    the judgments; the first copy of each document only; cut at ``max_docs``), and which judged queries the
    run has."""
    perm, _ = runs.ranking_sparse(pol.ties)
    order = np.arange(runs.n_rows) if perm is None else perm
    counts = np.diff(runs.offsets)
    pos = np.arange(runs.n_rows) - np.repeat(runs.offsets[:-1], counts)
    rq = pd.Series(runs.query_ids[np.repeat(np.arange(runs.n_queries), counts)]).map(qindex).to_numpy()
    rows = pd.DataFrame({"q": rq, "pos": pos, "doc": runs.docs_at(order)})
    in_run = np.zeros(len(qindex), dtype=bool)
    in_run[pd.Series(runs.query_ids).map(qindex).dropna().astype(np.int64).to_numpy()] = True
    rows = rows[rows["q"].notna()]
    rows = rows.drop_duplicates(["q", "doc"], keep="first")
    if pol.max_docs is not None:
        rows = rows[rows["pos"] < pol.max_docs]
    return rows.astype({"q": np.int64}), in_run


def _with_subtopic_codes(judged: pd.DataFrame, qindex: dict[Any, int]) -> pd.DataFrame:
    """The judgments with ``q`` (the query's index) and ``sub`` (one code per (query, subtopic))."""
    judged = judged.assign(q=judged["query"].map(qindex).astype(np.int64))
    subtopic_ids = pd.factorize(pd.MultiIndex.from_frame(judged[["q", "subtopic"]]))[0]
    return judged.assign(sub=subtopic_ids)


class _Joined:
    """A run's ranked rows joined to subtopic judgments through the scoring port: the truth the port indexes is
    one row per (query, document) with any subtopic judgment, and :meth:`ragrade.Evaluator.locate` finds the
    ranked rows it judges; each subtopic judgment points at its document's row of that truth. (The port holds
    graded judgments of documents; the subtopics are expanded here from the rows it finds.)"""

    def __init__(self, row_key: np.ndarray, judged_key: np.ndarray) -> None:
        self.row_key = row_key  # int64[ranked rows]: the document-level truth row (-1: not judged)
        self.judged_key = judged_key  # int64[subtopic judgments]: their document's truth row

    @classmethod
    def of(cls, rows: pd.DataFrame, judged: pd.DataFrame, qids: list[Any]) -> _Joined:
        from ragrade.data import Run
        from ragrade.engine.core import Evaluator

        docs = judged.drop_duplicates(["q", "doc"])
        truth = pd.DataFrame({"query": [qids[i] for i in docs["q"].to_numpy(np.int64)],
                              "doc": docs["doc"].to_numpy(object), "grade": 1.0})
        ev = Evaluator(truth, ["num_ret"])
        view = ev.truth
        at = {(view.query_ids[int(view.row_query[r])], d): r
              for r, d in enumerate(view.docs(np.arange(len(view.grades), dtype=np.int64)).tolist())}
        judged_key = np.fromiter((at[(qids[q], d)] for q, d in zip(judged["q"].to_numpy(np.int64).tolist(),
                                                                   judged["doc"].tolist(), strict=True)),
                                 dtype=np.int64, count=len(judged))
        row_key = np.full(len(rows), -1, dtype=np.int64)
        if len(rows):
            q = rows["q"].to_numpy(np.int64)
            order = np.argsort(q, kind="stable")  # the rows grouped by query, rank order kept within each
            sq = q[order]
            heads = np.flatnonzero(np.r_[True, sq[1:] != sq[:-1]])
            bounds = np.append(heads, len(sq))
            docs_sorted = rows["doc"].to_numpy(object)[order]
            run = Run.from_lists([docs_sorted[a:z].tolist() for a, z in pairwise(bounds.tolist())],
                                 query_ids=[qids[i] for i in sq[heads].tolist()])
            found, truth_rows = ev.locate(run)
            row_key[order[found]] = truth_rows
        return cls(row_key, judged_key)

    def hits(self, rows: pd.DataFrame, relevant: np.ndarray, sub: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(q, pos, sub)`` of every (ranked row, subtopic) pair whose document is relevant to the subtopic
        (``relevant``: which subtopic judgments count), sorted by (q, pos)."""
        key = self.judged_key[relevant]
        subs = sub[relevant]
        by_key = np.argsort(key, kind="stable")
        key, subs = key[by_key], subs[by_key]
        first = np.searchsorted(key, self.row_key, side="left")
        count = np.where(self.row_key >= 0, np.searchsorted(key, self.row_key, side="right") - first, 0)
        owner = np.repeat(np.arange(len(self.row_key), dtype=np.int64), count)
        starts = np.repeat(np.cumsum(count) - count, count)
        pick = np.repeat(first, count) + np.arange(len(owner), dtype=np.int64) - starts
        q = rows["q"].to_numpy(np.int64)[owner]
        pos = rows["pos"].to_numpy(np.int64)[owner]
        order = np.lexsort((pos, q))
        return q[order], pos[order], subs[pick][order]


def _hole_rates(rows: pd.DataFrame, k: int, nq: int) -> np.ndarray:
    """Per query, the share of the top ``k`` retrieved documents without a judgment (NaN without any)."""
    top = rows[rows["pos"] < k]
    n_top = np.bincount(top["q"].to_numpy(np.int64), minlength=nq).astype(np.float64)
    n_top_judged = np.bincount(top["q"].to_numpy(np.int64), weights=top["is_judged"].to_numpy(np.float64),
                               minlength=nq)
    holes = np.full(nq, np.nan)
    holes[n_top > 0] = 1.0 - n_top_judged[n_top > 0] / n_top[n_top > 0]
    return holes


def _upper_bound(labels: list[tuple[str, Any]], rows: pd.DataFrame, judged: pd.DataFrame, qids: list[Any],
                 pol: Policies, counted: np.ndarray) -> pd.DataFrame:
    """The per-query values when each unjudged retrieved document is relevant to every subtopic of its query
    (at the highest grade, or ``upper_grade`` when higher): ``unjudged="bounds"``."""
    nq = len(qids)
    grade = max(float(judged["grade"].max()) if len(judged) else 1.0, 1.0) if pol.upper_grade is None \
        else max(float(pol.upper_grade), float(judged["grade"].max()) if len(judged) else 1.0)
    subs = judged.drop_duplicates("sub")[["q", "subtopic", "sub"]]
    extra = rows[~rows["is_judged"]][["q", "doc"]].merge(subs, on="q")
    extra = extra.assign(query=[qids[i] for i in extra["q"].to_numpy()], grade=grade)
    more = pd.concat([judged, extra[judged.columns]], ignore_index=True)
    return pd.DataFrame(_score(labels, rows, more, nq, qids, Summary(qrels_queries=nq, run_queries=0, evaluated=0),
                               pol, counted), index=pd.Index(qids, name="query", dtype=object))


def _score(labels: list[tuple[str, Any]], rows: pd.DataFrame, judged: pd.DataFrame, nq: int, qids: list[Any],
           summary: Summary, pol: Policies, counted: np.ndarray) -> dict[str, np.ndarray]:
    """Per-query values of each diversity measure for ranked ``rows`` (q, pos, doc) and subtopic
    judgments ``judged`` (q, sub, doc, grade)."""
    docs = judged.drop_duplicates(["q", "doc"])[["q", "doc"]].sort_values(["q", "doc"], kind="stable")
    docs = docs.assign(tie=docs.groupby("q").cumcount().to_numpy(), idx=np.arange(len(docs)))
    joined = _Joined.of(rows, judged, qids)
    data: dict[str, np.ndarray] = {}
    for label, m in labels:
        relevant = (judged["grade"] >= m.rel).to_numpy()
        rel = judged[relevant]
        n_sub = np.zeros(nq, dtype=np.int64)
        np.add.at(n_sub, rel.drop_duplicates("sub")["q"].to_numpy(), 1)
        hq, hpos, hsub = joined.hits(rows, relevant, judged["sub"].to_numpy(np.int64))
        pairs = rel.merge(docs, on=["q", "doc"])
        s = Subtopics(nq=nq, n_sub=n_sub, q=hq, pos=hpos, sub=hsub, doc_q=docs["q"].to_numpy(np.int64),
                      doc_tie=docs["tie"].to_numpy(np.int64), pair_doc=pairs["idx"].to_numpy(np.int64),
                      pair_sub=pairs["sub"].to_numpy(np.int64))
        assert m.family.kernel is not None
        values = np.asarray(m.family.kernel(m, s), dtype=np.float64)
        undefined = (n_sub == 0) & counted
        if undefined.any():
            summary.no_relevant[label] = [qids[i] for i in np.flatnonzero(undefined)]
            if pol.no_relevant == "error":
                raise PolicyError(f"{label}: {int(undefined.sum())} queries have no relevant subtopic judgment")
            values = np.where(undefined, 0.0 if pol.no_relevant == "zero" else np.nan, values)
        data[label] = values
    return data
