"""``ragrade.evaluate``: the one entry point, dispatching to the one pipeline.

::

    inputs (any accepted shape, engine/inputs.py)
      -> metrics parsed once (metrics/parser.py)            -> profile resolved (profiles/)
      -> [texts: match + greedy credit (engine/texts.py)]   -> [list profile: match table +
      -> join (engine/join.py) -> rank -> credit                list kernels (engine/lists.py)]
      -> kernels (kernels/) -> definedness + policies (engine/core.py)
      -> one Result (engine/result.py)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Never

import numpy as np

from ragrade.engine.core import Evaluator
from ragrade.engine.inputs import is_path, read_both
from ragrade.engine.result import MetricsArg, QueryColumns, Result, Summary, metric_labels
from ragrade.errors import InputError, MetricError, UnknownNameError
from ragrade.metrics.parser import Names
from ragrade.policies import (
    Duplicates,
    EmptyRun,
    IdenticalIds,
    MissingQrels,
    MissingRun,
    NoRelevant,
    Policies,
    Ties,
    Unjudged,
)

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.matching.matchers import Matcher
    from ragrade.profiles import Profile


def evaluate(qrels: Any, run: Any, metrics: MetricsArg, *, profile: str | Profile | None = None,
             matcher: Matcher | str | None = None, missing_run: MissingRun | None = None,
             missing_qrels: MissingQrels | None = None, no_relevant: NoRelevant | None = None,
             duplicates: Duplicates | None = None, identical_ids: IdenticalIds | None = None,
             ties: Ties | None = None, empty_run: EmptyRun | None = None, unjudged: Unjudged | None = None,
             max_docs: int | None = None, num_docs: int | None = None, upper_grade: float | None = None,
             names: Names | None = None, rel_level: int | None = None, max_memory: int | str | None = None,
             **unknown: Never) -> Result:
    """Score ``run`` against ``qrels`` with ``metrics``.

    ``qrels`` and ``run`` may be :class:`~ragrade.data.Qrels` / :class:`~ragrade.data.Run` objects, nested
    dicts (``{query: {doc: grade}}``, ``{query: {doc: score}}``), ranked lists (``{query: [docs]}``,
    ``[[docs], ...]``), AutoRAG groups, DataFrames, pyarrow Tables or file paths (``docs/formats.md``).
    ``metrics`` is a metric string (``"ndcg@10"``, ``"recall@[5,10]"``), a :class:`~ragrade.metrics.Metric`
    or a list of them (``ragrade metrics`` lists every family).

    ``profile`` (``"autorag"``, ``"ragas"``, ``"pytrec_eval"``, ...) computes the metrics under a peer's
    conventions (``docs/profiles.md``); ``matcher`` (``"rouge_l"``, ``"fuzzy"``, a
    :class:`~ragrade.matching.Matcher`; ``"profile"`` for the peer's own) makes the items texts
    (``docs/matching.md``). The remaining keywords set the policies for undefined cases
    (``docs/conventions.md``, "Policies"; None keeps the default or the profile's), among them ``unjudged``
    (``"nonrelevant"``, ``"condensed"``, ``"bounds"``: what an unjudged retrieved document is), and
    trec_eval's options: ``max_docs`` (``-M``), ``num_docs`` (``-N``), ``rel_level`` (``-l``: the relevance
    level of every metric not given one), ``unjudged="condensed"`` (``-J``), ``missing_run="zero"`` (``-c``).
    ``names="trec_eval"`` reads every trec_eval name as trec_eval does (``recall`` is recall_5 ...
    recall_1000; by default a bare ``recall`` keeps ragrade's meaning, see :mod:`ragrade.metrics.parser`);
    unset, the profile decides (``trec_eval`` and ``pytrec_eval`` read names as trec_eval does).

    Every result carries the hole rate (``result.hole_rate``): the share of each query's top-k documents
    without a judgment, k the largest cutoff asked (10 when none is).

    ``max_memory`` (``"4GiB"``, bytes) evaluates two files in about that much memory, piece by piece, with
    the same results (``docs/scale.md``); files too large for the memory available are evaluated so even
    without it.

    >>> r = evaluate({"q1": {"t1": 1, "t2": 1, "t3": 1}},
    ...              {"q1": {"t1": 4.0, "p1": 3.0, "t2": 2.0, "p3": 1.0}}, ["ndcg@4", "ap@4", "P@10", "rr"])
    >>> {k: round(v, 10) for k, v in r.means.items()}
    {'ndcg@4': 0.703918089, 'ap@4': 0.5555555556, 'P@10': 0.2, 'rr': 1.0}
    """
    if unknown:
        raise UnknownNameError("option", next(iter(unknown)), [*Policies.choices(), *Policies.settings(),
                                                               "profile", "matcher", "names", "rel_level",
                                                               "max_memory"])
    if names is None:  # a profile decides how bare names read (trec_eval's under trec_eval/pytrec_eval)
        from ragrade.profiles import profile_names

        names = profile_names(profile)
    labels = metric_labels(metrics, names=names, rel_level=rel_level)
    policies = {k: v for k, v in dict(missing_run=missing_run, missing_qrels=missing_qrels,
                                      no_relevant=no_relevant, duplicates=duplicates, identical_ids=identical_ids,
                                      ties=ties, empty_run=empty_run, unjudged=unjudged, max_docs=max_docs,
                                      num_docs=num_docs, upper_grade=upper_grade).items() if v is not None}
    kinds = {m.family.kind for _, m in labels}
    if "diversity" in kinds:
        if kinds != {"diversity"}:
            raise MetricError("diversity measures (alpha_ndcg, err_ia) read subtopic judgments: evaluate them "
                              "separately from the other metrics")
        if profile is not None or matcher is not None:
            raise InputError("diversity measures take neither a profile nor a matcher")
        from ragrade.engine.diversity import evaluate_diversity

        return evaluate_diversity(qrels, run, labels, missing_run=missing_run, no_relevant=no_relevant, ties=ties,
                                  max_docs=max_docs, unjudged=unjudged, upper_grade=upper_grade)
    # (profiles, list kernels and matchers are imported where they are used: the plain id path, which the
    # command line takes most, needs none of them)
    prof = None
    if profile is not None:
        from ragrade.profiles import get_profile

        prof = get_profile(profile)
    if prof is not None and prof.name == "default":
        prof = None
    if max_memory is not None or (is_path(qrels) and is_path(run)):
        from ragrade.engine.outofcore import evaluate_large

        opts: dict[str, Any] = dict(policies)
        def part(q: Any, r: Any, lab: Any = labels, settings: dict[str, Any] = opts) -> Result:
            return evaluate(q, r, lab, profile=prof, **settings)

        big = evaluate_large(qrels, run, labels, max_memory, prof, matcher, part, opts)
        if big is not None:
            return big
    if prof is not None and prof.kind == "list":
        from ragrade.engine.lists import evaluate_list_profile

        pol = Policies().update(**policies)
        return evaluate_list_profile(qrels, run if matcher is None else _texts_of(run), labels, prof, matcher, pol)
    if prof is not None:
        if matcher is not None:
            raise InputError(f"the {prof.name} profile scores ids; text matchers apply to list profiles "
                             f"and to the default convention")
        from ragrade.engine.lists import evaluate_engine_profile

        return evaluate_engine_profile(qrels, run, labels, prof, policies)
    pol = Policies().update(**policies)
    id_labels = [(lab, m) for lab, m in labels if m.family.kind != "text"]
    text_labels = [(lab, m) for lab, m in labels if m.family.kind == "text"]
    if isinstance(matcher, str) and matcher.lower() == "profile":
        raise InputError("matcher='profile' needs a list profile (e.g. profile='ragas')")
    if is_path(qrels) and is_path(run):
        qrels, run = read_both(qrels, run)
    if not id_labels:
        return _text_metrics(qrels, _texts_of(run), text_labels, pol)
    if matcher is not None:
        from ragrade.engine.texts import evaluate_texts
        from ragrade.matching.matchers import get_matcher

        result = evaluate_texts(qrels, _texts_of(run), id_labels, get_matcher(matcher), pol)
    else:
        result = Evaluator(qrels, id_labels, policies=pol).evaluate(run)
    if text_labels:
        extra = _text_metrics(qrels, _texts_of(run), text_labels, pol)
        for label, m in text_labels:
            result.per_query[label] = extra.per_query[label].reindex(result.per_query.index).to_numpy()
            result.metrics[label] = m
    return result


def _texts_of(run: Any) -> Any:
    """The text paths (matchers, token-overlap metrics) read the retrieved texts (``{query: [texts]}``) of
    a :class:`~ragrade.data.Run` that carries them (``ragrade.retrieve``, a run file with a ``text``
    column); any other run is taken as given."""
    from ragrade.data import Run

    return run.text_lists() if isinstance(run, Run) and run.has_texts else run


def _text_metrics(truth: Any, run: Any, labels: list[Any], pol: Policies) -> Result:
    """Text families (token overlap) over the items as texts, one row per ground-truth query."""
    from ragrade.engine.texts import align_texts
    from ragrade.kernels.text import TextLists

    qids, units, lists, missing, only = align_texts(truth, run, pol.ties)
    texts = TextLists(units, lists)
    data = {}
    for label, m in labels:
        assert m.family.kernel is not None
        data[label] = np.asarray(m.family.kernel(m, texts), dtype=np.float64)
    frame = QueryColumns(qids, data)
    summary = Summary(qrels_queries=len(qids), run_queries=len(qids) - len(missing) + len(only),
                      evaluated=len(qids), missing_from_run=missing, only_in_run=only)
    return Result(frame, dict(labels), summary, pol)
