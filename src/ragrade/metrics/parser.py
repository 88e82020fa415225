"""Metric value objects and the one metric-string parser (every family of the registry).

Grammar (case-insensitive names, spaces ignored)::

    metric   := NAME [ "(" param ("," param)* ")" ] [ "@" cutoffs ] [ "-l" INT ]
    param    := KEY "=" VALUE          (VALUE may be a {grade: gain, ...} map)
    cutoffs  := NUMBER | "[" NUMBER ("," NUMBER)* "]"

``ndcg@10``, ``ndcg(gain=exp)@10``, ``P(rel=2)@5``, ``recall@[1,5,10]`` (three metrics), ``rr``,
``r_precision``, ``token_f1@5``, ``llm_context_precision@3``, ``IPrec@0.5`` (``@`` sets the recall level of
``iprec``), ``nDCG(gains={0:0,1:1,2:3})@10`` (ir-measures), ``ndcg@10-l2`` (ranx's relevance level).

trec_eval's names are read as trec_eval reads them (:data:`~ragrade.metrics.registry.TREC`, spelled as
trec_eval spells them, case-sensitive): output names (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.50``,
``Rprec_mult_0.20``), dotted parameters (``P.5,10``, ``ndcg_cut.5,10``, ``ndcg.1=3,2=9``, ``rbp.p=0.5``,
``utility.1,-1,0,0``), nicknames (``official``, ``all_trec``, ``set``) and family names, which stand for
the family at trec_eval's official parameters (``P`` is P_5 ... P_1000, ``success`` is success_1, 5, 10).
One exception under the default ``names="ragrade"``: a bare name that is also a ragrade family with a
meaning of its own (``recall``: the whole list's recall) keeps ragrade's meaning; ``names="trec_eval"``
reads it as trec_eval does (recall_5 ... recall_1000). Metrics from trec_eval names are labelled with
trec_eval's output names.

``str(metric)`` is canonical (registry name, non-default parameters in registry order, cutoff) and
parses back to an equal metric.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from ragrade.errors import MetricError, boundary
from ragrade.metrics.registry import PRESETS, TREC_BY_NAME, TREC_NICKNAMES, Family, TrecName, find, lookup

Names = Literal["ragrade", "trec_eval"]

_RE = re.compile(
    r"""^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9_\-]*?)\s*
        (?:\(\s*(?P<params>.*)\)\s*)?
        (?:@\s*(?P<cut>\[[^\]]*\]|[^\s\-]+)\s*)?
        (?:-l\s*(?P<level>\d+)\s*)?$""",
    re.VERBOSE | re.DOTALL,
)
_TREC_SUFFIX = re.compile(r"^(?P<base>[A-Za-z0-9][A-Za-z0-9_\-]*?)_(?P<k>\d+(?:\.\d+)?)$")
# ir-measures' parameters that pick another family or a default of ours.
_IRM_PARAM_VALUES = {("dcg", "log2"): None, ("dcg", "exp-log2"): ("gain", "exp")}


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
        """``"id"``, ``"text"``, ``"judge"`` or ``"diversity"`` (see :mod:`ragrade.metrics.registry`)."""
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
        value = self.get("rel") if self.family.param("rel") is not None else None
        return 1 if value is None else int(value)

    def with_params(self, **changes: Any) -> Metric:
        """A copy with some parameters changed (validated as the parser validates them)."""
        values = dict(self.params)
        values.update(changes)
        return _build(self.family, self.k, values, text=str(self))

    def __str__(self) -> str:
        fam = self.family
        out = self.name
        at = fam.at_param
        shown = [(k, v) for k, v in self.params if k != at]
        if shown:
            out += "(" + ",".join(f"{k}={_format(fam, k, v)}" for k, v in shown) + ")"
        if self.k is not None:
            out += f"@{self.k}"
        elif at is not None and self.get(at) is not None:
            out += f"@{_format(fam, at, self.get(at))}"
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


def _format(fam: Family, key: str, value: Any) -> str:
    spec = fam.param(key)
    return str(value) if spec is None else spec.format(value)


#: The largest cutoff or integer parameter (the engine's positions and counts are 64-bit integers).
MAX_INT = 2**63 - 1


def _check_raw_digits(raw_params: dict[str, Any]) -> None:
    """Parameters given as text (``Metric.make(..., rel="２")``, which int() would read) hold ASCII digits."""
    for raw in raw_params.values():
        if isinstance(raw, str):
            check_ascii_digits(raw)


def _build(fam: Family, k: Any, raw_params: dict[str, Any], *, text: str) -> Metric:
    """A validated :class:`Metric` of ``fam`` (``text`` is what the user wrote, for messages)."""
    if k is not None:
        if fam.cutoff == "none":
            raise MetricError(f"{text!r}: {fam.name} takes no cutoff (it is defined over the whole ranking)")
        if isinstance(k, bool) or not isinstance(k, int):
            raise MetricError(f"{text!r}: the cutoff must be a positive integer, got {k!r}")
        if k < 1:
            raise MetricError(f"{text!r}: the cutoff must be a positive integer (>= 1), got {k}")
        if k > MAX_INT:
            raise MetricError(f"{text!r}: the cutoff must be at most 2**63 - 1 (positions are 64-bit integers), "
                              f"got {k}")
    values: dict[str, Any] = {}
    _check_raw_digits(raw_params)
    for key, raw in raw_params.items():
        spec = fam.param(str(key).lower())
        if spec is None:
            allowed = ", ".join(p.name for p in fam.params) or "none"
            raise MetricError(f"{text!r}: {fam.name} has no parameter {key!r} (accepted: {allowed})")
        if spec.name in values:
            raise MetricError(f"{text!r}: parameter {spec.name!r} given twice")
        values[spec.name] = None if raw is None and spec.default is None else spec.coerce(text, raw)
        if isinstance(values[spec.name], int) and not -MAX_INT <= values[spec.name] <= MAX_INT:
            raise MetricError(f"{text!r}: parameter {spec.name!r} must be at most 2**63 - 1 in size, "
                              f"got {values[spec.name]}")
    if k is None and fam.cutoff == "required":
        raise MetricError(f"{text!r}: {fam.name} needs a cutoff, e.g. {fam.name}@10")
    if fam.at_param is not None and values.get(fam.at_param, fam.param(fam.at_param).default) is None:  # type: ignore[union-attr]
        raise MetricError(f"{text!r}: {fam.name} needs its {fam.at_param} level, e.g. {fam.example()}")
    if values.get("gains") is not None and values.get("gain", "linear") != "linear":
        raise MetricError(f"{text!r}: give either gain=exp or a gain map, not both")
    params = tuple(
        (p.name, values[p.name]) for p in fam.params if p.name in values and values[p.name] != p.default
    )
    return Metric(fam.name, k, params)


def _split_params(text: str, body: str) -> list[str]:
    """``key=value`` parts separated by commas outside braces."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in body:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    if depth != 0:
        raise MetricError(f"{text!r}: unbalanced braces in the parameters")
    return [p for p in (x.strip() for x in parts) if p]


