"""Exports of a :class:`~ragrade.compare.core.Comparison`: rich table, markdown, LaTeX, CSV and JSON."""

from __future__ import annotations

import io
import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragrade.compare.core import Comparison

_SUPERSCRIPT = dict(
    zip(
        "abcdefghijklmnoprstuvwxyz",
        "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ",
        strict=True,
    )
)


def superscript(text: str) -> str:
    """Unicode superscript of marker letters (``q`` has none and is written ``^q``)."""
    return "".join(_SUPERSCRIPT.get(ch, "^" + ch) for ch in text)


def _num(value: float, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}f}"


def _pval(value: float) -> str:
    if math.isnan(value):
        return "–"
    if value < 1e-4:
        return f"{value:.1e}"
    return f"{value:.4g}"  # 4 significant digits: 0.04995 must not print as 0.0500


def _jsonable(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):  # NumPy scalar
        return _jsonable(value.item())
    return value


# ----------------------------------------------------------------------------------------------- dict/JSON
def to_dict(cmp: Comparison) -> dict[str, Any]:
    """Plain data (JSON-ready: non-finite floats become ``None``)."""
    summary = [
        {"metric": m, "run": r, **row}
        for (m, r), row in zip(cmp.summary.index, cmp.summary.to_dict("records"), strict=True)
    ]
    pairs = [
        {"metric": m, "control": a, "treatment": b, **row}
        for (m, a, b), row in zip(cmp.pairs.index, cmp.pairs.to_dict("records"), strict=True)
    ]
    return _jsonable(
        {
            "runs": [{"name": r, "letter": cmp.letters[r]} for r in cmp.runs],
            "metrics": list(cmp.metrics),
            "baseline": cmp.baseline,
            "test": cmp.test,
            "correction": cmp.correction,
            "alpha": cmp.alpha,
            "confidence": cmp.confidence,
            "n_resamples": cmp.n_resamples,
            "seed": cmp.seed,
            "effect_size": "cohens_dz: mean of per-query differences / their standard deviation (ddof=1)",
            "description": cmp.description,
            "summary": summary,
            "pairs": pairs,
        }
    )


def to_json(cmp: Comparison, indent: int | None = 2) -> str:
    return json.dumps(to_dict(cmp), indent=indent, ensure_ascii=False, allow_nan=False)


# ----------------------------------------------------------------------------------------------------- CSV
def to_csv(cmp: Comparison, table: str = "summary") -> str:
    """CSV of the ``summary`` (one row per metric and run) or the ``pairs`` table."""
    if table == "summary":
        frame = cmp.summary.reset_index().copy()
        frame["better_than"] = frame["better_than"].map(";".join)
        frame["worse_than"] = frame["worse_than"].map(";".join)
    elif table == "pairs":
        frame = cmp.pairs.reset_index()
    else:
        from ragrade.errors import InputError

        raise InputError("table must be 'summary' or 'pairs'", value=table)
    buf = io.StringIO()
    frame.to_csv(buf, index=False, lineterminator="\n", float_format="%.17g")
    return buf.getvalue()


# ------------------------------------------------------------------------------------------------ markdown
def _md_escape(text: str) -> str:
    out = str(text).replace("\\", "\\\\").replace("|", "\\|")
    for ch in "*_`[]<>":
        out = out.replace(ch, "\\" + ch)
    return out


def _summary_cells(cmp: Comparison, run: str, digits: int, ci: bool, *, bold, sup, interval) -> list[str]:
    """One run's cells of the summary table (mean, bold if best, significance marker, CI), with the
    markup of the output format supplied by the three callables."""
    cells = []
    for metric in cmp.metrics:
        row = cmp.summary.loc[(metric, run)]
        cell = _num(row["mean"], digits)
        if row["best"]:
            cell = bold(cell)
        if row["marker"]:
            cell += sup(row["marker"])
        if ci:
            cell += interval(_num(row["ci_low"], digits), _num(row["ci_high"], digits))
        cells.append(cell)
    return cells


