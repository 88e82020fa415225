"""Metric parameters and their constraints.

A :class:`Param` is data next to the metric family that declares it: its type, default and constraint.
The same declaration converts a raw value (a string from the parser, or a Python value), produces the
error message when the value is out of range, and produces the bad values that the generated tests try
on every parameter of every family (``tests/test_metrics_parser.py``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ragrade.errors import MetricError


@dataclass(frozen=True)
class Param:
    """One parameter a metric family accepts.

    ``kind`` is ``int``, ``float``, ``str``, ``bool`` or ``dict`` (a gain map ``{grade: gain}``, held as
    sorted ``(grade, gain)`` pairs so that metrics stay hashable). ``choices`` (a closed set) or the
    interval given by ``minimum``/``maximum`` (each inclusive unless ``open_minimum``/``open_maximum``)
    constrain the value. ``default=None`` means "unset" (the family's own behaviour, documented in ``doc``).
    """

    name: str
    kind: type
    default: Any
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False
    doc: str = ""
    #: ``str`` parameters without choices: a regular expression the whole (lower-case) value must match,
    #: and one value it accepts (for the generated tests).
    pattern: str | None = None
    example: Any = None

    # -- conversion and validation ---------------------------------------------------------------
    def coerce(self, metric: str, raw: Any) -> Any:
        """Convert ``raw`` and check it against the constraint; :class:`MetricError` naming the metric,
        the parameter, the constraint and the value otherwise."""
        value = raw
        if self.kind is bool:
            return self._coerce_bool(metric, raw)
        if self.kind is dict:
            return self._coerce_gains(metric, raw)
        if isinstance(raw, bool):
            raise self._error(metric, raw)
        if isinstance(raw, str) and self.kind is not str:
            text = raw.strip()
            try:
                value = float(text) if self.kind is float else int(text)
            except ValueError:
                raise self._error(metric, raw) from None
        if self.kind is int:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int):
                raise self._error(metric, raw)
        elif self.kind is float:
            if not isinstance(value, int | float) or not math.isfinite(float(value)):
                raise self._error(metric, raw)
            value = float(value)
        else:
            if not isinstance(value, str):
                raise self._error(metric, raw)
            value = value.strip().lower()
        if not self.accepts(value):
            raise self._error(metric, raw)
        return value

    def _coerce_bool(self, metric: str, raw: Any) -> bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false", "1", "0", "yes", "no"):
            return raw.strip().lower() in ("true", "1", "yes")
        raise self._error(metric, raw)

    def _coerce_gains(self, metric: str, raw: Any) -> tuple[tuple[int, float], ...] | None:
        """A gain map from a dict, ``(grade, gain)`` pairs or text: ``{0:0,1:1,2:3}`` (ir-measures) or
        ``1=3.5,2=9`` (trec_eval); grades are integers, gains finite numbers."""
        pairs: list[tuple[Any, Any]]
        if isinstance(raw, dict):
            pairs = list(raw.items())
        elif isinstance(raw, tuple | list) and all(isinstance(p, tuple | list) and len(p) == 2 for p in raw):
            pairs = [(p[0], p[1]) for p in raw]
        elif isinstance(raw, str):
            text = raw.strip()
            if text.startswith("{") and text.endswith("}"):
                text = text[1:-1]
            pairs = []
            for part in (p.strip() for p in text.replace(";", ",").split(",")):
                if not part:
                    continue
                sep = ":" if ":" in part else "="
                if sep not in part:
                    raise self._error(metric, raw)
                left, right = part.split(sep, 1)
                pairs.append((left.strip(), right.strip()))
        else:
            raise self._error(metric, raw)
        out: dict[int, float] = {}
        for grade, gain in pairs:
            try:
                g = float(grade)
                v = float(gain)
            except (TypeError, ValueError):
                raise self._error(metric, raw) from None
            if isinstance(grade, bool) or isinstance(gain, bool) or not g.is_integer() or not math.isfinite(v):
                raise self._error(metric, raw)
            if int(g) in out:
                raise self._error(metric, raw)
            out[int(g)] = v
        if not out:
            raise self._error(metric, raw)
        # canonical: a grade >= 0 mapped to itself is the default (ir-measures prints {2:3} for {0:0,1:1,2:3});
        # a map of such entries only is no map
        return tuple(sorted((g, v) for g, v in out.items() if not (g >= 0 and v == g))) or None

    def format(self, value: Any) -> str:
        """The value as written in a canonical metric string (parsed back by :meth:`coerce`)."""
        if self.kind is dict:
            return "{" + ",".join(f"{g}:{v:g}" for g, v in value) + "}"
        if self.kind is float:
            return f"{value:g}" if float(value) == float(f"{value:g}") else repr(float(value))
        return str(value).lower() if self.kind is bool else str(value)

    def accepts(self, value: Any) -> bool:
        """Whether an already converted value satisfies the constraint."""
        if self.choices is not None:
            return value in self.choices
        if self.pattern is not None:
            return isinstance(value, str) and re.fullmatch(self.pattern, value) is not None
        if self.minimum is not None and (value <= self.minimum if self.open_minimum else value < self.minimum):
            return False
        return not (self.maximum is not None
                    and (value >= self.maximum if self.open_maximum else value > self.maximum))

    def constraint(self) -> str:
        """The constraint in words: ``linear|exp``, ``>= 1``, ``in (0, 1)``; ``""`` when free."""
        if self.choices is not None:
            return "|".join(map(str, self.choices))
        if self.pattern is not None:
            return f"like {self.example}"
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f"in {'(' if self.open_minimum else '['}{lo:g}, {hi:g}{')' if self.open_maximum else ']'}"
        if lo is not None:
            return f"{'>' if self.open_minimum else '>='} {lo:g}"
        if hi is not None:
            return f"{'<' if self.open_maximum else '<='} {hi:g}"
        return ""

    def _error(self, metric: str, raw: Any) -> MetricError:
        what = {int: "an integer", float: "a number", str: "a word", bool: "true or false",
                dict: "a gain map such as {0:0,1:1,2:3}"}.get(self.kind, self.kind.__name__)
        rule = self.constraint()
        return MetricError(f"{metric!r}: parameter {self.name!r} must be {what}"
                           + (f" ({rule})" if rule else "") + f"; got {raw!r}")

    # -- generated tests ---------------------------------------------------------------------------
    def bad_values(self) -> list[Any]:
        """Values the constraint must refuse (used by the generated bad-value tests)."""
        if self.kind is bool:
            return ["", "??", 2, "maybe"]
        if self.kind is dict:
            return ["", "??", "{a:1}", "{1:x}", "{1.5:2}", "{1:nan}", 3, {}]
        bad: list[Any] = [True, "", "??"]
        if self.kind is str:
            bad += [1, "not-a-choice"]
            return bad
        bad += [[1]]
        if self.kind is int:
            bad += [1.5, "1.5"]
        else:
            bad += [math.nan, math.inf, "nan"]
        if self.minimum is not None:
            bad.append(self.minimum if self.open_minimum else self.minimum - 1)
        if self.maximum is not None:
            bad.append(self.maximum if self.open_maximum else self.maximum + 1)
        return bad


#: Minimum grade counted as relevant (trec_eval's ``-l``, ir-measures' ``rel``).
REL = Param("rel", int, 1, minimum=1, doc="minimum grade counted as relevant (trec_eval's relevance level)")

#: ``rel`` on DCG-type measures: unset means every positive grade counts, as in trec_eval.
NDCG_REL = Param(
    "rel", int, None, minimum=1,
    doc="if set, grades below it are dropped from both DCG and the ideal list (ranx-style); "
        "by default every positive grade counts, as in trec_eval",
)

#: Gain of a grade in DCG-type measures.
GAIN = Param("gain", str, "linear", choices=("linear", "exp"), doc="gain of a grade g: g or 2^g - 1")

#: ``gain`` as a grade -> gain map (trec_eval ``ndcg.1=3,2=9``, ir-measures ``nDCG(gains={1:3,2:9})``).
GAINS = Param("gains", dict, None,
              doc="a grade -> gain map, e.g. {0:0,1:1,2:3}: listed grades take the given gain, other grades >= 0 "
                  "keep their grade, negative grades gain nothing (trec_eval's ndcg.1=3,2=9)")

#: ``judged_only``: drop unjudged documents from the ranking before scoring (ir-measures, trec_eval -J).
JUDGED_ONLY = Param("judged_only", bool, False,
                    doc="drop retrieved documents without a judgment (and with a negative grade) before scoring, "
                        "closing the gaps (Sakai's condensed lists; trec_eval -J; ir-measures judged_only)")

#: Persistence of rank-biased measures.
P_PERSIST = Param("p", float, 0.8, minimum=0, maximum=1, open_minimum=True, open_maximum=True,
                  doc="persistence: the probability of looking at the next document")
