"""Hostile catalog content (issue 8, part 3): every YAML text field of a small project carries
HTML, JavaScript, Markdown link tricks and template syntax. The built pages must show all of it as
inert text, the JSON API must keep it as data, and no script from the catalog may run in a real
browser.

Each payload that would run sets `window.__pwned` (or calls `alert`), so the browser test can
tell whether any of them did.
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import read_elements
from test_browser import chromium, needs_browser, served
from test_build_project import make_project

from catalog.core.config import load_config
from catalog.publish.build import build_site

ACTIVE_ID = "aaaaaaaaaaaaaaaa"
QUOTES_ID = "bbbbbbbbbbbbbbbb"
RETIRED_ID = "cccccccccccccccc"
SPEC_ID = "dddddddddddddddd"

PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "[click](javascript:window.__pwned=3)",
    '<a href="javascript:window.__pwned=4">a link</a>',
    '<svg onload="window.__pwned=5"></svg>',
    "[x](java&#115;cript:window.__pwned=6)",
    "[x]( javascript:window.__pwned=7)",
    "[x][evil] and [evil]\n\n[evil]: javascript:window.__pwned=8",
    "<javascript:window.__pwned=9>",
    "{{ 7*7 }}",
    "{% raw %}{{ 7*7 }}{% endraw %} and {% if true %}x{% endif %}",
    "</code></pre><script>window.__pwned=10</script>",
    '<iframe src="javascript:parent.__pwned=11"></iframe>',
    "<style>body { display: none }</style>",
    "&lt;script&gt;window.__pwned=12&lt;/script&gt; &#60;b&#62; &amp;",
    '" onmouseover="window.__pwned=13" x="',
    "' onmouseover='window.__pwned=14' x='",
    # A backslash before a code span and a code span across lines: both reached Markdown as raw
    # HTML before catalog/pages/markdown.py escaped backslashes and joined code span lines.
    '\\`<img src=x onerror="window.__pwned=15">`',
    "`a\n<script>window.__pwned=16</script>\nb`",
    "`</section><script>window.__pwned=17</script>`",
    '[x](https://example.org/" onmouseover="window.__pwned=18)',
    "![x](javascript:window.__pwned=19)",
    '<details open ontoggle="window.__pwned=20">',
    '{: onclick="window.__pwned=21" }',
    "!!! danger\n    <script>window.__pwned=22</script>",
    "---\ntitle: <script>window.__pwned=23</script>\n---",
    "<script>alert(24)</script>",
)

PROSE = "Plain words first.\n\n" + "\n\n".join(PAYLOADS)
CODE = "\n".join(PAYLOADS)
# A message is a str.format template: only payloads without braces fit (`{{` is an escaped `{`).
MESSAGE = "widget {name} " + " ".join(
    " ".join(p.split()) for p in PAYLOADS if "{" not in p.replace("{{ 7*7 }}", "")
)
QUOTES_MESSAGE = '" onmouseover="window.__pwned=25" x="{name}\' onfocus=\'window.__pwned=26\''
RETIRED_MESSAGE = (
    "widget {name}\n---\nsearch:\n  exclude: true\ntitle: <b>pwned</b>\n---\nstill here"
)
SPEC_MESSAGE = "widget {name:<script>window.__pwned=27</script>} turns"

CATALOG = {
    "module": "widgets.core",
    "errors": [
        {
            "id": ACTIVE_ID,
            "name": "HostileEverywhere",
            "exception": "ValueError",
            "status": "active",
            "message": MESSAGE,
            "meaning": PROSE,
            # Lists hold at most 20 items: each payload is an item of one list, and all are in
            # the first item of both.
            "solutions": [PROSE, *PAYLOADS[:19]],
            "example": {"before": CODE, "after": CODE},
            "trigger": PROSE,
            "situations": [PROSE, *PAYLOADS[19:]],
            "related": [QUOTES_ID, RETIRED_ID],
            "since": "0.1.0",
        },
        {
            "id": QUOTES_ID,
            "name": "QuotesBreakAttributes",
            "exception": "RuntimeError",
            "status": "draft",
            "message": QUOTES_MESSAGE,
            "meaning": PROSE,
        },
        {
            "id": RETIRED_ID,
            "name": "FrontMatterBreaker",
            "exception": "RuntimeError",
            "status": "retired",
            "message": RETIRED_MESSAGE,
            "retired_reason": PROSE,
            "replaced_by": ACTIVE_ID,
        },
        {
            "id": SPEC_ID,
            "name": "PayloadInASpec",
            "exception": "ValueError",
            "status": "draft",
            "message": SPEC_MESSAGE,
        },
    ],
}
TEXT_FIELDS = ("message", "meaning", "solutions", "example", "trigger", "situations")

# The HTML tags and attributes through which a page can run script or pull in content.
FORBIDDEN_IN_CONTENT = {
    "script",
    "img",
    "iframe",
    "frame",
    "style",
    "object",
    "embed",
    "details",
    "form",
    "input",
    "base",
    "meta",
    "link",
    "math",
}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "srcdoc"}
# Material's search index keeps these tags of a page's text and escapes everything else.
SEARCH_TAGS = {"p", "code", "pre", "li", "ol", "ul", "sub", "sup"}


class _Page(HTMLParser):
    """What a built page holds: every element (tag, attributes, whether inside the article),
    every script with its text, the title and the article's text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None], bool]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.title = ""
        self.article_text: list[str] = []
        self._stack: list[str] = []
        self._article_depth: int | None = None

    @property
    def in_article(self) -> bool:
        return self._article_depth is not None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "article" and self._article_depth is None:
            self._article_depth = len(self._stack)
        self.elements.append((tag, attributes, self.in_article))
        if tag == "script":
            self.scripts.append((attributes, ""))
        if tag not in {"br", "hr", "img", "input", "link", "meta", "source", "wbr", "col"}:
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass
        if self._article_depth is not None and len(self._stack) <= self._article_depth:
            self._article_depth = None

    def handle_data(self, data: str) -> None:
        if self._stack and self._stack[-1] == "script" and self.scripts:
            attributes, text = self.scripts[-1]
            self.scripts[-1] = (attributes, text + data)
        if self._stack and self._stack[-1] == "title":
            self.title += data
        if self.in_article:
            self.article_text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small project with the hostile catalog, built once."""
    root = make_project(tmp_path_factory.mktemp("hostile"))
    (root / "catalog" / "widgets.core.yaml").write_text(
        yaml.safe_dump(CATALOG, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    return build_site(load_config(root), root / "build" / "site").out


def test_every_payload_is_in_every_text_field() -> None:
    """The catalog really carries each payload in each text field (the message where it can)."""
    active = CATALOG["errors"][0]
    assert isinstance(active, dict)
    for payload in PAYLOADS:
        for name in ("meaning", "trigger"):
            assert payload in active[name]
        assert payload in active["solutions"] + active["situations"]
        assert payload in active["solutions"][0] and payload in active["situations"][0]
        assert payload in active["example"]["before"] and payload in active["example"]["after"]
    retired = CATALOG["errors"][2]
    assert isinstance(retired, dict) and retired["retired_reason"] == PROSE
    assert "<script>window.__pwned=1</script>" in MESSAGE and "{{ 7*7 }}" in MESSAGE


def test_no_catalog_markup_is_live_in_any_page(site: Path) -> None:
    """No page holds a script, event handler, javascript: URL or embedded content from the
    catalog: the article holds none of those tags, and scripts elsewhere are Material's own."""
    pages = _pages(site)
    assert len(pages) >= 10
    for path in pages:
        page = _parse(path)
        where = path.relative_to(site).as_posix()
        for tag, attributes, in_article in page.elements:
            assert not (in_article and tag in FORBIDDEN_IN_CONTENT), (where, tag, attributes)
            for name, value in attributes.items():
                assert not name.startswith("on"), (where, tag, name, value)
                if name in URL_ATTRIBUTES and value is not None:
                    scheme = re.sub(r"[\x00-\x20]", "", html.unescape(value)).lower()
                    assert not scheme.startswith(("javascript:", "vbscript:", "data:text/html")), (
                        where,
                        tag,
                        name,
                        value,
                    )
        for attributes, text in page.scripts:
            source = attributes.get("src")
            if source is not None:
                # Material's bundles, and errcat's own three scripts from its theme folder.
                assert re.fullmatch(
                    r"(/|(\.\./)*)assets/(javascripts/[\w./-]+|errcat|errcat-early|errcat-match)\.js",
                    source,
                ), source
            assert "pwned" not in text and "alert(" not in text, (where, text[:200])


