"""The scoring port: rankings given as judged hits, scored against ground truth indexed once.

A caller that scores many rankings against one ground truth (fusion's search over weights, the pytrec_eval
drop-in, a loop over configurations) does not need a run object per ranking: it finds once which retrieved
items carry a judgment (:meth:`Scorer.locate`, or its own join against :attr:`Scorer.truth`), and for each
ranking hands the port three arrays:

* ``judgments``: the ground-truth row (a row of :attr:`Scorer.truth`) of every retrieved item that has one;
* ``ranks``: that item's 0-based rank in its query's ranking;
* ``counts``: the length of each ranking, for the queries ``queries`` (default: every query of the truth).

:meth:`Scorer.result` gives the :class:`~ragrade.engine.result.Result` :meth:`ragrade.Evaluator.evaluate`
would give for the same rankings; :meth:`Scorer.values` only the per-query values (one array per metric
label, over every query of the truth), computing what depends on the ground truth alone (R, the ideal DCG,
where each metric is defined) once for all calls. :class:`ragrade.Evaluator` holds one
(:attr:`ragrade.Evaluator.scorer`, :meth:`ragrade.Evaluator.score`); :meth:`Scorer.from_rows` makes one from
plain arrays. docs/python-api.md ("The scoring port") describes it.
"""

from __future__ import annotations

import collections
import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from ragrade.engine.credit import (
    condensed,
    defined_mask,
    finish,
    finish_columns,
    metric_param,
    order_by_query_and_position,
)
from ragrade.engine.join import Joined, TruthIndex, align, judged_rows
from ragrade.errors import InputError, RagradeWarning
from ragrade.kernels.common import pick
from ragrade.kernels.metrics import Judged

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.data import Qrels, Run
    from ragrade.engine.result import Result
    from ragrade.metrics.parser import Metric
    from ragrade.policies import Policies

__all__ = ["Scorer", "TruthView"]

#: Keys of a :class:`~ragrade.kernels.metrics.Judged` table's memo that depend on the ground truth alone:
#: carried from one call of :meth:`Scorer.values` to the next.
TRUTH_ONLY = frozenset({"R", "N", "ugain", "glevels", "ideal", "idcg", "ilevels", "iprefix", "icost", "istarts",
                        "irndcg"})


@dataclass(frozen=True, eq=False)
class TruthView:
    """The indexed ground truth as a caller joins against it (read-only arrays).

    Row ``r`` is one judgment: query ``query_ids[row_query[r]]``, document ``docs([r])[0]``, grade
    ``grades[r]``; the rows of query ``i`` are ``offsets[i]:offsets[i + 1]``."""

    query_ids: np.ndarray  # object[nq]
    offsets: np.ndarray  # int64[nq + 1]
    row_query: np.ndarray  # int64[rows]
    grades: np.ndarray  # float64[rows]
    qrels: Any  # ragrade.data.Qrels, or None (a scorer made from rows keeps its ids in ``row_docs``)
    row_docs: Any = None

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def docs(self, rows: np.ndarray) -> np.ndarray:
        """The document ids of ``rows`` (an object array of str)."""
        if self.qrels is not None:
            return np.asarray(self.qrels.docs_at(np.asarray(rows, dtype=np.int64)), dtype=object)
        return np.asarray(self.row_docs, dtype=object)[np.asarray(rows, dtype=np.int64)]

    @functools.cached_property
    def lookup(self) -> dict[str, int]:
        """``{query id: its place}`` (made on first use)."""
        return dict(zip(self.query_ids.tolist(), range(self.n_queries), strict=True))

    def positions(self, queries: Sequence[str] | np.ndarray) -> np.ndarray:
        """The place of each query id among :attr:`query_ids` (-1 for a query the truth does not have)."""
        lookup = self.lookup
        ids = queries.tolist() if isinstance(queries, np.ndarray) else list(queries)
        return np.fromiter(map(lookup.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))


