"""Per-file extraction: source bytes in, a `FileResult` out, never an exception.

`ast` locates the raise statements and the scopes around them (see `locate.py`) and gives the
exact source span of every part of a raise: names, keyword values and the cause are that span of
the source as written. The message argument (and the value a rule-4 variable was assigned) is
parsed on its own by libcst, whose tree decides the template (`templates.py`); `ast` only rules
out in advance the expressions no template rule covers. Rule 4's names are followed here: to the
single assignment in the raise's scope, to an assignment extended by `+=` in one straight block,
or to a constant assigned once at module level (`_File.follow`). Building libcst trees for these
expressions alone keeps a cold scan close to the cost of `ast.parse`.
"""

from __future__ import annotations

import ast
import gc
import io
import re
import tokenize
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from extractor.conditions import conditions
from extractor.docstrings import raises_entries
from extractor.expansion import free_names, one_line, substituted
from extractor.fields import spliced, split_field
from extractor.fstrings import joined_template
from extractor.imports import ModuleName, Scope, dotted_name, parameter_names, resolve
from extractor.instance import Held, constructor_attributes, with_instance
from extractor.literals import TEXT_FUNCTIONS, TEXT_METHODS, escape, gettext_argument
from extractor.locate import DecodeProblem, FunctionNode, Spot, decode, outline, split_lines
from extractor.model import (
    Condition,
    Documented,
    FileResult,
    RaiseSite,
    ScanFailure,
    SourceContext,
)
from extractor.written import ATOM, SAID, level

if TYPE_CHECKING:
    import libcst as cst

    from extractor.templates import Binding

CONTEXT_FUNCTION_LINES = 40
"""A docs snippet shows the whole enclosing function when it is at most this many lines..."""
CONTEXT_RADIUS = 20
"""...and otherwise this many lines either side of the raise."""

_IGNORE = re.compile(r"#\s*errcat:\s*ignore\[([^\]]*)\]")


def module_for_display(path: str) -> ModuleName:
    """A module name from the file name alone, for sources that are not on disk."""
    stem = path.replace("\\", "/").rpartition("/")[2].removesuffix(".py")
    return ModuleName(stem or "__main__", False)


