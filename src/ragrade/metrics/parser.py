"""Metric value objects and the one metric-string parser (every family of the registry).

Grammar (case-insensitive names, spaces ignored)::

    metric   := NAME [ "(" param ("," param)* ")" ] [ "@" cutoffs ]
    param    := KEY "=" VALUE
    cutoffs  := INT | "[" INT ("," INT)* "]"

``ndcg@10``, ``ndcg(gain=exp)@10``, ``P(rel=2)@5``, ``recall@[1,5,10]`` (three metrics), ``rr``,
``r_precision``, ``token_f1@5``, ``llm_context_precision@3``. trec_eval-style names with an underscore
cutoff (``ndcg_cut_10``, ``P_5``, ``recall_100``, ``map_cut_100``, ``success_10``) are accepted too.

``str(metric)`` is canonical (registry name, non-default parameters in registry order, cutoff) and
parses back to an equal metric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ragrade.errors import MetricError
from ragrade.metrics.registry import Family, find, lookup

_RE = re.compile(
    r"""^\s*(?P<name>[A-Za-z][A-Za-z0-9_\-]*)\s*
        (?:\(\s*(?P<params>[^)]*)\)\s*)?
        (?:@\s*(?P<cut>\[[^\]]*\]|[^\s]+)\s*)?$""",
    re.VERBOSE,
)
_TREC_SUFFIX = re.compile(r"^(?P<base>[A-Za-z][A-Za-z_\-]*?)_(?P<k>\d+)$")


@dataclass(frozen=True, order=True)
class Metric:
    """One metric at one cutoff with its parameters: immutable and hashable.

    ``name`` is the family's canonical name, ``k`` the cutoff (None: the whole list) and ``params`` the
    parameters that differ from the family's defaults, in registry order, so that equal metrics compare
    equal however they were written.

    >>> m = Metric.parse("ndcg(gain=exp)@10")
    >>> m.name, m.k, m.get("gain")
    ('ndcg', 10, 'exp')
    >>> str(m)
    'ndcg(gain=exp)@10'
    >>> Metric.parse(str(m)) == m
    True
    """

    name: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def family(self) -> Family:
        """The registry entry of this metric."""
        return lookup(self.name)

    @property
    def definition(self) -> Family:
        """Alias of :attr:`family`."""
        return self.family

    @property
    def kind(self) -> str:
        """``"id"``, ``"text"`` or ``"judge"`` (see :mod:`ragrade.metrics.registry`)."""
        return self.family.kind

    def get(self, param: str) -> Any:
        """The value of a parameter (its registry default when not set)."""
        for key, value in self.params:
            if key == param:
                return value
        spec = self.family.param(param)
        if spec is None:
            raise MetricError(f"{self.name} has no parameter {param!r}")
        return spec.default

    @property
    def rel(self) -> int:
        """Relevance threshold used for the binary notion of relevance (1 unless given)."""
        value = self.get("rel")
        return 1 if value is None else int(value)

    def __str__(self) -> str:
        out = self.name
        if self.params:
            out += "(" + ",".join(f"{k}={v}" for k, v in self.params) + ")"
        if self.k is not None:
            out += f"@{self.k}"
        return out

    def __repr__(self) -> str:
        return f"Metric({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Metric:
        """Parse one metric string (a cutoff list is an error here: use :func:`parse_metrics`)."""
        found = parse_metrics(text)
        if len(found) != 1:
            raise MetricError(f"{text!r} names {len(found)} metrics; use parse_metrics() for cutoff lists")
        return found[0]

    @classmethod
    def make(cls, name: str, k: int | None = None, **params: Any) -> Metric:
        """Build a metric from Python values, with the same validation as the parser."""
        return _build(lookup(name), k, dict(params), text=name)


def _build(fam: Family, k: Any, raw_params: dict[str, Any], *, text: str) -> Metric:
    """A validated :class:`Metric` of ``fam`` (``text`` is what the user wrote, for messages)."""
    if k is not None:
        if fam.cutoff == "none":
            raise MetricError(f"{text!r}: {fam.name} takes no cutoff (it is defined over the whole ranking)")
        if isinstance(k, bool) or not isinstance(k, int):
            raise MetricError(f"{text!r}: the cutoff must be a positive integer, got {k!r}")
        if k < 1:
            raise MetricError(f"{text!r}: the cutoff must be a positive integer (>= 1), got {k}")
    values: dict[str, Any] = {}
    for key, raw in raw_params.items():
        spec = fam.param(str(key).lower())
        if spec is None:
            allowed = ", ".join(p.name for p in fam.params) or "none"
            raise MetricError(f"{text!r}: {fam.name} has no parameter {key!r} (accepted: {allowed})")
        if spec.name in values:
            raise MetricError(f"{text!r}: parameter {spec.name!r} given twice")
        values[spec.name] = spec.coerce(text, raw)
    params = tuple(
        (p.name, values[p.name]) for p in fam.params if p.name in values and values[p.name] != p.default
    )
    return Metric(fam.name, k, params)


def _parse_cutoffs(text: str, cut: str) -> list[int]:
    body = cut[1:-1] if cut.startswith("[") else cut
    items = [c.strip() for c in body.split(",") if c.strip()]
    if not items:
        raise MetricError(f"{text!r}: empty cutoff list")
    out = []
    for item in items:
        if not re.fullmatch(r"\d+", item):
            raise MetricError(f"{text!r}: the cutoff must be a positive integer, got {item!r}")
        out.append(int(item))
    if not cut.startswith("[") and len(out) > 1:
        raise MetricError(f"{text!r}: write a list of cutoffs in brackets, e.g. recall@[1,5,10]")
    return out


def parse_metrics(text: str) -> list[Metric]:
    """Parse a metric string that may hold a cutoff list (``recall@[1,5,10]``) into metrics.

    >>> [str(m) for m in parse_metrics("recall@[1,5,10]")]
    ['recall@1', 'recall@5', 'recall@10']
    """
    if not isinstance(text, str):
        raise MetricError(f"a metric must be given as a string, got {type(text).__name__}: {text!r}")
    match = _RE.match(text)
    if match is None:
        raise MetricError(
            f"cannot parse metric {text!r}: expected NAME[(param=value,...)][@k], e.g. 'ndcg@10' or 'P(rel=2)@5'"
        )
    name, params_text, cut = match.group("name"), match.group("params"), match.group("cut")
    fam = find(name)
    if fam is None:
        trec = _TREC_SUFFIX.match(name)
        base = find(trec.group("base")) if trec is not None and cut is None else None
        if trec is None or base is None:
            lookup(name)  # raises UnknownNameError with the nearest names
            raise AssertionError("unreachable")  # pragma: no cover
        fam = base
        cut = trec.group("k")
    raw: dict[str, Any] = {}
    if params_text is not None and params_text.strip():
        for part in params_text.split(","):
            if "=" not in part:
                raise MetricError(f"{text!r}: parameters are written key=value, got {part.strip()!r}")
            key, value = (s.strip() for s in part.split("=", 1))
            if key.lower() in raw:
                raise MetricError(f"{text!r}: parameter {key!r} given twice")
            raw[key.lower()] = value
    cutoffs: list[int | None] = [None] if cut is None else list(_parse_cutoffs(text, cut))
    return [_build(fam, k, raw, text=text) for k in cutoffs]


def expand_labels(text: str) -> list[tuple[str, Metric]]:
    """Parse ``text`` and give each metric the label the user wrote (cutoff lists expanded).

    >>> [(label, str(m)) for label, m in expand_labels("P@[5,10]")]
    [('P@5', 'precision@5'), ('P@10', 'precision@10')]
    """
    metrics = parse_metrics(text)
    if len(metrics) == 1:
        return [(text.strip(), metrics[0])]
    head = text.strip()
    head = head[: head.index("@")].rstrip()
    return [(f"{head}@{m.k}", m) for m in metrics]


def parse_metric(text: str | Metric) -> Metric:
    """Parse one metric string (or return a :class:`Metric` unchanged)."""
    return text if isinstance(text, Metric) else Metric.parse(text)
