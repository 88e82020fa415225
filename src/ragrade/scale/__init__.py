"""Scale above the engine: evaluations too large for one pass in memory, run as pieces by the engine and
merged (docs/scale.md).

* :mod:`ragrade.scale.budget` — the memory budget: when a pair of files takes the out-of-core path, and
  the piece sizes a budget allows;
* :mod:`ragrade.scale.outofcore` — one machine, bounded memory: the inputs read piece by piece (by the
  readers of :mod:`ragrade.io.stream`), each piece scored through the engine's scoring port;
* :mod:`ragrade.scale.spark` — a Spark cluster: each task scores the queries of one hash partition through
  the scoring port;
* :mod:`ragrade.scale.pieces` — :class:`~ragrade.scale.pieces.PieceScorer`, how one piece is scored (the
  piece's ground truth indexed by an ``Evaluator``, its run scored by the port's ``Scorer.evaluate``; never
  the in-memory executor);
* :mod:`ragrade.scale.combine` — one :class:`~ragrade.engine.result.Result` from the pieces' results
  (per-query rows concatenated, the summary merged field by field);
* :mod:`ragrade.scale.merge` — how each metric's per-piece state merges, declared by its family's
  ``aggregate`` (as torchmetrics' ``dist_reduce_fx``): no module here has code for one metric.

The engine never imports this package, and this package never imports the in-memory executor
(``tests/scale/test_scale_port.py``). Nothing heavy is imported with the package itself.
"""
