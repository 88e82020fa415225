"""Metrics under a named profile (``docs/profiles.md``).

* Engine profiles (``trec_eval``, ``pytrec_eval``, ``beir``, ``ir_measures``, ``ranx``) run the id pipeline
  with the profile's policies, score precision and BEIR's MRR variant.
* List profiles (``autorag``, ``ragas``, ``continuous-eval``, ``remem``, ``llamaindex``, ``deepeval``) build
  one flat match table per matcher and run each family's list kernel with the profile's rules
  (:mod:`ragrade.kernels.profile_kernels`), then apply the profile's rules for empty sides and invalid rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ragrade.data import Run
from ragrade.engine.core import Evaluator
from ragrade.engine.inputs import as_qrels, as_run
from ragrade.engine.labels import MetricsArg, metric_labels
from ragrade.engine.result import HoleRate, QueryColumns, Result, Summary
from ragrade.engine.texts import align_texts, build_matches
from ragrade.errors import MetricError, PolicyError
from ragrade.kernels.profile_kernels import ListContext, Matches
from ragrade.kernels.text import TextLists
from ragrade.matching.matchers import Exact, Matcher, get_matcher
from ragrade.policies import Policies
from ragrade.profiles import EngineProfile, ListProfile


def evaluate_list_profile(truth: Any, retrieved: Any, metrics: MetricsArg, prof: ListProfile,
                          matcher: Matcher | str | None, policies: Policies) -> Result:
    """List-profile metrics. ``matcher``: None — items are ids (compared as strings; REMem's fuzzy rule
    where REMem uses it); ``"profile"`` — items are texts matched the way the peer does; a
    :class:`Matcher` or matcher name — texts matched by it for every metric."""
    labels = metric_labels(metrics)
    if policies.unjudged != "nonrelevant":
        raise PolicyError(f"unjudged={policies.unjudged!r}: the {prof.name} profile reads the ground truth as "
                          f"lists of relevant items, so no retrieved item is judged non-relevant and there is "
                          f"nothing to condense or bound; use the default convention (no profile) or an engine "
                          f"profile (trec_eval, ir_measures, ranx...)")
    for label, m in labels:
        if m.params and m.family.kind == "id":
            raise MetricError(f"{label}: the {prof.name} profile has no metric parameters "
                              f"(its metrics are binary, with the peer's own gains)")
        if not prof.defines(m.name):
            raise MetricError(f"{label}: the {prof.name} profile defines no {m.name!r} "
                              f"(it defines: {', '.join(prof.metrics)})")
    qids, units, lists, missing, only = align_texts(truth, retrieved, policies.ties)
    texts = matcher is not None
    by_profile = isinstance(matcher, str) and matcher.lower() == "profile"
    tables: dict[Any, Matches] = {}
    scores: dict[Any, np.ndarray] = {}  # decision scores shared by matchers differing only in op

    def table(family: str) -> Matches:
        if not texts:
            mt = prof.id_matcher(family)
        elif by_profile:
            mt = (prof.text_recall_matcher if family == "recall" and prof.text_recall_matcher else
                  prof.text_matcher) or Exact(allow_empty=True)
        else:
            mt = get_matcher(matcher)
        if mt not in tables:
            tables[mt] = build_matches(units, lists, mt, score_cache=scores)
        return tables[mt]

    data: dict[str, np.ndarray] = {}
    for label, m in labels:
        fam = m.family
        if fam.kind == "text":
            assert fam.kernel is not None
            vals = fam.kernel(m, TextLists(units, lists))
            tab = table("precision").cut(m.k)
        else:
            assert fam.list_kernel is not None
            full = table(m.name)
            tab = full.cut(m.k)
            vals = fam.list_kernel(tab, ListContext(prof, full, m.k, texts))
        vals = np.asarray(vals, dtype=np.float64).copy()
        rule = prof.empty_rule(m.name)
        sides = [("truth", tab.n_units == 0), ("retrieved", tab.n_ret == 0)]
        if rule.decider == "truth":
            sides.reverse()  # the deciding side is applied last
        for side, mask in sides:
            vals[mask] = np.nan if rule.value(side, texts) == "nan" else 0.0  # type: ignore[arg-type]
        if prof.invalid_rows == "skip":
            vals[tab.invalid] = np.nan
        data[label] = vals
    frame = QueryColumns(qids, data)
    summary = Summary(qrels_queries=len(qids), run_queries=len(qids) - len(missing) + len(only),
                      evaluated=len(qids), missing_from_run=missing, only_in_run=only)
    cutoffs = [m.k for _, m in labels if m.k is not None]
    holes = _list_hole_rate(table("precision"), max(cutoffs) if cutoffs else 10, frame.index)
    return Result(frame, dict(labels), summary, policies, profile=prof, hole_rate=holes)


def _list_hole_rate(tab: Matches, k: int, index: np.ndarray) -> HoleRate:
    """The hole rate of ground-truth lists: every retrieved item that matches no ground-truth item is
    unjudged (the lists judge relevant items only), so it is the share of the top k that matches nothing."""
    top_rows = (tab.r_pos < k) & tab.row_rel()
    judged = np.bincount(tab.r_q[top_rows], minlength=tab.nq).astype(np.float64)
    top = np.minimum(tab.n_ret, k).astype(np.float64)
    rates = np.full(tab.nq, np.nan)
    ok = top > 0
    rates[ok] = 1.0 - judged[ok] / top[ok]
    mean = rates[ok].mean() if ok.any() else math.nan
    return HoleRate(k, (index, rates), True,
                    {} if math.isnan(mean) else {k: float(mean)})


def evaluate_engine_profile(truth: Any, retrieved: Any, metrics: MetricsArg, prof: EngineProfile,
                            policies: dict[str, Any]) -> Result:
    """Id metrics under an engine profile: the profile's policies (overridable by ``policies``), its score
    precision and BEIR's MRR variant."""
    # the profile's reading of each metric (trec_eval 9's interpolated precision under pytrec_eval, and through it
    # ir-measures; trec_eval's gain maps refused where ragrade reads them otherwise)
    metrics = [(lab, prof.adapt(m)) for lab, m in metric_labels(metrics)]
    if prof.providers == "ir_measures" or prof.tie_order != "policy" or prof.substitutes:
        from ragrade.engine.peer_profiles import evaluate_ir_measures, evaluate_ranx

        peer = evaluate_ir_measures if prof.providers == "ir_measures" else evaluate_ranx
        return peer(truth, retrieved, metrics, prof, policies)
    pol = Policies().update(**prof.policy_overrides()).update(**policies)
    qrels = as_qrels(truth)
    if prof.empty_qrels == "drop":
        qrels = qrels.without_empty_queries()
    run = as_run(retrieved)
    if prof.score_dtype == "float32" and run.scores is not None:
        run = Run(run.query_ids, run.offsets, run.doc_codes, run.doc_vocab,
                  run.scores.astype(np.float32).astype(np.float64), name=run.name)
    res = Evaluator(qrels, metrics, policies=pol).evaluate(run)
    rr_labels = [lab for lab, m in res.metrics.items() if m.name == "rr"] if prof.mrr_variant == "beir" else []
    if not rr_labels:
        return res.replace(profile=prof)
    # BEIR's MRR@k: float64 scores, input order on ties, every qrels query counts.
    beir_pol = Policies().update(**{**prof.policy_overrides(), **policies}).update(
        ties="input", missing_run="zero", no_relevant="zero")
    alt = Evaluator(qrels, [res.metrics[lab] for lab in rr_labels], policies=beir_pol).evaluate(as_run(retrieved))
    frame = res.per_query.reindex(alt.per_query.index)
    for lab in rr_labels:
        frame[lab] = alt.per_query[str(res.metrics[lab])].to_numpy()
    holes = res.hole_rate  # rows of the queries BEIR's MRR added: no list, no hole rate (NaN)
    if holes is not None and not holes.per_query.index.equals(frame.index):
        holes = HoleRate(holes.k, holes.per_query.reindex(frame.index), holes.only_relevant_judged, holes.by_k)
    upper = None if res.upper is None else res.upper.reindex(frame.index)
    return Result(frame, res.metrics, res.summary, res.policies, run_name=res.run_name, profile=prof,
                  nan_means=res.nan_means, hole_rate=holes, upper=upper)


__all__ = ["evaluate_engine_profile", "evaluate_list_profile"]
