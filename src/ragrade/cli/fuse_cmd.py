"""``ragrade fuse RUN RUN... -o OUT``: fuse runs (ranx's methods, or a RAG framework's hybrid fusion)."""

from __future__ import annotations

from typing import Any

import click

from ragrade.cli._options import option
from ragrade.cli._output import fail, input_errors, refuse_inputs
from ragrade.options import SEED

_PROFILES = ("ranx", "langchain", "llamaindex", "qdrant", "pyserini", "trectools")


def _param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE``: a parameter with bounds (docs/fusion.md, "Parameters") is checked here, so that a
    refusal names the option (``--param k: must be a number > 0, got 'abc'``)."""
    from ragrade.fusion.params import BOUNDS, check_number

    if "=" not in text:
        fail(f"--param takes NAME=VALUE (e.g. k=60), got {text!r}")
    name, value = (part.strip() for part in text.split("=", 1))
    if name in BOUNDS:
        with input_errors():
            return name, check_number(f"--param {name}", value, BOUNDS[name])
    for cast in (int, float):
        try:
            return name, cast(value)
        except ValueError:
            continue
    return name, value


def _weights(text: str) -> list[float]:
    from ragrade.fusion.params import check_weights

    parts = [x.strip() for x in text.split(",") if x.strip()]
    with input_errors():
        return check_weights(parts, label="--weights")


def _search_options(step: float, cv: int | None) -> None:
    """--step and --cv within their bounds, named as options (before any run is read)."""
    from ragrade.fusion.params import GRID_STEP, Bound, check_number

    with input_errors():
        check_number("--step", step, GRID_STEP)
        if cv is not None:
            check_number("--cv", cv, Bound("a whole number of folds >= 2", low=2, integer=True))


@click.command(name="fuse")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the fused run (format from the extension: .trec, .tsv, .jsonl, .parquet).")
@click.option("--method", default="rrf", show_default=True,
              help="Fusion method, ranx's names (rrf, wsum, combmnz, ...; case-insensitive).")
@click.option("--norm", default="default",
              help="Normalisation before fusing: min-max (default), min-max-inverted, max, sum, zmuv, rank, "
                   "borda, none.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter of the method (k=60 for RRF, phi=0.8 for RBC ...); repeatable.")
@click.option("--weights", default=None, help="One weight per run, comma-separated (weighted methods).")
@click.option("--profile", type=click.Choice(_PROFILES), default="ranx", show_default=True,
              help="Whose fusion: ranx's, or the hybrid search of a RAG framework / IR toolkit.")
@click.option("--candidate-order", type=click.Choice(["first_seen", "python_set"]), default="first_seen",
              show_default=True, help="BordaFuse/Condorcet/borda candidates: seed-independent, or ranx's set "
                                      "order under this process's PYTHONHASHSEED.")
@click.option("--optimize", "qrels", default=None, type=click.Path(dir_okay=False), metavar="QRELS",
              help="Choose the method's parameters/weights on these judgments (ragrade.optimize_fusion).")
@click.option("-m", "--metric", default="ndcg@100", show_default=True, help="Metric maximised by --optimize.")
@click.option("--cv", default=None, type=int,
              help="With --optimize: also the k-fold cross-validated score (folds drawn with --seed).")
@click.option("--step", default=0.1, show_default=True, type=float,
              help="With --optimize: the weight grid's step (every combination of multiples of STEP summing to 1).")
@option(SEED, help="With --optimize --cv: the seed of the folds (same seed, same folds).")
@click.option("--name", default=None, help="Name (TREC tag) of the fused run.")
def command(runs: tuple[str, ...], output: str, method: str, norm: str, params: tuple[str, ...],
            weights: str | None, profile: str, candidate_order: str, qrels: str | None, metric: str,
            cv: int | None, step: float, seed: int, name: str | None) -> None:
    """Fuse RUN files into one run written to -o.

    \b
    Examples:
      ragrade fuse examples/run.tsv examples/run_dense.tsv --method rrf -o fused.trec
      ragrade fuse examples/run.tsv examples/run_dense.tsv --method wsum --weights 0.3,0.7 -o fused.trec
      ragrade fuse examples/run.tsv examples/run_dense.tsv --method wsum --optimize examples/qrels.tsv -m ndcg@10 --cv 5 -o fused.trec
    """
    if len(runs) < 2:
        fail("fuse needs at least two runs")
    p = dict(_param(x) for x in params)
    w = _weights(weights) if weights is not None else None
    if qrels is not None:
        _search_options(step, cv)
    with input_errors():
        refuse_inputs(output, [*runs, qrels])
        from pathlib import Path

        from ragrade.fusion.api import fusion_run
        from ragrade.io import write_run

        loaded: dict[str, Any] = {}
        for path in runs:
            stem = Path(path).name.split(".")[0] or path
            key = stem if stem not in loaded else f"{stem}#{len(loaded) + 1}"
            loaded[key] = fusion_run(path)  # an empty file: empty lists (the other runs are fused)
        nrm: str | None = None if norm.strip().lower() == "none" else norm
        if qrels is not None:
            if profile != "ranx" and profile is not None:
                fail("--optimize searches ranx's methods: use it without --profile (or --profile ranx)")
            if w is not None:
                fail("--optimize chooses the weights: drop --weights")
            from ragrade.fusion.optimize import optimize_fusion

            search = optimize_fusion(qrels, loaded, method, metric=metric, norm=nrm, step=step, cv=cv,
                                     seed=seed, candidate_order=candidate_order)
            fused = search.run if name is None else search.run.with_name(name)
            cfg = ", ".join(f"{k}={v}" for k, v in search.config.items()) or "(nothing to choose)"
            click.echo(f"{search.method} norm={search.norm}: best {cfg}; {metric} = {search.score:.4f} "
                       f"({len(search.table)} configurations)")
            if search.cv:
                click.echo(f"{search.cv}-fold cross-validated {metric} = {search.cv_score:.4f}")
        else:
            from ragrade.fusion import fuse

            fused = fuse(loaded, method=method, norm=nrm, params=p or None, weights=w, profile=profile,
                         candidate_order=candidate_order, name=name)  # type: ignore[arg-type]
        write_run(fused, output, ties="input")
    click.echo(f"wrote fused run with {fused.n_queries} queries and {fused.n_rows} rows to {output}", err=True)
