"""`errcat init [--package PATH] [--dry-run]`: configure errcat in a project.

Writes a `[tool.errcat]` table for the detected package at the end of pyproject.toml and
git-ignores errcat's scan cache and build folder. The existing bytes of both files are kept.
"""

from __future__ import annotations

import argparse
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from catalog.core.config import GENERATED_NAME, find_package
from catalog.core.errors import EXIT_FINDINGS, ErrcatError

NAME = "init"
HELP = (
    "configure errcat in this project: write [tool.errcat] to pyproject.toml and git-ignore "
    "errcat's cache and build folders (writes unless --dry-run)"
)

CATALOG = "errors"
"""The catalog folder written for an adopting project, at its root.

Not `catalog/errors` as in errcat's own checkout: a `catalog/` folder in the adopting project
would be importable as a namespace package named `catalog`, the name of errcat's core package.
"""

IGNORED = (".errcat-cache/", "build/")
"""Folders errcat writes at the project root that do not belong in git."""


@dataclass(frozen=True)
class Plan:
    """What init would write, as text, relative to the project root."""

    package: str
    """The package folder, `/`-separated and relative to the root."""
    table: str
    """The `[tool.errcat]` table, with `\\n` line ends."""
    pyproject: str
    """The whole new pyproject.toml."""
    ignore_lines: tuple[str, ...]
    """The .gitignore lines that are missing (empty when every one is there)."""
    gitignore: str | None
    """The whole new .gitignore, or None when it needs no change."""


class InitError(ErrcatError):
    """init cannot go on; the text says why and what to do (exit 2)."""


class AlreadyConfigured(InitError):
    """The project has a `[tool.errcat]` already: not misuse, a finding about the project that
    init leaves to the person (exit 1)."""

    exit_code: ClassVar[int] = EXIT_FINDINGS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--package",
        metavar="PATH",
        help="the package folder to catalog (default: detected under the root or src/)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be written instead of writing"
    )


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def detect_package(root: Path, project_name: str | None) -> Path:
    """The one package of the project (`catalog.core.config.find_package`, which `load_config`
    also uses when `package` is unset), or InitError saying why there is none."""
    found, candidates = find_package(root, project_name)
    if found is not None:
        return found
    if not candidates:
        raise InitError(
            f"no package found in {root} (a folder with __init__.py at the root or under src/); "
            "pass the folder to scan: errcat init --package PATH"
        )
    listed = ", ".join(_relative(root, c) for c in candidates)
    named = f" and none is named after the project {project_name!r}" if project_name else ""
    raise InitError(
        f"several packages found: {listed}{named}; "
        "pass the one to catalog: errcat init --package PATH"
    )


def _given_package(root: Path, given: str) -> Path:
    path = (Path.cwd() / given).resolve()
    if not path.is_dir():
        raise InitError(f"--package {given}: no such folder")
    if not path.is_relative_to(root):
        raise InitError(f"--package {given}: {path} is outside the project root {root}")
    if path == root:
        raise InitError(f"--package {given}: that is the project root; name the package folder")
    return path


def toml_string(value: str) -> str:
    """`value` as a TOML basic string."""
    escaped = []
    for char in value:
        if char in '"\\':
            escaped.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04x}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def errcat_table(package: str) -> str:
    """The `[tool.errcat]` table for `package` (a root-relative, `/`-separated folder)."""
    return (
        "[tool.errcat]\n"
        f"package = {toml_string(package)}\n"
        f"catalog = {toml_string(CATALOG)}\n"
        f"generated = {toml_string(f'{package}/{GENERATED_NAME}')}\n"
        'include = ["**/*.py"]\n'
        "exclude = []\n"
    )


def _newline(text: str) -> str:
    # A file written with CRLF line ends keeps them in what is appended.
    return "\r\n" if "\r\n" in text else "\n"


def append_block(text: str, block: str, *, blank_line: bool) -> str:
    """`text` unchanged, then `block` (written with `\\n`) in the file's own line ends."""
    newline = _newline(text)
    out = text
    if out and not out.endswith(("\n", "\r")):
        out += newline
    if blank_line and out and not out.endswith(newline * 2):
        out += newline
    return out + block.replace("\n", newline)


def _ignore_key(line: str) -> str | None:
    """The folder a .gitignore line ignores at the root in the way errcat needs, or None."""
    line = line.strip()
    if not line or line.startswith(("#", "!")):
        return None
    for prefix in ("**/", "/"):
        line = line.removeprefix(prefix)
    for suffix in ("/**", "/*", "/"):
        line = line.removesuffix(suffix)
    return line or None


