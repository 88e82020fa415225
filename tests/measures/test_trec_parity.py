"""``-m all_trec`` per query against pytrec_eval (trec_eval 9 inside), to 1e-12.

Random collections with unjudged documents, ties (scores on a grid of 1/8, exact in pytrec_eval's float32),
graded and negative grades, queries on one side only, empty lists and relevance levels 1 and 2. ragrade
runs with trec_eval's conventions (``profile``-free: ``no_relevant="zero"``, ``missing_run="drop"``).
Measures that read gains (``ndcg``, ``ndcg_cut``, ``ndcg_rel``, ``Rndcg``, ``G``) are computed on qrels
whose negative grades are 0 (pytrec_eval corrupts its memory on negative grades there, see
docs/conventions.md; a negative grade and grade 0 gain the same), every other measure on the original
qrels. trec_eval 10's measures (``rbp``, ``rbp_resid``, ``unj``) are checked in test_trec10_vectors.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ragrade
from ragrade.engine.labels import with_rel_level
from ragrade.metrics import parse_metric
from reference import random_case

pytrec_eval = pytest.importorskip("pytrec_eval")
pytestmark = pytest.mark.filterwarnings("ignore::ragrade.RagradeWarning")

GAIN_MEASURES = {"ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G"}
TREC10_ONLY = {"rbp", "rbp_resid", "unj"}
NOT_NUMBERS = {"runid", "relstring"}
GEOMETRIC = {"gm_map", "gm_bpref"}  # pytrec_eval reports log(max(value, 1e-5)) per query


def clamp(qrels):
    return {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in qrels.items()}


def trec_values(qrels, run, rel: int, extra: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    gain = GAIN_MEASURES
    rest = {"all_trec"}
    for measures, judged in ((gain, clamp(qrels)), (rest, qrels)):
        ev = pytrec_eval.RelevanceEvaluator(judged, measures, relevance_level=rel)
        for q, values in ev.evaluate(run).items():
            for name, v in values.items():
                base = name.split("_")[0] if name.startswith(("ndcg_cut", "ndcg_rel")) else name
                if measures is rest and (name.startswith(("ndcg", "Rndcg")) or name == "G"):
                    continue
                del base
                out.setdefault(q, {})[name] = v
    return out


def ours(qrels, run, rel: int):
    """Per-query values under every trec_eval output name (a metric trec_eval names twice, as Rprec and
    Rprec_mult_1.00, is one ragrade column: it is looked up under both names)."""
    kw = dict(profile="pytrec_eval")  # trec_eval 9's interpolated precision, names read as trec_eval's
    gain = ragrade.evaluate(clamp(qrels), run, ["ndcg", "ndcg_cut", "ndcg_rel", "Rndcg", "G"], rel_level=rel, **kw)
    rest = ragrade.evaluate(qrels, run, ["all_trec"], rel_level=rel, **kw)
    return gain, rest


def column(results, name, rel):
    metric = with_rel_level(parse_metric(name), rel)
    for res in results:
        label = res.means.label_of(name) if name in res.per_query.columns else res.means.label_of(metric)
        if label is not None:
            return res.per_query[label]
    raise KeyError(name)


def compare(qrels, run, rel: int) -> tuple[int, float]:
    want = trec_values(qrels, run, rel)
    results = ours(qrels, run, rel)
    index = results[1].per_query.index
    assert sorted(want) == sorted(index), (sorted(want), list(index))
    names = {name for values in want.values() for name in values} - NOT_NUMBERS
    cols = {name: column(results if name.startswith(("ndcg", "Rndcg")) or name == "G" else results[1:], name, rel)
            for name in names}
    n, worst = 0, 0.0
    for q, values in want.items():
        for name, w in values.items():
            if name in NOT_NUMBERS:
                continue
            g = float(cols[name][q])
            if name in GEOMETRIC:
                g = math.log(max(g, 1e-5))
            if math.isnan(w) and not run.get(q):
                # trec_eval divides 0 by 0 for interpolated precision of an empty list; ragrade says 0
                # (docs/conventions.md, trec_eval differences).
                assert name.startswith(("iprec_at_recall", "11pt_avg")) and g == 0.0, (q, name, g)
                continue
            assert math.isclose(g, w, rel_tol=0, abs_tol=1e-12), (q, name, g, w, qrels[q], run.get(q))
            worst = max(worst, abs(g - w))
            n += 1
    return n, worst


@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", range(8))
def test_all_trec_per_query(seed, rel):
    rng = np.random.default_rng(4000 + seed)
    case = random_case(rng, n_queries=40, allow_empty=True)
    n, worst = compare(case.qrels, case.run, rel)
    print(f"\nall_trec from dicts, seed {seed}, -l {rel}: {n} values, max difference {worst:.3g}")
    assert n > 2500


def test_all_trec_long_tied_lists():
    rng = np.random.default_rng(7)
    qrels, run = {}, {}
    for i in range(25):
        docs = [f"doc{j}" for j in range(80)]
        qrels[f"q{i}"] = {d: int(rng.choice([0, 1, 2, 3, -1])) for d in rng.choice(docs, 25, replace=False)}
        run[f"q{i}"] = {d: float(rng.choice([0.5, 0.25, 0.125])) for d in rng.choice(docs, 60, replace=False)}
    assert compare(qrels, run, 1)[0] > 2000
    assert compare(qrels, run, 2)[0] > 2000


# -- the same through the command line, from TREC files with duplicate lines ------------------------------


def _write(path, qrels=None, run_rows=None):
    if qrels is not None:
        path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    else:
        path.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} r\n" for q, rows in run_rows.items()
                                for i, (d, s) in enumerate(rows)))
    return path


def _cli_json(*args):
    import json

    from click.testing import CliRunner

    from ragrade.cli import main

    res = CliRunner().invoke(main, ["evaluate", *map(str, args), "--per-query", "--format", "json",
                                    "--profile", "pytrec_eval", "--no-relevant", "zero", "--missing-run", "drop", "--duplicates", "keep_last"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("seed", range(4))
def test_cli_all_trec_from_files_with_duplicates(seed, tmp_path):
    """``ragrade evaluate QRELS RUN -m all_trec --per-query --format json`` against pytrec_eval reading the
    same files, the run read as a dict in which a document listed twice keeps its last line (ragrade's
    ``--duplicates keep_last``, what ir-measures and ranx do; trec_eval and pytrec_eval's ``parse_run``
    refuse such a file: ragrade's ``--duplicates error``, checked too). Every trec_eval 9 output name is
    looked up in the JSON as printed."""
    rng = np.random.default_rng(6000 + seed)
    case = random_case(rng, n_queries=40, allow_empty=True)
    rows = {q: list(docs.items()) for q, docs in case.run.items()}
    n_dup = 0
    for r in rows.values():
        if r and rng.random() < 0.4:
            d, _ = r[int(rng.integers(len(r)))]
            r.insert(int(rng.integers(len(r) + 1)), (d, float(rng.choice(np.arange(8) / 8))))
            n_dup += 1
    qp = _write(tmp_path / "qrels.txt", qrels=case.qrels)
    cp = _write(tmp_path / "qrels_clamped.txt", qrels=clamp(case.qrels))
    rp = _write(tmp_path / "run.txt", run_rows=rows)
    with open(qp) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(cp) as f:
        clamped = pytrec_eval.parse_qrel(f)
    run: dict[str, dict[str, float]] = {}  # pytrec_eval's parse_run refuses duplicates: the last line wins
    for line in rp.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    rest = _cli_json(qp, rp, "-m", "all_trec")["per_query"]
    gain = _cli_json(cp, rp, "-m", "ndcg", "-m", "ndcg_cut", "-m", "ndcg_rel", "-m", "Rndcg", "-m", "G")["per_query"]
    want_rest = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)
    want_gain = pytrec_eval.RelevanceEvaluator(clamped, GAIN_MEASURES).evaluate(run)
    assert sorted(rest) == sorted(want_rest)
    n, worst = 0, 0.0
    for q, values in want_rest.items():
        for name, w in {**values, **want_gain[q]}.items():
            if name in NOT_NUMBERS:
                continue
            is_gain = name.startswith(("ndcg", "Rndcg")) or name == "G"
            if is_gain and name not in want_gain[q]:
                continue  # gain measures are compared on the clamped qrels only
            got = (gain if is_gain else rest)[q]
            g = got[name]
            if name in GEOMETRIC:
                g = math.log(max(g, 1e-5))
            assert math.isclose(g, w, rel_tol=0, abs_tol=1e-12), (q, name, g, w)
            worst = max(worst, abs(g - w))
            n += 1
    from click.testing import CliRunner

    from ragrade.cli import main

    refused = CliRunner().invoke(main, ["evaluate", str(qp), str(rp), "-m", "P", "--duplicates", "error"])
    assert refused.exit_code != 0 and "duplicate" in refused.output.lower()
    print(f"\nall_trec through the CLI, seed {seed}: {n} values, {n_dup} duplicate lines, max difference {worst:.3g}")
    assert n > 2500 and n_dup > 5
