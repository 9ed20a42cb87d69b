"""Project configuration: `[tool.errcat]` in pyproject.toml.

Paths in the table are relative to the folder that holds pyproject.toml (the project root).
No default names errcat's own checkout: without `package`, the package is found as `errcat
init` finds it (`find_package`), and `generated` defaults to the file init would name inside it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from catalog.core.errors import ErrcatError
from extractor.scan import DEFAULT_MAX_FILE_SIZE

DEFAULT_CATALOG = "catalog/errors"
GENERATED_NAME = "_errcat_errors.py"
"""File name of the generated module inside the package, when `generated` is not set: not
`errors.py`, which a package may well have of its own."""
DEFAULT_INCLUDE = ("**/*.py",)


class ConfigError(ErrcatError):
    """The configuration cannot be read or holds a value of the wrong kind (exit 2).

    Reported as `errcat: ...`, without the command: the configuration is every command's.
    """

    def report(self, command: str) -> str:
        return f"errcat: {self}"


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
    package_unfound: str | None = None
    """Why no package could be found when `package` is not set (then `package` names no
    folder); `package_problem` reports it before any command scans."""
    site_url: str | None = None
    """`[tool.errcat] site_url`, ending in `/`; None when not set."""
    documentation_url: str | None = None
    """The package's documentation URL from `[project.urls]` (a key such as `Documentation` or
    `docs`), ending in `/`; None when it names none."""
    generate: bool = True
    """False under `generated = false` (docs-only adoption): no module is generated and every
    entry is catalogued in place, raised as the package writes it; `generated` then names the
    default path, which nothing writes."""


_NOT_PACKAGES = frozenset({"tests", "test", "docs", "examples", "build", "dist", "venv", "src"})
"""Folders that hold a package's companions, not the package: never proposed as the package."""


def normalise_name(name: str) -> str:
    """A distribution name as an import name: lowercase, runs of `-`, `_` and `.` as one `_`."""
    return re.sub(r"[-_.]+", "_", name).lower()


def package_candidates(root: Path) -> list[Path]:
    """Top-level import packages (folders with `__init__.py`) directly under `root` or `src/`."""
    found: list[Path] = []
    for base in (root, root / "src"):
        if not base.is_dir():
            continue
        for child in sorted(base.iterdir(), key=lambda p: p.name):
            name = child.name
            if (
                name.startswith(".")
                or name in _NOT_PACKAGES
                # `my-tool/` cannot be imported whatever it holds.
                or not name.isidentifier()
                or not child.is_dir()
                or not (child / "__init__.py").is_file()
            ):
                continue
            found.append(child)
    return found


def find_package(root: Path, project_name: str | None) -> tuple[Path | None, list[Path]]:
    """The project's one package, or None when there is not exactly one (or several, one named
    after the project); and every candidate, for the caller to word why none was chosen.

    `errcat init` proposes what this finds, and `load_config` uses it when `package` is unset.
    """
    candidates = package_candidates(root)
    if len(candidates) == 1:
        return candidates[0], candidates
    if candidates and project_name is not None:
        wanted = normalise_name(project_name)
        matching = [c for c in candidates if c.name.lower() == wanted]
        if len(matching) == 1:
            return matching[0], candidates
    return None, candidates


_NO_PACKAGE = ".errcat-no-package"
"""What `package` names when none was found: no folder, so nothing is scanned by mistake."""


def _project_name(data: dict[str, object]) -> str | None:
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return name if isinstance(name, str) else None


def _unfound(
    root: Path, candidates: list[Path], project_name: str | None, where: Path | None
) -> str:
    """Why no package was chosen, and how to name one (`where`: the pyproject.toml, if any)."""
    if where is None:
        fix = (
            f"no pyproject.toml in {root} or above it; run errcat in the project's folder, or "
            "errcat init there to configure it"
        )
    else:
        fix = f"set [tool.errcat] package in {where} to the folder to scan, or run errcat init"
    if not candidates:
        sets = "" if where is None else " and [tool.errcat] sets none"
        return (
            f"no package found in {root} (a folder with __init__.py at the root or under "
            f"src/){sets}; {fix}"
        )
    listed = ", ".join(c.relative_to(root).as_posix() for c in candidates)
    named = f" and none is named after the project {project_name!r}" if project_name else ""
    return f"several packages found: {listed}{named}; {fix}"


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
    expected = 'a list of folder or file paths or glob patterns (for example ["tests"])'
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


def _site_url(table: dict[str, object], where: Path) -> str | None:
    value = table.get("site_url")
    if value is None:
        return None
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ConfigError(
            f"{where}: [tool.errcat] site_url has value {value!r}; expected the docs site's "
            'http(s) URL (for example "https://docs.example.org/")'
        )
    return value.rstrip("/") + "/"


