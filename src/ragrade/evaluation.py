"""``evaluate()``, :class:`Evaluator` and :class:`Result`: the public evaluation API.

The join between a run and the ground truth is columnar: run document ids are mapped to the ground
truth's vocabulary with one hash lookup per *distinct* id, (query, doc) pairs are matched by a sorted
integer key, and only the rows that hit a judged unit are carried into the metric kernels.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np
import pandas as pd

from ragrade.data import Qrels, Run
from ragrade.data._columns import first_duplicate
from ragrade.errors import InputError, PolicyError, RagradeWarning
from ragrade.kernels import metrics as K
from ragrade.kernels.ranking import inverse_at, ties_straddling
from ragrade.metrics.parser import Metric, expand_labels
from ragrade.policies import Policies

MetricsArg = str | Metric | Iterable[str | Metric]


def _labels(metrics: MetricsArg) -> list[tuple[str, Metric]]:
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    out: list[tuple[str, Metric]] = []
    seen: set[str] = set()
    for m in metrics:
        pairs = [(str(m), m)] if isinstance(m, Metric) else expand_labels(m)
        for label, metric in pairs:
            if label not in seen:
                seen.add(label)
                out.append((label, metric))
    if not out:
        raise InputError("no metric given")
    return out


def _is_polars(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "polars" and hasattr(obj, "columns")


def as_qrels(qrels: Any) -> Qrels:
    """Ground truth from any accepted input: Qrels, nested dict, DataFrame (pandas or polars), a
    file path, or aligned lists of relevant ids."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, Mapping):
        return Qrels.from_dict(qrels)
    if isinstance(qrels, pd.DataFrame):
        return Qrels.from_pandas(qrels)
    if _is_polars(qrels):
        return Qrels.from_polars(qrels)
    if isinstance(qrels, str) or hasattr(qrels, "__fspath__"):
        from ragrade.io import read_qrels

        return read_qrels(qrels)
    if isinstance(qrels, Sequence) and not isinstance(qrels, str | bytes):
        depth = _nesting(qrels)
        if depth == 3:  # [[["a", "b"], ["c"]], ...]: AutoRAG groups per query
            return Qrels.from_groups(qrels)
        if depth > 3:
            raise InputError("ground truth lists are nested too deeply: expected ids per query "
                             "([['d1', 'd2'], ...]) or groups of ids per query ([[['a', 'b'], ['c']], ...])")
        return Qrels.from_lists(qrels)
    raise InputError(f"cannot use a {type(qrels).__name__} as ground truth")


def _nesting(value: Any) -> int:
    """How deep lists go, judged on the first non-empty entry at each level (ids count as depth 0)."""
    depth = 0
    while isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes):
        depth += 1
        value = next((v for v in value if not (isinstance(v, Sequence) and len(v) == 0)), None)
        if value is None:
            break
    return depth


def as_run(run: Any) -> Run:
    """A run from any accepted input: Run, nested dict of scores, dict of ranked lists, DataFrame
    (pandas or polars), a file path, or aligned ranked lists."""
    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        first = next(iter(run.values()), {})
        return Run.from_dict(run) if isinstance(first, Mapping) else Run.from_ranked(run)
    if isinstance(run, pd.DataFrame):
        return Run.from_pandas(run)
    if _is_polars(run):
        return Run.from_polars(run)
    if isinstance(run, str) or hasattr(run, "__fspath__"):
        from ragrade.io import read_run

        return read_run(run)
    if isinstance(run, Sequence):
        return Run.from_lists(run)
    raise InputError(f"cannot use a {type(run).__name__} as a run")


@dataclass
class Summary:
    """What happened to the queries: counts and examples for every policy that applied."""

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

    def to_dict(self) -> dict[str, Any]:
        return {
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
        }


