"""The adapters to MkDocs', Pygments' and Material's private names: each probe passes on the
pinned releases, a probe that fails leaves the pages to MkDocs with one log line and the same
site, and errcat's highlighting leaves Pygments as it found it for everyone else."""

from __future__ import annotations

import logging
from pathlib import Path
from types import ModuleType

import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
import pytest
from helpers import file_digests
from mkdocs.commands.build import build
from mkdocs.config import load_config as load_mkdocs_config
from pygments.formatters.html import HtmlFormatter  # type: ignore[import-untyped]
from pymdownx import highlight as pymdownx_highlight  # type: ignore[import-untyped]
from test_build_project import make_project

from catalog.engine import material_internals, mkdocs_internals, pygments_internals
from catalog.engine.highlight import CodeHighlighter, HighlightUnavailable
from catalog.engine.site_settings import EXTENSIONS
from catalog.pages.blocks import CodeBlock


def _markdown() -> markdown.Markdown:
    return markdown.Markdown(
        extensions=[name for name, _ in EXTENSIONS],
        extension_configs={name: dict(options) for name, options in EXTENSIONS if options},
    )


@pytest.mark.parametrize("module", [mkdocs_internals, pygments_internals, material_internals])
def test_the_pinned_releases_pass_the_probes(module: ModuleType) -> None:
    assert module.probe() is None


def _built(root: Path, site: Path) -> dict[str, str]:
    build(load_mkdocs_config(str(root / "mkdocs.yml"), site_dir=str(site)))
    return file_digests(site)


@pytest.mark.parametrize("module", [mkdocs_internals, pygments_internals])
def test_internals_that_differ_leave_the_pages_to_mkdocs(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    module: ModuleType,
) -> None:
    root = make_project(tmp_path / "project")
    monkeypatch.chdir(root)
    fast = _built(root, tmp_path / "fast")
    monkeypatch.setattr(module, "probe", lambda: "a test says so")
    with caplog.at_level(logging.INFO, logger="mkdocs.plugins.errcat"):
        slow = _built(root, tmp_path / "slow")
    said = [r.getMessage() for r in caplog.records if "a test says so" in r.getMessage()]
    assert len(said) == 1 and "converted by MkDocs itself" in said[0]
    assert slow == fast


def test_a_highlighter_refuses_pygments_that_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pygments_internals, "probe", lambda: "a test says so")
    with pytest.raises(HighlightUnavailable, match="a test says so"):
        CodeHighlighter(_markdown(), "test settings")


def test_errcats_formatters_are_its_own() -> None:
    """Highlighting through errcat changes no class of Pygments or pymdownx, and a Markdown
    instance of its own formats the same block as before, with pymdownx's formatter."""
    classes = (pymdownx_highlight.BlockHtmlFormatter, HtmlFormatter, pymdownx_highlight.Highlight)
    before = [dict(vars(cls)) for cls in classes]
    other = _markdown()
    text = '```python linenums="1"\nx = 1  # <&>\n```\n'
    expected = other.convert(text)
    highlighter = CodeHighlighter(_markdown(), "test settings")
    written = highlighter.html(CodeBlock("x = 1  # <&>\n", "python", 'linenums="1"'), 0)
    assert [dict(vars(cls)) for cls in classes] == before
    other.reset()
    assert other.convert(text) == expected
    assert written in expected
    assert other.preprocessors["fenced_code_block"].highlighter is pymdownx_highlight.Highlight
