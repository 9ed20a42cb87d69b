"""Whether a project's `requires-python` admits Pythons the generated module cannot serve.

The generated typed-exception module runs on `OLDEST_PYTHON` (3.7) and later. A package that
declares `requires-python = ">=3.6"` would install on 3.6 and fail there, so `errcat codegen`
and `errcat check` refuse it: the range starts too low when any final release 2.7.0-2.7.99 or
3.0.0-3.6.99 satisfies it.

The range is read by `packaging.specifiers`, as pip reads it, so PEP 440 holds exactly (local
labels, pre-, post- and dev-releases included). What errcat adds is the wording: packaging says
only that a specifier is invalid, and the finding says which clause and why (`_clause_problem`).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from catalog.core.exceptions import OLDEST_PYTHON
from catalog.core.findings import Finding

_OLDER_SERIES = ((2, 7), *((3, minor) for minor in range(OLDEST_PYTHON[1])))
_NEWER_SERIES = tuple((3, minor) for minor in range(OLDEST_PYTHON[1], 40))
_MICROS = range(100)

_CLAUSE = re.compile(r"(?P<op>~=|===|==|!=|<=|>=|<|>)\s*(?P<version>\S*)")


def parse_version(text: str) -> Version | None:
    """The version `text` spells (any PEP 440 spelling), or None when it is not one."""
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _clause_problem(op: str, text: str) -> str:
    """Why `op text`, which packaging refused, is not a clause, in words a person can act on."""
    if op == "===":
        return "=== needs a version after it"
    wildcard = text.endswith(".*")
    version = parse_version(text[:-2] if wildcard else text)
    if version is None:
        return f"{text!r} is not a PEP 440 version" if text else f"{op} needs a version"
    if wildcard and op not in ("==", "!="):
        return f"a .* wildcard works only with == and !=, not {op}"
    if wildcard and (version.pre, version.post, version.dev, version.local) != (
        None,
        None,
        None,
        None,
    ):
        return f"{text!r}: a .* wildcard may follow only a release like 3.10"
    if version.local is not None and op not in ("==", "!="):
        return f"{text!r}: a local version (+...) works only with == and !="
    if op == "~=" and len(version.release) < 2:
        return f"~= needs at least two release numbers, got {text!r}"
    return f"{op}{text!r} is not a PEP 440 clause"


def parse_specifier(text: str) -> SpecifierSet:
    """The comma-separated PEP 440 specifier `text`; ValueError saying what is wrong.

    An empty specifier (or empty clauses) admits every version, as installers read it.
    """
    clauses: list[Specifier] = []
    for part in (part.strip() for part in text.split(",")):
        if not part:
            continue
        match = _CLAUSE.fullmatch(part)
        if match is None:
            raise ValueError(
                f"{part!r} is not an operator (>=, >, <=, <, ==, !=, ~=, ===) and a version"
            )
        try:
            clauses.append(Specifier(part))
        except InvalidSpecifier:
            raise ValueError(_clause_problem(match["op"], match["version"])) from None
    return SpecifierSet(clauses)


@cache
def _finals(series: tuple[tuple[int, int], ...]) -> tuple[tuple[Version, str], ...]:
    """Every final release of `series`, X.Y.0 to X.Y.99, parsed once per process."""
    return tuple(
        (Version(f"{major}.{minor}.{micro}"), f"{major}.{minor}" if micro == 0 else
         f"{major}.{minor}.{micro}")
        for major, minor in series
        for micro in _MICROS
    )  # fmt: skip


def _admitted(specifier: SpecifierSet, series: tuple[tuple[int, int], ...]) -> str | None:
    """The lowest final release in `series` the specifier admits, as written for people."""
    for version, shown in _finals(series):
        if specifier.contains(version):
            return shown
    return None


def oldest_admitted_below(text: str) -> str | None:
    """The oldest Python older than `OLDEST_PYTHON` that specifier `text` admits, or None.

    Raises ValueError, saying what is wrong, when `text` is not a valid specifier.
    """
    return _admitted(parse_specifier(text), _OLDER_SERIES)


def _oldest_text() -> str:
    return ".".join(str(part) for part in OLDEST_PYTHON)


def suggested_specifier(text: str) -> str:
    """`text` with its lower bound raised to `OLDEST_PYTHON`, keeping upper bounds that still fit.

    `>=3.6,<4` gives `>=3.7,<4`; exclusions and bounds below 3.7 are dropped, and when what is
    kept admits no Python at all the suggestion is plain `>=3.7`.
    """
    floor = f">={_oldest_text()}"
    kept = [floor]
    try:
        parse_specifier(text)
    except ValueError:
        return floor
    for part in (part.strip() for part in text.split(",")):
        match = _CLAUSE.fullmatch(part)
        if match is None or match["op"] not in ("<", "<=", "!="):
            continue
        version = parse_version(match["version"].removesuffix(".*"))
        if version is not None and version.release[:2] >= OLDEST_PYTHON:
            kept.append(f"{match['op']}{match['version']}")
    suggestion = ",".join(kept)
    if _admitted(parse_specifier(suggestion), _NEWER_SERIES) is None:
        return floor
    return suggestion


@dataclass(frozen=True)
class RequiresPython:
    """A project's `[project] requires-python` and where its value is written."""

    path: Path
    """The pyproject.toml."""
    text: str
    """The specifier as declared, e.g. `>=3.7`."""
    line: int
    """1-based line of the value."""
    column: int
    """1-based column of the value (its opening quote)."""
    toml_type: str = "string"
    """The TOML type of the value; anything but a string is a finding."""

    def finding(self) -> Finding | None:
        """The problem with the declared range for the generated module, or None when it fits."""
        oldest = _oldest_text()
        if self.toml_type != "string":
            return Finding(
                self.path,
                self.line,
                self.column,
                f"requires-python is a TOML {self.toml_type} ({self.text}), not a string",
                f'write it as a quoted specifier like ">={oldest}"',
                stage="codegen",
            )
        try:
            admitted = oldest_admitted_below(self.text)
        except ValueError as problem:
            return Finding(
                self.path,
                self.line,
                self.column,
                f'requires-python "{self.text}" is not a valid version specifier: {problem}',
                f'write it like ">={oldest}"',
                stage="codegen",
            )
        if admitted is None:
            return None
        return Finding(
            self.path,
            self.line,
            self.column,
            f'requires-python "{self.text}" admits Python {admitted}, older than {oldest}, '
            "the oldest the generated module supports",
            f'raise it to "{suggested_specifier(self.text)}"',
            stage="codegen",
        )


