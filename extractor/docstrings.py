"""What a docstring says about the exceptions its function raises, and about its parameters.

Three common styles are read:

- Google: a `Raises:` line, then entries indented deeper (`ValueError: text`), each continued
  by lines indented deeper still; the section ends at the first line indented no deeper than
  its header.
- NumPy: a `Raises` line underlined with dashes, then entries: a line of exception names at
  the header's indentation, then its description indented deeper.
- reST/Sphinx: fields `:raises ValueError: text` (also `:raise`, `:except`, `:exception`,
  `:throws`, several types separated by commas or `or`), continued by lines indented deeper
  than the field.

`parameter_entries` reads the parameters' sections of the same three styles: Google `Args:`
(`Arguments:`, `Parameters:`, `Keyword Args:`, ...) with entries `name (type): text`; NumPy
`Parameters` underlined, entries `name : type` with the description indented below; reST
`:param name:` or `:param type name:` (also `:arg`, `:parameter`, `:keyword`).

`raises_entries` and `parameter_entries` work on the docstring's value as the module's `ast` holds it (not cleaned),
so that an entry's `line_offset` is a line of that value; `extract.py` maps it to a file line.
It never raises: docstrings are arbitrary text, and a docstring errcat cannot read only means
no documented knowledge for its sites.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "ParameterEntry",
    "RaisesEntry",
    "normalize_exception",
    "parameter_entries",
    "parameter_types",
    "raises_entries",
]


@dataclass(frozen=True)
class RaisesEntry:
    """One exception a docstring says its function raises, and when."""

    exception: str
    """The exception's dotted name as the docstring writes it, without reST roles, `~`, `!` or
    backticks (`ValueError`, `errors.Foo`, `pkg.Foo` for `` :class:`~pkg.Foo` ``)."""
    text: str
    """The description, its lines stripped and joined by single spaces; reST roles become
    code spans (`` :class:`~a.B` `` reads `` `B` ``, as Sphinx shows it); other backticks stay."""
    line_offset: int
    """0-based line of the entry (its exception names) within the docstring's value."""


@dataclass(frozen=True)
class ParameterEntry:
    """What a docstring says one parameter of its function is."""

    name: str
    """The parameter's name, without `*` or `**`."""
    text: str
    """The description (its type, where written apart, not included), as `RaisesEntry.text`."""
    line_offset: int
    """0-based line of the entry within the docstring's value."""


# One exception as written: a reST role around a target, a code span, or a bare dotted name.
_ROLE_PREFIX = r":[\w.+-]+(?::[\w.+-]+)?:"
_TYPE = rf"(?:(?:{_ROLE_PREFIX})?`[^`\n]+`|``[^`\n]+``|[~!]?[^\W\d][\w.]*)"
# Several of them: `A, B`, `A or B`, `A | B`.
_TYPES = rf"{_TYPE}(?:\s*(?:,|\|)\s*{_TYPE}|\s+or\s+{_TYPE})*"
_TYPE_PART = re.compile(_TYPE)

_GOOGLE_HEADER = re.compile(r"(?:Raises|Raise|Exceptions|Throws)\s*:", re.IGNORECASE)
_NUMPY_HEADER = re.compile(r"(?:Raises|Raise|Exceptions|Throws)", re.IGNORECASE)
_UNDERLINE = re.compile(r"-{3,}")
# `ValueError: text` (Google), `ValueError` alone (an entry whose text is on the next lines).
# `ValueError - text` (a dash for the colon) is common enough in the wild to read too.
_NAMED_ENTRY = re.compile(rf"(?P<types>{_TYPES})(?:\s*:|\s+-{{1,2}})(?:\s+(?P<text>.*)|$)")
_NAMES_ONLY = re.compile(rf"(?P<types>{_TYPES})\s*,?")
# NumPy: `ValueError`, or `ValueError : text` as some write it.
_NUMPY_ENTRY = re.compile(rf"(?P<types>{_TYPES})\s*(?::\s*(?P<text>.*))?")
_FIELD = re.compile(
    rf":(?:raises?|except|exception|throws?)\s+(?P<types>{_TYPES})\s*:(?:\s+(?P<text>.*)|$)",
    re.IGNORECASE,
)
# An inline role in description text: `:class:`x``, `:py:exc:`~a.b.C``, `:func:`t <target>``.
_ROLE = re.compile(rf"(?<![\w`]){_ROLE_PREFIX}`(?P<target>[^`\n]+)`")
_DOTTED = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")

