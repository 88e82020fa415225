"""scale/ scores every piece through the engine's scoring port (issue 33, "One scoring port").

Out of core and Spark cut an evaluation into pieces of whole queries; each piece is scored by a
:class:`ragrade.scale.pieces.PieceScorer`: the piece's ground truth indexed by an ``Evaluator`` and its run
scored by that evaluator's ``Scorer.evaluate`` (an engine profile: ``evaluate_engine_profile``, which scores
through an ``Evaluator`` too). Nothing in scale/ imports the in-memory executor. Checked here: by reading the
source (imports and names), by counting the port's calls while the executor is made to fail, and by equal
values."""

from __future__ import annotations

import ast
import pickle
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import ragrade
import ragrade.engine.executor as executor
import ragrade.evaluation as evaluation
from ragrade.engine.plan import build_plan
from ragrade.engine.scoring import Scorer
from ragrade.errors import PolicyError, RagradeWarning, UnknownNameError
from ragrade.scale.outofcore import Sizes, evaluate_paths
from ragrade.scale.pieces import PieceScorer

SCALE = Path(ragrade.__file__).parent / "scale"
#: What scale/ must not reach for: the in-memory executor and its entry points.
EXECUTOR = "ragrade.engine.executor"
EXECUTOR_NAMES = {"run_in_memory", "evaluate_in_memory", "piece_runner"}


