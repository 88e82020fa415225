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
    │   │   └── EmptyFileError  the file holds no data (fusion takes such a run as empty lists)
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

Only the classes of the first tree (and :class:`RagradeWarning`) escape ragrade's public entry points
because of what a caller handed in. Each public function is wrapped by :func:`boundary`: a file error
(:data:`INPUT_EXCEPTIONS`: a missing or unreadable path, a full disk, bytes that are not text) becomes an
:class:`InputError` naming the function and the file; anything else that escapes is a bug of ragrade::

    InternalError               "this is a bug in ragrade: please report it", the original exception
                                chained as ``__cause__``; not a RagradeError (handling bad input never
                                swallows it); the command line prints its traceback and exits with 70

Arguments are checked at the edge, from one declaration per option (:mod:`ragrade.options`), so a bad value
is an :class:`InputError` naming the option before any work starts; a deep ``TypeError`` is never taken for
the user's mistake. tests/test_boundary.py feeds wrong types, wrong values and huge numbers to every public
function and accepts nothing but ragrade's errors; tests/test_internal_errors.py plants bugs and expects
:class:`InternalError`. An exception raised by a function the caller handed in (a retriever, a matcher, a
callback: :func:`user_code`) is the caller's and passes unchanged.

Warnings derive from :class:`RagradeWarning` (a ``UserWarning``; :class:`AccelerationWarning`, its subclass,
says the C helper is not built; :class:`PolicyNote`, its other subclass, carries
the sentences of what the policies did in one evaluation): undefined cases that a policy resolved
(queries without relevant judgments, duplicate items, queries missing on one side) are reported this way
and are also counted in the result's summary, never silently.

Old import paths keep working: ``ragrade.gating.IncomparableError``, ``ragrade.judges.prompts.OutputError``,
``ragrade.llm.base.JudgeConfigError``, ``ragrade.integrations.mlflow.MlflowLoggingError``,
``ragrade.retrieval.RetrieverConfigError`` and ``IdMismatchError``, ``ragrade.compat.trec_eval_prefs_kernels.JudgmentConflict``,
``ragrade.io.stream.NotGrouped`` and ``ragrade._native.AccelerationWarning`` are these classes.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
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


class EmptyFileError(ParseError):
    """A file holds no data (no line, or a header only). Readers refuse it; fusion takes such a run as one
    whose every list is empty, as pyserini and trectools do."""


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

    def __init__(self, notes: list[str] | str) -> None:
        # a warning may be re-made from its message alone (pickled across processes, copied by a warnings
        # filter): then the message is the one note
        notes = [notes] if isinstance(notes, str) else list(notes)
        super().__init__("; ".join(notes))
        self.notes = notes


