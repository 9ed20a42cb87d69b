"""Markdown pages from the jinja2 templates in `catalog/pages/templates/`.

Templates are the only source of markup. Every value is HTML-escaped by default (autoescape);
catalog prose reaches a page only through the `prose`, `inline` and `code` filters, which make it
Markdown from the safe subset. User text is never compiled as a template.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from catalog.core.exceptions import has_typed_class
from catalog.core.model import Entry, Status
from catalog.gate.stats import Stats
from catalog.matching.frames import source_anchor
from catalog.pages import blocks, markdown, plaintext
from catalog.pages.knowledge import KINDS, KnowledgeItem
from catalog.pages.meta import error_description
from catalog.pages.repository import Repository
from catalog.pages.sources import SOURCES_WITH_CODE, Source


def _indent_md(text: str, width: int) -> Markup:
    """Indent every line but the first, so a multi-line value stays inside its list item."""
    pad = " " * width
    return Markup(
        ("\n").join(
            line if i == 0 or not line else pad + line
            for i, line in enumerate(str(text).split("\n"))
        )
    )


def _prose_block(text: str) -> Markup:
    """The paragraphs and lists of a `{% filter prose_block %}` section as one block, which the
    site build converts on its own (`blocks.ProseBlock`). Text that holds another block's
    marker (prose with a code fence) stays in the page, where markers are expanded."""
    body = str(text).strip("\n")
    if not body.strip() or blocks.MARKER.search(body):
        return Markup(text)
    return Markup(blocks.emit(blocks.ProseBlock(body)))


@cache
def environment() -> jinja2.Environment:
    """The template environment (built once per process)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("catalog.pages", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        # Package data does not change while errcat runs: no stat per template per page.
        auto_reload=False,
    )
    env.filters["prose"] = lambda text: Markup(markdown.prose(str(text)))
    env.filters["inline"] = lambda text: Markup(plaintext.inline(str(text)))
    env.filters["code"] = lambda text, language, options="": Markup(
        markdown.code_block(str(text), language, options)
    )
    env.filters["indent_md"] = _indent_md
    env.filters["prose_block"] = _prose_block
    env.filters["source_anchor"] = lambda source, module: (
        source_anchor(source.path, source.line, module) or ""
    )
    env.filters["entry_table"] = lambda entries, prefix: Markup(
        blocks.emit(blocks.TableBlock(tuple(table_row(e) for e in entries), prefix, _table))
    )
    env.filters["related_list"] = lambda entries: Markup(
        blocks.emit(blocks.LinksBlock(tuple(related_item(e) for e in entries)))
    )
    env.filters["meta_string"] = lambda text: Markup(
        json.dumps(html.escape(" ".join(str(text).split()), quote=False), ensure_ascii=False)
    )
    # Themes print a description inside an attribute (`content="..."`): quotes escaped too.
    env.filters["meta_attr"] = lambda text: Markup(
        json.dumps(html.escape(" ".join(str(text).split()), quote=True), ensure_ascii=False)
    )
    return env


def _table(rows: tuple[blocks.TableRow, ...], prefix: str) -> str:
    """An index table's Markdown, from `table.md.j2`."""
    return environment().get_template("table.md.j2").render(rows=rows, prefix=prefix)


def table_row(entry: Entry) -> blocks.TableRow:
    """What an index table shows of an entry."""
    return blocks.TableRow(
        entry.id, entry.headline, entry.status.value, entry.exception, entry.module
    )


def related_item(entry: Entry) -> blocks.LinkItem:
    """What the related errors list shows of an entry."""
    note = (
        entry.exception
        if entry.status is Status.ACTIVE
        else f"{entry.exception}, {entry.status.value}"
    )
    return blocks.LinkItem(entry.id, entry.headline, note)


@dataclass(frozen=True)
class Group:
    """Entries sharing a module or an exception type, for an index page."""

    name: str
    slug: str
    """File name of the group's page, without `.md`."""
    entries: tuple[Entry, ...]


def issue_url(repository: Repository, entry: Entry, page_url: str) -> str | None:
    """A new-issue link on the repository, titled with the entry; None without `repo_url`."""
    if repository.url is None:
        return None
    title = quote(f"Error page {entry.id}: {entry.headline}"[:200], safe="")
    body = quote(f"About {page_url}\n\n", safe="")
    return f"{repository.url}/issues/new?title={title}&body={body}"


def class_path(entry: Entry, generated: str, generate: bool = True) -> str:
    """The class a traceback names for `entry`: the generated typed class in the `generated`
    module (`runtime.errors.BorrowRequiresMps`), or for an entry catalogued in place (every
    entry under `generate=False`, docs-only adoption) the class as raised (`builtins` left
    out, as tracebacks do)."""
    if has_typed_class(entry.exception, generate):
        return f"{generated}.{entry.name}"
    return entry.exception


