"""``ragrade judge``: judge-based context metrics over a dataset of questions, references and retrieved
contexts (any format of records: JSONL, JSON, CSV/TSV, Parquet, Arrow IPC).

Exit statuses (as every command, see :mod:`ragrade.cli._output`): 0 when every judgment was answered (or
the failures stay within ``--max-failed``); 1 when the results are printed but more judgments failed than
``--max-failed`` allows (default 0: any failed judgment); 2 for bad input or usage, which includes a wrong
API key, an unknown model or URL and a server that does not answer: those stop the run after one call.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from typing import Any

import click

from ragrade.cli._llm import (
    ProfileChoice,
    budget,
    cache_arg,
    check_budget,
    key_of,
    llm_options,
    make_judge,
    secret_errors,
)
from ragrade.cli._options import option
from ragrade.cli._output import emit, fail, incomplete, input_errors
from ragrade.io.formats import RECORDS
from ragrade.options import MAX_FAILED


@click.command(
    "judge",
    epilog=(
        "Metrics: llm_context_precision[@K], llm_context_precision_noref[@K], context_recall, "
        "context_entities_recall, context_relevancy (default: all). Backends (--judge): see docs/judges.md; the "
        "key is read from the variable named by --api-key-env and never printed or stored."
    ),
)
@click.argument("dataset", type=click.Path(dir_okay=False))
@click.option("--metric", "-m", "metrics", multiple=True, help="Metric to compute (repeat or comma-separate).")
@click.option("--profile", type=ProfileChoice(), default="default", show_default=True,
              help="Convention for the formulas (epsilons, denominators).")
@click.option("--input-format", type=click.Choice([*RECORDS, "json"]), default=None,
              help="Dataset format (default: from the file name).")
@click.option("--question-col", default=None,
              help="Question column (default: question, else Ragas' user_input).")
@click.option("--reference-col", default=None,
              help="Reference answer column (default: reference, else ground_truth).")
@click.option("--contexts-col", default=None,
              help="Column with the retrieved contexts, rank 1 first (a JSON list in CSV/TSV; default: contexts, else "
                   "Ragas' retrieved_contexts).")
@click.option("--id-col", default=None, help="Query id column (default: 'id' if present, else the row number).")
@click.option("--response-col", default=None,
              help="Generated response column, for llm_context_precision_noref (default: response, if present).")
@llm_options(tasks="context", max_tokens=1024)
@option(MAX_FAILED, help="Judgments allowed to fail (after retries) before the exit status is 1: a count (5) or "
                        "a percentage (2%); the results are printed either way. A wrong key, model or URL always "
                        "stops the run (status 2).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--per-query", is_flag=True, help="Table format: also print every query's scores.")
@click.option("--details", "details_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Write each query's judge output (verdicts, statements, entities, reasons) to this JSONL file "
                   "(written whole, then renamed into place).")
def command(**o: Any) -> None:
    """Score judge-based context metrics (LLM context precision, context recall, context entities recall,
    context relevancy) over DATASET: one row per query with a question, a reference answer and the
    retrieved contexts."""
    from ragrade.llm.secrets import Redactor

    check_budget(o)
    key = key_of(o)
    with secret_errors(key):
        result = _run(**o)
    # The judge already redacts what it returns; this also covers a custom judge and the key of any judge.
    redact = Redactor([key])
    details = redact(result.details)
    if o["fmt"] == "json":  # the result's export (NaN as null), details apart (--details)
        payload = json.loads(result.to_json(per_query=True))
        payload.pop("details", None)
        click.echo(json.dumps(redact(payload), indent=2))
    else:
        _print_table(result, o["per_query"])
    if o["details_path"]:
        with input_errors():
            emit("".join(json.dumps({"query_id": qid, **d}, ensure_ascii=False) + "\n" for qid, d in details.items()),
                 o["details_path"], inputs=[o["dataset"]])
    max_failed = o["max_failed"]
    j = result.judge.judgments
    if j.get("budget_reached"):
        click.echo(f"note: budget reached: {j['unasked']} judgments left unasked (their metrics are NaN); re-run "
                   "the same command to resume from the cache", err=True)
    failed, needed = int(j["failed"]), int(j["needed"])
    if failed and max_failed.exceeded(failed, needed):
        reasons = Counter(r for q in details.values() for d in q.values() if d.get("status") == "failed"
                          for r in [d.get("reason", "")])
        top = "; ".join(f"{n}x {r}" for r, n in reasons.most_common(3))
        incomplete(f"{failed} of {needed} judgments failed ({100 * failed / needed:.1f}%; --max-failed allows "
                   f"{max_failed}), so some scores are NaN. Most common reasons: {top}")


#: The column of each role when none is given: ragrade's name, then Ragas' (user_input, retrieved_contexts).
COLUMN_NAMES = {"question": ("question", "user_input"), "reference": ("reference", "ground_truth"),
                "contexts": ("contexts", "retrieved_contexts"), "response": ("response",)}


def _columns(rows: list[dict[str, Any]], o: dict[str, Any]) -> dict[str, str | None]:
    """The dataset's column of each role: the one given (``--question-col`` ...), else the first name of
    :data:`COLUMN_NAMES` the first row has (ragrade's name when it has none, so the error names it)."""
    first = rows[0] if rows and isinstance(rows[0], dict) else {}
    out: dict[str, str | None] = {}
    for role, names in COLUMN_NAMES.items():
        given = o[f"{role}_col"]
        found = next((n for n in names if n in first), None)
        out[role] = given or found or (None if role == "response" else names[0])
    return out


def _make_judge(judge_kind: str, **kw: Any) -> Any:
    from ragrade.judges.prompts import TASK_SET

    return make_judge({"judge_kind": judge_kind, **kw}, TASK_SET)


def _run(**o: Any) -> Any:
    import asyncio

    from ragrade.judges.dataset import read_rows
    from ragrade.judges.metrics import parse_many
    from ragrade.judges.runner import aevaluate_judged

    metric_list = parse_many([p for m in o["metrics"] for p in m.split(",") if p.strip()] or None)
    rows = read_rows(o["dataset"], o["input_format"])
    if not rows:  # as `ragrade evaluate` refuses an empty file
        fail(f"{o['dataset']}: the file is empty: no rows found")
    columns = {**_columns(rows, o), "id": o["id_col"], "source": o["dataset"]}
    judge = _make_judge(**o)
    cache: Any = cache_arg(o)
    show = o["progress"] if o["progress"] is not None else sys.stderr.isatty()

    async def go() -> Any:
        try:
            if not show:
                return await aevaluate_judged(rows, metric_list, judge=judge, profile=o["profile"], cache=cache,
                                              max_concurrency=o["max_concurrency"], retry_failed=o["retry_failed"],
                                              columns=columns, budget=budget(o))
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(
                TextColumn("[bold]judging"), BarColumn(), MofNCompleteColumn(),
                TextColumn("calls {task.fields[calls]} · cache hits {task.fields[hits]} · "
                           "failed {task.fields[failed]} · tokens {task.fields[tokens]}"),
                TimeElapsedColumn(), console=Console(stderr=True), transient=False,
            )
            task = bar.add_task("judging", total=None, calls=0, hits=0, failed=0, tokens=0)

            def on_progress(p: Any) -> None:
                bar.update(task, total=p.total, completed=p.done, calls=p.calls, hits=p.cache_hits,
                           failed=p.failures, tokens=p.tokens)

            with bar:
                return await aevaluate_judged(rows, metric_list, judge=judge, profile=o["profile"], cache=cache,
                                              max_concurrency=o["max_concurrency"], retry_failed=o["retry_failed"],
                                              progress=on_progress, columns=columns, budget=budget(o))
        finally:
            await judge.aclose()

    return asyncio.run(go())


def _fmt(v: float) -> str:
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def _print_table(result: Any, per_query: bool) -> None:
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import make_console

    console = make_console()
    info = result.judge
    t = Table(
        title=f"ragrade judge · {info.name} ({info.model}) · profile {info.profile}",
        box=box.SIMPLE_HEAD,
        caption="no ctx: no retrieved context, scored 0 without a call; undef: the formula is undefined (NaN)",
    )
    width = max([len(str(m)) for m in result.means] + [6])
    t.add_column("metric", no_wrap=True, min_width=width)
    for col in ("mean", "scored", "failed", "missing", "no ctx", "undef"):
        t.add_column(col, justify="right", min_width=len(col))
    for m, v in result.means.items():
        c = info.outcomes[m]
        t.add_row(m, _fmt(v), *(str(c[k]) for k in ("scored", "failed", "missing", "degenerate", "undefined")))
    console.print(t)
    j = info.judgments
    console.print(
        f"queries {result.summary.evaluated} · judgments {j['needed']} · calls {j['calls']} · "
        f"cache hits {j['cache_hits']} · failed {j['failed']} · tokens {j['prompt_tokens']}+{j['completion_tokens']}"
        + (f" · cost {j['cost']:.4f}" if j["cost"] else "")
    )
    if info.cache_note:  # on stderr, as every command's notes
        click.echo(f"note: {info.cache_note}", err=True)
    if per_query:
        q = Table(title="per query", box=box.SIMPLE_HEAD)
        q.add_column("query_id", overflow="fold")
        for m in result.per_query.columns:
            q.add_column(m.replace("_", " "), justify="right", overflow="fold")
        for qid, row in result.per_query.iterrows():
            q.add_row(str(qid), *(_fmt(row[m]) for m in result.per_query.columns))
        console.print(q)