def extract_file(path: Path, display: str, module: ModuleName) -> FileResult:
    """Read and extract one file; unreadable files become a failure."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return _failed(display, 1, 1, f"cannot read: {exc.strerror or exc}")
    return extract_bytes(data, display, module)


def extract_bytes(
    data: bytes, display: str, module: ModuleName, trees: list[ast.Module] | None = None
) -> FileResult:
    """Decode and extract one file's bytes; bad bytes become a failure. The module's `ast`
    tree is appended to `trees` when one is given and the source parses."""
    try:
        source = decode(data)
    except DecodeProblem as exc:
        return _failed(display, exc.line, exc.column, exc.message)
    return extract_source(source, display, module, trees)


def extract_source(
    source: str,
    display: str,
    module: ModuleName | None = None,
    trees: list[ast.Module] | None = None,
) -> FileResult:
    """Extract the raise sites of one module's source text. Never raises.

    `display` is the path written into the records; `module` (default: from the file name)
    anchors relative imports and names defined in the module; `trees`, when given, receives the
    parsed tree (for the call graph's summaries, which need the same parse).
    """
    module = module or module_for_display(display)
    collecting = gc.isenabled()
    # Parsing allocates many short-lived, acyclic objects: cyclic collection only costs time.
    gc.disable()
    try:
        with warnings.catch_warnings():
            # Invalid escapes and similar are the scanned code's business, not a scan failure.
            warnings.simplefilter("ignore")
            return _extract(source, display, module, trees)
    except RecursionError:
        return _failed(display, 1, 1, "too deeply nested to analyse")
    except MemoryError:
        return _failed(display, 1, 1, "out of memory while analysing")
    except Exception as exc:  # a bug on one file must not stop a scan of the others
        return _failed(display, 1, 1, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        if collecting:
            gc.enable()


class MessageSyntaxError(Exception):
    """libcst cannot parse a message expression that `ast` parsed (its message is libcst's)."""


def _failed(display: str, line: int, column: int, message: str) -> FileResult:
    return FileResult(display, (), ScanFailure(display, line, column, message))


def _extract(
    source: str, display: str, module: ModuleName, trees: list[ast.Module] | None
) -> FileResult:
    if not source.strip():
        return FileResult(display)
    try:
        tree = ast.parse(source, filename=display)
    except SyntaxError as exc:
        line = exc.lineno or 1
        column = exc.offset or 1
        return _failed(display, line, max(column, 1), f"cannot parse: {exc.msg}")
    except ValueError as exc:  # null bytes
        return _failed(display, 1, 1, f"cannot parse: {exc}")
    if trees is not None:
        trees.append(tree)
    if "raise" not in source:
        # No raise statement without the keyword: skip the walk of the tree. The parse itself
        # stays, for the call summaries (a factory returns an exception without raising it)
        # and so that a file that does not parse is still a failure.
        return FileResult(display)
    found = outline(tree, source, module)
    if not found.raises:
        return FileResult(display)
    file = _File(source, display, module)
    sites: list[RaiseSite] = []
    for spot in found.raises:
        try:
            sites.append(file.site(spot))
        except MessageSyntaxError as exc:
            return _failed(
                display,
                spot.node.lineno,
                file.column(spot.node.lineno, spot.node.col_offset) + 1,
                f"libcst cannot parse the message of this raise: {exc}",
            )
    return FileResult(display, tuple(sites))


class _File:
    """One module's source, sliced by `ast` positions (UTF-8 byte columns)."""

    def __init__(self, source: str, display: str, module: ModuleName) -> None:
        self.lines = split_lines(source)
        self.display = display
        self.module = module
        self._bindings: dict[int, Counter[str]] = {}
        self._signatures: dict[int, str] = {}
        self._docstrings: dict[int, tuple[tuple[str, str, int], ...]] = {}
        self._globals: Counter[str] | None = None
        self._builders: dict[int, Scope] = {}
        self._building = 0
        self._constructed: dict[int, dict[str, Held]] = {}

    def column(self, line: int, byte_offset: int) -> int:
        """0-based character column of a UTF-8 byte offset on a 1-based line."""
        text = self.lines[line - 1]
        if text.isascii():
            return byte_offset
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))

    def text(self, node: ast.stmt | ast.expr | ast.pattern) -> str:
        """The exact source of a node (parentheses around an expression excluded).

        `ast` positions delimit a node exactly, so slicing gives its source as written; a
        node a reading built carries its own text (`SAID`).
        """
        said = getattr(node, SAID, None)
        if said is not None:
            return str(said)
        assert node.end_lineno is not None and node.end_col_offset is not None
        first = node.lineno
        last = node.end_lineno
        start = self.column(first, node.col_offset)
        end = self.column(last, node.end_col_offset)
        if first == last:
            return self.lines[first - 1][start:end]
        middle = self.lines[first : last - 1]
        return "\n".join([self.lines[first - 1][start:], *middle, self.lines[last - 1][:end]])

    def starts_with(self, node: ast.stmt, word: str) -> bool:
        """Whether the source at the node's position starts with `word` (`elif` or `if`)."""
        line = self.lines[node.lineno - 1]
        return line.startswith(word, self.column(node.lineno, node.col_offset))

    def site(self, spot: Spot) -> RaiseSite:
        node = spot.node
        assert isinstance(node, ast.Raise), "only a builder's text is read at a `return`"
        assert node.end_lineno is not None and node.end_col_offset is not None
        column = self.column(node.lineno, node.col_offset)
        exception = template = via = None
        keywords: tuple[tuple[str, str], ...] = ()
        arguments: tuple[str, ...] | None = None
        exc = node.exc
        reraise = exc is None
        # Only a name bound in the raise's own scope can be a caught exception or a local
        # variable; `raise NotImplementedError` and the like cost no walk of the scope.
        if (
            isinstance(exc, ast.Call)
            and isinstance(exc.func, ast.Attribute)
            and exc.func.attr == "with_traceback"
            and isinstance(exc.func.value, ast.Name)
            and exc.func.value.id in spot.scope.fill(self.module).bound
            and self.handled(spot, exc.func.value.id)
        ):
            # `raise err.with_traceback(tb)` raises the caught `err` again, with another
            # traceback: the same exception, not a new one.
            reraise = True
            exc = exc.func.value
        elif (
            isinstance(exc, ast.Call)
            and isinstance(exc.func, ast.Attribute)
            and exc.func.attr == "with_traceback"
            and isinstance(exc.func.value, ast.Call)
            and (built_by := dotted_name(exc.func.value.func)) is not None
            and not (resolve(built_by, spot.scope, self.module) or "").startswith("builtins.")
        ):
            # `raise X(...).with_traceback(tb)` raises the X built. Only for a class that is
            # catalogued in place (not a built-in): migrate never rewrites those raises, so
            # nothing would drop the `.with_traceback(...)`.
            exc = exc.func.value
        elif (
            isinstance(exc, ast.Attribute)
            and isinstance(exc.value, ast.Name)
            and exc.value.id in spot.scope.fill(self.module).bound
            and self.handled(spot, exc.value.id)
        ):
            # `raise err.original` of a caught `err`: an exception it carries, raised before.
            reraise = True
        elif (
            isinstance(exc, ast.Subscript)
            and isinstance(exc.value, ast.Name)
            and exc.value.id in spot.scope.fill(self.module).bound
            and self.caught_list(spot, exc.value.id)
        ):
            # `raise errors[0]` of a list the scope fills with caught exceptions only.
            reraise = True
        if (
            isinstance(exc, ast.Call)
            and len(exc.args) == 2
            and not exc.keywords
            and (dotted := dotted_name(exc.func)) is not None
            and resolve(dotted, spot.scope, self.module) == "typing.cast"
        ):
            exc = exc.args[1]  # `typing.cast(T, value)` is `value` at run time
        if isinstance(exc, ast.Name) and exc.id in spot.scope.fill(self.module).bound:
            if (
                self.handled(spot, exc.id)
                or self.kept(spot, exc.id)
                or self.checked_exception(spot, exc.id)
            ):
                reraise = True
            else:
                built = (
                    self.assigned(spot, exc.id)
                    or self.just_assigned(spot, exc.id)
                    or self.built_beside_caught(spot, exc.id)
                )
                if isinstance(built, ast.Call) and dotted_name(built.func) is not None:
                    # `err = X(...); raise err` raises what `raise X(...)` would.
                    via = exc.id
                    exc = built
        if isinstance(exc, ast.Call):
            exception = dotted_name(exc.func)
            if exception is not None:
                message = _message(exc)
                if message is not None:
                    template = self.template(message, spot)
                keywords = tuple(
                    ("**" if keyword.arg is None else keyword.arg, self.text(keyword.value))
                    for keyword in exc.keywords
                )
                arguments = tuple(self.text(argument) for argument in exc.args)
        elif exc is not None:
            exception = dotted_name(exc)
        qualified_name = None if exception is None else resolve(exception, spot.scope, self.module)
        return RaiseSite(
            path=self.display,
            line=node.lineno,
            column=column + 1,
            end_line=node.end_lineno,
            end_column=self.column(node.end_lineno, node.end_col_offset) + 1,
            exception=exception,
            qualified_name=qualified_name,
            template=template,
            function=spot.scope.qualname,
            reraise=reraise,
            cause=None if node.cause is None else self.text(node.cause),
            ignored=self.ignored(node.lineno, column, node.end_lineno),
            keywords=keywords,
            arguments=arguments,
            via=via,
            context=self.context(spot),
            conditions=self.conditions(spot),
            signature=self.signature(spot.scope.node)
            if isinstance(spot.scope.node, ast.FunctionDef | ast.AsyncFunctionDef)
            else None,
            documented=self.documented(spot, exception, qualified_name),
        )

    def documented(
        self, spot: Spot, exception: str | None, qualified_name: str | None
    ) -> tuple[Documented, ...]:
        """The docstring entries about this raise: those of the innermost enclosing function
        (and, in `__init__`, of its class) naming the site's exception by its last component."""
        function = spot.function
        if function is None or exception is None:
            return ()
        names = {exception.rpartition(".")[2]}
        if qualified_name is not None:
            names.add(qualified_name.rpartition(".")[2])
        scope: Scope | None = spot.scope
        # The raise's scope may be a class body inside the function: climb to the function's.
        while scope is not None and scope.node is not function:
            scope = scope.parent
        if scope is None or scope.qualname is None:
            return ()
        owners: list[tuple[FunctionNode | ast.ClassDef, str]] = [(function, scope.qualname)]
        parent = scope.parent
        if function.name == "__init__" and parent is not None and parent.kind == "class":
            # A class's docstring commonly documents what constructing it raises.
            assert isinstance(parent.node, ast.ClassDef) and parent.qualname is not None
            owners.append((parent.node, parent.qualname))
        found: list[Documented] = []
        for node, qualname in owners:
            for name, text, line in self.docstring_entries(node):
                if name.rpartition(".")[2] in names:
                    found.append(Documented(text, line, qualname))
        return tuple(found)

    def docstring_entries(
        self, node: FunctionNode | ast.ClassDef
    ) -> tuple[tuple[str, str, int], ...]:
        """(exception, text, 1-based file line) of each raises entry of a docstring; read once
        per function or class, and only for those holding (or owning) a raise site."""
        known = self._docstrings.get(id(node))
        if known is not None:
            return known
        entries: tuple[tuple[str, str, int], ...] = ()
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and _MAY_DOCUMENT_RAISES.search(first.value.value)
        ):
            literal = first.value
            parsed = raises_entries(first.value.value)
            if parsed:
                lines = self.docstring_lines(literal)
                entries = tuple(
                    (entry.exception, entry.text, lines[entry.line_offset]) for entry in parsed
                )
        self._docstrings[id(node)] = entries
        return entries

    def docstring_lines(self, literal: ast.Constant) -> list[int]:
        """The 1-based file line where each line of a string literal's value starts (at its
        first non-blank character): escapes (`\\n`, a backslash-newline) and implicit
        concatenation make value lines and source lines differ."""
        value = literal.value
        assert isinstance(value, str)
        count = value.count("\n") + 1
        text = self.text(literal)
        if _string_body(text) == value:
            # The common case: what is written is the value, so line k is the literal's k-th.
            return [literal.lineno + offset for offset in range(count)]
        rows = _value_rows(text)
        if rows is None or len(rows) != len(value):
            # Unreachable for literals Python accepts; an approximate line beats no knowledge.
            last = literal.end_lineno or literal.lineno
            return [min(literal.lineno + offset, last) for offset in range(count)]
        starts: list[int] = []
        index = 0
        for line in value.split("\n"):
            first_text = index + len(line) - len(line.lstrip())
            at = first_text if first_text < len(value) else len(value) - 1
            starts.append(literal.lineno - 1 + rows[at] if at >= 0 else literal.lineno)
            index += len(line) + 1
        return starts

    def conditions(self, spot: Spot) -> tuple[Condition, ...]:
        """What leads to the raise within its scope (see `conditions.py`)."""
        scope = spot.scope
        bound: frozenset[str] = frozenset()
        parameters: list[str] = []
        if isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef):
            parameters = parameter_names(scope.node)
            names = scope.fill(self.module).bound - set(parameters)
            # A closure's names are the enclosing function's locals, parameters included.
            outer = scope.parent
            while outer is not None and outer.kind == "function":
                names |= outer.fill(self.module).bound
                outer = outer.parent
            bound = frozenset(names)
        try:
            found = conditions(scope.node.body, spot.node, self, bound, parameters)
        except RecursionError:
            # Derived facts are extra: code nested too deeply for them still yields its site.
            return ()
        owner = scope.parent
        if (
            found
            and parameters
            and isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef)
            and owner is not None
            and isinstance(owner.node, ast.ClassDef)
            and scope.node.name != "__init__"
            and not _decorated_static(scope.node)
        ):
            attributes = self._constructed.get(id(owner.node))
            if attributes is None:
                attributes = self._constructed[id(owner.node)] = constructor_attributes(owner.node)
            found = with_instance(found, parameters[0], attributes)
        return found

    def signature(self, function: FunctionNode) -> str:
        """The function's decorators and header as written, up to the header's colon.

        Continuation lines lose the indentation of the `def`, so the text reads as a block.
        """
        known = self._signatures.get(id(function))
        if known is not None:
            return known
        indent = self.column(function.lineno, function.col_offset)
        parts = [f"@{self.text(decorator)}" for decorator in function.decorator_list]
        parts.append(self.header(function))
        text = "\n".join(_dedent_continuation(part, indent) for part in parts)
        self._signatures[id(function)] = text
        return text

    def header(self, function: FunctionNode) -> str:
        """From `def` (or `async def`) to the colon that ends the header, as written."""
        first = function.body[0]
        start = self.column(function.lineno, function.col_offset)
        end = self.column(first.lineno, first.col_offset)
        if function.lineno == first.lineno:
            lines = [self.lines[first.lineno - 1][start:end]]
        else:
            lines = [
                self.lines[function.lineno - 1][start:],
                *self.lines[function.lineno : first.lineno - 1],
                self.lines[first.lineno - 1][:end],
            ]
        known = self.header_end(function)
        if known is not None:
            row, column = known[0] - function.lineno + 1, known[1]
            if row == 1:
                column -= start
            return "\n".join([*lines[: row - 1], lines[row - 1][:column]])
        # Tokens, not characters: a colon in a string, an annotation, a default's lambda or a
        # comment after the header is not the header's end.
        depth = 0
        readline = iter(line + "\n" for line in lines).__next__
        try:
            for token in tokenize.generate_tokens(readline):
                if token.type != tokenize.OP:
                    continue
                if token.string in "([{":
                    depth += 1
                elif token.string in ")]}":
                    depth -= 1
                elif token.string == ":" and depth == 0:
                    row, column = token.end
                    return "\n".join([*lines[: row - 1], lines[row - 1][:column]])
        except (tokenize.TokenError, SyntaxError):
            pass
        return lines[0].rstrip()

    def header_end(self, function: FunctionNode) -> tuple[int, int] | None:
        """(line, character column just past it) of the header's colon, found from the end of
        the header's last part (the return annotation, else the last parameter or default):
        past it only closing parentheses, commas, a `/`, blanks and comments can stand before
        the colon. None where the header has no such part, or holds anything else there."""
        arguments = function.args
        parts: list[ast.arg | ast.expr] = [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *arguments.defaults,
            *(default for default in arguments.kw_defaults if default is not None),
        ]
        parts += [part for part in (arguments.vararg, arguments.kwarg, function.returns) if part]
        ends = [
            (p.end_lineno, p.end_col_offset)
            for p in parts
            if p.end_lineno is not None and p.end_col_offset is not None
        ]
        if not ends:
            return None
        line, offset = max(ends)
        column = self.column(line, offset)
        while line <= len(self.lines):
            text = self.lines[line - 1]
            while column < len(text):
                char = text[column]
                if char == ":":
                    return line, column + 1
                if char == "#" or (char == "\\" and column == len(text) - 1):
                    break
                if char not in " \t\f,/)":
                    return None
                column += 1
            line, column = line + 1, 0
        return None

    def template(self, message: ast.expr, spot: Spot) -> str | None:
        """The template of a message argument: literals and f-strings (also through a name
        followed by rule 4 to one assignment) are read from `ast` and the source; libcst reads
        the rest, `ast` only ruling out in advance what no rule covers."""
        found = self.literal_template(message, spot)
        if found is not None:
            return found
        expression = self.expression(message, spot.scope)
        if expression is not None:
            from extractor.templates import template_of

            found = template_of(
                expression, lambda name: self.follow(spot, name), self.qualifier(spot.scope)
            )
            if found is not None:
                return found
        if isinstance(message, ast.Name) and self.bindings(spot.scope)[message.id] == 1:
            # `msg = build(...)` then `raise E(msg)`.
            assigned = self.assigned(spot, message.id)
            message = assigned if isinstance(assigned, ast.Call) else message
        return self.built_text(message, spot) if isinstance(message, ast.Call) else None

    def literal_template(self, message: ast.expr, spot: Spot) -> str | None:
        """The template of a literal or an f-string, or of a name whose single assignment in
        the raise's scope (or, bound in no scope around it, at module level) is one; None for
        anything else, which libcst then reads (the same rules give the same text)."""
        if isinstance(message, ast.Name):
            count = self.bindings(spot.scope)[message.id]
            if count == 1:
                followed = self.assigned(spot, message.id)
            elif count == 0:
                found = self.constant_value(spot.scope, message.id)
                followed = None if found is None else found[0]
            else:
                return None
            if followed is None or isinstance(followed, ast.Name):
                return None
            message = followed
        if isinstance(message, ast.Constant) and isinstance(message.value, str):
            # A literal (implicit concatenations included) is its value, braces doubled, as
            # libcst's reading gives it: `ast` already decoded it, line ends as Python reads them.
            return escape(message.value)
        if isinstance(message, ast.JoinedStr):
            return joined_template(self.text(message))
        return None

    def built_text(self, call: ast.Call, spot: Spot) -> str | None:
        """Rule 8: the call of a message builder of this module (a function found by Python's
        own lookup from the raise's scope, bound once there by a plain `def`, undecorated,
        whose last statement is its only `return`, of a value a rule reads) is the template
        of what it returns, read in the builder, its fields put in the raise's terms: a
        field that is one of the builder's parameters takes the template of the argument
        the call passes it where a rule reads one, and in every other field each parameter
        is replaced by the source of its argument. A field reading a parameter the call
        does not pass, a local of the builder, or a name the raise's scope binds for itself
        (another value than the builder's) leaves the call unread: a template's fields are
        expressions the raise could evaluate, which `errcat migrate` relies on."""
        if not isinstance(call.func, ast.Name) or self._building >= _MAX_BUILDERS:
            return None
        found = self.builder(call.func.id, spot.scope)
        if found is None:
            return None
        function, scope = found
        returned = function.body[-1]
        assert isinstance(returned, ast.Return) and returned.value is not None
        self._building += 1
        try:
            template = self.template(returned.value, Spot(returned, scope, function))
            if template is None:
                return None
            passed = _passed(call, function)
            texts = {}
            for name, argument in passed.items():
                text = self.template(argument, spot)
                if text is not None:
                    texts[name] = text
        finally:
            self._building -= 1
        sources = {name: self.operand(argument) for name, argument in passed.items()}
        own = set(parameter_names(function)) | set(self.bindings(scope))

        def in_raise_terms(field: str) -> str | None:
            if field in texts:
                return texts[field]
            parts = split_field(field)
            try:
                names = free_names(ast.parse(parts.expression, mode="eval"))
            except SyntaxError:
                return None
            if any(
                (name in own and name not in sources) or self.bound_around(spot.scope, name)
                for name in names - sources.keys()
            ):
                return None
            renamed = substituted(parts.expression, {n: sources[n] for n in names & sources.keys()})
            return None if renamed is None else "{" + one_line(renamed) + parts.suffix + "}"

        return spliced(template, in_raise_terms)

    def operand(self, node: ast.expr) -> str:
        """An argument's source, parenthesised where an operator around it could bind into it."""
        text = self.text(node)
        return text if level(node) == ATOM else f"({text})"

    def bound_around(self, scope: Scope, name: str) -> bool:
        """Whether a function or class scope from `scope` outwards binds `name` itself."""
        current: Scope | None = scope
        while current is not None and current.kind != "module":
            if self.bindings(current)[name]:
                return True
            current = current.parent
        return False

    def builder(self, name: str, scope: Scope) -> tuple[ast.FunctionDef, Scope] | None:
        """The message builder `name` means in `scope`, with its own scope; or None."""
        current: Scope | None = scope
        while current is not None:
            if current.kind == "class" and current is not scope:
                current = current.parent  # a method does not see its class's names
                continue
            if current.kind == "module":
                count = self.globals(current)[name]
            else:
                count = self.bindings(current)[name]
                if count == 0:
                    current = current.parent
                    continue
            if count != 1:
                return None
            for statement in current.node.body:
                if (
                    isinstance(statement, ast.FunctionDef)
                    and statement.name == name
                    and _builds_message(statement)
                ):
                    found = self._builders.get(id(statement))
                    if found is None:
                        qualname = f"{current.qualname}.{name}" if current.qualname else name
                        found = Scope("function", statement, current, qualname)
                        self._builders[id(statement)] = found
                    return statement, found
            return None
        return None

    def qualifier(self, scope: Scope) -> Callable[[str], str | None]:
        """Qualified names of dotted names as written in `scope` (rule 5's functions)."""
        return lambda dotted: resolve(dotted, scope, self.module)

    def expression(self, node: ast.expr, scope: Scope) -> cst.BaseExpression | None:
        """The libcst tree of an expression that a template rule may cover, else None."""
        if not isinstance(node, _TEMPLATE_CANDIDATES):
            return None
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Add | ast.Mod):
            return None
        if isinstance(node, ast.Call) and not self.text_call(node, scope):
            return None
        if isinstance(node, ast.Constant) and not isinstance(node.value, str):
            return None
        return self.parse(node)

    def parse(self, node: ast.expr) -> cst.BaseExpression:
        """The libcst tree of an expression as written."""
        import libcst as cst  # imported on first need: most messages are read without it

        # Parentheses let a multi-line expression parse on its own; they are not part of it.
        try:
            wrapped = cst.parse_expression("(" + self.text(node) + ")")
        except cst.ParserSyntaxError as exc:
            raise MessageSyntaxError(exc.message) from None
        return wrapped.with_changes(lpar=(), rpar=())

    def text_call(self, node: ast.Call, scope: Scope) -> bool:
        """Whether a call may be one a template rule reads: `.format`, a literal `.join`, or
        a call of rule 5's functions (resolved only for calls of one literal argument)."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return True
        if isinstance(func, ast.Attribute) and func.attr == "join":
            return isinstance(func.value, ast.Constant) and isinstance(func.value.value, str)
        if gettext_argument(dotted_name(func), len(node.args)) is not None:
            return True
        if isinstance(func, ast.Attribute) and func.attr in TEXT_METHODS:
            # `.strip()` of literal text, or of a call that gives literal text.
            inner = func.value
            if node.args or node.keywords:
                return False
            if isinstance(inner, ast.Constant):
                return isinstance(inner.value, str)
            if isinstance(inner, ast.JoinedStr):
                return True
            return isinstance(inner, ast.Call) and self.text_call(inner, scope)
        if (
            len(node.args) != 1
            or node.keywords
            or not isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            return False
        dotted = dotted_name(func)
        return dotted is not None and resolve(dotted, scope, self.module) in TEXT_FUNCTIONS

    def follow(self, spot: Spot, name: str) -> cst.BaseExpression | Binding | None:
        """Rule 4: the value of `name`'s single assignment in the raise's scope, before it;
        else the assignment and its `+=` steps; else a module-level constant's value."""
        count = self.bindings(spot.scope)[name]
        if count == 1:
            value = self.assigned(spot, name)
            return None if value is None else self.expression(value, spot.scope)
        try:
            if count > 1:
                return self.built(spot, name)
            return self.constant(spot.scope, name)
        except MessageSyntaxError:
            # Code libcst cannot read here only leaves the message unread, not the file.
            return None

    def built(self, spot: Spot, name: str) -> Binding | None:
        """The name's last `name = ...` before the raise, then the `+=` after it on the way to
        the raise: direct statements of the blocks that lead to it, nothing else binding the
        name in between (`_extended`, exact)."""
        found = self._extended(spot, name, tails=False)
        return None if found is None else found[0]

    def opening(self, message: ast.expr, spot: Spot) -> str | None:
        """The text every message a local holds starts with, where the function extends it
        under conditions or in loops after its last plain step (`msg = f"no implementation
        for {name}"`, then `if mode: msg += f" nor in mode {mode}"`): its assignment and the
        steps every path takes. It prints alone when no condition holds, and is the start of
        the text otherwise; None where the local is no such text, or is read whole by
        `template` (no step is conditional)."""
        if not isinstance(message, ast.Name) or self.bindings(spot.scope)[message.id] < 2:
            return None
        try:
            found = self._extended(spot, message.id, tails=True)
        except MessageSyntaxError:
            return None
        if found is None or not found[1]:
            return None
        binding = found[0]
        from extractor.templates import template_of

        def follow(name: str) -> cst.BaseExpression | Binding | None:
            return binding if name == message.id else self.follow(spot, name)

        return template_of(self.parse(message), follow, self.qualifier(spot.scope))

    def _extended(self, spot: Spot, name: str, *, tails: bool) -> tuple[Binding, bool] | None:
        """The binding of `name` the raise reads, and whether steps were left out as tails.

        From the raise outwards, each block on the way to it is read backwards from the
        statement holding the raise: a `name += ...` is a step, `name = ...` the start. A
        statement binding it otherwise refuses, but with `tails`, a compound statement that
        binds it only by `+=` (an `if`, a loop) and comes after every step is left out: what
        it adds ends the text, so the binding read is where every message starts. A loop
        around the raise that binds the name refuses (an earlier turn may have extended it),
        and so does a `try` whose body binds it around a raise in its handlers (the body may
        have stopped anywhere); no `global`/`nonlocal` may let other code rebind it.
        """
        scope_node = spot.scope.node
        if any(
            isinstance(node, ast.Global | ast.Nonlocal) and name in node.names
            for node in ast.walk(scope_node)
        ):
            return None
        path = list(_blocks_to(scope_node.body, spot.node))
        steps: list[ast.expr] = []
        tailed = False
        for block, index in reversed(path):
            holder = block[index]
            if holder is not spot.node and _binds_around(holder, name, spot.node, scope_node):
                return None
            for statement in reversed(block[:index]):
                start = _assigned_value(statement, name)
                if start is not None:
                    value = self.expression(start, spot.scope)
                    if value is None:
                        return None
                    from extractor.templates import Binding

                    binding = Binding(value, tuple(self.parse(step) for step in reversed(steps)))
                    return binding, tailed
                if (
                    isinstance(statement, ast.AugAssign)
                    and isinstance(statement.op, ast.Add)
                    and isinstance(statement.target, ast.Name)
                    and statement.target.id == name
                ):
                    steps.append(statement.value)
                elif _binds(statement, name, scope_node):
                    if not (tails and not steps and _extends_only(statement, name, scope_node)):
                        return None
                    tailed = True
        return None

    def constant(self, scope: Scope, name: str) -> Binding | None:
        """A module-level constant (`constant_value`), its value read in the module."""
        found = self.constant_value(scope, name)
        if found is None:
            return None
        value, module = found
        expression = self.expression(value, module)
        if expression is None:
            return None
        from extractor.templates import Binding

        return Binding(
            expression,
            follow=partial(self.constant_at_module, module),
            qualify=self.qualifier(module),
            own=True,
        )

    def constant_value(self, scope: Scope, name: str) -> tuple[ast.expr, Scope] | None:
        """The value of a module-level constant, and the module's scope: `name` bound nowhere
        in the scopes around the raise but the module, and there once, by a top-level
        assignment."""
        if self.bound_around(scope, name):
            return None
        current = scope.module_scope()
        if current is scope or self.globals(current)[name] != 1:
            return None
        assert isinstance(current.node, ast.Module)
        for statement in current.node.body:
            value = _assigned_value(statement, name)
            if value is not None:
                return value, current
        return None

    def constant_at_module(self, module: Scope, name: str) -> cst.BaseExpression | None:
        """A name inside a module constant's value: another constant, assigned once at top level."""
        if self.globals(module)[name] != 1:
            return None
        assert isinstance(module.node, ast.Module)
        for statement in module.node.body:
            value = _assigned_value(statement, name)
            if value is not None:
                try:
                    return self.expression(value, module)
                except MessageSyntaxError:
                    return None
        return None

    def globals(self, module: Scope) -> Counter[str]:
        """The module's own bindings of each name (see `_module_binding_counts`)."""
        if self._globals is None:
            assert isinstance(module.node, ast.Module)
            # `global` statements are looked for only where the word is in the source.
            declares = any("global" in line for line in self.lines)
            self._globals = _module_binding_counts(module.node, declares)
        return self._globals

    def bindings(self, scope: Scope) -> Counter[str]:
        counts = self._bindings.get(id(scope))
        if counts is None:
            counts = self._bindings[id(scope)] = _binding_counts(scope)
        return counts

    def handled(self, spot: Spot, name: str) -> bool:
        """Whether `raise name` raises again what an enclosing `except ... as name` caught.

        Only when the handlers' `as` are the name's only bindings in the scope: an assignment
        anywhere else could have replaced the caught exception before the raise.
        """
        handlers = _handlers_around(spot.scope.node.body, spot.node)
        if handlers is None or name not in handlers:
            return False
        return self.bindings(spot.scope)[name] == _handler_bindings(spot.scope.node, name)

    def just_assigned(self, spot: Spot, name: str) -> ast.expr | None:
        """The value of `name = ...` when it is the statement right before the raise, in the
        same block: what the raise raises whatever else binds the name elsewhere."""
        for block, index in _blocks_to(spot.scope.node.body, spot.node):
            if block[index] is not spot.node or index == 0:
                continue
            return _assigned_value(block[index - 1], name)
        return None

    def checked_exception(self, spot: Spot, name: str) -> bool:
        """Whether the raise is inside `if isinstance(name, Exception):` (or BaseException,
        or a tuple holding one) and the scope builds nothing into `name` by a call: a value
        received from elsewhere (a cache, a result), checked to be an exception and raised
        again, not a new error of this site."""
        inside = False
        for block, index in _blocks_to(spot.scope.node.body, spot.node):
            statement = block[index]
            if isinstance(statement, ast.If) and _tests_exception(
                statement.test, name, lambda dotted: resolve(dotted, spot.scope, self.module)
            ):
                inside = any(spot.node is s or _holds(s, spot.node) for s in statement.body)
        if not inside:
            return False
        for statement in _own_statements(spot.scope.node.body):
            value = _assigned_value(statement, name)
            if isinstance(value, ast.Call) and _builds_class(value, spot.scope, self.module):
                return False
        return True

    def kept(self, spot: Spot, name: str) -> bool:
        """Whether `name` only ever holds an exception an `except ... as` caught (or None), so
        `raise name` raises a caught exception again (`last = err`, retried)."""
        others = self.not_caught(spot, name)
        return others is not None and not others

    def built_beside_caught(self, spot: Spot, name: str) -> ast.expr | None:
        """The one exception `raise name` builds where every other binding of `name` holds a
        caught exception or None: `best = err` in handlers, `best = X(...)` as the fallback.
        The caught ones are raised again; the call is the only new error of this raise."""
        others = self.not_caught(spot, name)
        if others is None or len(others) != 1:
            return None
        (value,) = others
        assert value.end_lineno is not None and value.end_col_offset is not None
        before = (value.end_lineno, value.end_col_offset) <= (
            spot.node.lineno,
            spot.node.col_offset,
        )
        if before and isinstance(value, ast.Call) and dotted_name(value.func) is not None:
            return value
        return None

    def not_caught(self, spot: Spot, name: str) -> list[ast.expr] | None:
        """The values bound to `name` in the raise's scope other than None and caught
        exceptions; None where a binding is not a plain `name = value` of the scope itself.

        A caught exception is a handler's `as` name inside that handler, or an item of a list
        the scope fills with caught exceptions only (`fatals.append(err)`, then
        `raise fatals[0]`).
        """
        total = self.bindings(spot.scope)[name]
        found = 0
        others: list[ast.expr] = []
        for statement, handlers in _with_handlers(spot.scope.node.body):
            value = _assigned_value(statement, name)
            if value is None:
                continue
            found += 1
            if isinstance(value, ast.Constant) and value.value is None:
                continue
            if isinstance(value, ast.Name) and value.id in handlers:
                continue
            if (
                isinstance(value, ast.Subscript)
                and isinstance(value.value, ast.Name)
                and self.caught_list(spot, value.value.id)
            ):
                continue
            others.append(value)
        return others if found and found == total else None

    def caught_list(self, spot: Spot, name: str) -> bool:
        """Whether `name` is a list the raise's scope fills with caught exceptions only: bound
        to `[]` alone, given items only by `append`/`insert` of a handler's `as` name inside
        that handler, and otherwise only read (indexed, sorted, measured, tested)."""
        bound = 0
        checked: set[int] = set()
        for statement, handlers in _with_handlers(spot.scope.node.body):
            value = _assigned_value(statement, name)
            if value is not None:
                if not (isinstance(value, ast.List) and not value.elts):
                    return False
                bound += 1
            call = statement.value if isinstance(statement, ast.Expr) else None
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == name
                and call.func.attr in _ADDING
            ):
                item = call.args[-1] if call.args else None
                if not (isinstance(item, ast.Name) and item.id in handlers):
                    return False
                checked.add(id(call.func))
        if bound == 0 or bound != self.bindings(spot.scope)[name]:
            return False
        uses = _uses(spot.scope.node, name)
        return all(_only_read(parent, child, checked) for parent, child in uses)

    def assigned(self, spot: Spot, name: str) -> ast.expr | None:
        """The value of `name`'s single assignment in the raise's scope, before the raise."""
        scope = spot.scope
        if self.bindings(scope)[name] != 1:
            return None
        raise_at = (spot.node.lineno, spot.node.col_offset)
        for statement in _own_statements(scope.node.body):
            target: ast.expr | None = None
            value: ast.expr | None = None
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            elif isinstance(statement, ast.AnnAssign):
                target, value = statement.target, statement.value
            if not (isinstance(target, ast.Name) and target.id == name):
                continue
            assert statement.end_lineno is not None and statement.end_col_offset is not None
            if value is None or (statement.end_lineno, statement.end_col_offset) > raise_at:
                return None
            return value
        return None

    def ignored(self, line: int, column: int, end_line: int) -> str | None:
        """The reason of an `# errcat: ignore[reason]` comment on any line of the raise
        statement: a formatter that wraps a long raise moves a trailing comment to its
        closing parenthesis."""
        if not any("errcat" in text for text in self.lines[line - 1 : end_line]):
            return None
        # The whole statement is tokenized so that a `#` inside a string is not a comment.
        text = "\n".join([self.lines[line - 1][column:], *self.lines[line:end_line]]) + "\n"
        last = end_line - line + 1
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.start[0] > last:
                    break
                if token.type == tokenize.COMMENT:
                    match = _IGNORE.search(token.string)
                    if match:
                        return match.group(1).strip()
        except (tokenize.TokenError, SyntaxError):
            # Text after the statement (`raise X; foo(`) may not tokenize on its own.
            pass
        return None

    def context(self, spot: Spot) -> SourceContext:
        line = spot.node.lineno
        function = spot.function
        if function is not None and function.end_lineno is not None:
            start = min([function.lineno, *(d.lineno for d in function.decorator_list)])
            if function.end_lineno - start + 1 <= CONTEXT_FUNCTION_LINES:
                code = "\n".join(self.lines[start - 1 : function.end_lineno])
                return SourceContext(start, code, line)
        total = len(self.lines) - (1 if self.lines and self.lines[-1] == "" else 0)
        start = max(1, line - CONTEXT_RADIUS)
        end = min(total, line + CONTEXT_RADIUS)
        return SourceContext(start, "\n".join(self.lines[start - 1 : end]), line)


