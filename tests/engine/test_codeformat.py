"""A code block formatted by `codeformat` is byte for byte what the site's Pygments formatter writes."""

from __future__ import annotations

import io
from typing import Any

import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.formatters.html import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.token import Comment, Keyword, Name, Operator, String, Text, Whitespace  # type: ignore[import-untyped]
from pymdownx.highlight import BlockHtmlFormatter  # type: ignore[import-untyped]

from catalog.engine import codeformat
from catalog.engine.highlight import CodeHighlighter
from catalog.engine.site_settings import EXTENSIONS

_CODE = st.lists(
    st.sampled_from([*"ab x_(),:=.'\"\\#\n\n\t<>&1{}\u00e9\u2603\r\x00", "def ", "    ", '"""']),
    max_size=40,
).map("".join)
"""Code from an alphabet of names, quotes, escapes, `<>&`, tabs, blank lines, non-ASCII, a
carriage return and NUL (which `codeformat` escapes token by token)."""
_TYPES = [Text, Whitespace, Keyword, Name, Name.Function, String, String.Doc, Comment, Operator]


def _markdown() -> markdown.Markdown:
    return markdown.Markdown(
        extensions=[name for name, _ in EXTENSIONS],
        extension_configs={name: dict(options) for name, options in EXTENSIONS if options},
    )


@pytest.fixture(scope="module")
def highlighter() -> CodeHighlighter:
    return CodeHighlighter(_markdown(), "test settings")


def _pygments(formatter: Any, tokens: list[tuple[Any, str]]) -> str:
    out = io.StringIO()
    BlockHtmlFormatter.format_unencoded(formatter, iter(tokens), out)
    return out.getvalue()


def _written(formatter: Any, tokens: list[tuple[Any, str]]) -> str:
    layout = codeformat.Layout.of(formatter)
    assert layout is not None
    return codeformat.write(layout, iter(tokens), codeformat.spans(formatter._get_css_classes))


_FORMATTERS = st.builds(
    lambda table, start, hl, anchors, spans, linked, css: BlockHtmlFormatter(
        cssclass=css,
        linenos="table" if table else False,
        linenostart=start,
        hl_lines=hl,
        wrapcode=True,
        lineanchors=anchors,
        linespans=spans,
        anchorlinenos=linked,
    ),
    st.booleans(),
    st.integers(1, 1200) | st.sampled_from([9, 98, 99, 995]),
    st.lists(st.integers(0, 12), max_size=5),
    st.sampled_from(["", "__codelineno-0", "a<b-3"]),
    st.sampled_from(["", "__span-2"]),
    st.booleans(),
    st.sampled_from(["highlight", "", 'x"y']),
)


@settings(max_examples=150, deadline=None)
@given(_FORMATTERS, st.lists(st.tuples(st.sampled_from(_TYPES), _CODE), max_size=12))
def test_any_token_stream_is_written_as_pygments_writes_it(
    formatter: Any, tokens: list[tuple[Any, str]]
) -> None:
    """Empty tokens, tokens across lines and neighbours of the same class included."""
    assert _written(formatter, tokens) == _pygments(formatter, tokens)


@settings(max_examples=100, deadline=None)
@given(_FORMATTERS, _CODE, st.sampled_from(["python", "text"]))
def test_lexed_code_is_written_as_pygments_writes_it(
    formatter: Any, code: str, language: str
) -> None:
    tokens = list(get_lexer_by_name(language).get_tokens(code))
    assert _written(formatter, tokens) == _pygments(formatter, tokens)


_OPTIONS = st.builds(
    lambda numbered, start, hl: " ".join(
        ([f'linenums="{start}"'] if numbered else [])
        + ([f'hl_lines="{" ".join(hl)}"'] if hl else [])
    ),
    st.booleans(),
    st.integers(1, 2000),
    st.lists(st.sampled_from(["1", "2", "3", "2-4", "5-3", "9", "0", "40"]), max_size=3),
)


@settings(max_examples=120, deadline=None)
@given(_CODE, st.sampled_from(["python", "text"]), _OPTIONS, st.integers(0, 3))
def test_a_fence_highlights_the_same_either_way(
    highlighter: CodeHighlighter, code: str, language: str, options: str, index: int
) -> None:
    """Through the site's superfences, as `CodeHighlighter` calls it for a page's block."""
    code = code.rstrip()
    fast = highlighter._highlight(code, language, options, index, written=True)
    assert fast == highlighter._highlight(code, language, options, index, written=False)


def test_the_probe_turns_the_writer_on_and_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every probe block reaches `codeformat.write` (the probe is not vacuous)."""
    calls: list[int] = []
    real = codeformat.write

    def counting(*args: Any) -> str:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(codeformat, "write", counting)
    assert CodeHighlighter(_markdown(), "probe").written
    assert len(calls) == len(codeformat.PROBES)


def test_a_difference_in_the_probe_leaves_formatting_to_pygments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = codeformat.write
    monkeypatch.setattr(codeformat, "write", lambda *args: real(*args).replace("hll", "hl"))
    highlighter = CodeHighlighter(_markdown(), "differs")
    assert not highlighter.written
    options = 'linenums="3" hl_lines="1"'
    assert 'class="hll"' in highlighter._highlight("x = 1", "python", options, 0)


@pytest.mark.parametrize(
    "options",
    [
        {"noclasses": True},
        {"linenos": "inline"},
        {"linenos": "pymdownx-inline"},
        {"filename": "a.py"},
        {"linenostep": 2},
        {"linenospecial": 3},
        {"nowrap": True},
        {"wrapcode": False},
        {"classprefix": "p-"},
        {"lineseparator": "<br>"},
    ],
)
def test_other_options_are_left_to_pygments(options: dict[str, Any]) -> None:
    assert codeformat.Layout.of(BlockHtmlFormatter(**{"wrapcode": True, **options})) is None


def test_another_formatter_class_is_left_to_pygments() -> None:
    assert codeformat.Layout.of(HtmlFormatter(wrapcode=True)) is None
    assert codeformat.Layout.of(BlockHtmlFormatter(wrapcode=True)) is not None
