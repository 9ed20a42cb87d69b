"""Where `[tool.errcat] generated` may point: the one rule every command that reads it applies.

codegen replaces the file at that path, so a path that names someone else's file (a YAML file, a
package's `__init__.py`) or a place outside the project would lose their work; `check` and
`build` derive the module's import name from it, which only exists inside the import root.
The path is therefore valid only when it is a `.py` file inside the project, importable beside
the package, that either does not exist yet or starts with the header codegen writes.
"""

from __future__ import annotations

import os
from pathlib import Path

from catalog.authoring.codegen import HEADER
from catalog.core.config import Config, ConfigError
from catalog.core.project import import_root

SETTING = "[tool.errcat] generated"


class GeneratedPathRefused(ConfigError):
    """`generated` names a path codegen must not write; nothing was written."""


def _shown(config: Config, path: Path) -> str:
    return os.path.relpath(path, config.root) if path.is_absolute() else str(path)


def _inside(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


def _first_line(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.readline(len(HEADER) + 2)


def written_by_errcat(path: Path) -> bool:
    """Whether the file at `path` starts with codegen's header (CRLF line ends accepted, as a
    checkout may convert them); False when it cannot be read."""
    try:
        line = _first_line(path)
    except OSError:
        return False
    return line.rstrip(b"\r\n") == HEADER.rstrip("\n").encode("utf-8")


def check_owned(config: Config, target: Path) -> None:
    """Refuse `target` (a file codegen is about to write) unless it is absent or errcat's own."""
    if not os.path.lexists(target):
        return
    where = f"{SETTING} names {_shown(config, config.generated)}"
    if target.is_symlink() or not target.is_file():
        kind = "a symbolic link" if target.is_symlink() else "not a regular file"
        raise GeneratedPathRefused(
            f"{where}: {target} is {kind}; codegen writes only its own files there; "
            "remove it or choose another path"
        )
    if not written_by_errcat(target):
        raise GeneratedPathRefused(
            f"{where}: {target} exists and was not written by errcat codegen (it lacks the "
            "generated header); codegen will not overwrite it: choose another path or remove it"
        )


def check_generated(config: Config) -> Path:
    """`config.generated`, once it is a path codegen may write; GeneratedPathRefused (a
    ConfigError: exit 2) naming the setting and the file otherwise.

    Called by codegen before it writes and by check and build before they derive the module's
    import name, so that a bad setting is one clear line rather than lost files or a traceback.
    """
    module = config.generated
    where = f"{SETTING} names {_shown(config, module)}"
    if module.suffix != ".py":
        raise GeneratedPathRefused(f"{where}: expected a path ending in .py")
    # Resolved, so that `..` and symbolic links cannot lead out of the project.
    real = Path(os.path.realpath(module))
    root = Path(os.path.realpath(config.root))
    if not _inside(real, root):
        raise GeneratedPathRefused(
            f"{where} ({real}), outside the project {root}; expected a .py path inside it"
        )
    imports_from = Path(os.path.realpath(import_root(config)))
    if not _inside(real, imports_from):
        raise GeneratedPathRefused(
            f"{where} ({real}), which cannot be imported beside the package: expected a path "
            f"under {imports_from}"
        )
    check_owned(config, module)
    return module
