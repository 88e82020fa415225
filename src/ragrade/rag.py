"""RAG inputs: groups, text ground truth with matchers, and evaluation under peer profiles.

Entry points (all return a :class:`ragrade.Result`):

* :func:`evaluate_rag` — the default convention over ids, AutoRAG groups or texts. Texts are matched
  by a :class:`~ragrade.matching.Matcher`, units are credited greedily by rank (SPEC 5), and the
  credited rows are handed to the same engine as id input (:class:`ragrade.Evaluator`), so every
  default metric and policy applies unchanged.
* :func:`evaluate_profile` — any metric under a named profile (SPEC 4): engine profiles run the
  default kernels with the profile's policies; list profiles run the profile kernels of
  :mod:`ragrade.kernels.profile_kernels` over one flat match table.

``ragrade.evaluate(..., profile=..., matcher=...)`` delegates here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ragrade.data import Qrels, Run
from ragrade.errors import InputError, MetricError
from ragrade.evaluation import Evaluator, Result, Summary, as_qrels, as_run
from ragrade.kernels import profile_kernels as PK
from ragrade.kernels.profile_kernels import Matches, greedy_credit
from ragrade.matching.matchers import Exact, Matcher, get_matcher, token_overlap
from ragrade.metrics.parser import Metric, parse_metrics
from ragrade.policies import Policies
from ragrade.profiles import Profile, get_profile

TOKEN_METRICS = ("token_precision", "token_recall", "token_f1")

# -- input normalisation ---------------------------------------------------------------------------


def _is_seq(x: Any) -> bool:
    return isinstance(x, Sequence | np.ndarray) and not isinstance(x, str | bytes)


def _units_of(entry: Any, q: str) -> list[list[str]]:
    """One query's ground truth as units, each a list of acceptable items."""
    if isinstance(entry, Mapping):  # {doc: grade}
        return [[str(d)] for d, g in entry.items() if g is not None and float(g) > 0]
    if not _is_seq(entry):
        raise InputError("ground truth: each query needs a list of items or groups", query=q, value=entry)
    out: list[list[str]] = []
    for u in entry:
        if _is_seq(u):
            out.append([_item(x, q) for x in u])
        else:
            out.append([_item(u, q)])
    return out


def _item(x: Any, q: str) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return str(x)
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    raise InputError("ground truth and retrieved items must be strings or integers", query=q, value=x)


def truth_units(truth: Any, ties: str = "docid_desc") -> tuple[list[str], list[list[list[str]]]]:
    """``(query ids, units per query)`` from Qrels, ``{q: [...]}``, ``{q: {doc: grade}}`` or aligned
    lists (``[[ids], ...]`` or AutoRAG groups ``[[[a, b], [c]], ...]``)."""
    if isinstance(truth, Qrels):
        g = truth.to_groups()
        return list(g), [list(v) for v in g.values()]
    if isinstance(truth, str | pd.DataFrame) or hasattr(truth, "__fspath__"):
        return truth_units(as_qrels(truth))
    if isinstance(truth, Mapping):
        qids = [str(q) for q in truth]
        return qids, [_units_of(v, q) for q, v in zip(qids, truth.values(), strict=True)]
    if _is_seq(truth):
        qids = [str(i) for i in range(len(truth))]
        return qids, [_units_of(v, q) for q, v in zip(qids, truth, strict=True)]
    raise InputError(f"cannot use a {type(truth).__name__} as ground truth")


def retrieved_lists(run: Any, ties: str = "docid_desc") -> tuple[list[str], list[list[str]]]:
    """``(query ids, ranked items per query)`` from a Run, ``{q: [...]}``, ``{q: {doc: score}}`` or
    aligned lists."""
    if isinstance(run, Run | str | pd.DataFrame) or hasattr(run, "__fspath__"):
        lists = as_run(run).to_lists(ties)
        return list(lists), list(lists.values())
    if isinstance(run, Mapping):
        first = next(iter(run.values()), [])
        if isinstance(first, Mapping):
            return retrieved_lists(Run.from_dict(run), ties)
        qids = [str(q) for q in run]
        return qids, [_list_of(v, q) for q, v in zip(qids, run.values(), strict=True)]
    if _is_seq(run):
        qids = [str(i) for i in range(len(run))]
        return qids, [_list_of(v, q) for q, v in zip(qids, run, strict=True)]
    raise InputError(f"cannot use a {type(run).__name__} as retrieved lists")


