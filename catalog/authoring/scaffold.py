"""`errcat new`: draft entries for raise sites the catalog does not know yet.

A draft has what the code says (exception, message, a class name and a fresh id) and leaves the
prose to its author. Drafts are appended to the YAML file of the module that raises them, so the
text and comments already there are kept as written.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from catalog.core.ids import new_id
from catalog.core.placeholders import literal_text, parse_placeholders

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_STOPWORDS = frozenset(
    {
        "a", "an", "the", "be", "is", "are", "was", "to", "of", "got", "found", "and", "or",
        "but", "with", "for", "as", "on", "in", "at", "by", "its", "it", "this", "that", "than",
        "must", "should", "can", "from", "into",
    }
)  # fmt: skip
"""Words a name can do without. Negations are not among them: `does not exist` named without
its `not` would say the opposite (`FieldNameDoesExistError`)."""
_CONTRACTION = re.compile(r"\b([A-Za-z]+)n['\u2019]t\b")
_IRREGULAR = {"ca": "cannot", "wo": "will not", "sha": "shall not"}


def _expanded(text: str) -> str:
    """Contractions spelt out (`can't` → `cannot`, `doesn't` → `does not`): the apostrophe
    would otherwise cut off a `t` that becomes a word of its own (`TAddTableError`)."""

    def spelt(match: re.Match[str]) -> str:
        stem = match.group(1)
        whole = _IRREGULAR.get(stem.lower())
        if whole is None:
            return f"{stem} not"
        return whole.capitalize() if stem[:1].isupper() else whole

    return _CONTRACTION.sub(spelt, text)


MAX_NAME_WORDS = 6
MAX_NAME_CHARS = 60
"""Longest class name `new` makes; the schema allows 100, people read far fewer."""
MAX_LONGER_CHARS = 80
"""Longest name when a word beyond the first `MAX_NAME_WORDS` tells two entries apart."""
SCHEMA_FILE = "schema.json"
"""The catalog-file JSON Schema's name in the catalog folder, which `new` keeps current there."""
SCHEMA_COMMENT = f"# yaml-language-server: $schema={SCHEMA_FILE}\n"
"""The modeline that points editors (the YAML language server) at `SCHEMA_FILE`, beside the file."""
_SUFFIXES = ("Error", "Exception", "Warning")


@dataclass(frozen=True)
class Draft:
    """A new entry to write."""

    id: str
    name: str
    exception: str
    message: str
    module: str
    """Dotted module whose sites raise it; selects the YAML file."""


def _short_exception(exception: str) -> str:
    """The class's own name without its kind: `pkg.errors.InvalidMarker` → `InvalidMarker`."""
    # A private class (`_StopIteration`) is named by its words: the underscore is no CapWord.
    short = exception.rpartition(".")[2].lstrip("_") or "Unnamed"
    for suffix in _SUFFIXES:
        if short.endswith(suffix) and short != suffix:
            return short.removesuffix(suffix)
    return short


def _capitalised(word: str) -> str:
    return word if word.isupper() else word[:1].upper() + word[1:]


