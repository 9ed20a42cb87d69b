"""The `errcat` MkDocs plugin: the catalog's pages as virtual files, the JSON API after the build.

With it, a plain `mkdocs build --strict` or `mkdocs serve` on the project's mkdocs.yml publishes
the same pages `errcat build` composes, and `mkdocs serve` reloads when a catalog file changes.

    plugins:
      - search
      - errcat:
          catalog: catalog/errors   # default: [tool.errcat] catalog in pyproject.toml
          section: errors/          # default when docs_dir has an index.md of its own, else /

Where errcat's pages are the whole site, the plugin also adds the Markdown extensions they need
to those mkdocs.yml lists, and a search plugin when there is none; on a site of the project's
own (a section, `catalog.engine.site_settings.own_site`) it changes no setting, and errcat's
pages alone are converted with the extensions they need. It renders the generated pages through
`catalog.engine.fastpath` (cached under `.errcat-cache/`). `errcat build` runs the
same plugin on its composed folder, there only for the rendering. Pages are dated by the commit
on both routes (SOURCE_DATE_EPOCH, unless the user set one), so the sitemap's `<lastmod>` is the
same whichever built it.

A catalog with findings fails a build (PluginError naming each file and line). Under `mkdocs
serve` it does not stop the server: every page errcat generates answers with the findings
(`catalog.pages.findings_page`) and the terminal lists them, until an edit leaves the catalog valid.

A file of the package the scanner cannot parse is a warning (`path:line:col: cannot scan: ...`,
as `errcat check` prints it): a strict build stops on it, a lax one publishes the pages without
that file's raise sites. A strict `mkdocs serve` shows the findings page instead, as for the
catalog, since the warning would abort the rebuild and every request would wait on it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin, event_priority, get_plugins
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from catalog.authoring.generated_path import check_generated
from catalog.core.config import (
    DEFAULT_SITE_URL,
    Config,
    ConfigError,
    load_config,
    package_problem,
)
from catalog.core.findings import CatalogInvalid, Finding
from catalog.core.project import cache_folder
from catalog.engine.fastpath import Accelerator
from catalog.engine.site_settings import (
    GUEST_SEARCH_BOOST,
    SEARCH_PLUGINS,
    SEARCH_SEPARATOR,
    add_extensions,
    add_theme_settings,
    errcat_markdown,
    keep_project_templates,
    keep_theme_additions,
    own_site,
    swap_markdown,
)
from catalog.pages.content import HOME_PAGE, WHOLE_SITE, SiteContent, site_section

if TYPE_CHECKING:
    from catalog.pages.findings_page import Subject
    from extractor.model import ScanFailure

log = logging.getLogger("mkdocs.plugins.errcat")


# mkdocs declares `__init_subclass__` without annotations on both base classes (it builds the
# option schema there), so strict mypy flags the class statements themselves; there is no typed
# way to subclass them.
class ErrcatConfig(base.Config):  # type: ignore[no-untyped-call]
    """Options under `errcat:` in mkdocs.yml."""

    catalog = c.Optional(c.Type(str))
    """Folder of the YAML catalog, relative to mkdocs.yml; default: pyproject's setting."""
    section = c.Optional(c.Type(str))
    """`errors/`: errcat's pages are a section of the project's site, whose index.md stays the
    home page; `/`: they are the whole site. Default: `errors/` when docs_dir has an index.md."""


