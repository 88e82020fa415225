"""``ragrade nuggets create|assign|score``: nuggets (atomic facts of a good answer, TREC RAG's AutoNuggetizer) made
from judged passages with an LLM, assigned to retrieved passages, joined top-k contexts or answers, and
answer-level scores as nuggetizer or open-rag-eval compute them (docs/nuggets.md).

The LLM options are those of ``judge`` and ``assess`` (:mod:`ragrade.cli._llm`): backend, server, model, key
variable, concurrency, retries, reply cap, seed, prices, budgets, cache (a re-run resumes from it). Exit
statuses: 0 done (also when a budget stopped the run: re-run to resume); 1 done, but more calls failed than
``--max-failed`` allows (their labels are ``failed``, never ``not_support``); 2 bad input, or a judge that
cannot work as configured (wrong key, model or URL: the run stops after one call).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ragrade.cli._llm import budget, cache_arg, check_budget, key_of, llm_options, make_judge, secret_errors

#: The LLM backends serve every task set; the offline ones do not write nuggets: an LLM is the default.
_LLM_DEFAULT = {"judge_kind": "openai"}


@click.group("nuggets", epilog="See docs/nuggets.md for the procedure, the prompts and the measures.")
def command() -> None:
    """Nuggets: create them from judged passages, assign them to texts, score answers."""


def _call_options(o: dict[str, Any]) -> dict[str, Any]:
    """The options of the procedures' calls: cache, budget, concurrency, retries, temperatures, progress."""
    return {"cache": cache_arg(o), "budget": budget(o), "max_concurrency": o["max_concurrency"],
            "retry_failed": o["retry_failed"], "retries": o["retries"], "temperature": o["temperature"],
            "retry_temperature": o["retry_temperature"], "progress": _progress(o)}


def _progress(o: dict[str, Any]) -> Any:
    """A one-line progress report on stderr as calls finish (``--progress``; default: when stderr is a terminal)."""
    show = o["progress"] if o["progress"] is not None else sys.stderr.isatty()
    if not show:
        return None
    from ragrade.cli._output import stderr_console

    err = stderr_console()

    def report(costs: Any, ex: Any) -> None:
        done = costs.calls + ex.calls
        err.print(f"calls {done} · cache hits {costs.cache_hits + ex.cache_hits} · this round {len(ex.results)}/"
                  f"{ex.needed} · tokens {costs.tokens + ex.tokens}", end="\r", highlight=False)

    return report


def _procedure_options(f: Any) -> Any:
    for option in reversed([
        click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
                     help="Asks again of a reply that cannot be read (or has a label missing), at --retry-temperature."),
        click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True,
                     help="Temperature of the first ask."),
        click.option("--retry-temperature", type=click.FloatRange(min=0), default=0.2, show_default=True,
                     help="Temperature of an ask after an unreadable reply."),
        click.option("--max-failed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Failed calls (after retries) allowed before the exit status is 1."),
        click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
                     help="Summary printed on stdout."),
    ]):
        f = option(f)
    return f


@command.command("create", context_settings={"default_map": _LLM_DEFAULT})
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False))
@click.option("--queries", "queries_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Topics: TSV (qid<TAB>text), JSONL or Parquet.")
@click.option("--corpus", "corpus_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Passages: JSONL, Parquet or TSV (id, text, optional title); only the judged ones are kept.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Nuggets file to write (.jsonl: one nugget per line, editable; or .parquet).")
@click.option("--min-grade", type=float, default=2, show_default=True, help="Passages graded at least this are read.")
@click.option("--window", type=click.IntRange(min=1), default=10, show_default=True, help="Passages per call.")
@click.option("--max-nuggets", type=click.IntRange(min=1), default=30, show_default=True,
              help="Longest nugget list while reading.")
@click.option("--label-batch", type=click.IntRange(min=1), default=10, show_default=True,
              help="Nuggets labelled vital/okay per call.")
@click.option("--keep", type=click.IntRange(min=0), default=20, show_default=True,
              help="Nuggets kept per query after labelling (0: all).")
@click.option("--vital-first/--no-vital-first", default=True, show_default=True,
              help="Put vital nuggets first before the cut.")
