"""What `errcat new` would write: a draft per distinct (exception, message), and why not elsewhere.

Every draft is checked by the same loader and validator that `errcat check` uses before it is
planned, so `new` never writes an entry the catalog would then reject. A site that cannot be
drafted is a finding at the raise saying why and what to do; the other sites are unaffected.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from catalog.authoring.scaffold import SCHEMA_FILE, Draft, catalog_path, file_text, plan_drafts
from catalog.core.config import Config
from catalog.core.exceptions import has_typed_class, is_builtin, site_exception
from catalog.core.findings import Finding, Severity
from catalog.core.model import Catalog, CatalogFile
from catalog.core.project import (
    defined_classes,
    generated_module,
    module_name,
    package_name,
)
from catalog.entries.loader import SCHEMA_PATH, load_bytes
from catalog.entries.validate import RESERVED_NAMES, validate
from catalog.matching.sites import Matcher, site_message
from extractor.imports import public_rank
from extractor.model import RaiseSite, ScanReport

_EXEMPT = "or mark the raise # errcat: ignore[reason]"


@dataclass(frozen=True)
class DraftPlan:
    """Drafts to write, the files they go to, and the sites left out."""

    drafts: tuple[Draft, ...]
    files: dict[Path, str]
    """Catalog file → its full new text (existing text with the drafts appended)."""
    skipped: tuple[Finding, ...]
    """One finding per raise site that could not be drafted, at the raise (and a warning at a
    `schema.json` of the catalog folder that is not errcat's, which is left as it is)."""
    schema: tuple[Path, str] | None = None
    """errcat's catalog-file schema and the path to write it to, beside the catalog files, when
    the file there is missing or an older errcat's; None when it is current."""


def _at(site: RaiseSite, root: Path, why: str, fix: str) -> Finding:
    return Finding(root / site.path, site.line, site.column, why, fix, stage="new")


def why_not_drafted(site: RaiseSite, root: Path) -> Finding | None:
    """Why `new` cannot draft a site, or None when it can (read by `check` too)."""
    if site.unresolved is not None:
        why, _, fix = site.unresolved.rpartition("; ")
        return _at(site, root, why, fix)
    shown = site.exception
    if shown is None:
        return _at(
            site,
            root,
            "raises the value of an expression; errcat cannot tell its class",
            f"raise a class by name, {_EXEMPT}",
        )
    exception = site_exception(site.qualified_name)
    if exception is None:
        return _at(
            site,
            root,
            f"cannot resolve {shown} to a class (a local name or an attribute of a value)",
            f"raise a class imported by name, {_EXEMPT}",
        )
    if not is_builtin(exception) and not exception.rpartition(".")[2].lstrip("_")[:1].isupper():
        return _at(
            site,
            root,
            f"raises what {exception} returns; errcat cannot tell its class",
            f"raise the class itself, {_EXEMPT}",
        )
    arguments = site.arguments or ()
    if (
        site.through is None
        and has_typed_class(exception)
        and (len(arguments) > 1 or site.keywords)
    ):
        return _at(
            site,
            root,
            f"passes more than a message to {exception}; its typed class takes only the "
            "message's parameters",
            f"raise it with one message argument, {_EXEMPT}",
        )
    if site_message(site) is None:
        return _at(
            site,
            root,
            f"the message of this {exception} cannot be read from the source",
            f"pass the message as one argument, {_EXEMPT}",
        )
    return None


def plan_new(config: Config, catalog: Catalog, report: ScanReport) -> DraftPlan:
    """The drafts for every uncatalogued site of `report`, one per (exception, message)."""
    matcher = Matcher(catalog, generated_module(config))
    groups: dict[tuple[str, str], str] = {}
    first_site: dict[tuple[str, str], RaiseSite] = {}
    skipped: list[Finding] = []
    for site in report.sites:
        if (
            site.reraise
            or site.ignored is not None
            or matcher.match(site) is not None
            or matcher.is_generated_class(site)
        ):
            continue
        problem = why_not_drafted(site, config.root)
        if problem is not None:
            skipped.append(problem)
            continue
        exception = site_exception(site.qualified_name)
        message = site_message(site)
        assert exception is not None and message is not None  # why_not_drafted ruled both out
        key = (exception, message.message)
        module = module_name(config, config.root / site.path)
        # A message raised in several modules is filed under its most public one, where the
        # users who meet it import from (ties: the first by path, as the scan orders them).
        if key not in groups or public_rank(module, site.function) < public_rank(
            groups[key], first_site[key].function
        ):
            groups[key] = module
            first_site[key] = site
    taken_names = {entry.name for entry in catalog}
    taken_names |= set(dir(builtins)) | RESERVED_NAMES | set(defined_classes(config, report))
    drafts = plan_drafts(
        ((module, exception, message) for (exception, message), module in groups.items()),
        package=package_name(config),
        taken_ids={entry.id for entry in catalog},
        taken_names=taken_names,
    )
    package = package_name(config)
    accepted: list[Draft] = []
    for draft in drafts:
        problems = _draft_problems(draft, catalog_path(config.catalog, package, draft.module))
        if problems:
            site = first_site[(draft.exception, draft.message)]
            skipped.append(
                _at(
                    site,
                    config.root,
                    f"its draft would not be a valid entry: {problems[0].message}",
                    f"write the entry by hand, {_EXEMPT}",
                )
            )
        else:
            accepted.append(draft)
    files = _compose_files(config, catalog, accepted, package, skipped)
    written = {d for d in accepted if catalog_path(config.catalog, package, d.module) in files}
    return DraftPlan(
        drafts=tuple(d for d in accepted if d in written),
        files=files,
        schema=_schema_update(config.catalog, files, skipped),
        skipped=tuple(sorted(skipped, key=lambda f: (str(f.path), f.line, f.column))),
    )


def _schema_id(text: str | None) -> object:
    try:
        document = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return document.get("$id") if isinstance(document, dict) else None


def _schema_update(
    folder: Path, planned: dict[Path, str], skipped: list[Finding]
) -> tuple[Path, str] | None:
    """errcat's catalog schema for `folder`, where every draft's modeline points editors.

    None when the file there is current (as in errcat's own checkout, where it is the packaged
    schema itself), when the folder will hold no catalog file (no folder is made for the schema
    alone), or when a `schema.json` that is not errcat's is there: that one is someone else's
    file, never overwritten, and a warning says so.
    """
    if not planned and not _catalog_files(folder):
        return None
    path = folder / SCHEMA_FILE
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    try:
        existing: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return path, text
    except (OSError, UnicodeDecodeError):
        existing = None
    if existing == text:
        return None
    # The same `$id` is errcat's schema of another version: bring it up to date.
    if existing is not None and _schema_id(existing) == _schema_id(text):
        return path, text
    skipped.append(
        Finding(
            path,
            1,
            1,
            f"{SCHEMA_FILE} is not errcat's catalog schema (its $id is not {_schema_id(text)}); "
            f"left as it is, so the catalog files' `$schema={SCHEMA_FILE}` modeline points "
            "editors at it",
            "rename it and run errcat new again to write errcat's schema there",
            severity=Severity.WARNING,
            stage="new",
        )
    )
    return None


def _catalog_files(folder: Path) -> list[Path]:
    """The YAML files of the catalog folder (none when it does not exist)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def _draft_problems(draft: Draft, path: Path) -> list[Finding]:
    """What the loader and the validator would say of the draft on its own."""
    loaded, problems = load_bytes(path, file_text(None, draft.module, [draft]).encode("utf-8"))
    if problems or loaded is None:
        return problems
    return validate(Catalog(files=(loaded,)))


def _compose_files(
    config: Config,
    catalog: Catalog,
    drafts: Sequence[Draft],
    package: str,
    skipped: list[Finding],
) -> dict[Path, str]:
    """Each catalog file's new text; a file that would not load is left out and reported."""
    by_file: dict[Path, list[Draft]] = {}
    for draft in drafts:
        by_file.setdefault(catalog_path(config.catalog, package, draft.module), []).append(draft)
    planned: dict[Path, str] = {}
    loaded_files: list[CatalogFile] = []
    for path, file_drafts in sorted(by_file.items()):
        existing = path.read_text(encoding="utf-8") if path.is_file() else None
        text = file_text(existing, file_drafts[0].module, file_drafts)
        loaded, problems = load_bytes(path, text.encode("utf-8"))
        if problems or loaded is None:
            # e.g. an existing file whose `errors:` list is not last, so appending breaks it
            skipped.extend(problems)
            continue
        planned[path] = text
        loaded_files.append(loaded)
    # The drafts were checked one by one; the whole catalog after writing must hold too.
    untouched = tuple(f for f in catalog.files if f.path not in planned)
    problems = validate(Catalog(files=(*untouched, *loaded_files)))
    for path in {problem.path for problem in problems} & set(planned):
        del planned[path]
    skipped.extend(p for p in problems if p.path in by_file)
    return planned
