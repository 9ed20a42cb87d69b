"""The MkDocs settings errcat's pages need, and where they apply: the whole site, or errcat's
pages alone.

Error pages are Markdown that uses admonitions (draft and retired notes), attribute lists
(`{ data-search-exclude }` on headings), Markdown inside HTML (`<section markdown>`), tables (the
indexes), heading ids (toc) and highlighted code with line numbers and a marked line
(pymdownx.highlight and superfences). A project without mkdocs.yml, or whose mkdocs.yml lists
other extensions, would otherwise show those as raw text.

Which rule applies is decided once, the same way by `errcat build` and the MkDocs plugin
(`own_site`): a project has **a site of its own** when it has a mkdocs.yml and errcat's pages
are a section of it (`section: errors/`, the default when docs_dir holds a home page of its
own, `index.md` or `README.md`). Then errcat changes no setting of the project's and nothing on
a page it did not generate:

- the project's `markdown_extensions` stay exactly its own; errcat's pages alone are converted
  with those plus the ones below the project lacks (`errcat_markdown`, `scoped_markdown`);
- theme, palette, fonts, the search plugin and its separator are the project's; errcat's theme
  folder joins the template folders for errcat's own templates, but the project's site keeps
  its 404 page and repository link (`keep_project_templates`);
- errcat's additions to the page head and end (stylesheet, scripts, the search box's matching)
  are put on errcat's pages only (`keep_theme_additions` with the pages).

Otherwise (a fresh adoption: no mkdocs.yml, or errcat's overview is the home page) errcat's
pages are the site, and errcat supplies what the project does not set, for every page:

- every extension below that the project does not list is added with errcat's settings; one
  the project lists keeps the project's settings, whatever they are;
- no `theme` means Material; a project's theme is kept;
- with Material, a theme without a `palette` gets errcat's (light and dark following the
  system's preference, with a toggle) and one without a `font` gets `font: false` (the system's
  fonts: Material's default loads Google Fonts, a request to another origin on every view); a
  project's palette or font is kept;
- with Material, errcat's theme folder (`catalog/pages/theme`: link previews, the stylesheet,
  the search box's matching, the 404 page, a repository link that fetches nothing) joins the
  theme's template folders after the project's `custom_dir`, so a project's own templates win
  (errcat's additions reach every page through the theme's base.html, whatever main.html a
  project writes: `keep_theme_additions`);
- a search plugin is added when the project lists none, and a search plugin without a
  `separator` gets errcat's (it splits pasted messages on punctuation); the project's other
  search settings and plugins are kept.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Collection, Iterator
from typing import Any

import jinja2

from catalog.pages import THEME_FOLDER
from catalog.pages.content import SECTION

log = logging.getLogger("mkdocs.plugins.errcat")

SEARCH_SEPARATOR = r"""[\s\-,:;!=\[\]()<>{}"'/|]+|\.(?!\d)"""
"""lunr reads `:` as a field separator and messages are full of `:`, `,`, quotes, brackets, `=`
and dots: splitting on them lets a pasted message with concrete values match its template."""

EXTENSIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("admonition", {}),
    ("attr_list", {}),
    ("md_in_html", {}),
    ("tables", {}),
    ("toc", {}),
    (
        "pymdownx.highlight",
        {"anchor_linenums": True, "line_spans": "__span", "pygments_lang_class": True},
    ),
    ("pymdownx.superfences", {}),
)
"""The Markdown extensions error pages use, with the settings errcat gives them when a project
lists none of its own."""

SEARCH_PLUGINS = ("search", "material/search")

PALETTE: tuple[dict[str, Any], ...] = (
    {
        "media": "(prefers-color-scheme: light)",
        "scheme": "default",
        "primary": "indigo",
        "accent": "indigo",
        "toggle": {"icon": "material/brightness-7", "name": "Switch to dark mode"},
    },
    {
        "media": "(prefers-color-scheme: dark)",
        "scheme": "slate",
        "primary": "indigo",
        "accent": "indigo",
        "toggle": {"icon": "material/brightness-4", "name": "Switch to light mode"},
    },
)
"""Material's palette for a theme that sets none: the scheme the system prefers first, and a
header toggle to the other one."""


GUEST_SEARCH_BOOST = 0.001
"""The search weight of errcat's pages on a site of the project's own (Material's document
`boost`, 1 by default): the guest's pages come after the host's. Material weighs a match in a
title 1,000 times one in the text, and an error's title is its message, which often names the
project's API (`The starlette.testclient module requires…`): at this weight a title match on an
error page counts as a text match on a project page, so the project's pages that match a query
lead as they did before errcat, and a query that only an error matches still finds it."""


def own_site(section: str, has_settings: bool) -> bool:
    """Whether the project has a site of its own, which errcat joins as a section and leaves
    as it is: a mkdocs.yml (`has_settings`) and errcat's pages at `section` `errors/`."""
    return has_settings and section == SECTION


