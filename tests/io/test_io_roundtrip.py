"""Write-then-read round trips for every format, for qrels and runs (scored, ranked lists, groups)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragrade import Qrels, Run, read_qrels, read_run, write_qrels, write_run

RUN_EXTS = ["trec", "run", "txt", "tsv", "csv", "jsonl", "parquet", "trec.gz", "tsv.gz", "csv.gz", "jsonl.gz"]
QRELS_EXTS = ["qrels", "trec", "tsv", "csv", "jsonl", "parquet", "qrels.gz", "jsonl.gz"]


@pytest.fixture
def run() -> Run:
    return Run.from_dict(
        {
            "q1": {"doc-1": 2.5, "doc-2": 1 / 3, "doc-3": 2.5, "doc-4": -1e-300},
            "q2": {"doc-2": 7.0, "007": 0.1},
            "10": {"doc-9": 1e20},
        },
        name="bm25",
    )


@pytest.fixture
def qrels() -> Qrels:
    return Qrels.from_dict({"q1": {"doc-1": 3, "doc-2": 0, "doc-7": -1}, "q2": {"007": 1}, "10": {"doc-9": 2}})


@pytest.mark.parametrize("ext", RUN_EXTS)
def test_run_roundtrip(tmp_path, run, ext):
    path = tmp_path / f"out.{ext}"
    write_run(run, path)
    back = read_run(path)
    assert back == run
    assert back.to_lists() == run.to_lists()
    assert list(back.query_ids) == list(run.query_ids)


@pytest.mark.parametrize("ext", RUN_EXTS)
def test_ranked_lists_roundtrip(tmp_path, ext):
    run = Run.from_lists([["c", "a", "b"], ["z"]], query_ids=["x", "y"])
    path = tmp_path / f"lists.{ext}"
    write_run(run, path)
    back = read_run(path)
    assert back.to_lists() == {"x": ["c", "a", "b"], "y": ["z"]}


@pytest.mark.parametrize("ext", QRELS_EXTS)
def test_qrels_roundtrip(tmp_path, qrels, ext):
    path = tmp_path / f"judged.{ext}"
    write_qrels(qrels, path)
    back = read_qrels(path)
    assert back == qrels
    assert back.grades.dtype == np.float64


@pytest.mark.parametrize("ext", ["jsonl", "parquet", "tsv", "csv", "jsonl.gz"])
def test_groups_roundtrip(tmp_path, ext):
    groups = Qrels.from_groups([[["a", "b"], ["c"]], [["x"], ["y", "z"]]], query_ids=["q1", "q2"])
    path = tmp_path / f"groups.{ext}"
    write_qrels(groups, path)
    back = read_qrels(path)
    assert back.has_groups
    assert back.to_groups() == {"q1": [["a", "b"], ["c"]], "q2": [["x"], ["y", "z"]]}
    assert back.n_units("q2") == 2


def test_groups_cannot_be_written_as_trec(tmp_path):
    from ragrade.errors import InputError

    groups = Qrels.from_groups([[["a", "b"]]])
    with pytest.raises(InputError, match="groups"):
        write_qrels(groups, tmp_path / "g.qrels")


def test_trec_writer_layout(tmp_path, run):
    path = tmp_path / "r.trec"
    write_run(run, path, tag="mytag")
    lines = path.read_text().splitlines()
    # Ties (doc-1 and doc-3 at 2.5) are written in trec_eval's order (document id descending).
    assert lines[:4] == [
        "q1 Q0 doc-3 1 2.5 mytag",
        "q1 Q0 doc-1 2 2.5 mytag",
        "q1 Q0 doc-2 3 0.3333333333333333 mytag",
        "q1 Q0 doc-4 4 -1e-300 mytag",
    ]
    assert read_run(path).name == "mytag"


def test_parquet_keeps_run_name(tmp_path, run):
    write_run(run, tmp_path / "r.parquet")
    assert read_run(tmp_path / "r.parquet").name == "bm25"
    write_run(run, tmp_path / "r.jsonl")
    assert read_run(tmp_path / "r.jsonl").name == "r"  # no metadata: the file name


def test_gzip_is_really_compressed(tmp_path, run):
    path = tmp_path / "r.trec.gz"
    write_run(run, path)
    with gzip.open(path, "rt") as fh:
        assert fh.readline().startswith("q1 Q0 doc-3 1 2.5")


def test_format_override(tmp_path, run):
    path = tmp_path / "results.data"
    write_run(run, path, format="jsonl")
    assert read_run(path, format="jsonl") == run
    # Unknown extension: sniffed from the content.
    assert read_run(path) == run


def test_whitespace_in_ids_is_refused_for_trec_but_fine_for_tables(tmp_path):
    from ragrade.errors import InputError

    run = Run.from_dict({"q 1": {"my doc": 1.0}})
    with pytest.raises(InputError, match="whitespace"):
        write_run(run, tmp_path / "r.trec")
    write_run(run, tmp_path / "r.jsonl")
    assert read_run(tmp_path / "r.jsonl") == run


ids = st.text(alphabet="abcdefxyz0123456789-_.:", min_size=1, max_size=6)


@st.composite
def runs(draw):
    data = draw(st.dictionaries(ids, st.dictionaries(ids, st.floats(-1e6, 1e6, allow_nan=False), min_size=1,
                                                     max_size=6), min_size=1, max_size=5))
    return Run.from_dict(data)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=runs(), ext=st.sampled_from(["trec", "tsv", "csv", "jsonl", "parquet"]))
def test_random_runs_roundtrip(tmp_path, run, ext):
    path = tmp_path / f"h.{ext}"
    write_run(run, path)
    back = read_run(path)
    assert back.to_dict() == run.to_dict()
    assert back.to_lists() == run.to_lists()


@st.composite
def qrels_st(draw):
    data = draw(st.dictionaries(ids, st.dictionaries(ids, st.integers(-1, 4), min_size=1, max_size=6),
                                min_size=1, max_size=5))
    return Qrels.from_dict(data)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(qrels=qrels_st(), ext=st.sampled_from(["qrels", "tsv", "csv", "jsonl", "parquet"]))
def test_random_qrels_roundtrip(tmp_path, qrels, ext):
    path = tmp_path / f"h.{ext}"
    write_qrels(qrels, path)
    assert read_qrels(path) == qrels
