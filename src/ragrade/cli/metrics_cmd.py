"""``ragrade metrics``: the one metric registry as a table (also the source of ``docs/metrics.md``)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

KIND_TITLES = {
    "id": ("Measures from relevance judgments", "Computed by `ragrade evaluate` from qrels (ids, groups, or texts "
           "matched by a matcher); see `docs/conventions.md`."),
    "text": ("Text measures", "Token overlap between retrieved texts and ground-truth texts (AutoRAG's token "
             "metrics); see `docs/profiles.md`."),
    "judge": ("Judge measures", "Scored by `ragrade judge`: an LLM or an offline judge reads the texts; see "
              "`docs/judges.md`."),
    "diversity": ("Diversity measures", "Computed from subtopic judgments (TREC `qid subtopic docno rel` files) by "
                  "`ragrade.evaluate` / `ragrade evaluate` when every metric is a diversity measure "
                  "(`ragrade.evaluate_diversity`)."),
    "nugget": ("Nugget measures", "Computed from nuggets (atomic facts of a good answer) and their assignments to "
               "passages by `ragrade.evaluate(nuggets, run, ..., assignments=..., judge=...)` / `ragrade evaluate "
               "NUGGETS RUN --assignments FILE`; see `docs/nuggets.md`."),
    "trajectory": ("Trajectory measures", "Scored over the retrieval calls of one question (an agent's searches, a "
                   "conversation's turns) read from traces: `ragrade traces`, `ragrade.evaluate` on "
                   "`ragrade.read_traces(...).trajectories`; see `docs/traces.md`."),
}


def param_text(p: Any) -> str:
    """``name=default`` with the allowed values, e.g. ``gain=linear (linear|exp)``, ``rel=1 (>= 1)``."""
    default = "unset" if p.default is None else str(p.default)
    rule = p.constraint()
    return f"{p.name}={default}" + (f" ({rule})" if rule else "")


def cutoff_text(d: Any) -> str:
    if d.cutoff == "required":
        return "@k required"
    return "none (whole ranking)" if d.cutoff == "none" else "@k optional (default: whole list)"


def rows() -> list[dict[str, Any]]:
    """One dict per registered family (the shared source of the table, JSON and Markdown outputs)."""
    from ragrade.metrics.registry import REGISTRY

    return [{
        "name": d.name,
        "kind": d.kind,
        "aliases": [a for a in d.aliases if a != d.name],
        "parameters": [param_text(p) for p in d.params],
        "cutoff": cutoff_text(d),
        "definition": d.summary,
        "formula": d.formula,
        "mean_name": d.mean_name,
        "aggregate": d.aggregate,
        "source": d.source,
        "needs": list(d.needs),
        "example": d.example(),
    } for d in REGISTRY]


def render_markdown() -> str:
    """The Markdown reference of every metric (written to ``docs/metrics.md`` by
    ``scripts/gen_metrics_doc.py``; a test checks the file is up to date)."""
    from ragrade.metrics.registry import REGISTRY

    lines = [
        "# Metrics",
        "",
        "<!-- Generated from the metric registry (src/ragrade/metrics/registry.py) by",
        "     scripts/gen_metrics_doc.py. Do not edit by hand: edit the registry and re-run the script. -->",
        "",
        "Every metric is written `name(param=value,...)@k`: names and aliases are case-insensitive, the",
        "parameters and the cutoff are optional (no cutoff = the whole retrieved list), and a list of",
        "cutoffs such as `recall@[1,5,10]` expands to one metric per cutoff. One parser reads every kind of",
        "metric below; `str(metric)` parses back to an equal metric. The aggregate over queries is the",
        "arithmetic mean over the counted queries unless the family says otherwise (trec_eval's counts are",
        "summed, `gm_map` and `gm_bpref` are geometric means); see `docs/conventions.md` for the policies.",
        "",
        "ir-measures' spellings are read as ir-measures writes them (`nDCG@10`, `P(rel=2)@5`, `RBP(p=0.8)`,",
        "`IPrec@0.5`, `SetP(relative=True)`, `nDCG(gains={0:0,1:1,2:3})@10`, `judged_only=True`), ranx's",
        "too (`ndcg_burges@10`, `map@100-l2`, `rbp.95`), and trec_eval's names as trec_eval reads them (the",
        "table at the end). Every result also carries the hole rate (`result.hole_rate`): the share of each",
        "query's top-k documents without a judgment, k the largest cutoff asked (10 when none is).",
    ]
    table = rows()
    for kind, (title, blurb) in KIND_TITLES.items():
        lines += ["", f"## {title}", "", blurb, "",
                  "| metric | aliases | parameters | definition | formula |", "|---|---|---|---|---|"]
        for r in table:
            if r["kind"] != kind:
                continue
            aliases = ", ".join(f"`{a}`" for a in r["aliases"]) or "-"
            params = "<br>".join(f"`{p}`" for p in r["parameters"]) or "-"
            lines.append(f"| `{r['name']}` | {aliases} | {_md(params)} | {_md(r['definition'])} | "
                         f"`{_md(r['formula'])}` |")
    lines += ["", "## Details", ""]
    for d in REGISTRY:
        lines.append(f"### `{d.name}`")
        lines.append("")
        lines.append(_md(d.summary))
        lines.append("")
        lines.append(f"- kind: {d.kind}")
        lines.append(f"- formula: `{d.formula}`")
        lines.append(f"- cutoff: {cutoff_text(d)}; example: `{d.example()}`")
        if d.aliases:
            lines.append("- aliases: " + ", ".join(f"`{a}`" for a in d.aliases if a != d.name))
        for p in d.params:
            lines.append(f"- parameter `{param_text(p)}`" + (f": {_md(p.doc)}" if p.doc else ""))
        if d.needs:
            lines.append("- needs: " + ", ".join(d.needs))
        if d.kind == "id":
            lines.append(f"- defined on: {_DEFINED[d.defined]}")
        props = []
        if d.bounded:
            props.append("always in [0, 1]")
        if d.monotone_in_k:
            props.append("non-decreasing in k")
        if d.ideal_is_one:
            props.append("the ideal ranking scores 1")
        if props:
            lines.append("- properties: " + "; ".join(props))
        if d.aggregate != "mean":
            lines.append(f"- aggregate: {_AGGREGATE[d.aggregate]}")
        if d.needs_judged:
            lines.append("- reads judged non-relevant documents too: adding a judgment of grade 0 can change it")
        if d.source:
            lines.append(f"- source: {_md(d.source)}")
        for note in d.notes:
            lines.append(f"- note: {_md(note)}")
        lines.append("")
    lines += _trec_section()
    return "\n".join(lines).rstrip("\n") + "\n"


_AGGREGATE = {"sum": "the sum over queries (trec_eval's counts)",
              "gmean": "the geometric mean over queries of the values floored at 1e-5 (trec_eval)",
              "mean": "the mean"}


def _trec_section() -> list[str]:
    """The table of trec_eval's names (from the registry's TREC table)."""
    from ragrade.metrics.parser import parse_labelled
    from ragrade.metrics.registry import TREC, TREC_NICKNAMES

    lines = ["## trec_eval's names", "",
             "Written as trec_eval writes them (case-sensitive) on `-m`: a family name stands for the family at",
             "trec_eval's official parameters (`P` is `P_5` ... `P_1000`), `name.values` sets them (`P.5,10`,",
             "`ndcg_cut.5,10`, `iprec_at_recall.0.5`, `ndcg.1=3,2=9`, `rbp.p=0.5`, `utility.1,-1,0,0`), output",
             "names name one metric (`P_5`, `iprec_at_recall_0.50`, `Rprec_mult_0.20`), and the results are",
             "labelled with trec_eval's output names. Under `names=\"ragrade\"` (the default), a bare name that",
             "is also a ragrade family of its own (`recall`, `rbp`) keeps ragrade's meaning; `names=\"trec_eval\"`",
             "(`--names trec_eval`) reads it as trec_eval does. Nicknames: "
             + "; ".join(f"`{k}` ({len(v)} names)" for k, v in TREC_NICKNAMES.items())
             + ". `runid` and `relstring` (text, not numbers) are left out.",
             "", "| trec_eval | ragrade | version | stands for |", "|---|---|---|---|"]
    for t in TREC:
        labels = parse_labelled(t.name, "trec_eval")
        shown = ", ".join(f"`{label}` = `{m}`" for label, m in labels[:3]) + (", ..." if len(labels) > 3 else "")
        lines.append(f"| `{t.name}` | `{t.family}` | {t.version} | {_md(shown)} |")
    lines.append("")
    return lines


_DEFINED = {
    "relevant": "queries with at least one relevant unit at the metric's `rel` (the `no_relevant` policy "
                "decides the others)",
    "positive": "queries with at least one positive grade (at `rel` when set; the `no_relevant` policy decides "
                "the others)",
    "always": "every query",
    "value": "the queries where the measure gives a number (see the definition; the `no_relevant` policy "
             "decides the others)",
}


def _md(text: str) -> str:
    return text.replace("|", "\\|")


@click.command(name="metrics")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True, help="Output format.")
@click.option("--kind", type=click.Choice(["id", "text", "judge"]), default=None,
              help="Only the metrics of one kind (default: all).")
def command(fmt: str, kind: str | None) -> None:
    """List every metric: name, kind, aliases, parameters, one-line definition and formula."""
    table_rows = [r for r in rows() if kind is None or r["kind"] == kind]
    if fmt == "json":
        click.echo(json.dumps(table_rows, indent=2))
        return
    if fmt == "markdown":
        click.echo(render_markdown(), nl=False)
        return
    # Plain text, one block per family (a rich table of ~100 families took 0.4 s to lay out).
    import shutil
    import textwrap

    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    color = sys.stdout.isatty()
    out = ["ragrade metrics (write name(param=value)@k; e.g. ndcg(gain=exp)@10, recall@[5,10])", ""]
    for r in table_rows:
        head = click.style(r["name"], bold=True) if color else r["name"]
        out.append(f"{head}  [{r['kind']}]" + (f"  also: {', '.join(r['aliases'])}" if r["aliases"] else ""))
        for label, text in (("", r["definition"]), ("formula: ", r["formula"])):
            out.extend(textwrap.wrap(label + text, width, initial_indent="  ", subsequent_indent="    "))
        for param in r["parameters"]:
            out.extend(textwrap.wrap(param, width, initial_indent="  - ", subsequent_indent="    "))
        out.append("")
    click.echo("\n".join(out), nl=False)