def _text(site: Path, entry_id: str) -> str:
    page = _parse(site / "errors" / entry_id / "index.html")
    return "".join(page.article_text)


def test_payloads_show_as_text(site: Path) -> None:
    """The pages show what the author wrote: each payload's characters appear as text, template
    syntax is not evaluated, and titles keep quotes and front-matter breakers as text."""
    text = _text(site, ACTIVE_ID)
    for payload in PAYLOADS:
        # Markdown link syntax keeps only its label; everything else shows as written.
        visible = " ".join(payload.split())
        if payload.startswith(("[", "![", "\\`", "`")):
            continue
        assert visible in " ".join(text.split()), payload
    assert "<script>window.__pwned=1</script>" in text
    assert "{{ 7*7 }}" in text and "{% raw %}" in text and "49" not in text
    # The code span across lines stays one code element, its contents escaped.
    source = (site / "errors" / ACTIVE_ID / "index.html").read_text(encoding="utf-8")
    assert "<code>a &lt;script&gt;window.__pwned=16&lt;/script&gt; b</code>" in source
    for entry_id, message in (
        (ACTIVE_ID, MESSAGE),
        (QUOTES_ID, QUOTES_MESSAGE),
        (RETIRED_ID, RETIRED_MESSAGE),
        (SPEC_ID, SPEC_MESSAGE),
    ):
        page = _parse(site / "errors" / entry_id / "index.html")
        assert page.title == f"{' '.join(message.split())} - Widgets", entry_id


