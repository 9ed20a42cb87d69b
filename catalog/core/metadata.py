"""What the package says about itself: its name, its version and its repository.

Pages need these where the project's settings say nothing: the site's name when mkdocs.yml has
none, and, outside a git checkout, a link to the released source at the version's tag. They are
read from the project's `pyproject.toml` `[project]` table first, then from the package's own
source (a literal `__version__`), then from the installed distribution that provides the package
(its `METADATA`), so a copy of an installed package (no pyproject, no git) still links to the
repository its metadata names.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata as importlib_metadata
from pathlib import Path

from catalog.core.config import Config, ConfigError, normalise_name, url_label

DEFAULT_TAG_FORMAT = "v{version}"
"""How a version becomes its release tag unless `[tool.errcat] tag_format` says otherwise."""

_REPOSITORY_LABELS = ("repository", "source", "sourcecode", "code", "github", "gitlab")
"""`[project.urls]` labels (normalised as PEP 753 does) that name the repository, best first."""
_HOMEPAGE_LABELS = ("homepage", "home")
_FORGES = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org")
"""Hosts whose home-page URL is the repository itself."""
_VERSION_FILES = ("__init__.py", "version.py", "_version.py", "__about__.py")


@dataclass(frozen=True)
class ProjectMetadata:
    """The package's own account of itself; each field None when nothing says."""

    name: str | None
    """The distribution name (`[project] name`, else the installed distribution's)."""
    version: str | None
    """The version as released, e.g. `2.13.0+cpu`."""
    repository_url: str | None
    """The repository's web address without a trailing `/` or `.git`."""
    tag_format: str = DEFAULT_TAG_FORMAT

    @property
    def tag(self) -> str | None:
        """The release tag of `version` (its local part, `+cpu`, dropped: tags name releases)."""
        if self.version is None:
            return None
        return self.tag_format.format(version=self.version.split("+", 1)[0])


def repository_from_urls(urls: dict[str, str]) -> str | None:
    """The repository among a project's labelled URLs: a repository or source label, else a
    home page on a known forge; None when none is one."""
    by_label = {url_label(label): url for label, url in urls.items() if isinstance(url, str)}
    for label in _REPOSITORY_LABELS:
        if by_label.get(label):
            return _clean_url(by_label[label])
    for label in _HOMEPAGE_LABELS:
        url = by_label.get(label)
        if url and any(f"//{forge}/" in url or f"//www.{forge}/" in url for forge in _FORGES):
            return _clean_url(url)
    return None


def _clean_url(url: str) -> str:
    url = url.strip().rstrip("/")
    return url[: -len(".git")] if url.endswith(".git") else url


def literal_version(package: Path) -> str | None:
    """A `__version__ = "..."` string literal in the package's usual version files."""
    for name in _VERSION_FILES:
        path = package / name
        try:
            tree = ast.parse(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else None
            if isinstance(node, ast.AnnAssign):
                target = node.target
            value = getattr(node, "value", None)
            if (
                isinstance(target, ast.Name)
                and target.id == "__version__"
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                return value.value
    return None


@functools.lru_cache(maxsize=1)
def _distributions_by_package() -> Mapping[str, list[str]]:
    # Reading every installed distribution's top-level names costs tens of milliseconds; one
    # build asks once.
    return importlib_metadata.packages_distributions()


def _installed(import_name: str) -> importlib_metadata.PackageMetadata | None:
    for distribution in _distributions_by_package().get(import_name, []):
        try:
            return importlib_metadata.metadata(distribution)
        except importlib_metadata.PackageNotFoundError:
            continue
    return None


def _field(installed: importlib_metadata.PackageMetadata, key: str) -> str | None:
    values = installed.get_all(key) or []
    return str(values[0]) if values and values[0] else None


def _metadata_urls(installed: importlib_metadata.PackageMetadata) -> dict[str, str]:
    urls: dict[str, str] = {}
    for item in installed.get_all("Project-URL") or []:
        label, _, url = str(item).partition(",")
        urls.setdefault(label.strip(), url.strip())
    home = _field(installed, "Home-page")
    if home:
        urls.setdefault("Homepage", home)
    return urls


def _same_name(one: str, other: str | None) -> bool:
    # Distribution names compare as PEP 503 normalises them: `Gizmo_Dist` is `gizmo-dist`.
    return other is not None and normalise_name(one) == normalise_name(other)


def _table(data: dict[str, object], key: str) -> dict[str, object]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _text(data: dict[str, object], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def read_project_metadata(config: Config) -> ProjectMetadata:
    """The package's name, version and repository, from the project, its source, or its
    installed distribution, in that order."""
    data: dict[str, object] = {}
    # load_config has already reported an unreadable file.
    with contextlib.suppress(OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        if config.has_pyproject:
            data = tomllib.loads((config.root / "pyproject.toml").read_text(encoding="utf-8"))
    project = _table(data, "project")
    tool = _table(_table(data, "tool"), "errcat")
    name = _text(project, "name")
    version = _text(project, "version")
    urls = _table(project, "urls")
    repository = repository_from_urls({k: v for k, v in urls.items() if isinstance(v, str)})
    if version is None:
        version = literal_version(config.package)
    installed = _installed(config.package.name)
    installed_name = _field(installed, "Name") if installed is not None else None
    # A distribution of another name that provides the same import name is another project
    # (a fork, a rename): its repository and version would link to someone else's code.
    if installed is not None and (name is None or _same_name(name, installed_name)):
        name = name or installed_name
        repository = repository or repository_from_urls(_metadata_urls(installed))
        version = version or _field(installed, "Version")
    return ProjectMetadata(
        name=name, version=version, repository_url=repository, tag_format=_tag_format(config, tool)
    )


def _tag_format(config: Config, tool: dict[str, object]) -> str:
    value = tool.get("tag_format", DEFAULT_TAG_FORMAT)
    try:
        valid = isinstance(value, str) and "{version}" in value and bool(value.format(version="1"))
    except (KeyError, IndexError, ValueError):
        valid = False
    if not valid:
        raise ConfigError(
            f"{config.root / 'pyproject.toml'}: [tool.errcat] tag_format has value {value!r}; "
            'expected a string holding {version}, such as "v{version}" or "{version}"'
        )
    return str(value)
