"""``ragrade retrieve package.module:factory --queries topics.tsv -k 100 -o run.parquet``: run a retriever
over a topics file and write the run (``docs/retrieve.md``)."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from typing import Any

import click

from ragrade.cli._options import option
from ragrade.cli._output import fail, incomplete, input_errors, refuse_inputs
from ragrade.io import FORMATS
from ragrade.options import CONCURRENCY, MAX_FAILED, TIMEOUT, Allowance


def load_retriever(spec: str) -> Any:
    """The object named by ``package.module:name`` (``name`` may be dotted). A class, or a function whose
    parameters all have defaults, is a factory: it is called to build the retriever; anything else (a
    retriever object, a function of the query) is used as it is. The current directory is importable,
    as with ``python -m``."""
    from ragrade.errors import InputError

    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise InputError("name the retriever as package.module:name (e.g. myapp.search:build_retriever)",
                         value=spec)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may fail to import in any way
        raise InputError(f"cannot import {module_name!r}: {type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"{module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if inspect.isclass(obj) or (inspect.isfunction(obj) and _no_required_parameters(obj)):
        try:
            obj = obj()
        except Exception as exc:
            raise InputError(f"building the retriever with {spec}() failed: {type(exc).__name__}: {exc}") from None
    return obj


def _no_required_parameters(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


@click.command(name="retrieve")
@click.argument("retriever", metavar="MODULE:NAME")
@click.option("--queries", "queries", required=True, type=click.Path(dir_okay=False, exists=True),
              help="Topics file: TSV (qid<TAB>text), JSONL or Parquet.")
@click.option("-k", "k", type=click.IntRange(min=1), default=20, show_default=True, help="Results kept per query.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Run file to write (format from the extension; Parquet and JSONL keep the retrieved texts).")
@click.option("--output-format", type=click.Choice(FORMATS), default=None, help="Format of the output file.")
@click.option("--id-key", default=None, metavar="KEY",
              help="Where the document id is: a metadata field, or for LlamaIndex ref_doc_id / node_id.")
@click.option("--name", default=None, help="Name of the retriever (run name and cache key; default MODULE:NAME).")
@option(CONCURRENCY, help="Calls to the retriever in flight at once.")
@option(TIMEOUT)
@click.option("--mode", type=click.Choice(["auto", "threads", "asyncio"]), default="auto", show_default=True,
              help="Threads, or asyncio tasks (async retrievers, ainvoke, aretrieve).")
@click.option("--cache", "cache", default=None, type=click.Path(dir_okay=False),
              help="SQLite file caching every answer: a re-run makes no call.")
@click.option("--qrels", default=None, type=click.Path(dir_okay=False, exists=True),
              help="Check that the retrieved ids meet the judged ids (exit 2 when none does).")
@click.option("--no-texts", is_flag=True, help="Do not keep the retrieved texts.")
@option(MAX_FAILED, help="Queries allowed to fail before the exit status is 1: a count (5) or a percentage (2%); "
                        "the run is written either way, unless every query failed (nothing is written then).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="How the summary is printed (json: on stdout).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: on a terminal).")
def command(retriever: str, queries: str, k: int, output: str, output_format: str | None, id_key: str | None,
            name: str | None, max_concurrency: int, timeout: float | None, mode: str, cache: str | None,
            qrels: str | None, no_texts: bool, max_failed: Allowance, fmt: str, progress: bool | None) -> None:
    """Ask the retriever MODULE:NAME every query and write what it returns as a run.

    MODULE:NAME is a retriever object, a function of the query text, or a factory (a class or a function
    without required arguments) that builds one. Failing queries are recorded and the run goes on; the
    summary gives failures, cache hits and latency percentiles.

    \b
    Example:
      ragrade retrieve myapp.search:build_retriever --queries topics.tsv -k 100 -o run.parquet --cache runs.sqlite3
    """
    from ragrade.io import write_run
    from ragrade.retrieval import IdMismatchError, retrieve

    mismatch: IdMismatchError | None = None
    with input_errors():
        refuse_inputs(output, [queries, cache, qrels])
        obj = load_retriever(retriever)
        try:
            run = retrieve(obj, queries, k, id_key=id_key, name=name or retriever, concurrency=max_concurrency,
                           mode=mode, cache=cache, progress=progress, texts=not no_texts,  # type: ignore[arg-type]
                           qrels=qrels, timeout=timeout)
        except IdMismatchError as exc:
            mismatch = exc
            run = exc.run
        summary = run.retrieval
        nothing = bool(summary.queries) and summary.failed >= summary.queries
        if not nothing:  # every query failed: an existing output is left as it was
            write_run(run, output, output_format)
    if fmt == "json":
        click.echo(json.dumps(_jsonable(summary.to_dict()), indent=2))
    else:
        for line in summary.lines():
            click.echo(line, err=True)
        click.echo(f"nothing written: every query failed ({output} is left as it was)" if nothing else
                   f"wrote {run.n_queries} queries, {run.n_rows} results to {output}", err=True)
    if mismatch is not None:
        fail(str(mismatch))
    if summary.queries and max_failed.exceeded(summary.failed, summary.queries):
        incomplete(f"{summary.failed} of {summary.queries} queries failed (allowed: --max-failed {max_failed})")


def _jsonable(o: Any) -> Any:
    if isinstance(o, float):
        return None if o != o else o
    if isinstance(o, dict):
        return {k: _jsonable(v) for k, v in o.items()}
    return o
