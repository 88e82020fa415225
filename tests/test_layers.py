"""The layers of the house (issues 21 and 33; docs/architecture.md, "Layers"), checked on every import of
every module: module level, inside functions and under ``TYPE_CHECKING`` alike, and imports named by
strings. A module may import its own layer and the layers below, never a layer above; no two packages
import each other, directly or around a circle. ``KNOWN`` lists today's exceptions, each with its owner; the
list may only shrink (a listed import that no longer exists fails the test too, so it is taken off).

**Imports named by strings** count as imports: a string constant that names a ragrade module
(``"ragrade.io.texts"``: lazy-name tables, :data:`ragrade.evaluation.ROUTES`) or a module's attribute
(``"ragrade.judges.offline:LexicalJudge"``: the task sets' offline answerers, the backends of
``llm/backends.py``) is an import by the module that holds the string; a kernel named lazily in the metric
registry (``KernelRef``, ``_Kernels``) is an import by the engine, which calls it (the registry is data
read by the parser without NumPy). Every such string must resolve.

Why this test and not import-linter: import-linter's layers and independence contracts see the import
statements only (through grimp); the string references above are what climbed the layers last (the LLM core
naming the assessor's graders), so the test parses them too, and checks them with the same rule.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ragrade"

#: Lowest first. A module belongs to the longest prefix listed.
LAYERS: list[tuple[str, ...]] = [
    ("ragrade.errors",),
    # formatting: number, p-value and escape formatting, a leaf (imports nothing of ragrade) that the
    # engine's slice tables share with the comparison tables and the report
    ("ragrade._native", "ragrade._accel", "ragrade._ingest", "ragrade._arrays", "ragrade.policies",
     "ragrade.metrics", "ragrade.data", "ragrade.formatting"),
    ("ragrade.kernels", "ragrade.profiles", "ragrade.matching"),
    # llm: the LLM core (backends, runner, cache, budget, task sets), on errors alone: the layer-5 packages use it
    ("ragrade.io", "ragrade.llm"),
    ("ragrade.engine",),
    # the packages that run the engine on pieces (scale) or on other ground truths (spans, traces, nuggets)
    ("ragrade.scale", "ragrade.spans", "ragrade.traces", "ragrade.nuggets"),
    ("ragrade.evaluation",),
    ("ragrade.judges", "ragrade.compat", "ragrade.retrieval", "ragrade.comparison", "ragrade.fusion",
     "ragrade.synthesize"),
    ("ragrade.report", "ragrade.gating", "ragrade.assessment", "ragrade.integrations"),
    ("ragrade.cli", "ragrade.__main__"),
]
LAYERS[5] += ("ragrade.spans",)  # character spans (issue 35): with scale/, above the engine
LAYERS[8] += ("ragrade.chunking",)  # compare_chunkings (issue 35): uses comparison/ and report/
LAYERS[7] += ("ragrade.synthesis",)  # test sets from a corpus (issue 36): the LLM core over spans/

# ragrade._threads: work split across cores for the C helpers (issue 34: no concurrent.futures on the drop-in's
# start-up), a leaf next to the helpers' loaders
LAYERS[1] += ("ragrade._threads",)

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
    out += string_imports(path)
    return [(m, line) for m, line in out if m == FACADE or m.startswith(FACADE + ".")]


#: A string naming a ragrade module, or a module's attribute (``module:attr``).
NAMED = re.compile(r"^ragrade(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?$")
#: The module whose strings name kernels, and the layer that calls them (the engine).
KERNEL_NAMES = "ragrade.metrics.registry"
KERNEL_CALLER = "ragrade.engine"


def is_module(name: str) -> bool:
    p = SRC.parent / Path(*name.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def named_strings(path: Path) -> list[tuple[str, int]]:
    """``(module, line)`` of every string constant of ``path`` that names a ragrade module that exists, or
    an attribute of one (``module:attr``, whatever the module)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAMED.match(node.value):
            module, _, attr = node.value.partition(":")
            if attr or is_module(module):
                out.append((module, node.lineno))
    return out


def string_imports(path: Path) -> list[tuple[str, int]]:
    """The imports named by strings in ``path`` (the kernels the registry names count for the engine)."""
    return [] if module_name(path) == KERNEL_NAMES else named_strings(path)


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


def test_imports_named_by_strings_resolve():
    """Every ``module:attr`` string and every module named by a string exists; every kernel of the metric
    registry imports, from a layer the engine may import; every route of evaluation.ROUTES is a module
    with ``claims`` and ``run``, below the router."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAMED.match(node.value) \
                    and ":" in node.value:
                module, _, attr = node.value.partition(":")
                if not is_module(module) or not hasattr(importlib.import_module(module), attr):
                    bad.append(f"{module_name(path)}:{node.lineno}: {node.value!r} does not resolve")
    assert bad == []
    from ragrade.metrics.registry import REGISTRY

    refs = [r for fam in REGISTRY for r in (fam.kernel, getattr(fam, "list_kernel", None)) if hasattr(r, "resolve")]
    assert len(refs) > 50
    for ref in refs:
        assert callable(ref.resolve()), ref
        assert layer_of(ref.module) <= layer_of(KERNEL_CALLER), f"{ref} is above the engine, which calls it"
    import ragrade.evaluation as ev

    for name in ev.ROUTES:
        route = importlib.import_module(name)
        assert callable(route.claims) and callable(route.run), name
        assert layer_of(name) < layer_of("ragrade.evaluation"), f"route {name} is not below the router"


def test_the_string_imports_are_seen():
    """The parser finds what the strings name (so a new kind of string reference is not missed silently)."""
    found = {m for p in SRC.rglob("*.py") for m, _ in string_imports(p)}
    assert {"ragrade.judges.offline", "ragrade.assessment.graders", "ragrade.llm.openai", "ragrade.io.texts",
            "ragrade.cli.evaluate_cmd"} <= found
    kernels = {m for m, _ in named_strings(SRC / "metrics" / "registry.py")}
    assert "ragrade.kernels.metrics" in kernels


def package_graph() -> dict[str, set[str]]:
    """``{package: packages it imports}`` (top-level modules count as packages; the facade is left out),
    with the imports named by strings and the registry's kernels as imports of the engine."""
    def pkg(module: str) -> str:
        return module.split(".")[1]

    graph: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        me = module_name(path)
        if me == FACADE:
            continue
        graph.setdefault(pkg(me), set())
        for target, _ in imports(path):
            if target != FACADE and pkg(target) != pkg(me):
                graph[pkg(me)].add(pkg(target))
    for module, _ in named_strings(SRC / "metrics" / "registry.py"):
        graph[pkg(KERNEL_CALLER + ".x")].add(pkg(module))
    return graph


def test_no_circle_of_packages():
    """No two packages import each other, directly or around a circle (issue 33 found {comparison, engine,
    evaluation, profiles, scale})."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_architecture import _cycles

    assert _cycles(package_graph()) == []


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