_TABLE = re.compile(r"\s*\[\s*(?P<name>[^\]\[]*?)\s*\]")
_KEY = re.compile(r"""\s*(?:requires-python|"requires-python"|'requires-python')\s*=\s*""")
_DOTTED_KEY = re.compile(
    r"""\s*(?:project|"project"|'project')\s*\.\s*"""
    r"""(?:requires-python|"requires-python"|'requires-python')\s*=\s*"""
)


def _value_position(source: str) -> tuple[int, int]:
    """Line and column of the requires-python value in the pyproject text (1, 1 if not found)."""
    table: str | None = ""
    for number, line in enumerate(source.splitlines(), start=1):
        if line.lstrip().startswith("[["):
            table = None
            continue
        header = _TABLE.match(line)
        if header is not None:
            table = header["name"].strip("\"'")
            continue
        key = _KEY.match(line) if table == "project" else None
        if key is None and table == "":
            key = _DOTTED_KEY.match(line)
        if key is not None:
            return number, key.end() + 1
    return 1, 1


def read_requires_python(pyproject: Path) -> RequiresPython | None:
    """`[project] requires-python` of `pyproject`, or None when the project declares none.

    Raises OSError or tomllib.TOMLDecodeError when the file cannot be read. A value that is not
    a string is kept as its Python repr with its TOML type, which `finding()` reports.
    """
    source = pyproject.read_text(encoding="utf-8")
    project = tomllib.loads(source).get("project")
    if not isinstance(project, dict) or "requires-python" not in project:
        return None
    value = project["requires-python"]
    line, column = _value_position(source)
    if isinstance(value, str):
        return RequiresPython(pyproject, value, line, column)
    return RequiresPython(pyproject, repr(value), line, column, _toml_type(value))


def _toml_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return "date or time"