class Result:
    """The outcome of one evaluation: per-query values, means with the number of queries counted,
    and a :class:`Summary` of what the policies did.

    ``per_query`` is a DataFrame with one row per query (index ``query``) and one column per metric,
    named as the metric was written. NaN marks a query the metric does not count (e.g. no relevant
    judgments under the default policy).
    """

    def __init__(self, per_query: pd.DataFrame, metrics: dict[str, Metric], summary: Summary,
                 policies: Policies, run_name: str | None = None, nan_means: set[str] | None = None) -> None:
        self.per_query = per_query
        self.metrics = metrics
        self.summary = summary
        self.policies = policies
        self.run_name = run_name
        self._nan_means = nan_means or set()

    @property
    def counts(self) -> dict[str, int]:
        """Number of queries counted in each metric's mean."""
        return {c: int(self.per_query[c].notna().sum()) for c in self.per_query.columns}

    @property
    def means(self) -> dict[str, float]:
        out = {}
        for c in self.per_query.columns:
            col = self.per_query[c]
            out[c] = math.nan if (c in self._nan_means or col.notna().sum() == 0) else float(col.mean())
        return out

    @property
    def n_queries(self) -> int:
        """Queries counted by at least one metric."""
        return int(self.per_query.notna().any(axis=1).sum())

    def __getitem__(self, label: str) -> float:
        return self.means[label]

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"metrics": self.means, "queries": self.n_queries}
        if per_query:
            out["per_query"] = {
                str(q): {c: (None if pd.isna(v) else float(v)) for c, v in row.items()}
                for q, row in self.per_query.to_dict(orient="index").items()
            }
        if self.run_name:
            out["run"] = self.run_name
        return out

    def to_json(self, per_query: bool = False, indent: int | None = 2) -> str:
        def clean(o: Any) -> Any:
            if isinstance(o, float) and math.isnan(o):
                return None
            if isinstance(o, dict):
                return {k: clean(v) for k, v in o.items()}
            return o

        return json.dumps(clean(self.to_dict(per_query=per_query)), indent=indent)

    def to_markdown(self, per_query: bool = False, digits: int = 4) -> str:
        counts = self.counts
        lines = ["| metric | mean | queries |", "|---|---:|---:|"]
        for label, mean in self.means.items():
            lines.append(f"| {label} | {_fmt(mean, digits)} | {counts[label]} |")
        if per_query:
            cols = list(self.per_query.columns)
            lines += ["", "| query | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
            for q, row in self.per_query.iterrows():
                lines.append(f"| {q} | " + " | ".join(_fmt(v, digits) for v in row.tolist()) + " |")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={_fmt(v, 4)}" for k, v in self.means.items())
        return f"Result({inner}; {self.n_queries} queries)"


def _fmt(v: float, digits: int) -> str:
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


class Evaluator:
    """Scores many runs against the same ground truth without re-ingesting it.

    >>> ev = Evaluator({"q1": {"d1": 1, "d2": 1}}, ["P@2", "ndcg@2"])
    >>> ev.evaluate({"q1": {"d1": 0.9, "d3": 0.5}}).means
    {'P@2': 0.5, 'ndcg@2': 0.6131471927654584}
    """

    def __init__(self, qrels: Any, metrics: MetricsArg, **policies: Any) -> None:
        self.qrels = as_qrels(qrels)
        self.labels = _labels(metrics)
        self.policies = Policies().update(**policies)
        q = self.qrels
        self._qids_list = q.query_ids.tolist()
        self._q_lookup_cache: dict[str, int] | None = None
        seg = np.repeat(np.arange(q.n_queries, dtype=np.int64), np.diff(q._offsets))
        self._row_q = seg
        # Unit table: one entry per unit with the query it belongs to and its grade (max of its rows).
        if q.has_groups:
            ucodes, uniq = pd.factorize(q.unit_ids())
            self._row_unit = ucodes.astype(np.int64)
            self._unit_q = np.zeros(len(uniq), dtype=np.int64)
            self._unit_q[self._row_unit] = seg
            self._unit_grade = np.full(len(uniq), -np.inf)
            np.maximum.at(self._unit_grade, self._row_unit, q.grades)
        else:
            self._row_unit = np.arange(q.n_rows, dtype=np.int64)
            self._unit_q = seg
            self._unit_grade = q.grades
        # Rows that can earn credit (grade > 0): the only ones the dict join needs to look up.
        self._pos_rows = np.flatnonzero(q.grades > 0)
        self._col: tuple[pd.Index, np.ndarray, np.ndarray, int] | None = None
        self._gold: tuple[Any, np.ndarray] | None = None

    @property
    def _q_lookup(self) -> dict[str, int]:
        """Query id -> row of the ground truth (built on first use)."""
        if self._q_lookup_cache is None:
            self._q_lookup_cache = dict(zip(self._qids_list, range(len(self._qids_list)), strict=True))
        return self._q_lookup_cache

    def query_map(self, run_qids: list[str]) -> np.ndarray:
        """Row of the ground truth for each run query id (-1 if absent). When the run lists the same
        queries in the same order (the usual case), no lookup is made."""
        if run_qids == self._qids_list:
            return np.arange(len(run_qids), dtype=np.int64)
        return np.fromiter(map(self._q_lookup.get, run_qids, repeat(-1)), dtype=np.int64, count=len(run_qids))

    def _columnar(self) -> tuple[pd.Index, Any, pd.Index, np.ndarray, int]:
        """Lookup structures for the columnar join, built on first use, over the *positive* judgments
        only (the only ones that can earn credit): their document ids as an index (and as an Arrow
        array, for Arrow-backed runs), and their (query, doc) keys as a hash index."""
        if self._col is None:
            import pyarrow as pa

            rows = self._pos_rows
            codes, vocab = pd.factorize(self.qrels._docs_at(rows))
            vocab = np.asarray(vocab, dtype=object)
            nv = len(vocab) + 1
            keys = self._row_q[rows] * nv + codes.astype(np.int64)
            self._col = (pd.Index(vocab, dtype=object), pa.array(vocab, type=pa.string()),
                         pd.Index(keys), rows, nv)
        return self._col

    def _judged_rows(self, run: Run, qmap: np.ndarray, offsets: np.ndarray):
        """``(storage rows, qrels query, run query, qrels row)`` of the retrieved items that are positive
        judgments of their query."""
        if run._raw_is_arrow:
            from ragrade._ingest import match_segments

            gold, group_off = self._gold_strings()
            hit = match_segments(run._raw, offsets, qmap, group_off, gold)
            if hit is not None:  # the C scan: each query's items against its few positive judgments
                cand = np.flatnonzero(hit >= 0)
                seg_c = np.searchsorted(offsets, cand, side="right") - 1
                return cand, qmap[seg_c], seg_c, self._pos_rows[hit[cand]]
        _, _, key_index, key_rows, nv = self._columnar()
        qdoc = self._map_docs(run)
        cand = np.flatnonzero(qdoc >= 0)
        seg_c = np.searchsorted(offsets, cand, side="right") - 1
        qq = qmap[seg_c]
        ok = qq >= 0
        cand, qq, seg_c = cand[ok], qq[ok], seg_c[ok]
        loc = key_index.get_indexer(qq * nv + qdoc[cand])
        hit = loc >= 0
        return cand[hit], qq[hit], seg_c[hit], key_rows[loc[hit]]

    def _gold_strings(self):
        """The positive judgments' ids as one Arrow array grouped by query, with per-query offsets."""
        if self._gold is None:
            import pyarrow as pa

            rows = self._pos_rows
            group_off = np.searchsorted(self._row_q[rows], np.arange(self.qrels.n_queries + 1))
            raw = self.qrels._raw
            if self.qrels._raw_is_arrow:  # qrels read from a file: no Python objects
                gold = raw.take(pa.array(rows))
            else:
                gold = pa.array(self.qrels._docs_at(rows), type=pa.large_string())
            self._gold = (gold, group_off)
        return self._gold

    def _map_docs(self, run: Run) -> np.ndarray:
        """Per storage row of ``run``: index of its document among the positively judged ids, or -1."""
        vocab_index, vocab_arrow, _, _, _ = self._columnar()
        if run._raw_is_arrow:

            return _parallel_index_in(run._raw, vocab_arrow)
        if run._codes is None and run._raw is not None:
            return vocab_index.get_indexer(run._raw).astype(np.int64)
        dmap = vocab_index.get_indexer(run._doc_vocab).astype(np.int64)
        return dmap[run._doc_codes]

    # ------------------------------------------------------------------------------------------------
    def evaluate(self, run: Any, name: str | None = None) -> Result:
        """Score one run (a :class:`Run`, nested dicts, ranked lists, a DataFrame or a path)."""
        pol = self.policies
        summary = Summary(qrels_queries=self.qrels.n_queries, run_queries=0, evaluated=0)
        notes: list[str] = []
        joined = None
        if isinstance(run, dict) and pol.ties != "input" and pol.identical_ids == "keep":
            from ragrade._dictjoin import join_dict_run

            joined = join_dict_run(self, run, summary, notes)
        if joined is None:
            run = as_run(run)
            joined = self._join_run(run, summary, notes)
        return self._finish(joined, summary, notes, name)

    # -- stage 1: queries on each side --------------------------------------------------------------
    def _align(self, run_qids: np.ndarray, counts: np.ndarray, summary: Summary, notes: list[str],
               qmap: np.ndarray | None = None):
        pol = self.policies
        qrels = self.qrels
        nq = qrels.n_queries
        summary.run_queries = len(run_qids)
        if qmap is None:
            qmap = self.query_map(run_qids.tolist())
        only_run = np.flatnonzero(qmap < 0)
        if len(only_run):
            summary.only_in_run = run_qids[only_run].tolist()
            if pol.missing_qrels == "error":
                raise PolicyError(
                    f"{len(only_run)} run queries have no ground truth (e.g. {summary.only_in_run[0]!r}); "
                    "set missing_qrels='ignore' to leave them out"
                )
            notes.append(f"{len(only_run)} run queries have no ground truth and were ignored "
                         f"(e.g. {_examples(summary.only_in_run)})")
        in_run = np.zeros(nq, dtype=bool)
        in_run[qmap[qmap >= 0]] = True
        missing = np.flatnonzero(~in_run)
        if len(missing):
            summary.missing_from_run = qrels.query_ids[missing].tolist()
            if pol.missing_run == "error":
                raise PolicyError(
                    f"{len(missing)} ground-truth queries are missing from the run "
                    f"(e.g. {summary.missing_from_run[0]!r})"
                )
            verb = "score 0" if pol.missing_run == "zero" else "were dropped"
            notes.append(f"{len(missing)} ground-truth queries are missing from the run and {verb} "
                         f"(e.g. {_examples(summary.missing_from_run)})")
        mapped = qmap >= 0
        n_ret = np.zeros(nq, dtype=np.int64)
        n_ret[qmap[mapped]] = counts[mapped]
        empty = mapped & (counts == 0)
        if empty.any():
            summary.empty_lists = run_qids[empty].tolist()
            if pol.empty_run == "error":
                raise PolicyError(f"query {summary.empty_lists[0]!r} has an empty retrieved list")
        return qmap, in_run, n_ret

    # -- stage 2 (columnar): judged rows of a Run ----------------------------------------------------
    def _join_run(self, run: Run, summary: Summary, notes: list[str]) -> _Joined:
        pol = self.policies
        offsets = run._offsets
        n = run.n_rows
        keep = None  # rows removed by policies (storage order)
        if pol.identical_ids == "drop" and n:
            same = run._per_row_docs() == run._per_row_queries()
            if same.any():
                keep = ~same
                summary.identical_ids_dropped = int(same.sum())
        # A full duplicate scan hashes every retrieved id. Under the default policy only duplicates of
        # judged items change a value, so runs read lazily from files are checked on those alone.
        judged_dups_only = pol.duplicates == "credit_once" and run._has_duplicates is None and run._raw_is_arrow
        dups = run.duplicate_mask() if n and not judged_dups_only else np.zeros(0, dtype=bool)
        if dups.any():
            known = np.fromiter(map(self._q_lookup.__contains__, run.query_ids.tolist()), dtype=bool,
                                count=run.n_queries)
            dups = dups & np.repeat(known, np.diff(offsets))  # queries without ground truth are ignored
        if dups.any():
            summary.duplicate_items = int(dups.sum())
            if pol.duplicates == "error":
                i = int(np.flatnonzero(dups)[0])
                qi = int(np.searchsorted(offsets, i, side="right") - 1)
                raise PolicyError(f"duplicate item {run._docs_at(np.array([i]))[0]!r} in the ranking of "
                                  f"query {run.query_ids[qi]!r} ({summary.duplicate_items} duplicates in all)")
            if pol.duplicates == "keep_last":
                seg = np.repeat(np.arange(run.n_queries), np.diff(offsets))
                key = seg.astype(np.int64) * (len(run._doc_vocab) + 1) + run._doc_codes
                later = pd.Series(key).duplicated(keep="last").to_numpy()
                keep = ~later if keep is None else keep & ~later
        if keep is not None:
            run = _subset_rows(run, keep)
            offsets, n = run._offsets, run.n_rows
        counts = np.diff(offsets)
        ranked, moved = run._ranking_sparse(pol.ties)
        identity = ranked is None
        perm = ranked
        dup_ranked = None
        shift = None
        if pol.duplicates == "drop" and run.duplicate_mask().any():
            seg_sorted = np.repeat(np.arange(run.n_queries, dtype=np.int64), counts)
            codes = run._doc_codes if identity else run._doc_codes[perm]
            dup_ranked = first_duplicate(seg_sorted, codes, len(run._doc_vocab))
            cum_before = np.concatenate(([0], np.cumsum(dup_ranked)))
            shift = cum_before[:-1] - np.repeat(cum_before[offsets[:-1]], counts)  # dups earlier in query
            counts = counts - np.bincount(seg_sorted[dup_ranked], minlength=run.n_queries)
        qmap, in_run, n_ret = self._align(run.query_ids, counts, summary, notes)

        # Storage rows whose document is a positive judgment of their query.
        cand, qq, seg_c, qrow = self._judged_rows(run, qmap, offsets)
        slot = cand if identity else inverse_at(perm, moved, cand)
        if dup_ranked is not None:
            keep_c = ~dup_ranked[slot]
            slot, qq, seg_c, qrow = slot[keep_c], qq[keep_c], seg_c[keep_c], qrow[keep_c]
        pos = slot - offsets[seg_c]
        if shift is not None:
            pos = pos - shift[slot]
        if judged_dups_only and len(qrow):
            summary.duplicate_items = int(pd.Series(qrow).duplicated().sum())
        if summary.duplicate_items:
            what = "credited once" if pol.duplicates == "credit_once" else pol.duplicates
            scope = " (judged items; duplicates of unjudged items change no value)" if judged_dups_only else ""
            notes.append(f"{summary.duplicate_items} duplicate items in rankings{scope} ({what})")
        # Only tied rows moved: the scores in rank order are the stored ones.
        in_place = identity or moved is not None
        sorted_scores = None if run.scores is None else (run.scores if in_place else run.scores[perm])
        return _Joined(qq=qq, pos=pos, qrow=qrow, n_ret=n_ret, in_run=in_run,
                       sorted_scores=sorted_scores, offsets=offsets, run_name=run.name,
                       evaluated_segments=qmap >= 0)

    # -- stage 3: credit, metrics and policies -------------------------------------------------------
    def _finish(self, j: _Joined, summary: Summary, notes: list[str], name: str | None) -> Result:
        pol = self.policies
        qrels = self.qrels
        nq = qrels.n_queries
        grade = qrels.grades[j.qrow]
        unit = self._row_unit[j.qrow]
        # Credit each unit once, at its best rank: sort by (qrels query, position).
        order = _order_by_query_and_position(j.qq, j.pos)
        if order is None:
            qq, pos = j.qq, j.pos
        else:
            qq, pos, grade, unit = j.qq[order], j.pos[order], grade[order], unit[order]
        first = ~pd.Series(unit).duplicated(keep="first").to_numpy() if len(unit) else np.zeros(0, dtype=bool)
        positive = first & (grade > 0)
        judged = K.Judged(nq=nq, n_ret=j.n_ret, q=qq[positive], pos=pos[positive], grade=grade[positive],
                          unit_q=self._unit_q, unit_grade=self._unit_grade)
        counted_rows = np.ones(nq, dtype=bool)
        if pol.missing_run == "drop":
            counted_rows &= j.in_run
        data: dict[str, np.ndarray] = {}
        nan_means: set[str] = set()
        cutoffs: set[int] = set()
        for label, m in self.labels:
            values = K.compute(m, judged)
            undefined = ~K.defined_mask(m, judged) & counted_rows
            if undefined.any():
                summary.no_relevant[label] = qrels.query_ids[undefined].tolist()
                if pol.no_relevant == "error":
                    raise PolicyError(f"{label}: {int(undefined.sum())} queries have no relevant judgments "
                                      f"(e.g. {summary.no_relevant[label][0]!r})")
                if pol.no_relevant == "zero":
                    values = np.where(undefined, 0.0, values)
                else:
                    values = np.where(undefined, np.nan, values)
                    if pol.no_relevant == "nan":
                        nan_means.add(label)
            data[label] = values
            if m.k is not None:
                cutoffs.add(m.k)
        if any(summary.no_relevant.values()):
            worst = max(summary.no_relevant.values(), key=len)
            action = {"skip": "left out of the means", "zero": "scored 0", "nan": "NaN (means are NaN)"}
            notes.append(f"{len(worst)} queries have no relevant judgments and were "
                         f"{action[pol.no_relevant]} (e.g. {_examples(worst)})")
        frame = pd.DataFrame(data, index=pd.Index(qrels.query_ids, name="query", dtype=object))
        if pol.missing_run == "drop":
            frame = frame[counted_rows]
        summary.evaluated = len(frame)
        if j.sorted_scores is not None:
            for k in sorted(cutoffs):
                t = ties_straddling(j.sorted_scores, j.offsets, k, j.evaluated_segments)
                if t:
                    summary.ties_at_cutoff[k] = t
        if notes:
            warnings.warn("; ".join(notes), RagradeWarning, stacklevel=_caller_stacklevel())
        return Result(frame, dict(self.labels), summary, pol, run_name=name or j.run_name, nan_means=nan_means)


@dataclass
class _Joined:
    """The judged rows of one run, ready for crediting: one entry per (retrieved row, judgment) pair."""

    qq: np.ndarray  # qrels query index
    pos: np.ndarray  # 0-based rank in the run's list
    qrow: np.ndarray  # row of the qrels table
    n_ret: np.ndarray  # list length per qrels query
    in_run: np.ndarray  # qrels query has an entry in the run
    sorted_scores: np.ndarray | None  # run scores in rank order (for tie reporting)
    offsets: np.ndarray  # run query offsets matching sorted_scores
    run_name: str | None = None
    evaluated_segments: np.ndarray | None = None  # run queries that have ground truth (bool per query)


def _order_by_query_and_position(qq: np.ndarray, pos: np.ndarray) -> np.ndarray | None:
    """Stable order of the rows by (query, position); None when they are already in it (the usual case:
    a run read in rank order). Nearly sorted input (only ties reordered) sorts in about linear time
    (one combined integer key, timsort)."""
    if len(qq) < 2:
        return None
    up = qq[1:] > qq[:-1]
    same = qq[1:] == qq[:-1]
    if np.all(up | (same & (pos[1:] >= pos[:-1]))):
        return None
    span = int(pos.max()) + 1 if len(pos) else 1
    if int(qq.max()) < (1 << 62) // max(span, 1):
        return np.argsort(qq.astype(np.int64) * span + pos, kind="stable")
    return np.lexsort((pos, qq))


def _caller_stacklevel() -> int:
    """Stack level of the first frame outside the ragrade package, so warnings point at user code."""
    import os
    import sys

    pkg = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg + os.sep):
        frame = frame.f_back
        level += 1
    return level


