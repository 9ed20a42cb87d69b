"""Expectations: the places where a package's own tests say that a call raises an error.

Read from test files with `ast` (no catalog knowledge here; catalog/evidence/tested.py pairs them with
entries). Recognised forms, at any depth of a test file:

- `with pytest.raises(X):` and `with pytest.raises(X, match=PAT):` (also `raises` imported from
  pytest, and several items in one `with`);
- the call form `pytest.raises(X, func, *args)`, as a statement or an assignment's value (its
  keyword arguments go to `func`, so it has no pattern);
- `self.assertRaises(X)` / `self.assertRaisesRegex(X, PAT)` (and the old `assertRaisesRegexp`),
  as a context manager or in the call form with a callable;
- a tuple of classes `(X, Y)` gives one expectation per class;
- `with check:` where `check = pytest.raises(X, match=PAT)` (or an `assertRaises` context) is
  the name's one binding in the function: an expectation at each such `with`;
- *records of error inputs*, the rows of tables that tests loop over: a call anywhere in a
  test file that passes, by keyword, an exception class (a dotted name whose last part ends in
  `Error`, `Exception` or `Warning`, or a built-in exception) and a pattern (a literal, under a
  keyword whose name holds `regex`, `match` or `pattern`): `ErrorInput(sample,
  error_type=ValueError, error_regex="must be positive")`; a row naming no class expects the
  one its maker's constructor defaults to, where that class is defined in a file read too and
  its `__init__` takes a pattern (`def __init__(self, sample, *, error_type=RuntimeError,
  error_regex)`). Such an expectation is a `record`:
  what catches its error is the test reading the table, so the suite run pairs nothing by it
  (`catalog.evidence.suite`) and only reading pairs it.

`pattern` is read only from a string literal (plain, raw, implicitly concatenated) or
`re.escape(<literal>)`; anything else (a variable, an f-string) gives None. A class that is not a
dotted name (a variable from a parametrize table counts as a name and resolves to None) is
skipped. Files holding none of the bytes `raises`, `Raises`, `regex`, `match=` or `pattern=`
are not parsed: most files of a large test folder say none.
"""

from __future__ import annotations

import ast
import glob
import os
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib.util import decode_source
from pathlib import Path

from extractor.files import display_path, printable
from extractor.imports import (
    ModuleName,
    Scope,
    dotted_name,
    is_builtin_exception,
    module_name_for,
    resolve,
)
from extractor.instance import own_init
from extractor.model import ScanFailure

MAX_CODE_LINES = 25
"""Lines of `code` kept; a longer statement is cut and ends with a `...` line."""

_PYTEST_RAISES = frozenset({"pytest.raises", "_pytest.python_api.raises", "_pytest.raises"})
_ASSERT_RAISES = frozenset({"assertRaises"})
_ASSERT_RAISES_REGEX = frozenset({"assertRaisesRegex", "assertRaisesRegexp"})
_PREFILTER = (b"raises", b"Raises", b"regex", b"match=", b"pattern=")
_GLOB = re.compile(r"[*?\[]")
_PATTERN_KEYWORD = re.compile(r"regex|match|pattern", re.IGNORECASE)
_CLASS_ENDINGS = ("Error", "Exception", "Warning")
_TEST_FILE = re.compile(r"(?:test_.*|.*_test)\.py\Z")


@dataclass(frozen=True)
class Expectation:
    """One test's statement that some code raises `exception` (optionally matching `pattern`)."""

    path: str
    """The test file, relative to the `cwd` given to the reader, `/`-separated."""
    line: int
    """1-based line of the `with` statement or of the call statement."""
    exception: str
    """The expected class as written (`ValueError`, `errors.BadInput`)."""
    qualified_name: str | None
    """`exception` resolved through the test file's imports (`builtins.ValueError`), or None."""
    pattern: str | None
    """The regular expression the message must match (`re.search`), or None when the test gives
    none or gives it as something other than a literal."""
    code: str
    """The whole `with` (or call) statement, dedented, at most MAX_CODE_LINES lines."""
    function: str | None
    """Dotted enclosing classes and functions (`TestPool.test_take`); None at module level."""
    record: bool = False
    """True for a record of an error input (a table's row naming the class and the pattern):
    the test that reads the table catches the error, not a statement at `line`."""


