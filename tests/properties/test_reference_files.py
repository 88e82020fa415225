"""Files in, same numbers out: qrels and runs written by hand as TREC, TSV, CSV, JSONL and Parquet (rows
interleaved across queries, duplicate lines, tied scores, fractional grades) are read by ragrade and must
equal the reference implementation to 1e-12 under every policy option, and pytrec_eval to 1e-9."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ragrade
from reference import assert_same, frame_to_dict, random_case, ref_evaluate

pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")

METRICS = ["ndcg@5", "ndcg(gain=exp)@10", "ndcg", "ap@10", "ap", "rr", "rr@3", "P@5", "precision", "recall@5",
           "f1@5", "hits@10", "hit_rate@3", "recall_all@10", "r_precision", "context_precision@5", "dcg@5",
           "P(rel=2)@5", "ndcg(rel=2)@10", "ap(rel=3)@10"]


def file_rows(seed: int):
    """(qrels rows, run rows) with duplicates and interleaving, plus the reference's {query: [(doc, score)]}."""
    rng = np.random.default_rng(seed)
    case = random_case(rng, n_queries=30)
    qrows = [(q, d, g) for q, docs in case.qrels.items() for d, g in docs.items()]
    per_query = {q: list(docs.items()) for q, docs in case.run.items()}
    for r in per_query.values():  # repeated lines with another score
        if rng.random() < 0.3:
            d, _ = r[int(rng.integers(len(r)))]
            r.insert(int(rng.integers(len(r) + 1)), (d, float(rng.choice(np.arange(8) / 8))))
    rrows = []
    for i in range(max(len(r) for r in per_query.values())):
        rrows += [(q, *r[i]) for q, r in per_query.items() if i < len(r)]
    rng.shuffle(qrows)
    return qrows, rrows, case.qrels, per_query


def write(tmp_path, fmt, qrows, rrows):
    qpath, rpath = tmp_path / f"qrels.{fmt}", tmp_path / f"run.{fmt}"
    if fmt == "trec":
        qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrows))
        rpath.write_text("".join(f"{q}\tQ0\t{d}\t{i + 1}\t{s!r}\ttag\n" for i, (q, d, s) in enumerate(rrows)))
    elif fmt in ("tsv", "csv"):
        sep = "\t" if fmt == "tsv" else ","
        qpath.write_text(f"query{sep}doc{sep}grade\n" + "".join(f"{q}{sep}{d}{sep}{g}\n" for q, d, g in qrows))
        rpath.write_text(f"query{sep}doc{sep}score\n" + "".join(f"{q}{sep}{d}{sep}{s!r}\n" for q, d, s in rrows))
    elif fmt == "jsonl":
        qpath.write_text("".join(json.dumps({"query": q, "doc": d, "grade": g}) + "\n" for q, d, g in qrows))
        rpath.write_text("".join(json.dumps({"query": q, "doc": d, "score": s}) + "\n" for q, d, s in rrows))
    elif fmt == "parquet":
        pd.DataFrame(qrows, columns=["query", "doc", "grade"]).to_parquet(qpath)
        pd.DataFrame(rrows, columns=["query", "doc", "score"]).to_parquet(rpath)
    return qpath, rpath


POLICIES = [{}, {"duplicates": "drop"}, {"duplicates": "keep_last"}, {"ties": "input"}, {"ties": "docid_asc"},
            {"missing_run": "drop", "no_relevant": "zero"}, {"identical_ids": "drop"}]


@pytest.mark.parametrize("fmt", ["trec", "tsv", "csv", "jsonl", "parquet"])
def test_files_equal_reference(tmp_path, fmt):
    qrows, rrows, qrels, per_query = file_rows(seed=len(fmt))
    qpath, rpath = write(tmp_path, fmt, qrows, rrows)
    for pol in POLICIES:
        got = frame_to_dict(ragrade.evaluate(qpath, rpath, METRICS, **pol).per_query)
        want = ref_evaluate(qrels, per_query, METRICS, **pol)
        # The reference keeps qrels order; a file's query order is its first appearance.
        assert all(set(got[label]) == set(want[label]) for label in want)
        got = {label: {q: got[label][q] for q in want[label]} for label in want}
        assert_same(got, want)