def _parse_cutoffs(text: str, cut: str, floats: bool = False) -> list[Any]:
    if cut.startswith("[") and not cut.endswith("]"):
        raise MetricError(f"{text!r}: the cutoff list is not closed: write e.g. recall@[5,10]")
    body = cut[1:-1] if cut.startswith("[") else cut
    items = [c.strip() for c in body.split(",")]
    if not any(items):
        raise MetricError(f"{text!r}: empty cutoff list")
    if not all(items):
        raise MetricError(f"{text!r}: an empty cutoff in the list: write e.g. recall@[5,10]")
    out: list[Any] = []
    for item in items:
        if floats:
            try:
                out.append(float(item))
            except ValueError:
                raise MetricError(f"{text!r}: expected a number after '@', got {item!r}") from None
            continue
        if not re.fullmatch(r"\d+", item):
            raise MetricError(f"{text!r}: the cutoff must be a positive integer, got {item!r}")
        out.append(int(item))
    if not cut.startswith("[") and len(out) > 1:
        raise MetricError(f"{text!r}: write a list of cutoffs in brackets, e.g. recall@[1,5,10]")
    return out


# -- trec_eval's names ----------------------------------------------------------------------------------


def _trec_value(t: TrecName, raw: str) -> Any:
    return int(raw) if t.sets == "k" else float(raw)


