"""Options declared once: one :class:`Option` per keyword of the public API and option of the command line.

An option's declaration (its type, default, constraint, documentation and command-line spelling) feeds
three things, so they cannot drift apart:

* the Python API's checks: :func:`public` binds a public function's arguments, refuses an unknown keyword
  (naming the nearest) and checks every argument that has a declaration (by its name in :data:`OPTIONS`, or
  a declaration given to the decorator), before any work starts; a refused value is an
  :class:`~ragrade.errors.InputError` naming the option, what it takes and the value;
* the command line's option types and help: :func:`ragrade.cli._options.option` makes the click option
  (type, default, help with the constraint), so ``--alpha`` takes what ``alpha=`` takes;
* the error messages: an option is named as the caller spells it, ``n_resamples`` from Python and
  ``--resamples`` from the command line (:data:`SPELLING`, which the command line sets).

The declaration extends the metric parameters' :class:`~ragrade.metrics.params.Param` (the house's one way
to declare a constrained value: kind, choices or interval, documentation, bad values for the generated
tests). ``tests/test_option_specs.py`` generates bad values from every declaration for every public function
and command.

Bundles of options travel as frozen objects declared here once: :class:`ComparisonOptions` (how runs are
compared: baseline, test, correction, alpha, confidence, resamples, seed, interval method), taken by
``compare``, ``report``, ``plot``, ``gate`` and their commands.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import inspect
import math
import numbers
import re
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, overload

from ragrade.errors import InputError, PolicyError, boundary
from ragrade.metrics.params import Param
from ragrade.policies import Policies

P = ParamSpec("P")
T = TypeVar("T")

#: How the current caller spells options: ``"python"`` (keywords: ``n_resamples``, ``format=``) or ``"cli"``
#: (``--resamples``, ``--qrels-format``); the command line sets ``"cli"`` for the time of a command.
SPELLING: contextvars.ContextVar[str] = contextvars.ContextVar("ragrade_spelling", default="python")


@contextlib.contextmanager
def spelling(kind: str) -> Iterator[None]:
    """Spell options as ``kind`` (``"python"`` or ``"cli"``) inside the block."""
    token = SPELLING.set(kind)
    try:
        yield
    finally:
        SPELLING.reset(token)


#: On the command line, the flag of a keyword in the command running (``format`` -> ``--output-format`` in
#: ``convert``), where it differs from its declaration or has none (:func:`flags`).
FLAGS: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "ragrade_flags", default=types.MappingProxyType({}))


@contextlib.contextmanager
def flags(**names: str) -> Iterator[None]:
    """Inside the block, messages name these keywords by these command-line flags (``format="--output-format"``)."""
    token = FLAGS.set({**FLAGS.get(), **names})
    try:
        yield
    finally:
        FLAGS.reset(token)


def cli_flag(name: str) -> str | None:
    """The command line's flag for the keyword ``name`` in the command running (None: it has none)."""
    if name in FLAGS.get():
        return FLAGS.get()[name]
    spec = OPTIONS.get(name)
    return spec.flag if spec is not None else None


def spelled(name: str, flag: str | None = None) -> str:
    """The option ``name`` as the current caller writes it: ``--flag`` on the command line (the command's flag,
    the declared one, else ``--name-with-dashes``), the keyword otherwise."""
    if SPELLING.get() == "cli":
        return FLAGS.get().get(name) or flag or cli_flag(name) or "--" + name.replace("_", "-")
    return name


def how_to_give(name: str, otherwise: str) -> str:
    """How the current caller gives the keyword ``name``: ``pass name=`` from Python, ``give --flag`` on the
    command line when the command has one, else ``otherwise`` (what a command-line user can do instead)."""
    if SPELLING.get() != "cli":
        return f"pass {name}="
    flag = FLAGS.get().get(name) or cli_flag(name)
    return f"give {flag}" if flag else otherwise


_KIND_WORDS = {int: "an integer", float: "a number", str: "a word", bool: "true or false"}


