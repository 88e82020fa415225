"""The shape of the package (docs/architecture.md): no import circles, the data model's storage read only
through its columnar API, the contract cited from the repository's own docs, lazy top-level imports."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ragrade

SRC = Path(ragrade.__file__).parent
ROOT = SRC.parent.parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(module: str, path: Path) -> set[str]:
    """Every ragrade module ``module`` imports, at the top or inside functions (``if TYPE_CHECKING:``
    blocks excluded: they never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in out if m in MODULES and m != module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_circle_in_the_package():
    graph = {m: _imports(m, p) for m, p in MODULES.items()}
    assert _cycles(graph) == []


def test_the_circle_detector_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


STORAGE = re.compile(r"\.(_offsets|_raw|_codes|_vocab|_values|_units|_qindex|_query_ids|_has_duplicates)\b")


def test_only_data_reads_the_storage_attributes():
    """Qrels and Run are used through their columnar API (offsets, raw_docs, doc_codes, docs_at...)."""
    offenders = []
    for module, path in MODULES.items():
        if module.startswith("ragrade.data"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if STORAGE.search(line.replace("self._", "self.")):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_the_contract_is_cited_from_the_repository():
    """Code, tests and docs cite docs/..., never a specification file outside the repository."""
    offenders = []
    for folder in ("src", "tests", "docs", "bench", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".py", ".md", ".c", ".txt") or path == Path(__file__):
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if re.search(r"\bSPEC\b", line):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}")
    assert offenders == []


def test_importing_ragrade_loads_nothing_heavy():
    code = ("import sys, ragrade; heavy = [m for m in ('numpy', 'pandas', 'pyarrow', 'rich') if m in sys.modules];"
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_every_public_name_resolves():
    for name in ragrade.__all__:
        assert getattr(ragrade, name) is not None, name
    assert callable(ragrade.evaluate) and callable(ragrade.conventions)


def test_the_registry_and_parser_load_without_numpy_and_every_kernel_resolves():
    """Reading the registry (the parser, ``ragrade metrics``) imports no NumPy: kernels are referenced by
    name and imported on first call; every reference names a real function."""
    code = ("import sys; from ragrade.metrics import parse_metric, REGISTRY; parse_metric('ndcg(gain=exp)@10');"
            "print(','.join(m for m in ('numpy', 'pandas', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    from ragrade.metrics import REGISTRY
    from ragrade.metrics.registry import KernelRef

    refs = [k for fam in REGISTRY for k in (fam.kernel, fam.list_kernel) if k is not None]
    assert len(refs) > 50 and all(isinstance(k, KernelRef) for k in refs)
    for ref in refs:
        assert callable(ref.resolve()), ref
        assert ref.resolve().__name__ == ref.name and ref.resolve().__module__ == ref.module


_CLI_MODULES = ("import sys\nfrom ragrade.cli import main\nsys.argv = ['ragrade', *sys.argv[1:]]\n"
                "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
                "print('LOADED', ','.join(m for m in ('numpy', 'pandas', 'pyarrow', 'pyarrow.compute', 'rich') "
                "if m in sys.modules), 'EXIT', code, file=sys.stderr)")


def _cli_loads(*args: str) -> tuple[set[str], str, str]:
    res = subprocess.run([sys.executable, "-c", _CLI_MODULES, *args], capture_output=True, text=True, cwd=ROOT)
    tail = res.stderr.rsplit("LOADED", 1)[-1].split()
    loaded = set(tail[0].split(",")) if tail[0] != "EXIT" else set()
    return loaded - {""}, res.stdout, res.stderr


def test_evaluate_on_small_files_never_imports_pandas():
    """Start-up (issue 11): pandas takes longer to import than ``ragrade evaluate`` on the examples may take
    in all, so the small-input path codes ids without it (ragrade._arrays) and prints from the columns;
    the engine's results do not depend on the way (tests/test_arrays.py). bench/bench_startup.py times it."""
    from ragrade import _ingest

    loaded, out, err = _cli_loads("evaluate", str(ROOT / "examples" / "qrels.tsv"), str(ROOT / "examples" / "run.tsv"),
                                  "-m", "ndcg@10", "-m", "recall@5", "-m", "map", "--per-query")
    assert "0.7175" in out and "EXIT 0" in err
    if not _ingest.has_accel():  # (the CI pass with RAGRADE_NO_ACCEL=1)
        pytest.skip("without the C helper the TREC readers take pyarrow's conversions, which import pandas")
    assert "pandas" not in loaded and "pyarrow.compute" not in loaded
    assert "numpy" in loaded  # (the check itself is live)


def test_the_trec_eval_drop_in_never_imports_pandas(tmp_path):
    """The drop-in's start-up (issue 34, item 4): neither pandas (about a tenth of a second) nor pyarrow (a
    tenth of the drop-in's time at two million rows) is imported by ``ragrade trec_eval``, with or without -q:
    the C tokenizer's ids stay in NumPy buffers (``ragrade.data.Utf8Column``) through ordering and matching, and
    the texts are made from their bytes; the output is trec_eval's either way (tests/compat)."""
    from ragrade import _ingest
    from ragrade.compat import _native

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d9 2 1.0 r\nq2 Q0 d3 1 0.5 r\nq2 Q0 d4 2 0.5 r\n")
    for extra in ([], ["-q"]):
        loaded, out, err = _cli_loads("trec_eval", *extra, "-m", "all_trec", "-c", str(qrels), str(run))
        assert "EXIT 0" in err and "ndcg_cut_10" in out
        if not _ingest.has_accel() or _native.speedups is None:  # (the CI pass with RAGRADE_NO_ACCEL=1)
            pytest.skip("without the C helpers the readers take pyarrow's conversions, which import pandas")
        assert "pandas" not in loaded and "pyarrow" not in loaded, extra  # (the ids stay in NumPy buffers)
        assert "numpy" in loaded  # (the check itself is live)
        # nor what all_trec does not call: the evaluation front end (ragrade.compat's relevance functions load it
        # on first use), the per-query definitions and the preference measures
        unused = {"ragrade.evaluation", "ragrade.compat.relevance", "ragrade.compat.trec_eval_query",
                  "ragrade.compat.trec_eval_prefs"}
        assert not unused & loaded, (extra, unused & loaded)


def test_only_io_writes_delimited_text():
    """File formats live in io/ (issue 33): the ``csv`` module is imported nowhere else; the Result's CSV rows are
    made by io/results.py and written by :func:`ragrade.io.writers.csv_text` (the other rules: tests/test_formats_in_io.py)."""
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("io/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "csv" or n.startswith("csv.") for n in names):
                offenders.append(rel)
    assert offenders == []


def test_help_and_metrics_import_no_numpy():
    for args in (("--help",), ("metrics",)):
        loaded, out, err = _cli_loads(*args)
        assert out and "EXIT 0" in err
        assert not loaded & {"numpy", "pandas", "pyarrow"}, (args, loaded)


def _exception_classes() -> dict[str, str]:
    """Every class of src/ragrade deriving (by name) from an exception or warning class: name -> module."""
    import builtins

    bases_known = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                   and issubclass(getattr(builtins, n), BaseException)}
    found: dict[str, str] = {}
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in SRC.rglob("*.py")}
    changed = True
    while changed:  # subclasses of subclasses, across modules
        changed = False
        for path, tree in trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in found:
                    names = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                             for b in node.bases}
                    if names & (bases_known | set(found)):
                        found[node.name] = str(path.relative_to(SRC))
                        changed = True
    return found


def test_every_exception_class_lives_in_errors_py_and_its_tree():
    """Issue 21, item 7: one module holds every exception class (the internal signals included), and its
    docstring draws each of them."""
    import ragrade.errors as errors

    classes = _exception_classes()
    assert "RagradeError" in classes and "Signal" in classes and "RagradeWarning" in classes
    elsewhere = {name: mod for name, mod in classes.items() if mod != "errors.py"}
    assert not elsewhere, f"exception classes outside errors.py: {elsewhere}"
    doc = errors.__doc__ or ""
    missing = [name for name in classes if name not in doc]
    assert not missing, f"exception classes missing from the tree in errors.py's docstring: {missing}"


# -- leftovers (issue 33, item 8): none kept before 1.0 -----------------------------------------------------

def _is_alias(tree: ast.Module) -> bool:
    """A module kept for an old import path: it swaps itself in ``sys.modules``, or holds nothing but
    imports, ``__all__`` and a docstring."""
    swaps = any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules"
                                                  for t in n.targets) for n in ast.walk(tree))
    body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    only_imports = bool(body) and all(
        isinstance(n, ast.Import | ast.ImportFrom)
        or (isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets))
        for n in body)
    return swaps or only_imports