_MAY_DOCUMENT_RAISES = re.compile(r"rais|except|throw", re.IGNORECASE)
"""Text every raises section holds: other docstrings are not parsed at all."""
_STRING_START = re.compile(r"([rRuU]{0,2})(\'\'\'|\"\"\"|\'|\")")
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
}
_HEX_WIDTHS = {"x": 2, "u": 4, "U": 8}


def _string_body(text: str) -> str | None:
    """What lies between the quotes of a single string literal's source (None if no quotes)."""
    match = _STRING_START.match(text)
    if match is None or not text.endswith(match[2]) or len(text) < match.end() + len(match[2]):
        return None
    return text[match.end() : len(text) - len(match[2])]


def _value_rows(text: str) -> list[int] | None:
    """For each character of the value of a string literal's source `text` (one literal or an
    implicit concatenation), the 1-based line of `text` it comes from; None if unreadable."""
    rows: list[int] = []
    # Parenthesized, the literal's later lines may be indented anyhow without INDENT tokens.
    readline = iter(("(" + text + ")\n").splitlines(keepends=True)).__next__
    try:
        for token in tokenize.generate_tokens(readline):
            if token.type != tokenize.STRING:
                continue
            match = _STRING_START.match(token.string)
            body = _string_body(token.string)
            if match is None or body is None:
                return None
            if not _decode_rows(body, "r" in match[1].lower(), token.start[0], rows):
                return None
    except (tokenize.TokenError, SyntaxError):
        return None
    return rows