def error_page(
    entry: Entry,
    *,
    package: str,
    generated: str,
    sources: Sequence[Source],
    related: Sequence[Entry],
    replacement: Entry | None,
    verified: Sequence[Mapping[str, str]],
    repository: Repository,
    site_path: str,
    page_url: str,
    knowledge: Sequence[KnowledgeItem] = (),
    public: str | None = None,
    hide_navigation: bool = True,
    generate: bool = True,
) -> str:
    """The Markdown of `errors/<id>.md`. `public`: the path the package exports an in-place
    class under, when it is not where the class is defined; `hide_navigation`: whether the
    theme's navigation sidebar is hidden (where errcat's pages are the whole site);
    `generate`: whether entries get generated classes (False: docs-only adoption)."""
    typed = has_typed_class(entry.exception, generate)
    # Before `codegen` and `migrate` ran in the package, its code raises the built-in: the
    # header must name what a traceback prints there, not a class the package lacks.
    raised = {name for source in sources if (name := getattr(source, "qualified_name", None))}
    as_builtin = typed and bool(raised) and class_path(entry, generated, generate) not in raised
    return (
        environment()
        .get_template("error.md.j2")
        .render(
            entry=entry,
            package=package,
            class_path=class_path(entry, generated, generate),
            public=public,
            typed=typed and not as_builtin,
            as_builtin=as_builtin,
            description=error_description(entry),
            sources=sources,
            related=related,
            replacement=replacement,
            verified=verified,
            repository=repository,
            json_href=f"{site_path}api/errors/{entry.id}.json",
            sources_with_code=SOURCES_WITH_CODE,
            issue_url=issue_url(repository, entry, page_url),
            knowledge={kind: [i for i in knowledge if i.kind == kind] for kind in KINDS},
            hide_navigation=hide_navigation,
        )
    )


@dataclass(frozen=True)
class Pager:
    """Where one page of a paged index stands: its number, and a link to every page of the
    index relative to it (None for itself). `up` leads from the page's folder to the folder
    its first page is in."""

    number: int
    links: tuple[str | None, ...]
    up: str = ""

    @property
    def count(self) -> int:
        return len(self.links)


SINGLE = Pager(1, (None,))
"""An index that fits on one page."""


def _index_context(
    entries: Sequence[Entry], shown: Sequence[Entry], pager: Pager
) -> dict[str, object]:
    """What the index of all errors (`errors_table.md.j2`) shows."""
    return dict(
        entries=entries,
        shown=shown,
        pager=pager,
        drafts=sum(e.status is Status.DRAFT for e in entries),
        retired=sum(e.status is Status.RETIRED for e in entries),
    )


def errors_index(entries: Sequence[Entry], shown: Sequence[Entry], pager: Pager = SINGLE) -> str:
    """The Markdown of `errors/index.md` (or one of its further pages): the `shown` part of
    every entry, with links to both group indexes."""
    return (
        environment().get_template("errors.md.j2").render(**_index_context(entries, shown, pager))
    )


def groups_index(
    title: str, label: str, groups: Sequence[Group], shown: Sequence[Group], pager: Pager = SINGLE
) -> str:
    """An index of groups (`errors/modules/index.md`, `errors/exceptions/index.md`, or one of
    their further pages): the `shown` part of `groups`."""
    return (
        environment()
        .get_template("groups.md.j2")
        .render(title=title, label=label, groups=groups, shown=shown, pager=pager)
    )


def group_page(
    label: str, group: Group, shown: Sequence[Entry] | None = None, pager: Pager = SINGLE
) -> str:
    """One group's table of entries (or one page of it: `shown`)."""
    return (
        environment()
        .get_template("group.md.j2")
        .render(
            label=label,
            name=group.name,
            entries=group.entries,
            shown=group.entries if shown is None else shown,
            pager=pager,
        )
    )


def home_page(
    *,
    site_name: str,
    package: str,
    counts: Mapping[str, int],
    stats: Stats,
    repository: Repository,
    site_path: str,
    typed_raised: bool = True,
) -> str:
    """The Markdown of the home page (`index.md`), with the coverage figures of `errcat stats`.
    `typed_raised`: whether the package raises any generated class (before `codegen` and
    `migrate` ran there it raises none, and no error it raises carries a docs link)."""
    return (
        environment()
        .get_template("home.md.j2")
        .render(
            section=False,
            site_name=site_name,
            package=package,
            counts=counts,
            figures=stats.as_dict(),
            repository=repository,
            api_base=site_path,
            typed_raised=typed_raised,
        )
    )


def section_root(
    entries: Sequence[Entry],
    shown: Sequence[Entry],
    pager: Pager,
    *,
    site_name: str,
    package: str,
    counts: Mapping[str, int],
    stats: Stats,
    repository: Repository,
    site_path: str,
    typed_raised: bool = True,
) -> str:
    """The Markdown of `errors/index.md` where errcat's pages are a section of the project's
    site: the overview `home_page` gives a site of errcat's own, with the first page of the
    index of all errors (`errors_index`) in it."""
    return (
        environment()
        .get_template("home.md.j2")
        .render(
            section=True,
            site_name=site_name,
            package=package,
            counts=counts,
            figures=stats.as_dict(),
            repository=repository,
            api_base=site_path,
            typed_raised=typed_raised,
            **_index_context(entries, shown, pager),
        )
    )
