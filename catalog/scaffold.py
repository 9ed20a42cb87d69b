"""`errcat new`: draft entries for raise sites the catalog does not know yet.

A draft has what the code says (exception, message, a class name and a fresh id) and leaves the
prose to its author. Drafts are appended to the YAML file of the module that raises them, so the
text and comments already there are kept as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from catalog.ids import new_id
from catalog.placeholders import parse_placeholders

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_STOPWORDS = frozenset(
    {
        "a", "an", "the", "be", "is", "are", "was", "to", "of", "got", "found", "and", "or",
        "but", "with", "for", "as", "on", "in", "at", "by", "its", "it", "this", "that", "than",
        "must", "should", "can", "cannot", "not", "no", "from", "into",
    }
)  # fmt: skip
MAX_NAME_WORDS = 6
SCHEMA_COMMENT = "# yaml-language-server: $schema=schema.json\n"


@dataclass(frozen=True)
class Draft:
    """A new entry to write."""

    id: str
    name: str
    exception: str
    message: str
    module: str
    """Dotted module whose sites raise it; selects the YAML file."""


def class_name(message: str, taken: set[str]) -> str:
    """A CapWords class name from the message's words (placeholders by their names), unique in `taken`."""
    text = message
    for placeholder in parse_placeholders(message):
        text = text.replace(
            "{" + placeholder.field, " " + placeholder.root.replace("_", " ") + " {", 1
        )
    seen: set[str] = set()
    words = []
    for word in _WORD.findall(text.replace("_", " ")):
        if word.lower() not in _STOPWORDS and word.lower() not in seen:
            seen.add(word.lower())
            words.append(word)
    picked = words[:MAX_NAME_WORDS] or ["Catalogued"]
    name = "".join(w if w.isupper() else w[:1].upper() + w[1:] for w in picked)
    if not name.endswith("Error"):
        name += "Error"
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}{n}", n + 1
    taken.add(candidate)
    return candidate


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
        drafts.append(Draft(entry_id, class_name(message, taken_names), exception, message, module))
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
