"""The trec_eval drop-in's rank order (:func:`ragrade.compat.trec_eval_inputs.in_rank_order`): its fast path over
the scanner's chunks (C: one sort per segment, ids read where the scanner left them, gathered by each worker)
gives the same ranking as the path without the C helpers, whatever the chunks' cuts and the workers, and leaves a
run with a document listed twice as it is (the engine names the duplicate)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ragrade.compat import _native
from ragrade.compat.trec_eval_inputs import in_rank_order
from ragrade.data import Run

needs_accel = pytest.mark.skipif(_native.speedups is None, reason="the drop-ins' C helpers are not built")


def _run(ids: list[str], scores: list[float], counts: list[int], cuts: list[int]) -> Run:
    chunks = [pa.array(ids[a:z], type=pa.large_string()) for a, z in zip([0, *cuts], [*cuts, len(ids)], strict=True)]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Run(np.array([f"q{i}" for i in range(len(counts))], dtype=object), offsets, None, None,
               np.array(scores, dtype=np.float64), raw_docs=pa.chunked_array(chunks, type=pa.large_string()))


def _docs(run: Run) -> list[str]:
    raw = run.raw_docs
    return (raw.to_pylist() if hasattr(raw, "to_pylist") else list(raw))


@needs_accel
@pytest.mark.parametrize("cuts", [[], [3], [1, 4], [2, 5, 6]])
def test_fast_rank_order_equals_the_fallback_on_any_chunks(cuts, monkeypatch):
    ids = ["b", "a", "é", "a1", "c", "z", "y"]
    scores = [1.0, 1.0, 2.0, 1.0, 0.5, 0.5, 0.5]
    fast = in_rank_order(_run(ids, scores, [4, 3], cuts))
    assert not fast.duplicate_mask().any()
    monkeypatch.setattr(_native, "speedups", None)
    slow = in_rank_order(_run(ids, scores, [4, 3], cuts))
    assert _docs(fast) == _docs(slow) == ["é", "b", "a1", "a", "z", "y", "c"]


@needs_accel
def test_a_document_listed_twice_leaves_the_run_as_it_is():
    run = _run(["a", "b", "a", "c"], [1.0, 2.0, 3.0, 1.0], [3, 1], [1])
    assert in_rank_order(run) is run


@needs_accel
def test_long_runs_of_equal_scores_are_ordered_by_id(monkeypatch):
    rng = np.random.default_rng(3)
    ids = [f"d{int(i)}" for i in rng.permutation(700)] + ["x", "é"]
    scores = [0.0] * 500 + [-0.0] * 100 + list(rng.integers(0, 3, 102).astype(float))
    fast = in_rank_order(_run(ids, scores, [650, 52], [333]))
    monkeypatch.setattr(_native, "speedups", None)
    slow = in_rank_order(_run(ids, scores, [650, 52], [333]))
    assert _docs(fast) == _docs(slow)



@needs_accel
@pytest.mark.parametrize("workers", [1, 2, 3, 5])
def test_the_ids_read_by_the_tokenizer_are_ordered_and_gathered_by_each_worker(tmp_path, monkeypatch, workers):
    """Ids the C tokenizer read (NumPy buffers, no pyarrow) are sorted and gathered by the worker that owns their
    queries: one chunk per worker with rows, the same ranking as the path without the C helpers."""
    from ragrade.compat import trec_eval_inputs
    from ragrade.io import read_run

    rng = np.random.default_rng(workers)
    lines = [f"q{q} Q0 d{int(d)} 1 {float(s)} r\n" for q in range(7)
             for d, s in zip(rng.permutation(40)[: 3 + 4 * q], rng.integers(0, 4, 3 + 4 * q), strict=False)]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    original = trec_eval_inputs._by_workers
    monkeypatch.setattr(trec_eval_inputs, "_by_workers", lambda part, offsets, n: original(part, offsets, n, workers))
    run = read_run(path, format="trec")
    assert run.raw_utf8 is not None
    fast = in_rank_order(run)
    assert fast.raw_utf8 is not None
    assert (len(fast.raw_utf8.chunks) == 1) if workers == 1 else (2 <= len(fast.raw_utf8.chunks) <= workers)
    monkeypatch.setattr(_native, "speedups", None)
    slow = in_rank_order(read_run(path, format="trec"))
    assert fast.raw_utf8.to_pylist() == _docs(slow)
    assert list(fast.offsets) == list(slow.offsets)
