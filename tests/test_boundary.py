"""Errors at the boundary (issue 21, item 7): every public function, given wrong types, wrong values and huge
numbers, raises a RagradeError and nothing else; every command exits with status 2 and one ``error:`` line,
no traceback."""

from __future__ import annotations

import contextlib
import inspect
import itertools
import json
import math
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragrade
import ragrade.assessment
import ragrade.report
from ragrade.cli import main
from ragrade.errors import RagradeError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS_PATH, RUN_PATH = str(EXAMPLES / "qrels.tsv"), str(EXAMPLES / "run.tsv")
QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d4": 1.0, "d3": 0.5}}
RUN2 = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 1.0}}

# (the tests run in their tmp_path: a junk string given as an output path writes nothing elsewhere)
JUNK = [123, -1, 2**70, -(2**70), math.nan, math.inf, None, "", "abc", b"x", [], {}, [1, 2], {"q": 5},
        {"q": {"d": "x"}}, {"q": [None]}, object(), True, 1.5, "P@99999999999999999999"]


def _valid(tmp: Path) -> dict[str, tuple[tuple, dict]]:
    res = ragrade.evaluate(QRELS, RUN, ["P@1", "ndcg@2"])
    base = ragrade.save_baseline(res, tmp / "baseline.json", QRELS)
    spans, chunks = _span_files(tmp)  # character spans (issue 35)
    return {
        "evaluate": ((QRELS, RUN, ["P@1"]), {}),
        "evaluate_diversity": ((QRELS, RUN, ["alpha_ndcg@5"]), {}),
        "compare": ((QRELS, {"a": RUN, "b": RUN2}, ["P@1"]), {"n_resamples": 50}),
        "conventions": ((QRELS, RUN, ["P@1"]), {}),
        "gate": ((base, QRELS, RUN2), {"n_resamples": 50}),
        "save_baseline": ((res, tmp / "b2.json", QRELS), {}),
        "load_baseline": ((base,), {}),
        "read_qrels": ((QRELS_PATH,), {}),
        "read_run": ((RUN_PATH,), {}),
        "write_qrels": ((ragrade.Qrels.from_dict(QRELS), tmp / "q.tsv"), {}),
        "write_run": ((ragrade.Run.from_dict(RUN), tmp / "r.tsv"), {}),
        "parse_metric": (("P@1",), {}),
        "parse_metrics": (("P@[1,2]",), {}),
        "get_profile": (("autorag",), {}),
        "get_matcher": (("fuzzy",), {}),
        "retrieve": ((lambda q: ["d1"], {"q1": "text"}), {}),
        "report.write_html": ((tmp / "r.html", QRELS, {"a": RUN, "b": RUN2}, ["P@1"]),
                              {"plots": False, "n_resamples": 50}),
        "report.render_html": ((QRELS, {"a": RUN, "b": RUN2}, ["P@1"]), {"plots": False, "n_resamples": 50}),
        "report.write_plots": ((tmp / "plots", QRELS, {"a": RUN, "b": RUN2}, ["P@1"]), {"n_resamples": 50}),
        "assessment.parse_grade": (('{"grade": 2}',), {}),
        "assessment.agreement": ((QRELS, QRELS), {}),
        "Evaluator": ((QRELS, ["P@1"]), {}),
        "plan": ((QRELS, {"a": RUN, "b": RUN2}, ["P@1"]), {"delta": 0.1}),
        "fuse": (({"a": RUN, "b": RUN2},), {}),
        "optimize_fusion": ((QRELS, {"a": RUN, "b": RUN2}, "wsum"), {"metric": "P@1"}),
        "read_spans": ((spans,), {"corpus": SPAN_CORPUS}),
        "read_chunks": ((chunks,), {"corpus": SPAN_CORPUS}),
        "read_corpus": ((SPAN_CORPUS,), {}),
        "locate_chunks": ((SPAN_CORPUS, ["alpha beta", "gamma"]), {}),
        "aggregate_passages": (({"q1": {"d1#0": 1.0, "d1#1": 2.0, "d2#0": 0.5}},), {"method": "sump", "hits": 1}),
        "compare_chunkings": ((spans, {"a": chunks, "b": chunks}, {"a": {"q1": ["d1#0"]}, "b": {"q1": ["d1#0"]}}),
                              {"n_resamples": 50}),
        "synthesize": ((SPAN_CORPUS, 1), {"backend": "offline", "cache": False, "mix": "single=1",  # (issue 36)
                                          "min_passage_chars": 10, "passage_chars": 100}),
        "erag_labels": (({"q1": "capital of France"}, {"q1": ["d1", "d2"]}, {"q1": ["Paris"]},  # (issue 38)
                         lambda q, doc: doc.split()[0], "exact_match"),
                        {"passages": {"d1": "Paris is the capital.", "d2": "Lyon is a city."}}),
    }


