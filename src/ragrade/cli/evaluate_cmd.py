"""``ragrade evaluate QRELS RUN -m METRIC ...``: score a run file against a ground-truth file."""

from __future__ import annotations

import csv
import io
import json
import warnings
from typing import Any

import click

from ragrade.cli._output import input_errors, json_number, number, reading_all, stderr_console, stdout_console
from ragrade.io import FORMATS
from ragrade.policies import Policies

OUTPUT_FORMATS = ("table", "json", "csv", "markdown")

_POLICY_HELP = {
    "missing_run": "Query in the ground truth but not in the run",
    "missing_qrels": "Query in the run but not in the ground truth",
    "no_relevant": "Query with no relevant judgment (R = 0)",
    "duplicates": "Same item twice in one ranking",
    "ties": "Order of equal scores",
    "identical_ids": "Items whose id equals the query id",
    "empty_run": "Query with an empty retrieved list",
}


def _policy_options(f):
    defaults = Policies()
    for name, choices in reversed(list(Policies.choices().items())):
        flag = "--" + name.replace("_", "-")
        f = click.option(
            flag, name, type=click.Choice(choices), default=None,
            help=f"{_POLICY_HELP.get(name, name)} (default: {getattr(defaults, name)}).",
        )(f)
    return f


@click.command(name="evaluate")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("-m", "--metric", "metrics", multiple=True, required=True, metavar="METRIC",
              help="Metric to compute, e.g. ndcg@10, 'recall@[5,10]', 'precision(rel=2)@5'. Repeatable.")
@click.option("--per-query", is_flag=True, help="Also output the value of every query.")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="Output format.")
@click.option("--qrels-format", type=click.Choice(FORMATS), default=None,
              help="Format of QRELS (default: from the extension).")
@click.option("--run-format", type=click.Choice(FORMATS), default=None,
              help="Format of RUN (default: from the extension).")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True,
              help="Decimals shown in table, csv and markdown output (json is exact).")
@click.option("--profile", default=None, metavar="PROFILE",
              help="Score under a peer's conventions (autorag, ragas, continuous-eval, remem, llamaindex, "
                   "deepeval, trec_eval, pytrec_eval, beir, ir_measures). See docs/profiles.md.")
@_policy_options
def command(qrels: str, run: str, metrics: tuple[str, ...], per_query: bool, fmt: str, qrels_format: str | None,
            run_format: str | None, digits: int, profile: str | None = None, **policies: Any) -> None:
    """Score RUN against the ground truth QRELS.

    Formats are detected from the file extensions (TREC, TSV/CSV, JSONL, Parquet, optionally
    gzipped). Results go to stdout; warnings about undefined cases go to stderr.

    \b
    Example:
      ragrade evaluate examples/qrels.tsv examples/run.tsv -m ndcg@10 -m recall@5
    """
    from ragrade.errors import RagradeWarning
    from ragrade.evaluation import Evaluator, read_both
    from ragrade.metrics import expand_labels

    with input_errors():
        for m in metrics:  # fail on a typo before reading large files
            expand_labels(m)
        with reading_all([(qrels, "ground truth"), (run, "run")]) as (q_progress, r_progress):
            # Both files at once: Arrow parses without holding the GIL.
            q, r = read_both(qrels, run, qrels_format=qrels_format, qrels_progress=q_progress,
                             run_format=run_format, run_progress=r_progress)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RagradeWarning)
            if profile is None:
                result = Evaluator(q, list(metrics), **policies).evaluate(r)
            else:
                from ragrade.rag import evaluate_profile

                result = evaluate_profile(q, r, list(metrics), profile, **policies)
    notes = [part for w in caught if issubclass(w.category, RagradeWarning) for part in str(w.message).split("; ")]
    if fmt == "table":
        _print_table(result, per_query, digits)
    else:
        for note in notes:
            click.echo(f"warning: {note}", err=True)
        if fmt == "json":
            click.echo(json.dumps(as_json(result, per_query), indent=2))
        elif fmt == "csv":
            click.echo(as_csv(result, per_query, digits), nl=False)
        else:
            click.echo(result.to_markdown(per_query=per_query, digits=digits), nl=False)


