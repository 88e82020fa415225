"""The drop-ins (ragrade.compat) use ragrade as if they were a separate package: their imports are the public
names of ragrade's public modules, the scoring port (ragrade.engine.scoring) and their own modules (with their
own C extension, ragrade.compat._speedups). A test of every import statement and every ``ragrade.X`` attribute in
compat/, not a list of known offenders."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import ragrade

COMPAT = Path(ragrade.__file__).parent / "compat"
#: The public modules compat may import from; a name must be in the module's ``__all__``.
PUBLIC = ("ragrade", "ragrade.errors", "ragrade.metrics", "ragrade.matching", "ragrade.data", "ragrade.io",
          "ragrade.evaluation", "ragrade.engine.scoring")


def public_names(module: str) -> set[str]:
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    if names is None:  # ragrade.errors: every class it defines
        names = [n for n, v in vars(mod).items() if not n.startswith("_") and getattr(v, "__module__", "") == module]
    return set(names)


def offenders(tree: ast.AST, where: str) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "ragrade":
            module = node.module or ""
            if module == "ragrade.compat" or module.startswith("ragrade.compat."):
                continue
            if module not in PUBLIC:
                found.append(f"{where}:{node.lineno}: from {module} import ...")
                continue
            allowed = public_names(module)
            found += [f"{where}:{node.lineno}: {module}.{a.name}" for a in node.names if a.name not in allowed]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "ragrade" and a.name not in ("ragrade", "ragrade.compat") and not (
                        a.name.startswith("ragrade.compat.")):
                    found.append(f"{where}:{node.lineno}: import {a.name}")
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ragrade"
              and node.attr not in public_names("ragrade")):
            found.append(f"{where}:{node.lineno}: ragrade.{node.attr}")
    return found


def test_compat_imports_only_the_public_api_and_the_scoring_port():
    found = []
    for path in sorted(COMPAT.rglob("*.py")):
        found += offenders(ast.parse(path.read_text(encoding="utf-8")), path.name)
    assert not found, found


def test_the_check_sees_every_kind_of_import():
    code = ("from ragrade._ingest import _accel\nfrom ragrade.engine.join import Joined\nimport ragrade.kernels.measures\n"
            "from ragrade.evaluation import evaluate\nfrom ragrade.evaluation import id_setup\nragrade.evaluate\n"
            "ragrade.engine\nfrom ragrade.compat import _native\nfrom ragrade.engine.scoring import Scorer\n")
    assert sorted(offenders(ast.parse(code), "t")) == [
        "t:1: from ragrade._ingest import ...", "t:2: from ragrade.engine.join import ...",
        "t:3: import ragrade.kernels.measures", "t:5: ragrade.evaluation.id_setup", "t:7: ragrade.engine"]


def test_the_c_helpers_of_the_drop_ins_are_their_own_module():
    from ragrade import _native as engine_native
    from ragrade.compat import _native

    if _native.speedups is None or engine_native.accel is None:
        return  # not built (or RAGRADE_NO_ACCEL): the fallbacks are tested by the rest of tests/compat
    assert _native.speedups.__name__ == "ragrade.compat._speedups"
    for name in ("pytrec_join", "pytrec_qrels", "nested_dicts", "sort_segments_trec", "trec_lines"):
        assert hasattr(_native.speedups, name) and not hasattr(engine_native.accel, name), name
