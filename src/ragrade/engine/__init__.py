"""The engine: one pipeline from any input to one :class:`~ragrade.engine.result.Result`.

======================  ===============================================================================
module                  owns
======================  ===============================================================================
``engine/inputs.py``    the one input layer: every accepted shape -> Qrels / Run (or texts), one id rule
``engine/join.py``      which retrieved rows are judged, at which rank (columnar and dict paths; pure)
``engine/core.py``      :class:`Evaluator`: credit, kernels, definedness, policies -> Result
``engine/texts.py``     text ground truth: match tables, greedy crediting, hand-over to the id pipeline
``engine/lists.py``     profiles: engine profiles (policies) and list profiles (list kernels)
``engine/result.py``    :class:`Result`: the one result model (immutable; ``replace``, ``collect``)
``engine/values.py``    where per-query values live: :class:`QueryColumns`, :class:`DeferredValues`
``engine/summary.py``   :class:`Summary`, :class:`HoleRate`, :class:`JudgeInfo`
``engine/labels.py``    metric labels (:func:`metric_labels`) and :class:`MetricValues`
``engine/notes.py``     the words of a result's notes and summary lines (its formats: io/results.py)
``engine/plan.py``      :class:`EvalPlan`: one request, validated once (:func:`build_plan`)
``engine/executor.py``  the in-memory executor of a plan: picks the path above for its metrics
======================  ===============================================================================

``ragrade.evaluate`` (:mod:`ragrade.evaluation`, above the engine) builds a plan and dispatches it to this
executor, out of core or Spark. ``docs/architecture.md`` draws the pipeline and lists which module owns what.
"""

from ragrade.engine.core import Evaluator
from ragrade.engine.inputs import as_qrels, as_run, read_both
from ragrade.engine.labels import MetricValues, metric_labels
from ragrade.engine.result import Result, Summary

__all__ = ["Evaluator", "MetricValues", "Result", "Summary", "as_qrels", "as_run", "metric_labels",
           "read_both"]
