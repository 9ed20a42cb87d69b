"""Placeholders of a catalog message: `{name}`, `{name.attr}`, with optional `!r` and `:spec`.

The root identifier of each placeholder is a keyword-only parameter of the generated exception.
"""

from __future__ import annotations

import keyword
import re
import string
from dataclasses import dataclass

from catalog.core.errors import FindingsError

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")


@dataclass(frozen=True)
class Placeholder:
    """One replacement field of a message template."""

    field: str
    """The field as written before any `!` or `:`, e.g. `t.device`."""
    conversion: str | None
    """`r`, `s` or `a`, or None."""
    spec: str
    """Format spec, possibly empty."""

    @property
    def root(self) -> str:
        """The parameter the field reads: `t` for `t.device`."""
        return self.field.split(".", 1)[0]


class PlaceholderError(FindingsError, ValueError):
    """A message template is not a valid catalog template; the text says what and where.
    Still a ValueError, as callers outside errcat's own `except` clauses may expect."""


def parse_placeholders(message: str) -> tuple[Placeholder, ...]:
    """The replacement fields of `message`, in order.

    Raises PlaceholderError for unbalanced braces, positional or indexed fields (`{}`, `{0}`,
    `{a[0]}`), nested fields inside a spec, Python keywords and `self` as a root.
    """
    try:
        parsed = list(string.Formatter().parse(message))
    except ValueError as exc:
        raise PlaceholderError(f"malformed template {message!r}: {exc}") from None
    fields: list[Placeholder] = []
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if not _DOTTED.match(name):
            shown = "{" + name + "}"
            raise PlaceholderError(
                f"placeholder {shown} in {message!r} must be an identifier, optionally with "
                "attribute access such as {t.device}"
            )
        if spec and ("{" in spec or "}" in spec):
            raise PlaceholderError(
                f"placeholder {{{name}}} in {message!r} nests a field in its format spec"
            )
        if conversion not in (None, "r", "s", "a"):
            raise PlaceholderError(
                f"placeholder {{{name}}} in {message!r} has unknown conversion !{conversion}"
            )
        root = name.split(".", 1)[0]
        if root == "self":
            raise PlaceholderError(
                f"placeholder {{{name}}} in {message!r} reads self; name the value instead "
                f"({{{name.removeprefix('self.')}}})"
            )
        if keyword.iskeyword(root):
            raise PlaceholderError(f"placeholder {{{name}}} in {message!r} is a Python keyword")
        fields.append(Placeholder(field=name, conversion=conversion, spec=spec or ""))
    return tuple(fields)


def parameters(message: str) -> tuple[str, ...]:
    """The distinct root names of `message`'s placeholders, in first-use order."""
    seen: dict[str, None] = {}
    for placeholder in parse_placeholders(message):
        seen.setdefault(placeholder.root, None)
    return tuple(seen)


def literal_text(message: str) -> str:
    """The template's literal characters with every placeholder removed (braces undoubled)."""
    return "".join(literal for literal, _name, _spec, _conv in string.Formatter().parse(message))
