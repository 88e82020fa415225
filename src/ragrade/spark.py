"""Moved to :mod:`ragrade.scale.spark` (scale sits above the engine: docs/architecture.md). This name is kept
for old imports: importing it gives that very module (so attributes set on one are set on the other)."""

import sys

from ragrade.scale import spark as _moved
from ragrade.scale.spark import *  # noqa: F403 - the names, for type checkers
from ragrade.scale.spark import SparkValues, evaluate, read, require_pyspark, session  # noqa: F401

sys.modules[__name__] = _moved
