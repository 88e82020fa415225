"""A drop-in for the trec_eval 10 command line: ``ragrade trec_eval [options] QRELS RUN``.

The options are trec_eval's (``-q -c -n -l -M -N -J -R -T -m -v -h``, long forms too), the measures its
measures (``-m P.5,10``, ``-m all_trec``, ``-m official``...), and the output is meant to be byte for byte what
trec_eval 10.0 prints: the same lines in the same order (measures in trec_eval's table order, queries in the
byte order of their ids, the ``all`` lines last), the same names (``P_5``, ``iprec_at_recall_0.10``,
``utility_2,-1,0,0``) and the same formats (22-wide names, ``%6.4f`` values, integer counts, ``runid``,
``relstring``). The values come from ragrade's kernels (the registry's families); this module reads the
command line, the files and the measures, and prints.

Where trec_eval stops with an error (an unknown measure, a bad parameter, a duplicate document in a run, a
judged query missing from the run without ``-c``), :func:`run` raises :class:`TrecEvalError` with a clear
message; the command prints it as one ``error:`` line and exits with status 2.

``-M`` cuts each ranking in trec_eval's order before anything else (``-M0``: every ranking empty); ``-l0`` is
level 1 on the judgments with every grade >= 0 raised by one (the measures with a relevance level), and below 0
the measures that read the rankings' marks come from :mod:`ragrade.compat.trec_eval_query`, which also computes the
parameters the kernels do not express (gain maps trec_eval sorts out of order, recall levels outside [0, 1]...).

``-R qrels_jg`` reads judgment groups (``qid group docno grade``) for ``map_avgjg``, ``P_avgjg`` and
``Rprec_mult_avgjg``. ``-R prefs`` and ``-R qrels_prefs`` read preference judgments for the ``prefs_*``
measures (:mod:`ragrade.compat.trec_eval_prefs`).
"""

from __future__ import annotations

import itertools
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from ragrade.compat._trec_eval_c import atof as _atof
from ragrade.compat._trec_eval_c import atol as _atol
from ragrade.errors import TrecEvalError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ragrade.metrics.parser import Metric

VERSION = "10.0-rc3"


# -- trec_eval's measures, in the order it computes and prints them -------------------------------------------

#: How a measure's values print and aggregate (trec_eval's init/print procedures).
#: ``double``: one value; ``long``: one count (``%ld``); ``gm``: geometric mean, no per-query line;
#: ``count_q``: num_q; ``cut_long`` / ``cut_double``: one value per parameter (sorted); ``double_p``: one value
#: whose name carries the parameters when given; ``relstring``, ``runid``: text.
@dataclass(frozen=True)
class Measure:
    name: str
    kind: str
    default: str = ""  # the default parameters, as trec_eval would write them after the dot
    supported: bool = True
    base: str = ""  # judgment-group measures: the measure averaged over the groups (map, P, Rprec_mult)


_OFFICIAL_CUTS = "5,10,15,20,30,100,200,500,1000"
_ELEVEN = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"

