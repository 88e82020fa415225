"""Scale above the engine: evaluations too large for one pass in memory, run as pieces by the engine and
merged (docs/scale.md).

* :mod:`ragrade.scale.budget` — the memory budget: when a pair of files takes the out-of-core path, and
  the piece sizes a budget allows;
* :mod:`ragrade.scale.outofcore` — one machine, bounded memory: the inputs read piece by piece (by the
  readers of :mod:`ragrade.io.stream`), each piece evaluated by the in-memory engine;
* :mod:`ragrade.scale.spark` — a Spark cluster: each task evaluates the
  queries of one hash partition with the in-memory engine;
* :mod:`ragrade.scale.combine` — one :class:`~ragrade.engine.result.Result` from the pieces' results
  (per-query rows concatenated, the summary merged field by field);
* :mod:`ragrade.scale.merge` — how each metric's per-piece state merges, declared by its family's
  ``aggregate`` (as torchmetrics' ``dist_reduce_fx``): no module here has code for one metric.

The engine never imports this package. Nothing heavy is imported with the package itself.
"""
