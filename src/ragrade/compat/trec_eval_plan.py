"""The measures of a trec_eval command line planned for the drop-in (:mod:`ragrade.compat.trec_eval`): each
measure's parameters read as trec_eval reads them, its output names, and the ragrade metrics (the registry's
families) that compute it, or the mark that it is computed query by query (:mod:`ragrade.compat.trec_eval_query`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragrade.compat.trec_eval_args import Options
from ragrade.compat.trec_eval_measures import MEASURES, NICKNAMES, Measure
from ragrade.errors import TrecEvalError

if TYPE_CHECKING:  # pragma: no cover

    from ragrade.metrics import Metric


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
        bottom_ok = all(v >= 0 for v in values) if name == "iprec_at_recall" else all(v > 0 for v in values)
        return "" if _finite(values) and bottom_ok and all(v <= top for v in values) else None
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
        return _pairs_form(m, values)
    raise AssertionError(m.name)  # pragma: no cover


def _pairs_form(m: Measure, values: list[Any]) -> str | None:
    """:func:`_kernel_form` of a measure that reads ``name=value`` pairs (the DCG family, rbp): None for a gain
    map (trec_eval's table, compat/trec_eval_query.gain_table) or a persistence outside (0, 1)."""
    from ragrade.compat._trec_eval_c import is_valid_int

    if m.name != "rbp_resid" and any(is_valid_int(n) for n, _ in values):
        return None
    given = [v for n, v in values if n == "p"] if m.name in ("rbp", "rbp_resid") else []
    if not given:
        return m.name
    return f"{m.name}.p={given[-1]!r}" if 0 < given[-1] < 1 else None


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
    if m.name.startswith("prefs_"):
        from ragrade.compat.trec_eval_prefs import key as prefs_key

        metric = prefs_key(m.name)
    else:
        metric = parse_labelled(base, "trec_eval")[0][1]
    return Planned(m, [m.name], [metric], given)


def distinct_metrics(planned: list[Planned]) -> list[Metric]:
    """The ragrade metrics of ``planned``, each once, in trec_eval's order (not the columns computed query by
    query)."""
    return list(dict.fromkeys(m for p in planned for m in p.metrics if m is not None and not is_direct(m)))


def is_direct(m: Any) -> bool:
    """Whether a column key is a column computed query by query (:func:`direct_columns`)."""
    return isinstance(m, tuple) and m[:1] == ("direct",)
