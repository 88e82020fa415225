"""``ragrade synthesize``: a test set from a corpus (questions anchored to character spans, checked for
duplicates, excerpt quality, answerability and leakage), or a Ragas / LlamaIndex testset imported as span
truth. See docs/synthesize.md."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ragrade.cli._llm import (
    BackendChoice,
    budget,
    cache_arg,
    check_budget,
    key_of,
    llm_options,
    make_judge,
    secret_errors,
)

EXIT_INCOMPLETE = 1


def _threshold_options(fn: Any) -> Any:
    options = [
        click.option("--fuzzy-floor", type=click.FloatRange(0, 100), default=90.0, show_default=True,
                     help="Lowest rapidfuzz score (0-100) of an excerpt located by fuzzy matching."),
        click.option("--max-excerpts", type=click.IntRange(min=1), default=5, show_default=True,
                     help="Most excerpts one question may have."),
        click.option("--min-excerpt-quality", type=click.FloatRange(0, 1), default=0.5, show_default=True,
                     help="Lowest excerpt quality (share of letters and digits, times words / 3 up to 1)."),
        click.option("--max-excerpt-share", type=click.FloatRange(0, 1, min_open=True), default=0.6,
                     show_default=True, help="Largest share of its passages the excerpts of a question may cover."),
        click.option("--max-leakage", type=click.FloatRange(0, 1), default=None,
                     help="Refuse questions whose leakage is above this (default: recorded only)."),
        click.option("--min-bm25-rank", type=click.IntRange(min=1), default=None,
                     help="Refuse questions whose gold passages BM25 alone ranks above this (default: recorded only)."),
        click.option("--max-duplicate", type=click.FloatRange(0, 1), default=0.9, show_default=True,
                     help="Lexical similarity to an earlier question at which a question is a duplicate."),
        click.option("--max-duplicate-embedding", type=click.FloatRange(-1, 1), default=0.9, show_default=True,
                     help="Embedding similarity at which a question is a duplicate (with the semantic extra)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.command(
    "synthesize",
    epilog=(
        "Writes DIR/spans.jsonl (span qrels: query, doc, start, end, grade, text), DIR/topics.tsv, "
        "DIR/provenance.jsonl (model, prompt hashes, settings, seed, passages, per-question scores) and "
        "DIR/rejects.jsonl (each refused candidate with its reason). --seed draws the passages and is sent to the "
        "server. --budget-calls counts HTTP requests here (retries and answerability checks included). Every "
        "answer is cached: after a stop or a kill, the same command with --resume asks only what is missing and "
        "writes the same files. Exit status: 0 done, 1 fewer questions than -n (a budget, or too few good "
        "candidates), 2 bad input or a judge that cannot work as configured. See docs/synthesize.md."
    ),
)
@click.argument("corpus_arg", metavar="CORPUS", required=False, type=click.Path(exists=True))
@click.option("-n", "n", type=click.IntRange(min=1), default=None, help="Questions to write.")
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Directory of the test set.")
@click.option("--mix", default="single=0.5,multi=0.25,abstract=0.25", show_default=True,
              help="Shares of the kinds: single-hop specific, multi-hop specific, multi-hop abstract.")
@click.option("--persona", "personas", multiple=True, help="A question style or persona, taken in turn (repeatable).")
@click.option("--passage-chars", type=click.IntRange(min=1), default=1200, show_default=True,
              help="Longest passage asked about (characters).")
@click.option("--min-passage-chars", type=click.IntRange(min=1), default=200, show_default=True,
              help="Shortest passage asked about.")
@click.option("--no-answerability", is_flag=True, help="Skip the second call checking answerability.")
@click.option("--embeddings/--no-embeddings", default=None,
              help="The embedding duplicate check (default: when the semantic extra is installed).")
@_threshold_options
@click.option("--resume", is_flag=True, help="Continue the run DIR holds (same settings), from the cache.")
@click.option("--import", "import_", type=(click.Choice(["ragas", "llamaindex"]), click.Path(exists=True, dir_okay=False)),
              default=None, metavar="ragas|llamaindex FILE",
              help="Import a Ragas testset (CSV/JSONL/Parquet) or a LlamaIndex EmbeddingQAFinetuneDataset JSON.")
@click.option("--corpus", "corpus_opt", type=click.Path(exists=True), default=None,
              help="The corpus (with --import; or instead of the CORPUS argument).")
@llm_options(tasks="synthesize", max_tokens=768, concurrency_help="Requests in flight at once.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Summary printed on stdout.")
def command(**o: Any) -> None:
    """Write a test set of -n questions from CORPUS (a folder of text/Markdown files, or a JSONL/Parquet/TSV
    file of id and text), each anchored to the exact excerpts that answer it."""
    corpus = o["corpus_arg"] or o["corpus_opt"]
    if o["corpus_arg"] and o["corpus_opt"]:
        raise click.UsageError("give the corpus once: CORPUS or --corpus")
    if corpus is None:
        raise click.UsageError("give the corpus: CORPUS (or --corpus with --import)")
    if o["import_"] is not None:
        with secret_errors(None):
            sys.exit(_import(o, corpus))
    if o["n"] is None:
        raise click.UsageError("give -n, the number of questions")
    if o["resume"] and o["no_cache"]:
        raise click.UsageError("--resume needs the cache (drop --no-cache)")
    check_budget(o)
    with secret_errors(key_of(o)):
        code = _synthesize(o, corpus)
    sys.exit(code)


class _Backends(BackendChoice):
    """The backends serving the synthesis task set, and ``offline`` (the extractive stand-in)."""

    def _names(self) -> list[str]:
        from ragrade.llm.backends import names

        return [*names(self.tasks), "offline"]


# The LLM options' backend is the judges' (default offline, which is the word-overlap judge there): here it
# is a backend that writes questions, openai by default, or the extractive stand-in.
for _p in command.params:
    if _p.name == "judge_kind":
        _p.type = _Backends("synthesize")
        _p.default = "openai"
        _p.help = ("Who writes the questions: openai (any OpenAI-compatible server), ollama, or offline (no model: "
                   "questions by rule, leaking by construction; for trying the mechanics). The key is read from "
                   "the variable named by --api-key-env and never printed or stored.")


def _synthesize(o: dict[str, Any], corpus: str) -> int:
    import asyncio

    from ragrade.cli._output import stderr_console
    from ragrade.synthesis import asynthesize
    from ragrade.synthesis.prompts import TASK_SET

    err = stderr_console()
    if o["judge_kind"] == "offline":
        from ragrade.synthesis.offline import ExtractiveJudge

        judge: Any = ExtractiveJudge()
        err.print("note: the offline backend writes questions by rule (no model); they leak their excerpts by "
                  "construction: use it to try the mechanics, not as a test set")
    else:
        judge = make_judge(o, TASK_SET)
    keys = ("fuzzy_floor", "max_excerpts", "min_excerpt_quality", "max_excerpt_share", "max_leakage",
            "min_bm25_rank", "max_duplicate", "max_duplicate_embedding")
    show = o["progress"] if o["progress"] is not None else sys.stderr.isatty()

    async def go(progress: Any) -> Any:
        try:
            return await asynthesize(corpus, o["n"], judge=judge, mix=o["mix"], seed=o["seed"],
                                     personas=o["personas"], passage_chars=o["passage_chars"],
                                     min_passage_chars=o["min_passage_chars"],
                                     check_answerable=not o["no_answerability"], embeddings=o["embeddings"],
                                     cache=cache_arg(o), budget=budget(o), max_concurrency=o["max_concurrency"],
                                     retry_failed=o["retry_failed"], progress=progress, output=o["output"],
                                     resume=o["resume"], **{k: o[k] for k in keys})
        finally:
            await judge.aclose()

    if show:
        bar, on_progress = _progress_bar(err, o["n"])
        with bar:
            ts = asyncio.run(go(on_progress))
    else:
        ts = asyncio.run(go(None))
    _print(ts, o)
    if not ts.complete:
        why = ("the budget was reached: raise it and run again with --resume" if ts.counts.get("budget_reached")
               else "too few candidates passed the checks (see rejects.jsonl); lower a threshold or give a larger corpus")
        err.print(f"note: {len(ts)} of {o['n']} questions: {why}")
        return EXIT_INCOMPLETE
    return 0


def _progress_bar(err: Any, n: int) -> tuple[Any, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("[bold]synthesizing"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("calls {task.fields[calls]} · cache hits {task.fields[hits]}"), TimeElapsedColumn(),
                   console=err, transient=False)
    task = bar.add_task("synthesizing", total=n, calls=0, hits=0)

    def on_progress(p: dict[str, Any]) -> None:
        bar.update(task, completed=p["kept"], calls=p["calls"], hits=p["cache_hits"])

    return bar, on_progress


def _import(o: dict[str, Any], corpus: str) -> int:
    from pathlib import Path

    from ragrade.cli._output import stderr_console
    from ragrade.errors import InputError
    from ragrade.synthesis.api import RUN_FILE
    from ragrade.synthesis.imports import import_test_set

    kind, path = o["import_"]
    if (Path(o["output"]) / RUN_FILE).exists():
        raise InputError(f"{o['output']} holds a synthesized test set ({RUN_FILE}); import into another directory")
    ts = import_test_set(kind, path, corpus, fuzzy_floor=o["fuzzy_floor"], passage_chars=o["passage_chars"])
    ts.write(o["output"])
    _print(ts, o)
    if ts.rejects:
        shown = "; ".join(f"{r.question!r}: {r.reason}" for r in ts.rejects[:3])
        stderr_console().print(f"warning: {len(ts.rejects)} question(s) left out, a reference text not located in the "
                               f"corpus (all in {o['output']}/rejects.jsonl). First: {shown}")
    return 0


def _f(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _print(ts: Any, o: dict[str, Any]) -> None:
    summary = ts.summary()
    if o["fmt"] == "json":
        click.echo(json.dumps({"output": o["output"], "summary": summary, "counts": dict(ts.counts)}, indent=2,
                              ensure_ascii=False))
        return
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import stdout_console

    t = Table(title=f"ragrade synthesize · {o['output']}", box=box.SIMPLE_HEAD, show_header=False)
    t.add_column("what", no_wrap=True)
    t.add_column("value", justify="right")
    t.add_row("questions written", str(summary.get("kept")))
    for kind, n in summary.get("kept_by_kind", {}).items():
        wanted = summary.get("targets", {}).get(kind)
        t.add_row(f"  {kind}", f"{n}" + (f" of {wanted}" if wanted is not None else ""))
    t.add_row("rejected", str(summary.get("rejected")))
    for stage, n in summary.get("rejected_by_stage", {}).items():
        t.add_row(f"  {stage}", str(n))
    lk = summary.get("leakage", {})
    t.add_row("leakage (mean / median)", f"{_f(lk.get('leakage_mean'))} / {_f(lk.get('leakage_median'))}")
    for k in (1, 5, 10):
        share = lk.get(f"keyword_top_{k}_share")
        t.add_row(f"answered by BM25 alone at top {k}",
                  f"{lk.get(f'keyword_top_{k}')}" + (f" ({share:.0%})" if share is not None else ""))
    for name in ("calls", "cache_hits", "requests", "unasked"):
        if ts.counts.get(name) is not None:
            t.add_row(name.replace("_", " "), str(ts.counts[name]))
    stdout_console().print(t)
