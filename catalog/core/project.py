"""The project errcat works on: its package, the import names Python sees, and its raise sites.

Every stage that needs to know the project (commands, `check`, `stats`, the site build) asks
this module, so import names are computed one way for src/ and flat layouts alike: a file's
module name is its path below the *import root*, the folder that holds the package's topmost
`__init__.py` chain (`src/` for `src/packaging/`, the project root for `runtime/`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from catalog.core.config import Config
from extractor.model import ScanReport

CACHE_FOLDER = ".errcat-cache"
"""The folder of every cache errcat keeps between runs, at the project root (git-ignored)."""
BUILD_FOLDER = "build"
"""Where `errcat build` stages and publishes, at the project root: `build/site` is the site."""

_caching: ContextVar[bool] = ContextVar("errcat_caching", default=True)


def cache_folder(config: Config) -> Path | None:
    """The project's cache folder, or None (nothing is cached) inside `caching(False)`.

    Every stage that keeps something between runs (the scan, the validated catalog, check's
    outcomes, the site build's pages, theme and API records) asks here, so that `--no-cache`
    is one switch for all of them, however deep in a command they sit.
    """
    return config.root / CACHE_FOLDER if _caching.get() else None


@contextlib.contextmanager
def caching(enabled: bool) -> Iterator[None]:
    """Within the block, unless `enabled`, `cache_folder` is None: nothing under
    `CACHE_FOLDER` is read or written (`--no-cache`). A context variable rather than a
    parameter threaded through every stage, down to the MkDocs plugin, which MkDocs itself
    calls; `enabled` never turns caches back on inside an outer block that turned them off."""
    token = _caching.set(_caching.get() and enabled)
    try:
        yield
    finally:
        _caching.reset(token)


def import_root(config: Config) -> Path:
    """The folder Python's import path must hold for the package to import by its name.

    The package's parents are climbed while they are packages themselves (hold `__init__.py`);
    a package without `__init__.py` (a namespace package) is imported from its parent.
    """
    folder = config.package.resolve()
    root = folder.parent
    while (root / "__init__.py").is_file() and root.parent != root:
        root = root.parent
    return root


def module_name(config: Config, path: Path) -> str:
    """The dotted module name of a package file as Python imports it.

    `runtime/errors.py` gives `runtime.errors`; `src/packaging/metadata.py` gives
    `packaging.metadata` (never `src.packaging.metadata`).
    """
    absolute = (path if path.is_absolute() else config.root / path).resolve()
    relative = absolute.relative_to(import_root(config)).with_suffix("")
    parts = list(relative.parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_name(config: Config) -> str:
    """The package's import name: the `<package>` part of new ids."""
    return module_name(config, config.package / "__init__.py")


def generated_module(config: Config) -> str:
    """The dotted name of the generated module, as raise sites import it."""
    return module_name(config, config.generated)


def scan_exclude(config: Config) -> tuple[str, ...]:
    """The configured `exclude` globs plus the generated module's path below the package: the
    module only defines classes, and its few raises (attribute lookup) are not the package's."""
    package = config.package.resolve()
    generated = config.generated.resolve()
    if generated.is_relative_to(package):
        return (*config.exclude, generated.relative_to(package).as_posix())
    return config.exclude


def scan_package(config: Config, *, cache: bool = True) -> ScanReport:
    """Scan the configured package, without the generated module (it only defines classes),
    each site read through the package's factories and classes (`extractor.printed`).

    Paths in the report are relative to the project root. The scan cache is used unless
    `cache` is False or this runs inside `caching(False)`.
    """
    from extractor import scan_paths
    from extractor.printed_cache import read_printed_cached

    cache_dir = cache_folder(config) if cache else None
    report = scan_paths(
        [config.package],
        include=config.include,
        exclude=scan_exclude(config),
        base=config.package,
        cache_dir=cache_dir,
        cwd=config.root,
        max_file_size=config.max_file_size,
    )
    # What users see where the package builds the text in a factory, a helper or a class:
    # every command reads the sites through the same step, so `new`, `check`, `migrate` and
    # the site agree on each site's exception and message.
    return read_printed_cached(report, cwd=config.root, cache_dir=cache_dir)


_CLASS_DEFINITION = re.compile(rb"^[ \t]*class[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def defined_classes(config: Config, report: ScanReport) -> dict[str, str]:
    """Every class name the scanned files define, with the first `path:line` defining it.

    A generated class must not take one of these names: `migrate` imports it into modules of
    the package, where it would shadow (or be shadowed by) the package's own class. A textual
    search is enough here and costs only the reads.
    """
    found: dict[str, str] = {}
    for result in report.results:
        if not result.ok:
            continue
        try:
            data = (config.root / result.path).read_bytes()
        except OSError:
            continue
        for match in _CLASS_DEFINITION.finditer(data):
            line = data.count(b"\n", 0, match.start()) + 1
            found.setdefault(match.group(1).decode(), f"{result.path}:{line}")
    return found
