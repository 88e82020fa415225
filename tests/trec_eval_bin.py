"""The trec_eval 10 binaries the parity tests compare with (``.ci/run`` builds them).

``TREC_EVAL_BIN`` names trec_eval 10.0 as released (its 4-decimal output is compared byte for byte) and
``TREC_EVAL_FULL_BIN`` a private copy of the same source whose print formats say ``%.17g`` instead of
``%6.4f`` (values compared at full precision). ``.ci/run`` builds both from
``../shared/reference/trec_eval-10.0.tar.gz`` in a temporary directory and sets
``RAGRADE_REQUIRE_TREC_EVAL=1``: there a missing binary fails the test; elsewhere the test skips, saying why.
To run them locally, build trec_eval 10 (``make`` in its source) and a copy with
``sed -i 's/%6\\.4f/%.17g/g' meas_print_single.c meas_print_final.c``, and point the variables at them.
"""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest


def trec_eval_binary(full: bool = False) -> Path:
    """The path of the trec_eval 10 binary (``full``: the ``%.17g`` copy); skip or fail when missing."""
    var = "TREC_EVAL_FULL_BIN" if full else "TREC_EVAL_BIN"
    value = os.environ.get(var, "")
    problem = ""
    if not value:
        problem = f"{var} is not set"
    elif not Path(value).is_file() or not os.access(value, os.X_OK):
        problem = f"{var}={value} is not an executable file"
    else:
        proc = subprocess.run([value, "-v"], capture_output=True, text=True)
        said = (proc.stdout + proc.stderr).split("version", 1)[-1].strip()
        if not said.startswith("10"):
            problem = f"{var}={value} is not trec_eval 10 ({said!r})"
    if problem:
        if os.environ.get("RAGRADE_REQUIRE_TREC_EVAL"):
            pytest.fail(f"RAGRADE_REQUIRE_TREC_EVAL is set but {problem} (.ci/run builds trec_eval 10)")
        pytest.skip(f"{problem}: see tests/trec_eval_bin.py to build trec_eval 10 and compare with it")
    return Path(value)


def binary_output(binary: Path, args: list[str], judgments: Path, run: Path) -> str:
    """What the binary prints for ``args`` on the two files (it must succeed)."""
    proc = subprocess.run([str(binary), *args, str(judgments), str(run)], capture_output=True, text=True)
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


def ours(args: list[str], judgments: Path, run: Path, value_format: str = "%6.4f") -> str:
    """What ``ragrade trec_eval`` prints for ``args`` on the two files (it must succeed)."""
    from ragrade.compat.trec_eval import run as trec_eval_run

    out = io.StringIO()
    assert trec_eval_run([*args, str(judgments), str(run)], out, value_format) == 0
    return out.getvalue()


def first_difference(got: str, want: str) -> tuple[str, str]:
    """The first pair of lines that differ, or the two line counts."""
    for g, w in zip(got.splitlines(), want.splitlines(), strict=False):
        if g != w:
            return g, w
    return f"{len(got.splitlines())} lines", f"{len(want.splitlines())} lines"


def output_values(text: str, skip: tuple[str, ...] = ()) -> dict[tuple[str, str], float]:
    """``{(measure, query): value}`` of trec_eval's output, without the lines that are not numbers (runid,
    relstring, quoted values) and the measures whose names start with one of ``skip``."""
    out = {}
    for line in text.splitlines():
        name, q, v = line.split("\t")
        name = name.strip()
        if name not in ("runid", "relstring") and not v.startswith("'") and not (skip and name.startswith(skip)):
            out[(name, q)] = float(v)
    return out
