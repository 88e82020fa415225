"""``ragrade info``: the version, the native accelerations that are active, and the optional extras."""

from __future__ import annotations

import json
import os
import platform
import sys
from typing import Any

import click

#: (import name, distribution name, extra, what it enables)
_EXTRAS = (
    ("httpx", "httpx", "llm", "the OpenAI-compatible judge"),
    ("rapidfuzz", "rapidfuzz", "text", "fuzzy and ROUGE matching, the offline judge"),
    ("scipy", "scipy", "stats", "t-test, Wilcoxon and Tukey's HSD in compare"),
    ("matplotlib", "matplotlib", "plots", "PNG plots (ragrade plot --format png; the HTML report needs nothing)"),
    ("polars", "polars", "polars", "polars DataFrames as input"),
    ("sentence_transformers", "sentence-transformers", "semantic", "semantic matching and judge"),
    ("pyspark", "pyspark", "spark", "evaluation on Spark (--engine spark, ragrade.scale.spark)"),
    ("mlflow", "mlflow-skinny", "mlflow", "logging to MLflow (--mlflow, ragrade.integrations.mlflow)"),
)
_CORE = ("numpy", "pandas", "pyarrow", "click", "rich")


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _installed(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def gather() -> dict[str, Any]:
    """Everything ``ragrade info`` shows, as plain data (no optional package is imported)."""
    from ragrade import _native

    return {
        "ragrade": _version("ragrade") or "unknown",
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count() or 1,
        "native": _native.status(),
        "native_summary": _native.summary(),
        "core": {name: _version(name) for name in _CORE},
        "extras": {extra: {"package": dist, "installed": _installed(mod), "version": _version(dist), "for": what}
                   for mod, dist, extra, what in _EXTRAS},
    }


def version_line() -> str:
    """``ragrade 0.1.0 (C helper: active (SSE2, file mapping, page release))``: what ``--version`` prints."""
    from ragrade import _native

    return f"ragrade {_version('ragrade') or 'unknown'} ({_native.summary()})"


@click.command(name="info")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(fmt: str) -> None:
    """Show the version, whether the C helper is active (and what it does), and which extras are installed.

    Without the C helper ragrade gives the same results, several times slower; RAGRADE_NO_ACCEL=1 turns it
    off on purpose."""
    info = gather()
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
        return
    native = info["native"]
    lines = [
        f"ragrade {info['ragrade']}",
        f"python {info['python']} on {info['platform']}, {info['cpus']} CPUs",
        info["native_summary"],
    ]
    if native["c_helper"] == "active":
        lines.append(f"  module: {native['path']}")
    elif native["c_helper"] == "missing":
        lines.append("  reinstall where a C compiler is available to get it back "
                     "(`pip install --force-reinstall --no-binary ragrade ragrade`, or `pip install -e .`)")
    lines.append("core: " + ", ".join(f"{k} {v or 'missing'}" for k, v in info["core"].items()))
    lines.append("extras:")
    for extra, e in info["extras"].items():
        state = f"{e['package']} {e['version']}" if e["installed"] else f"not installed (pip install 'ragrade[{extra}]')"
        lines.append(f"  {extra:<9} {state}: {e['for']}")
    click.echo("\n".join(lines))


if __name__ == "__main__":  # pragma: no cover
    command(sys.argv[1:])
