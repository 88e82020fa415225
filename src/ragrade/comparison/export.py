"""Exports of a comparison: rich table, markdown, LaTeX, CSV and JSON.

The functions take anything shaped like :class:`~ragrade.comparison.Comparison` (the
:class:`ComparisonTables` protocol) and import nothing from the module that defines it, so the result
class can call them without an import circle.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ragrade.errors import InputError
from ragrade.formatting import (
    jsonable,
    latex_escape,
    markdown_escape,
    number,
    pvalue,
    signed,
    superscript,
)

if TYPE_CHECKING:
    import pandas as pd


class ComparisonTables(Protocol):
    """What an export reads: the tables of a comparison and how it was made."""

    @property
    def runs(self) -> list[str]: ...
    @property
    def metrics(self) -> list[str]: ...
    @property
    def letters(self) -> dict[str, str]: ...
    @property
    def summary(self) -> pd.DataFrame: ...
    @property
    def pairs(self) -> pd.DataFrame: ...
    @property
    def description(self) -> str: ...
    def describe(self, ci: bool = True) -> str: ...
    @property
    def has_groups(self) -> bool: ...
    def settings(self) -> dict[str, Any]: ...


MDE_NOTE = (
    "mde: the smallest mean difference a two-sided paired t-test at this alpha detects with power 0.8 at the "
    "pair's number of queries; a difference below it that is not significant could not have been seen"
)


def mde_note(cmp: ComparisonTables) -> str:
    """The sentence explaining the MDE column (empty when no pair has one)."""
    if "mde" not in cmp.pairs.columns or not cmp.pairs["mde"].notna().any():
        return ""
    return "MDE: " + MDE_NOTE.split(": ", 1)[1] + "."


# ------------------------------------------------------------------------------------------------- rows
def summary_rows(cmp: ComparisonTables) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(metric, run): row}`` of the summary table, each row a plain dict."""
    records = cmp.summary.to_dict("records")
    return {(str(m), str(r)): {str(k): v for k, v in row.items()}
            for (m, r), row in zip(cmp.summary.index, records, strict=True)}


def pair_rows(cmp: ComparisonTables) -> list[tuple[str, str, str, dict[str, Any]]]:
    """``[(metric, control, treatment, row), ...]`` of the pairs table, each row a plain dict."""
    records = cmp.pairs.to_dict("records")
    return [(str(m), str(a), str(b), {str(k): v for k, v in row.items()})
            for (m, a, b), row in zip(cmp.pairs.index, records, strict=True)]


# ----------------------------------------------------------------------------------------------- dict/JSON
def to_dict(cmp: ComparisonTables) -> dict[str, Any]:
    """Plain data (JSON-ready: non-finite floats become ``None``)."""
    summary = [{"metric": m, "run": r, **row} for (m, r), row in summary_rows(cmp).items()]
    pairs = [{"metric": m, "control": a, "treatment": b, **row} for m, a, b, row in pair_rows(cmp)]
    out: dict[str, Any] = {
        "runs": [{"name": r, "letter": cmp.letters[r]} for r in cmp.runs],
        "metrics": list(cmp.metrics),
        **cmp.settings(),
        "effect_size": "cohens_dz: mean of per-query differences / their standard deviation (ddof=1)",
        "mde": MDE_NOTE,
        "description": cmp.description,
        "summary": summary,
        "pairs": pairs,
    }
    holes = getattr(cmp, "hole_rates", None)
    if holes:
        out["hole_rates"] = {"k": getattr(cmp, "hole_k", None), "runs": dict(holes)}
    sliced = getattr(cmp, "slices", None)
    if sliced is not None:
        out["slices"] = sliced.to_dict()
        out["slices_description"] = sliced.description
    return dict(jsonable(out))


def to_json(cmp: ComparisonTables, indent: int | None = 2) -> str:
    return json.dumps(to_dict(cmp), indent=indent, ensure_ascii=False, allow_nan=False)


# ----------------------------------------------------------------------------------------------------- CSV
def to_csv(cmp: ComparisonTables, table: str = "summary") -> str:
    """CSV of the ``summary`` (one row per metric and run) or the ``pairs`` table."""
    if table == "summary":
        frame = cmp.summary.reset_index().copy()
        frame["better_than"] = frame["better_than"].map(";".join)
        frame["worse_than"] = frame["worse_than"].map(";".join)
    elif table == "pairs":
        frame = cmp.pairs.reset_index()
    else:
        raise InputError("table must be 'summary' or 'pairs'", value=table)
    buf = io.StringIO()
    frame.to_csv(buf, index=False, lineterminator="\n", float_format="%.17g")
    return buf.getvalue()


