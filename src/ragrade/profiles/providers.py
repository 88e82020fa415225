"""Per-provider conventions of the engine profiles ``ir_measures`` and ``ranx`` (docs/conventions.md,
"Providers of ir-measures and ranx's tie order").

ir-measures hands every measure to the first *provider* (pytrec_eval, cwl_eval, compat, pyndeval,
judged, msmarco, gdeval, accuracy, ranx) that supports it, and each provider orders equal scores and
chooses its queries its own way. :func:`ir_measures_provider` names the provider ir-measures 0.4.3 uses
for a ragrade metric; :data:`PROVIDERS` states each one's conventions. ranx (and ir-measures' ranx
provider) order equal scores by numba's quicksort, reproduced by :mod:`ragrade.kernels.tie_orders`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from ragrade.data import Run

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.data import Qrels
    from ragrade.metrics.parser import Metric


@dataclass(frozen=True)
class Provider:
    """How one tool behind ir-measures ranks and which queries it reports.

    ``ties``: a ragrade tie policy (``docid_desc``, ``docid_asc``, ``input``) or a ranx order (``ranx``);
    ``float32``: scores stored as 32-bit floats first; ``missing``: what a qrels query without a ranking
    gets (``"zero"``: ir-measures fills in the measure's default, 0; ``"absent"``: not reported, NaN here
    and left out of the mean); ``no_relevant``: the policy for queries the measure is undefined on;
    ``rounding``: decimals of the values the tool prints."""

    name: str
    ties: str
    float32: bool = False
    missing: Literal["zero", "absent"] = "zero"
    no_relevant: str = "zero"
    rounding: int | None = None
    sorts: str = ""  # the tie order in words (docs)
    queries: str = ""  # the query set in words (docs)


_QRELS_ZERO = "every qrels query; one missing from the run scores 0 (ir-measures' default value); run-only " \
              "queries are ignored"

PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("pytrec_eval", "docid_desc", float32=True,
             sorts="score (as float32) descending, then document id descending (trec_eval)", queries=_QRELS_ZERO),
    Provider("cwl_eval", "input", sorts="score descending, equal scores in input order (Python's stable sort)",
             queries=_QRELS_ZERO),
    Provider("compat", "docid_asc", sorts="score descending, then document id ascending; the ideal: grade, "
                                          "then run score (0.0 if not retrieved), then qrels order",
             queries=_QRELS_ZERO),
    Provider("pyndeval", "input", sorts="score descending, equal scores in input order", queries=_QRELS_ZERO),
    Provider("judged", "docid_asc", sorts="score descending, then document id ascending", queries=_QRELS_ZERO),
    Provider("msmarco", "docid_asc", sorts="score descending, then document id ascending", queries=_QRELS_ZERO),
    Provider("gdeval", "docid_desc", rounding=5,
             sorts="score descending, then document id descending (gdeval.pl); values printed with 5 decimals",
             queries=_QRELS_ZERO),
    Provider("accuracy", "input", missing="absent", no_relevant="skip",
             sorts="score descending, equal scores in input order",
             queries="only queries of both qrels and run with a relevant document in the top k are reported; "
                     "the others are absent (NaN, left out of the mean)"),
    Provider("ranx", "ranx", sorts="numba's quicksort of the negated scores (ranx.Run built from a dict)",
             queries="qrels and run must hold the same queries (ranx refuses others)"),
)}

_CWL = frozenset({"rbp", "rbp_cwl", "nerr8", "nerr9", "nerr10", "nerr11", "sdcg", "inst", "insq", "bpm"})


def ir_measures_provider(m: Metric) -> Provider:
    """The provider ir-measures 0.4.3's default pipeline uses for ``m`` (pytrec_eval's conventions for the
    measures ir-measures does not define)."""
    name = m.name
    if m.family.kind == "diversity":
        return PROVIDERS["pyndeval"]
    if name == "rr" and m.k is not None:
        return PROVIDERS["msmarco"]
    if name == "ndcg" and dict(m.params).get("gain") == "exp":
        return PROVIDERS["gdeval"] if m.k is not None else PROVIDERS["ranx"]
    if name == "err":
        return PROVIDERS["gdeval"]
    if name in _CWL:
        return PROVIDERS["cwl_eval"]
    if name in ("compat", "judged", "accuracy"):
        return PROVIDERS[name]
    return PROVIDERS["pytrec_eval"]


def as_peer_dict(run: Run) -> Run:
    """The run as a Python dict built from its rows would hold it (what ranx and ir-measures read): a
    document listed twice keeps its first position and its last score."""
    if run.scores is None or not run.duplicate_mask().any():
        return run  # (the usual case; a dict cannot repeat a document)
    seg = run.segments()
    codes = run.doc_codes.astype(np.int64)
    key = seg * (len(run.doc_vocab) + 1) + codes
    # last row of every (query, document): the first occurrence in the reversed order
    rev = key[::-1]
    _, first_rev = np.unique(rev, return_index=True)
    last_row = len(key) - 1 - first_rev
    _, first_row = np.unique(key, return_index=True)
    scores = run.scores.copy()
    scores[first_row] = run.scores[last_row]
    keep = np.zeros(len(key), dtype=bool)
    keep[first_row] = True
    counts = np.bincount(seg[keep], minlength=run.n_queries)
    offsets = np.zeros(run.n_queries + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return Run(run.query_ids, offsets, codes[keep], run.doc_vocab, scores[keep], name=run.name, unique=True)


def _rebuilt(run: Run, perm: np.ndarray | None, scores: np.ndarray) -> Run:
    """``run`` with its rows permuted within their queries (``perm``) and new scores; raw ids stay raw
    (coding them costs more than the whole evaluation of a dict)."""
    if not run.is_coded and isinstance(run.raw_docs, np.ndarray):
        raw = run.raw_docs if perm is None else run.raw_docs[perm]
        return Run(run.query_ids, run.offsets, None, None, scores, name=run.name, raw_docs=raw)
    codes = run.doc_codes if perm is None else run.doc_codes[perm]
    return Run(run.query_ids, run.offsets, codes, run.doc_vocab, scores, name=run.name)


def reorder_run(run: Run, kind: str) -> Run | None:
    """The run with each query's rows in a peer's rank order (``kind``: a ranx order of
    :data:`ragrade.kernels.tie_orders.RANX_ORDERS`), so that ranking it with ``ties="input"`` gives that
    order; None when no query has equal scores (every tie rule gives the same ranking)."""
    from ragrade.kernels.tie_orders import ranx_order

    if run.scores is None:
        return None
    perm = ranx_order(run.scores, run.offsets, kind, none_without_ties=True)
    if perm is None:
        return None
    return _rebuilt(run, perm, run.scores[perm])


def as_float32(run: Run) -> Run:
    if run.scores is None:
        return run
    return _rebuilt(run, None, run.scores.astype(np.float32).astype(np.float64))


def compat_values(qrels: Qrels, run: Run, m: Metric) -> np.ndarray:
    """ir-measures' Compat per qrels query (in the qrels' query order) from the raw qrels and run."""
    from ragrade.kernels.peer_measures import compat_ir_measures

    qids = np.asarray(qrels.query_ids, dtype=object)
    qindex = {q: i for i, q in enumerate(qids.tolist())}
    q_seg = np.repeat(np.arange(qrels.n_queries, dtype=np.int64), np.diff(qrels.offsets))
    q_docs = np.asarray(qrels.docs_at(np.arange(int(qrels.offsets[-1]))), dtype=object)
    run_qidx = np.array([qindex.get(q, -1) for q in np.asarray(run.query_ids, dtype=object).tolist()],
                        dtype=np.int64)
    r_seg = run_qidx[run.segments()] if run.n_rows else np.zeros(0, dtype=np.int64)
    r_docs = np.asarray(run.per_row_docs(), dtype=object)
    scores = run.scores if run.scores is not None else np.zeros(run.n_rows)
    keep = r_seg >= 0
    r_seg, r_docs, scores = r_seg[keep], r_docs[keep], scores[keep]
    import pandas as pd

    codes, _ = pd.factorize(np.concatenate([q_docs, r_docs]).astype(str), sort=True)
    qc, rc = codes[:len(q_docs)].astype(np.int64), codes[len(q_docs):].astype(np.int64)
    n_ret = np.bincount(r_seg, minlength=qrels.n_queries).astype(np.int64)
    vals = compat_ir_measures(q_seg, qc, np.asarray(qrels.grades, dtype=np.float64), r_seg, rc,
                              np.asarray(scores, dtype=np.float64), qrels.n_queries, n_ret, float(m.get("p")),
                              bool(m.get("normalize")))
    in_run = np.zeros(qrels.n_queries, dtype=bool)
    in_run[run_qidx[run_qidx >= 0]] = True
    return np.where(in_run, vals, 0.0)


__all__ = ["PROVIDERS", "Provider", "as_float32", "as_peer_dict", "compat_values", "ir_measures_provider",
           "reorder_run"]