@dataclass(frozen=True)
class Option(Param):
    """One option: a :class:`~ragrade.metrics.params.Param` (kind, default, choices or interval, doc) plus
    how it is spelled on the command line (``flag``, ``metavar``), whether ``None`` is taken (``nullable``:
    None means "unset", the documented default behaviour), aliases of its choices, and for composite
    kinds a ``validator`` (``validator(option, value)`` returns the value to use or raises
    ``option.error(value)``) described by ``what``. ``bad`` lists more values it must refuse (the
    generated tests try them with :meth:`bad_values`)."""

    flag: str | None = None
    metavar: str | None = None
    nullable: bool = False
    aliases: tuple[tuple[str, str], ...] = ()
    validator: Callable[[Option, Any], Any] | None = None
    what: str = ""
    bad: tuple[Any, ...] = ()
    #: The error of a refused value: an InputError, or for the policies a PolicyError (as ``Policies`` raises).
    refusal: type[Exception] = InputError

    # -- the Python API ----------------------------------------------------------------------------
    def label(self) -> str:
        """The option as the current caller spells it (``n_resamples`` or ``--resamples``)."""
        return spelled(self.name, self.flag)

    def check(self, value: Any) -> Any:
        """The value to use for ``value`` (a choice's alias resolved, numbers as int or float), or an
        :class:`~ragrade.errors.InputError` naming the option, what it takes and the value."""
        if value is None:
            if self.nullable:
                return None
            raise self.error(value)
        if self.validator is not None:
            return self.validator(self, value)
        if self.kind is bool:
            if not isinstance(value, bool) and type(value).__name__ != "bool_":
                raise self.error(value)
            return bool(value)
        if self.kind is int:
            return self._integer(value)
        if self.kind is float:
            return self._number(value)
        if not isinstance(value, str):
            raise self.error(value)
        key = value.strip().lower() if self.choices is not None else value
        key = dict(self.aliases).get(key, key)
        if not self.accepts(key):
            raise self.error(value)
        return key

    def _integer(self, value: Any) -> int:
        if isinstance(value, bool) or not _is_integer(value):
            raise self.error(value)
        if not self.accepts(int(value)):
            raise self.error(value)
        return int(value)

    def _number(self, value: Any) -> float:
        if isinstance(value, bool) or not (_is_integer(value) or _is_real(value)):
            raise self.error(value)
        number = float(value)
        if not math.isfinite(number) or not self.accepts(number):
            raise self.error(value)
        return number

    def error(self, value: Any, detail: str = "") -> Exception:
        """The error of a refused value (an :class:`~ragrade.errors.InputError` unless ``refusal`` says
        otherwise) naming the option, what it takes and the value."""
        text = f"{self.label()} must be {self.takes()}" + (f" ({detail})" if detail else "")
        text += f"; got {_shown(value)!r}"
        err = self.refusal(text)
        if isinstance(err, InputError):
            err.value = value
        return err

    def takes(self) -> str:
        """What the option takes, in words: ``an integer from 1 to 2147483647``, ``one of a, b``."""
        if self.choices is not None:
            return "one of " + ", ".join(map(str, self.choices))
        what = self.what or _KIND_WORDS.get(self.kind, self.kind.__name__)
        rule = self.constraint()
        return f"{what} {rule}" if rule else what

    def constraint(self) -> str:
        """The constraint in words (integers written whole: ``from 1 to 2147483647``, ``>= 0``)."""
        if self.kind is not int or self.choices is not None or self.validator is not None:
            return super().constraint() if self.validator is None else ""
        lo, hi = self.minimum, self.maximum
        hi = None if hi is not None and hi >= MAX_INT32 else hi  # a machine limit, not worth saying
        if lo is not None and hi is not None:
            return f"from {int(lo)} to {int(hi)}"
        if lo is not None:
            return f">= {int(lo)}"
        return f"<= {int(hi)}" if hi is not None else ""

    # -- the command line --------------------------------------------------------------------------
    def parse(self, text: str) -> Any:
        """The value of the command-line text ``text`` (then checked as :meth:`check` does)."""
        if self.kind in (int, float):
            try:
                number: Any = int(text.strip()) if self.kind is int else float(text.strip())
            except ValueError:
                raise self.error(text) from None
            return self.check(number)
        if self.kind is bool and self.validator is None:
            return self._coerce_bool(self.name, text)
        return self.check(text)

    def help_text(self) -> str:
        """The ``--help`` text: the documentation, the constraint, the aliases."""
        text = self.doc
        rule = self.constraint() if self.choices is None else ""
        if rule:
            text = text.rstrip(".") + f" ({rule})."
        if self.aliases:
            extra = [a for a, c in self.aliases if a != c]
            if extra:
                text += f" Aliases: {', '.join(extra)}."
        return text

    # -- generated tests ---------------------------------------------------------------------------
    def bad_values(self) -> list[Any]:
        """Values :meth:`check` must refuse: the kind's and the interval's (as for a metric parameter), the
        declared ``bad`` ones, and None unless it is taken."""
        if self.validator is not None:
            out = list(self.bad)
        elif self.kind in (int, float):
            out = [v for v in super().bad_values() if not isinstance(v, str)] + ["1", *self.bad]
        elif self.kind is bool:
            out = [2, "yes", *self.bad]
        else:
            out = [5, b"x", *(["not-a-choice"] if self.choices is not None or self.pattern else []), *self.bad]
        return out if self.nullable else [*out, None]

    def bad_texts(self) -> list[str]:
        """Command-line texts :meth:`parse` must refuse."""
        if self.validator is not None:
            return [b for b in self.bad if isinstance(b, str)]
        if self.kind is bool:
            return []
        if self.kind in (int, float):
            out = ["x", "1e400" if self.kind is float else "1.5", "nan", ""]
            if self.minimum is not None:
                out.append(_text(self.minimum if self.open_minimum else self.minimum - 1, self.kind))
            if self.maximum is not None:
                out.append(_text(self.maximum if self.open_maximum else self.maximum + 1, self.kind))
            return out
        return ["not-a-choice"] if self.choices is not None else []


