"""pytrec_eval's interface, computed by ragrade: ``import ragrade.compat.pytrec_eval as pytrec_eval``.

:class:`RelevanceEvaluator` takes the same arguments as pytrec_eval's (qrels as ``{query: {doc: grade}}``, a
set of measure names, ``relevance_level``, ``judged_docs_only_flag``) and :meth:`RelevanceEvaluator.evaluate`
returns the same dictionary (``{query: {"P_5": ..., "ndcg_cut_10": ..., "map": ...}}``) with the same keys and
values: trec_eval 9's definitions as pytrec_eval exposes them (``profile="pytrec_eval"``: scores as float32,
trec_eval 9's interpolated precision), per-query ``gm_map``/``gm_bpref`` as ``log(max(value, 1e-5))``,
``runid``/``relstring`` as 0.0, only the queries present on both sides, ``{}`` for an empty run, queries whose
qrels are empty left out. Measure names are read as pytrec_eval reads them: ``"ndcg_cut"`` (trec_eval's
cutoffs), ``"ndcg_cut.10"``, ``"ndcg_cut_10"``, ``"P.5,10"``, nicknames (``"all_trec"``, ``"official"``,
``"set"``), and so are other parameters: the numbers pytrec_eval's pattern keeps (``"P.5abc"`` is ``P_5``),
one measure's parameters merged and sorted as strings (``"utility.1,2,3,10"`` has the coefficients 1, 10, 2,
3), read as trec_eval 9 reads them, keyed as pytrec_eval keys them (``"set_F.0.5"`` gives ``"set_F"``;
cutoff measures keep their parameter: ``"Rprec_mult_0.50"``). Parameters the kernels do not express
(``set_F.0``, ``Rprec_mult.0``, recall levels above 1, unsorted ``11pt_avg`` levels, cutoffs trec_eval sorts
out of order) are computed query by query (:mod:`ragrade.compat.trec_eval_query`); those trec_eval 9
refuses while setting a measure up, on which pytrec_eval crashes (``P.0``, ``P.5,05``, ``ndcg.1=3,2=9``),
raise a :class:`ValueError`. No C extension to build: it works wherever ragrade does; ragrade's optional C
helper makes it several times faster than pytrec_eval (docs/trec_eval.md, bench/bench_pytrec_eval.py).
"""

from __future__ import annotations

import collections
import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run", "supported_measures",
           "supported_nicknames"]

