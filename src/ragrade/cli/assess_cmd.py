"""``ragrade assess``: pool runs, grade the pooled pairs 0-3 with an assessor, write qrels + provenance
(+ merged qrels with an origin column when human qrels are given)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ragrade.cli._llm import budget, cache_arg, check_budget, key_of, llm_options, make_judge, secret_errors
from ragrade.cli._options import option
from ragrade.cli._output import refuse_inputs
from ragrade.io.formats import RECORDS
from ragrade.options import MAX_FAILED, Allowance, flags

EXIT_FAILED = 1


@click.command(
    "assess",
    epilog=(
        "Grades: 0 unrelated, 1 related but not answering, 2 answers partly, 3 answers fully and precisely. "
        "Backends (--judge): see docs/judges.md; the key is read from the variable named by --api-key-env "
        "and never printed or stored. Exit status: 0 done (also "
        "when a budget stopped the run: re-run to resume), 1 done but more judgments failed than "
        "--max-failed allows, 2 bad input or a judge that cannot work as configured (wrong key, unknown "
        "model, server not reachable). See docs/assessment.md."
    ),
)
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--queries", "queries_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Topics: TSV (qid<TAB>text), JSONL or Parquet.")
@click.option("--corpus", "corpus_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Passages: JSONL, Parquet or TSV (id, text, optional title); streamed, only pooled ids kept.")
@click.option("--qrels", "qrels_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Human qrels: with --holes-only only unjudged pairs are assessed; also gives the merged file.")
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Pool depth per run.")
@click.option("--holes-only", is_flag=True, help="Assess only the pooled pairs that --qrels does not judge.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Qrels to write (TREC 'qid 0 docid grade'; a table format's extension such as .parquet, "
                   ".jsonl, .csv, .tsv writes a table).")
@click.option("--merged", "merged_path", type=click.Path(dir_okay=False), default=None,
              help="Merged human + assessor qrels with an origin column (a table: .parquet, .jsonl...; default with "
                   "--qrels: <output>.merged.parquet).")
@click.option("--provenance", "provenance_path", type=click.Path(dir_okay=False), default=None,
              help="Provenance JSON (default: <output>.provenance.json).")
@click.option("--dry-run", is_flag=True, help="Print pairs, calls, estimated tokens and cost, then exit.")
@llm_options(tasks="grade", max_tokens=64, concurrency_help="Judgments in flight at once.")
@option(MAX_FAILED, help="Judgments allowed to fail (after retries) before the exit status is 1: a count (5) or "
                        "a percentage (2%); the outputs are written either way.")
@click.option("--queries-format", type=click.Choice(RECORDS), default=None)
@click.option("--corpus-format", type=click.Choice(RECORDS), default=None)
@click.option("--query-id-col", default=None)
@click.option("--query-text-col", default=None)
@click.option("--doc-id-col", default=None)
@click.option("--doc-text-col", default=None)
@click.option("--title-col", default=None)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Summary printed on stdout.")
def command(**o: Any) -> None:
    """Grade the pooled (query, passage) pairs of RUNS 0-3 with an assessor and write qrels."""
    max_failed = o["max_failed"]
    if not o["dry_run"] and not o["output"]:
        raise click.UsageError("give -o/--output (or --dry-run)")
    if o["holes_only"] and not o["qrels_path"]:
        raise click.UsageError("--holes-only needs --qrels")
    check_budget(o)
    with secret_errors(key_of(o)):
        outputs = [o["output"], o["merged_path"], o["provenance_path"]]
        for out in outputs:
            refuse_inputs(out, [*o["runs"], o["queries_path"], o["corpus_path"], o["qrels_path"]])
        code = _run(o, max_failed)
    sys.exit(code)


def _make_judge(o: dict[str, Any]) -> Any:
    from ragrade.assessment.prompt import TASK_SET

    return make_judge(o, TASK_SET)


def _stem(path: str) -> str:
    base, ext = os.path.splitext(path)
    return base if ext else path


def _run(o: dict[str, Any], max_failed: Allowance) -> int:
    from ragrade.assessment.runner import plan
    from ragrade.cli._output import stderr_console

    err = stderr_console()
    human, the_pool, queries, passages, missing_q = _read_inputs(o)
    judge = _make_judge(o)
    cache: Any = cache_arg(o)
    _warn_missing(err, passages, missing_q)
    if getattr(judge, "approximation", False):
        err.print(f"note: the {judge.name} assessor is an offline approximation (word overlap / similarity, not "
                  "reading); check its grades with `ragrade agreement`")
    if o["dry_run"]:
        p = plan(the_pool, queries, passages, judge=judge, cache=cache, retry_failed=o["retry_failed"])
        _print_plan(p, the_pool, o["fmt"])
        return 0
    result = _assess(o, judge, cache, the_pool, queries, passages, err)
    if result.failures and not len(result.grades):  # nothing graded: an existing output is left as it was
        click.echo(f"error: every pair failed to be graded ({len(result.failures)}); nothing written. First "
                   f"failure: {result.failures[0]['reason']}", err=True)
        return EXIT_FAILED
    data, written = _write_outputs(o, result, human, the_pool, passages)
    if o["fmt"] == "json":
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        _print_summary(result, the_pool, written)
    return _exit_status(o, result, max_failed, err)


def _read_inputs(o: dict[str, Any]) -> tuple[Any, Any, Any, Any, list[str]]:
    """``(human qrels or None, the pool, the queries, the pooled passages, pooled queries without text)``;
    an InputError when no pooled passage or no pooled query has a text."""
    from ragrade.assessment.pooling import pool
    from ragrade.cli._output import reading, run_names
    from ragrade.errors import InputError
    from ragrade.io import read_qrels, read_run
    from ragrade.io.texts import read_passages, read_queries

    # runs are named by their file names, as in every command (a TREC tag is often shared)
    runs = {name: read_run(path) for name, path in zip(run_names(o["runs"], []), o["runs"], strict=True)}
    human = read_qrels(o["qrels_path"]) if o["qrels_path"] else None
    the_pool = pool(runs, o["depth"], qrels=human, holes_only=o["holes_only"])
    with flags(format="--queries-format", id_col="--query-id-col", text_col="--query-text-col"):
        queries = read_queries(o["queries_path"], format=o["queries_format"], id_col=o["query_id_col"],
                               text_col=o["query_text_col"])
    with reading(o["corpus_path"], "corpus") as cb, flags(format="--corpus-format", id_col="--doc-id-col",
                                                          text_col="--doc-text-col", title_col="--title-col"):
        passages = read_passages(o["corpus_path"], the_pool.doc_ids, format=o["corpus_format"], id_col=o["doc_id_col"],
                                 text_col=o["doc_text_col"], title_col=o["title_col"], progress=cb)
    if len(the_pool) and not len(passages):
        few = ", ".join(sorted(the_pool.doc_ids)[:5])
        raise InputError(f"{o['corpus_path']}: none of the {len(the_pool.doc_ids)} pooled passages is in the corpus "
                         f"(first ids: {few}); check the file and --doc-id-col")
    missing_q = [q for q in the_pool.query_ids if q not in queries]
    if the_pool.query_ids and len(missing_q) == len(the_pool.query_ids):
        raise InputError(f"{o['queries_path']}: none of the {len(missing_q)} pooled queries has a text "
                         f"(first ids: {', '.join(missing_q[:5])}); check the file and --query-id-col")
    return human, the_pool, queries, passages, missing_q


def _assess(o: dict[str, Any], judge: Any, cache: Any, the_pool: Any, queries: Any, passages: Any, err: Any) -> Any:
    """The assessor's grades of the pool, under the budget, with a progress bar on stderr when asked (default:
    when stderr is a terminal); the judge is closed at the end."""
    import asyncio

    from ragrade.assessment.runner import aassess

    limits = budget(o)
    show = o["progress"] if o["progress"] is not None else sys.stderr.isatty()

    async def go() -> Any:
        try:
            if not show:
                return await aassess(the_pool, queries, passages, judge=judge, cache=cache, budget=limits,
                                     max_concurrency=o["max_concurrency"], retry_failed=o["retry_failed"])
            bar, on_progress = _progress_bar(err)
            with bar:
                return await aassess(the_pool, queries, passages, judge=judge, cache=cache, budget=limits,
                                     max_concurrency=o["max_concurrency"], retry_failed=o["retry_failed"],
                                     progress=on_progress)
        finally:
            await judge.aclose()

    return asyncio.run(go())


def _progress_bar(err: Any) -> tuple[Any, Any]:
    """A rich progress bar of the assessment and the callback that updates it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("[bold]assessing"), BarColumn(), MofNCompleteColumn(),
        TextColumn("calls {task.fields[calls]} · cache hits {task.fields[hits]} · failed {task.fields[failed]}"
                   " · tokens {task.fields[tokens]} · cost {task.fields[cost]}"),
        TimeElapsedColumn(), console=err, transient=False,
    )
    task = bar.add_task("assessing", total=None, calls=0, hits=0, failed=0, tokens=0, cost="0")

    def on_progress(p: Any) -> None:
        bar.update(task, total=p.total, completed=p.done, calls=p.calls, hits=p.cache_hits, failed=p.failures,
                   tokens=p.tokens, cost=f"{p.cost:.4f}")

    return bar, on_progress


