"""Rendering: safe prose, the parts of an error page, related errors, sources and repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import markdown as python_markdown
import pytest
from test_build_project import ACTIVE_ID, DRAFT_ID, RETIRED_ID, STOP_ID, make_project

from catalog.core.config import load_config
from catalog.entries.validate import load_valid_catalog
from catalog.entries.verified import example_hash
from catalog.gate.stats import compute_stats
from catalog.pages.content import SiteContent, gather, render
from catalog.pages.markdown import code_block, prose
from catalog.pages.plaintext import inline
from catalog.pages.repository import UNKNOWN_COMMIT, read_repository

SITE_URL = "http://127.0.0.1:8000/"


def _content(
    root: Path, repo_url: str | None = "https://github.com/example/widgets"
) -> SiteContent:
    config = load_config(root)
    catalog = load_valid_catalog(config.catalog)
    return render(
        gather(config, catalog, site_url=SITE_URL, repo_url=repo_url, site_name="Widgets")
    )


@pytest.fixture(scope="module")
def content(tmp_path_factory: pytest.TempPathFactory) -> SiteContent:
    return _content(make_project(tmp_path_factory.mktemp("widgets")))


def test_raw_html_in_prose_becomes_text() -> None:
    """`<` and `&` in prose turn into entities, so Markdown passes no tag through."""
    assert prose('a <script>alert("x")</script> & b') == (
        'a &lt;script&gt;alert("x")&lt;/script&gt; &amp; b'
    )


def test_only_web_links_survive() -> None:
    """http(s) links stay links; other schemes keep only their text."""
    assert prose("[ok](https://example.org/a?b=1)") == "[ok](https://example.org/a?b=1)"
    assert prose("[x](javascript:alert(1))") == "x"
    assert prose("[x](javascript:void)") == "x"
    assert prose("[x](/etc/passwd)") == "x"
    assert prose("<https://example.org>") == "[https://example.org](https://example.org)"


def test_template_and_attribute_syntax_is_escaped() -> None:
    """Braces, brackets and line-start markers are escaped; code spans are left to Markdown."""
    assert prose("{{ 7 * 7 }} {: onclick=x }") == "\\{\\{ 7 * 7 \\}\\} \\{: onclick=x \\}"
    assert prose("# not a heading") == "\\# not a heading"
    assert prose("`<b>{{ x }}</b>`") == "`<b>{{ x }}</b>`"


def test_fenced_code_keeps_only_a_language() -> None:
    """A fence's info string is cut to its language, so no attributes reach the block."""
    rendered = prose('```python { onclick="x" }\nif a < b: pass\n```')
    assert "```python\nif a < b: pass\n```" in rendered
    assert "onclick" not in rendered


def test_inline_text_escapes_every_markdown_character() -> None:
    """Titles and table cells show the message exactly, markup characters included."""
    assert inline("{name} *x* | <b>") == "\\{name\\} \\*x\\* \\| &lt;b&gt;"


def test_code_block_fence_outgrows_backticks_in_the_code() -> None:
    """A fence is longer than any backtick run inside the code."""
    assert code_block("a = '```'", "python").strip().startswith("````python")


def test_each_raise_site_carries_the_anchor_a_traceback_links_to(content: SiteContent) -> None:
    """Every source on an error page has the anchor `catalog.matching.frames` makes from a
    traceback's frame at that path and line, just before its "Raised at" line."""
    page = content.pages[f"errors/{ACTIVE_ID}.md"]
    spot = '<div class="errcat-at" id="at-widgets-core-py-3"></div>'
    assert page.count(spot) == 1
    assert page.index(spot) < page.index("Raised at `widgets/core.py:3`")


