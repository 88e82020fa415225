"""Out-of-core evaluation (scale/outofcore.py, io/stream.py) equals the in-memory engine exactly: same
per-query values in the same order, same means and counts, same summary, on every way of cutting the files
(ground truth in memory, both streamed, partitioned), whatever the order of the rows."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scale_metrics import METRICS as REGISTRY

import ragrade
from ragrade.errors import InputError, ParseError, PolicyError
from ragrade.scale.outofcore import Sizes, evaluate_paths, parse_memory
from reference import random_case

METRICS = ["ndcg@10", "map@100", "P@5", "recall@[3,10]", "rr", "r_precision", "ndcg(gain=exp)@5",
           "precision(rel=2)@3", "success@3", "f1@5", "recall_all@5", "context_precision@5"]
WAYS = ["memory_qrels", "stream", "partition"]


def tiny(partitions: int = 5, window: int = 400) -> Sizes:
    """Pieces of a few hundred bytes: many windows and partitions even on small files."""
    return Sizes(16 << 20, window, 7, partitions)


def rows_of(case, rng, *, shuffle_run=False, shuffle_queries=False, duplicates=0):
    qrows = [(q, d, g) for q, docs in case.qrels.items() for d, g in docs.items()]
    rrows = [(q, d, s) for q, docs in case.run.items() for d, s in docs.items()]
    if duplicates:
        extra = [rrows[i] for i in rng.choice(len(rrows), size=duplicates, replace=False)]
        rrows = rrows + extra
        rrows.sort(key=lambda r: list(case.run).index(r[0]))  # keep them grouped
    if shuffle_queries:
        order = list(case.qrels)
        rng.shuffle(order)
        rank = {q: i for i, q in enumerate(order)}
        qrows.sort(key=lambda r: rank[r[0]])
    if shuffle_run:
        perm = rng.permutation(len(rrows))
        rrows = [rrows[i] for i in perm]
    return qrows, rrows


def write_trec(tmp_path, qrows, rrows, *, gz=False, three=False):
    qp = tmp_path / "qrels.txt"
    rp = tmp_path / ("run.txt.gz" if gz else "run.txt")
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrows))
    if three:
        text = "".join(f"{q} {d} {s}\n" for q, d, s in rrows)
    else:
        text = "".join(f"{q} Q0 {d} {i + 1} {s} tag\n" for i, (q, d, s) in enumerate(rrows))
    if gz:
        rp.write_bytes(gzip.compress(text.encode()))
    else:
        rp.write_text(text)
    return str(qp), str(rp)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def assert_same(got, want):
    pd.testing.assert_frame_equal(got.per_query, want.per_query, check_exact=True)
    assert list(got.per_query.index) == list(want.per_query.index)
    assert got.summary == want.summary
    assert dict(got.means) == pytest.approx(dict(want.means), abs=0, nan_ok=True)
    assert dict(got.counts) == dict(want.counts)
    assert got.run_name == want.run_name
    assert got.metrics == want.metrics and got.policies == want.policies
    assert (got.hole_rate is None) == (want.hole_rate is None)
    if want.hole_rate is not None:
        pd.testing.assert_series_equal(got.hole_rate.per_query, want.hole_rate.per_query, check_exact=True)
        a, b = got.hole_rate.to_dict(), want.hole_rate.to_dict()
        assert a.pop("mean") == pytest.approx(b.pop("mean"), abs=0, nan_ok=True)
        assert a == b
        assert got.hole_rate.by_k == want.hole_rate.by_k  # recomputed exactly, not averaged
    assert (got.upper is None) == (want.upper is None)
    if want.upper is not None:
        pd.testing.assert_frame_equal(got.upper, want.upper, check_exact=True)
        assert dict(got.upper_means) == pytest.approx(dict(want.upper_means), abs=0, nan_ok=True)


def out_of_core(qp, rp, metrics, how, sizes=None, report=None, pinned=True, **options):
    """evaluate_paths with tiny pieces, each scored through the port by the PieceScorer ragrade.evaluate gives
    the out-of-core executor; ``pinned``: as ragrade.evaluate calls it (the pieces told the top grade of the
    whole ground truth when a value depends on it)."""
    from ragrade.scale.outofcore import needs_top_grade, pin_collection, unpin, with_twins
    from ragrade.scale.pieces import PieceScorer

    part = PieceScorer.of_options(metrics, options)
    labels, settings = list(part.labels), dict(part.settings)
    collection = None
    if pinned and needs_top_grade(labels, settings):
        def collection(top):
            lab, extra = pin_collection(labels, settings, top)
            return lambda q, r: with_twins(part(q, r, lab, extra), lab)

    got = quiet(evaluate_paths, qp, rp, part, budget=16 << 20, how=how, sizes=sizes or tiny(), report=report,
                collection=collection)
    if collection is not None:
        got = unpin(got, labels, settings)
    return got


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("how", WAYS)
def test_grouped_trec_files_any_way(tmp_path, seed, how):
    rng = np.random.default_rng(seed)
    case = random_case(rng, 120)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    want = quiet(ragrade.evaluate, qp, rp, METRICS)
    report: dict = {}
    got = out_of_core(qp, rp, METRICS, how, report=report)
    assert_same(got, want)
    assert report["way"] == how  # both files list the queries in one order: every way applies
    assert report["pieces"] > 3


@pytest.mark.parametrize("seed", range(3))
def test_ground_truth_in_another_order(tmp_path, seed):
    rng = np.random.default_rng(100 + seed)
    case = random_case(rng, 150)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng, shuffle_queries=True))
    want = quiet(ragrade.evaluate, qp, rp, METRICS)
    for how, way in [("memory_qrels", "memory_qrels"), ("stream", "partition"), ("partition", "partition")]:
        report: dict = {}
        assert_same(out_of_core(qp, rp, METRICS, how, report=report), want)
        assert report["way"] == way


@pytest.mark.parametrize("seed", range(3))
def test_run_not_grouped_is_partitioned(tmp_path, seed):
    rng = np.random.default_rng(200 + seed)
    case = random_case(rng, 80)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng, shuffle_run=True))
    want = quiet(ragrade.evaluate, qp, rp, METRICS)
    report: dict = {}
    got = out_of_core(qp, rp, METRICS, "memory_qrels", report=report)
    assert_same(got, want)
    assert report["tried"] == ["memory_qrels", "partition"] and report["way"] == "partition"


@pytest.mark.parametrize("policies", [
    {"missing_run": "drop"}, {"no_relevant": "zero"}, {"no_relevant": "nan"}, {"duplicates": "drop"},
    {"duplicates": "keep_last"}, {"identical_ids": "drop"}, {"ties": "input"}, {"ties": "docid_asc"},
    {"profile": "trec_eval"}, {"profile": "pytrec_eval"}, {"profile": "beir"}, {"profile": "ir_measures"},
])
@pytest.mark.parametrize("how", WAYS)
def test_policies_and_engine_profiles(tmp_path, policies, how):
    rng = np.random.default_rng(7)
    case = random_case(rng, 90)
    # Some documents named like their query (identical ids) and some duplicates.
    for q in list(case.run)[:10]:
        case.run[q][q] = 0.5
    qrows, rrows = rows_of(case, rng, duplicates=25)
    qp, rp = write_trec(tmp_path, qrows, rrows)
    metrics = ["ndcg@10", "map", "P@5", "rr"]
    try:
        want = quiet(ragrade.evaluate, qp, rp, metrics, **policies)
    except PolicyError as exc:  # trec_eval refuses duplicates: so must the pieces
        with pytest.raises(PolicyError, match=str(exc).split(" (")[0][:25]):
            out_of_core(qp, rp, metrics, how, **policies)
        return
    assert_same(out_of_core(qp, rp, metrics, how, **policies), want)


def test_error_policies_raise_as_in_memory(tmp_path):
    rng = np.random.default_rng(8)
    case = random_case(rng, 60)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    for policy in ({"missing_run": "error"}, {"missing_qrels": "error"}, {"no_relevant": "error"}):
        with pytest.raises(PolicyError):
            quiet(ragrade.evaluate, qp, rp, ["ndcg@10"], **policy)
        for how in WAYS:
            with pytest.raises(PolicyError):
                out_of_core(qp, rp, ["ndcg@10"], how, **policy)


@pytest.mark.parametrize("how", WAYS)
def test_gzip_and_three_column_runs(tmp_path, how):
    rng = np.random.default_rng(9)
    case = random_case(rng, 70)
    qrows, rrows = rows_of(case, rng)
    for kwargs in ({"gz": True}, {"three": True}):
        qp, rp = write_trec(tmp_path, qrows, rrows, **kwargs)
        want = quiet(ragrade.evaluate, qp, rp, METRICS)
        assert_same(out_of_core(qp, rp, METRICS, how), want)


@pytest.mark.parametrize("how", WAYS)
def test_three_column_ranks_and_the_ambiguous_case(tmp_path, how):
    rng = np.random.default_rng(10)
    case = random_case(rng, 60)
    qrows, _ = rows_of(case, rng)
    ranked = [(q, d, i + 1) for q, docs in case.run.items() for i, d in enumerate(docs)]
    qp, rp = write_trec(tmp_path, qrows, ranked, three=True)
    want = quiet(ragrade.evaluate, qp, rp, METRICS)
    assert_same(out_of_core(qp, rp, METRICS, how), want)
    # Integers that go up and down: the whole-file reader refuses them, naming a line; so does this one.
    bad = ranked[:40] + [(q, d, 5 - (i % 3)) for i, (q, d, _) in enumerate(ranked[40:])]
    qp, rp = write_trec(tmp_path, qrows, bad, three=True)
    with pytest.raises(ParseError) as mem:
        quiet(ragrade.evaluate, qp, rp, METRICS)
    with pytest.raises(ParseError) as ooc:
        out_of_core(qp, rp, METRICS, how)
    assert str(ooc.value) == str(mem.value)


def test_a_bad_line_is_named_as_the_whole_file_reader_names_it(tmp_path):
    rng = np.random.default_rng(11)
    case = random_case(rng, 60)
    qrows, rrows = rows_of(case, rng)
    rrows[150] = (rrows[150][0], rrows[150][1], "nan")
    qp, rp = write_trec(tmp_path, qrows, rrows)
    with pytest.raises(ParseError) as mem:
        quiet(ragrade.evaluate, qp, rp, ["ndcg"])
    for how in WAYS:
        with pytest.raises(ParseError) as ooc:
            out_of_core(qp, rp, ["ndcg"], how)
        assert ooc.value.line == mem.value.line and ooc.value.path == mem.value.path


def _parquet_rows(case, path, *, int_ids=False):
    q = [(q, d, g) for q, docs in case.qrels.items() for d, g in docs.items()]
    r = [(q, d, s) for q, docs in case.run.items() for d, s in docs.items()]

    def qid(x):
        return int(x[1:]) if int_ids else x

    pq.write_table(pa.table({"query_id": [qid(x[0]) for x in q], "doc_id": [x[1] for x in q],
                             "relevance": [x[2] for x in q]}), path / "qrels.parquet")
    return r, qid


@pytest.mark.parametrize("how", WAYS)
@pytest.mark.parametrize("int_ids", [False, True])
def test_parquet_file_and_dataset(tmp_path, how, int_ids):
    rng = np.random.default_rng(12)
    case = random_case(rng, 80)
    r, qid = _parquet_rows(case, tmp_path, int_ids=int_ids)
    table = pa.table({"qid": [qid(x[0]) for x in r], "docid": [x[1] for x in r], "score": [x[2] for x in r]})
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=37)
    (tmp_path / "runs").mkdir()
    for i, start in enumerate(range(0, table.num_rows, 300)):
        pq.write_table(table.slice(start, 300), tmp_path / "runs" / f"part-{i:03d}.parquet", row_group_size=50)
    qp = str(tmp_path / "qrels.parquet")
    want = quiet(ragrade.evaluate, qp, str(tmp_path / "run.parquet"), METRICS)
    assert_same(out_of_core(qp, str(tmp_path / "run.parquet"), METRICS, how), want)
    got = out_of_core(qp, str(tmp_path / "runs"), METRICS, how)
    pd.testing.assert_frame_equal(got.per_query, want.per_query, check_exact=True)
    assert got.summary == want.summary


@pytest.mark.parametrize("how", WAYS)
def test_parquet_list_layout_with_empty_lists(tmp_path, how):
    rng = np.random.default_rng(13)
    case = random_case(rng, 60, allow_empty=True)
    _parquet_rows(case, tmp_path)
    queries = list(case.run)
    pq.write_table(pa.table({"query": queries, "retrieved": [list(case.run[q]) for q in queries],
                             "scores": [list(case.run[q].values()) for q in queries]}),
                   tmp_path / "run.parquet", row_group_size=9)
    qp, rp = str(tmp_path / "qrels.parquet"), str(tmp_path / "run.parquet")
    want = quiet(ragrade.evaluate, qp, rp, METRICS)
    assert want.summary.empty_lists
    assert_same(out_of_core(qp, rp, METRICS, how), want)


def test_evaluate_and_the_cli_take_max_memory(tmp_path):
    import json

    from click.testing import CliRunner

    from ragrade.cli import main

    rng = np.random.default_rng(14)
    case = random_case(rng, 100)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    want = quiet(ragrade.evaluate, qp, rp, METRICS)
    assert_same(quiet(ragrade.evaluate, qp, rp, METRICS, max_memory="16MiB"), want)
    with pytest.warns(ragrade.RagradeWarning):  # one warning for the whole, as in memory
        ragrade.evaluate(qp, rp, ["ndcg@10"], max_memory="16MiB")
    args = ["evaluate", qp, rp, "-m", "ndcg@10", "-m", "map", "--format", "json", "--per-query"]
    mem = CliRunner().invoke(main, args)
    ooc = CliRunner().invoke(main, [*args, "--max-memory", "16MiB"])
    assert mem.exit_code == ooc.exit_code == 0
    assert json.loads(ooc.stdout) == json.loads(mem.stdout)
    bad = CliRunner().invoke(main, [*args, "--max-memory", "lots"])
    assert bad.exit_code == 2 and "--max-memory" in bad.output  # the command line names its option


def test_max_memory_refusals():
    with pytest.raises(InputError):
        parse_memory("1KiB")
    with pytest.raises(InputError):
        parse_memory(True)
    assert parse_memory("1.5G") == int(1.5 * (1 << 30))
    with pytest.raises(InputError, match="file paths"):
        ragrade.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, "ndcg", max_memory="1GiB")
    with pytest.raises(InputError, match="id metrics"):
        ragrade.evaluate({"q": [["a"]]}, {"q": ["a"]}, "recall", profile="autorag", max_memory="1GiB")


def test_small_files_stay_in_memory(tmp_path, monkeypatch):
    """Without max_memory, files that fit take the in-memory path: the out-of-core reader is not called."""
    import ragrade.scale.outofcore as ooc

    rng = np.random.default_rng(15)
    case = random_case(rng, 20)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    monkeypatch.setattr(ooc, "evaluate_paths", lambda *a, **k: pytest.fail("out of core on a small file"))
    quiet(ragrade.evaluate, qp, rp, ["ndcg"])
    # ... and files that do not fit (as far as the estimate can tell) take it.
    import ragrade.scale.budget as budget  # (where the decision is made, without the out-of-core module)

    monkeypatch.setattr(budget, "memory_available", lambda: 1000)
    monkeypatch.setattr(ooc, "evaluate_paths", lambda *a, **k: "out of core")
    assert ragrade.evaluate(qp, rp, ["ndcg"]) == "out of core"


@pytest.mark.parametrize("how", WAYS)
def test_every_registry_metric(tmp_path, how):
    rng = np.random.default_rng(16)
    case = random_case(rng, 90)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    want = quiet(ragrade.evaluate, qp, rp, REGISTRY)
    assert_same(out_of_core(qp, rp, REGISTRY, how), want)


def skewed(case):
    """The top grade (5) in one query only: a piece without that query would see a lower top grade."""
    first = next(iter(case.qrels))
    case.qrels[first][next(iter(case.qrels[first]))] = 5
    for q in list(case.qrels)[1:]:
        case.qrels[q] = {d: min(g, 1) for d, g in case.qrels[q].items()}
    return case


@pytest.mark.parametrize("how", WAYS)
def test_values_that_read_the_whole_ground_truths_top_grade(tmp_path, how):
    """C/W/L measures without max_rel and unjudged='bounds' without upper_grade read the top grade of the
    whole ground truth: the pieces are told it, and the result says what the caller asked."""
    rng = np.random.default_rng(17)
    case = skewed(random_case(rng, 90))
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    metrics = ["rbp_cwl", "nerr8@5", "inst", "bpm@10", "ndcg@10", "rbp_cwl(max_rel=5)", "P@5"]
    for options in ({}, {"unjudged": "bounds"}, {"unjudged": "bounds", "upper_grade": 2}, {"unjudged": "condensed"}):
        want = quiet(ragrade.evaluate, qp, rp, metrics, **options)
        got = out_of_core(qp, rp, metrics, how, **options)
        assert_same(got, want)
        assert "rbp_cwl(max_rel=5)" in got.per_query  # equal to rbp_cwl once pinned: kept as its own column


def test_the_pieces_would_differ_without_the_top_grade(tmp_path):
    """The case above is a real one: unpinned pieces give other values."""
    rng = np.random.default_rng(17)
    case = skewed(random_case(rng, 90))
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    want = quiet(ragrade.evaluate, qp, rp, ["rbp_cwl"], unjudged="bounds")
    got = out_of_core(qp, rp, ["rbp_cwl"], "partition", pinned=False, unjudged="bounds")
    assert not got.per_query.equals(want.per_query) or not got.upper.equals(want.upper)


def test_evaluate_with_max_memory_tells_the_pieces_the_top_grade(tmp_path, monkeypatch):
    """Through ragrade.evaluate (the way users call it): many pieces, the values of the whole."""
    import ragrade.scale.outofcore as ooc

    monkeypatch.setattr(ooc.Sizes, "of", classmethod(lambda cls, budget: tiny()))
    rng = np.random.default_rng(18)
    case = skewed(random_case(rng, 80))
    qp, rp = write_trec(tmp_path, *rows_of(case, rng, shuffle_run=True))  # the partitioned way
    metrics = ["rbp_cwl", "sdcg@5", "ndcg@5", "rbp_cwl(max_rel=5)"]
    for options in ({}, {"unjudged": "bounds"}):
        want = quiet(ragrade.evaluate, qp, rp, metrics, **options)
        assert_same(quiet(ragrade.evaluate, qp, rp, metrics, max_memory="16MiB", **options), want)


def test_the_cli_out_of_core_tells_the_pieces_the_top_grade(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    import ragrade.scale.outofcore as ooc
    from ragrade.cli import main

    monkeypatch.setattr(ooc.Sizes, "of", classmethod(lambda cls, budget: tiny()))
    rng = np.random.default_rng(19)
    case = skewed(random_case(rng, 60))
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    args = ["evaluate", qp, rp, "-m", "rbp_cwl", "-m", "ndcg@5", "--unjudged", "bounds", "--format", "json",
            "--per-query"]
    mem = CliRunner().invoke(main, args)
    ooc_run = CliRunner().invoke(main, [*args, "--max-memory", "16MiB"])
    assert mem.exit_code == ooc_run.exit_code == 0, ooc_run.output
    assert json.loads(ooc_run.stdout) == json.loads(mem.stdout)


def test_a_run_not_grouped_in_its_first_lines_goes_straight_to_partitions(tmp_path):
    rng = np.random.default_rng(20)
    case = random_case(rng, 80)
    qp, rp = write_trec(tmp_path, *rows_of(case, rng, shuffle_run=True))
    want = quiet(ragrade.evaluate, qp, rp, METRICS)
    report: dict = {}
    assert_same(out_of_core(qp, rp, METRICS, None, report=report), want)
    assert report["tried"] == ["partition"]
    qp, rp = write_trec(tmp_path, *rows_of(case, rng))
    report = {}
    assert_same(out_of_core(qp, rp, METRICS, None, report=report), quiet(ragrade.evaluate, qp, rp, METRICS))
    assert report["tried"][0] == "memory_qrels" and report["way"] == "memory_qrels"
