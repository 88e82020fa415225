"""The layers of the house (issue 21, item 8; docs/architecture.md, "Layers"), checked on every import of
every module: module level, inside functions and under ``TYPE_CHECKING`` alike. A module may import its own
layer and the layers below, never a layer above. ``KNOWN`` lists today's exceptions, each with its owner;
the list may only shrink (a listed import that no longer exists fails the test too, so it is taken off)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ragrade"

#: Lowest first. A module belongs to the longest prefix listed.
LAYERS: list[tuple[str, ...]] = [
    ("ragrade.errors",),
    # kernels.ranking: the tie rule's ranking, pure NumPy, with which data.Run ranks its rows
    # comparison.formatting: number, p-value and escape formatting, a leaf (imports nothing of ragrade) that
    # the engine's slice tables share with the comparison tables
    ("ragrade._native", "ragrade._accel", "ragrade._ingest", "ragrade._arrays", "ragrade.policies",
     "ragrade.metrics", "ragrade.data", "ragrade.kernels.ranking", "ragrade.comparison.formatting"),
    ("ragrade.kernels", "ragrade.profiles", "ragrade.matching"),
    ("ragrade.io",),
    ("ragrade.engine",),
    ("ragrade.scale", "ragrade.spark", "ragrade.engine.outofcore", "ragrade.engine.combine",
     "ragrade.engine.budget"),
    ("ragrade.evaluation",),
    ("ragrade.llm", "ragrade.judges", "ragrade.compat", "ragrade.retrieval", "ragrade.comparison", "ragrade.fusion",
     "ragrade.profiles.report"),
    ("ragrade.report", "ragrade.gating", "ragrade.assessment", "ragrade.integrations"),
    ("ragrade.cli", "ragrade.__main__"),
]
LAYERS[5] += ("ragrade.spans",)  # character spans (issue 35): with scale/, above the engine
LAYERS[8] += ("ragrade.chunking",)  # compare_chunkings (issue 35): uses comparison/ and report/

# ragrade.options: the declarations of every option (one spec per option: the API's checks, the CLI's types
# and help, the messages), next to the metric parameters it extends (issue 33)
LAYERS[1] += ("ragrade.options",)

# the nuggets work (issue 38): nuggets as ground truth, at the layer of scale/ (docs/architecture.md)
LAYERS[5] = (*LAYERS[5], "ragrade.nuggets")

#: The package facade (lazy names and the version) sits outside the order: anything may read
#: ``ragrade.__version__``, and it imports nothing at import time.
FACADE = "ragrade"

#: (importing module, imported module): today's exceptions, each with the helper that owns the fix.
KNOWN: set[tuple[str, str]] = set()  # none left: retrieve reads topics with io.texts since issue 21
# (nuggets, issue 38) temporary: nuggets/ (layer 5) asks the LLM core, which the layers work moves to a layer <= 4;
# take these off when it lands
KNOWN |= {("ragrade.nuggets.asking", f"ragrade.llm.{m}") for m in ("backends", "base", "budget", "cache", "runner")}
KNOWN |= {("ragrade.nuggets.prompts", "ragrade.llm.tasks")}


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int | None:
    best, rank = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    return rank


def imports(path: Path) -> list[tuple[str, int]]:
    """Every ragrade module ``path`` imports, with the line."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for a in node.names:  # "from pkg import sub" imports the submodule pkg.sub
                sub = f"{base}.{a.name}"
                known = (SRC.parent / Path(*sub.split("."))).with_suffix(".py").exists() or \
                    (SRC.parent / Path(*sub.split("."))).is_dir()
                out.append((sub if known else base, node.lineno))
    return [(m, line) for m, line in out if m == FACADE or m.startswith(FACADE + ".")]


def violations() -> set[tuple[str, str, int]]:
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        me = module_name(path)
        if me == FACADE:
            continue
        mine = layer_of(me)
        assert mine is not None, f"{me} is in no layer: add it to LAYERS (and to docs/architecture.md)"
        for target, line in imports(path):
            if target == FACADE:
                continue
            theirs = layer_of(target)
            assert theirs is not None, f"{me} imports {target}, which is in no layer"
            if theirs > mine:
                found.add((me, target, line))
    return found


def test_no_layer_imports_a_higher_one():
    bad = {(a, b) for a, b, _ in violations()}
    new = sorted(bad - KNOWN)
    assert not new, "imports from a higher layer:\n" + "\n".join(
        f"  {a} -> {b} (line {line})" for a, b, line in sorted(violations()) if (a, b) in new)
    fixed = sorted(KNOWN - bad)
    assert not fixed, f"fixed, take them off KNOWN: {fixed}"


def test_the_facade_imports_nothing_at_import_time():
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert all((n.module if isinstance(n, ast.ImportFrom) else n.names[0].name) in ("__future__", "importlib", "typing")
               for n in top)


def test_no_public_name_is_both_a_function_and_a_subpackage():
    import ragrade

    subpackages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()} | \
        {p.stem for p in SRC.glob("*.py")}
    clash = [n for n in ragrade.__all__ if n in subpackages and callable(getattr(ragrade, n))
             and not isinstance(getattr(ragrade, n), type(ragrade))]
    assert clash == []


def test_every_package_is_in_the_architecture_page():
    text = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted(SRC.iterdir()) if (p / "__init__.py").exists() and f"{p.name}/" not in text]
    missing += [p.name for p in sorted(SRC.glob("*.py")) if p.name != "__init__.py" and p.name not in text]
    assert missing == [], f"docs/architecture.md does not mention {missing}"
