"""The metric registry: every metric family ragrade knows, defined once.

A :class:`Family` owns everything about one measure: its canonical name and aliases (ragrade's own and
the spellings of trec_eval, ir-measures and ranx), its parameters with their constraints, its cutoff
rule, its definedness rule (which queries it is undefined on, e.g. ``R = 0``), how per-query values
aggregate, its kernels and its documentation. The parser (:mod:`ragrade.metrics.parser`), ``ragrade
metrics``, ``docs/metrics.md`` and the parametrised tests all read :data:`REGISTRY`.

Four kinds of family share the registry and the parser:

* ``"id"``: computed from relevance judgments by the engine's kernels (:mod:`ragrade.kernels.metrics`);
  list profiles use the family's ``list_kernel`` (:mod:`ragrade.kernels.profile_kernels`).
* ``"text"``: computed from the texts of retrieved items and ground truth (token overlap,
  :mod:`ragrade.kernels.text`).
* ``"judge"``: a judge (LLM or offline) reads the texts (``ragrade judge``, :mod:`ragrade.judges`).
* ``"diversity"``: computed from subtopic judgments (TREC ``qid subtopic docno rel`` files) by
  :func:`ragrade.evaluate_diversity` (:mod:`ragrade.kernels.diversity`).

trec_eval's own measure names (``P``, ``ndcg_cut.5,10``, ``P_5``, ``iprec_at_recall``, ``all_trec``...) are
the :data:`TREC` table below, which maps each onto a family with its official parameters; the parser reads
it. ir-measures' and ranx's spellings are aliases of the families (``nDCG``, ``Bpref``, ``ndcg_burges``).

Adding a metric: one :class:`Family` here, its kernel, and its tests (``docs/architecture.md`` has the
checklist).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ragrade.errors import UnknownNameError
from ragrade.metrics.params import GAIN, GAINS, JUDGED_ONLY, NDCG_REL, P_PERSIST, REL, Param

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class KernelRef:
    """A kernel named by its module and function, imported on its first call: reading the registry (the
    parser, ``ragrade metrics``) imports no NumPy. Calling it calls the kernel; :meth:`resolve` returns it."""

    __slots__ = ("_fn", "module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        self._fn: Callable[..., Any] | None = None

    def resolve(self) -> Callable[..., Any]:
        if self._fn is None:
            self._fn = getattr(importlib.import_module(self.module), self.name)
        return self._fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<kernel {self.module}.{self.name}>"


class _Kernels:
    """``K.precision`` -> a :class:`KernelRef` to ``ragrade.kernels.metrics.precision``."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> KernelRef:
        return KernelRef(self._module, name)


C = _Kernels("ragrade.kernels.cascade")
DN = _Kernels("ragrade.kernels.diversity_ndeval")  # issue 22 (irm)
PM = _Kernels("ragrade.kernels.peer_measures")  # issue 22 (irm)
D = _Kernels("ragrade.kernels.diversity")
M = _Kernels("ragrade.kernels.measures")
K = _Kernels("ragrade.kernels.metrics")
PK = _Kernels("ragrade.kernels.profile_kernels")
T = _Kernels("ragrade.kernels.text")

#: ``span``, ``nugget`` and ``trajectory`` families are computed by the route of their ground truth
#: (character spans, nuggets, traces of several retrieval calls: :data:`ragrade.evaluation.ROUTES`).
Kind = Literal["id", "text", "judge", "diversity", "span", "nugget", "trajectory"]
Cutoff = Literal["optional", "none", "required"]
#: Which queries a family is defined on: ``"relevant"``: R > 0 at the metric's relevance level;
#: ``"positive"``: at least one positive grade (DCG-type measures without ``rel``); ``"always"``;
#: ``"value"``: where the kernel gives a number (it returns NaN where the measure is undefined).
Definedness = Literal["relevant", "positive", "always", "value"]
#: How per-query values make one number: the arithmetic ``"mean"``, the ``"sum"`` (trec_eval's counts:
#: num_q, num_ret, ...), or the geometric mean ``"gmean"`` of the values floored at 1e-5 (gm_map, gm_bpref).
Aggregate = Literal["mean", "sum", "gmean"]