def _write_outputs(o: dict[str, Any], result: Any, human: Any, the_pool: Any, passages: Any
                   ) -> tuple[dict[str, Any], dict[str, str]]:
    """Write the qrels, the merged qrels (with --qrels or --merged) and the provenance file; return the
    provenance and ``{what: path}`` of the files written."""
    from ragrade.assessment import merged as merged_mod
    from ragrade.assessment import provenance as prov

    out = o["output"]
    _write_qrels(result, out)
    written = {"qrels": out}
    if human is not None or o["merged_path"]:
        mpath = o["merged_path"] or _stem(out) + ".merged.parquet"
        table = merged_mod.merge(human, result.grades, merged_mod.assessor_label(result.judge))
        merged_mod.write_merged(table, mpath)
        written["merged"] = mpath
    ppath = o["provenance_path"] or prov.provenance_path(out)
    written["provenance"] = ppath
    inputs = {"runs": list(o["runs"]), "queries": o["queries_path"], "corpus": o["corpus_path"],
              "qrels": o["qrels_path"], "corpus_reader": passages.reader, "passages_scanned": passages.scanned}
    data = prov.build(result, the_pool, inputs=inputs, outputs=written, passages=passages)
    prov.write(ppath, data)
    return data, written


def _exit_status(o: dict[str, Any], result: Any, max_failed: Allowance, err: Any) -> int:
    """Notes on a reached budget and on failed pairs; 1 when more pairs failed than --max-failed allows."""
    if result.budget_reached:
        b = result.budget
        which = ", ".join(f"--budget-{k} {v}" for k, v in (("calls", b.calls), ("tokens", b.tokens), ("usd", b.usd))
                          if v is not None)
        err.print(f"note: budget reached ({which}): {len(result.unasked)} pairs left unasked; the qrels hold the "
                  f"{len(result.grades)} graded pairs. Re-run the same command to resume from the cache.")
    failed = len(result.failures)
    if failed:
        shown = "; ".join(f"{f['query']}/{f['doc']}: {f['reason']}" for f in result.failures[:3])
        if max_failed.exceeded(failed, max(1, result.counts["needed"])):
            click.echo(f"error: {failed} pairs failed to be graded (allowed: --max-failed {o['max_failed']}); "
                       f"the qrels hold the {len(result.grades)} graded pairs. First failures: {shown}", err=True)
            return EXIT_FAILED
        err.print(f"warning: {failed} pairs failed to be graded (within --max-failed {o['max_failed']}): {shown}")
    return 0