def test_error_page_has_every_part(content: SiteContent) -> None:
    """An active entry's page has the kicker, title, each section and the footer."""
    page = content.pages[f"errors/{ACTIVE_ID}.md"]
    for part in (
        'title: "widget {name} cannot turn backwards"',
        # The widgets package raises the built-in (it never ran codegen and migrate).
        "[`ValueError`](exceptions/ValueError.md) · raised as the built-in (its typed class "
        "`widgets.errors.TurnBackwards` is not raised yet) · raised in "
        "[`widgets.core`](modules/widgets.core.md)",
        "# widget \\{name\\} cannot turn backwards",
        "## Error message",
        "## What it means",
        "## Source",
        "Raised at `widgets/core.py:3` in `turn`",
        'linenums="1" hl_lines="3"',
        "## Solutions",
        "1. Pass a speed of `0` or more.",
        "2. Turn the widget around first.",
        "## Example fix",
        "## When it happens",
        "### Trigger",
        "### Common situations",
        "## Related errors",
        f"/api/errors/{ACTIVE_ID}.json",
        "Report an issue",
        "https://github.com/example/widgets/issues/new?title=",
        "First raised in version 0.1.0.",
    ):
        assert part in page, part


def test_empty_fields_are_left_out_and_drafts_marked(content: SiteContent) -> None:
    """A draft shows a draft notice and no heading for prose it lacks."""
    page = content.pages[f"errors/{DRAFT_ID}.md"]
    assert '!!! warning "Draft"' in page
    for absent in ("## What it means", "## Solutions", "## Example fix", "## When it happens"):
        assert absent not in page


def test_retired_entry_is_marked_and_links_its_replacement(content: SiteContent) -> None:
    """A retired page says it is no longer raised, why, and links the successor."""
    page = content.pages[f"errors/{RETIRED_ID}.md"]
    assert '!!! danger "No longer raised"' in page
    assert "Jams are cleared automatically" in page
    assert f"]({STOP_ID}.md)" in page


def test_related_puts_authored_first_then_same_function(content: SiteContent) -> None:
    """Authored ids come first, then entries raised from the same function; retired never."""
    document = content.api[f"api/errors/{ACTIVE_ID}.json"]
    assert isinstance(document, dict)
    ids = [row["id"] for row in document["related"]]
    assert ids[:2] == [STOP_ID, DRAFT_ID]
    assert RETIRED_ID not in ids


def test_sources_without_git_link_to_the_release_tag(content: SiteContent) -> None:
    """Outside git the commit is unknown; sources link to the line at the release tag of the
    project's version (`[project] version = "0.1.0"` → `v0.1.0`), and the page says so."""
    document = content.api[f"api/errors/{ACTIVE_ID}.json"]
    assert isinstance(document, dict)
    assert document["repository"] == {
        "url": "https://github.com/example/widgets",
        "commit": UNKNOWN_COMMIT,
        "dirty": False,
    }
    (source,) = document["sources"]
    assert source["path"] == "widgets/core.py"
    assert (source["line"], source["column"], source["function"]) == (3, 9, "turn")
    url = "https://github.com/example/widgets/blob/v0.1.0/widgets/core.py#L3"
    assert source["url"] == url
    assert source["snippet"]["highlight_line"] == 3
    page = content.pages[f"errors/{ACTIVE_ID}.md"]
    assert f"[View source]({url}) (at the release tag `v0.1.0`: not built from a git" in page
    assert "at the release tag <code>v0.1.0</code> (no git checkout)" in page
    assert "sources link to the release tag `v0.1.0`" in content.pages["index.md"]


def test_without_git_or_a_version_a_page_says_why_sources_have_no_link(tmp_path: Path) -> None:
    """No git and no version anywhere (pyproject, `__version__`, an installed distribution):
    no link, and the page gives the reason instead of a bare "Commit unknown"."""
    root = make_project(tmp_path)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace('version = "0.1.0"\n', ""),
        encoding="utf-8",
    )
    content = _content(root)
    document = content.api[f"api/errors/{ACTIVE_ID}.json"]
    assert isinstance(document, dict)
    assert document["sources"][0]["url"] is None
    page = content.pages[f"errors/{ACTIVE_ID}.md"]
    assert (
        "Commit `unknown` (no link: not built from a git checkout, and the package version "
        "is unknown, so there is no release tag to pin to)"
    ) in page