def read_expectations(
    paths: Sequence[Path], *, cwd: Path
) -> tuple[tuple[Expectation, ...], tuple[ScanFailure, ...]]:
    """The expectations of the test files under `paths`, and the files that could not be read.

    A path that is a file is read whatever its name; a folder is walked (in name order, not
    entering hidden folders or `__pycache__`) for `test_*.py` and `*_test.py`; a path holding
    `*`, `?` or `[` is a glob pattern (`**` for any depth), each `.py` file it matches read
    whatever its name (a package's own test tables: `pkg/testing/**/*.py`). Expectations come
    in path then line order. A missing path (a pattern matching nothing), an unreadable or
    unparsable file is a failure and reading goes on.
    """
    cwd = Path(os.path.abspath(cwd))
    found: list[Expectation] = []
    failures: list[ScanFailure] = []
    known: dict[Path, tuple[str, ...]] = {}
    files: dict[str, Path] = {}
    for given in paths:
        absolute = Path(os.path.abspath(cwd / given))
        pattern = _pattern(absolute, cwd)
        if pattern is not None:
            matched = sorted(
                Path(found)
                for found in glob.glob(pattern, recursive=True)
                if found.endswith(".py") and os.path.isfile(found)
            )
            for path in matched:
                files.setdefault(display_path(path, cwd), path)
            if not matched:
                shown = printable(display_path(absolute, cwd))
                failures.append(ScanFailure(shown, 1, 1, "no file matches this pattern"))
        elif absolute.is_dir():
            for path in _test_files(absolute):
                files.setdefault(display_path(path, cwd), path)
        elif os.path.lexists(absolute):
            files.setdefault(display_path(absolute, cwd), absolute)
        else:
            shown = printable(display_path(absolute, cwd))
            failures.append(ScanFailure(shown, 1, 1, "no such file or folder"))
    readers: list[_Reader] = []
    makers: dict[str, tuple[str, str | None]] = {}
    for display in sorted(files):
        reader, failure = _read_file(files[display], printable(display), known)
        if reader is not None:
            readers.append(reader)
            makers.update(reader.makers)
        if failure is not None:
            failures.append(failure)
    for reader in readers:
        # A row leaving the class to its maker's default: known once every file is read.
        reader.defaulted(makers)
        found.extend(sorted(reader.found, key=lambda expectation: expectation.line))
    return tuple(found), tuple(failures)


def _pattern(absolute: Path, cwd: Path) -> str | None:
    """The glob pattern a path is, with the folder it is read from taken literally; None for a
    path without `*`, `?` or `[` after that folder."""
    root, text = str(cwd), str(absolute)
    if text.startswith(root + os.sep):
        rest = text[len(root) :]
        return glob.escape(root) + rest if _GLOB.search(rest) else None
    return text if _GLOB.search(text) else None


def _test_files(folder: Path) -> Iterator[Path]:
    # Symlinked folders are not followed: a test tree has no need of them, and not following
    # them rules out loops.
    for root, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and f != "__pycache__")
        for name in sorted(names):
            if _TEST_FILE.match(name):
                yield Path(root) / name


def _read_file(
    path: Path, display: str, known: dict[Path, tuple[str, ...]]
) -> tuple[_Reader | None, ScanFailure | None]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, ScanFailure(display, 1, 1, f"cannot read file: {exc.strerror or exc}")
    if not any(marker in data for marker in _PREFILTER):
        return None, None
    try:
        text = decode_source(data)
        tree = ast.parse(text, filename=display)
    except SyntaxError as exc:
        return None, ScanFailure(
            display, exc.lineno or 1, exc.offset or 1, f"cannot parse: {exc.msg}"
        )
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        return None, ScanFailure(display, 1, 1, f"cannot parse: {exc}")
    reader = _Reader(display, text.splitlines(), module_name_for(path, known))
    reader.scope_body(tree.body, Scope("module", tree, None, None))
    return reader, None


@dataclass(frozen=True)
class _Row:
    """A row of a table of error inputs that leaves the class to what makes it (`ErrorInput(
    sample, error_regex="...")`): an expectation once the maker's default class is known."""

    maker: str
    """The qualified name of the class or function called."""
    line: int
    pattern: str
    code: str
    function: str | None


