"""How numbers, p-values, markers and names are written in every export (terminal, markdown, LaTeX,
HTML). Plain functions of strings and floats, a leaf module (it imports nothing of ragrade), shared by the
engine's slice tables, :mod:`ragrade.comparison.export`, the gate and the HTML report, so that a number
looks the same everywhere."""

from __future__ import annotations

import math
from typing import Any

_SUPERSCRIPT = dict(
    zip(
        "abcdefghijklmnoprstuvwxyz",
        "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ",
        strict=True,
    )
)

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def number(value: Any, digits: int) -> str:
    """``value`` with ``digits`` decimals; ``–`` for missing or NaN, ``∞``/``−∞`` for infinities."""
    if value is None:
        return "–"
    x = float(value)
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}f}"


def signed(value: Any, digits: int) -> str:
    """Like :func:`number`, with an explicit sign (``+0.0312``)."""
    text = number(value, digits)
    return text if text in ("–", "∞", "−∞") else f"{float(value):+.{digits}f}"


def pvalue(value: Any) -> str:
    """A p-value: 4 significant digits (0.04995 must not print as 0.0500), scientific below 1e-4."""
    if value is None or math.isnan(float(value)):
        return "–"
    x = float(value)
    if x < 1e-4:
        return f"{x:.1e}"
    return f"{x:.4g}"


def superscript(text: str) -> str:
    """Unicode superscript of marker letters (``q`` has none and is written ``^q``)."""
    return "".join(_SUPERSCRIPT.get(ch, "^" + ch) for ch in text)


def markdown_escape(text: str) -> str:
    """Escape the characters GitHub markdown tables would interpret."""
    out = str(text).replace("\\", "\\\\").replace("|", "\\|")
    for ch in "*_`[]<>":
        out = out.replace(ch, "\\" + ch)
    return out


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def jsonable(value: Any) -> Any:
    """Plain JSON data: non-finite floats become ``None``, NumPy scalars Python numbers, keys strings."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item"):  # NumPy scalar
        return jsonable(value.item())
    return value


def decimals(value: Any, digits: int) -> str:
    """``value`` with ``digits`` decimals, ``nan`` for a missing or NaN value: the plain form of a result's
    CSV and Markdown (:mod:`ragrade.io.results`) and of its ``repr``."""
    if value is None:
        return "nan"
    x = float(value)
    return "nan" if math.isnan(x) else f"{x:.{digits}f}"
