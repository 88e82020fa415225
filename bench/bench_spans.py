"""Span measures and chunk location: ragrade against Chroma's chunking_evaluation, side by side, and at scale.

Sections (``--only``):

  chroma   Chroma's own pure-Python functions (``_scores_from_dataset_and_retrievals`` for IoU, recall and
           precision at k, ``_full_precision_score`` for precision_omega; taken from its
           ``base_evaluation.py`` with ``ast``, as the tests do) against ragrade's chroma profile on the same
           inputs: Chroma's fixture (472 questions, five corpora) repeated ``--repeat`` times, a fixed
           400/100 chunking, 10 random chunks per question. Values are compared (max difference printed),
           then timed: ragrade end to end (``ragrade.spans.score`` from span truth, run and chunk map) and
           its kernels alone (``ragrade.kernels.spans`` on the flat arrays).
  scale    1M questions x 10 retrieved chunks x 2 gold spans (synthetic, seeded): span recall, precision
           and IoU at 10 and 5, precision_omega and retrieve=-1 over a 1M-chunk chunking, the kernels alone
           and ``score`` end to end.
  locate   chunk location over a 100 MB corpus (``--mb``): every chunk text of a fixed 1000/100 chunking
           located in its document in order (what a foreign chunker's texts go through), then 2,000 texts
           with no document hint (the anchor index over the whole corpus), then 500 texts whose whitespace
           was changed.

The reference needs ``../shared/reference/chunking_evaluation-d451fc4.tar.gz`` (or CHUNKING_EVALUATION_TARBALL).
Times are CPU times of this process (the best of a few calls), so that other jobs on a shared machine do not
count; the wall times of the same calls are printed beside them.

Usage:  python bench/bench_spans.py [--only chroma scale locate] [--repeat 20] [--queries 1000000] [--mb 100]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import tarfile
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NAME = "chunking_evaluation-d451fc4"


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The best CPU time of ``repeat`` calls (process time: on a shared machine the wall clock also counts the
    time other jobs held the cores) and the last result; :data:`WALL` keeps the best wall times."""
    times, walls, out = [], [], None
    for _ in range(repeat):
        t, w = time.process_time(), time.perf_counter()
        out = fn()
        times.append(time.process_time() - t)
        walls.append(time.perf_counter() - w)
    WALL.append(min(walls))
    return min(times), out


WALL: list[float] = []


# -- Chroma's functions --------------------------------------------------------------------------------------

def chroma_framework() -> Path:
    given = os.environ.get("CHUNKING_EVALUATION_TARBALL")
    tar = Path(given) if given else next((p for p in (ROOT.parent / "shared" / "reference" / f"{NAME}.tar.gz",
                                                      ROOT.parent.parent / "shared" / "reference" / f"{NAME}.tar.gz")
                                          if p.is_file()), None)
    if tar is None:
        raise SystemExit(f"{NAME}.tar.gz not found (../shared/reference or CHUNKING_EVALUATION_TARBALL)")
    target = Path(tempfile.mkdtemp(prefix="bench-spans-"))
    with tarfile.open(tar) as t:
        t.extractall(target, filter="data")
    return target / NAME / "chunking_evaluation" / "evaluation_framework"


def chroma_functions(framework: Path) -> dict[str, Any]:
    tree = ast.parse((framework / "base_evaluation.py").read_text(encoding="utf-8"))
    keep: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "BaseEvaluation":
            keep += [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name in
                     ("_full_precision_score", "_scores_from_dataset_and_retrievals")]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "base_evaluation.py", "exec"), namespace)
    return namespace


