"""The cheap locator: decode a file, and find its raise statements in the `ast` tree.

`raise` is a keyword, so a raise statement starts on a line holding the word; the tree is
entered only along the statements spanning such lines. The scopes met on the way are recorded
for qualified-name resolution; libcst only ever sees the expressions found here.

Code that also runs on Python 2 writes `raise X from Y` as a call, `six.raise_from(X, Y)`
(RAISING_CALLS): such a call statement is a raise too. Where its name resolves to one of
those functions, the walk puts a `raise X from Y` node in the statement's place in the tree,
so that everything after it (conditions, handlers, `errcat migrate`'s rewrite of `X`) reads
it as the raise statement it performs.
"""

from __future__ import annotations

import ast
import codecs
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import ClassVar

from extractor.files import ExtractorError
from extractor.imports import ModuleName, Scope, dotted_name, resolve

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
_NEWLINE = re.compile(r"\r\n|\r|\n")

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

RAISING_CALLS = frozenset({"six.raise_from", "future.utils.raise_from"})
"""Functions that raise their first argument from their second, as `raise X from Y` does."""
_RAISE_FROM = "raise_from"


class DecodeProblem(ExtractorError):
    """The bytes of a file are not text in its declared encoding. The scan turns it into a
    failure of that file (which fails `--strict`, hence exit 1 should one ever escape)."""

    exit_code: ClassVar[int] = 1

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message


def decode(data: bytes) -> str:
    """Decode source bytes as Python does: BOM, then a coding cookie on line 1 or 2, else UTF-8.

    Raises `DecodeProblem` with the position of the first bad byte.
    """
    encoding = "utf-8"
    if data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    elif b"coding" in data[:400]:
        for raw in data.split(b"\n", 2)[:2]:
            match = _COOKIE.match(raw)
            if match:
                encoding = match.group(1).decode("ascii")
                break
            if raw.strip() and not raw.lstrip().startswith(b"#"):
                break
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise DecodeProblem(1, 1, f"unknown encoding {encoding!r} in the coding cookie") from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise DecodeProblem(
            line, column, f"cannot decode as {encoding}: byte {data[exc.start]:#04x} ({exc.reason})"
        ) from None


def split_lines(source: str) -> list[str]:
    """Physical lines without their endings, split where the Python tokenizer splits them."""
    if "\r" not in source:
        return source.split("\n")
    return _NEWLINE.split(source)


@dataclass(frozen=True)
class Spot:
    """A raise statement found by the walk, with where it sits."""

    node: ast.Raise | ast.Return
    """The raise statement; or, where a message builder's text is read for a call (rule 8
    of `extractor.templates`), the builder's `return`, read as a raise's message is."""
    scope: Scope
    """The innermost scope holding the statement."""
    function: FunctionNode | None
    """The innermost enclosing function, for the docs snippet."""


@dataclass(frozen=True)
class Outline:
    """What the statement walk found in one module."""

    tree: ast.Module
    module_scope: Scope
    raises: list[Spot]
    """Raise statements in source order."""


def outline(tree: ast.Module, source: str, module: ModuleName | None = None) -> Outline:
    """Find the raise statements of `tree`, with their scopes.

    Only lines holding the word `raise` (or `raise_from`) are visited: from the module body
    down, a bisection on statement lines picks the statements that span such a line, so most
    of the tree is never touched. (The word in a string or comment just leads to no raise
    statement.) With `module`, a call statement of RAISING_CALLS is replaced in `tree` by the
    raise it performs (see the module docstring) and found as one.
    """
    module_scope = Scope("module", tree, None, None)
    finder = _Finder(module_scope, module)
    for line in raise_lines(source):
        finder.descend(tree.body, line, module_scope, None)
    finder.raises.sort(key=lambda spot: (spot.node.lineno, spot.node.col_offset))
    return Outline(tree, module_scope, finder.raises)


