"""``ragrade traces TRACES --qrels QRELS -m recall@10 -m trajectory_recall``: evaluate the retrieval recorded
in traces (OTLP JSON, Phoenix span exports, Langfuse exports; docs/traces.md)."""

from __future__ import annotations

import json
import warnings
from typing import Any

import click

from ragrade.cli._output import input_errors, print_result, stdout_console
from ragrade.cli._plan_options import evaluation_options, plan_keywords
from ragrade.io import FORMATS
from ragrade.traces.summary import trace_totals

OUTPUT_FORMATS = ("table", "json", "csv", "markdown")
SLICES = ("call", "turn")


@click.command(name="traces")
@click.argument("traces", type=click.Path())
@click.option("--qrels", required=True, type=click.Path(), help="The ground truth (any qrels file ragrade reads).")
@click.option("-m", "--metric", "metrics", multiple=True, required=True, metavar="METRIC",
              help="Metric: id measures score every call (recall@10, ndcg@10), trajectory measures every trace or "
                   "session (trajectory_recall, calls_to_first_relevant, redundancy, hop_success, session_dcg@k). "
                   "Repeatable.")
@click.option("--key", default=None, metavar="ATTR",
              help="What joins a trace to the ground truth: trace (the trace id, default), session, question "
                   "(matched against --topics) or a span attribute (example.id, metadata.example_id).")
@click.option("--by", "by", type=click.Choice(["trace", "session"]), default=None,
              help="Trajectories: one per trace, or one per session (default: session with --key session).")
@click.option("--topics", default=None, type=click.Path(), help="Topics file (query id and text) for --key question.")
@click.option("--traces-format", type=click.Choice(FORMATS), default=None,
              help="Format of TRACES (default: from the extension and the first line).")
@click.option("--qrels-format", type=click.Choice(FORMATS), default=None, help="Format of QRELS (default: from the extension).")
@click.option("--slice-by", "slice_by", type=click.Choice(SLICES), multiple=True,
              help="Per-call means by call index or by turn (later calls or turns worse or not). Repeatable.")
@click.option("--per-query", is_flag=True, help="Also output the value of every call and trajectory.")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="Output format.")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True,
              help="Decimals shown in table, csv and markdown output (json is exact).")
@click.option("--hole-threshold", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="Warn when the mean hole rate (share of unjudged documents in the top k) exceeds it.")
@evaluation_options
def command(traces: str, qrels: str, metrics: tuple[str, ...], key: str | None, by: str | None, topics: str | None,
            traces_format: str | None, qrels_format: str | None, slice_by: tuple[str, ...], per_query: bool, fmt: str,
            digits: int, hole_threshold: float, **options: Any) -> None:
    """Evaluate the retrieval calls recorded in TRACES against QRELS: every call with the id measures, every
    trajectory (trace or session) with the trajectory measures, each reranker's lift (its output against its
    input, paired), and the latency percentiles, tokens and cost of each retriever.

    \b
    Examples:
      ragrade traces examples/traces.jsonl --qrels examples/traces_qrels.tsv --key example.id \\
          -m recall@5 -m trajectory_recall -m redundancy
      ragrade traces phoenix_spans.parquet --qrels qrels.tsv --key session --slice-by turn -m ndcg@10
    """
    from ragrade.errors import RagradeWarning

    with input_errors():
        keywords = plan_keywords(options)
        ids, trajectory = _split(metrics)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RagradeWarning)
            read = _read(traces, key, by, topics, traces_format)
            results = _evaluate(qrels, qrels_format, read, ids, trajectory, keywords)
            lift = _lift(qrels if qrels_format is None else _qrels(qrels, qrels_format), read, ids, keywords)
        sliced = None
        if slice_by and "calls" in results:
            labels = read.slices.rename(columns={"call_index": "call"})[list(slice_by)]
            sliced = results["calls"].by(labels)
    from ragrade.errors import PolicyNote

    warned = [str(w.message) for w in caught if issubclass(w.category, RagradeWarning)
              and not issubclass(w.category, PolicyNote) and str(w.message) != "; ".join(read.notes)]
    _show(read, results, lift, sliced, fmt, per_query, digits, hole_threshold, list(dict.fromkeys(warned)))


def _split(metrics: tuple[str, ...]) -> tuple[list[str], list[str]]:
    from ragrade.metrics import parse_labelled

    ids: list[str] = []
    trajectory: list[str] = []
    for text in metrics:
        kinds = {m.family.kind for _, m in parse_labelled(text)}
        (trajectory if kinds == {"trajectory"} else ids).append(text)
    return ids, trajectory


def _read(path: str, key: str | None, by: str | None, topics: str | None, fmt: str | None) -> Any:
    from ragrade.cli._output import reading
    from ragrade.traces import read_traces

    with reading(path, "traces") as progress:
        return read_traces(path, key=key, by=by, topics=topics, format=fmt, progress=progress)


