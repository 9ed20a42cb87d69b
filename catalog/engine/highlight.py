"""HTML for a page's code blocks (`catalog.pages.blocks`), as the site's Markdown writes them.

Code goes through the very highlighter the site configures (pymdownx.superfences and
pymdownx.highlight, with the site's settings), called the way superfences calls it for a fence
in the page, numbering included: the HTML is what an inline fence would have become. The
accelerator caches it by content, so Pygments runs once per distinct block and never again
while the block stays the same.

What Pygments would redo for every block of a cold build is done once here: the lexer is
looked up once per language, the tokens of code seen moments ago (the same function shown for
several of its raises) are reused, and the formatter's style table, the same for every block,
is computed once. None of this changes the HTML.

Formatting, the formatter's stack of wrappers, is done by `catalog.engine.codeformat` for the
options errcat's fences use, from the same tokens; at the start of a build every probe block is
formatted both ways, and any difference leaves formatting to Pygments for the build.

Both the style table's memo and that formatting are subclasses of pymdownx's block formatter
(`catalog.engine.pygments_internals`) which only this highlighter's blocks are formatted with:
Pygments itself is left as it is for every other formatter in the process.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import html
import re
from collections.abc import Callable
from typing import Any

import markdown  # type: ignore[import-untyped]  # no stubs in the pinned set
from pygments.lexers import find_lexer_class_by_name  # type: ignore[import-untyped]

from catalog.engine import codeformat, pygments_internals
from catalog.engine.lexing import accelerate
from catalog.pages.blocks import CodeBlock

_OPTION = re.compile(r'(?P<name>[A-Za-z_][\w-]*)="(?P<value>[^"]*)"')
_PROBE = re.compile(r"errcatline(\d+)x")
_UNSAFE_TEXT = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]|errcatline\d")
"""What keeps a message from the `text` fast path: characters a lexer or formatter may treat
specially, and the placeholder words themselves."""
_RECENT_CODE = 256
"""Distinct pieces of code whose tokens are kept: a module's entries are rendered together, so
the same function comes back within a few pages."""


class HighlightUnavailable(Exception):
    """The site's Markdown has no superfences block preprocessor to highlight with."""


class _Tokens:
    """A lexer that answers `get_tokens` from the tokens of the same code lexed recently."""

    def __init__(self, lexer: Any, recent: collections.OrderedDict[tuple[str, str], list[Any]]):
        self._lexer = lexer
        self._recent = recent
        self._name = f"{type(lexer).__qualname__}:{sorted(lexer.options.items())!r}"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lexer, name)

    def get_tokens(self, text: str, unfiltered: bool = False) -> list[Any]:
        key = (self._name, text)
        tokens = self._recent.get(key)
        if tokens is None:
            tokens = list(self._lexer.get_tokens(text, unfiltered))
            self._recent[key] = tokens
            if len(self._recent) > _RECENT_CODE:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(key)
        return tokens


