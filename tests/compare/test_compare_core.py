"""compare_scores / Comparison: alignment, markers, reproducibility, exports."""

from __future__ import annotations

import csv
import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade.comparison import Comparison, compare_scores, run_letters, stats
from ragrade.errors import InputError, RagradeWarning


def _frame(values: np.ndarray, ids: list[str] | None = None) -> pd.DataFrame:
    ids = ids or [f"q{i}" for i in range(len(values))]
    return pd.DataFrame({"ndcg@10": values, "hit_rate@5": (values > 0.5).astype(float)}, index=ids)


@pytest.fixture(scope="module")
def three_runs() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(42)
    a = rng.random(120)
    b = np.clip(a + rng.normal(0.15, 0.1, 120), 0, 1)
    return {"bm25": _frame(a), "dense": _frame(b), "bm25-copy": _frame(a.copy())}


def test_summary_pairs_and_markers(three_runs: dict[str, pd.DataFrame]) -> None:
    cmp = compare_scores(three_runs, n_resamples=2000, seed=1)
    assert isinstance(cmp, Comparison)
    assert cmp.metrics == ["ndcg@10", "hit_rate@5"]
    assert cmp.letters == {"bm25": "a", "dense": "b", "bm25-copy": "c"}
    for metric in cmp.metrics:
        for run, frame in three_runs.items():
            row = cmp.summary.loc[(metric, run)]
            assert row["mean"] == pytest.approx(frame[metric].mean())
            assert row["ci_low"] <= row["mean"] <= row["ci_high"]
            assert row["n"] == 120
    nd = cmp.pair("ndcg@10", "bm25", "dense")
    assert nd["delta"] == pytest.approx(
        three_runs["dense"]["ndcg@10"].mean() - three_runs["bm25"]["ndcg@10"].mean()
    )
    assert nd["significant"] and nd["p_value"] < 0.01 and nd["cohens_dz"] > 1
    assert nd["delta_ci_low"] > 0
    assert nd["wins"] + nd["ties"] + nd["losses"] == 120
    same = cmp.pair("ndcg@10", "bm25", "bm25-copy")
    assert same["p_value"] == 1.0 and not same["significant"]
    assert (same["wins"], same["ties"], same["losses"]) == (0, 120, 0)
    assert cmp.summary.loc[("ndcg@10", "dense"), "marker"] == "ac"
    assert cmp.summary.loc[("ndcg@10", "dense"), "better_than"] == ["bm25", "bm25-copy"]
    assert cmp.summary.loc[("ndcg@10", "bm25"), "worse_than"] == ["dense"]
    assert cmp.summary.loc[("ndcg@10", "bm25"), "marker"] == ""
    assert cmp.summary.loc[("ndcg@10", "dense"), "best"]
    assert len(cmp.pairs) == 2 * 3  # all pairs


def test_baseline_mode_only_compares_with_baseline(three_runs: dict[str, pd.DataFrame]) -> None:
    cmp = compare_scores(three_runs, baseline="dense", n_resamples=500, seed=0)
    assert cmp.baseline == "dense"
    assert {(a, b) for _, a, b in cmp.pairs.index} == {("dense", "bm25"), ("dense", "bm25-copy")}
    assert cmp.pair("ndcg@10", "dense", "bm25")["delta"] < 0
    assert cmp.summary.loc[("ndcg@10", "dense"), "marker"] == "ac"
    assert "against baseline dense" in cmp.description


def test_seed_reproduces_and_changes_resampling(three_runs: dict[str, pd.DataFrame]) -> None:
    kw = {"n_resamples": 300, "ci_method": "resample"}
    one = compare_scores(three_runs, seed=7, **kw)
    two = compare_scores(three_runs, seed=7, **kw)
    other = compare_scores(three_runs, seed=8, **kw)
    pd.testing.assert_frame_equal(one.summary, two.summary)
    pd.testing.assert_frame_equal(one.pairs, two.pairs)
    assert not one.summary["ci_low"].equals(other.summary["ci_low"])


