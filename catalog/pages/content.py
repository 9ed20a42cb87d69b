"""Everything a site holds, computed once from the project: the generated Markdown pages (paths
relative to the docs folder) and the JSON API documents (paths relative to the site folder).

Both `errcat build` and the MkDocs plugin start here, so the two routes publish the same pages.
"""

from __future__ import annotations

import json
import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from catalog.core.config import Config, ConfigError
from catalog.core.exceptions import has_typed_class
from catalog.core.metadata import ProjectMetadata, read_project_metadata
from catalog.core.model import Catalog, Entry, Status
from catalog.core.project import generated_module
from catalog.entries.verified import RESULTS_FILE, Verification, load_results, verified_on
from catalog.evidence.reproduce import load_reproduced
from catalog.evidence.suite import load_seen
from catalog.evidence.tested import tested_by_entry
from catalog.gate.stats import Stats, catalog_stats
from catalog.matching import browser_index
from catalog.matching.frames import source_anchor
from catalog.matching.messages import catalog_rows
from catalog.pages import api, blocks, entry_schema, templating
from catalog.pages.errorpages import ErrorPages, Todo
from catalog.pages.knowledge import KnowledgeItem, Tested, knowledge_by_entry, reproduced_items
from catalog.pages.pagecache import PageCache
from catalog.pages.related import related_entries
from catalog.pages.repository import Repository, read_repository
from catalog.pages.search import SearchDoc, error_doc
from catalog.pages.sources import Source, _repository_path, sources_by_entry
from extractor.expectations import Expectation, read_expectations
from extractor.model import ScanFailure

T = TypeVar("T")

ROWS_PER_PAGE = 400
"""Rows of an index page at most: at whole-torch size one page of every entry was megabytes of
HTML that a phone took seconds to lay out; pages of this many rows stay well under 200 KB."""
HOME_PAGE = "index.md"
ERRORS_INDEX = "errors/index.md"
MODULES_INDEX = "errors/modules/index.md"
EXCEPTIONS_INDEX = "errors/exceptions/index.md"
NAV_PAGES = (HOME_PAGE, ERRORS_INDEX, MODULES_INDEX, EXCEPTIONS_INDEX)
"""The generated pages a navigation needs; error and group pages stay out of it."""
WHOLE_SITE = "/"
"""`section` when errcat's pages are the whole site: its overview is the home page."""
SECTION = "errors/"
"""`section` when errcat's pages are a section of the project's site: the project's `index.md`
stays the home page and errcat's overview heads `errors/index.md`, the index of all errors
(the contract's `/errors/`), since every URL of errcat's pages is fixed relative to the site's
root (`/errors/<id>/`, `/api/errors/<id>.json`, the indexes)."""
MATCH_INDEX = "match-index"
"""The name the match index is kept under in the page cache (`PageCache.find_text`)."""


@dataclass(frozen=True)
class SiteInputs:
    """What the pages are made of."""

    config: Config
    catalog: Catalog
    sources: Mapping[str, tuple[Source, ...]]
    """Raise sites by entry id."""
    scan_failures: tuple[ScanFailure, ...]
    """Files of the package the scanner could not read (their sites are missing from pages)."""
    repository: Repository
    verified: Mapping[str, list[Verification]]
    site_url: str
    """Ends in `/`."""
    site_name: str
    stats: Stats
    """The coverage figures `errcat stats` prints, for the home page."""
    knowledge: Mapping[str, tuple[KnowledgeItem, ...]] = field(default_factory=dict)
    """What the package itself says of each entry, by id (`catalog.pages.knowledge`)."""
    public_names: Mapping[str, str] = field(default_factory=dict)
    """Classes catalogued in place that the package exports under a more public path than the
    one they are defined at (`httpx._exceptions.X` → `httpx.X`): the name users know."""
    section: str = WHOLE_SITE
    """Where errcat's overview goes: `WHOLE_SITE` or `SECTION` (`site_section`)."""


