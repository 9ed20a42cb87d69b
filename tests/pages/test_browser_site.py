"""The site for people, in a real browser: headless Chromium on the built site served by a plain
static file server (as GitHub Pages or Netlify would serve it, 404.html for a missing path).

Colour schemes under an emulated system preference and the toggle, contrast of errcat's own
elements in both schemes, requests (none may leave the site's origin), descriptions, the 404
page, the error page's header links, and the layout at 1280 px and on a 390 px phone. Screenshots
of a seed page, light and dark, desktop and mobile, go to build/screenshots/.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from helpers import read_elements, wait_for
from test_browser import SCREENSHOTS, _missing, chromium, needs_browser

from catalog.core.config import load_config
from catalog.publish.build import build_site

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

REPO = Path(__file__).resolve().parents[2]
BORROW_ID = "f978622eed176d93"
SEED_IDS = (BORROW_ID, "d707e25309e5dbae", "ffbed2bb70a79900", "0fdb60950b3588f4")
DESKTOP = (1280, 900)
PHONE = (390, 844)

# Every URL the page asks for, as it asks: fetch and XMLHttpRequest calls when they start, and
# every resource the browser loads (stylesheets, scripts, fonts, images; failed ones included).
RECORD_REQUESTS = """
window.__errcatRequests = [];
const note = (url) => {
  try { window.__errcatRequests.push(new URL(String(url), location.href).href); } catch (e) {}
};
const originalFetch = window.fetch;
window.fetch = function (input, init) {
  note(input instanceof Request ? input.url : input);
  return originalFetch.apply(this, arguments);
};
const originalOpen = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function (method, url) {
  note(url);
  return originalOpen.apply(this, arguments);
};
new PerformanceObserver((list) => list.getEntries().forEach((e) => note(e.name)))
  .observe({ type: "resource", buffered: true });
"""

# Material's script shows the scheme toggle once it has set the page up.
TOGGLE = 'label.md-header__button[for^="__palette"]:not([hidden])'


MISSED: list[str] = []
"""Every path the static server answered 404 (404.html), in order."""


class _StaticFiles(SimpleHTTPRequestHandler):
    """Files as they are, and 404.html with status 404 for a path that has none."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code == 404:
            MISSED.append(self.path)
        page = Path(str(self.directory)) / "404.html"
        if code != 404 or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's own site, built once for this module."""
    if _missing() is not None:
        pytest.skip(_missing() or "")
    scratch = tmp_path_factory.mktemp("browser-site")
    return build_site(load_config(REPO), scratch / "site", build_dir=scratch / "build").out


@contextlib.contextmanager
def static_server(site: Path) -> Iterator[str]:
    """`site` on a plain static file server on a free loopback port (404s recorded in
    `MISSED`): its base URL."""
    handler = functools.partial(_StaticFiles, directory=str(site.resolve()))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def base(built: Path) -> Iterator[str]:
    """The built site on a plain static file server on a free loopback port."""
    with static_server(built) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if _missing() is not None:
        pytest.skip(_missing() or "")
    with chromium(before_each_page=RECORD_REQUESTS) as driver:
        yield driver


@pytest.fixture
def page(browser: WebDriver) -> Iterator[WebDriver]:
    """The browser at desktop size, in the system's light scheme, with no stored choice."""
    browser.set_window_size(*DESKTOP)
    _prefer(browser, "light")
    yield browser
    browser.execute_script("try { localStorage.clear() } catch (e) {}")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def _prefer(driver: WebDriver, scheme: str) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )


def _open(driver: WebDriver, url: str) -> None:
    """Load `url` and wait until Material's script has set the page up."""
    driver.get(url)
    assert wait_for(
        lambda: bool(driver.execute_script(f"return !!document.querySelector('{TOGGLE}')"))
    ), f"Material's script did not set up {url}"


