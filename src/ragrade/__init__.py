"""ragrade: grade the retrieval step of RAG pipelines and search systems."""

__version__ = "0.1.0"

from ragrade.data import Qrels, Run
from ragrade.errors import (
    InputError,
    MetricError,
    MissingDependencyError,
    ParseError,
    PolicyError,
    RagradeError,
    RagradeWarning,
)
from ragrade.evaluation import Evaluator, Result, Summary, evaluate
from ragrade.io import read_qrels, read_run, write_qrels, write_run
from ragrade.metrics import Metric, parse_metric, parse_metrics
from ragrade.policies import Policies

_LAZY = {  # RAG inputs, profiles and the conventions report (imported on first use)
    "conventions": "ragrade.conventions",
    "evaluate_rag": "ragrade.rag",
    "evaluate_profile": "ragrade.rag",
    "get_profile": "ragrade.profiles",
    "Profile": "ragrade.profiles",
    "get_matcher": "ragrade.matching",
    "compare": "ragrade.comparison",
    "Comparison": "ragrade.comparison",
    "report": "ragrade.report",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        # ragrade.conventions is a callable module (the module and the function in one name)
        return module if name in ("conventions", "report") else getattr(module, name)
    raise AttributeError(f"module 'ragrade' has no attribute {name!r}")


__all__ = [
    "Comparison",
    "Evaluator",
    "InputError",
    "Metric",
    "MetricError",
    "MissingDependencyError",
    "ParseError",
    "Policies",
    "PolicyError",
    "Profile",
    "Qrels",
    "RagradeError",
    "RagradeWarning",
    "Result",
    "Run",
    "Summary",
    "__version__",
    "compare",
    "conventions",
    "evaluate",
    "evaluate_profile",
    "evaluate_rag",
    "get_matcher",
    "get_profile",
    "parse_metric",
    "parse_metrics",
    "read_qrels",
    "read_run",
    "report",
    "write_qrels",
    "write_run",
]