def test_interval_method_auto_switches_at_100_queries(three_runs: dict[str, pd.DataFrame]) -> None:
    """120 queries: the saddlepoint intervals (no randomness); 60 queries: resampled ones (seeded)."""
    big = compare_scores(three_runs, n_resamples=300, seed=7)
    assert big.ci_methods == {"ndcg@10": "saddlepoint", "hit_rate@5": "saddlepoint"}
    sub = {k: v.iloc[:60] for k, v in three_runs.items()}
    small = compare_scores(sub, n_resamples=300, seed=7)
    assert small.ci_methods == {"ndcg@10": "resample", "hit_rate@5": "resample"}
    x = np.column_stack([sub[r]["ndcg@10"] for r in small.runs])
    lo, hi = stats.saddlepoint_ci(three_runs["dense"]["ndcg@10"].to_numpy(), 0.95)
    assert big.summary.loc[("ndcg@10", "dense"), "ci_low"] == pytest.approx(lo, rel=1e-12)
    assert big.summary.loc[("ndcg@10", "dense"), "ci_high"] == pytest.approx(hi, rel=1e-12)
    # resampled: the documented interval stream of the metric group (first child of the seed)
    d = x[:, [1, 2, 2]] - x[:, [0, 0, 1]]
    block = np.column_stack([x, d, np.column_stack([sub[r]["hit_rate@5"] for r in small.runs])])
    ref_lo, ref_hi = stats.bootstrap_ci(block, 300, 0.95, np.random.default_rng(7).spawn(2)[0])
    assert small.summary.loc[("ndcg@10", "dense"), "ci_low"] == pytest.approx(ref_lo[1], rel=1e-12)
    assert small.pair("ndcg@10", "dense", "bm25-copy")["delta_ci_high"] == pytest.approx(ref_hi[5], rel=1e-12)
    assert "saddlepoint approximation" in big.description and "300 resamples, seed 7" in small.description


def test_p_values_equal_the_documented_stream(three_runs: dict[str, pd.DataFrame]) -> None:
    """compare's randomization p-values are stats.randomization_test on the documented child stream."""
    cmp = compare_scores(three_runs, metrics=["ndcg@10"], baseline="bm25", n_resamples=400, seed=3)
    d = np.column_stack(
        [three_runs[r]["ndcg@10"] - three_runs["bm25"]["ndcg@10"] for r in ("dense", "bm25-copy")]
    )
    test_rng = np.random.default_rng(3).spawn(2)[1]
    expected = stats.randomization_test(d, 400, test_rng)
    np.testing.assert_array_equal(cmp.pairs["p_value"].to_numpy(), expected)
    # a metric's numbers do not depend on other metrics scored on the same queries
    both = compare_scores(
        three_runs, metrics=["ndcg@10", "hit_rate@5"], baseline="bm25", n_resamples=400, seed=3
    )
    pd.testing.assert_frame_equal(both.pairs.loc[["ndcg@10"]], cmp.pairs)
    pd.testing.assert_frame_equal(both.summary.loc[["ndcg@10"]], cmp.summary)


@pytest.mark.parametrize("correction", ["bonferroni", "holm", "bh"])
def test_correction_is_applied_per_metric(three_runs: dict[str, pd.DataFrame], correction: str) -> None:
    pytest.importorskip("scipy")
    cmp = compare_scores(three_runs, test="t", correction=correction, n_resamples=200)
    for metric in cmp.metrics:
        sub = cmp.pairs.loc[metric]
        np.testing.assert_allclose(
            sub["p_adjusted"], stats.adjust_pvalues(sub["p_value"].to_numpy(), correction)
        )


def test_queries_are_aligned_by_id_and_missing_ones_dropped_with_warning() -> None:
    a = _frame(np.array([0.1, 0.5, 0.9, 0.3]), ["q1", "q2", "q3", "q4"])
    b = _frame(np.array([0.9, 0.2, 0.6]), ["q3", "q2", "q1"])  # other order, q4 missing
    with pytest.warns(RagradeWarning, match="1 of 4 queries are missing or NaN in some runs only"):
        cmp = compare_scores({"a": a, "b": b}, metrics=["ndcg@10"], n_resamples=100)
    assert cmp.summary.loc[("ndcg@10", "a"), "n"] == 3
    assert cmp.pair("ndcg@10", "a", "b")["delta"] == pytest.approx(
        ((0.6 - 0.1) + (0.2 - 0.5) + (0.9 - 0.9)) / 3
    )
    assert list(cmp.scores["b"].index) == ["q1", "q2", "q3"]


def test_nan_scores_are_left_out_of_that_metric_only() -> None:
    a = _frame(np.array([0.1, np.nan, 0.9, 0.3]))
    b = _frame(np.array([0.2, 0.4, 0.8, 0.3]))
    with pytest.warns(RagradeWarning):
        cmp = compare_scores({"a": a, "b": b}, n_resamples=100)
    assert cmp.summary.loc[("ndcg@10", "a"), "n"] == 3
    assert cmp.summary.loc[("hit_rate@5", "a"), "n"] == 4  # (nan > 0.5) is False -> 0.0


def test_queries_nan_in_every_run_are_dropped_without_warning() -> None:
    a = _frame(np.array([0.1, np.nan, 0.9]))
    b = _frame(np.array([0.2, np.nan, 0.8]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cmp = compare_scores({"a": a, "b": b}, metrics=["ndcg@10"], n_resamples=50)
    assert cmp.summary.loc[("ndcg@10", "a"), "n"] == 2
    assert cmp.mean("ndcg@10", "a") == pytest.approx(0.5)


def test_inputs_are_not_mutated(three_runs: dict[str, pd.DataFrame]) -> None:
    before = {k: v.copy() for k, v in three_runs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compare_scores(three_runs, n_resamples=50)
    for k, v in three_runs.items():
        pd.testing.assert_frame_equal(v, before[k])


def test_result_objects_with_per_query_are_accepted(three_runs: dict[str, pd.DataFrame]) -> None:
    class FakeResult:
        def __init__(self, frame: pd.DataFrame) -> None:
            self.per_query = frame

    cmp = compare_scores({k: FakeResult(v) for k, v in three_runs.items()}, n_resamples=50)
    assert cmp.runs == ["bm25", "dense", "bm25-copy"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "nope"}, "baseline"),
        ({"test": "anova"}, "test must be one of randomization"),
        ({"correction": "sidak"}, "correction"),
        ({"alpha": 1.5}, "alpha"),
        ({"metrics": ["map"]}, "no scores for metric 'map'"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"ci_method": "bca"}, "ci_method must be one of auto"),
        ({"test": "tukey", "correction": "holm"}, "family-wise"),
        ({"confidence": 1.0}, "confidence"),
    ],
)
def test_bad_options_raise_input_error(
    three_runs: dict[str, pd.DataFrame], kwargs: dict, message: str
) -> None:
    with pytest.raises(InputError, match=message):
        compare_scores(three_runs, **kwargs)


def test_needs_two_runs(three_runs: dict[str, pd.DataFrame]) -> None:
    with pytest.raises(InputError, match="at least two"):
        compare_scores({"bm25": three_runs["bm25"]})


def test_run_letters() -> None:
    assert run_letters(3) == ["a", "b", "c"]
    letters = run_letters(28)
    assert letters[25:] == ["z", "aa", "ab"] and len(set(letters)) == 28


# ------------------------------------------------------------------------------------------------ exports
@pytest.fixture(scope="module")
def cmp(three_runs: dict[str, pd.DataFrame]) -> Comparison:
    runs = dict(three_runs)
    runs["a|b_<x>&"] = runs.pop("bm25-copy")
    return compare_scores(runs, n_resamples=300, seed=0)


def test_json_is_strict_and_complete(cmp: Comparison) -> None:
    data = json.loads(cmp.to_json())
    assert data["test"] == "randomization" and data["seed"] == 0
    assert len(data["summary"]) == 2 * 3 and len(data["pairs"]) == 2 * 3
    first = data["pairs"][0]
    assert {"p_value", "p_adjusted", "cohens_dz", "wins", "ties", "losses", "delta_ci_low"} <= set(first)
    assert "cohens_dz" in data["effect_size"]


