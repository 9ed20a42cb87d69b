"""The `errcat` MkDocs plugin's entry point: `catalog.engine.mkdocs_plugin.ErrcatPlugin`.

Being a submodule of `errcat`, this module runs after `errcat/__init__.py` has pinned errcat's
own `catalog`, so a project's `catalog/` folder is never loaded in its place.
"""

from __future__ import annotations

from catalog.engine.mkdocs_plugin import ErrcatPlugin

__all__ = ["ErrcatPlugin"]