def _decode_rows(body: str, raw: bool, row: int, rows: list[int]) -> bool:
    """Append the line of each character a literal's body decodes to, as Python decodes it."""
    index = 0
    end = len(body)
    while index < end:
        char = body[index]
        if char != "\\" or index + 1 >= end:
            rows.append(row)
            row += char == "\n"
            index += 1
            continue
        escaped = body[index + 1]
        if raw:  # the backslash stays, and so does what follows it
            rows += [row, row]
            row += escaped == "\n"
            index += 2
        elif escaped == "\n":  # a backslash-newline joins lines: no character
            row += 1
            index += 2
        elif escaped in _SIMPLE_ESCAPES:
            rows.append(row)
            index += 2
        elif escaped in "01234567":  # up to three octal digits
            stop = index + 2
            while stop < min(end, index + 4) and body[stop] in "01234567":
                stop += 1
            rows.append(row)
            index = stop
        elif escaped in _HEX_WIDTHS:
            rows.append(row)
            index += 2 + _HEX_WIDTHS[escaped]
        elif escaped == "N" and body.startswith("{", index + 2) and "}" in body[index + 3 :]:
            close = body.index("}", index + 3)
            try:
                unicodedata.lookup(body[index + 3 : close])
            except KeyError:
                return False
            rows.append(row)
            index = close + 1
        else:  # an invalid escape keeps its backslash
            rows += [row, row]
            index += 2
    return True