def _write_qrels(result: Any, path: str) -> None:
    """The qrels in the table format the file name selects (docs/formats.md), else as TREC lines."""
    from ragrade.io import formats, write_qrels

    fmt = formats.by_extension(path)
    if fmt is not None and fmt.holds_records:
        write_qrels(result.to_qrels(), path)
        return
    from ragrade.io.writers import write_text

    write_text(path, "".join(f"{q} 0 {d} {int(g)}\n" for q, d, g in result.grades.itertuples(index=False)))


def _warn_missing(err: Any, passages: Any, missing_q: list[str]) -> None:
    def few(ids: list[str]) -> str:
        return ", ".join(ids[:10]) + (f" ... ({len(ids) - 10} more in the provenance file)" if len(ids) > 10 else "")

    if passages.missing:
        err.print(f"warning: {len(passages.missing)} pooled passages are not in the corpus and are not judged: "
                  f"{few(passages.missing)}", markup=False)
    if passages.empty:
        err.print(f"warning: {len(passages.empty)} pooled passages are empty and are not judged: {few(passages.empty)}",
                  markup=False)
    if missing_q:
        err.print(f"warning: {len(missing_q)} pooled queries have no text and are not judged: {few(missing_q)}",
                  markup=False)


def _title(judge: dict[str, Any]) -> str:
    t = f"{judge['name']} ({judge['model']}) · prompt {judge['prompt_version']}"
    return t + " · offline approximation" if judge.get("approximation") else t


