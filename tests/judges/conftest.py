"""Shared fixtures of the judge tests."""

from __future__ import annotations

import pytest
from seed_data import seed_script

from ragrade.judges import ScriptedJudge


@pytest.fixture
def seed_judge() -> ScriptedJudge:
    return ScriptedJudge(seed_script)