def _list_of(v: Any, q: str) -> list[str]:
    if not _is_seq(v):
        raise InputError("retrieved: each query needs a list of items", query=q, value=v)
    return [_item(x, q) for x in v]


def _align(truth: Any, run: Any, ties: str) -> tuple[list[str], list[list[list[str]]], list[list[str]],
                                                     list[str], list[str]]:
    """Queries of the ground truth, their units and retrieved lists (empty when missing), plus the
    queries missing from the run and those only in the run."""
    tq, units = truth_units(truth, ties)
    rq, lists = retrieved_lists(run, ties)
    tset = set(tq)
    if len(tset) != len(tq):
        seen: set[str] = set()
        dup = next(q for q in tq if q in seen or seen.add(q))
        raise InputError("ground truth lists a query twice", query=dup)
    by_q = dict(zip(rq, lists, strict=True))
    missing = [q for q in tq if q not in by_q]
    only = [q for q in rq if q not in tset]
    return tq, units, [by_q.get(q, []) for q in tq], missing, only


# -- the match table -------------------------------------------------------------------------------


def build_matches(units: list[list[list[str]]], lists: list[list[str]], matcher: Matcher | None,
                  score_cache: dict | None = None) -> Matches:
    """Flat match table. ``matcher=None``: items match by string equality (a hash join);
    otherwise every (retrieved row, unit item) pair of a query is scored by ``matcher`` in one batch."""
    nq = len(units)
    n_ret = np.array([len(x) for x in lists], dtype=np.int64)
    r_items = [x for lst in lists for x in lst]
    r_q = np.repeat(np.arange(nq, dtype=np.int64), n_ret)
    r_pos = np.arange(len(r_items), dtype=np.int64) - np.repeat(np.cumsum(n_ret) - n_ret, n_ret)
    n_units = np.array([len(u) for u in units], dtype=np.int64)
    u_q = np.repeat(np.arange(nq, dtype=np.int64), n_units)
    flat_units = [u for us in units for u in us]
    u_size = np.array([len(u) for u in flat_units], dtype=np.int64)
    a_unit = np.repeat(np.arange(len(flat_units), dtype=np.int64), u_size)
    a_items = [x for u in flat_units for x in u]
    a_q = u_q[a_unit] if len(a_unit) else np.zeros(0, dtype=np.int64)
    gt_len = np.bincount(u_q, weights=u_size, minlength=nq).astype(np.int64)
    # distinctness
    allcodes, vocab = pd.factorize(np.asarray(r_items + a_items, dtype=object))
    allcodes = allcodes.astype(np.int64)
    nv = len(vocab) + 1
    rc, ac = allcodes[: len(r_items)], allcodes[len(r_items):]
    r_first = ~pd.Series(r_q * nv + rc).duplicated().to_numpy() if len(rc) else np.zeros(0, dtype=bool)
    content = ["\x1f".join(sorted(u)) for u in flat_units]
    ukey, _ = pd.factorize(np.asarray(content, dtype=object))
    ukey = ukey.astype(np.int64)
    u_first = (~pd.Series(u_q * (len(content) + 1) + ukey).duplicated().to_numpy() if len(ukey)
               else np.zeros(0, dtype=bool))
    invalid = (n_ret == 0) | (n_units == 0)
    if len(flat_units):
        empty_group = np.bincount(u_q[u_size == 0], minlength=nq) > 0
        invalid |= empty_group
    blank = np.array([not x.strip() for x in r_items + a_items], dtype=bool)
    if blank.any():
        bq = np.concatenate([r_q, a_q])[blank]
        invalid[bq] = True
    # pairs
    if matcher is None:
        left = pd.DataFrame({"row": np.arange(len(rc), dtype=np.int64), "key": r_q * nv + rc})
        right = pd.DataFrame({"unit": a_unit, "key": a_q * nv + ac})
        j = left.merge(right, on="key", how="inner")[["row", "unit"]].drop_duplicates()
        p_row, p_unit = j["row"].to_numpy(np.int64), j["unit"].to_numpy(np.int64)
    else:
        # every (row, alternative) pair within a query
        a_cnt = np.bincount(a_q, minlength=nq).astype(np.int64)
        per_q = n_ret * a_cnt
        total = int(per_q.sum())
        pq = np.repeat(np.arange(nq, dtype=np.int64), per_q)
        local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_q) - per_q, per_q)
        na = np.maximum(a_cnt[pq], 1)
        row = np.repeat(np.cumsum(n_ret) - n_ret, per_q) + local // na
        a_start = np.cumsum(a_cnt) - a_cnt
        alt = np.repeat(a_start, per_q) + local % na
        if total:
            ok = matcher.match([r_items[i] for i in row.tolist()], [a_items[i] for i in alt.tolist()],
                               cache=score_cache)
            row, unit = row[ok], a_unit[alt[ok]]
            key = np.unique(row * (len(flat_units) + 1) + unit)
            p_row, p_unit = key // (len(flat_units) + 1), key % (len(flat_units) + 1)
        else:
            p_row = p_unit = np.zeros(0, dtype=np.int64)
    order = np.lexsort((p_unit, p_row))
    return Matches(nq=nq, n_ret=n_ret, r_q=r_q, r_pos=r_pos, r_first=r_first, n_units=n_units, u_q=u_q,
                   u_key=ukey, u_first=u_first, gt_len=gt_len, p_row=p_row[order], p_unit=p_unit[order],
                   invalid=invalid, r_code=rc)


