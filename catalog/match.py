"""Which catalog entry a raise site raises.

A site raises an entry in one of two ways: it raises the generated typed class (matched by
qualified name, however it was imported), or it still raises the built-in with the entry's
message written out (matched by exception and rewritten message; `errcat migrate` turns those
into typed raises).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from catalog.model import Catalog, Entry
from catalog.templates import to_catalog_message


class SiteLike(Protocol):
    """What matching reads of an extractor raise site."""

    @property
    def exception(self) -> str | None: ...
    @property
    def qualified_name(self) -> str | None: ...
    @property
    def template(self) -> str | None: ...


@dataclass(frozen=True)
class Match:
    """An entry found for a site, and how."""

    entry: Entry
    typed: bool
    """True when the site raises the generated class; False for a raw built-in raise."""


def builtin_name(site: SiteLike) -> str | None:
    """The built-in exception a site raises, or None when it raises anything else."""
    qualified = site.qualified_name
    if qualified and qualified.startswith("builtins."):
        return qualified.removeprefix("builtins.")
    return None


class Matcher:
    """Looks up entries for sites; built once per catalog."""

    def __init__(self, catalog: Catalog, generated_module: str) -> None:
        self.generated_module = generated_module
        self._by_class = {f"{generated_module}.{entry.name}": entry for entry in catalog}
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
        exception = builtin_name(site)
        if exception is None or site.template is None:
            return None
        try:
            message = to_catalog_message(site.template).message
        except ValueError:
            return None
        entry = self._by_message.get((exception, message))
        return Match(entry, typed=False) if entry is not None else None
