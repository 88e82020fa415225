"""``ragrade convert IN OUT``: convert qrels or runs between TREC, TSV/CSV, JSONL and Parquet."""

from __future__ import annotations

import click

from ragrade.cli._output import fail, input_errors, reading, refuse_inputs
from ragrade.io import FORMATS


@click.command(name="convert")
@click.argument("src", metavar="IN", type=click.Path(dir_okay=False))
@click.argument("dst", metavar="OUT", type=click.Path(dir_okay=False))
@click.option("--kind", type=click.Choice(["run", "qrels"]), default=None,
              help="What IN holds (default: guessed from its first line or columns).")
@click.option("--input-format", type=click.Choice(FORMATS), default=None, help="Format of IN (default: extension).")
@click.option("--output-format", type=click.Choice(FORMATS), default=None,
              help="Format of OUT (default: extension). OUT is written whole, then renamed into place; OUT = IN is "
                   "refused.")
@click.option("--tag", default=None, help="Run tag written in TREC run files (default: the run's name).")
def command(src: str, dst: str, kind: str | None, input_format: str | None, output_format: str | None,
            tag: str | None) -> None:
    """Convert IN to OUT; formats come from the extensions (.gz compresses / decompresses).

    \b
    Examples:
      ragrade convert examples/run.tsv run.parquet
      ragrade convert qrels.jsonl qrels.trec --kind qrels
    """
    from ragrade.io import guess_kind, read_qrels, read_run, write_qrels, write_run

    if tag is not None and kind == "qrels":
        fail("--tag applies to runs only")
    with input_errors():
        refuse_inputs(dst, [src])
        if kind is None:
            kind = guess_kind(src, input_format)
            if kind is None:
                fail(f"{src}: cannot tell whether this is a run or qrels; pass --kind run or --kind qrels")
        with reading(src, kind or "") as progress:
            if kind == "run":
                run = read_run(src, format=input_format, progress=progress)
                write_run(run, dst, format=output_format, tag=tag)
                n_queries, n_rows = run.n_queries, run.n_rows
            else:
                if tag is not None:
                    fail("--tag applies to runs only")
                qrels = read_qrels(src, format=input_format, progress=progress)
                write_qrels(qrels, dst, format=output_format)
                n_queries, n_rows = qrels.n_queries, qrels.n_rows
    click.echo(f"wrote {kind} with {n_queries} queries and {n_rows} rows to {dst}", err=True)
