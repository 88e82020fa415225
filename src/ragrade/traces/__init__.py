"""Retrieval inside agents and conversations, evaluated from the traces teams collect (docs/traces.md).

:func:`read_traces` reads OpenInference and OpenTelemetry GenAI spans (OTLP JSON as the collector writes
it, Phoenix span DataFrames and their files) and Langfuse observations into :class:`Traces`: a run of
retrieval calls, a run of trajectories (the calls made for one question, or one session), reranker spans
as pairs of runs, and a table of calls (latency, tokens, cost). Everything that takes a run takes these
(the route :mod:`ragrade.traces.route` scores each query against its key's judgments), and the trajectory
measures (``trajectory_recall``, ``calls_to_first_relevant``, ``redundancy``, ``hop_success``,
``session_dcg``) score the calls of a trajectory together.

This package sits at layer 5 (with ``scale``): it reads files through :mod:`ragrade.io` and scores through
the engine's executor.
"""

from __future__ import annotations

from ragrade.traces.model import RerankerPair, TraceRun, Traces
from ragrade.traces.reader import read_traces

__all__ = ["RerankerPair", "TraceRun", "Traces", "read_traces"]
