"""Type aliases in a function's annotations, written out as what they stand for.

A parameter annotated with an alias (`params: ParamsT`, `kernel_size: _size_2_t`) says nothing
to the value rules of `catalog.evidence.candidates`, which read annotations as written: errcat
passed `ParamsT()` (an alias cannot be called) or None. Written out, the annotation is one
the rules read: `Iterable[torch.Tensor] | Iterable[dict[str, Any]] | ...` (a list of one
value the examples make), `int | tuple[int, int]` (`1`).

An alias is a name a module binds once, at its top level, to a type expression:
`ParamsT: TypeAlias = ...`, or without the annotation a subscript of a typing construct or a
builtin container (`Union[...]`, `Optional[...]`, `list[...]`, `Callable[...]`) or a `|` of
type expressions. A generic alias subscripted (`_scalar_or_tuple_2_t[int]`, where the alias
is `T | tuple[T, T]` and `T = TypeVar("T")`) has its type variables replaced by the
arguments, in the order they first appear. A name the module imports (`from
torch.optim.optimizer import ParamsT`, relative or absolute) is looked up in the module it
comes from, a few imports deep, within the package. Anything else is left as written: what
this cannot read is what the rules saw before.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from pathlib import Path

from extractor.imports import ModuleName, dotted_name, import_from_base, module_name_for

_DEPTH = 4
"""How many imports and aliases of aliases one name is followed through."""
_CONSTRUCTS = frozenset(
    {
        "Union",
        "Optional",
        "List",
        "Tuple",
        "Dict",
        "Set",
        "FrozenSet",
        "Type",
        "Callable",
        "Iterable",
        "Iterator",
        "Sequence",
        "MutableSequence",
        "Mapping",
        "MutableMapping",
        "Collection",
        "Literal",
        "Annotated",
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "type",
    }
)
"""Subscripted names whose subscript is a type expression (`typing`, `collections.abc` and
the builtin containers)."""

_Module = tuple[dict[str, ast.expr], dict[str, tuple[str, str]], frozenset[str]]
"""A module's aliases (name -> value), imported names (name -> (module, name there)) and
type variables."""


class Aliases:
    """The aliases of a package's modules, each file read once."""

    def __init__(
        self,
        root: Path,
        module_file: Callable[[str], Path | None],
        parse: Callable[[Path], ast.Module | None] | None = None,
    ) -> None:
        self.root = root
        self.module_file = module_file
        """The file of a module of the package by its dotted name, or None."""
        self.parse = parse or _parse
        """The tree of a file (None where it cannot be read): a reader that has the package's
        trees already parsed shares them (a whole torch run parses each file once, not twice);
        the trees are only read here."""
        self._modules: dict[Path, _Module | None] = {}

    def expanded(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, path: Path
    ) -> ast.FunctionDef | ast.AsyncFunctionDef:
        """`node` (defined in the file `path`) with each annotation's aliases written out; the
        node itself where it has none."""
        arguments = node.args
        every = _every(arguments)
        written = {
            id(arg): found
            for arg in every
            if arg.annotation is not None
            and (found := self._written(arg.annotation, path, 0)) is not None
        }
        if not written:
            return node
        changed = copy.copy(node)
        changed.args = copy.deepcopy(arguments)
        for original, arg in zip(every, _every(changed.args), strict=True):
            if id(original) in written:
                arg.annotation = written[id(original)]
        return changed

    def _written(self, annotation: ast.expr, path: Path, depth: int) -> ast.expr | None:
        """The annotation with its alias names replaced, or None where it has none."""
        if depth > _DEPTH:
            return None
        module = self._module(path)
        if module is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        writer = _Writer(lambda name: self._alias(name, path, depth))
        written = writer.visit(copy.deepcopy(annotation))
        return written if writer.changed else None

    def _alias(self, name: str, path: Path, depth: int) -> tuple[ast.expr, list[str]] | None:
        """What the alias `name`, as the file `path` knows it, stands for (its own aliases
        written out in turn) and its type variables in order; None for any other name."""
        if depth > _DEPTH:
            return None
        module = self._module(path)
        if module is None:
            return None
        aliases, imported, variables = module
        if name in aliases:
            value = aliases[name]
            written = self._written(value, path, depth + 1)
            value = written if written is not None else copy.deepcopy(value)
            order = [
                node.id
                for node in ast.walk(aliases[name])
                if isinstance(node, ast.Name) and node.id in variables
            ]
            return value, list(dict.fromkeys(order))
        if name in imported:
            home, there = imported[name]
            file = self.module_file(home)
            if file is None:
                return None
            return self._alias(there, file, depth + 1)
        return None

    def _module(self, path: Path) -> _Module | None:
        if path not in self._modules:
            self._modules[path] = self._read(path)
        return self._modules[path]

    def _read(self, path: Path) -> _Module | None:
        file = path if path.is_absolute() else self.root / path
        tree = self.parse(file)
        if tree is None:
            return None
        module = module_name_for(file)
        counts: dict[str, int] = {}
        values: dict[str, ast.expr] = {}
        declared: set[str] = set()
        imported: dict[str, tuple[str, str]] = {}
        variables: set[str] = set()
        for statement in tree.body:
            for name, value, said in _bindings(statement, module, imported):
                counts[name] = counts.get(name, 0) + 1
                if value is not None:
                    values[name] = value
                if said:
                    declared.add(name)
        aliases: dict[str, ast.expr] = {}
        for name, value in values.items():
            if counts[name] != 1:
                continue
            if _type_variable(value):
                variables.add(name)
            elif name in declared or _type_expression(value):
                aliases[name] = value
        # A generic alias subscripted (`_size_2_t = _scalar_or_tuple_2_t[int]`), its own
        # alias defined here or imported, is one too.
        generic = {*aliases, *(name for name in imported if counts.get(name) == 1)}
        for name, value in values.items():
            if (
                counts[name] == 1
                and name not in aliases
                and isinstance(value, ast.Subscript)
                and isinstance(value.value, ast.Name)
                and value.value.id in generic
            ):
                aliases[name] = value
        return (
            aliases,
            {k: v for k, v in imported.items() if counts.get(k) == 1},
            frozenset(variables),
        )


