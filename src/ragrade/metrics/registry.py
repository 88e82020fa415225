"""The metric registry: every metric family ragrade knows, defined once.

A :class:`Family` owns everything about one measure: its canonical name and aliases (ragrade's own and
the spellings of trec_eval, ir-measures and ranx), its parameters with their constraints, its cutoff
rule, its definedness rule (which queries it is undefined on, e.g. ``R = 0``), how per-query values
aggregate, its kernels and its documentation. The parser (:mod:`ragrade.metrics.parser`), ``ragrade
metrics``, ``docs/metrics.md`` and the parametrised tests all read :data:`REGISTRY`.

Three kinds of family share the registry and the parser:

* ``"id"``: computed from relevance judgments by the engine's kernels (:mod:`ragrade.kernels.metrics`);
  list profiles use the family's ``list_kernel`` (:mod:`ragrade.kernels.profile_kernels`).
* ``"text"``: computed from the texts of retrieved items and ground truth (token overlap,
  :mod:`ragrade.kernels.text`).
* ``"judge"``: a judge (LLM or offline) reads the texts (``ragrade judge``, :mod:`ragrade.judges`).

Adding a metric: one :class:`Family` here, its kernel, and its tests (``docs/architecture.md`` has the
checklist).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ragrade.errors import UnknownNameError
from ragrade.kernels import metrics as K
from ragrade.kernels import profile_kernels as PK
from ragrade.kernels import text as T
from ragrade.metrics.params import GAIN, NDCG_REL, REL, Param

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

Kind = Literal["id", "text", "judge"]
Cutoff = Literal["optional", "none"]
#: Which queries a family is defined on: ``"relevant"``: R > 0 at the metric's relevance level;
#: ``"positive"``: at least one positive grade (DCG-type measures without ``rel``); ``"always"``.
Definedness = Literal["relevant", "positive", "always"]
Aggregate = Literal["mean"]


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
    source: str = ""
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
        return self.name if self.cutoff == "none" else f"{self.name}@10"


def _id(name: str, summary: str, formula: str, *, kernel: Callable[..., Any],
        list_kernel: Callable[..., Any] | None = None, **kw: Any) -> Family:
    return Family(name, "id", summary, formula, kernel=kernel, list_kernel=list_kernel, **kw)


REGISTRY: tuple[Family, ...] = (
    # -- id-based measures (default convention: trec_eval's formulas) --------------------------------
    _id("hits", "Number of relevant units retrieved in the top k.", "hits@k = |{relevant units in L@k}|",
        aliases=("hits", "num_rel_ret"), params=(REL,), bounded=False, monotone_in_k=True, kernel=K.hits),
    _id("hit_rate", "1 if at least one relevant unit is in the top k, else 0.", "hit_rate@k = 1[hits@k > 0]",
        aliases=("hit_rate", "hitrate", "success", "hr"), params=(REL,), monotone_in_k=True, ideal_is_one=True,
        kernel=K.hit_rate, list_kernel=PK.hit_rate),
    _id("precision", "Fraction of the top k that is relevant (divides by k even if fewer were retrieved).",
        "P@k = hits@k / k   (k = None: / len(L))", aliases=("precision", "p"), params=(REL,),
        kernel=K.precision, list_kernel=PK.precision),
    _id("recall", "Fraction of the relevant units found in the top k.", "recall@k = hits@k / R",
        aliases=("recall", "r"), params=(REL,), monotone_in_k=True, ideal_is_one=True,
        kernel=K.recall, list_kernel=PK.recall),
    _id("f1", "Harmonic mean of precision@k and recall@k (0 when both are 0).", "F1@k = 2 P R / (P + R)",
        aliases=("f1", "f1_score"), params=(REL,), kernel=K.f1, list_kernel=PK.f1),
    _id("recall_all", "1 if every relevant unit is in the top k, else 0.", "recall_all@k = 1[hits@k = R]",
        aliases=("recall_all", "recallall", "all_recall"), params=(REL,), monotone_in_k=True, ideal_is_one=True,
        kernel=K.recall_all, list_kernel=PK.recall_all),
    _id("r_precision", "Precision at rank R, the number of relevant units.", "R-prec = hits@R / R",
        aliases=("r_precision", "rprec", "r-precision", "rprecision"), params=(REL,), cutoff="none",
        ideal_is_one=True, kernel=K.r_precision),
    _id("rr", "Reciprocal rank of the first relevant unit in the top k (0 if none); its mean is MRR.",
        "RR@k = 1 / rank of first relevant in L@k", aliases=("rr", "mrr", "recip_rank", "reciprocal_rank"),
        params=(REL,), monotone_in_k=True, ideal_is_one=True, mean_name="MRR", kernel=K.rr, list_kernel=PK.rr),
    _id("ap", "Average precision: sum of precision@i over relevant ranks i <= k, divided by R; its mean is MAP.",
        "AP@k = (1/R) sum_{i<=k, d_i relevant} P@i", aliases=("ap", "map", "average_precision", "map_cut"),
        params=(REL,), monotone_in_k=True, ideal_is_one=True, mean_name="MAP", kernel=K.ap, list_kernel=PK.ap),
    _id("dcg", "Discounted cumulative gain of the top k.", "DCG@k = sum_{i<=k} gain(d_i) / log2(i + 1)",
        aliases=("dcg",), params=(GAIN, NDCG_REL), defined="positive", bounded=False, monotone_in_k=True,
        kernel=K.dcg),
    _id("ndcg", "DCG@k divided by the DCG of the ideal ranking of all judged grades, cut at k "
                "(trec_eval ndcg_cut).", "nDCG@k = DCG@k / IDCG@k", aliases=("ndcg", "ndcg_cut"),
        params=(GAIN, NDCG_REL), defined="positive", ideal_is_one=True, kernel=K.ndcg, list_kernel=PK.ndcg),
    _id("context_precision",
        "Ragas-style weighted precision from relevance judgments (no judge): sum of precision@i over relevant "
        "ranks i <= k, divided by the relevant items in the top k (0 if none). The LLM-judged metric is "
        "llm_context_precision.",
        "CP@k = sum_{i<=k, d_i relevant} P@i / hits@k",
        aliases=("context_precision", "ctx_precision", "id_context_precision", "context_precision_id"),
        params=(REL,), kernel=K.context_precision, list_kernel=PK.context_precision),
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