def require(module: str, *, package: str | None = None, extra: str, purpose: str) -> ModuleType:
    """Import an optional module lazily, raising :class:`MissingDependencyError` with an install hint."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised in tests via monkeypatch
        raise MissingDependencyError(package or module, extra, purpose) from exc


#: The exceptions a reader or a user's value can cause below a public function, besides ragrade's own
#: errors: file errors on the user's paths (``OSError``: missing, unreadable, a directory, a full disk),
#: a compressed file cut short (``EOFError``) and bytes that are not text (``UnicodeDecodeError``).
#: :func:`boundary` turns these (and only these) into an :class:`InputError` naming the file; a value the
#: option specs refuse (:mod:`ragrade.options`) is an :class:`InputError` already. Readers turn their
#: parsers' own exceptions (JSON, CSV, Arrow) into a :class:`ParseError` with the path and line.
INPUT_EXCEPTIONS: tuple[type[BaseException], ...] = (OSError, EOFError, UnicodeDecodeError)

class InternalError(Exception):
    """A bug in ragrade: an exception that no input can explain escaped a public function. It is *not* a
    :class:`RagradeError` (a caller handling bad input does not swallow it); the original exception is
    chained as ``__cause__`` and the command line prints the whole traceback and exits with status 70.

    >>> str(InternalError("evaluate", KeyError("x")))
    "evaluate: this is a bug in ragrade: please report it (KeyError: 'x')"
    """

    def __init__(self, where: str, exc: BaseException) -> None:
        text = str(exc) if len(str(exc)) <= 300 else str(exc)[:300] + "..."
        super().__init__(f"{where}: this is a bug in ragrade: please report it ({type(exc).__name__}: {text})")
        self.where = where
        self.original = exc


def boundary(func: Callable[P, T], /, *, check: Callable[[inspect.BoundArguments], None] | None = None
             ) -> Callable[P, T]:
    """Decorate a public function so that what escapes it says whose fault it is. A call that does not fit
    the signature is refused first (an unknown keyword: :class:`UnknownNameError` naming the nearest; a
    missing or extra argument: :class:`InputError`), then ``check`` (if given) checks and converts the bound
    arguments (:func:`ragrade.options.public` checks each against its declaration). Inside, ragrade's own
    errors and warnings (raised as errors) pass unchanged; a file error (:data:`INPUT_EXCEPTIONS`) becomes an
    :class:`InputError` naming the function and the file; anything else is a bug of ragrade, an
    :class:`InternalError` (the original chained as ``__cause__``), never the user's bad input.

    >>> @boundary
    ... def read(path): return open(path).read()
    >>> read("/nonexistent/file")
    Traceback (most recent call last):
    ragrade.errors.InputError: read: /nonexistent/file: No such file or directory
    >>> read("a", mode="r")
    Traceback (most recent call last):
    ragrade.errors.UnknownNameError: unknown option 'mode'. (read takes: path)
    >>> @boundary
    ... def half(n): return n.halve()
    >>> half(4)
    Traceback (most recent call last):
    ragrade.errors.InternalError: half: this is a bug in ragrade: please report it (AttributeError: 'int' object has no attribute 'halve')
    """
    sig = inspect.signature(func)

    @functools.wraps(func)
    def public(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise arity_error(func, sig, kwargs, exc) from None
        try:
            if check is not None:
                check(bound)
            return func(*bound.args, **bound.kwargs)
        except (RagradeError, InternalError, Warning):
            raise
        except INPUT_EXCEPTIONS as exc:
            raise input_error(func.__qualname__, exc) from exc
        except Exception as exc:
            if getattr(exc, USER_CODE, False):  # raised by the caller's own function: theirs, unchanged
                raise
            raise InternalError(func.__qualname__, exc) from exc

    return public


def arity_error(func: Callable[..., Any], sig: inspect.Signature, kwargs: Mapping[str, Any],
                exc: TypeError) -> RagradeError:
    """The error of a call that does not fit ``func``'s signature: an unknown keyword named with the nearest
    known ones, or Python's own words for a missing or extra argument."""
    params = sig.parameters
    named = [n for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n != "self"]
    where = func.__qualname__.replace(".__init__", "")
    unknown = [k for k in kwargs if k not in params or params[k].kind is inspect.Parameter.POSITIONAL_ONLY]
    if unknown and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return UnknownNameError("option", unknown[0], named, hint=f"({where} takes: {', '.join(named)})")
    return InputError(f"{where}: {exc}".replace(f"{func.__name__}() ", ""))


#: The attribute :func:`user_code` sets on an exception raised by a function the caller handed in.
USER_CODE = "__ragrade_user_code__"


def user_code(func: Callable[P, T]) -> Callable[P, T]:
    """Wrap a function the caller handed to ragrade (a retriever, a matcher, a callback): an exception it
    raises is the caller's and leaves :func:`boundary` unchanged, not as an :class:`InternalError`."""

    @functools.wraps(func)
    def theirs(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            with contextlib.suppress(AttributeError, TypeError):
                setattr(exc, USER_CODE, True)
            raise

    return theirs


def input_error(where: str, exc: BaseException) -> InputError:
    """The :class:`InputError` of a file error (:data:`INPUT_EXCEPTIONS`) raised inside ``where``."""
    if isinstance(exc, OSError):
        name = f"{exc.filename}: " if exc.filename is not None else ""
        return InputError(f"{where}: {name}{exc.strerror or exc}")
    if isinstance(exc, EOFError):
        return InputError(f"{where}: a compressed file ends too early ({exc})")
    text = str(exc) if len(str(exc)) <= 300 else str(exc)[:300] + "..."
    return InputError(f"{where}: the input is not text in the expected encoding ({text})")
