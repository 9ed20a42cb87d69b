"""A site big enough to page, in a real browser at 1280 and 390 px, light and dark: nothing
wider than the window, no console error, no failed request, the system's scheme followed.

The package is generated: 1,200 raise sites over 24 modules with deep, long file names, every
common exception type, a KeyError, an empty `NotImplementedError` raised at 15 sites, a
placeholder of 300-odd characters, an unbroken 100-character token and a package class with a
long name — the shapes that broke the whole-torch site's layout. `errcat new` drafts it with no
hand edits, so the all-errors index and the ValueError group are paged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from helpers import errcat_in, wait_for
from test_browser import _missing, chromium, needs_browser
from test_browser_site import MISSED, RECORD_REQUESTS, TOGGLE, static_server

from catalog.core.config import load_config
from catalog.pages.content import ROWS_PER_PAGE
from catalog.publish.build import build_site

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

MODULES = 24
PER_MODULE = 50
FOLDER = "distributed_checkpoint_storage_backends"
LONG_PLACEHOLDER = ".".join(
    [
        "self",
        "configuration_of_the_distributed_data_parallel_wrapper_with_gradient_bucketing",
        "gradient_as_bucket_view_and_static_graph_and_find_unused_parameters",
        "when_running_in_evaluation_mode_under_an_inference_only_autocast_context",
        "and_the_state_dictionary_hooks_registered_before_the_optimizer_was_constructed",
    ]
)
LONG_TOKEN = "expected_configuration_key_distributed_checkpoint_storage_backend_prefetch_depth"
LONG_CLASS = "DistributedCheckpointStorageBackendPrefetchingFailedUnexpectedlyError"
INDEX_LIMIT = 200 * 1024

# Errors the page reports, as they happen: script errors, rejected promises, console.error,
# and resources that failed to load (their error events do not bubble, so capture them).
RECORD_CONSOLE = """
window.__errcatConsole = [];
const keep = (what) => window.__errcatConsole.push(String(what));
window.addEventListener("error", (e) => keep(e.message || (e.target && e.target.src) ||
  (e.target && e.target.href) || "error event"), true);
window.addEventListener("unhandledrejection", (e) => keep("rejected: " + e.reason));
const originalError = console.error;
console.error = function () { keep([...arguments].join(" ")); originalError.apply(console, arguments); };
"""

# How far the document reaches past the window, and what overflows inside: a table that needs
# sideways scrolling (wider than its column, or its own content wider than it), or a long name
# whose text runs out of its box. Source code blocks may scroll: they are code, not prose.
OVERFLOW = """
const root = document.documentElement;
const label = (e) => (e.querySelector("td, th") || e).textContent.trim().slice(0, 60);
// The space an element has is its nearest block container's (an inline <a> has no width).
const room = (e) => {
  let box = e.parentElement;
  while (box.parentElement && getComputedStyle(box).display.startsWith("inline")) {
    box = box.parentElement;
  }
  return box.clientWidth;
};
const wide = [...document.querySelectorAll("article table, article code.errcat-long")]
  .map((e) => [Math.max(e.getBoundingClientRect().width - room(e),
                        e.scrollWidth - e.clientWidth), e.tagName, label(e)])
  .filter(([excess]) => excess > 1);
