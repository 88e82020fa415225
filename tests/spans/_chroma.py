"""Chroma's chunking_evaluation (the reference of the chroma profile), loaded for the tests from the tarball in
``../shared/reference`` (never copied into the repository).

``base_evaluation.py`` imports chromadb at module level, so its pure functions are taken from its source
with ``ast``: the range functions at the top of the file and ``BaseEvaluation``'s ``_full_precision_score``
and ``_scores_from_dataset_and_retrievals``, compiled into a namespace of their own and called with a
stand-in ``self`` that holds ``questions_df`` (read as Chroma reads it: pandas, ``json.loads``).

Where the tarball is: ``CHUNKING_EVALUATION_TARBALL``, else ``../shared/reference`` or
``../../shared/reference`` from the repository. ``.ci/run`` sets ``RAGRADE_REQUIRE_CHUNKING_EVALUATION=1``:
there a missing tarball fails the tests; elsewhere they skip, saying why.
"""

from __future__ import annotations

import ast
import os
import tarfile
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NAME = "chunking_evaluation-d451fc4"
TOP_FUNCTIONS = ("sum_of_ranges", "union_ranges", "intersect_two_ranges", "difference")
METHODS = ("_full_precision_score", "_scores_from_dataset_and_retrievals")


def tarball() -> Path:
    given = os.environ.get("CHUNKING_EVALUATION_TARBALL")
    candidates = [Path(given)] if given else [ROOT.parent / "shared" / "reference" / f"{NAME}.tar.gz",
                                              ROOT.parent.parent / "shared" / "reference" / f"{NAME}.tar.gz"]
    for c in candidates:
        if c.is_file():
            return c
    why = f"Chroma's chunking_evaluation ({NAME}.tar.gz) is not in ../shared/reference"
    if os.environ.get("RAGRADE_REQUIRE_CHUNKING_EVALUATION"):
        pytest.fail(f"RAGRADE_REQUIRE_CHUNKING_EVALUATION is set but {why}")
    pytest.skip(why)


def extract(target: Path) -> Path:
    """The tarball unpacked under ``target``: the folder of ``evaluation_framework``."""
    with tarfile.open(tarball()) as tar:
        tar.extractall(target, filter="data")
    return target / NAME / "chunking_evaluation" / "evaluation_framework"


def functions(framework: Path) -> dict[str, Any]:
    """Chroma's pure functions, compiled from the source of base_evaluation.py."""
    tree = ast.parse((framework / "base_evaluation.py").read_text(encoding="utf-8"))
    keep: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in TOP_FUNCTIONS:
            keep.append(node)
        if isinstance(node, ast.ClassDef) and node.name == "BaseEvaluation":
            keep += [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name in METHODS]
    module = ast.Module(body=keep, type_ignores=[])
    namespace: dict[str, Any] = {}
    exec(compile(module, str(framework / "base_evaluation.py"), "exec"), namespace)
    missing = [n for n in (*TOP_FUNCTIONS, *METHODS) if n not in namespace]
    assert not missing, missing
    return namespace


def questions(framework: Path) -> Any:
    """Chroma's stand-in ``self``: questions_df read as ``_load_questions_df`` reads it."""
    import json

    import pandas as pd

    df = pd.read_csv(framework / "general_evaluation_data" / "questions_df.csv")
    df["references"] = df["references"].apply(json.loads)
    return types.SimpleNamespace(questions_df=df)
