"""``ragrade convert IN OUT``: convert qrels or runs between TREC, TSV/CSV, JSONL and Parquet."""

from __future__ import annotations

import click

from ragrade.cli._output import fail, input_errors, reading
from ragrade.errors import RagradeError
from ragrade.io import FORMATS


@click.command(name="convert")
@click.argument("src", metavar="IN", type=click.Path(dir_okay=False))
@click.argument("dst", metavar="OUT", type=click.Path(dir_okay=False))
@click.option("--kind", type=click.Choice(["run", "qrels"]), default=None,
              help="What IN holds (default: guessed from its first line or columns).")
@click.option("--in-format", type=click.Choice(FORMATS), default=None, help="Format of IN (default: extension).")
@click.option("--out-format", type=click.Choice(FORMATS), default=None, help="Format of OUT (default: extension).")
@click.option("--tag", default=None, help="Run tag written in TREC run files (default: the run's name).")
def command(src: str, dst: str, kind: str | None, in_format: str | None, out_format: str | None,
            tag: str | None) -> None:
    """Convert IN to OUT; formats come from the extensions (.gz compresses / decompresses).

    \b
    Examples:
      ragrade convert examples/run.tsv run.parquet
      ragrade convert qrels.jsonl qrels.trec --kind qrels
    """
    from ragrade.io import guess_kind, read_qrels, read_run, write_qrels, write_run

    with input_errors():
        if kind is None:
            try:
                kind = guess_kind(src, in_format)
            except RagradeError:
                raise
            except (ValueError, TypeError, AttributeError) as exc:  # a file that is not what its name says
                fail(f"{src}: cannot be read as {in_format or 'its extension says'} ({exc}); pass --in-format, "
                     "or --kind run / --kind qrels")
            if kind is None:
                fail(f"{src}: cannot tell whether this is a run or qrels; pass --kind run or --kind qrels")
        with reading(src, kind or "") as progress:
            if kind == "run":
                run = read_run(src, format=in_format, progress=progress)
                write_run(run, dst, format=out_format, tag=tag)
                n_queries, n_rows = run.n_queries, run.n_rows
            else:
                qrels = read_qrels(src, format=in_format, progress=progress)
                if tag is not None:
                    fail("--tag applies to runs only")
                write_qrels(qrels, dst, format=out_format)
                n_queries, n_rows = qrels.n_queries, qrels.n_rows
    click.echo(f"wrote {kind} with {n_queries} queries and {n_rows} rows to {dst}", err=True)
