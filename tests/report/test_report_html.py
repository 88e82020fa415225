"""The HTML report as text: payload, escaping, self-containment, every input shape compare accepts (the
browser test opens it for real)."""

from __future__ import annotations

import base64
import hashlib
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from report_synth import XSS, make_data, per_query_scores

import ragrade
from ragrade.comparison import compare_scores
from ragrade.errors import InputError, RagradeError, RagradeWarning
from ragrade.report import read_payload, render_comparison_html, render_html, write_html
from ragrade.report._assets import CSS, JS
from ragrade.report.data import build_payload, default_depth, pack_payload, ranked_lists, unpack_payload


def _items(p: dict, run: int, query: int) -> tuple[list, list]:
    """(shown items, missed items) of one run and query, with document ids spelled out."""
    A, docs = p["arrays"], p["docs"]
    to, mo = A[f"to{run}"], A[f"mo{run}"]
    shown = [
        [docs[A[f"td{run}"][k]], _num(A[f"ts{run}"][k]), _num(A[f"tg{run}"][k])]
        for k in range(to[query], to[query + 1])
    ]
    missed = [
        [docs[A[f"md{run}"][k]], _num(A[f"mg{run}"][k]), int(A[f"mr{run}"][k])]
        for k in range(mo[query], mo[query + 1])
    ]
    return shown, missed


def _num(v: float) -> float | None:
    return None if np.isnan(v) else float(v)


def _payload(cmp, qrels, runs, **kw) -> dict:
    header, arrays = build_payload(cmp.scores, cmp.metrics, qrels, runs, **kw)
    return unpack_payload(pack_payload(header, arrays))


def test_ranking_of_mappings_follows_score_then_docid_descending() -> None:
    run = {"q": {"d1": 1.0, "d9": 1.0, "d10": 2.0, "d2": 0.5}}
    assert [d for d, _ in ranked_lists(run, ["q"])["q"]] == ["d10", "d9", "d1", "d2"]
    assert ranked_lists({"q": ["b", "a"]}, ["q", "missing"]) == {"q": [("b", None), ("a", None)], "missing": []}


def test_default_depth_is_the_largest_cutoff() -> None:
    assert default_depth(["ndcg@10", "recall@100", "rr"]) == 100
    assert default_depth(["map"]) == 10


def test_payload_marks_relevance_and_missed_items() -> None:
    qrels = {"q1": {"a": 2, "b": 0, "c": 1, "z": 1}}
    runs = {"x": {"q1": {"a": 3.0, "b": 2.0, "y": 1.5, "c": 1.0}}, "y": {"q1": {"c": 1.0}}}
    scores = {"x": pd.DataFrame({"m@2": [0.5]}, index=["q1"]), "y": pd.DataFrame({"m@2": [0.2]}, index=["q1"])}
    cmp = compare_scores(scores, n_resamples=10)
    header, arrays = build_payload(cmp.scores, cmp.metrics, qrels, runs, texts={"a": "text of a"},
                                   queries={"q1": "the query"})
    p = unpack_payload(pack_payload(header, arrays))
    assert p["depth"] == 2 and p["qids"] == ["q1"] and p["nrel"] == [3]
    shown, missed = _items(p, 0, 0)
    assert shown == [["a", 3.0, 2.0], ["b", 2.0, 0.0]]
    assert missed == [["c", 1.0, 4], ["z", 1.0, -1]]  # c retrieved below the cutoff, z never
    assert p["doctext"][p["docs"].index("a")] == "text of a"
    assert p["doctext"][p["docs"].index("b")] is None
    assert p["qtext"] == ["the query"]
    np.testing.assert_array_equal(p["arrays"]["s0_0"], [0.5])
    np.testing.assert_array_equal(p["arrays"]["s0_1"], [0.2])


def test_payload_with_duplicates_negative_grades_and_unknown_queries() -> None:
    qrels = {"q1": {"a": 1, "b": -1, "c": 2}, "q2": {"d": 1}}
    runs = {
        "x": {"q1": ["b", "a", "a", "e", "c"], "q9": ["zz"]},  # a twice; q9 not compared; q2 not retrieved
        "y": {"q1": ["c"], "q2": ["d"]},
    }
    scores = {r: pd.DataFrame({"m@2": [0.1, 0.2]}, index=["q1", "q2"]) for r in runs}
    p = _payload(compare_scores(scores, n_resamples=10), qrels, runs)
    assert _items(p, 0, 0) == ([["b", None, -1.0], ["a", None, 1.0]], [["c", 2.0, 5]])
    assert _items(p, 0, 1) == ([], [["d", 1.0, -1]])
    assert _items(p, 1, 0) == ([["c", None, 2.0]], [["a", 1.0, -1]])
    assert "zz" not in p["docs"] and p["nrel"] == [2, 1]