def test_no_alias_module():
    aliases = [m for m, p in MODULES.items() if p.name != "__init__.py"
               and _is_alias(ast.parse(p.read_text(encoding="utf-8")))]
    assert aliases == []
    assert _is_alias(ast.parse("import sys\nfrom x import y\nsys.modules[__name__] = y\n"))
    assert _is_alias(ast.parse('"""moved"""\nfrom x import y\n__all__ = ["y"]\n'))


def test_no_deprecated_name():
    """No name is kept as a deprecated spelling (version 0.x owes no deprecation period: CHANGELOG.md)."""
    offenders = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("warn") and any(
                    isinstance(a, ast.Name) and a.id in ("DeprecationWarning", "PendingDeprecationWarning")
                    for a in [*node.args, *(k.value for k in node.keywords)]):
                offenders.append(f"{module}:{node.lineno}")
    assert offenders == []
    import ragrade.judges
    import ragrade.scale.spark

    assert not hasattr(ragrade.judges, "JudgeResult") and not hasattr(ragrade.scale.spark, "SparkResult")
    assert not hasattr(ragrade.Result, "to_result")


#: What the repository's root holds (tracked files and folders); anything else is a leftover.
ROOT_ENTRIES = {".ci", ".gitignore", "CHANGELOG.md", "CONTRIBUTING.md", "README.md", "bench", "docs", "examples",
                "mkdocs.yml", "pyproject.toml", "scripts", "setup.py", "src", "tests"}


