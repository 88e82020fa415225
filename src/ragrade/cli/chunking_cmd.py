"""``ragrade chunking CORPUS SPANS``: which chunker wins (docs/spans.md, "Which chunker wins")."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import click

from ragrade.cli._output import input_errors, number, stderr_console, stdout_console

DEFAULT_CHUNKERS = ("fixed:200", "fixed:400:100", "recursive:400:100", "fixed:800")


def chunker_of(spec: str) -> tuple[str, Any]:
    """``(name, chunker)`` of a ``--chunker`` value: ``fixed:SIZE[:OVERLAP]``, ``recursive:SIZE[:OVERLAP]``,
    ``langchain:SIZE[:OVERLAP]`` (LangChain's RecursiveCharacterTextSplitter) or ``module:attribute`` (a
    chunker, a splitter or a callable ``text -> list[str]``)."""
    from ragrade.spans import fixed, recursive

    kind, _, rest = spec.partition(":")
    if kind in ("fixed", "recursive", "langchain"):
        parts = rest.split(":") if rest else []
        if not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts):
            raise click.BadParameter(f"{spec!r}: expected {kind}:SIZE or {kind}:SIZE:OVERLAP", param_hint="--chunker")
        size, overlap = int(parts[0]), int(parts[1]) if len(parts) == 2 else 0
        if kind == "fixed":
            return spec, fixed(size, overlap)
        if kind == "recursive":
            return spec, recursive(size, overlap)
        from ragrade.errors import require

        splitters = require("langchain_text_splitters", package="langchain-text-splitters", extra="text",
                            purpose="the langchain chunker")
        return spec, splitters.RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    return spec, imported(spec, "--chunker")


def imported(spec: str, option: str) -> Any:
    """The object ``module:attribute`` names (the current directory is importable)."""
    import sys

    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise click.BadParameter(f"{spec!r}: expected module:attribute", param_hint=option)
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise click.BadParameter(f"{spec!r}: {exc}", param_hint=option) from None


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"{v!r}: expected NAME=FILE", param_hint=option)
        out[name] = path
    return out


@click.command(name="chunking")
@click.argument("corpus", type=click.Path())
@click.argument("spans", type=click.Path())
@click.option("--chunker", "chunkers", multiple=True, metavar="CHUNKER",
              help="A chunker to compare: fixed:SIZE[:OVERLAP], recursive:SIZE[:OVERLAP], langchain:SIZE[:OVERLAP] or "
                   "module:attribute (a splitter or a callable text -> list of texts). Repeatable. Default (with no "
                   "--map either): " + ", ".join(DEFAULT_CHUNKERS) + ".")
@click.option("--map", "maps", multiple=True, metavar="NAME=CHUNKS",
              help="A chunking given as a chunk map file (chunk_id, doc, start, end). Repeatable.")
@click.option("--run", "runs", multiple=True, metavar="NAME=RUN",
              help="The run of a chunking (its chunk ids); chunkings without one are retrieved. Repeatable.")
@click.option("--retriever", default=None, metavar="MODULE:FACTORY",
              help="factory(texts, ids) -> a retriever (see ragrade retrieve) over one chunking's chunks; default: "
                   "a built-in BM25.")
@click.option("--queries", default=None, metavar="FILE",
              help="Query texts (TSV/JSONL/Parquet topics) when SPANS holds no questions.")
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True,
              help="The cutoff of the span measures compared.")
@click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
              help="Metrics to compare instead of span recall, precision and IoU at k and precision_omega. Repeatable.")
@click.option("--profile", default=None, metavar="PROFILE", help="chroma or legalbench_rag (see docs/spans.md).")
@click.option("--html", "html_path", default=None, type=click.Path(), metavar="PATH",
              help="Also write the HTML report (chunking section with plots, comparison, queries).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True,
              help="Output format.")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True, help="Decimals shown.")
@click.option("--baseline", default=None, help="Compare every chunking with this one; default: all pairs.")
@click.option("--test", default="randomization", show_default=True, metavar="TEST",
              help="Paired test (randomization, bootstrap, t, wilcoxon, tukey).")
@click.option("--resamples", "n_resamples", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Resamples of the test and of the intervals.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the resampling.")
def command(corpus: str, spans: str, chunkers: tuple[str, ...], maps: tuple[str, ...], runs: tuple[str, ...],
            retriever: str | None, queries: str | None, k: int, metrics: tuple[str, ...], profile: str | None,
            html_path: str | None, fmt: str, digits: int, **stats: Any) -> None:
    """Compare chunkers (or given chunkings) on the gold spans SPANS over the documents CORPUS (a folder of
    text files or a corpus file): span recall, precision and IoU at k, precision_omega, chunks, mean chunk
    length and index size, with the significance of the differences over queries.

    \b
    Examples:
      ragrade chunking examples/chunking/docs examples/chunking/spans.jsonl
      ragrade chunking docs/ spans.jsonl --chunker fixed:256 --chunker recursive:512:64 --html chunking.html
    """
    from ragrade.chunking import compare_chunkings
    from ragrade.errors import RagradeWarning

    with input_errors():
        named = dict(chunker_of(s) for s in chunkers)
        named.update(_pairs(maps, "--map"))
        if not named:
            named = dict(chunker_of(s) for s in DEFAULT_CHUNKERS)
        factory = imported(retriever, "--retriever") if retriever else None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RagradeWarning)
            cc = compare_chunkings(spans, named, _pairs(runs, "--run"), corpus=corpus, retriever=factory,
                                   queries=queries, k=k, metrics=list(metrics) or None, profile=profile, **stats)
            if html_path:
                cc.to_html(html_path)
    _print(cc, fmt, digits, [str(w.message) for w in caught], html_path)


def _print(cc: Any, fmt: str, digits: int, caught: list[str], html_path: str | None) -> None:
    for note in dict.fromkeys([*cc.notes, *caught]):
        click.echo(f"note: {note}", err=True)
    if fmt == "json":
        click.echo(cc.to_json())
    elif fmt == "markdown":
        click.echo(cc.to_markdown(digits=digits), nl=False)
    else:
        _table(cc, digits)
    if html_path:
        stderr_console().print(f"wrote {html_path}")


def _table(cc: Any, digits: int) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"chunkings ({len(cc.truth.queries)} queries, k = {cc.k})", title_justify="left")
    table.add_column("chunking")
    for col in ("chunks", "mean length", "index chars", *cc.metrics):
        table.add_column(Text(col), justify="right")
    best = {m: float(cc.table[m].astype(float).max()) for m in cc.metrics}
    for name, row in cc.table.iterrows():
        cells = [str(int(row["chunks"])), f"{float(row['mean_length']):.1f}", str(int(row["index_characters"]))]
        cells += [f"[bold]{number(float(row[m]), digits)}[/bold]" if float(row[m]) == best[m]
                  else number(float(row[m]), digits) for m in cc.metrics]
        table.add_row(Text(str(name)), *cells)
    out = stdout_console()
    out.print(table)
    if cc.comparison is not None:
        out.print(cc.comparison.to_rich(digits=digits))
