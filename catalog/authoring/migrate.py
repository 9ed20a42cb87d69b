"""`errcat migrate`: rewrite raw raises of catalogued messages into typed raises.

`raise ValueError(f"... {t.device} ...")` becomes `raise TheEntry(t=t)`, with `from` clauses,
comments and the rest of the file left exactly as they were, and the import of the generated
class added once per file.

The rewrite is text splicing at `ast` positions: only the exception expression of each raise
and one import statement change, so nothing else can be reformatted, and the standard library
parser is many times faster than a concrete syntax tree (`bench/migrate.py` compares migrate
with a scan of the same package).
"""

from __future__ import annotations

import ast
import gc
import keyword
import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TypeVar

from catalog.authoring.import_style import DEFAULT_LINE_LENGTH, ImportStyle
from catalog.core.errors import FindingsError
from extractor.locate import RaiseFromCall, raise_from_call

_NEWLINE = re.compile(r"\r\n|\r|\n")
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
_BOM = "\ufeff"
_S = TypeVar("_S", bound=ast.stmt)


@dataclass(frozen=True)
class Rewrite:
    """One raise to rewrite."""

    line: int
    """1-based line of the `raise` keyword."""
    column: int
    """1-based column of the `raise` keyword."""
    class_name: str
    """The generated class to raise instead."""
    arguments: Mapping[str, str]
    """Keyword parameter → source expression that supplies it."""
    via: str | None = None
    """The raise is `raise <via>` of an exception built earlier (`via = ValueError(...)`):
    the call assigned is rewritten, and the raise stays as it is."""


class MigrateError(FindingsError):
    """A requested rewrite could not be applied; the file is left unchanged (exit 1)."""


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


