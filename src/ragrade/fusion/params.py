"""The bounds of every fusion parameter, declared once.

:func:`ragrade.fuse` (every profile), :func:`ragrade.optimize_fusion` and ``ragrade fuse`` check each value
against its :class:`Bound` before anything is computed, and a refusal names the parameter, what it must be
and the value given: a non-numeric ``k``, a NaN weight, RRF's ``k <= 0`` or a grid step of 0 never reach the
arithmetic (where they became a ``UFuncTypeError``, a ``ZeroDivisionError``, NaN scores or a file ragrade
could not read back). docs/fusion.md, "Parameters", lists the same bounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from ragrade.errors import InputError


@dataclass(frozen=True)
class Bound:
    """A number's bounds: ``low``/``high`` (None: unbounded), each excluded when ``*_open``; ``integer``:
    a whole number; ``none_ok``: None is accepted (no cut)."""

    what: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    none_ok: bool = False

    def admits(self, x: float) -> bool:
        if not math.isfinite(x):
            return False
        if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
            return False
        return self.high is None or not (x > self.high or (self.high_open and x == self.high))


_POSITIVE = Bound("a number > 0", low=0, low_open=True)
_UNIT = Bound("a number between 0 and 1, both excluded", low=0, high=1, low_open=True, high_open=True)
_FINITE = Bound("a finite number")
_COUNT = Bound("a whole number >= 1", low=1, integer=True)
_CUT = Bound("a whole number >= 1 (or None: no cut)", low=1, integer=True, none_ok=True)

#: Every scalar parameter of a fusion method or profile (docs/fusion.md, "Parameters").
BOUNDS: dict[str, Bound] = {
    "k": _POSITIVE,  # RRF's constant (ranx, Qdrant, pyserini, trectools)
    "c": _POSITIVE,  # LangChain's RRF constant
    "phi": _UNIT,  # RBC's persistence
    "p": _UNIT,  # trectools' RBP persistence
    "gamma": _FINITE,  # CombGMNZ's exponent
    "sigma": _POSITIVE,  # LogN_ISR's offset
    "alpha": _FINITE,  # pyserini's interpolation
    "w": Bound("a whole number >= 0", low=0, integer=True),  # SlideFuse's half-width
    "n_segments": _COUNT,  # ProbFuse
    "num_queries": _COUNT,  # LlamaIndex's divisor
    "depth": _CUT,  # pyserini, trectools (None: every entry)
    "top_k": _CUT,
    "limit": _CUT,
}

#: Parameters that hold one trained array per run (ranx's learnt probabilities, MAPs, log odds).
TRAINED = ("probs", "map_scores", "log_odds")

#: The step of optimize_fusion's weight grid.
GRID_STEP = Bound("a number > 0 and <= 1", low=0, high=1, low_open=True)

#: The most configurations optimize_fusion scores (each is a fusion and an evaluation).
MAX_CONFIGURATIONS = 100_000
#: The most weight combinations ranx's grid enumerates before keeping those that sum to 1.0.
MAX_CANDIDATES = 10_000_000


def _refuse(label: str, what: str, value: Any) -> InputError:
    return InputError(f"{label}: must be {what}, got {value!r}")


def check_number(label: str, value: Any, bound: Bound) -> Any:
    """``value`` as an int or a float within ``bound``; else an :class:`InputError` that starts with
    ``label`` (``"fusion parameter k"``, ``"--step"``). Strings holding a number (``"60"``, from a command
    line) are read; booleans are not numbers."""
    if value is None and bound.none_ok:
        return None
    x = value
    if isinstance(x, str):
        try:
            x = int(x) if x.strip().lstrip("+-").isdigit() else float(x)
        except ValueError:
            raise _refuse(label, bound.what, value) from None
    if isinstance(x, bool) or not isinstance(x, Real | np.number) or not bound.admits(float(x)):
        raise _refuse(label, bound.what, value)
    whole = isinstance(x, Integral | np.integer)
    if bound.integer and not (whole or float(x).is_integer()):
        raise _refuse(label, bound.what, value)
    return int(float(x)) if whole or bound.integer else float(x)


def check_params(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters with every known scalar checked against :data:`BOUNDS` (and every trained array's
    values finite); names not listed there pass unchanged (the caller knows which names it takes)."""
    out = dict(params)
    for name, value in params.items():
        if name in BOUNDS:
            out[name] = check_number(f"fusion parameter {name}", value, BOUNDS[name])
        elif name in TRAINED and value is not None:
            out[name] = [_finite_array(f"{name}[{i}]", v) for i, v in enumerate(_sequence(name, value))]
    return out


def _sequence(name: str, value: Any) -> list[Any]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise InputError(f"fusion parameter {name}: must be one sequence of numbers per run, got "
                         f"{type(value).__name__}")
    return list(value)


def _finite_array(name: str, value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"fusion parameter {name}: must hold numbers, got {value!r}") from None
    if not np.isfinite(arr).all():
        raise InputError(f"fusion parameter {name}: must hold finite numbers (no NaN or infinity)")
    return arr


def check_weights(weights: Any, n_runs: int | None = None, label: str = "weights") -> list[float]:
    """One finite number per run (NaN and infinite weights made NaN scores, and a fused file that could not
    be read back); ``n_runs`` None: any count."""
    if isinstance(weights, str | bytes) or not isinstance(weights, Sequence | np.ndarray):
        raise InputError(f"{label}: one number per run, got {type(weights).__name__}", value=weights)
    values = list(weights)
    if n_runs is not None and len(values) != n_runs:
        raise InputError(f"{label}: {n_runs} runs need {n_runs} weights, got {len(values)}", value=values)
    return [check_number(f"{label}[{i}]" if len(values) > 1 else label, v, _FINITE)
            for i, v in enumerate(values)]


def grid_size(n_runs: int, steps: int) -> int:
    """The number of weightings of ``n_runs`` runs in whole multiples of 1/``steps`` summing to 1."""
    return math.comb(steps + n_runs - 1, n_runs - 1)


def check_grid(n_configs: int, what: str, limit: int = MAX_CONFIGURATIONS, unit: str = "configurations") -> None:
    """Refuse a search of more than ``limit`` configurations, saying its size and the limit."""
    if n_configs > limit:
        raise InputError(f"{what} has {n_configs:,} {unit}, more than the {limit:,} optimize_fusion tries: use "
                         "a larger step (or fewer runs)")
