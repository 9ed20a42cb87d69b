"""Digests the fast path's cache keys are made of: what a page's HTML and its themed output
depend on besides the page itself.

A cached conversion or themed page is only reused under a key that changes whenever anything
that shaped it changes: the Markdown settings, the versions of every package involved, all of
errcat's own code, the configuration the theme reads, the navigation, the theme's own files.
These functions turn each into text a digest can hold, free of memory addresses, so that two
builds of the same site make the same keys.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

from catalog.core.cachefile import code_digest

CACHE_FORMAT = 1
"""Bumped when what is cached changes shape."""
PACKAGES = ("mkdocs", "mkdocs-material", "markdown", "pymdown-extensions", "pygments", "jinja2")


def digest(*parts: object) -> str:
    """The hex digest of `parts`, each prefixed by its length so that no two lists collide."""
    hashed = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8")
        hashed.update(len(data).to_bytes(8, "little") + data)
    return hashed.hexdigest()


def plain(value: object) -> object:
    """A JSON-able, address-free stand-in for a configuration value."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(str(plain(v)) for v in value)
    config = getattr(value, "config", None)
    if config is not None and isinstance(config, Mapping):  # a plugin
        return {"plugin": type(value).__qualname__, "config": plain(config)}
    text = str(value)
    if " at 0x" in text:  # a function or object named by its address
        return f"{type(value).__module__}.{getattr(value, '__qualname__', type(value).__name__)}"
    return text


def versions() -> str:
    """The installed version of every package that shapes a page (`PACKAGES`)."""
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            found.append(f"{name}: none")
    return ";".join(found)


def errcat_sources() -> str:
    """A digest of the code that turns a recorded page into HTML: all of errcat's
    (`code_digest`), since modules beyond the converter's own (the skeleton, the code
    formatter) shape the cached HTML too."""
    return code_digest().hex()


def theme_files(config: MkDocsConfig) -> str:
    """A digest of the theme folders that no package version stands for (custom_dir)."""
    hashed = hashlib.sha256()
    packages = {os.path.realpath(p) for p in sys.path if p}
    for folder in config.theme.dirs:
        real = os.path.realpath(folder)
        if any(real.startswith(p + os.sep) for p in packages if "-packages" in p):
            continue
        for root, dirs, names in os.walk(real):
            dirs.sort()
            for name in sorted(names):
                path = os.path.join(root, name)
                hashed.update(os.path.relpath(path, real).encode() + b"\0")
                with open(path, "rb") as handle:
                    hashed.update(handle.read() + b"\0")
    return hashed.hexdigest()


_UNCACHED_KEYS = frozenset(
    {"site_dir", "config_file_path", "dev_addr", "watch", "strict", "plugins", "theme"}
)


def config_fingerprint(config: MkDocsConfig) -> object:
    """What the theme reads of the configuration, plugins' settings and theme files included."""
    settings = {key: plain(value) for key, value in config.items() if key not in _UNCACHED_KEYS}
    settings["plugins"] = {name: plain(p.config) for name, p in config.plugins.items()}
    settings["theme"] = {
        "name": config.theme.name,
        "vars": plain(dict(config.theme.items())),
        "files": theme_files(config),
    }
    return settings


def nav_fingerprint(items: list[Any]) -> list[object]:
    """The navigation as every page shows it: each item's kind, title, URL and children."""
    return [
        [
            type(item).__name__,
            item.title,
            getattr(item, "url", None),
            nav_fingerprint(item.children or []),
        ]
        for item in items
    ]


def toc_plain(items: Any) -> list[object]:
    """A page's table of contents as lists, for a digest."""
    return [[i.title, i.url, i.level, toc_plain(i.children)] for i in items]


def neighbour(page: Page | None) -> object:
    """What the theme's footer shows of a previous or next page."""
    return None if page is None else [page.url, page.title]