def test_json_turns_infinite_effect_sizes_into_null() -> None:
    a = _frame(np.array([0.1, 0.2, 0.3]))
    b = _frame(np.array([0.2, 0.3, 0.4]))  # constant difference -> d_z = inf
    data = json.loads(compare_scores({"a": a, "b": b}, metrics=["ndcg@10"], n_resamples=20).to_json())
    assert data["pairs"][0]["cohens_dz"] is None


def test_csv_round_trips(cmp: Comparison) -> None:
    rows = list(csv.DictReader(io.StringIO(cmp.to_csv())))
    assert len(rows) == 6
    row = next(r for r in rows if r["run"] == "dense" and r["metric"] == "ndcg@10")
    assert float(row["mean"]) == cmp.mean("ndcg@10", "dense")
    assert row["better_than"] == "bm25;a|b_<x>&"
    pairs = list(csv.DictReader(io.StringIO(cmp.to_csv("pairs"))))
    assert len(pairs) == 6 and {"p_value", "wins"} <= set(pairs[0])
    with pytest.raises(InputError):
        cmp.to_csv("other")


def test_markdown_escapes_names_and_marks_best(cmp: Comparison) -> None:
    md = cmp.to_markdown()
    assert r"a\|b\_\<x\>&" in md
    dense_line = next(line for line in md.splitlines() if "| dense |" in line)
    assert "**" in dense_line and "<sup>ac</sup>" in dense_line
    header = md.splitlines()[0]
    assert header.count("|") == 5  # '#', run and two metrics


def test_latex_booktabs_bold_superscripts_and_escaping(cmp: Comparison) -> None:
    tex = cmp.to_latex(digits=3)
    for part in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{llrr}"):
        assert part in tex
    dense = next(line for line in tex.splitlines() if line.startswith("b & dense"))
    assert r"\textbf{" in dense and "$^{ac}$" in dense
    assert r"a|b\_\textless{}x\textgreater{}\&" in tex
    assert tex.count(r"\textbf{") == 2  # one best value per metric


def test_latex_caption_mentions_intervals_only_when_the_table_has_them(cmp: Comparison) -> None:
    plain, with_ci = cmp.to_latex(digits=3), cmp.to_latex(digits=3, ci=True)
    assert "CIs" not in plain and r"\caption{Means. " in plain and r"{\scriptsize [" not in plain
    assert "percentile bootstrap CIs" in with_ci and r"{\scriptsize [" in with_ci


def test_rich_table_renders(cmp: Comparison) -> None:
    from rich.console import Console

    console = Console(width=200, record=True, color_system=None)
    console.print(cmp)
    text = console.export_text()
    assert "dense" in text and "ᵃᶜ" in text and "a|b_<x>&" in text


@settings(max_examples=25, deadline=None)
@given(
    st.integers(2, 4),
    st.integers(3, 30),
    st.integers(0, 10_000),
    st.sampled_from(["randomization", "bootstrap"]),
    st.sampled_from([None, "holm", "bh"]),
    st.booleans(),
)
def test_markers_and_best_are_consistent_with_the_pairs(
    n_runs: int, n_queries: int, seed: int, test: str, correction: str | None, with_baseline: bool
) -> None:
    rng = np.random.default_rng(seed)
    base = rng.random(n_queries)
    runs = {
        f"r{i}": pd.DataFrame(
            {"m": np.clip(base + rng.normal(0.1 * i, 0.15, n_queries), 0, 1)},
            index=[f"q{j}" for j in range(n_queries)],
        )
        for i in range(n_runs)
    }
    cmp = compare_scores(
        runs,
        n_resamples=199,
        seed=seed,
        test=test,
        correction=correction,
        baseline="r0" if with_baseline else None,
    )
    means = {r: cmp.mean("m", r) for r in cmp.runs}
    for run in cmp.runs:
        row = cmp.summary.loc[("m", run)]
        assert row["best"] == (means[run] == max(means.values()))
        assert row["ci_low"] <= means[run] + 1e-12 and means[run] - 1e-12 <= row["ci_high"]
        expected = set()
        for (_, a, b), pr in cmp.pairs.iterrows():
            assert pr["p_value"] <= pr["p_adjusted"] + 1e-15 <= 1 + 1e-15
            if pr["significant"] and run in (a, b) and pr["delta"] != 0:
                winner = b if pr["delta"] > 0 else a
                if winner == run:
                    expected.add(a if winner == b else b)
        assert set(row["better_than"]) == expected
        assert row["marker"] == "".join(cmp.letters[o] for o in row["better_than"])


