"""``ragrade agreement REFERENCE CANDIDATE RUNS... --candidate-run RUN...``: how alike two test sets (a small
human-labelled one and a synthetic one) rank the same systems (:mod:`ragrade.assessment.testsets`)."""

from __future__ import annotations

import json
import math
from typing import Any

import click


def _f(v: Any) -> str:
    return "nan" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def _ci(v: Any) -> str:
    return "" if not v or v[0] is None else f" [{_f(v[0])}, {_f(v[1])}]"


LABELS = (("kendall_tau", "Kendall tau-b"), ("tau_ap", "tau_AP"), ("top_k_overlap", "top-k overlap"),
          ("kendall_at_k", "kendall@k"), ("spearman", "Spearman"), ("pearson", "Pearson"), ("tau_ap_b", "tau_AP,b"),
          ("tau_gap", "tau_GAP"))


def run(reference: str, candidate: str, runs: tuple[str, ...], candidate_runs: tuple[str, ...], metrics: list[str],
        *, top_k: int, n_resamples: int, seed: int, alpha: float, fmt: str, truth: dict[str, Any]) -> None:
    """Evaluate every system on both sets and print the agreement of the two rankings."""
    from ragrade.assessment.testsets import set_agreement
    from ragrade.cli._output import run_names
    from ragrade.io import read_run

    if len(candidate_runs) != len(runs):
        raise click.UsageError(f"give one --candidate-run per run ({len(runs)} runs, {len(candidate_runs)} "
                               "candidate runs): the i-th of each is the same system")
    names = run_names(runs, [])
    ref_runs = {n: read_run(p) for n, p in zip(names, runs, strict=True)}
    cand_runs = {n: read_run(p) for n, p in zip(names, candidate_runs, strict=True)}
    result = set_agreement(reference, ref_runs, candidate, cand_runs, metrics, top_k=top_k,
                               n_resamples=n_resamples, alpha=alpha, seed=seed, reference_options=truth,
                               candidate_options=truth)
    if fmt == "json":
        click.echo(json.dumps({m: a.to_dict() for m, a in result.items()}, indent=2))
        return
    for metric, a in result.items():
        _print(metric, a, fmt)


def _print(metric: str, a: Any, fmt: str) -> None:
    ranks = a.ranks()
    line = " · ".join(f"{label} {_f(a.values[k])}{_ci(a.intervals[k])}" for k, label in LABELS)
    if fmt == "markdown":
        click.echo(f"**{metric}** (k = {a.k}, {a.queries[0]} reference and {a.queries[1]} candidate queries): {line}\n")
        click.echo("| system | reference | candidate | rank ref | rank cand |\n|---|---:|---:|---:|---:|")
        for s, x, y in zip(a.systems, a.reference_means, a.candidate_means, strict=True):
            click.echo(f"| {s} | {_f(x)} | {_f(y)} | {ranks[s][0]} | {ranks[s][1]} |")
        click.echo("")
        return
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import stdout_console

    console = stdout_console()
    t = Table(title=f"two test sets · {metric} ({a.queries[0]} reference, {a.queries[1]} candidate queries)",
              box=box.SIMPLE_HEAD)
    for col in ("system", "reference", "candidate", "rank ref", "rank cand"):
        t.add_column(col, justify="left" if col == "system" else "right")
    for s, x, y in zip(a.systems, a.reference_means, a.candidate_means, strict=True):
        t.add_row(s, _f(x), _f(y), str(ranks[s][0]), str(ranks[s][1]))
    console.print(t)
    console.print(f"  {line} (k = {a.k}; {a.level:.0%} bootstrap intervals over both sets' queries)\n", soft_wrap=True)