class Scorer:
    """Scores rankings given as judged hits (``judgments``, ``ranks``, ``counts``) for fixed metric labels and
    policies against one indexed ground truth. See the module docstring; made by :class:`ragrade.Evaluator`
    (:attr:`~ragrade.Evaluator.scorer`) or :meth:`from_rows`."""

    def __init__(self, index: TruthIndex | None, labels: list[tuple[str, Metric]], policies: Policies,
                 hole_cutoffs: tuple[int, ...] = (), *, rows: _Rows | None = None) -> None:
        self.labels = list(labels)
        self.policies = policies
        self.hole_cutoffs = hole_cutoffs
        self._index = index
        self._rows = rows if rows is not None else _Rows.of_index(index)
        pol = policies
        #: Whether :meth:`values` runs the kernels itself (the policies under which that equals the values of
        #: :meth:`result`: zero for an undefined query, every truth query reported, no -M cut, one unit a row).
        self.direct = (pol.no_relevant == "zero" and pol.missing_run == "zero" and pol.max_docs is None
                       and pol.unjudged in ("nonrelevant", "condensed") and not self._rows.has_groups)
        #: What the kernels computed from the ground truth alone (keys of :data:`TRUTH_ONLY`), kept across calls.
        self.truth_memo: dict[Any, Any] = {}
        self._defined: dict[Any, tuple[np.ndarray, bool]] = {}

    @classmethod
    def from_rows(cls, query_ids: Sequence[str], counts: np.ndarray, docs: Sequence[str], grades: np.ndarray,
                  labels: list[tuple[str, Metric]], policies: Policies) -> Scorer:
        """A scorer over judgments given query after query: ``counts[i]`` rows of query ``query_ids[i]``,
        with the ids ``docs`` and the grades ``grades`` (one unit per row, no query without a row). Nothing
        is hashed or copied until :meth:`result` needs the full index."""
        counts = np.asarray(counts, dtype=np.int64)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        qids = np.fromiter(query_ids, dtype=object, count=len(counts))
        grades = np.asarray(grades, dtype=np.float64)
        if len(grades) != offsets[-1] or len(docs) != offsets[-1]:
            raise InputError(f"Scorer.from_rows: {offsets[-1]} rows counted, {len(docs)} ids and {len(grades)} "
                             "grades given")
        row_q = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        view = TruthView(qids, offsets, row_q, grades, None, docs)
        return cls(None, labels, policies, rows=_Rows(view, np.arange(len(grades), dtype=np.int64), row_q, grades,
                                                      False))

    # -- the truth ------------------------------------------------------------------------------------------
    @property
    def truth(self) -> TruthView:
        """The indexed ground truth (:class:`TruthView`): the rows ``judgments`` point at."""
        return self._rows.view

    @property
    def index(self) -> TruthIndex:
        """The engine's index of the truth (made on first use for a scorer made from rows)."""
        if self._index is None:
            from ragrade.data import Qrels

            v = self.truth
            qrels = Qrels(v.query_ids, v.offsets, None, None, v.grades,
                          raw_docs=np.fromiter(v.row_docs, dtype=object, count=len(v.grades)))
            self._index = TruthIndex(qrels)
        return self._index

    def locate(self, run: Run) -> tuple[np.ndarray, np.ndarray]:
        """``(rows of run, truth rows)``: every retrieved item of ``run`` (a :class:`~ragrade.data.Run`, in
        its storage order) that the truth judges for its query, and that judgment's row."""
        index = self.index
        qmap = index.query_map(run.query_ids.tolist())
        cand, _, _, qrow = judged_rows(index, run, qmap, run.offsets)
        return cand, qrow

    # -- scoring --------------------------------------------------------------------------------------------
    def evaluate(self, run: Any, name: str | None = None) -> Result:
        """The :class:`~ragrade.engine.result.Result` of one run (a :class:`~ragrade.data.Run`, nested dicts or
        anything :func:`ragrade.evaluate` takes as a run): joined to the truth and credited here, as
        :meth:`ragrade.Evaluator.evaluate` does by calling this (so every evaluation of a run in memory, each piece
        out of core and each Spark partition included, goes through the port)."""
        from ragrade.engine.inputs import as_run
        from ragrade.engine.join import join_dict, join_run

        index = self.index
        joined = join_dict(index, run, self.policies) if isinstance(run, dict) else None
        if joined is None:
            joined = join_run(index, as_run(run), self.policies)
        return finish(index, self.labels, self.policies, joined, name, self.hole_cutoffs)

    def result(self, judgments: np.ndarray, ranks: np.ndarray, counts: np.ndarray,
               queries: Sequence[str] | np.ndarray | None = None, *, positions: np.ndarray | None = None,
               name: str | None = None, nonfinite_scores: int = 0, notes: bool = True) -> Result:
        """The :class:`~ragrade.engine.result.Result` of the rankings (see the module docstring):
        ``queries`` the ranked queries' ids, aligned with ``counts`` (default: the truth's queries, in order),
        ``positions`` their places in the truth when the caller has them (:meth:`TruthView.positions`);
        ``notes=False`` keeps the policy notes quiet (no :class:`~ragrade.errors.PolicyNote` warning)."""
        index = self.index
        qids, counts, qmap = self._queries(queries, counts, positions)
        judgments = np.asarray(judgments, dtype=np.int64)
        alignment = align(index, qids, counts, self.policies, qmap=qmap)
        j = Joined(qq=index.row_q[judgments], pos=np.asarray(ranks, dtype=np.int64), qrow=judgments,
                   alignment=alignment, sorted_scores=None, offsets=np.zeros(1, dtype=np.int64), run_name=name,
                   unique_docs=True, nonfinite_scores=nonfinite_scores)
        if notes:
            return finish(index, self.labels, self.policies, j, name, self.hole_cutoffs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagradeWarning)
            return finish(index, self.labels, self.policies, j, name, self.hole_cutoffs)

    def values(self, judgments: np.ndarray, ranks: np.ndarray, counts: np.ndarray,
               queries: Sequence[str] | np.ndarray | None = None, *,
               positions: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Each label's value on every query of the truth, in the truth's order (a query not ranked has an
        empty ranking): the per-query values of :meth:`result`, without its summary, hole rate and notes.
        Under the policies of :attr:`direct` the kernels run here, sharing across calls what depends on the
        ground truth alone; else through :meth:`result`."""
        qids, counts, qmap = self._queries(queries, counts, positions)
        nq = self.truth.n_queries
        if not self.direct:
            return self._values_of_result(judgments, ranks, counts, qids, qmap)
        n_ret = np.zeros(nq, dtype=np.int64)
        mapped = qmap >= 0
        n_ret[qmap[mapped]] = counts[mapped]
        judgments = np.asarray(judgments, dtype=np.int64)
        ranks = np.asarray(ranks, dtype=np.int64)
        order = order_by_query_and_position(self._rows.row_q[judgments], ranks)
        if order is not None:
            judgments, ranks = judgments[order], ranks[order]
        return self._kernels(judgments, ranks, n_ret)

    def _queries(self, queries: Sequence[str] | np.ndarray | None, counts: np.ndarray,
                 positions: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        view = self.truth
        counts = np.asarray(counts, dtype=np.int64)
        if queries is None:
            qids = view.query_ids
            qmap = np.arange(view.n_queries, dtype=np.int64) if positions is None else positions
        else:
            qids = queries if isinstance(queries, np.ndarray) else np.fromiter(queries, dtype=object,
                                                                                count=len(queries))
            qmap = view.positions(qids) if positions is None else np.asarray(positions, dtype=np.int64)
        if not len(qids) == len(counts) == len(qmap):
            raise InputError(f"the scoring port: {len(qids)} queries, {len(counts)} counts and {len(qmap)} "
                             "positions given: one of each per ranked query")
        return qids, counts, qmap

    def _values_of_result(self, judgments: np.ndarray, ranks: np.ndarray, counts: np.ndarray, qids: np.ndarray,
                          qmap: np.ndarray) -> dict[str, np.ndarray]:
        index = self.index
        alignment = align(index, qids, counts, self.policies, qmap=qmap)
        judgments = np.asarray(judgments, dtype=np.int64)
        j = Joined(qq=index.row_q[judgments], pos=np.asarray(ranks, dtype=np.int64), qrow=judgments,
                   alignment=alignment, sorted_scores=None, offsets=np.zeros(1, dtype=np.int64), unique_docs=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagradeWarning)
            data, counted = finish_columns(index, self.labels, self.policies, j)
        if counted.all():
            return data
        return {label: np.where(counted, col, np.nan) for label, col in data.items()}  # not reported: NaN

    def _kernels(self, rows: np.ndarray, pos: np.ndarray, n_ret: np.ndarray) -> dict[str, np.ndarray]:
        """The engine's kernels and definedness rule (``no_relevant="zero"``) on every truth query. Work
        shared by several labels is done once: the cutoff families' hit counts in one pass, a kernel asked
        twice with the same parameters (``map`` and ``gm_map``) run once, one definedness mask per rule."""
        r = self._rows
        nq = len(n_ret)
        qq, grade, unit = r.row_q[rows], r.grades[rows], r.row_unit[rows]
        pq, ppos, pgrade, punit = pick(grade > 0, qq, pos, grade, unit)
        judged = Judged(nq=nq, n_ret=n_ret, q=pq, pos=ppos, grade=pgrade, unit_q=r.unit_q,
                        unit_grade=r.unit_grade, unit=punit, jq=qq, jpos=pos, jgrade=grade,
                        jfirst=np.ones(len(rows), dtype=bool), junit=unit, num_docs=self.policies.num_docs)
        judged.memo.update(self.truth_memo)
        views = {"nonrelevant": judged}

        def view(kind: str) -> Judged:
            if kind not in views:
                views[kind] = condensed(judged)
                views[kind].memo.update(self.truth_memo)
            return views[kind]

        steps = self.steps
        for kind, rel, ks in steps.hit_cutoffs:
            view(kind).count_hits_at(rel, ks)
        out: dict[str, np.ndarray] = {}
        done: dict[Any, np.ndarray] = {}
        for (label, m), kernel, kind, memo, rule in zip(self.labels, steps.kernels, steps.kinds, steps.memo,
                                                        steps.rules, strict=True):
            if memo is not None and memo in done:
                out[label] = done[memo]
                continue
            values = kernel(m, view(kind))
            if rule is None:  # the family's value says where it is undefined (NaN)
                undefined = np.isnan(values)
                some = bool(undefined.any())
            else:
                undefined, some = self._undefined(rule, m, judged)
            out[label] = np.where(undefined, 0.0, values) if some else values
            if memo is not None:
                done[memo] = out[label]
        for jv in views.values():
            for key, value in jv.memo.items():
                if key[0] in TRUTH_ONLY:
                    self.truth_memo.setdefault(key, value)
        return out

    def _undefined(self, rule: Any, m: Metric, judged: Judged) -> tuple[np.ndarray, bool]:
        """The queries on which ``m`` is undefined by its family's rule (worked out once per rule: it reads
        the ground truth alone)."""
        if rule not in self._defined:
            mask = ~defined_mask(m, judged)
            self._defined[rule] = (mask, bool(mask.any()))
        return self._defined[rule]

    @functools.cached_property
    def steps(self) -> Steps:
        """What :meth:`values` reads of each label, worked out once for each (labels, policies)."""
        try:
            return _steps(tuple(self.labels), self.policies)
        except TypeError:  # something not hashable: worked out for this scorer
            return Steps(self.labels, self.policies)


@dataclass(frozen=True)
class _Rows:
    """The truth's rows as the kernels read them: each row's unit, the units' queries and grades."""

    view: TruthView
    row_unit: np.ndarray
    unit_q: np.ndarray
    unit_grade: np.ndarray
    has_groups: bool

    @property
    def row_q(self) -> np.ndarray:
        return self.view.row_query

    @property
    def grades(self) -> np.ndarray:
        return self.view.grades

    @classmethod
    def of_index(cls, index: TruthIndex | None) -> _Rows:
        assert index is not None
        q = index.qrels
        view = TruthView(np.asarray(q.query_ids, dtype=object), q.offsets, index.row_q, q.grades, q)
        return cls(view, index.row_unit, index.unit_q, index.unit_grade, q.has_groups)