def _print_plan(p: Any, the_pool: Any, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps({"dry_run": True, **p.to_dict()}, indent=2))
        return
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import stdout_console

    t = Table(title="ragrade assess --dry-run", box=box.SIMPLE_HEAD, show_header=False)
    t.add_column("what", no_wrap=True)
    t.add_column("value", justify="right")
    t.add_row("assessor", _title(p.judge))
    t.add_row("pooled pairs", f"{p.pairs} (depth {the_pool.depth}, {len(the_pool.run_names)} runs)")
    t.add_row("not judgeable (missing text)", str(len(p.not_judged)))
    t.add_row("distinct judgments", str(p.requests))
    t.add_row("in the cache", str(p.cached))
    t.add_row("calls to make", str(p.calls))
    t.add_row("est. prompt tokens", f"≈ {p.prompt_tokens}")
    t.add_row("est. completion tokens", f"≈ {p.completion_tokens}")
    t.add_row("worst-case tokens", str(p.worst_tokens))
    if p.cost is None:
        t.add_row("est. cost", "set --prompt-price / --completion-price" if p.prompt_tokens else "0 (offline)")
    else:
        t.add_row("est. cost", f"≈ {p.cost:.4f}")
        t.add_row("worst-case cost", f"{p.worst_cost:.4f}")
    stdout_console().print(t)


def _print_summary(result: Any, the_pool: Any, written: dict[str, str]) -> None:
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import stdout_console

    c = result.counts
    t = Table(title="ragrade assess", box=box.SIMPLE_HEAD, show_header=False)
    t.add_column("what", no_wrap=True)
    t.add_column("value")
    t.add_row("assessor", _title(result.judge))
    pool_line = f"{c['pairs']} pairs, depth {the_pool.depth}, {len(the_pool.run_names)} runs"
    if the_pool.holes_only:
        pool_line += f" (holes only: {the_pool.judged} judged pairs left out)"
    t.add_row("pool", pool_line)
    h = result.histogram()
    t.add_row("graded", f"{c['graded']} (" + " · ".join(f"{g}: {n}" for g, n in h.items()) + ")")
    t.add_row("failed", str(c["failed"]))
    t.add_row("not judged", f"{c['not_judged']} (missing or empty text; never graded as empty)")
    t.add_row("unasked", f"{c['unasked']} (left by a budget)")
    t.add_row("judgments", f"{c['needed']} · calls {c['calls']} · cache hits {c['cache_hits']}")
    t.add_row("tokens", f"{c['prompt_tokens']}+{c['completion_tokens']}" + (f" · cost {c['cost']:.4f}" if c["cost"] else ""))
    t.add_row("wrote", ", ".join(written.values()))
    stdout_console().print(t)
