"""The streaming TREC reader: whitespace, chunking, grouping, gzip, names, detection and progress."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from ragrade import Qrels, Run, evaluate, read_qrels, read_run
from ragrade.io import detect_format, guess_kind
from ragrade.io.sniffing import sniff_trec
from ragrade.io.trec import normalise_whitespace


def _write(path, text: str, gz: bool = False) -> None:
    if gz:
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)


def test_messy_whitespace(tmp_path):
    text = "q1\tQ0\tdA\t1\t3.5\tt\n  q1  Q0 dB   2 2.0 t  \r\n\nq2 Q0\t\tdA 1 1 t\n   \nq2 Q0 dC 2 -0.5 t"
    path = tmp_path / "r.run"
    _write(path, text)
    run = read_run(path)
    assert run.to_dict() == {"q1": {"dA": 3.5, "dB": 2.0}, "q2": {"dA": 1.0, "dC": -0.5}}
    assert run.name == "t"


def test_irregular_spacing_that_keeps_the_space_count(tmp_path):
    # Each line has exactly 5 spaces, but the second one starts with a space and lacks its tag: the fast
    # path must not read it as an empty query id.
    path = tmp_path / "r.trec"
    _write(path, "q1 Q0 d1 1 2 t\n q1 Q0 d2 1 3\n")
    from ragrade.errors import ParseError

    with pytest.raises(ParseError) as info:
        read_run(path)
    assert info.value.line == 2 and "expected 6" in str(info.value)
    _write(path, "q1 Q0 d1 1 2 t\n q1 Q0 d2 1 3 t\n")
    assert read_run(path).to_dict() == {"q1": {"d1": 2.0, "d2": 3.0}}


def test_normalise_whitespace_bytes():
    assert normalise_whitespace(b" a\t\tb  c \r\nd e\n") == b"a b c\nd e\n"
    assert normalise_whitespace(b"a b\n") == b"a b\n"


@pytest.mark.parametrize("chunk_size", [7, 64, 1000, 1 << 20])
def test_streaming_across_chunks_matches_dict(tmp_path, rng, chunk_size):
    # Queries interleaved (not grouped), many lines: the file spans many chunks when chunk_size is small.
    nq, n = 25, 2000
    q = rng.integers(0, nq, n)
    d = rng.integers(0, 300, n)
    expected: dict[str, dict[str, float]] = {}
    lines = []
    for i in range(n):
        qid, did = f"q{q[i]}", f"d{d[i]}"
        if did in expected.get(qid, {}):
            continue
        s = float(np.round(rng.normal(), 3))
        expected.setdefault(qid, {})[did] = s
        lines.append(f"{qid} Q0 {did} 0 {s!r} tag")
    path = tmp_path / "big.trec"
    _write(path, "\n".join(lines) + "\n")
    assert path.stat().st_size > 10 * chunk_size or chunk_size > 1000
    run = read_run(path, chunk_size=chunk_size)
    assert run.to_dict() == expected
    # Queries keep their first-appearance order.
    assert list(run.query_ids) == list(dict.fromkeys(f"q{x}" for x in q))
    ref = Run.from_dict(expected)
    assert run.to_lists() == ref.to_lists()


def test_grouped_file_is_built_without_permutation(tmp_path):
    path = tmp_path / "g.trec"
    _write(path, "a Q0 x 1 2 t\na Q0 y 2 1 t\nb Q0 x 1 5 t\n")
    run = read_run(path, chunk_size=5)
    assert run.query_ids.tolist() == ["a", "b"]
    assert run.offsets.tolist() == [0, 2, 3]
    assert run.doc_codes.dtype == np.int32
    assert run.doc_vocab.tolist() == ["x", "y"]  # one entry per distinct id, across chunks


def test_qrels_streaming_and_gzip(tmp_path):
    text = "".join(f"q{i % 7} 0 doc-{i:04d} {i % 4}\n" for i in range(500))
    plain, packed = tmp_path / "a.qrels", tmp_path / "a.qrels.gz"
    _write(plain, text)
    _write(packed, text, gz=True)
    a = read_qrels(plain, chunk_size=100)
    b = read_qrels(packed, chunk_size=100)
    assert a == b
    assert a.n_rows == 500 and a.n_queries == 7
    assert a.to_dict()["q3"]["doc-0010"] == 2


def test_gzipped_run(tmp_path):
    path = tmp_path / "r.run.gz"
    _write(path, "q1 Q0 d1 1 0.5 x\nq1 Q0 d2 2 0.25 x\n", gz=True)
    assert read_run(path).to_dict() == {"q1": {"d1": 0.5, "d2": 0.25}}


def test_trec_qrels_with_iter_column_ignored_and_float_grades(tmp_path):
    path = tmp_path / "x.qrels"
    _write(path, "1 Q0 100 1.5\n1 7 200 0\n")
    q = read_qrels(path)
    assert q.to_dict() == {"1": {"100": 1.5, "200": 0.0}}


def test_progress_callback(tmp_path):
    path = tmp_path / "r.trec"
    _write(path, "".join(f"q{i} Q0 d{i} 1 {i} t\n" for i in range(300)))
    calls: list[tuple[int, int]] = []
    read_run(path, chunk_size=256, progress=lambda done, total: calls.append((done, total)))
    size = path.stat().st_size
    assert len(calls) > 3
    assert calls[-1] == (size, size)
    assert all(t == size for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_name_defaults_to_tag_and_can_be_given(tmp_path):
    path = tmp_path / "r.trec"
    _write(path, "q Q0 d 1 1 my-run\n")
    assert read_run(path).name == "my-run"
    assert read_run(path, name="other").name == "other"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("q01\t0\tdoc-0412\t2", "qrels"),
        ("q01 Q0 doc-0412 1 12.5 bm25", "run"),
        ("301 0 FBIS3-10082 1", "qrels"),
        ("q0 Q0 d 1 1 run", "run"),
        ("query\tdoc\tscore", None),
        ("qid iter docno rel", None),
        ("query_id corpus_id score extra 1", None),
        ("q1 d1 0.5", None),
    ],
)
def test_sniff_trec(line, kind):
    assert sniff_trec(line) == kind


def test_tsv_with_trec_content_is_read_as_trec(tmp_path):
    path = tmp_path / "qrels.tsv"
    _write(path, "q01\t0\tdoc-0412\t2\nq01\t0\tdoc-0007\t0\n")
    assert detect_format(path) == "trec"
    assert detect_format(path, "tsv") == "tsv"  # an explicit format is not second-guessed
    assert guess_kind(path) == "qrels"
    assert read_qrels(path).to_dict() == {"q01": {"doc-0412": 2, "doc-0007": 0}}
    headered = tmp_path / "h.tsv"
    _write(headered, "query-id\tcorpus-id\tscore\nq01\tdoc-0412\t2\n")
    assert detect_format(headered) == "tsv"
    assert read_qrels(headered).to_dict() == {"q01": {"doc-0412": 2}}


def test_example_files_evaluate():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples"
    q = read_qrels(root / "qrels.tsv")
    r = read_run(root / "run.tsv")
    assert isinstance(q, Qrels) and q.n_queries == 36
    assert r.name == "bm25" and r.n_queries == 35
    assert (np.diff(r.offsets) == 20).all()
    with pytest.warns(Warning):
        res = evaluate(q, r, ["ndcg@10", "recall@5"])
    assert res.counts["ndcg@10"] == 34  # two queries have no relevant judgment
    assert 0.0 < res["ndcg@10"] < 1.0


def test_evaluate_accepts_paths():
    import warnings
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "examples"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_path = evaluate(str(root / "qrels.tsv"), root / "run_dense.tsv", ["ndcg@10", "ap"])
        by_obj = evaluate(read_qrels(root / "qrels.tsv"), read_run(root / "run_dense.tsv"), ["ndcg@10", "ap"])
    assert by_path.means == by_obj.means
    assert by_path.per_query.equals(by_obj.per_query)


def test_utf8_bom_is_not_part_of_the_first_id(tmp_path):
    path = tmp_path / "r.trec"
    path.write_bytes(b"\xef\xbb\xbfq1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    assert read_run(path, chunk_size=4).query_ids.tolist() == ["q1"]
    tsv = tmp_path / "q.tsv"
    tsv.write_bytes(b"\xef\xbb\xbfq1\t0\td1\t1\n")
    assert detect_format(tsv) == "trec"
    assert read_qrels(tsv).to_dict() == {"q1": {"d1": 1}}


def test_invalid_utf8_names_the_line(tmp_path):
    from ragrade.errors import ParseError

    path = tmp_path / "r.trec"
    path.write_bytes(b"q1 Q0 d1 1 2 t\nq1 Q0 d\xff2 2 1 t\n")
    with pytest.raises(ParseError, match="UTF-8") as info:
        read_run(path)
    assert info.value.line == 2
