"""The scoring port (ragrade.engine.scoring; docs/python-api.md, "The scoring port"): rankings given as judged
hits score as evaluate scores the same rankings, and nothing outside the engine goes around it."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import pytest

import ragrade
from ragrade.engine.scoring import Scorer
from ragrade.errors import InputError, RagradeWarning

SRC = Path(ragrade.__file__).parent
METRICS = ["P@5", "recall@10", "ndcg@10", "map", "mrr", "bpref", "ndcg", "rprec", "success@3", "infAP"]
#: The engine's join tables and crediting step: only engine/ reaches them (the port is the way in).
ENGINE_INSIDE = {"Joined", "finish", "finish_columns", "credited", "kernel_columns", "join_run", "join_dict",
                 "judged_rows", "align", "judged_view", "TruthIndex"}


def collection(seed: int, nq: int = 30) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(nq):
        docs = [f"d{i}" for i in rng.choice(60, 25, replace=False)]
        if q % 7 != 3:  # some queries without ground truth
            qrels[f"q{q}"] = {d: int(g) for d, g in zip(docs[:12], rng.integers(-1, 4, 12), strict=True)}
        if q % 5 != 2:  # some queries not ranked
            run[f"q{q}"] = {d: float(s) for d, s in zip(docs[5:], rng.permutation(20) / 20 + 0.01, strict=True)}
    return qrels, run


def ranked(run: dict) -> dict:
    """The run in rank order (the scores are distinct: no tie rule involved)."""
    return {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])) for q, docs in run.items()}


def hits(ev: ragrade.Evaluator, run: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The judged hits of ``run`` (already in rank order) through the port's own lookup."""
    run = {q: docs for q, docs in run.items()}
    rows, judged = ev.locate(run)
    queries = list(run)
    counts = np.array([len(run[q]) for q in queries], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)))
    owner = np.searchsorted(starts, rows, side="right") - 1
    return judged, rows - starts[owner], counts, queries


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("options", [{}, {"no_relevant": "zero", "missing_run": "zero"},
                                     {"missing_run": "drop"}, {"unjudged": "condensed"}, {"max_docs": 7}])
def test_score_equals_evaluate(seed, options):
    qrels, run = collection(seed)
    run = ranked(run)
    ev = ragrade.Evaluator(qrels, METRICS, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        want = ev.evaluate(run)
        judged, ranks, counts, queries = hits(ev, run)
        got = ev.score(judged, ranks, counts, queries)
        values = ev.score_values(judged, ranks, counts, queries)
    assert got.means == want.means
    assert got.summary.missing_from_run == want.summary.missing_from_run
    assert got.summary.only_in_run == want.summary.only_in_run
    assert got.hole_rate.mean == want.hole_rate.mean
    frame = want.per_query
    where = ev.truth.positions(frame.index.tolist())
    for label in METRICS:
        assert np.array_equal(values[label][where], frame[label].to_numpy(), equal_nan=True), label
    assert ev.scorer.direct == (options.get("no_relevant") == "zero" and options.get("missing_run") == "zero")


def test_values_keep_what_depends_on_the_truth_alone_and_stay_exact():
    qrels, run = collection(5)
    run = ranked(run)
    ev = ragrade.Evaluator(qrels, METRICS, no_relevant="zero", missing_run="zero")
    judged, ranks, counts, queries = hits(ev, run)
    first = ev.score_values(judged, ranks, counts, queries)
    assert ev.scorer.truth_memo  # R, the ideal DCG, ... kept
    again = ev.score_values(judged, ranks, counts, queries)
    fresh = Scorer(ev.index, ev.labels, ev.policies).values(judged, ranks, counts, queries)
    for label in METRICS:
        assert np.array_equal(first[label], again[label]) and np.array_equal(first[label], fresh[label])
    # rows given in any order are credited at their best rank as evaluate credits them
    shuffle = np.random.default_rng(0).permutation(len(judged))
    moved = ev.score_values(judged[shuffle], ranks[shuffle], counts, queries)
    for label in METRICS:
        assert np.array_equal(first[label], moved[label]), label


def test_from_rows_equals_the_evaluator():
    qrels, run = collection(8)
    qrels = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}
    run = ranked(run)
    ev = ragrade.Evaluator(qrels, METRICS, no_relevant="zero", missing_run="zero")
    judged, ranks, counts, queries = hits(ev, run)
    truth = ev.truth
    docs = truth.docs(np.arange(len(truth.grades))).tolist()
    scorer = Scorer.from_rows(truth.query_ids.tolist(), np.diff(truth.offsets), docs, truth.grades, ev.labels,
                              ev.policies)
    got = scorer.values(judged, ranks, counts, queries)
    want = ev.score_values(judged, ranks, counts, queries)
    for label in METRICS:
        assert np.array_equal(got[label], want[label]), label
    assert scorer.result(judged, ranks, counts, queries).means == ev.score(judged, ranks, counts, queries).means