def test_missed_ranks_agree_between_the_dict_path_and_the_hash_path() -> None:
    """A dict of dicts is ranked by looking scores up; the same run as a Run object hashes every id. Ties
    in scores (docid_desc puts d9 before d1) must give the same ranks both ways."""
    rng = np.random.default_rng(4)
    qrels, run = {}, {}
    for q in range(60):
        docs = [f"d{j}" for j in range(30)]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs[:15]}
        scores = np.round(rng.random(30), 1)  # many ties
        run[f"q{q}"] = dict(zip(docs, scores.tolist(), strict=True))
    scores = {"a": pd.DataFrame({"m@3": rng.random(60)}, index=list(qrels)), "b": pd.DataFrame({"m@3": rng.random(60)}, index=list(qrels))}
    cmp = compare_scores(scores, n_resamples=10)
    from_dict = _payload(cmp, qrels, {"a": run, "b": run})
    from_run = _payload(cmp, qrels, {"a": ragrade.Run.from_dict(run), "b": ragrade.Run.from_dict(run)})
    for q in range(60):
        assert _items(from_dict, 0, q) == _items(from_run, 0, q)
    # and the ranks are the positions in Run.ranked (the engine's order)
    ranked = [d for d, _ in ragrade.Run.from_dict(run).ranked("q7")]
    for doc, _, rank in _items(from_dict, 0, 7)[1]:
        assert rank == (ranked.index(doc) + 1 if doc in ranked else -1)


def test_column_view_of_runs_matches_the_public_to_pandas() -> None:
    """report/data.py reads Run's columns directly until the engine documents a view; pin it here."""
    from ragrade.report.data import ranked_rows

    run = ragrade.Run.from_dict({"q2": {"a": 1.0, "b": 3.0}, "q1": {"c": 0.5, "d": 0.5, "e": 2.0}})
    rows = ranked_rows(run, "docid_desc")
    frame = run.to_pandas("docid_desc")
    assert list(np.repeat(rows.query_ids, np.diff(rows.offsets))) == list(frame["query"])
    assert list(rows.docs_at(rows.order)) == list(frame["doc"])
    np.testing.assert_array_equal(rows.scores[rows.order], frame["score"].to_numpy())


def test_pack_and_read_back(small_data, small_comparison) -> None:
    qrels, runs, texts, queries = small_data
    page = render_comparison_html(small_comparison, qrels, runs, texts=texts, queries=queries, plots=False)
    p = read_payload(page)
    assert p["qids"] == sorted(qrels) and p["runs"] == ["bm25", "dense"] and p["letters"] == ["a", "b"]
    assert p["pairs"] == [["bm25", "dense"]]
    np.testing.assert_allclose(p["arrays"]["s0_1"], small_comparison.scores["dense"]["ndcg@10"].to_numpy())
    with pytest.raises(InputError, match="no ragrade report data"):
        read_payload("<html></html>")


def test_report_is_self_contained_and_script_and_style_are_hash_locked(small_data, small_comparison) -> None:
    qrels, runs, texts, queries = small_data
    page = render_comparison_html(small_comparison, qrels, runs, texts=texts, queries=queries)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src &#x27;none&#x27;" in csp and "unsafe-inline" not in csp
    for block in (JS, CSS):
        digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
        assert f"sha256-{digest}" in csp
    assert f"<script>{JS}</script>" in page and f"<style>{CSS}</style>" in page
    assert page.count("<script") == 2  # the data block (not JavaScript) and the page script
    # nothing fetched from anywhere: no src/href pointing outside the file, no URL but SVG's namespace
    assert not re.search(r'\s(src|href)="(?!#)', page)
    assert not re.findall(r"https?://(?!www\.w3\.org/2000/svg)", page)


def test_user_data_never_appears_as_markup(small_data) -> None:
    qrels, runs, texts, queries = small_data
    evil = '<img src=x onerror="window.__pwned=3">'
    scores = per_query_scores(qrels, runs)
    cmp = compare_scores({"bm25": scores["bm25"], evil: scores["dense"]}, n_resamples=50)
    page = render_comparison_html(
        cmp, qrels, {"bm25": runs["bm25"], evil: runs["dense"]}, texts=texts, queries=queries, title="<b>t</b>"
    )
    assert evil not in page and "<b>t</b>" not in page and XSS not in page
    assert "&lt;img src=x onerror=&quot;window.__pwned=3&quot;&gt;" in page