@dataclass(frozen=True)
class Family:
    """One metric family (``ndcg``, ``recall``, ``token_f1``, ``context_recall``...)."""

    name: str
    kind: Kind
    summary: str
    formula: str
    aliases: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    cutoff: Cutoff = "optional"
    defined: Definedness = "relevant"
    aggregate: Aggregate = "mean"
    #: Default-convention kernel: ``(Metric, Judged) -> float64[nq]`` (id) or
    #: ``(Metric, TextLists) -> float64[nq]`` (text); None for judge families.
    kernel: Callable[..., np.ndarray] | None = None
    #: List-profile kernel ``(Matches, Rules, ListContext) -> float64[nq]`` (id families peers define).
    list_kernel: Callable[..., np.ndarray] | None = None
    bounded: bool = True  # value always in [0, 1]
    monotone_in_k: bool = False  # non-decreasing in k
    ideal_is_one: bool = False  # the ideal ranking scores 1
    mean_name: str | None = None  # what the mean over queries is usually called (MAP, MRR)
    needs: tuple[str, ...] = ()  # judge families: example fields that must be non-empty
    #: The kernel reads every judged row (judged non-relevant and negative grades), not only the relevant
    #: ones: the measure moves when a judged non-relevant document is added to the ground truth.
    needs_judged: bool = False
    #: ``@value`` sets this (float) parameter instead of the cutoff: ``IPrec@0.5`` is ``iprec(recall=0.5)``.
    at_param: str | None = None
    source: str = ""
    example_text: str = ""  # an example metric string (default: name@10, or name without a cutoff)
    notes: tuple[str, ...] = field(default=())

    def param(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical name and every alias."""
        return (self.name, *(a for a in self.aliases if a != self.name))

    def example(self) -> str:
        if self.example_text:
            return self.example_text
        return self.name if self.cutoff == "none" else f"{self.name}@10"


def _id(name: str, summary: str, formula: str, *, kernel: Callable[..., Any],
        list_kernel: Callable[..., Any] | None = None, **kw: Any) -> Family:
    return Family(name, "id", summary, formula, kernel=kernel, list_kernel=list_kernel, **kw)


#: ``rel`` that may stay unset (the measure's own behaviour when unset is documented on the family).
REL_OPTIONAL = Param("rel", int, None, minimum=1,
                     doc="if set, only grades >= rel count (binary); unset: the family's graded behaviour")
BETA = Param("beta", float, 1.0, minimum=0, open_minimum=True,
             doc="trec_eval's weight x of recall against precision: (1 + x) P R / (x P + R); x = beta^2 of "
                 "van Rijsbergen's F_beta, as trec_eval's set_F.x and ir-measures' SetF(beta=x)")
MULT = Param("mult", float, 1.0, minimum=0, open_minimum=True,
             doc="precision at floor(mult * R + 0.9) documents (trec_eval Rprec_mult); 1 is R-precision")
IPREC_CUT = Param("cut", str, "round", choices=("round", "trec9"),
                  doc="how a recall level x becomes a number of relevant documents: round: round(x R), half away "
                      "from zero (trec_eval 10); trec9: floor(x R + 0.9) (trec_eval 9, pytrec_eval)")
IPREC_LEVELS = Param("levels", str, None, pattern=r"(\d*\.?\d+)(;\d*\.?\d+)*", example="0.25;0.5;0.75",
                     doc="the recall levels averaged, separated by ';' (trec_eval's 11pt_avg.0.25,0.5,0.75); "
                         "unset: 0.0, 0.1, ..., 1.0")
RECALL_LEVEL = Param("recall", float, None, minimum=0, maximum=1,
                     doc="the recall level (required): IPrec@0.5 or iprec(recall=0.5)")
P_TREC = Param("p", float, 0.8, minimum=0, maximum=1, open_minimum=True, open_maximum=True,
               doc="persistence (trec_eval's rbp defaults to 0.9: its names rbp and rbp_resid set p=0.9)")
T_GOAL = Param("t", float, 1.0, minimum=0, open_minimum=True, doc="the total gain the user wants (C/W/L's T)")
MIN_REL = Param("min_rel", int, 0, doc="lowest grade of the scale (grades at or below it gain 0)")
MAX_REL = Param("max_rel", int, None, minimum=1,
                doc="highest grade of the scale (gain 1); unset: the highest grade in the ground truth")
NRBP_BETA = Param("beta", float, 0.5, minimum=0, maximum=1, open_maximum=True,
                  doc="patience: the chance of going on to the next document (NRBP); issue 22 (irm)")
ALPHA = Param("alpha", float, 0.5, minimum=0, maximum=1, open_maximum=True,
              doc="redundancy penalty: each earlier document covering a subtopic discounts it by (1 - alpha)")


def _util(name: str, default: float, what: str) -> Param:
    return Param(name, float, default, doc=f"weight of each {what}")


UTILITY = (_util("a", 1.0, "relevant document retrieved"), _util("b", -1.0, "non-relevant document retrieved"),
           _util("c", 0.0, "relevant document not retrieved"),
           _util("d", 0.0, "non-relevant document not retrieved (needs num_docs, trec_eval -N)"))

TE = "trec_eval 9 (also in trec_eval 10)"
TE10 = "trec_eval 10"


REGISTRY: tuple[Family, ...] = (
    # -- id-based measures (default convention: trec_eval's formulas) --------------------------------
    _id("hits", "Number of relevant units retrieved in the top k.", "hits@k = |{relevant units in L@k}|",
        aliases=("hits",), params=(REL, JUDGED_ONLY), bounded=False, monotone_in_k=True, kernel=K.hits,
        source="ranx hits"),
    _id("hit_rate", "1 if at least one relevant unit is in the top k, else 0.", "hit_rate@k = 1[hits@k > 0]",
        aliases=("hit_rate", "hitrate", "success", "hr"), params=(REL, JUDGED_ONLY), monotone_in_k=True,
        ideal_is_one=True, kernel=K.hit_rate, list_kernel=PK.hit_rate,
        source=f"{TE} success; ir-measures Success; ranx hit_rate"),
    _id("precision", "Fraction of the top k that is relevant (divides by k even if fewer were retrieved).",
        "P@k = hits@k / k   (k = None: / len(L))", aliases=("precision", "p", "set_p", "setp"),
        params=(REL, JUDGED_ONLY), kernel=K.precision, list_kernel=PK.precision,
        source=f"{TE} P, set_P; ir-measures P, SetP; ranx precision"),
    _id("recall", "Fraction of the relevant units found in the top k.", "recall@k = hits@k / R",
        aliases=("recall", "r", "set_recall", "setr"), params=(REL, JUDGED_ONLY), monotone_in_k=True,
        ideal_is_one=True, kernel=K.recall, list_kernel=PK.recall,
        source=f"{TE} recall, set_recall; ir-measures R, SetR; ranx recall"),
    _id("f1", "Weighted harmonic mean of precision@k and recall@k (0 when both are 0); beta = 1 is F1.",
        "F@k = (1 + beta) P R / (beta P + R)", aliases=("f1", "f1_score", "set_f", "setf", "f_measure"),
        params=(REL, BETA, JUDGED_ONLY), kernel=M.f_measure, list_kernel=PK.f1,
        source=f"{TE} set_F; ir-measures SetF; ranx f1"),
    _id("recall_all", "1 if every relevant unit is in the top k, else 0.", "recall_all@k = 1[hits@k = R]",
        aliases=("recall_all", "recallall", "all_recall"), params=(REL, JUDGED_ONLY), monotone_in_k=True,
        ideal_is_one=True, kernel=K.recall_all, list_kernel=PK.recall_all,
        source="AutoRAG and REMem's 'all relevant retrieved' (docs/profiles.md)"),
    _id("r_precision", "Precision at rank R, the number of relevant units; with mult, at floor(mult R + 0.9).",
        "R-prec = hits@R / R", aliases=("r_precision", "rprec", "r-precision", "rprecision", "rprec_mult"),
        params=(REL, MULT, JUDGED_ONLY), cutoff="none", ideal_is_one=True, kernel=M.r_precision_mult,
        source=f"{TE} Rprec, Rprec_mult; ir-measures Rprec; ranx r-precision"),
    _id("rr", "Reciprocal rank of the first relevant unit in the top k (0 if none); its mean is MRR.",
        "RR@k = 1 / rank of first relevant in L@k", aliases=("rr", "mrr", "recip_rank", "reciprocal_rank"),
        params=(REL, JUDGED_ONLY), monotone_in_k=True, ideal_is_one=True, mean_name="MRR", kernel=K.rr,
        list_kernel=PK.rr, source=f"{TE} recip_rank; ir-measures RR; ranx mrr"),
    _id("ap", "Average precision: sum of precision@i over relevant ranks i <= k, divided by R; its mean is MAP.",
        "AP@k = (1/R) sum_{i<=k, d_i relevant} P@i", aliases=("ap", "map", "average_precision", "map_cut"),
        params=(REL, JUDGED_ONLY), monotone_in_k=True, ideal_is_one=True, mean_name="MAP", kernel=K.ap,
        list_kernel=PK.ap, source=f"{TE} map, map_cut; ir-measures AP; ranx map"),
    _id("dcg", "Discounted cumulative gain of the top k.", "DCG@k = sum_{i<=k} gain(d_i) / log2(i + 1)",
        aliases=("dcg",), params=(GAIN, NDCG_REL, GAINS, JUDGED_ONLY), defined="positive", bounded=False,
        monotone_in_k=True, kernel=K.dcg, source=f"{TE10} dcg; ranx dcg, dcg_burges (gain=exp)"),
    _id("ndcg", "DCG@k divided by the DCG of the ideal ranking of all judged grades, cut at k "
                "(trec_eval ndcg_cut).", "nDCG@k = DCG@k / IDCG@k", aliases=("ndcg", "ndcg_cut"),
        params=(GAIN, NDCG_REL, GAINS, JUDGED_ONLY), defined="positive", ideal_is_one=True, kernel=K.ndcg,
        list_kernel=PK.ndcg, source=f"{TE} ndcg, ndcg_cut (Jarvelin & Kekalainen, TOIS 2002); ir-measures nDCG; "
                                    "ranx ndcg, ndcg_burges (gain=exp)"),
    _id("context_precision",
        "Ragas-style weighted precision from relevance judgments (no judge): sum of precision@i over relevant "
        "ranks i <= k, divided by the relevant items in the top k (0 if none). The LLM-judged metric is "
        "llm_context_precision.",
        "CP@k = sum_{i<=k, d_i relevant} P@i / hits@k",
        aliases=("context_precision", "ctx_precision", "id_context_precision", "context_precision_id"),
        params=(REL, JUDGED_ONLY), kernel=K.context_precision, list_kernel=PK.context_precision,
        source="Ragas context precision's formula over relevance judgments (docs/profiles.md)"),
    # -- trec_eval's counts (summed over queries) ----------------------------------------------------
    _id("num_q", "Number of queries evaluated (1 per query; the total is their sum).", "num_q = 1",
        aliases=("numq",), cutoff="none", defined="always", aggregate="sum", kernel=M.num_q,
        source=f"{TE} num_q; ir-measures NumQ"),
    _id("num_ret", "Number of documents retrieved; with rel, those with grade >= rel (summed over queries).",
        "num_ret = |L|", aliases=("numret",), params=(REL_OPTIONAL,), cutoff="none", defined="always",
        aggregate="sum", bounded=False, kernel=M.num_ret, source=f"{TE} num_ret; ir-measures NumRet"),
    _id("num_rel", "Number of relevant units in the ground truth (summed over queries).", "num_rel = R",
        aliases=("numrel",), params=(REL,), cutoff="none", defined="always", aggregate="sum", bounded=False,
        kernel=M.num_rel, source=f"{TE} num_rel; ir-measures NumRel"),
    _id("num_rel_ret", "Number of relevant units retrieved (summed over queries).", "num_rel_ret = hits",
        aliases=("numrelret",), params=(REL, JUDGED_ONLY), cutoff="none", defined="always", aggregate="sum",
        bounded=False, kernel=M.num_rel_ret, source=f"{TE} num_rel_ret; ir-measures NumRelRet"),
    _id("num_nonrel_judged_ret", "Number of judged non-relevant documents retrieved (0 <= grade < rel; "
        "summed over queries).", "|{d in L : 0 <= grade(d) < rel}|", params=(REL,), cutoff="none",
        defined="always", aggregate="sum", bounded=False, needs_judged=True, kernel=M.num_nonrel_judged_ret,
        source=f"{TE} num_nonrel_judged_ret"),
    # -- trec_eval's other ranked measures -----------------------------------------------------------
    _id("gm_map", "Average precision per query, aggregated by the geometric mean (values floored at 1e-5).",
        "GMAP = exp(mean_q log max(AP_q, 1e-5))", aliases=("gm_ap", "gmap"), params=(REL, JUDGED_ONLY),
        cutoff="none", aggregate="gmean", ideal_is_one=True, kernel=K.ap, source=f"{TE} gm_map",
        notes=("pytrec_eval reports log(max(AP, 1e-5)) per query; ragrade reports AP per query and the "
               "geometric mean as the aggregate",)),
    _id("bpref", "Binary preference: for each retrieved relevant document, the share of the judged "
        "non-relevant documents (at most R of them) not ranked above it; averaged over R.",
        "bpref = (1/R) sum_{r relevant retrieved} (1 - min(n_r, R) / min(N, R))", aliases=("bpref", "bpref"),
        params=(REL,), cutoff="none", ideal_is_one=True, needs_judged=True, kernel=M.bpref,
        source=f"Buckley & Voorhees, SIGIR 2004; {TE} bpref; ir-measures Bpref; ranx bpref",
        notes=("n_r: judged non-relevant documents (0 <= grade < rel) above r; N: all judged non-relevant; "
               "unjudged and negative-grade documents are skipped",)),
    _id("gm_bpref", "bpref per query, aggregated by the geometric mean (values floored at 1e-5).",
        "exp(mean_q log max(bpref_q, 1e-5))", params=(REL,), cutoff="none", aggregate="gmean", ideal_is_one=True,
        needs_judged=True, kernel=M.bpref, source=f"{TE} gm_bpref"),
    _id("infap", "Inferred average precision: AP estimated from a random sample of judged documents.",
        "infAP = (1/R) sum_{r relevant retrieved at rank i} (1/i + (i-1)/i * (judged above / (i-1)) * "
        "(rel above + e) / (judged rel or non-rel above + 2e))", aliases=("infap", "inf_ap"), params=(REL,),
        cutoff="none", needs_judged=True, kernel=M.infap,
        source=f"Yilmaz & Aslam, CIKM 2006; {TE} infAP; ir-measures infAP",
        notes=("documents with a negative grade count as pooled but not judged (trec_eval), e = 1e-5",)),
    _id("iprec", "Interpolated precision at a recall level: the best precision at or after the rank where "
        "that share of R has been found (trec_eval 10's count: round(level R); cut=trec9: trec_eval 9's).",
        "IPrec@x = max_{j >= c} P@rank_j, c = round(x R)  (cut=trec9: floor(x R + 0.9))",
        aliases=("iprec", "iprec_at_recall"), params=(RECALL_LEVEL, REL, IPREC_CUT, JUDGED_ONLY), cutoff="none",
        at_param="recall", kernel=M.iprec, example_text="iprec@0.5", source=f"{TE10} iprec_at_recall; "
        "trec_eval 9 and pytrec_eval (cut=trec9); ir-measures IPrec (through pytrec_eval: cut=trec9)",
        notes=("trec_eval 10 counts round(level R) relevant documents, trec_eval 9 floor(level R + 0.9): "
               "a few values differ (e.g. R = 3 at level 0.1); the pytrec_eval profile uses cut=trec9",)),
    _id("iprec_11pt", "Mean of the interpolated precision at recall 0.0, 0.1, ..., 1.0 (or at the given levels).",
        "11pt = (1/11) sum_{x in 0, .1, ..., 1} IPrec@x", aliases=("11pt_avg", "eleven_pt_avg"),
        params=(REL, IPREC_CUT, IPREC_LEVELS, JUDGED_ONLY), cutoff="none", kernel=M.iprec_11pt,
        source=f"{TE10} 11pt_avg (trec_eval 9 and pytrec_eval: cut=trec9)"),
    _id("relative_precision", "Precision@k divided by the best precision possible at k: hits@k / min(k, R); "
        "without k, over the whole list.", "relP@k = hits@k / min(k, R)",
        aliases=("relative_p", "rel_p", "set_relative_p", "setrelp"), params=(REL, JUDGED_ONLY),
        ideal_is_one=True, kernel=M.relative_precision,
        source=f"{TE} relative_P, set_relative_P; ir-measures SetRelP, SetP(relative=True)"),
    _id("set_ap", "Unranked AP of the retrieved set: set precision times set recall.", "set_map = hits^2 / (|L| R)",
        aliases=("set_map", "setap"), params=(REL, JUDGED_ONLY), cutoff="none", kernel=M.set_ap,
        source=f"{TE} set_map; ir-measures SetAP"),
    _id("ndcg_rel", "Mean of nDCG taken at the rank of each relevant document (the whole list's nDCG for the "
        "relevant documents not retrieved).", "ndcg_rel = (1/n) sum_{relevant d} nDCG@rank(d)",
        params=(GAINS,), cutoff="none", defined="positive", needs_judged=True, kernel=M.ndcg_rel,
        source=f"{TE} ndcg_rel"),
    _id("rndcg", "Mean of nDCG taken where the ideal ranking's gain drops to a lower level.",
        "Rndcg = mean_{level changes b} nDCG@b", aliases=("rndcg",), params=(GAINS, REL), cutoff="none",
        needs_judged=True, kernel=M.rndcg, source=f"{TE} Rndcg"),
    _id("binary_gain", "Sum over retrieved relevant documents of 1 / log2(2 + non-relevant documents above), "
        "divided by R.", "binG = (1/R) sum_r 1 / log2(2 + nonrel_above(r))", aliases=("bing", "bin_g"),
        params=(REL, JUDGED_ONLY), cutoff="none", ideal_is_one=True, kernel=M.binary_gain,
        source=f"{TE} binG"),
    _id("normalized_gain", "trec_eval's G: gain discounted by how far the gain so far lags the ideal's cost, "
        "normalised by the ideal total gain.",
        "G = sum_i gain_i / log2(2 + cost_i - gain_so_far_i) / total ideal gain", aliases=("g",),
        params=(GAINS,), cutoff="none", defined="positive", needs_judged=True, kernel=M.normalized_gain,
        source=f"{TE} G"),
    _id("utility", "Set utility: weighted counts of relevant/non-relevant documents retrieved or not.",
        "utility = a hits + b (|L| - hits) + c (R - hits) + d (N_coll + hits - |L| - R)",
        params=(*UTILITY, REL), cutoff="none", defined="always", bounded=False, kernel=M.utility,
        source=f"{TE} utility"),
    _id("rbp", "Rank-biased precision: the expected gain per document of a user who goes on to the next "
        "document with probability p. Binary with rel; graded without (gains rescaled to [0, 1] per query, "
        "trec_eval 10).", "RBP = (1 - p) sum_i p^(i-1) gain_i",
        params=(P_TREC, REL_OPTIONAL, GAINS, JUDGED_ONLY), defined="always", needs_judged=True, kernel=M.rbp,
        source=f"Moffat & Zobel, TOIS 2008; {TE10} rbp; ir-measures RBP (cwl-eval); ranx rbp"),
    _id("rbp_resid", "How much RBP could still rise if every unjudged retrieved document were fully relevant, "
        "plus the weight beyond the list (0 when every retrieved document is judged, as trec_eval).",
        "resid = p^|L| + (1 - p) sum_{i unjudged} p^(i-1)", params=(P_TREC,), cutoff="none", defined="always",
        needs_judged=True, kernel=M.rbp_resid, source=f"Moffat & Zobel, TOIS 2008; {TE10} rbp_resid",
        notes=("negative grades count as unjudged (trec_eval)",)),
    _id("unj", "Share of the top k without a judgment (or with a negative grade); ranks past the end of the "
        "list count as judged (trec_eval 10).", "unj@k = |{unjudged in L@k}| / k", aliases=("unjudged",),
        cutoff="required", defined="always", needs_judged=True, kernel=M.unjudged_at, example_text="unj@10",
        source=f"{TE10} unj"),
    _id("judged", "Share of the top k documents that have a judgment (any grade): 1 - hole rate.",
        "Judged@k = |{judged in L@k}| / min(k, |L|)", aliases=("judged",), defined="always", needs_judged=True,
        kernel=M.judged_at, source="ir-measures Judged (OpenNIR)"),
    _id("accuracy", "Pairwise accuracy within the top k: the share of (relevant, non-relevant) pairs of "
        "retrieved documents ranked in the right order (undefined without a relevant one retrieved).",
        "1 - sum_r nonrel_above(r) / (nonrel@k * rel@k)", aliases=("accuracy",), params=(REL,),
        defined="value", kernel=C.accuracy, source="ir-measures Accuracy"),
    _id("err", "Expected reciprocal rank (Chapelle et al., CIKM 2009) with gdeval's gains: a document of grade "
        "g stops the user with probability (2^g - 1) / 2^4.",
        "ERR@k = sum_{i<=k} R_i / i prod_{j<i} (1 - R_j), R_g = (2^g - 1) / 16", aliases=("err",),
        defined="always", cutoff="required", kernel=C.err_gdeval,
        source="Chapelle et al., CIKM 2009; gdeval.pl (TREC Web track); ir-measures ERR"),
    _id("rbp_cwl", "RBP in C/W/L's graded form (cwl-eval): grades scaled to [0, 1] between min_rel and "
        "max_rel.", "(1 - p) sum_i p^(i-1) g_i", params=(P_PERSIST, MIN_REL, MAX_REL), cutoff="none",
        defined="always", kernel=C.rbp_cwl, source="cwl-eval"),
    _id("nerr8", "C/W/L ERR variant NERR_eq8 (Azzopardi et al. 2021): ERR@k with grades scaled to [0, 1].",
        "sum_i W_i g_i, C_i = 1 - g_i to rank k (W_i = prod_{j<i} C_j / sum_{n<=D} prod_{j<n} C_j); g: grades scaled to [0, 1]", aliases=("nerr_eq8",), params=(MIN_REL, MAX_REL),
        cutoff="required", defined="always", kernel=C.nerr8, source="Azzopardi, Mackenzie & Moffat, "
        "ICTIR 2021; cwl-eval NERReq8; ir-measures NERR8"),
    _id("nerr9", "C/W/L ERR variant NERR_eq9: the satisfaction of NERR8 with a user who stops at k.",
        "sum_i W_i g_i, C_i = i / (i + 1) (1 - g_i) to rank k (W_i = prod_{j<i} C_j / sum_{n<=D} prod_{j<n} C_j)", aliases=("nerr_eq9",), params=(MIN_REL, MAX_REL), cutoff="required",
        defined="always", kernel=C.nerr9, source="cwl-eval NERReq9; ir-measures NERR9"),
    _id("nerr10", "C/W/L ERR variant NERR_eq10: geometric patience p.",
        "sum_i W_i g_i, C_i = p (1 - g_i) (W_i = prod_{j<i} C_j / sum_{n<=D} prod_{j<n} C_j, D = 1000)",
        aliases=("nerr_eq10",), params=(Param("p", float, 0.9, minimum=0, maximum=1, open_minimum=True,
                                              open_maximum=True, doc="persistence"), MIN_REL, MAX_REL),
        cutoff="none", defined="always", kernel=C.nerr10, source="cwl-eval NERReq10; ir-measures NERR10"),
    _id("nerr11", "C/W/L ERR variant NERR_eq11: stopping once T gain is collected.",
        "sum_i W_i g_i, C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i) (W_i = prod_{j<i} C_j / sum_{n<=D} prod_{j<n} C_j, D = 1000)",
        aliases=("nerr_eq11",), params=(T_GOAL, MIN_REL, MAX_REL), cutoff="none", defined="always",
        kernel=C.nerr11, source="cwl-eval NERReq11; ir-measures NERR11"),
    _id("sdcg", "Scaled DCG@k (C/W/L): DCG@k with grades scaled to [0, 1], divided by the sum of the "
        "discounts to k.", "sum_{i<=k} g_i / log2(i + 1) / sum_{i<=k} 1 / log2(i + 1)",
        params=(MIN_REL, MAX_REL), cutoff="required", defined="always", kernel=C.sdcg,
        source="cwl-eval NDCG; ir-measures SDCG"),
    _id("inst", "INST (Moffat et al.): adaptive C/W/L measure whose user wants T gain.",
        "sum_i W_i g_i, C_i = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - sum_{j<=i} g_j (W_i = prod_{j<i} C_j / sum_{n<=D} prod_{j<n} C_j, D = 1000)",
        params=(T_GOAL, MIN_REL, MAX_REL), cutoff="none", defined="always", kernel=C.inst,
        source="Moffat, Bailey, Scholer & Thomas, TOIS 2017; cwl-eval INST; ir-measures INST"),
    _id("insq", "INSQ: INST's predecessor, without the gain-so-far term.",
        "sum_i W_i g_i, C_i = ((i + 2T - 1) / (i + 2T))^2 (W_i = prod_{j<i} C_j / sum_{n<=D} prod_{j<n} C_j, D = 1000)",
        params=(T_GOAL, MIN_REL, MAX_REL), cutoff="none", defined="always", kernel=C.insq,
        source="Moffat, Scholer & Thomas, ADCS 2012; cwl-eval INSQ; ir-measures INSQ"),
    _id("bpm", "Bejewelled player model (static): stops after T gain or k documents.",
        "sum_i W_i g_i, C_i = 1[sum_{j<=i} g_j < T and i < k] (W_i = prod_{j<i} C_j / sum_{n<=D} prod_{j<n} C_j)",
        params=(T_GOAL, MIN_REL, MAX_REL), cutoff="required", defined="always", kernel=C.bpm,
        source="Zhang et al., SIGIR 2017; cwl-eval BPM; ir-measures BPM"),
    _id("compat", "Compatibility (Clarke et al.): rank-biased overlap between the run and the closest ideal "
        "ranking, normalised by the best possible.",
        "RBO(L, I) / RBO(I, I), RBO(a, b) = sum_{d<=D} p^(d-1) |a@d & b@d| / d, D = max(|L|, |I|), I: the ideal "
        "ranking closest to L (normalize=False: / sum_{d<=D} p^(d-1))",
        params=(Param("p", float, 0.95, minimum=0, maximum=1, open_minimum=True, open_maximum=True,
                      doc="RBO persistence"), Param("normalize", bool, True, doc="divide by the ideal's RBO")),
        cutoff="none", defined="always", needs_judged=True, kernel=C.compat,
        source="Clarke, Vtyurina & Smucker, TOIS 2020; ir-measures Compat"),
    # -- diversity (subtopic judgments) ----------------------------------------------------------------
    Family("alpha_ndcg", "diversity", "alpha-nDCG@k (Clarke et al., SIGIR 2008): DCG whose gain for a subtopic "
           "decays by (1 - alpha) each time an earlier document covered it, normalised by a greedy ideal.",
           "sum_{i<=k} sum_s rel_s(d_i) (1 - alpha)^{c_s(i)} / log2(i + 1) / ideal", aliases=("alpha_ndcg",
                                                                                                "a_ndcg"),
           params=(ALPHA, REL), cutoff="required", kernel=D.alpha_ndcg,
           source="Clarke et al., SIGIR 2008; ndeval (TREC Web track); ir-measures alpha_nDCG (pyndeval)"),
    Family("err_ia", "diversity", "Intent-aware ERR@k (Chapelle et al.): ERR per subtopic (binary), averaged "
           "over the query's subtopics.", "(1/|S|) sum_s ERR_s@k", aliases=("err_ia",), params=(ALPHA, REL),
           cutoff="required", kernel=D.err_ia,
           source="Chapelle et al., CIKM 2009; ndeval; ir-measures ERR_IA (pyndeval)"),
    # -- issue 22 (irm): ndeval's other diversity measures (ir-measures' pyndeval provider) and ranx's rbp ----
    Family("alpha_dcg", "diversity", "alpha-DCG@k as ndeval reports it: alpha-nDCG's gain, divided by the "
           "'ideal ideal' (every subtopic covered at every rank) instead of a greedy ideal; undivided at k = 1.",
           "sum_{i<=k} gain_i / log2(i + 1) / sum_{i<=k} S (1 - alpha)^(i-1) / log2(i + 1)",
           aliases=("alpha_dcg", "a_dcg"), params=(ALPHA, REL), cutoff="required", defined="relevant",
           bounded=False, kernel=DN.alpha_dcg, source="Clarke et al., SIGIR 2008; ndeval; ir-measures alpha_DCG "
           "(pyndeval)"),
    Family("nerr_ia", "diversity", "Intent-aware ERR@k normalised by the ERR-IA of ndeval's greedy ideal "
           "ranking (0 when the top k gains nothing).", "sum_{i<=k} gain_i / i / (the same for the ideal)",
           aliases=("nerr_ia",), params=(ALPHA, REL), cutoff="required", kernel=DN.nerr_ia,
           source="Chapelle et al., CIKM 2009; ndeval; ir-measures nERR_IA (pyndeval)"),
    Family("p_ia", "diversity", "Intent-aware precision@k: relevant (document, subtopic) pairs in the top k "
           "over k times the query's subtopics.", "|{(d, s): d in L@k relevant to s}| / (k S)",
           aliases=("p_ia", "precision_ia"), params=(REL,), cutoff="required", kernel=DN.p_ia,
           source="Agrawal et al., WSDM 2009; ndeval P-IA; ir-measures P_IA (pyndeval)"),
    Family("strecall", "diversity", "Subtopic recall@k: share of the query's subtopics covered by the top k.",
           "|{s : some d in L@k relevant to s}| / S", aliases=("strecall", "st_recall", "subtopic_recall"),
           params=(REL,), cutoff="required", monotone_in_k=True, kernel=DN.strecall,
           source="Zhai, Cohen & Lafferty, SIGIR 2003; ndeval strec; ir-measures StRecall (pyndeval)"),
    Family("ap_ia", "diversity", "Intent-aware average precision: the mean over the query's subtopics of "
           "the AP of the whole list for that subtopic alone.", "(1/S) sum_s AP_s",
           aliases=("ap_ia", "map_ia"), params=(REL,), cutoff="none", kernel=DN.ap_ia,
           source="Agrawal et al., WSDM 2009; ndeval MAP-IA; ir-measures AP_IA (pyndeval)"),
    Family("nrbp", "diversity", "Novelty- and rank-biased precision over the whole list (Clarke et al., "
           "ICTIR 2009).", "(1 - (1 - alpha) beta) / S sum_i beta^(i-1) gain_i",
           aliases=("nrbp",), params=(ALPHA, NRBP_BETA, REL), cutoff="none", kernel=DN.nrbp,
           source="Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval NRBP; ir-measures NRBP (pyndeval)"),
    Family("nnrbp", "diversity", "NRBP divided by the NRBP of ndeval's greedy ideal ranking of every judged "
           "document.", "NRBP / NRBP(ideal)", aliases=("nnrbp",), params=(ALPHA, NRBP_BETA, REL), cutoff="none",
           defined="value", kernel=DN.nnrbp, source="ndeval nNRBP; ir-measures nNRBP (pyndeval)"),
    _id("rbp_ranx", "ranx's rank-biased precision: the raw grade is the gain (grades at or above rel), over the "
        "whole list; the ranx profile computes ranx's rbp.p with it.", "(1 - p) sum_i p^(i-1) grade_i",
        params=(P_TREC, REL), defined="always", bounded=False, kernel=PM.rbp_ranx, cutoff="none",
        source="ranx rbp"),
    _id("bpref_ranx", "ranx's bpref: as bpref, but a negative grade is a judged non-relevant document (trec_eval "
        "treats it as unjudged); the ranx profile computes ranx's bpref with it.",
        "(1/R) sum_{r relevant retrieved} (1 - min(n_r, R) / min(N, R)), N and n_r counting grades < rel",
        params=(REL,), cutoff="none", defined="always", needs_judged=True, kernel=PM.bpref_ranx, bounded=False,
        source="ranx bpref", notes=("NaN (as ranx: 0 / 0) when relevant documents are retrieved and no judged "
                                    "document is below rel; 0 without relevant judgments",)),
    # -- text measures (token overlap between retrieved texts and ground-truth texts) ----------------
    Family("token_precision", "text",
           "AutoRAG's token precision: for each retrieved passage in the top k, the best SQuAD-normalised token "
           "precision against any ground-truth text, averaged over the retrieved passages.",
           "mean_{i<=k} max_g |tok(d_i) & tok(g)| / |tok(d_i)|", kernel=T.token_precision, defined="always",
           source="AutoRAG retrieval token metrics (docs/profiles.md, autorag)"),
    Family("token_recall", "text",
           "AutoRAG's token recall: as token_precision, with the ground-truth text's token count as denominator.",
           "mean_{i<=k} max_g |tok(d_i) & tok(g)| / |tok(g)|", kernel=T.token_recall, defined="always",
           source="AutoRAG retrieval token metrics (docs/profiles.md, autorag)"),
    Family("token_f1", "text",
           "AutoRAG's token F1: as token_precision, with the harmonic mean of token precision and recall.",
           "mean_{i<=k} max_g F1(tok(d_i), tok(g))", kernel=T.token_f1, defined="always",
           source="AutoRAG retrieval token metrics (docs/profiles.md, autorag)"),
    # -- judge measures (ragrade judge: an LLM or an offline judge reads the texts) ----------------------
    Family("llm_context_precision", "judge",
           "Ranked precision of the chunks the judge finds useful for the reference answer: sum over useful "
           "ranks i<=k of precision@i / number of useful chunks in the top k.",
           "sum_{i<=k, useful_i} P@i / useful@k",
           aliases=("llm_context_precision_with_reference", "context_precision_llm", "contextual_precision"),
           needs=("reference",), source="Ragas LLMContextPrecisionWithReference; DeepEval contextual precision"),
    Family("llm_context_precision_noref", "judge",
           "As llm_context_precision, but each chunk is judged against the question (and the generated response, "
           "when the dataset has one) instead of a reference answer.",
           "sum_{i<=k, useful_i} P@i / useful@k",
           aliases=("llm_context_precision_without_reference", "context_precision_without_reference",
                    "context_precision_noref"),
           needs=("question",), source="Ragas LLMContextPrecisionWithoutReference"),
    Family("context_recall", "judge",
           "Statements of the reference answer that the retrieved context supports / all its statements.",
           "attributed statements / statements", aliases=("llm_context_recall", "contextual_recall"),
           cutoff="none", needs=("reference",), source="Ragas LLMContextRecall; DeepEval contextual recall"),
    Family("context_entities_recall", "judge",
           "Entities of the reference found among the entities of the retrieved context / reference entities.",
           "|entities(reference) & entities(context)| / |entities(reference)|",
           aliases=("context_entity_recall", "entity_recall"), cutoff="none", needs=("reference",),
           source="Ragas ContextEntityRecall"),
    Family("context_relevancy", "judge",
           "Statements of the retrieved context that help answer the question / all its statements.",
           "relevant statements / statements", aliases=("context_relevance", "contextual_relevancy"),
           cutoff="none", needs=("question",), source="Ragas ContextRelevancy (older releases); DeepEval"),
)


# -- trec_eval 10's measures that trec_eval 9 lacks (the treceval work: issue 24) -------------------------
T10 = _Kernels("ragrade.kernels.trec10")
REGISTRY += (
    _id("yaap", "Yet another average precision (Robertson, ECIR 2012): AP's sum of precisions S, smoothed on a log "
        "scale so that it averages better across queries.", "yaap = log((1 + S) / (1 + R - S)), "
        "S = sum_{relevant d_i} P@i", params=(REL, JUDGED_ONLY), cutoff="none", defined="always", bounded=False,
        kernel=T10.yaap, source=f"Robertson, ECIR 2012; {TE10} yaap"),
    _id("ideal_dcg", "DCG of the ideal ranking: every positive grade of the ground truth, highest first (the "
        "denominator of ndcg).", "IDCG@k = sum_{i<=k} gain(ideal_i) / log2(i + 1)", aliases=("idcg",),
        params=(GAIN, NDCG_REL, GAINS), defined="positive", bounded=False, monotone_in_k=True,
        kernel=T10.ideal_dcg, source=f"{TE10} ideal_dcg"),
    _id("grade_at", "The judged grade of the document at rank k (NaN when it has none or the list is shorter "
        "than k): trec_eval's relstring, one rank at a time.",
        "grade_at@k = grade(d_k)", cutoff="required", defined="always", bounded=False, needs_judged=True,
        kernel=T10.grade_at, example_text="grade_at@1", source=f"{TE10} relstring (its k-th character)"),
)


# -- AP@k over min(k, R), the MAP@k of Spark MLlib and of recommender libraries (the misc work: issue 21) ---
REGISTRY += (
    _id("capped_ap", "Average precision at k divided by min(k, R) instead of R, so that a perfect top k scores 1 "
        "even when more than k units are relevant (plain ap@k cannot exceed k / R); its mean is the MAP@k of "
        "Spark MLlib and of recommender-system libraries.",
        "capped_AP@k = (1 / min(k, R)) sum_{i<=k, d_i relevant} P@i", aliases=("ap_capped", "capped_map"),
        params=(REL, JUDGED_ONLY), cutoff="required", ideal_is_one=True, mean_name="capped MAP",
        kernel=K.capped_ap, source="Spark MLlib RankingMetrics.meanAveragePrecisionAt and RankingEvaluator "
        "meanAveragePrecisionAtK; Kaggle's and recommender libraries' MAP@k"),
)


# -- span measures: retrieved chunks against gold character spans (the spans work: issue 35; docs/spans.md) ----
SP = _Kernels("ragrade.kernels.spans")
SPAN_TOKENIZER = Param("tokenizer", str, "chars",
                       choices=("chars", "whitespace", "tiktoken", "cl100k_base", "o200k_base", "p50k_base",
                                "r50k_base"),
                       doc="what a length counts: characters (code points), whitespace-separated words, or tiktoken "
                           "tokens (tiktoken = cl100k_base); a length is the number of tokens starting inside")
SPAN_RETRIEVE = Param("retrieve", int, None, minimum=-1, maximum=-1,
                      doc="-1: each query reads as many chunks as the chunking has chunks holding part of its gold "
                          "(Chroma's retrieve=-1); @k then caps it (the chroma profile caps at 20 without @k)")
_SPAN_SOURCE = ("Chroma chunking_evaluation (union of intersections); LegalBench-RAG run_benchmark (profile "
                "legalbench_rag); docs/spans.md")
REGISTRY += (
    Family("span_recall", "span", "Share of the gold characters (or tokens) that the top k chunks cover: "
           "overlapping chunks and gold spans are unions.", "|C@k ∩ R| / |R|",
           aliases=("span_recall", "char_recall", "token_level_recall"), params=(SPAN_RETRIEVE, SPAN_TOKENIZER),
           defined="value", monotone_in_k=True, ideal_is_one=True, kernel=SP.span_recall, example_text="span_recall@5",
           source=_SPAN_SOURCE,
           notes=("chroma profile: / Σ|r| (gold spans summed); legalbench_rag: Σ_c Σ_r |c ∩ r| / Σ|r|, which "
                  "exceeds 1 when retrieved snippets overlap",)),
    Family("span_precision", "span", "Share of the top k chunks' characters (or tokens) that are gold; 0 when "
           "nothing is retrieved.", "|C@k ∩ R| / |C@k|", aliases=("span_precision", "char_precision",
                                                                 "token_level_precision"),
           params=(SPAN_RETRIEVE, SPAN_TOKENIZER), defined="value", kernel=SP.span_precision,
           example_text="span_precision@5", source=_SPAN_SOURCE,
           notes=("chroma profile: / Σ|c| over the top k (chunks listed twice, overlapping or of other documents "
                  "count every time; NaN over an empty top k); legalbench_rag: Σ_c Σ_r |c ∩ r| / Σ|c|",)),
    Family("span_iou", "span", "Intersection over union of the top k chunks and the gold, in characters (or "
           "tokens).", "|C@k ∩ R| / |C@k ∪ R|", aliases=("span_iou", "char_iou", "token_level_iou"),
           params=(SPAN_RETRIEVE, SPAN_TOKENIZER), defined="value", kernel=SP.span_iou, example_text="span_iou@5",
           source=_SPAN_SOURCE,
           notes=("chroma profile: |C@k ∩ R| / (Σ|c| + Σ_r |r \\ C@k|)",)),
    Family("span_precision_omega", "span", "The IoU of every chunk of the chunking that overlaps the gold: what "
           "span_iou would be with perfect retrieval (the chunking's ceiling; no cutoff).",
           "|C_R ∩ R| / |C_R ∪ R|, C_R = the chunks overlapping R",
           aliases=("span_precision_omega", "precision_omega"), params=(SPAN_TOKENIZER,),
           cutoff="none", defined="value", kernel=SP.span_precision_omega, source=_SPAN_SOURCE,
           notes=("chroma profile: chunks that only touch a gold span count among C_R (Chroma's start <= end)",)),
)


# -- nugget measures: how much of a query's answer key the retrieved context covers (the nuggets work: issue 38) --
NG = _Kernels("ragrade.kernels.nuggets")
NUGGET_WEIGHT = Param("weight", str, "all", choices=("all", "vital", "weighted"),
                      doc="which nuggets count: all (each 1), vital (vital 1, okay 0), weighted (vital 1, okay 0.5, "
                          "without open-rag-eval's floors)")
NUGGET_STRICT = Param("strict", bool, False, doc="count only full support (partial support counts 0, not 0.5)")
NUGGET_CONTEXT = Param("context", str, "best", choices=("best", "joined"),
                       doc="best: a nugget's support is the best single passage's in the top k; joined: the support "
                           "of the top k passages concatenated (assigned as one text, keyed by the top-k list)")
REGISTRY += (
    Family("nugget_recall", "nugget", "Weighted share of the query's nuggets (atomic facts of a good answer, "
           "TREC RAG's AutoNuggetizer) that the top k supports: support 1, partial support 0.5 (0 when strict), "
           "no support or no assignment 0. NaN for a query without nuggets (left out of the mean).",
           "sum_n w_n max_{d in L@k} a(n, d) / sum_n w_n", aliases=("nugget_recall", "nuggetrecall"),
           params=(NUGGET_WEIGHT, NUGGET_STRICT, NUGGET_CONTEXT), cutoff="required", defined="value",
           kernel=NG.nugget_recall, example_text="nugget_recall(weight=vital,strict=true)@5",
           source="TREC 2024/2025 RAG track nugget evaluation (AutoNuggetizer, Pradeep et al. 2024) applied to "
                  "retrieved passages; docs/nuggets.md"),
    Family("nugget_precision", "nugget", "Share of the top k ranks whose passage supports at least one of the "
           "query's nuggets (partial support counts unless strict); divides by k as P@k. NaN for a query without "
           "nuggets.", "|{d in L@k : some n with a(n, d) > 0}| / k", aliases=("nugget_precision", "nuggetprecision"),
           params=(NUGGET_STRICT,), cutoff="required", defined="value", kernel=NG.nugget_precision,
           source="docs/nuggets.md (issue 38)"),
)


# -- measures of several retrieval calls made for one question: agents, conversations (traces, issue 37) ------
TJ = _Kernels("ragrade.kernels.trajectory")
LOG_B = Param("b", float, 2.0, minimum=1, open_minimum=True,
              doc="base of the rank discount within a call: gain / max(1, log_b rank)")
LOG_BQ = Param("bq", float, 4.0, minimum=1, open_minimum=True,
               doc="base of the discount across calls: the i-th call's DCG / (1 + log_bq i)")
TRAJ = "docs/traces.md"
REGISTRY += (
    Family("trajectory_recall", "trajectory", "Evidence recall of a trajectory: the share of the relevant units "
           "(documents, or hops and groups) that any of its retrieval calls returned (the top k of each call "
           "with a cutoff).", "|relevant units in L_1@k u ... u L_c@k| / R",
           aliases=("evidence_recall", "union_recall"), params=(REL,), monotone_in_k=True, ideal_is_one=True,
           kernel=TJ.trajectory_recall, example_text="trajectory_recall",
           source=f"BrowseComp-Plus (evidence recall over every search call); {TRAJ}"),
    Family("calls_to_first_relevant", "trajectory", "The number of the first call of a trajectory that returned a "
           "relevant unit (1: the first call did); not counted where no call did.",
           "min {i : L_i@k holds a relevant unit}", aliases=("calls_to_first_hit",), params=(REL,),
           defined="value", bounded=False, kernel=TJ.calls_to_first_relevant,
           example_text="calls_to_first_relevant", source=TRAJ,
           notes=("NaN (not counted in the mean) where no call found a relevant unit: read it next to "
                  "trajectory_recall, which counts those trajectories as 0",)),
    Family("redundancy", "trajectory", "Share of the documents a trajectory retrieved that an earlier call of "
           "the same trajectory had already returned (no judgments needed).",
           "|{rows of L_i@k whose document is in some L_j, j < i}| / |rows|", defined="value",
           kernel=TJ.redundancy, example_text="redundancy", source=TRAJ,
           notes=("NaN (not counted) for a trajectory that retrieved nothing; a document repeated within one "
                  "call is not redundant",)),
    Family("hop_success", "trajectory", "1 when every hop of a multi-hop question (every relevant unit: give "
           "the hops as a qrels column, ragrade traces --hops COLUMN) was found by some call, else 0.",
           "1[every relevant unit is in L_1@k u ... u L_c@k]", aliases=("all_hops",), params=(REL,),
           monotone_in_k=True, ideal_is_one=True, kernel=TJ.hop_success, example_text="hop_success", source=TRAJ),
    Family("session_dcg", "trajectory", "Session DCG (sDCG): each call's DCG (gains discounted by max(1, log_b rank)) discounted "
           "by 1 + log_bq of the call's number; a document gains only where the trajectory first returns it.",
           "sum_i sum_{j<=k} gain(d_ij) 1[d_ij first seen] / max(1, log_b j) / (1 + log_bq i)",
           aliases=("sessiondcg", "sdcg_session"), params=(LOG_B, LOG_BQ), defined="positive", bounded=False,
           monotone_in_k=True, kernel=TJ.session_dcg, example_text="session_dcg@10",
           source=f"Järvelin, Price, Delcambre & Nielsen, ECIR 2008 (sDCG; b = 2, bq = 4 as there); {TRAJ}",
           notes=("a document returned again by a later call (or twice in one list) gains nothing the second "
                  "time: ragrade's rule, stated in docs/traces.md",
                  "spelt session_dcg: the name sdcg is C/W/L's scaled DCG (ir-measures' SDCG), an id measure",)),
)


def _index(families: tuple[Family, ...]) -> dict[str, Family]:
    out: dict[str, Family] = {}
    for fam in families:
        for alias in fam.names:
            key = alias.lower()
            if out.get(key, fam) is not fam:  # pragma: no cover - registry invariant, tested
                raise RuntimeError(f"metric name {alias!r} is defined twice")
            out[key] = fam
    return out


_BY_NAME = _index(REGISTRY)


def lookup(name: str) -> Family:
    """The family of a metric name or alias (case-insensitive); :class:`UnknownNameError` with the
    nearest names otherwise."""
    fam = _BY_NAME.get(name.strip().lower())
    if fam is None:
        raise UnknownNameError("metric", name, _BY_NAME, hint="Run `ragrade metrics` for the list.")
    return fam


def find(name: str) -> Family | None:
    """As :func:`lookup`, but None for an unknown name."""
    return _BY_NAME.get(name.strip().lower())


def all_names() -> list[str]:
    """Every accepted name and alias, lower case."""
    return sorted(_BY_NAME)


def families(kind: Kind | None = None) -> Iterator[Family]:
    """The families of one kind (all when ``kind`` is None), in registry order."""
    return (f for f in REGISTRY if kind is None or f.kind == kind)


#: The id-based families (the ones the engine's kernels compute from relevance judgments).
ID_FAMILIES: tuple[Family, ...] = tuple(families("id"))


# -- other tools' spellings ----------------------------------------------------------------------------------

#: Names that stand for a family with fixed parameters (ranx's and ir-measures' spellings).
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "ndcg_burges": ("ndcg", {"gain": "exp"}),
    "dcg_burges": ("dcg", {"gain": "exp"}),
    "setrelp": ("relative_precision", {}),
}

OFFICIAL_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecName:
    """One measure name of trec_eval (case-sensitive, as trec_eval spells it) and what it means here.

    ``sets`` is what trec_eval's dotted parameters (``P.5,10``) set: ``"k"`` (cutoffs), a parameter name
    (one metric per value: ``iprec_at_recall.0.5`` sets ``recall``), ``"params"`` (all the values set one
    metric's parameters in ``order``: ``utility.1,-1,0,0``), ``"gains"`` (``ndcg.1=3,2=9``),
    ``"named"`` (``rbp.p=0.5``) or None (no parameters). ``values`` are trec_eval's defaults: the bare name
    is the family at each of them (``P`` is P_5 ... P_1000). ``fixed`` parameters always apply (trec_eval's
    rbp persistence 0.9). ``label`` formats an output name from a value (``P_{}``)."""

    name: str
    family: str
    sets: str | None = None
    values: tuple[Any, ...] = ()
    label: str = ""
    order: tuple[str, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    version: int = 9  # the trec_eval version that has it (10: rbp, rbp_resid, unj, dcg)
    in_all_trec: bool = True


_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

TREC: tuple[TrecName, ...] = (
    TrecName("num_q", "num_q"),
    TrecName("num_ret", "num_ret"),
    TrecName("num_rel", "num_rel"),
    TrecName("num_rel_ret", "num_rel_ret"),
    TrecName("map", "ap"),
    TrecName("gm_map", "gm_map"),
    TrecName("Rprec", "r_precision"),
    TrecName("bpref", "bpref"),
    TrecName("recip_rank", "rr"),
    TrecName("iprec_at_recall", "iprec", "recall", _ELEVEN, "iprec_at_recall_{:.2f}"),
    TrecName("P", "precision", "k", OFFICIAL_CUTOFFS, "P_{}"),
    TrecName("recall", "recall", "k", OFFICIAL_CUTOFFS, "recall_{}"),
    TrecName("unj", "unj", "k", (5, 10, 20), "unj_{}", version=10),
    TrecName("rbp", "rbp", "named", fixed=(("p", 0.9),), version=10),
    TrecName("rbp_resid", "rbp_resid", "named", fixed=(("p", 0.9),), version=10),
    TrecName("infAP", "infap"),
    TrecName("gm_bpref", "gm_bpref"),
    TrecName("utility", "utility", "params", order=("a", "b", "c", "d")),
    TrecName("11pt_avg", "iprec_11pt", "levels"),
    TrecName("ndcg", "ndcg", "gains"),
    TrecName("relative_P", "relative_precision", "k", OFFICIAL_CUTOFFS, "relative_P_{}"),
    TrecName("Rprec_mult", "r_precision", "mult", _MULTS, "Rprec_mult_{:.2f}"),
    TrecName("success", "hit_rate", "k", (1, 5, 10), "success_{}"),
    TrecName("map_cut", "ap", "k", OFFICIAL_CUTOFFS, "map_cut_{}"),
    TrecName("ndcg_cut", "ndcg", "k", OFFICIAL_CUTOFFS, "ndcg_cut_{}"),
    TrecName("ndcg_rel", "ndcg_rel", "gains"),
    TrecName("Rndcg", "rndcg", "gains"),
    TrecName("binG", "binary_gain"),
    TrecName("G", "normalized_gain", "gains"),
    TrecName("set_P", "precision"),
    TrecName("set_recall", "recall"),
    TrecName("set_relative_P", "relative_precision"),
    TrecName("set_map", "set_ap"),
    TrecName("set_F", "f1", "params", order=("beta",)),
    TrecName("num_nonrel_judged_ret", "num_nonrel_judged_ret"),
    TrecName("dcg", "dcg", "gains", version=10, in_all_trec=False),
    # (treceval, issue 24)
    TrecName("ideal_dcg", "ideal_dcg", "gains", version=10, in_all_trec=False),
    TrecName("yaap", "yaap", version=10, in_all_trec=False),
)

#: trec_eval's nicknames for sets of measures (``-m all_trec``), in its order.
TREC_NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                 "iprec_at_recall", "P"),
    "all_trec": ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                 "iprec_at_recall", "P", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref", "utility",
                 "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut", "ndcg_cut", "ndcg_rel",
                 "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "set": ("num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall", "set_relative_P",
            "set_map", "set_F"),
}

TREC_BY_NAME: dict[str, TrecName] = {t.name: t for t in TREC}

