"""Generate the example evaluation in this folder (seeded, so the files are reproducible).

    python examples/make_examples.py

Writes, in TREC format (tab-separated, hence the ``.tsv`` extension):

* ``qrels.tsv``     graded judgments (0-3) for 36 queries ``q01``..``q36`` over a corpus of 1,500
                    documents ``doc-0001``..``doc-1500``; ``q09`` and ``q27`` have only non-relevant
                    judgments (R = 0);
* ``run.tsv``       a lexical run (tag ``bm25``): 20 results per query, scores rounded to two decimals
                    so some scores tie; query ``q31`` is missing (the retriever returned nothing);
* ``run_dense.tsv`` a dense run (tag ``dense``) over the same queries, for comparisons;
* ``slices.tsv``    labels of the queries for slicing results (``--slices``): ``category``, the phrasing
                    of the query in ``topics.tsv`` (``what about``, ``how is``, ``the ... of``, or
                    ``keywords``), and ``relevant``, whether the query has ``few`` (at most 5) or
                    ``many`` relevant documents in ``qrels.tsv``. Derived from those two files; no other
                    file changes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N_QUERIES = 36
N_DOCS = 1500
DEPTH = 20
NO_RELEVANT = ("q09", "q27")
MISSING_FROM_RUN = "q31"


def doc_id(i: int) -> str:
    return f"doc-{i:04d}"


def make_qrels(rng: np.random.Generator) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for qi in range(1, N_QUERIES + 1):
        q = f"q{qi:02d}"
        n_judged = int(rng.integers(6, 16))
        docs = rng.choice(np.arange(1, N_DOCS + 1), size=n_judged, replace=False)
        if q in NO_RELEVANT:
            grades = np.zeros(n_judged, dtype=int)
        else:
            # Pooled judgments: mostly non-relevant, a few partially and highly relevant.
            grades = rng.choice([0, 1, 2, 3], size=n_judged, p=[0.5, 0.25, 0.15, 0.10])
            if grades.max() == 0:
                grades[0] = int(rng.integers(1, 4))
        qrels[q] = {doc_id(int(d)): int(g) for d, g in zip(docs, grades, strict=True)}
    return qrels


def make_run(rng: np.random.Generator, qrels: dict[str, dict[str, int]], quality: float, kind: str
             ) -> dict[str, list[tuple[str, float]]]:
    """Candidates = judged documents (found with a probability growing with their grade) + random ones;
    scores = a noisy function of the grade."""
    run: dict[str, list[tuple[str, float]]] = {}
    for q, judged in qrels.items():
        cands: dict[str, float] = {}
        for d, g in judged.items():
            if rng.random() < 0.45 + 0.15 * g:
                cands[d] = quality * g + rng.normal(0.0, 1.0)
        while len(cands) < DEPTH:
            d = doc_id(int(rng.integers(1, N_DOCS + 1)))
            if d not in cands:
                cands[d] = rng.normal(-0.5, 1.0)
        top = sorted(cands.items(), key=lambda kv: -kv[1])[:DEPTH]
        if kind == "bm25":
            scored = [(d, round(12.0 + 2.2 * s, 2)) for d, s in top]
            # BM25 scores often tie (same term statistics): make two neighbours equal in some queries.
            if rng.random() < 0.4:
                i = int(rng.integers(0, DEPTH - 1))
                scored[i + 1] = (scored[i + 1][0], scored[i][1])
        else:
            scored = [(d, round(0.62 + 0.05 * s, 4)) for d, s in top]
        run[q] = scored
    return run


def write_qrels(path: Path, qrels: dict[str, dict[str, int]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for q, judged in qrels.items():
            for d, g in sorted(judged.items()):
                fh.write(f"{q}\t0\t{d}\t{g}\n")


def write_run(path: Path, run: dict[str, list[tuple[str, float]]], tag: str, skip: tuple[str, ...] = ()) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for q, items in run.items():
            if q in skip:
                continue
            # Rank order: score descending, ties by document id descending (trec_eval's rule).
            ranked = sorted(items, key=lambda kv: (-kv[1], tuple(-ord(c) for c in kv[0])))
            for rank, (d, s) in enumerate(ranked, start=1):
                fh.write(f"{q}\tQ0\t{d}\t{rank}\t{s:g}\t{tag}\n")


def phrasing(text: str) -> str:
    """The phrasing template of a topic of ``topics.tsv`` (written by ``make_texts.py``)."""
    for prefix in ("what about", "how is"):
        if text.startswith(prefix):
            return prefix
    return "the ... of" if text.startswith("the ") else "keywords"


def write_slices(path: Path) -> None:
    """``query``, ``category``, ``relevant`` for every query of ``qrels.tsv`` (see the module docstring)."""
    topics = dict(line.split("\t", 1) for line in (HERE / "topics.tsv").read_text(encoding="utf-8").splitlines())
    relevant: dict[str, int] = {}
    for line in (HERE / "qrels.tsv").read_text(encoding="utf-8").splitlines():
        q, _, _, grade = line.split()
        relevant[q] = relevant.get(q, 0) + (int(grade) > 0)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write("query\tcategory\trelevant\n")
        for q in sorted(relevant):
            fh.write(f"{q}\t{phrasing(topics[q].strip())}\t{'few' if relevant[q] <= 5 else 'many'}\n")


def main() -> None:
    rng = np.random.default_rng(20240601)
    qrels = make_qrels(rng)
    write_qrels(HERE / "qrels.tsv", qrels)
    write_run(HERE / "run.tsv", make_run(rng, qrels, quality=1.1, kind="bm25"), "bm25", skip=(MISSING_FROM_RUN,))
    write_run(HERE / "run_dense.tsv", make_run(rng, qrels, quality=1.4, kind="dense"), "dense")
    if (HERE / "topics.tsv").exists():
        write_slices(HERE / "slices.tsv")


if __name__ == "__main__":
    main()
