"""The checklists of docs/architecture.md, done by tests: each adds a toy extension exactly as its checklist
says and checks that every entry point takes it with no other change. A format and a judge backend are
tried in tests/io/test_format_checklist.py and tests/judges/test_backend_checklist.py; a metric and a
profile here.

The metric checklist changes two files of ``src/``: so the test does that, in a copy of the package (a
``REGISTRY += (...)`` block in ``metrics/registry.py``, a kernel in ``kernels/metrics.py``), and runs the
copy in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.profiles import PROFILES, Convention, EngineProfile, ListProfile

SRC = Path(ragrade.__file__).resolve().parent

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d9": 1}, "q3": {"d5": 1, "d6": 1}}
RUN = {"q1": {"d1": 1.0, "d2": 1.0, "d3": 0.5, "d4": 0.2}, "q2": {"d7": 3.0, "d9": 2.0}, "q3": {"d6": 1.0}}


# -- a metric: one REGISTRY += block and one kernel ---------------------------------------------------------

REGISTRY_BLOCK = '''

# -- a test's toy metric (tests/test_checklists.py) --
REGISTRY += (
    _id("toy_double_hits", "Twice the relevant items in the top k (a test's toy).", "2 * hits@k",
        params=(REL,), bounded=False, monotone_in_k=True, kernel=K.toy_double_hits,
        source="tests/test_checklists.py"),
)
'''

KERNEL = '''

def toy_double_hits(m: Metric, j: Judged) -> np.ndarray:
    """A test's toy kernel: twice :func:`hits`."""
    return 2.0 * hits(m, j)
'''

CHECK = textwrap.dedent('''
    import json, sys
    import ragrade
    from ragrade.metrics import parse_metric

    qrels, run = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    m = parse_metric("toy_double_hits@2")
    assert ragrade.parse_metric(str(m)) == m
    toy = ragrade.evaluate(qrels, run, ["toy_double_hits@2", "toy_double_hits(rel=2)@3"])
    hits = ragrade.evaluate(qrels, run, ["hits@2", "hits(rel=2)@3"])
    cmp = ragrade.compare(qrels, {"a": run, "b": run}, ["toy_double_hits@2"], n_resamples=50)
    print(json.dumps({"toy": toy.per_query.to_dict(), "hits": hits.per_query.to_dict(),
                      "compared": float(cmp.summary.loc[("toy_double_hits@2", "a"), "mean"])}))
''')


@pytest.fixture(scope="module")
def with_toy_metric(tmp_path_factory):
    """A copy of the package with the metric checklist done: two files of ``src/`` changed."""
    root = tmp_path_factory.mktemp("toy_metric")
    copy = root / "ragrade"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    registry = copy / "metrics" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    at = text.index("\ndef _index(")
    registry.write_text(text[:at] + REGISTRY_BLOCK + text[at:], encoding="utf-8")
    kernels = copy / "kernels" / "metrics.py"
    kernels.write_text(kernels.read_text(encoding="utf-8") + KERNEL, encoding="utf-8")
    return root


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)


def test_a_metric_added_by_the_checklist_is_taken_everywhere(with_toy_metric):
    got = _run(with_toy_metric, "-c", CHECK, json.dumps(QRELS), json.dumps(RUN))
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    for toy, hits in (("toy_double_hits@2", "hits@2"), ("toy_double_hits(rel=2)@3", "hits(rel=2)@3")):
        assert json.dumps(out["toy"][toy]) == json.dumps({q: 2 * v for q, v in out["hits"][hits].items()})
    assert out["compared"] == pytest.approx(sum(out["toy"]["toy_double_hits@2"].values()) / len(QRELS))
    listed = _run(with_toy_metric, "-m", "ragrade", "metrics")
    assert listed.returncode == 0 and "toy_double_hits" in listed.stdout
    qrels, run = _trec_files(with_toy_metric)
    cli = _run(with_toy_metric, "-m", "ragrade", "evaluate", str(qrels), str(run), "-m", "toy_double_hits@2",
               "--format", "json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["metrics"]["toy_double_hits@2"] == pytest.approx(
        sum(out["toy"]["toy_double_hits@2"].values()) / len(QRELS))


def _trec_files(folder: Path) -> tuple[Path, Path]:
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run = folder / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s} r\n" for q, docs in RUN.items()
                           for i, (d, s) in enumerate(docs.items())))
    return qrels, run


def test_without_the_block_the_metric_is_unknown():
    with pytest.raises(ragrade.RagradeError, match="unknown metric"):
        ragrade.parse_metric("toy_double_hits@2")


# -- a profile: one line in profiles/__init__.py ----------------------------------------------------------

def test_an_engine_profile_added_by_the_checklist_is_taken_everywhere(monkeypatch, tmp_path):
    """``_add(EngineProfile(...))`` is an entry of PROFILES: evaluate, compare and the command line take it."""
    toy = EngineProfile("toy_input_ties", "trec_eval's formulas, ties in input order (a test's toy)",
                        policies={"ties": "input"}, source="tests/test_checklists.py")
    monkeypatch.setitem(PROFILES, toy.name, toy)
    got = ragrade.evaluate(QRELS, RUN, ["ndcg@3", "P@1"], profile="toy_input_ties")
    want = ragrade.evaluate(QRELS, RUN, ["ndcg@3", "P@1"], ties="input")
    assert got.per_query.to_dict() == want.per_query.to_dict()
    assert got.per_query.to_dict() != ragrade.evaluate(QRELS, RUN, ["ndcg@3", "P@1"]).per_query.to_dict()
    cmp = ragrade.compare(QRELS, {"a": RUN, "b": RUN}, ["P@1"], profile="toy_input_ties", n_resamples=50)
    assert cmp.summary.loc[("P@1", "a"), "mean"] == pytest.approx(float(want.means["P@1"]))
    qrels, run = _trec_files(tmp_path)
    res = CliRunner().invoke(main, ["evaluate", str(qrels), str(run), "-m", "P@1", "--profile", "toy_input_ties",
                                    "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["metrics"]["P@1"] == pytest.approx(float(want.means["P@1"]))


def test_a_list_profile_added_by_the_checklist_is_taken_everywhere(monkeypatch):
    """A list profile: the families the peer defines, each a Convention with a rule of kernels/rules.py;
    a family it does not define is refused, naming those it does."""
    from ragrade.kernels.rules import Precision

    toy = ListProfile("toy_list", "a peer counting precision over the whole list (a test's toy)",
                      families={"precision": Convention(Precision(hits="rows", denominator="list"),
                                                        reason="the toy divides by the list length")},
                      source="tests/test_checklists.py")
    monkeypatch.setitem(PROFILES, toy.name, toy)
    truth = [["d1", "d3"], ["d9"]]
    lists = [["d1", "d2", "d3", "d4"], ["d7", "d9"]]
    got = ragrade.evaluate(truth, lists, ["precision"], profile="toy_list")
    assert got.per_query["precision"].tolist() == [0.5, 0.5]
    with pytest.raises(ragrade.MetricError, match="precision"):
        ragrade.evaluate(truth, lists, ["ndcg@3"], profile="toy_list")
    report = ragrade.conventions(truth, lists, ["precision"], profiles=["default", "toy_list"])
    assert "toy_list" in report.table.columns