def test_bad_shapes_are_named():
    ev = ragrade.Evaluator({"q1": {"d1": 1}}, ["P@1"])
    with pytest.raises(InputError, match="one of each per ranked query"):
        ev.score([0], [0], [1, 2])
    with pytest.raises(InputError, match="rows counted"):
        Scorer.from_rows(["q"], [2], ["a"], [1.0], ev.labels, ev.policies)


def _imports(tree: ast.AST) -> list[tuple[str, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in (
                "core", "join", "credit"):
            out.append((node.value.id, node.attr))
    return out


def test_nothing_outside_the_engine_reaches_its_join_or_crediting():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.parent.name == "engine":
            continue
        for module, name in _imports(ast.parse(path.read_text())):
            if module.startswith(("ragrade.engine.core", "ragrade.engine.join", "ragrade.engine.credit", "core",
                                  "join", "credit")) and name in ENGINE_INSIDE:
                offenders.append(f"{path.relative_to(SRC)}: {module}.{name}")
    assert not offenders, offenders


#: The consumers that score rankings against a ground truth through the port, each by a name of the port it calls.
PORT_CONSUMERS = {
    "fusion/optimize.py": ("score", "score_values"),
    "compat/pytrec_eval.py": ("scorer",),
    "compat/trec_eval_values.py": ("score_values",),
    "judges/metrics.py": ("Scorer",),  # the judge's verdicts as the truth of the chunks' ranking
    "engine/diversity.py": ("locate", "truth"),  # the judged documents found by the port, subtopics expanded
}


@pytest.mark.parametrize("module", sorted(PORT_CONSUMERS))
def test_the_consumers_score_through_the_port(module):
    tree = ast.parse((SRC / module).read_text())
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "ragrade.engine.scoring"
        for a in n.names}
    assert used & set(PORT_CONSUMERS[module]), module


def test_the_judges_precision_is_the_ports_context_precision():
    """llm_context_precision@k on the verdicts equals the registry's context_precision@k of the same ranking
    evaluated from qrels (default profile), and ragas' epsilon is applied to that value's denominator."""
    from ragrade.judges.metrics import ranked_precision

    verdicts = [[1, 0, 1, 1], [0, 0], [0, 1, 0, 0, 1], [1]]
    flat = np.array([x for v in verdicts for x in v], dtype=float)
    offsets = np.cumsum([0] + [len(v) for v in verdicts])
    qrels = {f"q{i}": {f"c{j}": int(x) for j, x in enumerate(v)} for i, v in enumerate(verdicts)}
    run = {f"q{i}": {f"c{j}": float(len(v) - j) for j in range(len(v))} for i, v in enumerate(verdicts)}
    for k in (None, 2, 3):
        label = "context_precision" if k is None else f"context_precision@{k}"
        want = ragrade.evaluate(qrels, run, [label], no_relevant="zero").per_query[label].to_numpy()
        assert ranked_precision(flat, offsets, k, "default").tolist() == want.tolist()
        ragas = ranked_precision(flat, offsets, k, "ragas")
        hits = {None: 3, 2: 1, 3: 2}[k]  # useful chunks of query 0 in its top k
        assert ragas[0] == pytest.approx(want[0] * hits / (hits + 1e-10), rel=1e-15)
        assert ragas[0] < want[0] and ragas[1] == 0.0


def test_every_evaluation_of_a_run_goes_through_the_port(tmp_path, monkeypatch):
    """Evaluator.evaluate is the port's Scorer.evaluate: an evaluation in memory, each piece out of core
    (max_memory) and the routes score their runs through it."""
    calls = []
    original = Scorer.evaluate

    def counted(self, run, name=None):
        calls.append(name)
        return original(self, run, name)

    monkeypatch.setattr(Scorer, "evaluate", counted)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(30) for j in range(5)))
    rp.write_text("".join(f"q{i} Q0 d{j} {j + 1} {10 - j} r\n" for i in range(30) for j in range(8)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        whole = ragrade.evaluate(str(qp), str(rp), ["ndcg@5", "map"])
        assert len(calls) == 1
        pieces = ragrade.evaluate(str(qp), str(rp), ["ndcg@5", "map"], max_memory="16MiB")
    assert len(calls) >= 2
    assert pieces.means == pytest.approx(whole.means, abs=1e-12)
