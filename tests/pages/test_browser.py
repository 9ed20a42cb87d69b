"""The real site in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`)
driven by Selenium opens an error page, finds it by pasting a concrete message into Material's
search, and saves screenshots of both under `build/screenshots/`.

`make test` installs the Debian packages when it runs as root; elsewhere these tests skip and
say why. The helpers here (`needs_browser`, `served`, `chromium`) are shared with
tests/pages/test_hostile_content.py.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from helpers import read_elements

from catalog.core.config import load_config
from catalog.publish.build import build_site

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = REPO / "build" / "screenshots"
# Flags that let Debian's Chromium run headless in a container, with no calls home.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
    # Tests need no internet: web fonts and the repository badge's API calls fail at once.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)

BORROW_ID = "f978622eed176d93"
BORROW_MESSAGE = "borrow_torch_tensors requires MPS tensors, got {devices}"
PASTED = "borrow_torch_tensors requires MPS tensors, got cpu, mps:0"


def _missing() -> str | None:
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is missing: install Debian's chromium (make test does, as root)"
    if not CHROMEDRIVER.is_file():
        return (
            f"{CHROMEDRIVER} is missing: install Debian's chromium-driver (make test does, as root)"
        )
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed: pip install -e '.[dev]'"
    return None


needs_browser = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")
"""Skips a test, printing why, where Chromium, its driver or Selenium is absent."""


@contextlib.contextmanager
def served(site: Path) -> Iterator[str]:
    """`errcat serve` on a free loopback port for `site`; yields the base URL, always stops it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "catalog", "serve", "--port", "0", "--site", str(site)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        # Port 0 lets the kernel choose; the server names the URL it bound once it listens.
        said: list[str] = []
        for line in process.stdout:
            said.append(line)
            found = re.search(r" on (http://127\.0\.0\.1:\d+/)", line)
            if found:
                break
        else:
            pytest.fail(f"errcat serve did not start: {''.join(said)}")
        yield found.group(1)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


@contextlib.contextmanager
def chromium(before_each_page: str | None = None) -> Iterator[WebDriver]:
    """Headless Chromium with a fresh profile; `before_each_page` is a script run in every
    document before the page's own scripts."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="errcat-chromium-")
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    # An unexpected alert must stay open so that the test can see it, not be dismissed silently.
    options.unhandled_prompt_behavior = "ignore"
    driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    try:
        driver.set_page_load_timeout(30)
        if before_each_page is not None:
            driver.execute_cdp_cmd(
                "Page.addScriptToEvaluateOnNewDocument", {"source": before_each_page}
            )
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The project's own site, built once into a temporary folder and served over loopback."""
    if _missing() is not None:
        pytest.skip(_missing() or "")
    scratch = tmp_path_factory.mktemp("browser")
    result = build_site(load_config(REPO), scratch / "site", build_dir=scratch / "build")
    with served(result.out) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if _missing() is not None:
        pytest.skip(_missing() or "")
    with chromium() as driver:
        yield driver


def _screenshot(driver: WebDriver, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    driver.save_screenshot(str(path))
    return path


def _is_png(path: Path) -> bool:
    return path.stat().st_size > 1000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _rgba(css_colour: str) -> tuple[float, float, float, float]:
    parts = [float(p) for p in re.findall(r"[\d.]+", css_colour)]
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0)


def _luminance(colour: str, backdrop: str) -> float:
    """Relative luminance (0 black, 1 white) of a CSS `rgb()`/`rgba()` colour laid over an
    opaque `backdrop` colour."""
    *top, alpha = _rgba(colour)
    bottom = _rgba(backdrop)[:3]
    red, green, blue = (alpha * t + (1 - alpha) * b for t, b in zip(top, bottom, strict=True))
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


@needs_browser
def test_an_error_page_shows_its_parts(site_url: str, browser: WebDriver) -> None:
    """The page of f978622eed176d93 has its title, its message and every section, on screen."""
    from selenium.webdriver.common.by import By

    browser.get(f"{site_url}errors/{BORROW_ID}/")
    assert browser.title == f"{BORROW_MESSAGE} - errcat"
    article = browser.find_element(By.CSS_SELECTOR, "article.md-content__inner")
    assert article.find_element(By.TAG_NAME, "h1").text == BORROW_MESSAGE
    kicker = article.find_element(By.CSS_SELECTOR, ".errcat-kicker").text
    assert (
        kicker
        == "runtime.errors.BorrowRequiresMps · subclass of ValueError · raised in runtime.tensor_bridge"
    )
    shown = article.find_element(By.CSS_SELECTOR, "#error-message + div pre code").text
    assert shown.strip() == BORROW_MESSAGE
    headings = [h.text for h in article.find_elements(By.CSS_SELECTOR, "h2, h3")]
    assert headings == [
        "Error message",
        "What it means",
        # The remedy read from the raise's test, through the local it tests.
        "What the package says",
        "Source",
        "Solutions",
        "Example fix",
        "When it happens",
        "Trigger",
        "Common situations",
        "Read from the code",
        "Related errors",
    ]
    assert article.find_element(By.CSS_SELECTOR, ".errcat-source .hll").is_displayed()
    json_link = article.find_element(By.LINK_TEXT, f"/api/errors/{BORROW_ID}")
    assert json_link.get_attribute("href") == f"{site_url}api/errors/{BORROW_ID}.json"
    assert _is_png(_screenshot(browser, "error-page.png"))


@needs_browser
def test_the_raise_line_is_a_light_band(site_url: str, browser: WebDriver) -> None:
    """The highlighted raise line in Source is pale in both colour schemes, so its code reads."""
    from selenium.webdriver.common.by import By

    browser.get(f"{site_url}errors/{BORROW_ID}/")
    style = "return getComputedStyle(arguments[0]).backgroundColor"
    # Colours are read right after a scheme switch: without transitions they are final at once.
    browser.execute_script(
        "const s = document.createElement('style');"
        "s.textContent = '* { transition: none !important; }';"
        "document.head.append(s);"
    )
    # Material's own band is a saturated blue (luminance about 0.5 over either code background).
    for scheme, readable in (("default", lambda lum: lum > 0.75), ("slate", lambda lum: lum < 0.3)):
        browser.execute_script(
            "document.body.setAttribute('data-md-color-scheme', arguments[0])", scheme
        )
        band = browser.find_element(By.CSS_SELECTOR, ".errcat-source .hll")
        code = browser.find_element(By.CSS_SELECTOR, ".errcat-source .highlight pre > code")
        colour, backdrop = browser.execute_script(style, band), browser.execute_script(style, code)
        assert colour != backdrop and _rgba(colour)[3] > 0, (scheme, colour)
        assert readable(_luminance(colour, backdrop)), (scheme, colour, backdrop)


@needs_browser
def test_a_pasted_message_finds_its_page(site_url: str, browser: WebDriver) -> None:
    """A concrete message pasted into the search box lists its page among the first three."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(site_url)
    box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    box.send_keys(PASTED)
    links = "li.md-search-result__item > a.md-search-result__link"
    page = f"{site_url}errors/{BORROW_ID}/"

    def top_three(driver: WebDriver) -> list[str]:
        return [href.split("?")[0] for href in read_elements(driver, links, "href")[:3]]

    # Each keystroke starts a query, so results of a shorter prefix may show first: wait for
    # the list to settle on the page rather than reading whichever list came first.
    try:
        WebDriverWait(browser, 20).until(lambda driver: page in top_three(driver))
    except TimeoutException:
        pytest.fail(f"{page} is not among the first three results: {top_three(browser)}")
    assert _is_png(_screenshot(browser, "search-results.png"))
