"""Open the HTML report in headless Chromium: plots, hover, click, download, tables, filtering, escaping,
and that nothing but the page's own script runs and nothing is fetched."""

from __future__ import annotations

import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from report_browser import find_chromium, open_report, start_chromium
from report_synth import XSS, make_data, per_query_scores

from ragrade.comparison import compare, compare_scores
from ragrade.errors import RagradeWarning
from ragrade.report import read_payload, render_comparison_html, write_html

pytestmark = pytest.mark.browser

_found = find_chromium()
if isinstance(_found, str):
    pytest.skip(f"browser tests skipped: {_found}", allow_module_level=True)

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
METRICS = ["ndcg@10", "recall@5"]
HOLES = {"bm25": {1: 0.05, 5: 0.18, 10: 0.31}, "dense": {1: 0.02, 5: 0.09, 10: 0.2}}


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
        write_html(path, qrels, runs, METRICS, texts=texts, queries=queries, title="browser test",
                   n_resamples=1000, seed=0, hole_rates=HOLES)
        cmp = compare(qrels, runs, METRICS, n_resamples=1000, seed=0)
    return path, cmp


def _rows(drv):
    return drv.find_elements(By.CSS_SELECTOR, "#qtable tbody tr")


def _wait_rows(drv, n: int) -> None:
    WebDriverWait(drv, 10).until(lambda d: len(_rows(d)) == n)


def _tip(drv) -> str:
    WebDriverWait(drv, 5).until(lambda d: d.execute_script("return !document.getElementById('tip').hidden"))
    return drv.find_element(By.ID, "tip").get_attribute("textContent")


def _detail_query(drv) -> str:
    WebDriverWait(drv, 5).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#detail .qtitle code"))
    return drv.find_element(By.CSS_SELECTOR, "#detail .qtitle code").text


def _shot(drv, element, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    drv.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    assert element.screenshot(str(ARTIFACTS / name))


def test_every_plot_is_drawn_and_nothing_outside_the_page_runs(driver, report) -> None:
    path, _ = report
    open_report(driver, path)
    kinds = driver.execute_script(
        "return Array.from(document.querySelectorAll('figure.plot')).map(f => "
        "[f.dataset.kind, f.querySelector('svg').getBoundingClientRect().width])"
    )
    counts = {k: sum(1 for kind, _ in kinds if kind == k) for k in ("curves", "distribution", "scatter", "difference", "hole_rate")}
    assert counts == {"curves": 2, "distribution": 2, "scatter": 2, "difference": 2, "hole_rate": 1}
    assert all(width > 200 for _, width in kinds)  # every plot is laid out and visible
    marks = driver.execute_script("return document.querySelectorAll('figure[data-kind=scatter] circle[data-q]').length")
    assert marks > 50
    # nothing fetched, no script but the page's own, and the policy refuses any other
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert driver.execute_script("return document.querySelectorAll('script[src], iframe, object, embed, img').length") == 0
    assert driver.execute_script("return document.scripts.length") == 2
    driver.execute_script(
        "var s = document.createElement('script'); s.textContent = 'window.__injected = 1';"
        "document.body.appendChild(s);"
    )
    time.sleep(0.2)
    assert driver.execute_script("return window.__injected === undefined")
    logs = driver.get_log("browser")
    assert any("Content Security Policy" in e["message"] for e in logs)  # the injected script was refused
    assert not [e for e in logs if e["level"] == "SEVERE" and "Content Security Policy" not in e["message"]]
    for fig in driver.find_elements(By.CSS_SELECTOR, "figure.plot"):
        _shot(driver, fig, f"plot-{fig.get_attribute('data-name')}.png")


def test_hovering_a_scatter_mark_shows_its_query_and_clicking_opens_it(driver, report) -> None:
    path, cmp = report
    open_report(driver, path)
    # a mark holding one query, not covered by another mark
    mark = driver.execute_script(
        """
        const fig = document.querySelector("figure[data-kind=scatter][data-mi='0']");
        for (const c of fig.querySelectorAll("circle[data-q]")) {
          if (c.dataset.q.includes(" ")) continue;
          c.scrollIntoView({block: "center"});
          const b = c.getBoundingClientRect();
          if (document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2) === c) return c;
        }
        return null;
        """
    )
    assert mark is not None
    index = int(mark.get_attribute("data-q"))
    ActionChains(driver).move_to_element(mark).perform()
    text = _tip(driver)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(ARTIFACTS / "hover-scatter-page.png"))  # with the tooltip
    qid = text.split(":")[0]
    a, b = cmp.scores["bm25"]["ndcg@10"][qid], cmp.scores["dense"]["ndcg@10"][qid]
    assert f"bm25 {a:.4f}" in text and f"dense {b:.4f}" in text
    ActionChains(driver).click(mark).perform()
    assert _detail_query(driver) == qid
    # the number written on the mark is that query's place in the page's data
    assert read_payload(path.read_text(encoding="utf-8"))["qids"][index] == qid
    _shot(driver, driver.find_element(By.CSS_SELECTOR, "figure[data-kind=scatter][data-mi='0']"), "hover-scatter.png")


def test_clicking_a_crowded_mark_lists_its_queries(driver, report) -> None:
    path, _ = report
    open_report(driver, path)
    mark = driver.execute_script(
        """
        let best = null;
        for (const c of document.querySelectorAll("figure[data-kind=scatter] circle[data-q]")) {
          const n = c.dataset.q.split(" ").length;
          if (n > 1 && (!best || n > best.dataset.q.split(" ").length)) best = c;
        }
        best.scrollIntoView({block: "center"});
        return best;
        """
    )
    n = len(mark.get_attribute("data-q").split())
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", mark)
    WebDriverWait(driver, 5).until(lambda d: d.find_element(By.ID, "qcount").text.startswith(f"Showing 1–{min(n, 50)} of {n} queries"))
    assert driver.find_element(By.ID, "subset").is_displayed()
    driver.find_element(By.ID, "subset-clear").click()
    WebDriverWait(driver, 5).until(lambda d: "of 120 queries" in d.find_element(By.ID, "qcount").text)


