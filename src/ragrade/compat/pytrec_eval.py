"""pytrec_eval's interface, computed by ragrade: ``import ragrade.compat.pytrec_eval as pytrec_eval``.

:class:`RelevanceEvaluator` takes the same arguments as pytrec_eval's (qrels as ``{query: {doc: grade}}``, a
set of measure names, ``relevance_level``, ``judged_docs_only_flag``) and :meth:`RelevanceEvaluator.evaluate`
returns the same dictionary (``{query: {"P_5": ..., "ndcg_cut_10": ..., "map": ...}}``) with the same keys and
values: trec_eval 9's definitions as pytrec_eval exposes them (``profile="pytrec_eval"``: scores as float32,
trec_eval 9's interpolated precision), per-query ``gm_map``/``gm_bpref`` as ``log(max(value, 1e-5))``,
``runid``/``relstring`` as 0.0, only the queries present on both sides, ``{}`` for an empty run, queries whose
qrels are empty left out. Measure names are read as pytrec_eval reads them: ``"ndcg_cut"`` (trec_eval's
cutoffs), ``"ndcg_cut.10"``, ``"ndcg_cut_10"``, ``"P.5,10"``, nicknames (``"all_trec"``, ``"official"``,
``"set"``). No C extension to build: it works wherever ragrade does.
"""

from __future__ import annotations

import collections
import math
import re
from collections.abc import Iterable, Mapping
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


class RelevanceEvaluator:
    """pytrec_eval's evaluator: ``RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run)``."""

    def __init__(self, query_relevance: Mapping[str, Mapping[str, int]], measures: Iterable[str],
                 relevance_level: int = 1, judged_docs_only_flag: bool = False) -> None:
        from ragrade.compat.trec_eval import Options, TrecEvalError, plan

        if isinstance(measures, str):
            raise TypeError("measures must be a set (or list) of measure names, e.g. {'map', 'ndcg_cut.10'}")
        combined = _combine(measures)
        opts = Options(marked=list(combined),
                       params={m: ",".join(sorted(p)) for m, p in combined.items() if p})
        try:
            self._planned = plan(opts)
        except TrecEvalError as err:
            raise ValueError(str(err)) from None
        self._qrels = {str(q): {str(d): int(g) for d, g in docs.items()}
                       for q, docs in query_relevance.items() if len(docs) > 0}
        self.relevance_level = int(relevance_level)
        self.judged_docs_only_flag = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """Per-query values ``{query: {measure: value}}`` of the queries in both the qrels and ``scores``."""
        import warnings

        import numpy as np

        import ragrade
        from ragrade.errors import RagradeWarning
        from ragrade.kernels.measures import _cut_by_share, recall_levels

        if not scores:
            return {}
        run = scores if all(isinstance(q, str) for q in scores) else {str(q): docs for q, docs in scores.items()}
        queries = [q for q in run if q in self._qrels]
        if not queries:
            return {}
        metrics: list[Any] = []
        seen: set[Any] = set()
        for p in self._planned:
            for m in p.metrics:
                if m is not None and m not in seen:
                    seen.add(m)
                    metrics.append(m)
        helper = None
        if any(m.name in ("iprec", "iprec_11pt") for m in metrics):
            from ragrade.metrics import parse_labelled

            helper = [parse_labelled(n, "trec_eval")[0][1] for n in ("num_ret", "num_rel")]
            metrics += [h for h in helper if h not in seen]
        values: dict[Any, np.ndarray] = {}
        if metrics:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RagradeWarning)
                res = ragrade.evaluate(
                    {q: self._qrels[q] for q in queries}, {q: run[q] for q in queries},
                    [(str(m), m) for m in metrics], profile="pytrec_eval", missing_run="zero",
                    rel_level=self.relevance_level if self.relevance_level != 1 else None,
                    unjudged="condensed" if self.judged_docs_only_flag else None)
            frame = res.per_query.reindex(queries)
            for m in metrics:
                values[m] = frame[str(m)].to_numpy(dtype=np.float64)
        if helper is not None:  # trec_eval 9 divides 0 by 0 for the interpolated precision of an empty ranking
            empty = values[helper[0]] == 0
            r = values[helper[1]].astype(np.int64)
            for m in metrics:
                if m.name in ("iprec", "iprec_11pt") and empty.any():
                    levels = [float(m.get("recall"))] if m.name == "iprec" else list(recall_levels(m))
                    zero = np.zeros(len(r), dtype=bool)
                    for x in levels:
                        zero |= _cut_by_share(x, r) == 0
                    col = values[m].copy()
                    col[empty & zero] = np.nan
                    values[m] = col
        names: list[str] = []
        cols: list[np.ndarray] = []
        for p in self._planned:
            kind = p.measure.kind
            for name, m in zip(p.names, p.metrics, strict=True):
                names.append(name)
                if m is None:
                    cols.append(np.full(len(queries), 1.0 if kind == "count_q" else 0.0))
                elif kind == "gm":
                    cols.append(np.log(np.maximum(values[m], _MIN_GEO_MEAN)))
                else:
                    cols.append(values[m])
        rows = np.column_stack(cols).tolist() if cols else [[] for _ in queries]
        out = {q: dict(zip(names, row, strict=True)) for q, row in zip(queries, rows, strict=True)}
        return out