_Parts = tuple[str, list[str], int]
"""An entry being read: its exception names as written, its description's lines, its line."""


def raises_entries(docstring: str) -> tuple[RaisesEntry, ...]:
    """The documented exceptions of a docstring's value, in line order; never raises.

    An entry naming several exceptions gives one record per name, with the same text and line.
    Entries without a description are dropped: they say nothing about when the raise happens.
    """
    if not isinstance(docstring, str) or not docstring:
        return ()
    lines = docstring.split("\n")
    indents = _indents(lines)
    found: list[_Parts] = []
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        if _GOOGLE_HEADER.fullmatch(stripped):
            index = _google(lines, indents, index, found)
        elif _NUMPY_HEADER.fullmatch(stripped):
            if _is_numpy_header(lines, indents, index):
                index = _numpy(lines, indents, index, found)
            elif _next_is_deeper(indents, index):
                # `Raises` without its colon, over Google entries: a common slip.
                index = _google(lines, indents, index, found)
            else:
                index += 1
        elif stripped.startswith(":"):
            index = _field(lines, indents, index, found)
        else:
            index += 1
    entries: list[RaisesEntry] = []
    for types, text_lines, offset in found:
        text = _clean_text(text_lines)
        if not text:
            continue
        for name in _names(types):
            entries.append(RaisesEntry(name, text, offset))
    entries.sort(key=lambda entry: entry.line_offset)
    return tuple(entries)


def normalize_exception(written: str) -> str | None:
    """The dotted name an exception reference stands for, or None when it is not one.

    Roles, backticks, `~` and `!` go; `title <target>` gives `target`; `Foo()` gives `Foo`.
    """
    name = written.strip()
    role = re.match(_ROLE_PREFIX, name)
    if role is not None:
        name = name[role.end() :]
    name = name.strip("`").strip()
    if name.endswith(">") and "<" in name:
        name = name[name.rindex("<") + 1 : -1].strip()
    name = name.lstrip("~!").removesuffix("()")
    return name if _DOTTED.fullmatch(name) else None


def _names(types: str) -> list[str]:
    names: list[str] = []
    for part in _TYPE_PART.findall(types):
        if part == "or":
            continue
        name = normalize_exception(part)
        if name is not None and name not in names:
            names.append(name)
    return names


def _look_like_classes(types: str) -> bool:
    """Whether each name of a line of names alone reads as an exception class: marked up as
    code or a role, or CapWords; a wrapped description's last word (`shape.`) is not one."""
    for part in _TYPE_PART.findall(types):
        if part == "or":
            continue
        name = normalize_exception(part)
        if name is None or not (part.endswith("`") or name.rpartition(".")[2][:1].isupper()):
            return False
    return True


def _indents(lines: list[str]) -> list[int]:
    """Each line's indentation relative to the docstring's margin (blank lines: -1).

    The first line follows the opening quotes, so its own leading space is not indentation:
    it counts as the margin, as `inspect.cleandoc` treats it.
    """
    widths = [
        len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip()) if line.strip() else -1
        for line in lines
    ]
    rest = [width for width in widths[1:] if width >= 0]
    margin = min(rest) if rest else 0
    relative = [width - margin if width >= 0 else -1 for width in widths]
    if relative and relative[0] >= 0:
        relative[0] = 0
    return relative


def _block(indents: list[int], start: int, deeper_than: int) -> int:
    """The index past the lines from `start` on that are blank or indented deeper than
    `deeper_than`; trailing blank lines are left out."""
    end = start
    index = start
    while index < len(indents):
        if indents[index] < 0:
            index += 1
            continue
        if indents[index] <= deeper_than:
            break
        index += 1
        end = index
    return end


def _google(
    lines: list[str],
    indents: list[int],
    header: int,
    found: list[_Parts],
    starts: Callable[[str], tuple[str, str] | None] | None = None,
) -> int:
    """Read a Google section after its header line: entries at the first entry's
    indentation, each started by a line `starts` reads as (names, first text), continued by
    the lines after it; the index past the section."""
    end = _block(indents, header + 1, indents[header])
    entry_indent: int | None = None
    current: _Parts | None = None
    for index in range(header + 1, end):
        indent = indents[index]
        if indent < 0:
            continue
        stripped = lines[index].strip()
        if entry_indent is None:
            entry_indent = indent
        if indent <= entry_indent:
            started = (starts or _raises_entry)(stripped)
            if started is not None:
                current = (started[0], [started[1]], index)
                found.append(current)
                continue
        # Continuation (or a wrapped line at the entries' indentation): part of the entry.
        if current is not None:
            current[1].append(stripped)
    return end


