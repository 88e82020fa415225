"""Peer conventions as validated strategy objects (``docs/profiles.md``).

A profile states what it changes and inherits the rest from the default convention. :class:`Profile` holds
what every kind has; each kind is a subclass:

* an **engine** profile (:class:`EngineProfile`) (``default``, ``trec_eval``, ``pytrec_eval``, ``beir``, ``ir_measures``, ``ranx``)
  computes every id family with the default kernels and changes only policies, score precision,
  rounding and BEIR's MRR variant;
* a **list** profile (:class:`ListProfile`: ``autorag``, ``ragas``, ``continuous-eval``, ``remem``, ``llamaindex``,
  ``deepeval``) defines the families the peer has, each with a :class:`Convention` (a rule from
  :mod:`ragrade.kernels.rules`, what an empty side is worth, an id matcher); rules left out are the
  default convention's. Families the peer does not define are refused with the list of those it does.

Every option is validated when the profile is built (an unknown option or family is an
:class:`~ragrade.errors.UnknownNameError`). ``reason`` gives the one-line explanation the conventions
report prints when a profile's number differs from the default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, TypeVar

from ragrade.errors import UnknownNameError
from ragrade.kernels.rules import AP, NDCG, RR, ContextPrecision, Empty, Precision, Recall, RecallAll, Rule
from ragrade.matching.matchers import Fuzzy, Matcher, RougeL
from ragrade.matching.remem import RememChunk
from ragrade.metrics.registry import Family, find
from ragrade.options import public

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric
from ragrade.policies import Policies

R = TypeVar("R", bound=Rule)


@dataclass(frozen=True)
class Convention:
    """How a list profile computes one family: its ``rule`` (None: the default rule of the family's
    kind), what an empty side is worth (None: the profile's ``empty``), an ``id_matcher`` applied to ids
    (REMem's substring rule), and the one-line ``reason`` it differs from the default."""

    rule: Rule | None = None
    empty: Empty | None = None
    id_matcher: Matcher | None = None
    reason: str = ""


@dataclass(frozen=True, eq=False)
class Profile:
    """Named conventions of one peer system: what every kind of profile has (a name, a title, where its
    conventions come from, the decimals of its means, why its numbers differ, how bare metric names read).

    A profile is of one kind (:attr:`kind`): an :class:`EngineProfile` (the engine's kernels under other
    policies and precision), a :class:`ListProfile` (per-family rules of a RAG framework), or a kind the
    engine does not run, added to the catalogue by the package whose route evaluates it (span profiles:
    the route of character spans claims a plan holding one). ``build_plan`` and :func:`get_profile` let
    every kind through; the in-memory executor runs ``engine`` and ``list``."""

    name: str
    title: str
    source: str = ""
    rounding: int | None = None  # decimals of the reported means
    reason_all: str = ""  # why every number may differ from the default
    #: How bare metric names are read under the profile when the caller does not say (``names=``):
    #: ``"trec_eval"``: a trec_eval name means what trec_eval means (``recall`` = recall_5 ... recall_1000).
    names: Literal["ragrade", "trec_eval"] = "ragrade"

    #: The kind of profile (the subclass says).
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if type(self) is Profile:
            raise UnknownNameError("profile class", "Profile", ["EngineProfile", "ListProfile"], show_known=True,
                                   hint="A profile is of one kind: make an EngineProfile or a ListProfile.")
        if self.names not in ("ragrade", "trec_eval"):
            raise UnknownNameError("names", self.names, ["ragrade", "trec_eval"], show_known=True)

    # -- what the profile defines ------------------------------------------------------------------
    def defines(self, family: str) -> bool:
        """Whether the profile computes ``family``."""
        return False

    @property
    def metrics(self) -> tuple[str, ...]:
        """The families the profile computes, in registry order."""
        from ragrade.metrics.registry import REGISTRY

        return tuple(f.name for f in REGISTRY if self.defines(f.name))

    def reason(self, family: str) -> str:
        """Why ``family``'s number differs from the default under this profile ("" if unknown)."""
        return self.reason_all

    def policy_overrides(self) -> dict[str, str]:
        """The policies the profile sets (over :class:`ragrade.policies.Policies`' defaults)."""
        return {}

    def adapt(self, metric: Metric) -> Metric:
        """``metric`` as the profile computes it (unchanged unless the kind says otherwise)."""
        return metric


@dataclass(frozen=True, eq=False)
class EngineProfile(Profile):
    """A profile of the engine (``default``, ``trec_eval``, ``pytrec_eval``, ``beir``, ``ir_measures``,
    ``ranx``): every id family with the default kernels, changing only policies, score precision,
    rounding, BEIR's MRR variant, the tie order and the providers."""

    policies: Mapping[str, str] = field(default_factory=dict)  # overrides of ragrade.policies.Policies
    score_dtype: Literal["float64", "float32"] = "float64"  # float32: scores stored as 32-bit (pytrec_eval)
    mrr_variant: Literal["default", "beir"] = "default"  # beir: input-order ties, mean over all qrels queries
    empty_qrels: Literal["keep", "drop"] = "keep"  # drop: a query with no judgment at all is not a query
    #: "policy": the ``ties`` policy orders equal scores; a ranx order (``ragrade.kernels.tie_orders``):
    #: ranx's numba quicksort, once ("ranx"), twice ("ranx_comparable", evaluate(make_comparable=True)) or
    #: over ascending scores reversed ("ranx_dict", a plain dict handed to ranx.evaluate)
    tie_order: str = "policy"
    #: "ir_measures": each metric follows the tie order and query set of the ir-measures provider that
    #: computes it (``ragrade.profiles.providers``)
    providers: Literal["", "ir_measures"] = ""
    #: family -> the family computing it under this profile (ranx's rbp: raw grades as gains)
    substitutes: Mapping[str, str] = field(default_factory=dict)
    #: trec_eval 9's interpolated-precision count (floor(x R + 0.9)) instead of trec_eval 10's round(x R).
    iprec_cut: Literal["round", "trec9"] = "round"

    kind: ClassVar[str] = "engine"

    def __post_init__(self) -> None:
        super().__post_init__()
        for what, value, choices in (("score_dtype", self.score_dtype, ("float64", "float32")),
                                     ("mrr_variant", self.mrr_variant, ("default", "beir")),
                                     ("empty_qrels option", self.empty_qrels, ("keep", "drop")),
                                     ("providers", self.providers, ("", "ir_measures")),
                                     ("iprec_cut", self.iprec_cut, ("round", "trec9"))):
            if value not in choices:
                raise UnknownNameError(what, value, [c for c in choices if c], show_known=True)
        Policies().update(**dict(self.policies))  # unknown policy or value: an error now, not later
        from ragrade.kernels.tie_orders import RANX_ORDERS

        if self.tie_order not in ("policy", *RANX_ORDERS):
            raise UnknownNameError("tie_order", self.tie_order, ["policy", *RANX_ORDERS], show_known=True)
        for fam_name, sub in self.substitutes.items():
            if find(fam_name) is None or find(sub) is None:
                raise UnknownNameError("substituted family", sub if find(fam_name) else fam_name,
                                       [f.name for f in _list_families()])

    def defines(self, family: str) -> bool:
        """Every id family."""
        fam = find(family)
        return fam is not None and fam.kind == "id"

    def policy_overrides(self) -> dict[str, str]:
        return dict(self.policies)

    def adapt(self, metric: Metric) -> Metric:
        """``metric`` as the profile computes it: trec_eval 9's interpolated precision (``cut=trec9``) for
        ``iprec`` and ``iprec_11pt`` under a trec_eval 9 profile (pytrec_eval), unless the metric sets it.
        Under a profile whose names are trec_eval's, a gain for a negative grade is refused: trec_eval reads
        ``ndcg.-1=2`` as the gain of the retrieved documents without a judgment (-2: those judged with a
        negative grade), not of judgments of grade -1 (``ragrade trec_eval`` computes trec_eval's reading)."""
        if self.names == "trec_eval" and any(level < 0 for level, _ in (dict(metric.params).get("gains") or ())):
            from ragrade.errors import MetricError

            raise MetricError(f"{metric}: under the {self.name} profile a gain for a negative grade means what "
                              "trec_eval 10 reads (grade -1: each retrieved document without a judgment; -2: each "
                              "one judged with a negative grade), which ragrade.evaluate does not compute: use "
                              "`ragrade trec_eval` for trec_eval's reading, or no profile for gains per judged grade")
        if self.iprec_cut != "round" and metric.name in ("iprec", "iprec_11pt") and \
                dict(metric.params).get("cut") is None:
            return metric.with_params(cut=self.iprec_cut)
        return metric


@dataclass(frozen=True, eq=False)
class ListProfile(Profile):
    """A profile of a RAG framework (``autorag``, ``ragas``, ``continuous-eval``, ``remem``, ``llamaindex``,
    ``deepeval``): the families the peer has, each with a :class:`Convention`; rules left out are the default
    convention's; families the peer does not define are refused with the list of those it does."""

    families: Mapping[str, Convention] = field(default_factory=dict)  # what the peer defines
    empty: Empty = field(default_factory=Empty)  # default value of a query with an empty side
    invalid_rows: Literal["keep", "skip"] = "keep"  # skip: empty list/group/blank id -> no score (AutoRAG)
    text_matcher: Matcher | None = None  # the peer's text matching (None: exact string equality)
    text_recall_matcher: Matcher | None = None  # a different one for recall (Ragas: > 0.5)

    kind: ClassVar[str] = "list"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.invalid_rows not in ("keep", "skip"):
            raise UnknownNameError("invalid_rows option", self.invalid_rows, ["keep", "skip"], show_known=True)
        for name, conv in self.families.items():
            fam = find(name)
            if fam is None or fam.kind == "judge":
                raise UnknownNameError("family of a list profile", name,
                                       [f.name for f in _list_families()], show_known=True)
            if conv.rule is not None and conv.rule.family and conv.rule.family != name:
                raise UnknownNameError(f"rule for family {name!r}", type(conv.rule).__name__,
                                       [r.__name__ for r in _rules_for(name)], show_known=True)

    def defines(self, family: str) -> bool:
        """The families the peer defines."""
        return find(family) is not None and family in self.families

    def convention(self, family: str) -> Convention:
        return self.families.get(family, Convention())

    def rule(self, cls: type[R]) -> R:
        """The profile's rule of class ``cls`` (the default rule when the profile does not change it)."""
        conv = self.families.get(cls.family)
        if conv is not None and isinstance(conv.rule, cls):
            return conv.rule
        return cls()

    def empty_rule(self, family: str) -> Empty:
        conv = self.families.get(family)
        return conv.empty if conv is not None and conv.empty is not None else self.empty

    def id_matcher(self, family: str) -> Matcher | None:
        conv = self.families.get(family)
        return None if conv is None else conv.id_matcher

    def reason(self, family: str) -> str:
        conv = self.families.get(family)
        return (conv.reason if conv is not None and conv.reason else "") or self.reason_all


#: The profile kinds the engine's in-memory executor runs; a profile of another kind is run by the route
#: that claims its plan (:data:`ragrade.evaluation.ROUTES`).
ENGINE_KINDS = frozenset({"engine", "list"})


def _list_families() -> list[Family]:
    from ragrade.metrics.registry import REGISTRY

    return [f for f in REGISTRY if f.kind != "judge"]


def _rules_for(name: str) -> list[type[Rule]]:
    from ragrade.kernels.rules import RULES

    return [r for r in RULES if r.family == name]


_LEV = "levenshtein"
_TEXT_FROM_IDS = "AutoRAG's token metrics compare the items as texts"

def profile_names(profile: str | Profile | None) -> Literal["ragrade", "trec_eval"]:
    """How bare metric names read under ``profile`` (``"ragrade"`` without one, or for an unknown name:
    the profile lookup reports that later)."""
    if profile is None:
        return "ragrade"
    if isinstance(profile, Profile):
        return profile.names
    if not isinstance(profile, str):
        return "ragrade"  # not a profile: get_profile reports it
    found = PROFILES.get(ALIASES.get(profile.strip().lower(), profile.strip().lower()))
    return "ragrade" if found is None else found.names


PROFILES: dict[str, Profile] = {}


def _add(p: Profile) -> None:
    PROFILES[p.name] = p


_add(EngineProfile("default", "ragrade default (trec_eval formulas)",
                   source="docs/conventions.md, Default definitions"))
_add(EngineProfile(
    "trec_eval", "trec_eval 10", names="trec_eval",
    policies={"no_relevant": "zero", "missing_run": "drop", "duplicates": "error"},
    reason_all="trec_eval scores queries with no relevant judgment 0 and ignores queries missing from the run",
    source="docs/profiles.md; default kernels (checked against pytrec_eval by the parity suite)",
))
_add(EngineProfile(
    "pytrec_eval", "pytrec_eval", names="trec_eval", iprec_cut="trec9",
    policies={"no_relevant": "zero", "missing_run": "drop"}, score_dtype="float32", empty_qrels="drop",
    reason_all="pytrec_eval stores scores as float32 (near-equal scores tie), averages only queries present "
               "in both run and qrels, scores R = 0 queries 0, and never sees a query whose qrels entry is empty",
    source="docs/profiles.md; differential tests against pytrec_eval-terrier",
))
_add(EngineProfile(
    "beir", "BEIR / MTEB", iprec_cut="trec9",  # pytrec_eval's trec_eval 9
    policies={"no_relevant": "zero", "missing_run": "drop", "identical_ids": "drop"},
    score_dtype="float32", mrr_variant="beir", rounding=5, empty_qrels="drop",
    reason_all="BEIR drops documents whose id equals the query id, uses pytrec_eval's float32 scores (and "
               "its dropping of queries with an empty qrels entry) and rounds to 5 decimals; its MRR@k keeps "
               "input order on ties and divides by every qrels query",
    source="docs/profiles.md",
))
_add(EngineProfile(
    "ir_measures", "ir-measures", iprec_cut="trec9",  # IPrec comes from pytrec_eval (trec_eval 9)
    policies={"no_relevant": "zero", "missing_run": "zero", "duplicates": "keep_last"}, providers="ir_measures",
    reason_all="ir-measures counts every qrels query (missing ones score 0), scores R = 0 queries 0 and hands "
               "each measure to a provider with its own tie order: pytrec_eval (float32 scores, document id "
               "descending), msmarco, judged and compat (document id ascending), cwl_eval and accuracy (input "
               "order), gdeval (5 printed decimals)",
    source="docs/conventions.md (Providers of ir-measures and ranx's tie order); differential tests against "
           "ir_measures 0.4.3 (tests/parity/test_ir_measures_providers.py)",
))
_add(EngineProfile(
    "ranx", "ranx",
    policies={"no_relevant": "zero", "missing_run": "zero", "duplicates": "keep_last"},
    tie_order="ranx_comparable", substitutes={"rbp": "rbp_ranx", "bpref": "bpref_ranx"},
    reason_all="ranx scores queries with no relevant judgment 0 and averages them in, keeps the last score of "
               "a document listed twice, counts queries missing from the run as 0 (make_comparable), orders "
               "equal scores by numba's quicksort (reproduced) and takes raw grades as rbp's gains",
    source="docs/conventions.md (Providers of ir-measures and ranx's tie order); differential tests against "
           "ranx 0.3.21 (tests/parity/test_ranx_ties.py)",
))
_add(ListProfile(
    "autorag", "AutoRAG retrieval metrics",
    families={
        "precision": Convention(Precision(hits="distinct", denominator="list"),
                                reason="AutoRAG counts distinct retrieved ids but divides by the list length, "
                                       "with no cutoff"),
        "recall": Convention(Recall(denominator="units"),
                             reason="AutoRAG counts a group as found when any of its ids is retrieved, over the "
                                    "whole list"),
        "f1": Convention(reason="AutoRAG's F1 combines its list-length precision and group recall"),
        "rr": Convention(RR(mode="per_unit"),
                         reason="AutoRAG averages 1/first rank over every group (0 for a missed group), not the "
                                "first hit"),
        "ap": Convention(AP(denominator="per_unit"),
                         reason="AutoRAG divides each group's AP by the group's hits, not its size, and averages "
                                "groups"),
        "ndcg": Convention(NDCG(gain="every_match", ideal="min_gt_list", discount="log2"),
                           reason="AutoRAG credits duplicates every time and takes min(gt ids, list length) as "
                                  "the ideal"),
        "token_precision": Convention(reason=_TEXT_FROM_IDS),
        "token_recall": Convention(reason=_TEXT_FROM_IDS),
        "token_f1": Convention(reason=_TEXT_FROM_IDS),
    },
    invalid_rows="skip", empty=Empty(retrieved="nan", truth="nan"),
    source="docs/profiles.md (AutoRAG is not installable here: checked against its published formulas and "
           "the parity vectors)",
))
_add(ListProfile(
    "ragas", "Ragas (non-LLM and ID-based context metrics)",
    families={
        "context_precision": Convention(ContextPrecision(epsilon=1e-10),
                                        empty=Empty(retrieved="zero", truth="nan", decider="retrieved"),
                                        reason="Ragas adds 1e-10 to the number of relevant retrieved items"),
        "ap": Convention(AP(denominator="retrieved_hits", epsilon=1e-10),
                         empty=Empty(retrieved="zero", truth="nan", decider="retrieved"),
                         reason="Ragas' context precision divides by the relevant *retrieved* items (+1e-10), "
                                "not by R"),
        "precision": Convention(Precision(hits="distinct", denominator="distinct"),
                                empty=Empty(retrieved="nan", truth="zero", decider="retrieved"),
                                reason="Ragas' ID-based precision divides by the distinct retrieved ids (sets), "
                                       "no cutoff"),
        "recall": Convention(Recall(denominator="distinct_units", text_denominator="units"),
                             empty=Empty(retrieved="zero", truth="nan", retrieved_text="nan"),
                             reason="Ragas recalls a reference when its best Levenshtein similarity is > 0.5 "
                                    "(texts)"),
    },
    empty=Empty(retrieved="nan", truth="nan"),
    text_matcher=Fuzzy(threshold=0.5, scorer=_LEV, op=">=", allow_empty=True),
    text_recall_matcher=Fuzzy(threshold=0.5, scorer=_LEV, op=">", allow_empty=True),
    source="ragas 0.4.3 (differential tests)",
))
_add(ListProfile(
    "deepeval", "DeepEval contextual precision",
    families={
        "context_precision": Convention(reason="DeepEval divides by the relevant retrieved items, with no epsilon"),
        "ap": Convention(AP(denominator="retrieved_hits"),
                         reason="DeepEval's contextual precision divides by the relevant retrieved items, not "
                                "by R"),
    },
    empty=Empty(retrieved="zero", truth="nan"),
    source="docs/profiles.md (deepeval's metric is LLM-judged; the formula is reproduced on given verdicts)",
))
_add(ListProfile(
    "continuous-eval", "continuous-eval (PrecisionRecallF1, RankedRetrievalMetrics)",
    families={
        "precision": Convention(Precision(hits="rows", denominator="list"),
                                reason="continuous-eval counts every matching retrieved chunk (duplicates too) "
                                       "over the list"),
        "recall": Convention(Recall(denominator="distinct_units"),
                             reason="continuous-eval counts distinct ground-truth items matched by the whole list"),
        "f1": Convention(),
        "ap": Convention(AP(denominator="retrieved_hits"),
                         reason="continuous-eval divides AP by the relevant retrieved chunks, not by the ground "
                                "truth size"),
        "rr": Convention(),
        "ndcg": Convention(NDCG(gain="greedy_once", credit_key="content", ideal="gt_list", discount="ln_ratio"),
                           empty=Empty(retrieved="zero", truth="nan"),
                           reason="continuous-eval's ideal DCG spans the whole ground-truth list, uncapped by "
                                  "the list length"),
    },
    empty=Empty(retrieved="zero", truth="zero"),
    # allow_empty: continuous-eval hands whitespace-only texts to the rouge package, which reads them as one
    # empty word (a whitespace ground truth matches a retrieved ". ."); empty strings still never match.
    text_matcher=RougeL(threshold=0.7, variant="union", measure="recall", allow_empty=True),
    source="continuous-eval 0.3.14 with rouge 1.0.1 (differential tests)",
))
_add(ListProfile(
    "llamaindex", "LlamaIndex retrieval metrics",
    families={
        "hit_rate": Convention(),
        "rr": Convention(),
        "precision": Convention(Precision(hits="distinct", denominator="distinct"),
                                reason="LlamaIndex divides distinct relevant ids by distinct retrieved ids (sets), "
                                       "no cutoff"),
        "recall": Convention(Recall(denominator="distinct_units")),
        "ap": Convention(AP(denominator="distinct_units"),
                         reason="LlamaIndex counts duplicate relevant ids again and divides by the expected set "
                                "size"),
        "ndcg": Convention(NDCG(gain="every_match", ideal="gt_list", discount="log2"),
                           reason="LlamaIndex's ideal DCG spans the expected list length and duplicates gain "
                                  "every time"),
    },
    empty=Empty(retrieved="nan", truth="nan"),
    source="llama-index-core 0.14.25 (differential tests)",
))
_add(ListProfile(
    "remem", "REMem retrieval metrics",
    families={
        "recall": Convention(Recall(denominator="distinct_units"),
                             reason="REMem's Recall@k uses exact string sets and pools with rounding to 4 "
                                    "decimals"),
        "recall_all": Convention(RecallAll(target="list"), id_matcher=RememChunk(),
                                 reason="REMem matches chunks to gold docs by substring (its fuzzy rule)"),
        "ndcg": Convention(NDCG(gain="every_match", ideal="own_labels", discount="remem"), id_matcher=RememChunk(),
                           reason="REMem's NDCG_any weighs ranks 1 and 2 alike and takes the ideal from the "
                                  "list's own labels"),
    },
    empty=Empty(retrieved="zero", truth="zero"), rounding=4,
    source="remem's retrieval_eval (read; not installable offline) and the parity vectors of docs/profiles.md",
))

ALIASES = {"continuous_eval": "continuous-eval", "ce": "continuous-eval", "llama_index": "llamaindex",
           "llama-index": "llamaindex", "trec": "trec_eval", "ir-measures": "ir_measures", "mteb": "beir",
           "pytrec": "pytrec_eval", "textbook": "default"}

# -- span profiles (issue 35): computed by ragrade.spans.route on span ground truth, never by the engine --------
_SPAN = "span measures only (span_recall, span_precision, span_iou, span_precision_omega); docs/spans.md"


@dataclass(frozen=True, eq=False)
class SpanProfile(Profile):
    """A profile of the span measures (``chroma``, ``legalbench_rag``): computed by the route of character
    spans (:mod:`ragrade.spans.route`) under the peer's semantics, never by the engine. ``families``: the
    span families it defines."""

    families: tuple[str, ...] = ()
    kind: ClassVar[str] = "span"

    def defines(self, family: str) -> bool:
        return family in self.families


_add(SpanProfile(
    "chroma", "Chroma chunking_evaluation (span measures)",
    families=("span_recall", "span_precision", "span_iou", "span_precision_omega"),
    reason_all="Chroma sums the lengths of the top-k chunks and of the gold spans (overlaps count twice), counts "
               "chunks that only touch a span, and with retrieve=-1 reads each query's number of chunks holding gold",
    source="Chroma chunking_evaluation d451fc4, evaluation_framework/base_evaluation.py (differential tests on its "
           "fixture, tests/spans/test_chroma_parity.py); " + _SPAN,
))
_add(SpanProfile(
    "legalbench_rag", "LegalBench-RAG (span precision and recall)", families=("span_recall", "span_precision"),
    reason_all="LegalBench-RAG sums every snippet-gold intersection without union (recall may exceed 1) and "
               "needs disjoint gold spans",
    source="LegalBench-RAG (arXiv 2408.10343), legalbenchrag/run_benchmark.py; " + _SPAN,
))
ALIASES.update({"chunking_evaluation": "chroma", "chroma_chunking": "chroma", "legalbench": "legalbench_rag",
                "legalbench-rag": "legalbench_rag", "legalbenchrag": "legalbench_rag"})


@public
def get_profile(name: str | Profile) -> Profile:
    """A profile by name or alias (case-insensitive); :class:`UnknownNameError` otherwise."""
    if isinstance(name, Profile):
        return name
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in PROFILES:
        raise UnknownNameError("profile", name, [*PROFILES, *ALIASES], hint=f"Profiles: {', '.join(PROFILES)}.")
    return PROFILES[key]


def list_profiles() -> list[str]:
    return list(PROFILES)


__all__ = ["ALIASES", "ENGINE_KINDS", "PROFILES", "Convention", "EngineProfile", "ListProfile", "Profile", "get_profile",
           "list_profiles"]
