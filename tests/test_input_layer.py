"""The one input layer (docs/formats.md, "Ids"; docs/architecture.md): every entry point accepts the same
shapes, and the same id spelled as int, integral float, str or NumPy scalar is one id everywhere."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import ragrade
from ragrade.data.ids import id_array as as_object_strings
from ragrade.data.ids import normalize_id as id_string
from ragrade.engine.inputs import as_qrels, as_run
from ragrade.errors import InputError

SPELLINGS = [10, 10.0, "10", np.int64(10), np.int32(10), np.uint8(10), np.float64(10.0), np.float32(10.0)]


def test_the_issue_example():
    assert ragrade.evaluate([[10.0]], [[10.0]], ["recall"]).means["recall"] == 1.0


@pytest.mark.parametrize("gold", SPELLINGS, ids=repr)
@pytest.mark.parametrize("got", SPELLINGS, ids=repr)
def test_every_spelling_pair_is_one_id(gold, got):
    assert ragrade.evaluate([[gold]], [[got]], ["recall"]).means["recall"] == 1.0  # aligned lists
    assert ragrade.evaluate({"q": [gold]}, {"q": [got]}, ["recall"]).means["recall"] == 1.0  # dicts of lists
    assert ragrade.evaluate({"q": {gold: 1}}, {"q": {got: 1.0}}, ["recall"]).means["recall"] == 1.0  # dicts
    assert ragrade.evaluate([[[gold]]], [[got]], ["recall"]).means["recall"] == 1.0  # groups
    assert ragrade.evaluate([[gold]], [[got]], ["recall"], profile="llamaindex").means["recall"] == 1.0


def test_query_ids_follow_the_same_rule():
    res = ragrade.evaluate({1: {"a": 1}}, {1.0: {"a": 1.0}}, ["recall"])
    assert res.per_query.index.tolist() == ["1"] and res.means["recall"] == 1.0


def test_columns_and_scalars_agree():
    values = [1, 2.0, "x", np.int64(3), np.float32(4.0), b"y", np.str_("z"), 2**70, float(2**60)]
    assert as_object_strings(np.array(values, dtype=object), "ids").tolist() == [id_string(v, "id") for v in values]
    assert id_string(2**70, "id") == str(2**70)
    assert as_object_strings(np.array([2**64 - 1], dtype=np.uint64), "ids").tolist() == [str(2**64 - 1)]
    assert as_object_strings(np.array([2**62, 3], dtype=np.int64), "ids").tolist() == [str(2**62), "3"]


@pytest.mark.parametrize("bad", [1.5, True, None, float("nan"), float("inf"), [1], {"a": 1}, object()])
def test_values_that_are_not_ids_are_refused(bad):
    with pytest.raises(InputError):
        id_string(bad, "id")
    with pytest.raises(InputError):
        ragrade.evaluate([["a"]], [[bad]], ["recall"])


QRELS = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
RUN = {"q1": {"d1": 0.9, "d4": 0.5}, "q2": {"d3": 0.1, "d5": 0.4}}


def _shapes() -> dict[str, tuple[object, object]]:
    qframe = pd.DataFrame([(q, d, g) for q, dd in QRELS.items() for d, g in dd.items()],
                          columns=["query_id", "doc_id", "relevance"])
    rframe = pd.DataFrame([(q, d, s) for q, dd in RUN.items() for d, s in dd.items()], columns=["qid", "docid", "score"])
    return {
        "dicts": (QRELS, RUN),
        "objects": (ragrade.Qrels.from_dict(QRELS), ragrade.Run.from_dict(RUN)),
        "pandas": (qframe, rframe),
        "arrow": (pa.Table.from_pandas(qframe, preserve_index=False), pa.Table.from_pandas(rframe, preserve_index=False)),
    }


@pytest.mark.parametrize("shape", list(_shapes()))
def test_every_shape_gives_the_same_values(shape):
    qrels, run = _shapes()[shape]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ragrade.RagradeWarning)
        got = ragrade.evaluate(qrels, run, ["ndcg@10", "P@2"]).per_query
        want = ragrade.evaluate(QRELS, RUN, ["ndcg@10", "P@2"]).per_query
    pd.testing.assert_frame_equal(got.sort_index(), want.sort_index())


def test_dict_of_lists_and_groups_as_ground_truth():
    assert as_qrels({"q": ["a", "b"]}).to_dict() == {"q": {"a": 1, "b": 1}}
    assert as_qrels({"q": [["a", "b"], ["c"]]}).has_groups
    assert as_run({"q": ["b", "a"]}).to_lists() == {"q": ["b", "a"]}


def test_inputs_are_not_mutated():
    qrels = {"q1": {"d1": 1}}
    run = {"q1": {"d1": 0.5, "q1": 0.4}}
    frozen = (repr(qrels), repr(run))
    ragrade.evaluate(qrels, run, ["ndcg@10"], identical_ids="drop")
    assert (repr(qrels), repr(run)) == frozen