def _trec_metric(t: TrecName, value: Any = None, extra: dict[str, Any] | None = None, *, text: str) -> Metric:
    fam = lookup(t.family)
    params: dict[str, Any] = dict(t.fixed)
    if extra:
        params.update(extra)
    k = None
    if value is not None:
        if t.sets == "k":
            k = value
        else:
            params[t.sets] = value  # type: ignore[index]
    return _build(fam, k, params, text=text)


def _trec_label(t: TrecName, value: Any) -> str:
    return t.label.format(value) if t.label else t.name


def trec_labels(text: str, names: Names = "ragrade") -> list[tuple[str, Metric]] | None:
    """``(trec_eval output name, Metric)`` pairs if ``text`` is one of trec_eval's names (a nickname, an
    output name, a dotted form or a family name), else None. Under ``names="ragrade"`` a bare name that is
    also a usable ragrade metric (``recall``) is left to ragrade's grammar."""
    s = text.strip()
    if s in TREC_NICKNAMES:
        out: list[tuple[str, Metric]] = []
        for name in TREC_NICKNAMES[s]:
            out += trec_labels(name, "trec_eval") or []
        return out
    if "." in s and "(" not in s and "@" not in s:
        dotted = _dotted(s)
        if dotted is not None:
            return dotted
    if s in TREC_BY_NAME:
        t = TREC_BY_NAME[s]
        if (t.values or t.fixed) and names == "ragrade" and _usable_ragrade_name(s):
            return None  # ragrade's own meaning of the name (recall: the whole list's; rbp: p = 0.8)
        if t.values:
            return [(_trec_label(t, v), _trec_metric(t, v, text=s)) for v in t.values]
        return [(t.name, _trec_metric(t, text=s))]
    match = _TREC_SUFFIX.match(s)
    if match and match.group("base") in TREC_BY_NAME:
        t = TREC_BY_NAME[match.group("base")]
        if t.values and t.sets not in (None, "params", "gains", "named"):
            value = _trec_value(t, match.group("k"))
            return [(s, _trec_metric(t, value, text=s))]
    if "(" not in s and "@" not in s:  # the output name of a dotted form: set_F_0.5, rbp_p=0.5, ndcg_1=3,2=9
        for name in _PARAM_TREC_NAMES:
            rest = s[len(name) + 1:]
            if s.startswith(name + "_") and rest and ("=" in rest or rest[0] in "-.0123456789"):
                return _dotted(f"{name}.{rest}")
    return None


#: trec_eval names whose dotted parameters are printed in the output name (longest first: rbp_resid, rbp).
_PARAM_TREC_NAMES = sorted((t.name for t in TREC_BY_NAME.values() if t.sets in ("params", "gains", "named", "levels")), key=len, reverse=True)


def _level_text(value: float) -> str:
    """A recall level as written in ``levels`` (no sign, no exponent, the shortest exact form)."""
    if value < 0 or value != value:
        raise MetricError(f"a recall level must be >= 0, got {value!r}")
    text = repr(float(value))
    if "e" in text:
        text = f"{value:.17f}".rstrip("0")
    return text


def _usable_ragrade_name(name: str) -> bool:
    """Whether ``name`` is a ragrade family name that works without parameters (``recall``)."""
    fam = find(name)
    if fam is None or fam.name.lower() != name.lower():
        return False
    return fam.cutoff != "required" and fam.at_param is None


