"""Templates of f-strings read from their source text, without building a libcst tree.

Most messages are f-strings, and parsing each one with libcst (to read its fields' source as
written) was the largest share of a cold scan after `ast.parse` itself. The source of an
f-string already holds everything a template needs: the literal runs as written and each
field's expression, conversion and format spec. `joined_template` splits the source the way
Python's tokenizer does and gives exactly what `templates.template_of` gives for the libcst
tree of the same source; where the source holds anything it does not expect, it gives None and
the caller reads the expression with libcst as before, so an unusual spelling costs speed only.
"""

from __future__ import annotations

import ast
import re

from extractor.literals import escape, fstring_text, python_line_ends

_PREFIX = re.compile(r"([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")
_BLANK = re.compile(r"(?:[ \t\f\r\n]+|\\\r?\n|#[^\r\n]*)+")
_SPACE = " \t\f\r\n"


class _Unexpected(Exception):
    """The source is not one this reader covers: libcst reads it instead."""


def joined_template(source: str) -> str | None:
    """The template of a string expression as written: adjacent string literals, f-strings
    among them (no bytes), separated only by blanks, line continuations and comments. None
    for any other source, or one this reader does not cover."""
    try:
        return _Reader(source).strings()
    except (_Unexpected, IndexError, SyntaxError, ValueError):
        return None


class _Reader:
    def __init__(self, source: str) -> None:
        self.text = source
        self.at = 0

    def strings(self) -> str:
        pieces: list[str] = []
        while True:
            self.skip_blanks()
            if self.at == len(self.text):
                break
            pieces.append(self.string())
        if not pieces:
            raise _Unexpected
        return "".join(pieces)

    def skip_blanks(self) -> None:
        found = _BLANK.match(self.text, self.at)
        if found is not None:
            self.at = found.end()

    def string(self) -> str:
        found = _PREFIX.match(self.text, self.at)
        if found is None:
            raise _Unexpected
        prefix, quote = found.group(1).lower(), found.group(2)
        if "b" in prefix:
            raise _Unexpected  # bytes are no message
        start = self.at
        self.at = found.end()
        if "f" not in prefix:
            body_start = self.at
            self.plain_body(quote)
            body = self.text[body_start : self.at - len(quote)]
            if "\\" not in body or "r" in prefix:
                return escape(python_line_ends(body))
            value = ast.literal_eval(self.text[start : self.at])
            if not isinstance(value, str):
                raise _Unexpected
            return escape(value)
        return self.formatted_body(quote, "r" in prefix)

    def plain_body(self, quote: str) -> None:
        """Moves past the closing quote of a plain literal's body."""
        text = self.text
        while True:
            char = text[self.at]
            if char == "\\":
                self.at += 2
            elif text.startswith(quote, self.at):
                self.at += len(quote)
                return
            elif len(quote) == 1 and char in "\r\n":
                raise _Unexpected
            else:
                self.at += 1

    def formatted_body(self, quote: str, raw: bool) -> str:
        """The template of an f-string's body, up to and past its closing quote."""
        text = self.text
        pieces: list[str] = []
        run_start = self.at
        while True:
            char = text[self.at]
            if text.startswith(quote, self.at):
                pieces.append(self.run(run_start, quote, raw))
                self.at += len(quote)
                return "".join(pieces)
            if char == "\\":
                if not raw and text.startswith("\\N{", self.at):
                    end = text.index("}", self.at)
                    self.at = end + 1
                elif text[self.at + 1] in "{}":
                    self.at += 1  # no escape: a brace after a backslash is still a brace
                else:
                    self.at += 2
            elif text.startswith(("{{", "}}"), self.at):
                self.at += 2
            elif char == "{":
                pieces.append(self.run(run_start, quote, raw))
                self.at += 1
                pieces.append(self.field(quote))
                run_start = self.at
            elif char == "}":
                raise _Unexpected  # a single closing brace is a syntax error
            elif len(quote) == 1 and char in "\r\n":
                raise _Unexpected
            else:
                self.at += 1

    def run(self, start: int, quote: str, raw: bool) -> str:
        raw_text = self.text[start : self.at]
        return fstring_text(raw_text, raw, quote) if raw_text else ""

    def field(self, quote: str) -> str:
        """A replacement field after its `{`, up to and past its `}`, as a template field."""
        text = self.text
        start = self.at
        end = self.expression_end(quote)
        expression = text[start:end]
        if not expression.strip():
            raise _Unexpected
        self.at = end
        head = "{" + expression.strip()
        if text[self.at] == "=":
            # A self-documenting field prints its source and spacing as written.
            self.at += 1
            while text[self.at] in _SPACE:
                self.at += 1
            head = "{" + text[start : self.at]
        if text[self.at] == "!":
            conversion = text[self.at + 1]
            if conversion not in "rsa":
                raise _Unexpected
            head += "!" + conversion
            self.at += 2
        if text[self.at] == ":":
            self.at += 1
            head += ":" + self.spec(quote)
        if text[self.at] != "}":
            raise _Unexpected
        self.at += 1
        return head + "}"

    def spec(self, quote: str) -> str:
        """A format spec up to its field's `}` (not past it): literal text as written, nested
        fields as template fields."""
        text = self.text
        pieces: list[str] = []
        run_start = self.at
        while True:
            char = text[self.at]
            if char == "}":
                pieces.append(text[run_start : self.at])
                return "".join(pieces)
            if char == "{":
                pieces.append(text[run_start : self.at])
                self.at += 1
                pieces.append(self.field(quote))
                run_start = self.at
            elif char == "\\" or text.startswith(quote, self.at) or char in "\r\n":
                raise _Unexpected
            else:
                self.at += 1

    def expression_end(self, quote: str) -> int:
        """Where a field's expression ends: its `=`, `!`, `:` or `}` outside brackets and
        strings."""
        text = self.text
        at = self.at
        depth = 0
        while True:
            char = text[at]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    if char != "}":
                        raise _Unexpected
                    return at
                depth -= 1
            elif char in "'\"":
                if text.startswith(quote, at):
                    raise _Unexpected  # the enclosing quote (allowed from Python 3.12 only)
                at = self.nested_string_end(at)
                continue
            elif char in "\\#":
                raise _Unexpected
            elif depth == 0 and (char == ":" or (char == "!" and text[at + 1] != "=")):
                return at
            elif depth == 0 and char == "=":
                if text[at + 1] == "=" or text[at - 1] in "=<>!":
                    at += 2 if text[at + 1] == "=" else 1
                    continue
                return at
            at += 1

    def nested_string_end(self, at: int) -> int:
        """The end of a string literal inside a field's expression (no f-string, whose
        braces would need reading of their own)."""
        text = self.text
        head = at
        while head > 0 and text[head - 1] in "rRbBuU":
            head -= 1
        if head > 0 and text[head - 1] in "fF":
            raise _Unexpected
        for quote in ('"""', "'''", '"', "'"):
            if text.startswith(quote, at):
                break
        at += len(quote)
        while not text.startswith(quote, at):
            if text[at] == "\\" or (len(quote) == 1 and text[at] in "\r\n"):
                raise _Unexpected
            at += 1
        return at + len(quote)
