"""The shape of the comparison and report code: ``ragrade.compare`` is a plain function, and no module of
``ragrade.comparison`` or ``ragrade.report`` takes part in an import circle (function-level and
type-checking imports included)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import ragrade

SRC = Path(ragrade.__file__).resolve().parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    known = set(modules) | {_module_name(p).split(".cpython")[0] for p in [*SRC.rglob("*.c"), *SRC.rglob("*.so")]}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                # "from pkg import submodule" imports the submodule; "from pkg import name" the package
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
                ]
            for t in targets:
                if t in modules and t != name:
                    graph[name].add(t)
    return graph


def _cycles_through(graph: dict[str, set[str]], prefixes: tuple[str, ...]) -> list[list[str]]:
    found = []
    for start in sorted(m for m in graph if m.startswith(prefixes)):
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    found.append([*path, start])
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def test_no_import_circle_through_comparison_or_report() -> None:
    graph = _graph()
    assert "ragrade.comparison.export" in graph and "ragrade.report.html" in graph
    assert _cycles_through(graph, ("ragrade.comparison", "ragrade.report")) == []
    # exports know nothing of the result class, and the report reads no private helper of an export
    assert "ragrade.comparison.result" not in graph["ragrade.comparison.export"]
    assert "ragrade.comparison.export" in graph["ragrade.comparison.result"]


def test_no_private_name_is_imported_across_modules() -> None:
    for path in [*SRC.joinpath("comparison").rglob("*.py"), *SRC.joinpath("report").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ragrade"):
                module_file = node.module.split(".")[-1]
                private = [a.name for a in node.names if a.name.startswith("_") and not module_file.startswith("_")]
                assert private == [], f"{path.name} imports {private} from {node.module}"


def test_compare_is_a_plain_function_that_stays_one() -> None:
    assert inspect.isfunction(ragrade.compare)
    assert ragrade.compare is importlib.import_module("ragrade.comparison").compare
    importlib.import_module("ragrade.comparison.stats")  # importing a submodule must not shadow it
    assert inspect.isfunction(ragrade.compare)
    assert inspect.isclass(ragrade.Comparison)
    assert "ragrade.compare" not in {_module_name(p) for p in SRC.rglob("*.py")}
