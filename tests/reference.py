"""A slow, obviously-correct reference implementation of the default convention (docs/conventions.md, docs/metrics.md).

Everything here is plain Python over one query at a time, written straight from the formulas in
``docs/conventions.md`` and ``docs/metrics.md``, so that the vectorised kernels of ``ragrade.kernels`` can be checked against it. It shares no
code with the engine except the metric-string parser (which has its own tests).

Also here: seeded generators of random evaluation inputs used by the parity and property tests
(``random_case``), and the hypothesis settings of the suite (``PROPERTY_SETTINGS``), so that every test
module imports them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings

import measures_reference
from ragrade.errors import PolicyError
from ragrade.metrics import Metric, parse_metrics

# Deterministic, modest hypothesis settings shared by every property test of the core engine.
PROPERTY_SETTINGS = settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Row = tuple[str, float | None]  # (doc id, score); score None for already-ranked lists


# ---------------------------------------------------------------------------------------------------
# Ranking
# ---------------------------------------------------------------------------------------------------
def rank(rows: Sequence[Row], ties: str = "docid_desc") -> list[str]:
    """Doc ids in rank order. Rows without scores keep their order."""
    if not rows or rows[0][1] is None:
        return [d for d, _ in rows]
    items = list(rows)
    if ties == "docid_desc":
        items.sort(key=lambda r: r[0], reverse=True)
    elif ties == "docid_asc":
        items.sort(key=lambda r: r[0])
    # Python's sort is stable: equal scores keep the order set above ("input": as given).
    items.sort(key=lambda r: -float(r[1]))
    return [d for d, _ in items]


# ---------------------------------------------------------------------------------------------------
# One metric on one query
# ---------------------------------------------------------------------------------------------------
def _gain(grade: float, kind: str) -> float:
    return 2.0**grade - 1.0 if kind == "exp" else float(grade)


def _relevance_flags(ranked: Sequence[str], grades: Mapping[str, float], rel: float,
                     units: Mapping[str, Any] | None = None) -> list[bool]:
    """Relevant-and-credited flag per rank: a unit counts only at its first (best) rank."""
    seen: set[Any] = set()
    out = []
    for d in ranked:
        u = _unit(d, units)
        first = u not in seen
        seen.add(u)
        out.append(first and grades.get(d, 0) >= rel)
    return out


def _unit(doc: str, units: Mapping[str, Any] | None) -> Any:
    """The ground-truth unit a document belongs to (itself unless grouped)."""
    return doc if units is None or doc not in units else ("unit", units[doc])


def unit_grades(grades: Mapping[str, float], units: Mapping[str, Any] | None = None) -> list[float]:
    """One grade per unit (the best grade of its ids)."""
    best: dict[Any, float] = {}
    for d, g in grades.items():
        u = _unit(d, units)
        best[u] = max(best.get(u, g), g)
    return list(best.values())


def n_relevant(grades: Mapping[str, float], rel: float, units: Mapping[str, Any] | None = None) -> int:
    return sum(1 for g in unit_grades(grades, units) if g >= rel)


def is_defined(metric: Metric, grades: Mapping[str, float], units: Mapping[str, Any] | None = None) -> bool:
    """Whether a query counts for ``metric``: by its family's rule (R > 0 at its relevance level; positive
    grades for DCG-type measures; every query for counts and judgment-rate measures)."""
    rule = metric.family.defined
    if rule == "always":
        return True
    if rule == "positive":
        thr = metric.get("rel") if metric.family.param("rel") is not None else None
        gains = dict((metric.get("gains") if metric.family.param("gains") is not None else None) or ())

        def gain(g: float) -> float:
            return float(gains.get(int(g), g)) if g >= 0 and float(g).is_integer() else max(g, 0.0)

        return any(gain(g) > 0 and (thr is None or g >= thr) for g in unit_grades(grades, units))
    return n_relevant(grades, metric.rel, units) > 0


def metric_value(metric: Metric, ranked: Sequence[str], grades: Mapping[str, float],
                 units: Mapping[str, Any] | None = None, num_docs: int | None = None) -> float:
    """The value of ``metric`` for one query (``ranked``: doc ids in rank order, duplicates kept;
    ``units``: doc -> group key for grouped ground truth, where a group is one unit credited once)."""
    name, k = metric.name, metric.k
    if name not in CORE or (metric.params and any(key in ("gains", "beta", "mult", "judged_only")
                                                   for key, _ in metric.params)):
        if name in ("dcg", "ndcg", "ideal_dcg") or any(key == "judged_only" for key, _ in metric.params):
            return _special(metric, ranked, grades, units)
        return measures_reference.value(metric, ranked, grades, units, num_docs)
    top = list(ranked) if k is None else list(ranked)[:k]
    if name in ("dcg", "ndcg", "ideal_dcg"):
        rel = metric.get("rel")
        kind = metric.get("gain")

        def counts(g: float) -> bool:
            return g > 0 and (rel is None or g >= rel)

        seen: set[Any] = set()
        dcg = 0.0
        for i, d in enumerate(top, start=1):
            g = grades.get(d, 0)
            u = _unit(d, units)
            if u not in seen and counts(g):
                dcg += _gain(g, kind) / math.log2(i + 1)
            seen.add(u)
        if name == "dcg":
            return dcg
        ideal = sorted((g for g in unit_grades(grades, units) if counts(g)), reverse=True)
        if k is not None:
            ideal = ideal[:k]
        idcg = sum(_gain(g, kind) / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
        if name == "ideal_dcg":
            return idcg
        return dcg / idcg if idcg > 0 else 0.0

    rel = metric.rel
    flags = _relevance_flags(ranked, grades, rel, units)
    R = n_relevant(grades, rel, units)
    top_flags = flags if k is None else flags[:k]
    hits = sum(top_flags)
    if name == "hits":
        return float(hits)
    if name == "hit_rate":
        return 1.0 if hits > 0 else 0.0
    if name == "precision":
        denom = len(ranked) if k is None else k
        return hits / denom if denom else 0.0
    if name == "recall":
        return hits / R if R else 0.0
    if name == "f1":
        denom = len(ranked) if k is None else k
        p = hits / denom if denom else 0.0
        r = hits / R if R else 0.0
        return 2 * p * r / (p + r) if p + r > 0 else 0.0
    if name == "recall_all":
        return 1.0 if R > 0 and hits == R else 0.0
    if name == "r_precision":
        return sum(flags[:R]) / R if R else 0.0
    if name == "rr":
        for i, f in enumerate(top_flags, start=1):
            if f:
                return 1.0 / i
        return 0.0
    if name in ("ap", "context_precision", "capped_ap"):
        found = 0
        total = 0.0
        for i, f in enumerate(top_flags, start=1):
            if f:
                found += 1
                total += found / i
        denom = {"ap": R, "context_precision": found, "capped_ap": min(R, k or 0)}[name]
        return total / denom if denom else 0.0
    raise KeyError(f"reference has no metric {name!r}")  # a new registry metric needs a reference


CORE = {"hits", "hit_rate", "precision", "recall", "f1", "recall_all", "r_precision", "rr", "ap", "dcg", "ndcg",
        "context_precision", "ideal_dcg", "capped_ap"}


def _special(metric: Metric, ranked: Sequence[str], grades: Mapping[str, float],
             units: Mapping[str, Any] | None) -> float:
    """``judged_only=True`` (the list without its unjudged and negative-grade documents) and DCG with a
    gain map (grades replaced by their mapped gains, grade 0 included)."""
    params = dict(metric.params)
    if params.pop("judged_only", False):
        kept = [d for d in ranked if d in grades and grades[d] >= 0]
        plain = Metric(metric.name, metric.k, tuple(params.items()))
        return metric_value(plain, kept, grades, units)
    gains = dict(params.pop("gains"))
    rel = params.get("rel")
    k = metric.k

    def gain(d: str) -> float:
        g = grades.get(d)
        if g is None or g < 0 or (rel is not None and g < rel):
            return 0.0
        return float(gains.get(int(g), g)) if float(g).is_integer() else float(g)

    seen: set[Any] = set()
    dcg = 0.0
    for i, d in enumerate(list(ranked) if k is None else list(ranked)[:k], start=1):
        u = _unit(d, units)
        if u not in seen:
            dcg += gain(d) / math.log2(i + 1)
        seen.add(u)
    if metric.name == "dcg":
        return dcg
    best: dict[Any, float] = {}
    for d in grades:
        u = _unit(d, units)
        best[u] = max(best.get(u, -math.inf), gain(d))
    ideal = sorted((g for g in best.values() if g > 0), reverse=True)
    if k is not None:
        ideal = ideal[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    if metric.name == "ideal_dcg":
        return idcg
    return dcg / idcg if idcg > 0 else 0.0


# ---------------------------------------------------------------------------------------------------
# Whole evaluation with the policies of docs/conventions.md
# ---------------------------------------------------------------------------------------------------
@dataclass
class RefPolicies:
    missing_run: str = "zero"
    missing_qrels: str = "ignore"
    no_relevant: str = "skip"
    duplicates: str = "credit_once"
    identical_ids: str = "keep"
    ties: str = "docid_desc"
    empty_run: str = "zero"
    unjudged: str = "nonrelevant"
    max_docs: int | None = None
    num_docs: int | None = None
    upper_grade: float | None = None


def prepare_list(query: str, rows: Sequence[Row], pol: RefPolicies) -> list[str]:
    """Apply identical_ids, duplicates and ties to one query's rows; return the ranked doc ids."""
    rows = list(rows)
    if pol.identical_ids == "drop":
        rows = [r for r in rows if r[0] != query]
    docs = [d for d, _ in rows]
    if len(set(docs)) != len(docs):
        if pol.duplicates == "error":
            raise PolicyError(f"duplicate in query {query!r}")
        if pol.duplicates == "keep_last":
            last = {d: i for i, (d, _) in enumerate(rows)}
            rows = [r for i, r in enumerate(rows) if last[r[0]] == i]
    ranked = rank(rows, pol.ties)
    if pol.duplicates == "drop":
        seen: set[str] = set()
        out = []
        for d in ranked:
            if d not in seen:
                out.append(d)
            seen.add(d)
        ranked = out
    return ranked


