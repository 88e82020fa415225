"""``ragrade.fuse``: combine several runs into one."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ragrade.data import Run
from ragrade.errors import InputError, UnknownNameError
from ragrade.fusion._lists import Lists, Space, align
from ragrade.fusion.methods import METHODS, Prepared, combine, method_name, prepare
from ragrade.fusion.norms import norm_name, normalise
from ragrade.fusion.params import check_params, check_weights
from ragrade.kernels.tie_orders import argsort_segments_desc
from ragrade.options import PARAMS, public

#: methods whose fused value reads positions only, never scores
RANK_ONLY = frozenset({"isr", "log_isr", "logn_isr", "rrf", "rbc", "posfuse", "probfuse", "slidefuse", "mapfuse",
                       "bayesfuse", "bordafuse", "w_bordafuse", "condorcet", "w_condorcet"})
PROFILES = ("ranx", "langchain", "llamaindex", "qdrant", "pyserini", "trectools")
CandidateOrder = Literal["first_seen", "python_set"]


def as_runs(runs: Any) -> tuple[list[Run], list[str]]:
    """``(runs, names)`` from a dict name -> run, or a list of runs (any input ragrade reads)."""
    if isinstance(runs, Mapping):
        items = list(runs.items())
        names = [str(k) for k, _ in items]
        values = [v for _, v in items]
    elif isinstance(runs, Sequence) and not isinstance(runs, str | bytes):
        values = list(runs)
        names = []
        for i, v in enumerate(values):
            nm = getattr(v, "name", None)
            names.append(str(nm) if isinstance(nm, str) and nm else (str(v) if isinstance(v, str) else f"run{i + 1}"))
    else:
        raise InputError(f"runs must be a dict name -> run or a list of runs, got {type(runs).__name__}")
    if len(values) < 2:
        raise InputError(f"fusion needs at least two runs, got {len(values)}")
    return [fusion_run(v) for v in values], names


def fusion_run(value: Any) -> Run:
    """A run to fuse (any run input ragrade reads). A file without a single line of data is an empty run
    (every query an empty list), as pyserini and trectools fuse the other runs, where ``read_run`` refuses
    it (an empty file given to evaluate is nearly always a mistake)."""
    from ragrade.engine.inputs import as_run
    from ragrade.errors import EmptyFileError
    from ragrade.io.textfiles import default_run_name

    if not isinstance(value, str | os.PathLike):
        return as_run(value)
    try:
        return as_run(value)
    except EmptyFileError:
        pass
    empty = np.empty(0, dtype=object)
    return Run.from_columns(empty, empty, np.empty(0), name=default_run_name(value))


def _params(method: str, params: Mapping[str, Any] | None, weights: Sequence[float] | None,
            n_runs: int) -> dict[str, Any]:
    info = METHODS[method]
    p: dict[str, Any] = dict(info.defaults)
    if params:
        unknown = set(params) - set(info.params) - {"weights"}
        if unknown:
            raise UnknownNameError(f"parameter of {info.title}", sorted(unknown)[0],
                                   [*info.params, *(["weights"] if info.weighted else [])], show_known=True)
        p.update(params)
    if weights is not None:
        if not info.weighted:
            raise InputError(f"{info.title} takes no weights (weighted methods: "
                             f"{', '.join(m.name for m in METHODS.values() if m.weighted)})")
        p["weights"] = weights
    missing = [k for k in info.params if k not in p]
    if info.weighted and "weights" not in p:
        missing.append("weights")
    if missing:
        how = " (learn them with ragrade.optimize_fusion)" if info.trained else ""
        raise InputError(f"{info.title} needs {', '.join(missing)}{how}")
    if "weights" in p:
        p["weights"] = check_weights(p["weights"], n_runs)
    return check_params(p)


def to_run(space: Space, u_pair: np.ndarray, u_off: np.ndarray, fused: np.ndarray, name: str) -> Run:
    """The fused run: every query's rows ordered as ranx ranks them (numba's quicksort of ``-value``
    over the insertion order), so ``ties="input"`` reproduces ranx's order among equal values."""
    perm, values = argsort_segments_desc(fused, u_off)
    # integer-coded over the runs' shared vocabulary: evaluation joins the (small) vocabulary, not every row
    return Run(space.query_ids.astype(object), u_off.astype(np.int64), space.pair_code[u_pair[perm]],
               space.doc_vocab, values, name=name, unique=True)


