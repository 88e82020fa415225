"""The one input layer: every public entry point turns its ``qrels`` and ``run`` arguments into ragrade's
data model here, so every entry point accepts the same shapes and every id is read by one rule.

Accepted ground truth (:func:`as_qrels`): a :class:`~ragrade.data.Qrels`; ``{query: {doc: grade}}``;
``{query: [doc, ...]}`` (all relevant, grade 1); ``{query: [[doc, doc], [doc]]}`` (groups: any id of a
group satisfies it); aligned lists ``[[doc, ...], ...]`` or groups ``[[[a, b], [c]], ...]`` (query ids
``"0"``, ``"1"``...); a pandas or polars DataFrame or a pyarrow Table (columns recognised by name, as in
files: ``query``/``query_id``/``qid``, ``doc``/``doc_id``/``docid``, ``grade``/``relevance``/``rel``/
``label``); a file path.

Accepted runs (:func:`as_run`): a :class:`~ragrade.data.Run`; ``{query: {doc: score}}``;
``{query: [doc, ...]}`` (ranked, best first); aligned ranked lists; a DataFrame or pyarrow Table
(``score`` or ``rank`` column, else row order); a file path.

Ids (query and document): a ``str`` is used as is; an ``int`` (or NumPy integer), or a float with an
integral value (``10.0``, as JSON and CSV readers produce), becomes its decimal digits (``"10"``);
``bytes`` are decoded as UTF-8. Anything else (``None``, NaN, ``1.5``, ``True``, a list) is an
:class:`~ragrade.errors.InputError` naming the query and the value. So ``10``, ``10.0``, ``"10"`` and
``numpy.int64(10)`` are one id everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragrade._arrays import is_frame
from ragrade.data import Qrels, Run
from ragrade.data.ids import normalize_id as id_string
from ragrade.errors import InputError


def is_path(value: Any) -> bool:
    return isinstance(value, str) or hasattr(value, "__fspath__")


def _is_seq(x: Any) -> bool:
    return isinstance(x, Sequence | np.ndarray) and not isinstance(x, str | bytes)


def _is_polars(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "polars" and hasattr(obj, "columns")


def _is_arrow_table(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "pyarrow" and type(obj).__name__ == "Table"


def nesting(value: Any) -> int:
    """How deep lists go, judged on the first non-empty entry at each level (ids count as depth 0)."""
    depth = 0
    while _is_seq(value):
        depth += 1
        value = next((v for v in value if not (_is_seq(v) and len(v) == 0)), None)
        if value is None:
            break
    return depth


# -- ground truth --------------------------------------------------------------------------------------


def as_qrels(qrels: Any) -> Qrels:
    """Ground truth from any accepted input (see the module docstring)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, Mapping):
        first = next((v for v in qrels.values() if not (_is_seq(v) and len(v) == 0)), None)
        if first is None or isinstance(first, Mapping):
            return Qrels.from_dict(qrels)
        qids, units = truth_units(qrels)
        return _qrels_from_units(qids, units)
    if is_frame(qrels) or _is_polars(qrels):
        query, doc, grade = _frame_columns(qrels, "qrels")
        if is_frame(qrels):
            return Qrels.from_pandas(qrels, query=query, doc=doc, grade=grade)
        return Qrels.from_polars(qrels, query=query, doc=doc, grade=grade)
    if _is_arrow_table(qrels):
        from ragrade.io.tables import table_to_qrels

        return table_to_qrels(qrels, "<pyarrow Table>", _table_rows)
    if is_path(qrels):
        from ragrade.io import read_qrels

        return read_qrels(qrels)
    if _is_seq(qrels):
        depth = nesting(qrels)
        if depth > 3:
            raise InputError("ground truth lists are nested too deeply: expected ids per query "
                             "([['d1', 'd2'], ...]) or groups of ids per query ([[['a', 'b'], ['c']], ...])")
        qids, units = truth_units(qrels)
        return _qrels_from_units(qids, units)
    raise InputError(f"cannot use a {type(qrels).__name__} as ground truth")


def _qrels_from_units(qids: list[str], units: list[list[list[str]]]) -> Qrels:
    if all(len(u) == 1 for us in units for u in us):  # plain ids: one judgment per id
        return Qrels.from_lists([[u[0] for u in us] for us in units], query_ids=qids)
    return Qrels.from_groups(units, query_ids=qids)


def truth_units(truth: Any) -> tuple[list[str], list[list[list[str]]]]:
    """``(query ids, units per query)``: each unit is a list of acceptable items (an id or a text; a
    group of several for AutoRAG groups). From Qrels, ``{q: [...]}``, ``{q: {doc: grade}}`` (grade > 0
    are the units), aligned lists or groups, DataFrames, tables and paths."""
    if isinstance(truth, Qrels):
        g = truth.to_groups()
        return list(g), [list(v) for v in g.values()]
    if isinstance(truth, Mapping):
        qids = [id_string(q, "query id") for q in truth]
        return qids, [_units_of(v, q) for q, v in zip(qids, truth.values(), strict=True)]
    if _is_seq(truth):
        qids = [str(i) for i in range(len(truth))]
        return qids, [_units_of(v, q) for q, v in zip(qids, truth, strict=True)]
    if is_path(truth) or is_frame(truth) or _is_polars(truth) or _is_arrow_table(truth):
        return truth_units(as_qrels(truth))
    raise InputError(f"cannot use a {type(truth).__name__} as ground truth")