@functools.lru_cache(maxsize=64)
def _steps(labels: tuple[Any, ...], policies: Any) -> Steps:
    return Steps(list(labels), policies)


class Steps:
    """Per label: the judged view it reads (``kinds``), the key of its kernel call (``memo``: equal keys, equal
    values; None when a parameter is not hashable), the key of its definedness mask (``rules``: None for the
    families whose value says it); and the hit counts the cutoff families read (``hit_cutoffs``: view, rel and
    cutoffs, counted in one pass when two or more are asked)."""

    #: The kernels that read :func:`ragrade.kernels.metrics.hits` at the metric's cutoff.
    HIT_KERNELS = frozenset({"precision", "recall", "hit_rate", "recall_all", "relative_precision",
                             "context_precision", "f1", "f_measure"})

    def __init__(self, labels: list[tuple[str, Metric]], policies: Policies) -> None:
        self.kinds: list[str] = []
        self.kernels: list[Any] = []  # each label's kernel function
        self.memo: list[Any] = []
        self.rules: list[Any] = []
        cutoffs: dict[tuple[str, int], set[int]] = collections.defaultdict(set)
        for _, m in labels:
            fam = m.family
            kind = ("condensed" if policies.unjudged == "condensed" or metric_param(m, "judged_only", False)
                    else "nonrelevant")
            self.kinds.append(kind)
            assert fam.kernel is not None
            self.kernels.append(fam.kernel.resolve() if hasattr(fam.kernel, "resolve") else fam.kernel)
            memo: Any = (fam.kernel, m.k, kind, tuple((p.name, m.get(p.name)) for p in fam.params))
            try:
                hash(memo)
            except TypeError:
                memo = None
            self.memo.append(memo)
            if fam.defined == "value":
                self.rules.append(None)
            else:
                self.rules.append((fam.defined, m.rel, metric_param(m, "rel", None), metric_param(m, "gains", None)))
            if m.k is not None and getattr(fam.kernel, "name", None) in self.HIT_KERNELS:
                cutoffs[kind, m.rel].add(int(m.k))
        self.hit_cutoffs = [(kind, rel, sorted(ks)) for (kind, rel), ks in cutoffs.items() if len(ks) > 1]


def scorer_of_qrels(qrels: Qrels, labels: list[tuple[str, Metric]], policies: Policies) -> Scorer:
    """A :class:`Scorer` over a :class:`~ragrade.data.Qrels` (its index built here)."""
    return Scorer(TruthIndex(qrels), labels, policies)