def _fresh(driver: WebDriver, url: str) -> None:
    """`url` as a first visit: no scheme chosen before (Material keeps the choice in storage)."""
    _open(driver, url)
    driver.execute_script("localStorage.clear()")
    _open(driver, url)


def _scheme(driver: WebDriver) -> str:
    return str(driver.execute_script("return document.body.dataset.mdColorScheme"))


def _channels(css: str) -> tuple[float, float, float, float]:
    inside = css[css.index("(") + 1 : css.rindex(")")].replace("/", " ").replace(",", " ")
    values = [float(v) for v in inside.split()]
    return (values[0], values[1], values[2], values[3] if len(values) > 3 else 1.0)


def _over(top: str, bottom: tuple[float, float, float]) -> tuple[float, float, float]:
    *rgb, alpha = _channels(top)
    return (
        alpha * rgb[0] + (1 - alpha) * bottom[0],
        alpha * rgb[1] + (1 - alpha) * bottom[1],
        alpha * rgb[2] + (1 - alpha) * bottom[2],
    )


def _relative_luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour with 0-255 channels."""

    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def _contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    light, dark = sorted((_relative_luminance(a), _relative_luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


NO_TRANSITIONS = """
const style = document.createElement("style");
style.textContent = "* { transition: none !important; }";
document.head.append(style);
"""

# The text colour of an element and the backgrounds behind it, innermost first, up to <html>.
COLOURS = """
const element = arguments[0];
const layers = [];
for (let node = element; node; node = node.parentElement) {
  layers.push(getComputedStyle(node).backgroundColor);
}
return [getComputedStyle(element).color, layers];
"""


def _text_contrast(driver: WebDriver, element: Any) -> float:
    colour, layers = driver.execute_script(COLOURS, element)
    backdrop: tuple[float, float, float] = (255.0, 255.0, 255.0)
    for layer in reversed(layers):
        backdrop = _over(layer, backdrop)
    return _contrast(_over(colour, backdrop), backdrop)


def _screenshot(driver: WebDriver, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    driver.save_screenshot(str(path))
    return path


@needs_browser
def test_a_dark_preference_gets_the_dark_scheme_and_the_toggle_switches(
    base: str, page: WebDriver
) -> None:
    """Under a dark system preference a first visit is dark; the header toggle switches to
    light, and the choice holds on the next page."""
    from selenium.webdriver.common.by import By

    _prefer(page, "dark")
    _fresh(page, f"{base}errors/{BORROW_ID}/")
    assert _scheme(page) == "slate"
    background = "return getComputedStyle(document.body).backgroundColor"
    # Material eases colours in when a scheme is set: wait for the final one.
    assert wait_for(
        lambda: _relative_luminance(_over(page.execute_script(background), (0, 0, 0))) < 0.05
    )
    page.find_element(By.CSS_SELECTOR, TOGGLE).click()
    assert wait_for(lambda: _scheme(page) == "default"), _scheme(page)
    assert wait_for(
        lambda: _relative_luminance(_over(page.execute_script(background), (0, 0, 0))) > 0.9
    )
    _open(page, f"{base}errors/")
    assert _scheme(page) == "default"


@needs_browser
def test_the_system_scheme_is_followed_until_the_reader_uses_the_toggle(
    base: str, page: WebDriver
) -> None:
    """A first visit under a light preference stores Material's palette; when the system turns
    dark, the next page is dark all the same. Once the reader used the toggle, their choice
    holds whatever the system says."""
    from selenium.webdriver.common.by import By

    _prefer(page, "light")
    _fresh(page, base)
    assert _scheme(page) == "default"
    _prefer(page, "dark")
    _open(page, f"{base}errors/")
    assert _scheme(page) == "slate"
    page.find_element(By.CSS_SELECTOR, TOGGLE).click()
    assert wait_for(lambda: _scheme(page) == "default"), _scheme(page)
    _open(page, f"{base}errors/{BORROW_ID}/")
    assert _scheme(page) == "default"  # chosen: still light under the dark preference
    _prefer(page, "light")


@needs_browser
def test_a_light_preference_gets_the_light_scheme(base: str, page: WebDriver) -> None:
    """Under a light system preference a first visit is light, and the toggle offers dark."""
    from selenium.webdriver.common.by import By

    _fresh(page, base)
    assert _scheme(page) == "default"
    toggle = page.find_element(By.CSS_SELECTOR, TOGGLE)
    assert toggle.get_attribute("title") == "Switch to dark mode"


@needs_browser
@pytest.mark.parametrize("preference", ["light", "dark"])
def test_errcats_own_text_reads_in_both_schemes(
    base: str, page: WebDriver, preference: str
) -> None:
    """The path back, the header line (its code and links), the footer and the search prompt
    keep a contrast of at least 4.5:1 (WCAG AA) against what is behind them."""
    from selenium.webdriver.common.by import By

    _prefer(page, preference)
    low: list[tuple[str, str, float]] = []
    for url, selectors in (
        (
            f"{base}errors/{BORROW_ID}/",
            (
                ".errcat-path",
                ".errcat-path a",
                ".errcat-path code",
                ".errcat-kicker",
                ".errcat-kicker code",
                ".errcat-kicker a code",
                ".errcat-footer",
                ".errcat-footer a",
            ),
        ),
        (base, (".errcat-find .md-button", ".errcat-find span")),
        (f"{base}errors/modules/runtime.tensor_bridge/", (".errcat-path a", ".errcat-index code")),
    ):
        _fresh(page, url)
        assert _scheme(page) == ("slate" if preference == "dark" else "default")
        # Colours are read as they end, not halfway through Material's colour transitions.
        page.execute_script(NO_TRANSITIONS)
        for selector in selectors:
            elements = page.find_elements(By.CSS_SELECTOR, selector)
            assert elements, (url, selector)
            ratio = _text_contrast(page, elements[0])
            if ratio < 4.5:
                low.append((url, selector, round(ratio, 2)))
    assert not low, low


PAGE_TYPES = (
    "",
    "errors/",
    "errors/modules/",
    "errors/exceptions/",
    "errors/modules/runtime.tensor_bridge/",
    "errors/exceptions/ValueError/",
    f"errors/{BORROW_ID}/",
    "guides/api/",
    "no/such/page/",
)


@needs_browser
@pytest.mark.parametrize("path", PAGE_TYPES)
def test_no_request_leaves_the_sites_origin(base: str, page: WebDriver, path: str) -> None:
    """Home, indexes, group pages, an error page, a guide and the 404 page load everything from
    the site itself, the search included (it is opened and used on each)."""
    from selenium.webdriver.common.by import By

    MISSED.clear()
    _open(page, base + path)
    box = page.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    box.send_keys("borrow")
    assert wait_for(lambda: bool(page.find_elements(By.CSS_SELECTOR, ".md-search-result__item"))), (
        "the search answered nothing"
    )
    requested: list[str] = page.execute_script(
        "return window.__errcatRequests.concat("
        "performance.getEntriesByType('resource').map((e) => e.name))"
    )
    origin = urlsplit(base).netloc
    assert requested, "no request was recorded: the recorder did not run"
    elsewhere = sorted({url for url in requested if urlsplit(url).netloc != origin})
    assert not elsewhere, elsewhere
    # Nothing the page asks for is missing (Material once fetched /api/errors/sitemap.xml for
    # the JSON link of an error page): only the 404 page's own address answers 404.
    assert [missed for missed in MISSED if missed != "/" + path] == []


INDEX_REQUESTS = """
return performance.getEntriesByType('resource')
  .filter((e) => e.name.endsWith('/search/search_index.json'))
  .map((e) => e.startTime);
