"""The built documentation site in a real browser (headless Chromium driven by selenium).

The front page, the API reference and one gallery example render: their titles, an element
each must have, and the example's figure loaded as an image. Skipped, saying why, where the
docs packages, selenium, or a browser and its driver are missing (CI installs Debian's
``chromium`` and ``chromium-driver``).
"""

from __future__ import annotations

import shutil
import tempfile

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

WAIT_S = 60  # an upper bound for loading a page on a busy machine; nothing is timed
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--window-size=1400,1000")
EXAMPLE = "auto_examples/plot_03_worst_case.html"


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    binary = next((p for p in map(shutil.which, BROWSERS) if p), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver; .ci/run does)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    profile = tempfile.mkdtemp(prefix="flbounds-docs-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def site(built_site):
    assert built_site.returncode == 0, "the build failed (see tests/docs/test_docs_build.py)"
    return built_site.html


def _open(browser, path):
    assert path.is_file(), path
    browser.get(path.as_uri())
    WebDriverWait(browser, WAIT_S).until(
        lambda b: b.execute_script("return document.readyState") == "complete")


def test_front_page(browser, site):
    _open(browser, site / "index.html")
    assert browser.title.startswith("flbounds")
    body = browser.find_element(By.CSS_SELECTOR, "article.bd-article")
    assert "claim by claim" in body.text
    navigation = browser.find_element(By.CSS_SELECTOR, ".bd-header").text
    for section in ("Getting started", "Examples", "Python API"):
        assert section in body.text or section in navigation


def test_api_reference(browser, site):
    _open(browser, site / "reference" / "api" / "index.html")
    assert browser.title.startswith("Python API")
    pages = browser.find_elements(By.CSS_SELECTOR, "article.bd-article a.reference.internal")
    assert any(a.text.strip() == "flbounds.ledger" for a in pages), [a.text for a in pages]
    _open(browser, site / "reference" / "api" / "ledger.html")
    entry = browser.find_element(By.ID, "flbounds.ledger.claim")
    assert entry.is_displayed() and "claim(" in entry.text
    assert browser.find_elements(By.CSS_SELECTOR, "dl.field-list")  # numpydoc's sections


def test_gallery_example_with_its_figure(browser, site):
    _open(browser, site / EXAMPLE)
    assert browser.title.startswith("A worst case over a function class")
    images = browser.find_elements(By.CSS_SELECTOR, "img.sphx-glr-single-img")
    assert images, "the example shows no figure"
    for image in images:
        loaded = browser.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth > 0", image)
        assert loaded, image.get_attribute("src")
    assert browser.find_elements(By.CSS_SELECTOR, "div.highlight-Python pre")  # its code
