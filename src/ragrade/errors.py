"""The exception and warning tree of ragrade.

Every error ragrade raises on purpose derives from :class:`RagradeError`, so callers can catch one
class. Errors about input say *where* (file, line, query, item) and *what* (the offending value and what
was expected)::

    RagradeError
    ├── MetricError          a metric string or metric parameter is invalid (suggests the nearest name)
    ├── InputError           data handed to ragrade is malformed
    │   └── ParseError       a file could not be read: carries ``path``, ``line`` and the offending text
    ├── PolicyError          a named policy (SPEC section 3) was set to ``"error"`` and the case occurred,
    │                        or a policy was given an unknown value
    └── MissingDependencyError   an optional extra is not installed (the message gives the pip command)

Warnings derive from :class:`RagradeWarning` (a ``UserWarning``): undefined cases that a policy resolved
(queries without relevant judgments, duplicate items, queries missing on one side) are reported this way
and are also counted in the result's summary, never silently.
"""

from __future__ import annotations


class RagradeError(Exception):
    """Base class of every error raised by ragrade."""


class MetricError(RagradeError, ValueError):
    """A metric name, alias or parameter is not valid."""


class InputError(RagradeError, ValueError):
    """Input data is malformed (wrong shape, wrong type, bad value)."""

    def __init__(
        self,
        message: str,
        *,
        query: str | None = None,
        item: str | None = None,
        value: object = None,
    ) -> None:
        parts = [message]
        if query is not None:
            parts.append(f"query {query!r}")
        if item is not None:
            parts.append(f"item {item!r}")
        if value is not None:
            parts.append(f"value {value!r}")
        super().__init__(": ".join(parts[:1]) + ("" if len(parts) == 1 else " (" + ", ".join(parts[1:]) + ")"))
        self.query = query
        self.item = item
        self.value = value


class ParseError(InputError):
    """A file could not be parsed. ``path`` and ``line`` (1-based) say where; ``text`` is what was found."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, text: str | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        shown = ""
        if text is not None:
            t = text if len(text) <= 200 else text[:200] + "..."
            shown = f" (found {t!r})"
        ValueError.__init__(self, f"{where}{message}{shown}")
        self.path = path
        self.line = line
        self.text = text
        self.query = None
        self.item = None
        self.value = text


class PolicyError(RagradeError, ValueError):
    """A policy set to ``"error"`` was triggered, or a policy value is unknown."""


class MissingDependencyError(RagradeError, ImportError):
    """An optional dependency is missing; the message says which extra to install."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the optional package {package!r}. Install it with: pip install 'ragrade[{extra}]'"
        )
        self.package = package
        self.extra = extra


class RagradeWarning(UserWarning):
    """Base class of warnings about undefined or messy cases resolved by a policy."""


def require(module: str, *, package: str | None = None, extra: str, purpose: str):
    """Import an optional module lazily, raising :class:`MissingDependencyError` with an install hint."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised in tests via monkeypatch
        raise MissingDependencyError(package or module, extra, purpose) from exc