"""


@needs_browser
def test_the_word_index_is_fetched_only_once_the_search_is_used(base: str, page: WebDriver) -> None:
    """A first page view does not download Material's word index (megabytes at torch scale);
    focusing the search box fetches it, and word search then answers as before."""
    from selenium.webdriver.common.by import By

    _fresh(page, f"{base}errors/{BORROW_ID}/")
    before = page.execute_script("return performance.now()")
    box = page.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    assert wait_for(lambda: bool(page.execute_script(INDEX_REQUESTS)))
    assert min(page.execute_script(INDEX_REQUESTS)) > before
    box.send_keys("shell")
    assert wait_for(
        lambda: any(
            "guides/api" in href
            for href in read_elements(page, ".md-search-result__item a", "href")
        )
    ), "Material's word search did not find the API guide"


@needs_browser
def test_error_pages_describe_themselves_differently(
    base: str, built: Path, page: WebDriver
) -> None:
    """One error page of each module: each description starts with the page's message and no
    two are alike."""
    from selenium.webdriver.common.by import By

    rows = json.loads((built / "api/errors/index.json").read_text(encoding="utf-8"))
    first_of_module: dict[str, str] = {}
    for row in rows:
        first_of_module.setdefault(row["module"], row["id"])
    assert len(first_of_module) > 2
    descriptions = []
    for entry_id in first_of_module.values():
        _open(page, f"{base}errors/{entry_id}/")
        description = page.find_element(By.CSS_SELECTOR, 'meta[name="description"]').get_attribute(
            "content"
        )
        og = page.find_element(By.CSS_SELECTOR, 'meta[property="og:description"]')
        assert og.get_attribute("content") == description
        headline = page.find_element(By.CSS_SELECTOR, "article h1").text
        assert description and description.startswith(headline), (description, headline)
        descriptions.append(description)
    assert len(set(descriptions)) == len(descriptions)


@needs_browser
def test_the_404_page_opens_the_search_and_links_the_indexes(base: str, page: WebDriver) -> None:
    """A missing path shows errcat's 404 page: its button opens Material's search with the
    box focused, and its links lead to the indexes."""
    from selenium.webdriver.common.by import By

    _open(page, f"{base}errors/0000000000000000/")
    assert page.title == "Page not found - errcat"
    article = page.find_element(By.CSS_SELECTOR, "article.md-content__inner")
    assert article.find_element(By.TAG_NAME, "h1").text == "Page not found"
    links = {a.text: a.get_attribute("href") for a in article.find_elements(By.TAG_NAME, "a")}
    assert links == {
        "All errors": f"{base}errors/",
        "By module": f"{base}errors/modules/",
        "By exception type": f"{base}errors/exceptions/",
        "Home": base,
    }
    article.find_element(By.CSS_SELECTOR, ".errcat-find .md-button").click()
    assert wait_for(
        lambda: bool(
            page.execute_script(
                "return document.activeElement && document.activeElement.matches('input.md-search__input')"
            )
        )
    ), "the search box did not get the focus"
    from selenium.webdriver.common.keys import Keys

    page.switch_to.active_element.send_keys(Keys.ESCAPE)  # closes the search
    assert wait_for(lambda: not page.execute_script("return __search.checked"))
    page.find_element(By.LINK_TEXT, "By module").click()
    assert wait_for(lambda: page.current_url == f"{base}errors/modules/")


@needs_browser
def test_an_error_pages_header_leads_to_its_indexes(base: str, page: WebDriver) -> None:
    """The header line names the class a traceback prints; its module and exception links open
    index pages that list the error; the path back leads to all errors."""
    from selenium.webdriver.common.by import By

    url = f"{base}errors/{BORROW_ID}/"
    for link_text, lands in (
        ("runtime.tensor_bridge", f"{base}errors/modules/runtime.tensor_bridge/"),
        ("ValueError", f"{base}errors/exceptions/ValueError/"),
        ("All errors", f"{base}errors/"),
    ):
        _open(page, url)
        kicker = page.find_element(By.CSS_SELECTOR, ".errcat-kicker")
        assert kicker.text.startswith("runtime.errors.BorrowRequiresMps · subclass of ValueError")
        header = page.find_element(
            By.CSS_SELECTOR, ".errcat-path" if link_text == "All errors" else ".errcat-kicker"
        )
        header.find_element(By.LINK_TEXT, link_text).click()
        assert wait_for(lambda lands=lands: page.current_url == lands), page.current_url
        assert page.find_elements(By.CSS_SELECTOR, f'a[href$="{BORROW_ID}/"]'), lands


def _longest_snippet_pages(built: Path, count: int) -> list[str]:
    """Ids of the `count` error pages whose source snippets have the longest lines."""
    widest: dict[str, int] = {}
    for path in (built / "api/errors").glob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(document, dict) or "sources" not in document:
            continue
        lines = [
            len(line)
            for source in document["sources"]
            if source.get("snippet")
            for line in source["snippet"]["code"].splitlines()
        ]
        widest[document["id"]] = max(lines, default=0)
    return sorted(widest, key=lambda entry_id: (-widest[entry_id], entry_id))[:count]


@needs_browser
def test_source_snippets_fit_at_1280_px(base: str, built: Path, page: WebDriver) -> None:
    """At 1280 px the seed pages and the pages with the widest source lines show every line of
    their snippets whole: no snippet scrolls sideways, nor does the page."""
    overflow = (
        "return [...document.querySelectorAll('.errcat-source pre > code')]"
        ".map((c) => c.scrollWidth - c.clientWidth)"
    )
    wide = []
    for entry_id in dict.fromkeys([*SEED_IDS, *_longest_snippet_pages(built, 3)]):
        _open(page, f"{base}errors/{entry_id}/")
        excess = page.execute_script(overflow)
        assert excess, f"{entry_id}: no source snippet on the page"
        page_excess = page.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        if max(excess) > 0 or page_excess > 0:
            wide.append((entry_id, excess, page_excess))
    assert not wide, wide


BROKEN_CODE = """
return [...document.querySelectorAll('.errcat-index td code')]
  .filter((c) => c.getClientRects().length !== 1)
  .map((c) => c.textContent);
