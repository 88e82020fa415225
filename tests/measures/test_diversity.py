"""alpha-nDCG@k and ERR-IA@k against ndeval (ir-measures' pyndeval provider), per query to 1e-12, and the
subtopic-judgment inputs (TREC file, DataFrame, dicts) with their errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import ragrade
from ragrade import InputError, MetricError
from ragrade.cli import main

pyndeval = pytest.importorskip("pyndeval")


def collection(seed: int):
    rng = np.random.default_rng(seed)
    triples, nested, run_rows, run = [], {}, [], {}
    for qi in range(1, 15):
        q = str(qi)
        for s in range(int(rng.integers(1, 5))):
            for d in rng.choice(30, int(rng.integers(1, 8)), replace=False):
                g = int(rng.choice([0, 1, 1, 2]))
                triples.append((q, str(s), f"d{d}", g))
                nested.setdefault(q, {}).setdefault(str(s), {})[f"d{d}"] = g
        docs = rng.choice(30, int(rng.integers(1, 25)), replace=False)
        for d, sc in zip(docs, rng.permutation(len(docs)) + 1.0, strict=True):
            run_rows.append((q, f"d{d}", float(sc)))
            run.setdefault(q, {})[f"d{d}"] = float(sc)
    return triples, nested, run_rows, run


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rel", [1, 2])
def test_equals_ndeval(seed, rel):
    triples, nested, run_rows, run = collection(seed)
    cuts = (2, 5, 10, 20)
    theirs = [f"alpha-nDCG@{k}" for k in cuts] + [f"ERR-IA@{k}" for k in cuts]
    ours = [f"alpha_nDCG(rel={rel})@{k}" for k in cuts] + [f"ERR_IA(rel={rel})@{k}" for k in cuts]
    want = pyndeval.RelevanceEvaluator(triples, measures=theirs, relevance_level=rel).evaluate(run_rows)
    got = ragrade.evaluate(nested, run, ours, no_relevant="zero").per_query
    n, worst = 0, 0.0
    for q, values in want.items():
        for a, b in zip(theirs, ours, strict=True):
            assert abs(values[a] - got.at[q, b]) <= 1e-12, (q, a, values[a], got.at[q, b])
            worst = max(worst, abs(values[a] - got.at[q, b]))
            n += 1
    print(f"\nndeval (pyndeval), rel={rel}: {n} values (alpha_nDCG, ERR_IA at 2, 5, 10, 20), max difference "
          f"{worst:.3g}")
    assert n > 50


def test_alpha_changes_the_redundancy_penalty():
    truth = {"q": {"1": {"a": 1, "b": 1}, "2": {"c": 1}}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    low = ragrade.evaluate(truth, run, ["alpha_ndcg(alpha=0.1)@3"]).means["alpha_ndcg(alpha=0.1)@3"]
    high = ragrade.evaluate(truth, run, ["alpha_ndcg(alpha=0.9)@3"]).means["alpha_ndcg(alpha=0.9)@3"]
    assert high < low  # b repeats subtopic 1: the more it is penalised, the worse a, b, c looks


def test_inputs_agree_and_errors_name_the_problem(tmp_path):
    triples, nested, _, run = collection(3)
    path = tmp_path / "div.qrels"
    path.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in triples))
    frame = pd.DataFrame(triples, columns=["query_id", "iteration", "doc_id", "relevance"])
    m = ["alpha_ndcg@10", "err_ia@5"]
    a = ragrade.evaluate(nested, run, m).per_query
    b = ragrade.evaluate(str(path), run, m).per_query
    c = ragrade.evaluate_diversity(frame, run, m).per_query
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1 1\n1 0 d2\n")
    with pytest.raises(ragrade.RagradeError, match=":2"):
        ragrade.evaluate(str(bad), run, m)
    with pytest.raises(MetricError, match="separately"):
        ragrade.evaluate(nested, run, ["alpha_ndcg@10", "ndcg@10"])
    with pytest.raises(MetricError, match="subtopic"):
        ragrade.Evaluator({"q": {"a": 1}}, ["alpha_ndcg@10"])
    with pytest.raises(InputError, match="twice"):
        ragrade.evaluate_diversity(pd.DataFrame([("q", "1", "a", 1), ("q", "1", "a", 0)],
                                                columns=["query", "subtopic", "doc", "grade"]), run, m)


def test_cli_reads_subtopic_qrels(tmp_path):
    triples, _, run_rows, _ = collection(5)
    qp = tmp_path / "div.qrels"
    qp.write_text("".join(f"{q} {s} {d} {g}\n" for q, s, d, g in triples))
    rp = tmp_path / "run.txt"
    rp.write_text("".join(f"{q} Q0 {d} {i} {s} r\n" for i, (q, d, s) in enumerate(run_rows)))
    res = CliRunner().invoke(main, ["evaluate", str(qp), str(rp), "-m", "alpha_ndcg@10", "--format", "json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    import json

    assert 0 < json.loads(res.stdout)["metrics"]["alpha_ndcg@10"] <= 1