def _parallel_index_in(values: Any, value_set: Any) -> np.ndarray:
    """``pyarrow.compute.index_in`` (-1 where absent) over slices in threads: Arrow releases the GIL,
    so this uses every core for the one step that hashes every retrieved id."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.compute as pc

    n = len(values)
    workers = min(os.cpu_count() or 1, 8, max(1, n // 1_000_000))

    def part(bounds: tuple[int, int]) -> np.ndarray:
        a, b = bounds
        found = pc.index_in(values.slice(a, b - a), value_set=value_set)
        if hasattr(found, "combine_chunks"):
            found = found.combine_chunks()
        return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)

    cuts = np.linspace(0, n, workers + 1).astype(np.int64)
    bounds = list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))
    if workers == 1:
        return part((0, n))
    with ThreadPoolExecutor(workers) as pool:
        return np.concatenate(list(pool.map(part, bounds)))


def _examples(items: list[str], n: int = 3) -> str:
    shown = ", ".join(repr(x) for x in items[:n])
    return shown + (", ..." if len(items) > n else "")


def _subset_rows(run: Run, keep: np.ndarray) -> Run:
    seg = np.repeat(np.arange(run.n_queries), np.diff(run._offsets))
    new_counts = np.bincount(seg[keep], minlength=run.n_queries)
    off = np.zeros(run.n_queries + 1, dtype=np.int64)
    np.cumsum(new_counts, out=off[1:])
    scores = None if run.scores is None else run.scores[keep]
    return Run(run.query_ids.copy(), off, run._doc_codes[keep], run._doc_vocab.copy(), scores, name=run.name)


def evaluate(qrels: Any, run: Any, metrics: MetricsArg, *, profile: Any = None, matcher: Any = None,
             **policies: Any) -> Result:
    """Score ``run`` against ``qrels`` with ``metrics`` under the default convention.

    ``profile`` (e.g. ``"autorag"``, ``"ragas"``, ``"pytrec_eval"``) computes the metrics under a peer's
    conventions and ``matcher`` (e.g. ``"rouge_l"``) makes the items texts; both are handled by
    :mod:`ragrade.rag` (see ``docs/profiles.md`` and ``docs/matching.md``).

    ``qrels`` and ``run`` may be :class:`Qrels`/:class:`Run` objects, nested dicts
    (``{query: {doc: grade}}`` and ``{query: {doc: score}}``), ranked lists (``{query: [docs]}``),
    DataFrames or file paths. ``metrics`` is a metric string, a list of them, or :class:`Metric` objects.
    Keyword arguments set the policies of :class:`ragrade.policies.Policies`.

    >>> r = evaluate({"q1": {"t1": 1, "t2": 1, "t3": 1}},
    ...              {"q1": {"t1": 4.0, "p1": 3.0, "t2": 2.0, "p3": 1.0}}, ["ndcg@4", "ap@4", "P@10", "rr"])
    >>> {k: round(v, 10) for k, v in r.means.items()}
    {'ndcg@4': 0.703918089, 'ap@4': 0.5555555556, 'P@10': 0.2, 'rr': 1.0}
    """
    if profile is not None or matcher is not None:
        from ragrade import rag

        if profile is None or (str(profile).lower() == "default" and matcher is not None):
            return rag.evaluate_rag(qrels, run, metrics, matcher=matcher, **policies)
        return rag.evaluate_profile(qrels, run, metrics, profile, matcher=matcher, **policies)
    if _is_path(qrels) and _is_path(run):
        qrels, run = read_both(qrels, run)
    return Evaluator(qrels, metrics, **policies).evaluate(run)


def _is_path(value: Any) -> bool:
    return isinstance(value, str) or hasattr(value, "__fspath__")


def read_both(qrels_path: Any, run_path: Any, **options: Any) -> tuple[Qrels, Run]:
    """Read a ground-truth file and a run file at the same time (Arrow parses without holding the GIL,
    so the two reads overlap on a multi-core machine). Errors are raised as by the readers."""
    from concurrent.futures import ThreadPoolExecutor

    from ragrade.io import read_qrels, read_run

    qrels_opts = {k[6:]: v for k, v in options.items() if k.startswith("qrels_")}
    run_opts = {k[4:]: v for k, v in options.items() if k.startswith("run_")}
    with ThreadPoolExecutor(2) as pool:
        q = pool.submit(read_qrels, qrels_path, **qrels_opts)
        r = pool.submit(read_run, run_path, **run_opts)
        return q.result(), r.result()
