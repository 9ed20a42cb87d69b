"""A code block's HTML written from its tokens, as the site's Pygments formatter writes it.

pymdownx.highlight formats a fenced block with its `BlockHtmlFormatter`, an `HtmlFormatter` whose
output passes through a stack of generators, one per wrapper (lines, highlighted lines, line
anchors, line spans, `<code>`, `<pre>`, the line-number table, the `<div>`): at whole-torch size
that stack cost more CPU than anything else in a block but the lexing. `write` produces the same
text in one pass over the tokens for the options errcat's pages use: a table of line numbers or
none, line anchors and spans, highlighted lines, any first line number. `Layout.of` reads those
options off the formatter and declines (None) any other option, value or formatter class; the
caller then lets Pygments format the block, so the HTML is the same either way.

`tests/engine/test_codeformat.py` compares `write` with Pygments on random code, and the highlighter
compares every probe block (`PROBES`) both ways once per build before trusting it, so another
Pygments or pymdownx release that writes something differently turns this off rather than
changing a site.
"""

from __future__ import annotations

import html
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pymdownx.highlight import BlockHtmlFormatter  # type: ignore[import-untyped]

Tokens = Iterable[tuple[Any, str]]
"""A lexer's tokens: (token type, text) pairs."""

_DEFAULTS = {
    "nowrap": False,
    "full": False,
    "noclasses": False,
    "tagsfile": "",
    "debug_token_types": False,
    "lineseparator": "\n",
    "wrapcode": True,
    "filename": "",
    "prestyles": "",
    "cssstyles": "",
    "classprefix": "",
    "linenostep": 1,
    "linenospecial": 0,
    "pymdownx_inline": False,
}
"""Formatter attributes `write` knows only at these values (what pymdownx sets for a fence
without a title, a line step or special lines)."""
_OPTIONS = operator.attrgetter(*_DEFAULTS)
_KNOWN = tuple(_DEFAULTS.values())


@dataclass(frozen=True)
class Layout:
    """The options of one block's formatter that change its HTML around the tokens."""

    css_class: str
    """The wrapping div's class, HTML-escaped (`highlight`)."""
    table: bool
    """Line numbers in a table beside the code (pymdownx's `table` style)."""
    first: int
    """Number of the first line (1-based)."""
    highlighted: frozenset[int]
    """Lines wrapped as highlighted, counted from 1 whatever `first` is."""
    anchors: str
    """Prefix of each line's anchor id (`__codelineno-0`), or "" for none; HTML-escaped."""
    spans: str
    """Prefix of each line's span id (`__span-0`), or "" for none; HTML-escaped."""
    anchored_numbers: bool
    """Line numbers link to their line."""

    @staticmethod
    def of(formatter: Any) -> Layout | None:
        """The layout of pymdownx's block formatter (or of errcat's subclasses of it), or None
        for another formatter class or an option `write` does not write."""
        # errcat's own subclasses say they write what pymdownx's writes (`errcat_writes_as`).
        if getattr(type(formatter), "errcat_writes_as", type(formatter)) is not BlockHtmlFormatter:
            return None
        try:
            if _OPTIONS(formatter) != _KNOWN:
                return None
            hl_lines, first = formatter.hl_lines, formatter.linenostart
            texts = (formatter.cssclass, formatter.lineanchors, formatter.linespans)
        except AttributeError:
            return None
        if formatter.linenos not in (0, 1) or type(first) is not int:
            return None
        if type(hl_lines) is not set or not all(type(n) is int for n in hl_lines):
            return None
        if not all(type(text) is str for text in texts):
            return None
        return Layout(
            css_class=formatter.cssclass,
            table=formatter.linenos == 1,
            first=formatter.linenostart,
            highlighted=frozenset(hl_lines),
            anchors=formatter.lineanchors,
            spans=formatter.linespans,
            anchored_numbers=bool(formatter.anchorlinenos),
        )


class _Spans(dict[Any, str]):
    """The span each token type opens ("" for none), one string per distinct span so that
    neighbours compare by identity."""

    def __init__(self, classes: Callable[[Any], str]) -> None:
        super().__init__()
        self.classes = classes

    def __missing__(self, ttype: Any) -> str:
        names = self.classes(ttype)
        opening = f'<span class="{names}">' if names else ""
        tag = self[ttype] = next((t for t in self.values() if t == opening), opening)
        return tag


def spans(classes: Callable[[Any], str]) -> dict[Any, str]:
    """A table of the span each token type opens, filled from `classes` (a formatter's
    lookup of a type's CSS classes) as types come up; keep it for the next blocks."""
    return _Spans(classes)


