"""A slice of a real package, catalogued by `errcat new` and built with no mkdocs.yml: pages
render (errcat supplies the extensions), code is highlighted, search finds messages and holds no
code, and the site cache only ever changes how long a build takes, never what it writes.

The slice is the installed torch's `torch/optim` (about 150 drafts), copied into a temporary
project; the test skips where torch is not installed.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import errcat_in, file_digests

from catalog.core.config import load_config
from catalog.core.project import CACHE_FOLDER
from catalog.core.sitecache import FILE_NAME, SiteCache
from catalog.engine import ahead, conversion, fastpath, highlight
from catalog.publish.build import DEFAULT_DOCS_DIR, build_site

PYPROJECT = """\
[project]
name = "torchslice"
version = "0"

[tool.errcat]
package = "torch"
catalog = "errors"
generated = "torch/_errcat_errors.py"
"""


def _torch_optim() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "optim"
    return folder if folder.is_dir() else None


pytestmark = pytest.mark.skipif(_torch_optim() is None, reason="torch is not installed")


def _build(root: Path) -> Path:
    return build_site(load_config(root), root / "build" / "site").version


def _drop_cache(root: Path) -> None:
    for path in (root / CACHE_FOLDER).glob(FILE_NAME + "*"):
        path.unlink()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """torch/optim in a project of its own, after `errcat new`, with no mkdocs.yml."""
    source = _torch_optim()
    assert source is not None
    root = tmp_path_factory.mktemp("slice")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    shutil.copytree(source, root / "torch" / "optim", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "torch" / "__init__.py").write_text("", encoding="utf-8")
    assert errcat_in(root, "new") == 0
    assert not (root / "mkdocs.yml").exists()
    return root


@pytest.fixture(scope="module")
def site(project: Path) -> Path:
    """The slice built once, from a cold cache."""
    _drop_cache(project)
    return _build(project)


def _error_pages(site: Path) -> list[Path]:
    return sorted(
        path
        for path in (site / "errors").glob("*/index.html")
        if re.fullmatch(r"[0-9a-f]{16}", path.parent.name)
    )


def _article(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text[text.index("<article") : text.index("</article>")]


_CODE = re.compile(r"<(pre|code)\b.*?</\1>", re.S)
_TAG = re.compile(r"<[^>]+>")
_RAW_MARKDOWN = re.compile(
    # Block syntax at the start of a line: admonitions, details, tabs, fences, headings, list
    # items, table rows.
    r"^[ \t]*(?:!!!|\?\?\?|===|```|~~~|#{1,6}[ \t]|[-*+][ \t]+\S|\d+\.[ \t]+\S|\|.*\|[ \t]*$)"
    # Attribute lists, links, strong emphasis anywhere.
    r"|\{[ \t]*(?:data-|[.#:])|\]\(|\*\*",
    re.M,
)
"""Markdown that only shows as text when it was not converted. (Backticks and underscores are
not in it: torch's messages hold them literally, and a page shows a message as written.)"""


def _visible_text(article: str) -> str:
    """What a reader sees of an article outside code: tags dropped, entities decoded."""
    return html.unescape(_TAG.sub("", _CODE.sub(" ", article)))


def test_no_raw_markdown_reaches_the_pages(site: Path) -> None:
    """Admonitions, attribute lists, fences, headings, lists, tables, links and emphasis are
    rendered on every page (home, index and each error), never shown as Markdown text."""
    pages = sorted(site.rglob("index.html"))
    assert len(_error_pages(site)) > 100
    for path in pages:
        article = _article(path)
        for raw in ("!!!", "{ data-search-exclude }", "```"):
            assert raw not in article, (path.parent.name, raw)
        found = _RAW_MARKDOWN.search(_visible_text(article))
        assert found is None, (path.relative_to(site).as_posix(), found and found.group())
    drafts = [path for path in _error_pages(site) if 'class="admonition warning"' in _article(path)]
    assert drafts, "the draft notice is an admonition"


def test_the_raw_markdown_check_sees_unconverted_markdown() -> None:
    """The check above finds each kind of Markdown left as text, and not code or messages."""
    for raw in (
        '!!! warning "Draft"',
        "- an item",
        "1. a step",
        "## Source",
        "| a | b |",
        "see [the docs](https://example.com)",
        "**bold**",
        "Source { data-search-exclude }",
        "```python",
    ):
        assert _RAW_MARKDOWN.search(_visible_text(f"<p>\n{raw}\n</p>")), raw
    shown = "<h1>`step` is not supported for {x.__name__}</h1><pre>**x** - [a](b)</pre>"
    assert _RAW_MARKDOWN.search(_visible_text(shown)) is None


def test_code_is_highlighted(site: Path) -> None:
    """Each raise is shown highlighted by Pygments, its line marked."""
    highlighted = [path for path in _error_pages(site) if '<span class="hll">' in _article(path)]
    assert len(highlighted) > 100
    article = _article(highlighted[0])
    assert '<div class="language-python highlight">' in article
    assert re.search(r'<span class="k">raise</span>', article)


def test_search_finds_messages_and_holds_no_code(site: Path, project: Path) -> None:
    """The search index has each error's message words, and none of the source shown."""
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    by_location = {doc["location"]: doc for doc in index["docs"]}
    rows = json.loads((site / "api" / "errors" / "index.json").read_text(encoding="utf-8"))
    assert rows
    for row in rows:
        doc = by_location[f"errors/{row['id']}/"]
        words = re.findall(r"[A-Za-z_]{4,}", re.sub(r"\{[^{}]*\}", " ", row["message"]))
        assert all(word in doc["title"] for word in words), (row["message"], doc["title"])
        assert row["exception"].rpartition(".")[2] in doc["text"]
    blob = json.dumps(index["docs"])
    document = json.loads(
        (site / "api" / "errors" / f"{rows[0]['id']}.json").read_text(encoding="utf-8")
    )
    raise_lines = [
        line.strip()
        for source in document["sources"]
        for line in source["snippet"]["code"].split("\n")
        if line.strip().startswith("raise ")
    ]
    assert raise_lines and not any(line in blob for line in raise_lines)
    assert not re.search(r'"location":"[^"]*#(source|related-errors|read-from-the-code)"', blob)


def test_a_cached_rebuild_writes_the_same_files(site: Path, project: Path) -> None:
    """The second build takes every page and code block from the cache (Pygments never
    runs) and writes byte-identical files, hard links to the first build's."""
    cold = file_digests(site)

    def no_highlighting(*args: object, **kwargs: object) -> str:
        raise AssertionError("a cached rebuild highlighted code")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(highlight.CodeHighlighter, "html", no_highlighting)
        warm = _build(project)
    assert file_digests(warm) == cold
    # Unchanged pages are the previous build's files, linked rather than written again.
    assert all(path.stat().st_nlink > 1 for path in _error_pages(warm))


def test_a_rebuild_after_an_edit_equals_a_cold_build(project: Path) -> None:
    """Edit one entry's prose: the cached rebuild is what a build without a cache writes."""
    _build(project)  # the cache holds the tree as it was
    path = sorted((project / "errors").glob("*.yaml"))[0]
    text = path.read_text(encoding="utf-8")
    first = text.index("  - id: ")
    end = text.index("\n", first)
    path.write_text(
        text[: end + 1]
        + '    meaning: "Only the `step` of this optimizer raises it."\n'
        + text[end + 1 :],
        encoding="utf-8",
    )
    warm = file_digests(_build(project))
    _drop_cache(project)
    cold = file_digests(_build(project))
    assert warm == cold
    entry_id = text[first:end].split('"')[1]
    page = (project / "build" / "site" / "errors" / entry_id / "index.html").read_text("utf-8")
    assert "Only the <code>step</code> of this optimizer raises it." in page


def test_a_themed_output_gone_missing_is_rendered_again(site: Path, project: Path) -> None:
    """Should another build remove a page's stored output between lookup and use, the page
    is rendered after all, and the files are the same."""
    _build(project)
    expected = file_digests((project / "build" / "site").resolve())
    original = SiteCache.get_text

    def outputs_vanish(self: SiteCache, key: str) -> str | None:
        value = original(self, key)
        return None if value is not None and value.lstrip().startswith("<!doctype") else value

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SiteCache, "get_text", outputs_vanish)
        patch.setattr(fastpath.Accelerator, "_link_previous", lambda *args: False)
        assert file_digests(_build(project)) == expected


