"""The exception and warning tree of ragrade.

Every error ragrade raises on purpose derives from :class:`RagradeError`, so callers can catch one
class. Errors about input say *where* (file, line, query, item) and *what* (the offending value and what
was expected)::

    RagradeError
    ├── UnknownNameError     a name is not known: a metric (id, token or judge), a profile, a policy, a
    │                        matcher, a format, a test... (one class; ``kind`` says which, and the
    │                        message suggests the nearest names)
    ├── MetricError          a metric string or metric parameter is invalid (syntax, value out of range)
    ├── InputError           data handed to ragrade is malformed
    │   └── ParseError       a file could not be read: carries ``path``, ``line`` and the offending text
    ├── PolicyError          a named policy (docs/conventions.md, "Policies") was set to ``"error"`` and
    │                        the case occurred, or a policy was given a value it does not take
    └── MissingDependencyError   an optional extra is not installed (the message gives the pip command)

Only these classes (and :class:`RagradeWarning`) escape ragrade's public entry points; anything else is a
bug (a property test feeds random junk to every public entry point to check it).

Warnings derive from :class:`RagradeWarning` (a ``UserWarning``): undefined cases that a policy resolved
(queries without relevant judgments, duplicate items, queries missing on one side) are reported this way
and are also counted in the result's summary, never silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType


class RagradeError(Exception):
    """Base class of every error raised by ragrade."""


class MetricError(RagradeError, ValueError):
    """A metric string or one of its parameters is not valid (the name itself is known)."""


class UnknownNameError(RagradeError, ValueError):
    """A name ragrade does not know. ``kind`` says what was being named (``"metric"``, ``"profile"``,
    ``"policy"``, ...), ``name`` is what was given and ``suggestions`` the nearest known names.

    >>> err = UnknownNameError("metric", "ndgc", ["ndcg", "dcg", "rr"], hint="Run `ragrade metrics` for the list.")
    >>> str(err)
    "unknown metric 'ndgc'. Did you mean 'ndcg' or 'dcg'? Run `ragrade metrics` for the list."
    """

    def __init__(self, kind: str, name: object, known: Iterable[str], *, hint: str = "",
                 show_known: bool = False) -> None:
        import difflib

        choices = sorted({str(k) for k in known})
        text = str(name).strip().lower() if isinstance(name, str) else str(name)
        self.kind = kind
        self.name = name
        self.suggestions = difflib.get_close_matches(text, choices, n=2, cutoff=0.5)
        message = f"unknown {kind} {name!r}."
        if self.suggestions:
            message += f" Did you mean {' or '.join(repr(c) for c in self.suggestions)}?"
        if show_known:
            message += f" Known: {', '.join(choices)}."
        if hint:
            message += f" {hint}"
        super().__init__(message)


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
    """A policy set to ``"error"`` was triggered, or a policy was given a value it does not take."""


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


class PolicyNote(RagradeWarning):
    """What the policies did in one evaluation (missing queries, duplicates, ties at a cutoff, ...): the
    sentences of :meth:`ragrade.Result.notes`, kept whole in :attr:`notes` (a sentence may hold a
    semicolon). The command line prints each as one ``note:`` line; other warnings (a
    reader's, a comparison's) are ``warning:`` lines."""

    def __init__(self, notes: list[str]) -> None:
        super().__init__("; ".join(notes))
        self.notes = list(notes)


def require(module: str, *, package: str | None = None, extra: str, purpose: str) -> ModuleType:
    """Import an optional module lazily, raising :class:`MissingDependencyError` with an install hint."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised in tests via monkeypatch
        raise MissingDependencyError(package or module, extra, purpose) from exc