def ref_evaluate(
    qrels: Mapping[str, Mapping[str, float]],
    run: Mapping[str, Sequence[Row]],
    metrics: Sequence[str],
    units: Mapping[str, Mapping[str, Any]] | None = None,
    upper: bool = False,
    **policies: Any,
) -> dict[str, dict[str, float]]:
    """``{label: {query: value}}`` (NaN = not counted), queries in qrels order; raises PolicyError.

    ``units`` (optional): ``{query: {doc: group key}}`` for grouped ground truth. ``max_docs`` truncates
    each ranking; ``unjudged="condensed"`` removes unjudged and negative-grade documents from it;
    ``unjudged="bounds"`` gives the lower bound, or with ``upper=True`` the upper bound: every retrieved
    row without a judgment becomes a relevant document of its own at ``upper_grade`` (default: the highest
    grade)."""
    pol = RefPolicies(**policies)
    units = units or {}
    measures_reference.TOP_GRADE[0] = max((float(g) for docs in qrels.values() for g in docs.values()),
                                          default=None)
    qrels = {str(q): {str(d): float(g) for d, g in docs.items()} for q, docs in qrels.items()}
    run = {str(q): [(str(d), s) for d, s in rows] for q, rows in run.items()}
    labels: list[tuple[str, Metric]] = []
    for text in metrics:
        found = parse_metrics(text)
        if len(found) == 1:
            labels.append((text, found[0]))
        else:
            head = text[: text.index("@")]
            labels += [(f"{head}@{m.k}", m) for m in found]
    if pol.missing_qrels == "error" and any(q not in qrels for q in run):
        raise PolicyError("run query without ground truth")
    if pol.missing_run == "error" and any(q not in run for q in qrels):
        raise PolicyError("ground-truth query missing from the run")
    lists: dict[str, list[str]] = {}
    for q in run:
        if q not in qrels:
            continue
        lists[q] = prepare_list(q, run[q], pol)
        if pol.empty_run == "error" and not lists[q]:
            raise PolicyError(f"empty list for {q!r}")
    out: dict[str, dict[str, float]] = {}
    for label, m in labels:
        col: dict[str, float] = {}
        for q, grades in qrels.items():
            if q not in lists and pol.missing_run == "drop":
                continue
            ranked = lists.get(q, [])
            if pol.max_docs is not None:
                ranked = ranked[: pol.max_docs]
            only = pol.unjudged == "condensed" or any(key == "judged_only" and v for key, v in m.params)
            if only:  # condensed list (an upper bound has nothing left to bound)
                m_plain = Metric(m.name, m.k, tuple((key, v) for key, v in m.params if key != "judged_only"))
                value = metric_value(m_plain, [d for d in ranked if d in grades and grades[d] >= 0], grades,
                                     units.get(q), pol.num_docs)
            elif pol.unjudged == "bounds" and upper:
                top = pol.upper_grade if pol.upper_grade is not None else max(
                    [g for docs in qrels.values() for g in docs.values() if g > 0], default=1.0)
                ranked = [d if d in grades else f"\0unjudged{i}" for i, d in enumerate(ranked)]
                g_up = {**grades, **{d: float(top) for d in ranked if d not in grades}}
                value = metric_value(m, ranked, g_up, units.get(q), pol.num_docs)
            else:
                value = metric_value(m, ranked, grades, units.get(q), pol.num_docs)
            if not is_defined(m, grades, units.get(q)) or (m.family.defined == "value" and math.isnan(value)):
                if pol.no_relevant == "error":
                    raise PolicyError(f"{label}: no relevant judgments for {q!r}")
                value = 0.0 if pol.no_relevant == "zero" else math.nan
            col[q] = value
        out[label] = col
    return out


