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

__all__ = [
    "Evaluator",
    "InputError",
    "Metric",
    "MetricError",
    "MissingDependencyError",
    "ParseError",
    "Policies",
    "PolicyError",
    "Qrels",
    "RagradeError",
    "RagradeWarning",
    "Result",
    "Run",
    "Summary",
    "__version__",
    "evaluate",
    "parse_metric",
    "parse_metrics",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