def _raises_entry(stripped: str) -> tuple[str, str] | None:
    match = _NAMED_ENTRY.fullmatch(stripped)
    if match is not None:
        return match["types"], match["text"] or ""
    # A name alone starts an entry (its description, if any, follows indented deeper):
    # appending it to the entry before would make that text read wrong.
    if _NAMES_ONLY.fullmatch(stripped) and _look_like_classes(stripped.rstrip(",")):
        return stripped.rstrip(","), ""
    return None


def _numpy(
    lines: list[str],
    indents: list[int],
    header: int,
    found: list[_Parts],
    starts: Callable[[str], tuple[str, str] | None] | None = None,
) -> int:
    """Read a NumPy section after its underlined header: entries at the header's indentation,
    each a line `starts` reads as (names, first text), described by the deeper lines after it;
    the index past the section."""
    section = indents[header]
    current: _Parts | None = None
    index = header + 2
    while index < len(lines):
        indent = indents[index]
        if indent < 0:
            index += 1
            continue
        stripped = lines[index].strip()
        if indent > section:
            if current is not None:
                current[1].append(stripped)
            index += 1
            continue
        if indent < section or _is_numpy_header(lines, indents, index):
            break
        started = (starts or _numpy_raises_entry)(stripped)
        if started is None:
            break  # prose at the section's indentation: the section is over
        current = (started[0], [started[1]], index)
        found.append(current)
        index += 1
    return index


def _numpy_raises_entry(stripped: str) -> tuple[str, str] | None:
    match = _NUMPY_ENTRY.fullmatch(stripped)
    return None if match is None else (match["types"], match["text"] or "")


def _numpy_parameter_entry(stripped: str) -> tuple[str, str] | None:
    # `x, y : int` documents both: the names stay together until the entries are made.
    match = _NUMPY_PARAMETER.fullmatch(stripped)
    return None if match is None else (match["names"], "")


def _is_numpy_header(lines: list[str], indents: list[int], index: int) -> bool:
    return (
        index + 1 < len(lines)
        and _UNDERLINE.fullmatch(lines[index + 1].strip()) is not None
        and indents[index + 1] == indents[index]
    )


def _field(lines: list[str], indents: list[int], start: int, found: list[_Parts]) -> int:
    match = _FIELD.fullmatch(lines[start].strip())
    if match is None:
        return start + 1
    end = _block(indents, start + 1, indents[start])
    text = [match["text"] or ""]
    text.extend(lines[index].strip() for index in range(start + 1, end) if indents[index] >= 0)
    found.append((match["types"], text, start))
    return end


def _next_is_deeper(indents: list[int], index: int) -> bool:
    for later in range(index + 1, len(indents)):
        if indents[later] >= 0:
            return indents[later] > indents[index]
    return False


def _clean_text(lines: list[str]) -> str:
    text = " ".join(line.strip() for line in lines if line.strip())
    return _ROLE.sub(_role_as_code, text)


def _role_as_code(match: re.Match[str]) -> str:
    """A role as Sphinx shows it, as a code span: `~a.b.C` shows `C`, `t <target>` shows `t`."""
    target = match["target"].strip()
    if target.endswith(">") and "<" in target:
        target = target[: target.rindex("<")].strip() or target
    elif target.startswith("~"):
        target = target[1:].rpartition(".")[2]
    target = target.lstrip("!")
    return f"`{target}`" if target else match[0]


_PARAMETERS_HEADER = re.compile(
    r"(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters)",
    re.IGNORECASE,
)
_PARAMETER = r"\*{0,2}(?P<name>[^\W\d]\w*)"
# A bulleted entry, its name in backticks: `` * `lr` (float): text ``.
_BULLETED = r"(?:[-*]\s+)?(?P<tick>`{0,2})"
# Google: `lr (float, optional): text`, `lr: text`, `**kwargs: text`.
_GOOGLE_PARAMETER = re.compile(
    rf"{_BULLETED}{_PARAMETER}(?P=tick)\s*(?:\([^)]*\))?\s*:(?:\s+(?P<text>.*)|$)"
)
# NumPy: `lr : float`, `lr`, `x, y : int`.
_NUMPY_PARAMETER = re.compile(
    r"(?P<names>\*{0,2}[^\W\d]\w*(?:\s*,\s*\*{0,2}[^\W\d]\w*)*)\s*(?::\s*.*)?"
)
# reST: `:param lr: text`, `:param float lr: text`, `:keyword lr: text`.
_PARAMETER_FIELD = re.compile(
    r":(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\*{0,2}(?P<name>[^\W\d]\w*)"
    r"\s*:(?:\s+(?P<text>.*)|$)",
    re.IGNORECASE,
)


