"""Groups and texts in the default convention: the match table, greedy crediting, and the hand-over to
the id pipeline.

Without a matcher, items are ids: each ground-truth unit (an id, or an AutoRAG group of ids any of which
satisfies it) is credited once by the id pipeline. With a matcher, items are texts: :func:`build_matches`
scores every (retrieved text, ground-truth text) pair of a query in one batch, each retrieved text
credits at most one ground-truth unit not yet credited (greedy by rank, ties to the earlier unit;
``docs/matching.md``), and the credited rows go through the same id pipeline under synthetic ids, so
every default metric and policy applies unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ragrade.data import Qrels, Run
from ragrade.engine.core import Evaluator
from ragrade.engine.inputs import retrieved_lists, truth_units
from ragrade.engine.labels import MetricsArg
from ragrade.engine.result import Result
from ragrade.errors import InputError
from ragrade.kernels.profile_kernels import Matches, greedy_credit
from ragrade.matching.matchers import Matcher
from ragrade.policies import Policies


def align_texts(truth: Any, run: Any, ties: str) -> tuple[list[str], list[list[list[str]]], list[list[str]],
                                                          list[str], list[str]]:
    """Queries of the ground truth, their units and retrieved lists (empty when missing), plus the
    queries missing from the run and those only in the run."""
    tq, units = truth_units(truth)
    if not tq:
        raise InputError("the ground truth holds no query: there is nothing to evaluate")
    rq, lists = retrieved_lists(run, ties)
    tset = set(tq)
    if len(tset) != len(tq):
        seen: set[str] = set()
        dup = next(q for q in tq if q in seen or seen.add(q))  # type: ignore[func-returns-value]
        raise InputError("ground truth lists a query twice", query=dup)
    by_q = dict(zip(rq, lists, strict=True))
    missing = [q for q in tq if q not in by_q]
    only = [q for q in rq if q not in tset]
    return tq, units, [by_q.get(q, []) for q in tq], missing, only


def build_matches(units: list[list[list[str]]], lists: list[list[str]], matcher: Matcher | None,
                  score_cache: dict[Any, Any] | None = None) -> Matches:
    """Flat match table. ``matcher=None``: items match by string equality (a hash join); otherwise every
    (retrieved row, unit item) pair of a query is scored by ``matcher`` in one batch."""
    import pandas as pd  # (here, not at import: the id pipeline alone never needs it)

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
    invalid_truth = n_units == 0
    if len(flat_units):
        empty_group = np.bincount(u_q[u_size == 0], minlength=nq) > 0
        invalid_truth |= empty_group
    blank = np.array([not x.strip() for x in r_items + a_items], dtype=bool)
    r_blank = blank[: len(r_items)]
    a_blank = blank[len(r_items):]
    if a_blank.any():
        invalid_truth[a_q[a_blank]] = True
    invalid = invalid_truth | (n_ret == 0)
    if r_blank.any():
        invalid[r_q[r_blank]] = True
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
                   invalid=invalid, r_code=rc, invalid_truth=invalid_truth, r_blank=r_blank)


def evaluate_texts(truth: Any, retrieved: Any, metrics: MetricsArg, matcher: Matcher,
                   policies: Policies) -> Result:
    """Default-convention id metrics over texts matched by ``matcher``.

    >>> from ragrade.matching import get_matcher
    >>> r = evaluate_texts([["Paris is the capital of France."]],
    ...                    [["Lyon is big.", "Paris is the capital of France!"]], ["rr"], get_matcher("normalized_exact"),
    ...                    Policies())
    >>> r.means
    {'rr': 0.5}
    """
    qids, units, lists, _, only = align_texts(truth, retrieved, policies.ties)
    dedup = [_dedup_units(us) for us in units]
    tab = build_matches(dedup, lists, matcher)
    # A repeated text is a duplicate item: only its first occurrence takes part in crediting, and the
    # repeats carry the same id so that the engine's duplicates policy applies to them.
    keep = tab.r_first[tab.p_row]
    tab = replace(tab, p_row=tab.p_row[keep], p_unit=tab.p_unit[keep])
    credit = greedy_credit(tab)
    unit_local = np.zeros(len(tab.u_q), dtype=np.int64)
    if len(tab.u_q):
        unit_local = np.arange(len(tab.u_q)) - np.repeat(np.cumsum(tab.n_units) - tab.n_units, tab.n_units)
    n = len(credit)
    # The ids the engine sees are made up here, never the user's: "u<k>" the k-th unit of the query's
    # ground truth, "t<c>" an unmatched text, "r0" the placeholder of a query without retrieved items.
    ids = np.empty(n, dtype=object)
    if n:
        import pandas as pd

        assert tab.r_code is not None
        own = np.where(credit >= 0, "u" + unit_local[np.maximum(credit, 0)].astype(str),
                       "t" + tab.r_code.astype(str)).astype(object)
        # id of each row's first occurrence (same query, same text)
        key = tab.r_q * (int(tab.r_code.max()) + 1) + tab.r_code
        first_row = pd.Series(np.arange(n)).groupby(key).transform("min").to_numpy()
        ids[:] = own[first_row]
    off = np.concatenate(([0], np.cumsum(tab.n_ret)))
    run_lists = {q: ids[off[i]: off[i + 1]].tolist() for i, q in enumerate(qids)}
    gold = [[f"u{j}" for j in range(len(us))] for us in dedup]
    qrels = Qrels.from_lists(gold, query_ids=qids)
    for q in only:
        run_lists[q] = ["r0"]
    # queries missing from the run: leave them out so the missing_run policy applies
    present = set(retrieved_lists(retrieved, policies.ties)[0])
    run_lists = {q: v for q, v in run_lists.items() if q in present or q in only}
    return Evaluator(qrels, metrics, policies=policies).evaluate(Run.from_ranked(run_lists))


def _dedup_units(us: list[list[str]]) -> list[list[str]]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for u in us:
        key = tuple(sorted(u))
        if key not in seen:
            seen.add(key)
            out.append(u)
    return out
