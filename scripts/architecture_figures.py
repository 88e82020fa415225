"""Print the figures of issue 21's table for the source tree: modules and lines per package, places that
route an evaluation, exception classes outside ``errors.py``, private names imported across packages,
functions over 80 lines and the most complex functions (cyclomatic complexity, counted from the AST).

Run: ``python scripts/architecture_figures.py [src/ragrade]``.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter, defaultdict
from pathlib import Path

#: Calls that pick an evaluation path (an executor of the engine or of scale).
ROUTES = {"Evaluator", "evaluate_diversity", "evaluate_large", "evaluate_budgeted", "evaluate_list_profile",
          "evaluate_engine_profile", "evaluate_texts", "_on_spark", "_out_of_core", "run_in_memory"}
#: Modules allowed to call them: the executors themselves and the one dispatcher (``evaluation.py``; before
#: issue 21, ``engine/api.py``'s evaluate held the if-chain and counts as the dispatcher).
EXECUTORS = {"engine/core.py", "engine/lists.py", "engine/texts.py", "engine/diversity.py", "engine/outofcore.py",
             "engine/executor.py", "engine/peer_profiles.py", "evaluation.py", "engine/api.py", "spark.py", "scale"}


def package_of(rel: str) -> str:
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else "(top)"


def module_name(rel: str) -> str:
    mod = rel[:-3].replace("/", ".")
    return "ragrade" + ("" if mod == "__init__" else "." + mod.removesuffix(".__init__"))


def complexity(fn: ast.AST) -> int:
    n = 1
    for node in ast.walk(fn):
        if isinstance(node, ast.If | ast.For | ast.While | ast.AsyncFor | ast.IfExp | ast.ExceptHandler
                      | ast.With | ast.Assert | ast.comprehension | ast.match_case):
            n += 1
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
    return n


def main(root: Path) -> None:
    files = sorted(p for p in root.rglob("*.py"))
    lines: Counter[str] = Counter()
    modules: Counter[str] = Counter()
    routes: list[str] = []
    exceptions: list[str] = []
    private: list[str] = []
    long_functions: list[tuple[int, str]] = []
    complex_functions: list[tuple[int, str]] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        pkg = package_of(rel)
        modules[pkg] += 1
        lines[pkg] += text.count("\n")
        tree = ast.parse(text)
        executor = rel in EXECUTORS or pkg in EXECUTORS
        calls: dict[str, int] = defaultdict(int)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in ROUTES and not executor:
                    calls[name] += 1
            elif isinstance(node, ast.ClassDef) and rel != "errors.py":
                bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                         for b in node.bases]
                if any(b.endswith(("Error", "Exception")) or b == "NotGrouped" for b in bases):
                    exceptions.append(f"{rel}:{node.lineno} {node.name}")
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ragrade"):
                target = node.module.split(".")
                own = module_name(rel).split(".")
                other_pkg = target[1] if len(target) > 1 else ""
                mine = own[1] if len(own) > 1 else ""
                if other_pkg == mine:
                    continue
                if any(p.startswith("_") for p in target[1:]):
                    private.append(f"{rel}: {node.module}")
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{rel}: {node.module}.{alias.name}")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > 80:
                    long_functions.append((size, f"{rel}:{node.lineno} {node.name}"))
                complex_functions.append((complexity(node), f"{rel}:{node.lineno} {node.name}"))
        routes += [f"{rel}: {name} x{n}" for name, n in calls.items()]
    print("modules and lines per package")
    for pkg in sorted(modules):
        print(f"  {pkg:14s} {modules[pkg]:3d} modules {lines[pkg]:6d} lines")
    print(f"  {'total':14s} {sum(modules.values()):3d} modules {sum(lines.values()):6d} lines")
    route_modules = sorted({r.split(":")[0] for r in routes})
    print(f"\nplaces that route an evaluation (outside the executors and the dispatcher): {len(routes)} calls "
          f"in {len(route_modules)} modules, plus the dispatcher")
    for r in routes:
        print("  " + r)
    print(f"\nexception classes outside errors.py: {len(exceptions)}")
    for e in exceptions:
        print("  " + e)
    sub = [p for p in private if not p.split(": ")[1].startswith(("ragrade._arrays", "ragrade._ingest", "ragrade._native",
                                                               "ragrade._accel"))]
    print(f"\nprivate names imported across packages: {len(private)} ({len(sub)} of a subpackage's private "
          f"module or name; the rest are the top-level private helpers _arrays, _ingest, _native)")
    for p in Counter(private).most_common():
        print(f"  {p[0]}" + (f" (x{p[1]})" if p[1] > 1 else ""))
    print(f"\nfunctions over 80 lines: {len(long_functions)}")
    for size, name in sorted(long_functions, reverse=True):
        print(f"  {size:4d} {name}")
    print("\nmost complex functions (cyclomatic complexity)")
    for c, name in sorted(complex_functions, reverse=True)[:8]:
        print(f"  {c:4d} {name}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "src" / "ragrade"))
