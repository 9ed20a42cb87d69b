"""Pygments' private names that errcat's highlighting leans on, reached from here only, with a
probe; and the formatter subclasses errcat highlights with.

What Pygments keeps private and errcat uses: a regex lexer's compiled rules (`_tokens`) and the
class of token types (`pygments.token._TokenType`), which `catalog.engine.lexing` needs to find
the same tokens sooner; the HTML formatter's style table (`_create_stylesheet`, filling
`ttype2class` and `class2style`) and its lookup of a token type's classes (`_get_css_classes`),
which errcat computes once instead of once per block. pymdownx.highlight builds its block
formatter by the module name `BlockHtmlFormatter` inside `Highlight.highlight`; errcat's own
highlighter gets a copy of that function reading errcat's subclass under that name instead
(`highlight_function`), so only the code blocks errcat formats use it and every other
formatter in the process stays Pygments' own.

`probe`, run when a build's highlighter is made, checks that this Pygments and pymdownx still
have each of these names in the shape used; where one differs, the build's pages are
converted by MkDocs itself (one log line says why).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

from pygments.formatters.html import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexer import RegexLexer  # type: ignore[import-untyped]
from pygments.lexers.python import PythonLexer  # type: ignore[import-untyped]
from pygments.token import Token, _TokenType  # type: ignore[import-untyped]
from pymdownx import highlight as pymdownx_highlight  # type: ignore[import-untyped]
from pymdownx.highlight import BlockHtmlFormatter  # type: ignore[import-untyped]

from catalog.engine import codeformat

TokenType: Any = _TokenType
"""The class of Pygments' token types: a rule's action of this class is a plain token."""


def lexer_rules(lexer: Any) -> dict[str, list[Any]]:
    """A regex lexer's (or lexer class's) compiled rules by state, as Pygments runs them."""
    rules: dict[str, list[Any]] = lexer._tokens
    return rules


@functools.cache
def probe() -> str | None:
    """None when Pygments and pymdownx have every private name used here in the shape used;
    otherwise what differs, for the log line that turns the fast path off."""
    if not isinstance(Token.Text, _TokenType):
        return "pygments.token._TokenType no longer types tokens"
    try:
        rules = lexer_rules(PythonLexer())
    except AttributeError:
        return "regex lexers no longer keep their rules in _tokens"
    if not isinstance(rules, dict) or not all(len(rule) == 3 for rule in rules["root"]):
        return "regex lexers' rules changed shape"
    if not {"_tokens", "_TokenType"} <= set(RegexLexer.get_tokens_unprocessed.__code__.co_names):
        return "RegexLexer.get_tokens_unprocessed reads its rules differently"
    if "_create_stylesheet" not in HtmlFormatter.__init__.__code__.co_names:
        return "HtmlFormatter no longer builds its style table in _create_stylesheet"
    formatter = BlockHtmlFormatter()
    if not isinstance(getattr(formatter, "ttype2class", None), dict) or not isinstance(
        getattr(formatter, "class2style", None), dict
    ):
        return "HtmlFormatter's style table changed"
    if not callable(getattr(formatter, "_get_css_classes", None)):
        return "HtmlFormatter._get_css_classes is gone"
    build = pymdownx_highlight.Highlight.highlight
    if "BlockHtmlFormatter" not in build.__code__.co_names or build.__closure__:
        return "pymdownx's Highlight.highlight no longer makes a BlockHtmlFormatter by name"
    return None


_STYLE_TABLES: dict[tuple[Any, str], tuple[dict[Any, str], dict[str, Any]]] = {}
"""Style tables by (style, class prefix), computed once per process."""


class MemoFormatter(BlockHtmlFormatter):  # type: ignore[misc]
    """pymdownx's block formatter with its style table taken from a memo: the table depends on
    the style and the class prefix only (see `HtmlFormatter`), yet is computed per block."""

    errcat_writes_as = BlockHtmlFormatter
    """What `codeformat.Layout.of` is to read this formatter as: it writes what that writes."""
    ttype2class: dict[Any, str]
    class2style: dict[str, Any]

    def _create_stylesheet(self) -> None:
        key = (self.style, self.classprefix)
        tables = _STYLE_TABLES.get(key)
        if tables is None:
            super()._create_stylesheet()
            tables = _STYLE_TABLES[key] = (dict(self.ttype2class), dict(self.class2style))
        self.ttype2class, self.class2style = dict(tables[0]), dict(tables[1])


_SPAN_TAGS: list[dict[Any, str]] = []
"""The span each token type opens, kept across blocks: it depends on the type only, for the
formatter `codeformat.Layout` accepts (no class prefix)."""


class WrittenFormatter(MemoFormatter):
    """`MemoFormatter` whose blocks are formatted in one pass by `codeformat` where it knows
    the options (`codeformat.Layout.of`), and by Pygments otherwise."""

    def format_unencoded(self, tokensource: Any, outfile: Any) -> None:
        layout = codeformat.Layout.of(self)
        if layout is None:
            super().format_unencoded(tokensource, outfile)
            return
        if not _SPAN_TAGS:
            _SPAN_TAGS.append(codeformat.spans(self._get_css_classes))
        outfile.write(codeformat.write(layout, tokensource, _SPAN_TAGS[0]))


def makes_block_formatter(highlighter: Any) -> bool:
    """Whether `highlighter` (a superfences highlighter class) formats blocks with pymdownx's
    own `Highlight.highlight`, which `highlight_function` can give errcat's formatters."""
    return highlighter.highlight is pymdownx_highlight.Highlight.highlight


def highlight_function(highlighter: Any, formatter: type) -> Callable[..., Any]:
    """`highlighter.highlight` (pymdownx's `Highlight.highlight`) as a new function that makes
    `formatter` where it made a `BlockHtmlFormatter`: for a subclass of the highlighter to use,
    leaving pymdownx's module and every other highlighter as they are."""
    function: Any = highlighter.highlight
    names = dict(function.__globals__)
    names["BlockHtmlFormatter"] = formatter
    copy = types.FunctionType(
        function.__code__, names, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy
