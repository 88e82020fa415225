"""``ragrade.evaluate(..., profile="pytrec_eval")`` reads trec_eval's nicknames as pytrec_eval (trec_eval 9) has
them (issue 34, item 5): ``all_trec`` gives pytrec_eval's measures and values, without trec_eval 10's ``unj``,
``rbp`` and ``rbp_resid``; other profiles keep trec_eval 10's sets; a measure written by name stays."""

from __future__ import annotations

import numpy as np
import pytest

import ragrade

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is in the test extra")
TEXT = {"runid", "relstring"}  # pytrec_eval's text measures (0.0 there): no ragrade metric


def collection(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(12):
        docs = [f"d{i}" for i in rng.choice(40, 20, replace=False)]
        qrels[f"q{q}"] = {d: int(g) for d, g in zip(docs[:10], rng.integers(0, 4, 10), strict=True)}
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs[4:], rng.permutation(16) / 4, strict=True)}
    return qrels, run


@pytest.mark.parametrize("nickname", ["all_trec", "official", "set"])
def test_nicknames_under_the_pytrec_eval_profile_are_pytrec_evals(nickname):
    qrels, run = collection(3)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {nickname}).evaluate(run)
    ours = ragrade.evaluate(qrels, run, nickname, profile="pytrec_eval").per_query
    names = set(next(iter(theirs.values()))) - TEXT
    assert set(ours.columns) == names
    for q, values in theirs.items():
        for name in names:
            got = ours.loc[q, name]
            if name.startswith("gm_"):  # pytrec_eval gives a geometric mean's per-query log (of at least 1e-5)
                got = np.log(max(got, 1e-5))
            assert got == pytest.approx(values[name], abs=1e-12), (q, name)


def test_other_profiles_and_named_measures_keep_trec_eval_10():
    qrels, run = collection(4)
    ten = {"unj_5", "unj_10", "unj_20", "rbp", "rbp_resid"}
    assert ten <= set(ragrade.evaluate(qrels, run, "all_trec", profile="trec_eval").per_query.columns)
    assert ten <= set(ragrade.evaluate(qrels, run, "all_trec", names="trec_eval").per_query.columns)
    named = ragrade.evaluate(qrels, run, ["all_trec", "rbp"], profile="pytrec_eval").per_query.columns
    assert "rbp" in named and "unj_5" not in named
