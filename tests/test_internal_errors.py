"""Bugs look like bugs (issue 33, item 1): a bug planted in a kernel, a reader or a command surfaces as
``ragrade.errors.InternalError`` ("this is a bug in ragrade: please report it", the original exception
chained) from the Python API, and as exit status 70 with the whole traceback from the command line; never as
the user's bad input (``InputError``, exit 2). And the grep-level rule behind it: no ``except`` clause in the
tree turns an exception other than the declared input ones into an ``InputError``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.errors import InputError, InternalError, RagradeError
from ragrade.metrics.registry import KernelRef

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS, RUN = str(EXAMPLES / "qrels.tsv"), str(EXAMPLES / "run.tsv")
SRC = Path(__file__).resolve().parents[1] / "src" / "ragrade"


def _planted(kind: type[Exception]):
    def bug(*args, **kwargs):
        raise kind("planted bug")

    return bug


@pytest.fixture
def kernel_bug(monkeypatch):
    """precision's kernel raises an AttributeError (as a typo in a kernel would)."""
    resolve = KernelRef.resolve

    def planted(self):
        return _planted(AttributeError) if self.name == "precision" else resolve(self)

    monkeypatch.setattr(KernelRef, "resolve", planted)


@pytest.fixture
def reader_bug(monkeypatch):
    """The TREC reader raises a TypeError (as a wrong call inside a reader would)."""
    import ragrade.io.trec

    monkeypatch.setattr(ragrade.io.trec, "read_trec_qrels", _planted(TypeError))


def test_the_error_is_not_a_ragrade_error():
    # a caller handling bad input (except RagradeError / InputError / ValueError) does not swallow a bug
    assert not issubclass(InternalError, RagradeError | ValueError | TypeError)
    err = InternalError("evaluate", KeyError("x"))
    assert "this is a bug in ragrade: please report it" in str(err) and "KeyError" in str(err)


def test_a_bug_in_a_kernel_is_an_internal_error(kernel_bug):
    with pytest.raises(InternalError, match="this is a bug in ragrade") as info:
        ragrade.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["P@1"])
    assert isinstance(info.value.__cause__, AttributeError) and "planted bug" in str(info.value.__cause__)
    with pytest.raises(InternalError):  # the same from every entry point that evaluates
        ragrade.compare({"q1": {"d1": 1}}, {"a": {"q1": {"d1": 1.0}}, "b": {"q1": {"d2": 1.0}}}, ["P@1"])


def test_a_bug_in_a_reader_is_an_internal_error(reader_bug):
    with pytest.raises(InternalError) as info:
        ragrade.read_qrels(QRELS, format="trec")
    assert isinstance(info.value.__cause__, TypeError)
    assert not isinstance(info.value, InputError)


def test_bad_input_stays_input_error():
    with pytest.raises(InputError):
        ragrade.read_qrels("/nonexistent/qrels.tsv")
    with pytest.raises(InputError, match="n_resamples"):
        ragrade.compare({"q1": {"d1": 1}}, {"a": {}, "b": {}}, ["P@1"], n_resamples=0)


def test_a_function_of_the_caller_raising_is_the_callers_error():
    from ragrade.errors import boundary, user_code

    @boundary
    def apply(fn):
        return user_code(fn)()

    with pytest.raises(ZeroDivisionError):
        apply(lambda: 1 / 0)


def _run(*args: str):
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stderr if hasattr(result, "stderr") else result.output


def test_the_command_line_exits_70_with_the_traceback(kernel_bug):
    code, err = _run("evaluate", QRELS, RUN, "-m", "P@5")
    assert code == 70, err
    assert "Traceback" in err and "AttributeError: planted bug" in err
    assert err.strip().splitlines()[-1].startswith("error: ") and "this is a bug in ragrade" in err


def test_a_reader_bug_from_the_command_line(reader_bug):
    code, err = _run("evaluate", QRELS, RUN, "-m", "P@5")
    assert code == 70 and "Traceback" in err and "TypeError: planted bug" in err


def test_a_bug_in_a_command_exits_70(monkeypatch):
    import ragrade.cli.evaluate_cmd as evaluate_cmd

    monkeypatch.setattr(evaluate_cmd, "number", _planted(KeyError))
    code, err = _run("evaluate", QRELS, RUN, "-m", "P@5")
    assert code == 70 and "Traceback" in err and "KeyError" in err and "this is a bug in ragrade" in err


