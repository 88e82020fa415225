"""Random runs for the fusion tests: ties, documents in only some runs, one-document queries, lists of
equal scores, and a helper comparing a fused ragrade run with a fused ranx run query by query."""

from __future__ import annotations

import numpy as np


def random_runs(seed: int, n_runs: int = 3, n_queries: int = 6, max_len: int = 40) -> list[dict]:
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run: dict[str, dict[str, float]] = {}
        for q in range(n_queries):
            kind = q % 4
            n = 1 if kind == 3 else int(rng.integers(2, max_len))
            docs = rng.choice(3 * max_len // 2, n, replace=False)
            if kind == 0:
                scores = rng.integers(0, 5, n).astype(float)  # many ties
            elif kind == 1:
                scores = np.full(n, 0.5)  # one list of equal scores
            else:
                scores = np.round(rng.normal(size=n), 3)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs


def random_qrels(seed: int, n_queries: int = 6, max_len: int = 40) -> dict:
    rng = np.random.default_rng(seed + 1000)
    return {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in rng.choice(3 * max_len // 2, 15, replace=False)}
            for q in range(n_queries)}


def compare(ranx_run, ours) -> tuple[int, float, int]:
    """(queries whose ranking differs, largest value difference, values compared)."""
    ref = ranx_run.to_dict()
    bad, worst, n = 0, 0.0, 0
    for q, docs in ref.items():
        got = ours.ranked(q, ties="input")
        if [d for d in docs] != [d for d, _ in got]:
            bad += 1
        mine = dict(got)
        for d, v in docs.items():
            worst = max(worst, abs(v - mine.get(d, float("inf"))))
            n += 1
    return bad, worst, n


def ranx_params(method: str, qrels, norm_runs) -> dict:
    """Parameters for ranx.fuse: trained on ranx's own normalised runs where the method is trained."""
    from ranx import fusion as rf

    w = [0.2, 0.5, 0.3, 0.4][: len(norm_runs)]
    return {
        "gmnz": lambda: {"gamma": 0.3},
        "logn_isr": lambda: {"sigma": 0.2},
        "rbc": lambda: {"phi": 0.8},
        "rrf": lambda: {"k": 10},
        "posfuse": lambda: {"probs": rf.posfuse_train(qrels, norm_runs)},
        "probfuse": lambda: {"probs": rf.probfuse_train(qrels, norm_runs, 7)},
        "segfuse": lambda: {"probs": rf.segfuse_train(qrels, norm_runs)},
        "slidefuse": lambda: {"probs": rf.slidefuse_train(qrels, norm_runs), "w": 3},
        "mapfuse": lambda: {"map_scores": rf.mapfuse_train(qrels, norm_runs)},
        "bayesfuse": lambda: {"log_odds": rf.bayesfuse_train(qrels, norm_runs)},
        "w_bordafuse": lambda: {"weights": w},
        "w_condorcet": lambda: {"weights": w},
        "mixed": lambda: {"weights": w},
        "wmnz": lambda: {"weights": w},
        "wsum": lambda: {"weights": w},
    }.get(method, dict)()


def ranx_normalised(runs, norm):
    from ranx.normalization import norm_switch

    if norm is None:
        return list(runs)
    if norm == "borda":
        return norm_switch(norm)(list(runs))
    return [norm_switch(norm)(r) for r in runs]


def need(module: str, why: str):
    """Import a reference library: skipped locally when it is missing, a failure in CI (``CI`` set),
    where the test extra installs it."""
    import importlib
    import os

    import pytest

    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=why)