def _text(value: float, kind: type) -> str:
    return str(int(value)) if kind is int else repr(float(value))


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real)


def _shown(value: Any) -> Any:
    """A refused value as shown in a message (an object's type, not its possibly huge text)."""
    if value is None or isinstance(value, str | int | float | bool | bytes):
        text = repr(value)
        return value if len(text) <= 80 else text[:80] + "..."
    if isinstance(value, list | tuple | dict | set) and len(repr(value)) <= 80:
        return value
    return type(value).__name__


# --------------------------------------------------------------------------------------------- validators
def _sequence_of(item: Option) -> Callable[[Option, Any], Any]:
    """A validator: a list or tuple (or, on the command line, a comma-separated text) of ``item`` values."""

    def check(option: Option, value: Any) -> tuple[Any, ...]:
        if isinstance(value, str) and SPELLING.get() == "cli":
            value = [p.strip() for p in value.split(",") if p.strip()]
            try:
                return tuple(item.parse(p) for p in value)
            except InputError:
                raise option.error(",".join(value)) from None
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence | set | frozenset):
            raise option.error(value)
        try:
            return tuple(item.check(v) for v in value)
        except InputError:
            raise option.error(value) from None

    return check


def _text_or_object(*attributes: str) -> Callable[[Option, Any], Any]:
    """A validator: a name (resolved later, where an unknown one is named with the nearest), or an object
    with these attributes (a :class:`~ragrade.profiles.Profile`: ``name`` and ``kind``; a matcher:
    ``match``)."""

    def check(option: Option, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                raise option.error(value)
            return value
        if attributes and all(hasattr(value, a) for a in attributes):
            return value
        raise option.error(value)

    return check


#: Units of a size: ``4GiB``, ``500MB``, ``2g``, ``1.5G``, a number of bytes.
SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 10**3, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6,
              "mib": 1 << 20, "g": 1 << 30, "gb": 10**9, "gib": 1 << 30, "t": 1 << 40, "tb": 10**12,
              "tib": 1 << 40}


