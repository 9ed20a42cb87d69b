"""errcat's generated pages inside a MkDocs build: converted cheaply, reused when unchanged.

A catalog of thousands of errors is thousands of pages that MkDocs would otherwise treat like
hand-written ones: a new Python-Markdown instance per page, Pygments on every code block of
every page on every build, the search plugin parsing every page's HTML (highlighted code
included) only to throw the code away, and the theme's template rendered again for pages that
did not change. For the pages errcat generated (and only those) this module, driven by the
errcat MkDocs plugin's hooks, does instead:

- **Blocks apart.** A page's code blocks and index tables (`catalog.pages.blocks`) become HTML
  on their own (`catalog.engine.highlight`): code through the site's own highlighter, cached by
  content, tables written directly. Python-Markdown, one configured instance reused for every
  generated page, converts what is left.
- **Pages reused.** The converted page (HTML, table of contents, anchors) is cached under a
  digest of its Markdown, its blocks and the site's Markdown settings; so is the theme's output,
  under a digest of the page and of everything else the theme reads (the configuration, the
  navigation, the theme's files, the versions of every package involved). A page whose digests
  are unchanged costs a lookup.
- **Search entries written, not parsed.** Error pages are kept out of the search plugin's HTML
  parsing; their entries (`catalog.pages.search`) are added to its index after it is written.

The cache lives in the project's `.errcat-cache/` (`catalog.core.sitecache`). It never
changes what a build writes, only how long it takes: a page that logged a warning while it was
converted is not stored (so a strict build keeps failing on it), and the theme's output is
cached only when no plugin outside search and errcat takes part in the build, since an unknown
plugin may feed the theme things no digest here covers.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import logging
import multiprocessing
import os
import posixpath
import re
import sys
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import jinja2
import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
from markdown.extensions import Extension  # type: ignore[import-untyped]
from markdown.preprocessors import Preprocessor  # type: ignore[import-untyped]
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url
from mkdocs.utils.meta import YAML_RE, get_data

from catalog.core.cachefile import code_digest
from catalog.core.sitecache import SiteCache
from catalog.engine import navcache, prose_html, skeleton_html, themecache
from catalog.engine.highlight import CodeHighlighter, HighlightUnavailable
from catalog.pages.blocks import (
    MARKER,
    Block,
    CodeBlock,
    FastPage,
    LinksBlock,
    ProseBlock,
    TableBlock,
)
from catalog.pages.search import SearchDoc, merge_into_index

log = logging.getLogger("mkdocs.plugins.errcat")

CACHE_FORMAT = 1
"""Bumped when what is cached changes shape."""
_CACHED_TEMPLATE = "errcat/cached-page.html"
_HEAD = ("title", "anchors", "links")
"""What of a converted page other pages and the build read before any page is themed: a
page's head, stored beside its whole record."""
_OUTPUT_SAFE_PLUGINS = frozenset({"search", "material/search", "errcat"})
_PLAIN_TEXT_EXTENSIONS = frozenset(
    {
        "admonition",
        "attr_list",
        "codehilite",
        "def_list",
        "fenced_code",
        "footnotes",
        "md_in_html",
        "meta",
        "sane_lists",
        "tables",
        "toc",
        "pymdownx.details",
        "pymdownx.highlight",
        "pymdownx.inlinehilite",
        "pymdownx.superfences",
        "pymdownx.tabbed",
    }
)
"""Extensions that leave plain text and code spans as they are: with only these, a table or
a list of links errcat writes as HTML is what Python-Markdown would write. Others (smarty,
emoji, abbr, magiclink...) may change a message's text, so those blocks then go through
Python-Markdown like the rest of the page."""
_INLINE_EXTENSIONS = frozenset(
    {
        "abbr",
        "smarty",
        "pymdownx.betterem",
        "pymdownx.caret",
        "pymdownx.emoji",
        "pymdownx.escapeall",
        "pymdownx.keys",
        "pymdownx.magiclink",
        "pymdownx.mark",
        "pymdownx.smartsymbols",
        "pymdownx.tasklist",
        "pymdownx.tilde",
    }
)
"""Extensions that change only text outside code: code blocks highlighted apart are still
what the page would hold. With any extension in neither set, errcat cannot tell what it does
to a fence, and leaves its pages to MkDocs."""
_PACKAGES = ("mkdocs", "mkdocs-material", "markdown", "pymdown-extensions", "pygments", "jinja2")