def test_pages_done_ahead_by_workers_are_the_same(site: Path, project: Path) -> None:
    """A cold build whose pages worker processes convert and theme ahead writes what a cold
    build that does it all itself writes."""
    _drop_cache(project)
    alone = file_digests(_build(project))
    stats: list[dict[str, int]] = []
    original = fastpath.Accelerator.finish

    def counted(self: fastpath.Accelerator, succeeded: bool) -> None:
        stats.append(dict(self.stats))
        original(self, succeeded)

    _drop_cache(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ahead, "PARALLEL_PAGES", 1)
        patch.setattr(ahead, "worker_count", lambda: 2)
        patch.setattr(fastpath.Accelerator, "finish", counted)
        in_workers = file_digests(_build(project))
    assert stats[0]["converted_ahead"] > 100 and stats[0]["rendered_ahead"] > 100
    assert in_workers == alone


def test_pages_left_to_mkdocs_render_the_same(site: Path, project: Path) -> None:
    """A page errcat cannot convert itself (here: every page with a list of links) goes to
    MkDocs' own rendering, with its Markdown complete, and comes out the same."""
    _drop_cache(project)
    expected = file_digests(_build(project))

    def missing(self: fastpath.Accelerator, block: object) -> str:
        raise conversion.LinkMissing("?")

    _drop_cache(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fastpath.Accelerator, "_links_html", missing)
        assert file_digests(_build(project)) == expected