def _dedent_continuation(text: str, indent: int) -> str:
    """Lines after the first lose up to `indent` leading spaces (the first starts at column 0)."""
    lines = text.split("\n")
    if len(lines) == 1 or indent == 0:
        return text
    trimmed = [line[min(indent, len(line) - len(line.lstrip(" \t"))) :] for line in lines[1:]]
    return "\n".join([lines[0], *trimmed])


def _builds_message(function: ast.FunctionDef) -> bool:
    """Whether the function may be a message builder: no decorator, no `yield`, and one
    `return` of a value, its last statement (nested functions and lambdas are their own)."""
    last = function.body[-1]
    if function.decorator_list or not isinstance(last, ast.Return) or last.value is None:
        return False
    for statement in function.body:
        for node in _module_level(statement):
            if isinstance(node, ast.Yield | ast.YieldFrom | ast.Await):
                return False
            if isinstance(node, ast.Return) and node is not last:
                return False
    return True


def _passed(call: ast.Call, function: ast.FunctionDef) -> dict[str, ast.expr]:
    """The builder's parameters the call gives a value, by position or keyword; none when
    the call unpacks `*` or `**` (which values land where is not written)."""
    if any(isinstance(argument, ast.Starred) for argument in call.args) or any(
        keyword.arg is None for keyword in call.keywords
    ):
        return {}
    arguments = function.args
    positional = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args)]
    passed = dict(zip(positional, call.args, strict=False))
    named = {argument.arg for argument in (*arguments.args, *arguments.kwonlyargs)}
    for keyword in call.keywords:
        if keyword.arg in named:
            passed[keyword.arg] = keyword.value
    return passed


