"""The trec_eval 10 vectors of docs/parity-vectors.md ("trec_eval 10's measures"): ragrade and the slow
reference equal every number to 1e-12. The doc is the single copy of the numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import measures_reference as MR
import ragrade
from ragrade.metrics import parse_labelled
from reference import rank

DOC = Path(__file__).resolve().parents[2] / "docs" / "parity-vectors.md"


def _block(text: str, marker: str) -> str:
    after = text.split(f"<!-- {marker} -->", 1)[1]
    return after.split("```text", 1)[1].split("```", 1)[0] if "```text" in after.split("|", 1)[0] else after


def vectors():
    text = DOC.read_text(encoding="utf-8")
    qrels: dict[str, dict[str, int]] = {}
    for line in _block(text, "trec10-qrels").split("\n"):
        if line.strip():
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in _block(text, "trec10-run").split("\n"):
        if line.strip():
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    table = text.split("<!-- trec10-values -->", 1)[1].strip().split("\n")
    header = [c.strip() for c in table[0].strip("|").split("|")]
    values = {}
    for row in table[2:]:
        if not row.startswith("|"):
            break
        cells = [c.strip() for c in row.strip("|").split("|")]
        values[cells[0].strip("`")] = dict(zip(header[1:], map(float, cells[1:]), strict=True))
    return qrels, run, values


def test_the_doc_holds_the_vectors():
    qrels, run, values = vectors()
    assert len(qrels) == 3 and len(run) == 3 and len(values) == 8


@pytest.mark.parametrize("measure", list(vectors()[2]))
def test_ragrade_and_the_reference_equal_trec_eval_10(measure):
    qrels, run, values = vectors()
    labels = parse_labelled(measure, "trec_eval")
    assert len(labels) == 1
    label, metric = labels[0]
    res = ragrade.evaluate(qrels, run, [measure], names="trec_eval")
    for q, want in values[measure].items():
        assert abs(float(res.per_query.iloc[:, 0][q]) - want) <= 1e-12, (measure, q)
        ref = MR.value(metric, rank(list(run[q].items())), qrels[q])
        assert abs(ref - want) <= 1e-12, (measure, q, ref)
    assert re.fullmatch(r"[a-z_]+(_[0-9]+)?|[a-z_]+_[^ ]+", label)
