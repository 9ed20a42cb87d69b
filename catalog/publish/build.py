"""`errcat build`: compose the docs folder, build it with MkDocs into a fresh folder, write the
JSON API beside the pages, then switch the published folder to it in one step.

Layout under the project's `build/` folder (nothing is written into `site/`)::

    build/docs/            the project's docs_dir (MkDocs' `docs/` unless mkdocs.yml names
                           another; `site/docs` here) + generated pages (rebuilt every time)
    build/mkdocs.yml       the project's mkdocs.yml pointed at build/docs (no errcat plugin)
    build/site-<stamp>-<pid>.partial/   a build in progress (or the leftover of a killed one)
    build/site-<stamp>-<pid>/   one finished build (renamed from .partial once complete)
    build/site -> site-<stamp>-<pid>    a symlink, replaced with os.replace
    build/.errcat-build.lock    held (flock) by the one build composing and publishing

One build at a time composes, builds and publishes: the others wait for the lock (bounded) or
give up with BuildBusy. A failed or killed build leaves `build/site` pointing at the previous,
whole folder. The output
holds no clock time: dates are the commit's, and MkDocs' sitemap dates come from
SOURCE_DATE_EPOCH, set to the commit time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import yaml

from catalog.authoring.generated_path import check_generated
from catalog.core import lease, workers
from catalog.core.config import Config, read_site_settings
from catalog.core.errors import EXIT_USAGE, FindingsError
from catalog.core.findings import CatalogInvalid, Finding
from catalog.core.metadata import read_project_metadata
from catalog.core.project import BUILD_FOLDER, cache_folder
from catalog.engine.site_settings import merged_settings, own_site
from catalog.entries.validate import valid_project_catalog
from catalog.pages import THEME_FOLDER
from catalog.pages.blocks import FastPage
from catalog.pages.content import (
    HOME_PAGES,
    WHOLE_SITE,
    SiteContent,
    SiteInputs,
    clashes,
    gather,
    plugin_option,
    render,
    site_nav,
    site_section,
)
from catalog.pages.deploy import deployment_files
from catalog.publish.api_beside import ApiBeside, ApiWriteFailed

COMPOSED_DOCS = "docs"
COMPOSED_CONFIG = "mkdocs.yml"
DEFAULT_DOCS_DIR = "docs"
LOCK_NAME = ".errcat-build.lock"
PARTIAL = ".partial"
WAIT_SECONDS = 600.0
"""How long a build waits for another one to finish before it gives up."""
_POLL_SECONDS = 0.1


class BuildError(FindingsError):
    """The build could not run or MkDocs stopped; the published site is unchanged."""


class BuildBusy(BuildError):
    """Another build kept the lock for longer than this one would wait: not this tree's
    fault, an environment error."""

    exit_code: ClassVar[int] = EXIT_USAGE


class OutputRefused(BuildError):
    """The publish path holds something errcat did not make, or the project itself: publishing
    there would rename or replace it, so nothing was built (a usage error)."""

    exit_code: ClassVar[int] = EXIT_USAGE


@dataclass(frozen=True)
class BuildResult:
    """What a finished build published."""

    out: Path
    """The published path (a symlink)."""
    version: Path
    """The folder it points at."""
    pages: int
    """Generated Markdown pages."""
    api_files: int
    commit: str
    seconds: float


@dataclass(frozen=True)
class _Tagged:
    """A YAML value with a custom tag (`!!python/name:...`, `!ENV`), carried through unchanged."""

    tag: str
    value: Any


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


def _construct_tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> _Tagged:
    tag = node.tag
    if isinstance(node, yaml.ScalarNode):
        return _Tagged(tag, loader.construct_scalar(node))
    if isinstance(node, yaml.SequenceNode):
        return _Tagged(tag, loader.construct_sequence(node, deep=True))
    return _Tagged(tag, loader.construct_mapping(node, deep=True))  # type: ignore[arg-type]


def _represent_tagged(dumper: yaml.SafeDumper, value: _Tagged) -> yaml.Node:
    if isinstance(value.value, list):
        return dumper.represent_sequence(value.tag, value.value)
    if isinstance(value.value, dict):
        return dumper.represent_mapping(value.tag, value.value)
    return dumper.represent_scalar(value.tag, str(value.value))


_Loader.add_multi_constructor("!", _construct_tagged)
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", _construct_tagged)
_Dumper.add_representer(_Tagged, _represent_tagged)


MKDOCS_YAML_VALUES = 100_000
"""How many values mkdocs.yml may hold once its aliases are expanded. YAML shares an aliased
value, but MkDocs walks and prints each setting whole, so a file of nested aliases (a
"billion laughs") that parses in microseconds exhausts memory there; real files hold hundreds."""


def _expanded_size(node: yaml.Node | None, limit: int) -> int | None:
    """How many values `node` holds with every alias expanded, or None past `limit`. Each node
    is sized once (aliases are the same node object), so this costs the file's size, not its
    expansion's."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    # Children before parents, without recursion: nesting depth is the file's to choose.
    stack: list[tuple[yaml.Node, bool]] = [(node, False)] if node is not None else []
    while stack:
        current, children_done = stack.pop()
        if id(current) in sizes:
            continue
        if not children_done and id(current) in open_nodes:
            return None  # an alias inside its own anchor: no finite expansion
        if isinstance(current, yaml.ScalarNode):
            sizes[id(current)] = 1
            continue
        values = current.value
        children = (
            [v for pair in values for v in pair]
            if isinstance(current, yaml.MappingNode)
            else values
        )
        if not children_done:
            open_nodes.add(id(current))
            stack.append((current, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        total = 1 + sum(sizes.get(id(child), 0) for child in children)
        if total > limit:
            return None
        open_nodes.discard(id(current))
        sizes[id(current)] = total
    return sizes.get(id(node), 0) if node is not None else 0


def read_mkdocs_yaml(root: Path) -> dict[str, Any]:
    """The project's mkdocs.yml as data (custom tags kept), empty without one: errcat's
    settings (theme, extensions, search) are merged in by `composed_config`."""
    path = root / "mkdocs.yml"
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
        if _expanded_size(yaml.compose(text, Loader=_Loader), MKDOCS_YAML_VALUES) is None:
            raise BuildError(
                f"{path}: its aliases expand to more than {MKDOCS_YAML_VALUES:,} values; "
                "write those settings out without aliases nested in aliases"
            )
        data = yaml.load(text, Loader=_Loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BuildError(f"{path}: cannot read it: {exc}") from None
    if not isinstance(data, dict):
        raise BuildError(f"{path}: expected a mapping of settings")
    return data


def _without_errcat(plugins: object) -> object:
    """The plugin list minus errcat: the composed folder already holds its pages."""
    if isinstance(plugins, list):
        return [
            p for p in plugins if not (p == "errcat" or (isinstance(p, dict) and "errcat" in p))
        ]
    if isinstance(plugins, dict):
        return {k: v for k, v in plugins.items() if k != "errcat"}
    return plugins


def composed_config(
    root: Path,
    build_dir: Path,
    settings: dict[str, Any],
    handwritten: list[str],
    section: str = WHOLE_SITE,
    own: bool = False,
) -> dict[str, Any]:
    """mkdocs.yml for the composed folder, with the settings errcat's pages need merged in
    (`catalog.engine.site_settings`) unless the site is the project's own (`own`: its
    settings as they are; errcat's plugin gives errcat's pages what they need), and errcat's
    indexes in its nav (`site_nav`: a nav that names none of them gets them at the end, which
    is printed); relative paths are made relative to `build_dir`."""
    config = dict(settings) if own else merged_settings(settings)
    config["docs_dir"] = COMPOSED_DOCS
    config["site_dir"] = "composed-site"  # errcat build overrides it; for other engines' runs
    if "plugins" in config:
        config["plugins"] = _without_errcat(config["plugins"])
    theme = config.get("theme")
    if isinstance(theme, dict) and isinstance(theme.get("custom_dir"), str):
        theme = dict(theme)
        theme["custom_dir"] = os.path.relpath(root / theme["custom_dir"], build_dir)
        config["theme"] = theme
    elif not own and isinstance(theme, dict) and theme.get("name") == "material":
        # Other engines run on this file without errcat's plugin, which otherwise adds the
        # theme folder; a project's own custom_dir takes the one place there is for it.
        config["theme"] = {**theme, "custom_dir": str(THEME_FOLDER)}
    config["nav"], appended = site_nav(config.get("nav"), handwritten, section)
    if appended:
        print(
            "errcat build: the nav in mkdocs.yml names none of errcat's pages, so its Errors "
            "section is added at the end; put `- Errors: errors/` where it belongs",
            file=sys.stderr,
        )
    return config


MANIFEST = ".errcat-composed.json"
"""In the compose folder: the digest, size and mtime of each generated page last written."""


def _read_manifest(path: Path) -> dict[str, list[object]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_pages(pages: list[tuple[str, FastPage]]) -> list[tuple[int, int]]:
    """Write each page's Markdown to its file (never through what is there); the size and
    modification time each file then has."""
    out = []
    for name, page in pages:
        target = Path(name)
        target.unlink(missing_ok=True)
        target.write_text(page.markdown(), encoding="utf-8")
        stat = target.stat()
        out.append((stat.st_size, stat.st_mtime_ns))
    return out


def _sync_docs(docs: Path, docs_source: Path, content: SiteContent) -> list[str]:
    """Make `docs` hold the hand-written docs and the generated pages, and nothing else;
    return the hand-written Markdown pages (docs-relative, sorted).

    A generated page whose digest, size and mtime are those the manifest recorded is left as
    it is: on a large catalog most pages are unchanged, and rewriting them costs seconds.
    """
    if docs.is_symlink() or docs.is_file():
        docs.unlink()
    manifest_path = docs.parent / MANIFEST
    previous = _read_manifest(manifest_path) if docs.is_dir() else {}
    docs.mkdir(parents=True, exist_ok=True)
    wanted: set[str] = set()
    handwritten: list[str] = []
    if docs_source.is_dir():
        for folder, _, names in os.walk(docs_source, followlinks=True):
            for name in names:
                source = Path(folder) / name
                relative = source.relative_to(docs_source).as_posix()
                target = docs / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
                # Never written through: a link there would send the copy outside build/.
                target.unlink(missing_ok=True)
                shutil.copy2(source, target)
                wanted.add(relative)
                if name.endswith(".md"):
                    handwritten.append(relative)
    written: dict[str, list[object]] = {}
    stale: list[tuple[str, FastPage]] = []
    stale_relative: list[str] = []
    folders: set[Path] = set()
    for relative, page in content.fast.items():
        target = docs / relative
        digest = page.digest
        try:
            stat = target.lstat()
            current: list[object] = [digest, stat.st_size, stat.st_mtime_ns]
        except OSError:
            current = []
        if not current or previous.get(relative) != current:
            if target.parent not in folders:
                target.parent.mkdir(parents=True, exist_ok=True)
                folders.add(target.parent)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            stale.append((str(target), page))
            stale_relative.append(relative)
        written[relative] = current
        wanted.add(relative)
    # A cold build writes every page: their Markdown is expanded and written on every core.
    stats = workers.forked_map(_write_pages, stale) or _write_pages(stale)
    for relative, (_, page), (size, mtime) in zip(stale_relative, stale, stats, strict=True):
        written[relative] = [page.digest, size, mtime]
    for folder, dirs, names in os.walk(docs, topdown=False):
        here = Path(folder)
        for name in names:
            if (here / name).relative_to(docs).as_posix() not in wanted:
                (here / name).unlink()
        for name in dirs:
            path = here / name
            if path.is_symlink():
                path.unlink()
            elif not any(path.iterdir()):
                path.rmdir()
    temporary = manifest_path.with_name(f"{MANIFEST}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(written, separators=(",", ":")), encoding="utf-8")
    os.replace(temporary, manifest_path)
    return sorted(handwritten)


def compose(
    root: Path,
    build_dir: Path,
    docs_source: Path,
    content: SiteContent,
    settings: dict[str, Any],
    own: bool = False,
) -> Path:
    """Write `build_dir/docs` and `build_dir/mkdocs.yml` (`own`: `composed_config`); return
    the config file."""
    handwritten = _sync_docs(build_dir / COMPOSED_DOCS, docs_source, content)
    config_file = build_dir / COMPOSED_CONFIG
    text = yaml.dump(
        composed_config(root, build_dir, settings, handwritten, content.section, own),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
    )
    config_file.write_text(
        "# Written by errcat build for the composed docs folder; edit mkdocs.yml instead.\n" + text,
        encoding="utf-8",
    )
    return config_file


@contextlib.contextmanager
def _source_date(timestamp: int | None) -> Iterator[None]:
    """SOURCE_DATE_EPOCH for the duration of a build, so MkDocs dates the sitemap by commit."""
    old = os.environ.get("SOURCE_DATE_EPOCH")
    if timestamp is not None:
        os.environ["SOURCE_DATE_EPOCH"] = str(timestamp)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old


def run_mkdocs(
    config_file: Path,
    site_dir: Path,
    timestamp: int | None,
    render: tuple[Config, SiteContent] | None = None,
    own: bool = False,
) -> None:
    """Build `config_file` into `site_dir` with MkDocs; BuildError when MkDocs stops.

    With `render` (the project and what `render` made of it), errcat's MkDocs plugin takes part
    in the build for the generated pages only: the composed mkdocs.yml names no errcat plugin,
    so that other engines can read it, but errcat's own build renders those pages its way
    (`catalog.engine.fastpath`: cached, their search entries written rather than parsed),
    and on a site of the project's own (`own`) gives them the extensions they need.
    """
    from mkdocs import exceptions
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from catalog.engine.mkdocs_plugin import ErrcatPlugin

    warnings = _Warnings()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(warnings)
    try:
        with _source_date(timestamp):
            # Always strict: a site with broken links or other warnings is not published.
            mkdocs_config = load_config(
                config_file=str(config_file), site_dir=str(site_dir), strict=True
            )
            if render is not None:
                project, content = render
                plugin = ErrcatPlugin.for_composed_build(project, content, own)
                mkdocs_config.plugins["errcat"] = plugin
            build(mkdocs_config)
    except exceptions.MkDocsException as exc:
        # Strict mode ends with a count; the warnings themselves are what the author fixes.
        said = "".join(f"\n  {line}" for line in warnings.lines)
        raise BuildError(f"mkdocs stopped: {exc}{said}") from None
    finally:
        logger.removeHandler(warnings)


class _Warnings(logging.Handler):
    """The warnings MkDocs logs during one build, as `mkdocs build` prints them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # a message that cannot be formatted is skipped
            self.lines.append(f"{record.levelname:<8} {record.getMessage()}")


def _version_pattern(name: str) -> re.Pattern[str]:
    """Finished versions of `name` (group 2: a build still in progress or killed)."""
    return re.compile(rf"^{re.escape(name)}-\d{{8}}T\d{{6}}-(\d+)(?:-\d+)?({re.escape(PARTIAL)})?$")


def _temporary_link_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(name)}\.(\d+)\.tmp$")


def _api_staging_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(name)}\.(\d+)\.api$")


def _api_staging(out: Path) -> Path:
    """Where a build's API files are written while MkDocs runs (`ApiBeside`): beside `out`,
    named by the build's pid, so that `prune` knows a killed build's leftover."""
    return out.with_name(f".{out.name}.{os.getpid()}.api")


def _running_elsewhere(pid: int) -> bool:
    """Whether another process has this pid: its leftovers may be a build still in progress.

    This process's own pid counts as gone: it builds one version at a time, under the lock.
    """
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _lock_holder(fd: int) -> int | None:
    """The pid the lock's holder wrote into the lock file, once it has."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _take_lock(
    path: Path, deadline: float, wait: float, on_wait: Callable[[int | None], None] | None
) -> tuple[int, bool]:
    """An open descriptor holding `path`'s exclusive flock, and whether it had to wait.

    flock (not a pid file) so that a killed holder releases it with its last descriptor; the pid
    written into the file is only for the messages of those waiting.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    waited = announced = False
    blocked_at = time.monotonic()
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                pass
            holder = _lock_holder(fd)
            now = time.monotonic()
            if now >= deadline:
                who = f"the build started by pid {holder}" if holder else "another build"
                if wait <= 0:
                    raise BuildBusy(f"{who} holds the lock {path}; not waiting for it")
                raise BuildBusy(f"gave up after {wait:g} s waiting for {who} (lock: {path})")
            waited = True
            # The holder writes its pid just after taking the lock: give it a moment to.
            if not announced and on_wait and (holder or now - blocked_at >= 1.0):
                on_wait(holder)
                announced = True
            time.sleep(_POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd, waited


@contextlib.contextmanager
def build_lock(
    folders: list[Path],
    wait: float = WAIT_SECONDS,
    on_wait: Callable[[int | None], None] | None = None,
) -> Iterator[bool]:
    """Hold the build lock of each folder (the compose folder, the publish folder); yield
    whether this build had to wait for another.

    Locks are taken in a fixed (sorted) order so that two builds needing the same two folders
    cannot each hold one and wait for the other. Raises BuildBusy after `wait` seconds.

    The locks are this process's alone: their descriptors are closed in every child it forks
    meanwhile, so that a child outliving a killed build cannot keep them; and those children
    die with their parent where the system allows (`workers.tied_children`).
    """
    deadline = time.monotonic() + wait
    waited = False
    with contextlib.ExitStack() as held:
        for lock_file in sorted({folder.resolve() / LOCK_NAME for folder in folders}):
            fd, had_to_wait = _take_lock(lock_file, deadline, wait, on_wait)
            held.callback(os.close, fd)  # closing the descriptor releases the flock
            held.enter_context(workers.private_descriptor(fd))
            waited = waited or had_to_wait
        held.enter_context(workers.tied_children())
        yield waited


def _fresh_version(out: Path) -> Path:
    """A version folder name nobody uses (finished or in progress): never build into the
    published folder."""
    stem = f"{out.name}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    candidate, count = out.with_name(stem), 0

    def taken(path: Path) -> bool:
        partial = path.with_name(path.name + PARTIAL)
        return any(p.exists() or p.is_symlink() for p in (path, partial))

    while taken(candidate):
        count += 1
        candidate = out.with_name(f"{stem}-{count}")
    return candidate


def published_by_errcat(out: Path) -> bool:
    """Whether `out` is a link `switch` made: a symlink to a finished version folder beside it
    (`<name>-<stamp>-<pid>`, written as that bare name)."""
    try:
        target = os.readlink(out)
    except OSError:
        return False
    match = _version_pattern(out.name).match(target)
    return match is not None and match.group(2) is None


def _refuse_what_is_there(out: Path) -> None:
    """OutputRefused unless `out` is absent or errcat's own published link: anything else there
    (a folder, a file, someone's link) is someone's work, and switching would take its place."""
    if not os.path.lexists(out):
        return
    if out.is_symlink():
        if not published_by_errcat(out):
            raise OutputRefused(
                f"--out {out} is a symbolic link errcat did not make (to {os.readlink(out)}); "
                "errcat replaces only the links it published: remove it or choose another --out"
            )
        return
    if out.is_dir():
        try:
            empty = not any(out.iterdir())
        except OSError:
            empty = False
        if empty:
            raise OutputRefused(
                f"--out {out} is an existing (empty) folder; errcat publishes a symbolic link "
                "there and never replaces a folder: remove it (rmdir) or choose another --out"
            )
        raise OutputRefused(
            f"--out {out} is an existing folder errcat did not publish; it is left as it is: "
            "move it away or choose another --out (errcat publishes a symbolic link there)"
        )
    raise OutputRefused(
        f"--out {out} exists and is not a folder; remove it or choose another --out"
    )


def check_out(out: Path, root: Path, build_dir: Path) -> None:
    """OutputRefused when publishing at `out` (absolute) would rename or replace what errcat
    did not make: an existing folder, file or foreign link there, the project root or a folder
    holding it, or a place inside the compose folder's docs (rewritten by every build).

    Called before anything is written or locked, so that a refused build leaves no trace.
    """
    real = Path(os.path.realpath(out))
    project = Path(os.path.realpath(root))
    if project.is_relative_to(real):
        where = "the project root" if real == project else f"a folder holding the project {project}"
        raise OutputRefused(
            f"--out {out} is {where}; publishing there would move the project itself: "
            "choose a folder inside it, such as build/site"
        )
    docs = Path(os.path.realpath(build_dir / COMPOSED_DOCS))
    if real.is_relative_to(docs) or docs.is_relative_to(real):
        raise OutputRefused(
            f"--out {out} overlaps the compose folder {docs}, which every build rewrites: "
            "choose another --out"
        )
    _refuse_what_is_there(out)


def switch(out: Path, version: Path) -> Path | None:
    """Point `out` at `version` in one step; return the folder it pointed at before, if any.

    Only an absent `out` or errcat's own link is replaced (OutputRefused otherwise): checked
    again here, under the lock, as something may have been put there since `check_out`.
    """
    _refuse_what_is_there(out)
    previous: Path | None = None
    if out.is_symlink():
        previous = (out.parent / os.readlink(out)).resolve()
    link = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    link.unlink(missing_ok=True)
    link.symlink_to(version.name, target_is_directory=True)
    os.replace(link, out)
    return previous


def prune(out: Path, keep: set[Path]) -> None:
    """Retire older versions of `out` and leftovers of killed builds, sparing `keep`: they are
    moved to `trash_folder(out)` at once, and their files removed while the next build runs.

    Never retired: `keep` (the new and the previous version, which `errcat serve` may still be
    answering from until it next re-resolves the symlink), whatever `out` points at now, a
    version a server holds a lease on (`catalog.core.lease`: it may be several builds behind), and
    anything a build still running may own (a .partial folder or a temporary link whose pid is
    alive). Called under the build lock; it never raises, as the site is already published.
    """
    versions, links = _version_pattern(out.name), _temporary_link_pattern(out.name)
    stagings = _api_staging_pattern(out.name)
    kept = {path.resolve() for path in keep}
    with contextlib.suppress(OSError, RuntimeError):  # RuntimeError: a symlink loop
        if out.is_symlink():
            kept.add(out.resolve())
    try:
        candidates = list(out.parent.iterdir())
    except OSError:
        return
    for candidate in candidates:
        if match := links.match(candidate.name):
            if candidate.is_symlink() and not _running_elsewhere(int(match.group(1))):
                with contextlib.suppress(OSError):
                    candidate.unlink()
            continue
        if match := stagings.match(candidate.name):
            alive = _running_elsewhere(int(match.group(1)))
            if candidate.is_dir() and not candidate.is_symlink() and not alive:
                _discard(candidate, trash_folder(out))
            continue
        if candidate.name.startswith(".") and candidate.name.endswith(lease.SUFFIX):
            version = candidate.with_name(candidate.name[1 : -len(lease.SUFFIX)])
            if versions.match(version.name) and not version.exists():
                lease.forget(version)  # the lease of a version retired earlier
            continue
        match = versions.match(candidate.name)
        if not match or candidate.is_symlink() or not candidate.is_dir():
            continue
        if candidate.resolve() in kept:
            continue
        if match.group(2) and _running_elsewhere(int(match.group(1))):
            continue
        if lease.held(candidate):
            continue  # a server may still answer from it (`catalog.core.lease`)
        _discard(candidate, trash_folder(out))
        lease.forget(candidate)


def trash_folder(out: Path) -> Path:
    """Where `prune` moves the versions it retires: beside them, hidden, never served."""
    return out.with_name(f".{out.name}.trash")


def _discard(folder: Path, trash: Path) -> None:
    """Retire `folder` at once: a rename into `trash` (the same file system), its files removed
    later by `sweep` (a whole-torch site is 25,000 files: seconds of disk work that the next
    build does beside its own). Removed here if it cannot be moved."""
    try:
        trash.mkdir(exist_ok=True)
        folder.rename(trash / f"{folder.name}.{os.getpid()}.{time.monotonic_ns()}")
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)


_SWEEPER = (
    "import shutil, sys\nfor path in sys.argv[1:]:\n    shutil.rmtree(path, ignore_errors=True)\n"
)


def sweep(out: Path) -> subprocess.Popen[bytes] | None:
    """Remove what earlier builds moved to the trash (see `_discard`) in a process of its own,
    beside this build (a process, not a thread: the build forks workers, which must not
    inherit a thread in the middle of its work). The caller waits for it before it lets go
    of the build lock. None when the trash is empty or the process cannot start (the trash
    then waits for the next build)."""
    try:
        retired = [str(path) for path in trash_folder(out).iterdir()]
    except OSError:
        return None
    if not retired:
        return None
    try:
        return subprocess.Popen(
            [sys.executable, "-c", _SWEEPER, *retired],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


@dataclass(frozen=True)
class _Prepared:
    """What a build read from the tree: all of it checked before anything is written."""

    settings: dict[str, Any]
    docs_source: Path
    inputs: SiteInputs
    content: SiteContent
    own: bool
    """Whether the site is the project's own (`catalog.engine.site_settings.own_site`)."""


def _prepare(config: Config, site_url: str | None = None) -> _Prepared:
    """Validate the catalog and render the pages; CatalogInvalid with every finding.

    `site_url` (ending in `/`) replaces mkdocs.yml's for this build: in the pages, the JSON
    and the composed mkdocs.yml (canonical links, the sitemap)."""
    # The one way every command loads it: from the cache `check` and `stats` keep.
    catalog = valid_project_catalog(config)
    settings_file = read_mkdocs_yaml(config.root)
    site = read_site_settings(config.root, config.site_url)
    # `[tool.errcat] site_url` stands in for mkdocs.yml's, in the composed mkdocs.yml too
    # (canonical links, the sitemap), unless this build names its own.
    site_url = site_url or (None if settings_file.get("site_url") else config.site_url)
    if site_url is not None:
        settings_file = {**settings_file, "site_url": site_url}
        site = dataclasses.replace(site, site_url=site_url)
    metadata = read_project_metadata(config)
    # The package's own name before the folder's, which is often `src`, `project` or a clone's.
    site_name = str(settings_file.get("site_name") or metadata.name or config.root.name)
    settings_file = {**settings_file, "site_name": site_name}
    docs_source = config.root / str(settings_file.get("docs_dir", DEFAULT_DOCS_DIR))
    # Read as the plugin reads it, from its options in mkdocs.yml: both routes place the
    # overview alike. A ConfigError for a value errcat's fixed URLs cannot take.
    section = site_section(plugin_option(settings_file.get("plugins"), "section"), docs_source)
    inputs = gather(
        config,
        catalog,
        site_url=site.site_url,
        repo_url=site.repo_url,
        site_name=site_name,
        metadata=metadata,
        section=section,
    )
    content = render(inputs)
    hidden = clashes(docs_source, content)
    if hidden:
        raise CatalogInvalid(
            [
                Finding(
                    path,
                    1,
                    1,
                    "this hand-written page sits where errcat generates one",
                    "move its text to another file; generated pages come from the catalog"
                    + (
                        " (or set `section: errors/` under the errcat plugin in mkdocs.yml to "
                        "keep it as the home page)"
                        if path.name in HOME_PAGES and path.parent == docs_source
                        else ""
                    ),
                    stage="build",
                )
                for path in hidden
            ]
        )
    own = own_site(section, has_settings=(config.root / "mkdocs.yml").is_file())
    return _Prepared(settings_file, docs_source, inputs, content, own)


@contextlib.contextmanager
def _swept(out: Path) -> Iterator[None]:
    """The trash of earlier builds emptied while this one runs."""
    sweeper = sweep(out)
    try:
        yield
    finally:
        if sweeper is not None:
            sweeper.wait()


def build_site(
    config: Config,
    out: Path,
    build_dir: Path | None = None,
    *,
    wait: float = WAIT_SECONDS,
    on_wait: Callable[[int | None], None] | None = None,
    site_url: str | None = None,
    deploy: bool = False,
) -> BuildResult:
    """Validate, compose (in `build_dir`, default `<root>/build`), build and publish;
    `site_url` (ending in `/`) replaces mkdocs.yml's for this build; with `deploy`, the files
    static hosts and nginx read go into the site too (`catalog.pages.deploy`).

    One build at a time per compose folder and per publish folder: this one waits up to `wait`
    seconds for the others (calling `on_wait` with the holder's pid once, when it starts to).
    Raises OutputRefused or a ConfigError for `generated` (`catalog.authoring.generated_path`) before
    anything is written, CatalogInvalid (nothing written), BuildBusy (nothing written but the
    lock file) or BuildError (the published site untouched).
    """
    started = time.perf_counter()
    build_dir = build_dir or config.root / BUILD_FOLDER
    out = out if out.is_absolute() else Path.cwd() / out
    # Checked before anything is built or locked, so that a refused --out or `generated`
    # (a ConfigError) and an invalid catalog write nothing, not even build/.
    check_out(out, config.root, build_dir)
    check_generated(config)
    prepared = _prepare(config, site_url)
    build_dir.mkdir(parents=True, exist_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with build_lock([build_dir, out.parent], wait, on_wait) as waited, _swept(out):
        if waited:
            # The tree may have changed while another build ran: publish it as it is now, so
            # that the build that gets its turn last also publishes the newest tree.
            prepared = _prepare(config, site_url)
        # build/docs and build/mkdocs.yml are shared by every build of the checkout: they are
        # only rewritten and read under the lock.
        config_file = compose(
            config.root,
            build_dir,
            prepared.docs_source,
            prepared.content,
            prepared.settings,
            prepared.own,
        )
        version = _fresh_version(out)
        # Built under a .partial name and renamed once whole: a folder with a version's name is
        # always a complete site, and prune knows a leftover from a retired version.
        partial = version.with_name(version.name + PARTIAL)
        documents = prepared.content.api
        if deploy:
            # Written with the API, so that an unchanged one is linked like its files.
            documents = {**documents, **deployment_files(documents)}
        api_files = ApiBeside(
            partial,
            _api_staging(out),
            documents,
            previous=out,
            cache=cache_folder(config),
        )
        try:
            api_files.start()
            run_mkdocs(
                config_file,
                partial,
                prepared.inputs.repository.timestamp,
                (config, prepared.content),
                prepared.own,
            )
            try:
                api_files.finish()
            except ApiWriteFailed as exc:
                raise BuildError(f"the API files could not be written: {exc}") from None
            partial.rename(version)
        except BaseException:
            api_files.abandon()
            shutil.rmtree(partial, ignore_errors=True)
            raise
        try:
            previous = switch(out, version)
        except BaseException:
            # Never published, so never pruned either: a finished version nothing points at.
            with contextlib.suppress(OSError, RuntimeError):
                if not (out.is_symlink() and out.resolve() == version.resolve()):
                    shutil.rmtree(version, ignore_errors=True)
            raise
        prune(out, {version, *([previous] if previous else [])})
    return BuildResult(
        out=out,
        version=version,
        pages=len(prepared.content.pages),
        api_files=len(prepared.content.api),
        commit=prepared.inputs.repository.short_commit,
        seconds=time.perf_counter() - started,
    )