class _Reader:
    """Walks one module's statements with the scope each is in."""

    def __init__(self, display: str, lines: list[str], module: ModuleName) -> None:
        self.display = display
        self.lines = lines
        self.module = module
        self.found: list[Expectation] = []
        self.rows: list[_Row] = []
        """Rows of error inputs naming no class, left to their maker's default."""
        self.makers: dict[str, tuple[str, str | None]] = {}
        """Qualified class name -> the exception class its constructor defaults to (as
        written, resolved), for a constructor that takes a pattern (`error_regex`) too."""

    def scope_body(self, statements: list[ast.stmt], scope: Scope) -> None:
        for statement in statements:
            self.statement(statement, scope)

    def statement(self, node: ast.stmt, scope: Scope) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            qualname = f"{scope.qualname}.{node.name}" if scope.qualname else node.name
            if isinstance(node, ast.ClassDef):
                self.maker(node, qualname, scope)
            self.scope_body(node.body, Scope(kind, node, scope, qualname))
            return
        if isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if isinstance(item.context_expr, ast.Call):
                    self.call(item.context_expr, node, scope, context=True)
                elif isinstance(item.context_expr, ast.Name):
                    # `check = pytest.raises(X, match=...)`, then `with check:` (once or more).
                    made = _made_once(item.context_expr.id, scope)
                    if made is not None:
                        self.call(made, node, scope, context=True)
        elif isinstance(node, ast.Expr | ast.Assign) and isinstance(node.value, ast.Call):
            self.call(node.value, node, scope, context=False)
        self.records(node, scope)
        # Nested blocks (if, for, try, with bodies...) hold statements too; expressions do not
        # hold statements, so only statement lists are followed.
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                for child in children:
                    if isinstance(child, ast.stmt):
                        self.statement(child, scope)
                    elif isinstance(child, ast.ExceptHandler | ast.match_case):
                        self.scope_body(child.body, scope)

    def call(self, call: ast.Call, statement: ast.stmt, scope: Scope, *, context: bool) -> None:
        form = self.form(call.func, scope)
        if form is None or not call.args:
            return
        pattern: str | None = None
        rest = call.args[1:]
        if form == "pytest":
            if not context and not rest:
                # `pytest.raises(X)` as a bare statement expects nothing.
                return
            if context:
                pattern = _keyword_pattern(call, "match", scope, self.module)
        elif form == "unittest":
            if not context and not rest:
                return
        else:
            regex: ast.expr | None = rest[0] if rest else _keyword(call, "expected_regex")
            if regex is None:
                return
            pattern = _literal_pattern(regex, scope, self.module)
            if not context and len(rest) < 2:
                return
        code = self.code(statement)
        for written in _classes(call.args[0]):
            self.expect(statement.lineno, written, scope, pattern, code)

    def expect(
        self,
        line: int,
        written: str,
        scope: Scope,
        pattern: str | None,
        code: str,
        *,
        record: bool = False,
    ) -> None:
        self.found.append(
            Expectation(
                path=self.display,
                line=line,
                exception=written,
                qualified_name=resolve(written, scope, self.module),
                pattern=pattern,
                code=code,
                function=scope.qualname,
                record=record,
            )
        )

    def records(self, node: ast.stmt, scope: Scope) -> None:
        """The records of error inputs among the statement's own expressions (the statements
        it holds are read on their own)."""
        for _field, value in ast.iter_fields(node):
            for part in value if isinstance(value, list) else [value]:
                if not isinstance(part, ast.expr):
                    continue
                for call in ast.walk(part):
                    if isinstance(call, ast.Call):
                        self.record(call, scope)

    def record(self, call: ast.Call, scope: Scope) -> None:
        pattern: str | None = None
        classes: list[str] = []
        for keyword in call.keywords:
            if keyword.arg is None:
                continue
            if _PATTERN_KEYWORD.search(keyword.arg):
                pattern = _literal_pattern(keyword.value, scope, self.module)
            else:
                named = _classes(keyword.value)
                if named and all(self.exception_class(name, scope) for name in named):
                    classes = named
        if pattern is None:
            return
        if not classes:
            dotted = dotted_name(call.func)
            maker = None if dotted is None else resolve(dotted, scope, self.module)
            if maker is not None:
                self.rows.append(
                    _Row(maker, call.lineno, pattern, self.segment(call), scope.qualname)
                )
            return
        code = self.segment(call)
        for written in classes:
            self.expect(call.lineno, written, scope, pattern, code, record=True)

    def maker(self, node: ast.ClassDef, qualname: str, scope: Scope) -> None:
        """Note a class whose constructor takes a pattern (a parameter whose name holds
        `regex`, `match` or `pattern`) and defaults another parameter to an exception class:
        what its rows that name no class expect."""
        init = own_init(node)
        if init is None:
            return
        arguments = init.args
        positional = [*arguments.posonlyargs, *arguments.args]
        bare = len(positional) - len(arguments.defaults)
        defaults: list[tuple[ast.arg, ast.expr | None]] = [
            *((argument, None) for argument in positional[:bare]),
            *zip(positional[bare:], arguments.defaults, strict=True),
            *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
        ]
        if not any(_PATTERN_KEYWORD.search(argument.arg) for argument, _default in defaults):
            return
        for argument, default in defaults:
            written = None if default is None else dotted_name(default)
            if (
                written is not None
                and not _PATTERN_KEYWORD.search(argument.arg)
                and self.exception_class(written, scope)
            ):
                qualified = f"{self.module.name}.{qualname}" if self.module.name else qualname
                self.makers[qualified] = (written, resolve(written, scope, self.module))
                return

    def defaulted(self, makers: dict[str, tuple[str, str | None]]) -> None:
        """The rows whose maker is known, as expectations of its default class."""
        for row in self.rows:
            if row.maker not in makers:
                continue
            written, qualified = makers[row.maker]
            self.found.append(
                Expectation(
                    path=self.display,
                    line=row.line,
                    exception=written,
                    qualified_name=qualified,
                    pattern=row.pattern,
                    code=row.code,
                    function=row.function,
                    record=True,
                )
            )
        self.rows = []

    def exception_class(self, written: str, scope: Scope) -> bool:
        """Whether a dotted name reads as an exception class: a built-in one, or a name ending
        as exception classes are named."""
        if written.rpartition(".")[2].endswith(_CLASS_ENDINGS):
            return True
        return is_builtin_exception(resolve(written, scope, self.module))

    def form(self, func: ast.expr, scope: Scope) -> str | None:
        """`pytest`, `unittest` or `regex` for a call of one of the recognised functions."""
        if isinstance(func, ast.Attribute):
            if func.attr in _ASSERT_RAISES:
                return "unittest"
            if func.attr in _ASSERT_RAISES_REGEX:
                return "regex"
            if func.attr != "raises":
                return None
        elif not isinstance(func, ast.Name) or func.id != "raises":
            return None
        dotted = dotted_name(func)
        if dotted is not None and resolve(dotted, scope, self.module) in _PYTEST_RAISES:
            return "pytest"
        return None

    def segment(self, node: ast.expr) -> str:
        """An expression's own source (its first line from its column on), cut as `code`
        cuts a statement."""
        end = node.end_lineno or node.lineno
        lines = self.lines[node.lineno - 1 : end]
        if node.end_col_offset is not None:
            # Offsets count UTF-8 bytes.
            last = lines[-1].encode("utf-8")[: node.end_col_offset]
            lines[-1] = last.decode("utf-8", errors="replace")
        first = lines[0].encode("utf-8")
        indent = len(first) - len(first.lstrip())
        lines[0] = " " * indent + first[node.col_offset :].decode("utf-8", errors="replace")
        return self.cut(lines)

    def code(self, statement: ast.stmt) -> str:
        end = statement.end_lineno or statement.lineno
        return self.cut(self.lines[statement.lineno - 1 : end])

    @staticmethod
    def cut(lines: list[str]) -> str:
        if len(lines) > MAX_CODE_LINES:
            lines = lines[: MAX_CODE_LINES - 1]
            indent = re.match(r"\s*", lines[-1])
            lines.append(f"{indent.group() if indent else ''}...")
        return textwrap.dedent("\n".join(lines)).rstrip()


def _made_once(name: str, scope: Scope) -> ast.Call | None:
    """The call `name` is bound to, where its only binding in the scope is a plain `name =
    f(...)` statement; else None."""
    stores = 0
    made: ast.Call | None = None
    for node in ast.walk(scope.node):
        stored = (
            isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
        )
        stores += stored or (isinstance(node, ast.arg) and node.arg == name)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
        ):
            made = node.value
    return made if stores == 1 else None


def _classes(node: ast.expr) -> list[str]:
    """The dotted names of an expected-class argument: one name, or a tuple of them."""
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    names = [dotted_name(element) for element in elements]
    return [name for name in names if name is not None]


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _keyword_pattern(call: ast.Call, name: str, scope: Scope, module: ModuleName) -> str | None:
    value = _keyword(call, name)
    return None if value is None else _literal_pattern(value, scope, module)


def _literal_pattern(node: ast.expr, scope: Scope, module: ModuleName) -> str | None:
    # Implicit concatenation is joined by the parser, so one Constant covers it; raw strings
    # are already their text.
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        dotted = dotted_name(node.func)
        if dotted is not None and resolve(dotted, scope, module) == "re.escape":
            return re.escape(node.args[0].value)
    return None
