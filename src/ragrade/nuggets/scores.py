"""Scores from nuggets and assignments (docs/nuggets.md, "Measures"):

* :func:`score` — the answer-level scores of TREC RAG's tools, as profiles: ``nuggetizer`` (nuggetizer
  0.0.5's ``calculate_nugget_scores``: All, Vital and their strict versions; 0 when a query has no (vital)
  nugget) and ``open_rag_eval`` (open-rag-eval 0.3.0's six scores: All, All Strict, Vital, Vital Strict,
  Weighted, Weighted Strict, each dividing by counts floored at 1: ``max(|V|, 1)``, ``max(|O|, 1)``);
* :func:`support_matrix` and :func:`weights` — the arrays the retrieval measures' kernels
  (:mod:`ragrade.kernels.nuggets`) read;
* :func:`subtopic_qrels` — nuggets as the subtopics of the diversity measures: (query, nugget, passage)
  with support.

A nugget without an assignment counts as ``not_support``; a ``failed`` assignment scores 0 in the answer
profiles (as both tools score a label they do not know) and is unknown (NaN where it matters) in the
retrieval measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragrade.errors import InputError, UnknownNameError
from ragrade.nuggets.data import SUPPORT, Assignments, Nuggets, as_assignments, as_nuggets

#: The answer-level profiles and their columns, in the peers' own names.
PROFILES: dict[str, tuple[str, ...]] = {
    "nuggetizer": ("strict_vital_score", "strict_all_score", "vital_score", "all_score"),
    "open_rag_eval": ("All", "All Strict", "Vital", "Vital Strict", "Weighted", "Weighted Strict"),
}

_PARTIAL = {"support": 1.0, "partial_support": 0.5}
_STRICT = {"support": 1.0}


def _sum(labels: Sequence[str], table: Mapping[str, float]) -> float:
    return float(sum(table.get(x, 0.0) for x in labels))


def nuggetizer_scores(importance: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """nuggetizer's four scores of one answer: vital = importance ``vital``; 0 when there is none."""
    vital = [lab for imp, lab in zip(importance, labels, strict=True) if imp == "vital"]
    n, nv = len(labels), len(vital)
    return {"strict_vital_score": _sum(vital, _STRICT) / nv if nv else 0.0,
            "strict_all_score": _sum(labels, _STRICT) / n if n else 0.0,
            "vital_score": _sum(vital, _PARTIAL) / nv if nv else 0.0,
            "all_score": _sum(labels, _PARTIAL) / n if n else 0.0}


def open_rag_eval_scores(importance: Sequence[str], labels: Sequence[str]) -> dict[str, float]:
    """open-rag-eval's six scores of one answer, with its floors: counts of all, vital and okay nuggets are
    taken at least 1 (so Weighted with no okay nugget divides by |V| + 0.5)."""
    vital = [lab for imp, lab in zip(importance, labels, strict=True) if imp == "vital"]
    okay = [lab for imp, lab in zip(importance, labels, strict=True) if imp == "okay"]
    n, nv, no = max(len(labels), 1), max(len(vital), 1), max(len(okay), 1)
    den = nv + 0.5 * no
    return {"All": _sum(labels, _PARTIAL) / n, "All Strict": _sum(labels, _STRICT) / n,
            "Vital": _sum(vital, _PARTIAL) / nv, "Vital Strict": _sum(vital, _STRICT) / nv,
            "Weighted": (_sum(vital, _PARTIAL) + 0.5 * _sum(okay, _PARTIAL)) / den,
            "Weighted Strict": (_sum(vital, _STRICT) + 0.5 * _sum(okay, _STRICT)) / den}


def _labels_of(nuggets: Nuggets, query: str, got: Mapping[str, str], run: str | None) -> tuple[list[str], list[str]]:
    mine = nuggets.of(query)
    known = {n.nugget_id for n in mine}
    unknown = [nid for nid in got if nid not in known]
    if unknown:
        raise InputError("an assignment names a nugget the query does not have", query=query,
                         item=unknown[0], value=run)
    return [n.importance for n in mine], [got.get(n.nugget_id, "not_support") for n in mine]


def score(nuggets: Any, assignments: Any, profile: str = "nuggetizer") -> Any:
    """Answer-level nugget scores, one row per assigned answer (columns ``run`` when the assignments name
    runs, ``query``, the profile's scores in its own names, and ``failed_labels``).

    ``assignments``: rows ``(query, nugget id, label)`` of answers (neither ``doc`` nor ``context``). A nugget
    without a label is ``not_support``.

    >>> n = {"q1": ["Paris is the capital", "on the Seine"]}
    >>> a = [{"query": "q1", "nugget_id": "n1", "label": "support"},
    ...      {"query": "q1", "nugget_id": "n2", "label": "partial_support"}]
    >>> score(n, a)[["query", "all_score", "strict_all_score"]].values.tolist()
    [['q1', 0.75, 0.5]]
    """
    import pandas as pd

    if profile not in PROFILES:
        raise UnknownNameError("nugget score profile", profile, PROFILES, show_known=True)
    nugs, asg = as_nuggets(nuggets), as_assignments(assignments)
    fn = nuggetizer_scores if profile == "nuggetizer" else open_rag_eval_scores
    rows = []
    for run, query in asg.answer_keys():
        importance, labels = _labels_of(nugs, query, asg.answer(query, run), run)
        rows.append({"run": run, "query": query, **fn(importance, labels),
                     "failed_labels": sum(lab == "failed" for lab in labels)})
    cols = ["run", "query", *PROFILES[profile], "failed_labels"]
    frame = pd.DataFrame(rows, columns=cols)
    if frame["run"].isna().all():
        frame = frame.drop(columns="run")
    return frame