def bench_chroma(repeat: int) -> None:
    import pandas as pd

    import ragrade
    from ragrade.data import Run
    from ragrade.metrics import parse_metric
    from ragrade.spans import chunk_corpus, fixed, read_corpus
    from ragrade.spans.measure import DocSpace, join_run, score, span_inputs

    fw = chroma_framework()
    fns = chroma_functions(fw)
    data = fw / "general_evaluation_data"
    base = pd.read_csv(data / "questions_df.csv")
    base["references"] = base["references"].apply(json.loads)
    df = pd.concat([base] * repeat, ignore_index=True)
    me = types.SimpleNamespace(questions_df=df)
    corpus = read_corpus(data / "corpora")
    chunks = chunk_corpus(corpus, fixed(400, 100))
    metas = [{"start_index": int(s), "end_index": int(e), "corpus_id": d}
             for d, s, e in zip(chunks.doc.tolist(), chunks.start.tolist(), chunks.end.tolist(), strict=True)]
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(chunks), size=(len(df), 10))
    lists = [[metas[j] for j in row] for row in picks.tolist()]
    ids = chunks.chunk_id
    rows = [{"query": str(i), "doc": r["corpus_id"], "start": ref["start_index"], "end": ref["end_index"]}
            for i, r in df.iterrows() for ref in r["references"]]
    truth = ragrade.read_spans(rows)
    run = Run.from_lists([ids[row].tolist() for row in picks], query_ids=[str(i) for i in range(len(df))])
    labels = [(m, parse_metric(m)) for m in ("span_iou@10", "span_recall@10", "span_precision@10")]
    n = len(df)
    print(f"chroma: {n} questions ({repeat} x the fixture), {len(chunks)} chunks (fixed 400/100), 10 retrieved each")
    t_ref, ref = best_of(lambda: fns["_scores_from_dataset_and_retrievals"](me, lists, [10] * n), 1)
    t_ours, ours = best_of(lambda: score(truth, run, labels, chunks, corpus, semantics="chroma"), 3)
    diff = max(float(np.max(np.abs(ours.per_query[lab] - np.asarray(v)))) for (lab, _), v in zip(labels, ref, strict=True))
    space = DocSpace.of(truth, chunks, corpus)
    joined = join_run(run, chunks, truth.queries)

    def kernels() -> None:
        inp = span_inputs(truth, joined, chunks, space, "chroma")
        for _, m in labels:
            m.family.kernel(m, inp)  # type: ignore[misc]

    t_kern, _ = best_of(kernels, 3)
    print(f"  IoU, recall, precision @10: Chroma {t_ref:.3f} s, ragrade end to end {t_ours:.4f} s "
          f"({t_ref / t_ours:.0f}x), kernels {t_kern:.4f} s ({t_ref / t_kern:.0f}x); max difference {diff:.1e} "
          f"(wall: {WALL[-3]:.3f}, {WALL[-2]:.4f}, {WALL[-1]:.4f} s)")
    small = types.SimpleNamespace(questions_df=base)
    one = ragrade.read_spans([{"query": str(i), "doc": r["corpus_id"], "start": ref["start_index"],
                               "end": ref["end_index"]} for i, r in base.iterrows() for ref in r["references"]])
    omega = [("span_precision_omega", parse_metric("span_precision_omega"))]
    run1 = Run.from_lists([[ids[0]]] * len(base), query_ids=[str(i) for i in range(len(base))])
    t_ref, (om, _) = best_of(lambda: fns["_full_precision_score"](small, metas), 1)
    t_ours, got = best_of(lambda: score(one, run1, omega, chunks, corpus, semantics="chroma"), 3)
    diff = float(np.max(np.abs(got.per_query["span_precision_omega"] - np.asarray(om))))
    print(f"  precision_omega ({len(base)} questions x {len(chunks)} chunks): Chroma {t_ref:.3f} s, ragrade "
          f"{t_ours:.4f} s ({t_ref / t_ours:.0f}x); max difference {diff:.1e} (wall: {WALL[-2]:.3f}, {WALL[-1]:.4f} s)")
    # a whole evaluation of one chunking on the fixture: both of Chroma's functions, ragrade's four measures
    lists1 = lists[:len(base)]
    run_fix = Run.from_lists([ids[row].tolist() for row in picks[:len(base)]], query_ids=[str(i) for i in range(len(base))])
    every = [*labels, *omega]
    t_scores, _ = best_of(lambda: fns["_scores_from_dataset_and_retrievals"](small, lists1, [10] * len(base)), 1)
    t_all, _ = best_of(lambda: score(one, run_fix, every, chunks, corpus, semantics="chroma"), 3)
    print(f"  a whole evaluation of the chunking on the fixture (precision_omega, IoU, recall, precision @10): Chroma "
          f"{t_ref + t_scores:.3f} s, ragrade {t_all:.4f} s ({(t_ref + t_scores) / t_all:.0f}x)")


