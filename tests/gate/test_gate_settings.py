"""The gate reads back a baseline scored with numeric settings (trec_eval's -M, -N; the bounds' grade)."""

from __future__ import annotations

import warnings

import pytest

import ragrade
from ragrade.gating import IncomparableError, gate, load_baseline, save_baseline

QRELS = {f"q{i}": {"d1": 1, "d2": 1, "d3": 0} for i in range(8)}
RUN = {f"q{i}": {"d3": 3.0, "d1": 2.0, "x": 1.5, "d2": 1.0} for i in range(8)}


def test_a_baseline_with_max_docs_round_trips_and_is_applied(tmp_path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = ragrade.evaluate(QRELS, RUN, ["recall@10"], max_docs=2)
    assert base.means["recall@10"] == 0.5  # only the first two documents are read
    path = save_baseline(base, tmp_path / "b.json", QRELS)
    loaded = load_baseline(path)
    assert loaded.policies["max_docs"] == 2 and loaded.policies["num_docs"] is None
    verdict = gate(path, QRELS, RUN)
    assert verdict.passed and verdict.verdicts[0].candidate == pytest.approx(0.5)


def test_an_unknown_setting_in_a_baseline_is_incomparable(tmp_path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = ragrade.evaluate(QRELS, RUN, ["recall@10"])
    path = save_baseline(base, tmp_path / "b.json", QRELS)
    text = path.read_text().replace('"max_docs"', '"max_dogs"')
    path.write_text(text)
    with pytest.raises(IncomparableError, match="max_dogs"):
        gate(path, QRELS, RUN)
