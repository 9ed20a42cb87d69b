"""Material's navigation, rendered once for all the pages that are not in it.

Material writes the whole site navigation into every page (a hidden sidebar on wide screens, the
drawer on narrow ones): a fifth of the theme's time on an error page, for HTML that is the same
on every page outside the navigation, given the links it holds. Those links are relative to the
page, so they are the key: two pages outside the navigation whose relative URLs to every
navigation target (and the home page and logo) are the same get the same navigation, byte for
byte. The thousands of error pages of a large catalog share one key per folder depth.

What the partials read of the page otherwise is whether it is in the navigation (the active item,
its table of contents), which is why a page in the navigation is always rendered afresh. A
project that overrides any of the navigation's partials may read anything: then nothing is
installed, and the theme renders the navigation of every page as before.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

import jinja2
import markupsafe
from mkdocs.structure.nav import Link, Navigation, Section
from mkdocs.structure.pages import Page
from mkdocs.utils import normalize_url

from catalog.engine import material_internals
from catalog.pages import THEME_FOLDER

log = logging.getLogger("mkdocs.plugins.errcat")

NAV = material_internals.NAV
ORIGINAL = "errcat/material-nav.html"
"""The name the theme's own navigation partial is reached by from the stand-in."""
_PARTIALS = material_internals.NAV_PARTIALS
"""What the navigation is made of: each must be Material's own file, or errcat's (its theme
folder's source.html reads the configuration only), for the cache to apply."""
_ERRCAT_THEME = os.path.realpath(THEME_FOLDER)

STAND_IN = """\
{#- errcat: the navigation, rendered once per key (catalog/engine/navcache.py) -#}
{%- set errcat_nav = errcat_nav_get(errcat_nav_key) if errcat_nav_key is defined else none -%}
{%- if errcat_nav is none -%}
{%- set errcat_nav %}{% include "errcat/material-nav.html" %}{% endset -%}
{{- errcat_nav_put(errcat_nav_key if errcat_nav_key is defined else none, errcat_nav) -}}
{%- else -%}
{{- errcat_nav -}}
{%- endif -%}"""


def _targets(items: list[Any]) -> Iterator[str]:
    for item in items:
        if isinstance(item, Section):
            yield from _targets(item.children)
        elif isinstance(item, Page | Link) and item.url is not None:
            yield item.url


class NavCache:
    """The rendered navigation by key, for one build (each worker process fills its own)."""

    def __init__(self, nav: Navigation, config: Any) -> None:
        self._rendered: dict[str, str] = {}
        self._in_nav = {page.file.src_uri for page in nav.pages}
        targets = list(_targets(nav.items))
        extra = config.extra or {}
        for value in (extra.get("homepage"), config.theme.get("logo")):
            if isinstance(value, str):
                targets.append(value)
        if nav.homepage is not None and nav.homepage.url is not None:
            targets.append(nav.homepage.url)
        self._targets = targets

    def key(self, page: Page, base_url: str) -> str | None:
        """The key of `page`'s navigation; None for a page in the navigation."""
        if page.file.src_uri in self._in_nav:
            return None
        return "\0".join(normalize_url(target, page, base_url) for target in self._targets)

    def get(self, key: str | None) -> markupsafe.Markup | None:
        found = self._rendered.get(key) if key is not None else None
        return markupsafe.Markup(found) if found is not None else None

    def put(self, key: str | None, rendered: str) -> markupsafe.Markup:
        if key is not None:
            self._rendered[key] = str(rendered)
        return markupsafe.Markup(rendered)


def install(env: jinja2.Environment, nav: Navigation, config: Any) -> NavCache | None:
    """Put the cached navigation in `env`'s place for Material's own; None (nothing changed)
    when the theme's navigation partials are not all Material's files, or Material's
    navigation is not made as this cache expects (`material_internals.probe`)."""
    templates = material_internals.templates_folder()
    loader = env.loader
    if templates is None or loader is None:
        return None
    try:
        found = [loader.get_source(env, name) for name in _PARTIALS]
    except jinja2.TemplateNotFound:
        return None
    for _, filename, _ in found:
        where = os.path.realpath(filename) if filename is not None else ""
        if not where.startswith((templates + os.sep, _ERRCAT_THEME + os.sep)):
            return None
    problem = material_internals.probe()
    if problem is not None:
        log.info("errcat: the navigation is rendered on every page, because %s", problem)
        return None
    cache = NavCache(nav, config)
    stand_in = jinja2.DictLoader({NAV: STAND_IN, ORIGINAL: found[0][0]})
    env.loader = jinja2.ChoiceLoader([stand_in, loader])
    env.globals["errcat_nav_get"] = cache.get
    env.globals["errcat_nav_put"] = cache.put
    return cache
