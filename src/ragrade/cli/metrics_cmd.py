"""``ragrade metrics``: the metric registry as a table (also the source of ``docs/metrics.md``)."""

from __future__ import annotations

import json
from typing import Any

import click

from ragrade.metrics import REGISTRY, MetricDef, ParamSpec


def param_text(p: ParamSpec) -> str:
    """``name=default`` with the allowed values, e.g. ``gain=linear (linear|exp)``, ``rel=1 (>= 1)``."""
    default = "unset" if p.default is None else str(p.default)
    extra = ""
    if p.choices:
        extra = " (" + "|".join(map(str, p.choices)) + ")"
    elif p.minimum is not None:
        extra = f" (>= {p.minimum:g})"
    return f"{p.name}={default}{extra}"


def cutoff_text(d: MetricDef) -> str:
    return "none (whole ranking)" if d.cutoff == "none" else "@k optional (default: whole list)"


def example(d: MetricDef) -> str:
    return d.name if d.cutoff == "none" else f"{d.name}@10"


def rows() -> list[dict[str, Any]]:
    """One dict per registered metric (the shared source of the table, JSON and Markdown outputs)."""
    out = []
    for d in REGISTRY:
        out.append({
            "name": d.name,
            "aliases": [a for a in d.aliases if a != d.name],
            "parameters": [param_text(p) for p in d.params],
            "cutoff": cutoff_text(d),
            "definition": d.summary,
            "formula": d.formula,
            "mean_name": d.mean_name,
            "example": example(d),
        })
    return out


def judge_rows() -> list[dict[str, Any]]:
    """The judge-based context metrics (``ragrade judge``), from their own registry."""
    from ragrade.judges.metrics import JUDGE_METRICS

    return [
        {"name": m.name, "aliases": list(m.aliases), "needs": list(m.needs),
         "cutoff": "@k optional" if m.takes_k else "none", "definition": m.summary}
        for m in JUDGE_METRICS.values()
    ]


def render_markdown() -> str:
    """The Markdown reference of every metric (written to ``docs/metrics.md`` by
    ``scripts/gen_metrics_doc.py``; a test checks the file is up to date)."""
    lines = [
        "# Metrics",
        "",
        "<!-- Generated from the metric registry (src/ragrade/metrics/registry.py) by",
        "     scripts/gen_metrics_doc.py. Do not edit by hand: edit the registry and re-run the script. -->",
        "",
        "Every metric is written `name(param=value,...)@k`: names and aliases are case-insensitive, the",
        "parameters and the cutoff are optional (no cutoff = the whole retrieved list), and a list of",
        "cutoffs such as `recall@[1,5,10]` expands to one metric per cutoff. The mean over queries is the",
        "arithmetic mean over the counted queries (see `docs/conventions.md` for the policies).",
        "",
        "| metric | aliases | parameters | definition | formula |",
        "|---|---|---|---|---|",
    ]
    for r in rows():
        aliases = ", ".join(f"`{a}`" for a in r["aliases"]) or "-"
        params = "<br>".join(f"`{p}`" for p in r["parameters"]) or "-"
        lines.append(f"| `{r['name']}` | {aliases} | {_md(params)} | {_md(r['definition'])} | `{_md(r['formula'])}` |")
    lines += [
        "",
        "## Judge-based context metrics",
        "",
        "Scored by `ragrade judge` (an LLM or an offline judge reads the texts; see `docs/judges.md`).",
        "",
        "| metric | aliases | needs | cutoff | definition |",
        "|---|---|---|---|---|",
    ]
    for r in judge_rows():
        aliases = ", ".join(f"`{a}`" for a in r["aliases"]) or "-"
        lines.append(f"| `{r['name']}` | {aliases} | {', '.join(r['needs'])} | {r['cutoff']} | {_md(r['definition'])} |")
    lines += ["", "## Details", ""]
    for d in REGISTRY:
        lines.append(f"### `{d.name}`")
        lines.append("")
        lines.append(_md(d.summary))
        lines.append("")
        lines.append(f"- formula: `{d.formula}`")
        lines.append(f"- cutoff: {cutoff_text(d)}; example: `{example(d)}`")
        if d.aliases:
            lines.append("- aliases: " + ", ".join(f"`{a}`" for a in d.aliases if a != d.name))
        for p in d.params:
            lines.append(f"- parameter `{param_text(p)}`" + (f": {_md(p.doc)}" if p.doc else ""))
        props = []
        if d.bounded:
            props.append("always in [0, 1]")
        if d.monotone_in_k:
            props.append("non-decreasing in k")
        if d.ideal_is_one:
            props.append("the ideal ranking scores 1")
        if props:
            lines.append("- properties: " + "; ".join(props))
        for note in d.notes:
            lines.append(f"- note: {_md(note)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


@click.command(name="metrics")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True, help="Output format.")
def command(fmt: str) -> None:
    """List every metric: name, aliases, parameters, one-line definition and formula."""
    if fmt == "json":
        click.echo(json.dumps(rows(), indent=2))
        return
    if fmt == "markdown":
        click.echo(render_markdown(), nl=False)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title="ragrade metrics (write name(param=value)@k; e.g. ndcg(gain=exp)@10, recall@[5,10])",
                  title_justify="left", show_lines=True)
    table.add_column("metric", no_wrap=True)
    for col in ("aliases", "parameters", "definition", "formula"):
        table.add_column(col, overflow="fold")
    for r in rows():
        table.add_row(Text(r["name"], style="bold"), Text(", ".join(r["aliases"])),
                      Text("\n".join(r["parameters"])), Text(r["definition"]), Text(r["formula"]))
    judged = Table(title="judge-based context metrics (ragrade judge; see docs/judges.md)", title_justify="left",
                   show_lines=True)
    judged.add_column("metric", no_wrap=True)
    for col in ("aliases", "needs", "cutoff", "definition"):
        judged.add_column(col, overflow="fold")
    for r in judge_rows():
        judged.add_row(Text(r["name"], style="bold"), Text(", ".join(r["aliases"])), Text(", ".join(r["needs"])),
                       Text(r["cutoff"]), Text(r["definition"]))
    console = Console(highlight=False)
    console.print(table)
    console.print(judged)