def merged_theme(value: object) -> object:
    """The project's `theme`: Material when there is none; for Material, errcat's palette and
    the system's fonts where the project chose neither."""
    if not value or value == "material":
        value = {"name": "material"}
    if not isinstance(value, dict) or value.get("name") != "material":
        return value
    theme = dict(value)
    if "palette" not in theme:
        theme["palette"] = [{**option, "toggle": dict(option["toggle"])} for option in PALETTE]
    theme.setdefault("font", False)
    return theme


def _extension_names(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        yield from (str(name) for name in value)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                yield from (str(name) for name in item)


def merged_extensions(value: object) -> object:
    """The project's `markdown_extensions` with the ones errcat needs appended where missing."""
    present = set(_extension_names(value))
    missing = [(name, options) for name, options in EXTENSIONS if name not in present]
    if isinstance(value, dict):
        return {**value, **{name: dict(options) for name, options in missing}}
    items = list(value) if isinstance(value, list) else []
    return items + [{name: dict(options)} if options else name for name, options in missing]


def _plugin_name(item: object) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and len(item) == 1:
        return str(next(iter(item)))
    return None


def _with_separator(name: str, options: object) -> dict[str, Any]:
    table = dict(options) if isinstance(options, dict) else {}
    table.setdefault("separator", SEARCH_SEPARATOR)
    return {name: table}


def merged_plugins(value: object) -> object:
    """The project's `plugins` with a search plugin (and its separator) where missing."""
    if value is None:
        return [_with_separator("search", None)]
    if isinstance(value, dict):
        found = next((name for name in value if name in SEARCH_PLUGINS), None)
        if found is None:
            return {**_with_separator("search", None), **value}
        return {**value, **_with_separator(found, value[found])}
    items = list(value) if isinstance(value, list) else []
    for index, item in enumerate(items):
        name = _plugin_name(item)
        if name in SEARCH_PLUGINS:
            options = item[name] if isinstance(item, dict) else None
            items[index] = _with_separator(name, options)
            return items
    return [_with_separator("search", None), *items]


MATERIAL_DEFAULT_FONT = {"text": "Roboto", "code": "Roboto Mono"}
"""What a loaded Material theme holds as `font` when the project set none (Google Fonts)."""


def add_theme_settings(theme: Any, own: bool = False) -> list[str]:
    """For a loaded MkDocs theme (the plugin's route): errcat's palette where a Material theme
    has none and `font: false` where its font is Material's default, and errcat's theme
    folder; on a site of the project's own (`own`), the folder only. Return the keys set.

    A loaded theme no longer tells a font the project chose from Material's default, so a
    project that names exactly Roboto and Roboto Mono gets the system's fonts too."""
    if getattr(theme, "name", None) != "material":
        return []
    if own:
        return ["templates"] if add_theme_folder(theme) else []
    added = []
    if "palette" not in theme or theme["palette"] is None:
        theme["palette"] = [{**option, "toggle": dict(option["toggle"])} for option in PALETTE]
        added.append("palette")
    if "font" not in theme or theme["font"] == MATERIAL_DEFAULT_FONT:
        theme["font"] = False
        added.append("font")
    if add_theme_folder(theme):
        added.append("templates")
    return added


def add_theme_folder(theme: Any) -> bool:
    """Put errcat's theme folder among a loaded theme's template folders, right after the
    project's `custom_dir` (whose templates win) and before the theme's own; return whether it
    was added (it is added once, however often MkDocs calls the plugin)."""
    dirs = getattr(theme, "dirs", None)
    if not isinstance(dirs, list):
        return False
    folder = str(THEME_FOLDER)
    if any(os.path.realpath(d) == folder for d in dirs):
        return False
    dirs.insert(1 if getattr(theme, "custom_dir", None) else 0, folder)
    return True


SITE_TEMPLATES = ("404.html", "partials/source.html")
"""The templates of errcat's theme folder that change the whole site rather than errcat's
pages: the 404 page and the header's repository link."""


class _Only(jinja2.BaseLoader):
    """`loader` for `names` only; every other template is someone else's to find."""

    def __init__(self, names: Collection[str], loader: jinja2.BaseLoader) -> None:
        self._names = frozenset(names)
        self._loader = loader

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Any]:
        if template not in self._names:
            raise jinja2.TemplateNotFound(template)
        return self._loader.get_source(environment, template)

    def list_templates(self) -> list[str]:
        return []


def keep_project_templates(env: jinja2.Environment, dirs: list[str]) -> bool:
    """On a site of the project's own: `SITE_TEMPLATES` come from the theme's folders other
    than errcat's (the project's custom_dir, then the theme's), as they would without errcat,
    while errcat's own templates and assets stay reachable. Return whether the loader changed
    (not where errcat's folder is not among `dirs`)."""
    folder = os.path.realpath(THEME_FOLDER)
    others = [d for d in dirs if os.path.realpath(d) != folder]
    if env.loader is None or len(others) == len(dirs):
        return False
    # Before the theme's own loader: a static template (404.html) is looked up by name.
    masked = _Only(SITE_TEMPLATES, jinja2.FileSystemLoader(others))
    env.loader = jinja2.ChoiceLoader([masked, env.loader])
    return True