def test_long_texts_are_truncated(small_comparison, small_data) -> None:
    qrels, runs, texts, _ = small_data
    long = dict(texts)
    long["q00000-d1"] = "x" * 5000
    p = _payload(small_comparison, qrels, runs, texts=long, max_text_chars=100)
    assert p["doctext"][p["docs"].index("q00000-d1")] == "x" * 100 + " …"


def test_missing_ranking_for_a_run_is_an_input_error(small_comparison, small_data) -> None:
    qrels, runs, _, _ = small_data
    with pytest.raises(InputError, match="no ranking"):
        build_payload(small_comparison.scores, small_comparison.metrics, qrels, {"bm25": runs["bm25"]})


def _figures(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<figure class="plot" data-kind="(\w+)"[^>]*data-name="([^"]+)"', page)


def test_every_plot_is_inline_svg_without_any_optional_package(monkeypatch, small_data) -> None:
    """Plots need nothing installed: even with matplotlib unimportable the page has them all."""
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    qrels, runs, _, _ = small_data
    page = render_html(qrels, runs, ["ndcg@10", "recall@5"], n_resamples=100, ks=(1, 5, 10),
                       hole_rates={"bm25": {1: 0.1, 10: 0.3}, "dense": {1: 0.0, 10: 0.2}})
    kinds = [k for k, _ in _figures(page)]
    assert kinds.count("curves") == 2 and kinds.count("distribution") == 2
    assert kinds.count("scatter") == 2 and kinds.count("difference") == 2 and kinds.count("hole_rate") == 1
    assert "data:image" not in page and page.count("<svg") == 9
    names = [n for _, n in _figures(page)]
    assert len(set(names)) == len(names) and "ndcg@10-scatter-bm25-vs-dense" in names


def test_render_html_honours_policies_depth_and_plot_options() -> None:
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}, "q3": {"d": 1}}
    runs = {
        "x": {"q1": {"a": 1.0, "z": 1.0, "b": 0.5}, "q2": {"c": 2.0}, "q3": {"y": 1.0}},
        "y": {"q1": {"z": 1.0, "a": 1.0}, "q2": {"w": 2.0, "c": 1.0}, "q3": {"d": 1.0}},
    }
    page = render_html(qrels, runs, ["ndcg@3", "rr"], n_resamples=100, ks=(1, 2, 3))
    data = read_payload(page)
    # default tie rule: equal scores ranked by document id descending (z before a)
    assert [d for d, _, _ in _items(data, 0, 0)[0]] == ["z", "a", "b"]
    stable = read_payload(render_html(qrels, runs, ["ndcg@3"], n_resamples=50, plots=False, ties="input"))
    assert [d for d, _, _ in _items(stable, 0, 0)[0]] == ["a", "z", "b"]
    assert [k for k, _ in _figures(page)].count("curves") == 1  # rr has no cutoff: no rr@k curve
    none = render_html(qrels, runs, ["ndcg@3"], n_resamples=50, plots=False)
    assert "<svg" not in none and 'id="plots"' not in none
    shallow = read_payload(render_html(qrels, runs, ["ndcg@3"], n_resamples=50, plots=False, depth=1))
    assert shallow["depth"] == 1 and len(_items(shallow, 0, 0)[0]) == 1


def _as_lists(qrels: dict, runs: dict) -> tuple[list, dict]:
    qids = sorted(qrels)
    gold = [[d for d, g in qrels[q].items() if g > 0] for q in qids]
    ranked = {n: [sorted(r[q], key=lambda d, r=r, q=q: (-r[q][d], d)) for q in qids] for n, r in runs.items()}
    return gold, ranked


