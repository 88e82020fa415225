"""The regression gate: the baseline file, the one-sided tests against the comparison package, and every
exit status of ``ragrade gate`` (0 pass, 1 worse or below a floor, 2 meaningless or bad input)."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.comparison import stats
from ragrade.errors import ParseError
from ragrade.gating import IncomparableError, gate, load_baseline, qrels_fingerprint, save_baseline

N = 120  # queries: enough for tests to have power


def _collection(seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels = {f"q{i:03d}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(N)}
    for i in range(N):
        qrels[f"q{i:03d}"]["d0"] = 2  # every query has a relevant document
    return qrels, rng


def _run(qrels, rng, quality: float):
    """A run that ranks each query's relevant documents first with probability ``quality``."""
    run = {}
    for q, judged in qrels.items():
        docs = list(judged) + [f"x{j}" for j in range(8)]
        good = rng.random() < quality
        key = {d: (judged.get(d, 0) if good else 0) + rng.random() for d in docs}
        run[q] = dict(sorted(key.items(), key=lambda kv: -kv[1]))
    return run


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    qrels, rng = _collection()
    base = _run(qrels, rng, 0.8)
    worse = _run(qrels, rng, 0.3)
    same = {q: dict(v) for q, v in base.items()}
    folder = tmp_path_factory.mktemp("gate")
    qpath = folder / "qrels.tsv"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    paths = {}
    for name, r in {"base": base, "worse": worse, "same": same}.items():
        p = folder / f"{name}.trec"
        ragrade.write_run(ragrade.Run.from_dict(r, name=name), p)
        paths[name] = p
    result = ragrade.evaluate(qpath, paths["base"], ["ndcg@10", "recall@5", "P@5"])
    bpath = save_baseline(result, folder / "baseline.json", ragrade.read_qrels(qpath))
    return {"qrels": qpath, "baseline": bpath, "folder": folder, **paths}


def test_baseline_file_round_trip(data):
    b = load_baseline(data["baseline"])
    raw = json.loads(data["baseline"].read_text())
    assert raw["ragrade_baseline"] == 1 and raw["metrics"] == {"ndcg@10": "ndcg@10", "recall@5": "recall@5",
                                                                 "P@5": "precision@5"}
    assert raw["policies"]["missing_run"] == "zero" and raw["profile"] is None
    assert raw["ragrade_version"] == ragrade.__version__ and raw["created"].endswith("Z")
    again = ragrade.evaluate(data["qrels"], data["base"], ["ndcg@10", "recall@5", "P@5"])
    assert b.per_query.equals(again.per_query)  # exact per-query values
    assert b.qrels["fingerprint"] == qrels_fingerprint(data["qrels"]) and b.qrels["queries"] == N


def test_fingerprint_ignores_format_order_and_id_spelling(tmp_path):
    q = {"q1": {"d1": 1, "d2": 0}, "q2": {"7": 2}}
    tsv = tmp_path / "q.tsv"
    tsv.write_text("q2 0 7 2\nq1 0 d2 0\nq1 0 d1 1\n")
    assert qrels_fingerprint(q) == qrels_fingerprint(tsv) == qrels_fingerprint({"q2": {7: 2.0}, "q1": {"d2": 0, "d1": 1}})
    assert qrels_fingerprint(q) != qrels_fingerprint({"q1": {"d1": 2, "d2": 0}, "q2": {"7": 2}})
    assert qrels_fingerprint([[["a", "b"], ["c"]]]) != qrels_fingerprint([[["a"], ["b", "c"]]])


def test_same_run_passes_with_p_one_half(data):
    g = gate(data["baseline"], data["qrels"], data["same"])
    assert g.passed and g.exit_code == 0
    assert all(v.delta == 0 and v.p_value == 0.5 and not v.worst for v in g.verdicts)


def test_a_worse_run_fails(data):
    g = gate(data["baseline"], data["qrels"], data["worse"])
    assert not g.passed and g.exit_code == 1
    v = g["ndcg@10"]
    assert v.delta < 0 and v.p_value < 0.05 and "worse than the baseline" in v.reasons[0]
    assert v.worst and v.worst[0]["delta"] == min(w["delta"] for w in v.worst) < 0


