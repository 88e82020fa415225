"""Judge meta-evaluation (``ragrade.assessment.metaeval`` and ``ragrade agreement``): Pearson, tau_AP,b,
tau_GAP, kendall@k equal TREC AutoJudge's ``autojudge-evaluate``; Krippendorff's alpha equals the
``krippendorff`` package; bootstrap intervals are seeded. Both references are test dependencies.

``autojudge-evaluate`` downloads NLTK data when imported (through ``autojudge-base``): it runs in a
subprocess whose ``NLTK_DATA`` points at a stub directory written by the test (no network, and the test
process's own NLTK configuration is left alone)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragrade.assessment import metaeval as me
from ragrade.assessment.calibration import agreement
from ragrade.cli import main
from ragrade.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _cases(n_cases: int = 300, seed: int = 0) -> list[dict]:
    """Random system scores with ties (values rounded), run names in random order."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n_cases):
        n = int(rng.integers(3, 25))
        a = np.round(rng.random(n), int(rng.integers(1, 3)))
        b = np.round(a + rng.normal(0, 0.25, n), int(rng.integers(1, 3)))
        names = [f"run{int(i):03d}" for i in rng.permutation(n)]
        cases.append({"a": a.tolist(), "b": b.tolist(), "names": names, "k": int(rng.integers(3, 15))})
    return cases


_REFERENCE_SCRIPT = textwrap.dedent("""
    import json, math, sys
    import autojudge_evaluate.evaluation as ae
    cases = json.load(sys.stdin)
    out = []
    for c in cases:
        # autojudge-evaluate aligns the runs sorted by run id; @k keeps the truth's top k
        order = sorted(range(len(c["names"])), key=lambda i: c["names"][i])
        a = [c["a"][i] for i in order]
        b = [c["b"][i] for i in order]
        ids = [c["names"][i] for i in order]
        top = {r for r, _ in sorted(zip(ids, a), key=lambda t: t[1], reverse=True)[: c["k"]]}
        ak = [x for r, x in zip(ids, a) if r in top]
        bk = [y for r, y in zip(ids, b) if r in top]
        row = {"pearson": ae.correlation(a, b, "pearson"), "kendall": ae.correlation(a, b, "kendall"),
               "spearman": ae.correlation(a, b, "spearman"), "tauap_b": ae.tauap_b(a, b),
               "tau_gap": ae.tau_gap(a, b),
               "kendall_at_k": ae.correlation(ak, bk, "kendall") if len(ak) >= 3 else None}
        out.append({k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v))
                    for k, v in row.items()})
    json.dump(out, sys.stdout)
""")


@pytest.fixture(scope="module")
def autojudge(tmp_path_factory) -> tuple[list[dict], list[dict]]:
    if importlib.util.find_spec("autojudge_evaluate") is None:
        pytest.skip("autojudge-evaluate is not installed (pip install autojudge-evaluate; it is in the test "
                    "extra, so CI installs it)")
    stub = tmp_path_factory.mktemp("nltk_data")
    (stub / "tokenizers" / "punkt").mkdir(parents=True)
    (stub / "corpora" / "stopwords").mkdir(parents=True)
    (stub / "corpora" / "stopwords" / "english").write_text("the\na\nof\n", encoding="utf-8")
    cases = _cases()
    env = {**os.environ, "NLTK_DATA": str(stub)}
    done = subprocess.run([sys.executable, "-c", _REFERENCE_SCRIPT], input=json.dumps(cases), env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return cases, json.loads(done.stdout)


def _close(mine: float, ref: float | None) -> float:
    if ref is None:
        assert np.isnan(mine)
        return 0.0
    return abs(mine - ref)


def test_system_measures_equal_autojudge_evaluate(autojudge) -> None:
    cases, refs = autojudge
    worst = dict.fromkeys(("pearson", "kendall", "spearman", "tauap_b", "tau_gap", "kendall_at_k"), 0.0)
    for case, ref in zip(cases, refs, strict=True):
        got = me.system_measures(case["a"], case["b"], case["names"], case["k"])
        worst["pearson"] = max(worst["pearson"], _close(got["pearson"], ref["pearson"]))
        worst["kendall"] = max(worst["kendall"], _close(got["kendall_tau"], ref["kendall"]))
        worst["spearman"] = max(worst["spearman"], _close(got["spearman"], ref["spearman"]))
        worst["tauap_b"] = max(worst["tauap_b"], _close(got["tau_ap_b"], ref["tauap_b"]))
        worst["tau_gap"] = max(worst["tau_gap"], _close(got["tau_gap"], ref["tau_gap"]))
        if ref["kendall_at_k"] is not None:
            worst["kendall_at_k"] = max(worst["kendall_at_k"], _close(got["kendall_at_k"], ref["kendall_at_k"]))
    assert max(worst.values()) < 1e-12, worst


def test_krippendorff_alpha_equals_the_krippendorff_package() -> None:
    kd = pytest.importorskip("krippendorff", reason="krippendorff is a test dependency (test extra)")
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(200):
        n = int(rng.integers(5, 80))
        a = rng.integers(0, int(rng.integers(2, 5)), size=n)
        b = np.clip(a + rng.integers(-1, 2, size=n), 0, None)
        if rng.random() < 0.3:  # a scale with a gap: grades 0, 1, 3
            a, b = np.where(a == 2, 3, a), np.where(b == 2, 3, b)
        for level in me.LEVELS:
            ref = kd.alpha(reliability_data=[a, b], level_of_measurement=level)
            worst = max(worst, abs(me.krippendorff_alpha(a, b, level) - ref))
    assert worst < 1e-12


def test_weighted_alpha_equals_repeated_units() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 4, 30), rng.integers(0, 4, 30)
    w = rng.integers(1, 4, 30)
    for level in me.LEVELS:
        assert me.krippendorff_alpha(a, b, level, w) == pytest.approx(
            me.krippendorff_alpha(np.repeat(a, w), np.repeat(b, w), level), abs=1e-12)


