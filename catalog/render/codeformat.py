"""A code block's HTML written from its tokens, as the site's Pygments formatter writes it.

pymdownx.highlight formats a fenced block with its `BlockHtmlFormatter`, an `HtmlFormatter` whose
output passes through a stack of generators, one per wrapper (lines, highlighted lines, line
anchors, line spans, `<code>`, `<pre>`, the line-number table, the `<div>`): at whole-torch size
that stack cost more CPU than anything else in a block but the lexing. `write` produces the same
text in one pass over the tokens for the options errcat's pages use: a table of line numbers or
none, line anchors and spans, highlighted lines, any first line number. `Layout.of` reads those
options off the formatter and declines (None) any other option, value or formatter class; the
caller then lets Pygments format the block, so the HTML is the same either way.

`tests/test_codeformat.py` compares `write` with Pygments on random code, and the highlighter
compares every probe block (`PROBES`) both ways once per build before trusting it, so another
Pygments or pymdownx release that writes something differently turns this off rather than
changing a site.
"""

from __future__ import annotations

import html
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
        """The layout of pymdownx's block formatter, or None for another formatter class or
        an option `write` does not write."""
        if type(formatter) is not BlockHtmlFormatter:
            return None
        for name, value in _DEFAULTS.items():
            found = getattr(formatter, name, None)
            if found != value or type(found) is not type(value):
                return None
        if formatter.linenos not in (0, 1) or not isinstance(formatter.linenostart, int):
            return None
        hl_lines = formatter.hl_lines
        if not isinstance(hl_lines, set) or not all(type(n) is int for n in hl_lines):
            return None
        texts = (formatter.cssclass, formatter.lineanchors, formatter.linespans)
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


def _lines(tokens: Tokens, classes: Callable[[Any], str], tags: dict[Any, str]) -> list[str]:
    """The HTML of each line of the code, without its line end. A token's text is escaped and
    wrapped in a span of its type's classes; neighbouring text of the same classes shares one
    span, and a span never crosses a line end (it closes before and opens again after)."""
    # Runs of text whose spans have the same classes, empty tokens left out: escaping and
    # splitting a run at once gives each line the spans the formatter writes.
    runs: list[tuple[str, str]] = []
    run_tag = ""
    run: list[str] = []
    for ttype, value in tokens:
        if not value:
            continue
        tag = tags.get(ttype)
        if tag is None:
            names = classes(ttype)
            tag = tags[ttype] = f'<span class="{names}">' if names else ""
        if tag == run_tag or not run:
            run.append(value)
        else:
            runs.append((run_tag, "".join(run)))
            run = [value]
        run_tag = tag
    if run:
        runs.append((run_tag, "".join(run)))
    lines: list[str] = []
    line: list[str] = []
    for tag, text in runs:
        escaped = html.escape(text, quote=False)
        close = "</span>" if tag else ""
        if "\n" not in escaped:
            line.append(f"{tag}{escaped}{close}")
            continue
        parts = escaped.split("\n")
        if parts[0]:
            line.append(f"{tag}{parts[0]}{close}")
        lines.append("".join(line))
        lines += [f"{tag}{part}{close}" if part else "" for part in parts[1:-1]]
        line = [f"{tag}{parts[-1]}{close}"] if parts[-1] else []
    if line:
        lines.append("".join(line))  # code that does not end with a line end
    return lines


def write(
    layout: Layout, tokens: Tokens, classes: Callable[[Any], str], tags: dict[Any, str]
) -> str:
    """The formatter's HTML for `tokens`. `classes` gives a token type's CSS classes (the
    formatter's own lookup); `tags` keeps the span each type opens, for the next blocks."""
    lines = _lines(tokens, classes, tags)
    first, highlighted = layout.first, layout.highlighted
    anchors, spans = layout.anchors, layout.spans
    # Without a table the anchor links to itself; with one the line number does.
    self_link = not layout.table
    code: list[str] = []
    for count, text in enumerate(lines, 1):
        number = first + count - 1
        piece = f"{text}\n"
        if count in highlighted:
            piece = f'<span class="hll">{piece}</span>'
        if anchors:
            name = f"{anchors}-{number}"
            link = f' href="#{name}"' if self_link else ""
            piece = f'<a id="{name}" name="{name}"{link}></a>{piece}'
        if spans:
            piece = f'<span id="{spans}-{number}">{piece}</span>'
        code.append(piece)
    body = f"<pre><span></span><code>{''.join(code)}</code></pre>"
    if layout.table:
        last = first + len(lines) - 1
        width = len(str(last))
        target = anchors or spans
        numbers = []
        for number in range(first, last + 1):
            shown = str(number).rjust(width)
            if layout.anchored_numbers:
                shown = f'<a href="#{target}-{number}">{shown}</a>'
            numbers.append(f'<span class="normal">{shown}</span>')
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