class _Source:
    """The text with its line starts, to turn `ast` positions into string offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Split where the tokenizer splits: a lone CR ends a line too, a form feed does not.
        if "\r" in text:
            self.starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]
        else:
            # The common case without a Python-level loop: each line is its length plus one.
            lengths = map(len, text.split("\n")[:-1])
            self.starts = list(accumulate(map((1).__add__, lengths), initial=0))
        first = _NEWLINE.search(text)
        self.newline = first.group() if first else "\n"

    def offset(self, line: int, byte_column: int) -> int:
        """String offset of a 1-based line and a UTF-8 byte column (as `ast` gives them)."""
        start = self.starts[line - 1]
        # A byte column is never less than the character column, so this slice holds the prefix.
        chunk = self.text[start : start + byte_column]
        if chunk.isascii():
            return start + byte_column
        return start + len(chunk.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))

    def line_text(self, line: int) -> str:
        """A 1-based line without its ending."""
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def line_start(self, line: int) -> int:
        """Offset where a 1-based line starts; past the last line, the end of the text."""
        return self.starts[line - 1] if line <= len(self.starts) else len(self.text)


def migrate_source(
    source: str,
    rewrites: Sequence[Rewrite],
    generated_module: str,
    style: ImportStyle | None = None,
    package: str | None = None,
) -> str:
    """`source` with each rewrite applied and the generated classes imported from
    `generated_module`, placed and wrapped as `style` (the project's isort or ruff settings)
    says; an assignment of the message that the rewrite leaves unused is removed.

    `package`, the package the file belongs to (itself for an `__init__.py`), asks for a
    relative import (`from ._errcat_errors import X`): for a package whose modules import
    each other only relatively (see `imports_itself_relatively`).
    """
    if not rewrites:
        return source
    if style is None:
        style = ImportStyle(first_party=frozenset({generated_module.split(".")[0]}))
    # `ast` rejects a BOM in a str, and the scanner's columns do not count it.
    bom = _BOM if source.startswith(_BOM) else ""
    text = source[len(bom) :]
    for rewrite in rewrites:
        _check_names(rewrite)
    try:
        tree = _parse(text)
    except SyntaxError as exc:
        raise MigrateError(f"cannot parse: {exc.msg} (line {exc.lineno})") from None
    except ValueError as exc:  # null bytes, before Python 3.12
        raise MigrateError(f"cannot parse: {exc}") from None
    src = _Source(text)
    pending = {(r.line, r.column): r for r in rewrites}
    edits: list[_Edit] = []
    replaced: list[tuple[ast.Raise, Rewrite]] = []
    for node in _statements_on(tree.body, sorted({r.line for r in rewrites}), ast.Raise):
        key = (
            node.lineno,
            src.offset(node.lineno, node.col_offset) - src.starts[node.lineno - 1] + 1,
        )
        if key not in pending:
            continue
        rewrite = pending.pop(key)
        if node.exc is None:
            raise MigrateError(f"the raise at {key[0]}:{key[1]} re-raises; nothing to replace")
        if rewrite.via is not None:
            call = _assigned_call(tree, node, rewrite.via, key)
            # The variable must hold an instance: the class is called even without arguments.
            edits.append(_replace(src, call, rewrite, style.line_length, bare=False))
            continue
        # `six.raise_from(X, err)` hands `X` on as a value: it stays an instance.
        bare = not isinstance(node, RaiseFromCall)
        edits.append(_replace(src, node.exc, rewrite, style.line_length, bare=bare))
        replaced.append((node, rewrite))
    if pending:
        missing = ", ".join(f"{line}:{column}" for line, column in sorted(pending))
        raise MigrateError(f"no raise statement at {missing}")
    names = {r.class_name for r in rewrites}
    spelling = _spelling(generated_module, package)
    edits.extend(_import_edits(src, tree, names, spelling, style))
    edits.extend(_dead_assignments(src, tree, replaced))
    result = bom + _splice(text, edits)
    try:
        _parse(result[len(bom) :])
    except SyntaxError as exc:
        raise MigrateError(
            f"the rewritten source does not parse: {exc.msg} (line {exc.lineno})"
        ) from None
    return result


def _parse(text: str) -> ast.Module:
    # Parsing allocates a node per token or so, all of it alive: collections triggered by those
    # allocations find nothing to free and cost a third of the parse.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(text)
    finally:
        if enabled:
            gc.enable()


_OWN_ABSOLUTE = r"^(?:from[ \t]+{top}(?:\.|[ \t])|import[ \t]+{top}\b)"
_RELATIVE = re.compile(r"^from[ \t]+\.", re.MULTILINE)


def imports_itself_relatively(top: str, sources: Iterable[str]) -> bool:
    """Whether a package's modules mostly import each other relatively rather than by its
    name `top` (counting module-level imports, the lines that start with `from`/`import`).

    Such a package may be loaded where its own name is not importable (flit reads a version
    by loading the `__init__.py` alone, whose relative imports still work), so an absolute
    import of the generated module would fail there: migrate writes a relative one, as the
    package writes its own.
    """
    absolute = re.compile(_OWN_ABSOLUTE.format(top=re.escape(top)), re.MULTILINE)
    counts = [0, 0]
    for text in sources:
        counts[0] += len(absolute.findall(text))
        counts[1] += len(_RELATIVE.findall(text))
    return counts[1] > counts[0]


def _spelling(module: str, package: str | None) -> str:
    """`module` as a file of `package` imports it relatively (`._errcat_errors`); absolute
    without a package, or for a module outside its top-level package."""
    if package is None:
        return module
    target, base = module.split("."), package.split(".")
    if target[0] != base[0]:
        return module
    common = 0
    while common < min(len(target) - 1, len(base)) and target[common] == base[common]:
        common += 1
    return "." * (len(base) - common + 1) + ".".join(target[common:])


def _is_from(statement: ast.ImportFrom, module: str) -> bool:
    """Whether `statement` imports from `module`, spelt absolute or relative (`._errors`)."""
    level = len(module) - len(module.lstrip("."))
    return statement.level == level and statement.module == (module[level:] or None)


def _assigned_call(
    tree: ast.Module, raised: ast.Raise, name: str, key: tuple[int, int]
) -> ast.Call:
    """The call `raise <name>` raises: the last `name = X(...)` before the raise in its
    function (check matches such a raise only when that is the name's one assignment of a
    call, any other holding None or a caught exception)."""
    if not (isinstance(raised.exc, ast.Name) and raised.exc.id == name):
        raise MigrateError(f"the raise at {key[0]}:{key[1]} does not raise {name}")
    functions = [
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    scope: ast.AST = _innermost(functions, raised) or tree
    found = [
        statement
        for statement in ast.walk(scope)
        if isinstance(statement, ast.Assign | ast.AnnAssign)
        and _plain_store(statement) == name
        and statement.lineno < raised.lineno
        and isinstance(statement.value, ast.Call)
    ]
    if not found:
        raise MigrateError(f"no {name} = ...(...) before the raise at {key[0]}:{key[1]}")
    value = max(found, key=lambda statement: statement.lineno).value
    assert isinstance(value, ast.Call)
    return value


def _check_names(rewrite: Rewrite) -> None:
    for name in (rewrite.class_name, *rewrite.arguments):
        if not name.isidentifier() or keyword.iskeyword(name):
            raise MigrateError(f"{name!r} is not a valid Python name")


def _statements_on(body: list[ast.stmt], lines: list[int], kind: type[_S]) -> Iterator[_S]:
    """The `kind` statements starting on `lines` (sorted), entering only statements spanning them.

    Only statement bodies need to be entered, and a bisection on the wanted lines skips every
    statement that spans none of them, so most of the tree is never visited.
    """
    for statement in body:
        index = bisect_left(lines, statement.lineno)
        if index == len(lines) or lines[index] > (statement.end_lineno or statement.lineno):
            continue
        if isinstance(statement, kind):
            if lines[index] == statement.lineno:
                yield statement
            continue
        if kind is ast.Raise and lines[index] == statement.lineno:
            # `six.raise_from(X(...), err)`, which the scan reads as `raise X(...) from err`:
            # its `X(...)` is rewritten in place.
            raised = raise_from_call(statement)
            if raised is not None:
                yield raised  # type: ignore[misc]
                continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if inner:
                yield from _statements_on(inner, lines, kind)
        for holder in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            yield from _statements_on(holder.body, lines, kind)


def _replace(
    src: _Source, exc: ast.expr, rewrite: Rewrite, line_length: int, *, bare: bool = True
) -> _Edit:
    assert exc.end_lineno is not None and exc.end_col_offset is not None
    start = src.offset(exc.lineno, exc.col_offset)
    end = src.offset(exc.end_lineno, exc.end_col_offset)
    arguments = [f"{name}={value}" for name, value in rewrite.arguments.items()]
    # A class without parameters is raised bare: `raise X` calls `X()` itself, and linters
    # (ruff's RSE102) flag the empty parentheses.
    if bare and not arguments:
        return _Edit(start, end, rewrite.class_name)
    call = f"{rewrite.class_name}({', '.join(arguments)})"
    before = src.text[src.starts[exc.lineno - 1] : start]
    after = src.line_text(exc.end_lineno)[end - src.starts[exc.end_lineno - 1] :]
    if len(before) + len(call) + len(after) <= line_length:
        return _Edit(start, end, call)
    # Too long for the project's line: wrapped as black and ruff format wrap a call, the
    # arguments on one line of their own if they fit there, else one per line.
    indent = before[: len(before) - len(before.lstrip())]
    inner = indent + "    "
    newline = src.newline
    joined = ", ".join(arguments)
    if len(inner) + len(joined) <= line_length:
        body = f"{newline}{inner}{joined}{newline}"
    else:
        body = "".join(f"{newline}{inner}{argument}," for argument in arguments) + newline
    return _Edit(start, end, f"{rewrite.class_name}({body}{indent})")


def _splice(text: str, edits: list[_Edit]) -> str:
    # One join over the pieces in order gives what end-to-start replacement gives, with every
    # offset still the original one, without copying the whole text once per edit.
    pieces = []
    position = 0
    for edit in sorted(edits, key=lambda edit: (edit.start, edit.end)):
        if edit.start < position:
            raise MigrateError("two rewrites overlap")
        pieces += [text[position : edit.start], edit.text]
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def _import_edits(
    src: _Source, tree: ast.Module, names: set[str], module: str, style: ImportStyle
) -> list[_Edit]:
    """The edits that import `names` from `module`, none when all are imported already."""
    imported, other = _top_level_bindings(tree, module, src)
    for name in sorted(names):
        if name in other:
            raise MigrateError(f"{name} is already bound in this module; rename the entry")
    missing = sorted(names - imported)
    if not missing:
        return []
    existing = None if style.force_single_line else _mergeable_import(tree, module)
    if existing is not None:
        merged = _merge(src, existing, missing, module, style.line_length)
        if merged is not None:
            return [merged]
        anchor: ast.stmt | None = existing
        prelude = False
    else:
        block = _import_block(tree)
        if block and not _followed_on_its_line(src, block[-1]):
            return _sorted_into(src, block, module, missing, style)
        anchor, prelude = _import_anchor(tree)
    statements = (
        [_format_import(module, [name], "", "", src.newline, style.line_length) for name in missing]
        if style.force_single_line
        else [_format_import(module, missing, "", "", src.newline, style.line_length)]
    )
    statement = src.newline.join(statements)
    if anchor is None:
        at = _top_offset(src, tree)
        return [_Edit(at, at, statement + src.newline + _gap_before(tree.body[0], src))]
    assert anchor.end_lineno is not None and anchor.end_col_offset is not None
    end = src.offset(anchor.end_lineno, anchor.end_col_offset)
    rest = src.line_text(anchor.end_lineno)[end - src.starts[anchor.end_lineno - 1] :]
    if rest.lstrip().startswith(";"):
        # A statement after `;` may use the name: the import must come before it.
        return [_Edit(end, end, f"; {statement}")]
    at = src.line_start(anchor.end_lineno + 1)
    if anchor.end_lineno == len(src.starts):
        # The anchor is on the last line, which has no line ending to insert after.
        text = src.newline + statement
    else:
        text = statement + src.newline
    if prelude:
        # The docstring or `from __future__` block is set off from the imports by a blank line,
        # and the import from what follows it.
        text = src.newline + text
        following = _after(tree, anchor)
        if following is not None and src.line_text(anchor.end_lineno + 1).strip():
            text += _gap_before(following, src)
    return [_Edit(at, at, text)]


def _followed_on_its_line(src: _Source, statement: ast.stmt) -> bool:
    """Whether another statement follows `statement` after a `;` on its last line (which may
    use the name: the import must then come before it, on that line)."""
    assert statement.end_lineno is not None and statement.end_col_offset is not None
    end = src.offset(statement.end_lineno, statement.end_col_offset)
    return src.text[end : src.line_start(statement.end_lineno + 1)].lstrip().startswith(";")


def _after(tree: ast.Module, statement: ast.stmt) -> ast.stmt | None:
    """The top-level statement after `statement`, if any."""
    index = tree.body.index(statement)
    return tree.body[index + 1] if index + 1 < len(tree.body) else None


def _gap_before(statement: ast.stmt, src: _Source) -> str:
    """Blank lines between an import and `statement`: two before a function or class, one
    before anything else (what PEP 8, isort and formatters keep after imports)."""
    definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return src.newline * (2 if isinstance(statement, definition) else 1)


_SECTIONS = {"future": 0, "stdlib": 1, "third": 2, "first": 3, "local": 4}


def _import_block(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The module's leading imports, after its docstring, `from __future__` ones excluded."""
    block: list[ast.Import | ast.ImportFrom] = []
    body = tree.body
    index = 1 if body and _is_docstring(body[0]) else 0
    while index < len(body) and isinstance(body[index], ast.Import | ast.ImportFrom):
        statement = body[index]
        assert isinstance(statement, ast.Import | ast.ImportFrom)
        if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
            block.append(statement)
        index += 1
    return block


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _section(statement: ast.Import | ast.ImportFrom, style: ImportStyle) -> int:
    if isinstance(statement, ast.ImportFrom) and statement.level:
        return _SECTIONS["local"]
    name = statement.module if isinstance(statement, ast.ImportFrom) else statement.names[0].name
    top = (name or "").split(".")[0]
    if top in style.first_party:
        return _SECTIONS["first"]
    return _SECTIONS["stdlib"] if top in sys.stdlib_module_names else _SECTIONS["third"]


def _sort_key(statement: ast.Import | ast.ImportFrom) -> tuple[int, str, str]:
    # isort and ruff by default: within a section, `import x` lines first, then `from x import`
    # lines, each by module name ignoring case, names by name.
    if isinstance(statement, ast.Import):
        return (0, statement.names[0].name.lower(), "")
    return (1, (statement.module or "").lower(), statement.names[0].name.lower())


def _sorted_into(
    src: _Source,
    block: list[ast.Import | ast.ImportFrom],
    module: str,
    names: list[str],
    style: ImportStyle,
) -> list[_Edit]:
    """The edits that put `from module import names` where the project's sorter would: in
    order within the first-party section, or as a section of its own after the ones before it
    (under `force-single-line`, one statement per name, each in its order)."""
    first = _SECTIONS["first"]
    groups = [[name] for name in names] if style.force_single_line else [names]
    if module.startswith("."):
        return _sorted_into_local(src, block, module, groups, style)
    section = [s for s in block if _section(s, style) == first]
    if section:
        edits = []
        for group in groups:
            statement = _format_import(module, group, "", "", src.newline, style.line_length)
            key = (1, module.lower(), group[0].lower())
            later = [s for s in section if _sort_key(s) > key]
            if later:
                at = src.line_start(later[0].lineno)
                edits.append(_Edit(at, at, statement + src.newline))
            else:
                edits.append(_line_after(src, section[-1], statement))
        return edits
    # A section of its own: the statements together, in order, set off by blank lines.
    lines = src.newline.join(
        _format_import(module, group, "", "", src.newline, style.line_length) for group in groups
    )
    after = [s for s in block if _section(s, style) > first]
    if after:
        # Before the local (relative) imports, set off from them as its own section.
        at = src.line_start(after[0].lineno)
        return [_Edit(at, at, lines + src.newline + src.newline)]
    # After the last section, as a section of its own.
    return [_line_after(src, block[-1], src.newline + lines)]


def _local_key(level: int, module: str | None, name: str) -> tuple[int, str, str]:
    # isort's and ruff's default for relative imports: furthest first (`..` before `.`), then
    # by module ignoring case, `from . import x` (no module) before `from .a import y`.
    return (-level, (module or "").lower(), name.lower())


def _sorted_into_local(
    src: _Source,
    block: list[ast.Import | ast.ImportFrom],
    module: str,
    groups: list[list[str]],
    style: ImportStyle,
) -> list[_Edit]:
    """The edits that put a relative `from .module import names` among the local imports in
    their order, or as their section after the others."""
    level = len(module) - len(module.lstrip("."))
    local = [s for s in block if isinstance(s, ast.ImportFrom) and s.level]
    statements = [
        (group, _format_import(module, group, "", "", src.newline, style.line_length))
        for group in groups
    ]
    if not local:
        lines = src.newline.join(statement for _, statement in statements)
        return [_line_after(src, block[-1], src.newline + lines)]
    edits = []
    for group, statement in statements:
        key = _local_key(level, module[level:], group[0])
        later = [
            s
            for s in local
            if isinstance(s, ast.ImportFrom)
            and _local_key(s.level, s.module, s.names[0].name) > key
        ]
        if later:
            at = src.line_start(later[0].lineno)
            edits.append(_Edit(at, at, statement + src.newline))
        else:
            edits.append(_line_after(src, local[-1], statement))
    return edits


def _line_after(src: _Source, anchor: ast.stmt, text: str) -> _Edit:
    assert anchor.end_lineno is not None
    if anchor.end_lineno == len(src.starts):
        end = len(src.text)
        return _Edit(end, end, src.newline + text)
    at = src.line_start(anchor.end_lineno + 1)
    return _Edit(at, at, text + src.newline)


def _dead_assignments(
    src: _Source, tree: ast.Module, replaced: list[tuple[ast.Raise, Rewrite]]
) -> list[_Edit]:
    """Edits removing `msg = f"..."` (and `msg += ...`) statements whose only readers were
    rewritten raises' `X(msg)`: the typed call takes the placeholders' values instead, and
    a linter flags the name left assigned and never used (ruff F841). A name a typed call
    still passes (`X(msg=msg)`, a message errcat could not read through) is kept, and so is
    one any other statement reads. The raises of one function that read the same name are
    taken together: each reads it, and none does once all are rewritten."""
    functions = [
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    readers: dict[tuple[int, str], list[ast.Raise]] = {}
    scopes: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node, rewrite in replaced:
        call = node.exc
        if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
            continue
        argument = call.args[0]
        if not isinstance(argument, ast.Name):
            continue
        passed = " ".join(rewrite.arguments.values())
        if any(True for _ in _words(passed, argument.id)):
            continue
        scope = _innermost(functions, node)
        if scope is None:
            continue
        scopes[id(scope)] = scope
        readers.setdefault((id(scope), argument.id), []).append(node)
    edits: list[_Edit] = []
    for (scope_id, name), raises in readers.items():
        edits.extend(_unused_stores(src, scopes[scope_id], name, raises))
    return edits


def _innermost(
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef], node: ast.stmt
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    holding = [
        f
        for f in functions
        if f.lineno <= node.lineno and f.end_lineno is not None and node.lineno <= f.end_lineno
    ]
    return max(holding, key=lambda f: f.lineno, default=None)


def _unused_stores(
    src: _Source,
    scope: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    raises: list[ast.Raise],
) -> list[_Edit]:
    """The statements storing `name` in `scope`, as removals, when nothing but `raises` reads
    it and each store is a plain statement of its own lines (no comment, nothing after `;`)
    in a block it does not leave empty; none otherwise."""
    inside = {id(n) for raised in raises for n in ast.walk(raised)}
    stores: list[ast.stmt] = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id == name:
            if isinstance(node.ctx, ast.Load) and id(node) not in inside:
                return []
        elif isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return []
    for block in _blocks(scope):
        for statement in block:
            target = _plain_store(statement)
            if target == name:
                if len(block) == 1:
                    return []
                stores.append(statement)
    stored_anywhere = sum(
        1
        for node in ast.walk(scope)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
    )
    if not stores or stored_anywhere != len(stores):
        return []
    edits = []
    for statement in stores:
        assert statement.end_lineno is not None and statement.end_col_offset is not None
        start = src.offset(statement.lineno, statement.col_offset)
        end = src.offset(statement.end_lineno, statement.end_col_offset)
        line_start = src.starts[statement.lineno - 1]
        rest = src.line_text(statement.end_lineno)[end - src.starts[statement.end_lineno - 1] :]
        if src.text[line_start:start].strip() or rest.strip():
            return []
        edits.append(_Edit(line_start, src.line_start(statement.end_lineno + 1), ""))
    return edits


def _plain_store(statement: ast.stmt) -> str | None:
    """The name a `name = value`, `name: T = value` or `name += value` statement stores."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target: ast.expr = statement.targets[0]
    elif (isinstance(statement, ast.AnnAssign) and statement.value is not None) or isinstance(
        statement, ast.AugAssign
    ):
        target = statement.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list under `node`, nested functions' and classes' included, each once
    (an `except` handler's and a `case`'s body are their own nodes' `body`)."""
    for child in ast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(child, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value


def _top_level_bindings(tree: ast.Module, module: str, src: _Source) -> tuple[set[str], set[str]]:
    """Names bound at module level at run time: those imported from `module` under their own
    name, and all others (imports of anything else, definitions, assignments)."""
    imported: set[str] = set()
    other: set[str] = set()
    _collect_bindings(tree.body, module, imported, other)
    # A function's `global` statement binds at module level too.
    lines = [bisect_right(src.starts, at) for at in _words(src.text, "global")]
    for statement in _statements_on(tree.body, lines, ast.Global):
        other.update(statement.names)
    return imported, other


def _words(text: str, word: str) -> Iterator[int]:
    """Offsets of `word` standing alone, ascending; `str.find` is far faster than a regex."""
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_"):
            yield at
        at = text.find(word, end)


def _collect_bindings(
    body: list[ast.stmt], module: str, imported: set[str], other: set[str]
) -> None:
    for statement in body:
        if isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if alias.name == "*":
                    continue
                bound = alias.asname or alias.name
                same = _is_from(statement, module)
                (imported if same and bound == alias.name else other).add(bound)
        elif isinstance(statement, ast.Import):
            other.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            other.add(statement.name)
        elif isinstance(statement, ast.If) and _is_type_checking(statement.test):
            # Bound only for type checkers: the raise still needs a run-time import.
            _collect_bindings(statement.orelse, module, imported, other)
        else:
            other.update(_stored_names(statement))
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list):
                    _collect_bindings(inner, module, imported, other)
            for holder in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
                if isinstance(holder, ast.ExceptHandler) and holder.name:
                    other.add(holder.name)
                _collect_bindings(holder.body, module, imported, other)


def _stored_names(statement: ast.stmt) -> Iterable[str]:
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
        targets = [statement.target]
    elif isinstance(statement, ast.With | ast.AsyncWith):
        targets = [item.optional_vars for item in statement.items if item.optional_vars]
    elif isinstance(statement, ast.Delete):
        targets = list(statement.targets)
    elif isinstance(statement, ast.Match):
        targets = [case.pattern for case in statement.cases]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                yield node.id
            elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
                yield node.name
            elif isinstance(node, ast.MatchMapping) and node.rest:
                yield node.rest


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _mergeable_import(tree: ast.Module, module: str) -> ast.ImportFrom | None:
    for statement in tree.body:
        if (
            isinstance(statement, ast.ImportFrom)
            and _is_from(statement, module)
            and all(alias.name != "*" for alias in statement.names)
        ):
            return statement
    return None


def _merge(
    src: _Source,
    statement: ast.ImportFrom,
    missing: list[str],
    module: str,
    line_length: int = DEFAULT_LINE_LENGTH,
) -> _Edit | None:
    """`statement` rewritten to import `missing` too; None when it holds comments to keep."""
    assert statement.end_lineno is not None and statement.end_col_offset is not None
    start = src.offset(statement.lineno, statement.col_offset)
    end = src.offset(statement.end_lineno, statement.end_col_offset)
    # An import statement holds no strings, so `#` can only start a comment.
    if "#" in src.text[start:end]:
        return None
    aliases = [
        f"{alias.name} as {alias.asname}" if alias.asname else alias.name
        for alias in statement.names
    ]
    line_start = src.starts[statement.lineno - 1]
    before = src.text[line_start:start]
    after = src.line_text(statement.end_lineno)[end - src.starts[statement.end_lineno - 1] :]
    names = sorted([*aliases, *missing], key=lambda name: name.split(" ")[0])
    return _Edit(start, end, _format_import(module, names, before, after, src.newline, line_length))


def _format_import(
    module: str,
    names: list[str],
    before: str,
    after: str,
    newline: str,
    line_length: int = DEFAULT_LINE_LENGTH,
) -> str:
    """The statement on one line, or wrapped one name per line if its line would be too long."""
    head = f"from {module} import "
    line = head + ", ".join(names)
    if len(before) + len(line) + len(after) <= line_length:
        return line
    inner = "".join(f"{newline}    {name}," for name in names)
    return f"{head}({inner}{newline})"


def _import_anchor(tree: ast.Module) -> tuple[ast.stmt | None, bool]:
    """The statement to insert the import after, and whether it is the docstring or
    `from __future__` block rather than an import of the leading import block."""
    body = tree.body
    anchor: ast.stmt | None = None
    index = 0
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        anchor = body[0]
        index = 1
    prelude = anchor is not None
    while index < len(body) and isinstance(body[index], ast.Import | ast.ImportFrom):
        statement = body[index]
        prelude = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        anchor = statement
        index += 1
    return anchor, prelude


def _top_offset(src: _Source, tree: ast.Module) -> int:
    """Where an import goes in a module with no docstring and no import: after a shebang, a
    coding cookie and a header comment set off by a blank line (a comment touching the first
    statement belongs to it)."""
    first = tree.body[0].lineno
    for decorated in tree.body[:1]:
        if isinstance(decorated, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([first, *(d.lineno for d in decorated.decorator_list)])
    line = 1
    if src.line_text(1).startswith("#!"):
        line = 2
    while line <= 2 and line < first and _COOKIE.match(src.line_text(line)):
        line += 1
    header = line
    while header < first and src.line_text(header).lstrip().startswith("#"):
        header += 1
    if header > line and header < first and not src.line_text(header).strip():
        line = header + 1
    return src.line_start(line)


def rename_source(
    source: str,
    renames: Mapping[str, str],
    generated_module: str,
    style: ImportStyle | None = None,
    package: str | None = None,
) -> str:
    """`source` with each class of `generated_module` named in `renames` (old → new) called by
    its new name: its imports, and every use of the name they bind (raises, `except` clauses,
    annotations), or of `module.Old` where the module itself is imported.

    A renamed import is sorted again as the project's sorter would have it: the names of a
    `from` statement re-ordered (wrapped at the line length), and under `force-single-line`
    the run of one-name statements from the module put in order again (a sorter keeps the
    statements of one module together, so the run is where every one of them belongs).
    """
    if style is None:
        style = ImportStyle(first_party=frozenset({generated_module.split(".")[0]}))
    bom = _BOM if source.startswith(_BOM) else ""
    text = source[len(bom) :]
    try:
        tree = _parse(text)
    except SyntaxError as exc:
        raise MigrateError(f"cannot parse: {exc.msg} (line {exc.lineno})") from None
    except ValueError as exc:
        raise MigrateError(f"cannot parse: {exc}") from None
    src = _Source(text)
    # The module as this file spells its import of it (see `migrate_source`).
    spelt = _spelling(generated_module, package)
    imported, other = _top_level_bindings(tree, spelt, src)
    for old, new in renames.items():
        if old in imported and new in other and new not in renames:
            raise MigrateError(f"{new} is already bound in this module; rename the entry")
    edits: list[_Edit] = []
    bound: set[str] = set()  # old names the module's imports bind under their own name
    modules: set[str] = {generated_module}  # what `module.Old` may be spelt as
    leaf = generated_module.rsplit(".", 1)[-1]
    runs = _single_line_runs(src, tree, spelt) if style.force_single_line else []
    in_runs = {id(statement) for run in runs for statement in run}
    for run in runs:
        edits.extend(_sorted_run(src, run, renames, spelt, style))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (
            _is_from(node, generated_module) or _is_from(node, spelt)
        ):
            module = generated_module if _is_from(node, generated_module) else spelt
            if id(node) not in in_runs:
                edits.extend(_renamed_import(src, node, renames, module, style))
            bound.update(a.name for a in node.names if a.name in renames and not a.asname)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if f"{node.module}.{leaf}" == generated_module:
                modules.update(a.asname or a.name for a in node.names if a.name == leaf)
        elif isinstance(node, ast.Import):
            modules.update(a.asname for a in node.names if a.name == generated_module and a.asname)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in bound:
            start = src.offset(node.lineno, node.col_offset)
            edits.append(_Edit(start, start + len(node.id), renames[node.id]))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in renames
            and ast.unparse(node.value) in modules
        ):
            assert node.end_lineno is not None and node.end_col_offset is not None
            end = src.offset(node.end_lineno, node.end_col_offset)
            edits.append(_Edit(end - len(node.attr), end, renames[node.attr]))
    if not edits:
        return source
    renamed = _splice(text, edits)
    try:
        _parse(renamed)
    except SyntaxError as exc:
        raise MigrateError(
            f"the renamed source does not parse: {exc.msg} (line {exc.lineno})"
        ) from None
    return bom + renamed


def _single_line_runs(src: _Source, tree: ast.Module, module: str) -> list[list[ast.ImportFrom]]:
    """Runs of consecutive module-level `from <module> import X` statements, one name each,
    each alone on its line (no comment, nothing after `;`)."""
    runs: list[list[ast.ImportFrom]] = []
    run: list[ast.ImportFrom] = []
    for statement in tree.body:
        alone = (
            isinstance(statement, ast.ImportFrom)
            and _is_from(statement, module)
            and len(statement.names) == 1
            and statement.lineno == statement.end_lineno
            and src.line_text(statement.lineno).strip()
            == src.text[
                src.offset(statement.lineno, statement.col_offset) : src.offset(
                    statement.lineno, statement.end_col_offset or 0
                )
            ]
        )
        if alone and run and statement.lineno == (run[-1].end_lineno or 0) + 1:
            assert isinstance(statement, ast.ImportFrom)
            run.append(statement)
            continue
        if run:
            runs.append(run)
        run = [statement] if alone and isinstance(statement, ast.ImportFrom) else []
    if run:
        runs.append(run)
    return runs


def _sorted_run(
    src: _Source,
    run: list[ast.ImportFrom],
    renames: Mapping[str, str],
    module: str,
    style: ImportStyle,
) -> list[_Edit]:
    """The run of one-name statements, renamed and in order again; none when nothing in it is
    renamed (its order is the project's business)."""
    if not any(statement.names[0].name in renames for statement in run):
        return []
    names = []
    for statement in run:
        alias = statement.names[0]
        name = renames.get(alias.name, alias.name)
        names.append(f"{name} as {alias.asname}" if alias.asname else name)
    lines = [
        _format_import(module, [name], "", "", src.newline, style.line_length)
        for name in sorted(set(names), key=lambda name: name.split(" ")[0])
    ]
    start = src.starts[run[0].lineno - 1]
    end = src.offset(run[-1].lineno, run[-1].end_col_offset or 0)
    indent = src.text[start : src.offset(run[0].lineno, run[0].col_offset)]
    return [_Edit(start, end, src.newline.join(indent + line for line in lines))]


def _renamed_import(
    src: _Source,
    statement: ast.ImportFrom,
    renames: Mapping[str, str],
    module: str,
    style: ImportStyle,
) -> list[_Edit]:
    """The edits that make one `from <module> import ...` statement import the new names."""
    if not any(alias.name in renames for alias in statement.names):
        return []
    assert statement.end_lineno is not None and statement.end_col_offset is not None
    start = src.offset(statement.lineno, statement.col_offset)
    end = src.offset(statement.end_lineno, statement.end_col_offset)
    line_start = src.starts[statement.lineno - 1]
    before = src.text[line_start:start]
    after = src.line_text(statement.end_lineno)[end - src.starts[statement.end_lineno - 1] :]
    if "#" in src.text[start:end]:
        # A comment inside the statement stays where it is: only the names change.
        edits = []
        for alias in statement.names:
            if alias.name in renames:
                at = src.text.index(alias.name, start, end)
                while not _whole_word(src.text, at, alias.name):
                    at = src.text.index(alias.name, at + 1, end)
                edits.append(_Edit(at, at + len(alias.name), renames[alias.name]))
        return edits
    names = sorted(
        {
            f"{renames.get(a.name, a.name)} as {a.asname}"
            if a.asname
            else renames.get(a.name, a.name)
            for a in statement.names
        },
        key=lambda name: name.split(" ")[0],
    )
    return [
        _Edit(
            start,
            end,
            _format_import(module, names, before, after, src.newline, style.line_length),
        )
    ]


def _whole_word(text: str, at: int, word: str) -> bool:
    before = text[at - 1] if at else " "
    end = at + len(word)
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before == "_" or after.isalnum() or after == "_")