class _Markdown(Mapping[str, str]):
    """Each page's Markdown, expanded from its recorded form only when asked for: a whole
    catalog's pages are not held twice."""

    def __init__(self, fast: Mapping[str, blocks.FastPage]) -> None:
        self._fast = fast

    def __getitem__(self, path: str) -> str:
        return self._fast[path].markdown()

    def __iter__(self) -> Iterator[str]:
        return iter(self._fast)

    def __len__(self) -> int:
        return len(self._fast)


@dataclass(frozen=True)
class SiteContent:
    """The generated part of a site."""

    fast: dict[str, blocks.FastPage]
    """Docs-relative path → the page as rendered (text with block markers, and the blocks),
    sorted by path."""
    api: dict[str, object]
    """Site-relative path → JSON value."""
    search: dict[str, SearchDoc] = field(default_factory=dict)
    """Docs-relative path of an error page → its search entry."""
    section: str = WHOLE_SITE
    """Where the overview is (`SiteInputs.section`), for the navigation."""

    @property
    def pages(self) -> Mapping[str, str]:
        """Docs-relative path → Markdown, sorted by path."""
        return _Markdown(self.fast)


def gather(
    config: Config,
    catalog: Catalog,
    *,
    site_url: str,
    repo_url: str | None,
    site_name: str,
    metadata: ProjectMetadata | None = None,
    section: str = WHOLE_SITE,
) -> SiteInputs:
    """Scan the package and read the repository and the verified examples for `catalog`;
    `metadata` (read here when not given) names the repository and release tag that sources
    link to when mkdocs.yml and git do not; `section` is where the overview goes."""
    from catalog.core.project import cache_folder, generated_module, scan_package
    from catalog.matching.sites import Matcher, SiteMessages
    from extractor.calls import reaches

    report = scan_package(config)
    if metadata is None:
        metadata = read_project_metadata(config)
    repository = read_repository(config.root, repo_url, metadata)
    results_path = config.catalog / RESULTS_FILE
    module = generated_module(config)
    # One matcher for the sources and the figures, with each site's catalog message as `errcat
    # check` and `errcat stats` remember it: rewriting 15,000 scan templates, twice, cost
    # seconds of every build.
    cache = cache_folder(config)
    messages = SiteMessages.load(cache) if cache is not None else SiteMessages()
    matcher = Matcher(catalog, module, messages)
    sources = sources_by_entry(catalog, report, module, repository, matcher)
    stats = catalog_stats(catalog, report, module, results_path, matcher)
    if cache is not None:
        messages.save(cache)
    # Who reaches each raise, for the facts read from the code (summaries cached with the scan).
    in_place = sorted(
        {e.exception for e in catalog if not has_typed_class(e.exception, config.generate)}
    )
    graph = reaches(report, cwd=config.root, cache_dir=cache, classes=in_place)
    public_names = {
        name: public for name in in_place if (public := graph.public_name(name)) != name
    }
    derived = api.derived_sources(sources, report, graph, repository, config.root)
    return SiteInputs(
        config=config,
        catalog=catalog,
        sources=derived,
        scan_failures=tuple(report.failures),
        repository=repository,
        verified=load_results(results_path),
        site_url=site_url,
        site_name=site_name,
        # What `compute_stats` counts, from the same catalog and scan the pages come from.
        stats=stats,
        knowledge=knowledge_by_entry(
            (entry.id for entry in catalog),
            derived,
            _expectations(config, catalog, repository),
            _reproduced(config, repository),
            {entry.id: entry.exception for entry in catalog},
            {entry.id: entry.message for entry in catalog},
        ),
        public_names=public_names,
        section=section,
    )


def _reproduced(config: Config, repository: Repository) -> dict[str, list[KnowledgeItem]]:
    """What `errcat reproduce` saw raise each entry, for code that has not changed since (the
    build never runs the package's code itself)."""
    return {
        entry_id: [
            replace(item, path=_repository_path(repository, str(config.root / item.path)))
            if item.path is not None
            else item
            for item in reproduced_items(reproductions)
        ]
        for entry_id, reproductions in load_reproduced(config.catalog, config.root).items()
    }


