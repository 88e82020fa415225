"""The exception and warning tree of ragrade: every exception class ragrade defines lives here.

Every error ragrade raises on purpose derives from :class:`RagradeError`, so callers can catch one
class. Errors about input say *where* (file, line, query, item) and *what* (the offending value and what
was expected)::

    RagradeError
    ├── UnknownNameError        a name is not known: a metric (id, token or judge), a profile, a policy, a
    │                           matcher, a format, a test, an option... (one class; ``kind`` says which,
    │                           and the message suggests the nearest names)
    ├── MetricError             a metric string or metric parameter is invalid (syntax, value out of range,
    │                           a cutoff of 2**63 or more)
    ├── InputError              data or an argument handed to ragrade is malformed (wrong type or value)
    │   ├── ParseError          a file could not be read: carries ``path``, ``line`` and the offending text
    │   ├── RetrieverConfigError   a retriever's answers give no document ids as configured (retrieve)
    │   └── IdMismatchError     no retrieved id is among the judged ids (retrieve; ``run`` holds the run)
    ├── PolicyError             a named policy (docs/conventions.md, "Policies") was set to ``"error"`` and
    │                           the case occurred, or a policy was given a value it does not take
    ├── IncomparableError       the gate's candidate cannot be compared with its baseline (other qrels,
    │                           other conventions, no query in common): exit status 2
    ├── OutputError             an LLM judge's or assessor's reply could not be read as the task's output
    ├── JudgeConfigError        the judge cannot work as configured (API key refused, no such model or URL)
    ├── MlflowLoggingError      MLflow refused what ragrade logged
    ├── TrecEvalError           ``ragrade trec_eval`` stops where trec_eval 10 stops (a bad option, measure or
    │   │                       parameter, a duplicate document, a judged query absent without -c): exit 2
    │   └── JudgmentConflict    preference judgments trec_eval stops on (a document graded twice in one
    │                           group, contradictory preferences): names the group and documents
    └── MissingDependencyError  an optional extra is not installed (the message gives the pip command)

Internal signals change the course of one computation and are caught where they are raised; none escapes
a public function (tests/test_boundary.py)::

    Signal
    ├── RetryRequest            an LLM request may be retried (a 429 or 5xx; ``retry_after`` seconds)
    ├── RequestRefused          an LLM request failed for good (the reply says why)
    ├── RequestTimedOut         an LLM request timed out
    ├── ConnectFailed           no connection to the LLM server could be made
    ├── ConnectionBroken        the connection broke or the reply could not be read
    ├── FormatRejected          the server refused the structured-output request (ask again without it)
    ├── ArrowCannot             a file is not for Arrow's reader (the Python reader takes it)
    ├── NotGrouped              a query's rows are not adjacent in a file (the file is partitioned first)
    └── StartAgain              a streamed run turned out to be ranked, not scored (read it again as ranks)

Only the classes of the first tree (and :class:`RagradeWarning`) escape ragrade's public entry points: each public
function is wrapped by :func:`boundary`, which turns a foreign exception caused by a bad argument
(``TypeError``, ``ValueError``, ``OverflowError``, ``OSError``, ...) into an :class:`InputError` naming the
function, the exception chained as its cause. tests/test_boundary.py feeds wrong types, wrong values and
huge numbers to every public function and accepts nothing else.

Warnings derive from :class:`RagradeWarning` (a ``UserWarning``; :class:`AccelerationWarning`, its subclass,
says the C helper is not built; :class:`PolicyNote`, its other subclass, carries
the sentences of what the policies did in one evaluation): undefined cases that a policy resolved
(queries without relevant judgments, duplicate items, queries missing on one side) are reported this way
and are also counted in the result's summary, never silently.

Old import paths keep working: ``ragrade.gating.IncomparableError``, ``ragrade.judges.prompts.OutputError``,
``ragrade.llm.base.JudgeConfigError``, ``ragrade.integrations.mlflow.MlflowLoggingError``,
``ragrade.retrieval.RetrieverConfigError`` and ``IdMismatchError``, ``ragrade.kernels.trec_prefs.JudgmentConflict``,
``ragrade.io.stream.NotGrouped`` and ``ragrade._native.AccelerationWarning`` are these classes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


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


class IncomparableError(RagradeError):
    """The candidate cannot be meaningfully compared with the baseline (other qrels, other conventions, a
    metric the baseline does not hold, no query in common). The command exits with status 2."""


class OutputError(RagradeError, ValueError):
    """The judge's reply could not be read as the task's output."""


class JudgeConfigError(RagradeError):
    """The judge cannot work as configured: the server refused the API key (HTTP 401/403), the model or
    the URL does not exist (HTTP 404), or nothing answers at the URL before any judgment succeeded. Unlike
    a failed judgment, this stops the whole run at its first occurrence (one call), and nothing about it
    is cached; the message says what to check."""


class MlflowLoggingError(RagradeError):
    """MLflow refused what ragrade logged (a bad tracking URI, an unknown run id, a deleted experiment)."""


class TrecEvalError(RagradeError):
    """What trec_eval would stop on (bad option, measure, parameter or input): ``ragrade trec_eval`` exits 2."""


class JudgmentConflict(TrecEvalError):
    """Preference judgments trec_eval stops on (``group``, ``docs``: where, for the lines to name)."""

    def __init__(self, message: str, group: str, docs: list[str]) -> None:
        super().__init__(message)
        self.group, self.docs = group, docs


class RetrieverConfigError(InputError):
    """The retriever's answers cannot give document ids as configured (no ``id_key`` for a LlamaIndex
    retriever, an ``id_key`` that the documents do not have, a document without an id). Unlike a failing
    query, this stops the run at its first occurrence: every other query would fail the same way."""


class IdMismatchError(InputError):
    """No retrieved id occurs among the judged ids of the qrels: every metric would be 0. ``run`` holds
    what was retrieved (nothing is lost; the cache has it too)."""

    def __init__(self, message: str, run: Any) -> None:
        super().__init__(message)
        self.run = run


class MissingDependencyError(RagradeError, ImportError):
    """An optional dependency is missing; the message says which extra to install."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the optional package {package!r}. Install it with: pip install 'ragrade[{extra}]'"
        )
        self.package = package
        self.extra = extra