def test_the_api_keeps_every_payload_as_data(site: Path) -> None:
    """Each entry file and the index hold the catalog's strings exactly as written."""
    rows = json.loads((site / "api" / "errors" / "index.json").read_text(encoding="utf-8"))
    messages = {row["id"]: row["message"] for row in rows}
    for entry in CATALOG["errors"]:
        assert isinstance(entry, dict)
        document = json.loads(
            (site / "api" / "errors" / f"{entry['id']}.json").read_text(encoding="utf-8")
        )
        assert messages[entry["id"]] == entry["message"]
        for name in (*TEXT_FIELDS, "retired_reason"):
            if name not in entry:
                continue
            value = document[name]
            if name == "example":
                value = {"before": value["before"], "after": value["after"]}
            assert value == entry[name], (entry["id"], name)


def test_the_search_index_holds_only_escaped_text(site: Path) -> None:
    """Material renders search results as HTML: every title and text in the index holds only
    the plain tags Material keeps, without attributes, and the payloads only as escaped text."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    found = False
    for document in index["docs"]:
        for key in ("title", "text"):
            page = _Page()
            page.feed(document[key])
            page.close()
            for tag, attributes, _ in page.elements:
                assert tag in SEARCH_TAGS and not attributes, (document["location"], tag)
            found = found or "window.__pwned=1" in "".join(page.article_text) + document[key]
    assert found


_TRAP = """
window.__alerts = [];
for (const name of ["alert", "confirm", "prompt", "print"]) {
  window[name] = (...args) => { window.__alerts.push(name + ":" + args.join(",")); };
}
"""
# Resolves after event handlers queued by the page (image errors, toggles) have had their turn.
_SETTLED = """
const done = arguments[arguments.length - 1];
setTimeout(() => done({pwned: String(window.__pwned), alerts: window.__alerts}), 150);
"""


def _url(base: str, site: Path, path: Path) -> str:
    relative = path.relative_to(site).as_posix()
    return base + (relative[: -len("index.html")] if relative.endswith("index.html") else relative)


@needs_browser
def test_no_catalog_script_runs_in_chromium(site: Path) -> None:
    """Loading every page, and searching for the payloads, runs none of them."""
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def settled(driver: Any) -> dict[str, Any]:
        result: dict[str, Any] = driver.execute_async_script(_SETTLED)
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018 - reading it is how Selenium looks for one
        return result

    visited = 0
    with served(site) as base, chromium(before_each_page=_TRAP) as driver:
        driver.set_script_timeout(10)
        for path in _pages(site):
            driver.get(_url(base, site, path))
            assert settled(driver) == {"pwned": "undefined", "alerts": []}, path
            visited += 1
        # Material renders search results from the index as HTML: find the hostile sections
        # by their first words and let the results show the payloads.
        driver.get(base)
        box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
        box.click()
        box.send_keys("Plain words first")
        WebDriverWait(driver, 20).until(
            lambda d: (
                "<script>window.__pwned=1</script>"
                in " ".join(read_elements(d, ".md-search-result", "innerText"))
            )
        )
        assert settled(driver) == {"pwned": "undefined", "alerts": []}
    assert visited == len(_pages(site))
