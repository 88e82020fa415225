"""Options ``ragrade evaluate`` takes for the team's loop: ``--save-baseline`` (the regression gate's
baseline file, ``docs/gate.md``) and ``--mlflow`` (log the result to MLflow, ``docs/tracking.md``). Kept
here so that the evaluate command only declares and calls them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

_NAMES = ("save_baseline", "mlflow", "mlflow_experiment", "mlflow_run_name", "mlflow_report", "mlflow_compare")


@dataclass
class LoopOptions:
    save_baseline: str | None = None
    mlflow: bool = False
    mlflow_experiment: str | None = None
    mlflow_run_name: str | None = None
    mlflow_report: bool = True
    mlflow_compare: tuple[str, ...] = ()


def loop_options(f: Any) -> Any:
    """Add the options to a click command (they arrive as keyword arguments; :func:`pop_loop_options`
    takes them out)."""
    options = [
        click.option("--save-baseline", "save_baseline", type=click.Path(dir_okay=False), default=None,
                     metavar="PATH", help="Save the result as a baseline file for `ragrade gate`."),
        click.option("--mlflow", "mlflow", is_flag=True,
                     help="Log the result to MLflow (MLFLOW_TRACKING_URI; needs ragrade[mlflow])."),
        click.option("--mlflow-experiment", "mlflow_experiment", default=None, metavar="NAME",
                     help="MLflow experiment (default: MLflow's active or default one)."),
        click.option("--mlflow-run-name", "mlflow_run_name", default=None, metavar="NAME",
                     help="Name of the MLflow run (default: the run's name)."),
        click.option("--mlflow-report/--no-mlflow-report", "mlflow_report", default=True,
                     help="Attach an HTML page to the MLflow run (default: yes)."),
        click.option("--mlflow-compare", "mlflow_compare", multiple=True, type=click.Path(dir_okay=False),
                     metavar="RUN", help="Other run(s): the HTML artifact is then the comparison report. Repeatable."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def pop_loop_options(kwargs: dict[str, Any]) -> LoopOptions:
    return LoopOptions(**{name: kwargs.pop(name) for name in _NAMES if name in kwargs})


def finish(options: LoopOptions, result: Any, qrels: Any, run: Any, truth: dict[str, Any] | None = None) -> None:
    """Save the baseline and log to MLflow, as asked (errors are RagradeErrors: the caller turns them into
    exit status 2). ``truth``: the ground-truth keywords of the evaluation (spans, nuggets), for the baseline."""
    if options.save_baseline:
        from ragrade.gating import save_baseline

        saved = save_baseline(result, options.save_baseline, qrels, **(truth or {}))
        click.echo(f"baseline saved to {saved}", err=True)
    if options.mlflow:
        from ragrade.integrations.mlflow import log_result
        from ragrade.io import read_run

        others: dict[str, Any] = {}
        from ragrade.cli._output import run_names

        for name, path in zip(run_names(options.mlflow_compare, []), options.mlflow_compare, strict=True):
            others[name] = read_run(path)
        run_id = log_result(result, qrels=qrels, run=run, compare_with=others or None,
                            experiment=options.mlflow_experiment, run_name=options.mlflow_run_name,
                            report=options.mlflow_report)
        click.echo(f"logged to MLflow run {run_id}", err=True)