def _expectations(
    config: Config, catalog: Catalog, repository: Repository
) -> dict[str, list[Tested]]:
    """The package's tests that expect each entry, their paths relative to the repository:
    those `errcat reproduce` saw catching it (with the site), then those paired by reading
    whose expectation the run did not place."""
    found, _failures = read_expectations(list(config.tests), cwd=config.root)
    # A test file that does not parse costs its expectations only: pages never depend on it.
    paired = tested_by_entry(catalog, found, generated_module=generated_module(config))
    seen = load_seen(config.catalog, config.root)
    at = {(expectation.path, expectation.line): expectation for expectation in found}
    placed = {(s.test_path, s.test_line) for rows in seen.values() for s in rows}

    def shown(expectation: Expectation) -> Expectation:
        path = _repository_path(repository, str(config.root / expectation.path))
        return replace(expectation, path=path)

    result: dict[str, dict[tuple[str, int], Tested]] = {}
    for entry_id, rows in seen.items():
        for row in rows:
            expectation = at.get((row.test_path, row.test_line))
            if expectation is not None:
                site = _repository_path(repository, str(config.root / row.site_path))
                result.setdefault(entry_id, {}).setdefault(
                    (row.test_path, row.test_line),
                    Tested(shown(expectation), f"{site}:{row.site_line}", row.chained),
                )
    for entry_id, expectations in paired.items():
        for expectation in expectations:
            key = (expectation.path, expectation.line)
            if key not in placed:
                result.setdefault(entry_id, {}).setdefault(key, Tested(shown(expectation)))
    return {entry_id: list(rows.values()) for entry_id, rows in result.items()}


def _groups(entries: list[Entry], key: str) -> list[templating.Group]:
    grouped: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        grouped[getattr(entry, key)].append(entry)
    return [templating.Group(name, name, tuple(grouped[name])) for name in sorted(grouped)]


