"""`errcat check`: the drift gate, in stages, every finding reported together.

Stages: the catalog parses and fits the schema and its entries agree with each other; the
generated module is current; every raise site of the package is catalogued, re-raised or exempted;
every live entry is raised somewhere; every exemption still sits on a raise. Drafts are warnings.

A whole-torch package (2,300 files, 15,000 raise sites, 11,000 entries) is checked in less
than one and a half times its scan. What would cost seconds there is done once and kept in the
project's `.errcat-cache/`, beside the scan's cache: the loaded and validated catalog, keyed by
its files' bytes (`catalog.entries.validate.checked_project_catalog`); the digests of the files codegen would
write, keyed by the catalog; each site's catalog message (`catalog.matching.sites.SiteMessages`); what
each package file holds for the exemption and class-name checks; and the last outcome of the
site, entry and exemption stages, keyed by everything they read. Files are read again only
when their stat changed (`catalog.entries.loader.stat_signature`), and only files whose bytes mention
`errcat` are tokenized for ignore comments.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import marshal
import os
import re
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from catalog.authoring.drafting import why_not_drafted
from catalog.authoring.renames import Rename, find_renames
from catalog.authoring.signature import call_problems, expected_call, mismatch_message
from catalog.core import project
from catalog.core.config import Config
from catalog.core.exceptions import has_typed_class, site_exception
from catalog.core.findings import Finding, Severity
from catalog.core.model import Catalog, Status
from catalog.core.placeholders import parameters
from catalog.entries.loader import FileDigests
from catalog.entries.validate import checked_project_catalog, draft_warnings
from catalog.matching.sites import Match, Matcher, SiteMessages, site_template
from extractor.model import RaiseSite, ScanReport

IGNORE_COMMENT = re.compile(r"#\s*errcat:\s*ignore\[([^\]]*)\]")
CODEGEN_CACHE = "codegen-digests.marshal"
"""The digests of the files codegen would write, inside the cache folder."""

Scanner = Callable[[Config], ScanReport]
"""Scans the configured package (the generated module excluded)."""

_CLASS_KEYWORD = re.compile(rb"class[ \t\f]+([A-Za-z_][A-Za-z0-9_]*)")
"""`class` and a name, with the blanks Python allows between them (a form feed too)."""


@dataclass
class CheckResult:
    """Everything `errcat check` found, and what it looked at."""

    findings: list[Finding] = field(default_factory=list)
    entries: int = 0
    sites: int = 0
    files: int = 0
    skipped: list[str] = field(default_factory=list)
    """Stages not run because an earlier one failed, with why."""

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity is Severity.WARNING for f in self.findings)


@contextlib.contextmanager
def paused_collector() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the block runs.

    A whole-torch check holds some 100,000 long-lived objects (sites, entries, findings) and
    makes almost no cyclic garbage; the collector's full passes over them came back again and
    again as they were built, up to a tenth of the run. Nothing is lost: the block's garbage
    is collected when the collector resumes.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def cache_folder(config: Config) -> Path | None:
    """The project's cache folder, which check and stats share with the scan; None under
    `--no-cache` (`catalog.core.project.caching`)."""
    return project.cache_folder(config)


def _ignore_comments(source: str) -> list[tuple[int, int, str]]:
    """`(line, column, reason)` of every errcat ignore comment in Python source."""
    import io
    import tokenize

    try:
        # Universal newlines, as Python reads source: a lone CR ends a line too.
        tokens = list(tokenize.generate_tokens(io.StringIO(source, newline=None).readline))
    except (SyntaxError, tokenize.TokenError):
        return []  # the scan stage reports files it cannot parse
    found = []
    for token in tokens:
        if token.type == tokenize.COMMENT:
            match = IGNORE_COMMENT.search(token.string)
            if match:
                found.append((token.start[0], token.start[1] + 1, match.group(1)))
    return found


SOURCE_FACTS_CACHE = "source-facts.marshal"
"""What each package file holds for the exemption and class-name checks, inside the cache."""


def _file_facts(data: bytes) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A file's ignore comments, flattened `(line, column, reason, ...)`, and the classes it
    defines, flattened `(name, line, ...)` (each name at its first definition).

    Only a file whose bytes mention `errcat` can hold an ignore comment, so only such a file is
    tokenized. Class definitions are found by searching for the keyword, far cheaper than a
    regular expression anchored at every line start, and lines are counted incrementally.
    """
    comments: list[Any] = []
    if b"errcat" in data:
        try:
            for found in _ignore_comments(data.decode("utf-8")):
                comments += found
        except UnicodeDecodeError:
            pass  # the scan stage reports files it cannot decode
    classes: list[Any] = []
    seen: set[str] = set()
    line, counted = 1, 0
    # Python ends a line at LF, CRLF or a lone CR (a form feed is a blank, not a line end).
    # Nearly every file is LF-only, so the CR work is done only for a file that has one.
    lone_cr = b"\r" in data
    for match in _CLASS_KEYWORD.finditer(data):
        start = match.start()
        line_start = data.rfind(b"\n", 0, start) + 1
        if lone_cr:
            line_start = data.rfind(b"\r", line_start, start) + 1 or line_start
        # Python's indentation is blanks, tabs and form feeds (`\f` may start a line).
        if data[line_start:start].strip(b" \t\f"):
            continue  # `class` inside a line, not a definition
        name = match.group(1).decode()
        if name in seen:
            continue
        seen.add(name)
        line += data.count(b"\n", counted, start)
        if lone_cr:
            # A CRLF is one line end, already counted at its LF. `counted` and `start` are
            # both the start of a `class` keyword, so no CRLF straddles either bound.
            line += data.count(b"\r", counted, start) - data.count(b"\r\n", counted, start)
        counted = start
        classes += (name, line)
    return tuple(comments), tuple(classes)