def test_the_repository_comes_from_the_package_metadata_without_repo_url(
    tmp_path: Path,
) -> None:
    """mkdocs.yml names no repo_url: `[project.urls]` Repository is linked instead; with
    neither, the page says that no repository is named."""
    root = make_project(tmp_path)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace(
            "[tool.errcat]",
            '[project.urls]\nSource = "https://codeberg.org/example/widgets.git"\n\n[tool.errcat]',
        ),
        encoding="utf-8",
    )
    document = _content(root, repo_url=None).api[f"api/errors/{ACTIVE_ID}.json"]
    assert isinstance(document, dict)
    assert document["repository"]["url"] == "https://codeberg.org/example/widgets"
    assert document["sources"][0]["url"] == (
        "https://codeberg.org/example/widgets/blob/v0.1.0/widgets/core.py#L3"
    )
    pyproject.write_text(text, encoding="utf-8")
    page = _content(root, repo_url=None).pages[f"errors/{ACTIVE_ID}.md"]
    assert "(no link: neither `repo_url` in mkdocs.yml nor the package metadata names" in page


def test_indexes_cover_every_entry(content: SiteContent) -> None:
    """The all-errors index, module and exception pages list every entry; home has counts."""
    index = content.pages["errors/index.md"]
    for entry_id in (ACTIVE_ID, DRAFT_ID, RETIRED_ID, STOP_ID):
        assert f"({entry_id}.md)" in index
    assert f"(../{ACTIVE_ID}.md)" in content.pages["errors/modules/widgets.core.md"]
    assert f"(../{STOP_ID}.md)" in content.pages["errors/exceptions/RuntimeError.md"]
    assert "| Errors catalogued | 4 |" in content.pages["index.md"]
    assert "| Raise sites in the code | 3 |" in content.pages["index.md"]


def test_verified_examples_are_shown(tmp_path: Path) -> None:
    """A verified run of the current example shows on the page and in the API."""
    root = make_project(tmp_path)
    catalog = load_valid_catalog(load_config(root).catalog)
    example = catalog.by_id()[ACTIVE_ID].example
    assert example is not None
    record = {
        "example_hash": example_hash(example),
        "platform": "linux-x86_64-cpu",
        "commit": "abc1234",
        "outcome": "verified",
    }
    (root / "catalog" / "verified.json").write_text(
        json.dumps({"version": 1, "results": {ACTIVE_ID: [record]}}), encoding="utf-8"
    )
    content = _content(root)
    assert (
        "Verified on linux-x86_64-cpu (commit `abc1234`)."
        in content.pages[f"errors/{ACTIVE_ID}.md"]
    )
    document = content.api[f"api/errors/{ACTIVE_ID}.json"]
    assert isinstance(document, dict)
    assert document["example"]["verified"] == [
        {"platform": "linux-x86_64-cpu", "commit": "abc1234"}
    ]


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env={
            "GIT_COMMITTER_DATE": "2026-08-28T12:00:00Z",
            "GIT_AUTHOR_DATE": "2026-08-28T12:00:00Z",
            "PATH": "/usr/bin:/bin",
        },
    )


def test_repository_reads_commit_date_and_dirty_flag(tmp_path: Path) -> None:
    """In git: the commit, its date (not the clock's), and whether tracked files changed."""
    root = make_project(tmp_path)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "widgets")
    clean = read_repository(root, "https://github.com/example/widgets")
    assert len(clean.commit) == 40 and not clean.dirty
    assert clean.date == "2026-08-28"
    assert clean.blob_url("widgets/core.py", 3) == (
        f"https://github.com/example/widgets/blob/{clean.commit}/widgets/core.py#L3"
    )
    (root / "widgets" / "core.py").write_text("# changed\n", encoding="utf-8")
    assert read_repository(root, None).dirty