def test_pages_without_errcats_fast_paths_are_the_same(site: Path, project: Path) -> None:
    """The paragraphs and lists errcat converts itself (`catalog.engine.prose_html`) come out
    as Python-Markdown writes them, page frames (`catalog.engine.skeleton_html`) too,
    messages' `text` blocks as Pygments writes them, and code lexed through
    `catalog.engine.lexing` as Pygments' own loop lexes it: the site built with none of the
    four is the same. Most are converted (a fast path that always declined would pass the
    comparison alone)."""
    from catalog.engine import prose_html, skeleton_html

    prose: list[bool] = []
    texts: list[bool] = []
    frames: list[bool] = []
    to_html, plain_text = prose_html.to_html, highlight.CodeHighlighter._plain_text
    parse = skeleton_html.parse

    def counted_frame(text: str, escaped: object) -> object:
        frame = parse(text, escaped)  # type: ignore[arg-type]
        frames.append(frame is not None)
        return frame

    def counted_prose(text: str) -> str | None:
        html = to_html(text)
        prose.append(html is not None)
        return html

    def counted_text(self: highlight.CodeHighlighter, code: str, index: int) -> str | None:
        html = plain_text(self, code, index)
        texts.append(html is not None)
        return html

    _drop_cache(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prose_html, "to_html", counted_prose)
        patch.setattr(highlight.CodeHighlighter, "_plain_text", counted_text)
        patch.setattr(skeleton_html, "parse", counted_frame)
        expected = file_digests(_build(project))
    assert len(prose) > 300 and sum(prose) > 0.9 * len(prose)
    assert len(texts) > 100 and sum(texts) > 0.9 * len(texts)
    assert len(frames) > 100 and sum(frames) > 0.7 * len(frames)
    _drop_cache(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(skeleton_html, "parse", lambda text, escaped: None)
        patch.setattr(prose_html, "to_html", lambda text: None)
        patch.setattr(highlight.CodeHighlighter, "_plain_text", lambda self, code, index: None)
        patch.setattr(highlight, "accelerate", lambda lexer: False)
        assert file_digests(_build(project)) == expected


def test_pages_with_the_navigation_rendered_once_are_the_same(site: Path, project: Path) -> None:
    """Material's navigation rendered once per key (`catalog.engine.navcache`) is what the
    theme writes on every page: the site built without it is the same, and the navigation
    was indeed reused (one rendering per key, not per page)."""
    from catalog.engine import navcache

    rendered: list[str | None] = []
    put = navcache.NavCache.put

    def counted(self: navcache.NavCache, key: str | None, html: str) -> object:
        rendered.append(key)
        return put(self, key, html)

    _drop_cache(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ahead, "worker_count", lambda: 1)  # every page in this process
        patch.setattr(navcache.NavCache, "put", counted)
        expected = file_digests(_build(project))
    pages = sum(1 for path in expected if re.fullmatch(r"errors/[0-9a-f]{16}/index\.html", path))
    assert pages > 100 and 0 < len([key for key in rendered if key is not None]) < 10
    _drop_cache(project)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(navcache, "install", lambda env, nav, config: None)
        assert file_digests(_build(project)) == expected


def _counted_build(root: Path, patch: pytest.MonkeyPatch) -> tuple[dict[str, str], dict[str, int]]:
    """A build's file digests, and its accelerator's counts."""
    stats: list[dict[str, int]] = []
    original = fastpath.Accelerator.finish

    def counted(self: fastpath.Accelerator, succeeded: bool) -> None:
        stats.append(dict(self.stats))
        original(self, succeeded)

    patch.setattr(fastpath.Accelerator, "finish", counted)
    digests = file_digests(_build(root))
    return digests, stats[0]


@pytest.mark.parametrize("workers", [2, 1])
def test_pages_given_their_heads_only_are_filled_when_themed_anew(
    site: Path, project: Path, workers: int
) -> None:
    """A rebuild takes only the head of an unchanged page's conversion (title, anchors,
    links) while its themed output may be reused. When the outputs must be rendered anew
    but the conversions stand (here: a hand-written page joins the navigation of every
    page), each page gets its content after all, in the workers that theme it or in the
    build itself, and the site is what a build from an empty cache writes."""
    extra = project / DEFAULT_DOCS_DIR / "extra.md"
    extra.parent.mkdir(parents=True, exist_ok=True)
    try:
        _build(project)  # the cache holds every conversion, and the outputs without the page
        # A title of its own for each run: outputs of an earlier run must not be stored.
        extra.write_text(f"# Extra {workers}\n\nA page of the project's own.\n", "utf-8")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ahead, "PARALLEL_PAGES", 1)
            patch.setattr(ahead, "worker_count", lambda: workers)
            warm, stats = _counted_build(project, patch)
        assert stats["heads_only"] > 100
        # Workers fill in the pages they theme (their counts are their own).
        done_here = "rendered_ahead" if workers > 1 else "filled_later"
        assert stats[done_here] > 100
        _drop_cache(project)
        assert file_digests(_build(project)) == warm
        assert "Extra" in (project / "build" / "site" / "errors" / "index.html").read_text("utf-8")
    finally:
        extra.unlink(missing_ok=True)


