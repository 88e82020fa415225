"""Validity: how alike a synthetic test set and a (here simulated) human-labelled one rank the same systems —
``ragrade.assessment.testsets`` against slow references (means through ``ragrade.evaluate``, Kendall's tau-b
from scipy, the top-k overlap and the two-set bootstrap written out), and ``ragrade agreement --candidate-run``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import ragrade
from ragrade.assessment.testsets import set_agreement
from ragrade.cli import main
from ragrade.data import Run
from ragrade.spans import chunk_corpus, chunk_texts, fixed, project, read_corpus, write_chunks
from ragrade.synthesis.lexical import BM25

from . import scripted

SYSTEMS = {"exact": 0.0, "noisy": 0.3, "noisier": 0.6, "random": 1.0}


def _runs(chunks, corpus, topics, seed):
    """A BM25 ranking of the chunks, each system replacing that share of each list by random chunks."""
    rng = np.random.default_rng(seed)
    index = BM25.build(chunk_texts(corpus, chunks))
    ids = chunks.chunk_id.tolist()
    out = {name: {} for name in SYSTEMS}
    for q, text in topics.items():
        order = np.argsort(-index.scores(text), kind="stable")[:10].tolist()
        for name, noise in SYSTEMS.items():
            mine = [i if rng.random() >= noise else int(rng.integers(len(ids))) for i in order]
            out[name][q] = {ids[i]: 10.0 - r for r, i in enumerate(dict.fromkeys(mine))}
    return {name: Run.from_dict(r) for name, r in out.items()}


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sets")
    docs = tmp / "docs"
    scripted.write_corpus(docs, scripted.corpus(paragraphs=4))
    corpus = read_corpus(docs)
    chunks = chunk_corpus(corpus, fixed(250))
    write_chunks(chunks, tmp / "chunks.jsonl")
    synth = ragrade.synthesize(docs, 16, judge=scripted.ScriptedJudge(), cache=False, output=tmp / "synth", seed=1,
                               passage_chars=500, min_passage_chars=100)
    human = ragrade.synthesize(docs, 10, judge=scripted.ScriptedJudge(), cache=False, seed=2, mix="single=1",
                               passage_chars=300, min_passage_chars=100)
    human_topics = {f"h{q[1:]}": t for q, t in human.topics.items()}
    qrels = project(human.spans, chunks)
    human_qrels = ragrade.Qrels.from_dict({f"h{q[1:]}": d for q, d in qrels.to_dict().items()})
    ragrade.write_qrels(human_qrels, tmp / "human.qrels")
    human_runs = _runs(chunks, corpus, human_topics, 11)
    synth_runs = _runs(chunks, corpus, synth.topics, 12)
    for name in SYSTEMS:
        ragrade.write_run(human_runs[name], tmp / f"human_{name}.tsv")
        ragrade.write_run(synth_runs[name], tmp / f"synth_{name}.tsv")
    return tmp, docs, chunks, human_qrels, human_runs, synth_runs


def _slow_kendall(x, y):
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic)


def test_the_two_set_measures_equal_slow_references(two_sets):
    tmp, docs, chunks, _, human_runs, synth_runs = two_sets
    opts = {"chunks": chunks, "corpus": docs}
    got = set_agreement(tmp / "human.qrels", human_runs, tmp / "synth" / "spans.jsonl", synth_runs,
                            ["ndcg@10", "recall@10"], top_k=2, n_resamples=60, seed=5, reference_options=opts,
                            candidate_options=opts)
    for metric, a in got.items():
        ref = {s: ragrade.evaluate(tmp / "human.qrels", human_runs[s], metric, **opts).means[metric] for s in SYSTEMS}
        cand = {s: ragrade.evaluate(tmp / "synth" / "spans.jsonl", synth_runs[s], metric, **opts).means[metric]
                for s in SYSTEMS}
        assert a.systems == tuple(SYSTEMS)
        np.testing.assert_allclose(a.reference_means, [ref[s] for s in SYSTEMS], rtol=1e-12)
        np.testing.assert_allclose(a.candidate_means, [cand[s] for s in SYSTEMS], rtol=1e-12)
        x, y = list(ref.values()), list(cand.values())
        assert a.values["kendall_tau"] == pytest.approx(_slow_kendall(x, y), abs=1e-12)
        top_ref = sorted(SYSTEMS, key=lambda s: (-ref[s], s))[:2]
        top_cand = sorted(SYSTEMS, key=lambda s: (-cand[s], s))[:2]
        assert a.values["top_k_overlap"] == len(set(top_ref) & set(top_cand)) / 2
        lo, hi = a.intervals["kendall_tau"]
        assert lo is not None and -1.0 <= lo <= hi <= 1.0
        assert a.queries == (10, 16)
        _check_bootstrap(a, tmp, human_runs, synth_runs, metric, opts)


def _check_bootstrap(a, tmp, human_runs, synth_runs, metric, opts):
    """The interval of Kendall's tau, resampling the two sets' queries independently, written out slowly."""
    per = {}
    for name, truth, runs in (("ref", tmp / "human.qrels", human_runs), ("cand", tmp / "synth" / "spans.jsonl",
                                                                         synth_runs)):
        frames = {s: ragrade.evaluate(truth, runs[s], metric, **opts).per_query[metric] for s in SYSTEMS}
        queries = list(frames["exact"].index)
        per[name] = np.array([[frames[s].get(q, np.nan) for s in SYSTEMS] for q in queries])
    rng = np.random.default_rng(5)
    taus = []
    for _ in range(60):
        draws = {}
        for name in ("ref", "cand"):
            m = per[name]
            pick = rng.integers(0, m.shape[0], size=m.shape[0])
            draws[name] = np.nanmean(m[pick], axis=0)
        taus.append(_slow_kendall(draws["ref"], draws["cand"]))
    taus = np.array([t for t in taus if np.isfinite(t)])
    want = np.quantile(taus, [0.025, 0.975])
    np.testing.assert_allclose(a.intervals["kendall_tau"], want, rtol=1e-12, atol=1e-12)


def test_the_command(two_sets):
    tmp, docs, *_ = two_sets
    args = ["agreement", str(tmp / "human.qrels"), str(tmp / "synth" / "spans.jsonl"),
            *(str(tmp / f"human_{s}.tsv") for s in SYSTEMS),
            *(x for s in SYSTEMS for x in ("--candidate-run", str(tmp / f"synth_{s}.tsv"))),
            "--chunks", str(tmp / "chunks.jsonl"), "--corpus", str(docs), "-m", "ndcg@10", "--resamples", "50",
            "--top-k", "2"]
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)["ndcg@10"]
    assert set(data["systems"]) == {f"human_{s}" for s in SYSTEMS} and data["k"] == 2
    assert data["kendall_tau_ci"][0] <= data["kendall_tau"] <= data["kendall_tau_ci"][1] or data["kendall_tau"] is None
    table = CliRunner().invoke(main, args)
    assert table.exit_code == 0 and "Kendall tau-b" in table.output and "top-k overlap" in table.output
    md = CliRunner().invoke(main, [*args, "--format", "markdown"])
    assert md.exit_code == 0 and "| system |" in md.output
    bad = CliRunner().invoke(main, [*args, "--candidate-run", str(tmp / "synth_exact.tsv")])  # 5 for 4 runs
    assert bad.exit_code == 2 and "one --candidate-run per run" in bad.output
    lone = CliRunner().invoke(main, ["agreement", str(tmp / "human.qrels"), str(tmp / "human.qrels"), "--chunks",
                                     str(tmp / "chunks.jsonl")])
    assert lone.exit_code == 2 and "--candidate-run" in lone.output
