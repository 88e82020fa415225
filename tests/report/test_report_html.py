"""The HTML report as text: payload, escaping, self-containment (the browser test opens it for real)."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest
from report_synth import XSS

from ragrade.report import json_for_html, render_comparison_html
from ragrade.report._assets import JS
from ragrade.report.data import build_payload, default_depth, ranked_lists


def _data_block(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="ragrade-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_json_for_html_escapes_markup_and_round_trips() -> None:
    value = {"t": "</script><script>alert(1)</script> & <!-- \u2028", "n": [1, None]}
    text = json_for_html(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def test_ranking_of_mappings_follows_score_then_docid_descending() -> None:
    run = {"q": {"d1": 1.0, "d9": 1.0, "d10": 2.0, "d2": 0.5}}
    assert [d for d, _ in ranked_lists(run, ["q"])["q"]] == ["d10", "d9", "d1", "d2"]
    assert ranked_lists({"q": ["b", "a"]}, ["q", "missing"]) == {
        "q": [("b", None), ("a", None)],
        "missing": [],
    }


def test_default_depth_is_the_largest_cutoff() -> None:
    assert default_depth(["ndcg@10", "recall@100", "rr"]) == 100
    assert default_depth(["map"]) == 10


def test_payload_marks_relevance_and_missed_items(small_comparison) -> None:
    qrels = {"q1": {"a": 2, "b": 0, "c": 1, "z": 1}}
    runs = {"x": {"q1": {"a": 3.0, "b": 2.0, "y": 1.5, "c": 1.0}}, "y": {"q1": {"c": 1.0}}}
    import pandas as pd

    from ragrade.comparison import compare_scores

    scores = {
        "x": pd.DataFrame({"m@2": [0.5]}, index=["q1"]),
        "y": pd.DataFrame({"m@2": [0.2]}, index=["q1"]),
    }
    cmp = compare_scores(scores, n_resamples=10)
    p = build_payload(cmp, qrels, runs, texts={"a": "text of a"}, queries={"q1": "the query"})
    assert p["depth"] == 2 and p["qids"] == ["q1"] and p["nrel"] == [3]
    top = [[p["docs"][i], s, g] for i, s, g in p["ranked"]["x"][0]]
    assert top == [["a", 3.0, 2], ["b", 2.0, 0]]
    missed = [[p["docs"][i], g, r] for i, g, r in p["missed"]["x"][0]]
    assert missed == [["c", 1, 4], ["z", 1, None]]  # c retrieved below the cutoff, z never
    assert p["doctext"][p["docs"].index("a")] == "text of a"
    assert p["doctext"][p["docs"].index("b")] is None
    assert p["qtext"] == ["the query"]
    assert p["scores"]["m@2"] == {"x": [0.5], "y": [0.2]}


def test_report_is_self_contained_and_script_is_hash_locked(small_data, small_comparison) -> None:
    qrels, runs, texts, queries = small_data
    page = render_comparison_html(small_comparison, qrels, runs, texts=texts, queries=queries, plots=False)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src &#x27;none&#x27;" in csp
    digest = base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode()
    assert f"sha256-{digest}" in csp
    assert f"<script>{JS}</script>" in page
    # nothing fetched from anywhere: no src/href pointing outside the file
    assert not re.search(r'(src|href)="(?!data:)', page)
    assert "http://" not in page and "https://" not in page


def test_user_data_never_appears_as_markup(small_data, small_comparison) -> None:
    qrels, runs, texts, queries = small_data
    page = render_comparison_html(
        small_comparison, qrels, runs, texts=texts, queries=queries, plots=False, title="<b>title</b>"
    )
    outside = re.sub(r'<script type="application/json" id="ragrade-data">.*?</script>', "", page, flags=re.S)
    assert "__pwned" not in outside and "onerror" not in outside
    assert "<script>window.__pwned" not in page
    assert "<b>title</b>" not in page and "&lt;b&gt;title&lt;/b&gt;" in page
    data = _data_block(page)
    assert XSS in data["doctext"]  # the text itself survives, as data
    assert data["qtext"][data["qids"].index("q00000")].endswith(XSS)


def test_run_names_are_escaped_in_static_tables(small_data) -> None:
    qrels, runs, _, _ = small_data
    from report_synth import per_query_scores

    from ragrade.comparison import compare_scores

    evil = '<img src=x onerror="window.__pwned=3">'
    scores = per_query_scores(qrels, runs)
    cmp = compare_scores({"bm25": scores["bm25"], evil: scores["dense"]}, n_resamples=50)
    page = render_comparison_html(cmp, qrels, {"bm25": runs["bm25"], evil: runs["dense"]}, plots=False)
    assert evil not in page
    assert "&lt;img src=x onerror=&quot;window.__pwned=3&quot;&gt;" in page


def test_long_texts_are_truncated(small_comparison, small_data) -> None:
    qrels, runs, texts, _ = small_data
    long = dict(texts)
    long["q00000-d1"] = "x" * 5000
    p = build_payload(small_comparison, qrels, runs, texts=long, max_text_chars=100)
    assert p["doctext"][p["docs"].index("q00000-d1")] == "x" * 100 + " …"


def test_missing_ranking_for_a_run_is_an_input_error(small_comparison, small_data) -> None:
    from ragrade.errors import InputError

    qrels, runs, _, _ = small_data
    with pytest.raises(InputError, match="no ranking"):
        build_payload(small_comparison, qrels, {"bm25": runs["bm25"]})


def test_plots_are_inlined_as_data_images(small_data, small_comparison) -> None:
    pytest.importorskip("matplotlib", reason="the plots extra (matplotlib) is not installed")
    qrels, runs, _, _ = small_data
    page = render_comparison_html(small_comparison, qrels, runs, plots=True)
    imgs = re.findall(r'<img alt="[^"]*" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">', page)
    assert len(imgs) == 2 + 1  # a distribution per metric, one delta plot for the first metric
    assert base64.b64decode(imgs[0]).startswith(b"<?xml")


def test_without_matplotlib_the_report_says_how_to_get_plots(
    monkeypatch, small_data, small_comparison
) -> None:
    import ragrade.report.html as H
    from ragrade.errors import MissingDependencyError

    def missing(*a, **k):
        raise MissingDependencyError("matplotlib", "plots", "Plots in the report")

    monkeypatch.setattr(H, "require", missing)
    qrels, runs, _, _ = small_data
    page = render_comparison_html(small_comparison, qrels, runs)
    assert "pip install &#x27;ragrade[plots]&#x27;" in page
    with pytest.raises(MissingDependencyError):
        render_comparison_html(small_comparison, qrels, runs, plots=True)


def test_render_html_through_the_engine_draws_curves_and_honours_policies() -> None:
    pytest.importorskip("matplotlib", reason="the plots extra (matplotlib) is not installed")
    from ragrade.report import render_html

    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}, "q3": {"d": 1}}
    runs = {
        "x": {"q1": {"a": 1.0, "z": 1.0, "b": 0.5}, "q2": {"c": 2.0}, "q3": {"y": 1.0}},
        "y": {"q1": {"z": 1.0, "a": 1.0}, "q2": {"w": 2.0, "c": 1.0}, "q3": {"d": 1.0}},
    }
    page = render_html(qrels, runs, ["ndcg@3", "rr"], n_resamples=100, ks=(1, 2, 3))
    assert page.count("data:image/svg+xml") == 1 + 2 + 1  # ndcg@k curve, 2 distributions, 1 delta
    assert "ndcg@k for every run" in page
    data = _data_block(page)
    docs = data["docs"]
    # default tie rule: equal scores ranked by document id descending (z before a)
    assert [docs[i] for i, _, _ in data["ranked"]["x"][0]] == ["z", "a", "b"]
    stable = _data_block(render_html(qrels, runs, ["ndcg@3"], n_resamples=50, plots=False, ties="input"))
    assert [stable["docs"][i] for i, _, _ in stable["ranked"]["x"][0]] == ["a", "z", "b"]


def test_payload_with_duplicates_negative_grades_and_unknown_queries() -> None:
    import pandas as pd

    from ragrade.comparison import compare_scores

    qrels = {"q1": {"a": 1, "b": -1, "c": 2}, "q2": {"d": 1}}
    runs = {
        "x": {"q1": ["b", "a", "a", "e", "c"], "q9": ["zz"]},  # a twice; q9 not compared; q2 not retrieved
        "y": {"q1": ["c"], "q2": ["d"]},
    }
    scores = {r: pd.DataFrame({"m@2": [0.1, 0.2]}, index=["q1", "q2"]) for r in runs}
    p = build_payload(compare_scores(scores, n_resamples=10), qrels, runs)
    docs = p["docs"]
    assert [[docs[i], s, g] for i, s, g in p["ranked"]["x"][0]] == [["b", None, -1], ["a", None, 1]]
    assert [[docs[i], g, r] for i, g, r in p["missed"]["x"][0]] == [["c", 2, 5]]
    assert p["ranked"]["x"][1] == [] and [[docs[i], g, r] for i, g, r in p["missed"]["x"][1]] == [["d", 1, None]]
    assert [[docs[i], g, r] for i, g, r in p["missed"]["y"][0]] == [["a", 1, None]]
    assert "zz" not in docs and p["nrel"] == [2, 1]
