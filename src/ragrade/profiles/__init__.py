"""Peer conventions as declarative data (SPEC section 4).

A :class:`Profile` is a small frozen record of *named conventions*; it holds no code. Two kinds:

* ``kind="engine"`` (``default``, ``trec_eval``, ``pytrec_eval``, ``beir``, ``ir_measures``): the default
  kernels with different policies (SPEC 3), score precision, rounding and BEIR's MRR variant.
* ``kind="list"`` (``autorag``, ``ragas``, ``continuous-eval``, ``remem``, ``llamaindex``, ``deepeval``):
  the profile kernels of :mod:`ragrade.kernels.profile_kernels`, which read the fields below over a
  flat match table.

Every field is documented in ``docs/profiles.md``; ``reasons`` gives the one-line explanation the
conventions report prints when a profile's number differs from the default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragrade.errors import InputError
from ragrade.matching.matchers import Fuzzy, Matcher, RougeL
from ragrade.matching.remem import RememChunk


@dataclass(frozen=True)
class Profile:
    """Named conventions of one peer system."""

    name: str
    title: str
    kind: str = "list"  # "engine" | "list"
    # -- engine profiles -----------------------------------------------------------------------
    policies: tuple[tuple[str, str], ...] = ()  # overrides of ragrade.policies.Policies
    score_dtype: str = "float64"  # "float32": scores stored as 32-bit floats (pytrec_eval)
    mrr_variant: str | None = None  # "beir": input-order ties, mean over all qrels queries
    # -- list profiles -------------------------------------------------------------------------
    cutoff_applies: bool = True  # False: the peer has no cutoff; @k truncates the list (top_k)
    precision_hits: str = "rows"  # "rows": every matching row | "distinct": distinct matching items
    precision_denominator: str = "list"  # "list": len(L) with duplicates | "distinct": set size
    recall_denominator: str = "distinct_units"  # "units": as listed | "distinct_units": as a set
    text_recall_denominator: str | None = None  # override of recall_denominator for text input
    recall_all_target: str = "distinct_units"  # "list": gold list length (remem)
    rr_mode: str = "first"  # "first" | "per_unit": mean over units of 1/first rank (AutoRAG)
    ap_denominator: str = "R"  # "R" | "distinct_units" | "retrieved_hits" | "per_unit"
    epsilon: float = 0.0  # added to the denominator of weighted precision (Ragas: 1e-10)
    ndcg_gain: str = "every_match"  # "every_match": duplicates credited every time | "greedy_once"
    ndcg_credit_key: str = "unit"  # greedy crediting per "unit" or per distinct "content"
    ndcg_ideal: str = "gt_list"  # "min_gt_list" | "gt_list" | "own_labels"
    ndcg_discount: str = "log2"  # "log2": log2(i+1) | "ln_ratio": ln(i+1)/ln 2 | "remem"
    duplicates_credit: str = "every"  # documentation of how repeated retrieved items are credited
    empty_retrieved: str = "zero"  # value when the retrieved list is empty: "zero" | "nan"
    empty_truth: str = "zero"  # value when the ground truth is empty: "zero" | "nan"
    empty_overrides: tuple[tuple[str, str, str], ...] = ()  # (metric, side, value); side may end "_text"
    empty_decider: tuple[tuple[str, str], ...] = ()  # (metric, side) whose rule wins when both are empty
    invalid_rows: str = "keep"  # "skip": empty list/group/whitespace id -> no score (AutoRAG)
    rounding: int | None = None  # decimals of the reported means
    id_matchers: tuple[tuple[str, Matcher], ...] = ()  # metric -> matcher applied to *ids*
    text_matcher: Matcher | None = None  # the peer's text matching (None: exact string equality)
    text_recall_matcher: Matcher | None = None  # a different one for recall (Ragas: > 0.5)
    metrics: tuple[str, ...] = ()  # metrics the peer defines
    reasons: tuple[tuple[str, str], ...] = field(default=())  # metric -> why it differs from default
    source: str = ""  # what the profile was checked against

    def reason(self, metric: str) -> str:
        for m, r in self.reasons:
            if m == metric:
                return r
        return ""

    def empty_value(self, metric: str, side: str, texts: bool = False) -> str:
        """Value ("zero" or "nan") of ``metric`` for a query whose ``side`` ("retrieved" or "truth") is
        empty; an override for ``side + "_text"`` applies to text input only."""
        for key in ((side + "_text", side) if texts else (side,)):
            for m, s, v in self.empty_overrides:
                if m == metric and s == key:
                    return v
        return self.empty_retrieved if side == "retrieved" else self.empty_truth

    def decides_when_both_empty(self, metric: str) -> str:
        """The side ("retrieved" or "truth", default) whose empty rule applies when both are empty."""
        for m, side in self.empty_decider:
            if m == metric:
                return side
        return "truth"

    def id_matcher(self, metric: str) -> Matcher | None:
        for m, mt in self.id_matchers:
            if m == metric:
                return mt
        return None


_LEV = "levenshtein"

PROFILES: dict[str, Profile] = {}


def _add(p: Profile) -> None:
    PROFILES[p.name] = p


_add(Profile(
    "default", "ragrade default (trec_eval formulas, SPEC 2)", kind="engine",
    metrics=("hits", "hit_rate", "precision", "recall", "f1", "recall_all", "r_precision", "rr", "ap",
             "dcg", "ndcg", "context_precision"),
    source="SPEC section 2",
))
_add(Profile(
    "trec_eval", "trec_eval 10", kind="engine",
    policies=(("no_relevant", "zero"), ("missing_run", "drop"), ("duplicates", "error")),
    metrics=("hits", "precision", "recall", "r_precision", "rr", "ap", "ndcg", "hit_rate"),
    reasons=(("*", "trec_eval scores queries with no relevant judgment 0 and ignores queries missing "
                    "from the run"),),
    source="SPEC 4.5; default kernels (checked against pytrec_eval by the parity suite)",
))
_add(Profile(
    "pytrec_eval", "pytrec_eval", kind="engine",
    policies=(("no_relevant", "zero"), ("missing_run", "drop")), score_dtype="float32",
    metrics=("precision", "recall", "r_precision", "rr", "ap", "ndcg", "hit_rate"),
    reasons=(("*", "pytrec_eval stores scores as float32 (near-equal scores tie), averages only "
                    "queries present in both run and qrels, and scores R = 0 queries 0"),),
    source="SPEC 4.5; differential tests against pytrec_eval-terrier",
))
_add(Profile(
    "beir", "BEIR / MTEB", kind="engine",
    policies=(("no_relevant", "zero"), ("missing_run", "drop"), ("identical_ids", "drop")),
    score_dtype="float32", mrr_variant="beir", rounding=5,
    metrics=("precision", "recall", "ap", "ndcg", "rr"),
    reasons=(("*", "BEIR drops documents whose id equals the query id, uses pytrec_eval's float32 "
                    "scores and rounds to 5 decimals"),
             ("rr", "BEIR's MRR@k keeps input order on ties and divides by every qrels query")),
    source="SPEC 4.5",
))
_add(Profile(
    "ir_measures", "ir-measures", kind="engine",
    policies=(("no_relevant", "zero"), ("missing_run", "zero"), ("duplicates", "keep_last")),
    score_dtype="float32",
    metrics=("precision", "recall", "r_precision", "rr", "ap", "ndcg", "hit_rate"),
    reasons=(("*", "ir-measures counts every qrels query (missing ones score 0), scores R = 0 queries 0 "
                    "and, through pytrec_eval, compares scores as float32"),),
    source="SPEC 4.5; differential tests against ir_measures",
))
_add(Profile(
    "ranx", "ranx", kind="engine",
    policies=(("no_relevant", "zero"), ("missing_run", "zero"), ("duplicates", "keep_last")),
    metrics=("hits", "hit_rate", "precision", "recall", "f1", "r_precision", "rr", "ap", "dcg", "ndcg"),
    reasons=(("*", "ranx scores queries with no relevant judgment 0 and averages them in, keeps the last "
                    "of duplicate lines, and counts queries missing from the run as 0 (make_comparable); "
                    "its order among equal scores follows its own sort and is not reproduced"),),
    source="SPEC 4.5; differential tests against ranx (tests/parity/test_ranx_comparison.py)",
))
_add(Profile(
    "autorag", "AutoRAG retrieval metrics",
    cutoff_applies=False, precision_hits="distinct", precision_denominator="list",
    recall_denominator="units", rr_mode="per_unit", ap_denominator="per_unit",
    ndcg_gain="every_match", ndcg_ideal="min_gt_list", ndcg_discount="log2",
    invalid_rows="skip", empty_retrieved="nan", empty_truth="nan",
    metrics=("precision", "recall", "f1", "rr", "ap", "ndcg", "token_precision", "token_recall",
             "token_f1"),
    reasons=(
        ("precision", "AutoRAG counts distinct retrieved ids but divides by the list length, with no cutoff"),
        ("recall", "AutoRAG counts a group as found when any of its ids is retrieved, over the whole list"),
        ("rr", "AutoRAG averages 1/first rank over every group (0 for a missed group), not the first hit"),
        ("ap", "AutoRAG divides each group's AP by the group's hits, not its size, and averages groups"),
        ("ndcg", "AutoRAG credits duplicates every time and takes min(gt ids, list length) as the ideal"),
        ("f1", "AutoRAG's F1 combines its list-length precision and group recall"),
    ),
    source="SPEC 4.1 and 6 vectors (AutoRAG not installed: SPEC-only)",
))
_add(Profile(
    "ragas", "Ragas (non-LLM and ID-based context metrics)",
    precision_hits="distinct", precision_denominator="distinct",
    recall_denominator="distinct_units", text_recall_denominator="units",
    ap_denominator="retrieved_hits", epsilon=1e-10,
    empty_retrieved="nan", empty_truth="nan",
    empty_overrides=(("context_precision", "retrieved", "zero"), ("ap", "retrieved", "zero"),
                     ("precision", "truth", "zero"), ("recall", "retrieved", "zero"),
                     ("recall", "retrieved_text", "nan")),
    empty_decider=(("context_precision", "retrieved"), ("ap", "retrieved"), ("precision", "retrieved")),
    text_matcher=Fuzzy(threshold=0.5, scorer=_LEV, op=">=", allow_empty=True),
    text_recall_matcher=Fuzzy(threshold=0.5, scorer=_LEV, op=">", allow_empty=True),
    metrics=("context_precision", "ap", "precision", "recall"),
    reasons=(
        ("context_precision", "Ragas adds 1e-10 to the number of relevant retrieved items"),
        ("ap", "Ragas' context precision divides by the relevant *retrieved* items (+1e-10), not by R"),
        ("precision", "Ragas' ID-based precision divides by the distinct retrieved ids (sets), no cutoff"),
        ("recall", "Ragas recalls a reference when its best Levenshtein similarity is > 0.5 (texts)"),
    ),
    source="ragas 0.4.3 (differential tests)",
))
_add(Profile(
    "deepeval", "DeepEval contextual precision",
    ap_denominator="retrieved_hits", epsilon=0.0,
    empty_retrieved="zero", empty_truth="nan",
    metrics=("context_precision", "ap"),
    reasons=(("context_precision", "DeepEval divides by the relevant retrieved items, with no epsilon"),
             ("ap", "DeepEval's contextual precision divides by the relevant retrieved items, not by R")),
    source="SPEC 4.5 (deepeval's metric is LLM-judged; the formula is reproduced on given verdicts)",
))
_add(Profile(
    "continuous-eval", "continuous-eval (PrecisionRecallF1, RankedRetrievalMetrics)",
    precision_hits="rows", precision_denominator="list", recall_denominator="distinct_units",
    ap_denominator="retrieved_hits", ndcg_gain="greedy_once", ndcg_credit_key="content",
    ndcg_ideal="gt_list", ndcg_discount="ln_ratio",
    empty_retrieved="zero", empty_truth="zero", empty_overrides=(("ndcg", "truth", "nan"),),
    text_matcher=RougeL(threshold=0.7, variant="union", measure="recall"),
    id_matchers=(),
    metrics=("precision", "recall", "f1", "ap", "rr", "ndcg"),
    reasons=(
        ("precision", "continuous-eval counts every matching retrieved chunk (duplicates too) over the list"),
        ("ap", "continuous-eval divides AP by the relevant retrieved chunks, not by the ground truth size"),
        ("ndcg", "continuous-eval's ideal DCG spans the whole ground-truth list, uncapped by the list length"),
        ("recall", "continuous-eval counts distinct ground-truth items matched by the whole list"),
    ),
    source="continuous-eval 0.3.14 with rouge 1.0.1 (differential tests)",
))
_add(Profile(
    "llamaindex", "LlamaIndex retrieval metrics",
    precision_hits="distinct", precision_denominator="distinct", recall_denominator="distinct_units",
    ap_denominator="distinct_units", ndcg_gain="every_match", ndcg_ideal="gt_list", ndcg_discount="log2",
    empty_retrieved="nan", empty_truth="nan",
    metrics=("hit_rate", "rr", "precision", "recall", "ap", "ndcg"),
    reasons=(
        ("precision", "LlamaIndex divides distinct relevant ids by distinct retrieved ids (sets), no cutoff"),
        ("ap", "LlamaIndex counts duplicate relevant ids again and divides by the expected set size"),
        ("ndcg", "LlamaIndex's ideal DCG spans the expected list length and duplicates gain every time"),
    ),
    source="llama-index-core 0.14.25 (differential tests)",
))
_add(Profile(
    "remem", "REMem retrieval metrics",
    recall_denominator="distinct_units", recall_all_target="list",
    ndcg_gain="every_match", ndcg_ideal="own_labels", ndcg_discount="remem",
    empty_retrieved="zero", empty_truth="zero", rounding=4,
    id_matchers=(("recall_all", RememChunk()), ("ndcg", RememChunk()), ("hit_rate", RememChunk())),
    text_matcher=None,
    metrics=("recall", "recall_all", "ndcg"),
    reasons=(
        ("recall", "REMem's Recall@k uses exact string sets and pools with rounding to 4 decimals"),
        ("recall_all", "REMem matches chunks to gold docs by substring (its fuzzy rule)"),
        ("ndcg", "REMem's NDCG_any weighs ranks 1 and 2 alike and takes the ideal from the list's own labels"),
    ),
    source="remem's retrieval_eval (read; not installable offline) and SPEC 4.4 vectors",
))

ALIASES = {"continuous_eval": "continuous-eval", "ce": "continuous-eval", "llama_index": "llamaindex",
           "llama-index": "llamaindex", "trec": "trec_eval", "ir-measures": "ir_measures", "mteb": "beir",
           "pytrec": "pytrec_eval", "textbook": "default"}


def get_profile(name: str | Profile) -> Profile:
    """A profile by name or alias (case-insensitive)."""
    if isinstance(name, Profile):
        return name
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in PROFILES:
        import difflib

        close = difflib.get_close_matches(key, list(PROFILES), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise InputError(f"unknown profile {name!r}.{hint} Profiles: {', '.join(PROFILES)}")
    return PROFILES[key]


def list_profiles() -> list[str]:
    return list(PROFILES)


__all__ = ["ALIASES", "PROFILES", "Profile", "get_profile", "list_profiles"]