#: Keywords with wrong types, wrong values and huge numbers, per function.
BAD_KEYWORDS = {
    "evaluate": [{"max_docs": 2**70}, {"ties": 5}, {"max_memory": "lots"}, {"rel_level": 2**70}, {"profile": 3},
                 {"matcher": 3.5}, {"num_docs": -2}, {"upper_grade": "x"}, {"names": None}, {"max_memory": 2**70}],
    "compare": [{"seed": "abc"}, {"seed": -1}, {"n_resamples": 2**70}, {"alpha": "x"}, {"alpha": 2},
                {"confidence": []}, {"test": 5}, {"correction": 5}, {"ci_method": None}, {"baseline": 5},
                {"profile": 3}, {"max_docs": 2**70}],
    "gate": [{"margins": "x"}, {"floors": 5}, {"alpha": 2}, {"seed": "abc"}, {"n_resamples": 2**70},
             {"metrics": 5}, {"test": None}, {"policies": 5}, {"worst": -1}, {"margins": {"P@1": "x"}},
             {"profile": 3}, {"ties": "input"}, {"max_memory": "lots"}],
    "conventions": [{"profiles": 5}, {"top": "x"}, {"matcher": 3.5}],
    "plan": [{"delta": "x"}, {"delta": -1}, {"power": 2}, {"alpha": 0}, {"delta": 2**70}, {"profile": 3}],
    "fuse": [{"method": 5}, {"method": "nosuch"}, {"norm": 3}, {"weights": "x"}, {"weights": [2**70]},
             {"params": 5}, {"profile": "nosuch"}],
    "optimize_fusion": [{"metric": 5}, {"step": 0}, {"step": 2**70}, {"cv": -1}, {"cv": "x"}, {"norm": 3}],
    "report.write_html": [{"ks": [0]}, {"ks": ["x"]}, {"depth": "x"}, {"seed": "abc"}, {"profile": 3}],
}
BAD_KEYWORDS.update({  # character spans (issue 35)
    "read_spans": [{"corpus": 5}, {"corpus": {"d1": 3}}, {"corpus": {}}, {"format": "nosuch"}],
    "read_chunks": [{"corpus": 5}, {"delimiter": 5}, {"name": 5}],
    "locate_chunks": [{"docs": ["zz", None]}, {"floor": 200}, {"floor": "x"}, {"ids": [1]}, {"ordered": "x"}],
    "aggregate_passages": [{"method": "maxq"}, {"hits": 0}, {"hits": 2**70}, {"delimiter": ""}, {"chunks": 5}],
    "compare_chunkings": [{"k": 0}, {"k": "x"}, {"n_resamples": 2**70}, {"corpus": 5}, {"retriever": 5},
                          {"metrics": 5}, {"profile": "chroma"}, {"queries": 5}],
})
BAD_KEYWORDS.update({  # eRAG labels (issue 38)
    "erag_labels": [{"passages": 5}, {"depth": 0}, {"depth": "x"}, {"depth": 2**70}, {"cache": 5}, {"budget": 5},
                    {"nosuch": 1}],
})
BAD_KEYWORDS.update({  # test sets from a corpus (issue 36)
    "synthesize": [{"mix": "x=1"}, {"mix": 5}, {"seed": "x"}, {"personas": [5]}, {"passage_chars": 2**70},
                   {"min_passage_chars": 0}, {"backend": "nosuch"}, {"backend": "semantic"}, {"cache": 5},
                   {"max_candidates": 0}, {"budget": 5}, {"embeddings": True}, {"output": 5}, {"model": "x"},
                   {"max_excerpts": "x"}, {"fuzzy_floor": 500}, {"judge": 5}],
})