return [root.scrollWidth - window.innerWidth, wide];
"""


def _module(index: int) -> str:
    """One module's source: PER_MODULE raise sites, a mix of exception types and messages."""
    lines = [f'"""Generated module {index} of the paging test."""', ""]
    if index == 0:
        lines += [f"class {LONG_CLASS}(RuntimeError):", "    pass", ""]
    kinds = (
        'raise ValueError(f"stage {m}.{i} expects a value below {limit}, got {value}")',
        'raise TypeError(f"stage {m}.{i} takes a tensor, not {type(value).__name__}")',
        'raise KeyError(f"key {value!r} is missing from table {m}-{i}")',
        'raise RuntimeError("stage {m}.{i} lost its worker before the barrier")',
        'raise ValueError(f"stage {m}.{i} cannot reshape {value} into {limit} parts")',
    )
    for i in range(PER_MODULE):
        if index == 0 and i < 15:
            body = "raise NotImplementedError"
        elif index == 0 and i == 15:
            body = f'raise ValueError(f"{{{LONG_PLACEHOLDER}}}")'
        elif index == 0 and i == 16:
            body = f'raise ValueError("{LONG_TOKEN}")'
        elif index == 0 and i == 17:
            body = f'raise {LONG_CLASS}("the prefetching reader stopped before the last shard")'
        else:
            body = kinds[i % len(kinds)].replace("{m}", str(index)).replace("{i}", str(i))
        lines += [
            f"def stage_{i}(self, value, limit):",
            "    if value > limit:",
            f"        {body}",
            "",
        ]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated package, drafted by `errcat new` and built once."""
    if _missing() is not None:
        pytest.skip(_missing() or "")
    root = tmp_path_factory.mktemp("scale")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "scalepkg"\nversion = "1.0"\n\n[tool.errcat]\npackage = "scalepkg"\n',
        encoding="utf-8",
    )
    folder = root / "scalepkg" / FOLDER
    folder.mkdir(parents=True)
    (root / "scalepkg" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "__init__.py").write_text("", encoding="utf-8")
    for index in range(MODULES):
        name = f"filesystem_reader_with_asynchronous_prefetching_{index:02d}.py"
        (folder / name).write_text(_module(index), encoding="utf-8")
    assert errcat_in(root, "new") == 0
    return build_site(load_config(root), root / "build" / "site").out


@pytest.fixture(scope="module")
def base(built: Path) -> Iterator[str]:
    with static_server(built) as url:
        yield url


def _rows(built: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads(
        (built / "api" / "errors" / "index.json").read_text(encoding="utf-8")
    )
    return rows


def _one(built: Path, test: Callable[[str], bool]) -> str:
    """The id of the one entry whose message satisfies `test`."""
    (found,) = [row["id"] for row in _rows(built) if test(str(row["message"]))]
    return str(found)


def _page_types(built: Path) -> list[str]:
    """One URL of each kind: home, paged indexes, groups, the stressing error pages, a 404."""
    module = f"scalepkg.{FOLDER}.filesystem_reader_with_asynchronous_prefetching_00"
    stressing = (
        lambda m: m == "",  # raised at 15 sites
        lambda m: len(m) > 250,  # one placeholder
        lambda m: m.startswith("expected_configuration_key"),
        lambda m: m.startswith("the prefetching reader"),  # the long package class
        lambda m: m == "key {value!r} is missing from table 3-2",
    )
    return [
        "",
        "errors/",
        "errors/page-3/",
        "errors/modules/",
        "errors/exceptions/",
        "errors/exceptions/ValueError/page-2/",
        f"errors/modules/{module}/",
        *(f"errors/{_one(built, test)}/" for test in stressing),
        "no/such/page/",
    ]


def test_the_indexes_are_paged_small_and_reach_every_entry(built: Path) -> None:
    """Every index page is under 200 KB of HTML; the all-errors pages list each entry once."""
    rows = _rows(built)
    assert len(rows) > 2 * ROWS_PER_PAGE  # big enough that paging is what is tested
    errors = built / "errors"
    pages = [errors / "index.html", *sorted(errors.glob("page-*/index.html"))]
    assert len(pages) == -(-len(rows) // ROWS_PER_PAGE)
    indexes = [
        *pages,
        *errors.glob("modules/**/index.html"),
        *errors.glob("exceptions/**/index.html"),
    ]
    heavy = {
        str(p.relative_to(built)): p.stat().st_size
        for p in indexes
        if p.stat().st_size > INDEX_LIMIT
    }
    assert not heavy
    linked = [re.findall(r'href="(?:\.\./)*([0-9a-f]{16})/"', p.read_text("utf-8")) for p in pages]
    flat = [entry for page in linked for entry in page]
    assert sorted(flat) == sorted(str(row["id"]) for row in rows)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if _missing() is not None:
        pytest.skip(_missing() or "")
    with chromium(before_each_page=RECORD_REQUESTS + RECORD_CONSOLE) as driver:
        yield driver


@needs_browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", [(1280, 900), (390, 844)], ids=["1280px", "390px"])
def test_every_page_type_fits_loads_cleanly_and_follows_the_system_scheme(
    built: Path, base: str, browser: WebDriver, size: tuple[int, int], scheme: str
) -> None:
    browser.set_window_size(*size)
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": scheme}]},
    )
    expected = "slate" if scheme == "dark" else "default"
    problems: list[str] = []
    try:
        for path in _page_types(built):
            MISSED.clear()
            browser.get(base + path)
            assert wait_for(
                lambda: bool(browser.execute_script(f"return !!document.querySelector('{TOGGLE}')"))
            ), f"Material's script did not set up /{path}"
            excess, tables = browser.execute_script(OVERFLOW)
            if excess > 0:
                problems.append(f"/{path}: {excess} px wider than the window")
            problems += [
                f"/{path}: {tag} overflows by {round(e)} px ({text!r})" for e, tag, text in tables
            ]
            problems += [
                f"/{path}: console: {e}"
                for e in browser.execute_script("return window.__errcatConsole")
            ]
            problems += [f"/{path}: 404 for {m}" for m in MISSED if m != "/" + path]
            shown = browser.execute_script("return document.body.dataset.mdColorScheme")
            if shown != expected:
                problems.append(f"/{path}: scheme {shown} under a {scheme} system preference")
    finally:
        browser.execute_script("try { localStorage.clear() } catch (e) {}")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert not problems, "\n".join(problems)
