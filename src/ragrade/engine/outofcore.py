"""Moved to :mod:`ragrade.scale.outofcore` (scale sits above the engine: docs/architecture.md). This name is kept
for old imports: importing it gives that very module (so attributes set on one are set on the other)."""

import sys

from ragrade.scale import outofcore as _moved
from ragrade.scale.outofcore import *  # noqa: F403 - the names, for type checkers
from ragrade.scale.outofcore import evaluate_budgeted, evaluate_large, evaluate_paths  # noqa: F401

sys.modules[__name__] = _moved