class CodeHighlighter:
    """Highlights code blocks with the highlighter of a configured Markdown instance."""

    def __init__(self, md: markdown.Markdown, settings: str) -> None:
        """`settings` identifies the Markdown configuration (extensions and their options):
        blocks are cached per settings. Lexers lex through `catalog.engine.lexing` (the same
        tokens, found sooner)."""
        fenced: Any = None
        with contextlib.suppress(KeyError):
            fenced = md.preprocessors["fenced_code_block"]
        if fenced is None or not all(
            hasattr(fenced, name) for name in ("highlight", "get_hl_settings", "extension")
        ):
            raise HighlightUnavailable("no pymdownx.superfences in the site's Markdown")
        fenced.get_hl_settings()
        if getattr(fenced, "highlight_ext", None) is None or fenced.highlighter is None:
            raise HighlightUnavailable("no pymdownx.highlight in the site's Markdown")
        problem = pygments_internals.probe()
        if problem is not None:
            raise HighlightUnavailable(f"Pygments' internals ({problem})")
        self._md = md
        self._fenced = fenced
        self._settings = settings
        self.custom = {str(f.get("name")) for f in fenced.extension.superfences[1:]}
        """Languages with a custom fence of their own, which `highlight` does not format."""
        lexers: dict[tuple[str, bool, bool], tuple[Any, str]] = {}
        recent: collections.OrderedDict[tuple[str, str], list[Any]] = collections.OrderedDict()
        base = fenced.highlighter
        if pygments_internals.makes_block_formatter(base):
            # pymdownx's own: its blocks get errcat's formatters (`pygments_internals`).
            memo = pygments_internals.highlight_function(base, pygments_internals.MemoFormatter)
            written = pygments_internals.highlight_function(
                base, pygments_internals.WrittenFormatter
            )
        else:  # a highlighter of its own: its formatting is left as it is
            memo = written = base.highlight
        self._formatting: tuple[Callable[..., Any], Callable[..., Any]] = (memo, written)
        chosen = [memo]
        self._chosen = chosen
        """The formatting of the next block: `memo` or, if `codeformat` writes it, `written`."""

        class Reusing(base):  # type: ignore[misc,valid-type]
            """The site's highlighter, with lexers and recent tokens kept between blocks, and
            its blocks formatted by errcat's formatter subclasses."""

            def highlight(self, *args: Any, **kwargs: Any) -> Any:
                return chosen[0](self, *args, **kwargs)

            def get_lexer(self, src: str, language: str, inline: bool, stripnl: bool) -> Any:
                key = (language, inline, stripnl)
                found = lexers.get(key)
                if found is None:
                    found = super().get_lexer(src, language, inline, stripnl)
                    # Only a lexer found by name is the same for any code.
                    with contextlib.suppress(Exception):
                        find_lexer_class_by_name(language)
                        lexers[key] = found
                        accelerate(found[0])
                return _Tokens(found[0], recent), found[1]

        # Only this Markdown instance's superfences uses it.
        fenced.highlighter = Reusing
        self._text_templates: dict[tuple[int, int], list[str]] = {}
        self.written = False
        """Blocks are formatted by `codeformat` (every probe block came out as from Pygments)."""
        self.written = self._probe_formatting()

    def _probe_formatting(self) -> bool:
        """Whether every `codeformat.PROBES` block comes out of `codeformat` as out of the
        site's Pygments formatter (as a page's third block: ids carry the count)."""
        ext = self._fenced.highlight_ext
        saved = (ext.pygments_code_block, getattr(self._fenced, "line_count", None))
        try:
            for code, language, options in codeformat.PROBES:
                expected = self._highlight(code, language, options, 2, written=False)
                if self._highlight(code, language, options, 2, written=True) != expected:
                    return False
            return True
        finally:
            ext.pygments_code_block, self._fenced.line_count = saved

    def key(self, block: CodeBlock, index: int) -> str:
        """The cache key of `block` as the `index`-th highlighted block of a page."""
        text = f"{self._settings}\0{index}\0{block.digest}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def html(self, block: CodeBlock, index: int) -> str:
        """`block` highlighted as the `index`-th (0-based) highlighted block of a page."""
        code = block.code.rstrip()
        if block.language == "text" and not block.options:
            plain = self._plain_text(code, index)
            if plain is not None:
                self.skip(index)  # superfences' count of blocks, as if it had written this one
                return plain
        return self._highlight(code, block.language, block.options, index)

    def _plain_text(self, code: str, index: int) -> str | None:
        """A `text` block (an error message) without Pygments: the HTML the highlighter wrote
        for as many lines of placeholder words at the same place in a page, each placeholder
        replaced by its line, escaped as Pygments escapes text. None for text whose lines
        Pygments might change (blank or padded lines, tabs, control or separator characters)."""
        lines = code.split("\n")
        if _UNSAFE_TEXT.search(code) or any(line != line.strip() or not line for line in lines):
            return None
        key = (index, len(lines))
        parts = self._text_templates.get(key)
        if parts is None:
            probe = "\n".join(f"errcatline{number}x" for number in range(len(lines)))
            pieces = _PROBE.split(self._highlight(probe, "text", "", index))
            # Kept only if every placeholder came back once, whole and in order.
            if pieces[1::2] != [str(number) for number in range(len(lines))]:
                return None
            parts = self._text_templates[key] = pieces[0::2]
        out = [parts[0]]
        for line, after in zip(lines, parts[1:], strict=True):
            out += [html.escape(line, quote=False), after]
        return "".join(out)

    def _highlight(
        self, code: str, language: str, option_text: str, index: int, *, written: bool | None = None
    ) -> str:
        """`code` as superfences highlights it; formatted by `codeformat` if `written` (by
        default, if the probe found it writes what Pygments writes)."""
        options = {m.group("name"): m.group("value") for m in _OPTION.finditer(option_text)}
        # superfences numbers blocks by counting them: its count before this block is index-1;
        # it clamps highlighted lines to the block's length, which it sets before the call.
        self._fenced.highlight_ext.pygments_code_block = index - 1
        self._fenced.line_count = code.count("\n") + 1
        self._chosen[0] = self._formatting[self.written if written is None else written]
        html: str = self._fenced.highlight(
            src=code,
            language=language,
            options=options,
            md=self._md,
            classes=[],
            id_value="",
            attrs={},
        )
        return html

    def skip(self, index: int) -> None:
        """Count the `index`-th block as highlighted (its HTML came from the cache)."""
        self._fenced.highlight_ext.pygments_code_block = index