def to_markdown(cmp: Comparison, digits: int = 4, ci: bool = True) -> str:
    """GitHub-flavoured markdown: the summary (runs x metrics) and the pairs table."""
    lines = ["| # | run | " + " | ".join(_md_escape(m) for m in cmp.metrics) + " |"]
    lines.append("|---|---|" + "|".join("---:" for _ in cmp.metrics) + "|")
    for run in cmp.runs:
        cells = _summary_cells(cmp, run, digits, ci, bold=lambda c: f"**{c}**", sup=lambda m: f"<sup>{m}</sup>",
                               interval=lambda lo, hi: f" [{lo}, {hi}]")
        lines.append(f"| {cmp.letters[run]} | {_md_escape(run)} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"_{_md_escape(cmp.description)}_")
    lines.append("")
    lines.append("| metric | control | treatment | Δ | Δ CI | p | p adj. | sig. | d_z | W/T/L |")
    lines.append("|---|---|---|---:|---:|---:|---:|:---:|---:|---:|")
    for (metric, a, b), row in cmp.pairs.iterrows():
        lines.append(
            f"| {_md_escape(metric)} | {_md_escape(a)} | {_md_escape(b)} | {row['delta']:+.{digits}f} | "
            f"[{_num(row['delta_ci_low'], digits)}, {_num(row['delta_ci_high'], digits)}] | "
            f"{_pval(row['p_value'])} | {_pval(row['p_adjusted'])} | {'yes' if row['significant'] else 'no'} | "
            f"{_num(row['cohens_dz'], 2)} | {row['wins']}/{row['ties']}/{row['losses']} |"
        )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------- LaTeX
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


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def to_latex(
    cmp: Comparison, digits: int = 4, ci: bool = False, caption: str | None = None, label: str | None = None
) -> str:
    """A booktabs ``table``: runs x metrics, best mean per metric in bold, markers as superscripts."""
    cols = "ll" + "r" * len(cmp.metrics)
    out = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{cols}}}", r"\toprule"]
    out.append(r"\# & Run & " + " & ".join(latex_escape(m) for m in cmp.metrics) + r" \\")
    out.append(r"\midrule")
    for run in cmp.runs:
        cells = _summary_cells(cmp, run, digits, ci, bold=lambda c: rf"\textbf{{{c}}}", sup=lambda m: rf"$^{{{m}}}$",
                               interval=lambda lo, hi: rf" {{\scriptsize [{lo}, {hi}]}}")
        out.append(f"{cmp.letters[run]} & {latex_escape(run)} & " + " & ".join(cells) + r" \\")
    out.append(r"\bottomrule")
    out.append(r"\end{tabular}")
    out.append(rf"\caption{{{latex_escape(caption if caption is not None else cmp.description)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------- rich
def to_rich(cmp: Comparison, digits: int = 4) -> Any:
    """A ``rich`` renderable: the summary table and the pairs table."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    summary = Table(title="Means and bootstrap CIs", caption=cmp.description, caption_justify="left")
    summary.add_column("#")
    summary.add_column("run")
    for metric in cmp.metrics:
        summary.add_column(Text(metric), justify="right")
    for run in cmp.runs:
        cells: list[Text | str] = [cmp.letters[run], Text(run)]
        for metric in cmp.metrics:
            row = cmp.summary.loc[(metric, run)]
            cell = Text(_num(row["mean"], digits), style="bold" if row["best"] else "")
            if row["marker"]:
                cell.append(superscript(row["marker"]), style="cyan")
            cell.append(f" [{_num(row['ci_low'], digits)}, {_num(row['ci_high'], digits)}]", style="dim")
            cells.append(cell)
        summary.add_row(*cells)

    pairs = Table(title="Paired differences (treatment − control)")
    for name, justify in [
        ("metric", "left"),
        ("control", "left"),
        ("treatment", "left"),
        ("Δ", "right"),
        ("Δ CI", "right"),
        ("p", "right"),
        ("p adj.", "right"),
        ("d_z", "right"),
        ("W/T/L", "right"),
    ]:
        pairs.add_column(name, justify=justify)  # type: ignore[arg-type]
    for (metric, a, b), row in cmp.pairs.iterrows():
        style = ("green" if row["delta"] > 0 else "red") if row["significant"] else ""
        pairs.add_row(
            Text(metric),
            Text(a),
            Text(b),
            Text(f"{row['delta']:+.{digits}f}", style=style),
            f"[{_num(row['delta_ci_low'], digits)}, {_num(row['delta_ci_high'], digits)}]",
            _pval(row["p_value"]),
            Text(_pval(row["p_adjusted"]), style="bold" if row["significant"] else ""),
            _num(row["cohens_dz"], 2),
            f"{row['wins']}/{row['ties']}/{row['losses']}",
        )
    return Group(summary, pairs)
