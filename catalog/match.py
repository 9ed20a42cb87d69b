"""Which catalog entry a raise site raises.

A site raises an entry in one of two ways: it raises the generated typed class (matched by
qualified name, however it was imported), or it raises the entry's exception with the entry's
message written out (matched by resolved class and rewritten message). For an entry that has a
generated class the second way is a raw raise that `errcat migrate` turns into a typed one; for
an entry catalogued in place (a class of the package or of another library, or a built-in that
gets no class) it is how the entry is raised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from catalog.exceptions import has_typed_class, reserved_parameters, site_exception
from catalog.model import Catalog, Entry
from catalog.templates import CatalogMessage, to_catalog_message


class SiteLike(Protocol):
    """What matching reads of an extractor raise site."""

    @property
    def exception(self) -> str | None: ...
    @property
    def qualified_name(self) -> str | None: ...
    @property
    def template(self) -> str | None: ...
    @property
    def reraise(self) -> bool: ...
    @property
    def arguments(self) -> tuple[str, ...] | None: ...
    @property
    def keywords(self) -> tuple[tuple[str, str], ...]: ...


@dataclass(frozen=True)
class Match:
    """An entry found for a site, and how."""

    entry: Entry
    typed: bool
    """True when the site raises the generated class; False when it raises the entry's class."""

    @property
    def needs_migration(self) -> bool:
        """A raw raise of an entry that has a generated class: `errcat migrate` rewrites it."""
        return not self.typed and has_typed_class(self.entry.exception)


def site_template(site: SiteLike) -> str | None:
    """The scan template of the site's message, with the cases the extractor leaves open.

    The extractor gives a template only where the message is text it can read. The message of
    an exception built from one argument is that argument's `str`, so any other single argument
    is one field of its source as written (`raise InvalidMarker(str(e))` gives `{str(e)}`), and
    an exception built from nothing (`raise X`, `raise X()`) has the empty message. Unpacked
    arguments (`*args`) and keyword-only calls give None: their text is not in the source.
    """
    if site.template is not None:
        return site.template
    if site.reraise or site.exception is None:
        return None
    arguments = site.arguments
    if arguments is None:
        return ""
    if not arguments:
        return "" if not site.keywords else None
    if arguments[0].startswith("*"):
        return None
    return "{" + arguments[0] + "}"


def site_message(site: SiteLike) -> CatalogMessage | None:
    """The catalog message a site's raise says, or None when it cannot be read or rewritten."""
    exception = site_exception(site.qualified_name)
    template = site_template(site)
    if exception is None or template is None:
        return None
    try:
        return to_catalog_message(template, reserved_parameters(exception))
    except ValueError:
        return None


class Matcher:
    """Looks up entries for sites; built once per catalog."""

    def __init__(self, catalog: Catalog, generated_module: str) -> None:
        self.generated_module = generated_module
        self._by_class = {
            f"{generated_module}.{entry.name}": entry
            for entry in catalog
            if has_typed_class(entry.exception)
        }
        self._by_message: dict[tuple[str, str], Entry] = {}
        for entry in catalog:
            self._by_message.setdefault((entry.exception, entry.message), entry)

    def is_generated_class(self, site: SiteLike) -> bool:
        """Whether the site raises something from the generated module (catalogued or not)."""
        return bool(
            site.qualified_name and site.qualified_name.startswith(self.generated_module + ".")
        )

    def match(self, site: SiteLike) -> Match | None:
        """The entry the site raises, or None."""
        if site.qualified_name in self._by_class:
            return Match(self._by_class[site.qualified_name], typed=True)
        if self.is_generated_class(site):
            return None
        exception = site_exception(site.qualified_name)
        if exception is None:
            return None
        message = site_message(site)
        if message is None:
            return None
        entry = self._by_message.get((exception, message.message))
        return Match(entry, typed=False) if entry is not None else None