MEASURES: tuple[Measure, ...] = (
    Measure("runid", "runid"),
    Measure("num_q", "count_q"),
    Measure("num_ret", "long"),
    Measure("num_rel", "long"),
    Measure("num_rel_ret", "long"),
    Measure("map", "double"),
    Measure("gm_map", "gm"),
    Measure("Rprec", "double"),
    Measure("bpref", "double"),
    Measure("recip_rank", "double"),
    Measure("iprec_at_recall", "cut_double", _ELEVEN),
    Measure("P", "cut_long", _OFFICIAL_CUTS),
    Measure("relstring", "relstring", "10"),
    Measure("recall", "cut_long", _OFFICIAL_CUTS),
    Measure("infAP", "double"),
    Measure("gm_bpref", "gm"),
    Measure("Rprec_mult", "cut_double", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
    Measure("utility", "double_p", "1,-1,0,0"),
    Measure("11pt_avg", "double_p", _ELEVEN),
    Measure("binG", "double"),
    Measure("G", "double_p"),
    Measure("dcg", "double_p"),
    Measure("ideal_dcg", "double_p"),
    Measure("ndcg", "double_p"),
    Measure("ndcg_rel", "double_p"),
    Measure("Rndcg", "double_p"),
    Measure("ndcg_cut", "cut_long", _OFFICIAL_CUTS),
    Measure("map_cut", "cut_long", _OFFICIAL_CUTS),
    Measure("relative_P", "cut_long", _OFFICIAL_CUTS),
    Measure("success", "cut_long", "1,5,10"),
    Measure("set_P", "double"),
    Measure("set_relative_P", "double"),
    Measure("set_recall", "double"),
    Measure("set_map", "double"),
    Measure("set_F", "double_p", "1.0"),
    Measure("num_nonrel_judged_ret", "long"),
    *(Measure(f"prefs_{n}", "long") for n in ("num_prefs_poss", "num_prefs_ful", "num_prefs_ful_ret")),
    *(Measure(f"prefs_{n}", "double") for n in (  # -R prefs, qrels_prefs: compat/trec_eval_prefs.py
        "simp", "pair", "avgjg", "avgjg_Rnonrel", "simp_ret", "pair_ret", "avgjg_ret", "avgjg_Rnonrel_ret",
        "simp_imp", "pair_imp", "avgjg_imp")),
    Measure("map_avgjg", "double", base="map"),
    Measure("P_avgjg", "cut_long", _OFFICIAL_CUTS, base="P"),
    Measure("Rprec_mult_avgjg", "cut_double", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0", base="Rprec_mult"),
    Measure("yaap", "double"),
    Measure("rbp", "double_p"),
    Measure("rbp_resid", "double_p"),
    Measure("unj", "cut_long", "5,10,20"),
)
BY_NAME = {m.name: m for m in MEASURES}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                  "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                  "prefs_pair_imp", "prefs_avgjg_imp"),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}


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
_LONG = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure": "m", "complete_rel_info_wanted": "c",
         "level_for_rel": "l", "nosummary": "n", "Debug_level": "D", "Judged_docs_only": "J",
         "Number_docs_in_coll": "N", "Max_retrieved_per_topic": "M", "Rel_info_format": "R",
         "Results_format": "T", "Output_old_results_format": "o", "Zscore": "Z"}


def parse_args(argv: Sequence[str]) -> Options:
    """trec_eval's options (GNU getopt: options may follow the files; ``--`` ends them)."""
    opts = Options()
    values: list[tuple[str, str]] = []
    i = 0
    args = list(argv)
    while i < len(args):
        a = args[i]
        if a == "--":
            opts.files += args[i + 1:]
            break
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            matches = [k for k in _LONG if k.startswith(name)] if name not in _LONG else [name]
            if len(matches) != 1:
                raise TrecEvalError(f"unknown option {a!r} (trec_eval's options: -q -c -n -l -M -N -J -R -T -Z -m "
                                    "-v -h)")
            letter = _LONG[matches[0]]
            if letter in _SHORT_WITH_ARG:
                if not eq:
                    i += 1
                    if i >= len(args):
                        raise TrecEvalError(f"option {a!r} needs a value")
                    value = args[i]
                values.append((letter, value))
            else:
                values.append((letter, ""))
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                if c in _SHORT_FLAGS:
                    values.append((c, ""))
                    j += 1
                    continue
                if c in _SHORT_WITH_ARG:
                    value = a[j + 1:]
                    if not value:
                        i += 1
                        if i >= len(args):
                            raise TrecEvalError(f"option -{c} needs a value")
                        value = args[i]
                    values.append((c, value))
                    break
                raise TrecEvalError(f"unknown option -{c} (trec_eval's options: -q -c -n -l -M -N -J -R -T -Z -m "
                                    "-v -h)")
        else:
            opts.files.append(a)
        i += 1
    for letter, value in values:
        if letter == "h":
            opts.help = True
        elif letter == "v":
            opts.version = True
        elif letter == "q":
            opts.query = True
        elif letter == "c":
            opts.complete = True
        elif letter == "n":
            opts.summary = False
        elif letter == "J":
            opts.judged_only = True
        elif letter == "l":
            opts.rel_level = _atol(value)
        elif letter == "N":
            opts.num_docs = _atol(value)
        elif letter == "M":
            opts.max_docs = _atol(value)
        elif letter == "R":
            opts.rel_format = value
        elif letter == "T":
            opts.results_format = value
        elif letter == "Z":
            opts.zscores = value
        elif letter == "m":
            _mark(opts, value)
        # -D (debug level) and -o (obsolete) change nothing in the output
    return opts


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


# -- measures -> ragrade metrics ------------------------------------------------------------------------------


@dataclass
class Planned:
    """One requested measure: its output names and the ragrade metric of each (None: text, count, or computed
    query by query: ``direct``)."""

    measure: Measure
    names: list[str]
    metrics: list[Metric | None]
    params: str | None = None  # the parameter string given with -m (None: the default)
    number: float = 0.0  # relstring's length
    parts: list[Metric] = field(default_factory=list)  # relstring: grade_at@1 ... grade_at@N
    values: list[Any] = field(default_factory=list)  # the parameters as trec_eval reads them (_trec_eval_c)
    direct: bool = False  # computed query by query (compat/trec_eval_query.py): parameters the kernels lack


#: trec_eval 10's dcg, ideal_dcg and ndcg share one parameter block: a gain map given to one of them is read
#: into it as each is set up (in this order), so all three compute with the last map given, and each is named
#: with the map last read when it was set up (``-m ndcg.1=3 -m dcg``: ``dcg`` and ``ndcg_1=3``, both with the
#: map). trec_eval then frees that block twice and aborts after printing (its output is lost when piped);
#: ragrade prints what it computes, to the end.
_SHARED = ("dcg", "ideal_dcg", "ndcg")

#: The measures whose parameters are ``name=value`` pairs (the rest read a list of numbers).
_PAIRS = frozenset({"G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "rbp", "rbp_resid"})


def _double_name(name: str, value: float) -> str:
    """trec_eval's name of one value of a cut_double measure: ``name_%3.2f``, the number cut to 8 characters
    (as its buffer cuts it: ``iprec_at_recall_100000.0``), NaN and infinities as glibc prints them."""
    from ragrade.compat._trec_eval_c import printf

    return f"{name}_{printf('%3.2f', value)[:8]}"


def _finite(values: list[float]) -> bool:
    return all(math.isfinite(v) for v in values)


def _kernel_form(m: Measure, values: list[Any]) -> str | None:
    """The ragrade metric text that computes measure ``m`` with the parameters ``values`` (as trec_eval reads
    them) exactly as trec_eval 10 does, or None where the kernels do not express them (computed query by
    query instead)."""
    name = m.base or m.name
    if m.kind == "cut_long":
        return None if values != sorted(values) else ""  # misordered: two cutoffs 2^32 apart
    if m.kind == "cut_double":
        top = 1.0 if name == "iprec_at_recall" else 1e6  # Rprec_mult: (long)(x R + 0.9) stays in range
        low_ok = (lambda v: v >= 0) if name == "iprec_at_recall" else (lambda v: v > 0)
        return "" if _finite(values) and all(low_ok(v) and v <= top for v in values) else None
    if m.name == "utility":
        if len(values) != 4:
            raise TrecEvalError(f"utility.{','.join(map(repr, values))}: utility takes 4 coefficients (trec_eval: "
                                "improper number of coefficients)")
        return f"utility.{','.join(map(repr, values))}" if _finite(values) else None
    if m.name == "set_F":
        return f"set_F.{values[0]!r}" if math.isfinite(values[0]) and values[0] > 0 else None
    if m.name == "11pt_avg":
        ok = _finite(values) and all(0 <= v <= 1 for v in values) and values == sorted(values)
        return f"11pt_avg.{','.join(map(repr, values))}" if ok else None
    if m.name in _PAIRS:
        from ragrade.compat._trec_eval_c import is_valid_int

        if m.name != "rbp_resid" and any(is_valid_int(n) for n, _ in values):
            return None  # a gain map: trec_eval's table (compat/trec_eval_query.gain_table)
        given = [v for n, v in values if n == "p"] if m.name in ("rbp", "rbp_resid") else []
        if not given:
            return m.name
        return f"{m.name}.p={given[-1]!r}" if 0 < given[-1] < 1 else None
    raise AssertionError(m.name)  # pragma: no cover


def _read_params(m: Measure, text: str) -> list[Any]:
    """The parameters of measure ``m`` as trec_eval reads ``text`` (its default when no parameters are given)."""
    from ragrade.compat import _trec_eval_c as c

    if m.kind == "cut_long":
        return list(c.long_cutoffs(m.name, text))
    if m.kind == "cut_double":
        return list(c.double_cutoffs(m.name, text))
    if m.name in _PAIRS:
        return list(c.param_pairs(m.name, text)) if text else []
    return list(c.double_params(text)) if text else []


def plan(opts: Options) -> list[Planned]:
    """The measures to compute, in trec_eval's order, with their output names and ragrade metrics; a measure
    whose parameters the kernels do not express is ``direct`` (computed by :mod:`ragrade.compat.trec_eval_query`)."""
    from ragrade.errors import MetricError

    marked = set(opts.marked or NICKNAMES["official"])
    out: list[Planned] = []
    for m in MEASURES:
        if m.name not in marked:
            continue
        _check_format(m, opts.rel_format)
        given, params = _parameters(m, opts, marked)
        try:
            out.append(_plan_one(m, given, params, opts))
        except MetricError as err:
            raise TrecEvalError(f"bad parameters for measure {m.name!r}: {err}") from None
    return out


def _check_format(m: Measure, rel_format: str) -> None:
    """Refuse a measure that reads another judgment format than ``rel_format`` (as trec_eval does)."""
    if m.kind in ("runid", "count_q"):
        return
    if m.name.startswith("prefs_") != (rel_format in ("prefs", "qrels_prefs")):
        raise TrecEvalError(f"measure {m.name!r} reads " + ("preferences: use -R prefs or -R qrels_prefs"
                            if m.name.startswith("prefs_") else f"qrels, not -R {rel_format}"))
    if bool(m.base) != (rel_format == "qrels_jg") and not m.name.startswith("prefs_"):
        raise TrecEvalError(f"measure {m.name!r} reads " + ("judgment groups: use -R qrels_jg" if m.base else
                            f"qrels, not -R {rel_format} (the judgment-group measures are map_avgjg, "
                            "P_avgjg, Rprec_mult_avgjg)"))


def _parameters(m: Measure, opts: Options, marked: set[str]) -> tuple[str | None, str]:
    """``(the parameters shown in m's name, or None; the parameters m computes with)``: the ones given with -m
    (or m's default), except for the three measures that share one parameter block (:data:`_SHARED`)."""
    given = opts.params.get(m.name)
    if m.name not in _SHARED:
        return given, given if given is not None else m.default
    shown = next((opts.params[n] for n in reversed(_SHARED[:_SHARED.index(m.name) + 1])
                  if n in marked and n in opts.params), None)
    return shown, next((opts.params[n] for n in reversed(_SHARED) if n in marked and n in opts.params), "")


def _plan_one(m: Measure, given: str | None, params: str, opts: Options) -> Planned:
    """One measure's output names, metrics and parameters (:func:`plan`)."""
    from ragrade.compat._trec_eval_c import c_long, double_params
    from ragrade.compat.trec_eval_prefs import key as prefs_key
    from ragrade.metrics import parse_labelled

    base = m.base or m.name
    if m.kind in ("cut_long", "cut_double"):
        values = _read_params(m, params)
        direct = _kernel_form(m, values) is None
        if m.kind == "cut_long":
            names, texts = [f"{m.name}_{v}" for v in values], [f"{base}.{v}" for v in values]
        else:
            names, texts = [_double_name(m.name, v) for v in values], [f"{base}.{v!r}" for v in values]
        metrics = [None] * len(values) if direct else [parse_labelled(t, "trec_eval")[0][1] for t in texts]
        return Planned(m, names, list(metrics), given, values=values, direct=direct)
    name = m.name if given is None else f"{m.name}_{given}"
    if m.kind == "relstring":
        length = max(c_long(double_params(params)[0]), 0)  # trec_eval: (long) of its first number
        return Planned(m, [name], [None], given, number=length)
    if m.kind in ("runid", "count_q"):
        return Planned(m, [m.name], [None], given)
    if m.kind == "double_p":
        values = _read_params(m, params)
        text = m.name if not params or params == m.default else _kernel_form(m, values)
        if m.name == "utility" and values[3] != 0 and abs(opts.num_docs) >= 2 ** 53:
            text = None  # (-N beyond 2^53: C's exact long arithmetic, wrapping at 64 bits)
        metric = None if text is None else parse_labelled(text, "trec_eval")[0][1]
        return Planned(m, [name], [metric], given, values=values, direct=metric is None)
    # trec_eval reads no parameters for the other measures, and ignores any given
    metric = prefs_key(m.name) if m.name.startswith("prefs_") else parse_labelled(base, "trec_eval")[0][1]
    return Planned(m, [m.name], [metric], given)


def distinct_metrics(planned: list[Planned]) -> list[Metric]:
    """The ragrade metrics of ``planned``, each once, in trec_eval's order (not the columns computed query by
    query)."""
    return list(dict.fromkeys(m for p in planned for m in p.metrics if m is not None and not _is_direct(m)))


# -- reading ---------------------------------------------------------------------------------------------------


def _last_run_id(path: str) -> str:
    """The run tag (6th column) of the last data line of a run file, as trec_eval prints under ``runid``."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        block = 1 << 16
        pos = size
        tail = b""
        while pos > 0:
            step = min(block, pos)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            lines = [ln for ln in tail.split(b"\n") if ln.strip() and not ln.lstrip().startswith(b"#")]
            if len(lines) >= 2 or (pos == 0 and lines):
                fields = lines[-1].split()
                return fields[5].decode("utf-8", "replace") if len(fields) >= 6 else ""
    return ""


# -- computing and printing ------------------------------------------------------------------------------------


def _fmt(v: float, spec: str = "%6.4f") -> str:
    """A value as trec_eval prints it (C's ``%6.4f``; ``-nan`` for a NaN with its sign bit set)."""
    from ragrade.compat._trec_eval_c import printf

    return printf(spec, v)


def _is_direct(m: Any) -> bool:
    """Whether a column key is a column computed query by query (:func:`_direct`)."""
    return isinstance(m, tuple) and m[:1] == ("direct",)


def _c_nans(values: np.ndarray) -> np.ndarray:
    """A kernel column's NaN as trec_eval makes them: each stands for a 0 / 0, which on x86-64 is a NaN with its
    sign bit set (printed ``-nan``). Columns computed query by query carry C's own NaN (``nan`` for a gain given as
    ``nan``)."""
    import numpy as np

    bad = np.isnan(values)
    if not bad.any():
        return values
    out = values.copy()
    out[bad] = -math.nan
    return out


def run(argv: Sequence[str], out: TextIO | None = None, value_format: str = "%6.4f") -> int:
    """Run trec_eval's command line ``argv`` (without the program name), writing what trec_eval 10 prints to
    ``out`` (stdout by default). Returns the exit status (0); raises :class:`TrecEvalError` where trec_eval
    stops. ``value_format`` replaces trec_eval's ``%6.4f`` (``"%.17g"``: every digit, for comparisons)."""
    out = sys.stdout if out is None else out
    opts = parse_args(argv)
    if opts.version:
        print(f"trec_eval version {VERSION} (ragrade trec_eval)", file=sys.stderr)
        return 0
    if opts.help:
        out.write(help_text(opts))
        return 0
    if len(opts.files) != 2:
        raise TrecEvalError("usage: ragrade trec_eval [-q] [-c] [-n] [-l LEVEL] [-M N] [-N N] [-J] [-m MEASURE[.PARAMS]]"
                            "... QRELS RUN  (exactly two files; `ragrade trec_eval -h` for help)")
    prefs = opts.rel_format in ("prefs", "qrels_prefs")  # compat/trec_eval_prefs.py (-M0, -l0 are fine there)
    if opts.rel_format not in ("qrels", "qrels_jg") and not prefs:
        raise TrecEvalError(f"illegal rel_format {opts.rel_format!r} (trec_eval knows qrels, prefs, qrels_prefs, "
                            "qrels_jg)")
    if opts.results_format != "trec_results":
        raise TrecEvalError(f"illegal retrieval results format {opts.results_format!r} (trec_eval knows "
                            "trec_results)")
    if opts.zscores is not None and not os.path.isfile(opts.zscores):
        raise TrecEvalError(f"cannot read the z-score file {opts.zscores!r}: it does not exist")
    if opts.max_docs is not None and opts.max_docs < 0:
        raise TrecEvalError(f"-M{opts.max_docs}: a negative number of documents per ranking (trec_eval crashes)")
    planned = plan(opts)
    qrels_path, run_path = opts.files
    _write(out, output_parts(planned, opts, qrels_path, run_path, value_format))
    return 0


def _write(out: TextIO, parts: Iterator[str | bytes]) -> None:
    """Write the parts; bytes straight to the binary buffer of a UTF-8 text stream that has one (sys.stdout),
    where a line feed is written as it is (not on Windows)."""
    first = next(parts, None)  # computes everything up to the first part: errors are raised before any output
    buffer = getattr(out, "buffer", None)
    encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "")
    direct = buffer is not None and encoding == "utf8" and os.linesep == "\n"
    if direct:
        out.flush()
    for part in itertools.chain(() if first is None else (first,), parts):
        if isinstance(part, bytes):
            if direct:
                buffer.write(part)  # type: ignore[union-attr]
            else:
                out.write(part.decode("utf-8"))
        else:
            if direct:
                buffer.write(part.encode("utf-8"))  # type: ignore[union-attr]
            else:
                out.write(part)
    if direct:
        buffer.flush()  # type: ignore[union-attr]


def _in_rank_order(run: Any, max_docs: int | None = None) -> Any:
    """``run`` stored in trec_eval's rank order (score descending, ties by document id descending), without
    its scores (the order is the ranking then; no trec_eval measure reads a score) and, when a hash scan of
    its raw ids in C finds no document listed twice in a query, marked so (the engine then skips its own
    scan, which codes every id first). ``max_docs`` (-M) keeps the first ``max_docs`` documents of each ranking
    in that order (0: every ranking empty), before the scan, as trec_eval looks for a document listed twice
    among the documents it keeps only. A run with a duplicate is returned as it is (without -M) or cut (with
    -M): the engine's scan finds it and names it. The ordering works on the raw Arrow ids, without a Python
    string per tied row."""
    import pyarrow as pa

    from ragrade._arrays import arrow_int64, contiguous
    from ragrade._ingest import _accel, arrow_strings
    from ragrade.data import Run
    from ragrade.data.ranking import rank_rows, trec_order

    if run.n_rows == 0 or run.raw_docs is None or (max_docs is None and (not run.raw_is_arrow or run.scores is None)):
        return run
    if not run.raw_is_arrow:  # ids held in a NumPy array (not read from a file): order and cut them as they are
        order = rank_rows(run.offsets, run.scores, lambda rows: run.raw_docs[rows])
        offsets, perm = _cut(run.offsets, order, max_docs)
        return Run(run.query_ids, offsets, None, None, None, name=run.name,
                   raw_docs=run.raw_docs if perm is None else run.raw_docs[perm])
    raw = contiguous(run.raw_docs) if isinstance(run.raw_docs, pa.ChunkedArray) else run.raw_docs  # one copy
    unique = None
    perm = None
    strings = arrow_strings(raw) if _accel is not None else None
    if strings is not None and _accel is not None:
        if max_docs is None:
            if _accel.first_duplicate_in_segments(strings[0], strings[1], run.offsets) >= 0:
                return run
            unique = True
        if run.scores is not None:
            perm = trec_order(run.scores, run.offsets, strings)  # one sort in C: scores, then ids
    if perm is None and run.scores is not None:
        perm = rank_rows(run.offsets, run.scores, lambda rows: raw.take(arrow_int64(rows)))
    offsets, perm = _cut(run.offsets, perm, max_docs)
    docs = raw if perm is None else raw.take(arrow_int64(perm))
    if max_docs is not None and _accel is not None:  # the scan, on the documents kept
        kept = arrow_strings(docs)
        if kept is not None and _accel.first_duplicate_in_segments(kept[0], kept[1], offsets) < 0:
            unique = True
    return Run(run.query_ids, offsets, None, None, None, name=run.name, unique=unique, raw_docs=docs)


def _cut(offsets: np.ndarray, perm: np.ndarray | None, max_docs: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The segments' offsets and the rows (``perm``: the rank order, None: as stored) of the first
    ``max_docs`` rows of each segment (all of them when None)."""
    import numpy as np

    if max_docs is None:
        return offsets, perm
    lengths = np.minimum(np.diff(offsets), max(max_docs, 0))
    cut = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=cut[1:])
    within = np.arange(int(cut[-1]), dtype=np.int64) - np.repeat(cut[:-1], lengths)
    rows = np.repeat(np.asarray(offsets[:-1], dtype=np.int64), lengths) + within
    return cut, rows if perm is None else perm[rows]


def compute_and_format(planned: list[Planned], opts: Options, qrels_path: str, run_path: str,
                       value_format: str = "%6.4f") -> str:
    """The text trec_eval 10 prints for ``planned`` measures on the two files."""
    return "".join(p if isinstance(p, str) else p.decode("utf-8")
                   for p in output_parts(planned, opts, qrels_path, run_path, value_format))


def _scored_columns(planned: list[Planned], opts: Options, qrels: Any, runobj: Any, qids: list[str],
                    missing_mask: Any, run_path: str, best_grade: dict[str, Any]) -> tuple[dict[Metric, Any], list[Any]]:
    """Every measure's per-query values (``qids`` order) as trec_eval 10 computes them under ``opts``, and
    the helper measures (num_ret, num_rel) when any value was computed."""
    import numpy as np

    from ragrade.metrics import parse_labelled

    metrics = distinct_metrics(planned)
    seen = set(metrics)
    columns: dict[Metric, np.ndarray] = {}
    helpers: list[Any] = []
    if not (metrics or (opts.query and any(p.parts for p in planned))):
        return columns, helpers
    helpers = [parse_labelled(n, "trec_eval")[0][1] for n in ("num_ret", "num_rel")]
    every = metrics + [m for m in helpers if m not in seen]
    if opts.query:  # relstring's characters (printed per query only)
        every += [m for p in planned for m in p.parts if m not in seen]
    terms = _utility_terms(metrics, opts.num_docs)
    every = list(dict.fromkeys(every + [t for pair in terms.values() for t in pair]))
    settings: dict[str, Any] = dict(
        no_relevant="zero", duplicates="error", missing_qrels="ignore",
        unjudged="condensed" if opts.judged_only else None, num_docs=_num_docs(opts, metrics),
        rel_level=opts.rel_level if opts.rel_level > 1 else None, names="trec_eval")
    bogus = {q: {_BOGUS_DOC: 1.0} if opts.max_docs is None or opts.max_docs > 0 else {}
             for q in np.array(qids)[missing_mask].tolist()}
    if opts.rel_level >= 1:
        frame = _scored(qrels, runobj, bogus, every, settings, qids, run_path)
    else:  # -l0 and below: the measures that have a relevance level read every grade >= 0 as relevant
        leveled = [m for m in every if _has_level(m)]
        frame = _scored(_grade_zero_relevant(qrels), runobj, bogus, leveled, settings, qids, run_path)
        others = [m for m in every if not _has_level(m)]
        if others:
            import pandas as pd

            frame = pd.concat([frame, _scored(qrels, runobj, bogus, others, settings, qids, run_path)], axis=1)
    for m in every:
        columns[m] = frame[str(m)].to_numpy(dtype=np.float64)
    for m, (first, count) in terms.items():  # the kernel's additions, with trec_eval's negative -N
        columns[m] = columns[first] + float(m.get("d")) * (opts.num_docs + columns[count])
    _nan_like_trec_eval(planned, columns, helpers)
    if opts.rel_level < 1:
        _rndcg_below_one(planned, columns, qrels, qids)
    _stale_ideal(planned, columns, qids, best_grade)
    return columns, helpers


def output_parts(planned: list[Planned], opts: Options, qrels_path: str, run_path: str,
                 value_format: str = "%6.4f") -> Iterator[str | bytes]:
    """:func:`compute_and_format`'s text in parts (UTF-8 bytes or str), to be written one after the other; every
    error trec_eval stops on is raised before the first part."""
    import numpy as np

    from ragrade.io import read_qrels, read_run

    for path in (qrels_path, run_path):
        if path != "-" and not os.path.isfile(path):
            raise TrecEvalError(f"cannot read file {path!r}: it does not exist")
    _judgment_lines(qrels_path, 5 if opts.rel_format == "prefs" else 4)
    if opts.rel_format == "qrels_jg":
        qids, jg_columns = _jg_columns(planned, opts, qrels_path, run_path)
        yield from _format_parts(planned, opts, qids, jg_columns, {}, 0, run_path, value_format)
        return
    if opts.rel_format in ("prefs", "qrels_prefs"):
        from ragrade.compat import trec_eval_prefs

        names = [p.measure.name for p in planned if p.measure.name.startswith("prefs_")]
        qids, prefs_columns = trec_eval_prefs.columns(names, opts, qrels_path, run_path)
        yield from _format_parts(planned, opts, qids, prefs_columns, {}, 0, run_path, value_format)
        return
    qrels = _grades_as_trec_eval_reads(read_qrels(qrels_path, format="trec"), qrels_path)
    runobj = _in_rank_order(read_run(run_path, format="trec"), opts.max_docs)
    run_ids = set(runobj.query_ids.tolist())
    qids = sorted(qrels.query_ids.tolist(), key=lambda s: s.encode("utf-8"))
    missing = [q for q in qids if q not in run_ids]
    if missing and not opts.complete:
        raise TrecEvalError(f"query {missing[0]!r} has judgments in {qrels_path} but no results in {run_path} "
                            "(trec_eval stops here: \"result qid not found\"); use -c to score such queries as empty "
                            "rankings")
    if not qids:
        raise TrecEvalError("no queries with both results and relevance information")
    best_grade = _negative_queries(qrels, qids, qrels_path) if any(
        p.measure.kind not in ("runid", "count_q") for p in planned) else {}
    planned = _with_relstring_parts(_kernel_gain_maps(planned, qrels), runobj)
    relstrings: dict[str, str] = {}
    missing_mask = np.array([q not in run_ids for q in qids], dtype=bool)
    columns, helpers = _scored_columns(planned, opts, qrels, runobj, qids, missing_mask, run_path, best_grade)
    planned = _direct(planned, opts, columns, qrels, runobj, qids, missing_mask)
    if opts.query and any(p.measure.kind == "relstring" for p in planned):
        rs = next(p for p in planned if p.measure.kind == "relstring")
        relstrings = _relstrings(rs, columns, qids, helpers[0]) if rs.parts else {q: "" for q in qids}
    if missing_mask.any():
        _clean_missing(planned, columns, missing_mask, qids, relstrings)
    positive = int((qrels.grades > 0).sum()) if opts.complete else 0
    yield from _format_parts(planned, opts, qids, columns, relstrings, positive, run_path, value_format)


def _negative_queries(qrels: Any, qids: list[str], qrels_path: str) -> dict[str, float]:
    """Where trec_eval 10 stops on a query whose judgments all have a negative grade: the first query it
    scores (it finds no room for the count of each grade, "Can't calculate measure"), or any query whose
    grades are all below -1 (it clears a negative number of bytes and crashes). Returns each query's
    highest grade."""
    import numpy as np

    g = qrels.grades
    lengths = np.diff(qrels.offsets)
    top = np.full(len(lengths), -np.inf)
    has = lengths > 0
    top[has] = np.maximum.reduceat(g, qrels.offsets[:-1][has]) if len(g) else top[has]
    best = dict(zip(qrels.query_ids.tolist(), top.tolist(), strict=True))
    if best[qids[0]] < 0:
        raise TrecEvalError(f"{qrels_path}: every judgment of query {qids[0]!r}, the first trec_eval scores, has a "
                            "negative grade: trec_eval 10 stops there (\"Can't calculate measure\")")
    low = next((q for q in qids if best[q] < -1), None)
    if low is not None:
        raise TrecEvalError(f"{qrels_path}: every judgment of query {low!r} has a grade below -1: trec_eval 10 "
                            "crashes on such a query")
    return best


def _kernel_gain_maps(planned: list[Planned], qrels: Any) -> list[Planned]:
    """The gain maps the kernels compute as trec_eval 10 does, moved back from the per-query path (which
    computes any map exactly but is slower): ``dcg``, ``ideal_dcg``, ``ndcg``, ``ndcg_rel`` and ``G`` with a map
    whose levels are distinct grades >= 0, whose gains are finite and not negative (the kernels score 0 a query
    whose judgments have no positive gain; trec_eval adds its negative gains), and whose table trec_eval's sort leaves in gain
    order for every query (:func:`ragrade.compat.trec_eval_query.gain_table`; ``ndcg.0=1.5`` is not: 1.5 stays
    before 1 and 2). Rndcg and rbp with a map stay on the per-query path."""
    import dataclasses

    import numpy as np

    from ragrade.compat import _trec_eval_c as c
    from ragrade.compat.trec_eval_query import gain_table
    from ragrade.metrics import parse_labelled

    names = ("dcg", "ideal_dcg", "ndcg", "ndcg_rel", "G")
    if not any(p.direct and p.measure.name in names for p in planned):
        return planned
    g = qrels.grades
    qrow = np.repeat(np.arange(len(qrels.query_ids)), np.diff(qrels.offsets))
    top = np.full(len(qrels.query_ids), -1.0)
    np.maximum.at(top, qrow, np.where(g >= 0, g, -1.0))
    lengths = sorted({int(t) + 1 for t in top.tolist() if t >= 0})  # the tables' lengths (num_rel_levels)
    out = []
    for p in planned:
        if p.direct and p.measure.name in names:
            pairs = [(c.atol(n), v) for n, v in p.values if c.is_valid_int(n)]
            levels = [level for level, _ in pairs]
            regular = (len(set(levels)) == len(levels) and min(levels) >= 0
                       and all(math.isfinite(v) and v >= 0 for _, v in pairs))
            if regular and p.measure.name != "dcg":
                for n in lengths:
                    table = [row.gain for row in gain_table(p.values, [1] * n)]
                    regular = regular and table == sorted(table)
            if regular:
                text = f"{p.measure.name}.{','.join(f'{level}={v!r}' for level, v in pairs)}"
                p = dataclasses.replace(p, metrics=[parse_labelled(text, "trec_eval")[0][1]], direct=False)
        out.append(p)
    return out


def _with_relstring_parts(planned: list[Planned], runobj: Any) -> list[Planned]:
    """relstring's characters as ``grade_at@1 .. grade_at@N`` metrics, N its length held to the longest ranking
    (trec_eval prints at most the ranking: ``relstring.1e18`` is the whole ranking)."""
    import dataclasses

    import numpy as np

    from ragrade.metrics import parse_labelled

    longest = max(int(np.diff(runobj.offsets).max()) if len(runobj.offsets) > 1 else 0, 1)
    out = []
    for p in planned:
        if p.measure.kind == "relstring":
            length = int(min(p.number, longest))
            p = dataclasses.replace(p, parts=[parse_labelled(f"grade_at@{k}")[0][1] for k in range(1, length + 1)])
        out.append(p)
    return out


def _direct(planned: list[Planned], opts: Options, columns: dict[Any, Any], qrels: Any, runobj: Any,
            qids: list[str], missing: np.ndarray) -> list[Planned]:
    """The measures computed query by query (:mod:`ragrade.compat.trec_eval_query`): those whose parameters
    the kernels do not express, and below level 0 (without -J) those that read the rankings' marks. Each
    output name gets a column of its own; returns the planned measures with those columns."""
    import dataclasses
    from typing import cast

    import numpy as np

    from ragrade.compat import trec_eval_query as per_query

    below = opts.rel_level < 0 and not opts.judged_only
    chosen = [p.direct or (below and p.measure.name in per_query.MARKED) for p in planned]
    if not any(chosen):
        return planned
    marks, grades = _marks(qrels, runobj, qids, missing, opts.max_docs)
    scored = per_query.marked_queries(opts.rel_level, opts.judged_only, marks, grades)
    out = []
    for p, pick in zip(planned, chosen, strict=True):
        if not pick:
            out.append(p)
            continue
        keys = []
        per_name = zip(*(per_query.values(p, q, opts.num_docs) for q in scored), strict=True)
        for j, (name, values) in enumerate(zip(p.names, per_name, strict=True)):
            key = cast("Metric", ("direct", name, j))  # a column of its own (read by its key only: _is_direct)
            columns[key] = np.array(values, dtype=np.float64)
            keys.append(key)
        out.append(dataclasses.replace(p, metrics=list(keys)))
    return out


def _scored(qrels: Any, runobj: Any, bogus: dict[str, dict[str, float]], metrics: list[Metric],
            settings: dict[str, Any], qids: list[str], run_path: str) -> Any:
    """Per-query values of ``metrics`` (a DataFrame indexed by ``qids``); a judged query absent from the run
    (-c) is scored on ``bogus``: trec_eval's ranking of one unjudged document (cut by -M), after which it
    sets num_ret, utility, relstring, unj and rbp_resid back to 0 or empty (:func:`_clean_missing`)."""
    frame = _evaluate(qrels, runobj, metrics, settings, run_path).reindex(qids)
    if bogus:
        extra = _evaluate(qrels, bogus, metrics, settings, run_path)
        frame.loc[extra.index, extra.columns] = extra
    return frame


def _num_docs(opts: Options, metrics: list[Metric]) -> int | None:
    """-N for utility's fourth coefficient: trec_eval's default collection size is 0 (not unknown). A negative
    size, which trec_eval takes, is read as 0 by the kernels and put back by :func:`_utility_terms`."""
    if opts.num_docs >= 0:
        return opts.num_docs
    return 0 if any(_reads_num_docs(m) for m in metrics) else None


def _reads_num_docs(m: Metric) -> bool:
    return m.name == "utility" and float(m.get("d")) != 0.0


def _utility_terms(metrics: list[Metric], num_docs: int) -> dict[Metric, tuple[Metric, Metric]]:
    """With a negative -N (ragrade's collection size is never negative), each utility that reads it as
    two metrics computed at size 0: its first three terms (``d`` = 0) and the count ``h - n - r`` (only
    ``d`` = 1), from which the value is ``first + d * (N + count)``: the kernel's operations, in its order."""
    if num_docs >= 0:
        return {}
    return {m: (m.with_params(d=0.0), m.with_params(a=0.0, b=0.0, c=0.0, d=1.0)) for m in metrics
            if _reads_num_docs(m)}


def _has_level(m: Metric) -> bool:
    """Whether ``m`` reads trec_eval's relevance level (-l) and not the grades themselves: its family has a
    ``rel`` parameter that defaults to 1 and no gain map (the DCG-type measures read the grades; Rndcg reads
    the level only to score 0 a query without a relevant judgment, which at -l0 and below means one without
    a judgment of grade >= 0 and a gain map that gives grade 0 a gain: left as ragrade reads it)."""
    spec = m.family.param("rel")
    return spec is not None and spec.default == 1 and m.family.param("gains") is None


_ODD_LINE = re.compile(rb"(?:^|\n)(?:[ \t\r\v\f]*\n|[ \t\r\v\f]+#)")  # a blank line, or an indented '#'
_COMMENT_LINE = re.compile(rb"^#[^\n]*\n", re.MULTILINE)


def _judgment_lines(path: str, fields: int) -> None:
    """Stop where trec_eval 10 stops reading a judgments file (qrels, qrels_jg, prefs, qrels_prefs): it skips a
    line starting with ``#`` and reads the line after it as data, whatever it is, so a blank line, a second
    comment line in a row and an indented ``#`` are malformed lines to it (it stops), a comment on the last line
    makes it read past the end of the file (it crashes), and such a line with ``fields`` fields is a judgment of a
    query whose id starts with ``#`` (ragrade stops there too, rather than read a comment as a query). A file's
    lines are looked at only where it holds ``#``, a line feed after a line feed or a line starting with a blank
    (memchr-speed tests); gzip files are ragrade's own (trec_eval reads none)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return  # (the reader names the problem)
    if not data or data[:2] == b"\x1f\x8b":
        return

    def stop(at: int, what: str) -> None:
        line = data.count(b"\n", 0, at) + 1
        raise TrecEvalError(f"{path}, line {line}: {what}")

    import numpy as np

    body = data if data.endswith(b"\n") else data + b"\n"
    raw = np.frombuffer(body, dtype=np.uint8)
    heads = raw[np.flatnonzero(raw[:-1] == 10) + 1]  # each line's first byte (after the first line)
    if raw[0] <= 32 or bool((heads <= 32).any()):  # a line starting with a blank or a control byte, or empty
        odd = _ODD_LINE.search(body)
        if odd is not None:
            at = odd.start() + (body[odd.start():odd.start() + 1] == b"\n")
            indented = body[at:body.index(b"\n", at)].strip()[:1] == b"#"
            stop(at, ("an indented comment line" if indented else "a blank line") + ": trec_eval 10 reads it as a "
                 "malformed line and stops (it skips one comment line at a time, starting in the first column)")
    if b"#" in body:
        for comment in _COMMENT_LINE.finditer(body):
            at = comment.end()
            if at >= len(body):
                stop(comment.start(), "the file ends with a comment line; trec_eval 10 then reads past the end of "
                     "the file and crashes (ragrade trec_eval stops here)")
            tokens = body[at:body.index(b"\n", at)].split()
            if tokens[:1] and tokens[0][:1] == b"#":
                stop(at, "a comment line right after another one: trec_eval 10 reads it as " + (
                    f"a judgment of query {tokens[0].decode('utf-8', 'replace')!r}; ragrade trec_eval stops here "
                    "rather than read a comment as a query" if len(tokens) == fields else "a malformed line and stops")
                     + " (it skips one comment line at a time)")
    first = next((line for line in body.split(b"\n", 64) if line[:1] != b"#"), b"").split()
    if first and len(first) != fields:  # (the reader holds every line to the first one's fields)
        stop(body.index(b" ".join(first[:1])), f"{len(first)} fields, not {fields}: trec_eval 10 reads it as a "
             "malformed line and stops")


#: The highest grade read: trec_eval sets aside a count for every grade from 0 to the highest judged, and runs out
#: of memory (or stops, "Can't calculate measure") long before 2^31.
_TOP_GRADE = 2 ** 31 - 1


def _grades_as_trec_eval_reads(qrels: Any, path: str) -> Any:
    """``qrels`` with each grade as trec_eval's ``atol`` reads it: the integer part of a decimal (``1.5`` is 1,
    ``-0.5`` is 0); a grade above :data:`_TOP_GRADE` stops with an error, as trec_eval stops or runs out of
    memory there."""
    import numpy as np

    from ragrade.data import Qrels

    g = qrels.grades
    if len(g) and g.max() > _TOP_GRADE:
        where = int(np.argmax(g))
        q = qrels.query_ids[int(np.searchsorted(qrels.offsets, where, side="right")) - 1]
        raise TrecEvalError(f"{path}: query {q!r} has a judgment of grade {g[where]:.0f}: trec_eval 10 sets aside a "
                            f"count for every grade from 0 to the highest, and stops or runs out of memory at grades "
                            f"this high (ragrade trec_eval reads grades up to {_TOP_GRADE})")
    whole = np.trunc(g)
    if np.array_equal(whole, g):
        return qrels
    whole = whole + 0.0  # (-0.5 reads as 0, not -0)
    if qrels.raw_docs is not None:
        return Qrels(qrels.query_ids, qrels.offsets, None, None, whole, raw_docs=qrels.raw_docs)
    return Qrels(qrels.query_ids, qrels.offsets, qrels.doc_codes, qrels.doc_vocab, whole)


def _grade_zero_relevant(qrels: Any) -> Any:
    """``qrels`` with every grade >= 0 raised by one: at relevance level 1 these judgments read as trec_eval
    reads the originals at -l0 (grade 0 relevant; negative grades stay judged "unjudged in the pool")."""
    import numpy as np

    from ragrade.data import Qrels

    g = qrels.grades
    shifted = np.where(g >= 0, g + 1.0, g)
    if qrels.raw_docs is not None:
        return Qrels(qrels.query_ids, qrels.offsets, None, None, shifted, raw_docs=qrels.raw_docs)
    return Qrels(qrels.query_ids, qrels.offsets, qrels.doc_codes, qrels.doc_vocab, shifted)


def _format(planned: list[Planned], opts: Options, qids: list[str], columns: dict[Any, Any],
            relstrings: dict[str, str], positive: int, run_path: str, value_format: str) -> str:
    """:func:`_format_parts` as one string."""
    return "".join(p if isinstance(p, str) else p.decode("utf-8")
                   for p in _format_parts(planned, opts, qids, columns, relstrings, positive, run_path, value_format))


def _format_parts(planned: list[Planned], opts: Options, qids: list[str], columns: dict[Any, Any],
                  relstrings: dict[str, str], positive: int, run_path: str, value_format: str) -> Iterator[str | bytes]:
    """trec_eval's output from per-query values (``positive``: the judgments with a grade > 0, num_rel's
    summary under -c), in parts: the per-query lines in blocks of UTF-8 bytes, then the summary."""
    import numpy as np

    from ragrade.compat import _trec_eval_text as text_of

    nq = len(qids)
    heads: list[str] = []  # per column of per-query lines: its name (Z-prefixed, padded)
    texts: list[Any] = []  # and its values, one per query (floats printed %6.4f, or Arrow strings)
    summary: list[str] = []
    runid = _last_run_id(run_path) if any(p.measure.kind == "runid" for p in planned) else ""
    ztable = _read_zscores(opts.zscores) if opts.zscores is not None else None
    z = "Z" if ztable is not None else ""

    def values_text(values: np.ndarray) -> Any:  # a float array is printed %6.4f by text_of.lines
        if value_format == "%6.4f":
            return np.asarray(values, dtype=np.float64)
        return text_of.strings([_fmt(v, value_format) for v in values.tolist()])

    for p in planned:
        kind = p.measure.kind
        if kind == "runid":
            summary.append(f"{'runid':<22}\tall\t{runid}\n")
            continue
        if kind == "count_q":
            text = str(nq) if ztable is None else _fmt(float(nq), value_format)
            summary.append(f"{z}{'num_q':<22}\tall\t{text}\n")
            continue
        if kind == "relstring":
            if opts.query:
                heads.append(f"{p.names[0]:<22}")
                texts.append(text_of.strings([f"'{relstrings.get(q, '')}'" for q in qids]))
            continue
        for name, m in zip(p.names, p.metrics, strict=True):
            assert m is not None
            values = columns[m] if _is_direct(m) else _c_nans(columns[m])
            head = f"{z}{name:<22}\t"
            if kind == "gm":
                values = np.log(np.maximum(values, 1e-5))
            if ztable is not None:
                values = _to_zscores(ztable, qids, name, values)
            if kind == "long":
                if ztable is None:
                    ints = np.trunc(values).astype(np.int64)
                    if opts.query:
                        heads.append(head[:-1])
                        texts.append(text_of.integers(ints))
                    total: float = float(int(ints.sum()))
                else:
                    if opts.query:
                        heads.append(head[:-1])
                        texts.append(values_text(values))
                    total = _seq_sum(values)
                if p.measure.name == "num_rel" and opts.complete:
                    total = float(positive)  # trec_eval -c: every judgment with a grade > 0
                text = str(int(total)) if ztable is None else _fmt(total, value_format)
                summary.append(f"{head}all\t{text}\n")
            elif kind == "gm":
                summary.append(f"{head}all\t{_fmt(math.exp(_seq_sum(values) / nq), value_format)}\n")
            else:
                if opts.query:
                    heads.append(head[:-1])
                    texts.append(values_text(values))
                summary.append(f"{head}all\t{_fmt(_seq_sum(values) / nq, value_format)}\n")
    if opts.query and texts:
        yield from text_of.lines(heads, texts, qids)
    if opts.summary:
        yield "".join(summary)


MISSING_ZSCORE = -1000000.0  # trec_eval's value for a query or measure the z-score file lacks


def _four_field_lines(path: str, what: str, layout: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of a whitespace-separated file of four fields per line (``#`` comments and
    blank lines skipped), as trec_eval reads its -Z and qrels_jg files; anything else stops with the line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, start=1):
                fields = line.split()
                if not fields or fields[0].startswith("#"):
                    continue
                if len(fields) != 4:
                    raise TrecEvalError(f"{path}, line {number}: a {what} line is '{layout}', got {line.strip()!r}")
                yield number, fields
    except OSError as err:
        raise TrecEvalError(f"cannot read the {what} file {path!r}: {err.strerror}") from None


def _read_zscores(path: str) -> dict[str, dict[str, tuple[float, float]]]:
    """trec_eval's -Z file: ``qid measure mean stddev`` lines (``#`` comments and blank lines skipped)."""
    table: dict[str, dict[str, tuple[float, float]]] = {}
    for _, fields in _four_field_lines(path, "z-score", "qid measure mean stddev"):
        table.setdefault(fields[0], {})[fields[1]] = (_atof(fields[2]), _atof(fields[3]))
    return table


def _to_zscores(table: dict[str, dict[str, tuple[float, float]]], qids: list[str], name: str,
                values: np.ndarray) -> np.ndarray:
    """Each query's value as (value - mean) / stddev from the -Z table; MISSING_ZSCORE where the table has no
    line for the query or measure (or a zero stddev and another value), 0 for a zero stddev at the mean."""
    import numpy as np

    out = np.empty(len(values), dtype=np.float64)
    for i, (q, v) in enumerate(zip(qids, values.tolist(), strict=True)):
        entry = table.get(q, {}).get(name)
        if entry is None:
            out[i] = MISSING_ZSCORE
            continue
        mean, sd = entry
        if sd:
            out[i] = (v - mean) / sd
        else:
            out[i] = 0.0 if v == mean else MISSING_ZSCORE
    return out


def _seq_sum(values: np.ndarray) -> float:
    """The sum added query by query, in order (as trec_eval accumulates its averages). With a NaN or an infinity
    among the values it is added one by one as trec_eval's x86-64 code adds (each query's value is the first
    operand): a query's NaN replaces the sum, a NaN sum stays, and inf + -inf is the x86 NaN (sign bit set);
    so the sign of a NaN in the summary is the one trec_eval prints."""
    import numpy as np

    if not len(values):
        return 0.0
    if np.isfinite(values).all():
        return float(np.cumsum(values)[-1])
    total = 0.0
    for v in values.tolist():
        if v != v:
            total = v
        elif total == total:
            total = total + v
            if total != total:
                total = -math.nan
    return total


def _jg_columns(planned: list[Planned], opts: Options, qrels_path: str, run_path: str) -> tuple[list[str], dict]:
    """map_avgjg, P_avgjg, Rprec_mult_avgjg: each query's measure computed on every judgment group's
    judgments (``qid group docno grade`` lines), then averaged over its groups."""
    import numpy as np

    from ragrade.io import read_run

    groups: dict[str, dict[str, dict[str, int]]] = {}
    for number, fields in _four_field_lines(qrels_path, "qrels_jg", "qid group docno grade"):
        docs = groups.setdefault(fields[0], {}).setdefault(fields[1], {})
        if fields[2] in docs:
            raise TrecEvalError(f"{qrels_path}, line {number}: document {fields[2]!r} judged twice for query "
                                f"{fields[0]!r} in group {fields[1]!r}")
        docs[fields[2]] = _atol(fields[3])
        if docs[fields[2]] > _TOP_GRADE:
            raise TrecEvalError(f"{qrels_path}, line {number}: grade {fields[3]}: trec_eval 10 sets aside a count for "
                                "every grade from 0 to the highest, and stops or runs out of memory at grades this "
                                f"high (ragrade trec_eval reads grades up to {_TOP_GRADE})")
    runobj = read_run(run_path, format="trec")
    ranked = runobj.to_dict()
    if opts.max_docs is not None:  # the first max_docs documents in trec_eval's order (score, then id, descending)
        ranked = {q: dict(sorted(d.items(), key=lambda kv: (kv[1], kv[0].encode("utf-8")), reverse=True)
                          [:opts.max_docs]) for q, d in ranked.items()}
    qids = sorted(groups, key=lambda q: q.encode("utf-8"))
    missing = [q for q in qids if q not in ranked]
    if missing and not opts.complete:
        raise TrecEvalError(f"query {missing[0]!r} has judgments in {qrels_path} but no results in {run_path} "
                            "(trec_eval stops here); use -c to score such queries")
    if not qids:
        raise TrecEvalError("no queries with both results and relevance information")
    sep = "\x1f"
    shift = opts.rel_level < 1  # -l0 and below: grade 0 relevant, read at level 1 with every grade >= 0 raised by one
    vqrels = {f"{q}{sep}{g}": {d: v + 1 if shift and v >= 0 else v for d, v in docs.items()} if shift else docs
              for q in qids for g, docs in groups[q].items()}
    bogus = {_BOGUS_DOC: 1.0} if opts.max_docs is None or opts.max_docs > 0 else {}
    vrun = {f"{q}{sep}{g}": ranked.get(q, bogus) for q in qids for g in groups[q]}
    settings: dict[str, Any] = dict(  # the judgment-group measures never read -N
        no_relevant="zero", duplicates="error", missing_qrels="ignore",
        unjudged="condensed" if opts.judged_only else None,
        rel_level=opts.rel_level if opts.rel_level > 1 else None, names="trec_eval")
    planned[:], group_columns = _jg_direct(planned, opts, [docs for q in qids for docs in groups[q].values()],
                                           list(vrun.values()))
    metrics = distinct_metrics(planned)
    if metrics:
        frame = _evaluate(vqrels, vrun, metrics, settings, run_path).reindex(list(vqrels))
        group_columns.update({m: frame[str(m)].to_numpy(dtype=np.float64) for m in metrics})
    owner = [key.split(sep, 1)[0] for key in vqrels]
    columns: dict[Any, Any] = {}
    for m, values in group_columns.items():
        total: dict[str, float] = {}
        count: dict[str, int] = {}
        for q, v in zip(owner, values.tolist(), strict=True):
            total[q] = total.get(q, 0.0) + v
            count[q] = count.get(q, 0) + 1
        columns[m] = np.array([total[q] / count[q] if count[q] > 1 else total[q] for q in qids])
    return qids, columns


def _marks(qrels: Any, runobj: Any, qids: list[str], missing: np.ndarray,
           max_docs: int | None) -> tuple[list[list[int]], list[list[int]]]:
    """Each query's ranking as trec_eval marks it (its grade >= 0, -1 without a judgment, -2 judged with a
    negative grade), by the engine's join of the run (in trec_eval's order) to the judgments, and the grades >= 0
    of its judgments; in ``qids`` order, a query absent from the run (-c) ranking trec_eval's stand-in document
    (no judgment) unless -M0."""
    import numpy as np

    import ragrade
    from ragrade.compat import trec_eval_query as per_query

    ev = ragrade.Evaluator(qrels, ["num_ret"], missing_run="drop", duplicates="error")
    if runobj.n_rows and runobj.duplicate_mask().any():
        ev.evaluate(runobj)  # the engine names the first document listed twice (PolicyError)
    rows, judged = ev.locate(runobj)  # (the run is in rank order: its storage rows are its ranks)
    offsets = np.asarray(runobj.offsets, dtype=np.int64)
    run_of = np.full(len(qrels.query_ids), -1, dtype=np.int64)  # each judged query's run query
    qmap = ev.truth.positions(runobj.query_ids)
    run_of[qmap[qmap >= 0]] = np.flatnonzero(qmap >= 0)
    flat = np.full(int(offsets[-1]), per_query.NONPOOL, dtype=np.int64)
    g = qrels.grades[judged]
    flat[rows] = np.where(g >= 0, g, per_query.UNJUDGED).astype(np.int64)
    every = flat.tolist()
    stand_in = [per_query.NONPOOL] if max_docs is None or max_docs > 0 else []
    where = {q: i for i, q in enumerate(qrels.query_ids.tolist())}
    ends = offsets.tolist()
    runq = run_of.tolist()
    marks = []
    for q, miss in zip(qids, missing.tolist(), strict=True):
        r = runq[where[q]]
        marks.append(list(stand_in) if miss else every[ends[r]:ends[r + 1]])
    all_grades = qrels.grades.astype(np.int64).tolist()  # (whole numbers: _grades_as_trec_eval_reads)
    bounds = np.asarray(qrels.offsets).tolist()
    grades = [[x for x in all_grades[bounds[where[q]]:bounds[where[q] + 1]] if x >= 0] for q in qids]
    return marks, grades


def _jg_direct(planned: list[Planned], opts: Options, judgments: list[dict[str, int]],
               rankings: list[dict[str, float]]) -> tuple[list[Planned], dict[Any, Any]]:
    """-R qrels_jg: the judgment-group measures computed group by group from trec_eval's definitions
    (:mod:`ragrade.compat.trec_eval_query`): those with parameters the kernels lack, and below level 0 (without
    -J) all three. ``judgments`` and ``rankings``: each group's grades and its query's ranking, in order.
    Returns the planned measures with their columns, and each column's value per group."""
    import dataclasses
    from typing import cast

    import numpy as np

    from ragrade.compat import trec_eval_query as per_query

    below = opts.rel_level < 0 and not opts.judged_only
    chosen = [p.direct or (below and p.measure.base in per_query.MARKED) for p in planned]
    if not any(chosen):
        return planned, {}
    order = [[d for d, _ in sorted(r.items(), key=lambda kv: (kv[1], kv[0].encode("utf-8")), reverse=True)]
             for r in rankings]  # trec_eval's order: score, then document id, descending
    groups = per_query.queries(opts.rel_level, opts.judged_only, zip(judgments, order, strict=True))
    out: list[Planned] = []
    columns: dict[Any, Any] = {}
    for p, pick in zip(planned, chosen, strict=True):
        if not pick:
            out.append(p)
            continue
        base = dataclasses.replace(p, measure=BY_NAME[p.measure.base])
        per_name = zip(*(per_query.values(base, g) for g in groups), strict=True)
        names = []
        for j, (name, values) in enumerate(zip(p.names, per_name, strict=True)):
            key = cast("Metric", ("direct", name, j))
            columns[key] = np.array(values, dtype=np.float64)
            names.append(key)
        out.append(dataclasses.replace(p, metrics=list(names)))
    return out, columns


_BOGUS_DOC = "ceci_nest_pas_un_docno"  # trec_eval's stand-in document for a query absent from the run


def _evaluate(qrels: Any, run: Any, metrics: list[Metric], settings: dict[str, Any], run_path: str) -> Any:
    """Per-query values (a DataFrame, one column per ``str(metric)``) of the queries in both sides."""
    import warnings

    import pandas as pd

    import ragrade
    from ragrade.errors import PolicyError, RagradeWarning

    # grade_at (relstring's characters) is NaN where a document has no judgment: no_relevant="zero" would make
    # that 0, so it is computed on its own with NaN left as it is.
    groups = [[m for m in metrics if m.name != "grade_at"], [m for m in metrics if m.name == "grade_at"]]
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        for group, extra in zip(groups, ({}, {"no_relevant": "skip"}), strict=True):
            if not group:
                continue
            try:
                res = ragrade.evaluate(qrels, run, [(str(m), m) for m in group], missing_run="drop",
                                       **{**settings, **extra})
            except PolicyError as err:
                raise TrecEvalError(f"{run_path}: {err}") from None
            frames.append(res.per_query[[str(m) for m in group]])
    return frames[0] if len(frames) == 1 else pd.concat(frames, axis=1)


def _nan_like_trec_eval(planned: list[Planned], columns: dict[Any, Any], helpers: list[Any]) -> None:
    """trec_eval's interpolated precision of a ranking left empty (-J with nothing judged retrieved): 0 / 0,
    NaN, at every level x with round(x R) = 0; 11pt_avg is NaN if any of its levels is."""
    import numpy as np

    from ragrade.kernels.measures import cut_by_round, recall_levels

    num_ret = columns[helpers[0]]
    empty = num_ret == 0
    if not empty.any():
        return
    for p in planned:
        for m in p.metrics:
            if m is None or m.name not in ("iprec", "iprec_11pt"):
                continue
            r = columns[helpers[1]]  # R at the relevance level in force (-l)
            levels = [float(m.get("recall"))] if m.name == "iprec" else list(recall_levels(m))
            zero = np.zeros(len(r), dtype=bool)
            for x in levels:
                zero |= cut_by_round(x, r.astype(np.int64)) == 0
            col = columns[m].copy()
            col[empty & zero] = np.nan
            columns[m] = col


def _stale_ideal(planned: list[Planned], columns: dict[Any, Any], qids: list[str], best: dict[str, float]) -> None:
    """trec_eval 10 keeps each grade's count of judgments from one query to the next and recounts only the
    grades 0 to the highest: a query judged with grade -1 only (it stops on the first, above) thus reads the
    counts of the query scored before it, and its ideal_dcg is that query's."""
    stale = [i for i, q in enumerate(qids) if -1 <= best.get(q, 0.0) < 0 and i > 0]
    if not stale:
        return
    for p in planned:
        if p.measure.name != "ideal_dcg" or p.direct:  # (a gain map: its table reads the stale counts itself)
            continue
        for m in p.metrics:
            col = columns[m].copy()
            for i in stale:  # in order: a run of such queries carries the last counted query's value
                col[i] = col[i - 1]
            columns[m] = col


def _rndcg_below_one(planned: list[Planned], columns: dict[Any, Any], qrels: Any, qids: list[str]) -> None:
    """Rndcg at -l0 and below: a query judged with grades 0 (and negative) only counts as one with relevant
    judgments, so trec_eval scores it, and with no positive gain anywhere its mean over no level change is
    0 / 0 (NaN). A gain map that gives grade 0 (or a negative grade) a positive gain would make such a
    query's value a real nDCG that ragrade does not compute: refused."""
    import numpy as np

    rndcg = [m for p in planned if p.measure.name == "Rndcg" for m in p.metrics if m is not None]
    if not rndcg:
        return
    g = qrels.grades
    qrow = np.repeat(np.arange(len(qrels.query_ids)), np.diff(qrels.offsets))
    judged = np.bincount(qrow, weights=(g >= 0).astype(np.float64), minlength=len(qrels.query_ids))
    positive = np.bincount(qrow, weights=(g > 0).astype(np.float64), minlength=len(qrels.query_ids))
    where = {q: i for i, q in enumerate(qrels.query_ids.tolist())}
    idx = np.array([where[q] for q in qids], dtype=np.int64)
    zero_only = (judged[idx] > 0) & (positive[idx] == 0)
    for m in rndcg:
        if any(level <= 0 and gain > 0 for level, gain in (m.get("gains") or ())):
            raise TrecEvalError("Rndcg with a positive gain for grade 0 or below, at -l0 and below: ragrade trec_eval "
                                "does not compute trec_eval's value of a query judged with such grades only")
        col = columns[m].copy()
        col[zero_only] = np.nan
        columns[m] = col


def _clean_missing(planned: list[Planned], columns: dict[Any, Any], missing: np.ndarray, qids: list[str],
                   relstrings: dict[str, str]) -> None:
    """What trec_eval resets after scoring a query absent from the run (-c), by output name: num_ret,
    utility and rbp_resid without parameters, every unj_*, relstring without a length."""
    for p in planned:
        name = p.measure.name
        if p.measure.kind == "relstring":
            if p.params is None:
                for q, miss in zip(qids, missing.tolist(), strict=True):
                    if miss:
                        relstrings[q] = ""
            continue
        if name == "num_ret" or name == "unj" or (name in ("utility", "rbp_resid") and p.params is None):
            for m in p.metrics:
                col = columns[m].copy()
                col[missing] = 0.0
                columns[m] = col


def _relstrings(p: Planned, columns: dict[Any, Any], qids: list[str], num_ret: Any) -> dict[str, str]:
    """trec_eval's relstring from ``grade_at@1..N``: one character per retrieved document of the first N (its
    grade 0-9, '>' above 9, '-' without a judgment, '.' a negative grade)."""
    import numpy as np

    n_ret = columns[num_ret]
    text = np.full(len(qids), "", dtype=object)
    for k, m in enumerate(p.parts, start=1):
        g = columns[m]
        char = np.full(len(qids), "-", dtype=object)
        judged = ~np.isnan(g)
        gg = np.where(judged, g, 0).astype(np.int64)
        char[judged & (gg < 0)] = "."
        char[judged & (gg > 9)] = ">"
        digits = judged & (gg >= 0) & (gg <= 9)
        char[digits] = np.array([str(v) for v in range(10)], dtype=object)[gg[digits]]
        text = np.where(n_ret >= k, text + char, text)
    return dict(zip(qids, text.tolist(), strict=True))


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


__all__ = ["MEASURES", "NICKNAMES", "TrecEvalError", "help_text", "parse_args", "plan", "run"]