def _units_of(entry: Any, q: str) -> list[list[str]]:
    """One query's ground truth as units, each a list of acceptable items."""
    if isinstance(entry, Mapping):  # {doc: grade}
        out: list[list[str]] = []
        for d, g in entry.items():
            if g is None:
                raise InputError("ground truth: a grade is missing", query=q, item=str(d))
            try:
                positive = float(g) > 0
            except (TypeError, ValueError):
                raise InputError("ground truth: a grade is not a number", query=q, item=str(d), value=g) from None
            if positive:
                out.append([id_string(d, "ground-truth item", query=q)])
        return out
    if not _is_seq(entry):
        raise InputError("ground truth: each query needs a list of items or groups", query=q, value=entry)
    units: list[list[str]] = []
    for u in entry:
        if _is_seq(u):
            units.append([id_string(x, "ground-truth item", query=q) for x in u])
        else:
            units.append([id_string(u, "ground-truth item", query=q)])
    return units


# -- runs ---------------------------------------------------------------------------------------------


def as_run(run: Any) -> Run:
    """A run from any accepted input (see the module docstring)."""
    if isinstance(run, Run):
        return run
    if isinstance(run, Mapping):
        first: Any = next(iter(run.values()), {})
        return Run.from_dict(run) if isinstance(first, Mapping) else Run.from_ranked(run)
    if is_frame(run) or _is_polars(run):
        query, doc, score = _frame_columns(run, "run")
        if is_frame(run):
            return Run.from_pandas(run, query=query, doc=doc, score=score)
        return Run.from_polars(run, query=query, doc=doc, score=score)
    if _is_arrow_table(run):
        from ragrade.io.tables import table_to_run

        return table_to_run(run, "<pyarrow Table>", _table_rows, name=None)
    if is_path(run):
        from ragrade.io import read_run

        return read_run(run)
    if _is_seq(run):
        return Run.from_lists(run)
    raise InputError(f"cannot use a {type(run).__name__} as a run")


def retrieved_lists(run: Any, ties: str = "docid_desc") -> tuple[list[str], list[list[str]]]:
    """``(query ids, ranked items per query)`` from any run input (items may be ids or texts)."""
    if isinstance(run, Mapping) and not isinstance(next(iter(run.values()), {}), Mapping):
        qids = [id_string(q, "query id") for q in run]
        return qids, [_list_of(v, q) for q, v in zip(qids, run.values(), strict=True)]
    if _is_seq(run) and not (isinstance(run, np.ndarray) or is_frame(run)):
        qids = [str(i) for i in range(len(run))]
        return qids, [_list_of(v, q) for q, v in zip(qids, run, strict=True)]
    lists = as_run(run).to_lists(ties)
    return list(lists), list(lists.values())


def _list_of(v: Any, q: str) -> list[str]:
    if not _is_seq(v):
        raise InputError("retrieved: each query needs a list of items", query=q, value=v)
    return [id_string(x, "retrieved item", query=q) for x in v]


def _table_rows(row: int) -> tuple[int | None, str | None]:
    return row + 1, None


def _frame_columns(df: Any, kind: str) -> tuple[str, str, str | None]:
    """The (query, doc, score-or-grade) columns of a DataFrame, recognised by name as in files."""
    from ragrade.io.columns import DOC_NAMES, GRADE_NAMES, QUERY_NAMES, SCORE_NAMES

    names = [str(c) for c in df.columns]
    lower = {n.lower(): n for n in names}

    def pick(options: tuple[str, ...], exclude: tuple[str | None, ...] = ()) -> str | None:
        return next((lower[o] for o in options if o in lower and lower[o] not in exclude), None)

    query = pick(QUERY_NAMES)
    doc = pick(DOC_NAMES, (query,))
    if query is None or doc is None:
        what = "query" if query is None else "doc"
        raise InputError(f"{kind} DataFrame: cannot find the {what} column (columns: {names}); name the columns "
                         f"query, doc and {'score' if kind == 'run' else 'grade'}, or build a "
                         f"{'Run' if kind == 'run' else 'Qrels'} with from_pandas(..., query=..., doc=...)")
    if kind == "run":
        return query, doc, pick(SCORE_NAMES, (query, doc)) or ("score" if "score" in names else None)
    return query, doc, pick(GRADE_NAMES, (query, doc))


def read_both(qrels_path: Any, run_path: Any, **options: Any) -> tuple[Qrels, Run]:
    """Read a ground-truth file and a run file at the same time (Arrow parses without holding the GIL,
    so the two reads overlap on a multi-core machine). Errors are raised as by the readers.
    ``options``: ``qrels_<option>`` and ``run_<option>`` go to :func:`ragrade.read_qrels` and
    :func:`ragrade.read_run`."""
    from concurrent.futures import ThreadPoolExecutor

    from ragrade.io import read_qrels, read_run

    qrels_opts = {k[6:]: v for k, v in options.items() if k.startswith("qrels_")}
    run_opts = {k[4:]: v for k, v in options.items() if k.startswith("run_")}
    with ThreadPoolExecutor(2) as pool:
        q = pool.submit(read_qrels, qrels_path, **qrels_opts)
        r = pool.submit(read_run, run_path, **run_opts)
        return q.result(), r.result()


__all__ = ["as_qrels", "as_run", "is_path", "nesting", "read_both", "retrieved_lists", "truth_units"]
