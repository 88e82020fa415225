"""Reading and evaluating traces: 1M retrieval spans of 10 documents each, as OTLP JSON lines (the
OpenTelemetry collector's file exporter), against the script a user would write with ``json`` and pandas
(issue 37, docs/traces.md).

The file is generated here (not committed): traces of 1 to 4 OpenInference RETRIEVER spans under an AGENT
root span carrying ``example.id``; each call returns 10 documents with scores, sometimes one of the
question's 3 relevant documents, sometimes a document an earlier call returned; 200 spans per export
request line. The qrels file is TREC (``qid 0 doc 1``).

Both sides compute the same measures from the same files, each in a fresh process: recall@10 of every
call, and per trace the trajectory recall, the calls until the first relevant document and the
redundancy, and print their means (checked equal). ragrade: ``read_traces`` then ``evaluate`` on the
calls and on the trajectories. The json + pandas script: ``json.loads`` line by line, a list of
(trace, span, start, rank, doc) rows for the retrieval spans, a DataFrame, then merges and group-bys.

Peak memory is the highest resident set size above the process's level before the work (sampled every
2 ms, as bench_core.py); wall and CPU seconds. The machine is shared: figures are indicative.

Usage: python bench/bench_traces.py [--spans 1000000] [--dir /tmp] [--keep]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = 2_000_000
PER_LINE = 200
DOCS = 10


def _attr(key: str, value: str | float) -> str:
    if isinstance(value, str):
        return f'{{"key":"{key}","value":{{"stringValue":"{value}"}}}}'
    return f'{{"key":"{key}","value":{{"doubleValue":{value!r}}}}}'


def _span(trace: str, span: str, parent: str | None, name: str, start: int, end: int, attrs: list[str]) -> str:
    parent_part = f'"parentSpanId":"{parent}",' if parent else ""
    return (f'{{"traceId":"{trace}","spanId":"{span}",{parent_part}"name":"{name}","kind":1,'
            f'"startTimeUnixNano":"{start}","endTimeUnixNano":"{end}","attributes":[{",".join(attrs)}],'
            f'"status":{{}}}}')


def _request(spans: list[str]) -> str:
    return ('{"resourceSpans":[{"resource":{"attributes":[' + _attr("service.name", "rag") + ']},'
            '"scopeSpans":[{"scope":{"name":"openinference.instrumentation"},"spans":[' + ",".join(spans) + "]}]}]}\n")


def relevant(question: int) -> list[str]:
    return [f"d{(question * 7919 + j * 104729) % CORPUS}" for j in range(3)]


def generate(path: Path, qrels_path: Path, n_spans: int, seed: int = 0) -> int:
    """Write the traces and the qrels; the number of traces."""
    rng = random.Random(seed)
    t0 = 1_700_000_000_000_000_000
    made = trace = 0
    spans: list[str] = []
    with path.open("w") as out, qrels_path.open("w") as q:
        while made < n_spans:
            trace += 1
            question = trace
            tid, root = f"{trace:032x}", f"{trace * 8:016x}"
            gold = relevant(question)
            q.write("".join(f"q{question} 0 {d} 1\n" for d in gold))
            calls = min(rng.randint(1, 4), n_spans - made)
            spans.append(_span(tid, root, None, "agent", t0, t0 + 9_000_000,
                               [_attr("openinference.span.kind", "AGENT"), _attr("input.value", f"question {question}"),
                                _attr("example.id", f"q{question}")]))
            previous: list[str] = []
            for c in range(calls):
                docs = [f"d{rng.randrange(CORPUS)}" for _ in range(DOCS)]
                if rng.random() < 0.4:
                    docs[rng.randrange(DOCS)] = rng.choice(gold)
                if previous and rng.random() < 0.3:
                    docs[rng.randrange(DOCS)] = rng.choice(previous)
                docs = list(dict.fromkeys(docs))
                previous = docs
                attrs = [_attr("openinference.span.kind", "RETRIEVER"), _attr("input.value", f"query {question} {c}")]
                for i, d in enumerate(docs):
                    attrs += [_attr(f"retrieval.documents.{i}.document.id", d),
                              _attr(f"retrieval.documents.{i}.document.score", round(1.0 - i * 0.05, 3))]
                start = t0 + (c + 1) * 2_000_000
                spans.append(_span(tid, f"{trace * 8 + c + 1:016x}", root, "retrieve", start,
                                   start + rng.randrange(200_000, 1_500_000), attrs))
                made += 1
            if len(spans) >= PER_LINE:
                out.write(_request(spans))
                spans = []
        if spans:
            out.write(_request(spans))
    return trace


def ragrade_side(traces: str, qrels: str) -> dict[str, float]:
    import ragrade

    warnings.simplefilter("ignore")
    tr = ragrade.read_traces(traces, key="example.id")
    calls = ragrade.evaluate(qrels, tr.calls, ["recall@10"])
    traj = ragrade.evaluate(qrels, tr.trajectories, ["trajectory_recall", "calls_to_first_relevant", "redundancy"])
    return {"recall@10": calls["recall@10"], **{k: float(v) for k, v in traj.means.items()}}


def pandas_side(traces: str, qrels: str) -> dict[str, float]:
    """What a user would write: json line by line, rows in a list, a DataFrame, merges and group-bys."""
    import pandas as pd

    rows, keys = [], {}
    with open(traces) as f:
        for line in f:
            request = json.loads(line)
            for rs in request["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for span in ss["spans"]:
                        attrs = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                        if "example.id" in attrs:
                            keys[span["traceId"]] = attrs["example.id"]
                        if attrs.get("openinference.span.kind") != "RETRIEVER":
                            continue
                        i = 0
                        while f"retrieval.documents.{i}.document.id" in attrs:
                            rows.append((span["traceId"], span["spanId"], int(span["startTimeUnixNano"]), i + 1,
                                         attrs[f"retrieval.documents.{i}.document.id"]))
                            i += 1
    df = pd.DataFrame(rows, columns=["trace", "span", "start", "rank", "doc"])
    del rows
    df["qid"] = df["trace"].map(keys)
    df["call"] = df.groupby("trace")["start"].rank(method="dense").astype(int)
    truth = pd.read_csv(qrels, sep=" ", names=["qid", "iter", "doc", "rel"])
    truth = truth[truth["rel"] > 0]
    n_rel = truth.groupby("qid").size().rename("R")
    df = df.merge(truth[["qid", "doc"]].assign(hit=1), on=["qid", "doc"], how="left")
    df["hit"] = df["hit"].fillna(0)
    top = df[df["rank"] <= 10]
    per_call = top.groupby(["trace", "span", "qid"])["hit"].sum().reset_index().join(n_rel, on="qid")
    found = df[df["hit"] > 0].drop_duplicates(["trace", "doc"]).groupby("trace").size()
    traces_ = df.groupby("trace")["qid"].first().to_frame().join(n_rel, on="qid")
    traj_recall = (found.reindex(traces_.index).fillna(0) / traces_["R"]).mean()
    first_call = df[df["hit"] > 0].groupby("trace")["call"].min()
    first_seen = df.groupby(["trace", "doc"])["call"].transform("min")
    redundancy = (df["call"] > first_seen).groupby(df["trace"]).mean().mean()
    return {"recall@10": float((per_call["hit"] / per_call["R"]).mean()), "trajectory_recall": float(traj_recall),
            "calls_to_first_relevant": float(first_call.mean()), "redundancy": float(redundancy)}


def child(side: str, traces: str, qrels: str) -> None:
    sys.path.insert(0, str(HERE))
    from bench_core import PeakMemory

    with PeakMemory() as peak:
        t0, c0 = time.perf_counter(), time.process_time()
        means = (ragrade_side if side == "ragrade" else pandas_side)(traces, qrels)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak.peak, "means": means}))


def measure(side: str, traces: Path, qrels: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", side, "--traces", str(traces), "--qrels", str(qrels)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spans", type=int, default=1_000_000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--child", choices=["ragrade", "pandas"], help=argparse.SUPPRESS)
    ap.add_argument("--traces", help=argparse.SUPPRESS)
    ap.add_argument("--qrels", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.traces, args.qrels)
        return 0
    work = Path(tempfile.mkdtemp(prefix="ragrade-traces-", dir=args.dir))
    try:
        traces, qrels = work / "traces.jsonl", work / "qrels.txt"
        t = time.perf_counter()
        n_traces = generate(traces, qrels, args.spans)
        print(f"{args.spans:,} retrieval spans in {n_traces:,} traces, {traces.stat().st_size / 2**30:.2f} GiB "
              f"of OTLP JSON ({time.perf_counter() - t:.0f} s to write)")
        mine, theirs = measure("ragrade", traces, qrels), measure("pandas", traces, qrels)
        for name in mine["means"]:
            if abs(mine["means"][name] - theirs["means"][name]) > 1e-9:
                raise SystemExit(f"the two sides disagree on {name}: {mine['means'][name]} vs {theirs['means'][name]}")
        print("| side | wall (s) | CPU (s) | peak memory (MiB) |\n|---|---:|---:|---:|")
        for name, r in (("ragrade (read_traces + evaluate)", mine), ("json + pandas script", theirs)):
            print(f"| {name} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['peak'] / 2**20:,.0f} |")
        print(f"ragrade: {theirs['wall'] / mine['wall']:.2f}x faster (wall), {theirs['cpu'] / mine['cpu']:.2f}x less "
              f"CPU, {theirs['peak'] / max(mine['peak'], 1):.2f}x less peak memory; means {mine['means']}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
