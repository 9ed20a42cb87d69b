"""The search box in a real browser, on a plain static file server: what people paste (a
concrete message, a traceback line, the docs-link note, a class name, an id) puts the right
error page first in Material's result list, above Material's own word-search results.

One site build and one Chromium for the module (tests/pages/test_browser.py's helpers); the rules
themselves are checked entry by entry against `errcat explain` in tests/matching/test_match_index.py.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest
from helpers import read_elements
from test_browser import REPO, _missing, chromium, needs_browser, served

from catalog.core.config import load_config
from catalog.matching.browser_index import MATCH_FILE
from catalog.publish.build import build_site

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

pytestmark = needs_browser

# (pasted, the page it must put first); lunr alone ranks the first four 22nd, 12th, 10th, 14th.
CASES = [
    ("out must be on device cuda:1, got cuda:0", "0fdb60950b3588f4"),
    ("runtime.errors.OutputBufferWrongDevice: out must be on device cpu, got meta",
     "0fdb60950b3588f4"),
    ("lse must be on device cuda:1, got cpu", "0fdb60950b3588f4"),
    ("out must have dtype torch.bfloat16, got torch.float32", "68321f570f4655d7"),
    ("ValueError: kv must be torch.float8_e4m3fn, got torch.bfloat16", "38ee6ace4db6a18a"),
    ("BorrowRequiresMps", "f978622eed176d93"),
    ("runtime.errors.BorrowRequiresMps", "f978622eed176d93"),
    ("ffbed2bb70a79900", "ffbed2bb70a79900"),
    ("For further information visit http://127.0.0.1:8000/errors/d707e25309e5dbae/",
     "d707e25309e5dbae"),
]  # fmt: skip

# Counts the queries Material posts to its search worker and the results it gets back, so a
# test can wait until Material has answered the query in the box (it renders on the answer).
WATCH_WORKER = """
(() => {
  const Original = window.Worker;
  window.__search = {posted: 0, answered: 0};
  window.Worker = class extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (event.data && event.data.type === 3) window.__search.answered++;
      });
    }
    postMessage(message, ...rest) {
      if (message && message.type === 2) window.__search.posted++;
      return super.postMessage(message, ...rest);
    }
  };
})();
"""
FIRST_RESULT = """
const items = [...document.querySelectorAll(".md-search-result__item")];
const theirs = items.filter((item) => !item.classList.contains("errcat-match"));
const first = document.querySelector(".md-search-result__item a");
return {first: first ? first.getAttribute("href") : null, theirs: theirs.length,
        ours: items.length - theirs.length, ...window.__search,
        title: first ? first.querySelector("h1").textContent : null};
"""
CLEAR = """
const box = document.querySelector("input.md-search__input");
box.value = "";
box.dispatchEvent(new Event("input", {bubbles: true}));
box.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true}));
"""
# A paste of several lines: the <input> keeps them without line breaks, the clipboard with.
PASTE = """
const [text] = arguments;
const box = document.querySelector("input.md-search__input");
const data = new DataTransfer();
data.setData("text/plain", text);
box.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true}));
box.value = text.replace(/[\\r\\n]/g, "");
box.dispatchEvent(new Event("input", {bubbles: true}));
box.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true}));
"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def static_server(site: Path) -> Iterator[str]:
    """`python -m http.server` for `site` on a free loopback port: no errcat, no API routes."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's own site, built once."""
    if _missing() is not None:
        pytest.skip(_missing() or "")
    scratch = tmp_path_factory.mktemp("search")
    result = build_site(load_config(REPO), scratch / "site", build_dir=scratch / "build")
    return result.out.resolve()


@pytest.fixture(scope="module")
def static_url(site: Path) -> Iterator[str]:
    with static_server(site) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if _missing() is not None:
        pytest.skip(_missing() or "")
    with chromium(WATCH_WORKER) as driver:
        yield driver


