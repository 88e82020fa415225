"""The options of the list kernels: the conventions a profile can change, as validated strategy objects.

Each rule class covers one family (``Precision`` for ``precision``, ``AP`` for ``ap``...) and holds the
peer's choices as typed options; :class:`Empty` says what a query with an empty side is worth. Every option
is checked when the rule is built, so a typo such as ``AP(denominator="retreived_hits")`` is an
:class:`~ragrade.errors.UnknownNameError` naming the option and the allowed values, instead of a silently
different number. A rule built with no arguments is the default convention's behaviour for that family
over a match table (``docs/profiles.md`` documents every option).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ragrade.errors import UnknownNameError

Side = Literal["zero", "nan"]


class Rule:
    """Base of the rule classes: validates every ``Literal`` option at construction."""

    #: The family the rule governs (registry name).
    family: ClassVar[str] = ""

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            allowed = _literal_values(hints[f.name])
            if allowed is not None and value not in allowed:
                shown = [str(a) for a in allowed if a is not None]
                raise UnknownNameError(f"{type(self).__name__}.{f.name} option", value, shown, show_known=True)
            if f.name == "epsilon" and not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise UnknownNameError(f"{type(self).__name__}.epsilon value", value, ["a number >= 0"],
                                       show_known=True)

    def changes(self) -> dict[str, Any]:
        """The options that differ from the default convention's (for the docs and the report)."""
        default = type(self)()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) != getattr(default, f.name)}


def _literal_values(hint: Any) -> tuple[Any, ...] | None:
    """The allowed values of a ``Literal[...]`` (or ``Literal[...] | None``) annotation, else None."""
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint)
    args = typing.get_args(hint)
    if args and any(typing.get_origin(a) is Literal for a in args):
        out: list[Any] = []
        for a in args:
            out.extend(typing.get_args(a) if typing.get_origin(a) is Literal else (None,))
        return tuple(out)
    return None


@dataclass(frozen=True)
class Precision(Rule):
    """``hits``: every matching retrieved row (``"rows"``) or distinct matching items (``"distinct"``);
    ``denominator``: the list length with duplicates (``"list"``) or the distinct retrieved items."""

    family: ClassVar[str] = "precision"
    hits: Literal["rows", "distinct"] = "rows"
    denominator: Literal["list", "distinct"] = "list"


@dataclass(frozen=True)
class Recall(Rule):
    """``denominator``: the units as listed (``"units"``) or as a set of contents (``"distinct_units"``);
    ``text_denominator`` overrides it for text input."""

    family: ClassVar[str] = "recall"
    denominator: Literal["units", "distinct_units"] = "distinct_units"
    text_denominator: Literal["units", "distinct_units"] | None = None


@dataclass(frozen=True)
class RecallAll(Rule):
    """``target``: matched distinct contents must equal the distinct units, or the gold *list* length."""

    family: ClassVar[str] = "recall_all"
    target: Literal["distinct_units", "list"] = "distinct_units"


@dataclass(frozen=True)
class RR(Rule):
    """``mode``: 1/rank of the first relevant row (``"first"``), or the mean over units of 1/rank of each
    unit's first match, 0 for a missed unit (``"per_unit"``, AutoRAG)."""

    family: ClassVar[str] = "rr"
    mode: Literal["first", "per_unit"] = "first"


@dataclass(frozen=True)
class AP(Rule):
    """``denominator`` of the precision sum: ``"R"`` (units as listed), ``"distinct_units"``,
    ``"retrieved_hits"`` (relevant retrieved rows, + ``epsilon``) or ``"per_unit"`` (AutoRAG: the mean of
    per-unit APs, each divided by that unit's hits)."""

    family: ClassVar[str] = "ap"
    denominator: Literal["R", "distinct_units", "retrieved_hits", "per_unit"] = "R"
    epsilon: float = 0.0


@dataclass(frozen=True)
class ContextPrecision(Rule):
    """``epsilon`` added to the number of relevant retrieved rows (Ragas: 1e-10)."""

    family: ClassVar[str] = "context_precision"
    epsilon: float = 0.0


@dataclass(frozen=True)
class NDCG(Rule):
    """``gain``: every matching row gains (``"every_match"``) or only a row that credits a unit not yet
    credited (``"greedy_once"``), crediting per ``credit_key``; ``ideal``: ``min(gt list, list length)``
    ones, the gt list length, or the list's own labels re-sorted (``"own_labels"``); ``discount``:
    ``log2(i+1)``, continuous-eval's ``ln(i+1)/ln 2`` or REMem's (ranks 1 and 2 weigh 1)."""

    family: ClassVar[str] = "ndcg"
    gain: Literal["every_match", "greedy_once"] = "every_match"
    credit_key: Literal["unit", "content"] = "unit"
    ideal: Literal["min_gt_list", "gt_list", "own_labels"] = "gt_list"
    discount: Literal["log2", "ln_ratio", "remem"] = "log2"


@dataclass(frozen=True)
class Empty(Rule):
    """What a query is worth when one side is empty: ``retrieved`` (empty retrieved list) and ``truth``
    (empty ground truth), each ``"zero"`` or ``"nan"`` (no score); ``retrieved_text`` / ``truth_text``
    override them for text input; ``decider`` is the side whose rule wins when both are empty."""

    retrieved: Side = "zero"
    truth: Side = "zero"
    retrieved_text: Side | None = None
    truth_text: Side | None = None
    decider: Literal["truth", "retrieved"] = "truth"

    def value(self, side: Literal["retrieved", "truth"], texts: bool) -> Side:
        if texts:
            override = self.retrieved_text if side == "retrieved" else self.truth_text
            if override is not None:
                return override
        return self.retrieved if side == "retrieved" else self.truth


RULES: tuple[type[Rule], ...] = (Precision, Recall, RecallAll, RR, AP, ContextPrecision, NDCG)