# -- scale ----------------------------------------------------------------------------------------------------

def synthetic(nq: int, k: int = 10, spans: int = 2, ndocs: int = 20_000, doc_len: int = 10_000, chunk: int = 200,
              seed: int = 0) -> dict[str, np.ndarray]:
    """Documents of ``doc_len`` characters chunked every ``chunk``; each question has ``spans`` gold spans in
    one document and ``k`` retrieved chunks, half of them from its document."""
    rng = np.random.default_rng(seed)
    per_doc = doc_len // chunk
    gdoc = rng.integers(0, ndocs, nq)
    gs = rng.integers(0, doc_len - 400, (nq, spans))
    ge = gs + rng.integers(20, 300, (nq, spans))
    own = rng.random((nq, k)) < 0.5
    cdoc = np.where(own, gdoc[:, None], rng.integers(0, ndocs, (nq, k)))
    cpos = rng.integers(0, per_doc, (nq, k))
    return {"gdoc": gdoc, "gs": gs, "ge": ge, "cdoc": cdoc, "cpos": cpos, "per_doc": np.array(per_doc),
            "ndocs": np.array(ndocs), "doc_len": np.array(doc_len), "chunk": np.array(chunk)}


def bench_scale(nq: int) -> None:
    from ragrade.kernels import spans as K
    from ragrade.metrics import parse_metric

    d = synthetic(nq)
    k = d["cdoc"].shape[1]
    w = int(d["doc_len"]) + 1
    chunk, per_doc, ndocs = int(d["chunk"]), int(d["per_doc"]), int(d["ndocs"])
    spans = d["gs"].shape[1]
    gq = np.repeat(np.arange(nq), spans)
    base_g = np.repeat(d["gdoc"] * w, spans)
    rq = np.repeat(np.arange(nq), k)
    rr = np.tile(np.arange(k), nq)
    rs = (d["cdoc"] * w + d["cpos"] * chunk).ravel()
    cs = (np.arange(ndocs)[:, None] * w + np.arange(per_doc)[None, :] * chunk).ravel()

    def inputs() -> K.SpanInputs:
        return K.SpanInputs(nq, gq, base_g + d["gs"].ravel(), base_g + d["ge"].ravel(), rq, rr, rs, rs + chunk,
                            cs, cs + chunk)

    print(f"scale: {nq} questions x {k} retrieved chunks x {spans} gold spans; a chunking of {len(cs)} chunks")
    for names in (["span_recall@10", "span_precision@10", "span_iou@10"],
                  ["span_recall@5", "span_precision@5", "span_iou@5"],
                  ["span_precision_omega"], ["span_iou(retrieve=-1)"]):
        metrics = [parse_metric(m) for m in names]

        def run(ms: list[Any] = metrics) -> None:
            inp = inputs()
            for m in ms:
                m.family.kernel(m, inp)

        t, _ = best_of(run, 2)
        print(f"  {', '.join(names)}: {t:.2f} s (wall {WALL[-1]:.2f} s)")
    from ragrade.spans.measure import SpanTruth  # noqa: F401  (the objects' path below)

    bench_scale_objects(d, nq)


