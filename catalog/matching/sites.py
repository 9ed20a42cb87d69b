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
from pathlib import Path
from typing import Protocol

from catalog.core.exceptions import has_typed_class, reserved_parameters, site_exception
from catalog.core.model import Catalog, Entry
from catalog.entries.templates import CatalogMessage, to_catalog_message

MESSAGES_FILE = "site-messages.marshal"
"""The cache of `SiteMessages` inside a cache folder."""


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
    @property
    def printed(self) -> str | None: ...
    @property
    def through(self) -> str | None: ...


@dataclass(frozen=True)
class Match:
    """An entry found for a site, and how."""

    entry: Entry
    typed: bool
    """True when the site raises the generated class; False when it raises the entry's class."""
    through: bool = False
    """The site raises what a factory or helper of the package builds: it is the entry's
    raise as written (only the factory could be rewritten, and it serves other messages)."""

    @property
    def needs_migration(self) -> bool:
        """A raw raise of an entry that has a generated class: `errcat migrate` rewrites it."""
        return not self.typed and not self.through and has_typed_class(self.entry.exception)


def site_template(site: SiteLike) -> str | None:
    """The scan template of the site's message, with the cases the extractor leaves open.

    The extractor gives a template only where the message is text it can read. The message of
    an exception built from one argument is that argument's `str`, so any other single argument
    is one field of its source as written (`raise InvalidMarker(str(e))` gives `{str(e)}`), and
    an exception built from nothing (`raise X`, `raise X()`) has the empty message. Unpacked
    arguments (`*args`) and keyword-only calls give None: their text is not in the source.
    Where a factory, helper or class of the package builds the text, it is what `str(exc)`
    prints (`printed`, read by `extractor.printed`).
    """
    if site.printed is not None:
        return site.printed
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


class SiteMessages:
    """The catalog message of each (exception, scan template), remembered across runs.

    Rewriting a scan template into a catalog message is most of what matching a site costs
    (a whole-torch scan has some 15,000 sites), and the answer depends only on the two strings,
    errcat's sources and the Python running it, never on the catalog. `load` reads what an
    earlier run stored; `save` stores what this run looked up, so the file holds the messages
    of the package as it is now.
    """

    def __init__(self, known: dict[str, str | None] | None = None) -> None:
        self._known = known or {}
        self._used: dict[str, str | None] = {}
        self._computed = False

    def message(self, exception: str, template: str) -> str | None:
        """The catalog message of a site raising `exception` with `template`, or None when the
        template cannot be rewritten."""
        if "{" not in template and "}" not in template:
            return template  # no field and no doubled brace: the rewrite gives it back
        key = f"{exception}\0{template}"
        if key in self._used:
            return self._used[key]
        if key in self._known:
            message = self._known[key]
        else:
            self._computed = True
            try:
                message = to_catalog_message(template, reserved_parameters(exception)).message
            except ValueError:
                message = None
        self._used[key] = message
        return message

    @classmethod
    def load(cls, cache_dir: Path) -> SiteMessages:
        """The messages stored in `cache_dir` by a run of this errcat on this Python."""
        from catalog.entries.loader import read_cache, tool_fingerprint

        known = read_cache(cache_dir / MESSAGES_FILE, tool_fingerprint().hex())
        if not isinstance(known, dict):
            known = None
        return cls(known)

    def save(self, cache_dir: Path) -> None:
        """Store the messages this run looked up, when that changes the stored file (a run
        that looked nothing up, its outcome cached, leaves the file as it is)."""
        if not self._computed and (not self._used or len(self._used) == len(self._known)):
            return
        from catalog.entries.loader import tool_fingerprint, write_cache

        write_cache(cache_dir / MESSAGES_FILE, tool_fingerprint().hex(), self._used)


class Matcher:
    """Looks up entries for sites; built once per catalog.

    `messages` remembers the rewritten message of each site (see `SiteMessages`); by default
    the matcher keeps its own, for this process only.
    """

    def __init__(
        self, catalog: Catalog, generated_module: str, messages: SiteMessages | None = None
    ) -> None:
        self.generated_module = generated_module
        self.messages = messages or SiteMessages()
        self._prefix = generated_module + "."
        self._by_class = {
            f"{generated_module}.{entry.name}": entry
            for entry in catalog
            if has_typed_class(entry.exception)
        }
        self._by_message: dict[tuple[str, str], Entry] = {}
        for entry in catalog:
            self._by_message.setdefault((entry.exception, entry.message), entry)
        # One Match per (entry, way), made when first found: a whole-torch check matches
        # 15,000 sites, and Match is a frozen dataclass.
        self._matches: dict[tuple[str, bool, bool], Match] = {}

    def _match(self, entry: Entry, typed: bool, through: bool = False) -> Match:
        found = self._matches.get((entry.id, typed, through))
        if found is None or found.entry is not entry:
            found = self._matches[entry.id, typed, through] = Match(entry, typed, through)
        return found

    def is_generated_class(self, site: SiteLike) -> bool:
        """Whether the site raises something from the generated module (catalogued or not)."""
        return bool(site.qualified_name and site.qualified_name.startswith(self._prefix))

    def match(self, site: SiteLike) -> Match | None:
        """The entry the site raises, or None."""
        qualified_name = site.qualified_name
        entry = self._by_class.get(qualified_name) if qualified_name else None
        if entry is not None:
            return self._match(entry, typed=True)
        if self.is_generated_class(site):
            return None
        exception = site_exception(qualified_name)
        if exception is None:
            return None
        template = site_template(site)
        if template is None:
            return None
        message = self.messages.message(exception, template)
        if message is None:
            return None
        entry = self._by_message.get((exception, message))
        if entry is None:
            return None
        return self._match(entry, typed=False, through=site.through is not None)