# ------------------------------------------------------------------------------------- shared cell builder
def summary_cells(
    cmp: ComparisonTables,
    run: str,
    digits: int,
    ci: bool,
    *,
    bold: Callable[[str], str],
    sup: Callable[[str], str],
    interval: Callable[[str, str], str],
    group: Callable[[str], str] | None = None,
) -> list[str]:
    """One run's cells of the summary table (mean, bold if best, significance marker, CI, group), with
    the markup of the output format supplied by the callables."""
    cells = []
    rows = summary_rows(cmp)
    for metric in cmp.metrics:
        row = rows[(metric, run)]
        cell = number(row["mean"], digits)
        if row["best"]:
            cell = bold(cell)
        if row["marker"]:
            cell += sup(str(row["marker"]))
        if ci:
            cell += interval(number(row["ci_low"], digits), number(row["ci_high"], digits))
        if group is not None and row["group"]:
            cell += group(str(row["group"]))
        cells.append(cell)
    return cells


def hole_cells(cmp: ComparisonTables) -> dict[str, str]:
    """Per run, its hole rate as a percentage (empty when the comparison has none)."""
    holes = getattr(cmp, "hole_rates", None) or {}
    return {r: ("nan" if holes.get(r, math.nan) != holes.get(r, math.nan) else f"{100 * holes[r]:.1f}%")
            for r in cmp.runs} if holes else {}


def hole_note(cmp: ComparisonTables) -> str:
    """The sentence on the runs' hole rates (empty when the comparison has none)."""
    note = getattr(cmp, "hole_note", None)
    return note() if callable(note) else ""


def groups_note(cmp: ComparisonTables) -> str:
    """The sentence explaining the group letters (empty when the comparison has none)."""
    if not cmp.has_groups:
        return ""
    return "Runs that share a group letter (A, B, ...) cannot be told apart at this level."


# ------------------------------------------------------------------------------------------------ markdown
def to_markdown(cmp: ComparisonTables, digits: int = 4, ci: bool = True) -> str:
    """GitHub-flavoured markdown: the summary (runs x metrics) and the pairs table."""
    holes = hole_cells(cmp)
    hole_head = f" | holes@{getattr(cmp, 'hole_k', '')}" if holes else ""
    lines = ["| # | run | " + " | ".join(markdown_escape(m) for m in cmp.metrics) + hole_head + " |"]
    lines.append("|---|---|" + "|".join("---:" for _ in cmp.metrics) + ("|---:" if holes else "") + "|")
    for run in cmp.runs:
        cells = summary_cells(
            cmp,
            run,
            digits,
            ci,
            bold=lambda c: f"**{c}**",
            sup=lambda m: f"<sup>{m}</sup>",
            interval=lambda lo, hi: f" [{lo}, {hi}]",
            group=lambda g: f" ({g})",
        )
        lines.append(f"| {cmp.letters[run]} | {markdown_escape(run)} | " + " | ".join(cells)
                     + (f" | {holes[run]}" if holes else "") + " |")
    lines.append("")
    note = " ".join(x for x in (cmp.description, groups_note(cmp), hole_note(cmp)) if x)
    lines.append(f"_{markdown_escape(note)}_")
    lines.append("")
    lines.append("| metric | control | treatment | Δ | Δ CI | p | p adj. | sig. | d_z | MDE | W/T/L |")
    lines.append("|---|---|---|---:|---:|---:|---:|:---:|---:|---:|---:|")
    for metric, a, b, row in pair_rows(cmp):
        lines.append(
            f"| {markdown_escape(metric)} | {markdown_escape(a)} | {markdown_escape(b)} | "
            f"{signed(row['delta'], digits)} | "
            f"[{number(row['delta_ci_low'], digits)}, {number(row['delta_ci_high'], digits)}] | "
            f"{pvalue(row['p_value'])} | {pvalue(row['p_adjusted'])} | {'yes' if row['significant'] else 'no'} | "
            f"{number(row['cohens_dz'], 2)} | {number(row.get('mde', math.nan), digits)} | "
            f"{row['wins']}/{row['ties']}/{row['losses']} |"
        )
    note = mde_note(cmp)
    if note:
        lines += ["", f"_{markdown_escape(note)}_"]
    sliced = getattr(cmp, "slices", None)
    if sliced is not None:
        lines += ["", sliced.to_markdown(digits=digits).rstrip("\n")]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------- LaTeX
