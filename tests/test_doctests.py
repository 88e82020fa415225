"""The examples in the public docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import ragrade

SRC = Path(ragrade.__file__).parent


def _modules_with_examples() -> list[str]:
    """Every module of the package whose source holds a docstring example (found, not listed, so that a
    new example is always run)."""
    out = []
    for path in sorted(SRC.rglob("*.py")):
        if ">>> " in path.read_text(encoding="utf-8"):
            rel = path.relative_to(SRC.parent).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            out.append(".".join(parts))
    return out


MODULES = _modules_with_examples()


def test_the_engine_and_the_metric_model_have_examples():
    assert {"ragrade.evaluation", "ragrade.engine.plan", "ragrade.engine.core", "ragrade.metrics.parser", "ragrade.data.qrels"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