def test_hovering_the_difference_plot_follows_the_sorted_queries(driver, report) -> None:
    path, cmp = report
    open_report(driver, path)
    hit = driver.find_element(By.CSS_SELECTOR, "figure[data-kind=difference][data-mi='0'] rect.hit")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", hit)
    d = (cmp.scores["dense"]["ndcg@10"] - cmp.scores["bm25"]["ndcg@10"]).to_numpy()
    ids = list(cmp.scores["dense"].index)
    order = [ids[i] for i in np.argsort(-d, kind="stable")]
    width = hit.rect["width"]
    for fraction in (0.05, 0.5, 0.93):
        ActionChains(driver).move_to_element_with_offset(hit, int((fraction - 0.5) * width), 0).perform()
        text = _tip(driver)
        rank = int(text.split(" ")[0].lstrip("#"))
        assert text.split("— ")[1].split(":")[0] == order[rank - 1]
        assert abs(rank / len(order) - fraction) < 0.05
    ActionChains(driver).click().perform()
    assert _detail_query(driver) == order[rank - 1]
    _shot(driver, driver.find_element(By.CSS_SELECTOR, "figure[data-kind=difference][data-mi='0']"), "hover-difference.png")


def test_other_plots_explain_themselves_on_hover(driver, report) -> None:
    path, _ = report
    open_report(driver, path)
    marker = driver.find_element(By.CSS_SELECTOR, "figure[data-kind=curves] g.tip")
    ActionChains(driver).move_to_element(marker).perform()
    assert "@1 · bm25:" in _tip(driver)
    holes = driver.find_element(By.CSS_SELECTOR, "figure[data-kind=hole_rate] g.tip")
    ActionChains(driver).move_to_element(holes).perform()
    assert _tip(driver) == "bm25, top 1: 5.0% unjudged"
    bins = driver.find_elements(By.CSS_SELECTOR, "figure[data-kind=distribution][data-mi='0'] rect.tip")
    ActionChains(driver).move_to_element(bins[-1]).perform()
    assert _tip(driver).startswith("ndcg@10 in [0.950, 1.000]: bm25")


def test_each_plot_downloads_as_a_clean_svg(driver, report, tmp_path) -> None:
    path, _ = report
    open_report(driver, path)
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
    fig = driver.find_element(By.CSS_SELECTOR, "figure[data-kind=scatter][data-mi='1']")
    button = fig.find_element(By.CSS_SELECTOR, "button.dl")
    assert button.is_displayed()
    driver.execute_script("arguments[0].click()", button)
    target = tmp_path / "recall@5-scatter-bm25-vs-dense.svg"
    deadline = time.time() + 10
    while not target.exists() and time.time() < deadline:
        time.sleep(0.1)
    text = target.read_text(encoding="utf-8")
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "data-q" not in text and 'class="' not in text
    assert root.find("{http://www.w3.org/2000/svg}title").text.startswith("recall@5 per query")


def test_tables_and_query_list_render(driver, report) -> None:
    path, cmp = report
    open_report(driver, path)
    summary = driver.find_element(By.ID, "summary")
    body_rows = summary.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in body_rows] == ["bm25", "dense"]
    assert f"{cmp.mean('ndcg@10', 'dense'):.4f}" in summary.text
    assert len(driver.find_elements(By.CSS_SELECTOR, "#pairs tbody tr")) == len(cmp.pairs)
    assert len(_rows(driver)) == 50  # first page only
    assert "Showing 1–50 of 120 queries" in driver.find_element(By.ID, "qcount").text
    driver.execute_script("window.scrollTo(0, 0)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(ARTIFACTS / "report-top.png"))


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
    assert abs(float(top_text.replace("+", "").replace("−", "-"))) == pytest.approx(deltas.abs().max(), abs=1e-4)
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
    assert driver.execute_script("return document.querySelectorAll('#detail script, #detail img').length") == 0
    assert driver.execute_script("return window.__pwned === undefined")
    first = driver.find_element(By.CSS_SELECTOR, "#detail .runcol[data-run='bm25'] ol.items li")
    assert "rel" in first.get_attribute("class").split() and "relevant" in first.text
    assert driver.find_elements(By.CSS_SELECTOR, "#detail ul.missed")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    _shot(driver, driver.find_element(By.ID, "detail"), "report-detail.png")


def test_pagination_keeps_the_dom_small_for_many_queries(driver, tmp_path) -> None:
    qrels, runs, _, _ = make_data(1500, n_docs_per_query=12, seed=5, with_texts=False)
    cmp = compare_scores(per_query_scores(qrels, runs), n_resamples=200, seed=0)
    path = tmp_path / "big.html"
    path.write_text(render_comparison_html(cmp, qrels, runs), encoding="utf-8")
    open_report(driver, path)
    assert len(_rows(driver)) == 50
    driver.find_element(By.ID, "pg-next").click()
    WebDriverWait(driver, 10).until(lambda d: "Showing 51–100 of 1500" in d.find_element(By.ID, "qcount").text)
    Select(driver.find_element(By.ID, "ctl-size")).select_by_visible_text("250")
    _wait_rows(driver, 250)
    assert len(driver.find_elements(By.CSS_SELECTOR, "figure.plot")) == 6  # no curves without the engine
