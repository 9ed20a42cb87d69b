"""Qualified-name resolution: what a name in a module refers to, through its imports.

Scopes are created by the locator (`locate.py`) and fill their bindings on first use; only
statement-level bindings are recorded (imports, definitions, assignments, loop and `with`
targets, handlers, parameters).
A name bound by anything other than an import, a definition at module level or the builtins
resolves to None rather than to a guess.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_BUILTIN_NAMES = frozenset(vars(builtins))


@dataclass(eq=False)
class Scope:
    """A module, class or function body, and the names bound in it (filled on first use)."""

    kind: str
    """`module`, `class` or `function`."""
    node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    parent: Scope | None
    qualname: str | None
    """Dotted classes and functions down to this scope; None for the module."""
    imports: dict[str, set[str]] = field(default_factory=dict)
    """Local name -> qualified names it was imported as."""
    bound: set[str] = field(default_factory=set)
    """Names bound here other than by imports."""
    declared_global: set[str] = field(default_factory=set)
    """Names a `global` statement sends to the module scope."""
    filled: bool = False
    """Whether the bindings above have been collected."""

    def module_scope(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def fill(self, module: ModuleName) -> Scope:
        """Collect the statement-level bindings of this scope's own body (once)."""
        if not self.filled:
            node = self.node
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.bound.update(parameter_names(node))
            _Bindings(self, module).body(node.body)
            self.filled = True
        return self


