"""Every option validated from its one declaration (issue 33, "Bugs look like bugs" and "Options declared once"):
bad values generated from the declarations of ``ragrade.options`` are refused by every public function and
every command that takes the option, before any work, with a message naming the option as the caller writes
it (``n_resamples`` from Python, ``--resamples`` on the command line); never an ``InternalError``, never a
traceback. The declarations themselves are checked as the metric parameters' are (each refuses its bad
values, takes its default)."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import ragrade
import ragrade.assessment
import ragrade.report
from ragrade import options as o
from ragrade.cli import main
from ragrade.cli._options import OptionChoice, OptionType
from ragrade.errors import InternalError, PolicyError, RagradeError, UnknownNameError
from ragrade.report.prepare import metric_at_k

EX = Path(__file__).resolve().parents[1] / "examples"
Q, R, D = str(EX / "qrels.tsv"), str(EX / "run.tsv"), str(EX / "run_dense.tsv")
QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d4": 1.0, "d3": 0.5}}
RUN2 = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 1.0}}

#: Every declaration of the registry, and the ones declared to a function of their own.
DECLARED = list({id(s): s for s in (*o.OPTIONS.values(), o.GATE_TEST, o.SOME_METRICS, o.PLOT_FORMAT, o.QRELS_OBJECT,
                                    o.RUN_OBJECT, o.STEP, o.CV, o.PARAMS, o.MAX_FAILED, o.TIMEOUT, o.CONCURRENCY,
                                    o.LLM_SEED, o.BASE_URL, o.MARGIN, o.FLOOR, o.HOLE_THRESHOLD, o.KS)}.values())


@pytest.mark.parametrize("spec", DECLARED, ids=[f"{s.name}{s.flag or ''}" for s in DECLARED])
def test_each_declaration_refuses_its_bad_values_and_takes_its_default(spec):
    assert spec.bad_values(), spec.name
    for bad in spec.bad_values():
        with pytest.raises((ragrade.InputError, PolicyError)) as info:
            spec.check(bad)
        assert spec.name in str(info.value), (spec.name, bad, str(info.value))
    if spec.default is not None and spec.validator is None:
        assert spec.check(spec.default) == spec.default
    with o.spelling("cli"):
        for text in spec.bad_texts():
            with pytest.raises((ragrade.InputError, PolicyError)) as info:
                spec.parse(text)
            assert (spec.flag or "--" + spec.name.replace("_", "-")) in str(info.value), (spec.name, text)


def _valid(tmp: Path) -> dict[str, tuple[object, tuple, dict]]:
    """Each public function with a call that works (the bad value replaces one of its keywords)."""
    res = ragrade.evaluate(QRELS, RUN, ["P@1", "ndcg@2"])
    base = ragrade.save_baseline(res, tmp / "baseline.json", QRELS)
    three = (QRELS, {"a": RUN, "b": RUN2}, ["P@1"])
    return {
        "evaluate": (ragrade.evaluate, (QRELS, RUN, ["P@1"]), {}),
        "compare": (ragrade.compare, three, {"n_resamples": 50}),
        "compare_scores": (ragrade.comparison.compare_scores,
                           ({"a": res.per_query, "b": res.per_query},), {"n_resamples": 50}),
        "gate": (ragrade.gate, (base, QRELS, RUN2), {"n_resamples": 50}),
        "plan": (ragrade.plan, three, {"delta": 0.1}),
        "conventions": (ragrade.conventions, (QRELS, RUN, ["P@1"]), {}),
        "report.render_html": (ragrade.report.render_html, three, {"plots": False, "n_resamples": 50}),
        "report.write_plots": (ragrade.report.write_plots, (tmp / "plots", *three), {"n_resamples": 50}),
        "metric_at_k": (metric_at_k, (QRELS, {"a": RUN, "b": RUN2}, "P", [1, 2]), {}),
        "assessment.agreement": (ragrade.assessment.agreement, (QRELS, QRELS), {}),
        "optimize_fusion": (ragrade.optimize_fusion, (QRELS, {"a": RUN, "b": RUN2}, "wsum"), {"metric": "P@1"}),
        "fuse": (ragrade.fuse, ({"a": RUN, "b": RUN2},), {}),
        "write_run": (ragrade.write_run, (ragrade.Run.from_dict(RUN), tmp / "r.tsv"), {}),
        "write_qrels": (ragrade.write_qrels, (ragrade.Qrels.from_dict(QRELS), tmp / "q.tsv"), {}),
        "read_run": (ragrade.read_run, (R,), {}),
        "load_baseline": (ragrade.load_baseline, (base,), {}),
        "Evaluator": (ragrade.Evaluator, (QRELS, ["P@1"]), {}),
    }


def _names_taken(func: object) -> list[str]:
    """The declared keywords ``func`` takes: its parameters with a declaration, and when it gathers keywords
    (``**options``) the comparison's and the evaluation's."""
    target = func.__init__ if inspect.isclass(func) else func  # type: ignore[misc]
    names = list(o.declarations(target))
    params = inspect.signature(target).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        names += [n for n in (*o.COMPARISON_OPTIONS, "profile", "matcher", "max_memory", "names", "rel_level",
                              *o.POLICY_OPTIONS) if n not in names]
    return names


def test_every_public_function_goes_through_the_boundary():
    """Each public function binds and checks its arguments at the edge (``options.public`` or
    ``errors.boundary``): the function seen is the boundary's wrapper of the one written."""
    functions = {n: getattr(ragrade, n) for n in ragrade.__all__ if inspect.isfunction(getattr(ragrade, n))}
    assert len(functions) > 20
    bare = [n for n, f in functions.items() if not hasattr(f, "__wrapped__")]
    assert sorted(bare) == sorted(WITHOUT_BOUNDARY), bare  # the list only shrinks: take a name off when it is done