# -- default convention over groups and texts ------------------------------------------------------


def evaluate_rag(truth: Any, retrieved: Any, metrics: Any, matcher: Matcher | str | None = None,
                 **policies: Any) -> Result:
    """Default-convention metrics for ids, AutoRAG groups or texts.

    Without ``matcher``, items are ids: each ground-truth entry (an id, or a group of ids any of which
    satisfies it) is one unit credited once, by the core engine. With ``matcher`` (an instance or a
    name such as ``"rouge_l"``), items are texts: the matcher builds the match table, each retrieved
    text credits at most one ground-truth text not yet credited (greedy by rank, ties to the earlier
    ground-truth text), identical ground-truth texts are one unit, and the credited rows go through
    the same engine. Metrics therefore stay in [0, 1] with duplicate chunks and duplicate gold items.

    >>> r = evaluate_rag([[["test-1", "test-2"], ["test-3"]]], [["test-1", "pred-1", "test-2", "pred-3"]],
    ...                  ["recall", "P"])
    >>> r.means
    {'recall': 0.5, 'P': 0.25}
    """
    pol = Policies().update(**policies)
    qids, units, lists, _, only = _align(truth, retrieved, pol.ties)
    if matcher is None:
        qrels = Qrels.from_groups([[u for u in us if u] for us in units], query_ids=qids)
        run_lists = {q: lst for q, lst in zip(qids, lists, strict=True)}
        run_lists.update(_only_in_run(retrieved, only, pol.ties))
        return Evaluator(qrels, metrics, **policies).evaluate(Run.from_ranked(run_lists))
    m = get_matcher(matcher)
    dedup = [_dedup_units(us) for us in units]
    tab = build_matches(dedup, lists, m)
    # A repeated text is a duplicate item: only its first occurrence takes part in crediting, and the
    # repeats carry the same id so that the engine's duplicates policy applies to them.
    keep = tab.r_first[tab.p_row]
    tab = replace(tab, p_row=tab.p_row[keep], p_unit=tab.p_unit[keep])
    credit = greedy_credit(tab)
    unit_local = np.zeros(len(tab.u_q), dtype=np.int64)
    if len(tab.u_q):
        unit_local = np.arange(len(tab.u_q)) - np.repeat(np.cumsum(tab.n_units) - tab.n_units, tab.n_units)
    n = len(credit)
    ids = np.empty(n, dtype=object)
    if n:
        own = np.where(credit >= 0, "\x00u" + unit_local[np.maximum(credit, 0)].astype(str),
                       "\x00t" + tab.r_code.astype(str)).astype(object)
        # id of each row's first occurrence (same query, same text)
        key = tab.r_q * (int(tab.r_code.max()) + 1) + tab.r_code
        first_row = pd.Series(np.arange(n)).groupby(key).transform("min").to_numpy()
        ids[:] = own[first_row]
    off = np.concatenate(([0], np.cumsum(tab.n_ret)))
    run_lists = {q: ids[off[i]: off[i + 1]].tolist() for i, q in enumerate(qids)}
    gold = [[f"\x00u{j}" for j in range(len(us))] for us in dedup]
    qrels = Qrels.from_lists(gold, query_ids=qids)
    for q in only:
        run_lists[q] = ["\x00r0"]
    # queries missing from the run: leave them out so the missing_run policy applies
    present = set(retrieved_lists(retrieved, pol.ties)[0])
    run_lists = {q: v for q, v in run_lists.items() if q in present or q in only}
    return Evaluator(qrels, metrics, **policies).evaluate(Run.from_ranked(run_lists))


