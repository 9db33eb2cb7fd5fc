"""The HTML ledger in a real browser (headless Chromium driven by selenium).

Search, a filter, the summary cells, sorting, deep links (``?q=`` and ``#ID``) and a claim's
panel, on a page of 2,000 rows. Skipped, saying why, only where no browser or driver exists
(CI installs Debian's ``chromium`` and ``chromium-driver``).

With ``FLBOUNDS_SCREENSHOT=docs/ledger.png`` the test also saves screenshots of the page
(``docs/ledger.png``, and ``docs/ledger-panel.png`` with a claim opened); with
``FLBOUNDS_SCREENSHOT_RESULTS=DIR`` those show the results stored in ``DIR`` (and its
``figures/``) instead of the synthetic rows.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from flbounds.ledger import ResultStore
from flbounds.ledger.reports.report import write_reports
from tests.ledger_rows import synthetic_results

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

N_ROWS = 2000
PAGE = 250  # rows the page adds at a time (ledger.js)
WAIT_S = 60  # an upper bound for page work on a loaded machine; nothing is timed
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--window-size=1400,1000")


def _find_browser() -> tuple[str, str]:
    browser = next((p for p in map(shutil.which, BROWSERS) if p), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver; .ci/run does)")
    return browser, driver


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = _find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    profile = tempfile.mkdtemp(prefix="flbounds-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _figure(directory: Path) -> Path:
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([1, 2, 3], [3, 1, 2])
    png = directory / "needle_plot.png"
    fig.savefig(png)
    plt.close(fig)
    (directory / "needle_plot.json").write_text(json.dumps(
        {"name": "needle_plot", "title": "the needle's figure", "claims": ["focus.marked"]}))
    return png


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    out = tmp_path_factory.mktemp("ledger")
    results = synthetic_results(N_ROWS)
    write_reports(results, out, [_figure(out)])
    return out / "ledger.html", results


def _open(driver, url: str):
    driver.get("about:blank")  # a fresh load, even when only the #fragment differs
    driver.get(url)
    WebDriverWait(driver, WAIT_S).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready") == "1")


def _click(driver, element) -> None:
    """Click like a reader: first bring the element to mid-screen (clear of the sticky bar)."""
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def _count(driver) -> str:
    return driver.find_element(By.ID, "count").text


def _visible_ids(driver) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#claims tr.row')).map(r => r.dataset.id)")


def _wait_count(driver, text: str) -> None:
    WebDriverWait(driver, WAIT_S).until(lambda d: _count(d) == text)


def test_rows_arrive_a_page_at_a_time(browser, ledger):
    page, _ = ledger
    _open(browser, page.as_uri())
    assert _count(browser) == f"{N_ROWS} of {N_ROWS} claims"
    assert len(_visible_ids(browser)) == PAGE
    assert browser.execute_script("return window.broken") is None  # markup stayed text
    # the 'more' button adds a page per press until none is left (scrolling near it presses
    # it too; that path waits on the browser's rendering, so the test presses directly)
    press = ("var more = document.getElementById('more'); if (!more.hidden) more.click();"
             "return document.querySelectorAll('#claims tr.row').length")
    assert browser.execute_script(press) > PAGE
    for _ in range(N_ROWS // PAGE + 1):
        if browser.execute_script(press) == N_ROWS:
            break
    assert len(_visible_ids(browser)) == N_ROWS
    assert not browser.find_element(By.ID, "more").is_displayed()


def test_search_box(browser, ledger):
    page, _ = ledger
    _open(browser, page.as_uri())
    box = browser.find_element(By.ID, "q")
    box.send_keys("zebra")
    _wait_count(browser, f"1 of {N_ROWS} claims")
    assert _visible_ids(browser) == ["focus.marked.needle"]
    assert "q=zebra" in browser.current_url  # the filtered view is a shareable link


def test_verdict_filter_and_unexpected_only(browser, ledger):
    page, results = ledger
    _open(browser, page.as_uri())
    n_violated = sum(r.verdict == "violated" for r in results if not r.id.startswith("attack:"))
    Select(browser.find_element(By.ID, "f-verdict")).select_by_value("violated")
    _wait_count(browser, f"{n_violated} of {N_ROWS} claims")
    verdicts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#claims tr.row .verdict'))"
        ".map(v => v.textContent)")
    assert verdicts and all(v.startswith("violated") for v in verdicts)
    browser.find_element(By.ID, "f-unexpected").click()
    _wait_count(browser, f"1 of {N_ROWS} claims")
    assert _visible_ids(browser) == ["focus.marked.needle"]


def test_summary_cell_filters_and_sorting(browser, ledger):
    page, results = ledger
    _open(browser, page.as_uri())
    expected = sum(r.id.startswith("kvib.") and r.verdict == "not-applicable" for r in results)
    browser.find_element(
        By.CSS_SELECTOR, "#summary button[data-paper=kvib][data-verdict=not-applicable]").click()
    _wait_count(browser, f"{expected} of {N_ROWS} claims")
    browser.find_element(By.ID, "reset").click()
    _wait_count(browser, f"{N_ROWS} of {N_ROWS} claims")
    browser.find_element(By.CSS_SELECTOR, "#claims th[data-sort=verdict]").click()
    first = browser.find_element(By.CSS_SELECTOR, "#claims tr.row .verdict").text
    assert first.startswith("violated")  # no errors here: violated sorts first


def test_deep_link_query(browser, ledger):
    page, _ = ledger
    _open(browser, page.as_uri() + "?q=zebra")
    assert browser.find_element(By.ID, "q").get_attribute("value") == "zebra"
    assert _count(browser) == f"1 of {N_ROWS} claims"


def test_deep_link_opens_a_panel(browser, ledger):
    page, _ = ledger
    _open(browser, page.as_uri() + "#kvib.marked.script")
    panel = browser.find_element(By.CSS_SELECTOR, "tr.panel-row[data-panel='kvib.marked.script']")
    text = panel.text
    assert "</script><script>window.broken=1</script>" in text  # shown, not executed
    assert "flbounds check kvib.marked.script --profile quick --seed 0" in text
    assert panel.find_element(By.CSS_SELECTOR, "button.copy").get_attribute("data-copy") \
        == "flbounds check kvib.marked.script --profile quick --seed 0"
    for heading in ("TOLERANCE", "DETAILS", "PROVENANCE", "REPRODUCE"):
        assert heading in text.upper()


def test_panel_shows_hypotheses_attack_and_figures(browser, ledger):
    page, _ = ledger
    _open(browser, page.as_uri() + "?q=marked")
    _click(browser, browser.find_element(By.ID, "focus.marked.needle"))
    panel = browser.find_element(By.CSS_SELECTOR, "tr.panel-row[data-panel='focus.marked.needle']")
    assert "step 10x" in panel.text and "left on purpose" in panel.text
    assert "expected holds" in panel.text and "planted mismatch" in panel.text
    image = panel.find_element(By.CSS_SELECTOR, ".thumbs img")
    assert image.get_attribute("src").startswith("data:image/png;base64,")
    _click(browser, browser.find_element(By.ID, "safari.marked.attacked"))
    attacked = browser.find_element(By.CSS_SELECTOR,
                                    "tr.panel-row[data-panel='safari.marked.attacked']")
    assert "ADVERSARIAL SEARCH" in attacked.text.upper() and "0.93" in attacked.text
    _click(browser, browser.find_element(By.ID, "focus.marked.needle"))  # closes again
    assert not browser.find_elements(By.CSS_SELECTOR,
                                     "tr.panel-row[data-panel='focus.marked.needle']")


def test_screenshot(browser, ledger, tmp_path):
    target = os.environ.get("FLBOUNDS_SCREENSHOT")
    if not target:
        pytest.skip("set FLBOUNDS_SCREENSHOT=docs/ledger.png to write the README screenshot")
    page, _ = ledger
    stored = os.environ.get("FLBOUNDS_SCREENSHOT_RESULTS")
    if stored:
        stored = Path(stored)
        figures = sorted((stored / "figures").glob("*.png"))
        page = write_reports(list(ResultStore(stored).latest().values()), tmp_path, figures)[1]
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _open(browser, page.as_uri())
    browser.save_screenshot(str(target))
    claim = os.environ.get("FLBOUNDS_SCREENSHOT_CLAIM", "focus.marked.needle")
    _open(browser, f"{page.as_uri()}?q={claim}#{claim}")
    browser.save_screenshot(str(target.with_name(target.stem + "-panel" + target.suffix)))
    assert target.stat().st_size > 0


def test_panel_says_by_how_much_and_links_the_corrected_claim(browser, ledger_sandbox,
                                                              tmp_path):
    """A printed claim that fails by 1.5x and its corrected companion (the sandbox plugin of
    test_findings): the panel says by how much; its 'corrected by' link opens the other."""
    from flbounds.ledger.api import registry
    from tests.flbounds.ledger.test_findings import CORRECTED, PRINTED, declare_plugin

    declare_plugin()
    rows = [registry.get(cid).check(seed=0) for cid in sorted(registry._REGISTRY)
            if cid.startswith("testpaper.")]
    _, page = write_reports(rows, tmp_path)
    _open(browser, page.as_uri() + "#" + PRINTED)
    panel = browser.find_element(By.CSS_SELECTOR, f'tr.panel-row[data-panel="{PRINTED}"]')
    assert "1.5x the printed bound" in panel.text and "arXiv:0000.00000" in panel.text
    _click(browser, panel.find_element(By.CSS_SELECTOR, "a.claim-jump"))
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(
        By.CSS_SELECTOR, f'tr.panel-row[data-panel="{CORRECTED}"]'))
    other = browser.find_element(By.CSS_SELECTOR, f'tr.panel-row[data-panel="{CORRECTED}"]')
    assert "the printed statement " + PRINTED in other.text


def test_panel_of_an_error_row_shows_no_null_and_no_empty_tolerance(browser, tmp_path):
    """A task that timed out measured nothing: its panel says so instead of printing
    ``measured null`` / ``theoretical null`` and an empty tolerance section."""
    from tests.ledger_rows import make_result

    row = make_result("focus.timed.out", verdict="error", expected="holds", measured=None,
                      theoretical=None, relation=None, tolerance={}, details={},
                      reason="timed out after 900 s")
    page = write_reports([row, make_result("focus.fine.one")], tmp_path, [])[1]
    _open(browser, page.as_uri() + "#focus.timed.out")
    text = browser.find_element(By.CSS_SELECTOR,
                                "tr.panel-row[data-panel='focus.timed.out']").text
    assert "null" not in text and "timed out after 900 s" in text
    assert "nothing measured" in text and "TOLERANCE" not in text.upper()
    _open(browser, page.as_uri() + "#focus.fine.one")
    fine = browser.find_element(By.CSS_SELECTOR, "tr.panel-row[data-panel='focus.fine.one']")
    assert "TOLERANCE" in fine.text.upper() and "closed forms" in fine.text