def _digest(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8")
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def _plain(value: object) -> object:
    """A JSON-able, address-free stand-in for a configuration value."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(str(_plain(v)) for v in value)
    config = getattr(value, "config", None)
    if config is not None and isinstance(config, Mapping):  # a plugin
        return {"plugin": type(value).__qualname__, "config": _plain(config)}
    text = str(value)
    if " at 0x" in text:  # a function or object named by its address
        return f"{type(value).__module__}.{getattr(value, '__qualname__', type(value).__name__)}"
    return text


def _versions() -> str:
    found = []
    for name in _PACKAGES:
        try:
            found.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            found.append(f"{name}: none")
    return ";".join(found)


def _errcat_sources() -> str:
    """A digest of the code that turns a recorded page into HTML: all of errcat's
    (`code_digest`), since modules beyond the converter's own (the skeleton, the code
    formatter) shape the cached HTML too."""
    return code_digest().hex()


def _theme_files(config: MkDocsConfig) -> str:
    """A digest of the theme folders that no package version stands for (custom_dir)."""
    digest = hashlib.sha256()
    packages = {os.path.realpath(p) for p in sys.path if p}
    for folder in config.theme.dirs:
        real = os.path.realpath(folder)
        if any(real.startswith(p + os.sep) for p in packages if "-packages" in p):
            continue
        for root, dirs, names in os.walk(real):
            dirs.sort()
            for name in sorted(names):
                path = os.path.join(root, name)
                digest.update(os.path.relpath(path, real).encode() + b"\0")
                with open(path, "rb") as handle:
                    digest.update(handle.read() + b"\0")
    return digest.hexdigest()


_UNCACHED_KEYS = frozenset(
    {"site_dir", "config_file_path", "dev_addr", "watch", "strict", "plugins", "theme"}
)


def _config_fingerprint(config: MkDocsConfig) -> object:
    settings = {key: _plain(value) for key, value in config.items() if key not in _UNCACHED_KEYS}
    settings["plugins"] = {name: _plain(p.config) for name, p in config.plugins.items()}
    settings["theme"] = {
        "name": config.theme.name,
        "vars": _plain(dict(config.theme.items())),
        "files": _theme_files(config),
    }
    return settings


def _nav_fingerprint(items: list[Any]) -> list[object]:
    return [
        [
            type(item).__name__,
            item.title,
            getattr(item, "url", None),
            _nav_fingerprint(item.children or []),
        ]
        for item in items
    ]


def _toc_plain(items: Any) -> list[object]:
    return [[i.title, i.url, i.level, _toc_plain(i.children)] for i in items]


def _neighbour(page: Page | None) -> object:
    return None if page is None else [page.url, page.title]


class _WarningCount(logging.Handler):
    """Counts warnings, so that a page converted with a warning is not cached."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class _BlockPreprocessor(Preprocessor):  # type: ignore[misc]
    """Puts each block's HTML in place of its marker line, as superfences puts a fence's."""

    def __init__(self, md: markdown.Markdown, accelerator: Accelerator) -> None:
        super().__init__(md)
        self.accelerator = accelerator

    def run(self, lines: list[str]) -> list[str]:
        out = []
        for line in lines:
            match = MARKER.match(line) if "\ue000" in line else None
            if match is None:
                out.append(line)
                continue
            index = int(match.group("index"))
            html = self.accelerator.block_html(index)
            if html is None:
                out += self.accelerator.block_lines(index, match.group("indent"))
            else:
                out.append(match.group("indent") + self.md.htmlStash.store(html))
        return out


class _BlockExtension(Extension):  # type: ignore[misc]
    def __init__(self, accelerator: Accelerator) -> None:
        super().__init__()
        self.accelerator = accelerator

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # After whitespace normalisation (30), which would strip the stash's placeholders, and
        # before superfences (25), as its own placeholders are made.
        md.preprocessors.register(_BlockPreprocessor(md, self.accelerator), "errcat_blocks", 29)


class _LinkMissing(Exception):
    """A block links a page that is not in the build; MkDocs' own rendering will say so."""


PARALLEL_PAGES = 200
"""Pages to convert below which worker processes cost more than they save."""
_AHEAD: tuple[Any, ...] | None = None
"""What a worker of `Accelerator._in_workers` inherits through fork: the accelerator, the
cache generation and the job."""


def _worker_count() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return min(cpus, 4)


def _in_worker() -> tuple[Accelerator, tuple[Any, ...]]:
    """In a worker: the build's accelerator, with a cache connection of its own, and the job."""
    assert _AHEAD is not None
    accelerator, generation, *job = _AHEAD
    # Quiet: warnings are the build's to report, when it does such a page itself.
    logger = logging.getLogger("mkdocs")
    for handler in list(logger.handlers):
        if handler is not accelerator._warnings:
            logger.removeHandler(handler)
    logger.propagate = False
    assert accelerator._cache_folder is not None
    accelerator._cache = SiteCache(accelerator._cache_folder, generation)
    return accelerator, tuple(job)


def _convert_share(indexes: list[int]) -> int:
    """In a worker: convert the pages `indexes` of the build's list into the cache."""
    accelerator, (config, files, todo) = _in_worker()
    done = 0
    for index in indexes:
        file = todo[index]
        page = Page(None, file, config)
        page.__class__ = AcceleratedPage
        page._errcat = accelerator  # type: ignore[attr-defined]
        if accelerator.read_source(page) and accelerator._fill(
            page, config, files, accelerator._fast[file.src_uri], whole=True
        ):
            done += 1
    assert accelerator._cache is not None
    accelerator._cache.finish(succeeded=False)
    return done


def _render_share(indexes: list[int]) -> int:
    """In a worker: render the theme's output of the pages `indexes` into the cache, as
    MkDocs' `_build_page` renders it (the same context, the same plugins before it)."""
    from mkdocs.commands.build import get_context

    accelerator, (config, files, env, nav, pages) = _in_worker()
    cache = accelerator._cache
    assert cache is not None
    listed = files.documentation_pages()
    done = 0
    for index in indexes:
        page = pages[index]
        key = accelerator._new_outputs.get(page.file.src_uri)
        if key is None or not accelerator._undefer(page):
            continue
        warnings = accelerator._warnings.count
        config._current_page = page
        page.active = True
        context = get_context(nav, listed, config, page)
        template = env.get_template(page.meta.get("template", "main.html"))
        context = config.plugins.on_page_context(context, page=page, config=config, nav=nav)
        output = template.render(context)
        page.active = False
        # A page that logged a warning is left to the build, which will log it too.
        if accelerator._warnings.count == warnings:
            cache.put_text(key, output)
            if accelerator._write_ahead:
                # As MkDocs writes it (`mkdocs.utils.write_file`); the build then skips it.
                target = page.file.abs_dest_path
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as handle:
                    handle.write(output.encode("utf-8", errors="xmlcharrefreplace"))
            done += 1
    cache.finish(succeeded=False)
    return done