def test_source_links_are_pinned_to_the_commit(tmp_path: Path) -> None:
    """Inside git, each source links to its line at the full commit; the page shows it short."""
    root = make_project(tmp_path)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "widgets")
    content = _content(root)
    commit = read_repository(root, None).commit
    document = content.api[f"api/errors/{ACTIVE_ID}.json"]
    assert isinstance(document, dict)
    url = f"https://github.com/example/widgets/blob/{commit}/widgets/core.py#L3"
    assert document["sources"][0]["url"] == url
    page = content.pages[f"errors/{ACTIVE_ID}.md"]
    assert f"[View source]({url}) (pinned to `{commit[:10]}`)" in page


def _tables(markdown: str) -> list[list[list[str]]]:
    """The pipe tables of a Markdown page, each as rows of stripped cells (separator dropped)."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            tables.append([row for row in rows if not all(c and set(c) <= set("-:") for c in row)])
            rows = []
    return tables


def test_home_tables_have_a_header_row(content: SiteContent) -> None:
    """Every table on the home page names its columns: no empty header row."""
    tables = _tables(content.pages["index.md"])
    assert len(tables) >= 2
    for table in tables:
        assert all(table[0]), table[0]


def test_home_shows_the_coverage_figures_of_errcat_stats(tmp_path: Path) -> None:
    """The home page shows what `errcat stats` counts: raise sites catalogued, entries complete
    and examples verified per platform, and follows the code when a raise is added."""
    root = make_project(tmp_path)
    rows = dict(
        table_row for table in _tables(_content(root).pages["index.md"]) for table_row in table
    )
    figures = compute_stats(load_config(root)).as_dict()
    assert figures["sites"] == {"total": 3, "catalogued": 3, "exempted": 0, "percent": 100.0}
    assert rows["Raise sites catalogued"] == "100% (3 of 3)"
    assert rows["Entries complete"] == "33.3% (1 of 3)"
    assert rows["Examples verified"] == "none of 1 yet"

    core = root / "widgets" / "core.py"
    core.write_text(
        core.read_text(encoding="utf-8")
        + "\n\ndef jam(name: str) -> None:\n    raise RuntimeError(f'widget {name} jams')\n",
        encoding="utf-8",
    )
    example = load_valid_catalog(load_config(root).catalog).by_id()[ACTIVE_ID].example
    assert example is not None
    record = {
        "example_hash": example_hash(example),
        "platform": "linux-x86_64-cpu",
        "commit": "abc1234",
        "outcome": "verified",
    }
    (root / "catalog" / "verified.json").write_text(
        json.dumps({"version": 1, "results": {ACTIVE_ID: [record]}}), encoding="utf-8"
    )
    rows = dict(
        table_row for table in _tables(_content(root).pages["index.md"]) for table_row in table
    )
    assert rows["Raise sites in the code"] == "4"
    assert rows["Raise sites catalogued"] == "75% (3 of 4)"
    assert rows["Examples verified on `linux-x86_64-cpu`"] == "100% (1 of 1)"
    assert "Examples verified" not in rows


def test_a_backslash_cannot_turn_a_code_span_into_html() -> None:
    """A backslash before a code span is escaped, so Markdown still reads the span as code."""
    rendered = prose('see \\`<img src=x onerror="alert(1)">` here')
    assert rendered == 'see \\\\`<img src=x onerror="alert(1)">` here'
    html = python_markdown.markdown(rendered)
    assert "<img" not in html and "<code>&lt;img" in html


def test_code_spans_are_kept_on_one_line() -> None:
    """A code span across lines is joined, so no line of prose can open with raw HTML."""
    assert prose("`a\n<script>x</script>\nb`") == "`a <script>x</script> b`"
    assert prose("a ` b\n<i>") == "a \\` b\n&lt;i&gt;"