"""


@needs_browser
@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_index_identifiers_are_never_broken(
    base: str, page: WebDriver, size: tuple[int, int]
) -> None:
    """In the index tables every exception and module name stays on one line."""
    page.set_window_size(*size)
    for path in ("errors/", "errors/modules/runtime.kernels.sparse_mla/"):
        _open(page, base + path)
        assert page.execute_script(
            "return document.querySelectorAll('.errcat-index td code').length"
        )
        assert page.execute_script(BROKEN_CODE) == [], path


LONG_ROW = """
const row = document.querySelector('.errcat-index tbody tr').cloneNode(true);
const [message, exception, module] = row.querySelectorAll('td');
message.querySelector('a').textContent = '{' + 'a_placeholder_that_goes_on'.repeat(12) + '}';
exception.querySelector('code').textContent = 'torch.distributed._shard.sharded_tensor.Error';
module.querySelector('code').textContent =
  'torch.distributed.algorithms._checkpoint.checkpoint_wrapper.functional_adamax';
for (const cell of row.querySelectorAll('[data-errcat-wrapped]')) {
  delete cell.dataset.errcatWrapped;  // cloned from a row errcat.js had done already
}
document.querySelector('.errcat-index tbody').prepend(row);
errcatWrap(document);
return [...row.querySelectorAll('td a, td code')];
"""

BREAKS = """
// Where each line of the element ends: the character before every jump of the text's top.
const ends = [];
let before = null, top = null;
const walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  for (let i = 0; i < node.data.length; i++) {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    const rect = range.getBoundingClientRect();
    if (top !== null && rect.top > top + 1) ends.push(before);
    top = rect.top;
    before = node.data[i];
  }
}
return ends;
"""


@needs_browser
@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_long_names_wrap_after_separators_and_tables_fit_their_column(
    base: str, page: WebDriver, size: tuple[int, int]
) -> None:
    """A row with torch-sized names (a 300-character placeholder, a deep module path) wraps
    only after `/`, `.` or `_` where a name does not fit, and the table stays inside its
    column: nothing is cut off and the page does not scroll sideways."""
    page.set_window_size(*size)
    _open(page, f"{base}errors/")
    cells = page.execute_script(LONG_ROW)
    wrapped = [page.execute_script(BREAKS, cell) for cell in cells]
    assert any(wrapped), "no long name needed to wrap: the test row is too short"
    for ends in wrapped:
        assert set(ends) <= set("/._"), ends
    widths = page.execute_script(
        "const t = document.querySelector('.errcat-index table');"
        "return [t.getBoundingClientRect().width,"
        " document.querySelector('.md-content__inner').getBoundingClientRect().width,"
        " document.documentElement.scrollWidth, window.innerWidth];"
    )
    assert widths[0] <= widths[1] + 1, widths
    assert widths[2] <= widths[3], widths


@needs_browser
def test_a_phone_keeps_the_exception_and_module_of_every_row(base: str, page: WebDriver) -> None:
    """At 390 px each row of the index shows its message, exception and module inside the
    screen, and the page does not scroll sideways."""
    from selenium.webdriver.common.by import By

    page.set_window_size(*PHONE)
    _open(page, f"{base}errors/")
    width = page.execute_script("return document.documentElement.clientWidth")
    rows = page.find_elements(By.CSS_SELECTOR, ".errcat-index tbody tr")
    assert len(rows) > 10
    outside = page.execute_script(
        """
        const width = document.documentElement.clientWidth;
        return [...document.querySelectorAll('.errcat-index tbody tr')].flatMap((row, i) =>
          [...row.cells].map((cell, column) => [i, column, cell.getBoundingClientRect()])
            .filter(([, , box]) => box.width === 0 || box.left < 0 || box.right > width)
            .map(([i, column]) => [i, column]));
        """
    )
    assert outside == []
    assert page.execute_script("return document.documentElement.scrollWidth") <= width
    _open(page, f"{base}errors/{BORROW_ID}/")
    assert page.execute_script("return document.documentElement.scrollWidth") <= width


@needs_browser
def test_the_home_page_leads_with_finding_an_error(base: str, page: WebDriver) -> None:
    """The search prompt is on the first screen at 1280 px and on a phone, above the figures;
    it opens the search."""
    from selenium.webdriver.common.by import By

    for size in (DESKTOP, PHONE):
        page.set_window_size(*size)
        _open(page, base)
        button = page.find_element(By.CSS_SELECTOR, ".errcat-find .md-button")
        top = page.execute_script("return arguments[0].getBoundingClientRect().bottom", button)
        assert top < page.execute_script("return innerHeight"), size
        figures = page.find_element(By.ID, "coverage")
        assert button.location["y"] < figures.location["y"]
        button.click()
        assert wait_for(
            lambda: bool(
                page.execute_script(
                    "return document.activeElement && document.activeElement.matches('input.md-search__input')"
                )
            )
        ), size


@needs_browser
def test_screenshots_of_a_seed_page(base: str, page: WebDriver) -> None:
    """The seed page f978622eed176d93, light and dark, at 1280 px and 390 px, saved for people
    to look at; the scheme shown is the one preferred."""
    for preference, scheme in (("light", "default"), ("dark", "slate")):
        _prefer(page, preference)
        for label, size in (("desktop", DESKTOP), ("mobile", PHONE)):
            page.set_window_size(*size)
            _fresh(page, f"{base}errors/{BORROW_ID}/")
            assert _scheme(page) == scheme
            path = _screenshot(page, f"seed-{preference}-{label}.png")
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
