"""MLflow logging against MLflow's local file store in a temporary directory (no server, no network),
read back with MLflow's own client."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.cli import main
from ragrade.errors import InputError, MissingDependencyError
from ragrade.gating import qrels_fingerprint
from ragrade.integrations.mlflow import log_result, mlflow_metric_names

mlflow = pytest.importorskip("mlflow", reason="mlflow-skinny is in the test extra")
from pathlib import Path  # noqa: E402

from mlflow.tracking import MlflowClient  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = EXAMPLES / "qrels.tsv"
TOPICS = EXAMPLES / "topics.tsv"
RUN = EXAMPLES / "run.tsv"
DENSE = EXAMPLES / "run_dense.tsv"


@pytest.fixture()
def store(tmp_path, monkeypatch):
    # MLflow 3 keeps the file store in maintenance mode and asks for this opt-in to use it.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return (tmp_path / "mlruns").as_uri()


def _download(client, run_id, path, tmp_path):
    return open(client.download_artifacts(run_id, path, str(tmp_path)), encoding="utf-8").read()


def test_log_result_round_trip(store, tmp_path):
    result = ragrade.evaluate(QRELS, RUN, ["ndcg@10", "recall@[5,20]", "P(rel=2)@5"])
    run_id = log_result(result, qrels=QRELS, run=RUN, tracking_uri=store, experiment="loop")
    client = MlflowClient(store)
    logged = client.get_run(run_id)
    assert logged.info.status == "FINISHED"
    assert client.get_experiment(logged.info.experiment_id).name == "loop"
    names = mlflow_metric_names(list(result.per_query.columns))
    assert logged.data.metrics == {names[k]: pytest.approx(v, abs=0) for k, v in result.means.items()}
    assert logged.data.metrics["ndcg_at_10"] == result.means["ndcg@10"]
    p = logged.data.params
    assert p["metrics"] == "ndcg@10, recall@5, recall@20, precision(rel=2)@5"
    assert p["profile"] == "default" and p["policy.no_relevant"] == "skip" and p["run"] == "bm25"
    assert p["ragrade_version"] == ragrade.__version__ and p["qrels_fingerprint"] == qrels_fingerprint(QRELS)
    files = {a.path for a in client.list_artifacts(run_id, "ragrade")}
    assert files == {"ragrade/per_query.csv", "ragrade/result.json", "ragrade/metric_names.json",
                     "ragrade/result.html"}
    table = pd.read_csv(client.download_artifacts(run_id, "ragrade/per_query.csv", str(tmp_path)), index_col="query")
    table.index = table.index.astype(str)
    pd.testing.assert_frame_equal(table, result.per_query, check_names=False, check_index_type=False)
    assert json.loads(_download(client, run_id, "ragrade/result.json", tmp_path))["metrics"]["recall@20"] == \
        result.means["recall@20"]
    html = _download(client, run_id, "ragrade/result.html", tmp_path)
    assert "<table" in html and "q01" in html and "Content-Security-Policy" in html


def test_the_comparison_report_as_artifact(store, tmp_path):
    result = ragrade.evaluate(QRELS, RUN, ["ndcg@10"])
    run_id = log_result(result, qrels=QRELS, run=RUN, compare_with={"dense": DENSE}, tracking_uri=store)
    client = MlflowClient(store)
    html = _download(client, run_id, "ragrade/report.html", tmp_path)
    assert "<svg" in html and "dense" in html and "bm25" in html
    with pytest.raises(InputError, match="needs qrels"):
        log_result(result, compare_with={"dense": DENSE}, tracking_uri=store)


def test_logs_into_the_active_run_and_leaves_it_open(store, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    result = ragrade.evaluate(QRELS, RUN, ["ndcg@10"])
    with mlflow.start_run() as active:
        run_id = log_result(result, report=False)
        assert run_id == active.info.run_id and mlflow.active_run() is not None
    logged = MlflowClient(store).get_run(run_id)
    assert "qrels_fingerprint" not in logged.data.params and logged.data.metrics["ndcg_at_10"] == result.means["ndcg@10"]


def test_retrieval_latency_is_logged(store):
    run = ragrade.retrieve(lambda q: ["doc-0001", "doc-0125"], TOPICS, k=2, progress=False)
    result = ragrade.evaluate(QRELS, run, ["recall@2"])
    run_id = log_result(result, run=run, tracking_uri=store, report=False)
    logged = MlflowClient(store).get_run(run_id)
    assert logged.data.metrics["retrieval_latency_p50_ms"] == pytest.approx(run.retrieval.latency_p50 * 1e3)
    assert logged.data.metrics["retrieval_failed"] == 0 and logged.data.params["retriever"] == run.name


def test_cli_evaluate_mlflow(store, monkeypatch, tmp_path):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", store)
    r = CliRunner().invoke(main, ["evaluate", str(QRELS), str(RUN), "-m", "ndcg@10", "--mlflow",
                                  "--mlflow-experiment", "ci", "--mlflow-compare", str(DENSE)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    run_id = r.stderr.split("logged to MLflow run ")[1].split()[0]
    client = MlflowClient(store)
    logged = client.get_run(run_id)
    assert client.get_experiment(logged.info.experiment_id).name == "ci"
    assert {a.path for a in client.list_artifacts(run_id, "ragrade")} >= {"ragrade/report.html"}


def test_metric_names_are_safe_and_unique():
    names = mlflow_metric_names(["ndcg@10", "ndcg(gain=exp)@10", "P@[5]", "recall@5", "recall_at_5"])
    assert len(set(names.values())) == 5
    assert all(set(n) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-. :/")
               for n in names.values())


def test_missing_extra_gives_an_install_hint(monkeypatch):
    import ragrade.errors as errors

    def missing(module, **kw):
        raise MissingDependencyError(kw.get("package") or module, kw["extra"], kw["purpose"])

    monkeypatch.setattr("ragrade.integrations.mlflow.require", missing)
    with pytest.raises(errors.MissingDependencyError, match=r"ragrade\[mlflow\]"):
        log_result(ragrade.evaluate({"q": {"d": 1}}, {"q": ["d"]}, ["rr"]))


# -- failures: bounded, typed, no traceback (issue 23, items 2 and 14) -------------------------------------


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: nothing listens there


def test_file_store_without_the_opt_in_is_an_mlflow_logging_error(tmp_path, monkeypatch):
    from ragrade.integrations.mlflow import MlflowLoggingError

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri = (tmp_path / "mlruns").as_uri()
    result = ragrade.evaluate(QRELS, RUN, ["ndcg@10"])
    with pytest.raises(MlflowLoggingError, match="MLFLOW_ALLOW_FILE_STORE"):
        log_result(result, tracking_uri=uri)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    r = CliRunner().invoke(main, ["evaluate", str(QRELS), str(RUN), "-m", "ndcg@10", "--mlflow"])
    assert r.exit_code == 2, r.output
    assert "error: MLflow refused the logging" in r.stderr and "MLFLOW_ALLOW_FILE_STORE" in r.stderr
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_unreachable_server_fails_within_a_bound_and_restores_the_environment(monkeypatch):
    import os
    import subprocess
    import sys
    import time

    from ragrade.integrations.mlflow import HTTP_SETTINGS

    for k in HTTP_SETTINGS:
        monkeypatch.delenv(k, raising=False)
    port = _closed_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env |= {"MLFLOW_TRACKING_URI": f"http://127.0.0.1:{port}",
            "PYTHONPATH": str(Path(ragrade.__file__).resolve().parents[1])}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragrade", "evaluate", str(QRELS), str(RUN), "-m", "ndcg@10",
                           "--mlflow"], capture_output=True, text=True, env=env, timeout=120)
    took = time.perf_counter() - t0
    assert proc.returncode == 2, proc.stderr
    assert took < 40  # MLflow's own defaults retry for minutes
    assert f"error: cannot reach the MLflow tracking server (tracking URI http://127.0.0.1:{port})" in proc.stderr
    assert "Traceback" not in proc.stderr
    # in process: the same error, and the MLflow variables are as they were before the call
    from ragrade.integrations.mlflow import MlflowLoggingError

    result = ragrade.evaluate(QRELS, RUN, ["ndcg@10"])
    before = {k: os.environ.get(k) for k in HTTP_SETTINGS}
    with pytest.raises(MlflowLoggingError, match="cannot reach"):
        log_result(result, tracking_uri=f"http://127.0.0.1:{port}")
    assert {k: os.environ.get(k) for k in HTTP_SETTINGS} == before == dict.fromkeys(HTTP_SETTINGS)


def test_bounded_http_leaves_the_users_settings_alone(monkeypatch):
    import os

    from ragrade.integrations.mlflow import HTTP_SETTINGS, bounded_http

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "7")
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    with pytest.raises(RuntimeError), bounded_http():
        assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "7"
        assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == HTTP_SETTINGS["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]
        raise RuntimeError("restored even on an error")
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "7"
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ


def test_a_server_that_never_answers_is_bounded_by_the_timeout(monkeypatch):
    import socket
    import time

    from ragrade.integrations.mlflow import MlflowLoggingError

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "1")  # the user's own bound is honoured
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # accepts connections, never answers
        uri = f"http://127.0.0.1:{listener.getsockname()[1]}"
        result = ragrade.evaluate(QRELS, RUN, ["ndcg@10"])
        t0 = time.perf_counter()
        with pytest.raises(MlflowLoggingError):
            log_result(result, tracking_uri=uri)
        assert time.perf_counter() - t0 < 20