def _decorated_static(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method takes no instance (`@staticmethod`, `@classmethod`)."""
    return any(
        isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod")
        for decorator in function.decorator_list
    )


def _message(call: ast.Call) -> ast.expr | None:
    """The first positional argument, unless an unpacking comes first."""
    if not call.args or isinstance(call.args[0], ast.Starred):
        return None
    return call.args[0]


_MAX_BUILDERS = 2
"""Message builders read within one another (rule 8), at most."""
_TEMPLATE_CANDIDATES = (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call, ast.Name)


_ADDING = frozenset(("append", "insert"))
"""List methods that put one item in: allowed on a list of caught exceptions only as a
statement whose item is a caught exception (any other adding use disqualifies the list)."""
_READING = frozenset(("sort", "reverse", "clear", "pop", "copy", "index", "count", "remove"))
"""List methods that take items out or reorder them, never adding one."""


def _uses(scope_node: ast.AST, name: str) -> Iterator[tuple[ast.AST, ast.Name]]:
    """Each load of `name` under the scope's node, with its parent node."""
    for parent in ast.walk(scope_node):
        for child in ast.iter_child_nodes(parent):
            if isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load):
                yield parent, child


def _only_read(parent: ast.AST, child: ast.Name, checked: set[int]) -> bool:
    """Whether this use of a list leaves its items as they are: indexed, the receiver of a
    reading method or of an adding call `checked` (whose item is a caught exception), the
    argument of `len`, or a truth test."""
    if isinstance(parent, ast.Subscript):
        return parent.value is child and isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute):
        return parent.attr in _READING or id(parent) in checked
    if isinstance(parent, ast.Call):
        return isinstance(parent.func, ast.Name) and parent.func.id == "len"
    if isinstance(parent, ast.If | ast.While | ast.IfExp):
        return child is parent.test
    return isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)


