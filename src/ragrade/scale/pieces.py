"""How one piece of a large evaluation is scored: through the engine's scoring port.

Out of core (:mod:`ragrade.scale.outofcore`) and Spark (:mod:`ragrade.scale.spark`) cut an evaluation into
pieces, each holding whole queries: a :class:`~ragrade.data.Qrels` and the :class:`~ragrade.data.Run` of the
same queries. A :class:`PieceScorer` scores one piece the way the in-memory path scores the whole:

* under the default convention, the piece's ground truth is indexed by a :class:`ragrade.Evaluator` and the
  piece's run scored by its :class:`~ragrade.engine.scoring.Scorer` (:meth:`Scorer.evaluate
  <ragrade.engine.scoring.Scorer.evaluate>`: the run joined to the indexed truth and credited by the port);
* under an engine profile, by :func:`ragrade.engine.lists.evaluate_engine_profile`, which reads the profile
  (its policies, its reading of each metric, its score precision, a peer's tie order) and scores through an
  :class:`ragrade.Evaluator`, hence the same port;
* under a list profile (Spark only: out of core refuses them), by the profile's list kernels
  (:func:`ragrade.engine.lists.evaluate_list_profile`): those compare item lists with the peer's matchers and
  are not rankings against judged rows, which is all the port scores.

A piece scorer is a frozen value (picklable: Spark ships it to its tasks); the options it is made from are
checked once, by :func:`ragrade.engine.plan.build_plan`, on the driver. Nothing here imports the in-memory
executor (``tests/scale/test_scale_port.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragrade.errors import InputError
from ragrade.policies import Policies

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.engine.plan import EvalPlan
    from ragrade.engine.result import Result
    from ragrade.metrics import Metric
    from ragrade.profiles import Profile

__all__ = ["PieceScorer"]


@dataclass(frozen=True)
class PieceScorer:
    """Scores one piece (``qrels``, ``run``: the same queries) for ``labels`` under ``settings`` (the policy
    keywords given, the profile's and the defaults filling in the rest) and ``profile`` (None: ragrade's
    default convention; an engine profile; a list profile scoring ids). ``hole_cutoffs``: the cutoffs at which
    the hole rate's ``by_k`` is also computed."""

    labels: tuple[tuple[str, Metric], ...]
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    profile: Profile | None = None
    hole_cutoffs: tuple[int, ...] = ()

    @classmethod
    def of_plan(cls, plan: EvalPlan) -> PieceScorer:
        """The piece scorer of an id plan (its matcher, if any, is the caller's to refuse: pieces are scored by
        id)."""
        return cls(tuple(plan.labels), dict(plan.policies), plan.profile, tuple(plan.hole_cutoffs))

    @classmethod
    def of_options(cls, labels: Sequence[tuple[str, Any]], options: Mapping[str, Any]) -> PieceScorer:
        """The piece scorer of ``labels`` under the keywords of :func:`ragrade.evaluate` (``profile`` and the
        policies), each checked as every entry point checks them (a bad value: its typed error, here)."""
        from ragrade.engine.plan import build_plan

        return cls.of_plan(build_plan(None, None, list(labels), **options))

    def with_(self, labels: Sequence[tuple[str, Any]] | None = None,
              settings: Mapping[str, Any] | None = None) -> PieceScorer:
        """A copy scoring ``labels`` under ``settings`` (each default: this one's)."""
        return dataclasses.replace(self, labels=self.labels if labels is None else tuple(labels),
                                   settings=self.settings if settings is None else dict(settings))

    def __call__(self, qrels: Any, run: Any, labels: Sequence[tuple[str, Any]] | None = None,
                 settings: Mapping[str, Any] | None = None) -> Result:
        """The :class:`~ragrade.engine.result.Result` of one piece (``labels``, ``settings``: those to use
        instead of this scorer's, as :func:`ragrade.scale.outofcore.evaluate_budgeted` pins them)."""
        if labels is not None or settings is not None:
            return self.with_(labels, settings)(qrels, run)
        from ragrade.profiles import EngineProfile, ListProfile

        pairs = list(self.labels)
        prof = self.profile
        if prof is None:
            from ragrade.engine.core import Evaluator

            evaluator = Evaluator(qrels, pairs, policies=Policies().update(**self.settings))
            evaluator.hole_cutoffs = self.hole_cutoffs
            return evaluator.scorer.evaluate(run)
        if isinstance(prof, EngineProfile):
            from ragrade.engine.lists import evaluate_engine_profile

            return evaluate_engine_profile(qrels, run, pairs, prof, dict(self.settings))
        if isinstance(prof, ListProfile):
            from ragrade.engine.lists import evaluate_list_profile

            return evaluate_list_profile(qrels, run, pairs, prof, None, Policies().update(**self.settings))
        raise InputError(f"the {prof.name} profile ({prof.kind} profile) is evaluated with its own ground truth; "
                         "large evaluations (max_memory, Spark) score id metrics")