def as_json(result: Any, per_query: bool) -> dict[str, Any]:
    """``{"metrics": {label: mean}, "queries": n}`` (+ ``"per_query"``); NaN becomes null."""
    out: dict[str, Any] = {
        "metrics": {k: json_number(v) for k, v in result.means.items()},
        "queries": result.n_queries,
    }
    if per_query:
        frame = result.per_query
        cols = list(frame.columns)
        out["per_query"] = {
            str(q): {c: json_number(v) for c, v in zip(cols, row, strict=True)}
            for q, row in zip(frame.index.tolist(), frame.itertuples(index=False, name=None), strict=True)
        }
    return out


def as_csv(result: Any, per_query: bool, digits: int) -> str:
    """Means as ``metric,mean,queries`` rows; with ``per_query``, one row per query (``query,<metrics>``)
    followed by a row ``all`` with the means (as trec_eval)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    means = result.means
    if per_query:
        cols = list(result.per_query.columns)
        w.writerow(["query", *cols])
        for q, row in zip(result.per_query.index.tolist(), result.per_query.itertuples(index=False, name=None),
                          strict=True):
            w.writerow([q, *(number(float(v), digits) for v in row)])
        w.writerow(["all", *(number(means[c], digits) for c in cols)])
    else:
        counts = result.counts
        w.writerow(["metric", "mean", "queries"])
        for label, mean in means.items():
            w.writerow([label, number(mean, digits), counts[label]])
    return buf.getvalue()


def summary_lines(result: Any) -> list[str]:
    """Short human-readable account of what the policies did."""
    s = result.summary
    pol = result.policies
    lines = [f"{s.qrels_queries} queries in the ground truth, {s.run_queries} in the run, {s.evaluated} evaluated"]

    def ex(items: list[str]) -> str:
        shown = ", ".join(items[:3])
        return f" (e.g. {shown}{', ...' if len(items) > 3 else ''})"

    if s.missing_from_run:
        what = "scored 0" if pol.missing_run == "zero" else "dropped"
        lines.append(f"{len(s.missing_from_run)} missing from the run, {what}{ex(s.missing_from_run)}")
    if s.only_in_run:
        lines.append(f"{len(s.only_in_run)} only in the run, ignored{ex(s.only_in_run)}")
    if s.no_relevant:
        worst = max(s.no_relevant.values(), key=len)
        action = {"skip": "left out of the means", "zero": "scored 0", "nan": "NaN"}.get(pol.no_relevant, "")
        lines.append(f"{len(worst)} without relevant judgments, {action}{ex(worst)}")
    if s.empty_lists:
        lines.append(f"{len(s.empty_lists)} with an empty retrieved list, scored 0{ex(s.empty_lists)}")
    if s.duplicate_items:
        lines.append(f"{s.duplicate_items} duplicate items in rankings ({pol.duplicates})")
    if s.identical_ids_dropped:
        lines.append(f"{s.identical_ids_dropped} items with the query's own id dropped")
    for k, n in sorted(s.ties_at_cutoff.items()):
        lines.append(f"{_count(n, 'query has', 'queries have')} tied scores across cutoff {k} (values depend "
                     f"on the tie rule: {pol.ties})")
    return lines


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _print_table(result: Any, per_query: bool, digits: int) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    out = stdout_console()
    title = Text(f"run {result.run_name}") if result.run_name else None
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("queries", justify="right")
    counts = result.counts
    for label, mean in result.means.items():
        table.add_row(Text(label), number(mean, digits), str(counts[label]))
    out.print(table)
    if per_query:
        pq = Table(title="per query", title_justify="left")
        pq.add_column("query")
        cols = list(result.per_query.columns)
        for c in cols:
            pq.add_column(Text(c), justify="right")
        for q, row in zip(result.per_query.index.tolist(), result.per_query.itertuples(index=False, name=None),
                          strict=True):
            pq.add_row(Text(str(q)), *(number(float(v), digits) for v in row))
        out.print(pq)
    lines = summary_lines(result)
    err = stderr_console()
    for i, line in enumerate(lines):
        if i == 0:
            out.print(Text(line, style="dim"))
        else:
            err.print(f"[yellow]note:[/yellow] {escape(line)}")