def _paged(
    first: str, folder: str, rows: Sequence[T]
) -> Iterator[tuple[str, Sequence[T], templating.Pager]]:
    """An index of `rows` cut into pages of at most `ROWS_PER_PAGE`: the first at `first`, the
    others at `<folder>page-<n>.md`; each with the part it shows and its `Pager`. One page when
    the rows fit, as every index was before paging (so a small catalog's pages are unchanged).
    """
    count = max(1, -(-len(rows) // ROWS_PER_PAGE))
    if count == 1:
        yield first, rows, templating.SINGLE
        return
    paths = [first] + [f"{folder}page-{number}.md" for number in range(2, count + 1)]
    home = posixpath.dirname(first)
    for index, path in enumerate(paths):
        here = posixpath.dirname(path)
        links = tuple(None if other == path else posixpath.relpath(other, here) for other in paths)
        up = posixpath.relpath(home, here) + "/" if here != home else ""
        shown = rows[index * ROWS_PER_PAGE : (index + 1) * ROWS_PER_PAGE]
        yield path, shown, templating.Pager(index + 1, links, up)


def _recorded(page: Callable[..., str], *args: Any, **kwargs: Any) -> blocks.FastPage:
    """`page(*args, **kwargs)`, with the blocks it emits kept apart."""
    with blocks.recording() as recorded:
        text = page(*args, **kwargs)
    return blocks.FastPage(text, tuple(recorded))


def render(inputs: SiteInputs) -> SiteContent:
    """Every generated page and API document; an error page comes from the page cache where an
    earlier build rendered it from the same inputs (`catalog.pages.pagecache`)."""
    from catalog.core.project import cache_folder

    cache = PageCache(cache_folder(inputs.config))
    succeeded = False
    try:
        content = _render(inputs, cache)
        succeeded = True
    finally:
        cache.close(succeeded)
    return content


def _render(inputs: SiteInputs, cache: PageCache) -> SiteContent:
    entries = list(inputs.catalog)
    by_id = inputs.catalog.by_id()
    related = related_entries(inputs.catalog, inputs.sources)
    package = inputs.config.package.name
    typed_module = generated_module(inputs.config)
    site_path = urlsplit(inputs.site_url).path or "/"
    results = dict(inputs.verified)
    verified = {entry.id: verified_on(entry, results) for entry in entries}
    todo: Todo = []
    for entry in entries:
        replacement = by_id.get(entry.replaced_by) if entry.replaced_by else None
        page_inputs: dict[str, Any] = dict(
            entry=entry,
            package=package,
            generated=typed_module,
            generate=inputs.config.generate,
            sources=inputs.sources.get(entry.id, ()),
            related=related[entry.id],
            replacement=replacement,
            verified=verified[entry.id],
            repository=inputs.repository,
            site_path=site_path,
            page_url=api.page_url(inputs.site_url, entry.id),
            knowledge=inputs.knowledge.get(entry.id, ()),
            public=inputs.public_names.get(entry.exception),
            # Only where errcat is the whole site: the sidebar is then errcat's own indexes,
            # which the path back above the title replaces; a project's sidebar stays.
            hide_navigation=inputs.section == WHOLE_SITE,
        )
        todo.append((f"errors/{entry.id}.md", page_inputs))
    # The match index reads the entries' matcher rows only, which an edit of prose leaves as
    # they were: looked up before the workers start (the cache is theirs while they run).
    rows = [
        list(row.values()) for row in catalog_rows(inputs.catalog, generate=inputs.config.generate)
    ]
    calls = call_anchors(entries, inputs.sources)
    material = json.dumps([typed_module, rows, calls], ensure_ascii=False).encode("utf-8")
    matched = cache.find_text(MATCH_INDEX, material)
    # Started first: worker processes make the error pages while this process makes the rest.
    with ErrorPages(todo, cache) as error_pages:
        generated, documents, search = _the_rest(
            inputs, entries, related, verified, site_path, matched, calls
        )
        generated.update(error_pages.pages())
    made = documents[browser_index.MATCH_FILE]
    if matched is None and isinstance(made, str):
        cache.store_text(MATCH_INDEX, material, made)
    return SiteContent(
        fast=dict(sorted(generated.items())), api=documents, search=search, section=inputs.section
    )


def call_anchors(
    entries: Iterable[Entry], sources: Mapping[str, Sequence[Source]]
) -> dict[str, list[str]]:
    """Entry id -> the page anchors of its sources that call a raise helper, for the entries
    that have any: where a traceback of the error links (`catalog.matching.frames`)."""
    found: dict[str, list[str]] = {}
    for entry in entries:
        anchors = [
            anchor
            for source in sources.get(entry.id, ())
            if source.call and (anchor := source_anchor(source.path, source.line, entry.module))
        ]
        if anchors:
            found[entry.id] = anchors
    return found


def _the_rest(
    inputs: SiteInputs,
    entries: list[Entry],
    related: Mapping[str, tuple[Entry, ...]],
    verified: Mapping[str, list[dict[str, str]]],
    site_path: str,
    matched: str | None,
    calls: Mapping[str, Sequence[str]],
) -> tuple[dict[str, blocks.FastPage], dict[str, object], dict[str, SearchDoc]]:
    """The pages but the error pages, the API documents and the search entries; `matched`:
    the match index an earlier build made from the same entries, if any; `calls`, what its
    `calls` holds (`call_anchors`)."""
    package = inputs.config.package.name
    generated: dict[str, blocks.FastPage] = {}
    search: dict[str, SearchDoc] = {}
    documents: dict[str, object] = {}
    for entry in entries:
        search[f"errors/{entry.id}.md"] = error_doc(entry, inputs.config.generate)
        documents[f"{api.ERRORS_FOLDER}/{entry.id}.json"] = api.entry_document(
            entry,
            sources=inputs.sources.get(entry.id, ()),
            related=related[entry.id],
            verified=verified[entry.id],
            repository=inputs.repository,
            site_url=inputs.site_url,
            knowledge=inputs.knowledge.get(entry.id, ()),
        )
    documents[api.INDEX_FILE] = [api.index_row(entry, inputs.site_url) for entry in entries]
    documents[api.SCHEMA_FILE] = entry_schema.schema()
    # What the search box matches pasted errors against (written as compact JSON text).
    documents[browser_index.MATCH_FILE] = matched or browser_index.dumps(
        browser_index.match_index(
            inputs.catalog, generated_module(inputs.config), inputs.config.generate, calls
        )
    )

    ordered = sorted(entries, key=lambda e: (e.module, e.message, e.id))
    root: tuple[Sequence[Entry], templating.Pager] | None = None
    for path, shown, pager in _paged(ERRORS_INDEX, "errors/", ordered):
        if path == ERRORS_INDEX and inputs.section != WHOLE_SITE:
            root = (shown, pager)  # the section's root: made with the overview, below
            continue
        generated[path] = _recorded(templating.errors_index, ordered, shown, pager)
    for folder, title, label, key in (
        ("modules", "Errors by module", "Module", "module"),
        ("exceptions", "Errors by exception type", "Exception", "exception"),
    ):
        groups = _groups(ordered, key)
        base = f"errors/{folder}/"
        for path, shown_groups, pager in _paged(f"{base}index.md", base, groups):
            generated[path] = _recorded(
                templating.groups_index, title, label, groups, shown_groups, pager
            )
        for group in groups:
            first = f"{base}{group.slug}.md"
            for path, shown, pager in _paged(first, f"{base}{group.slug}/", group.entries):
                generated[path] = _recorded(templating.group_page, label, group, shown, pager)
    counts = {
        "entries": len(entries),
        "active": sum(e.status is Status.ACTIVE for e in entries),
        "draft": sum(e.status is Status.DRAFT for e in entries),
        "retired": sum(e.status is Status.RETIRED for e in entries),
        "modules": len({e.module for e in entries}),
    }
    typed_prefix = f"{generated_module(inputs.config)}."  # once: it resolves paths
    overview: dict[str, Any] = dict(
        site_name=inputs.site_name,
        package=package,
        counts=counts,
        stats=inputs.stats,
        repository=inputs.repository,
        site_path=site_path,
        # Typed classes (and their docs links) reach users only once the package raises them.
        typed_raised=any(
            (getattr(source, "qualified_name", None) or "").startswith(typed_prefix)
            for sources in inputs.sources.values()
            for source in sources
        ),
    )
    if root is None:
        generated[HOME_PAGE] = _recorded(templating.home_page, **overview)
    else:
        # The overview heads the section's root, the first page of the index of all errors.
        generated[ERRORS_INDEX] = _recorded(templating.section_root, ordered, *root, **overview)
    return generated, documents, search


HOME_PAGES = (HOME_PAGE, "README.md")
"""The files MkDocs makes a folder's home page of: index.md, else README.md."""


def has_home_page(docs_dir: Path) -> bool:
    """Whether the docs folder holds a home page of its own, as MkDocs finds one."""
    return any((docs_dir / name).is_file() for name in HOME_PAGES)


def clashes(docs_dir: Path, content: SiteContent) -> list[Path]:
    """Hand-written files that sit where a generated page goes (the generated page would hide
    them): a README.md where errcat generates the home page too."""
    found = [docs_dir / path for path in content.pages if (docs_dir / path).exists()]
    readme = docs_dir / HOME_PAGES[1]
    if HOME_PAGE in content.pages and readme.is_file() and docs_dir / HOME_PAGE not in found:
        found.append(readme)
    return found


def site_section(option: object, docs_dir: Path) -> str:
    """Where errcat's overview goes, from the errcat plugin's `section` option (None when
    unset): by default `SECTION` when the docs folder has a home page of its own (`index.md`,
    or `README.md`, which MkDocs makes the home page without one), else `WHOLE_SITE`. ConfigError for any other value: errcat's URLs
    are fixed, so the only choice is whether its overview is the site's home page."""
    if option is None:
        return SECTION if has_home_page(docs_dir) else WHOLE_SITE
    if option in (WHOLE_SITE, SECTION, SECTION.rstrip("/")):
        return WHOLE_SITE if option == WHOLE_SITE else SECTION
    raise ConfigError(
        f"errcat's `section: {option}` is not a place errcat's pages can live: their URLs are "
        f"/errors/<id>/ and /api/errors/<id>.json; set section to {SECTION} (a section of the "
        f"project's site, whose index.md stays the home page) or {WHOLE_SITE} (errcat's "
        "overview is the home page)"
    )


def plugin_option(plugins: object, name: str) -> object:
    """The errcat plugin's option `name` as mkdocs.yml writes it (a list or a mapping of
    plugins), None when it is not set."""
    items: list[tuple[object, object]] = []
    if isinstance(plugins, dict):
        items = list(plugins.items())
    elif isinstance(plugins, list):
        items = [next(iter(p.items())) for p in plugins if isinstance(p, dict) and len(p) == 1]
    for key, options in items:
        if key == "errcat" and isinstance(options, dict):
            return options.get(name)
    return None


def _section_nav() -> dict[str, object]:
    return {
        "Errors": [
            {"All errors": ERRORS_INDEX},
            {"By module": MODULES_INDEX},
            {"By exception type": EXCEPTIONS_INDEX},
        ]
    }


def default_nav(handwritten: list[str], section: str = WHOLE_SITE) -> list[object]:
    """A navigation for a project whose mkdocs.yml has none: the generated indexes, then the
    hand-written pages (in a section, the project's home page and its pages, then errcat's).
    Without one, MkDocs would list every error page on every page."""
    pages = sorted(path for path in handwritten if path not in NAV_PAGES)
    if section != WHOLE_SITE:
        home = [HOME_PAGE] if HOME_PAGE in handwritten else []
        return [*home, *pages, _section_nav()]
    nav: list[object] = [{"Home": HOME_PAGE}, _section_nav()]
    return nav + pages


def _is_folder(value: object) -> bool:
    return isinstance(value, str) and value.rstrip("/") == SECTION.rstrip("/")


def _expanded(item: object) -> tuple[object, bool]:
    """A nav item with each entry whose value is errcat's folder (`Errors: errors/`, or a bare
    `errors/`) made errcat's indexes; and whether the item names any of errcat's pages."""
    if _is_folder(item):
        return _section_nav(), True
    if isinstance(item, str):
        return item, item.startswith(SECTION)
    if isinstance(item, list):
        pairs = [_expanded(child) for child in item]
        return [child for child, _ in pairs], any(named for _, named in pairs)
    if isinstance(item, dict):
        out: dict[object, object] = {}
        named = False
        for title, value in item.items():
            if _is_folder(value):
                out[title] = _section_nav()["Errors"]
                named = True
                continue
            out[title], here = _expanded(value)
            named = named or here
        return out, named
    return item, False


def site_nav(nav: object, handwritten: list[str], section: str) -> tuple[object, bool]:
    """The navigation a build uses, and whether errcat's section was appended to it.

    Without a `nav`, `default_nav`. An explicit one keeps its order: an entry whose value is
    `errors/` becomes errcat's indexes there; a nav naming none of errcat's pages gets them as
    a last section (the caller says so once), so that they are never silently absent."""
    if nav is None:
        return default_nav(handwritten, section), False
    expanded, named = _expanded(nav)
    if named:
        return expanded, False
    items = expanded if isinstance(expanded, list) else [expanded]
    return [*items, _section_nav()], True
