"""Count the calls that climb from a lower layer of ragrade to a higher one while one evaluation runs (issue
21: "one evaluation of a run goes from the public function down through plan, engine and kernels without
calling back up"). The layers are those of tests/test_layers.py. Every Python call between two ragrade
modules is looked at (``sys.setprofile``); a call whose callee sits in a higher layer than its caller is a
climb (a callback handed down and called back up counts too).

Run: ``PYTHONPATH=src python scripts/layer_climbs.py``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _layers() -> Any:
    spec = importlib.util.spec_from_file_location("test_layers", ROOT / "tests" / "test_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: Frames that only pass a call on, counted as their caller: the boundary wrapper of every public function
#: (errors.boundary) and a registry kernel reference (metrics.registry.KernelRef: the engine calls the kernel
#: the registry names).
TRAMPOLINES = {("ragrade.errors", "public"), ("ragrade.metrics.registry", "__call__")}


def climbs(func: Any) -> Counter[tuple[str, str]]:
    layers = _layers()
    found: Counter[tuple[str, str]] = Counter()
    cache: dict[str, int | None] = {}

    def layer(name: str) -> int | None:
        if name not in cache:
            cache[name] = layers.layer_of(name) if name.startswith("ragrade.") else None
        return cache[name]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        caller_frame = frame.f_back
        while caller_frame is not None and (caller_frame.f_globals.get("__name__"), caller_frame.f_code.co_name) \
                in TRAMPOLINES:
            caller_frame = caller_frame.f_back
        caller = caller_frame.f_globals.get("__name__", "") if caller_frame is not None else ""
        a, b = layer(caller), layer(callee)
        if a is not None and b is not None and b > a:
            found[(caller, callee)] += 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.setprofile(profile)
        try:
            func()
        finally:
            sys.setprofile(None)
    return found


def main() -> None:
    import ragrade

    qrels, run = str(ROOT / "examples" / "qrels.tsv"), str(ROOT / "examples" / "run.tsv")
    dense = str(ROOT / "examples" / "run_dense.tsv")
    out = tempfile.mkdtemp()
    cases = {
        "evaluate (in memory)": lambda: ragrade.evaluate(qrels, run, ["ndcg@10", "P@5"]),
        "evaluate (max_memory)": lambda: ragrade.evaluate(qrels, run, ["ndcg@10", "rbp_cwl"], max_memory="64MiB"),
        "compare": lambda: ragrade.compare(qrels, {"a": run, "b": dense}, ["ndcg@10"], n_resamples=100),
        "report": lambda: ragrade.report.write_html(os.path.join(out, "r.html"), qrels, {"a": run, "b": dense},
                                                    ["ndcg@10"], n_resamples=100),
    }
    for name, case in cases.items():
        found = climbs(case)
        print(f"{name}: {sum(found.values())} climbing calls over {len(found)} caller -> callee pairs")
        for (a, b), n in found.most_common():
            print(f"  {a} -> {b} x{n}")


if __name__ == "__main__":
    main()
