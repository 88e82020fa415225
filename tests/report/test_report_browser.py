"""Open the HTML report in headless Chromium: rendering, filtering, sorting, escaping, no network."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from report_browser import find_chromium, open_report, start_chromium
from report_synth import XSS, make_data, per_query_scores

from ragrade.comparison import compare, compare_scores
from ragrade.errors import RagradeWarning
from ragrade.report import render_comparison_html, write_html

pytestmark = pytest.mark.browser

_found = find_chromium()
if isinstance(_found, str):
    pytest.skip(f"browser tests skipped: {_found}", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    drv = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The full path a user takes: write_html on dicts (evaluation, comparison, plots, payload)."""
    qrels, runs, texts, queries = make_data(120, seed=3)
    path = tmp_path_factory.mktemp("report") / "report.html"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RagradeWarning)
        write_html(
            path,
            qrels,
            runs,
            ["ndcg@10", "recall@5"],
            texts=texts,
            queries=queries,
            title="browser test",
            n_resamples=1000,
            seed=0,
        )
        cmp = compare(qrels, runs, ["ndcg@10", "recall@5"], n_resamples=1000, seed=0)
    return path, cmp


def _rows(drv):
    return drv.find_elements(By.CSS_SELECTOR, "#qtable tbody tr")


def _wait_rows(drv, n: int) -> None:
    WebDriverWait(drv, 10).until(lambda d: len(_rows(d)) == n)


def test_tables_and_query_list_render_without_network(driver, report) -> None:
    path, cmp = report
    open_report(driver, path)
    summary = driver.find_element(By.ID, "summary")
    body_rows = summary.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in body_rows] == ["bm25", "dense"]
    assert f"{cmp.mean('ndcg@10', 'dense'):.4f}" in summary.text
    assert len(driver.find_elements(By.CSS_SELECTOR, "#pairs tbody tr")) == len(cmp.pairs)
    assert len(_rows(driver)) == 50  # first page only
    assert "Showing 1–50 of 120 queries" in driver.find_element(By.ID, "qcount").text
    # the page loaded nothing: no resource fetches and no CSP violation or error in the console
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []


def test_filter_sort_and_outcome_filter(driver, report) -> None:
    path, cmp = report
    open_report(driver, path)
    wins = int(cmp.pair("ndcg@10", "bm25", "dense")["wins"])
    Select(driver.find_element(By.ID, "ctl-show")).select_by_value("gain")
    WebDriverWait(driver, 10).until(lambda d: f"of {wins} queries" in d.find_element(By.ID, "qcount").text)
    Select(driver.find_element(By.ID, "ctl-show")).select_by_value("all")
    Select(driver.find_element(By.ID, "ctl-sort")).select_by_value("absdelta:desc")
    deltas = cmp.scores["dense"]["ndcg@10"] - cmp.scores["bm25"]["ndcg@10"]
    top_text = _rows(driver)[0].find_elements(By.TAG_NAME, "td")[-1].text
    assert abs(float(top_text.replace("+", "").replace("−", "-"))) == pytest.approx(
        deltas.abs().max(), abs=1e-4
    )
    search = driver.find_element(By.ID, "ctl-search")
    search.send_keys("q0001")  # q00010 .. q00019
    _wait_rows(driver, 10)
    assert all(r.find_element(By.CSS_SELECTOR, "td.qid").text.startswith("q0001") for r in _rows(driver))
    search.clear()
    search.send_keys("topic 7?")  # query text search
    _wait_rows(driver, 1)


def test_script_in_document_text_is_shown_as_text_and_never_runs(driver, report) -> None:
    path, _ = report
    open_report(driver, path)
    driver.find_element(By.ID, "ctl-search").send_keys("q00000")
    _wait_rows(driver, 1)
    _rows(driver)[0].click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#detail .runcol"))
    texts = [e.get_attribute("textContent") for e in driver.find_elements(By.CSS_SELECTOR, "#detail .text")]
    assert XSS in texts  # shown verbatim, as text
    assert driver.find_element(By.CSS_SELECTOR, "#detail .qfull").get_attribute("textContent").endswith(XSS)
    assert (
        driver.execute_script("return document.querySelectorAll('#detail script, #detail img').length") == 0
    )
    assert driver.execute_script("return window.__pwned === undefined")
    first = driver.find_element(By.CSS_SELECTOR, "#detail .runcol[data-run='bm25'] ol.items li")
    assert "rel" in first.get_attribute("class").split() and "relevant" in first.text
    assert driver.find_elements(By.CSS_SELECTOR, "#detail ul.missed")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.find_element(By.ID, "detail").location_once_scrolled_into_view  # noqa: B018
    assert driver.save_screenshot(str(ARTIFACTS / "report-detail.png"))
    driver.execute_script("window.scrollTo(0, 0)")
    assert driver.save_screenshot(str(ARTIFACTS / "report-top.png"))


def test_pagination_keeps_the_dom_small_for_many_queries(driver, tmp_path) -> None:
    qrels, runs, _, _ = make_data(1500, n_docs_per_query=12, seed=5, with_texts=False)
    cmp = compare_scores(per_query_scores(qrels, runs), n_resamples=200, seed=0)
    path = tmp_path / "big.html"
    path.write_text(render_comparison_html(cmp, qrels, runs, plots=False), encoding="utf-8")
    open_report(driver, path)
    assert len(_rows(driver)) == 50
    driver.find_element(By.ID, "pg-next").click()
    WebDriverWait(driver, 10).until(
        lambda d: "Showing 51–100 of 1500" in d.find_element(By.ID, "qcount").text
    )
    Select(driver.find_element(By.ID, "ctl-size")).select_by_visible_text("250")
    _wait_rows(driver, 250)
