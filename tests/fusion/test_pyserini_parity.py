"""``profile="pyserini"`` against the real pyserini: ``pyserini.fusion`` (``reciprocal_rank_fusion``,
``interpolation``, ``average``, ``normalize``) over ``pyserini.trectools.TrecRun`` read from the same TREC
files. pyserini's package pulls torch, transformers and Lucene's jars through pyjnius, but its fusion and
trectools modules import only NumPy and pandas, so .ci/run installs it with ``--no-deps``; these tests fail
in CI (``CI`` set) when it is missing and skip elsewhere.

Every case compares, query by query, the documents in the order pyserini writes them (score descending,
then document id) and the fused values (1e-12; pandas sums the runs of a document with Kahan's compensated
sum, which ragrade follows, so values are in fact equal to the bit)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ragrade
from ragrade.errors import InputError

from ._gen import need, random_runs

pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")  # inside pyserini

WHY = "pyserini is installed by .ci/run (pip install --no-deps pyserini==1.6.0: its fusion needs NumPy and pandas)"


def _pyserini():
    need("pyserini.fusion", WHY)
    from pyserini import fusion
    from pyserini.trectools import TrecRun

    return fusion, TrecRun


def _ranked(docs: dict[str, float]) -> list[tuple[str, float]]:
    """A list as a searcher writes it: score descending, equal scores in input order."""
    return sorted(docs.items(), key=lambda kv: -kv[1])


def _runs(seed: int, n_runs: int) -> list[dict]:
    """random_runs (many ties, one list of equal scores, one-document queries, documents in only some
    runs) with a few queries left out of some runs."""
    runs = random_runs(seed, n_runs=n_runs, n_queries=9, max_len=30)
    for i, run in enumerate(runs[1:], start=1):
        del run[f"q{(seed + i) % 9}"]
    return runs


def _permuted(seed: int, n_runs: int, n_docs: int = 25) -> list[dict]:
    """Every run ranks the same documents in another order: many RRF sums are equal in exact arithmetic
    and differ, if at all, in the last bit of the floating-point sum (the order then rests on how the sum
    is taken, and on the document id)."""
    rng = np.random.default_rng(seed)
    runs: list[dict] = [{} for _ in range(n_runs)]
    for q in range(4):
        for run in runs:
            docs = rng.permutation(n_docs)
            run[f"q{q}"] = {f"d{d:02d}": float(n_docs - i) for i, d in enumerate(docs)}
    return runs


def _write(runs: list[dict], tmp: Path, shuffle: int | None = None) -> list[str]:
    """TREC files: each query's lines in score order, ranks 1..n (what pyserini's searchers write); with
    ``shuffle``, every line of a file in a random place and a meaningless rank (read with ``resort``)."""
    paths = []
    for i, run in enumerate(runs):
        lines = [(q, d, r, s) for q, docs in run.items() for r, (d, s) in enumerate(_ranked(docs), start=1)]
        if shuffle is not None:
            rng = np.random.default_rng(shuffle + i)
            lines = [lines[j] for j in rng.permutation(len(lines))]
            lines = [(q, d, int(rng.integers(0, 50)), s) for q, d, _, s in lines]
        path = tmp / f"run{i}.trec"
        path.write_text("".join(f"{q} Q0 {d} {r} {s!r} run{i}\n" for q, d, r, s in lines))
        paths.append(str(path))
    return paths


def _reference(method: str, paths: list[str], p: dict, resort: bool = False):
    fusion, TrecRun = _pyserini()
    trs = [TrecRun(path, resort=resort) for path in paths]
    depth, k = p.get("depth"), p.get("top_k")
    if method == "rrf":
        return fusion.reciprocal_rank_fusion(trs, rrf_k=p.get("k", 60), depth=depth, k=k)
    if method == "interpolation":
        return fusion.interpolation(trs, alpha=p.get("alpha", 0.5), depth=depth, k=k)
    if method == "average":
        return fusion.average(trs, depth=depth, k=k)
    return fusion.normalize(trs, depth=depth, k=k)


def _compare(ref, ours: ragrade.Run) -> tuple[int, int, float]:
    """(queries, values compared, largest difference); fails on any difference of order or membership."""
    data = ref.run_data
    topics = [str(t) for t in data["topic"].unique()]
    assert sorted(topics) == sorted(str(q) for q in ours.query_ids)
    n, worst = 0, 0.0
    for topic, rows in data.groupby("topic", sort=False):
        q = str(topic)
        assert list(rows["rank"]) == list(range(1, len(rows) + 1)), q
        got = ours.ranked(q, ties="input")
        assert [d for d, _ in got] == list(rows["docid"]), q
        mine, theirs = np.array([v for _, v in got]), rows["score"].to_numpy(dtype=np.float64)
        same = (mine == theirs) | (np.isnan(mine) & np.isnan(theirs))  # infinite and NaN values too
        with np.errstate(invalid="ignore"):
            diff = np.where(same, 0.0, np.abs(mine - theirs))
        assert not np.isnan(diff).any(), q
        worst = max(worst, float(diff.max(initial=0.0)))
        n += len(rows)
    assert worst <= 1e-12
    return len(topics), n, worst


CASES = [  # (method, runs, ragrade's params: k is pyserini's rrf_k, top_k pyserini's k)
    ("rrf", 3, {}),
    ("rrf", 2, {"k": 10, "depth": 7, "top_k": 9}),
    ("rrf", 4, {"k": 1, "depth": None, "top_k": None}),
    ("rrf", 3, {"k": 60, "depth": 1, "top_k": 3}),
    ("interpolation", 2, {}),
    ("interpolation", 2, {"alpha": 0.3, "depth": 5, "top_k": 8}),
    ("interpolation", 2, {"alpha": 1.0, "depth": None, "top_k": None}),
    ("interpolation", 2, {"alpha": 0.0, "depth": 12, "top_k": 2}),
    ("average", 2, {}),
    ("average", 3, {"depth": 6, "top_k": 10}),
    ("average", 5, {"depth": None, "top_k": None}),
    ("normalize", 2, {}),
    ("normalize", 3, {"depth": 4, "top_k": 7}),
    ("normalize", 4, {"depth": None, "top_k": None}),
]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("method, n_runs, params", CASES)
def test_files_in_score_order(method: str, n_runs: int, params: dict, seed: int, tmp_path: Path) -> None:
    runs = _runs(100 + seed, n_runs)
    paths = _write(runs, tmp_path)
    ref = _reference(method, paths, params)
    _compare(ref, ragrade.fuse(paths, method=method, profile="pyserini", params=params))
    # the same runs given as dicts: read in the same order (score descending, ties as listed)
    _compare(ref, ragrade.fuse(runs, method=method, profile="pyserini", params=params))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method, n_runs, params", CASES[::2])
def test_shuffled_files_read_with_resort(method: str, n_runs: int, params: dict, seed: int,
                                         tmp_path: Path) -> None:
    """Lines out of order and ranks that mean nothing: pyserini's ``resort=True`` sorts each query's
    lines by score (stable) and ranks them 1..n, the order ragrade reads any run in."""
    runs = _runs(200 + seed, n_runs)
    paths = _write(runs, tmp_path, shuffle=seed)
    ref = _reference(method, paths, params, resort=True)
    _compare(ref, ragrade.fuse(paths, method=method, profile="pyserini", params=params))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("method, n_runs", [("rrf", 3), ("rrf", 5), ("average", 3), ("normalize", 4)])
def test_near_ties_of_permuted_lists(method: str, n_runs: int, seed: int, tmp_path: Path) -> None:
    runs = _permuted(300 + seed, n_runs)
    paths = _write(runs, tmp_path)
    params = {"k": 2} if method == "rrf" else {}
    ref = _reference(method, paths, params)
    _compare(ref, ragrade.fuse(paths, method=method, profile="pyserini", params=params))


def test_aliases_and_defaults(tmp_path: Path) -> None:
    """``method`` names are case-insensitive (``interpolate``, ``avg``, ``norm``); the defaults are
    pyserini's command line's (rrf_k 60, depth 1000, k 1000): lists longer than 1000 are cut."""
    fusion, TrecRun = _pyserini()
    rng = np.random.default_rng(7)
    runs = [{"q1": {f"d{d}": float(s) for d, s in zip(rng.permutation(1500), rng.normal(size=1200), strict=False)}}
            for _ in range(2)]
    paths = _write(runs, tmp_path)
    trs = [TrecRun(p) for p in paths]
    cases = [("RRF", fusion.reciprocal_rank_fusion(trs, rrf_k=60, depth=1000, k=1000)),
             ("interpolate", fusion.interpolation(trs, alpha=0.5, depth=1000, k=1000)),
             ("avg", fusion.average(trs, depth=1000, k=1000)),
             ("norm", fusion.normalize(trs, depth=1000, k=1000))]
    for method, ref in cases:
        ours = ragrade.fuse(paths, method=method, profile="pyserini")
        assert _compare(ref, ours)[1] == 1000


def test_both_refuse_interpolating_three_runs(tmp_path: Path) -> None:
    fusion, TrecRun = _pyserini()
    paths = _write(_runs(5, 3), tmp_path)
    with pytest.raises(Exception, match="exactly two runs"):
        fusion.interpolation([TrecRun(p) for p in paths])
    with pytest.raises(InputError, match="exactly two runs"):
        ragrade.fuse(paths, method="interpolation", profile="pyserini")


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # pyserini's own inf - inf
@pytest.mark.parametrize("method", ["rrf", "average", "normalize"])
def test_infinite_scores(method: str, tmp_path: Path) -> None:
    """+-inf scores: an infinite sum stays infinite (pandas resets a NaN compensation); ``normalize``
    turns a list holding both infinities into NaN values, which pandas' sum skips."""
    inf = float("inf")
    runs = [{"q1": {"a": inf, "b": 1.0, "c": -inf}, "q2": {"x": inf, "y": 2.0}, "q3": {"n": inf, "m": 1.0}},
            {"q1": {"a": 2.0, "b": inf, "d": 0.5}, "q2": {"y": -1.0, "z": -inf}, "q3": {"n": -inf, "o": 1.0}},
            {"q1": {"c": 1.0, "a": 3.0}, "q2": {"z": 0.0, "x": 0.0}, "q3": {"o": 0.0, "m": 2.0}}]
    paths = _write(runs, tmp_path)
    ref = _reference(method, paths, {})
    assert _compare(ref, ragrade.fuse(paths, method=method, profile="pyserini")) == (3, 10, 0.0)