def _dedup_units(us: list[list[str]]) -> list[list[str]]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for u in us:
        key = tuple(sorted(u))
        if key not in seen:
            seen.add(key)
            out.append(u)
    return out


def _only_in_run(run: Any, only: list[str], ties: str) -> dict[str, list[str]]:
    if not only:
        return {}
    rq, lists = retrieved_lists(run, ties)
    d = dict(zip(rq, lists, strict=True))
    return {q: d[q] for q in only}


# -- profiles --------------------------------------------------------------------------------------


class ProfileResult(Result):
    """A :class:`Result` computed under a profile; ``means`` follow the profile's aggregation (NaN
    skipped, optional rounding)."""

    def __init__(self, *args: Any, profile: Profile, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.profile = profile

    @property
    def means(self) -> dict[str, float]:
        out = super().means
        if self.profile.rounding is not None:
            out = {k: (v if math.isnan(v) else round(v, self.profile.rounding)) for k, v in out.items()}
        return out

    def __repr__(self) -> str:
        return f"{self.profile.name}:{super().__repr__()}"


def _parse(metrics: Any, profile: Profile) -> list[tuple[str, Metric | None, str, int | None]]:
    """``(label, Metric or None, base name, k)``; profile-only metrics (AutoRAG's token metrics) are
    accepted by name (``token_f1``, ``token_f1@5``)."""
    items = [metrics] if isinstance(metrics, str | Metric) else list(metrics)
    out = []
    for it in items:
        if isinstance(it, str):
            base, _, cut = it.strip().partition("@")
            if base.lower() in TOKEN_METRICS:
                k = int(cut) if cut else None
                out.append((it.strip(), None, base.lower(), k))
                continue
            for m in parse_metrics(it):
                out.append((str(m) if it.count("[") else it.strip(), m, m.name, m.k))
        else:
            out.append((str(it), it, it.name, it.k))
    if not out:
        raise InputError("no metric given")
    for label, m, base, _ in out:
        if m is not None and m.params and profile.kind == "list":
            raise MetricError(f"{label}: the {profile.name} profile has no metric parameters "
                              f"(its metrics are binary, with the peer's own gains)")
        if profile.metrics and base not in profile.metrics:
            raise MetricError(f"{label}: the {profile.name} profile defines no {base!r} "
                              f"(it defines: {', '.join(profile.metrics)})")
    return out


def evaluate_profile(truth: Any, retrieved: Any, metrics: Any, profile: str | Profile,
                     matcher: Matcher | str | None = None, **policies: Any) -> Result:
    """Metrics under a named profile (SPEC 4).

    ``matcher``: ``None`` — items are ids (compared as strings; REMem's fuzzy rule where REMem uses it);
    ``"profile"`` — items are texts matched the way the peer does (Ragas: Levenshtein similarity
    ``>= 0.5`` for precision and ``> 0.5`` for recall; continuous-eval: ROUGE-L recall ``>= 0.7``);
    a :class:`Matcher` or matcher name — texts matched by it for every metric.
    """
    prof = get_profile(profile)
    if prof.kind == "engine":
        if matcher is not None:
            raise InputError(f"the {prof.name} profile scores ids; text matchers apply to list profiles "
                             f"and to the default convention")
        return _evaluate_engine(truth, retrieved, metrics, prof, **policies)
    pol = Policies().update(**policies)
    parsed = _parse(metrics, prof)
    qids, units, lists, missing, only = _align(truth, retrieved, pol.ties)
    texts = matcher is not None
    cache: dict[Any, Matches] = {}
    scores: dict[Any, np.ndarray] = {}  # decision scores shared by matchers differing only in op

    def table(base: str) -> Matches:
        if not texts:
            mt = prof.id_matcher(base)
        elif isinstance(matcher, str) and matcher.lower() == "profile":
            mt = (prof.text_recall_matcher if base == "recall" and prof.text_recall_matcher else
                  prof.text_matcher) or Exact(allow_empty=True)
        else:
            mt = get_matcher(matcher)
        if mt not in cache:
            cache[mt] = build_matches(units, lists, mt, score_cache=scores)
        return cache[mt]

    data: dict[str, np.ndarray] = {}
    metric_objs: dict[str, Metric] = {}
    for label, m, base, k in parsed:
        if base in TOKEN_METRICS:
            vals = _token_metric(units, lists, base, k)
            tab = table("precision")
        else:
            full = table(base)
            tab = full.cut(k)
            if base == "ndcg":
                vals = PK.ndcg(tab, prof, full=full, k=k)
            elif base == "recall" and texts and prof.text_recall_denominator:
                vals = PK.recall(tab, prof, distinct=prof.text_recall_denominator == "distinct_units")
            else:
                vals = PK.KERNELS[base](tab, prof)
        empty_r, empty_t = tab.n_ret == 0, tab.n_units == 0
        vals = vals.astype(np.float64, copy=True)
        sides = [("truth", empty_t), ("retrieved", empty_r)]
        if prof.decides_when_both_empty(base) == "truth":
            sides.reverse()  # the deciding side is applied last
        for side, mask in sides:
            vals[mask] = np.nan if prof.empty_value(base, side, texts) == "nan" else 0.0
        if prof.invalid_rows == "skip":
            vals[tab.invalid] = np.nan
        data[label] = vals
        if m is not None:
            metric_objs[label] = m
    frame = pd.DataFrame(data, index=pd.Index(qids, name="query", dtype=object))
    summary = Summary(qrels_queries=len(qids), run_queries=len(qids) - len(missing) + len(only),
                      evaluated=len(qids), missing_from_run=missing, only_in_run=only)
    return ProfileResult(frame, metric_objs, summary, pol, profile=prof)


def _token_metric(units: list[list[list[str]]], lists: list[list[str]], base: str, k: int | None) -> np.ndarray:
    """AutoRAG's token metrics: for each retrieved passage the best score over all ground-truth texts,
    averaged over the retrieved passages."""
    tab = build_matches(units, lists, Exact()).cut(k)
    nq = tab.nq
    a_cnt = tab.gt_len
    per_q = tab.n_ret * a_cnt
    total = int(per_q.sum())
    flat_gt = [x for us in units for u in us for x in u]
    r_items = [x for lst in lists for x in lst[: (len(lst) if k is None else k)]]
    pq = np.repeat(np.arange(nq, dtype=np.int64), per_q)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_q) - per_q, per_q)
    na = np.maximum(a_cnt[pq], 1)
    row = np.repeat(np.cumsum(tab.n_ret) - tab.n_ret, per_q) + local // na
    alt = np.repeat(np.cumsum(a_cnt) - a_cnt, per_q) + local % na
    col = {"token_precision": 0, "token_recall": 1, "token_f1": 2}[base]
    sc = token_overlap([r_items[i] for i in row.tolist()], [flat_gt[i] for i in alt.tolist()])[:, col]
    best = np.full(len(r_items), -np.inf)
    np.maximum.at(best, row, sc)
    best = np.where(np.isfinite(best), best, 0.0)
    s = np.bincount(tab.r_q, weights=best, minlength=nq)
    return np.divide(s, tab.n_ret, out=np.full(nq, np.nan), where=tab.n_ret > 0)


