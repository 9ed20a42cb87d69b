"""How the project sorts its imports, read from its own linter settings, so that `migrate` adds
the generated module's import where the project's isort or ruff would put it.

Read, in this order (the first file that configures import sorting wins, as the tools do):
`ruff.toml`, `.ruff.toml`, pyproject.toml's `[tool.ruff]`, then pyproject.toml's `[tool.isort]`,
`.isort.cfg` and `setup.cfg`'s `[isort]`. Only what decides placement is read: the first-party
names, `force-single-line` and the line length. The package's own top-level name is always
first-party: it is what isort finds in the project folder.
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_LINE_LENGTH = 88
"""ruff's and black's default: the width where ruff is configured without one, or nothing is
(a longer import line is what their line-length rule and formatter would flag or rewrap)."""
ISORT_LINE_LENGTH = 79
"""isort's own default, where its settings give none (its `black` profile says 88)."""


@dataclass(frozen=True)
class ImportStyle:
    """What placing one `from <generated module> import <names>` statement depends on."""

    first_party: frozenset[str]
    """Top-level module names sorted into the first-party section."""
    force_single_line: bool = False
    """One name per `from` import statement (isort's and ruff's `force-single-line`)."""
    line_length: int = DEFAULT_LINE_LENGTH


def _toml(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _table(data: Mapping[str, object], *keys: str) -> dict[str, object]:
    for key in keys:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        data = value
    return dict(data)


def _names(value: object) -> frozenset[str]:
    if isinstance(value, str):
        value = [part.strip() for part in value.replace("\n", ",").split(",")]
    if not isinstance(value, list):
        return frozenset()
    return frozenset(str(item).split(".")[0] for item in value if str(item).strip())


def _ruff_style(ruff: Mapping[str, object], package: str) -> ImportStyle:
    # ruff reads `lint.isort` and, from older configurations, a top-level `isort` table.
    isort = _table(ruff, "lint", "isort") or _table(ruff, "isort")
    length = ruff.get("line-length")
    return ImportStyle(
        first_party=frozenset({package}) | _names(isort.get("known-first-party")),
        force_single_line=isort.get("force-single-line") is True,
        line_length=length if isinstance(length, int) and length > 0 else DEFAULT_LINE_LENGTH,
    )


def _isort_style(section: Mapping[str, object], package: str) -> ImportStyle:
    def flag(value: object) -> bool:
        return value is True or str(value).strip().lower() in {"true", "1", "yes"}

    length = section.get("line_length")
    if length is None:
        length = 88 if section.get("profile") == "black" else ISORT_LINE_LENGTH
    try:
        width = int(str(length))
    except ValueError:
        width = ISORT_LINE_LENGTH
    return ImportStyle(
        first_party=frozenset({package}) | _names(section.get("known_first_party")),
        force_single_line=flag(section.get("force_single_line")),
        line_length=width if width > 0 else DEFAULT_LINE_LENGTH,
    )


def _ini_section(path: Path, name: str) -> dict[str, object] | None:
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError, configparser.Error):
        return None
    return dict(parser[name]) if parser.has_section(name) else None


def read_import_style(root: Path, package: str) -> ImportStyle:
    """The import style of the project at `root` whose package imports as `package`."""
    for name in ("ruff.toml", ".ruff.toml"):
        if (root / name).is_file():
            return _ruff_style(_toml(root / name), package)
    pyproject = _toml(root / "pyproject.toml")
    ruff = _table(pyproject, "tool", "ruff")
    if ruff:
        return _ruff_style(ruff, package)
    isort = _table(pyproject, "tool", "isort")
    if isort:
        return _isort_style(isort, package)
    for name, section in ((".isort.cfg", "settings"), ("setup.cfg", "isort")):
        found = _ini_section(root / name, section)
        if found is not None:
            return _isort_style(found, package)
    return ImportStyle(first_party=frozenset({package}))