def metric_variants(fam: Any, cutoffs: Sequence[int | None], params: Sequence[str] = ("",)) -> list[str]:
    """Metric strings of one family at ``cutoffs`` with each parameter text in ``params``: a family that
    takes a recall level gets levels instead of cutoffs, one that requires a cutoff drops None."""
    if fam.at_param is not None:
        return [f"{fam.name}{p}@{x}" for p in params for x in (0.0, 0.3, 0.7, 1.0)]
    cuts = [None] if fam.cutoff == "none" else list(cutoffs)
    if fam.cutoff == "required":
        cuts = [k for k in cuts if k is not None] or [10]
    return [f"{fam.name}{p}" + ("" if k is None else f"@{k}") for p in params for k in cuts]


def frame_to_dict(per_query: Any) -> dict[str, dict[str, float]]:
    """``Result.per_query`` as ``{label: {query: value}}`` (same shape as :func:`ref_evaluate`)."""
    return {str(c): {str(q): float(v) for q, v in per_query[c].items()} for c in per_query.columns}


def assert_same(got: Mapping[str, Mapping[str, float]], want: Mapping[str, Mapping[str, float]],
                tol: float = 1e-12) -> None:
    """Same labels, same queries in the same order, values equal to ``tol`` (NaN equals NaN)."""
    assert list(got) == list(want), (list(got), list(want))
    for label in want:
        assert list(got[label]) == list(want[label]), (label, list(got[label]), list(want[label]))
        for q, w in want[label].items():
            g = got[label][q]
            if math.isnan(w) or math.isnan(g):
                assert math.isnan(w) and math.isnan(g), (label, q, g, w)
            else:
                assert abs(g - w) <= tol, (label, q, g, w)


