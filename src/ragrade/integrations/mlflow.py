"""Log a :class:`~ragrade.engine.result.Result` to MLflow (extra ``mlflow``; ``docs/tracking.md``).

What one call logs to an MLflow run:

* **metrics**: each metric's mean, under an MLflow-safe name (``ndcg@10`` -> ``ndcg_at_10``,
  ``precision(rel=2)@5`` -> ``precision_rel_2_at_5``); for a run made by :func:`ragrade.retrieve`, also
  the retrieval latency percentiles (``retrieval_latency_p50_ms``...) and failure count;
* **parameters**: ``metrics`` (the definitions, ``str(Metric)``), ``profile``, ``policy.<name>`` for every
  policy, ``ragrade_version``, ``run`` (the run's name), ``queries``, and with ``qrels``
  ``qrels_fingerprint`` (the gate's fingerprint, ``docs/gate.md``);
* **artifacts** under ``ragrade/``: ``per_query.csv`` (one row per query), ``result.json``
  (``Result.to_json(per_query=True)``), ``metric_names.json`` (label -> MLflow name and definition), and
  an HTML page: ``report.html``, ragrade's comparison report (``docs/report.md``), when ``run`` and
  ``compare_with`` (other runs) are given, else ``result.html`` (the means, the summary and the per-query
  table of this one result).

Nothing global is changed: the tracking URI given is used through an ``MlflowClient`` of its own. With
no ``tracking_uri``, ``experiment`` or ``run_id`` and an active MLflow run (``mlflow.start_run()``), the
result is logged into that run and it is left open; otherwise a new run is created and ended.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
import urllib.parse
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragrade.errors import (
    InputError,
    MlflowLoggingError,
    RagradeError,
    require,
)

_UNSAFE = re.compile(r"[^0-9A-Za-z_\-. :/]+")


def mlflow_metric_names(labels: list[str]) -> dict[str, str]:
    """An MLflow-safe, unique name for each metric label.

    >>> mlflow_metric_names(["ndcg@10", "precision(rel=2)@5", "P@5"])
    {'ndcg@10': 'ndcg_at_10', 'precision(rel=2)@5': 'precision_rel_2_at_5', 'P@5': 'P_at_5'}
    """
    out: dict[str, str] = {}
    used: set[str] = set()
    for label in labels:
        base = _UNSAFE.sub("_", label.replace("@", "_at_")).strip("_ ")
        base = re.sub(r"_+", "_", base) or "metric"
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        out[label] = name
    return out


def log_result(result: Any, *, qrels: Any = None, run: Any = None, compare_with: Mapping[str, Any] | None = None,
               tracking_uri: str | None = None, experiment: str | None = None, run_id: str | None = None,
               run_name: str | None = None, tags: Mapping[str, str] | None = None, report: bool = True) -> str:
    """Log ``result`` to MLflow and return the MLflow run id (see the module docstring for what is logged).

    ``qrels`` adds the qrels fingerprint (and is needed for the comparison report); ``run`` is the
    evaluated run (retrieval latency when it came from :func:`ragrade.retrieve`; the report). ``compare_with``
    (``{name: run}``) makes the HTML artifact ragrade's comparison report of ``run`` against those runs.
    ``tracking_uri`` (default: MLflow's own, e.g. ``MLFLOW_TRACKING_URI``), ``experiment`` (a name, created
    if needed), ``run_id`` (log into an existing run), ``run_name``, ``tags``; ``report=False`` skips the
    HTML artifact.
    """
    from ragrade.engine.result import Result

    if not isinstance(result, Result):
        raise InputError(f"log_result takes a ragrade Result, not a {type(result).__name__}")
    result = result.collect()  # a Spark result's values, on the driver
    mlflow = require("mlflow", package="mlflow-skinny", extra="mlflow", purpose="Logging to MLflow")
    from mlflow.exceptions import MlflowException

    names = mlflow_metric_names(list(result.per_query.columns))
    metrics = {names[label]: float(v) for label, v in result.means.items() if not math.isnan(float(v))}
    params = _params(result, qrels)
    retrieval = getattr(run, "retrieval", None)
    if retrieval is not None:
        for key in ("latency_p50", "latency_p95", "latency_p99", "latency_mean"):
            value = float(getattr(retrieval, key))
            if not math.isnan(value):
                metrics[f"retrieval_{key}_ms"] = value * 1e3
        metrics["retrieval_failed"] = float(retrieval.failed)
        params.update({"retriever": retrieval.retriever, "retrieval_k": str(retrieval.k)})

    try:
        with bounded_http():
            rid = _log(mlflow, result, params, metrics, names, qrels, run, compare_with, report, tracking_uri,
                       experiment, run_id, run_name, tags)
    except RagradeError:
        raise
    except MlflowException as exc:
        what = ("cannot reach the MLflow tracking server" if _UNREACHABLE.search(exc.message)
                else "MLflow refused the logging")
        raise MlflowLoggingError(f"{what}{_where(mlflow, tracking_uri)}: {_short(exc.message)}") from None
    except Exception as exc:  # MLflow's transport (requests, urllib3) or its stores: never a traceback
        raise MlflowLoggingError(f"logging to MLflow failed{_where(mlflow, tracking_uri)}: {type(exc).__name__}: "
                                 f"{_short(str(exc))}") from None
    return str(rid)


def _log(mlflow: Any, result: Any, params: dict[str, str], metrics: dict[str, float], names: dict[str, str],
         qrels: Any, run: Any, compare_with: Mapping[str, Any] | None, report: bool, tracking_uri: str | None,
         experiment: str | None, run_id: str | None, run_name: str | None, tags: Mapping[str, str] | None) -> str:
    from mlflow.entities import Metric as MlflowMetric
    from mlflow.entities import Param

    active = mlflow.active_run() if (tracking_uri is None and experiment is None and run_id is None) else None
    client = mlflow.tracking.MlflowClient(tracking_uri)
    if active is not None:
        rid, owned = active.info.run_id, False
    elif run_id is not None:
        rid, owned = run_id, False
    else:
        exp_id = _experiment_id(client, experiment)
        created = client.create_run(exp_id, run_name=run_name or result.run_name or None,
                                    tags={"ragrade.version": params["ragrade_version"], **dict(tags or {})})
        rid, owned = created.info.run_id, True
    import time

    now = int(time.time() * 1000)
    client.log_batch(rid, metrics=[MlflowMetric(k, v, now, 0) for k, v in metrics.items()],
                     params=[Param(k, v) for k, v in params.items()], tags=[])
    with tempfile.TemporaryDirectory(prefix="ragrade-mlflow-") as tmp:
        folder = Path(tmp) / "ragrade"
        folder.mkdir()
        _artifacts(folder, result, names, qrels, run, compare_with, report)
        client.log_artifacts(rid, str(folder), artifact_path="ragrade")
    if owned:
        client.set_terminated(rid)
    return str(rid)


#: MLflow's HTTP settings while ragrade logs, unless the user set them (MLflow's own defaults retry an
#: unreachable server for minutes: 7 retries with backoff factor 2, 120 s per request). With these, a
#: refused connection fails in about 3 s and a server that accepts but never answers in about 3 x 20 s.
HTTP_SETTINGS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
}


@contextlib.contextmanager
def bounded_http(settings: Mapping[str, str] | None = None) -> Iterator[None]:
    """Set MLflow's HTTP retry and timeout variables (:data:`HTTP_SETTINGS`) for the duration of the block
    (a variable the user set is left alone) and restore the environment after it, whatever happens."""
    added = {k: v for k, v in (settings or HTTP_SETTINGS).items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


_UNREACHABLE = re.compile(r"Max retries exceeded|Connection refused|NewConnectionError|Read timed out|"
                          r"ConnectTimeout|Name or service not known")


def _where(mlflow: Any, tracking_uri: str | None) -> str:
    try:
        uri = tracking_uri or mlflow.get_tracking_uri()
    except Exception:
        return ""
    u = urllib.parse.urlsplit(str(uri))
    if u.password or u.username:  # never show credentials of the URI
        host = u.hostname or ""
        uri = urllib.parse.urlunsplit((u.scheme, host + (f":{u.port}" if u.port else ""), u.path, "", ""))
    return f" (tracking URI {uri})"


def _short(text: str, limit: int = 600) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _experiment_id(client: Any, name: str | None) -> str:
    name = name or os.environ.get("MLFLOW_EXPERIMENT_NAME")
    if name is None:
        env_id = os.environ.get("MLFLOW_EXPERIMENT_ID")
        return env_id or "0"
    found = client.get_experiment_by_name(name)
    return str(found.experiment_id) if found is not None else str(client.create_experiment(name))


def _params(result: Any, qrels: Any) -> dict[str, str]:
    from dataclasses import asdict

    from ragrade import __version__

    profile = "default" if result.profile is None else result.profile.name
    params = {
        "metrics": ", ".join(str(m) for m in result.metrics.values()),
        "profile": profile,
        "ragrade_version": __version__,
        "run": str(result.run_name or ""),
        "queries": str(result.n_queries),
    }
    params.update({f"policy.{k}": str(v) for k, v in asdict(result.policies).items()})
    if qrels is not None:
        from ragrade.gating.baseline import qrels_fingerprint

        params["qrels_fingerprint"] = qrels_fingerprint(qrels)
    return params


def _artifacts(folder: Path, result: Any, names: dict[str, str], qrels: Any, run: Any,
               compare_with: Mapping[str, Any] | None, report: bool) -> None:
    result.per_query.to_csv(folder / "per_query.csv", index=True, index_label="query")
    (folder / "result.json").write_text(result.to_json(per_query=True) + "\n", encoding="utf-8")
    (folder / "metric_names.json").write_text(json.dumps(
        {label: {"mlflow": names[label], "definition": str(m)} for label, m in result.metrics.items()},
        indent=2) + "\n", encoding="utf-8")
    if not report:
        return
    if compare_with:
        from dataclasses import asdict

        if qrels is None or run is None:
            raise InputError("the comparison report needs qrels= and run= besides compare_with=")
        from ragrade.report import write_html

        name = result.run_name or "run"
        runs = {name: run, **{k: v for k, v in compare_with.items() if k != name}}
        write_html(folder / "report.html", qrels, runs, list(result.metrics), **asdict(result.policies))
        return
    (folder / "result.html").write_text(result_html(result), encoding="utf-8")


def result_html(result: Any, digits: int = 4) -> str:
    """A small self-contained HTML page of one result: the means with their query counts, the summary
    notes and the per-query table (every value escaped by pandas)."""
    import html

    import pandas as pd

    means = pd.DataFrame({"mean": pd.Series(dict(result.means)), "queries": pd.Series(dict(result.counts))})
    means.index.name = "metric"
    title = html.escape(f"ragrade result: {result.run_name or 'run'}")
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in result.summary_lines())
    fmt = f"{{:.{digits}f}}".format
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{title}</title><style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}"
        "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}</style></head><body>"
        f"<h1>{title}</h1><h2>Means</h2>{means.to_html(float_format=fmt, na_rep='nan')}"
        f"<h2>Summary</h2><ul>{notes}</ul>"
        f"<h2>Per query</h2>{result.per_query.to_html(float_format=fmt, na_rep='nan')}</body></html>\n"
    )