def _qrels(path: str, fmt: str | None) -> Any:
    from ragrade.io import read_qrels

    return read_qrels(path, fmt)


def _evaluate(qrels: str, qrels_format: str | None, read: Any, ids: list[str], trajectory: list[str],
              keywords: dict[str, Any]) -> dict[str, Any]:
    """The calls scored with the id measures, the trajectories with the trajectory measures (one plan each;
    the ground truth read by the route, with its hops column when --hops names one)."""
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import dispatch_one

    out = {}
    for name, run, metrics in (("calls", read.calls, ids), ("trajectories", read.trajectories, trajectory)):
        if metrics:
            plan = build_plan(qrels, run, list(metrics), qrels_format=qrels_format, **keywords)
            out[name] = dispatch_one(plan).replace(run_name=name)
    return out


def _lift(truth: Any, read: Any, ids: list[str], keywords: dict[str, Any]) -> Any:
    if not read.rerankers:
        return None
    from ragrade.report.traces import id_metrics, reranker_lift

    policies = {k: v for k, v in keywords.items() if k != "hops"}
    return reranker_lift(truth, read.rerankers, id_metrics(ids), **policies)


def _show(read: Any, results: dict[str, Any], lift: Any, sliced: Any, fmt: str, per_query: bool, digits: int,
          hole_threshold: float, warned: list[str]) -> None:
    for note in read.notes:
        click.echo(f"note: traces: {note}", err=True)
    latency = read.latency()
    if fmt == "json":
        for result in results.values():
            for note in result.notes():
                click.echo(f"note: {result.run_name}: {note}", err=True)
        for note in warned:
            click.echo(f"warning: {note}", err=True)
        _json(read, results, lift, sliced, latency, per_query, warned)
        return
    for result in results.values():
        print_result(result, [], fmt, per_query, digits, hole_threshold, sliced if result.run_name == "calls" else None)
    for note in warned:
        click.echo(f"warning: {note}", err=True)
    usage = trace_totals(read.table)
    click.echo(f"{usage['traces']} traces: {_amount(usage['tokens'])} tokens, cost {_amount(usage['cost'], 6)}",
               err=fmt != "table")
    tables = [("latency and usage per retriever", latency), ("reranker lift (output - input, paired)", lift)]
    for title, frame in tables:
        if frame is None or len(frame) == 0:
            continue
        if fmt == "csv":
            click.echo(frame.to_csv(float_format=f"%.{digits}f"), nl=False)
        elif fmt == "markdown":
            click.echo(f"\n**{title}**\n\n" + _markdown(frame, digits))
        else:
            _rich(title, frame, digits)


def _amount(value: float, digits: int = 0) -> str:
    return "–" if value != value else f"{value:,.{digits}f}"


def _rich(title: str, frame: Any, digits: int) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    shown = frame.reset_index() if frame.index.name else frame
    for c in shown.columns:
        table.add_column(str(c), justify="right" if _numeric(shown[c]) else "left")
    for row in shown.itertuples(index=False):
        table.add_row(*(_cell(v, digits) for v in row))
    stdout_console().print(table)


def _numeric(column: Any) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(column))


def _cell(v: Any, digits: int) -> str:
    from ragrade.cli._output import number

    return number(v, digits) if isinstance(v, float) else str(v)


def _markdown(frame: Any, digits: int) -> str:
    shown = frame.reset_index() if frame.index.name else frame
    lines = ["| " + " | ".join(str(c) for c in shown.columns) + " |",
             "|" + "|".join("---:" if _numeric(shown[c]) else "---" for c in shown.columns) + "|"]
    lines += ["| " + " | ".join(_cell(v, digits) for v in row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    """JSON-ready: NaN as null, NumPy scalars as Python numbers."""
    import math

    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    return None if isinstance(value, float) and math.isnan(value) else value


def _json(read: Any, results: dict[str, Any], lift: Any, sliced: Any, latency: Any, per_query: bool,
          warned: list[str]) -> None:
    out: dict[str, Any] = {name: json.loads(r.to_json(per_query=per_query)) for name, r in results.items()}
    if sliced is not None:
        out["slices"] = sliced.to_dict()
    out["latency"] = {str(k): v for k, v in latency.to_dict("index").items()}
    if lift is not None:
        out["rerankers"] = lift.to_dict("records")
    out["traces"] = {"spans": read.spans, "calls": len(read.table), "trajectories": read.trajectories.n_queries,
                     "conventions": dict(read.conventions), "notes": list(read.notes), **trace_totals(read.table)}
    if warned:
        out["warnings"] = warned
    click.echo(json.dumps(_plain(out), indent=2))
