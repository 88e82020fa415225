"""The id pipeline: join -> credit -> kernels -> policies -> :class:`~ragrade.engine.result.Result`.

:class:`Evaluator` indexes the ground truth once (:class:`~ragrade.engine.join.TruthIndex`) and scores any
number of runs against it: whole runs (:meth:`Evaluator.evaluate`: the join, :mod:`ragrade.engine.join`, then
the crediting, :mod:`ragrade.engine.credit`) or rankings given as judged hits (the scoring port,
:mod:`ragrade.engine.scoring`). Every other path (groups, texts, engine profiles) ends here too; list
profiles end in :mod:`ragrade.engine.lists`, which shares the result model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Never

import numpy as np

from ragrade.engine.credit import caller_stacklevel
from ragrade.engine.inputs import as_qrels, as_run
from ragrade.engine.join import TruthIndex
from ragrade.engine.labels import MetricsArg, metric_labels
from ragrade.engine.result import Result
from ragrade.errors import InputError, MetricError, UnknownNameError
from ragrade.metrics.parser import Metric, Names
from ragrade.options import public
from ragrade.policies import (
    Duplicates,
    EmptyRun,
    IdenticalIds,
    MissingQrels,
    MissingRun,
    NoRelevant,
    Policies,
    Ties,
    Unjudged,
)

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.engine.scoring import Scorer, TruthView

__all__ = ["Evaluator", "caller_stacklevel", "check_id_metrics"]


def check_id_metrics(labels: list[tuple[str, Metric]], where: str = "") -> None:
    """Every metric must be an id family (computed from relevance judgments)."""
    for label, m in labels:
        kind = m.family.kind
        if kind == "judge":
            raise MetricError(f"{label!r} is judged by an LLM or offline judge: compute it with "
                              f"`ragrade judge` / ragrade.judges.evaluate_judged{where}")
        if kind == "diversity":
            raise MetricError(f"{label!r} needs subtopic judgments: compute it with ragrade.evaluate_diversity "
                              f"(TREC 'qid subtopic docno rel' qrels){where}")
        if kind == "nugget":
            raise MetricError(f"{label!r} reads nuggets and their assignments: evaluate it with "
                              f"ragrade.evaluate(nuggets, run, [{label!r}], assignments=... or judge=...) "
                              f"(docs/nuggets.md){where}")
        if kind == "trajectory":
            raise MetricError(f"{label!r} scores several retrieval calls together: evaluate the trajectories of "
                              f"traces (ragrade.read_traces(...).trajectories, `ragrade traces`){where}")
        if kind == "text":
            raise MetricError(f"{label!r} compares texts: give the items as texts with a matcher or a profile "
                              f"that defines it (e.g. ragrade.evaluate(truth, retrieved, [{label!r}], "
                              f"profile='autorag')){where}")
        if kind == "span":  # (issue 35) span measures: computed by ragrade.spans.route
            raise MetricError(f"{label!r} compares character spans: give span ground truth (query, doc, start, "
                              f"end) and the run's chunk map to ragrade.evaluate(..., chunks=...) (docs/spans.md)"
                              f"{where}")


class Evaluator:
    """Scores many runs against the same ground truth without re-ingesting it.

    ``qrels`` is any ground-truth input of :func:`ragrade.engine.inputs.as_qrels`; ``metrics`` a metric
    string, a :class:`~ragrade.metrics.Metric` or a list of them; the keyword arguments set the policies
    (``docs/conventions.md``, "Policies"; None keeps the default).

    >>> ev = Evaluator({"q1": {"d1": 1, "d2": 1}}, ["P@2", "ndcg@2"])
    >>> ev.evaluate({"q1": {"d1": 0.9, "d3": 0.5}}).means
    {'P@2': 0.5, 'ndcg@2': 0.6131471927654584}
    """

    @public
    def __init__(self, qrels: Any, metrics: MetricsArg, *, missing_run: MissingRun | None = None,
                 missing_qrels: MissingQrels | None = None, no_relevant: NoRelevant | None = None,
                 duplicates: Duplicates | None = None, identical_ids: IdenticalIds | None = None,
                 ties: Ties | None = None, empty_run: EmptyRun | None = None, unjudged: Unjudged | None = None,
                 max_docs: int | None = None, num_docs: int | None = None, upper_grade: float | None = None,
                 names: Names = "ragrade", rel_level: int | None = None,
                 policies: Policies | None = None, **unknown: Never) -> None:
        if unknown:
            raise UnknownNameError("option", next(iter(unknown)), [*Policies.choices(), *Policies.settings(),
                                                                   "names", "rel_level", "policies"])
        self.labels = metric_labels(metrics, names=names, rel_level=rel_level)
        check_id_metrics(self.labels)
        base = policies if policies is not None else Policies()
        self.policies = base.update(missing_run=missing_run, missing_qrels=missing_qrels, no_relevant=no_relevant,
                                    duplicates=duplicates, identical_ids=identical_ids, ties=ties,
                                    empty_run=empty_run, unjudged=unjudged, max_docs=max_docs, num_docs=num_docs,
                                    upper_grade=upper_grade)
        self.qrels = as_qrels(qrels)
        if self.qrels.n_queries == 0:
            raise InputError("the ground truth holds no query: there is nothing to evaluate")
        self.index = TruthIndex(self.qrels, judged="all")
        #: Cutoffs at which ``result.hole_rate.by_k`` is also computed (the report's plot sets them).
        self.hole_cutoffs: tuple[int, ...] = ()
        self._scorer: Scorer | None = None

    @public
    def evaluate(self, run: Any, name: str | None = None) -> Result:
        """Score one run (a :class:`~ragrade.data.Run`, nested dicts, ranked lists, a DataFrame, a table
        or a path)."""
        return self.scorer.evaluate(run, name)

    # -- the scoring port (ragrade.engine.scoring; docs/python-api.md, "The scoring port") -------------------
    @property
    def scorer(self) -> Scorer:
        """The scoring port over this ground truth, these labels and policies (made on first use)."""
        if self._scorer is None:
            from ragrade.engine.scoring import Scorer

            self._scorer = Scorer(self.index, self.labels, self.policies)
        self._scorer.hole_cutoffs = self.hole_cutoffs
        return self._scorer

    @property
    def truth(self) -> TruthView:
        """The indexed ground truth as callers join against it (:class:`~ragrade.engine.scoring.TruthView`)."""
        return self.scorer.truth

    @public
    def locate(self, run: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(rows of the run, truth rows)`` of the retrieved items the ground truth judges for their query
        (``run``: anything :meth:`evaluate` reads; rows in the storage order of its
        :class:`~ragrade.data.Run`)."""
        return self.scorer.locate(as_run(run))

    @public
    def score(self, judgments: np.ndarray, ranks: np.ndarray, counts: np.ndarray, queries: Any = None, *,
              positions: np.ndarray | None = None, name: str | None = None, notes: bool = True) -> Result:
        """Score rankings given as judged hits: ``judgments`` (truth rows, :attr:`truth`), their 0-based
        ``ranks``, and the length of each ranking (``counts``, aligned with ``queries``; default: every
        query of the ground truth, in order). The :class:`Result` :meth:`evaluate` gives for the same
        rankings (:meth:`ragrade.engine.scoring.Scorer.result`).

        >>> ev = Evaluator({"q1": {"d1": 1, "d2": 1}}, ["P@2"])
        >>> ev.score([1], [0], [2]).means  # d2 at rank 1 of a 2-item ranking
        {'P@2': 0.5}
        """
        return self.scorer.result(judgments, ranks, counts, queries, positions=positions, name=name, notes=notes)

    @public
    def score_values(self, judgments: np.ndarray, ranks: np.ndarray, counts: np.ndarray, queries: Any = None, *,
                     positions: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The per-query values of :meth:`score` (each label's value on every ground-truth query, in order),
        computing what depends on the ground truth alone once for all calls
        (:meth:`ragrade.engine.scoring.Scorer.values`)."""
        return self.scorer.values(judgments, ranks, counts, queries, positions=positions)