@dataclass
class _SourceFacts:
    """What the later stages read from the package's files themselves."""

    comments: dict[Path, list[tuple[int, int, str]]] = field(default_factory=dict)
    """Each file's errcat ignore comments (files without any are absent)."""
    classes: dict[str, str] = field(default_factory=dict)
    """Of the class names asked for, those the files define, with the first `path:line`."""


def _source_facts(
    files: Sequence[tuple[Path, str]], cache_dir: Path | None, wanted: set[str]
) -> _SourceFacts:
    """The ignore comments of each `(path, shown)` file and where the `wanted` classes are
    defined (`shown` is the path a class is reported at), in file order.

    With `cache_dir`, a file is read only when its stat signature differs from the run that
    stored its facts (see `catalog.entries.loader.stat_signature`): re-reading 2,300 unchanged files and
    searching them took a quarter of a whole-torch check.
    """
    from catalog.entries.loader import (
        read_cache,
        stat_signature,
        tool_fingerprint,
        write_cache,
    )

    key = tool_fingerprint().hex()
    cache = cache_dir / SOURCE_FACTS_CACHE if cache_dir is not None else None
    known = read_cache(cache, key) if cache is not None else None
    if not isinstance(known, dict):
        known = {}
    stored: dict[str, tuple[Any, ...]] = {}
    changed = False
    facts = _SourceFacts()
    for path, shown in files:
        name = os.fspath(path)
        stat = stat_signature(name)
        if stat is None:
            continue  # the scan stage reports files it cannot read
        signature, settled = stat
        record = known.get(name)
        if record is None or record[0] != signature:
            try:
                with open(name, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            record = (signature, *_file_facts(data))
            changed = True
        if settled:
            stored[name] = record
        else:
            changed = True
        comments: tuple[Any, ...] = record[1]
        classes: tuple[Any, ...] = record[2]
        if comments:
            facts.comments[path] = [
                (comments[i], comments[i + 1], comments[i + 2]) for i in range(0, len(comments), 3)
            ]
        for i in range(0, len(classes), 2):
            if classes[i] in wanted and classes[i] not in facts.classes:
                facts.classes[classes[i]] = f"{shown}:{classes[i + 1]}"
    if cache is not None and (changed or len(stored) != len(known)):
        write_cache(cache, key, stored)
    return facts


def requires_python_findings(config: Config) -> list[Finding]:
    """The declared `requires-python` admits no Python the generated module cannot serve (none
    to serve under `generated = false`)."""
    from catalog.gate.pythons import read_requires_python

    if not config.has_pyproject or not config.generate:
        return []
    declared = read_requires_python(config.root / "pyproject.toml")
    finding = declared.finding() if declared is not None else None
    return [] if finding is None else [replace(finding, stage="codegen")]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _starts_with(path: Path, text: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(len(text)) == text
    except OSError:
        return False


def _expected_digests(config: Config, catalog: Catalog, key: str | None) -> dict[Path, str | None]:
    """The digest of each file codegen would write (None: a file it would remove), from the
    cache when the catalog, the docs links' settings (mkdocs.yml, `[tool.errcat] site_url`,
    `[project.urls]`) and errcat are unchanged."""
    from catalog.authoring.codegen import generated_files, stub_path
    from catalog.core.config import docs_base_url
    from catalog.entries.loader import read_cache, write_cache

    targets = [config.generated, stub_path(config.generated)]
    cache_key = None
    if key is not None:
        mkdocs = config.root / "mkdocs.yml"
        try:
            site = mkdocs.read_bytes() if mkdocs.is_file() else b"-"
        except OSError:
            site = None
        if site is not None:
            paths = "\0".join(str(target) for target in targets)
            # The pyproject.toml settings come parsed with the configuration, so cost nothing.
            urls = f"{config.site_url}\0{config.documentation_url}"
            cache_key = hashlib.sha256(f"{key}\0{paths}\0{urls}\0".encode() + site).hexdigest()
    folder = cache_folder(config)
    cache = folder / CODEGEN_CACHE if folder is not None else None
    if cache is not None and cache_key is not None:
        cached = read_cache(cache, cache_key)
        if isinstance(cached, tuple) and len(cached) == len(targets):
            return dict(zip(targets, cached, strict=True))
    # codegen's own resolution: the module it writes is the one this compares against.
    files = generated_files(catalog, docs_base_url(config), config.generated)
    digests = {path: None if text is None else _digest(text) for path, text in files.items()}
    if cache is not None and cache_key is not None:
        write_cache(cache, cache_key, tuple(digests[target] for target in targets))
    return digests


ALIKE_CACHE = "codegen-alike.marshal"
"""Pairs (digest codegen would write, digest on disk) found to be the same code, formatted."""


def _formatted_alike(
    config: Config, catalog: Catalog, target: Path, expected: str, current: str | None
) -> bool:
    """Whether `target` is codegen's file as the project's formatter left it (same code,
    other wrapping): generated again to compare, which only a differing file pays for, once
    per pair of digests (a project that formats the module would pay at every check)."""
    from catalog.authoring.codegen import generated_files, same_module
    from catalog.core.config import docs_base_url
    from catalog.entries.loader import read_cache, write_cache

    if current is None:
        return False
    pair = f"{expected}\0{current}"
    folder = cache_folder(config)
    cache = folder / ALIKE_CACHE if folder is not None else None
    known = read_cache(cache, "alike") if cache is not None else None
    known = known if isinstance(known, list) else []
    if pair in known:
        return True
    text = generated_files(catalog, docs_base_url(config), config.generated).get(target)
    try:
        alike = text is not None and same_module(target.read_text(encoding="utf-8"), text)
    except (OSError, UnicodeDecodeError):
        return False
    if alike and cache is not None:
        # The newest few pairs: one per generated file and formatter is what a project has.
        write_cache(cache, "alike", [*known[-7:], pair])
    return alike


def check_codegen_stage(
    config: Config,
    catalog: Catalog,
    key: str | None = None,
    digests: FileDigests | None = None,
) -> list[Finding]:
    """Stage 2: every file codegen writes equals what it would write now, and the package
    declares no Python the module cannot serve.

    `key` is the catalog's `catalog_key`: with it, what codegen would write is known from the
    cache, by digest, without generating it. `digests` spares reading generated files that
    are unchanged since an earlier run.
    """
    from catalog.authoring.codegen import HEADER

    if not config.generate:
        return []  # `generated = false`: no module to keep current
    digests = digests or FileDigests(None)
    findings = requires_python_findings(config)
    for target, expected in _expected_digests(config, catalog, key).items():
        what = "the generated module" if target == config.generated else "the generated stub"
        exists = target.is_file()
        current = digests.digest(target, text=True) if exists else None
        if expected is None:
            if exists and _starts_with(target, HEADER):
                message = (
                    f"{what} is left from an earlier, larger catalog; the module no longer "
                    "has a stub"
                )
                findings.append(
                    Finding(target, 1, 1, message, "run: errcat codegen", stage="codegen")
                )
            continue
        if current == expected or (
            exists and _formatted_alike(config, catalog, target, expected, current)
        ):
            continue
        state = "is stale: it differs from what the catalog generates" if exists else "is missing"
        findings.append(
            Finding(target, 1, 1, f"{what} {state}", "run: errcat codegen", stage="codegen")
        )
    return findings


def message_shape(message: str) -> str | None:
    """A catalog message with its placeholders' names left out (`{} must be on {!r}`), or None
    when it has no literal text to be recognised by (`{key}` says nothing about its raise)."""
    try:
        parsed = list(string.Formatter().parse(message))
    except ValueError:
        return None
    pieces = []
    worded = False
    for text, name, spec, conversion in parsed:
        pieces.append(text.replace("{", "{{").replace("}", "}}"))
        worded = worded or bool(text.strip())
        if name is not None:
            conversion = f"!{conversion}" if conversion else ""
            pieces.append("{" + conversion + (f":{spec}" if spec else "") + "}")
    return "".join(pieces) if worded else None


class _Shapes:
    """Entries of built-ins by exception and message shape, for exempted raises: an exemption
    hides a raise the catalog covers even where the raise names its values differently from
    the entry (the typed class takes them by the entry's names)."""

    def __init__(self, catalog: Catalog, matcher: Matcher) -> None:
        self._catalog = catalog
        self._matcher = matcher
        self._entries: dict[tuple[str, str], Match] | None = None

    def match(self, site: RaiseSite) -> Match | None:
        exception = site_exception(site.qualified_name)
        template = site_template(site)
        if exception is None or template is None:
            return None
        message = self._matcher.messages.message(exception, template)
        shape = None if message is None else message_shape(message)
        if shape is None:
            return None
        if self._entries is None:
            self._entries = {}
            for entry in self._catalog:
                # An entry catalogued in place is matched by its exact message only: a raise
                # worded like it but naming its values differently is not one of its raises.
                if not has_typed_class(entry.exception):
                    continue
                found = message_shape(entry.message)
                if found is not None:
                    self._entries.setdefault((entry.exception, found), Match(entry, typed=False))
        return self._entries.get((exception, shape))


def _exemption_finding(
    path: Path, site: RaiseSite, match: Match | None, exact: bool
) -> Finding | None:
    """What is wrong with the exemption on a site, if anything: a blank reason, or an ignore
    that hides a raise the catalog covers (an exemption is for raises it cannot cover)."""
    reason = site.ignored
    assert reason is not None
    if match is None:
        if reason.strip():
            return None
        message = "exemption without a reason"
        fix = "say why the raise is not catalogued: # errcat: ignore[<reason>]"
    else:
        entry = match.entry
        if entry.status is Status.RETIRED:
            message = (
                f"exemption [{reason}] hides a raise of retired entry {entry.id} ({entry.name})"
            )
            fix = (
                "remove the comment and raise its replacement, or set the entry's status back "
                "to active"
            )
        elif match.needs_migration:
            message = (
                f"exemption [{reason}] hides a raise the catalog covers: {entry.exception} with "
                f"the message of entry {entry.id}"
            )
            fix = f"remove the comment and raise the typed {entry.name} instead"
            if exact:
                fix += " (run: errcat migrate)"
        else:
            message = f"exemption [{reason}] on a catalogued raise of {entry.name} is not needed"
            fix = "remove the errcat: ignore comment"
    return Finding(path, site.line, site.column, message, fix, stage="exemptions")


def _sites_findings(
    config: Config,
    catalog: Catalog,
    report: ScanReport,
    matcher: Matcher,
    paths: dict[str, Path],
    facts: _SourceFacts,
    renames: Sequence[Rename] = (),
) -> list[Finding]:
    findings: list[Finding] = []
    renamed = {rename.old: rename for rename in renames}
    raised: set[str] = set()
    exempted_lines: set[tuple[Path, int]] = set()
    migrations: dict[str, str] = {}  # each entry's "raise the typed class" message, made once
    signatures: dict[str, tuple[str, ...]] = {}  # each typed entry's parameters
    shapes = _Shapes(catalog, matcher)
    for result in report.results:
        path = paths.get(result.path) or config.root / result.path
        if result.failure is not None:
            failure = result.failure
            findings.append(
                Finding(
                    path,
                    failure.line,
                    failure.column,
                    f"cannot scan: {failure.message}",
                    "fix the file so Python can parse it",
                    stage="sites",
                )
            )
            continue
        for site in result.sites:
            if site.ignored is not None:
                # The comment may sit on any line of the statement (a formatter moves it to the
                # closing parenthesis): each of them is the exemption's.
                exempted_lines.update((path, line) for line in range(site.line, site.end_line + 1))
            if site.reraise:
                if site.ignored is not None:
                    findings.append(
                        Finding(
                            path,
                            site.line,
                            site.column,
                            f"exemption [{site.ignored}] on a re-raise is not needed: check "
                            "never reports re-raises",
                            "remove the errcat: ignore comment",
                            stage="exemptions",
                        )
                    )
                continue
            match = matcher.match(site)
            if site.ignored is not None:
                exact = match is not None
                if match is None:
                    match = shapes.match(site)
                if match is not None:
                    raised.add(match.entry.id)  # found, so not also "raised nowhere"
                problem = _exemption_finding(path, site, match, exact)
                if problem is not None:
                    findings.append(problem)
                continue
            message: str
            fix: str
            if match is not None:
                entry = match.entry
                raised.add(entry.id)
                if entry.status is Status.RETIRED:
                    message = f"raises retired entry {entry.id} ({entry.name})"
                    fix = "raise its replacement, or set the entry's status back to active"
                elif match.needs_migration and not config.generate:
                    continue  # `generated = false`: a raise as written is the entry's own
                elif match.needs_migration and site.via is not None:
                    message = (
                        f"raises {entry.exception}, built into {site.via}, with the message of "
                        f"entry {entry.id}; raise the typed {entry.name} instead"
                    )
                    fix = f"run: errcat migrate (it rewrites the call assigned to {site.via})"
                elif match.needs_migration:
                    message = migrations.get(entry.id) or migrations.setdefault(
                        entry.id,
                        f"raises {entry.exception} with the message of entry {entry.id}; "
                        f"raise the typed {entry.name} instead",
                    )
                    fix = "run: errcat migrate"
                elif match.typed:
                    expected = signatures.get(entry.id)
                    if expected is None:
                        expected = signatures[entry.id] = parameters(entry.message)
                    problems = call_problems(site, expected)
                    if not problems:
                        continue
                    message = mismatch_message(entry.name, problems, site.via)
                    fix = "expected " + expected_call(entry.name, expected)
                else:
                    continue
            elif matcher.is_generated_class(site) and (
                rename := renamed.get((site.qualified_name or "").rsplit(".", 1)[-1])
            ):
                raised.add(rename.entry_id)  # raised, by its old name
                message = (
                    f"raises {rename.old}, the old name of {rename.new} (entry {rename.entry_id})"
                )
                fix = "run: errcat migrate"
            elif matcher.is_generated_class(site):
                message = f"raises {site.qualified_name}, which is not in the catalog"
                fix = "restore its entry, or raise a catalogued class"
            else:
                shown = site_exception(site.qualified_name) or site.exception or "an expression"
                undraftable = None if config.generate else why_not_drafted(site, config.root)
                if undraftable is not None:
                    # Docs-only: what new cannot draft needs an entry by hand or an ignore
                    # comment in the source the adopter chose not to touch; so it is reported,
                    # and the gate stays green until they choose.
                    findings.append(
                        replace(
                            undraftable,
                            message=f"uncatalogued raise of {shown}: {undraftable.message}",
                            fix=f"write its entry by hand, or {undraftable.fix}",
                            severity=Severity.WARNING,
                            stage="sites",
                        )
                    )
                    continue
                message = f"uncatalogued raise of {shown}"
                fix = "run: errcat new, then errcat migrate; or mark it # errcat: ignore[reason]"
            findings.append(Finding(path, site.line, site.column, message, fix, stage="sites"))
    for entry in catalog:
        if entry.name in facts.classes and config.generate:
            # migrate imports the generated class into the package's modules by this name.
            findings.append(
                Finding.at(
                    entry.where("name"),
                    f"name {entry.name} is also a class of the package "
                    f"({Path(facts.classes[entry.name]).name}); the two would shadow each other",
                    "rename the entry and its raises",
                    stage="entries",
                )
            )
        if entry.status is not Status.RETIRED and entry.id not in raised:
            findings.append(
                Finding.at(
                    entry.position,
                    f"entry {entry.id} ({entry.name}) is raised nowhere in {config.package.name}",
                    "raise it, or set status: retired with a retired_reason",
                    stage="entries",
                )
            )
    for path, comments in facts.comments.items():
        for line, column, reason in comments:
            if (path, line) in exempted_lines:
                continue
            # A comment on any line of a raise exempts it (`RaiseSite.ignored`), so one left
            # here stands on no raise.
            message = f"exemption [{reason}] matches no raise site"
            fix = "remove the comment, or move it onto the raise line"
            findings.append(Finding(path, line, column, message, fix, stage="exemptions"))
    return findings


SITES_CACHE = "sites-outcome.marshal"
"""The last outcome of stages 3 to 5, with the key of everything it was computed from."""


def _outcome_key(
    config: Config,
    report: ScanReport,
    generated_module: str,
    key: str,
    facts: _SourceFacts,
    renames: Sequence[Rename] = (),
) -> str:
    """A digest of everything stages 3 to 5 read: the catalog (its `catalog_key`), the project's
    root, package and generated module (and whether there is one), every site's and failure's
    fields that matching reads, and the files' ignore comments and class definitions."""
    rows = [
        (
            result.path,
            None if result.failure is None else str(result.failure),
            [
                (
                    site.line,
                    site.column,
                    site.exception,
                    site.qualified_name,
                    site.template,
                    site.reraise,
                    site.ignored,
                    site.arguments,
                    site.keywords,
                    site.via,
                    site.end_line,
                )
                for site in result.sites
            ],
        )
        for result in report.results
    ]
    comments = [(str(path), found) for path, found in facts.comments.items()]
    digest = hashlib.blake2b(digest_size=20)
    digest.update(
        f"{key}\0{config.root}\0{config.package.name}\0{generated_module}\0{config.generate}\0".encode()
    )
    # Version 2 writes no back-references, so equal data always gives equal bytes.
    moved = [(r.entry_id, r.old, r.new) for r in renames]
    digest.update(marshal.dumps((rows, comments, facts.classes, moved), 2))
    return digest.hexdigest()


def check_sites_stage(
    config: Config,
    catalog: Catalog,
    report: ScanReport,
    generated_module: str,
    matcher: Matcher | None = None,
    cache_dir: Path | None = None,
    key: str | None = None,
    renames: Sequence[Rename] = (),
) -> list[Finding]:
    """Stages 3 to 5: sites against entries, entries against sites, exemptions against sites.

    Paths in `report` are relative to the project root (or absolute). `matcher` defaults to
    one over the site messages cached in `cache_dir` (see `catalog.matching.sites.SiteMessages`). With
    `cache_dir`, what each file holds for the exemption and class-name checks is kept there
    (see `_source_facts`), and with `key`, the catalog's `catalog_key`, so is the outcome: a
    run whose catalog, sites and files all equal the last run's gets the last run's findings
    without matching a site again. A raise of a class under the old name of one of
    `renames` is reported as such (`run: errcat migrate`) and counts as its entry's raise.
    """
    # One Path per file, shared by its findings: 15,000 sites would otherwise build as many.
    paths = {r.path: config.root / r.path for r in report.results if r.failure is None}
    typed = {entry.name for entry in catalog if has_typed_class(entry.exception)}
    facts = _source_facts([(path, name) for name, path in paths.items()], cache_dir, typed)
    outcome = None
    if cache_dir is not None and key is not None:
        from catalog.entries.loader import read_cache, write_cache

        outcome = _outcome_key(config, report, generated_module, key, facts, renames)
        cached = read_cache(cache_dir / SITES_CACHE, outcome)
        if isinstance(cached, tuple):
            known = {str(path): path for path in paths.values()}
            return [
                Finding(
                    known.get(shown) or known.setdefault(shown, Path(shown)),
                    line,
                    column,
                    message,
                    fix,
                    stage=stage,
                )
                for shown, line, column, message, fix, stage in cached
            ]
    messages = None
    if matcher is None:
        messages = SiteMessages.load(cache_dir) if cache_dir is not None else SiteMessages()
        matcher = Matcher(catalog, generated_module, messages)
    findings = _sites_findings(config, catalog, report, matcher, paths, facts, renames)
    if messages is not None and cache_dir is not None:
        messages.save(cache_dir)
    if outcome is not None and cache_dir is not None:
        stored = tuple((str(f.path), f.line, f.column, f.message, f.fix, f.stage) for f in findings)
        write_cache(cache_dir / SITES_CACHE, outcome, stored)
    return findings


RENAMES_FIX = "run: errcat migrate (it renames the raises and imports, then writes the module)"


def rename_findings(
    catalog: Catalog, stale: list[Finding], renames: Sequence[Rename]
) -> list[Finding]:
    """The codegen stage's findings when entries were renamed: one per rename, and the stale
    module's fix is `migrate`, since codegen alone would drop the old names the package's raises
    still import (only the module on disk knows them; see `catalog.authoring.renames`)."""
    if not renames:
        return stale
    findings = [replace(f, fix=RENAMES_FIX) if f.fix == "run: errcat codegen" else f for f in stale]
    entries = catalog.by_id()
    for rename in renames:
        findings.append(
            Finding.at(
                entries[rename.entry_id].where("name"),
                f"entry {rename.entry_id} was renamed {rename.old} → {rename.new}; the generated "
                f"module still defines {rename.old}",
                RENAMES_FIX,
                stage="codegen",
            )
        )
    return findings


def run_check(config: Config, scanner: Scanner, generated_module: str) -> CheckResult:
    """All stages; later stages are skipped when the catalog itself is invalid."""
    result = CheckResult()
    cache = cache_folder(config)
    digests = FileDigests(cache)
    # Stage 1: parse, schema and cross-entry checks, served from the cache when the catalog
    # files are unchanged; the digests are saved below, with the generated module's.
    checked = checked_project_catalog(config, digests)
    catalog, findings, key = checked.catalog, checked.findings, checked.key
    result.findings += findings
    result.entries = len(catalog)
    if findings:
        digests.save()
        result.skipped.append("codegen, sites, entries and exemptions: the catalog has errors")
        return result
    stale = check_codegen_stage(config, catalog, key, digests)
    renames = find_renames(catalog, config.generated) if stale and config.generate else []
    result.findings += rename_findings(catalog, stale, renames)
    digests.save()
    report = scanner(config)
    result.sites, result.files = len(report.sites), len(report.results)
    result.findings += check_sites_stage(
        config, catalog, report, generated_module, cache_dir=cache, key=key, renames=renames
    )
    result.findings += draft_warnings(catalog)
    return result


def sort_findings(findings: Sequence[Finding]) -> list[Finding]:
    """Errors first, then by place."""
    return sorted(
        findings, key=lambda f: (f.severity is Severity.WARNING, str(f.path), f.line, f.column)
    )
