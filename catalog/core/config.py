"""Project configuration: `[tool.errcat]` in pyproject.toml.

Paths in the table are relative to the folder that holds pyproject.toml (the project root).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from extractor.scan import DEFAULT_MAX_FILE_SIZE

DEFAULT_PACKAGE = "runtime"
DEFAULT_CATALOG = "catalog/errors"
DEFAULT_GENERATED = "runtime/errors.py"
DEFAULT_INCLUDE = ("**/*.py",)


class ConfigError(Exception):
    """The configuration cannot be read or holds a value of the wrong kind."""


@dataclass(frozen=True)
class Config:
    """Where errcat looks for things, resolved against the project root."""

    root: Path
    """Absolute folder holding pyproject.toml (or the start folder when there is none)."""
    package: Path
    """Absolute folder scanned for raise sites."""
    catalog: Path
    """Absolute folder of the YAML catalog files."""
    generated: Path
    """Absolute path of the generated exceptions module."""
    include: tuple[str, ...] = DEFAULT_INCLUDE
    """Glob patterns, relative to `package`, of files to scan."""
    exclude: tuple[str, ...] = field(default_factory=tuple)
    """Glob patterns, relative to `package`, of files to skip."""
    has_pyproject: bool = False
    """Whether a pyproject.toml was found; without one errcat runs on defaults."""
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    """Bytes above which a file is reported as a scan failure and not parsed."""
    tests: tuple[Path, ...] = ()
    """Absolute folders and files of the package's own tests, read for "tested" knowledge."""


def find_root(start: Path) -> Path | None:
    """Return the nearest folder at or above `start` that holds a pyproject.toml."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    return None


def _string_list(
    table: dict[str, object],
    key: str,
    default: tuple[str, ...],
    where: Path,
    expected: str = "a list of glob strings",
) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: [tool.errcat] {key} has value {value!r}; expected {expected}")
    return tuple(value)


DEFAULT_TESTS = ("tests", "test")
"""Where a project's tests are looked for when `tests` is not set: the first that is a folder."""


def _tests(table: dict[str, object], base: Path, where: Path) -> tuple[Path, ...]:
    default = next((name for name in DEFAULT_TESTS if (base / name).is_dir()), None)
    expected = 'a list of folder or file paths (for example ["tests"])'
    given = _string_list(table, "tests", () if default is None else (default,), where, expected)
    # An empty string would name the whole project: every test_*.py under it, vendored ones too.
    if not all(given):
        raise ConfigError(
            f"{where}: [tool.errcat] tests has value {list(given)!r}; expected {expected}"
        )
    return tuple(base / item for item in given)


def _string(table: dict[str, object], key: str, default: str, where: Path) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise ConfigError(
            f"{where}: [tool.errcat] {key} has value {value!r}; expected a path string"
        )
    return value


def _positive_int(table: dict[str, object], key: str, default: int, where: Path) -> int:
    value = table.get(key, default)
    # TOML booleans are Python bools, which are ints: `max_file_size = true` is a mistake.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"{where}: [tool.errcat] {key} has value {value!r}; expected a whole number of "
            "bytes >= 1 (for example 2_000_000)"
        )
    return value


def load_config(start: Path | None = None) -> Config:
    """Read `[tool.errcat]` from the nearest pyproject.toml at or above `start`.

    Missing keys take the documented defaults; a missing file gives defaults relative to `start`.
    """
    start = (start or Path.cwd()).resolve()
    root = find_root(start)
    table: dict[str, object] = {}
    if root is not None:
        pyproject = root / "pyproject.toml"
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{pyproject}: cannot read the configuration: {exc}") from None
        tool = data.get("tool", {})
        raw = tool.get("errcat", {}) if isinstance(tool, dict) else {}
        if not isinstance(raw, dict):
            raise ConfigError(f"{pyproject}: [tool.errcat] must be a table")
        table = raw
    where = (root or start) / "pyproject.toml"
    base = root or start
    return Config(
        root=base,
        package=base / _string(table, "package", DEFAULT_PACKAGE, where),
        catalog=base / _string(table, "catalog", DEFAULT_CATALOG, where),
        generated=base / _string(table, "generated", DEFAULT_GENERATED, where),
        include=_string_list(table, "include", DEFAULT_INCLUDE, where),
        exclude=_string_list(table, "exclude", (), where),
        has_pyproject=root is not None,
        max_file_size=_positive_int(table, "max_file_size", DEFAULT_MAX_FILE_SIZE, where),
        tests=_tests(table, base, where),
    )


def _folder_problem(config: Config, key: str, fix: str) -> str | None:
    """What is wrong with the folder `[tool.errcat] <key>` names (`package`, `catalog`), with
    `fix`; None when it is a folder."""
    folder: Path = getattr(config, key)
    if folder.is_dir():
        return None
    head = f"the {key} {folder} is not a folder" if folder.exists() else f"no {key} folder {folder}"
    if not config.has_pyproject:
        return (
            f"{head} and no pyproject.toml in {config.root} or above it; run errcat in the "
            "project's folder, or errcat init there to configure it"
        )
    return f"{head}; set [tool.errcat] {key} in {config.root / 'pyproject.toml'} to {fix}"


def package_problem(config: Config) -> str | None:
    """What is wrong with the configured package folder, with the fix; None when it is a folder.

    Checked before a command that scans the package does anything, so that a wrong folder is
    one line on stderr instead of a traceback, and nothing (cache, site) is written for it.
    """
    return _folder_problem(config, "package", "the folder to scan, or run errcat init")


def catalog_problem(config: Config) -> str | None:
    """What is wrong with the configured catalog folder, with the fix; None when it is a folder."""
    return _folder_problem(config, "catalog", "the YAML files' folder, or run errcat new")


DEFAULT_SITE_URL = "http://127.0.0.1:8000/"


@dataclass(frozen=True)
class SiteSettings:
    """The two settings errcat reads from mkdocs.yml."""

    site_url: str
    """Base URL of the published site, ending in `/`."""
    repo_url: str | None
    """The repository's web address, for links to source lines; None when not set."""


def _tolerant_loader() -> type:
    """A safe loader that reads MkDocs' `!!python/name:` tags as plain strings instead of failing.

    Built on first use so that commands which never read mkdocs.yml do not import yaml.
    """
    import yaml

    class TolerantLoader(yaml.SafeLoader):
        pass

    def unknown_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> str:
        return suffix

    TolerantLoader.add_multi_constructor("tag:yaml.org,2002:python/", unknown_tag)
    TolerantLoader.add_multi_constructor("!", unknown_tag)
    return TolerantLoader


def read_site_settings(root: Path) -> SiteSettings:
    """`site_url` and `repo_url` from `root/mkdocs.yml`, with the documented defaults."""
    path = root / "mkdocs.yml"
    data: object = {}
    if path.is_file():
        import yaml

        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=_tolerant_loader())
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: cannot read the site settings: {exc}") from None
    table = data if isinstance(data, dict) else {}
    site_url = table.get("site_url") or DEFAULT_SITE_URL
    if not isinstance(site_url, str):
        raise ConfigError(f"{path}: site_url has value {site_url!r}; expected a URL string")
    repo_url = table.get("repo_url")
    if repo_url is not None and not isinstance(repo_url, str):
        raise ConfigError(f"{path}: repo_url has value {repo_url!r}; expected a URL string")
    return SiteSettings(
        site_url=site_url.rstrip("/") + "/", repo_url=repo_url.rstrip("/") if repo_url else None
    )