def _assigned_value(statement: ast.stmt, name: str) -> ast.expr | None:
    """The value of `name = value` or `name: T = value` (one plain target), else None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            return statement.value
    elif (
        isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and statement.target.id == name
    ):
        return statement.value
    return None


def _binds(statement: ast.stmt, name: str, scope_node: ast.AST) -> bool:
    """Whether a statement binds `name` anywhere in it (conservative: nested scopes count)."""
    return _count_bindings(ast.walk(statement), scope_node)[name] > 0


_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)
"""Statements holding blocks: what they add to a text may or may not run."""


def _binds_around(holder: ast.stmt, name: str, target: ast.stmt, scope_node: ast.AST) -> bool:
    """Whether a statement holding the raise binds `name` where it may have run before the
    raise and is not on the way to it: in its header (an `if`'s test, `with ... as`, a case's
    pattern, `except ... as`), anywhere in a loop (an earlier turn), and in a `try`'s body
    around a raise in its handlers, `else` or `finally`. An `if`'s other branch and the
    statements after the raise's own never run before it."""
    if isinstance(holder, ast.For | ast.AsyncFor | ast.While):
        return _binds(holder, name, scope_node)
    if _count_bindings(_header_nodes(holder), scope_node)[name]:
        return True
    if isinstance(holder, ast.Try | ast.TryStar):
        if any(handler.name == name for handler in holder.handlers):
            return True
        inside_body = any(
            statement is target or _holds(statement, target) for statement in holder.body
        )
        if not inside_body:
            return any(_binds(statement, name, scope_node) for statement in holder.body)
    return False


def _header_nodes(holder: ast.stmt) -> Iterator[ast.AST]:
    """Every node of a compound statement outside its blocks of statements."""
    for field, value in ast.iter_fields(holder):
        if field in ("body", "orelse", "finalbody", "handlers"):
            continue
        if field == "cases":
            for case in value:
                yield from ast.walk(case.pattern)
                if case.guard is not None:
                    yield from ast.walk(case.guard)
            continue
        for node in value if isinstance(value, list) else [value]:
            if isinstance(node, ast.AST):
                yield from ast.walk(node)


