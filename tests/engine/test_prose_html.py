"""`catalog.engine.prose_html` writes what Python-Markdown writes, or declines.

Python-Markdown is the oracle, configured with the extensions errcat's sites use
(`catalog.engine.site_settings.EXTENSIONS`): every text the converter accepts must come out
byte for byte as Python-Markdown converts it, for texts errcat writes and for texts built from
the characters that make Markdown markup.
"""

from __future__ import annotations

import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.engine.block_markdown import PLAIN_TEXT_EXTENSIONS
from catalog.engine.prose_html import to_html
from catalog.engine.site_settings import EXTENSIONS

_MD = markdown.Markdown(
    extensions=[name for name, _ in EXTENSIONS],
    extension_configs={name: dict(options) for name, options in EXTENSIONS if options},
)
# The site build uses the converter with any set of the extensions that leave plain text alone
# (`block_markdown.PLAIN_TEXT_EXTENSIONS`); here all of them at once, but codehilite, which
# pymdownx.highlight replaces.
_ALL_PLAIN = markdown.Markdown(
    extensions=sorted(PLAIN_TEXT_EXTENSIONS - {"codehilite"}),
    extension_configs={name: dict(options) for name, options in EXTENSIONS if options},
)


def _oracle(text: str, md: markdown.Markdown = _MD) -> str:
    md.reset()
    if md is _MD:
        return str(md.convert(text))
    # After a first paragraph, as a prose block always stands in a page: the meta extension
    # reads `key: value` lines only at the very start of a document.
    converted = str(md.convert("Lead.\n\n" + text))
    return converted.removeprefix("<p>Lead.</p>\n")


# What errcat writes in its prose blocks: the derived facts, the source lines, the module.
WRITTEN = [
    "Module `torch.optim.adam`.",
    "Module `torch.optim`.\nFirst raised in version 2.1.",
    "Raised at `torch/optim/adam.py:75` in `Adam.__init__`",
    "Commit `4f2a9c1` with uncommitted changes",
    "*Derived by errcat from the source, not written by a person.*",
    "At `torch/optim/sgd.py:30`:\n\n**Raised when** all of these hold (innermost first):\n\n"
    "- `not 0.0 <= lr` (line 29)\n- `isinstance(lr, Tensor)` (line 27: an earlier check)\n\n"
    "**In**",
    "**Raised** unconditionally, whenever `step` runs.",
    "**Reached from** these public functions of torch, through direct calls followed up to 3 "
    "calls back:\n\n- `torch.optim.Adam.step` (calls it directly)\n- and 4 more (listed in "
    "the JSON)\n\nCalls through attributes of other objects are not followed.",
    "No public function of torch reaches it; it is public itself.\nSome chains are longer.",
    "Also raised at `a.py:1`, `b.py:2`.",
    "`` a`b `` is declined, `x <= y & z` is escaped",
]


@pytest.mark.parametrize("text", WRITTEN)
def test_what_errcat_writes_converts_as_python_markdown_does(text: str) -> None:
    html = to_html(text)
    if "declined" in text:
        assert html is None
    else:
        assert html == _oracle(text) == _oracle(text, _ALL_PLAIN)


@pytest.mark.parametrize(
    "text",
    [
        "[View source](https://example.com/a.py#L3)",  # a link
        "see <b>this</b>",  # HTML
        "a &amp; b",  # an entity
        "snake_case outside code",  # underscores
        "an *unbalanced emphasis",
        "a line break  \nhere",
        "    indented code",
        "# a heading",
        "1. a step",
        "> a quote",
        "| a | b |",
        "- item\n  continued",
        "- one\n\n- two",  # two lists in a row become one loose list
        "paragraph\n- item",  # a list without a blank line before it
        "term\n: definition",
        "Title { .class }",
        "a\tb",
        "`` ` ``",  # a code span holding a backtick
        "`code\nover lines`",
        "",
    ],
)
def test_markup_outside_the_subset_is_declined(text: str) -> None:
    assert to_html(text) is None


def test_code_is_escaped_as_python_markdown_escapes_it() -> None:
    text = "Raised when `a < b and c > d & e` holds."
    assert (
        to_html(text)
        == _oracle(text)
        == ("<p>Raised when <code>a &lt; b and c &gt; d &amp; e</code> holds.</p>")
    )


_PIECES = st.sampled_from(
    [
        "a",
        "word",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\n \n",
        "- ",
        "\n- ",
        "*",
        "**",
        "*em*",
        "**strong words**",
        "`",
        "``",
        "`code`",
        "`` two ``",
        "(line 3)",
        ":",
        ".",
        ",",
        "1.",
        "#",
        "=",
        "+",
        "-",
        "_",
        "<",
        "&",
        "[x](y)",
        "\\",
        "\t",
        "{: .c }",
        "é",
        "\u2028",
        "'\"",
        "?",
        "???",
        "#!",
        ":::",
        "^^",
        "~~",
    ]
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=14).map("".join))
def test_accepted_texts_convert_as_python_markdown_does(text: str) -> None:
    html = to_html(text)
    if html is not None:
        assert html == _oracle(text)
        assert html == _oracle(text, _ALL_PLAIN)
