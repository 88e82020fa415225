from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from report_synth import make_data, per_query_scores

from ragrade.comparison import Comparison, compare_scores


@pytest.fixture(scope="session")
def small_data():
    return make_data(40, seed=1)


@pytest.fixture(scope="session")
def small_comparison(small_data) -> Comparison:
    qrels, runs, _, _ = small_data
    return compare_scores(per_query_scores(qrels, runs), n_resamples=500, seed=0)
