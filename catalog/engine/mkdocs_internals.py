"""MkDocs' private names that errcat's fast path leans on, reached from here only, with a probe.

MkDocs has no public way to convert a page with its own per-page Markdown processors (links
rewritten and checked, anchor ids collected, the title taken from the first heading): they are
private classes of `mkdocs.structure.pages`, added to a Markdown instance by their `_register`.
Nor to give a page the title its render found (`Page._title_from_render`), to make a page of
an existing `Page` another class (errcat's `AcceleratedPage`, whose `read_source` and `render`
MkDocs calls for every page), or to render one page's theme output apart from writing it, as
`mkdocs.commands.build._build_page` does in a worker. All of that is done here and nowhere else.

`probe`, run at the start of every build, checks that this MkDocs still has each of those names
in the shape used here; where one differs, the build's pages are converted by MkDocs itself
(one log line says why), so a new MkDocs release can slow a build but never change a site.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import jinja2
import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
from mkdocs.commands import build as mkdocs_build
from mkdocs.commands.build import get_context
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure import pages as mkdocs_pages
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

_PROCESSORS = (
    "_RawHTMLPreprocessor",
    "_ExtractAnchorsTreeprocessor",
    "_RelativePathTreeprocessor",
    "_ExtractTitleTreeprocessor",
)
"""MkDocs' per-page processors, in the order `Page.render` registers them."""


@functools.cache
def probe() -> str | None:
    """None when this MkDocs has every private name used here in the shape used; otherwise
    what differs, for the log line that turns the fast path off."""
    for name in _PROCESSORS:
        if not callable(getattr(getattr(mkdocs_pages, name, None), "_register", None)):
            return f"mkdocs.structure.pages.{name}._register is gone"
    # Names a function reads or stores as attributes are listed in its code's co_names.
    render_names = set(Page.render.__code__.co_names)
    wanted = {"_title_from_render", "present_anchor_ids", "links_to_anchors", "_register"}
    if not wanted <= render_names:
        missing = ", ".join(sorted(wanted - render_names))
        return f"Page.render no longer reads or sets {missing}"
    if "_title_from_render" not in Page.__init__.__code__.co_names:
        return "Page no longer keeps _title_from_render"
    build_page = getattr(mkdocs_build, "_build_page", None)
    build_names = set(getattr(getattr(build_page, "__code__", None), "co_names", ()))
    if not {"_current_page", "active", "get_context", "on_page_context"} <= build_names:
        return "mkdocs.commands.build._build_page renders a page differently"
    populate = getattr(mkdocs_build, "_populate_page", None)
    populate_names = set(getattr(getattr(populate, "__code__", None), "co_names", ()))
    if not {"read_source", "render"} <= populate_names:
        return "mkdocs.commands.build._populate_page no longer calls Page.read_source/render"
    return None


@dataclass(frozen=True)
class PageProcessors:
    """MkDocs' per-page processors registered on one Markdown instance for one page."""

    raw_html: Any
    """Collects the ids of raw HTML (`present_anchor_ids`); its `run` takes lines."""
    anchors: Any
    """Collects the ids of headings (`present_anchor_ids`)."""
    links: Any
    """Rewrites and checks links (`path_to_url`, `links_to_anchors`)."""
    title: Any
    """The page's first heading (`title`)."""


def register_processors(
    md: markdown.Markdown, file: File, files: Files, config: MkDocsConfig
) -> PageProcessors:
    """MkDocs' per-page processors for `file`, added to `md` as `Page.render` adds them."""
    raw_html = mkdocs_pages._RawHTMLPreprocessor()
    raw_html._register(md)
    anchors = mkdocs_pages._ExtractAnchorsTreeprocessor(file, files, config)
    anchors._register(md)
    links = mkdocs_pages._RelativePathTreeprocessor(file, files, config)
    links._register(md)
    title = mkdocs_pages._ExtractTitleTreeprocessor()
    title._register(md)
    return PageProcessors(raw_html, anchors, links, title)


def set_rendered_title(page: Page, title: str | None) -> None:
    """The title the page's render found, where `Page.title` looks for it."""
    page._title_from_render = title


class PageDriver(Protocol):
    """What reads and converts an `AcceleratedPage` (the accelerator)."""

    def read_source(self, page: Page) -> bool: ...

    def render(self, page: Page, config: MkDocsConfig, files: Files) -> bool: ...


class AcceleratedPage(Page):
    """A generated page: reading and rendering go through the accelerator, which may fall
    back to MkDocs' own. Pages become this class in `on_pre_page`, in place (`adopt`)."""

    _errcat: PageDriver
    _errcat_markdown: str | None = None
    """The Markdown the accelerator gave the page, to tell whether a plugin changed it."""
    _errcat_markers = False
    """Whether that Markdown still holds the block markers (see `Accelerator.read_source`)."""
    _errcat_record: str | None = None
    """The cache key of the converted page the accelerator filled it from, which stands for
    its content and table of contents (None: MkDocs converted it)."""
    _errcat_deferred = False
    """Whether only the page's head was restored (`Accelerator._fill`): its content and table
    of contents are filled in only if its themed output has to be rendered."""

    def read_source(self, config: MkDocsConfig) -> None:
        if not self._errcat.read_source(self):
            super().read_source(config)

    def render(self, config: MkDocsConfig, files: Files) -> None:
        if not self._errcat.render(self, config, files):
            super().render(config, files)


def adopt(page: Page, driver: PageDriver) -> None:
    """Make the page MkDocs already holds an `AcceleratedPage` driven by `driver`: MkDocs
    creates every page itself and offers no way to choose its class."""
    page.__class__ = AcceleratedPage
    page._errcat = driver  # type: ignore[attr-defined]


def theme_output(
    page: Page,
    config: MkDocsConfig,
    listed: Sequence[File],
    env: jinja2.Environment,
    nav: Navigation,
) -> str:
    """The page's output from the theme as `_build_page` renders it (the same context, the
    same plugins before it), before the `post_page` plugins and the write."""
    config._current_page = page
    page.active = True
    context = get_context(nav, listed, config, page)
    template = env.get_template(page.meta.get("template", "main.html"))
    context = config.plugins.on_page_context(context, page=page, config=config, nav=nav)
    output = template.render(context)
    page.active = False
    return output