# ---------------------------------------------------------------------------------------------------
# Random inputs
# ---------------------------------------------------------------------------------------------------
DOC_POOL = [f"d{i}" for i in range(1, 26)]  # d9 > d10 as strings: the tie rule is visible
SCORE_STEPS = np.arange(0, 17) / 8.0  # multiples of 1/8: exact in float32 (pytrec_eval) and float64


@dataclass
class Case:
    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]  # scored, no duplicates (the peers' shape)


def random_case(rng: np.random.Generator, n_queries: int = 30, *, grades: Sequence[int] = (-1, 0, 1, 2, 3),
                grade_p: Sequence[float] | None = (0.05, 0.3, 0.35, 0.2, 0.1), max_judged: int = 10,
                max_retrieved: int = 15, tie_prone: bool = True, allow_empty: bool = False) -> Case:
    """Random graded qrels and a scored run with ties, queries missing on either side, short lists."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        q = f"q{i}"
        side = rng.random()
        if side > 0.1:  # 10 % of the queries are only in the run
            nj = int(rng.integers(1, max_judged + 1))
            docs = rng.choice(DOC_POOL, size=nj, replace=False)
            gs = rng.choice(grades, size=nj, p=grade_p)
            qrels[q] = {str(d): int(g) for d, g in zip(docs, gs, strict=True)}
        if side < 0.9 or side > 0.95:  # 5 % only in the qrels
            lo = 0 if allow_empty else 1
            nr = int(rng.integers(lo, max_retrieved + 1))
            docs = rng.choice(DOC_POOL, size=nr, replace=False)
            steps = SCORE_STEPS[:5] if tie_prone and rng.random() < 0.5 else SCORE_STEPS
            scores = rng.choice(steps, size=nr)
            run[q] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
    return Case(qrels, run)


def rows_of(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[Row]]:
    return {q: list(docs.items()) for q, docs in run.items()}


def untie(run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """The same ranking as ragrade's default tie rule, with distinct scores (no ties left)."""
    out = {}
    for q, docs in run.items():
        ranked = rank(list(docs.items()))
        n = len(ranked)
        out[q] = {d: float(n - i) for i, d in enumerate(ranked)}
    return out


# -- the profile and text paths under their former names (thin over the one entry point) -------------
def evaluate_profile(truth: Any, run: Any, metrics: Any, profile: Any, **kwargs: Any) -> Any:
    """``ragrade.evaluate(truth, run, metrics, profile=profile, ...)``."""
    import ragrade

    return ragrade.evaluate(truth, run, metrics, profile=profile, **kwargs)


def evaluate_rag(truth: Any, run: Any, metrics: Any, **kwargs: Any) -> Any:
    """``ragrade.evaluate(truth, run, metrics, ...)`` (groups, or texts with ``matcher=``)."""
    import ragrade

    return ragrade.evaluate(truth, run, metrics, **kwargs)