def test_the_one_sided_p_value_is_half_the_two_sided_test_of_shifted_differences(data):
    b = load_baseline(data["baseline"])
    cand = ragrade.evaluate(data["qrels"], data["worse"], ["ndcg@10"]).per_query["ndcg@10"]
    d = (cand - b.per_query["ndcg@10"]).dropna().to_numpy()
    for test in ("t", "wilcoxon", "randomization", "bootstrap"):
        g = gate(b, data["qrels"], data["worse"], metrics=["ndcg@10"], margins=0.02, test=test, seed=3)
        rng = stats.as_generator(3)
        p2 = float(stats.paired_test(d + 0.02, test, 10_000, rng))
        assert g["ndcg@10"].p_value == pytest.approx(p2 / 2 if (d + 0.02).mean() < 0 else 1 - p2 / 2, abs=1e-12)
    from scipy import stats as sps

    one_sided = sps.ttest_1samp(d + 0.02, 0.0, alternative="less").pvalue  # scipy's own one-sided t-test
    assert gate(b, data["qrels"], data["worse"], metrics=["ndcg@10"], margins=0.02, test="t")["ndcg@10"].p_value \
        == pytest.approx(one_sided, rel=1e-9)


def test_a_large_margin_lets_a_worse_run_pass_and_strict_demands_proof(data):
    g = gate(data["baseline"], data["qrels"], data["worse"], margins={"ndcg@10": 0.9}, metrics=["ndcg@10"])
    assert g.passed
    strict = gate(data["baseline"], data["qrels"], data["same"], metrics=["ndcg@10"], margins=0.0, strict=True)
    assert not strict.passed and "not shown" in strict["ndcg@10"].reasons[0]  # equal is not better than -0
    strict = gate(data["baseline"], data["qrels"], data["same"], metrics=["ndcg@10"], margins=0.05, strict=True)
    assert strict.passed  # identical runs: d + m = m > 0 on every query


def test_floors(data):
    g = gate(data["baseline"], data["qrels"], data["same"], floors={"recall@5": 0.99})
    assert not g.passed and g["recall@5"].reasons == ["below the floor 0.99"] and g["ndcg@10"].passed


def test_meaningless_comparisons_are_refused(data, tmp_path):
    other = tmp_path / "other.tsv"
    other.write_text(data["qrels"].read_text().replace(" 0 d1 ", " 0 d1x "))
    with pytest.raises(IncomparableError, match="qrels differ"):
        gate(data["baseline"], other, data["same"])
    g = gate(data["baseline"], other, data["same"], allow_qrels_change=True)
    assert any("qrels differ" in n for n in g.notes)
    with pytest.raises(IncomparableError, match="not in the baseline"):
        gate(data["baseline"], data["qrels"], data["same"], metrics=["map"])
    with pytest.raises(IncomparableError, match="not in the baseline"):
        gate(data["baseline"], data["qrels"], data["same"], margins={"ndcg@20": 0.1})
    with pytest.raises(IncomparableError, match="profile"):
        gate(data["baseline"], data["qrels"], data["same"], profile="autorag")
    with pytest.raises(IncomparableError, match="no_relevant"):
        gate(data["baseline"], data["qrels"], data["same"], policies={"no_relevant": "zero"})
    raw = json.loads(data["baseline"].read_text())
    raw["policies"]["missing_run"] = "sometimes"
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(IncomparableError, match="missing_run"):
        gate(bad, data["qrels"], data["same"])
    raw = json.loads(data["baseline"].read_text())
    raw["metrics"]["ndcg@10"] = "ndcg(gain=exp)@10"
    bad.write_text(json.dumps(raw))
    g = gate(bad, data["qrels"], data["same"], metrics=["ndcg(gain=exp)@10"])
    assert g["ndcg@10"].definition == "ndcg(gain=exp)@10"  # the stored definition is what is computed
    # spelled differently, the same metric is found
    assert gate(data["baseline"], data["qrels"], data["same"], metrics=["precision@5"]).verdicts[0].metric == "P@5"


def test_bad_baseline_files(tmp_path, data):
    p = tmp_path / "b.json"
    for text, msg in [("{", "invalid JSON"), ("[]", "not a ragrade baseline"),
                      (json.dumps({"ragrade_baseline": 99}), "format 99"),
                      (json.dumps({"ragrade_baseline": 1, "metrics": {}}), "malformed")]:
        p.write_text(text)
        with pytest.raises(ParseError, match=msg):
            gate(p, data["qrels"], data["same"])
    with pytest.raises(ParseError, match="no such file"):
        load_baseline(tmp_path / "nothing.json")