def missing_ignores(text: str) -> tuple[str, ...]:
    """The lines of `IGNORED` that no line of the .gitignore `text` already covers."""
    present = {_ignore_key(line) for line in text.splitlines()}
    return tuple(line for line in IGNORED if _ignore_key(line) not in present)


def _read(path: Path) -> str:
    try:
        # newline="" keeps CRLF as written, so that the file's bytes are kept exactly.
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InitError(f"cannot read {path}: {exc}") from None


def plan(root: Path, given_package: str | None) -> Plan:
    """Everything init would write for the project at `root`, checked, without writing."""
    pyproject_path = root / "pyproject.toml"
    text = _read(pyproject_path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InitError(f"{pyproject_path}: not valid TOML: {exc}") from None
    tool = data.get("tool")
    if isinstance(tool, dict) and "errcat" in tool:
        raise AlreadyConfigured(
            f"{pyproject_path}: errcat is already configured ([tool.errcat] exists); "
            "nothing written. Edit the table by hand to change it"
        )
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    package_path = (
        _given_package(root, given_package)
        if given_package is not None
        else detect_package(root, name if isinstance(name, str) else None)
    )
    package = _relative(root, package_path)
    table = errcat_table(package)
    new_text = append_block(text, table, blank_line=True)
    # Appending can still break the file, e.g. when `tool` is an inline table.
    try:
        written = tomllib.loads(new_text).get("tool", {}).get("errcat")
    except tomllib.TOMLDecodeError as exc:
        raise InitError(
            f"{pyproject_path}: appending [tool.errcat] would make the file invalid ({exc}); "
            f"nothing written. Add this table by hand:\n{table}"
        ) from None
    if written != tomllib.loads(table)["tool"]["errcat"]:
        raise InitError(
            f"{pyproject_path}: the appended [tool.errcat] would not read back as written; "
            f"nothing written. Add this table by hand:\n{table}"
        )
    gitignore_path = root / ".gitignore"
    ignore_text = _read(gitignore_path) if gitignore_path.exists() else ""
    missing = missing_ignores(ignore_text)
    gitignore = (
        append_block(ignore_text, "".join(f"{line}\n" for line in missing), blank_line=False)
        if missing
        else None
    )
    return Plan(
        package=package,
        table=table,
        pyproject=new_text,
        ignore_lines=missing,
        gitignore=gitignore,
    )


_NEXT_STEPS = (
    ("errcat new", "draft catalog entries for the package's raise sites"),
    ("errcat codegen", "generate the typed exceptions from the catalog"),
    ("errcat migrate", "rewrite raw raises into typed raises"),
    ("errcat check", "the drift gate: run it in CI"),
)


def _indented(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def run(args: argparse.Namespace) -> int:
    from catalog.authoring.codegen import write_all_atomically
    from catalog.core.config import find_root

    root = find_root(Path.cwd())
    if root is None:
        raise InitError(
            f"no pyproject.toml in {Path.cwd()} or any folder above it; "
            "run errcat init in the project's root (create a pyproject.toml first)"
        )
    planned = plan(root, args.package)
    ignores = "".join(f"    {line}\n" for line in planned.ignore_lines)
    if args.dry_run:
        print(f"errcat init: dry run; nothing written\nwould append to {root / 'pyproject.toml'}:")
        print(_indented(planned.table), end="")
        if planned.ignore_lines:
            print(f"would add to {root / '.gitignore'}:")
            print(ignores, end="")
        return 0
    files = {root / "pyproject.toml": planned.pyproject}
    if planned.gitignore is not None:
        files[root / ".gitignore"] = planned.gitignore
    write_all_atomically(files)
    print(f"errcat init: configured package {planned.package}")
    print(f"appended to {root / 'pyproject.toml'}:")
    print(_indented(planned.table), end="")
    if planned.ignore_lines:
        print(f"added to {root / '.gitignore'}:")
        print(ignores, end="")
    else:
        print(f"{root / '.gitignore'} already ignores {' and '.join(IGNORED)}")
    print("next steps:")
    width = max(len(command) for command, _ in _NEXT_STEPS)
    for command, what in _NEXT_STEPS:
        print(f"    {command:<{width}}  {what}")
    return 0
