"""Shared fixtures of the test suite (kept small and generic).

Helpers shared across test packages (the reference implementation, random-input generators and the
hypothesis settings) live in ``tests/reference.py``; this directory is on ``sys.path`` because it holds
this ``conftest.py`` (pytest's default ``prepend`` import mode), so test modules ``import reference``.
"""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator: every randomised test is deterministic."""
    return np.random.default_rng(20240611)