def _search(browser: WebDriver, query: str, *, paste: bool = False) -> dict[str, Any]:
    """Put `query` in the search box (typed, or pasted as one clipboard text); the result list
    as it stands once Material's worker has answered every query it was sent (errcat's items
    are placed synchronously on input, and again each time Material refills the list)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    browser.execute_script(CLEAR)
    before = browser.execute_script("return window.__search.posted")
    if paste:
        browser.execute_script(PASTE, query)
    else:
        box.send_keys(query)

    def answered(driver: WebDriver) -> dict[str, Any] | Literal[False]:
        state: dict[str, Any] = driver.execute_script(FIRST_RESULT)
        done = state["posted"] > before and state["answered"] == state["posted"]
        return state if done and state["ours"] else False

    state: dict[str, Any] = WebDriverWait(browser, 20).until(answered)
    return state


def test_pasted_errors_put_their_page_first(static_url: str, browser: WebDriver) -> None:
    """Each case, typed into Material's search box on a static host, ranks its page first."""
    browser.get(f"{static_url}errors/")
    ranks = {}
    for query, wanted in CASES:
        state = _search(browser, query)
        ranks[query] = (state["first"], state["theirs"])
        assert state["first"] == f"{static_url}errors/{wanted}/", (query, state)
    # Material's word-search results still follow.
    assert ranks[CASES[0][0]][1] >= 1


def test_the_results_look_like_materials_and_enter_opens_the_first(
    static_url: str, browser: WebDriver
) -> None:
    """errcat's items use Material's markup (title, link class, score), the page's own
    word-search item is not listed twice, and Enter opens the best match."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{static_url}guides/api/")
    state = _search(browser, "borrow_torch_tensors requires MPS tensors, got cpu, mps:0")
    assert state["title"] == "borrow_torch_tensors requires MPS tensors, got {devices}"
    page = f"{static_url}errors/f978622eed176d93/"
    links = read_elements(browser, ".md-search-result__item a.md-search-result__link", "href")
    assert links[0] == page
    assert [link for link in links if link.split("?")[0].split("#")[0] == page] == [page]
    browser.find_element(By.CSS_SELECTOR, "input.md-search__input").send_keys(Keys.ENTER)
    WebDriverWait(browser, 20).until(lambda driver: driver.current_url == page)


def test_a_pasted_traceback_is_matched_line_by_line(static_url: str, browser: WebDriver) -> None:
    """A traceback pasted whole loses its line breaks in the box; the clipboard's lines are
    matched instead, so a vague message is still found by its class line."""
    browser.get(static_url)
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/pool.py", line 41, in copy\n'
        "    stream.copy(dst, src)\n"
        "runtime.errors.StreamMemoryOperationFailed: cuMemcpyAsync: invalid argument\n"
    )
    state = _search(browser, traceback, paste=True)
    assert state["first"] == f"{static_url}errors/58e3999e4b8fb201/"


def test_the_index_is_fetched_on_first_focus_from_the_site_itself(
    site: Path, static_url: str, browser: WebDriver
) -> None:
    """Nothing is fetched before the search box is used; then the index, from the same origin."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    fetched = """return performance.getEntriesByType("resource").map((e) => e.name)
        .filter((name) => name.includes("errcat-match.json"));"""
    browser.get(f"{static_url}errors/")
    assert browser.execute_script(fetched) == []
    browser.find_element(By.CSS_SELECTOR, "input.md-search__input").click()
    WebDriverWait(browser, 20).until(lambda driver: driver.execute_script(fetched))
    assert browser.execute_script(fetched) == [f"{static_url}{MATCH_FILE}"]
    assert json.loads((site / MATCH_FILE).read_text(encoding="utf-8"))["format"] == 1


def test_word_search_has_the_class_names_too(site: Path) -> None:
    """Material's own index (lunr) holds each page's class name, for word search."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    [doc] = [d for d in index["docs"] if d["location"] == "errors/f978622eed176d93/"]
    assert "<code>BorrowRequiresMps</code>" in doc["text"]


def test_api_match_finds_a_class_name(site: Path) -> None:
    """`errcat serve`'s `/api/match` answers a bare or qualified class name with its entry."""
    with served(site) as url:
        for query in ("BorrowRequiresMps", "runtime.errors.BorrowRequiresMps"):
            address = f"{url}api/match?{urllib.parse.urlencode({'message': query})}"
            with urllib.request.urlopen(address, timeout=30) as response:
                matches = json.load(response)["matches"]
            assert [m["id"] for m in matches] == ["f978622eed176d93"], query