class ErrcatPlugin(BasePlugin[ErrcatConfig]):  # type: ignore[no-untyped-call]
    """Adds `errors/<id>.md`, the indexes and the home page; writes `api/` into the site."""

    def __init__(self) -> None:
        self._project: Config | None = None
        self._api: dict[str, object] = {}
        self._composed: SiteContent | None = None
        self._accelerator: Accelerator | None = None
        self._serving = False
        self._shown: set[str] = set()
        """Under `mkdocs serve`: the generated pages of the last build with a valid catalog,
        which keep answering (with the findings) while the catalog is broken."""
        self._broken = False
        """This build shows the catalog's findings instead of its pages (`mkdocs serve` only)."""
        self._told_nav = False
        """Whether the note that errcat's section was added to the project's nav was logged:
        once, not on every rebuild of `mkdocs serve`."""
        self._source_date: str | None = None
        """The SOURCE_DATE_EPOCH this plugin set for the build in progress (`_date_by_commit`)."""
        self._own = False
        """Whether the site is the project's own, errcat's pages a section of it (`own_site`):
        then no setting of the project's changes and errcat's additions stay on its pages."""
        self._composed_own = False
        """`errcat build`'s answer to `_own` (it read whether mkdocs.yml exists)."""
        self._generated: frozenset[str] = frozenset()
        """The docs-relative paths of the pages errcat generated in this build."""
        self._markdown: tuple[list[Any], dict[str, Any]] | None = None
        """On a site of the project's own, the extensions errcat's pages are converted with
        (`errcat_markdown`), where they differ from the site's; None otherwise."""
        self._swapped: tuple[MkDocsConfig, tuple[Any, Any]] | None = None
        """The config and its own extensions while one of errcat's pages is converted
        (`_scope_markdown`)."""

    @classmethod
    def for_composed_build(
        cls, project: Config, content: SiteContent, own: bool = False
    ) -> ErrcatPlugin:
        """The plugin as `errcat build` runs it on its composed folder: the pages are already
        there and the API is written by the build, so it only renders them (`own`: the site is
        the project's own, `own_site`)."""
        plugin = cls()
        plugin.load_config({})
        plugin._project = project
        plugin._composed = content
        plugin._composed_own = own
        plugin._generated = frozenset(content.fast)
        return plugin

    def _load_project(self, config: MkDocsConfig) -> Config:
        root = Path(config.config_file_path).resolve().parent
        try:
            project = load_config(root)
        except ConfigError as exc:
            raise PluginError(f"errcat: {exc}") from None
        if self.config.catalog:
            # replace(), not a new Config: every other setting (max_file_size...) is kept.
            project = dataclasses.replace(project, catalog=(root / self.config.catalog).resolve())
        if not project.catalog.is_dir():
            raise PluginError(
                f"errcat: the catalog folder {project.catalog} does not exist; "
                "set `catalog:` under the errcat plugin or [tool.errcat] catalog in pyproject.toml"
            )
        # What `errcat build` checks before it writes, so that `mkdocs build` fails as clearly.
        problem = package_problem(project)
        if problem is not None:
            raise PluginError(f"errcat: {problem}")
        try:
            check_generated(project)
        except ConfigError as exc:
            raise PluginError(f"errcat: {exc}") from None
        return project

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self._serving = command == "serve"

    @event_priority(100)  # before the search plugin reads its settings
    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        if self._composed is None or self._project is None:
            self._project = self._load_project(config)
        if self._composed is not None:
            self._own = self._composed_own
        else:
            try:
                section = site_section(self.config.section, Path(config.docs_dir))
            except ConfigError as exc:
                raise PluginError(f"errcat: {exc}") from None
            # The plugin runs from a mkdocs.yml: the project has settings of its own.
            self._own = own_site(section, has_settings=True)
        if not self._own:
            added = add_extensions(config.markdown_extensions, config.mdx_configs)
            if added:
                log.debug("errcat: added the Markdown extensions %s", ", ".join(added))
        themed = add_theme_settings(config.theme, own=self._own)
        if themed:
            log.debug("errcat: set the theme's %s", ", ".join(themed))
        if not self._own:
            _ensure_search(config)
        self._accelerator = Accelerator(cache_folder(self._project), self)
        self._accelerator.search_boost = GUEST_SEARCH_BOOST if self._own else None
        # Worker processes are forked; `mkdocs serve` runs threads, which a fork must not copy.
        self._accelerator.parallel = not self._serving
        # errcat build writes each version into a fresh folder that nothing rewrites.
        self._accelerator.link_previous = self._composed is not None
        return config

    def on_pre_build(self, *, config: MkDocsConfig) -> None:
        self._markdown = None
        if self._own:
            # Read now, once every plugin's on_config has added its own extensions.
            markdown = errcat_markdown(config.markdown_extensions, config.mdx_configs)
            if markdown[0] != list(config.markdown_extensions):
                self._markdown = markdown
        if self._accelerator is not None:
            self._accelerator.markdown = self._markdown
            self._accelerator.pre_build(config)

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files | None:
        if self._composed is not None:
            # The composed mkdocs.yml lists errcat's indexes already; MkDocs would list every
            # other page errcat generated as "not included in the nav".
            for path in self._composed.fast:
                if (file := files.get_file_from_path(path)) is not None:
                    file.inclusion = InclusionLevel.NOT_IN_NAV
                    if self._own:
                        # As the plugin's generated files: there is no source to edit.
                        file.edit_uri = None
            if self._accelerator is not None:
                self._accelerator.set_pages(self._composed.fast, self._composed.search)
            return files

        from catalog.entries.validate import valid_project_catalog
        from catalog.pages.content import gather, render

        project = self._project or self._load_project(config)
        try:
            section = site_section(self.config.section, Path(config.docs_dir))
        except ConfigError as exc:
            raise PluginError(f"errcat: {exc}") from None
        self._broken = False
        try:
            catalog = valid_project_catalog(project)
        except CatalogInvalid as exc:
            if self._serving:
                # Aborting here would leave `mkdocs serve` stuck until the catalog is fixed,
                # every request hanging; the author sees the findings in the browser instead.
                ids = _catalog_ids(project)
                return self._show_findings(
                    files, config, project, exc.findings, ids, "catalog", section
                )
            # PluginError prints without a traceback; the findings name each file and line.
            listed = "\n".join(finding.format(project.root) for finding in exc.findings)
            raise PluginError(f"errcat: the catalog is invalid:\n{listed}") from None
        site_url = (config.site_url or project.site_url or DEFAULT_SITE_URL).rstrip("/") + "/"
        repo_url = config.repo_url.rstrip("/") if config.repo_url else None
        inputs = gather(
            project,
            catalog,
            site_url=site_url,
            repo_url=repo_url,
            site_name=config.site_name,
            section=section,
        )
        self._date_by_commit(inputs.repository.timestamp)
        unparsed = [_scan_finding(project.root, failure) for failure in inputs.scan_failures]
        if unparsed and self._serving and config.strict:
            ids = {entry.id for entry in catalog}
            return self._show_findings(files, config, project, unparsed, ids, "package", section)
        for finding in unparsed:
            log.warning(
                "errcat: %s (its raise sites are missing from the pages)",
                finding.format(project.root),
            )
        content = render(inputs)
        for path in content.fast:
            existing = files.get_file_from_path(path)
            if existing is None and path == HOME_PAGE:
                # MkDocs makes README.md the home page where no index.md is beside it.
                existing = files.get_file_from_path("README.md")
            if existing is not None:
                home = path == HOME_PAGE
                raise PluginError(
                    f"errcat: {Path(config.docs_dir) / existing.src_path} sits where errcat "
                    "generates a page; move its text to another file"
                    + (", or set `section: errors/` under the errcat plugin" if home else "")
                )
        self._set_nav(config, files, section)
        generated = [
            # In no navigation but errcat's indexes: without this MkDocs lists every error
            # page as "not included in the nav".
            File.generated(config, path, content=text, inclusion=InclusionLevel.NOT_IN_NAV)
            for path, text in content.pages.items()
        ]
        if self._own:
            files = _among_docs(files, generated, Path(config.docs_dir))
        else:
            for file in generated:
                files.append(file)
        self._api = content.api
        self._shown = set(content.pages)
        self._generated = frozenset(content.pages)
        if self._accelerator is not None:
            self._accelerator.set_pages(content.fast, content.search)
        return files

    def _date_by_commit(self, timestamp: int | None) -> None:
        """Date this build by the commit, as `errcat build` does: MkDocs reads
        SOURCE_DATE_EPOCH (its setting for reproducible builds) when it makes each page, after
        on_files, for the page's `update_date`, the sitemap's `<lastmod>`. Set for this build
        only (`_restore_date`), and never over a value the user set."""
        if timestamp is None or (
            "SOURCE_DATE_EPOCH" in os.environ
            and os.environ["SOURCE_DATE_EPOCH"] != self._source_date
        ):
            return
        self._source_date = str(timestamp)
        os.environ["SOURCE_DATE_EPOCH"] = self._source_date

    def _restore_date(self) -> None:
        if self._source_date is not None:
            if os.environ.get("SOURCE_DATE_EPOCH") == self._source_date:
                del os.environ["SOURCE_DATE_EPOCH"]
            self._source_date = None

    def _set_nav(self, config: MkDocsConfig, files: Files, section: str) -> None:
        """The project's nav with errcat's section expanded or appended (`site_nav`), or
        errcat's own when there is none."""
        from catalog.pages.content import site_nav

        handwritten = [f.src_uri for f in files.documentation_pages()]
        nav, appended = site_nav(config.nav, handwritten, section)
        config.nav = nav
        if appended and not self._told_nav:
            self._told_nav = True
            log.info(
                "errcat: the nav in %s names none of errcat's pages, so its Errors section is "
                "added at the end; put `- Errors: errors/` where it belongs",
                Path(config.config_file_path).name,
            )

    def _show_findings(
        self,
        files: Files,
        config: MkDocsConfig,
        project: Config,
        findings: list[Finding],
        ids: set[str],
        subject: Subject,
        section: str,
    ) -> Files:
        """Every page errcat would generate (`ids`: the entries that may have one), and every
        page of the last good build, as the findings page; the findings are logged too, for the
        terminal."""
        from catalog.pages.content import HOME_PAGE, NAV_PAGES
        from catalog.pages.findings_page import findings_page

        self._broken = True
        findings = sorted(findings, key=lambda f: (f.display_path(project.root), f.line, f.column))
        # Under `strict` a warning aborts the rebuild, which is what would leave the server
        # stuck; the findings are then logged at INFO, which mkdocs shows all the same.
        level = logging.INFO if config.strict else logging.WARNING
        count = f"{len(findings)} problem{'' if len(findings) == 1 else 's'}"
        log.log(level, "errcat: the %s has %s; its pages show them until fixed:", subject, count)
        for finding in findings:
            log.log(level, "errcat: %s", finding.format(project.root))
        # The pages links and open browsers may point at: the indexes, whatever the last good
        # build had, and each entry's page.
        paths = self._shown | set(NAV_PAGES) | {f"errors/{entry_id}.md" for entry_id in ids}
        if section != WHOLE_SITE:
            paths.discard(HOME_PAGE)  # the project's own home page
        self._set_nav(config, files, section)
        text = findings_page(findings, project.root, subject)
        generated = set()
        for path in sorted(paths):
            if files.get_file_from_path(path) is None:
                inclusion = InclusionLevel.NOT_IN_NAV
                files.append(File.generated(config, path, content=text, inclusion=inclusion))
                generated.add(path)
        self._generated = frozenset(generated)
        if self._accelerator is not None:
            self._accelerator.set_pages({}, {})
        return files

    def on_nav(
        self, nav: Navigation, /, *, config: MkDocsConfig, files: Files
    ) -> Navigation | None:
        if self._accelerator is not None:
            self._accelerator.nav(nav, config, files)
        return nav

    def on_pre_page(self, page: Page, /, *, config: MkDocsConfig, files: Files) -> Page | None:
        if self._accelerator is not None:
            self._accelerator.pre_page(page)
        return page

    @event_priority(-100)  # the page's front matter as every other plugin left it
    def on_page_markdown(
        self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        if self._accelerator is not None:
            self._accelerator.page_markdown(page)
        self._scope_markdown(page, config)
        return markdown

    def _scope_markdown(self, page: Page, config: MkDocsConfig) -> None:
        """Just before MkDocs converts one of errcat's pages (`Page.render` follows this hook,
        the last to run): errcat's extensions in the config, where MkDocs reads them, until
        `on_page_content`. The project's pages never see them. (errcat's own conversion uses
        them from `pre_build` on.)"""
        ours = page.file.src_uri in self._generated
        if self._markdown is not None and self._swapped is None and ours:
            self._swapped = (config, swap_markdown(config, self._markdown))

    def _restore_markdown(self) -> None:
        if self._swapped is not None:
            config, previous = self._swapped
            swap_markdown(config, previous)
        self._swapped = None

    @event_priority(100)  # the site's extensions back before any other plugin sees the page
    def on_page_content(
        self, html: str, /, *, page: Page, config: MkDocsConfig, files: Files
    ) -> str | None:
        self._restore_markdown()
        return html

    def on_env(
        self, env: jinja2.Environment, /, *, config: MkDocsConfig, files: Files
    ) -> jinja2.Environment | None:
        # Before the accelerator's worker processes fork with the environment.
        if self._own:
            keep_project_templates(env, config.theme.dirs)
        keep_theme_additions(env, self._generated if self._own else None)
        if self._accelerator is not None:
            self._accelerator.env(env, files)
        return env

    @event_priority(-100)
    def on_page_context(
        self, context: Any, /, *, page: Page, config: MkDocsConfig, nav: Navigation
    ) -> Any:
        if self._accelerator is not None:
            self._accelerator.page_context(page, context)
        return context

    @event_priority(100)  # the theme's output as it came, before any plugin changes it
    def on_post_page(self, output: str, /, *, page: Page, config: MkDocsConfig) -> str | None:
        if self._accelerator is not None:
            return self._accelerator.post_page(page, output)
        return output

    @event_priority(-100)  # after the search plugin has written its index
    def on_post_build(self, *, config: MkDocsConfig) -> None:
        from catalog.pages.api import write_api

        self._restore_date()
        self._restore_markdown()
        if self._accelerator is not None:
            self._accelerator.post_build(config)
            self._accelerator.finish(succeeded=True)
        if self._composed is None and not self._broken:
            write_api(Path(config.site_dir), self._api)

    def on_build_error(self, *, error: Exception) -> None:
        self._restore_date()
        # A page that failed to convert left errcat's extensions in the config.
        self._restore_markdown()
        if self._accelerator is not None:
            self._accelerator.finish(succeeded=False)

    def on_serve(
        self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Any
    ) -> LiveReloadServer | None:
        project = self._project or self._load_project(config)
        # A YAML edit changes pages; a code edit moves the raise sites the pages show.
        server.watch(str(project.catalog))
        if project.package.is_dir():
            server.watch(str(project.package))
        return server


def _walk_key(src_uri: str) -> list[tuple[int, str, str]]:
    """Where MkDocs' walk of a docs folder meets a file: a folder's files (index.md and
    README.md first, then by name) before its subfolders (by name)."""
    *folders, name = src_uri.split("/")
    stem = posixpath.splitext(name)[0]
    return [(1, folder, "") for folder in folders] + [
        (0, "" if stem in ("index", "README") else "~", name)
    ]


def _among_docs(files: Files, generated: list[File], docs_dir: Path) -> Files:
    """`files` with `generated` (sorted by path) placed among the docs folder's own files as
    MkDocs orders files it finds there, as they are in `errcat build`'s composed folder: the
    sitemap and the search index then list the pages in the same order on both routes."""
    folder = os.path.realpath(docs_dir)
    ordered: list[File] = []
    waiting = sorted(generated, key=lambda f: _walk_key(f.src_uri))
    last_doc = -1
    for file in files:
        own = file.generated_by is None and os.path.realpath(file.src_dir or "") == folder
        if own:
            key = _walk_key(file.src_uri)
            while waiting and _walk_key(waiting[0].src_uri) < key:
                ordered.append(waiting.pop(0))
        ordered.append(file)
        if own:
            last_doc = len(ordered) - 1
    ordered[last_doc + 1 : last_doc + 1] = waiting
    return Files(ordered)


def _catalog_ids(project: Config) -> set[str]:
    """The entries an invalid catalog holds, loaded or not: every entry the files mention."""
    from catalog.entries.loader import read_catalog

    loaded = read_catalog(project.catalog)
    ids = {entry.id for entry in loaded.catalog} | set(loaded.broken)
    for finding in loaded.findings:
        ids |= _written_ids(finding.path)
    return ids


def _scan_finding(root: Path, failure: ScanFailure) -> Finding:
    """A file the scanner could not read, worded as `errcat check` reports it."""
    return Finding(
        root / failure.path,
        failure.line,
        failure.column,
        f"cannot scan: {failure.message}",
        "fix the file so Python can parse it",
        stage="sites",
    )


_WRITTEN_ID = re.compile(r"""^[ -]*id: *["']?([0-9a-f]{16})["']? *$""", re.MULTILINE)


def _written_ids(path: Path) -> set[str]:
    """The ids a catalog file seems to hold, read from its text: a file that is not YAML any
    more still says which pages an author may have open. Used to pick URLs, never as data."""
    try:
        return set(_WRITTEN_ID.findall(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return set()


def _ensure_search(config: MkDocsConfig) -> None:
    """A search plugin for the error pages, with errcat's separator unless one is set; runs
    before the search plugin's own on_config, which reads the setting."""
    for name, plugin in config.plugins.items():
        if name in SEARCH_PLUGINS:
            if hasattr(plugin.config, "separator") and not plugin.config.separator:
                plugin.config.separator = SEARCH_SEPARATOR
            return
    available = get_plugins()
    theme_search = "material/search" if config.theme.name == "material" else "search"
    name = theme_search if theme_search in available else "search"
    plugin = available[name].load()()
    errors, _ = plugin.load_config({"separator": SEARCH_SEPARATOR}, config.config_file_path)
    if errors:
        raise PluginError(f"errcat: cannot add the search plugin: {errors}")
    # Added while MkDocs runs the on_config handlers: the list is walked in order, so the new
    # plugin's own on_config (lower priority than errcat's) still runs.
    config.plugins[name] = plugin
