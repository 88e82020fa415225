"""Print the house figures of issue 33 (house III) for a source tree: lines per package, reads of private
fields on other objects, places that build ``engine.join.Joined`` or call ``engine.core.finish`` outside the
engine, format lists and file readers outside the format registry, functions over 60 and 80 lines, radon's
cyclomatic complexity, alias modules.

Run: ``python scripts/house_metrics.py [src/ragrade] [--list]`` (``--list`` names every counted place).

The definitions, so that two runs count alike:

* *private-field read*: an attribute ``x._name`` (one leading underscore, not a dunder) whose ``x`` is not
  ``self``, ``cls`` or ``super()``: a module reading what another object or module keeps to itself;
* *builds Joined*: a call ``Joined(...)`` outside ``engine/``; *calls finish*: a call of ``finish`` imported
  from ``engine.core`` outside ``engine/``;
* *format list*: a tuple, list or set literal of two or more strings, all of them format names or file
  extensions of the registry (``"jsonl"``, ``".parquet"``...), outside ``io/formats/``; *own file reader*:
  an import of ``csv``, ``pyarrow.csv``, ``pyarrow.json``, ``pyarrow.parquet`` or ``pyarrow.feather`` outside
  ``io/`` (a reader that opens a table file itself instead of asking the registry);
* *function size*: ``end_lineno - lineno + 1`` of a ``def`` (its docstring included, decorators not);
* *complexity*: radon's cyclomatic complexity (``radon.complexity.cc_visit``), functions and methods;
* *alias module*: a module other than a package's ``__init__`` that swaps itself in ``sys.modules`` or whose
  body is nothing but imports, ``__all__`` and a docstring (a name kept for old imports).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

FORMAT_WORDS = {"trec", "msmarco", "qid_doc_score", "tsv", "tab", "csv", "jsonl", "json", "ndjson", "parquet", "pq",
                "arrow", "feather", "ipc"}
FORMAT_WORDS |= {"." + w for w in FORMAT_WORDS} | {".txt", ".gz"}
OWN_READERS = {"csv", "pyarrow.csv", "pyarrow.json", "pyarrow.parquet", "pyarrow.feather"}


def package_of(rel: str) -> str:
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else "(top)"


def _private_reads(tree: ast.AST, rel: str) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        v = node.value
        if isinstance(v, ast.Name) and v.id in ("self", "cls"):
            continue
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
            continue
        out.append(f"{rel}:{node.lineno} .{node.attr}")
    return out


def _engine_internals(tree: ast.AST, rel: str) -> tuple[list[str], list[str]]:
    if rel.startswith("engine/"):
        return [], []
    finish_names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("engine.core"):
            finish_names |= {a.asname or a.name for a in node.names if a.name == "finish"}
    joined, finish = [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name == "Joined":
                joined.append(f"{rel}:{node.lineno}")
            elif name in finish_names or (isinstance(f, ast.Attribute) and name == "finish"
                                          and isinstance(f.value, ast.Name) and f.value.id == "core"):
                finish.append(f"{rel}:{node.lineno}")
    return joined, finish


def _format_lists(tree: ast.AST, rel: str) -> tuple[list[str], list[str]]:
    lists, readers = [], []
    if not rel.startswith("io/formats/"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2 and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                words = [e.value.lower() for e in node.elts if isinstance(e, ast.Constant)]
                if all(w in FORMAT_WORDS for w in words):
                    lists.append(f"{rel}:{node.lineno} {tuple(words)}")
    if not rel.startswith("io/"):
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            hit = sorted(set(names) & OWN_READERS)
            if hit:
                readers.append(f"{rel}:{node.lineno} {hit[0]}")
    return lists, readers


def _functions(tree: ast.AST, rel: str) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append((node.end_lineno - node.lineno + 1 if node.end_lineno else 0, f"{rel}:{node.lineno} {node.name}"))
    return out


def _alias(tree: ast.Module, rel: str) -> bool:
    if rel.endswith("__init__.py"):
        return False
    body = list(tree.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    swaps = any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules"
                                                  for t in n.targets) for n in ast.walk(tree))
    only_imports = bool(body) and all(
        isinstance(n, ast.Import | ast.ImportFrom)
        or (isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets))
        for n in body)
    return swaps or only_imports


def _complexity(text: str, rel: str) -> list[tuple[int, str]]:
    try:
        from radon.complexity import cc_visit
    except ImportError:  # pragma: no cover - radon is in the test extra
        return []
    out = []

    def walk(blocks: list) -> None:
        for b in blocks:
            if b.letter in ("F", "M"):
                out.append((b.complexity, f"{rel}:{b.lineno} {b.fullname}"))
            walk(getattr(b, "closures", []))  # (cc_visit lists methods at the top level already)

    walk(cc_visit(text))
    return out


def measure(root: Path) -> dict[str, object]:
    lines: Counter[str] = Counter()
    figures: dict[str, list] = {k: [] for k in ("private", "joined", "finish", "format_lists", "own_readers",
                                                 "functions", "complexity", "aliases")}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines[package_of(rel)] += text.count("\n")
        tree = ast.parse(text)
        figures["private"] += _private_reads(tree, rel)
        joined, finish = _engine_internals(tree, rel)
        figures["joined"] += joined
        figures["finish"] += finish
        fl, rd = _format_lists(tree, rel)
        figures["format_lists"] += fl
        figures["own_readers"] += rd
        figures["functions"] += _functions(tree, rel)
        figures["complexity"] += _complexity(text, rel)
        if _alias(tree, rel):
            figures["aliases"].append(rel)
    return {"lines": lines, **figures}


def main(argv: list[str]) -> None:
    show = "--list" in argv
    args = [a for a in argv if a != "--list"]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "src" / "ragrade"
    m = measure(root)
    lines: Counter[str] = m["lines"]  # type: ignore[assignment]
    print(f"lines per package ({sum(lines.values())} in all):")
    for pkg, n in sorted(lines.items(), key=lambda kv: -kv[1]):
        print(f"  {pkg:<14}{n:>7}")
    functions: list[tuple[int, str]] = m["functions"]  # type: ignore[assignment]
    complexity: list[tuple[int, str]] = m["complexity"]  # type: ignore[assignment]
    rows = [
        ("private-field reads on other objects", m["private"]),
        ("places that build Joined outside engine/", m["joined"]),
        ("calls of engine.core.finish outside engine/", m["finish"]),
        ("format lists outside io/formats/", m["format_lists"]),
        ("table files opened outside io/ (csv, pyarrow.csv/json/parquet/feather imports)", m["own_readers"]),
        ("functions over 60 lines", [f"{w} ({n} lines)" for n, w in sorted(functions, reverse=True) if n > 60]),
        ("functions over 80 lines", [f"{w} ({n} lines)" for n, w in sorted(functions, reverse=True) if n > 80]),
        ("functions of radon complexity >= 25", [f"{w} ({c})" for c, w in sorted(complexity, reverse=True) if c >= 25]),
        ("functions of radon complexity > 25", [f"{w} ({c})" for c, w in sorted(complexity, reverse=True) if c > 25]),
        ("alias modules", m["aliases"]),
    ]
    for title, items in rows:
        print(f"{title}: {len(items)}")  # type: ignore[arg-type]
        if show:
            for item in items:  # type: ignore[union-attr]
                print(f"    {item}")
    top = max(functions)[0] if functions else 0
    worst = max(complexity)[0] if complexity else 0
    print(f"longest function: {top} lines; highest complexity: {worst}")


if __name__ == "__main__":
    main(sys.argv[1:])