def executor_uses(path: Path) -> list[str]:
    """Every import of the in-memory executor in ``path`` and every name, attribute or string naming one of its
    entry points (``"line: what"``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            names = {a.name for a in node.names}
            if node.module == EXECUTOR or (node.module == "ragrade.engine" and "executor" in names):
                found.append(f"{node.lineno}: from {node.module} import {', '.join(sorted(names))}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.startswith(EXECUTOR)]
        elif isinstance(node, ast.Name) and node.id in EXECUTOR_NAMES:
            found.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in EXECUTOR_NAMES:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                EXECUTOR in node.value and not node.value.lstrip().startswith(("The ", "How ", "scale/"))):
            found.append(f"{node.lineno}: {node.value[:60]!r}")
    return found


def test_scale_does_not_import_the_in_memory_executor():
    files = sorted(SCALE.rglob("*.py"))
    assert {"outofcore.py", "spark.py", "pieces.py", "combine.py", "merge.py", "budget.py"} <= {f.name for f in files}
    bad = {f.name: uses for f in files if (uses := executor_uses(f))}
    assert not bad, f"scale/ reaches the in-memory executor: {bad}"


def test_the_rule_sees_an_import_of_the_executor(tmp_path):
    """The check above fails on each way a module could reach the executor."""
    for text in ("from ragrade.engine.executor import run_in_memory\n",
                 "from ragrade.engine import executor\n",
                 "import ragrade.engine.executor as ex\n",
                 "def f(m):\n    return m.evaluate_in_memory\n",
                 "x = piece_runner\n"):
        p = tmp_path / "mod.py"
        p.write_text(text)
        assert executor_uses(p), text


def test_the_executor_keeps_no_entry_point_for_pieces():
    """``evaluate_in_memory`` and ``piece_runner`` served only the scale executors: gone with them."""
    assert not hasattr(executor, "evaluate_in_memory")
    assert not hasattr(executor, "piece_runner")


# -- counting the port's calls ----------------------------------------------------------------------------
@pytest.fixture
def port_calls(monkeypatch):
    """The runs the port's ``Scorer.evaluate`` scored (their query counts), the in-memory executor made to
    fail."""
    calls: list[int] = []
    original = Scorer.evaluate

    def counted(self, run, name=None):
        calls.append(getattr(run, "n_queries", -1))
        return original(self, run, name)

    def refused(*args, **kwargs):
        raise AssertionError("a piece went through the in-memory executor")

    monkeypatch.setattr(Scorer, "evaluate", counted)
    monkeypatch.setattr(executor, "run_in_memory", refused)
    monkeypatch.setattr(evaluation, "run_in_memory", refused)
    return calls


def files(tmp_path, n=40, seed=0):
    rng = np.random.default_rng(seed)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"q{i:03d} 0 d{j} {int(rng.integers(0, 4))}\n" for i in range(n) for j in range(6)))
    rp.write_text("".join(f"q{i:03d} Q0 d{j} {r + 1} {float(rng.random()):.4f} r\n"
                          for i in range(n) for r, j in enumerate(rng.permutation(9))))
    return str(qp), str(rp)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        return fn(*args, **kwargs)


METRICS = ["ndcg@5", "map", "P@3", "rr", "recall@[2,5]"]
_RUN_IN_MEMORY = executor.run_in_memory  # the whole evaluated in memory for the values (the fixture refuses it)


def _in_memory(plan):
    return _RUN_IN_MEMORY(plan)


@pytest.mark.parametrize("options", [{}, {"no_relevant": "nan", "ties": "input"}, {"unjudged": "bounds"},
                                     {"profile": "trec_eval"}, {"profile": "ranx"}])
@pytest.mark.parametrize("how", ["memory_qrels", "stream", "partition"])
def test_each_out_of_core_piece_is_scored_by_the_port(tmp_path, port_calls, options, how):
    qp, rp = files(tmp_path)
    plan = build_plan(qp, rp, METRICS, hole_cutoffs=(1, 3), **options)
    want = quiet(lambda: next(iter(_in_memory(plan).values())))
    port_calls.clear()
    report: dict = {}
    got = quiet(evaluate_paths, qp, rp, PieceScorer.of_plan(plan), budget=16 << 20, how=how,
                sizes=Sizes(16 << 20, 300, 7, 4), report=report)
    assert report["pieces"] >= 3
    assert len(port_calls) == report["pieces"]  # one port call per piece (the empty tail included)
    assert sum(port_calls) == len(want.per_query)  # every query scored once
    assert got.per_query.equals(want.per_query) and got.summary == want.summary
    assert got.hole_rate is not None and got.hole_rate.by_k == want.hole_rate.by_k
    assert (got.upper is None) == (want.upper is None)


def test_evaluate_with_max_memory_scores_the_pieces_through_the_port(tmp_path, port_calls):
    qp, rp = files(tmp_path, n=60)
    plan = build_plan(qp, rp, METRICS)
    want = quiet(lambda: next(iter(_in_memory(plan).values())))
    port_calls.clear()
    got = quiet(ragrade.evaluate, qp, rp, METRICS, max_memory="16MiB")
    assert port_calls and sum(port_calls) == 60
    assert got.per_query.equals(want.per_query)


# -- the piece scorer itself ------------------------------------------------------------------------------
def test_the_piece_scorer_checks_its_options_once_and_travels():
    with pytest.raises(UnknownNameError):
        PieceScorer.of_options(["ndcg"], {"no_relevnt": "nan"})
    with pytest.raises(PolicyError):
        PieceScorer.of_options(["ndcg"], {"no_relevant": "sometimes"})
    pieces = PieceScorer.of_options(["ndcg@3", "rbp_cwl"], {"profile": "trec_eval", "ties": "input"})
    assert pieces.profile is not None and pieces.profile.name == "trec_eval"
    assert dict(pieces.settings) == {"ties": "input"}  # the profile is not a policy
    qrels, run = {"a": {"x": 2, "y": 1}, "b": {"z": 1}}, {"a": {"y": 0.9, "x": 0.5}, "b": {"w": 1.0}}
    shipped = pickle.loads(pickle.dumps(pieces))  # as Spark sends it to its tasks
    a, b = quiet(pieces, qrels, run), quiet(shipped, qrels, run)
    assert a.per_query.equals(b.per_query)
    assert a.per_query.equals(quiet(ragrade.evaluate, qrels, run, ["ndcg@3", "rbp_cwl"], profile="trec_eval",
                                    ties="input").per_query)
    # labels and settings given to one call (the pieces told the top grade) replace the scorer's
    pinned = quiet(pieces, qrels, run, [("ndcg@3", pieces.labels[0][1])], {"ties": "docid_asc"})
    assert list(pinned.per_query.columns) == ["ndcg@3"] and pinned.policies.ties == "docid_asc"


# -- a Spark partition, in this process --------------------------------------------------------------------
def test_a_spark_partition_is_scored_by_the_port(port_calls):
    """The function each Spark task runs, called here on two Arrow tables: one port call, the values of an
    evaluation in memory (Spark itself: tests/scale/test_spark.py)."""
    from ragrade.scale import spark as rs

    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1}, "q3": {"e": 1}}
    run = {"q1": {"c": 0.3, "a": 0.9, "x": 0.5}, "q2": {"y": 2.0, "d": 1.0}, "q4": {"z": 1.0}}
    left = pa.table({"query": [q for q, d in qrels.items() for _ in d], "doc": [x for d in qrels.values() for x in d],
                     "grade": [float(g) for d in qrels.values() for g in d.values()]})
    right = pa.table({"query": [q for q, d in run.items() for _ in d], "doc": [x for d in run.values() for x in d],
                      "score": [float(s) for d in run.values() for s in d.values()]})
    left = left.append_column(rs.ORDER, pa.array(np.arange(left.num_rows)))
    right = right.append_column(rs.ORDER, pa.array(np.arange(right.num_rows)))
    labels = ragrade.engine.labels.metric_labels(METRICS)
    options = {"missing_qrels": "ignore"}
    pieces = PieceScorer.of_options(labels, options)
    want = quiet(ragrade.Evaluator(qrels, METRICS, **options).evaluate, run)
    port_calls.clear()
    out = quiet(rs._task(labels, pieces, want.policies, "r"), left, right)
    assert port_calls == [3]  # the partition's run: three queries, scored by the port once
    values = out.slice(0, out.num_rows - 1).to_pandas().set_index("query_id")
    for label in want.per_query.columns:
        np.testing.assert_array_equal(values[label].to_numpy(), want.per_query[label].to_numpy())