#: The measures pytrec_eval supports (trec_eval 9's, text ones included).
supported_measures: set[str] = {
    "11pt_avg", "G", "P", "Rndcg", "Rprec", "Rprec_mult", "binG", "bpref", "gm_bpref", "gm_map", "infAP",
    "iprec_at_recall", "map", "map_cut", "ndcg", "ndcg_cut", "ndcg_rel", "num_nonrel_judged_ret", "num_q",
    "num_rel", "num_rel_ret", "num_ret", "recall", "recip_rank", "relative_P", "relstring", "runid", "set_F",
    "set_P", "set_map", "set_recall", "set_relative_P", "success", "utility",
}
#: trec_eval 9's nicknames as pytrec_eval lists them (the preference and judgment-group ones are refused by
#: :class:`RelevanceEvaluator`, as their measures need other judgment formats).
supported_nicknames: dict[str, set[str]] = {
    "official": {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"},
    "set": {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"},
    "all_trec": {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel",
                 "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"},
}

_RE_PARAMS = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"
_MIN_GEO_MEAN = 1e-5


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """A TREC run (``query Q0 doc rank score tag`` lines) as ``{query: {doc: score}}``; a document listed twice
    for one query is an error (``AssertionError``, as pytrec_eval)."""
    run: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for line in f_run:
        query_id, _, doc_id, _rank, score, _tag = line.strip().split()
        assert doc_id not in run[query_id], f"document {doc_id!r} listed twice for query {query_id!r}"
        run[query_id][doc_id] = float(score)
    return run


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """TREC qrels (``query 0 doc grade`` lines) as ``{query: {doc: grade}}``; a document judged twice for one
    query is an error (``AssertionError``, as pytrec_eval)."""
    qrel: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for line in f_qrel:
        query_id, _, doc_id, relevance = line.strip().split()
        assert doc_id not in qrel[query_id], f"document {doc_id!r} judged twice for query {query_id!r}"
        qrel[query_id][doc_id] = int(relevance)
    return qrel


def compute_aggregated_measure(measure: str, values: list[float]) -> float:
    """pytrec_eval's aggregate of per-query values: the sum for ``num_*``, ``exp(mean)`` for ``gm_*`` (whose
    per-query values are logarithms), else the mean."""
    if not values:
        return math.nan
    if measure.startswith("num_"):
        return float(math.fsum(values))
    if measure.startswith("gm_"):
        return math.exp(math.fsum(values) / len(values))
    return math.fsum(values) / len(values)


def _combine(measures: Iterable[str]) -> dict[str, set[str]]:
    """pytrec_eval's reading of measure names: nicknames expanded, ``meas.p1,p2`` / ``meas_p1`` parameters
    of one measure merged (a measure given with and without parameters keeps the parameters)."""
    expanded: set[str] = set()
    for m in measures:
        expanded |= supported_nicknames.get(m, {m})
    params: dict[str, set[str]] = collections.defaultdict(set)
    for m in expanded:
        if m in supported_measures:
            params.setdefault(m, set())
            continue
        found = None
        for base in sorted(supported_measures):
            match = re.match(_RE_PARAMS.format(re.escape(base)), m)
            if match is not None:
                found = (base, match.group(1))
                break
        if found is None:
            raise ValueError(f"unsupported measure {m}")
        params[found[0]].update(found[1].split(","))
    return params


@functools.lru_cache(maxsize=256)
def _measure_names(measures: frozenset[str]) -> frozenset[str]:
    """The measures :func:`_combine` reads in ``measures`` (read once per set)."""
    return frozenset(_combine(measures))


class RelevanceEvaluator:
    """pytrec_eval's evaluator: ``RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run)``.

    The qrels are indexed once, here (as pytrec_eval does), and every :meth:`evaluate` reuses them. A run of
    plain dicts (``str`` ids, ``float``/``int`` scores) takes the fast path: one pass in C over each ranking
    finds the rank of each judged document (trec_eval's order on float32 scores), the kernels compute only
    the measures asked for, and the nested output dicts are built in C (``RAGRADE_NO_ACCEL=1``: the same
    steps in Python, the same dicts). Anything else (NaN or non-numeric scores, non-``str`` document ids)
    takes the general path (:func:`ragrade.evaluate`), which reads every input ragrade reads."""

    def __init__(self, query_relevance: Mapping[str, Mapping[str, int]], measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False) -> None:
        if isinstance(measures, str):
            raise TypeError("measures must be a set (or list) of measure names, e.g. {'map', 'ndcg_cut.10'}")
        measures = frozenset(measures)
        names = _measure_names(measures)  # an unsupported name first (ValueError), as pytrec_eval checks it first
        self.relevance_level = _relevance_level(relevance_level)
        self.judged_docs_only_flag = bool(_c_int_argument("judged_docs_only_flag", judged_docs_only_flag))
        prepared = _prepare(measures, self.relevance_level, self.judged_docs_only_flag)
        if prepared.crash is not None:  # (pytrec_eval's evaluate() then crashes, or returns unset values)
            raise ValueError(prepared.crash)
        #: Why pytrec_eval crashes on the first query it scores (None: it does not). Its evaluate() returns {}
        #: for a run without a query in common with the qrels: so does this one, which raises a ValueError with
        #: this message when it has a query to score.
        self._crash = _bpref_crash(self.relevance_level, relevance_level, names)
        self._columns = prepared.columns
        self._direct = prepared.direct
        self._num_docs = prepared.num_docs
        self._metrics = list(prepared.metrics)
        self._helper = None if prepared.helper is None else list(prepared.helper)
        self._judgments = _read_qrels(query_relevance)
        self._fast = (_FastPath(self._judgments, self._metrics, prepared.plan)
                      if prepared.metrics and self._judgments.qids else None)

    def _options(self) -> dict[str, Any]:
        return _options(self.relevance_level, self.judged_docs_only_flag, self._num_docs)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """Per-query values ``{query: {measure: value}}`` of the queries in both the qrels and ``scores``."""
        import numpy as np

        if not scores:
            return {}
        run = scores if set(map(type, scores)) == {str} else {str(q): docs for q, docs in scores.items()}
        queries = list(filter(self._judgments.qpos.__contains__, run))
        if not queries:
            return {}
        if self._crash is not None:
            raise ValueError(self._crash)
        values: dict[Any, np.ndarray] = {}
        got = self._fast.evaluate(run, queries) if self._fast is not None else None
        if got is None and self._fast is not None and _has_bool_score(run, queries):
            run = _bools_as_numbers(run)  # pytrec_eval reads a Python bool score as 1.0 or 0.0
            got = self._fast.evaluate(run, queries)
        if got is not None:
            values = got
        elif self._metrics:
            values = self._general(run, queries)
        if self._helper is not None:  # trec_eval 9 divides 0 by 0 for the interpolated precision of an empty ranking
            _empty_ranking_nan(values, self._metrics, self._helper)
        direct = self._direct_values(run, queries) if self._direct else []
        names: list[str] = []
        cols: list[np.ndarray] = []
        for name, source, ref in self._columns:
            names.append(name)
            if source == "metric":
                cols.append(values[ref])
            elif source == "gm":
                cols.append(np.log(np.maximum(values[ref], _MIN_GEO_MEAN)))
            elif source == "direct":
                cols.append(direct[ref])
            else:  # "constant"
                cols.append(np.full(len(queries), ref))
        # (one table, not the columns read in place: its allocation keeps glibc's heap from being trimmed and
        # grown again around the result's dicts, which measures faster)
        table = np.stack(cols) if cols else np.zeros((0, len(queries)))  # one row per name
        return nested_dicts(queries, names, table, by_name=True)

    def _general(self, run: Mapping[str, Any], queries: list[str]) -> dict[Any, Any]:
        """The measures through :func:`ragrade.evaluate` (any input it reads)."""
        import warnings

        import numpy as np

        import ragrade
        from ragrade.errors import RagradeWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagradeWarning)
            qrels = self._judgments.dicts()
            res = ragrade.evaluate({q: qrels[q] for q in queries}, {q: run[q] for q in queries},
                                   [(str(m), m) for m in self._metrics], **self._options())
        frame = res.per_query.reindex(queries)
        return {m: frame[str(m)].to_numpy(dtype=np.float64) for m in self._metrics}

    def _direct_values(self, run: Mapping[str, Any], queries: list[str]) -> list[Any]:
        """The columns of the measures computed query by query (:mod:`ragrade.compat.trec_eval_query`, with
        trec_eval 9's recall-level rule): one array per output name, in the order of ``self._direct``'s names."""
        import numpy as np

        from ragrade.compat import trec_eval_query as per_query

        qrels = self._judgments.dicts()
        scored = per_query.queries(self.relevance_level, self.judged_docs_only_flag,
                                   zip([qrels[q] for q in queries], self._rankings(run, queries), strict=True))
        out: list[Any] = []
        for p in self._direct:
            rows = [per_query.values(p, q, 0, per_query.share_cut_9) for q in scored]
            out += [np.array(col, dtype=np.float64) for col in zip(*rows, strict=True)] if rows else []
        return out

    def _rankings(self, run: Mapping[str, Any], queries: list[str]) -> list[list[str]]:
        """Each query's ranking in trec_eval's order (float32 scores descending, then document ids descending),
        as the measures computed query by query read it: the judged documents at their ranks, every other
        place holding a stand-in id that no judgment has (a NUL is refused in judged ids)."""
        import numpy as np

        j = self._judgments
        qpos = np.fromiter(map(j.qpos.__getitem__, queries), dtype=np.int64, count=len(queries))
        rankings = [run[q] for q in queries]
        joined = pytrec_join(rankings, j.docs, j.starts[qpos], j.counts[qpos])
        if joined is None:  # not plain dicts of str -> float: read as the general path reads them
            joined = pytrec_join([_plain_ranking(q, run[q]) for q in queries], j.docs, j.starts[qpos],
                                 j.counts[qpos])
            assert joined is not None
        rows, pos, counts, _ = joined
        where = {int(k): i for i, k in enumerate(qpos.tolist())}
        owner = np.searchsorted(j.starts, rows, side="right") - 1  # each judged row's qrels query
        out = [[_NOT_JUDGED] * n for n in counts.tolist()]
        for row, at, k in zip(rows.tolist(), pos.tolist(), owner.tolist(), strict=True):
            out[where[k]][at] = j.docs[row]
        return out


_NOT_JUDGED = "\x00"  # a document id no judgment holds (_read_qrels refuses a NUL in judged ids)


def _plain_ranking(query: str, docs: Any) -> dict[str, float]:
    """A ranking that is not a plain ``{str: float}`` dict, as the general path reads it: ids as ``str``,
    Python bools as 1.0 / 0.0, numbers as float32 (the scores trec_eval 9 holds). What it cannot read (NaN,
    numpy booleans or anything else that is not a number as a score, an id holding a NUL) is an
    :class:`~ragrade.errors.InputError`."""
    import numpy as np

    from ragrade.errors import InputError

    if not isinstance(docs, Mapping):
        raise InputError("run: a query's ranking must be a dict of document -> score", query=query,
                         value=type(docs).__name__)
    out: dict[str, float] = {}
    for d, v in docs.items():
        if "\x00" in str(d):
            raise InputError("run: document id contains a NUL character (\\x00): ids are text without NUL bytes",
                             query=query, value=str(d))
        if isinstance(v, np.bool_) or (not isinstance(v, bool | int | float) and not isinstance(v, np.number)):
            raise InputError(f"run: score is a {type(v).__name__}, not a number", query=query, item=str(d),
                             value=v)
        x = float(v)
        if x != x:
            raise InputError("run: score is NaN (scores must be comparable numbers)", query=query, item=str(d),
                             value=v)
        with np.errstate(over="ignore"):
            out[str(d)] = float(np.float32(x))
    return out


def _c_int_argument(name: str, value: Any) -> int:
    """An integer argument as pytrec_eval's C code reads it (a C ``int``): a ``TypeError`` for anything else
    (a float, a string, a number beyond the ``int`` range), as pytrec_eval raises."""
    import operator

    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer (pytrec_eval reads a C int), got {type(value).__name__}") from None
    if not -(2**31) <= number < 2**31:
        raise TypeError(f"{name} must be an integer in the range of a C int (pytrec_eval), got {number}")
    return number


def _relevance_level(value: Any) -> int:
    """The relevance level trec_eval 9 uses for ``relevance_level=value``. pytrec_eval reads the argument as a
    C ``int`` into the low half of a zeroed 64-bit ``long``, so a negative level ``n`` is the level ``2**32 + n``
    (``-1``: 4294967295, no document relevant); 0 is refused (``TypeError``, as pytrec_eval)."""
    level = _c_int_argument("relevance_level", value)
    if level == 0:
        raise TypeError("relevance_level must not be 0 (pytrec_eval: \"Argument relevance_level should be "
                        "positive.\")")
    return level + 2**32 if level < 0 else level


def _bpref_crash(level: int, given: Any, measures: frozenset[str]) -> str | None:
    """Why pytrec_eval crashes computing bpref or gm_bpref at relevance level ``level``, or None: both add up
    ``level`` entries of a table holding one entry per grade, and past ``2**30`` (8 GiB beyond the table) that
    always reads outside pytrec_eval's memory. (From about 10,000 on it may already: that depends on its heap,
    and ragrade computes such levels.)"""
    if level > 2**30 and ("bpref" in measures or "gm_bpref" in measures):
        return (f"relevance_level {given} (read by pytrec_eval as {level}): pytrec_eval's bpref and gm_bpref read "
                "that many entries of a table of one entry per grade, far outside its memory, and crash")
    return None


def _options(relevance_level: int, judged_docs_only_flag: bool, num_docs: int | None = None) -> dict[str, Any]:
    """ragrade.evaluate's keywords for pytrec_eval's options (``num_docs``: the collection size, 0 in
    pytrec_eval, given when a utility reads it)."""
    options = {"profile": "pytrec_eval", "missing_run": "zero",
               "rel_level": relevance_level if relevance_level != 1 else None,
               "unjudged": "condensed" if judged_docs_only_flag else None}
    if num_docs is not None:
        options["num_docs"] = num_docs
    return options


@dataclass(frozen=True)
class _Prepared:
    """What a measure set means (:func:`_prepare`).

    ``columns``: each output key in pytrec_eval's order with where its values come from: ``("metric", m)`` a
    kernel metric's column, ``("gm", m)`` its logarithm as pytrec_eval gives gm_map and gm_bpref,
    ``("direct", i)`` the i-th column computed query by query from ``direct`` (the planned measures whose
    parameters the kernels do not express), ``("constant", v)`` the same value for every query. ``metrics``:
    the kernel metrics to compute, each once (with ``helper``: num_ret and num_rel for trec_eval 9's
    empty-ranking rule, or None); ``plan``: their plan under the pytrec_eval profile (without qrels); ``num_docs``: the collection size given to the kernels (0, as pytrec_eval holds it, when a
    utility's fourth coefficient reads it; else None); ``crash``: why pytrec_eval cannot compute these
    measures (then nothing else is set), or None."""

    columns: tuple[tuple[str, str, Any], ...]
    metrics: tuple[Any, ...]
    helper: tuple[Any, ...] | None
    plan: Any
    direct: tuple[Any, ...]
    num_docs: int | None
    crash: str | None = None


#: trec_eval 9's measures whose per-query print is the cutoff-array one: pytrec_eval keys each value with the
#: measure's name and its parameter (``P_5``, ``iprec_at_recall_0.10``, ``Rprec_mult_0.50``); every other
#: measure is keyed by its bare name, whatever its parameters (``set_F.0.5`` gives ``set_F``).
_CUTOFF_KINDS = frozenset({"cut_long", "cut_double"})


def _columns_of(planned: list[Any], zero_utility: bool) -> tuple[list[tuple[str, str, Any]], list[Any]]:
    """Each output key in pytrec_eval's order with where its values come from (see :class:`_Prepared`), and the
    planned measures computed query by query."""
    columns: list[tuple[str, str, Any]] = []
    direct: list[Any] = []
    for p in planned:
        kind = p.measure.kind
        names = p.names if kind in _CUTOFF_KINDS else [p.measure.name]
        if kind in ("runid", "relstring") or (zero_utility and p.measure.name == "utility"):
            columns.append((names[0], "constant", 0.0))  # (pytrec_eval's value of a text measure: 0.0)
        elif kind == "count_q":
            columns.append((names[0], "constant", 1.0))
        elif p.direct:
            first = sum(1 for _, source, _ in columns if source == "direct")
            direct.append(p)
            columns += [(name, "direct", first + i) for i, name in enumerate(names)]
        else:
            columns += [(name, "gm" if kind == "gm" else "metric", m) for name, m in zip(names, p.metrics, strict=True)]
    return columns, direct


@functools.lru_cache(maxsize=64)
def _prepare(measures: frozenset[str], relevance_level: int, judged_docs_only_flag: bool) -> _Prepared:
    """What a measure set means, read once per (measures, options) and reused by every evaluator asking the
    same (the parsed values are immutable).

    The names are read as pytrec_eval reads them (:func:`_combine`), and each measure's parameters, joined as
    pytrec_eval hands them to trec_eval 9 (sorted as strings), are read as trec_eval reads them
    (:func:`ragrade.compat.trec_eval.plan`: trec_eval 9 and 10 parse parameters alike). Where trec_eval
    rejects them while setting the measure up (a cutoff of 0, a cutoff or recall level given twice, numbers
    given to a measure that reads ``name=value`` pairs), pytrec_eval goes on with the measure unset: its
    evaluate() crashes (an assertion or a segmentation fault, even on a run without a query in common with
    the qrels) or returns values read from unset memory. ``crash`` then says why, and the evaluator raises it
    as a :class:`ValueError` when it is built. ``utility`` with another number of coefficients than 4 is
    refused by trec_eval 9 only when it computes ("improper number of coefficients", on stderr), which leaves
    pytrec_eval's value at 0.0 for every query: 0.0 here too."""
    from ragrade.compat._trec_eval_c import double_params
    from ragrade.compat.trec_eval_args import Options
    from ragrade.compat.trec_eval_plan import plan
    from ragrade.errors import TrecEvalError

    combined = _combine(measures)
    params = {m: ",".join(sorted(p)) for m, p in combined.items() if p}
    zero_utility = "utility" in params and len(double_params(params["utility"])) != 4
    if zero_utility:
        del params["utility"]  # (planned with its default coefficients, and given 0.0 below)
    try:
        planned = plan(Options(marked=list(combined), params=params))
    except TrecEvalError as err:
        return _Prepared((), (), None, None, (), None,
                         crash=f"{err}; pytrec_eval reads {sorted(measures)} as "
                               f"{sorted(f'{m}.{p}' for m, p in params.items())}, which trec_eval 9 rejects while "
                               "setting the measure up: pytrec_eval then crashes in evaluate() (or returns values "
                               "read from unset memory)")
    columns, direct = _columns_of(planned, zero_utility)
    metrics: list[Any] = list(dict.fromkeys(ref for _, source, ref in columns if source in ("metric", "gm")))
    num_docs = 0 if any(m.name == "utility" and float(m.get("d")) != 0.0 for m in metrics) else None
    seen = set(metrics)
    helper = None
    if any(m.name in ("iprec", "iprec_11pt") for m in metrics):
        from ragrade.metrics import parse_labelled

        helper = [parse_labelled(n, "trec_eval")[0][1] for n in ("num_ret", "num_rel")]
        metrics += [h for h in helper if h not in seen]
    plan_ = None
    if metrics:
        from ragrade.evaluation import build_plan

        plan_ = build_plan({}, None, [(str(m), m) for m in metrics],
                           **_options(relevance_level, judged_docs_only_flag, num_docs))
        prof = plan_.profile
        assert prof is not None and getattr(prof, "mrr_variant", None) != "beir" and getattr(prof, "score_dtype", None) == "float32"
    return _Prepared(tuple(columns), tuple(metrics), None if helper is None else tuple(helper), plan_, tuple(direct),
                     num_docs)


class _Judgments:
    """pytrec_eval's copy of the qrels: the queries that have judgments (``qids``, ``qpos``: their places), each
    one's ids and grades in its dict's order, query after query (``docs``, ``grades``: float64; ``starts``,
    ``counts``: each query's rows). Later changes to the caller's dicts change nothing."""

    __slots__ = ("_dicts", "counts", "docs", "grades", "qids", "qpos", "starts")

    def __init__(self, qids: list[str], docs: list[str], counts: Any, grades: Any) -> None:
        import numpy as np

        self.qids, self.docs, self.counts, self.grades = qids, docs, counts, grades
        self.qpos = dict(zip(qids, range(len(qids)), strict=True))
        self.starts = np.zeros(len(qids), dtype=np.int64)
        np.cumsum(counts[:-1], out=self.starts[1:])
        self._dicts: dict[str, dict[str, int]] | None = None

    def dicts(self) -> dict[str, dict[str, int]]:
        """``{query: {doc: grade}}`` (built on first use: the general path's input)."""
        if self._dicts is None:
            from itertools import islice

            docs, grades = iter(self.docs), iter(self.grades.astype("int64").tolist())
            self._dicts = {q: dict(zip(islice(docs, n), islice(grades, n), strict=True))
                           for q, n in zip(self.qids, self.counts.tolist(), strict=True)}
        return self._dicts


def _has_bool_score(run: Mapping[str, Any], queries: list[str]) -> bool:
    """Whether a ranking of ``queries`` holds a Python ``bool`` score (pytrec_eval reads it as a number)."""
    return any(type(v) is bool for q in queries if isinstance(docs := run[q], Mapping) for v in docs.values())


def _bools_as_numbers(run: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``run`` with each Python ``bool`` score as pytrec_eval reads it (``True``: 1.0); the
    caller's dicts are left as they are."""
    return {q: ({d: float(v) if type(v) is bool else v for d, v in docs.items()} if isinstance(docs, Mapping)
                else docs) for q, docs in run.items()}


def _read_qrels(qrels: Mapping[Any, Mapping[Any, Any]]) -> _Judgments:
    """The qrels as pytrec_eval keeps them (``str`` ids, ``int`` grades, queries without judgments left out).
    Plain ``str`` -> ``int`` dicts are read in one C pass."""
    import numpy as np

    from ragrade.compat import _native
    from ragrade.errors import InputError

    qids = list(qrels)
    values = list(qrels.values())
    _accel = _native.speedups
    if _accel is not None and set(map(type, qids)) <= {str}:
        try:
            total = sum(map(len, values))
        except TypeError:
            total = -1
        if total >= 0:
            counts = np.empty(len(values), dtype=np.int64)
            grades = np.empty(total, dtype=np.float64)
            status, docs = _accel.pytrec_qrels(values, counts, grades)
            if status == 0:
                keep = counts > 0
                if not keep.all():
                    qids = [q for q, k in zip(qids, keep.tolist(), strict=True) if k]
                return _Judgments(qids, docs, counts[keep], grades)
    from itertools import chain

    for q, docs in qrels.items():  # pytrec_eval reads a Python bool grade as 1 or 0 and refuses numpy's
        for d, g in docs.items():
            if isinstance(d, str) and "\x00" in d:
                raise InputError("qrels: document id contains a NUL character (\\x00): ids are text without NUL "
                                 "bytes", query=str(q), value=d)
            if type(g) is np.bool_:
                raise InputError("qrels: grade is a numpy.bool_, not an integer (pytrec_eval refuses it too)",
                                 query=str(q), item=str(d), value=g)
    out = {str(q): {str(d): int(g) for d, g in docs.items()} for q, docs in qrels.items() if len(docs) > 0}
    counts = np.fromiter(map(len, out.values()), dtype=np.int64, count=len(out))
    grades = np.fromiter(chain.from_iterable(d.values() for d in out.values()), dtype=np.float64,
                         count=int(counts.sum()))
    return _Judgments(list(out), list(chain.from_iterable(out.values())), counts, grades)


def _empty_ranking_nan(values: dict[Any, Any], metrics: list[Any], helper: list[Any]) -> None:
    """trec_eval 9's interpolated precision at a recall level whose cutoff is 0 on an empty ranking: 0 / 0."""
    import numpy as np

    from ragrade.compat._trec_eval_c import cut_by_share, recall_levels

    empty = values[helper[0]] == 0
    if not empty.any():
        return
    r = values[helper[1]].astype(np.int64)
    for m in metrics:
        if m.name in ("iprec", "iprec_11pt"):
            levels = [float(m.get("recall"))] if m.name == "iprec" else list(recall_levels(m))
            zero = np.zeros(len(r), dtype=bool)
            for x in levels:
                zero |= cut_by_share(x, r) == 0
            col = values[m].copy()
            col[empty & zero] = np.nan
            values[m] = col


class _FastPath:
    """The qrels as ragrade's scoring port holds them (:attr:`ragrade.Evaluator.scorer` of the pytrec_eval
    profile's plan over the rows of :class:`_Judgments`), the join of plain-dict runs against them
    (:func:`pytrec_join`) and the port's per-query values of the joined rows: what depends on the qrels alone
    (R, ideal DCG, where each measure is defined) is computed once by the port and kept across calls."""

    def __init__(self, judgments: _Judgments, metrics: list[Any], plan: Any) -> None:
        import numpy as np

        from ragrade.data import Qrels
        from ragrade.evaluation import prepare

        self.metrics = metrics
        self.judgments = judgments
        self.qpos = judgments.qpos
        self.nq = len(judgments.qids)
        offsets = np.zeros(self.nq + 1, dtype=np.int64)
        np.cumsum(judgments.counts, out=offsets[1:])
        qrels = Qrels(np.array(judgments.qids, dtype=object), offsets, None, None, judgments.grades,
                      raw_docs=np.fromiter(judgments.docs, dtype=object, count=len(judgments.docs)))
        evaluator = prepare(plan.replace(qrels=qrels))  # the dispatcher's door: the qrels indexed once
        self.labels = list(evaluator.labels)
        self.scorer = evaluator.scorer

    def evaluate(self, run: Mapping[str, Any], queries: list[str]) -> dict[Any, Any] | None:
        """The metrics' values for ``queries`` (in that order), or None when the run is not plain dicts."""
        import numpy as np

        qpos = np.fromiter(map(self.qpos.__getitem__, queries), dtype=np.int64, count=len(queries))
        if len(qpos) < 2 or bool((qpos[1:] > qpos[:-1]).all()):
            in_order, ordered = qpos, queries
        else:  # the join in the qrels' order: its rows come sorted by (query, rank)
            order = np.argsort(qpos, kind="stable")
            in_order = qpos[order]
            ordered = list(map(queries.__getitem__, order.tolist()))
        joined = pytrec_join(list(map(run.__getitem__, ordered)), self.judgments.docs,
                             self.judgments.starts[in_order], self.judgments.counts[in_order])
        if joined is None:
            return None
        rows, pos, counts, _ = joined
        values = self.scorer.values(rows, pos, counts, ordered, positions=in_order)
        if in_order is qpos and len(qpos) == self.nq:  # every qrels query, in the qrels' order: qpos is 0, 1, ...
            return {m: values[lab] for m, (lab, _) in zip(self.metrics, self.labels, strict=True)}
        return {m: values[lab][qpos] for m, (lab, _) in zip(self.metrics, self.labels, strict=True)}


def pytrec_join(runs: list[Any], docs: list[str], starts: Any, jcounts: Any,
                use_accel: bool | None = None) -> tuple[Any, Any, Any, int] | None:
    """``(rows, pos, counts, infinite)`` for rankings ``runs[i]`` (``{doc: score}``) whose judged ids are
    ``docs[starts[i]:starts[i] + jcounts[i]]``: the row (``starts[i]`` + its place) and the 0-based rank of every
    judged document the ranking holds (trec_eval's order on float32 scores: score descending, then doc id
    descending), each query's in rank order; each ranking's length; the number of infinite scores. None when a
    ranking is not a dict of ``str`` -> ``float``/``int`` (NaN, bools, a score beyond float32's range, an id
    holding a NUL: the general path, which names what is wrong). The C helper's ``pytrec_join`` when it is built (``use_accel``), else the same in Python."""
    import numpy as np

    from ragrade.compat import _native

    starts = np.ascontiguousarray(starts, dtype=np.int64)
    jcounts = np.ascontiguousarray(jcounts, dtype=np.int64)
    accel = _native.speedups if use_accel is None or use_accel else None
    if accel is not None:
        total = int(jcounts.sum())
        rows = np.empty(total, dtype=np.int64)
        pos = np.empty(total, dtype=np.int64)
        counts = np.empty(len(runs), dtype=np.int64)
        status, n, n_inf = accel.pytrec_join(runs, docs, starts, jcounts, rows, pos, counts, True)
        if status != 0:
            return None
        return rows[:n], pos[:n], counts, int(n_inf)
    return _pytrec_join_py(runs, docs, starts, jcounts)


_F32_MAX = 3.4028234663852886e38  # float32's largest finite value


def _pytrec_join_py(runs: list[Any], docs: list[str], starts: Any, jcounts: Any) -> tuple[Any, Any, Any, int] | None:
    import numpy as np

    out_rows: list[int] = []
    out_pos: list[int] = []
    counts = np.zeros(len(runs), dtype=np.int64)
    n_inf = 0
    for i, ranking in enumerate(runs):
        if type(ranking) is not dict:
            return None
        keys = list(ranking)
        raw = list(ranking.values())
        if not all(type(k) is str for k in keys) or not all(type(v) is float or type(v) is int for v in raw):
            return None
        if any("\x00" in k for k in keys):  # the id rule (NUL): the general path names it
            return None
        try:
            s64 = np.array(raw, dtype=np.float64)
        except OverflowError:
            return None
        if np.isnan(s64).any() or (np.isfinite(s64) & (np.abs(s64) > _F32_MAX)).any():
            return None
        s = s64.astype(np.float32).astype(np.float64)
        n_inf += int(np.isinf(s).sum())
        counts[i] = len(keys)
        where = dict(zip(keys, range(len(keys)), strict=True))
        a = int(starts[i])
        judged = docs[a:a + int(jcounts[i])]
        found = [(float(s[where[d]]), d, a + t) for t, d in enumerate(judged) if d in where]
        ranked = []
        for score, doc, row in found:
            tied = np.flatnonzero(s == score).tolist()
            ranked.append((int(np.count_nonzero(s > score)) + sum(keys[e] > doc for e in tied), row))
        ranked.sort()
        out_rows += [row for _, row in ranked]
        out_pos += [p for p, _ in ranked]
    return (np.asarray(out_rows, dtype=np.int64), np.asarray(out_pos, dtype=np.int64), counts, n_inf)


def nested_dicts(queries: list[str], names: list[str], table: Any, use_accel: bool | None = None,
                 by_name: bool = False) -> dict[str, dict[str, float]]:
    """``{queries[i]: {names[j]: table[i, j]}}`` (``by_name``: ``table[j, i]``), float values: in C when the
    helper is built, else ``dict(zip(...))`` (the same dicts)."""
    import numpy as np

    from ragrade.compat import _native

    table = np.ascontiguousarray(table, dtype=np.float64)
    accel = _native.speedups if use_accel is None or use_accel else None
    if accel is not None and type(queries) is list and type(names) is list:
        try:
            return accel.nested_dicts(queries, names, table, by_name)
        except TypeError:  # an id or a name that is not exactly str
            pass
    rows = (table.T if by_name else table).tolist()
    return dict(zip(queries, [dict(zip(names, row, strict=True)) for row in rows], strict=True))
