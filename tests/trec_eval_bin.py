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
