"""Integrations with other tools, each an optional extra imported on first use:
:mod:`ragrade.integrations.mlflow` (``log_result``: a result's means, parameters, per-query table and
HTML report logged to MLflow; ``docs/tracking.md``)."""