@_procedure_options
@llm_options(tasks="nugget", max_tokens=1024, concurrency_help="Calls in flight at once.")
def create_command(**o: Any) -> None:
    """Make nuggets for every query of QRELS from its passages graded >= --min-grade."""
    from ragrade.nuggets.creation import CreateSettings, create
    from ragrade.nuggets.data import write

    check_budget(o)
    with secret_errors(key_of(o)):
        settings = CreateSettings(o["min_grade"], o["window"], o["max_nuggets"], o["label_batch"],
                                  o["keep"] or None, o["vital_first"])
        from ragrade.nuggets.prompts import TASK_SET

        res = create(o["qrels"], o["queries_path"], o["corpus_path"], judge=make_judge(o, TASK_SET), settings=settings,
                     **_call_options(o))
        write(res.nuggets, o["output"])
    data = {"counts": res.counts, "costs": res.costs, "judge": res.judge, "failures": res.failures,
            "skipped": res.skipped, "unfinished": res.unfinished, "wrote": o["output"]}
    _report("ragrade nuggets create", data, o["fmt"], len(res.failures), o["max_failed"])


@command.command("assign", context_settings={"default_map": _LLM_DEFAULT})
@click.argument("nuggets", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--corpus", "corpus_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Passages' texts (JSONL, Parquet or TSV: id, text, optional title).")
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True,
              help="Passages assigned per query and run (the top of each ranking).")
@click.option("--joined", "joined", type=click.IntRange(min=1), multiple=True,
              help="Also assign the top K of each ranking concatenated (nugget_recall(context=joined)@K). Repeatable.")
