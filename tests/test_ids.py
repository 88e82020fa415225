"""One id rule (issue 21, item 6): equal ids are one id on every path, and an id refused on one path is
refused on all (``ragrade.data.ids``, docs/formats.md "Ids")."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ragrade
from ragrade.data.ids import id_array, id_column, normalize_id
from ragrade.errors import InputError


def _paths(tmp_path, qids):
    """The same ground truth (one relevant document per query) from a dict, a DataFrame and Parquet."""
    frame = pd.DataFrame({"query_id": qids, "doc_id": [f"d{i}" for i in range(len(qids))], "relevance": 1})
    path = tmp_path / "q.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    as_dict = {q: {f"d{i}": 1} for i, q in enumerate(qids)}
    return {"dict": lambda: ragrade.Qrels.from_dict(as_dict),
            "frame": lambda: ragrade.evaluate(frame, {"x": ["d0"]}, "P@1", missing_qrels="ignore"),
            "parquet": lambda: ragrade.read_qrels(path)}


@pytest.mark.parametrize("bad", [1.5, float("nan"), float("inf"), -0.25])
def test_a_non_integral_number_is_refused_on_every_path(tmp_path, bad):
    for way, read in _paths(tmp_path, [1.0, bad]).items():
        with pytest.raises(InputError, match=r"strings or integers|missing"):
            read()
        assert way


def test_integral_numbers_are_their_digits_on_every_path(tmp_path):
    qids = [10.0, 2.0, 7.0]
    got = {way: read() for way, read in _paths(tmp_path, qids).items()}
    assert sorted(got["dict"].query_ids.tolist()) == ["10", "2", "7"]
    assert sorted(got["parquet"].query_ids.tolist()) == ["10", "2", "7"]
    assert got["frame"].summary.qrels_queries == 3


def test_the_three_forms_of_the_rule_agree():
    values = [10, 10.0, "10", "007", 2**40, -3]
    column = id_column(pa.chunked_array([pa.array([10, 2**40, -3])])).to_pylist()
    assert [normalize_id(v) for v in values] == id_array(values).tolist() == ["10", "10", "10", "007", str(2**40), "-3"]
    assert column == ["10", str(2**40), "-3"]
    assert id_column(pa.chunked_array([pa.array([10.0, None])])).to_pylist() == ["10", None]
    for bad in (True, None, 1.5, [1], {"a": 1}):
        with pytest.raises(InputError):
            normalize_id(bad)
    with pytest.raises(InputError):
        id_column(pa.chunked_array([pa.array([True])]))
