"""The examples in the assessment docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "ragrade.assessment.prompt",
    "ragrade.assessment.pooling",
    "ragrade.assessment.stats",
    "ragrade.assessment.ppi",
    "ragrade.assessment.runner",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


def test_package_exports_resolve():
    import ragrade.assessment as a

    for name in a.__all__:
        assert getattr(a, name) is not None
    with pytest.raises(AttributeError):
        a.no_such_thing  # noqa: B018
