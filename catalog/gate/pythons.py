"""Whether a project's `requires-python` admits Pythons the generated module cannot serve.

The generated typed-exception module runs on `OLDEST_PYTHON` (3.7) and later. A package that
declares `requires-python = ">=3.6"` would install on 3.6 and fail there, so `errcat codegen`
and `errcat check` refuse it. The declared range is read with a small PEP 440 specifier evaluator
(errcat does not depend on `packaging`): the range starts too low when any final release
2.7.0-2.7.99 or 3.0.0-3.6.99 satisfies every clause.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from catalog.core.exceptions import OLDEST_PYTHON
from catalog.core.findings import Finding

_OLDER_SERIES = ((2, 7), *((3, minor) for minor in range(OLDEST_PYTHON[1])))
_NEWER_SERIES = tuple((3, minor) for minor in range(OLDEST_PYTHON[1], 40))
_MICROS = range(100)

_VERSION = re.compile(
    r"""
    v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:-(?P<post_implicit>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n>[0-9]+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_CLAUSE = re.compile(r"(?P<op>~=|===|==|!=|<=|>=|<|>)\s*(?P<version>\S*)")
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}

_Key = tuple[object, ...]


@dataclass(frozen=True)
class Version:
    """A PEP 440 version, as far as comparing it needs."""

    epoch: int
    release: tuple[int, ...]
    pre: tuple[int, int] | None = None
    """(rank, number): a=0, b=1, rc=2."""
    post: int | None = None
    dev: int | None = None
    local: tuple[int | str, ...] = ()

    @property
    def is_prerelease(self) -> bool:
        """Whether it is a pre-release or a development release."""
        return self.pre is not None or self.dev is not None

    def base(self) -> Version:
        """Epoch and release only: `3.9.1rc1.post2` gives `3.9.1`."""
        return Version(self.epoch, self.release)

    def public(self) -> Version:
        """Without the local label."""
        return Version(self.epoch, self.release, self.pre, self.post, self.dev)

    def key(self) -> _Key:
        """The PEP 440 sort key: trailing zeros of the release do not count."""
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        # A dev release sorts before every pre-release of its version; a final after them all.
        if self.pre is not None:
            pre: tuple[int, int] = self.pre
        elif self.dev is not None and self.post is None:
            pre = (-1, 0)
        else:
            pre = (3, 0)
        post = -1 if self.post is None else self.post
        dev = (1, 0) if self.dev is None else (0, self.dev)
        # Numeric local segments sort above alphanumeric ones.
        local = tuple(
            (1, part, "") if isinstance(part, int) else (0, 0, part) for part in self.local
        )
        return (self.epoch, tuple(release), pre, post, dev, local)


def parse_version(text: str) -> Version | None:
    """The version `text` spells (any PEP 440 spelling), or None when it is not one."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    pre = None
    if match["pre_l"] is not None:
        pre = (_PRE_RANK[match["pre_l"].lower()], int(match["pre_n"] or 0))
    post = None
    if match["post_implicit"] is not None:
        post = int(match["post_implicit"])
    elif match["post_l"] is not None:
        post = int(match["post_n"] or 0)
    dev = None if match["dev_l"] is None else int(match["dev_n"] or 0)
    local: tuple[int | str, ...] = ()
    if match["local"] is not None:
        local = tuple(
            int(part) if part.isdigit() else part.lower()
            for part in re.split(r"[-_.]", match["local"])
        )
    return Version(
        epoch=int(match["epoch"] or 0),
        release=tuple(int(part) for part in match["release"].split(".")),
        pre=pre,
        post=post,
        dev=dev,
        local=local,
    )


def _release_prefix(candidate: Version, epoch: int, prefix: tuple[int, ...]) -> bool:
    padded = candidate.release + (0,) * max(0, len(prefix) - len(candidate.release))
    return candidate.epoch == epoch and padded[: len(prefix)] == prefix


Clause = Callable[[Version, str], bool]
"""A parsed clause: whether a candidate version (and its text, for `===`) satisfies it."""


def _clause(op: str, text: str) -> Clause:
    """The test for one `op version` clause; ValueError saying what is wrong with it."""
    if op == "===":
        if not text:
            raise ValueError("=== needs a version after it")
        return lambda _candidate, written: written.lower() == text.lower()
    wildcard = text.endswith(".*")
    version = parse_version(text[:-2] if wildcard else text)
    if version is None:
        raise ValueError(f"{text!r} is not a PEP 440 version" if text else f"{op} needs a version")
    if wildcard:
        if op not in ("==", "!="):
            raise ValueError(f"a .* wildcard works only with == and !=, not {op}")
        if (version.pre, version.post, version.dev, version.local) != (None, None, None, ()):
            raise ValueError(f"{text!r}: a .* wildcard may follow only a release like 3.10")
        epoch, prefix = version.epoch, version.release
        if op == "==":
            return lambda candidate, _written: _release_prefix(candidate, epoch, prefix)
        return lambda candidate, _written: not _release_prefix(candidate, epoch, prefix)
    if version.local and op not in ("==", "!="):
        raise ValueError(f"{text!r}: a local version (+...) works only with == and !=")
    key = version.key()
    if op in ("==", "!="):
        # A local label on the candidate counts only when the specifier names one.
        def equal(candidate: Version) -> bool:
            return (candidate if version.local else candidate.public()).key() == key

        if op == "==":
            return lambda candidate, _written: equal(candidate)
        return lambda candidate, _written: not equal(candidate)
    if op == "~=":
        if len(version.release) < 2:
            raise ValueError(f"~= needs at least two release numbers, got {text!r}")
        epoch, prefix = version.epoch, version.release[:-1]
        return lambda candidate, _written: (
            candidate.public().key() >= key and _release_prefix(candidate, epoch, prefix)
        )
    if op == "<=":
        return lambda candidate, _written: candidate.public().key() <= key
    if op == ">=":
        return lambda candidate, _written: candidate.public().key() >= key
    base = version.base().key()
    if op == "<":
        # `<3.9` does not admit 3.9rc1, unless the specifier is itself a pre-release.
        return lambda candidate, _written: (
            candidate.public().key() < key
            and not (
                not version.is_prerelease
                and candidate.is_prerelease
                and candidate.base().key() == base
            )
        )
    # `>3.9` does not admit 3.9.post1 (unless it names a post-release) nor 3.9+local.
    return lambda candidate, _written: (
        candidate.public().key() > key
        and not (
            version.post is None and candidate.post is not None and candidate.base().key() == base
        )
        and not (candidate.local and candidate.base().key() == base)
    )


def parse_specifier(text: str) -> list[Clause]:
    """The clauses of a comma-separated PEP 440 specifier; ValueError saying what is wrong.

    An empty specifier (or clause list) admits every version, as installers read it.
    """
    clauses: list[Clause] = []
    for part in (part.strip() for part in text.split(",")):
        if not part:
            continue
        match = _CLAUSE.fullmatch(part)
        if match is None:
            raise ValueError(
                f"{part!r} is not an operator (>=, >, <=, <, ==, !=, ~=, ===) and a version"
            )
        clauses.append(_clause(match["op"], match["version"]))
    return clauses


def _admitted(clauses: list[Clause], series: Iterable[tuple[int, int]]) -> str | None:
    """The lowest final release in `series` that every clause admits, as written for people."""
    for major, minor in series:
        for micro in _MICROS:
            candidate = Version(0, (major, minor, micro))
            written = f"{major}.{minor}.{micro}"
            if all(clause(candidate, written) for clause in clauses):
                return f"{major}.{minor}" if micro == 0 else written
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
