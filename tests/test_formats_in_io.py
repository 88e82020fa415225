"""File formats are written by io/ (issue 33: "split Result so exports live with the writers"; the rule is
docs/architecture.md's, "Results").

Outside ``src/ragrade/io/``:

* nothing calls ``json.dump`` (JSON written to a file object); ``json.dumps`` makes a string in memory (a
  prompt, a cache key or value, a message, a command's output line) and is allowed anywhere;
* nothing imports pyarrow's file-format modules (``pyarrow.csv``, ``pyarrow.parquet``, ``pyarrow.feather``,
  ``pyarrow.orc``) or reaches ``pyarrow.ipc``: Parquet, Arrow IPC (out of core's scratch partitions too:
  ``io/spill.py``) and delimited text are written by io/;
* the engine imports neither ``json`` nor ``csv``: a result's output formats (dict, JSON, CSV, Markdown) are
  ``io/results.py``'s, which reads the result's public values only.

(The ``csv`` module itself is imported by io/ alone: ``tests/test_architecture.py``.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ragrade

SRC = Path(ragrade.__file__).parent
FORMAT_MODULES = ("pyarrow.csv", "pyarrow.parquet", "pyarrow.feather", "pyarrow.orc", "pyarrow.ipc")


def offences(tree: ast.AST, *, engine: bool = False) -> list[str]:
    """What ``tree`` (a module outside io/) does that the rules above keep for io/ (``"line: what"``)."""
    found = []
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + ([f"pyarrow.{a.name}" for a in node.names] if node.module == "pyarrow" else [])
        for m in modules:
            if m in FORMAT_MODULES or m.startswith(tuple(f"{f}." for f in FORMAT_MODULES)):
                found.append(f"{node.lineno}: imports {m}")
            if engine and m.split(".")[0] in ("json", "csv"):
                found.append(f"{node.lineno}: the engine imports {m}")
        if isinstance(node, ast.Attribute):
            owner = ast.unparse(node.value)
            if node.attr == "dump" and owner == "json":
                found.append(f"{node.lineno}: json.dump")
            elif node.attr == "ipc" and owner in ("pa", "pyarrow"):
                found.append(f"{node.lineno}: {owner}.ipc")
    return found


def test_only_io_writes_file_formats():
    bad = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("io/"):
            continue
        found = offences(ast.parse(path.read_text(encoding="utf-8")), engine=rel.startswith("engine/"))
        if found:
            bad[rel] = found
    assert bad == {}


@pytest.mark.parametrize("text, engine", [
    ("import json\njson.dump({}, fh)\n", False),
    ("import pyarrow.parquet as pq\n", False),
    ("from pyarrow import parquet\n", False),
    ("from pyarrow.csv import write_csv\n", False),
    ("import pyarrow as pa\nw = pa.ipc.new_stream(sink, schema)\n", False),
    ("import json\n", True),
    ("from csv import writer\n", True),
])
def test_the_rule_sees_each_offence(text, engine):
    assert offences(ast.parse(text), engine=engine), text


def test_what_the_rule_allows():
    """A string made in memory, pyarrow's compute and reading a dataset are not file writing."""
    ok = "import json\nimport pyarrow as pa\nimport pyarrow.compute as pc\ns = json.dumps({'a': 1})\n"
    assert offences(ast.parse(ok)) == []


def test_a_results_formats_are_ios():
    """``Result.to_*`` are thin calls of io/results.py; the engine keeps only the words of the notes."""
    import inspect

    from ragrade import Result
    from ragrade.io import results

    for method, fn in (("to_dict", "result_dict"), ("to_json", "result_json"), ("to_csv", "result_csv"),
                       ("to_markdown", "result_markdown")):
        src = inspect.getsource(getattr(Result, method))
        assert f"return {fn}(self" in src, method
        assert callable(getattr(results, fn))
    res = ragrade.evaluate({"q": {"d": 1, "e": 1}}, {"q": {"d": 1.0, "x": 0.5}}, ["P@2", "ndcg"])
    assert res.to_json() == results.result_json(res)
    assert res.to_csv(per_query=True) == "query,P@2,ndcg\nq,0.5000,0.6131\nall,0.5000,0.6131\n"
