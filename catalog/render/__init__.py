"""Rendering the catalog for people and programs: Markdown pages from jinja2 templates and the
JSON API, independent of the engine that turns the pages into HTML."""

from catalog.render.content import SiteContent, SiteInputs, gather, render

__all__ = ["SiteContent", "SiteInputs", "gather", "render"]