def prepared_for(runs: list[Run], names: list[str], method: str, norm: str, *, python_set: bool,
                 same_queries: bool = False) -> tuple[Space, list[Lists], Prepared]:
    space, lists = align(runs, names, same_queries=same_queries)
    if method in RANK_ONLY and norm in ("min-max", "max", "sum", "zmuv"):
        normed = lists  # these keep every list's order, and the method reads positions only
    else:
        normed = normalise(lists, space, norm, python_set=python_set)
    return space, normed, prepare(space, normed, method, python_set=python_set)


@public(params=PARAMS)
def fuse(runs: Any, method: str = "rrf", norm: str | None = "default", params: Mapping[str, Any] | None = None,
         weights: Sequence[float] | None = None, profile: str = "ranx",
         candidate_order: CandidateOrder = "first_seen", same_queries: bool = False,
         name: str | None = None) -> Run:
    """Fuse ``runs`` (a dict name -> run, or a list; any run input ragrade reads) into one :class:`Run`.

    ``method`` and ``norm`` take ranx's names (case-insensitive; ``"CombSUM"``, ``"combsum"`` and
    ``"sum"`` are one method; ``norm=None`` skips normalisation; the default is ranx's min-max).
    ``params`` holds the method's parameters (``{"k": 60}`` for RRF, trained ``probs``...), ``weights``
    one weight per run for the weighted methods. ``profile`` computes the fusion as another library does
    (``"langchain"``, ``"llamaindex"``, ``"qdrant"``, ``"pyserini"``, ``"trectools"``; docs/fusion.md).

    Under ``profile="ranx"`` the values are ranx's, and the rows of every query are in ranx's order,
    equal values included: evaluate the result with ``ties="input"`` to score it as ranx does.
    ``candidate_order``: BordaFuse, Condorcet and ``norm="borda"`` take their candidates from a Python
    set in ranx, so ranx's results depend on ``PYTHONHASHSEED``; ``"first_seen"`` (default) uses an order
    independent of it, ``"python_set"`` ranx's own (equal to ranx run with this process's seed).
    A query missing from some runs is fused from the runs that have it (an empty list in the others);
    ``same_queries=True`` refuses such runs, as ranx does.

    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d2": 0.9, "d4": 0.5}}
    >>> tuple(fuse({"bm25": a, "dense": b}, method="rrf", norm=None).ranked("q1", ties="input")[:2])
    (('d2', 0.03252247488101534), ('d1', 0.01639344262295082))
    """
    prof = str(profile).strip().lower()
    if prof not in PROFILES:
        raise UnknownNameError("fusion profile", profile, PROFILES)
    run_list, names = as_runs(runs)
    if prof != "ranx":
        from ragrade.fusion.frameworks import fuse_framework

        return fuse_framework(prof, run_list, names, method, norm, params, weights, name=name)
    if candidate_order not in ("first_seen", "python_set"):
        raise UnknownNameError("candidate order", candidate_order, ["first_seen", "python_set"])
    m = method_name(method)
    nm = "min-max" if norm == "default" else norm_name(norm)
    p = _params(m, params, weights, len(run_list))
    space, _, prep = prepared_for(run_list, names, m, nm, python_set=candidate_order == "python_set",
                                  same_queries=same_queries)
    fused = combine(prep, m, p)
    return to_run(space, prep.u_pair, prep.u_off, fused, name or f"{m}({'+'.join(names)})")
