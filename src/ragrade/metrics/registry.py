"""The metric registry: the single source of truth for names, aliases, parameters and definitions.

The parser (:mod:`ragrade.metrics.parser`), ``ragrade metrics`` (CLI listing), the generated docs
(``docs/metrics.md``) and the parametrised tests all read :data:`REGISTRY`. Adding a metric means adding
one :class:`MetricDef` here and one kernel in :mod:`ragrade.kernels.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import MetricError


@dataclass(frozen=True)
class ParamSpec:
    """One parameter a metric accepts, with its constraint (used for parsing, errors and tests)."""

    name: str
    kind: type  # int, float or str
    default: Any
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    doc: str = ""

    def coerce(self, metric: str, raw: Any) -> Any:
        """Convert ``raw`` (a string from the parser, or a Python value) and validate it."""
        value = raw
        if isinstance(raw, str) and self.kind is not str:
            try:
                value = self.kind(raw) if self.kind is float else int(raw)
            except ValueError:
                raise MetricError(
                    f"{metric}: parameter {self.name!r} must be {self.kind.__name__}, got {raw!r}"
                ) from None
        if self.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise MetricError(f"{metric}: parameter {self.name!r} must be an integer, got {raw!r}")
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.kind is str:
            value = str(value).lower()
        if self.choices is not None and value not in self.choices:
            opts = ", ".join(map(str, self.choices))
            raise MetricError(f"{metric}: parameter {self.name!r} must be one of {opts}; got {raw!r}")
        if self.minimum is not None and value < self.minimum:
            raise MetricError(f"{metric}: parameter {self.name!r} must be >= {self.minimum:g}; got {raw!r}")
        return value


REL = ParamSpec(
    "rel", int, 1, minimum=1, doc="minimum grade counted as relevant (trec_eval's relevance_level)"
)
NDCG_REL = ParamSpec(
    "rel",
    int,
    None,
    minimum=1,
    doc="if set, grades below it are dropped from both DCG and the ideal list (ranx-style); "
    "by default every positive grade counts, as in trec_eval",
)
GAIN = ParamSpec("gain", str, "linear", choices=("linear", "exp"), doc="gain of a grade g: g or 2^g - 1")


@dataclass(frozen=True)
class MetricDef:
    """What a metric is: its canonical name, aliases, parameters and documentation."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    formula: str
    params: tuple[ParamSpec, ...] = ()
    cutoff: str = "optional"  # "optional" | "none" (a cutoff is an error)
    bounded: bool = True  # value always in [0, 1]
    monotone_in_k: bool = False  # non-decreasing in k
    ideal_is_one: bool = False  # the ideal ranking scores 1
    mean_name: str | None = None  # what the mean over queries is usually called (MAP, MRR)
    notes: tuple[str, ...] = field(default=())

    def param(self, name: str) -> ParamSpec | None:
        for p in self.params:
            if p.name == name:
                return p
        return None


REGISTRY: tuple[MetricDef, ...] = (
    MetricDef(
        "hits",
        ("hits", "num_rel_ret"),
        "Number of relevant units retrieved in the top k.",
        "hits@k = |{relevant units in L@k}|",
        (REL,),
        bounded=False,
        monotone_in_k=True,
    ),
    MetricDef(
        "hit_rate",
        ("hit_rate", "hitrate", "success", "hr"),
        "1 if at least one relevant unit is in the top k, else 0.",
        "hit_rate@k = 1[hits@k > 0]",
        (REL,),
        monotone_in_k=True,
        ideal_is_one=True,
    ),
    MetricDef(
        "precision",
        ("precision", "p"),
        "Fraction of the top k that is relevant (divides by k even if fewer were retrieved).",
        "P@k = hits@k / k   (k = None: / len(L))",
        (REL,),
    ),
    MetricDef(
        "recall",
        ("recall", "r"),
        "Fraction of the relevant units found in the top k.",
        "recall@k = hits@k / R",
        (REL,),
        monotone_in_k=True,
        ideal_is_one=True,
    ),
    MetricDef(
        "f1",
        ("f1", "f1_score"),
        "Harmonic mean of precision@k and recall@k (0 when both are 0).",
        "F1@k = 2 P R / (P + R)",
        (REL,),
    ),
    MetricDef(
        "recall_all",
        ("recall_all", "recallall", "all_recall"),
        "1 if every relevant unit is in the top k, else 0.",
        "recall_all@k = 1[hits@k = R]",
        (REL,),
        monotone_in_k=True,
        ideal_is_one=True,
    ),
    MetricDef(
        "r_precision",
        ("r_precision", "rprec", "r-precision", "rprecision"),
        "Precision at rank R, the number of relevant units.",
        "R-prec = hits@R / R",
        (REL,),
        cutoff="none",
        ideal_is_one=True,
    ),
    MetricDef(
        "rr",
        ("rr", "mrr", "recip_rank", "reciprocal_rank"),
        "Reciprocal rank of the first relevant unit in the top k (0 if none); its mean is MRR.",
        "RR@k = 1 / rank of first relevant in L@k",
        (REL,),
        monotone_in_k=True,
        ideal_is_one=True,
        mean_name="MRR",
    ),
    MetricDef(
        "ap",
        ("ap", "map", "average_precision", "map_cut"),
        "Average precision: sum of precision@i over relevant ranks i <= k, divided by R; its mean is MAP.",
        "AP@k = (1/R) sum_{i<=k, d_i relevant} P@i",
        (REL,),
        monotone_in_k=True,
        ideal_is_one=True,
        mean_name="MAP",
    ),
    MetricDef(
        "dcg",
        ("dcg",),
        "Discounted cumulative gain of the top k.",
        "DCG@k = sum_{i<=k} gain(d_i) / log2(i + 1)",
        (GAIN, NDCG_REL),
        bounded=False,
        monotone_in_k=True,
    ),
    MetricDef(
        "ndcg",
        ("ndcg", "ndcg_cut"),
        "DCG@k divided by the DCG of the ideal ranking of all judged grades, cut at k (trec_eval ndcg_cut).",
        "nDCG@k = DCG@k / IDCG@k",
        (GAIN, NDCG_REL),
        ideal_is_one=True,
    ),
    MetricDef(
        "context_precision",
        ("context_precision", "ctx_precision"),
        "Ragas-style weighted precision: sum of precision@i over relevant ranks i <= k, "
        "divided by the relevant items in the top k (0 if none).",
        "CP@k = sum_{i<=k, d_i relevant} P@i / hits@k",
        (REL,),
    ),
)

_BY_ALIAS: dict[str, MetricDef] = {}
for _d in REGISTRY:
    for _a in (_d.name, *_d.aliases):
        key = _a.lower()
        if key in _BY_ALIAS and _BY_ALIAS[key] is not _d:  # pragma: no cover - registry invariant
            raise RuntimeError(f"alias {_a!r} defined twice")
        _BY_ALIAS[key] = _d


def lookup(name: str) -> MetricDef:
    """Return the definition for a metric name or alias (case-insensitive); suggests near names."""
    d = _BY_ALIAS.get(name.strip().lower())
    if d is not None:
        return d
    import difflib

    close = difflib.get_close_matches(name.strip().lower(), list(_BY_ALIAS), n=3, cutoff=0.5)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise MetricError(f"unknown metric {name!r}.{hint} Run `ragrade metrics` for the list.")


def all_names() -> list[str]:
    """Every accepted name and alias, lower case."""
    return sorted(_BY_ALIAS)
