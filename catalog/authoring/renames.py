"""Entries whose class was renamed: the entry's id kept, its `name` changed in the YAML.

The old name is read from the generated module on disk, which holds each class under the name
it had when codegen last wrote it, beside the entry's id (`id = "..."` in the written-out form,
the `_NAMES` and `_ROWS` tables in the compact one). That module is committed and is what the
package's raises import, so it names exactly the classes the package can still be using; the
raises themselves could not say which entry an unknown class name belonged to. `migrate`
consumes the record: it rewrites the raises and imports, then writes the module, so the old
names are gone from both at once. `codegen` alone would lose them while the package still
imports them, so it refuses to (see `catalog.cli.commands.codegen`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from catalog.core.exceptions import has_typed_class
from catalog.core.model import Catalog


@dataclass(frozen=True)
class Rename:
    """An entry's class under the name the module on disk gives it and the catalog's name."""

    entry_id: str
    old: str
    """The class name in the generated module on disk."""
    new: str
    """The entry's `name` in the catalog, the class codegen writes now."""


def names_on_disk(text: str) -> dict[str, str]:
    """Entry id → class name, as a generated module's text defines them; empty when the text
    does not parse (a file codegen did not write is reported by the codegen stage)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    tables: dict[str, list[str]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            entry_id = _class_id(statement)
            if entry_id is not None:
                found[entry_id] = statement.name
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in ("_NAMES", "_ROWS"):
                    tables[target.id] = _strings(statement.value)
    # The compact form: the n-th row starts with the id of the n-th name.
    for name, row in zip(tables.get("_NAMES", ()), tables.get("_ROWS", ()), strict=False):
        found[row[:16]] = name
    return found


def _class_id(statement: ast.ClassDef) -> str | None:
    for item in statement.body:
        if (
            isinstance(item, ast.Assign)
            and len(item.targets) == 1
            and isinstance(item.targets[0], ast.Name)
            and item.targets[0].id == "id"
            and isinstance(item.value, ast.Constant)
            and isinstance(item.value.value, str)
        ):
            return item.value.value
    return None


def _strings(value: ast.expr | None) -> list[str]:
    if not isinstance(value, ast.Tuple | ast.List):
        return []
    return [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def find_renames(catalog: Catalog, module: Path) -> list[Rename]:
    """Each entry with a generated class whose name differs from the one the module on disk
    gives its id, in catalog order; none when there is no module."""
    try:
        text = module.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    on_disk = names_on_disk(text)
    return [
        Rename(entry.id, on_disk[entry.id], entry.name)
        for entry in catalog
        if has_typed_class(entry.exception)
        and entry.id in on_disk
        and on_disk[entry.id] != entry.name
    ]


def mentions(text: str, names: Iterable[str]) -> bool:
    """Whether `text` holds any of `names` as a whole word (an import or a use of the class)."""
    words = "|".join(re.escape(name) for name in names)
    return bool(words) and re.search(rf"\b(?:{words})\b", text) is not None