def bench_scale_objects(d: dict[str, np.ndarray], nq: int) -> None:
    from ragrade.data import Run
    from ragrade.metrics import parse_metric
    from ragrade.spans import ChunkMap, SpanTruth
    from ragrade.spans.measure import score

    k, spans = d["cdoc"].shape[1], d["gs"].shape[1]
    chunk, per_doc, ndocs = int(d["chunk"]), int(d["per_doc"]), int(d["ndocs"])
    t0 = time.perf_counter()
    qids = np.array([f"q{i}" for i in range(nq)], dtype=object)
    dnames = np.array([f"d{i}" for i in range(ndocs)], dtype=object)
    cids = np.array([f"d{i}#{j}" for i in range(ndocs) for j in range(per_doc)], dtype=object)
    truth = SpanTruth.from_columns(np.repeat(qids, spans), np.repeat(dnames[d["gdoc"]], spans), d["gs"].ravel(),
                                   d["ge"].ravel())
    chunks = ChunkMap.from_columns(cids, np.repeat(dnames, per_doc), np.tile(np.arange(per_doc) * chunk, ndocs),
                                   np.tile(np.arange(per_doc) * chunk + chunk, ndocs))
    run = Run.from_columns(np.repeat(qids, k), cids[(d["cdoc"] * per_doc + d["cpos"]).ravel()])
    t_build = time.perf_counter() - t0
    labels = [(m, parse_metric(m)) for m in ("span_recall@10", "span_precision@10", "span_iou@10")]
    t, _ = best_of(lambda: score(truth, run, labels, chunks), 1)
    print(f"  end to end (span truth, run and chunk map objects: built in {t_build:.1f} s): recall, precision, "
          f"IoU @10 in {t:.2f} s (wall {WALL[-1]:.2f} s)")


# -- location ------------------------------------------------------------------------------------------------

def bench_locate(mb: int) -> None:
    from ragrade.spans import chunk_corpus, chunk_texts, fixed, locate_chunks

    rng = np.random.default_rng(1)
    vocab = np.array(["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), int(rng.integers(2, 10))))
                      for _ in range(20_000)], dtype=object)
    doc_len = 5_000
    ndocs = mb * 1_000_000 // doc_len
    corpus = {}
    for i in range(ndocs):
        words = vocab[rng.integers(0, len(vocab), doc_len // 5)]
        corpus[f"d{i}"] = " ".join(words.tolist())[:doc_len]
    total = sum(len(t) for t in corpus.values())
    chunks = chunk_corpus(corpus, fixed(1000, 100))
    texts = chunk_texts(corpus, chunks)
    print(f"locate: {ndocs} documents, {total / 1e6:.0f} M characters, {len(texts)} chunk texts")
    t0 = time.perf_counter()
    got = locate_chunks(corpus, texts, docs=chunks.doc.tolist(), ids=chunks.chunk_id.tolist())
    t = time.perf_counter() - t0
    same = bool((got.start == chunks.start).all())
    print(f"  in order with document hints: {t:.1f} s ({total / 1e6 / t:.0f} M characters/s), all found where cut: "
          f"{same}, {len(got.report.unlocated)} not found")
    pick = rng.choice(len(texts), 2_000, replace=False)
    t0 = time.perf_counter()
    free = locate_chunks(corpus, [texts[i] for i in pick])
    t = time.perf_counter() - t0
    ok = bool((free.start == chunks.start[pick]).all()) and len(free) == len(pick)
    print(f"  2000 texts, no document hint: {t:.1f} s (the whole corpus indexed once), all found where cut: {ok}")
    some = rng.choice(len(texts), 500, replace=False)
    mangled = [texts[i].replace(" ", "  ", 3) for i in some]
    t0 = time.perf_counter()
    ws = locate_chunks(corpus, mangled, docs=chunks.doc[some].tolist(), fuzzy=False)
    t = time.perf_counter() - t0
    print(f"  500 texts with changed whitespace, hinted: {t:.1f} s, {ws.report.methods}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=["chroma", "scale", "locate"], choices=["chroma", "scale", "locate"])
    ap.add_argument("--repeat", type=int, default=20, help="copies of Chroma's fixture (chroma section)")
    ap.add_argument("--queries", type=int, default=1_000_000, help="questions of the scale section")
    ap.add_argument("--mb", type=int, default=100, help="corpus size of the locate section (millions of characters)")
    args = ap.parse_args()
    if "chroma" in args.only:
        bench_chroma(args.repeat)
    if "scale" in args.only:
        bench_scale(args.queries)
    if "locate" in args.only:
        bench_locate(args.mb)


if __name__ == "__main__":
    main()
