"""No module reads another object's private fields (house III): anywhere in src/, an underscored attribute
(``x._name``, any name, not a list of known ones) is read only on ``self`` or ``cls``, and ``getattr`` /
``setattr`` / ``hasattr`` / ``delattr`` never name one on another object. The exceptions are the standard
library's documented ``sys._getframe`` (warnings point at the caller's frame) and ``os._exit`` (the trec_eval
drop-in ends its own process once its output is flushed, ``cli/trec_eval_cmd.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import ragrade

SRC = Path(ragrade.__file__).parent
ALLOWED = {("sys", "_getframe"), ("os", "_exit")}
BY_NAME = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def offenders(tree: ast.AST, where: str) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not _own(node.value):
            owner = ast.unparse(node.value)
            if (owner, node.attr) not in ALLOWED:
                found.append(f"{where}:{node.lineno}: {owner}.{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BY_NAME
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _private(node.args[1].value) and not _own(node.args[0])):
            found.append(f"{where}:{node.lineno}: {node.func.id}({ast.unparse(node.args[0])}, "
                         f"{node.args[1].value!r})")
    return found


def test_no_module_reads_another_objects_private_fields():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        found += offenders(ast.parse(path.read_text(encoding="utf-8")), str(path.relative_to(SRC)))
    assert not found, found


def test_the_check_sees_every_kind_of_read():
    code = ("a = run._cache\nb = res._table\nc = mod._accel.f()\nd = getattr(judge, '_api_key', None)\n"
            "e = self._fine\nf = cls._fine\ng = sys._getframe(1)\nh = x.__class__\nhasattr(o, '_x')\n")
    got = offenders(ast.parse(code), "t")
    assert sorted(got) == ["t:1: run._cache", "t:2: res._table", "t:3: mod._accel", "t:4: getattr(judge, '_api_key')",
                   "t:9: hasattr(o, '_x')"]
