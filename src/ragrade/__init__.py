"""ragrade: grade the retrieval step of RAG pipelines and search systems.

The public API is listed in ``__all__``. Importing ``ragrade`` loads nothing heavy: every name is
imported on first use (PEP 562), so ``import ragrade`` and the command line start fast and optional
extras are only imported by the code that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> (module, attribute); attribute None: the module itself
_LAZY: dict[str, tuple[str, str | None]] = {
    "evaluate": ("ragrade.evaluation", "evaluate"),
    "evaluate_diversity": ("ragrade.engine.diversity", "evaluate_diversity"),
    "HoleRate": ("ragrade.engine.summary", "HoleRate"),
    "Evaluator": ("ragrade.engine.core", "Evaluator"),
    "Result": ("ragrade.engine.result", "Result"),
    "Summary": ("ragrade.engine.summary", "Summary"),
    "Qrels": ("ragrade.data", "Qrels"),
    "Run": ("ragrade.data", "Run"),
    "read_qrels": ("ragrade.io", "read_qrels"),
    "read_run": ("ragrade.io", "read_run"),
    "write_qrels": ("ragrade.io", "write_qrels"),
    "write_run": ("ragrade.io", "write_run"),
    "Metric": ("ragrade.metrics.parser", "Metric"),
    "parse_metric": ("ragrade.metrics.parser", "parse_metric"),
    "parse_metrics": ("ragrade.metrics.parser", "parse_metrics"),
    "Policies": ("ragrade.policies", "Policies"),
    "Profile": ("ragrade.profiles", "Profile"),
    "get_profile": ("ragrade.profiles", "get_profile"),
    "get_matcher": ("ragrade.matching", "get_matcher"),
    "conventions": ("ragrade.report.conventions", "conventions"),
    "ConventionsReport": ("ragrade.report.conventions", "ConventionsReport"),
    "compare": ("ragrade.comparison", "compare"),
    "Comparison": ("ragrade.comparison", "Comparison"),
    "report": ("ragrade.report", None),
    "retrieve": ("ragrade.retrieval", "retrieve"),
    "RetrievedRun": ("ragrade.retrieval", "RetrievedRun"),
    "save_baseline": ("ragrade.gating", "save_baseline"),
    "load_baseline": ("ragrade.gating", "load_baseline"),
    "gate": ("ragrade.gating", "gate"),
    "plan": ("ragrade.comparison.planning", "plan"),
    "Plan": ("ragrade.comparison.planning", "Plan"),
    "RagradeError": ("ragrade.errors", "RagradeError"),
    "RagradeWarning": ("ragrade.errors", "RagradeWarning"),
    "InputError": ("ragrade.errors", "InputError"),
    "InternalError": ("ragrade.errors", "InternalError"),
    "ParseError": ("ragrade.errors", "ParseError"),
    "MetricError": ("ragrade.errors", "MetricError"),
    "UnknownNameError": ("ragrade.errors", "UnknownNameError"),
    "PolicyError": ("ragrade.errors", "PolicyError"),
    "MissingDependencyError": ("ragrade.errors", "MissingDependencyError"),
    "fuse": ("ragrade.fusion", "fuse"),
    "optimize_fusion": ("ragrade.fusion.optimize", "optimize_fusion"),
    "FusionSearch": ("ragrade.fusion.optimize", "FusionSearch"),
    # character spans (issue 35): docs/spans.md
    "read_spans": ("ragrade.spans", "read_spans"),
    "read_chunks": ("ragrade.spans", "read_chunks"),
    "read_corpus": ("ragrade.spans", "read_corpus"),
    "locate_chunks": ("ragrade.spans", "locate_chunks"),
    "aggregate_passages": ("ragrade.spans", "aggregate_passages"),
    "SpanTruth": ("ragrade.spans", "SpanTruth"),
    "ChunkMap": ("ragrade.spans", "ChunkMap"),
    "Corpus": ("ragrade.spans", "Corpus"),
    "compare_chunkings": ("ragrade.chunking", "compare_chunkings"),
    "ChunkingComparison": ("ragrade.chunking", "ChunkingComparison"),
    "nuggets": ("ragrade.nuggets", None),
    "erag_labels": ("ragrade.nuggets.erag", "erag_labels"),
    # test sets from a corpus (issue 36): docs/synthesize.md
    "synthesize": ("ragrade.synthesis", "synthesize"),
    "TestSet": ("ragrade.synthesis", "TestSet"),
    "read_traces": ("ragrade.traces", "read_traces"),
    "Traces": ("ragrade.traces", "Traces"),
}


def __getattr__(name: str) -> Any:
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'ragrade' has no attribute {name!r}")
    module = importlib.import_module(entry[0])
    return module if entry[1] is None else getattr(module, entry[1])


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from ragrade import nuggets, report
    from ragrade.chunking import ChunkingComparison, compare_chunkings
    from ragrade.comparison import Comparison, compare
    from ragrade.comparison.planning import Plan, plan
    from ragrade.data import Qrels, Run
    from ragrade.engine.core import Evaluator
    from ragrade.engine.diversity import evaluate_diversity
    from ragrade.engine.result import Result
    from ragrade.engine.summary import HoleRate, Summary
    from ragrade.errors import (
        InputError,
        InternalError,
        MetricError,
        MissingDependencyError,
        ParseError,
        PolicyError,
        RagradeError,
        RagradeWarning,
        UnknownNameError,
    )
    from ragrade.evaluation import evaluate
    from ragrade.fusion import fuse
    from ragrade.fusion.optimize import FusionSearch, optimize_fusion
    from ragrade.gating import gate, load_baseline, save_baseline
    from ragrade.io import read_qrels, read_run, write_qrels, write_run
    from ragrade.matching import get_matcher
    from ragrade.metrics.parser import Metric, parse_metric, parse_metrics
    from ragrade.nuggets.erag import erag_labels
    from ragrade.policies import Policies
    from ragrade.profiles import Profile, get_profile
    from ragrade.report.conventions import ConventionsReport, conventions
    from ragrade.retrieval import RetrievedRun, retrieve
    from ragrade.spans import (
        ChunkMap,
        Corpus,
        SpanTruth,
        aggregate_passages,
        locate_chunks,
        read_chunks,
        read_corpus,
        read_spans,
    )
    from ragrade.synthesis import TestSet, synthesize
    from ragrade.traces import Traces, read_traces

__all__ = [
    "ChunkMap",
    "ChunkingComparison",
    "Comparison",
    "ConventionsReport",
    "Corpus",
    "Evaluator",
    "FusionSearch",
    "HoleRate",
    "InputError",
    "InternalError",
    "Metric",
    "MetricError",
    "MissingDependencyError",
    "ParseError",
    "Plan",
    "Policies",
    "PolicyError",
    "Profile",
    "Qrels",
    "RagradeError",
    "RagradeWarning",
    "Result",
    "RetrievedRun",
    "Run",
    "SpanTruth",
    "Summary",
    "TestSet",
    "Traces",
    "UnknownNameError",
    "__version__",
    "aggregate_passages",
    "compare",
    "compare_chunkings",
    "conventions",
    "erag_labels",
    "evaluate",
    "evaluate_diversity",
    "fuse",
    "gate",
    "get_matcher",
    "get_profile",
    "load_baseline",
    "locate_chunks",
    "nuggets",
    "optimize_fusion",
    "parse_metric",
    "parse_metrics",
    "plan",
    "read_chunks",
    "read_corpus",
    "read_qrels",
    "read_run",
    "read_spans",
    "read_traces",
    "report",
    "retrieve",
    "save_baseline",
    "synthesize",
    "write_qrels",
    "write_run",
]