def test_no_leftover_at_the_repository_root():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    tracked = {line.split("/")[0] for line in out.splitlines() if line}
    assert tracked - ROOT_ENTRIES == set(), "a file at the root that is not part of the project"
    assert (ROOT / "CHANGELOG.md").exists()


def test_functions_nothing_calls_stay_gone():
    """The functions issue 33 found unused are not back (each was checked unused, tests included)."""
    import ragrade.cli._output
    import ragrade.compat.trec_eval
    import ragrade.engine.plan
    import ragrade.io.textfiles
    from ragrade.metrics.params import Param

    gone = [("json_number", ragrade.cli._output), ("split_options", ragrade.engine.plan),
            ("as_path_str", ragrade.io.textfiles), ("good_value", Param),
            ("compute_and_format", ragrade.compat.trec_eval)]
    assert [name for name, where in gone if hasattr(where, name)] == []


# -- size (issue 33): no function over 80 lines, radon's cyclomatic complexity at most 25, everywhere -----------

MAX_LINES = 80
MAX_COMPLEXITY = 25


def test_no_function_over_80_lines():
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                n = node.end_lineno - node.lineno + 1
                if n > MAX_LINES:
                    long.append(f"{module}:{node.lineno} {node.name} ({n} lines)")
    assert long == [], "split these into smaller functions (house III): " + "; ".join(long)


def test_no_function_above_complexity_25():
    """radon's cyclomatic complexity (``radon cc``), every function and method of the tree."""
    from radon.complexity import cc_visit

    complex_ = []
    for module, path in MODULES.items():
        blocks = list(cc_visit(path.read_text(encoding="utf-8")))
        while blocks:
            b = blocks.pop()
            blocks += getattr(b, "closures", [])
            if b.letter in ("F", "M") and b.complexity > MAX_COMPLEXITY:
                complex_.append(f"{module}:{b.lineno} {b.fullname} ({b.complexity})")
    assert complex_ == [], "simplify these (house III): " + "; ".join(sorted(complex_))