def _evaluate_engine(truth: Any, retrieved: Any, metrics: Any, prof: Profile, **policies: Any) -> Result:
    pol = dict(prof.policies)
    pol.update({k: v for k, v in policies.items() if v is not None})
    qrels = truth if isinstance(truth, Qrels) else (
        Qrels.from_groups(truth_units(truth)[1], query_ids=truth_units(truth)[0])
        if _is_seq(truth) else as_qrels(truth))
    run = as_run(retrieved)
    if prof.score_dtype == "float32" and run.scores is not None:
        run = Run(run.query_ids, run._offsets, run._doc_codes, run._doc_vocab,
                  run.scores.astype(np.float32).astype(np.float64), name=run.name)
    res = Evaluator(qrels, metrics, **pol).evaluate(run)
    frame = res.per_query
    if prof.mrr_variant == "beir":
        rr_labels = [lab for lab, m in res.metrics.items() if m.name == "rr"]
        if rr_labels:
            # BEIR's MRR@k: float64 scores, input order on ties, every qrels query counts.
            beir_pol = dict(pol, ties="input", missing_run="zero", no_relevant="zero")
            alt = Evaluator(qrels, [res.metrics[lab] for lab in rr_labels], **beir_pol).evaluate(as_run(retrieved))
            frame = frame.reindex(alt.per_query.index)
            for lab in rr_labels:
                frame[lab] = alt.per_query[str(res.metrics[lab])].to_numpy()
    return ProfileResult(frame, res.metrics, res.summary, res.policies, run_name=res.run_name, profile=prof)
