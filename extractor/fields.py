"""Replacement fields of a scan template: where each begins and ends, and what it holds.

A scan template (`extractor.templates`) is literal text with `{` and `}` doubled and each field
as `{<expression as written>!<conversion>:<spec>}`. The extractor reads templates it built
(`printed.py` splices constructor arguments into a class's text, `extract.py` puts a message
builder's fields in a raise's terms) and the catalog rewrites them into catalog messages
(`catalog.entries.templates`): all split them here, one way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class TemplateField:
    """One replacement field of a scan template."""

    expression: str
    """Source of the expression as written, e.g. `tuple(t.shape)`."""
    conversion: str | None
    """`r`, `s`, `a` or None."""
    spec: str
    """Format spec as written, possibly empty."""
    debug: str | None = None
    """For a self-documenting field (`{n = }`), the text it prints before the value (`n = `)."""

    @property
    def suffix(self) -> str:
        """The conversion and spec as a field writes them after its expression (`!r:>8`)."""
        conversion = f"!{self.conversion}" if self.conversion else ""
        return conversion + (f":{self.spec}" if self.spec else "")


Part = str | TemplateField
"""A template is literal text (braces still doubled) and fields, in order."""


def field_end(text: str, start: int) -> int:
    """Index of the `}` closing the field opened at `start - 1`, skipping nested brackets and quotes."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if text.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
        elif text.startswith(('"""', "'''"), i):
            quote = text[i : i + 3]
            i += 3
            continue
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                return i if ch == "}" else -1
            depth -= 1
        i += 1
    return -1


def split_field(body: str) -> TemplateField:
    """Split `expr!r:spec` at the top-level `!` (not `!=`) and `:`; see `_debug_field` for `=`."""
    return _debug_field(_split_parts(body))


def _debug_field(field: TemplateField) -> TemplateField:
    """Resolve a self-documenting field: `{n=}` prints `n=` and then `repr(n)`.

    The printed prefix is the field's source up to and including `=`, spacing included; without
    a conversion the value is shown with `repr`, unless a format spec is given.
    """
    raw = field.expression
    if not raw.rstrip().endswith("=") or raw.rstrip()[-2:-1] in ("=", "!", "<", ">"):
        return TemplateField(raw.strip(), field.conversion, field.spec)
    conversion = field.conversion or (None if field.spec else "r")
    return TemplateField(raw.rstrip()[:-1].strip(), conversion, field.spec, debug=raw)


def _split_parts(body: str) -> TemplateField:
    depth = 0
    quote: str | None = None
    for i, ch in enumerate(body):
        if quote:
            if ch == quote and body[i - 1] != "\\":
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch == "!" and body[i + 1 : i + 2] in ("r", "s", "a"):
            rest = body[i + 2 :]
            if rest == "" or rest.startswith(":"):
                return TemplateField(body[:i], body[i + 1], rest[1:])
        elif depth == 0 and ch == ":" and body[i + 1 : i + 2] != "=":
            return TemplateField(body[:i], None, body[i + 1 :])
    return TemplateField(body, None, "")


def runs(template: str) -> Iterator[tuple[bool, str]]:
    """A scan template as (is_field, text) runs, in order: a literal run keeps its doubled
    braces and runs to the next field; a field is its body without the braces. Raises
    ValueError for a single `}` or a field never closed."""
    literal: list[str] = []
    i = 0
    while i < len(template):
        ch = template[i]
        if ch in "{}" and template[i + 1 : i + 2] == ch:
            literal.append(ch * 2)
            i += 2
            continue
        if ch == "}":
            raise ValueError(f"single '}}' at offset {i} in template {template!r}")
        if ch == "{":
            end = field_end(template, i + 1)
            if end < 0:
                raise ValueError(f"unclosed field at offset {i} in template {template!r}")
            if literal:
                yield False, "".join(literal)
                literal = []
            yield True, template[i + 1 : end]
            i = end + 1
            continue
        literal.append(ch)
        i += 1
    if literal:
        yield False, "".join(literal)


def parse_template(template: str) -> list[Part]:
    """Split a scan template into literal text and fields. Raises ValueError when unbalanced."""
    return [split_field(text) if is_field else text for is_field, text in runs(template)]


def spliced(template: str, field: Callable[[str], str | None]) -> str | None:
    """`template` with each field `{...}` replaced by what `field` gives for its body (a
    template itself), or None when `field` gives None for one, or the template does not
    split; literal runs stay as they are."""
    pieces: list[str] = []
    try:
        for is_field, text in runs(template):
            replaced = field(text) if is_field else text
            if replaced is None:
                return None
            pieces.append(replaced)
    except ValueError:
        return None
    return "".join(pieces)