def _call(func, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(RagradeError):
            func(*args, **kwargs)


def _function(name: str):
    if name.startswith("report."):
        return getattr(ragrade.report, name.split(".", 1)[1])
    if name.startswith("assessment."):
        return getattr(ragrade.assessment, name.split(".", 1)[1])
    if name == "Evaluator":
        return lambda *a, **k: ragrade.Evaluator(*a, **k).evaluate(RUN)
    return getattr(ragrade, name)


def test_every_public_function_is_covered(tmp_path):
    functions = {n for n in ragrade.__all__ if inspect.isfunction(getattr(ragrade, n))}
    assert functions <= set(NAMES) == set(_valid(tmp_path))


NAMES = ["Evaluator", "assessment.agreement", "assessment.parse_grade", "compare", "conventions", "evaluate",
         "evaluate_diversity", "gate", "get_matcher", "get_profile", "load_baseline", "parse_metric", "parse_metrics",
         "read_qrels", "read_run", "report.render_html", "report.write_html", "report.write_plots", "retrieve",
         "save_baseline", "write_qrels", "write_run", "plan", "fuse", "optimize_fusion"]
NAMES += ["read_spans", "read_chunks", "read_corpus", "locate_chunks", "aggregate_passages",  # (issue 35)
          "compare_chunkings"]
NAMES += ["synthesize"]  # test sets from a corpus (issue 36)
NAMES += ["erag_labels"]  # eRAG's downstream-utility labels (issue 38)


@pytest.mark.parametrize("name", NAMES)
def test_wrong_arguments_raise_ragrade_errors_only(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    valid = _valid(tmp_path)
    args, kwargs = valid[name]
    func = _function(name)
    _call(func, args, kwargs)  # the valid call works (or refuses with a RagradeError)
    for i, junk in itertools.product(range(len(args)), JUNK):
        bad = list(args)
        bad[i] = junk
        _call(func, bad, kwargs)
    for extra in BAD_KEYWORDS.get(name, []):
        _call(func, args, {**kwargs, **extra})
    _call(func, args, {**kwargs, "no_such_option": 1})


def test_the_cases_of_the_issue(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = ragrade.evaluate(QRELS, RUN, ["P@1"])
    cases = [lambda: ragrade.read_qrels(123),
             lambda: ragrade.compare(QRELS, {"a": RUN, "b": RUN2}, ["P@1"], seed="abc"),
             lambda: ragrade.assessment.parse_grade("The grade is 2"),
             lambda: ragrade.evaluate(QRELS, RUN, "recall@99999999999999999999"),
             lambda: ragrade.save_baseline(res, str(tmp_path), QRELS),
             lambda: ragrade.gate({"metrics": {}}, QRELS, RUN)]
    for case in cases:
        with pytest.raises(RagradeError):
            case()


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    err = result.stderr if hasattr(result, "stderr") else result.output
    assert "Traceback" not in result.output + err, result.output + err
    assert not (result.exception and not isinstance(result.exception, SystemExit)), repr(result.exception)
    return result.exit_code, err


def test_the_commands_exit_2_without_a_traceback(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = tmp_path / "baseline.json"
    code, _ = _cli("evaluate", QRELS_PATH, RUN_PATH, "-m", "ndcg@10", "--save-baseline", str(base))
    assert code == 0
    edited = json.loads(base.read_text())
    edited["metrics"] = {"ndcg@10": "recall@99999999999999999999"}
    bad_base = tmp_path / "edited.json"
    bad_base.write_text(json.dumps(edited))
    elsewhere = tmp_path / "other.tsv"
    elsewhere.write_text("".join(f"z{i}\tQ0\td{i}\t1\t1.0\tx\n" for i in range(5)))
    commands = [
        ["evaluate", QRELS_PATH, RUN_PATH, "-m", "recall@99999999999999999999"],
        ["evaluate", QRELS_PATH, RUN_PATH, "-m", "P@5", "--max-memory", "lots"],
        ["evaluate", QRELS_PATH, RUN_PATH, "-m", "P@5", "--profile", "nope"],
        ["evaluate", QRELS_PATH, RUN_PATH, "-m", "P@5", "--matcher", "nope"],
        ["evaluate", QRELS_PATH, RUN_PATH, "-m", "P@5", "--save-baseline", str(tmp_path)],
        ["evaluate", QRELS_PATH, str(tmp_path / "missing.tsv"), "-m", "P@5"],
        ["compare", QRELS_PATH, RUN_PATH, RUN_PATH, "-m", "P@99999999999999999999"],
        ["compare", QRELS_PATH, RUN_PATH, RUN_PATH, "-m", "P@5", "--profile", "nope"],
        ["report", QRELS_PATH, RUN_PATH, RUN_PATH, "-m", "P@5", "-o", str(tmp_path / "r.html"), "--max-memory", "x"],
        ["gate", str(bad_base), QRELS_PATH, RUN_PATH],
        ["gate", str(base), QRELS_PATH, str(elsewhere)],
        ["gate", str(base), QRELS_PATH, RUN_PATH, "--profile", "autorag"],
        ["gate", str(tmp_path), QRELS_PATH, RUN_PATH],
    ]
    for args in commands:
        code, err = _cli(*args)
        assert code == 2, (args, err)
        assert err.strip().splitlines()[-1].startswith("error:") or "Error:" in err, (args, err)


def test_gate_says_when_the_run_shares_no_query_with_the_qrels(tmp_path):
    base = tmp_path / "baseline.json"
    assert _cli("evaluate", QRELS_PATH, RUN_PATH, "-m", "ndcg@10", "--save-baseline", str(base))[0] == 0
    elsewhere = tmp_path / "other.tsv"
    elsewhere.write_text("".join(f"z{i}\tQ0\td{i}\t1\t1.0\tx\n" for i in range(5)))
    code, err = _cli("gate", str(base), QRELS_PATH, str(elsewhere))
    assert code == 2 and "shares no query" in err


# -- character spans (issue 35) ----------------------------------------------------------------------------
SPAN_CORPUS = {"d1": "alpha beta gamma delta", "d2": "epsilon zeta"}


def _span_files(tmp: Path) -> tuple[Path, Path]:
    spans, chunks = tmp / "spans.jsonl", tmp / "chunks.jsonl"
    spans.write_text('{"query": "q1", "doc": "d1", "start": 6, "end": 10}\n', encoding="utf-8")
    chunks.write_text('{"chunk_id": "d1#0", "doc": "d1", "start": 0, "end": 11}\n', encoding="utf-8")
    return spans, chunks