def class_name(message: str, taken: set[str], exception: str = "ValueError") -> str:
    """A CapWords name from the message's words (placeholders by their names), unique in `taken`.

    A message with no word of its own (`{msg}`, or none at all) is named after its exception
    too, so the name says what it is (`ValueMsgError`, `BareNotImplementedError`). The name ends
    with the kind of its exception (`Error`, or `Warning` for warnings) and is at most
    `MAX_NAME_CHARS` long; `taken` holds every name it must not shadow and receives the result.
    """
    fields = parse_placeholders(message)
    # Each placeholder reads as its root's words; its conversion and spec are not words.
    text = " ".join(
        _expanded(literal) + (" " + name.split(".")[0] if name else "")
        for literal, name, _spec, _conversion in string.Formatter().parse(message)
    )
    literal_words = _named_words(literal_text(message))
    words: list[str] = []
    if not literal_words:
        words.append("Bare" if not fields else _short_exception(exception))
        if not fields:
            words.append(_short_exception(exception))
    # The exception's word does not count as seen: `{value}` of a ValueError is named
    # `ValueValueError`, not `ValueError`, which would shadow the built-in.
    words.extend(_distinct(_named_words(text)))
    suffix = "Warning" if exception.endswith("Warning") else "Error"
    words = words or ["Catalogued"]
    name = _joined(words[:MAX_NAME_WORDS], suffix)
    if name in taken and fields and literal_words:
        # The same words where one message has a value (`unknown parameter {name}`) and the
        # other the word itself (`unknown parameter name`): the message's own words tell them
        # apart before a number does.
        own = _distinct(_named_words(_expanded(literal_text(message))))
        if own and (literal := _joined(own[:MAX_NAME_WORDS], suffix)) not in taken:
            name = literal
    # Two messages that share their first words are told apart by the next word in which they
    # differ, as a reader would; a number is the last resort, for texts whose words are the
    # same (`q must be contiguous` and `q must be contiguous!`).
    for extra in words[MAX_NAME_WORDS:]:
        if name not in taken:
            break
        longer = _joined([*words[:MAX_NAME_WORDS], extra], suffix, limit=MAX_LONGER_CHARS)
        if longer not in taken:
            name = longer
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}{n}", n + 1
    taken.add(candidate)
    return candidate


def _distinct(words: list[str]) -> list[str]:
    """The words a name keeps: each once (case aside), stop words left out."""
    seen: set[str] = set()
    kept: list[str] = []
    for word in words:
        if word.lower() not in _STOPWORDS and word.lower() not in seen:
            seen.add(word.lower())
            kept.append(word)
    return kept


def _named_words(text: str) -> list[str]:
    """The words of `text` a name may use: single letters (`q`, a placeholder `{v}`, the `t` of
    a stray contraction) say nothing to a reader of the name and are left out."""
    return [word for word in _WORD.findall(text.replace("_", " ")) if len(word) > 1]


def _joined(words: list[str], suffix: str, limit: int = MAX_NAME_CHARS) -> str:
    """CapWords of `words` ending in `suffix`, whole words only, at most `limit` characters."""
    name = ""
    for word in words:
        if name and len(name) + len(word) + len(suffix) > limit:
            break
        name += _capitalised(word)
    name = name[: limit - len(suffix)]
    return name if name.endswith(suffix) else name + suffix


def yaml_string(text: str) -> str:
    """A double-quoted YAML scalar (JSON string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def entry_yaml(draft: Draft) -> str:
    """The draft as a block-sequence item under `errors:`."""
    return (
        # Quoted: an id of only decimal digits would otherwise load as an integer.
        f'  - id: "{draft.id}"\n'
        f"    name: {draft.name}\n"
        f"    exception: {draft.exception}\n"
        f"    status: draft\n"
        f"    message: {yaml_string(draft.message)}\n"
    )


def catalog_path(folder: Path, package_module: str, module: str) -> Path:
    """The YAML file for `module`: its dotted name below the package (`transport.host.yaml`)."""
    relative = module.removeprefix(package_module + ".") if module != package_module else "__init__"
    return folder / f"{relative}.yaml"


def plan_drafts(
    groups: Iterable[tuple[str, str, str]],
    *,
    package: str,
    taken_ids: set[str],
    taken_names: set[str],
) -> list[Draft]:
    """Drafts for `(module, exception, message)` groups, with fresh ids and class names."""
    drafts: list[Draft] = []
    for module, exception, message in groups:
        entry_id = new_id(package, exception, message, taken_ids)
        taken_ids.add(entry_id)
        name = class_name(message, taken_names, exception)
        drafts.append(Draft(entry_id, name, exception, message, module))
    return drafts


def file_text(existing: str | None, module: str, drafts: list[Draft]) -> str:
    """The new text of a catalog file: `existing` with the drafts appended, or a fresh file."""
    items = "".join(entry_yaml(d) for d in drafts)
    if existing is None or not existing.strip():
        return f"{SCHEMA_COMMENT}module: {module}\nerrors:\n{items}"
    text = existing if existing.endswith("\n") else existing + "\n"
    # `errors: []` cannot take block items; turn it into a block sequence first.
    text = re.sub(r"(?m)^errors:[ \t]*\[[ \t]*\][ \t]*$", "errors:", text)
    return text + items
