"""The trajectory measures computed from traces (OTLP spans made with the SDK, read by read_traces,
evaluated through ragrade.evaluate and the route of traces) equal the slow references on multi-call
trajectories: calls that return nothing, a document returned by three calls, sessions of one call, hops
given as a qrels column; the per-call measures sliced by call index and by turn; compare, report and gate
take trace runs as they take any run."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
import trajectory_reference as ref
from otlp_helpers import provider, write_otlp

import ragrade
from ragrade.metrics import parse_metric

CASES: dict[str, ref.Case] = {
    "q1": ([["d1", "d2"], [], ["d2", "d3", "d1"]], {"d1": (1, 1), "d3": (2, 2), "d9": (1, 3)}),
    "q2": ([["d5", "d6"], ["d6"], ["d7", "d6"]], {"d6": (1, 1), "d7": (0, 2)}),
    "q3": ([["d1", "d2", "d3"]], {"d3": (3, 1)}),
    "q4": ([[]], {"d1": (1, 1)}),
    "q5": ([["x", "a1"], ["a2", "y"]], {"a1": (1, 1), "a2": (1, 1), "b1": (1, 2), "b2": (2, 2)}),
    "q6": ([["b2"], ["y", "a2"]], {"a1": (1, 1), "a2": (1, 1), "b1": (1, 2), "b2": (2, 2)}),
}
METRICS = ["trajectory_recall", "trajectory_recall@1", "hop_success", "calls_to_first_relevant",
           "calls_to_first_relevant(rel=2)", "redundancy", "redundancy@1", "session_dcg@10",
           "session_dcg(b=3,bq=2)@2"]


def _emit(cases: dict[str, ref.Case], path, sessions: bool = False):
    """One trace per question (or, with ``sessions``, one trace per call, the calls of a question one
    session), its calls RETRIEVER spans in time order."""
    tp, exporter = provider()
    tracer = tp.get_tracer("t")
    clock = 1_700_000_000_000_000_000
    for key, (calls, _) in cases.items():
        root = None if sessions else tracer.start_span("agent", start_time=clock)
        if root is not None:
            root.set_attribute("example.id", key)
        for n, docs in enumerate(calls):
            clock += 1_000_000
            ctx = None if root is None else ragrade_context(root)
            turn = tracer.start_span("turn", start_time=clock) if sessions else None
            if turn is not None:
                turn.set_attribute("session.id", key)
                ctx = ragrade_context(turn)
            span = tracer.start_span("retrieve", context=ctx, start_time=clock + 10)
            span.set_attribute("openinference.span.kind", "RETRIEVER")
            span.set_attribute("input.value", f"{key} call {n + 1}")
            for i, d in enumerate(docs):
                span.set_attribute(f"retrieval.documents.{i}.document.id", d)
                span.set_attribute(f"retrieval.documents.{i}.document.score", 10.0 - i)
            span.end(end_time=clock + 500_000)
            if turn is not None:
                turn.end(end_time=clock + 600_000)
        if root is not None:
            root.end(end_time=clock + 900_000)
    return write_otlp(path, [exporter.get_finished_spans()])


def ragrade_context(span):
    from opentelemetry import trace

    return trace.set_span_in_context(span)


def _qrels_file(cases: dict[str, ref.Case], path):
    with path.open("w") as f:
        f.write("query\tdoc\tgrade\thop\n")
        for key, (_, truth) in cases.items():
            for doc, (grade, hop) in truth.items():
                f.write(f"{key}\t{doc}\t{grade}\t{hop}\n")
    return path


def _check(result, cases: dict[str, ref.Case]) -> None:
    for label in METRICS:
        m = parse_metric(label)
        want = []
        for case in cases.values():
            if m.name == "redundancy":
                want.append(ref.redundancy(case, m.k))
            elif m.name == "session_dcg":
                want.append(ref.session_dcg(case, m.k, m.get("b"), m.get("bq")))
            else:
                want.append(getattr(ref, m.name)(case, m.k, m.rel))
        got = result.per_query[label].reindex(list(cases)).to_numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True, err_msg=label)


@pytest.mark.parametrize("sessions", [False, True], ids=["traces", "sessions"])
def test_trajectory_measures_from_traces_equal_the_reference(tmp_path, sessions):
    path = _emit(CASES, tmp_path / "t.jsonl", sessions)
    traces = ragrade.read_traces(path, key="session" if sessions else "example.id")
    assert traces.trajectories.query_ids.tolist() == list(CASES)
    assert traces.trajectories.calls.tolist() == [len(c) for c, _ in CASES.values()]
    qrels = _qrels_file(CASES, tmp_path / "qrels.tsv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ragrade.evaluate(qrels, traces.trajectories, METRICS, hops="hop", no_relevant="skip")
    _check(res, CASES)
    assert res.counts["trajectory_recall"] == 6 and res.counts["calls_to_first_relevant"] == 5
    if sessions:
        assert list(traces.table["turn"]) == [i + 1 for c, _ in CASES.values() for i in range(len(c))]


def test_random_multi_call_traces(tmp_path):
    rnd = random.Random(7)
    docs = [f"d{i}" for i in range(15)]
    cases = {}
    for q in range(40):
        calls = [rnd.sample(docs, rnd.randint(0, 6)) for _ in range(rnd.randint(1, 5))]
        truth = {d: (rnd.choice([0, 1, 1, 2, 3]), rnd.randint(1, 3)) for d in rnd.sample(docs, rnd.randint(1, 6))}
        cases[f"r{q}"] = (calls, truth)
    path = _emit(cases, tmp_path / "r.jsonl")
    traces = ragrade.read_traces(path, key="example.id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ragrade.evaluate(_qrels_file(cases, tmp_path / "q.tsv"), traces, METRICS, hops="hop")
    _check(res, cases)


def test_without_hops_each_relevant_document_is_a_unit(tmp_path):
    path = _emit(CASES, tmp_path / "t.jsonl")
    traces = ragrade.read_traces(path, key="example.id")
    qrels = {k: {d: g for d, (g, _) in truth.items()} for k, (_, truth) in CASES.items()}
    res = ragrade.evaluate(qrels, traces.trajectories, ["trajectory_recall", "hop_success"])
    assert res.per_query.loc["q5", "trajectory_recall"] == 0.5  # a1 and a2 found, b1 and b2 not
    assert res.per_query.loc["q6", "hop_success"] == 0.0
    assert res.per_query.loc["q4", "trajectory_recall"] == 0.0  # its one call returned nothing


def test_per_call_measures_by_call_index_and_turn(tmp_path):
    path = _emit(CASES, tmp_path / "t.jsonl", sessions=True)
    traces = ragrade.read_traces(path, key="session")
    qrels = {k: {d: g for d, (g, _) in truth.items()} for k, (_, truth) in CASES.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ragrade.evaluate(qrels, traces.calls, ["recall@10"])
    sliced = res.by(traces.slices).to_dict()
    assert set(sliced) == {"call_index", "turn"}
    pq = res.per_query["recall@10"]
    for column in ("call_index", "turn"):
        for label, entry in sliced[column].items():
            calls = traces.table.index[traces.table[column].astype(str) == label]
            values = pq.reindex(calls).dropna()
            assert entry["queries"] == len(values)
            assert entry["metrics"]["recall@10"] == pytest.approx(values.mean())
    assert pq.loc["q1/1"] == pytest.approx(1 / 3) and pq.loc["q1/3"] == pytest.approx(2 / 3)


def test_compare_report_and_gate_take_trace_runs(tmp_path):
    a = ragrade.read_traces(_emit(CASES, tmp_path / "a.jsonl"), key="example.id")
    swapped = {k: ([list(reversed(c)) for c in calls], truth) for k, (calls, truth) in CASES.items()}
    b = ragrade.read_traces(_emit(swapped, tmp_path / "b.jsonl"), key="example.id")
    qrels = {k: {d: g for d, (g, _) in truth.items()} for k, (_, truth) in CASES.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = ragrade.compare(qrels, {"a": a.trajectories, "b": b.trajectories}, ["trajectory_recall", "ndcg@10"])
        assert cmp.pairs.loc[("trajectory_recall", "a", "b"), "delta"] == 0.0  # the same documents, reordered
        out = ragrade.report.write_html(tmp_path / "r.html", qrels, {"a": a.calls, "b": b.calls}, ["recall@2"])
        html = out.read_text()
        assert 'id="traces"' in html and "p95" in html
        base = ragrade.save_baseline(ragrade.evaluate(qrels, a.trajectories, ["trajectory_recall"]),
                                     tmp_path / "base.json", qrels)
        verdict = ragrade.gate(base, qrels, b.trajectories)
    assert verdict.exit_code == 0


def test_plain_runs_and_refusals():
    from ragrade.engine.core import Evaluator
    from ragrade.errors import InputError, MetricError

    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    res = ragrade.evaluate(qrels, {"q1": ["a", "x", "a"], "q2": ["y"]}, ["trajectory_recall", "redundancy", "rr"])
    assert res.per_query.loc["q1", "trajectory_recall"] == 0.5  # each query: a trajectory of one call
    assert res.per_query.loc["q1", "redundancy"] == 0.0  # a repeat within one call is not redundant
    with pytest.raises(MetricError, match="trajectories of traces"):
        Evaluator(qrels, ["trajectory_recall"])
    with pytest.raises(InputError, match="default convention"):
        ragrade.evaluate(qrels, {"q1": ["a"]}, ["trajectory_recall"], profile="ragas")
    with pytest.raises(InputError, match="hops"):
        ragrade.evaluate(qrels, {"q1": ["a"]}, ["hop_success"], hops="hop")  # a dict has no hop column