ERRCAT_MAIN = "errcat_main.html"
"""errcat's layer over Material's base.html; errcat's own main.html extends it."""
_HEAD = '{% if errcat_page(page) %}{% include "partials/errcat-head.html" %}{% endif %}'
_SCRIPTS = '{% if errcat_page(page) %}{% include "partials/errcat-scripts.html" %}{% endif %}'
_BEFORE_END = {tag: re.compile(rf"\s*{tag}") for tag in ("</head>", "</body>")}
"""The end of the head and of the body, with the space before it: the additions go before
that space, just where errcat_main.html's blocks put them, so that a build without the plugin
(another engine on the composed mkdocs.yml) writes the same bytes."""


def _pages_test(pages: Collection[str] | None) -> Any:
    """`errcat_page(page)` for the templates: whether a page gets errcat's additions."""
    if pages is None:
        return lambda page: True
    chosen = frozenset(pages)

    def errcat_page(page: Any) -> bool:
        file = getattr(page, "file", None)
        return file is not None and file.src_uri in chosen

    return errcat_page


def keep_theme_additions(env: jinja2.Environment, pages: Collection[str] | None = None) -> bool:
    """Put errcat's additions to the theme's pages (its stylesheet and scripts, the search box's
    matching, link previews: partials/errcat-head.html and errcat-scripts.html) into the
    theme's base.html, before its `</head>` and `</body>`, where no template a project writes
    can take them away: its own main.html may extend base.html, or override `extrahead`
    without `super()`. errcat_main.html then adds nothing (`errcat_in_base`); it adds them
    itself where this did not run (another engine on the composed mkdocs.yml).

    With `pages` (docs-relative paths: errcat's pages on a site of the project's own), only
    those pages get them; without, every page does, the 404 page included.

    Return whether they were put there: not where errcat's theme folder is not in use, nor
    where base.html is not made to take them, in which case a main.html that does not extend
    errcat_main.html is named in a warning, with the fix. One lookup and one text replacement
    per build, whatever the number of pages."""
    loader = env.loader
    if loader is None:
        return False
    env.globals["errcat_page"] = _pages_test(pages)
    env.globals["errcat_section"] = pages is not None
    try:
        loader.get_source(env, ERRCAT_MAIN)
        base, _, _ = loader.get_source(env, "base.html")
    except jinja2.TemplateNotFound:
        return False
    if base.count("</head>") == 1 and base.count("</body>") == 1:
        patched = _BEFORE_END["</head>"].sub(lambda end: _HEAD + end.group(0), base)
        patched = _BEFORE_END["</body>"].sub(lambda end: _SCRIPTS + end.group(0), patched)
        env.loader = jinja2.ChoiceLoader([jinja2.DictLoader({"base.html": patched}), loader])
        env.globals["errcat_in_base"] = True
        return True
    try:
        main, main_file, _ = loader.get_source(env, "main.html")
    except jinja2.TemplateNotFound:
        return False
    if ERRCAT_MAIN not in main:
        log.warning(
            "errcat: %s does not extend %s, so error pages lack errcat's stylesheet and "
            'search matching; write {%% extends "%s" %%} in it instead of base.html',
            main_file or "main.html",
            ERRCAT_MAIN,
            ERRCAT_MAIN,
        )
    return False


def merged_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` (a project's mkdocs.yml) with everything errcat's pages need merged in."""
    merged = dict(settings)
    merged["theme"] = merged_theme(merged.get("theme"))
    merged["markdown_extensions"] = merged_extensions(merged.get("markdown_extensions"))
    merged["plugins"] = merged_plugins(merged.get("plugins"))
    return merged


def errcat_markdown(names: list[Any], options: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The Markdown extensions errcat's pages are converted with on a site of the project's
    own: the site's (`names`, `options`: a loaded config's `markdown_extensions` and
    `mdx_configs`, left as they are) plus the ones errcat needs that it lacks."""
    names, options = list(names), dict(options or {})
    add_extensions(names, options)
    return names, options


def swap_markdown(config: Any, markdown: tuple[list[Any], dict[str, Any]]) -> tuple[Any, Any]:
    """Put `markdown` (extensions, their options) in a loaded config's place, where MkDocs'
    `Page.render` reads it; return what was there, to put back."""
    previous = (config["markdown_extensions"], config["mdx_configs"])
    config["markdown_extensions"], config["mdx_configs"] = markdown
    return previous


@contextlib.contextmanager
def scoped_markdown(
    config: Any, markdown: tuple[list[Any], dict[str, Any]] | None
) -> Iterator[None]:
    """`markdown` in the config while one of errcat's pages is converted by MkDocs itself
    (None: the site's own, unchanged)."""
    if markdown is None:
        yield
        return
    previous = swap_markdown(config, markdown)
    try:
        yield
    finally:
        swap_markdown(config, previous)


def add_extensions(names: list[str], options: dict[str, Any]) -> list[str]:
    """For a loaded MkDocs config (its `markdown_extensions` and `mdx_configs`): add what is
    missing, in place; return the names added."""
    added = []
    for name, defaults in EXTENSIONS:
        if name not in names:
            names.append(name)
            if defaults:
                options[name] = dict(defaults)
            added.append(name)
    return added
