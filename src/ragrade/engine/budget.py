"""Moved to :mod:`ragrade.scale.budget` (scale sits above the engine: docs/architecture.md). This name is kept
for old imports: importing it gives that very module (so attributes set on one are set on the other)."""

import sys

from ragrade.scale import budget as _moved
from ragrade.scale.budget import *  # noqa: F403 - the names, for type checkers
from ragrade.scale.budget import budget_for, parse_memory  # noqa: F401

sys.modules[__name__] = _moved