def test_bad_input_from_the_command_line_is_still_exit_2():
    code, err = _run("evaluate", QRELS, "/nonexistent/run.tsv", "-m", "P@5")
    assert code == 2 and "Traceback" not in err and err.startswith("error:")


# ------------------------------------------------------------------------------------- the grep-level rule
#: The exceptions an ``except`` clause may turn into an InputError (or one of its subclasses): ragrade's own
#: errors, file errors and the parsers' own parse errors (JSON, CSV, Arrow, SQLite, compression), which
#: readers report with the path and line.
DECLARED = {
    "OSError", "FileNotFoundError", "PermissionError", "IsADirectoryError", "EOFError", "UnicodeDecodeError",
    "UnicodeError", "json.JSONDecodeError", "csv.Error", "pa.ArrowInvalid", "pa.ArrowException",
    "pa.ArrowNotImplementedError", "pa.ArrowTypeError", "pyarrow.ArrowInvalid", "sqlite3.DatabaseError",
    "zlib.error", "lzma.LZMAError", "INPUT_EXCEPTIONS",
    "RecursionError",  # only ever around json.loads here: the JSON parser's nesting limit
    "RagradeError", "InputError", "ParseError", "MetricError", "UnknownNameError", "PolicyError", "OutputError",
}
#: Input error classes (raising one of these in an except clause wraps what the clause caught).
INPUT_ERRORS = {"InputError", "ParseError", "RetrieverConfigError", "IdMismatchError"}
#: Where a conversion of the user's own value is the check: a declaration refusing a value (options.py and
#: the metric parameters), the user's module failing to import (retrieve's --retriever), a user's retriever.
CONVERSIONS = {"options.py", "metrics/params.py", "cli/retrieve_cmd.py"}
#: Conversion calls: a try block made of these alone converts the user's value (a grade, a JSON text, a
#: column of a file), so the ValueError or TypeError it raises is the value refused, named by the clause.
CONVERTERS = {"float", "int", "json.loads", "loads", "to_numeric", "array", "asarray", "astype", "fspath", "cast"}
CONVERSION_ERRORS = {"ValueError", "TypeError", "OverflowError", "pa.ArrowInvalid", "pa.ArrowNotImplementedError"}
#: (file, exception): what another helper still owns. NLTK raises LookupError when its punkt data is not
#: downloaded (the environment, said in the message): compat's helper moves it off InputError.
KNOWN = {("compat/continuous_eval.py", "LookupError")}


def _caught(node: ast.ExceptHandler) -> list[str]:
    if node.type is None:
        return ["<bare>"]
    items = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
    return [ast.unparse(item) for item in items]


def _raises_input_error(body: list[ast.stmt]) -> bool:
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in INPUT_ERRORS:
                return True
    return False


def _is_conversion(body: list[ast.stmt]) -> bool:
    """A try block of at most two statements whose every call is a conversion (:data:`CONVERTERS`)."""
    calls = [n for n in ast.walk(ast.Module(body=body, type_ignores=[])) if isinstance(n, ast.Call)]
    names = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "") for c in calls}
    return len(body) <= 2 and bool(calls) and names <= CONVERTERS


def wrapping_clauses() -> list[tuple[str, int, list[str], bool]]:
    """Every ``except`` clause that raises an input error: where, what it catches, and whether its try block
    is a conversion of a value."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Try):
                out += [(rel, h.lineno, _caught(h), _is_conversion(node.body)) for h in node.handlers
                        if _raises_input_error(h.body)]
    return out


def foreign_wraps() -> list[tuple[str, int, list[str]]]:
    """The clauses that turn something other than a declared input exception into an input error."""
    return [(rel, line, caught) for rel, line, caught, conversion in wrapping_clauses()
            if rel not in CONVERSIONS and not set(caught) <= DECLARED
            and not (conversion and set(caught) <= CONVERSION_ERRORS | DECLARED)
            and not all((rel, c) in KNOWN for c in caught)]


def test_no_input_error_wraps_a_foreign_exception():
    bad = foreign_wraps()
    assert not bad, "\n".join(f"{rel}:{line}: except {', '.join(caught)} -> InputError" for rel, line, caught in bad)


def test_the_scan_sees_a_wrapping_clause():
    tree = ast.parse("try:\n    f()\nexcept ValueError as e:\n    raise InputError('x') from e\n")
    handler = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    assert _raises_input_error(handler.body) and _caught(handler) == ["ValueError"]