@click.option("--answers", "answers_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Generated answers to assign (JSONL/CSV/Parquet: query, answer, optional run).")
@click.option("--queries", "queries_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Topics, when the nuggets file has no query texts.")
@click.option("--assignments", "given", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Assignments already made: kept, and not asked again.")
@click.option("--grades", type=click.Choice(["3", "2"]), default="3", show_default=True,
              help="3: support / partial_support / not_support; 2: support / not_support.")
@click.option("--batch", type=click.IntRange(min=1), default=10, show_default=True, help="Nuggets per call.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Assignments file to write (.jsonl or .parquet).")
@_procedure_options
@llm_options(tasks="nugget", max_tokens=1024, concurrency_help="Calls in flight at once.")
def assign_command(**o: Any) -> None:
    """Assign the NUGGETS to the passages the RUNS retrieve (and to --answers)."""
    from ragrade.cli._output import run_names
    from ragrade.nuggets.assignment import assign
    from ragrade.nuggets.data import write_assignments
    from ragrade.nuggets.prompts import TASK_SET

    if not o["runs"] and not o["answers_path"]:
        raise click.UsageError("give RUNS and/or --answers")
    if o["runs"] and not o["corpus_path"]:
        raise click.UsageError("assigning the passages of RUNS needs --corpus")
    check_budget(o)
    with secret_errors(key_of(o)):
        runs = dict(zip(run_names(o["runs"], []), o["runs"], strict=True))
        res = assign(o["nuggets"], judge=make_judge(o, TASK_SET), passages=o["corpus_path"], runs=runs or None,
                     depth=o["depth"], joined=o["joined"], answers=_read_answers(o["answers_path"]),
                     queries=o["queries_path"], assignments=o["given"], grades=int(o["grades"]), batch=o["batch"],
                     **_call_options(o))
        write_assignments(res.assignments, o["output"])
    data = {"counts": res.counts, "costs": res.costs, "judge": res.judge, "failures": res.failures,
            "not_judged": res.not_judged, "wrote": o["output"]}
    _report("ragrade nuggets assign", data, o["fmt"], len(res.failures), o["max_failed"])


def _read_answers(path: str | None) -> dict[str, Any] | None:
    """``{query: answer}`` or ``{run: {query: answer}}`` from an answers file (columns query, answer, run)."""
    if path is None:
        return None
    from ragrade.errors import ParseError
    from ragrade.io import formats

    out: dict[str, dict[str, str]] = {}
    for row, line in formats.records_format(path).rows(path):
        q, a = row.get("query"), row.get("answer")
        if q is None or not isinstance(a, str):
            raise ParseError("an answer needs 'query' and a text 'answer'", path=path, line=line,
                             text=json.dumps(row, ensure_ascii=False, default=str)[:200])
        out.setdefault(str(row.get("run") or ""), {})[str(q)] = a
    return out.get("", {}) if set(out) == {""} else {r or "answers": v for r, v in out.items()}


@command.command("score")
@click.argument("nuggets", type=click.Path(exists=True, dir_okay=False))
@click.argument("assignments", type=click.Path(exists=True, dir_okay=False))
@click.option("--profile", type=click.Choice(["nuggetizer", "open_rag_eval"]), default="nuggetizer",
              show_default=True, help="Whose scores: nuggetizer's four or open-rag-eval's six (with its floors).")
@click.option("--per-query", is_flag=True, help="Print every answer's scores, not only the means.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
def score_command(nuggets: str, assignments: str, profile: str, per_query: bool, fmt: str) -> None:
    """Answer-level nugget scores of the answers ASSIGNMENTS labels (rows query, nugget_id, label)."""
    from ragrade.cli._output import input_errors
    from ragrade.nuggets.scores import PROFILES, score

    with input_errors():
        frame = score(nuggets, assignments, profile)
    cols = list(PROFILES[profile])
    keys = [c for c in ("run", "query") if c in frame.columns]
    means = frame.groupby("run")[cols].mean() if "run" in frame.columns else frame[cols].mean().to_frame("mean").T
    if fmt == "json":
        data = {"profile": profile, "answers": len(frame), "means": json.loads(means.to_json(orient="index")),
                "failed_labels": int(frame["failed_labels"].sum())}
        if per_query:
            data["per_query"] = json.loads(frame.to_json(orient="records"))
        click.echo(json.dumps(data, indent=2))
    elif fmt == "csv":
        click.echo((frame[[*keys, *cols]] if per_query else means).to_csv(), nl=False)
    else:
        _table(f"ragrade nuggets score ({profile}, {len(frame)} answers)", means.reset_index(), digits=4)
        if per_query:
            _table("per answer", frame[[*keys, *cols]], digits=4)
    failed = int(frame["failed_labels"].sum())
    if failed:
        click.echo(f"warning: {failed} labels are 'failed' (scored 0, as both tools score them)", err=True)


def _table(title: str, frame: Any, digits: int) -> None:
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import stdout_console

    t = Table(title=title, box=box.SIMPLE_HEAD)
    for c in frame.columns:
        t.add_column(str(c))
    for row in frame.itertuples(index=False):
        t.add_row(*[f"{v:.{digits}f}" if isinstance(v, float) else str(v) for v in row])
    stdout_console().print(t)


def _report(title: str, data: dict[str, Any], fmt: str, failed: int, max_failed: int) -> None:
    """The summary on stdout (a table or JSON), notes on stderr; exit 1 when more calls failed than allowed."""
    from ragrade.cli._output import incomplete, stderr_console

    if fmt == "json":
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        _summary(title, data)
    err = stderr_console()
    c = data["costs"]
    if c.get("budget_reached"):
        err.print(f"note: budget reached: {c.get('unasked', 0)} calls left unasked. Re-run the same command to "
                  "resume from the cache.")
    if failed > max_failed:
        shown = "; ".join(f"{f.get('query')}: {f.get('reason')}" for f in data["failures"][:3])
        incomplete(f"{failed} calls failed after their retries (allowed: --max-failed {max_failed}); their labels "
                   f"are 'failed'. First: {shown}")
    sys.exit(0)


def _summary(title: str, data: dict[str, Any]) -> None:
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import stdout_console

    c, j = data["costs"], data["judge"]
    t = Table(title=title, box=box.SIMPLE_HEAD, show_header=False)
    t.add_column("what", no_wrap=True)
    t.add_column("value")
    t.add_row("judge", f"{j.get('judge')} ({j.get('model')}) · prompt {j.get('prompt_version')}")
    t.add_row("done", " · ".join(f"{k} {v}" for k, v in data["counts"].items()))
    t.add_row("calls", f"{c['calls']} · cache hits {c['cache_hits']} · retries {c['retries']} · failed {c['failed']}")
    t.add_row("tokens", f"{c['prompt_tokens']}+{c['completion_tokens']}" + (f" · cost {c['cost']:.4f}" if c["cost"] else ""))
    for key in ("skipped", "unfinished", "not_judged"):
        if data.get(key):
            t.add_row(key, str(len(data[key])))
    t.add_row("wrote", str(data["wrote"]))
    stdout_console().print(t)