def _lines(tokens: Tokens, tags: dict[Any, str]) -> list[str]:
    """The HTML of each line of the code, without its line end. A token's text is escaped and
    wrapped in a span of its type's classes; neighbouring text of the same classes shares one
    span, and a span never crosses a line end (it closes before and opens again after)."""
    # Runs of text whose spans have the same classes, empty tokens left out: escaping and
    # splitting a run at once gives each line the spans the formatter writes.
    run_tags: list[str] = []
    run_texts: list[str] = []
    run: list[str] = []
    run_tag = None
    for ttype, value in tokens:
        tag = tags[ttype]
        if tag is run_tag:
            run.append(value)
        elif value:
            if run:
                run_texts.append("".join(run))
            run_tags.append(tag)
            run = [value]
            run_tag = tag
    if run:
        run_texts.append("".join(run))
    # Escaped all at once, between separators the code does not hold.
    joined = "\x00".join(run_texts)
    if joined.count("\x00") == len(run_texts) - 1:
        escaped = html.escape(joined, quote=False).split("\x00")
    else:
        escaped = [html.escape(text, quote=False) for text in run_texts]
    pieces = [
        text
        if not tag
        else f"{tag}{text}</span>"
        if "\n" not in text
        # Closed before each line end and opened again after it, and never left empty.
        else f"{tag}{text.replace(chr(10), '</span>' + chr(10) + tag)}</span>".replace(
            f"{tag}</span>", ""
        )
        for tag, text in zip(run_tags, escaped, strict=True)
    ]
    lines = "".join(pieces).split("\n")
    if lines[-1] == "":
        lines.pop()  # the line end of the last line (otherwise, code without one)
    return lines


def _escape_braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def write(layout: Layout, tokens: Tokens, tags: dict[Any, str]) -> str:
    """The formatter's HTML for `tokens`; `tags` is the span each token type opens (`spans`)."""
    lines = _lines(tokens, tags)
    first = layout.first
    anchors, spans = _escape_braces(layout.anchors), _escape_braces(layout.spans)
    # A line as {1}, numbered {0}; without a table the anchor links to itself (with one, the
    # line number does).
    template = "{1}"
    if anchors:
        link = f' href="#{anchors}-{{0}}"' if not layout.table else ""
        template = f'<a id="{anchors}-{{0}}" name="{anchors}-{{0}}"{link}></a>{template}'
    if spans:
        template = f'<span id="{spans}-{{0}}">{template}</span>'
    highlighted = {number - 1 for number in layout.highlighted}
    code = [
        template.format(
            first + count,
            f'<span class="hll">{text}\n</span>' if count in highlighted else f"{text}\n",
        )
        for count, text in enumerate(lines)
    ]
    body = f"<pre><span></span><code>{''.join(code)}</code></pre>"
    if layout.table:
        last = first + len(lines) - 1
        width = len(str(last))
        target = layout.anchors or layout.spans
        numbers = [
            f'<span class="normal"><a href="#{target}-{number}">{str(number).rjust(width)}</a></span>'
            if layout.anchored_numbers
            else f'<span class="normal">{str(number).rjust(width)}</span>'
            for number in range(first, last + 1)
        ]
        body = (
            f'<table class="{layout.css_class}table"><tr><td class="linenos">'
            f'<div class="linenodiv"><pre><span></span>{chr(10).join(numbers)}</pre></div></td>'
            f'<td class="code"><div>{body}</div></td></tr></table>'
        )
    opening = f'<div class="{layout.css_class}">' if layout.css_class else "<div>"
    return f"{opening}{body}</div>\n"


_PROBE_CODE = (
    "def f(a, b='<&>'):\n"
    '\t"""Doc\n'
    "\n"
    '    string."""  # caf\u00e9 \u2603\n'
    "    return a  &  b < 3 > 1\n"
    "\n"
    "\n"
    "x = f'{1!r}' \\\n"
    '    + "\u00e9"   \n'
)
PROBES: tuple[tuple[str, str, str], ...] = tuple(
    (code, language, options)
    for code in (_PROBE_CODE, "\n\n  one line\t\n\n", "x")
    for language in ("python", "text")
    for options in (
        "",
        'linenums="1"',
        'linenums="7" hl_lines="2 3"',
        'linenums="95" hl_lines="1 4-6 9"',
        'hl_lines="2"',
    )
)
"""(code, language, fence options) of every shape the highlighter formats through `write`:
with and without line numbers, highlighted lines, a first line whose numbers grow a digit,
blank, indented, tabbed and padded lines, strings across lines, `<&>`, quotes and non-ASCII."""
