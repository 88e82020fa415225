"""trec_eval 10's command line for the drop-in (:mod:`ragrade.compat.trec_eval`): its options, short and long, read
as trec_eval's getopt reads them (:func:`parse_args`), and its help text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragrade.compat._trec_eval_c import atol as _atol
from ragrade.compat.trec_eval_measures import BY_NAME, MEASURES, NICKNAMES
from ragrade.errors import TrecEvalError

if TYPE_CHECKING:  # pragma: no cover

    pass


# -- the command line ------------------------------------------------------------------------------------------


@dataclass
class Options:
    query: bool = False  # -q
    complete: bool = False  # -c
    summary: bool = True  # -n turns it off
    rel_level: int = 1  # -l
    judged_only: bool = False  # -J
    num_docs: int = 0  # -N
    max_docs: int | None = None  # -M
    rel_format: str = "qrels"  # -R
    results_format: str = "trec_results"  # -T
    zscores: str | None = None  # -Z
    help: bool = False  # -h
    version: bool = False  # -v
    marked: list[str] = field(default_factory=list)  # measure names marked, in -m order
    params: dict[str, str] = field(default_factory=dict)  # measure -> its first parameter string
    files: list[str] = field(default_factory=list)


_SHORT_WITH_ARG = set("mlDNMRTZ")
_SHORT_FLAGS = set("hvqcnJo")
LONG_OPTIONS = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m", "complete_rel_info_wanted": "c",
         "level_for_rel": "l", "nosummary": "n", "Debug_level": "D", "Judged_docs_only": "J",
         "Number_docs_in_coll": "N", "Max_retrieved_per_topic": "M", "Rel_info_format": "R",
         "Results_format": "T", "Output_old_results_format": "o", "Zscore": "Z"}


_UNKNOWN = "(trec_eval's options: -q -c -n -l -M -N -J -R -T -Z -m -v -h)"
#: The flags and what each sets on :class:`Options`.
_FLAG_FIELDS = {"h": ("help", True), "v": ("version", True), "q": ("query", True), "c": ("complete", True),
                "n": ("summary", False), "J": ("judged_only", True)}
#: The options with a value and the field each sets (-l, -N, -M read as C's atol).
_VALUE_FIELDS = {"l": "rel_level", "N": "num_docs", "M": "max_docs", "R": "rel_format", "T": "results_format",
                 "Z": "zscores"}


def parse_args(argv: Sequence[str]) -> Options:
    """trec_eval's options (GNU getopt: options may follow the files; ``--`` ends them)."""
    opts = Options()
    values, opts.files = _tokens(list(argv))
    for letter, value in values:
        if letter in _FLAG_FIELDS:
            setattr(opts, *_FLAG_FIELDS[letter])
        elif letter in _VALUE_FIELDS:
            field_name = _VALUE_FIELDS[letter]
            setattr(opts, field_name, _atol(value) if letter in "lNM" else value)
        elif letter == "m":
            _mark(opts, value)
        # -D (debug level) and -o (obsolete) change nothing in the output
    return opts


def _tokens(args: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """``([(option letter, value)], files)`` of a command line, as getopt reads it."""
    values: list[tuple[str, str]] = []
    files: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            files += args[i + 1:]
            break
        if a.startswith("--"):
            i = _long_option(args, i, values)
        elif a.startswith("-") and len(a) > 1:
            i = _short_options(args, i, values)
        else:
            files.append(a)
        i += 1
    return values, files


def _long_option(args: list[str], i: int, values: list[tuple[str, str]]) -> int:
    """Read the long option ``args[i]`` (a unique prefix of its name; its value after ``=`` or next) into
    ``values``; the index of the last argument read."""
    a = args[i]
    name, eq, value = a[2:].partition("=")
    matches = [k for k in LONG_OPTIONS if k.startswith(name)] if name not in LONG_OPTIONS else [name]
    if len(matches) != 1:
        raise TrecEvalError(f"unknown option {a!r} {_UNKNOWN}")
    letter = LONG_OPTIONS[matches[0]]
    if letter not in _SHORT_WITH_ARG:
        values.append((letter, ""))
        return i
    if not eq:
        i += 1
        if i >= len(args):
            raise TrecEvalError(f"option {a!r} needs a value")
        value = args[i]
    values.append((letter, value))
    return i


def _short_options(args: list[str], i: int, values: list[tuple[str, str]]) -> int:
    """Read the short options grouped in ``args[i]`` (flags, then at most one option whose value is the rest
    or the next argument) into ``values``; the index of the last argument read."""
    a = args[i]
    for j in range(1, len(a)):
        c = a[j]
        if c in _SHORT_FLAGS:
            values.append((c, ""))
            continue
        if c not in _SHORT_WITH_ARG:
            raise TrecEvalError(f"unknown option -{c} {_UNKNOWN}")
        value = a[j + 1:]
        if not value:
            i += 1
            if i >= len(args):
                raise TrecEvalError(f"option -{c} needs a value")
            value = args[i]
        values.append((c, value))
        break
    return i


def _mark(opts: Options, text: str) -> None:
    name, dot, params = text.partition(".")
    if dot:
        if not params:
            raise TrecEvalError(f"improper measure in parameter {name!r}: nothing after the dot")
        opts.params.setdefault(name, params)  # trec_eval uses the first parameters given for a measure
    if name in NICKNAMES:
        opts.marked += NICKNAMES[name]
    elif name in BY_NAME:
        opts.marked.append(name)
    else:
        raise TrecEvalError(f"illegal measure {text!r}: not a trec_eval 10 measure or nickname (see `ragrade "
                            "trec_eval -h`)")


def help_text(opts: Options) -> str:
    """ragrade's own help for the trec_eval command (options, formats, and the measures asked for)."""
    lines = [
        "ragrade trec_eval: trec_eval 10's command line, computed by ragrade.",
        "",
        "usage: ragrade trec_eval [options] QRELS RUN",
        "",
        "  -q            print the value of every query too",
        "  -c            score judged queries missing from the run (as empty rankings)",
        "  -n            no summary ('all' lines)",
        "  -l LEVEL      lowest grade counted as relevant (default 1; 0 and below as trec_eval reads them)",
        "  -M N          read only the first N documents of each ranking (0: none)",
        "  -N N          number of documents in the collection (utility)",
        "  -J            drop unjudged documents from the rankings before scoring",
        "  -R FORMAT     judgment format (qrels, qrels_jg, prefs, qrels_prefs)",
        "  -Z FILE       z-scores: 'qid measure mean stddev' lines standardise each value",
        "  -T FORMAT     results format (trec_results)",
        "  -m MEASURE    a measure, a measure with parameters (P.5,10) or a set: official, all_trec, set, qrels_jg,"
        " all_prefs",
        "  -v            the trec_eval version it follows",
        "  -h            this help",
        "",
        "QRELS: 'query iteration document grade' lines (prefs: 'query group subgroup document level'); RUN: "
        "'query Q0 document rank score run' lines;",
        "lines starting with '#' are comments.",
        "",
        "Measures: " + ", ".join(m.name for m in MEASURES if m.supported),
        "Sets: " + ", ".join(NICKNAMES),
        "Definitions: docs/metrics.md (ragrade metrics); differences from trec_eval 9: docs/conventions.md.",
    ]
    return "\n".join(lines) + "\n"