def test_definitions_on_small_cases() -> None:
    assert me.tau_ap_b([4, 3, 2, 1], [1, 2, 3, 4]) == -1.0
    assert me.tau_ap_b([1, 1, 1], [3, 2, 1]) == pytest.approx((0.0 + -1.0) / 2)  # a truth tie is a disagreement
    assert me.tau_gap([1, 1, 1], [3, 2, 1]) != me.tau_gap([1, 1, 1], [3, 2, 1])  # NaN: every pair tied
    # a swap across a small gap costs less than the same swap across a large one
    assert me.tau_gap([10, 9, 8.9, 0], [10, 8.9, 9, 0]) > me.tau_gap([10, 9, 1, 0], [10, 1, 9, 0])
    assert me.kendall_at_k([4, 3, 2, 1], [4, 3, 1, 2], k=2) == 1.0
    assert me.kendall_at_k([4, 3, 2, 1], [4, 3, 1, 2], k=10) == pytest.approx(2 / 3)
    assert me.krippendorff_alpha([1, 1], [1, 1]) != me.krippendorff_alpha([1, 1], [1, 1])
    with pytest.raises(InputError):
        me.krippendorff_alpha([0, 1], [1, 0], "ratio")
    with pytest.raises(InputError):
        me.top_k([1, 2], 0)


def test_bootstrap_intervals_are_seeded_and_cover_the_estimate() -> None:
    rng = np.random.default_rng(3)
    ref = rng.random((60, 6)) + np.linspace(0, 0.3, 6)
    cand = ref + rng.normal(0, 0.05, ref.shape)
    names = [f"r{i}" for i in range(6)]
    one = me.bootstrap_systems(ref, cand, names, n_resamples=200, seed=7)
    assert one == me.bootstrap_systems(ref, cand, names, n_resamples=200, seed=7)
    assert one != me.bootstrap_systems(ref, cand, names, n_resamples=200, seed=8)
    point = me.system_measures(ref.mean(axis=0), cand.mean(axis=0), names)
    for key in ("kendall_tau", "spearman", "pearson", "tau_ap_b", "tau_gap", "kendall_at_k"):
        lo, hi = one[f"{key}_ci"]
        assert -1.0 <= lo <= point[key] <= hi <= 1.0, key


def test_agreement_json_has_the_new_keys(tmp_path) -> None:
    qrels = (EXAMPLES / "qrels.tsv").read_text(encoding="utf-8").splitlines()
    # a candidate that lowers every grade of one query in three by one
    cand = []
    for i, line in enumerate(qrels):
        parts = line.split()
        if i % 3 == 0 and parts[-1].isdigit():
            parts[-1] = str(max(0, int(parts[-1]) - 1))
        cand.append(" ".join(parts))
    (tmp_path / "cand.qrels").write_text("\n".join(cand) + "\n", encoding="utf-8")
    runs = [str(EXAMPLES / "run.tsv"), str(EXAMPLES / "run_dense.tsv")]
    out = CliRunner().invoke(main, ["agreement", str(EXAMPLES / "qrels.tsv"), str(tmp_path / "cand.qrels"), *runs,
                                    "-m", "ndcg@10", "--format", "json", "--resamples", "100"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data["krippendorff_alpha"]) == {"nominal", "ordinal", "interval"}
    assert set(data["krippendorff_alpha_ci"]) == {"nominal", "ordinal", "interval"}
    system = data["systems"]["ndcg@10"]
    for key in ("pearson", "tau_ap_b", "tau_gap", "kendall_at_k"):
        assert key in system and f"{key}_ci" in system
    assert "kendall_tau_ci" in system and "spearman_ci" in system
    res = agreement(EXAMPLES / "qrels.tsv", tmp_path / "cand.qrels", n_resamples=100)
    assert res.to_dict()["krippendorff_alpha"]["interval"] == data["krippendorff_alpha"]["interval"]
    lo, hi = data["krippendorff_alpha_ci"]["interval"]
    assert lo <= data["krippendorff_alpha"]["interval"] <= hi
    table = CliRunner().invoke(main, ["agreement", str(EXAMPLES / "qrels.tsv"), str(tmp_path / "cand.qrels"),
                                      *runs, "--resamples", "50", "--format", "markdown"])
    assert table.exit_code == 0 and "tau_GAP" in table.stdout and "Krippendorff" in table.stdout
