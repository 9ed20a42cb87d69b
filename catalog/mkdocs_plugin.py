"""The `errcat` MkDocs plugin: the catalog's pages as virtual files, the JSON API after the build.

With it, a plain `mkdocs build --strict` or `mkdocs serve` on the project's mkdocs.yml publishes
the same pages `errcat build` composes, and `mkdocs serve` reloads when a catalog file changes.

    plugins:
      - search
      - errcat:
          catalog: catalog/errors   # default: [tool.errcat] catalog in pyproject.toml
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files

from catalog.config import DEFAULT_SITE_URL, Config, ConfigError, load_config
from catalog.findings import CatalogInvalid

log = logging.getLogger("mkdocs.plugins.errcat")


# mkdocs declares `__init_subclass__` without annotations on both base classes (it builds the
# option schema there), so strict mypy flags the class statements themselves; there is no typed
# way to subclass them.
class ErrcatConfig(base.Config):  # type: ignore[no-untyped-call]
    """Options under `errcat:` in mkdocs.yml."""

    catalog = c.Optional(c.Type(str))
    """Folder of the YAML catalog, relative to mkdocs.yml; default: pyproject's setting."""


class ErrcatPlugin(BasePlugin[ErrcatConfig]):  # type: ignore[no-untyped-call]
    """Adds `errors/<id>.md`, the indexes and the home page; writes `api/` into the site."""

    def __init__(self) -> None:
        self._project: Config | None = None
        self._api: dict[str, object] = {}

    def _load_project(self, config: MkDocsConfig) -> Config:
        root = Path(config.config_file_path).resolve().parent
        try:
            project = load_config(root)
        except ConfigError as exc:
            raise PluginError(f"errcat: {exc}") from None
        if self.config.catalog:
            project = Config(
                root=project.root,
                package=project.package,
                catalog=(root / self.config.catalog).resolve(),
                generated=project.generated,
                include=project.include,
                exclude=project.exclude,
                has_pyproject=project.has_pyproject,
            )
        if not project.catalog.is_dir():
            raise PluginError(
                f"errcat: the catalog folder {project.catalog} does not exist; "
                "set `catalog:` under the errcat plugin or [tool.errcat] catalog in pyproject.toml"
            )
        return project

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig | None:
        self._project = self._load_project(config)
        return config

    def on_files(self, files: Files, /, *, config: MkDocsConfig) -> Files | None:
        from catalog.render import gather, render
        from catalog.render.content import default_nav
        from catalog.validate import load_valid_catalog

        project = self._project or self._load_project(config)
        try:
            catalog = load_valid_catalog(project.catalog)
        except CatalogInvalid as exc:
            # PluginError prints without a traceback; the findings name each file and line.
            listed = "\n".join(finding.format(project.root) for finding in exc.findings)
            raise PluginError(f"errcat: the catalog is invalid:\n{listed}") from None
        site_url = (config.site_url or DEFAULT_SITE_URL).rstrip("/") + "/"
        repo_url = config.repo_url.rstrip("/") if config.repo_url else None
        inputs = gather(
            project, catalog, site_url=site_url, repo_url=repo_url, site_name=config.site_name
        )
        for failure in inputs.scan_failures:
            log.warning("cannot scan %s; its raise sites are missing from the pages", failure)
        content = render(inputs)
        for path in content.pages:
            existing = files.get_file_from_path(path)
            if existing is not None:
                raise PluginError(
                    f"errcat: {Path(config.docs_dir) / existing.src_path} sits where errcat "
                    "generates a page; move its text to another file"
                )
        if config.nav is None:
            config.nav = default_nav([f.src_uri for f in files.documentation_pages()])
        for path, text in content.pages.items():
            files.append(File.generated(config, path, content=text))
        self._api = content.api
        return files

    def on_post_build(self, *, config: MkDocsConfig) -> None:
        from catalog.render.api import write_api

        write_api(Path(config.site_dir), self._api)

    def on_serve(
        self, server: LiveReloadServer, /, *, config: MkDocsConfig, builder: Any
    ) -> LiveReloadServer | None:
        project = self._project or self._load_project(config)
        # A YAML edit changes pages; a code edit moves the raise sites the pages show.
        server.watch(str(project.catalog))
        if project.package.is_dir():
            server.watch(str(project.package))
        return server