#: Public functions not yet behind the boundary, with the helper that owns them (the list only shrinks).
WITHOUT_BOUNDARY: dict[str, str] = {}


@pytest.mark.parametrize("name", ["evaluate", "compare", "compare_scores", "gate", "plan", "conventions",
                                  "report.render_html", "report.write_plots", "metric_at_k",
                                  "assessment.agreement", "optimize_fusion", "fuse", "write_run", "write_qrels",
                                  "read_run", "load_baseline", "Evaluator"])
def test_bad_values_from_the_declarations_are_refused_by_every_public_function(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    func, args, kwargs = _valid(tmp_path)[name]
    target = func.__init__ if inspect.isclass(func) else func  # type: ignore[misc]
    declared = {**{n: o.OPTIONS[n] for n in _names_taken(func) if n in o.OPTIONS}, **o.declarations(target)}
    assert declared, name
    sig = inspect.signature(target)
    for keyword, spec in declared.items():
        if keyword in sig.parameters and sig.parameters[keyword].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD \
                and list(sig.parameters).index(keyword) - (1 if "self" in sig.parameters else 0) < len(args):
            continue  # a positional argument of the valid call (the junk tests feed those)
        for bad in spec.bad_values():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    func(*args, **{**kwargs, keyword: bad})
                except InternalError as exc:  # pragma: no cover - the failure this test exists for
                    raise AssertionError(f"{name}({keyword}={bad!r}): {exc}") from exc
                except UnknownNameError:
                    continue
                except RagradeError as exc:
                    assert keyword in str(exc) or spec.name in str(exc), (name, keyword, bad, str(exc))
                    continue
            raise AssertionError(f"{name}({keyword}={bad!r}) was accepted")


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(main)
    return [(n, main.get_command(ctx, n)) for n in main.list_commands(ctx)]  # type: ignore[misc]


#: A command line that parses (the bad option is added to it; parsing stops before any work).
BASE = {
    "evaluate": ["evaluate", Q, R, "-m", "P@5"], "compare": ["compare", Q, R, D, "-m", "P@5"],
    "report": ["report", Q, R, D, "-m", "P@5", "-o", "r.html"], "plot": ["plot", Q, R, D, "-m", "P@5", "-o", "p"],
    "gate": ["gate", "b.json", Q, R], "plan": ["plan", Q, R, D, "-m", "P@5", "--delta", "0.1"],
    "conventions": ["conventions", Q, R, "-m", "ap"], "agreement": ["agreement", Q, Q],
    "fuse": ["fuse", R, D, "-o", "f.tsv"], "judge": ["judge", str(EX / "judge.jsonl")],
    "assess": ["assess", R, "--queries", str(EX / "topics.tsv"), "--corpus", str(EX / "corpus.jsonl")],
    "retrieve": ["retrieve", "m:f", "--queries", str(EX / "topics.tsv"), "-o", "o.tsv"],
    "chunking": ["chunking", str(EX / "chunking"), "spans.jsonl"],
    "synthesize": ["synthesize", str(EX / "corpus.jsonl"), "-n", "1", "-o", "set"],
    "traces": ["traces", str(EX / "traces.jsonl"), "--qrels", str(EX / "traces_qrels.tsv"), "-m", "recall@5"],
}


@pytest.mark.parametrize(("name", "cmd"), _commands(), ids=[n for n, _ in _commands()])
def test_bad_values_from_the_declarations_are_refused_by_every_command(tmp_path, monkeypatch, name, cmd):
    monkeypatch.chdir(tmp_path)
    declared = [p for p in cmd.params if isinstance(p, click.Option) and isinstance(p.type, OptionType | OptionChoice)]
    if not declared:
        return
    assert name in BASE, f"give {name} a command line that parses in BASE"
    runner = CliRunner()
    for p in declared:
        spec = p.type.spec
        flag = p.opts[-1]
        texts = spec.bad_texts() if isinstance(p.type, OptionType) else ["not-a-choice"]
        for text in texts:
            out = runner.invoke(main, [*BASE[name], flag, text])
            err = out.stderr if hasattr(out, "stderr") else out.output
            assert out.exit_code == 2, (name, flag, text, out.output)
            assert "Traceback" not in out.output and err.startswith("error: "), (name, flag, text, err)
            assert flag in err or spec.name in err or "invalid choice" in err.lower(), (name, flag, text, err)