def to_latex(
    cmp: ComparisonTables,
    digits: int = 4,
    ci: bool = False,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """A booktabs ``table``: runs x metrics, best mean per metric in bold, markers as superscripts, group
    letters (when all pairs were compared) as small capitals after the mean."""
    cols = "ll" + "r" * len(cmp.metrics)
    out = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{cols}}}", r"\toprule"]
    out.append(r"\# & Run & " + " & ".join(latex_escape(m) for m in cmp.metrics) + r" \\")
    out.append(r"\midrule")
    for run in cmp.runs:
        cells = summary_cells(
            cmp,
            run,
            digits,
            ci,
            bold=lambda c: rf"\textbf{{{c}}}",
            sup=lambda m: rf"$^{{{m}}}$",
            interval=lambda lo, hi: rf" {{\scriptsize [{lo}, {hi}]}}",
            group=lambda g: rf" {{\scriptsize {g}}}",
        )
        out.append(f"{cmp.letters[run]} & {latex_escape(run)} & " + " & ".join(cells) + r" \\")
    out.append(r"\bottomrule")
    out.append(r"\end{tabular}")
    text = caption if caption is not None else " ".join(x for x in (cmp.describe(ci), groups_note(cmp)) if x)
    out.append(rf"\caption{{{latex_escape(text)}}}")
    if label:
        out.append(rf"\label{{{label}}}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------------- rich
def to_rich(cmp: ComparisonTables, digits: int = 4) -> Any:
    """A ``rich`` renderable: the summary table and the pairs table."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    caption = " ".join(x for x in (cmp.description, groups_note(cmp), hole_note(cmp)) if x)
    summary = Table(title="Means and bootstrap CIs", caption=caption, caption_justify="left")
    summary.add_column("#")
    summary.add_column("run")
    for metric in cmp.metrics:
        summary.add_column(Text(metric), justify="right")
    holes = hole_cells(cmp)
    if holes:
        summary.add_column(f"holes@{getattr(cmp, 'hole_k', '')}", justify="right")
    rows = summary_rows(cmp)
    for run in cmp.runs:
        cells: list[Text | str] = [cmp.letters[run], Text(run)]
        for metric in cmp.metrics:
            row = rows[(metric, run)]
            cell = Text(number(row["mean"], digits), style="bold" if row["best"] else "")
            if row["marker"]:
                cell.append(superscript(str(row["marker"])), style="cyan")
            cell.append(f" [{number(row['ci_low'], digits)}, {number(row['ci_high'], digits)}]", style="dim")
            if row["group"]:
                cell.append(f" {row['group']}", style="magenta")
            cells.append(cell)
        if holes:
            cells.append(holes[run])
        summary.add_row(*cells)

    pairs = Table(title="Paired differences (treatment − control)", caption=mde_note(cmp) or None,
                  caption_justify="left")
    for name in ("metric", "control", "treatment"):
        pairs.add_column(name, justify="left")
    for name in ("Δ", "Δ CI", "p", "p adj.", "d_z", "MDE", "W/T/L"):
        pairs.add_column(name, justify="right")
    for metric, a, b, row in pair_rows(cmp):
        style = ("blue" if row["delta"] > 0 else "red") if row["significant"] else ""
        pairs.add_row(
            Text(metric),
            Text(a),
            Text(b),
            Text(signed(row["delta"], digits), style=style),
            f"[{number(row['delta_ci_low'], digits)}, {number(row['delta_ci_high'], digits)}]",
            pvalue(row["p_value"]),
            Text(pvalue(row["p_adjusted"]), style="bold" if row["significant"] else ""),
            number(row["cohens_dz"], 2),
            number(row.get("mde", math.nan), digits),
            f"{row['wins']}/{row['ties']}/{row['losses']}",
        )
    sliced = getattr(cmp, "slices", None)
    if sliced is not None:
        return Group(summary, pairs, sliced.to_rich(digits=digits))
    return Group(summary, pairs)