_DOCUMENTATION_LABELS = frozenset({"documentation", "docs"})
"""`[project.urls]` labels that name the documentation, compared as PEP 753 normalises labels
(lowercase, punctuation and spaces removed)."""


def url_label(label: str) -> str:
    """A `[project.urls]` label as PEP 753 compares them: lowercase, without punctuation or
    spaces (`Source Code` is `sourcecode`)."""
    return re.sub(r"[^a-z0-9]", "", label.lower())


def _documentation_url(data: dict[str, object]) -> str | None:
    # The first documentation URL in the table's order; a value of another kind is the
    # packaging tools' to report, not errcat's.
    project = data.get("project")
    urls = project.get("urls") if isinstance(project, dict) else None
    if not isinstance(urls, dict):
        return None
    for label, value in urls.items():
        if url_label(str(label)) in _DOCUMENTATION_LABELS and isinstance(value, str) and value:
            return value.rstrip("/") + "/"
    return None


def load_config(start: Path | None = None) -> Config:
    """Read `[tool.errcat]` from the nearest pyproject.toml at or above `start`.

    Missing keys take the documented defaults; a missing file gives defaults relative to `start`.
    """
    start = (start or Path.cwd()).resolve()
    root = find_root(start)
    table: dict[str, object] = {}
    data: dict[str, object] = {}
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
    unfound = None
    if "package" in table:
        package = base / _string(table, "package", "", where)
    else:
        name = _project_name(data)
        found, candidates = find_package(base, name)
        if found is None:
            unfound = _unfound(base, candidates, name, where if root is not None else None)
            # A folder that is not there, never the root (which could hold a virtualenv):
            # every command that scans asks package_problem first, which reports `unfound`.
            package = base / _NO_PACKAGE
        else:
            package = found
    # `generated = false`: the package keeps its own raises (see Config.generate).
    generate = table.get("generated") is not False
    generated = (
        base / _string(table, "generated", "", where)
        if "generated" in table and generate
        else package / GENERATED_NAME
    )
    return Config(
        root=base,
        package=package,
        catalog=base / _string(table, "catalog", DEFAULT_CATALOG, where),
        generated=generated,
        include=_string_list(table, "include", DEFAULT_INCLUDE, where),
        exclude=_string_list(table, "exclude", (), where),
        has_pyproject=root is not None,
        max_file_size=_positive_int(table, "max_file_size", DEFAULT_MAX_FILE_SIZE, where),
        tests=_tests(table, base, where),
        package_unfound=unfound,
        site_url=_site_url(table, where),
        documentation_url=_documentation_url(data),
        generate=generate,
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
    if config.package_unfound is not None:
        return config.package_unfound
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


def _mkdocs_settings(root: Path) -> dict[str, object]:
    """The top-level table of `root/mkdocs.yml`; empty when there is none."""
    path = root / "mkdocs.yml"
    data: object = {}
    if path.is_file():
        import yaml

        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=_tolerant_loader())
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: cannot read the site settings: {exc}") from None
    return data if isinstance(data, dict) else {}


def _mkdocs_site_url(root: Path, table: dict[str, object]) -> str | None:
    site_url = table.get("site_url") or None
    if site_url is not None and not isinstance(site_url, str):
        path = root / "mkdocs.yml"
        raise ConfigError(f"{path}: site_url has value {site_url!r}; expected a URL string")
    return site_url


def docs_base_url(config: Config) -> str | None:
    """The base URL that generated code links its errors' pages under, ending in `/`: mkdocs.yml's
    `site_url`, else `[tool.errcat] site_url`, else the package's documentation URL in
    `[project.urls]`; None when none is set.

    Never a default: a link to a site nobody configured (errcat's own local server) would
    send every user of the package to a page that is not there. Site builds keep
    DEFAULT_SITE_URL for their own page links (see `read_site_settings`).
    """
    configured = _mkdocs_site_url(config.root, _mkdocs_settings(config.root))
    if configured is not None:
        return configured.rstrip("/") + "/"
    return config.site_url or config.documentation_url


def read_site_settings(root: Path, tool_site_url: str | None = None) -> SiteSettings:
    """`site_url` and `repo_url` from `root/mkdocs.yml`, with the documented defaults: a site
    URL mkdocs.yml lacks is `tool_site_url` (`[tool.errcat] site_url`), else DEFAULT_SITE_URL."""
    table = _mkdocs_settings(root)
    path = root / "mkdocs.yml"
    site_url = _mkdocs_site_url(root, table) or tool_site_url or DEFAULT_SITE_URL
    repo_url = table.get("repo_url")
    if repo_url is not None and not isinstance(repo_url, str):
        raise ConfigError(f"{path}: repo_url has value {repo_url!r}; expected a URL string")
    return SiteSettings(
        site_url=site_url.rstrip("/") + "/", repo_url=repo_url.rstrip("/") if repo_url else None
    )
