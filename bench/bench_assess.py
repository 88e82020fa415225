"""Corpus streaming for ``ragrade assess``: peak memory and time of reading only the pooled passages out of
a 1M-passage corpus, against loading the corpus whole.

    python bench/bench_assess.py [--passages 1000000] [--pooled 20000] [--formats jsonl,tsv,parquet]

Writes the corpus (BEIR-like JSONL ``{"_id", "title", "text"}`` lines of about 400 bytes, the same rows as
TSV and Parquet) into a temporary folder that is removed at the end, picks ``--pooled`` ids at random (a
pool of 2,000 queries x depth 10), and measures in this process, one after another:

* ragrade: ``read_passages(path, pooled_ids)`` (streamed in 8 MiB blocks, only pooled passages kept);
* whole load, the usual way: every line through ``json.loads`` into a dict id -> (title, text)
  (JSONL), ``pandas.read_csv`` (TSV), ``pyarrow.parquet.read_table`` (Parquet), then the pooled ids
  looked up.

Each reader runs in a fresh Python process (this script with ``--measure``), after its imports and a
warm-up read of a 1,000-passage file of the same format, so that no reader inherits memory another one
freed and one-time library set-up is not counted; peak memory is the highest RSS above the level just before the
read, sampled every 2 ms. Figures vary on a shared machine; run it twice.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu",
         "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "river", "mountain",
         "forest", "city", "harbour", "bridge", "market", "library", "museum", "garden"]


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class PeakMemory:
    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()

    def __enter__(self) -> PeakMemory:
        gc.collect()
        self.start = rss()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss() - self.start)
            time.sleep(self.interval)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, rss() - self.start)


def write_corpus(folder: Path, n: int, formats: list[str], seed: int = 0) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    vocab = np.array(WORDS)
    paths: dict[str, Path] = {}
    chunk = 100_000
    jsonl = folder / "corpus.jsonl"
    tsv = folder / "corpus.tsv"
    writers = []
    pq_writer = None
    with open(jsonl, "w", encoding="utf-8") as fj, open(tsv, "w", encoding="utf-8") as ft:
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            words = vocab[rng.integers(0, len(vocab), size=(m, 60))]
            texts = [" ".join(row) for row in words]
            ids = [f"doc{start + i:07d}" for i in range(m)]
            titles = [f"Title {start + i}" for i in range(m)]
            fj.write("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in zip(ids, titles, texts, strict=True)))
            ft.write("".join(f"{i}\t{x}\t{t}\n" for i, t, x in zip(ids, titles, texts, strict=True)))
            if "parquet" in formats:
                import pyarrow as pa
                import pyarrow.parquet as pq

                table = pa.table({"_id": ids, "title": titles, "text": texts})
                if pq_writer is None:
                    pq_writer = pq.ParquetWriter(folder / "corpus.parquet", table.schema)
                pq_writer.write_table(table)
    if pq_writer is not None:
        pq_writer.close()
        paths["parquet"] = folder / "corpus.parquet"
    del writers
    if "jsonl" in formats:
        paths["jsonl"] = jsonl
    if "tsv" in formats:
        paths["tsv"] = tsv
    return paths


def whole_jsonl(path: Path, wanted: set[str]) -> int:
    corpus = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            corpus[row["_id"]] = (row["title"], row["text"])
    return sum(1 for i in wanted if i in corpus)


def whole_tsv(path: Path, wanted: set[str]) -> int:
    import csv

    import pandas as pd

    df = pd.read_csv(path, sep="\t", header=None, names=["id", "text", "title"], dtype=str, quoting=csv.QUOTE_NONE)
    return int(df["id"].isin(wanted).sum())


def whole_parquet(path: Path, wanted: set[str]) -> int:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return int(pc.sum(pc.is_in(t.column("_id"), value_set=__import__("pyarrow").array(sorted(wanted)))).as_py())


def streamed(path: Path, wanted: set[str]) -> int:
    from ragrade.assessment import read_passages

    return len(read_passages(path, wanted))


def measure(fn: Any, *args: Any) -> tuple[float, int, Any]:
    gc.collect()
    with PeakMemory() as pm:
        t0 = time.perf_counter()
        out = fn(*args)
        wall = time.perf_counter() - t0
    return wall, pm.peak, out


def _measure_one(reader: str, fmt: str, path: str, ids_path: str, tiny_path: str) -> int:
    wanted = set(Path(ids_path).read_text().split())
    # imports first: a module loaded inside the measurement would count as the reader's memory
    import pandas  # noqa: F401
    import pyarrow.compute
    import pyarrow.csv
    import pyarrow.json
    import pyarrow.parquet  # noqa: F401

    import ragrade.io.texts  # noqa: F401

    fn = streamed if reader == "streamed" else {"jsonl": whole_jsonl, "tsv": whole_tsv, "parquet": whole_parquet}[fmt]
    fn(Path(tiny_path), {"doc0000001"})  # warm-up on a 1,000-passage file: one-time library set-up is not the reader's
    wall, peak, found = measure(fn, Path(path), wanted)
    print(json.dumps({"wall": wall, "peak": peak, "found": found}))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--measure"]:
        return _measure_one(*argv[1:6])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--passages", type=int, default=1_000_000)
    ap.add_argument("--pooled", type=int, default=20_000)
    ap.add_argument("--formats", default="jsonl,tsv,parquet")
    args = ap.parse_args(argv)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    tmp = Path(tempfile.mkdtemp(prefix="ragrade-bench-assess-"))
    try:
        t0 = time.perf_counter()
        paths = write_corpus(tmp, args.passages, formats)
        sizes = {f: p.stat().st_size for f, p in paths.items()}
        print(f"corpus: {args.passages:,} passages written in {time.perf_counter() - t0:.1f} s; "
              + ", ".join(f"{f} {s / 2**20:.0f} MiB" for f, s in sizes.items()), flush=True)
        rng = np.random.default_rng(1)
        wanted = {f"doc{i:07d}" for i in rng.choice(args.passages, size=min(args.pooled, args.passages), replace=False)}
        print(f"pool: {len(wanted):,} distinct pooled ids\n")
        tiny = tmp / "tiny"
        tiny.mkdir()
        tiny_paths = write_corpus(tiny, 1000, formats)
        ids_path = tmp / "pooled.txt"
        ids_path.write_text("\n".join(sorted(wanted)))
        labels = {"jsonl": "json.loads per line into a dict", "tsv": "pandas.read_csv",
                  "parquet": "pyarrow.parquet.read_table"}
        print("| format | reader | wall (s) | peak memory (MiB) | found | whole / streamed memory |")
        print("|---|---|---:|---:|---:|---:|")
        for fmt in formats:
            got = {}
            for reader in ("streamed", "whole"):
                out = subprocess.run([sys.executable, __file__, "--measure", reader, fmt, str(paths[fmt]), str(ids_path),
                                      str(tiny_paths[fmt])],
                                     capture_output=True, text=True, check=True)
                got[reader] = json.loads(out.stdout.strip().splitlines()[-1])
            sw, sm, sf = got["streamed"]["wall"], got["streamed"]["peak"], got["streamed"]["found"]
            ww, wm, wf = got["whole"]["wall"], got["whole"]["peak"], got["whole"]["found"]
            assert sf == wf == len(wanted), (sf, wf)
            print(f"| {fmt} | ragrade read_passages (streamed) | {sw:.2f} | {sm / 2**20:.0f} | {sf:,} | - |")
            print(f"| {fmt} | whole load: {labels[fmt]} | {ww:.2f} | {wm / 2**20:.0f} | {wf:,} | {wm / max(sm, 1):.1f}x |",
                  flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n(temporary folder removed; machine: {os.cpu_count()} cores, Python {sys.version.split()[0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
