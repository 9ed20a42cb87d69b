"""What errcat's navigation cache knows of Material for MkDocs' templates, kept here, with a
probe.

`catalog.engine.navcache` renders Material's site navigation once for all the pages outside it,
which is sound only because of how Material's templates are made: the navigation is the partial
`partials/nav.html`, made of `nav-item.html`, `logo.html` and `source.html`, and reads of the
page only whether it is in the navigation. None of that is Material's public interface. The
names live here; `probe` checks, when a build installs the cache, that the installed Material
still has those partials, the navigation made of its items; where not, the navigation is
rendered on every page as the theme renders it (one log line says why).
"""

from __future__ import annotations

import functools
import os

NAV = "partials/nav.html"
"""Material's navigation partial, which every page includes."""
NAV_PARTIALS = (NAV, "partials/nav-item.html", "partials/logo.html", "partials/source.html")
"""What the navigation is made of."""


@functools.cache
def templates_folder() -> str | None:
    """The folder of Material's templates, or None where Material is not installed."""
    try:
        import material  # type: ignore[import-untyped]  # no stubs; Material is optional
    except ImportError:
        return None
    return os.path.join(os.path.dirname(os.path.realpath(material.__file__)), "templates")


@functools.cache
def probe() -> str | None:
    """None when the installed Material's navigation is made as `navcache` expects (or there
    is no Material, whose navigation is then never cached); otherwise what differs."""
    folder = templates_folder()
    if folder is None:
        return None
    for name in NAV_PARTIALS:
        if not os.path.isfile(os.path.join(folder, name)):
            return f"Material has no {name}"
    with open(os.path.join(folder, NAV), encoding="utf-8") as handle:
        if "partials/nav-item.html" not in handle.read():
            return f"Material's {NAV} is no longer made of partials/nav-item.html"
    return None