def _body(fast: FastPage) -> FastPage:
    """The page without its front matter, split off as MkDocs splits it."""
    found = YAML_RE.match(fast.text)
    return FastPage(fast.text[found.end() :].lstrip("\n"), fast.blocks) if found else fast


class AcceleratedPage(Page):
    """A generated page: reading and rendering go through the accelerator, which may fall
    back to MkDocs' own. Pages become this class in `on_pre_page`, in place."""

    _errcat: Accelerator
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


_SIMPLE_FRONT_MATTER = re.compile(
    r'---\n((?:[a-z_]+: "(?:[^"\\\n]|\\.)*"\n|[a-z_]+:\n(?:  - [a-z]+\n)+)+)---[ \t]*\n'
)
"""Front matter of the shape errcat writes: keys with a JSON string, or with a list of words."""
_SIMPLE_ENTRY = re.compile(r'([a-z_]+): ("(?:[^"\\\n]|\\.)*")\n|([a-z_]+):\n((?:  - [a-z]+\n)+)')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_YAML_WORDS = frozenset({"yes", "no", "on", "off", "true", "false", "null", "y", "n"})
"""Plain words YAML reads as something other than a string."""
_SEARCH_EXCLUDED = "---\nsearch:\n  exclude: true\n---\n"


def _split_front_matter(text: str) -> tuple[str, dict[str, Any]]:
    """`mkdocs.utils.meta.get_data(text)`, without YAML for the front matter errcat writes."""
    found = _SIMPLE_FRONT_MATTER.match(text)
    if found is not None:
        meta = _simple_front_matter(found.group(1))
        if meta is not None:
            return text[found.end() :].lstrip("\n"), meta
    if text.startswith(_SEARCH_EXCLUDED):
        return text[len(_SEARCH_EXCLUDED) :].lstrip("\n"), {"search": {"exclude": True}}
    return get_data(text)


def _simple_front_matter(body: str) -> dict[str, Any] | None:
    """What YAML reads from `body`, or None where it might read something else."""
    meta: dict[str, Any] = {}
    for entry in _SIMPLE_ENTRY.finditer(body):
        key, string, list_key, items = entry.groups()
        if (key or list_key) in _YAML_WORDS:
            return None
        if string is not None:
            # An ASCII JSON string reads the same as a YAML double-quoted scalar, but for
            # surrogate pairs (escapes from \\ud800 to \\udfff), which only JSON joins into one.
            if key in meta or not (string.isascii() and string.isprintable()):
                return None
            if _SURROGATE_ESCAPE.search(string):
                return None
            meta[key] = json.loads(string)
            continue
        words = [line[4:] for line in items.splitlines()]
        if list_key in meta or _YAML_WORDS.intersection(words):
            return None
        meta[list_key] = words
    return meta