def parameter_entries(docstring: str) -> tuple[ParameterEntry, ...]:
    """What a docstring's value says of each parameter, in line order; never raises. An
    entry without a description is dropped; a name documented twice keeps its first entry."""
    if not isinstance(docstring, str) or not docstring:
        return ()
    lines = docstring.split("\n")
    indents = _indents(lines)
    found: list[tuple[str, list[str], int]] = []
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        header = stripped.rstrip(":")
        if _PARAMETERS_HEADER.fullmatch(header) and stripped.endswith(":"):
            index = _google(lines, indents, index, found, _parameter_entry)
        elif _PARAMETERS_HEADER.fullmatch(header) and _is_numpy_header(lines, indents, index):
            index = _numpy(lines, indents, index, found, _numpy_parameter_entry)
        elif stripped.startswith(":"):
            match = _PARAMETER_FIELD.fullmatch(stripped)
            if match is None:
                index += 1
                continue
            end = _block(indents, index + 1, indents[index])
            written = [match["text"] or ""]
            written.extend(lines[i].strip() for i in range(index + 1, end) if indents[i] >= 0)
            found.append((match["name"], written, index))
            index = end
        else:
            index += 1
    entries: dict[str, ParameterEntry] = {}
    for names, text_lines, offset in found:
        text = _clean_text(text_lines)
        for name in (written.strip().lstrip("*") for written in names.split(",")):
            if text and name not in entries:
                entries[name] = ParameterEntry(name, text, offset)
    return tuple(sorted(entries.values(), key=lambda entry: entry.line_offset))


def _parameter_entry(stripped: str) -> tuple[str, str] | None:
    match = _GOOGLE_PARAMETER.fullmatch(stripped)
    return None if match is None else (match["name"], match["text"] or "")


# `input (Tensor): text`, `weight (Tensor, optional): text`; `x : Tensor or None`;
# `:type x: Tensor` and `:param Tensor x: text`.
_TYPED_LINES = (
    re.compile(rf"{_BULLETED}\*{{0,2}}(?P<name>[^\W\d]\w*)(?P=tick)\s*\((?P<types>[^)]*)\)\s*:.*"),
    re.compile(r"(?P<name>[^\W\d]\w*)\s+:\s+(?P<types>\S.*)"),
    re.compile(r":type\s+(?P<name>[^\W\d]\w*)\s*:\s*(?P<types>.+)"),
    re.compile(r":param\s+(?P<types>[^:]*\S)\s+\*{0,2}(?P<name>[^\W\d]\w*)\s*:.*"),
)
_NOT_TYPES = frozenset({"None", "True", "False", "Default", "Optional"})
BUILTIN_TYPES = frozenset({"str", "int", "float", "bool", "list", "dict", "tuple", "bytes"})
"""Built-in types a parameter may be documented as, by their own lowercase names."""
_CLASS_WORD = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*(?P<name>[A-Z]\w*)")


def parameter_types(docstring: str) -> dict[str, tuple[str, ...]]:
    """The class names each parameter's documented type reads (`input (Tensor): ...` gives
    `Tensor`; `x (int or torch.Tensor, optional)`, `Tensor`; `` :class:`~a.Grid` ``, `Grid`):
    CapWords words of the type, last dotted part, in order, else a built-in type that is the
    whole type (`n (int, optional)` gives `int`, `BUILTIN_TYPES`); the first line documenting
    a name wins. Never raises: a docstring that documents no types gives none."""
    if not isinstance(docstring, str):
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for line in docstring.split("\n"):
        stripped = line.strip()
        for pattern in _TYPED_LINES:
            match = pattern.fullmatch(stripped)
            if match is None:
                continue
            names = tuple(
                dict.fromkeys(
                    word["name"]
                    for word in _CLASS_WORD.finditer(match["types"].replace("~", ""))
                    if not word["name"].isupper() and word["name"] not in _NOT_TYPES
                )
            )
            if not names:
                # A built-in type alone (`n (int, optional)`, `:type path: str`).
                words = set(re.findall(r"\w+", match["types"])) - {"optional"}
                names = tuple(words & BUILTIN_TYPES) if len(words) == 1 else ()
            if names and match["name"] not in found:
                found[match["name"]] = names
            break
    return found