def raise_lines(source: str) -> list[int]:
    """1-based numbers of the lines holding the word `raise` or `raise_from`, ascending."""
    if "\r" in source:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    lines: list[int] = []
    position = 0
    line = 1
    # str.find is far faster than a regex with word boundaries; the boundaries are checked here.
    start = source.find("raise")
    while start != -1:
        end = start + 5
        before = source[start - 1] if start else " "
        if source.startswith(_RAISE_FROM, start):
            end = start + len(_RAISE_FROM)
        after = source[end] if end < len(source) else " "
        if not _is_name_char(before) and not _is_name_char(after):
            line += source.count("\n", position, start)
            position = start
            if not lines or lines[-1] != line:
                lines.append(line)
        start = source.find("raise", end)
    return lines


def _is_name_char(char: str) -> bool:
    return char.isalnum() or char == "_"


_COMPOUND_BODIES = {
    ast.If: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "orelse", "finalbody"),
    ast.TryStar: ("body", "orelse", "finalbody"),
}


class RaiseFromCall(ast.Raise):
    """The raise a call statement of RAISING_CALLS performs: a raise node whose `exc` and
    `cause` are the call's arguments, at the call statement's place."""


def raise_from_call(statement: ast.stmt) -> RaiseFromCall | None:
    """`raise X from Y` placed where a call statement `...raise_from(X, Y)` stands (two
    positional arguments, nothing else), whatever the name resolves to; None for any other
    statement. `errcat migrate` takes the scan's word that the call is one of RAISING_CALLS."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    call = statement.value
    func = call.func
    named = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if (
        named != _RAISE_FROM
        or len(call.args) != 2
        or call.keywords
        or any(isinstance(argument, ast.Starred) for argument in call.args)
    ):
        return None
    return ast.copy_location(RaiseFromCall(exc=call.args[0], cause=call.args[1]), statement)


class _Finder:
    def __init__(self, module_scope: Scope, module: ModuleName | None = None) -> None:
        self.module = module
        self.raises: list[Spot] = []
        self.scopes: dict[int, Scope] = {id(module_scope.node): module_scope}
        self.starts: dict[int, list[int]] = {}

    def descend(
        self, body: list[ast.stmt], line: int, scope: Scope, function: FunctionNode | None
    ) -> None:
        starts = self.starts.get(id(body))
        if starts is None:
            starts = self.starts[id(body)] = [statement.lineno for statement in body]
        index = bisect_right(starts, line)
        # Statements before `index` start at or above the line; those still open on it hold it
        # (several when `;` puts them on one line).
        while index > 0:
            index -= 1
            statement = body[index]
            end = statement.end_lineno or statement.lineno
            if end < line:
                break
            if isinstance(statement, ast.Expr) and self.module is not None:
                raised = self.raised_by_call(statement, scope, self.module)
                if raised is not None:
                    body[index] = statement = raised
            self.statement(statement, line, scope, function)

    @staticmethod
    def raised_by_call(statement: ast.Expr, scope: Scope, module: ModuleName) -> ast.Raise | None:
        raised = raise_from_call(statement)
        if raised is None:
            return None
        assert isinstance(statement.value, ast.Call)
        dotted = dotted_name(statement.value.func)
        resolved = None if dotted is None else resolve(dotted, scope, module)
        return raised if resolved in RAISING_CALLS else None

    def statement(
        self, node: ast.stmt, line: int, scope: Scope, function: FunctionNode | None
    ) -> None:
        if isinstance(node, ast.Raise):
            if node.lineno == line:
                self.raises.append(Spot(node, scope, function))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.descend(node.body, line, self.scope(node, "function", scope), node)
        elif isinstance(node, ast.ClassDef):
            self.descend(node.body, line, self.scope(node, "class", scope), function)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                self.descend(case.body, line, scope, function)
        else:
            for name in _COMPOUND_BODIES.get(type(node), ()):
                self.descend(getattr(node, name), line, scope, function)
            for handler in getattr(node, "handlers", ()):
                self.descend(handler.body, line, scope, function)

    def scope(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, kind: str, parent: Scope
    ) -> Scope:
        found = self.scopes.get(id(node))
        if found is None:
            qualname = f"{parent.qualname}.{node.name}" if parent.qualname else node.name
            found = self.scopes[id(node)] = Scope(kind, node, parent, qualname)
        return found