def test_markdown_is_a_pr_comment(data):
    md = gate(data["baseline"], data["qrels"], data["worse"], margins={"ndcg@10": 0.01},
              floors={"recall@5": 0.6}).to_markdown()
    assert md.startswith("### ragrade gate: ❌ fail")
    assert "| metric | baseline | candidate | Δ | margin | floor | p | verdict |" in md
    assert "Queries that got most worse" in md and "One-sided Fisher's randomization" in md
    row = next(line for line in md.splitlines() if line.startswith("| ndcg@10 |"))
    assert "[" in row and "0.0100" in row and "❌ worse than the baseline by more than 0.01" in row


# -- the command: every exit status ---------------------------------------------------------------------
def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_cli_save_baseline_then_gate_exit_codes(data, tmp_path):
    b = tmp_path / "baseline.json"
    r = _cli("evaluate", data["qrels"], data["base"], "-m", "ndcg@10", "-m", "recall@5", "--save-baseline", b)
    assert r.exit_code == 0 and "baseline saved" in r.stderr and load_baseline(b).run == "base"
    # 0: the same run
    r = _cli("gate", b, data["qrels"], data["same"])
    assert r.exit_code == 0 and "PASS" in r.stdout
    # 1: a worse run, as a PR comment written to a file too
    out = tmp_path / "comment.md"
    r = _cli("gate", b, data["qrels"], data["worse"], "--margin", "ndcg@10=0.01", "--format", "markdown", "-o", out)
    assert r.exit_code == 1 and r.stdout.startswith("### ragrade gate: ❌ fail") and out.read_text() == r.stdout
    assert "gate failed: ndcg@10" in r.stderr
    # 1: a floor
    r = _cli("gate", b, data["qrels"], data["same"], "--min", "recall@5=0.99", "--format", "json")
    body = json.loads(r.stdout)
    assert r.exit_code == 1 and body["exit_code"] == 1 and body["metrics"][1]["verdict"] == "fail"
    # 0: a worse run inside a generous margin for every metric
    r = _cli("gate", b, data["qrels"], data["worse"], "--margin", "0.9", "--test", "t")
    assert r.exit_code == 0
    # 2: other qrels, unless allowed
    other = tmp_path / "other.tsv"
    other.write_text(data["qrels"].read_text() + "q000 0 unseen 0\n")  # one more judgment, scores unchanged
    r = _cli("gate", b, other, data["same"])
    assert r.exit_code == 2 and "cannot compare " in r.stderr and ": the qrels differ" in r.stderr and r.stdout == ""
    r = _cli("gate", b, other, data["same"], "--allow-qrels-change", "--format", "markdown")
    assert r.exit_code == 0 and "the qrels differ" in r.stdout
    # 2: a metric not in the baseline, another profile, a malformed option, a missing file
    for args, msg in [(["-m", "map"], "not in the baseline"), (["--min", "P@5=0.5"], "not in the baseline"),
                      (["--profile", "ragas"], "profile"), (["--margin", "ndcg@10=x"], "METRIC=NUMBER"),
                      (["--min", "0.5"], "METRIC=NUMBER")]:
        r = _cli("gate", b, data["qrels"], data["same"], *args)
        assert r.exit_code == 2 and msg in r.stderr, (args, r.stderr)
    r = _cli("gate", tmp_path / "missing.json", data["qrels"], data["same"])
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_junk_arguments_raise_ragrade_errors_only(data):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from ragrade.errors import RagradeError

    b = load_baseline(data["baseline"])
    junk = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=8),
                     st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
                     st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(["ndcg@10", "P@5", "*"])),
                                     st.one_of(st.floats(allow_nan=True), st.text(max_size=3), st.none()),
                                     max_size=3))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                     HealthCheck.function_scoped_fixture])
    @given(junk, junk, junk, junk)
    def check(metrics, margins, floors, alpha):
        with contextlib.suppress(RagradeError):
            gate(b, data["qrels"], data["same"], metrics=metrics, margins=margins, floors=floors,
                 alpha=alpha if isinstance(alpha, float) else 0.05, n_resamples=50, test="t")

    check()
