"""Literal text of messages: braces escaped for templates, string runs decoded as Python reads
them, gettext calls and the functions whose result on a literal is literal text.

What reading a message needs without a syntax tree of its own: `extract.py` and `fstrings.py`
read most messages with these alone, and `templates.py` (libcst) builds on them for the rest.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable

LITERAL_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "textwrap.dedent": textwrap.dedent,
    "inspect.cleandoc": inspect.cleandoc,
}
"""Functions of literal text whose result rule 5 computes: pure and deterministic."""
TEXT_FUNCTIONS = frozenset(LITERAL_FUNCTIONS)
"""Their qualified names, for a caller that rules calls out before parsing them."""
TEXT_METHODS: dict[str, Callable[[str], str]] = {
    "strip": str.strip,
    "lstrip": str.lstrip,
    "rstrip": str.rstrip,
}
"""Methods of `str` that, called without arguments on literal text, give literal text
(`textwrap.dedent(...).strip()` of a triple-quoted literal, as long messages are written)."""
GETTEXT = {
    **dict.fromkeys(("_", "gettext", "ugettext", "lazy_gettext", "gettext_lazy"), 0),
    **dict.fromkeys(("ngettext", "ungettext", "ngettext_lazy", "lazy_ngettext"), 0),
    **dict.fromkeys(("pgettext", "pgettext_lazy", "npgettext", "npgettext_lazy"), 1),
}
"""Translation calls by the last part of their name, with the index of the argument that holds
the source-language text (after the context, for the `p` variants). Matched by that name
rather than by import, as `_` is installed into builtins by `gettext.install`."""


def gettext_argument(dotted: str | None, arguments: int) -> int | None:
    """The index of the text argument when a call of `dotted` with that many positional
    arguments is a gettext-style call, else None."""
    if dotted is None:
        return None
    index = GETTEXT.get(dotted.rpartition(".")[2])
    return index if index is not None and index < arguments else None


def escape(text: str) -> str:
    """Literal text as template text: braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def python_line_ends(text: str) -> str:
    """Literal text as Python reads it: its tokenizer turns a CRLF or a lone CR inside a
    triple-quoted literal into LF, so a file with Windows line ends still has LF in the value."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def fstring_text(raw: str, is_raw: bool, quote: str) -> str:
    """Template text of f-string literal text: escapes decoded, braces doubled."""
    if is_raw or "\\" not in raw:
        return python_line_ends(raw)  # the source already doubles literal braces
    # Undouble first so that a brace an escape produces (`\x7b`) is doubled like the others.
    plain = raw.replace("{{", "{").replace("}}", "}")
    try:
        value = ast.literal_eval(quote + plain + quote)
    except (SyntaxError, ValueError):
        return raw
    return escape(value) if isinstance(value, str) else raw