def test_write_html_accepts_every_input_compare_accepts(tmp_path, small_data) -> None:
    """Dicts, ranked lists, aligned lists, DataFrames, Run/Qrels objects, file paths, runs as a list:
    the report's numbers are compare's numbers for each of them."""
    qrels, runs, _, _ = small_data
    qrels_obj = ragrade.Qrels.from_dict(qrels)
    run_objs = {n: ragrade.Run.from_dict(r, name=n) for n, r in runs.items()}
    paths = {}
    for n, r in run_objs.items():
        paths[n] = tmp_path / f"{n}.trec"
        ragrade.write_run(r, paths[n])
    ragrade.write_qrels(qrels_obj, tmp_path / "qrels.txt")
    frames = {n: r.to_pandas() for n, r in run_objs.items()}
    gold, ranked = _as_lists(qrels, runs)
    cases = {
        "dicts": (qrels, runs),
        "objects": (qrels_obj, run_objs),
        "list of runs": (qrels, list(run_objs.values())),
        "paths": (str(tmp_path / "qrels.txt"), {n: str(p) for n, p in paths.items()}),
        "dataframes": (qrels_obj.to_pandas(), frames),
        "ranked lists": (qrels, {n: dict(zip(sorted(qrels), v, strict=True)) for n, v in ranked.items()}),
        "aligned lists": (gold, ranked),
    }
    for label, (q, r) in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RagradeWarning)
            cmp = ragrade.compare(q, r, ["ndcg@10", "recall@5"], n_resamples=50)
            out = write_html(tmp_path / f"{label.replace(' ', '_')}.html", q, r, ["ndcg@10", "recall@5"],
                             n_resamples=50, ks=(1, 5))
        p = read_payload(out.read_text(encoding="utf-8"))
        assert p["runs"] == cmp.runs, label
        for ri, run in enumerate(cmp.runs):
            np.testing.assert_allclose(
                p["arrays"][f"s0_{ri}"], cmp.scores[run]["ndcg@10"].reindex(p["qids"]).to_numpy(), err_msg=label
            )
        assert sum(len(_items(p, 0, qi)[0]) for qi in range(len(p["qids"]))) > 0, label


def test_write_html_checks_the_file_name_and_the_runs(tmp_path, small_data) -> None:
    qrels, runs, _, _ = small_data
    with pytest.raises(InputError, match=r"\.html"):
        write_html(tmp_path / "report.txt", qrels, runs, ["ndcg@10"])
    with pytest.raises(InputError, match="at least two runs"):
        write_html(tmp_path / "r.html", qrels, {"bm25": runs["bm25"]}, ["ndcg@10"])
    with pytest.raises(InputError, match="baseline"):
        write_html(tmp_path / "r.html", qrels, runs, ["ndcg@10"], baseline="nope")


def test_errors_in_either_thread_of_the_build_are_raised_not_hung(tmp_path, small_data) -> None:
    # render_html evaluates and compares in one thread and gathers the per-query data in another: an
    # error on either side reaches the caller (nothing waits forever on the other thread).
    import threading

    qrels, runs, _, _ = small_data
    before = threading.active_count()
    with pytest.raises(InputError, match="depth"):
        render_html(qrels, runs, ["ndcg@10"], n_resamples=50, plots=False, depth=0)
    with pytest.raises(RagradeError):
        render_html(qrels, runs, ["no_such_metric@3"], n_resamples=50, plots=False)
    with pytest.raises(RagradeError):
        render_html(qrels, {**runs, "bad": tmp_path / "missing.trec"}, ["ndcg@10"], n_resamples=50)
    with pytest.raises(InputError, match="test"):
        render_html(qrels, runs, ["ndcg@10"], n_resamples=50, test="nope")
    assert threading.active_count() == before


def test_the_prepared_items_give_the_same_data(small_comparison, small_data) -> None:
    from ragrade.report.data import prepare_items

    qrels, runs, texts, queries = small_data
    cmp = small_comparison
    plain = build_payload(cmp.scores, cmp.metrics, qrels, runs, texts=texts, queries=queries)
    prepared = prepare_items(qrels, runs, default_depth(cmp.metrics))
    again = build_payload(cmp.scores, cmp.metrics, qrels, runs, texts=texts, queries=queries, prepared=prepared)
    assert plain[0] == again[0] and plain[1].keys() == again[1].keys()
    for name, arr in plain[1].items():
        np.testing.assert_array_equal(arr, again[1][name], err_msg=name)


def test_groups_and_markers_reach_the_summary_table(small_data) -> None:
    qrels, runs, _, _ = small_data
    runs3 = {**runs, "copy": runs["bm25"]}
    page = render_html(qrels, runs3, ["ndcg@10"], n_resamples=200, plots=False)
    assert page.count('class="grp"') == 3 and "cannot be told apart" in page


def test_report_of_many_queries_stays_small(tmp_path) -> None:
    """Not a timing test: 3,000 queries x 2 runs with texts stay well under a megabyte per 1,000 queries."""
    qrels, runs, texts, queries = make_data(3000, n_docs_per_query=20, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        out = write_html(tmp_path / "big.html", qrels, runs, ["ndcg@10", "recall@5"], texts=texts,
                         queries=queries, n_resamples=200)
    size = out.stat().st_size
    assert size < 2_500_000
    page = out.read_text(encoding="utf-8")
    circles = page.count("<circle")
    assert circles < 2 * 3 * 75 * 75  # binned: at most one mark per cell and outcome