class Accelerator:
    """The state of one MkDocs build for errcat's generated pages; see the module docstring."""

    def __init__(self, cache_folder: Path | None, plugin: object = None) -> None:
        """`plugin` is the errcat plugin driving it (whose hooks are this accelerator's)."""
        self._cache_folder = cache_folder
        self._plugin = plugin
        self._fast: Mapping[str, FastPage] = {}
        self._search: Mapping[str, SearchDoc] = {}
        self._search_entries: list[dict[str, str]] = []
        self._cache: SiteCache | None = None
        self._md: markdown.Markdown | None = None
        self._highlighter: CodeHighlighter | None = None
        self._render_settings = ""
        self._site_settings = ""
        self._output_cache = False
        self._defer = False
        """Whether pages may get their head only (`_may_defer`)."""
        self._plain_text = False
        self._frames: skeleton_html.TocSettings | None = None
        """How headings are numbered when page frames are written without Python-Markdown;
        None when they are not (`_frame_settings`)."""
        self._other_readers = False
        self._warnings = _WarningCount()
        self._blocks: tuple[Block, ...] = ()
        self._code_index = 0
        self._page: Page | None = None
        self._files: Files | None = None
        self._env: jinja2.Environment | None = None
        self._navs: navcache.NavCache | None = None
        self._cached_outputs: dict[str, tuple[str, str | None]] = {}
        self._new_outputs: dict[str, str] = {}
        self._written: dict[str, str] = {}
        """Page files this build writes (site-relative) → the output digest they hold."""
        self._previous: tuple[str, dict[str, list[Any]]] | None = None
        self._context: dict[str, Any] | None = None
        self._config: MkDocsConfig | None = None
        self._files_seen: Files | None = None
        self._nav: Navigation | None = None
        self.stats = {
            "pages": 0,
            "reused": 0,
            "outputs_reused": 0,
            "outputs_linked": 0,
            "converted_ahead": 0,
            "rendered_ahead": 0,
            "heads_only": 0,
            "filled_later": 0,
        }
        self.parallel = True
        """Whether pages may be converted in worker processes (not while serving)."""
        self._write_ahead = False
        self._written_ahead: set[str] = set()
        self.link_previous = False
        """Whether unchanged page files may be hard links to the previous build's: only for
        builds into fresh folders beside it that nothing writes into later (errcat build's
        versions), never for a site folder MkDocs may rewrite in place."""

    def set_pages(self, fast: Mapping[str, FastPage], search: Mapping[str, SearchDoc]) -> None:
        """The generated pages of this build (docs-relative path → recorded page) and the
        search entries of the error pages."""
        self._fast = fast
        self._search = search

    # -- set-up ------------------------------------------------------------------------------

    def pre_build(self, config: MkDocsConfig) -> None:
        """Once the configuration is final: the shared Markdown, the digests, the cache."""
        self._search_entries = []
        self._cached_outputs = {}
        self._new_outputs = {}
        self._written_ahead = set()
        self._config = config
        self._warnings.count = 0
        logging.getLogger("mkdocs").addHandler(self._warnings)
        extensions = [*config.markdown_extensions, _BlockExtension(self)]
        self._md = markdown.Markdown(
            extensions=extensions, extension_configs=config.mdx_configs or {}
        )
        markdown_settings = _plain(
            [config.markdown_extensions, config.mdx_configs, config.use_directory_urls]
        )
        self._render_settings = _digest(
            CACHE_FORMAT,
            sys.version,
            _versions(),
            _errcat_sources(),
            json.dumps(markdown_settings, sort_keys=True),
            json.dumps(_plain(config.validation), sort_keys=True),
        )
        unknown = set(config.markdown_extensions) - _PLAIN_TEXT_EXTENSIONS - _INLINE_EXTENSIONS
        try:
            if unknown:
                raise HighlightUnavailable(f"extensions {', '.join(sorted(unknown))}")
            self._highlighter = CodeHighlighter(self._md, self._render_settings)
        except HighlightUnavailable as exc:
            log.info("errcat: pages are converted by MkDocs itself, because of %s", exc)
            self._md = None
        self._site_settings = _digest(
            self._render_settings,
            json.dumps(_config_fingerprint(config), sort_keys=True),
            os.environ.get("SOURCE_DATE_EPOCH", ""),
        )
        self._output_cache = set(config.plugins) <= _OUTPUT_SAFE_PLUGINS
        self._defer = self._output_cache and not config.plugins.events["page_content"]
        self._plain_text = set(config.markdown_extensions) <= _PLAIN_TEXT_EXTENSIONS
        self._frames = self._frame_settings(config) if self._md is not None else None
        self._other_readers = bool(config.plugins.events["page_read_source"])
        if self._cache_folder is not None and self._md is not None:
            self._cache = SiteCache(self._cache_folder)
            self._written = {}
            linking = self._output_cache and self.link_previous
            self._previous = self._find_previous(config.site_dir) if linking else None

    def nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> None:
        """With the navigation every page is known: the ones the cache lacks are converted
        now, on every core."""
        self._nav = nav
        self._convert_ahead(config, files)

    def _page_key(self, uri: str, url: str) -> str:
        return _digest("page", self._render_settings, uri, url, self._fast[uri].digest)

    def _convert_ahead(self, config: MkDocsConfig, files: Files) -> None:
        """Convert the generated pages the cache lacks in worker processes, which store them
        in the cache; the build then finds them there. Pages a worker could not store (one
        that logged a warning, say) are converted by the build itself, as without workers."""
        cache = self._cache
        if cache is None or self._md is None or not self._parallel_ready():
            return
        todo = [
            f
            for f in files.documentation_pages()
            if f.src_uri in self._fast and not cache.has(self._page_key(f.src_uri, f.url))
        ]
        self.stats["converted_ahead"] += self._in_workers(_convert_share, (config, files, todo))

    def _render_ahead(self, files: Files) -> None:
        """Render the theme's output of the generated pages whose output is not stored, in
        worker processes that store it; the build then reuses it like any stored output."""
        cache = self._cache
        if cache is None or not self._parallel_ready() or len(self._new_outputs) < PARALLEL_PAGES:
            return
        assert self._config is not None and self._env is not None and self._nav is not None
        pages = [f.page for f in files.documentation_pages() if f.src_uri in self._new_outputs]
        # Workers write the files themselves when no other plugin changes a page's output.
        post_page = self._config.plugins.events["post_page"]
        self._write_ahead = all(getattr(m, "__self__", None) is self._plugin for m in post_page)
        job = (self._config, files, self._env, self._nav, pages)
        self.stats["rendered_ahead"] += self._in_workers(_render_share, job)
        for page in pages:
            assert page is not None
            key = self._new_outputs[page.file.src_uri]
            if cache.has(key):
                del self._new_outputs[page.file.src_uri]
                self._reuse_output(page, key)
                if self._write_ahead and os.path.isfile(page.file.abs_dest_path):
                    self._written_ahead.add(page.file.src_uri)

    def _parallel_ready(self) -> bool:
        return self.parallel and _worker_count() >= 2

    def _in_workers(self, share: Any, job: tuple[Any, ...]) -> int:
        """Run `share` over the items of `job[-1]` in forked workers; how many they did."""
        cache = self._cache
        items = job[-1]
        if cache is None or len(items) < PARALLEL_PAGES:
            return 0
        global _AHEAD
        workers = _worker_count()
        cache.suspend()
        _AHEAD = (self, cache.generation, *job)
        done = 0
        try:
            context = multiprocessing.get_context("fork")
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
                shares = [list(range(i, len(items), workers * 4)) for i in range(workers * 4)]
                done = sum(pool.map(share, shares))
        except Exception as exc:  # the build does whatever the workers did not
            log.info("errcat: the worker processes stopped: %s", exc)
        finally:
            _AHEAD = None
            cache.resume()
        return done

    def env(self, env: jinja2.Environment, files: Files) -> None:
        """Before the theme writes any page: which pages' output is reused (they get a
        stand-in template), which is to be stored."""
        # Before the theme loads a template (`catalog.engine.themecache`); pure macros are
        # memoised only with no plugin but search and errcat, which leave `config` as it is.
        themecache.install(env, self._cache_folder, memo=self._output_cache)
        self._env = env
        loader = env.loader
        stand_in = jinja2.DictLoader({_CACHED_TEMPLATE: "errcat: reused output"})
        env.loader = jinja2.ChoiceLoader([stand_in, loader] if loader else [stand_in])
        # Only with no other plugin, which might change the navigation page by page.
        self._navs = None
        if self._output_cache and self._nav is not None and self._config is not None:
            self._navs = navcache.install(env, self._nav, self._config)
        if not self._output_cache or self._cache is None:
            return
        # The navigation is on every page the theme writes, with titles that some pages only
        # get from their own first heading: it counts now that every page has been read.
        assert self._nav is not None
        self._site_settings = _digest(
            self._site_settings, json.dumps(_nav_fingerprint(self._nav.items), sort_keys=True)
        )
        for file in files.documentation_pages():
            if isinstance(file.page, AcceleratedPage):
                self._decide_output(file.page)
        self._render_ahead(files)
        # The theme renders the rest here: a page that got its head only needs all of it.
        for file in files.documentation_pages():
            if file.src_uri in self._new_outputs and isinstance(file.page, AcceleratedPage):
                self._fill_now(file.page)

    def read_source(self, page: Page) -> bool:
        """The page's Markdown and front matter from the rendered page, not from its file;
        False when another plugin reads sources (MkDocs then reads it as usual)."""
        if self._other_readers:
            return False
        fast = self._fast[page.file.src_uri]
        # With no plugin but search and errcat, nothing but errcat reads a page's Markdown:
        # then it keeps its block markers, and is expanded only if MkDocs is to convert it.
        markers = self._output_cache
        markdown_text, meta = _split_front_matter(fast.text if markers else fast.markdown())
        page.markdown, page.meta = markdown_text, meta
        page._errcat_markdown = markdown_text  # type: ignore[attr-defined]
        page._errcat_markers = markers  # type: ignore[attr-defined]
        return True

    def page_markdown(self, page: Page) -> None:
        """An error page's search entry is errcat's: the search plugin is to skip the page
        (with errcat's rendering or MkDocs' own)."""
        doc = self._search.get(page.file.src_uri)
        if doc is not None:
            page.meta["search"] = {"exclude": True}
            self._search_entries.append(doc.entry(page.url))

    def pre_page(self, page: Page) -> None:
        """Generated pages render through this accelerator."""
        if self._md is not None and type(page) is Page and page.file.src_uri in self._fast:
            page.__class__ = AcceleratedPage
            page._errcat = self  # type: ignore[attr-defined]

    # -- conversion --------------------------------------------------------------------------

    def render(self, page: Page, config: MkDocsConfig, files: Files) -> bool:
        """Fill in `page`'s content and table of contents; False to let MkDocs do it."""
        fast = self._fast[page.file.src_uri]
        # Another plugin may have changed the page's Markdown: then it is no longer ours.
        # (Comparing a string with itself is immediate.)
        recorded: FastPage | None = None
        expected = getattr(page, "_errcat_markdown", None)
        if expected is None:
            recorded = _body(fast)
            expected = recorded.markdown()
        elif getattr(page, "_errcat_markers", False):
            recorded = FastPage(expected, fast.blocks)
        if self._md is None or page.markdown != expected:
            return False
        assert self._highlighter is not None
        custom = self._highlighter.custom
        if custom and any(isinstance(b, CodeBlock) and b.language in custom for b in fast.blocks):
            return self._to_mkdocs(page, recorded)
        self.stats["pages"] += 1
        self._config, self._files_seen = config, files
        return self._fill(page, config, files, fast, recorded) or self._to_mkdocs(page, recorded)

    def _to_mkdocs(self, page: Page, recorded: FastPage | None) -> bool:
        """Leave the page to MkDocs' own rendering, its Markdown expanded if need be."""
        if getattr(page, "_errcat_markers", False) and recorded is not None:
            page.markdown = recorded.markdown()
            page._errcat_markers = False  # type: ignore[attr-defined]
        return False

    def _fill(
        self,
        page: Page,
        config: MkDocsConfig,
        files: Files,
        fast: FastPage,
        recorded: FastPage | None = None,
        *,
        whole: bool = False,
    ) -> bool:
        """Fill in the page's conversion: from the cache, or converted now (and stored). With
        `whole` false, a page whose themed output is likely reused gets its head only."""
        key = self._page_key(page.file.src_uri, page.url)
        page._errcat_deferred = False  # type: ignore[attr-defined]
        if not whole and self._may_defer(page):
            assert self._cache is not None
            head = self._cache.get_text(_digest("head", key))
            if head is not None and self._restore(page, files, head, content=False):
                # Kept from being forgotten with its head, though this build may not read it.
                self._cache.touch(key)
                page._errcat_record, page._errcat_deferred = key, True  # type: ignore[attr-defined]
                self.stats["reused"] += 1
                self.stats["heads_only"] += 1
                return True
        cached = self._cache.get_text(key) if self._cache else None
        if cached is not None and self._restore(page, files, cached):
            page._errcat_record = key  # type: ignore[attr-defined]
            self.stats["reused"] += 1
            return True
        recorded = recorded or _body(fast)
        warnings = self._warnings.count
        try:
            record = self._convert(page, config, files, recorded)
        except _LinkMissing:
            return False
        page._errcat_record = key  # type: ignore[attr-defined]
        if self._cache is not None and self._warnings.count == warnings:
            self._cache.put_text(key, json.dumps(record, ensure_ascii=False))
            summary = {name: record[name] for name in _HEAD}
            self._cache.put_text(_digest("head", key), json.dumps(summary, ensure_ascii=False))
        return True

    def _may_defer(self, page: Page) -> bool:
        """Whether the page's content may wait: nothing reads a page's content before its
        output is decided but `page_content` plugins (there are none then) and the search
        plugin, which skips a page excluded from it (errcat indexes that page itself)."""
        return (
            self._defer
            and self._cache is not None
            and (page.meta.get("search") or {}).get("exclude") is True
        )

    def _undefer(self, page: Page) -> bool:
        """Fill in the content of a page that got its head only; False where it cannot be."""
        if not getattr(page, "_errcat_deferred", False):
            return True
        assert self._config is not None and self._files_seen is not None
        self.stats["filled_later"] += 1
        return self._fill(
            page, self._config, self._files_seen, self._fast[page.file.src_uri], whole=True
        )

    def _convert(
        self, page: Page, config: MkDocsConfig, files: Files, recorded: FastPage
    ) -> dict[str, Any]:
        # MkDocs' own per-page processors (links, anchors, title), as Page.render adds them.
        from mkdocs.structure.pages import (
            _ExtractAnchorsTreeprocessor,
            _ExtractTitleTreeprocessor,
            _RawHTMLPreprocessor,
            _RelativePathTreeprocessor,
        )
        from mkdocs.structure.toc import get_toc

        md = self._md
        assert md is not None
        md.reset()
        raw_html = _RawHTMLPreprocessor()
        raw_html._register(md)
        anchors = _ExtractAnchorsTreeprocessor(page.file, files, config)
        anchors._register(md)
        links = _RelativePathTreeprocessor(page.file, files, config)
        links._register(md)
        title = _ExtractTitleTreeprocessor()
        title._register(md)
        self._blocks, self._code_index, self._page, self._files = recorded.blocks, 0, page, files
        try:
            written = self._write_frame(recorded.text, links, raw_html)
            if written is None:
                self._code_index = 0
                page.content = md.convert(recorded.text)
                tokens = getattr(md, "toc_tokens", [])
            else:
                page.content, tokens, heading_ids = written
                anchors.present_anchor_ids = heading_ids
        finally:
            self._page = self._files = None
        page.toc = get_toc(tokens)
        page._title_from_render = title.title
        page.present_anchor_ids = anchors.present_anchor_ids | raw_html.present_anchor_ids
        links_to_anchors = None
        if log.getEffectiveLevel() > logging.DEBUG:
            page.links_to_anchors = links_to_anchors = links.links_to_anchors
        return {
            "content": page.content,
            "toc": tokens,
            "title": title.title,
            "anchors": sorted(page.present_anchor_ids),
            "links": None
            if links_to_anchors is None
            else {f.src_uri: targets for f, targets in links_to_anchors.items()},
        }

    def _frame_settings(self, config: MkDocsConfig) -> skeleton_html.TocSettings | None:
        """The `toc` settings page frames are written with, if frames may be written at all:
        only with plain-text extensions, attribute lists, admonitions, Markdown in HTML and a
        `toc` that only numbers headings, and only if a page of every shape the frame writer
        knows comes out of it as out of Python-Markdown (`skeleton_html.probe`)."""
        md = self._md
        needed = {"attr_list", "admonition", "md_in_html", "toc"}
        if md is None or not self._plain_text or not needed <= set(config.markdown_extensions):
            return None
        toc = md.treeprocessors["toc"] if "toc" in md.treeprocessors else None  # noqa: SIM401 (a Registry, no get)
        if toc is None or toc.use_anchors or toc.use_permalinks not in (False, None):
            return None
        # The frame writer declines a page holding `[TOC]`, the default marker, only.
        if toc.base_level != 0 or toc.marker not in ("[TOC]", ""):
            return None
        settings = skeleton_html.TocSettings(toc.slugify, toc.sep, toc.toc_top, toc.toc_bottom)
        text = skeleton_html.probe()
        self._blocks = tuple(ProseBlock(prose) for prose in skeleton_html.PROBE_BLOCKS)
        md.reset()
        try:
            expected = (md.convert(text), getattr(md, "toc_tokens", []))
            blocks = {i: self.block_html(i) or "" for i in range(len(self._blocks))}
        finally:
            self._blocks = ()
            md.reset()
        frame = skeleton_html.parse(text, md.ESCAPED_CHARS)
        written = frame and skeleton_html.render(frame, blocks, list(frame.links), settings)[:2]
        if written != expected:
            log.info("errcat: page frames go through Python-Markdown (its output differs)")
            return None
        return settings

    def _write_frame(
        self, text: str, links: Any, raw_html: Any
    ) -> tuple[str, list[dict[str, Any]], set[str]] | None:
        """The current page's HTML, table of contents and heading ids written by
        `skeleton_html`, or None to have Python-Markdown convert it."""
        if self._frames is None or self._md is None:
            return None
        frame = skeleton_html.parse(text, self._md.ESCAPED_CHARS)
        if frame is None:
            return None
        blocks: dict[int, str] = {}
        for piece in frame.pieces:
            if isinstance(piece, int):
                block = self.block_html(piece)
                if block is None:
                    return None
                blocks[piece] = block
        # MkDocs' own link rewriting and checking, link by link as its tree processor does.
        urls = [links.path_to_url(target) for target in frame.links]
        content, tokens, ids = skeleton_html.render(frame, blocks, urls, self._frames)
        # The ids MkDocs finds in the page's raw HTML, as its preprocessor finds them (in
        # the frame's raw HTML: nothing else in it holds a tag).
        raw_html.run(list(frame.raw))
        return content, tokens, ids

    def _fill_now(self, page: Page) -> None:
        """`_undefer`, or where that fails (a link the frame writer cannot place), the page
        converted by MkDocs' own `Page.render`, as `render` would have left it to."""
        if self._undefer(page):
            return
        assert self._config is not None and self._files_seen is not None
        fast = self._fast[page.file.src_uri]
        markers = getattr(page, "_errcat_markers", False)
        self._to_mkdocs(page, FastPage(page.markdown or "", fast.blocks) if markers else None)
        page._errcat_record, page._errcat_deferred = None, False  # type: ignore[attr-defined]
        Page.render(page, self._config, self._files_seen)

    def _restore(self, page: Page, files: Files, cached: str, content: bool = True) -> bool:
        """Fill the page from a stored record; with `content` false, from a head (`_HEAD`):
        the page gets an empty content and table of contents."""
        from mkdocs.structure.toc import get_toc

        record = json.loads(cached)
        links = None
        if record["links"] is not None and log.getEffectiveLevel() > logging.DEBUG:
            links = {}
            for uri, targets in record["links"].items():
                target = files.get_file_from_path(uri)
                if target is None:
                    return False  # converting it again reports the broken link
                links[target] = targets
        page.content = record["content"] if content else ""
        page.toc = get_toc(record["toc"] if content else [])
        page._title_from_render = record["title"]
        page.present_anchor_ids = set(record["anchors"])
        if links is not None:
            page.links_to_anchors = links
        return True

    def block_html(self, index: int) -> str | None:
        """The HTML of the current page's block `index` (called while it is converted), or
        None when Python-Markdown is to convert it with the rest (`block_lines`)."""
        block = self._blocks[index]
        if isinstance(block, ProseBlock):
            return prose_html.to_html(block.text) if self._plain_text else None
        if not isinstance(block, CodeBlock):
            return self._links_html(block) if self._plain_text else None
        assert self._highlighter is not None and self._md is not None
        number, self._code_index = self._code_index, self._code_index + 1
        key = _digest("code", self._highlighter.key(block, number))
        cached = self._cache.get_text(key) if self._cache else None
        if cached is not None:
            self._highlighter.skip(number)
            return cached
        html = self._highlighter.html(block, number)
        if self._cache is not None:
            self._cache.put_text(key, html)
        return html

    def block_lines(self, index: int, indent: str) -> list[str]:
        """The Markdown of the current page's block `index`, indented as its marker."""
        text = self._blocks[index].markdown_text
        return [indent + line if line else line for line in text.split("\n")]

    def _links_html(self, block: TableBlock | LinksBlock) -> str:
        # Links resolved as MkDocs resolves a Markdown link to a page.
        page, files = self._page, self._files
        assert page is not None and files is not None
        folder = posixpath.dirname(page.file.src_uri)
        hrefs = {}
        for entry_id, link in block.links().items():
            target = files.get_file_from_path(posixpath.normpath(posixpath.join(folder, link)))
            if target is None:
                raise _LinkMissing(link)
            hrefs[entry_id] = get_relative_url(target.url, page.file.url)
        return block.html(hrefs)

    # -- the theme's output ------------------------------------------------------------------

    def _decide_output(self, page: Page) -> None:
        # Every page has been read and converted by now, so the titles of its neighbours (in
        # the theme's footer) are final.
        assert self._cache is not None
        identity = [
            page.file.src_uri,
            page.url,
            page.canonical_url,
            page.edit_url,
            page.title,
            _plain(page.meta),
            # The key of the conversion the page was filled from stands for its content and
            # table of contents (and lets a page whose output is reused skip reading them).
            getattr(page, "_errcat_record", None)
            or [
                _toc_plain(page.toc),
                hashlib.sha256((page.content or "").encode("utf-8")).hexdigest(),
            ],
            _neighbour(page.previous_page),
            _neighbour(page.next_page),
            page.is_homepage,
        ]
        key = _digest("output", self._site_settings, json.dumps(identity, sort_keys=True))
        if self._cache.has(key):
            self._reuse_output(page, key)
        else:
            self._new_outputs[page.file.src_uri] = key

    def _reuse_output(self, page: Page, key: str) -> None:
        self._cached_outputs[page.file.src_uri] = (key, page.meta.get("template"))
        page.meta["template"] = _CACHED_TEMPLATE
        if (page.meta.get("search") or {}).get("exclude"):
            # Nothing reads it now (the theme's output is reused, the search skips it): the
            # search plugin would only scan it to drop attributes.
            page.content = ""

    def page_context(self, page: Page, context: dict[str, Any]) -> None:
        """Kept for a reused page, in case its output is gone by the time it is written; the
        key of the page's navigation (`catalog.engine.navcache`)."""
        self._context = context if page.file.src_uri in self._cached_outputs else None
        if self._navs is not None:
            context["errcat_nav_key"] = self._navs.key(page, context["base_url"])

    def post_page(self, page: Page, output: str) -> str:
        """The themed output: reused, or stored for the next build."""
        reused = self._cached_outputs.pop(page.file.src_uri, None)
        if reused is not None:
            key, template = reused
            self._written[page.file.dest_uri] = key
            if page.file.src_uri in self._written_ahead:
                self._context = None
                return ""  # a worker wrote the file: MkDocs writes none for an empty output
            if self._link_previous(page, key):
                self.stats["outputs_linked"] += 1
                self._context = None
                return ""  # MkDocs writes no file for an empty output
            found = self._cache.get_text(key) if self._cache else None
            if found is not None:
                self.stats["outputs_reused"] += 1
                self._context = None
                return found
            # Removed by another build meanwhile: render it after all.
            assert self._env is not None and self._context is not None
            assert self._config is not None and self._files_seen is not None
            # The page as the theme would have seen it: the front matter as written.
            if template is None:
                del page.meta["template"]
            else:
                page.meta["template"] = template
            fast = self._fast[page.file.src_uri]
            context: Any = self._context
            if not page.content:
                if not self._fill(page, self._config, self._files_seen, fast, whole=True):
                    raise RuntimeError(f"errcat: cannot render {page.file.src_uri} again")
                # The plugins saw it empty: they see it again, as they would have.
                assert self._nav is not None
                context = self._config.plugins.on_page_context(
                    context, page=page, config=self._config, nav=self._nav
                )
            output = self._env.get_template(template or "main.html").render(context)
            self._context = None
            return output
        key_new = self._new_outputs.pop(page.file.src_uri, None)
        if key_new is not None and self._cache is not None:
            self._cache.put_text(key_new, output)
            self._written[page.file.dest_uri] = key_new
        return output

    def _link_previous(self, page: Page, key: str) -> bool:
        """Hard-link the page's file from the previous build, if that build wrote this very
        output there and the file is as it left it: unchanged pages cost no write."""
        if self._previous is None:
            return False
        folder, written = self._previous
        record = written.get(page.file.dest_uri)
        if record is None or record[0] != key:
            return False
        source = os.path.join(folder, page.file.dest_uri)
        try:
            found = os.stat(source, follow_symlinks=False)
            if [found.st_size, found.st_mtime_ns] != record[1:]:
                return False
            target = page.file.abs_dest_path
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.link(source, target)
        except OSError:
            return False
        return True

    def _published_key(self, site_dir: str) -> str:
        # Builds into sibling folders (errcat build's versions) share this key.
        return _digest("published", CACHE_FORMAT, os.path.realpath(os.path.dirname(site_dir)))

    def _find_previous(self, site_dir: str) -> tuple[str, dict[str, list[Any]]] | None:
        """The folder of the last build published beside `site_dir`, with what it wrote."""
        if self._cache is None:
            return None
        text = self._cache.get_text(self._published_key(site_dir))
        if text is None:
            return None
        record = json.loads(text)
        parent = os.path.dirname(os.path.realpath(site_dir))
        try:
            here = os.stat(site_dir) if os.path.exists(site_dir) else None
            with os.scandir(parent) as entries:
                for entry in entries:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    found = entry.stat(follow_symlinks=False)
                    if [found.st_dev, found.st_ino] != record["folder"]:
                        continue
                    same = here is not None and (here.st_dev, here.st_ino) == (
                        found.st_dev,
                        found.st_ino,
                    )
                    # The folder MkDocs is about to empty has nothing to link from.
                    return None if same else (entry.path, record["files"])
        except OSError:
            return None
        return None

    # -- the end -----------------------------------------------------------------------------

    def post_build(self, config: MkDocsConfig) -> None:
        """Add the error pages' search entries to the index the search plugin wrote; record
        which output each page file holds, for the next build to link."""
        if self._search_entries:
            merge_into_index(Path(config.site_dir), self._search_entries)
        self._search_entries = []
        if not self.link_previous or self._cache is None or not self._written:
            return
        if self._warnings.count:
            return  # a build with warnings is not published: nothing to link from
        files: dict[str, list[Any]] = {}
        for dest, key in self._written.items():
            try:
                found = os.stat(os.path.join(config.site_dir, dest), follow_symlinks=False)
            except OSError:
                continue
            files[dest] = [key, found.st_size, found.st_mtime_ns]
        folder = os.stat(config.site_dir)
        record = {"folder": [folder.st_dev, folder.st_ino], "files": files}
        self._cache.put_text(self._published_key(config.site_dir), json.dumps(record))
        self._written = {}

    def finish(self, succeeded: bool) -> None:
        """Close the cache (keeping what this build stored) and stop counting warnings."""
        logging.getLogger("mkdocs").removeHandler(self._warnings)
        if self._cache is not None:
            self._cache.finish(succeeded and self._warnings.count == 0)
            self._cache = None