@pytest.mark.parametrize("method, n_runs", [("rrf", 3), ("interpolation", 2), ("average", 4), ("normalize", 3)])
def test_written_file_is_pyserinis(method: str, n_runs: int, tmp_path: Path) -> None:
    """What ``python -m pyserini.fusion --runtag pyserini.fusion`` writes (``save_to_txt``) and what
    ``write_run`` writes for the run fused with ``name="pyserini.fusion"`` in ``ties="input"`` order: the
    same lines (query, Q0, document, rank, tag), the same numbers (pandas writes ``2.0`` where ragrade
    writes ``2``)."""
    from ragrade.io import write_run

    paths = _write(_runs(400 + n_runs, n_runs), tmp_path)
    ref = _reference(method, paths, {"depth": 1000, "top_k": 1000})
    ref.save_to_txt(str(tmp_path / "pyserini.txt"), tag="pyserini.fusion")
    ours = ragrade.fuse(paths, method=method, profile="pyserini", name="pyserini.fusion")
    write_run(ours, tmp_path / "ours.trec", ties="input")
    theirs = [ln.split() for ln in (tmp_path / "pyserini.txt").read_text().splitlines()]
    mine = [ln.split() for ln in (tmp_path / "ours.trec").read_text().splitlines()]
    assert len(mine) == len(theirs) > 100
    for a, b in zip(mine, theirs, strict=True):
        assert a[:4] + a[5:] == b[:4] + b[5:] and float(a[4]) == float(b[4]), (a, b)