@pytest.mark.parametrize("bad", ["high", np.inf])
def test_non_numeric_or_infinite_scores_name_run_metric_and_query(bad) -> None:
    a = pd.DataFrame({"m": [0.1, 0.2, 0.3]}, index=["q1", "q2", "q3"])
    b = pd.DataFrame({"m": [0.1, bad, 0.3]}, index=["q1", "q2", "q3"], dtype=object)
    with pytest.raises(InputError, match=r"run 'b', metric 'm'.*query 'q2'"):
        compare_scores({"a": a, "b": b}, n_resamples=10)


def test_docstring_examples_run() -> None:
    import doctest

    import ragrade.comparison.core as core

    result = doctest.testmod(core, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# ----------------------------------------------------------------------------- Tukey and significance groups
def test_groups_say_which_runs_cannot_be_told_apart(three_runs: dict[str, pd.DataFrame]) -> None:
    cmp = compare_scores(three_runs, metrics=["ndcg@10"], n_resamples=500)
    groups = cmp.summary.loc["ndcg@10", "group"].to_dict()
    assert groups == {"dense": "A", "bm25": "B", "bm25-copy": "B"}  # the copy equals bm25
    assert cmp.has_groups
    assert "(A)" in next(line for line in cmp.to_markdown().splitlines() if "| dense |" in line)
    assert "share a group letter" in cmp.to_markdown() and "share a group letter" in cmp.to_latex()
    baseline = compare_scores(three_runs, metrics=["ndcg@10"], baseline="bm25", n_resamples=100)
    assert not baseline.has_groups and (baseline.summary["group"] == "").all()
    assert "group letter" not in baseline.to_markdown()


def test_tukey_in_compare_uses_every_run_and_takes_no_correction(three_runs: dict[str, pd.DataFrame]) -> None:
    pytest.importorskip("scipy")
    cmp = compare_scores(three_runs, metrics=["ndcg@10"], test="tukey")
    x = np.column_stack([three_runs[r]["ndcg@10"] for r in cmp.runs])
    expected = stats.tukey_hsd(x)
    for (_, a, b), row in cmp.pairs.iterrows():
        i, j = cmp.runs.index(a), cmp.runs.index(b)
        assert row["p_value"] == row["p_adjusted"] == pytest.approx(expected[i, j])
    assert cmp.pair("ndcg@10", "bm25", "dense")["significant"]
    assert "Tukey's HSD" in cmp.description and "family-wise" in cmp.description
    # against a baseline, the p-values are still those of the family of all pairs
    base = compare_scores(three_runs, metrics=["ndcg@10"], test="tukey", baseline="dense")
    assert base.pair("ndcg@10", "dense", "bm25")["p_value"] == pytest.approx(expected[1, 0])


def test_compare_on_10000_queries_is_fast_enough_to_be_interactive() -> None:
    """Not a timing test: checks the shapes and that the saddlepoint intervals are used at this size."""
    rng = np.random.default_rng(0)
    ids = [f"q{i}" for i in range(10_000)]
    runs = {r: pd.DataFrame({"m": rng.random(10_000), "k": rng.random(10_000)}, index=ids) for r in "xyz"}
    cmp = compare_scores(runs, n_resamples=200)
    assert set(cmp.ci_methods.values()) == {"saddlepoint"}
    assert len(cmp.pairs) == 6 and (cmp.summary["n"] == 10_000).all()