def test_a_head_whose_conversion_is_gone_converts_the_page_again(site: Path, project: Path) -> None:
    """Should the cache hold a page's head but no longer its whole conversion, a page whose
    output has to be rendered is converted again, and the site is the same."""
    import sqlite3
    import zlib

    _drop_cache(project)
    expected = file_digests(_build(project))
    database = sqlite3.connect(project / CACHE_FOLDER / FILE_NAME)
    with database:
        gone = [
            key
            for key, value in database.execute("SELECT key, value FROM blobs")
            if zlib.decompress(value).startswith(b'{"content": ')
        ]
        database.executemany("DELETE FROM blobs WHERE key = ?", [(key,) for key in gone])
        # Every themed output, too: they must all be rendered again.
        outputs = [
            key
            for key, value in database.execute("SELECT key, value FROM blobs")
            if zlib.decompress(value).lstrip().startswith(b"<!doctype")
        ]
        database.executemany("DELETE FROM blobs WHERE key = ?", [(key,) for key in outputs])
    database.close()
    assert len(gone) > 100 and len(outputs) > 100
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fastpath.Accelerator, "_link_previous", lambda *args: False)
        warm, stats = _counted_build(project, patch)
    assert stats["heads_only"] > 100 and stats["filled_later"] > 100
    assert warm == expected


def test_a_page_that_cannot_be_filled_later_goes_to_mkdocs(site: Path, project: Path) -> None:
    """If a page given its head only cannot get the rest from errcat when it is to be themed,
    MkDocs converts it, and the site is the same."""
    _drop_cache(project)
    _build(project)
    database = project / CACHE_FOLDER / FILE_NAME
    expected = file_digests((project / "build" / "site").resolve())
    import sqlite3
    import zlib

    connection = sqlite3.connect(database)
    with connection:
        outputs = [
            (key,)
            for key, value in connection.execute("SELECT key, value FROM blobs")
            if zlib.decompress(value).lstrip().startswith(b"<!doctype")
        ]
        connection.executemany("DELETE FROM blobs WHERE key = ?", outputs)
    connection.close()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fastpath.Accelerator, "_undefer", lambda self, page: False)
        patch.setattr(fastpath.Accelerator, "_link_previous", lambda *args: False)
        patch.setattr(ahead, "worker_count", lambda: 1)
        warm, stats = _counted_build(project, patch)
    assert stats["heads_only"] > 100
    assert warm == expected