def test_trec_files_equal_pytrec_eval(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(77)
    case = random_case(rng, n_queries=40)
    qrows = [(q, d, g) for q, docs in case.qrels.items() for d, g in docs.items()]
    rrows = [(q, d, s) for q, docs in case.run.items() for d, s in docs.items()]
    qpath, rpath = write(tmp_path, "trec", qrows, rrows)
    pairs = [("P@5", "P_5"), ("recall@10", "recall_10"), ("ap@10", "map_cut_10"), ("ndcg@10", "ndcg_cut_10"),
             ("rr", "recip_rank"), ("r_precision", "Rprec"), ("hit_rate@5", "success_5"), ("ap", "map")]
    want = pytrec_eval.RelevanceEvaluator(case.qrels, {m for _, m in pairs if "ndcg" not in m}).evaluate(case.run)
    # ndcg apart, on grades >= 0: negative grades make pytrec_eval's ndcg corrupt memory and hang.
    nonneg = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in case.qrels.items()}
    for q, values in pytrec_eval.RelevanceEvaluator(nonneg, {"ndcg_cut_10"}).evaluate(case.run).items():
        want[q].update(values)
    got = ragrade.evaluate(qpath, rpath, [a for a, _ in pairs], no_relevant="zero", missing_run="drop").per_query
    assert sorted(got.index) == sorted(want)
    for q in want:
        for a, b in pairs:
            assert abs(got.at[q, a] - want[q][b]) <= 1e-9, (q, a, got.at[q, a], want[q][b])


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_list_layouts_equal_reference(tmp_path, fmt):
    """One line per query: ranked lists (with duplicates and empty lists) and AutoRAG groups."""
    rng = np.random.default_rng(31)
    pool = [f"g{i}" for i in range(12)]
    gold, runs, grades, units, ref_run = [], [], {}, {}, {}
    for i in range(20):
        q = f"q{i}"
        groups = [list(map(str, rng.choice(pool, size=int(rng.integers(1, 3)), replace=False)))
                  for _ in range(int(rng.integers(1, 4)))]
        retrieved = list(map(str, rng.choice([*pool, "x1", "x2"], size=int(rng.integers(0, 8)))))
        gold.append({"query": q, "groups": groups})
        runs.append({"query": q, "retrieved": retrieved})
        grades[q], units[q] = {}, {}
        for gi, grp in enumerate(groups):
            for d in grp:
                if d not in units[q]:
                    units[q][d], grades[q][d] = gi, 1
        ref_run[q] = [(d, None) for d in retrieved]
    qpath, rpath = tmp_path / f"gold.{fmt}", tmp_path / f"run.{fmt}"
    if fmt == "jsonl":
        qpath.write_text("".join(json.dumps(x) + "\n" for x in gold))
        rpath.write_text("".join(json.dumps(x) + "\n" for x in runs))
    else:
        pd.DataFrame(gold).to_parquet(qpath)
        pd.DataFrame(runs).to_parquet(rpath)
    metrics = [m for m in METRICS if "rel=" not in m]
    for pol in ({}, {"duplicates": "drop"}, {"duplicates": "keep_last"}):
        got = frame_to_dict(ragrade.evaluate(qpath, rpath, metrics, **pol).per_query)
        assert_same(got, ref_evaluate(grades, ref_run, metrics, units=units, **pol))


@pytest.mark.parametrize("chunk_size", [40, 97, 256, 4096])
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_trec_chunk_boundaries_whitespace_and_gzip(tmp_path, chunk_size, gz):
    """Small read chunks (ids split across chunk ends, dictionaries unified across chunks), mixed
    separators, CRLF and blank lines give the same values as the reference."""
    import gzip

    from ragrade.io import read_qrels, read_run

    qrows, rrows, qrels, per_query = file_rows(seed=chunk_size)
    # One separator per line (space, tab, two spaces, or space-tab-space): lines mixing separators are
    # covered by test_mixed_whitespace_in_one_line below.
    seps = [" ", "\t", "  ", " \t "]
    qtext = "".join(seps[i % 4].join([q, "0", d, str(g)]) + "\r\n" + ("\n" if i % 7 == 0 else "")
                    for i, (q, d, g) in enumerate(qrows))
    rtext = "".join(seps[i % 4].join([q, "Q0", d, str(i + 1), repr(s), "tag"]) + "\n"
                    for i, (q, d, s) in enumerate(rrows))
    suffix = ".gz" if gz else ""
    qpath, rpath = tmp_path / f"q.qrels{suffix}", tmp_path / f"r.run{suffix}"
    for path, text in ((qpath, qtext), (rpath, rtext)):
        if gz:
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text, newline="")
    q = read_qrels(qpath, chunk_size=chunk_size)
    r = read_run(rpath, chunk_size=chunk_size)
    assert q.to_dict() == {k: dict(v) for k, v in qrels.items()}
    got = frame_to_dict(ragrade.evaluate(q, r, METRICS, duplicates="keep_last").per_query)
    want = ref_evaluate(qrels, per_query, METRICS, duplicates="keep_last")
    got = {label: {qq: got[label][qq] for qq in want[label]} for label in want}
    assert_same(got, want)


@pytest.mark.parametrize("chunk_size", [30, 1 << 20])
def test_mixed_whitespace_in_one_line(tmp_path, chunk_size):
    from ragrade.io import read_run

    path = tmp_path / "mixed.run"
    path.write_text("q1\tQ0 d2 \t 2 0.875 tag\nq3 \t Q0 d4\t4 0.375 tag\n")
    # Found: {'q1\tQ0': {'\t': 0.875}, 'q3': {'Q0': 0.375}}
    assert read_run(path, chunk_size=chunk_size).to_dict() == {"q1": {"d2": 0.875}, "q3": {"d4": 0.375}}


def test_mixed_whitespace_in_one_qrels_line(tmp_path):
    from ragrade.io import read_qrels

    path = tmp_path / "mixed.qrels"
    path.write_text("q1\t0 d1 \t 1\nq2 0 d2 1\n")
    assert read_qrels(path).to_dict() == {"q1": {"d1": 1}, "q2": {"d2": 1}}


def test_jsonl_empty_list_without_scores(tmp_path):
    from ragrade.io import read_run

    path = tmp_path / "run.jsonl"
    path.write_text('{"query": "q1", "retrieved": ["d1", "d2"], "scores": [0.5, 0.75]}\n'
                    '{"query": "q2", "retrieved": []}\n')
    assert read_run(path).to_lists() == {"q1": ["d2", "d1"], "q2": []}