# -- retrieval measures --------------------------------------------------------------------------------------

def weights(importance: Sequence[str], weight: str) -> np.ndarray:
    """Each nugget's weight: ``all`` 1; ``vital`` 1 for vital, else 0; ``weighted`` vital 1, others 0.5."""
    vital = np.array([imp == "vital" for imp in importance], dtype=bool)
    if weight == "all":
        return np.ones(len(vital))
    if weight == "vital":
        return vital.astype(np.float64)
    if weight == "weighted":
        return np.where(vital, 1.0, 0.5)
    raise UnknownNameError("nugget weight", weight, ["all", "vital", "weighted"], show_known=True)


def support_matrix(nuggets: Nuggets, queries: Sequence[str], lists: Mapping[str, Sequence[str | None]],
                   assignments: Assignments, depth: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(values, owner, importance)``: ``values[n, i]`` the support of nugget ``n`` by the passage at rank
    ``i`` of its query's list (0 without assignment or passage; None in a list is a rank that earns nothing),
    ``owner[n]`` the index of its query in ``queries``, ``importance[n]``."""
    rows: list[np.ndarray] = []
    owner: list[int] = []
    importance: list[str] = []
    for qi, q in enumerate(queries):
        mine = nuggets.of(q)
        if not mine:
            continue
        block = np.zeros((len(mine), depth))
        index = {nug.nugget_id: n for n, nug in enumerate(mine)}
        for r, d in enumerate(list(lists.get(q, ()))[:depth]):
            for nid, label in (assignments.passage(q, d) if d is not None else {}).items():
                n = index.get(nid)
                if n is not None:
                    block[n, r] = SUPPORT[label]
        rows.append(block)
        owner += [qi] * len(mine)
        importance += [n.importance for n in mine]
    values = np.vstack(rows) if rows else np.zeros((0, depth))
    return values, np.asarray(owner, dtype=np.int64), importance


def joined_values(nuggets: Nuggets, queries: Sequence[str], lists: Mapping[str, Sequence[str | None]],
                  assignments: Assignments, k: int) -> np.ndarray:
    """One column per nugget row of :func:`support_matrix`: the support of the query's top ``k`` joined;
    NaN when that context has no assignment at all (it was never judged), 0 for a nugget it does not label."""
    out: list[float] = []
    for q in queries:
        mine = nuggets.of(q)
        if not mine:
            continue
        context = tuple(d for d in list(lists.get(q, ()))[:k] if d is not None)
        got = assignments.joined(q, context) if context else {}
        if context and not got:
            out += [np.nan] * len(mine)
        else:
            out += [SUPPORT[got[n.nugget_id]] if n.nugget_id in got else 0.0 for n in mine]
    return np.asarray(out, dtype=np.float64).reshape(-1, 1)


def subtopic_qrels(nuggets: Any, assignments: Any, *, strict: bool = False) -> Any:
    """The assignments of passages as subtopic judgments (a DataFrame ``query, subtopic, doc, grade``): a
    nugget is a subtopic, a passage that supports it (or partly supports it, unless ``strict``) is relevant to
    it with grade 1. α-nDCG, ERR-IA and subtopic recall then score how many distinct facts a ranking covers.

    >>> n = {"q1": ["a fact", "another fact"]}
    >>> a = [{"query": "q1", "nugget_id": "n1", "doc": "d1", "label": "support"},
    ...      {"query": "q1", "nugget_id": "n2", "doc": "d1", "label": "partial_support"}]
    >>> subtopic_qrels(n, a, strict=True).values.tolist()
    [['q1', 'n1', 'd1', 1.0]]
    """
    import pandas as pd

    nugs, asg = as_nuggets(nuggets), as_assignments(assignments)
    ok = ("support",) if strict else ("support", "partial_support")
    known = {(n.query, n.nugget_id) for n in nugs}
    rows = [(a.query, a.nugget_id, a.doc, 1.0) for a in asg
            if a.doc is not None and a.label in ok and (a.query, a.nugget_id) in known]
    return pd.DataFrame(rows, columns=["query", "subtopic", "doc", "grade"])


__all__ = ["PROFILES", "joined_values", "nuggetizer_scores", "open_rag_eval_scores", "score", "subtopic_qrels",
           "support_matrix", "weights"]