def _every(arguments: ast.arguments) -> list[ast.arg]:
    """A signature's parameters, `*args` and `**kwargs` included, in order."""
    return [
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        *(arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None),
    ]


class _Writer(ast.NodeTransformer):
    """Replaces the alias names of an annotation by what they stand for (`alias` says, for a
    name, its value and type variables, or None), a generic alias subscripted by its value
    with the type variables replaced."""

    def __init__(self, alias: Callable[[str], tuple[ast.expr, list[str]] | None]) -> None:
        self.alias = alias
        self.changed = False

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name):
            found = self.alias(node.value.id)
            if found is not None:
                value, variables = found
                slice_ = node.slice
                arguments = list(slice_.elts) if isinstance(slice_, ast.Tuple) else [slice_]
                if variables and len(variables) == len(arguments):
                    self.changed = True
                    return _substituted(value, dict(zip(variables, arguments, strict=True)))
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        found = self.alias(node.id)
        if found is None or found[1]:
            return node  # not an alias, or a generic one used bare
        self.changed = True
        return found[0]


def _bindings(
    statement: ast.stmt, module: ModuleName, imported: dict[str, tuple[str, str]]
) -> list[tuple[str, ast.expr | None, bool]]:
    """The names a top-level statement binds: (name, the value of a plain assignment or None,
    whether it is annotated `TypeAlias`); `imported` gets the names a `from` import binds."""
    if isinstance(statement, ast.Assign):
        if len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            return [(statement.targets[0].id, statement.value, False)]
        names = [
            node.id
            for target in statement.targets
            for node in ast.walk(target)
            if isinstance(node, ast.Name)
        ]
        return [(name, None, False) for name in names]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        written = dotted_name(statement.annotation) or ""
        # `TypeAlias`, `typing.TypeAlias`, or a name it was imported as (`_TypeAlias`).
        said = (
            written.rpartition(".")[2] == "TypeAlias"
            or imported.get(written, ("", ""))[1] == "TypeAlias"
        )
        return [(statement.target.id, statement.value, said)]
    if isinstance(statement, ast.ImportFrom):
        base = import_from_base(statement, module)
        found: list[tuple[str, ast.expr | None, bool]] = []
        for alias in statement.names:
            if alias.name == "*":
                continue
            bound = alias.asname or alias.name
            if base is not None:
                imported[bound] = (base, alias.name)
            found.append((bound, None, False))
        return found
    if isinstance(statement, ast.Import):
        return [
            ((alias.asname or alias.name).partition(".")[0], None, False)
            for alias in statement.names
        ]
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [(statement.name, None, False)]
    return []


def _type_variable(value: ast.expr) -> bool:
    """`TypeVar("T")`, `typing.TypeVar("T", bound=...)`."""
    return (
        isinstance(value, ast.Call)
        and (dotted_name(value.func) or "").rpartition(".")[2] == "TypeVar"
    )


def _type_expression(value: ast.expr) -> bool:
    """A subscript of a typing construct or builtin container, or a `|` of type expressions
    (names, attributes, subscripts, None): what no other kind of value is written as."""
    if isinstance(value, ast.Subscript):
        return (dotted_name(value.value) or "").rpartition(".")[2] in _CONSTRUCTS
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        return all(_type_part(side) for side in (value.left, value.right))
    return False


def _type_part(value: ast.expr) -> bool:
    if isinstance(value, ast.Constant):
        return value.value is None or isinstance(value.value, str)
    if isinstance(value, ast.Name | ast.Attribute):
        return dotted_name(value) is not None
    if isinstance(value, ast.BinOp):
        return _type_expression(value)
    return isinstance(value, ast.Subscript)


def _substituted(value: ast.expr, arguments: dict[str, ast.expr]) -> ast.expr:
    """A generic alias's value with its type variables replaced by the arguments."""

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            found = arguments.get(node.id)
            return copy.deepcopy(found) if found is not None else node

    replaced = Replace().visit(copy.deepcopy(value))
    assert isinstance(replaced, ast.expr)
    return replaced


def _parse(file: Path) -> ast.Module | None:
    try:
        return ast.parse(file.read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