class Signal(Exception):
    """Base of the internal signals: raised and caught inside ragrade to change course, never escaping a
    public function."""


class RetryRequest(Signal):
    """An LLM request may be retried; ``retry_after``: the seconds the server asked for, if it did."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class RequestRefused(Signal):
    """An LLM request failed for good (args: the reason)."""


class RequestTimedOut(Signal):
    """An LLM request timed out (args: the transport's exception name)."""


class ConnectFailed(Signal):
    """No connection could be made (args: exception name, its text)."""


class ConnectionBroken(Signal):
    """The connection broke or the body could not be read (args: exception name, its text)."""


class FormatRejected(Signal):
    """The server refused the structured-output request (args: its reply)."""


class ArrowCannot(Signal):
    """The input is not for Arrow's reader; the Python reader takes it."""


class NotGrouped(Signal):
    """A query's rows are not adjacent in the file (the caller partitions the file)."""


class StartAgain(Signal):
    """What was read so far must be read again under another rule (a run found to be ranked)."""


class RagradeWarning(UserWarning):
    """Base class of warnings about undefined or messy cases resolved by a policy."""


class AccelerationWarning(RagradeWarning):
    """The C helper is not built: ragrade runs its pure-Python fallback (same results, slower)."""


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


#: Foreign exceptions that a bad argument causes inside a public function (and that :func:`boundary` maps).
FOREIGN: tuple[type[BaseException], ...] = (TypeError, ValueError, ArithmeticError, OSError, LookupError,
                                             AttributeError, RecursionError)


def boundary(func: Callable[P, T]) -> Callable[P, T]:
    """Decorate a public function so that nothing but a :class:`RagradeError` escapes it: a foreign
    exception caused by a bad argument (:data:`FOREIGN`) becomes an :class:`InputError` naming the function
    and what went wrong (a file error names the file), the original chained as ``__cause__``.

    >>> @boundary
    ... def half(n): return n / 2
    >>> half("x")
    Traceback (most recent call last):
    ragrade.errors.InputError: half: bad argument (TypeError: unsupported operand type(s) for /: 'str' and 'int')
    """

    @functools.wraps(func)
    def public(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return func(*args, **kwargs)
        except RagradeError:
            raise
        except FOREIGN as exc:
            raise foreign_error(func.__qualname__, exc) from exc

    return public


def foreign_error(where: str, exc: BaseException) -> InputError:
    """The :class:`InputError` of a foreign exception raised inside ``where``."""
    if isinstance(exc, OSError) and (exc.filename is not None or exc.strerror):
        name = f"{exc.filename}: " if exc.filename is not None else ""
        return InputError(f"{where}: {name}{exc.strerror or exc}")
    text = str(exc) if len(str(exc)) <= 300 else str(exc)[:300] + "..."
    return InputError(f"{where}: bad argument ({type(exc).__name__}: {text})")
