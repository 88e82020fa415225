"""Moved to :mod:`ragrade.scale.combine` (scale sits above the engine: docs/architecture.md). This name is kept
for old imports: importing it gives that very module (so attributes set on one are set on the other)."""

import sys

from ragrade.scale import combine as _moved
from ragrade.scale.combine import *  # noqa: F403 - the names, for type checkers
from ragrade.scale.combine import combine, merge_summaries, part_state  # noqa: F401

sys.modules[__name__] = _moved
