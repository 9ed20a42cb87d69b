"""An error message's `text` block is written without Pygments, exactly as Pygments writes it."""

from __future__ import annotations

import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.engine.highlight import CodeHighlighter
from catalog.engine.site_settings import EXTENSIONS
from catalog.pages.blocks import CodeBlock


@pytest.fixture(scope="module")
def highlighter() -> CodeHighlighter:
    md = markdown.Markdown(
        extensions=[name for name, _ in EXTENSIONS],
        extension_configs={name: dict(options) for name, options in EXTENSIONS if options},
    )
    return CodeHighlighter(md, "test settings")


_LINE = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\n"),
    min_size=0,
    max_size=25,
) | st.sampled_from(['<a href="x">&amp;', "  indented", "{x!r} got 'y'", "\t", "caf\u00e9"])


@settings(max_examples=600, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=4).map("\n".join), st.integers(0, 3))
def test_a_message_block_is_what_pygments_writes(
    highlighter: CodeHighlighter, message: str, index: int
) -> None:
    fast = highlighter._plain_text(message.rstrip(), index)
    if fast is not None:
        assert fast == highlighter._highlight(message.rstrip(), "text", "", index)


def test_ordinary_messages_take_the_fast_path(highlighter: CodeHighlighter) -> None:
    for message in ["lr must be positive, got -1", "a & b <c>\nsecond line 'quoted'"]:
        assert highlighter._plain_text(message, 0) is not None
    # And `html` gives the same whether or not it does.
    block = CodeBlock("Expected a tensor, got <class 'int'>", "text", "")
    assert highlighter.html(block, 1) == highlighter._highlight(block.code, "text", "", 1)
