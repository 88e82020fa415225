"""``ragrade.retrieve`` throughput and cache, side by side with LangChain's own ``batch``.

    python bench/bench_retrieve.py [--repeat 10] [--delay-ms 20] [--concurrency 1,4,8,16]

Retriever: langchain-community's ``BM25Retriever`` (rank-bm25 inside) over the shipped example corpus
(``examples/corpus.jsonl``, 1,499 passages), asked the 36 example topics ``--repeat`` times (each repeat
with a distinct suffix so that no answer is reused), ``k = 10``. Two flavours: the retriever as it is (CPU
bound, in-process), and the same behind ``--delay-ms`` of simulated network latency (``time.sleep`` in
``_get_relevant_documents``: the GIL is released, as in a real HTTP call to a vector store).

For each concurrency: wall time of ``ragrade.retrieve(..., concurrency=c)`` (per-query latency,
failures, texts and the Run included) and of ``retriever.batch(queries, config={"max_concurrency": c})``
(LangChain's threads, Documents only), queries per second and the ratio. Then the cache: a first
``retrieve`` writing ``runs.sqlite3``, and a re-run that must make 0 calls (counted by the retriever).
The machine is shared with other jobs: run it twice and read the ratios.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def build(delay: float, counter: list[int]) -> Any:
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    docs = [json.loads(line) for line in (EXAMPLES / "corpus.jsonl").read_text().splitlines() if line.strip()]

    class Counted(BM25Retriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            counter[0] += 1
            if delay:
                time.sleep(delay)
            return super()._get_relevant_documents(query, run_manager=run_manager)

    return Counted.from_documents([Document(page_content=d["text"], id=d["_id"]) for d in docs], k=10)


def topics(repeat: int) -> dict[str, str]:
    base = [line.split("\t", 1) for line in (EXAMPLES / "topics.tsv").read_text().splitlines() if line.strip()]
    return {f"{q}-{r}": f"{text} {r}" for r in range(repeat) for q, text in base}


def main() -> None:
    import ragrade

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--concurrency", default="1,4,8,16")
    args = ap.parse_args()
    qs = topics(args.repeat)
    levels = [int(x) for x in args.concurrency.split(",")]
    print(f"{len(qs)} queries, k=10, BM25Retriever (rank-bm25) over {EXAMPLES / 'corpus.jsonl'}")
    print("| retriever | concurrency | ragrade.retrieve (s) | queries/s | LangChain batch (s) | queries/s | batch / retrieve |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for delay in (0.0, args.delay_ms / 1e3):
        counter = [0]
        retriever = build(delay, counter)
        label = "in-process" if not delay else f"+{args.delay_ms:g} ms latency"
        retriever.batch(list(qs.values())[:8])  # warm-up
        for c in levels:
            t0 = time.perf_counter()
            run = ragrade.retrieve(retriever, qs, k=10, concurrency=c, progress=False)
            ours = time.perf_counter() - t0
            assert run.retrieval.failed == 0 and run.n_queries == len(qs)
            t0 = time.perf_counter()
            retriever.batch(list(qs.values()), config={"max_concurrency": c})
            theirs = time.perf_counter() - t0
            print(f"| {label} | {c} | {ours:.2f} | {len(qs) / ours:.0f} | {theirs:.2f} | {len(qs) / theirs:.0f} | "
                  f"{theirs / ours:.2f}x |")
    counter = [0]
    retriever = build(args.delay_ms / 1e3, counter)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "runs.sqlite3"
        t0 = time.perf_counter()
        first = ragrade.retrieve(retriever, qs, k=10, concurrency=8, cache=cache, progress=False)
        t_first = time.perf_counter() - t0
        calls_first = counter[0]
        t0 = time.perf_counter()
        second = ragrade.retrieve(retriever, qs, k=10, concurrency=8, cache=cache, progress=False)
        t_second = time.perf_counter() - t0
        assert second.to_dict() == first.to_dict()
        print(f"\ncache: first run {calls_first} calls in {t_first:.2f} s; re-run {counter[0] - calls_first} calls "
              f"({second.retrieval.cached} answers from the cache) in {t_second:.2f} s")


if __name__ == "__main__":
    main()