def _dotted(s: str) -> list[tuple[str, Metric]] | None:
    """trec_eval's ``name.params`` (and ranx's ``rbp.95``)."""
    name, _, rest = s.partition(".")
    if name.lower() == "rbp" and rest.isdigit():  # ranx: rbp.95 is rbp(p=0.95)
        return [(s, _build(lookup("rbp"), None, {"p": float("0." + rest)}, text=s))]
    t = TREC_BY_NAME.get(name)
    if t is None:
        return None
    parts = [p.strip() for p in rest.split(",") if p.strip()]
    if not parts:
        raise MetricError(f"{s!r}: no parameters after {name!r}.")
    if t.sets in ("k", "recall", "mult"):
        try:
            values = [_trec_value(t, p) for p in parts]
        except ValueError:
            raise MetricError(f"{s!r}: {name} takes numbers after the dot, e.g. {name}.{t.values[0]}") from None
        return [(_trec_label(t, v), _trec_metric(t, v, text=s)) for v in values]
    if t.sets == "params":
        if len(parts) != len(t.order):
            raise MetricError(f"{s!r}: {name} takes {len(t.order)} parameter(s) ({', '.join(t.order)})")
        return [(f"{name}_{rest}", _trec_metric(t, extra=dict(zip(t.order, parts, strict=True)), text=s))]
    if t.sets == "gains":
        return [(f"{name}_{rest}", _trec_metric(t, extra={"gains": rest}, text=s))]
    if t.sets == "levels":  # 11pt_avg.0.25,.5,.75: the levels averaged (output name 11pt_avg_0.25,.5,.75)
        try:
            levels = [float(p) for p in parts]
        except ValueError:
            raise MetricError(f"{s!r}: {name} takes recall levels after the dot, e.g. {name}.0.2,0.5,0.8") from None
        text = ";".join(_level_text(v) for v in levels)
        return [(f"{name}_{rest}", _trec_metric(t, extra={"levels": text}, text=s))]
    if t.sets == "named":
        extra: dict[str, Any] = {}
        gains = []
        for p in parts:
            key, eq, value = p.partition("=")
            if not eq:
                raise MetricError(f"{s!r}: write {name}'s parameters as key=value, e.g. {name}.p=0.8")
            if re.fullmatch(r"-?\d+", key.strip()):  # a grade: its gain (trec_eval's rbp.1=2,2=5)
                gains.append(f"{key.strip()}:{value.strip()}")
            else:
                extra[key.strip().lower()] = value.strip()
        if gains:
            extra["gains"] = ",".join(gains)
        return [(f"{name}_{rest}", _trec_metric(t, extra=extra, text=s))]
    raise MetricError(f"{s!r}: {name} takes no parameters")


# -- the parser -------------------------------------------------------------------------------------------


def check_ascii_digits(text: str) -> None:
    """Refuse a digit other than 0-9 in a metric string (``ndcg@１０``, ``P@٥``): Python's ``int()`` reads
    fullwidth and other scripts' digits, so ``ndcg@１０`` was taken for ``ndcg@10`` without a word."""
    for c in text:
        if not c.isascii() and (c.isdecimal() or c.isdigit() or c.isnumeric()):
            import unicodedata

            raise MetricError(f"{text!r}: {c!r} ({unicodedata.name(c, 'a non-ASCII digit')}) is not a digit "
                              "ragrade reads: write numbers with the ASCII digits 0-9")


def parse_labelled(text: str, names: Names = "ragrade") -> list[tuple[str, Metric]]:
    """Parse ``text`` into ``(label, Metric)`` pairs: trec_eval names labelled with trec_eval's output
    names, cutoff lists expanded (``P@[5,10]`` -> ``P@5``, ``P@10``), anything else labelled as written."""
    if not isinstance(text, str):
        raise MetricError(f"a metric must be given as a string, got {type(text).__name__}: {text!r}")
    check_ascii_digits(text)
    trec = trec_labels(text, names)
    if trec is not None:
        return trec
    metrics = _parse(text)
    if len(metrics) == 1:
        return [(text.strip(), metrics[0])]
    head = text.strip()
    head = head[: head.index("@")].rstrip()
    fam = metrics[0].family
    if fam.at_param is not None:
        return [(f"{head}@{_format(fam, fam.at_param, m.get(fam.at_param))}", m) for m in metrics]
    return [(f"{head}@{m.k}", m) for m in metrics]