def parameter_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Every parameter a function binds, `*args` and `**kwargs` included, in order."""
    arguments = node.args
    every = (*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs)
    return [argument.arg for argument in (*every, arguments.kwarg) if argument is not None]


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.C` for a chain of names and attributes (as written, before any resolving); None
    for anything else (a call, a subscript, `super()`)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def target_names(target: ast.expr, into: set[str]) -> None:
    """Add to `into` every name an assignment target (`a`, `a, *b`, `[a, (b, c)]`) binds."""
    if isinstance(target, ast.Name):
        into.add(target.id)
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            target_names(element, into)
    elif isinstance(target, ast.Starred):
        target_names(target.value, into)


def bound_names(statements: list[ast.stmt]) -> set[str]:
    """The names statements bind in their own scope, imports included (`import a.b` binds
    `a`), through branches, loops, `with` and `try`, not entering nested scopes."""
    scope = Scope("module", ast.Module(body=statements, type_ignores=[]), None, None)
    _Bindings(scope, ModuleName("", is_package=False)).body(statements)
    return scope.bound | set(scope.imports)


class _Bindings:
    """Records what a scope's own statements bind, not entering nested scopes."""

    def __init__(self, scope: Scope, module: ModuleName) -> None:
        self.scope = scope
        self.module = module

    def body(self, statements: list[ast.stmt]) -> None:
        # Dispatch on the exact type: most statements (expressions, returns, raises) bind
        # nothing, and a chain of isinstance tests made each of them pay for every case.
        for statement in statements:
            record = _RECORDS.get(type(statement))
            if record is not None:
                record(self, statement)

    def assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            target_names(target, self.scope.bound)

    def definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.bound.add(node.name)

    def import_(self, node: ast.Import) -> None:
        imports = self.scope.imports
        for alias in node.names:
            if alias.asname:
                imports.setdefault(alias.asname, set()).add(alias.name)
            else:
                root = alias.name.partition(".")[0]
                imports.setdefault(root, set()).add(root)

    def import_from(self, node: ast.ImportFrom) -> None:
        scope = self.scope
        base = import_from_base(node, self.module)
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            if base is None:
                scope.bound.add(local)
            else:
                scope.imports.setdefault(local, set()).add(f"{base}.{alias.name}")

    def target(self, node: ast.AnnAssign | ast.AugAssign) -> None:
        target_names(node.target, self.scope.bound)

    def branches(self, node: ast.If | ast.While) -> None:
        self.body(node.body)
        self.body(node.orelse)

    def loop(self, node: ast.For | ast.AsyncFor) -> None:
        target_names(node.target, self.scope.bound)
        self.body(node.body)
        self.body(node.orelse)

    def with_(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                target_names(item.optional_vars, self.scope.bound)
        self.body(node.body)

    def try_(self, node: ast.Try | ast.TryStar) -> None:
        self.body(node.body)
        for handler in node.handlers:
            if handler.name:
                self.scope.bound.add(handler.name)
            self.body(handler.body)
        self.body(node.orelse)
        self.body(node.finalbody)

    def match(self, node: ast.Match) -> None:
        for case in node.cases:
            for sub in ast.walk(case.pattern):
                name = getattr(sub, "name", None) or getattr(sub, "rest", None)
                if isinstance(name, str):
                    self.scope.bound.add(name)
            self.body(case.body)

    def global_(self, node: ast.Global) -> None:
        self.scope.declared_global.update(node.names)

    def delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            target_names(target, self.scope.bound)


_RECORDS: dict[type[ast.stmt], Callable[[_Bindings, Any], None]] = {
    ast.Assign: _Bindings.assign,
    ast.FunctionDef: _Bindings.definition,
    ast.AsyncFunctionDef: _Bindings.definition,
    ast.ClassDef: _Bindings.definition,
    ast.Import: _Bindings.import_,
    ast.ImportFrom: _Bindings.import_from,
    ast.AnnAssign: _Bindings.target,
    ast.AugAssign: _Bindings.target,
    ast.If: _Bindings.branches,
    ast.While: _Bindings.branches,
    ast.For: _Bindings.loop,
    ast.AsyncFor: _Bindings.loop,
    ast.With: _Bindings.with_,
    ast.AsyncWith: _Bindings.with_,
    ast.Try: _Bindings.try_,
    ast.TryStar: _Bindings.try_,
    ast.Match: _Bindings.match,
    ast.Global: _Bindings.global_,
    ast.Delete: _Bindings.delete,
}
"""What each kind of statement binds; a kind not here binds nothing."""


@dataclass(frozen=True)
class ModuleName:
    """The dotted name of the module a file defines, used for relative imports."""

    name: str
    """Dotted module name (`runtime.errors`; `runtime` for `runtime/__init__.py`)."""
    is_package: bool
    """Whether the file is a package's `__init__.py`."""

    @property
    def package(self) -> str:
        """The package that relative imports start from."""
        if self.is_package:
            return self.name
        return self.name.rpartition(".")[0]


def module_name_for(path: Path, _known: dict[Path, tuple[str, ...]] | None = None) -> ModuleName:
    """The module a file defines: its stem under every parent folder holding `__init__.py`.

    `_known` memoises the package parts of folders across calls.
    """
    folder = path.parent
    parts = _package_parts(folder, {} if _known is None else _known)
    stem = path.name.removesuffix(".py")
    if stem == "__init__" and parts:
        return ModuleName(".".join(parts), True)
    return ModuleName(".".join((*parts, stem)), False)


def _package_parts(folder: Path, known: dict[Path, tuple[str, ...]]) -> tuple[str, ...]:
    if folder in known:
        return known[folder]
    if (folder / "__init__.py").is_file() and folder.parent != folder:
        parts: tuple[str, ...] = (*_package_parts(folder.parent, known), folder.name)
    else:
        parts = ()
    known[folder] = parts
    return parts


def import_from_base(node: ast.ImportFrom, module: ModuleName) -> str | None:
    """The absolute module an `from ... import` statement imports from, or None if unknown."""
    if not node.level:
        return node.module
    base = module.package
    parts = base.split(".") if base else []
    if node.level - 1 > len(parts) or (node.level - 1 == len(parts) and not node.module):
        return None
    parts = parts[: len(parts) - (node.level - 1)]
    if node.module:
        parts.append(node.module)
    return ".".join(parts) or None


def resolve(dotted: str, scope: Scope, module: ModuleName) -> str | None:
    """Resolve a dotted name as written in `scope` to a qualified name, or None.

    Imported names resolve to what they import, names defined at module level to
    `<module>.<name>`, builtins to `builtins.<name>`; local variables resolve to None.
    """
    root, dot, rest = dotted.partition(".")
    current: Scope | None = scope
    first = True
    while current is not None:
        current.fill(module)
        if current.kind == "class" and not first:
            # Class bodies do not enclose the functions defined in them.
            current = current.parent
            continue
        # A `global` at module level is allowed and means nothing: only a nested scope is sent on.
        if root in current.declared_global and current.kind != "module":
            current = current.module_scope()
            first = False
            continue
        targets = current.imports.get(root)
        if targets:
            if len(targets) != 1:
                return None
            (target,) = targets
            return target + dot + rest
        if root in current.bound:
            if current.kind == "module":
                return f"{module.name}.{dotted}" if module.name else dotted
            return None
        current = current.parent
        first = False
    if root in _BUILTIN_NAMES:
        return f"builtins.{dotted}"
    return None


def public_rank(module: str, function: str | None = None) -> tuple[int, int]:
    """How far from the public API a dotted name is (a raise site's module and function, or a
    class's path), lower first: its private parts (a module or function name with a leading
    `_`; `__init__` and `__call__` are how public classes are called), then how deep its module
    lies. `torch.optim.adam` comes before
    `torch.distributed.optim.functional_adam`, and both before `torch._dynamo.utils`: the
    module a user imports from is the one their traceback most likely shows."""
    parts = [part for part in module.split(".") if part]
    names = [part for part in (function or "").split(".") if part]
    private = sum(part.startswith("_") and part != "__init__" for part in parts)
    private += sum(part.startswith("_") and part not in ("__init__", "__call__") for part in names)
    return (private, len(parts))


def is_builtin_exception(qualified: str | None) -> bool:
    """Whether a qualified name (`builtins.ValueError`) names a built-in exception class."""
    if qualified is None or not qualified.startswith("builtins."):
        return False
    found = getattr(builtins, qualified.partition(".")[2], None)
    return isinstance(found, type) and issubclass(found, BaseException)