def _extends_only(statement: ast.stmt, name: str, scope_node: ast.AST) -> bool:
    """Whether a compound statement binds `name` only by `name += ...` (no other binding, no
    nested scope binding it)."""
    if not isinstance(statement, _COMPOUND):
        return False
    extends = sum(
        1
        for node in ast.walk(statement)
        if isinstance(node, ast.AugAssign)
        and isinstance(node.op, ast.Add)
        and isinstance(node.target, ast.Name)
        and node.target.id == name
    )
    return extends > 0 and _count_bindings(ast.walk(statement), scope_node)[name] == extends


def _blocks_to(body: list[ast.stmt], target: ast.stmt) -> Iterator[tuple[list[ast.stmt], int]]:
    """Each statement list on the way from `body` down to `target`, with the index of the
    statement in it that holds `target`; nested scopes are not entered."""
    for index, statement in enumerate(body):
        if statement is target:
            yield body, index
            return
        if not statement.lineno <= target.lineno <= (statement.end_lineno or statement.lineno):
            continue
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        blocks = [getattr(statement, name, None) or [] for name in ("body", "orelse", "finalbody")]
        blocks += [handler.body for handler in getattr(statement, "handlers", None) or []]
        blocks += [case.body for case in getattr(statement, "cases", None) or []]
        for block in blocks:
            inner = list(_blocks_to(block, target))
            if inner:
                yield body, index
                yield from inner
                return


def _with_handlers(
    body: list[ast.stmt], handlers: tuple[str, ...] = ()
) -> Iterator[tuple[ast.stmt, tuple[str, ...]]]:
    """Each statement of a scope (not entering nor yielding nested definitions) with the `as`
    names of the `except` handlers it stands in, outermost first."""
    for statement in body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield statement, handlers
        for block in ("body", "orelse", "finalbody"):
            yield from _with_handlers(getattr(statement, block, None) or [], handlers)
        for handler in getattr(statement, "handlers", None) or []:
            inner = (*handlers, handler.name) if handler.name else handlers
            yield from _with_handlers(handler.body, inner)
        for case in getattr(statement, "cases", None) or []:
            yield from _with_handlers(case.body, handlers)


def _own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a scope, through compound statements but not into nested scopes."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(statement, name, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            yield from _own_statements(handler.body)
        for case in getattr(statement, "cases", None) or []:
            yield from _own_statements(case.body)


def _handlers_around(body: list[ast.stmt], target: ast.stmt) -> list[str] | None:
    """The `as` names of the `except` handlers around `target` within `body`, outermost
    first; None when `target` is not in `body` (nested scopes are not entered)."""
    for statement in body:
        if statement is target:
            return []
        if not statement.lineno <= target.lineno <= (statement.end_lineno or statement.lineno):
            continue
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            found = _handlers_around(getattr(statement, name, None) or [], target)
            if found is not None:
                return found
        for handler in getattr(statement, "handlers", None) or []:
            found = _handlers_around(handler.body, target)
            if found is not None:
                return [handler.name, *found] if handler.name else found
        for case in getattr(statement, "cases", None) or []:
            found = _handlers_around(case.body, target)
            if found is not None:
                return found
    return None


_EXCEPTION_BASES = frozenset(("builtins.Exception", "builtins.BaseException"))


def _tests_exception(test: ast.expr, name: str, qualify: Callable[[str], str | None]) -> bool:
    """`isinstance(name, Exception)` (or BaseException, alone or in a tuple)."""
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
        and test.args[0].id == name
    ):
        return False
    kinds = test.args[1]
    options = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(
        (dotted := dotted_name(option)) is not None and qualify(dotted) in _EXCEPTION_BASES
        for option in options
    )


def _builds_class(call: ast.Call, scope: Scope, module: ModuleName) -> bool:
    """Whether a call may construct an exception here: of a class name (CapWords, as classes
    are named) or of a built-in exception; a method's result (`cache.get(...)`) is not."""
    dotted = dotted_name(call.func)
    if dotted is None:
        return True
    last = dotted.rpartition(".")[2]
    qualified = resolve(dotted, scope, module) or ""
    return last[:1].isupper() or qualified in _EXCEPTION_BASES


def _holds(statement: ast.stmt, target: ast.stmt) -> bool:
    return statement.lineno <= target.lineno <= (statement.end_lineno or statement.lineno)


def _handler_bindings(node: ast.AST, name: str) -> int:
    """How many `except ... as name` handlers under `node` bind `name`."""
    return sum(
        isinstance(handler, ast.ExceptHandler) and handler.name == name
        for handler in ast.walk(node)
    )


def _binding_counts(scope: Scope) -> Counter[str]:
    """How many times each name is bound anywhere under the scope's node (conservative)."""
    return _count_bindings(ast.walk(scope.node), scope.node)


def _module_binding_counts(module: ast.Module, declares: bool) -> Counter[str]:
    """How many times each name is bound as a module global (conservative).

    `_binding_counts` of the module also counts every function's locals, so that a parameter
    named like a constant anywhere would hide it; here the bodies of functions and classes
    count only for the names they declare `global`.
    """
    counts = _count_bindings(_module_level(module), module)
    if not declares:
        return counts  # the source holds no `global` statement
    for node in ast.walk(module):
        if isinstance(node, ast.Global):
            for name in node.names:
                counts[name] += 2
    return counts


def _module_level(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and what is under it, not entering functions, lambdas and class bodies."""
    # A stack, not recursion: module-level expressions can nest deeper than the call stack.
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # The definition binds its name; a walrus in a decorator, default or base is
            # module-level code too, so those parts are still walked.
            stack.extend(current.decorator_list)
            if isinstance(current, ast.ClassDef):
                stack.extend([*current.bases, *current.keywords])
            else:
                stack.extend(current.args.defaults)
                stack.extend(d for d in current.args.kw_defaults if d is not None)
        elif isinstance(current, ast.Lambda):
            stack.extend(current.args.defaults)
            stack.extend(d for d in current.args.kw_defaults if d is not None)
        else:
            stack.extend(ast.iter_child_nodes(current))


def _count_bindings(nodes: Iterator[ast.AST], own: ast.AST) -> Counter[str]:
    """How many times the nodes bind each name (`own`, the scope's node, binds nothing)."""
    counts: Counter[str] = Counter()
    for node in nodes:
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                counts[node.id] += 1
        elif isinstance(node, ast.arg):
            counts[node.arg] += 1
        elif isinstance(node, ast.ExceptHandler):
            if node.name:
                counts[node.name] += 1
        elif isinstance(node, ast.alias):
            counts[node.asname or node.name.partition(".")[0]] += 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node is not own:
                counts[node.name] += 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                counts[name] += 2
        elif isinstance(node, ast.MatchAs | ast.MatchStar):
            if node.name:
                counts[node.name] += 1
        elif isinstance(node, ast.MatchMapping) and node.rest:
            counts[node.rest] += 1
    return counts