def size_bytes(option: Option, value: Any) -> int:
    """Bytes of a size (``4GiB``, ``500MB``, ``2g``, ``1.5G`` or a number of bytes), at least ``minimum``."""
    if isinstance(value, bool):
        raise option.error(value)
    if _is_integer(value) or _is_real(value):
        number = float(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", value)
        if m is None or m.group(2).lower() not in SIZE_UNITS:
            raise option.error(value)
        number = float(m.group(1)) * SIZE_UNITS[m.group(2).lower()]
    else:
        raise option.error(value)
    if not math.isfinite(number) or number < (option.minimum or 1):
        raise option.error(value)
    return int(number)


def _size(option: Option, value: Any) -> Any:
    size_bytes(option, value)
    return value  # kept as given: the budget reads it (and says how much it found)


def _seed(option: Option, value: Any) -> Any:
    """A seed NumPy takes: a non-negative integer (or None, a SeedSequence, a Generator)."""
    if type(value).__name__ in ("Generator", "SeedSequence") and type(value).__module__.startswith("numpy"):
        return value
    if isinstance(value, bool) or not _is_integer(value) or value < 0:
        raise option.error(value)
    return int(value)


def _path(option: Option, value: Any) -> Any:
    import os

    if isinstance(value, str | os.PathLike) and isinstance(os.fspath(value), str) and os.fspath(value).strip():
        return value
    raise option.error(value)


def _instance_of(module: str, name: str) -> Callable[[Option, Any], Any]:
    """A validator: an instance of ``module.name`` (imported when first checked)."""

    def check(option: Option, value: Any) -> Any:
        import importlib

        if not isinstance(value, getattr(importlib.import_module(module), name)):
            raise option.error(value)
        return value

    return check


def _metrics(option: Option, value: Any) -> Any:
    """Metrics: a metric string, a ``Metric``, or a collection of them (each parsed later, where a typo is
    named with the nearest metric)."""
    if isinstance(value, str) or hasattr(value, "family"):
        return value
    if isinstance(value, Iterable) and not isinstance(value, bytes | bytearray):
        return value
    raise option.error(value)


def _mapping_or_number(option: Option, value: Any) -> Any:
    """A positive number, or a mapping of metric -> positive number."""
    number = dataclasses.replace(option, validator=None, what="", kind=float, nullable=False)
    if isinstance(value, Mapping):
        return {k: number.check(v) for k, v in value.items()}
    return number.check(value)


def _mapping(option: Option, value: Any) -> Any:
    if not isinstance(value, Mapping):
        raise option.error(value)
    return value


# --------------------------------------------------------------------------------------------- statistics
#: Significance tests ``compare`` accepts; the first four are paired tests of one difference column,
#: ``tukey`` compares all runs at once.
TESTS: tuple[str, ...] = ("randomization", "bootstrap", "t", "wilcoxon", "tukey")
#: The paired tests (``gate`` takes these).
PAIRED_TESTS: tuple[str, ...] = ("randomization", "bootstrap", "t", "wilcoxon")
TEST_ALIASES: dict[str, str] = {
    "permutation": "randomization", "fisher": "randomization", "student": "t", "ttest": "t", "t-test": "t",
    "paired-t": "t", "signed-rank": "wilcoxon", "hsd": "tukey", "tukey-hsd": "tukey", "tukey_hsd": "tukey",
}
#: Multiple-testing corrections (``none``: no correction).
CORRECTIONS: tuple[str, ...] = ("bonferroni", "holm", "bh")
CORRECTION_ALIASES: dict[str, str] = {
    "none": "none", "benjamini-hochberg": "bh", "fdr_bh": "bh", "fdr": "bh", "holm-bonferroni": "holm",
}
#: How bootstrap intervals are computed.
CI_METHODS: tuple[str, ...] = ("auto", "saddlepoint", "resample")

#: The largest number of resamples (and of queries listed): 2**31 - 1.
MAX_INT32 = 2**31 - 1
#: The largest count or cutoff (a C long): 2**63 - 1.
MAX_COUNT = 2**63 - 1

ALPHA = Option("alpha", float, 0.05, minimum=0, maximum=1, open_minimum=True, open_maximum=True,
               flag="--alpha", doc="Significance level.")
CONFIDENCE = Option("confidence", float, None, minimum=0, maximum=1, open_minimum=True, open_maximum=True,
                    nullable=True, flag="--confidence",
                    doc="Level of the confidence intervals (default: 1 - alpha, i.e. 0.95).")
N_RESAMPLES = Option("n_resamples", int, 10_000, minimum=1, maximum=MAX_INT32, flag="--resamples",
                     doc="Resamples of the bootstrap intervals and of the resampling tests.")
SEED = Option("seed", int, 0, minimum=0, nullable=True, flag="--seed", metavar="INTEGER", validator=_seed,
              what="a non-negative integer", bad=(-1, 1.5, "abc", "x", "-1", True),
              doc="Seed of the random numbers (same seed, same numbers).")
TEST = Option("test", str, "randomization", choices=TESTS, aliases=tuple(TEST_ALIASES.items()), flag="--test",
              doc="Two-sided significance test (t, wilcoxon and tukey need the 'stats' extra; tukey: Tukey's "
                  "HSD over all runs, no correction).")
GATE_TEST = dataclasses.replace(
    TEST, choices=PAIRED_TESTS, aliases=tuple((a, c) for a, c in TEST_ALIASES.items() if c in PAIRED_TESTS),
    doc="Paired test on the per-query differences (used one-sided).")
CORRECTION = Option("correction", str, "none", choices=("none", *CORRECTIONS), nullable=True,
                    aliases=tuple(CORRECTION_ALIASES.items()), flag="--correction",
                    doc="Multiple-testing correction, per metric over its pairs.")
CI_METHOD = Option("ci_method", str, "auto", choices=CI_METHODS, flag="--ci-method",
                   doc="Bootstrap intervals: saddlepoint approximation (no resampling), resampling, or auto "
                       "(saddlepoint from 100 queries on).")
BASELINE = Option("baseline", object, None, nullable=True, flag="--baseline", metavar="RUN",
                  validator=_text_or_object(), what="the name of one of the runs", bad=(5, "", b"x"),
                  doc="Compare every run with this one (name or path); default: all pairs.")
SLICE_CORRECTION = dataclasses.replace(
    CORRECTION, name="slice_correction", default="holm", flag="--slice-correction",
    doc="Multiple-testing correction over the slices of a metric and pair.")


@dataclass(frozen=True)
class ComparisonOptions:
    """How runs are compared, declared once (``compare``, ``report``, ``plot``, ``gate`` and their commands
    take it, or its fields as keywords): each field is checked by its :class:`Option` of
    :data:`COMPARISON_OPTIONS` when the object is made, so a held ``ComparisonOptions`` is valid.

    >>> ComparisonOptions(test="fisher", seed=3).test, ComparisonOptions().level
    ('randomization', 0.95)
    """

    baseline: str | None = None
    test: str = "randomization"
    correction: str = "none"
    alpha: float = 0.05
    confidence: float | None = None
    n_resamples: int = 10_000
    seed: Any = 0
    ci_method: str = "auto"

    def __post_init__(self) -> None:
        for name, spec in COMPARISON_OPTIONS.items():
            object.__setattr__(self, name, spec.check(getattr(self, name)))
        if self.correction is None:
            object.__setattr__(self, "correction", "none")
        if self.test == "tukey" and self.correction != "none":
            raise InputError("Tukey's HSD already controls the family-wise error rate over all pairs; use no "
                             f"{spelled('correction')}", value=self.correction)

    @property
    def level(self) -> float:
        """The level of the intervals: ``confidence``, else ``1 - alpha``."""
        return 1.0 - self.alpha if self.confidence is None else self.confidence

    def replace(self, **changes: Any) -> ComparisonOptions:
        """A copy with ``changes`` (checked)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def take(cls, keywords: dict[str, Any], given: ComparisonOptions | None = None) -> ComparisonOptions:
        """The options of ``given`` (default: the defaults) with the comparison keywords of ``keywords``
        applied; those keywords are taken out of ``keywords`` (the rest are an evaluation's)."""
        if given is not None and not isinstance(given, ComparisonOptions):
            raise InputError("options must be a ragrade.ComparisonOptions", value=type(given).__name__)
        mine = {name: keywords.pop(name) for name in COMPARISON_OPTIONS if name in keywords}
        return (given or cls()).replace(**mine) if mine else (given or cls())

    @classmethod
    def of(cls, given: ComparisonOptions | None, keywords: Mapping[str, Any],
           refuse: Sequence[str] = ()) -> ComparisonOptions:
        """:meth:`take` of a caller whose every keyword is a comparison option: any other (or one of
        ``refuse``) is an :class:`~ragrade.errors.UnknownNameError` naming the nearest."""
        rest = dict(keywords)
        out = cls.take(rest, given)
        unknown = [*rest, *(k for k in keywords if k in refuse)]
        if unknown:
            from ragrade.errors import UnknownNameError

            raise UnknownNameError("option", unknown[0], [n for n in COMPARISON_OPTIONS if n not in refuse])
        return out

    def keywords(self) -> dict[str, Any]:
        """The options as keywords."""
        return {name: getattr(self, name) for name in COMPARISON_OPTIONS}


#: The fields of :class:`ComparisonOptions` and their declarations.
COMPARISON_OPTIONS: dict[str, Option] = {
    o.name: o for o in (BASELINE, TEST, CORRECTION, ALPHA, CONFIDENCE, N_RESAMPLES, SEED, CI_METHOD)}


# --------------------------------------------------------------------------------------------- evaluation
PROFILE = Option("profile", object, None, nullable=True, flag="--profile", metavar="PROFILE",
                 validator=_text_or_object("name", "kind"), what="a profile name or a ragrade.Profile",
                 bad=(3, "", 1.5, b"x"),
                 doc="Score under a peer's conventions (autorag, ragas, continuous-eval, remem, llamaindex, "
                     "deepeval, trec_eval, pytrec_eval, beir, ir_measures, ranx). See docs/profiles.md.")
MATCHER = Option("matcher", object, None, nullable=True, flag="--matcher", metavar="MATCHER",
                 validator=_text_or_object("match"), what="a matcher name or a ragrade matcher",
                 bad=(3.5, "", 7),
                 doc="Items are texts matched by MATCHER (exact, fuzzy, rouge_l, token_f1, ...; 'profile' for a "
                     "list profile's own). See docs/matching.md.")
MAX_MEMORY = Option("max_memory", object, None, nullable=True, flag="--max-memory", metavar="SIZE",
                    minimum=16 << 20, validator=_size, what="a size of at least 16MiB such as '4GiB' or '500MB'",
                    bad=("lots", 0, -5, True, "4 parsecs", 1.5),
                    doc="Evaluate in about SIZE of memory (e.g. 4GiB), reading the files piece by piece; same "
                        "results. See docs/scale.md.")
NAMES = Option("names", str, None, choices=("ragrade", "trec_eval"), nullable=True, flag="--names",
               doc="How bare metric names are read: trec_eval reads every trec_eval name as trec_eval does "
                   "(recall = recall_5 ... recall_1000); ragrade keeps ragrade's meaning of its own family names "
                   "(recall = the whole list's recall). Default: trec_eval under --profile trec_eval or "
                   "pytrec_eval, else ragrade.")
REL_LEVEL = Option("rel_level", int, None, minimum=1, maximum=MAX_COUNT, nullable=True, flag="--level",
                   doc="trec_eval -l: relevance level of every metric not given one (e.g. P(rel=2)@5).")
MAX_DOCS = Option("max_docs", int, None, minimum=1, maximum=MAX_COUNT, nullable=True, refusal=PolicyError, flag="--max-docs",
                  doc="trec_eval -M: read only the first N documents of each ranking.")
NUM_DOCS = Option("num_docs", int, None, minimum=0, maximum=MAX_COUNT, nullable=True, refusal=PolicyError, flag="--num-docs",
                  doc="trec_eval -N: documents in the collection (utility's fourth coefficient).")
UPPER_GRADE = Option("upper_grade", float, None, minimum=0, open_minimum=True, nullable=True, refusal=PolicyError, flag="--upper-grade",
                     doc="With --unjudged bounds: the grade of an unjudged document in the upper bound (default: "
                         "the highest grade in QRELS).")

_POLICY_HELP = {
    "missing_run": "Query in the ground truth but not in the run",
    "missing_qrels": "Query in the run but not in the ground truth",
    "no_relevant": "Query with no relevant judgment (R = 0)",
    "duplicates": "Same item twice in one ranking",
    "ties": "Order of equal scores",
    "identical_ids": "Items whose id equals the query id",
    "empty_run": "Query with an empty retrieved list",
    "unjudged": "Retrieved document without a judgment: nonrelevant (trec_eval), condensed (removed before "
                "scoring, as trec_eval -J), bounds (lower and upper bound)",
}

#: One declaration per named policy (their values are :meth:`ragrade.policies.Policies.choices`).
POLICY_OPTIONS: dict[str, Option] = {
    name: Option(name, str, None, choices=choices, nullable=True, flag="--" + name.replace("_", "-"), refusal=PolicyError,
                 doc=f"{_POLICY_HELP.get(name, name)} (default: {choices[0]}).")
    for name, choices in Policies.choices().items()}

# --------------------------------------------------------------------------------------------- output
DIGITS = Option("digits", int, 4, minimum=0, maximum=17, flag="--digits", doc="Decimals shown.")
WORST = Option("worst", int, 10, minimum=0, maximum=MAX_INT32, flag="--worst",
               doc="Queries that got most worse, listed per metric.")
STRICT = Option("strict", bool, False, flag="--strict",
                doc="Non-inferiority must be shown: fail unless the drop is significantly smaller than the margin.")
ALLOW_QRELS_CHANGE = Option("allow_qrels_change", bool, False, flag="--allow-qrels-change",
                            doc="Compare even though the qrels differ from the baseline's (the change is reported).")
CUTOFF = Option("k", int, 10, minimum=1, maximum=MAX_COUNT, doc="a cutoff")
KS = Option("ks", object, (1, 3, 5, 10, 20, 50, 100), nullable=True, flag="--ks", metavar="K,K,...",
            validator=_sequence_of(CUTOFF), what="a list of cutoffs >= 1", bad=([0], ["x"], 5, "abc", [1.5]),
            doc="Cutoffs of the metric@k curves, e.g. 1,5,10 ('' for none).")
DEPTH = Option("depth", int, None, minimum=1, maximum=MAX_INT32, nullable=True, flag="--depth",
               doc="Items shown per run and query (default: the largest metric cutoff, else 10).")
HOLE_THRESHOLD = Option("hole_threshold", float, 0.1, minimum=0, maximum=1, flag="--hole-threshold",
                        doc="Warn when the mean hole rate (share of unjudged documents in the top k) exceeds it.")
PLOTS = Option("plots", bool, True, flag="--plots", doc="Draw the plots (inline SVG).")
TITLE = Option("title", str, "ragrade report", flag="--title", doc="Title of the report.")
MAX_PAIR_PLOTS = Option("max_pair_plots", int, 10, minimum=0, maximum=MAX_INT32,
                        doc="Pairs of runs drawn in the per-pair plots.")
COMPRESSION = Option("compression", int, 1, minimum=0, maximum=9, doc="zlib level of the embedded data.")
SCALE = Option("scale", float, 2.0, minimum=0.5, maximum=8, flag="--scale", doc="PNG pixels per SVG pixel.")
PLOT_FORMAT = Option("format", str, "svg", choices=("svg", "png"), flag="--format",
                     doc="File format (png needs the 'plots' extra: matplotlib).")
TOP = Option("top", int, 5, minimum=0, maximum=1000, flag="--top",
             doc="Queries listed per metric among those that move most across profiles.")
PATH = Option("path", object, None, validator=_path, what="a file path", bad=(5, "", b"x"), doc="A file.")
NAME = Option("name", str, None, nullable=True, doc="The run's name.", bad=())
POWER = Option("power", float, 0.8, minimum=0, maximum=1, open_minimum=True, open_maximum=True, flag="--power",
               doc="Power: the probability of detecting the difference when it is there.")

PATH = Option("path", object, None, validator=_path, what="a file path (a str or os.PathLike)",
              bad=(5, "", b"x", None, [], 1.5))
DIRECTORY = dataclasses.replace(PATH, name="directory", what="a folder path (a str or os.PathLike)")
METRICS = Option("metrics", object, None, validator=_metrics,
                 what="a metric (e.g. 'ndcg@10') or a list of metrics", bad=(5, 1.5, b"x", object()))
#: ``metrics`` where None means every metric at hand (the gate: the baseline's; compare_scores: the columns).
SOME_METRICS = dataclasses.replace(METRICS, nullable=True, bad=(5, 1.5, b"x"))
PROFILES = Option("profiles", object, None, nullable=True, validator=_sequence_of(PROFILE),
                  what="a list of profile names", bad=(5, [3], b"x"))
DELTA = Option("delta", float, None, minimum=0, open_minimum=True, validator=_mapping_or_number,
               what="a number > 0 or a mapping of metric -> number > 0", bad=("x", 0, -1, math.nan, {"P@1": 0}))
STEP = Option("step", float, 0.1, minimum=0, maximum=1, open_minimum=True, flag="--step",
              doc="The weight grid's step (every combination of multiples of STEP summing to 1).")
CV = Option("cv", int, None, minimum=2, maximum=MAX_INT32, nullable=True, flag="--cv",
            doc="Also the k-fold cross-validated score (folds drawn with --seed).")
PARAMS = Option("params", object, None, nullable=True, validator=_mapping, what="a mapping of parameter -> value",
                bad=(5, "k=60", [1]))
QRELS_OBJECT = Option("qrels", object, None, validator=_instance_of("ragrade.data", "Qrels"),
                      what="a ragrade.Qrels", bad=(5, None, {"q": {"d": 1}}))
RUN_OBJECT = Option("run", object, None, validator=_instance_of("ragrade.data", "Run"), what="a ragrade.Run",
                    bad=(5, None, {"q": ["d"]}))

@dataclass(frozen=True)
class Allowance:
    """How many failures a command allows before its exit status is 1 (``--max-failed``): a ``count``
    (``5``), or a ``percent`` of the attempts (``2%``).

    >>> Allowance(count=0).exceeded(1, 100), Allowance(percent=2.0).exceeded(2, 100), str(Allowance(percent=2.5))
    (True, False, '2.5%')
    """

    count: int = 0
    percent: float | None = None

    def exceeded(self, failed: int, attempts: int) -> bool:
        """Whether ``failed`` of ``attempts`` is more than allowed."""
        if self.percent is not None:
            return failed * 100 > self.percent * max(attempts, 0)
        return failed > self.count

    def __str__(self) -> str:
        return f"{self.percent:g}%" if self.percent is not None else str(self.count)


def _allowance(option: Option, value: Any) -> Allowance:
    """A count (an integer >= 0, or its text) or a percentage (a text ending in ``%``, from 0 to 100)."""
    if isinstance(value, Allowance):
        return value
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else None
    if text is not None and text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            raise option.error(value) from None
        if math.isfinite(percent) and 0 <= percent <= 100:
            return Allowance(percent=percent)
    elif text is not None and re.fullmatch(r"[0-9]+", text):
        return Allowance(count=int(text))
    raise option.error(value)


MAX_FAILED = Option("max_failed", object, "0", validator=_allowance, flag="--max-failed", metavar="N|P%",
                    what="a count (5) or a percentage of the attempts (2%)",
                    bad=("x", "-1", "101%", "1.5", "nan%", "%", True, -1, 1.5),
                    doc="Failures allowed before the exit status is 1: a count (5) or a percentage of the "
                        "attempts (2%); the results are printed either way.")
TIMEOUT = Option("timeout", float, None, minimum=0, open_minimum=True, nullable=True, flag="--timeout",
                 doc="Seconds allowed per call; a call without an answer by then has failed (default: no limit).")
CONCURRENCY = Option("max_concurrency", int, 8, minimum=1, maximum=4096, flag="--max-concurrency",
                     doc="Calls in flight at once.")
#: The seed an LLM backend sends with each request (its own sampling), apart from ragrade's random numbers.
LLM_SEED = Option("llm_seed", int, 0, minimum=0, nullable=True, flag="--llm-seed",
                  doc="Sampling seed sent to the LLM server with each request (not ragrade's random numbers: "
                      "--seed).")
def _url(option: Option, value: Any) -> str:
    """An http(s) URL with a host (``http://localhost:8000/v1``)."""
    from urllib.parse import urlsplit

    if not isinstance(value, str):
        raise option.error(value)
    try:
        parts = urlsplit(value.strip())
        port = parts.port  # a port that is not a number is refused here
    except ValueError:
        raise option.error(value) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or (port is not None and not 0 < port < 65536):
        raise option.error(value)
    return value.strip()


BASE_URL = Option("base_url", str, "https://api.openai.com/v1", validator=_url, flag="--base-url", metavar="URL",
                  what="an http(s) URL with a host (e.g. http://localhost:8000/v1)",
                  bad=("not-a-url", "http://", "ftp://example.com/v1", "http://host:notaport/v1", 5, ""),
                  doc="Server of an LLM backend (env RAGRADE_JUDGE_BASE_URL).")
MARGIN = Option("margin", float, 0.0, minimum=0, flag="--margin", doc="Tolerated drop of a metric's mean.")
FLOOR = Option("floor", float, None, flag="--min", doc="Lowest acceptable mean of a metric.")


def _per_metric(item: Option, number_too: bool) -> Callable[[Option, Any], Any]:
    """A validator: a mapping metric -> ``item`` value (and with ``number_too`` one value for every metric)."""

    def check(option: Option, value: Any) -> Any:
        if number_too and not isinstance(value, Mapping):
            try:
                return item.check(value)
            except InputError:
                raise option.error(value) from None
        if not isinstance(value, Mapping):
            raise option.error(value)
        out = {}
        for key, v in value.items():
            try:
                out[str(key)] = item.check(v)
            except InputError:
                raise option.error({key: v}) from None
        return out

    return check


MARGINS = Option("margins", object, None, nullable=True, validator=_per_metric(MARGIN, True),
                 what="a number >= 0 or a mapping of metric -> number >= 0 ('*': every metric)",
                 bad=("x", -1, math.nan, math.inf, True, {"P@1": "x"}, {"P@1": -0.1}, [0.1]))
FLOORS = Option("floors", object, None, nullable=True, validator=_per_metric(FLOOR, False),
                what="a mapping of metric -> lowest acceptable mean", bad=(5, "x", {"P@1": "x"}, {"P@1": math.nan}))

#: Every declared option by its Python name: :func:`public` checks a public function's argument of that
#: name with it (a function's own meaning of a name is declared to the decorator).
OPTIONS: dict[str, Option] = {o.name: o for o in (
    *COMPARISON_OPTIONS.values(), SLICE_CORRECTION, PROFILE, MATCHER, MAX_MEMORY, NAMES, REL_LEVEL, MAX_DOCS,
    NUM_DOCS, UPPER_GRADE, *POLICY_OPTIONS.values(), DIGITS, WORST, STRICT, ALLOW_QRELS_CHANGE, KS, DEPTH,
    PLOTS, TITLE, MAX_PAIR_PLOTS, COMPRESSION, SCALE, TOP, POWER, PATH, DIRECTORY, METRICS, PROFILES, DELTA,
    MARGINS, FLOORS)}


# --------------------------------------------------------------------------------------------- the edge
@overload
def public(func: Callable[P, T], /) -> Callable[P, T]: ...


@overload
def public(func: None = None, /, **declared: Option | None) -> Callable[[Callable[P, T]], Callable[P, T]]: ...


def public(func: Callable[P, T] | None = None, /, **declared: Option | None) -> Any:
    """Decorate a public function: :func:`ragrade.errors.boundary` (its arguments bound, an unknown keyword
    named with the nearest, only file errors taken for bad input, anything else an
    :class:`~ragrade.errors.InternalError`), and before the call every argument with a declaration
    (``declared[name]``, else :data:`OPTIONS`; ``declared[name] = None``: the function checks it itself) is
    checked and converted (aliases resolved), keywords gathered by ``**kwargs`` included. ``@public`` and
    ``@public(name=Option)`` both work."""

    def wrap(f: Callable[P, T]) -> Callable[P, T]:
        params = inspect.signature(f).parameters
        gather = next((p.name for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD), None)

        def spec(name: str) -> Option | None:
            return declared[name] if name in declared else OPTIONS.get(name)

        def check(bound: inspect.BoundArguments) -> None:
            for name, value in list(bound.arguments.items()):
                if name == gather:
                    bound.arguments[name] = {k: _checked(spec(k), v) for k, v in value.items()}
                elif params[name].kind is not inspect.Parameter.VAR_POSITIONAL:
                    bound.arguments[name] = _checked(spec(name), value)

        call = boundary(f, check=check)
        call.__ragrade_public__ = declared  # type: ignore[attr-defined]
        return call

    return wrap(func) if func is not None else wrap


def _checked(spec: Option | None, value: Any) -> Any:
    return value if spec is None else spec.check(value)


def declarations(func: Callable[..., Any]) -> dict[str, Option]:
    """The declarations :func:`public` checks ``func``'s parameters with (for the generated tests)."""
    declared = getattr(func, "__ragrade_public__", None)
    if declared is None:
        return {}
    names = inspect.signature(func).parameters
    out = {name: declared[name] if name in declared else OPTIONS.get(name) for name in names}
    return {k: v for k, v in out.items() if v is not None}