def _parse(text: str) -> list[Metric]:
    match = _RE.match(text)
    if match is None:
        raise MetricError(
            f"cannot parse metric {text!r}: expected NAME[(param=value,...)][@k], e.g. 'ndcg@10' or 'P(rel=2)@5'"
        )
    name, params_text, cut, level = (match.group("name"), match.group("params"), match.group("cut"),
                                     match.group("level"))
    raw: dict[str, Any] = {}
    fam = find(name)
    preset = PRESETS.get(name.strip().lower())
    if fam is None and preset is not None:
        fam = lookup(preset[0])
        raw.update(preset[1])
    if fam is None:
        trec = _TREC_SUFFIX.match(name)
        base = find(trec.group("base")) if trec is not None and cut is None else None
        if trec is None or base is None or base.at_param is not None:
            lookup(name)  # raises UnknownNameError with the nearest names
            raise AssertionError("unreachable")  # pragma: no cover
        fam = base
        cut = trec.group("k")
    if params_text is not None and params_text.strip():
        for part in _split_params(text, params_text):
            if "=" not in part:
                raise MetricError(f"{text!r}: parameters are written key=value, got {part!r}")
            key, value = (x.strip() for x in part.split("=", 1))
            key = key.lower()
            value = value.strip("'\"")
            if (key, value) in _IRM_PARAM_VALUES:
                mapped = _IRM_PARAM_VALUES[(key, value)]
                if mapped is None:
                    continue
                key, value = mapped
            if key == "relative" and fam.name == "precision":  # ir-measures SetP(relative=True)
                if value.lower() in ("true", "1"):
                    fam = lookup("relative_precision")
                continue
            if key in raw:
                raise MetricError(f"{text!r}: parameter {key!r} given twice")
            raw[key] = value
    if level is not None:
        if "rel" in raw:
            raise MetricError(f"{text!r}: the relevance level is given twice")
        raw["rel"] = level
    if fam.at_param is not None and cut is not None:
        values = _parse_cutoffs(text, cut, floats=True)
        if fam.at_param in raw:
            raise MetricError(f"{text!r}: {fam.at_param} given twice")
        return [_build(fam, None, {**raw, fam.at_param: v}, text=text) for v in values]
    cutoffs: list[int | None] = [None] if cut is None else list(_parse_cutoffs(text, cut))
    return [_build(fam, k, raw, text=text) for k in cutoffs]


@boundary
def parse_metrics(text: str, names: Names = "ragrade") -> list[Metric]:
    """Parse a metric string that may stand for several metrics (``recall@[1,5,10]``, trec_eval's ``P``).

    >>> list(map(str, parse_metrics("recall@[1,5,10]")))
    ['recall@1', 'recall@5', 'recall@10']
    >>> list(map(str, parse_metrics("P.5,10")))
    ['precision@5', 'precision@10']
    """
    return [m for _, m in parse_labelled(text, names)]


def expand_labels(text: str, names: Names = "ragrade") -> list[tuple[str, Metric]]:
    """Parse ``text`` and give each metric the label the user wrote (cutoff lists expanded; trec_eval's
    names get trec_eval's output names).

    >>> [(label, str(m)) for label, m in expand_labels("P@[5,10]")]
    [('P@5', 'precision@5'), ('P@10', 'precision@10')]
    >>> [label for label, _ in expand_labels("success")]
    ['success_1', 'success_5', 'success_10']
    """
    return parse_labelled(text, names)


@boundary
def parse_metric(text: str | Metric) -> Metric:
    """Parse one metric string (or return a :class:`Metric` unchanged)."""
    return text if isinstance(text, Metric) else Metric.parse(text)
