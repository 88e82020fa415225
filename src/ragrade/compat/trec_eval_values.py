"""The values the trec_eval drop-in prints (:mod:`ragrade.compat.trec_eval`), per query and measure: computed by
ragrade's public API (:func:`ragrade.evaluate`, the scoring port) under trec_eval's settings, then brought to what
trec_eval 10 computes where its C differs (levels below 1, stale ideal gains, queries absent from the run), and the
measures computed query by query (:mod:`ragrade.compat.trec_eval_query`)."""

from __future__ import annotations

import math
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ragrade.compat._trec_eval_c import atol as _atol
from ragrade.compat.trec_eval_args import Options
from ragrade.compat.trec_eval_inputs import TOP_GRADE, four_field_lines, grade_zero_relevant
from ragrade.compat.trec_eval_measures import BY_NAME
from ragrade.compat.trec_eval_plan import Planned, distinct_metrics
from ragrade.errors import TrecEvalError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ragrade.metrics import Metric


def scored_columns(planned: list[Planned], opts: Options, qrels: Any, runobj: Any, qids: list[str],
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
    frame = _leveled(opts, qrels, runobj, every, qids, missing_mask, run_path, _num_docs(opts, metrics))
    for m in every:
        columns[m] = np.asarray(frame[str(m)], dtype=np.float64)
    for m, (first, count) in terms.items():  # the kernel's additions, with trec_eval's negative -N
        columns[m] = columns[first] + float(m.get("d")) * (opts.num_docs + columns[count])
    _nan_like_trec_eval(planned, columns, helpers)
    if opts.rel_level < 1:
        _rndcg_below_one(planned, columns, qrels, qids)
    _stale_ideal(planned, columns, qids, best_grade)
    return columns, helpers


def kernel_gain_maps(planned: list[Planned], qrels: Any) -> list[Planned]:
    """The gain maps the kernels compute as trec_eval 10 does, moved back from the per-query path (which
    computes any map exactly but is slower): ``dcg``, ``ideal_dcg``, ``ndcg``, ``ndcg_rel`` and ``G`` with a map
    whose levels are distinct grades >= 0, whose gains are finite and not negative (the kernels score 0 a query
    whose judgments have no positive gain; trec_eval adds its negative gains), and whose table trec_eval's sort leaves in gain
    order for every query (:func:`ragrade.compat.trec_eval_query.gain_table`; ``ndcg.0=1.5`` is not: 1.5 stays
    before 1 and 2). Rndcg and rbp with a map stay on the per-query path."""
    import dataclasses

    import numpy as np

    names = ("dcg", "ideal_dcg", "ndcg", "ndcg_rel", "G")
    if not any(p.direct and p.measure.name in names for p in planned):
        return planned
    from ragrade.compat import _trec_eval_c as c
    from ragrade.compat.trec_eval_query import gain_table
    from ragrade.metrics import parse_labelled

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


def with_relstring_parts(planned: list[Planned], runobj: Any) -> list[Planned]:
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


def direct_columns(planned: list[Planned], opts: Options, columns: dict[Any, Any], qrels: Any, runobj: Any,
            qids: list[str], missing: np.ndarray) -> list[Planned]:
    """The measures computed query by query (:mod:`ragrade.compat.trec_eval_query`): those whose parameters
    the kernels do not express, and below level 0 (without -J) those that read the rankings' marks. Each
    output name gets a column of its own; returns the planned measures with those columns."""
    import dataclasses
    from typing import cast

    import numpy as np

    below = opts.rel_level < 0 and not opts.judged_only
    if not below and not any(p.direct for p in planned):
        return planned  # (without importing the per-query module)
    from ragrade.compat import trec_eval_query as per_query

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
            key = cast("Metric", ("direct", name, j))  # a column of its own (read by its key only: is_direct)
            columns[key] = np.array(values, dtype=np.float64)
            keys.append(key)
        out.append(dataclasses.replace(p, metrics=list(keys)))
    return out


def _leveled(opts: Options, qrels: Any, runobj: Any, every: list[Metric], qids: list[str], missing_mask: Any,
             run_path: str, num_docs: int | None) -> dict[str, Any]:
    """The values of ``every`` under trec_eval's settings (:func:`_scored`); at -l0 and below, the measures that
    have a relevance level read every grade >= 0 as relevant (on the judgments raised by one)."""
    import numpy as np

    settings: dict[str, Any] = dict(
        no_relevant="zero", duplicates="error", missing_qrels="ignore",
        unjudged="condensed" if opts.judged_only else None, num_docs=num_docs,
        rel_level=opts.rel_level if opts.rel_level > 1 else None, names="trec_eval")
    bogus = {q: {_BOGUS_DOC: 1.0} if opts.max_docs is None or opts.max_docs > 0 else {}
             for q in np.array(qids)[missing_mask].tolist()}
    if opts.rel_level >= 1:
        return _scored(qrels, runobj, bogus, every, settings, qids, run_path)
    leveled = [m for m in every if _has_level(m)]
    frame = _scored(grade_zero_relevant(qrels), runobj, bogus, leveled, settings, qids, run_path)
    others = [m for m in every if not _has_level(m)]
    if others:
        frame.update(_scored(qrels, runobj, bogus, others, settings, qids, run_path))
    return frame


def rbp_leftovers(planned: list[Planned], opts: Options, columns: dict[Any, Any], qrels: Any, runobj: Any,
                  qids: list[str], missing: np.ndarray) -> None:
    """rbp as trec_eval 10 prints it after the measures computed before it on the same query
    (:mod:`ragrade.compat.trec_eval_leftovers`): where their leftovers change its starting lowest or highest
    gain, the query's value is computed anew from that start (``columns`` is updated)."""
    import numpy as np

    from ragrade.compat import trec_eval_leftovers as leftovers
    from ragrade.compat._trec_eval_c import is_valid_int

    rbp = next((p for p in planned if p.measure.name == "rbp"), None)
    if rbp is None or not rbp.metrics:
        return
    pairs = list(rbp.values)
    tail = leftovers.before_rbp(planned, gain_map=any(is_valid_int(n) for n, _ in pairs))
    if tail is None:
        return
    from ragrade.compat import trec_eval_query as per_query

    marks, grades = _marks(qrels, runobj, qids, missing, opts.max_docs)
    key = rbp.metrics[0]
    column = np.array(columns[key], dtype=np.float64)
    for i, q in enumerate(per_query.marked_queries(opts.rel_level, opts.judged_only, marks, grades)):
        start = leftovers.rbp_start(tail, q)
        if start is not None and start != (0.0, 0.0):
            column[i] = per_query.rbp_value(q, pairs, start)
    columns[key] = column


def _scored(qrels: Any, runobj: Any, bogus: dict[str, dict[str, float]], metrics: list[Metric],
            settings: dict[str, Any], qids: list[str], run_path: str) -> dict[str, Any]:
    """Per-query values of ``metrics`` (``str(metric)`` -> an array in ``qids`` order) by the scoring port (no
    table library involved); a judged query absent from the run (-c) is scored on ``bogus``: trec_eval's ranking
    of one unjudged document (cut by -M), after which it sets num_ret, utility, relstring, unj and rbp_resid back
    to 0 or empty (:func:`clean_missing`)."""
    import warnings

    import numpy as np

    import ragrade
    from ragrade.errors import PolicyError, RagradeWarning

    # grade_at (relstring's characters) is NaN where a document has no judgment: no_relevant="zero" would make
    # that 0, so it is computed on its own with NaN left as it is.
    groups = [[m for m in metrics if m.name != "grade_at"], [m for m in metrics if m.name == "grade_at"]]
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        for group, extra in zip(groups, ({}, {"no_relevant": "skip"}), strict=True):
            if not group:
                continue
            try:
                ev = ragrade.Evaluator(qrels, [(str(m), m) for m in group], missing_run="drop",
                                       **{**settings, **extra})
                values = ev.score_values(*_hits(ev, runobj))
                if bogus:  # each a ranking of one unjudged document (none with -M0)
                    missing = list(bogus)
                    counts = np.array([len(bogus[q]) for q in missing], dtype=np.int64)
                    stand_in = ev.score_values(np.zeros(0, np.int64), np.zeros(0, np.int64), counts, missing)
            except PolicyError as err:
                raise TrecEvalError(f"{run_path}: {err}") from None
            where = ev.truth.positions(qids)
            taken = np.full(len(qids), -1, dtype=np.int64)
            if bogus:
                taken = ev.truth.positions(missing)
                absent = np.isin(where, taken)
            for m in group:
                col = values[str(m)][where]
                if bogus:
                    col = np.where(absent, stand_in[str(m)][where], col)
                out[str(m)] = col
    return out


def _hits(ev: Any, runobj: Any) -> tuple[Any, Any, Any, Any]:
    """``(truth rows, ranks, list lengths, queries)`` of ``runobj`` for the scoring port: its judged items
    found by the evaluator's join and ranked as the engine ranks them (trec_eval's order: the run is stored in
    it, or ranked here by score, then document id, descending). A document listed twice in a judged query is
    the engine's :class:`~ragrade.errors.PolicyError` (``duplicates="error"``), as trec_eval stops there."""
    import numpy as np

    if runobj.n_rows and runobj.duplicate_mask().any():
        ev.evaluate(runobj)  # the engine names the first document listed twice
    rows, judged = ev.locate(runobj)
    perm = runobj.ranking_sparse("docid_desc")[0]
    at = rows
    if perm is not None:
        inverse = np.empty(len(perm), dtype=np.int64)
        inverse[perm] = np.arange(len(perm), dtype=np.int64)
        at = inverse[rows]
    offsets = np.asarray(runobj.offsets, dtype=np.int64)
    seg = np.searchsorted(offsets, rows, side="right") - 1
    return judged, at - offsets[seg], np.diff(offsets), runobj.query_ids


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


def _judgment_groups(qrels_path: str) -> dict[str, dict[str, dict[str, int]]]:
    """``{query: {group: {document: grade}}}`` of a ``qid group docno grade`` file, as trec_eval reads it."""
    groups: dict[str, dict[str, dict[str, int]]] = {}
    for number, fields in four_field_lines(qrels_path, "qrels_jg", "qid group docno grade"):
        docs = groups.setdefault(fields[0], {}).setdefault(fields[1], {})
        if fields[2] in docs:
            raise TrecEvalError(f"{qrels_path}, line {number}: document {fields[2]!r} judged twice for query "
                                f"{fields[0]!r} in group {fields[1]!r}")
        docs[fields[2]] = _atol(fields[3])
        if docs[fields[2]] > TOP_GRADE:
            raise TrecEvalError(f"{qrels_path}, line {number}: grade {fields[3]}: trec_eval 10 sets aside a count for "
                                "every grade from 0 to the highest, and stops or runs out of memory at grades this "
                                f"high (ragrade trec_eval reads grades up to {TOP_GRADE})")
    return groups


def _ranked_for_groups(run_path: str, max_docs: int | None) -> dict[str, dict[str, float]]:
    """The run as ``{query: {document: score}}``, cut by -M to the first ``max_docs`` documents in trec_eval's
    order (score, then id, descending)."""
    from ragrade.io import read_run

    ranked = read_run(run_path, format="trec").to_dict()
    if max_docs is not None:
        ranked = {q: dict(sorted(d.items(), key=lambda kv: (kv[1], kv[0].encode("utf-8")), reverse=True)
                          [:max_docs]) for q, d in ranked.items()}
    return ranked


def jg_columns(planned: list[Planned], opts: Options, qrels_path: str, run_path: str) -> tuple[list[str], dict]:
    """map_avgjg, P_avgjg, Rprec_mult_avgjg: each query's measure computed on every judgment group's
    judgments (``qid group docno grade`` lines), then averaged over its groups."""
    import numpy as np

    groups = _judgment_groups(qrels_path)
    ranked = _ranked_for_groups(run_path, opts.max_docs)
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
    return qids, {m: _group_means(owner, values, qids) for m, values in group_columns.items()}


def _group_means(owner: list[str], values: Any, qids: list[str]) -> Any:
    """Each query's mean over its groups' values (added in order, as trec_eval adds them)."""
    import numpy as np

    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for q, v in zip(owner, values.tolist(), strict=True):
        total[q] = total.get(q, 0.0) + v
        count[q] = count.get(q, 0) + 1
    return np.array([total[q] / count[q] if count[q] > 1 else total[q] for q in qids])


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
    all_grades = qrels.grades.astype(np.int64).tolist()  # (whole numbers: grades_as_trec_eval_reads)
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

    from ragrade.compat._trec_eval_c import cut_by_round, recall_levels

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
    import numpy as np

    top = np.fromiter(map(best.get, qids, repeat(0.0)), dtype=np.float64, count=len(qids))
    stale = np.flatnonzero((top >= -1) & (top < 0))
    stale = stale[stale > 0].tolist()
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


def clean_missing(planned: list[Planned], columns: dict[Any, Any], missing: np.ndarray, qids: list[str],
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
