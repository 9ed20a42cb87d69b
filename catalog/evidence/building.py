"""How a run makes a value of a class of the package to pass where an annotation names one.

`catalog.evidence.candidates` writes a class a parameter is annotated with as a `_Built`
value, and asks a `Builder` (here, `ClassValues.build`) for the call that makes one:

- a constructor taking arguments without defaults gets each made up from its annotation (a
  value the package's examples make of its class first, else a plain value, else a class of
  the package in turn, one level down): `torch.fx.graph_module.GraphModule({},
  torch.fx.graph.Graph())`; an argument the constructor's own checks test takes a value
  they let by (`Reaching.checks`, `candidates.values_meeting`): torch's `Node` gets an `op`
  among its `_legal_ops`, not 'x';
- a `@dataclass` without a constructor of its own is made with its fields that have no
  default, by keyword; an enumeration is its first member, never called bare;
- the class is named where the package exports it, if a package above its module does
  (`torch.optim.Optimizer`), with the import that needs.

The call graph (for classes, their bases and constructors), the definitions and the written
out aliases (`catalog.evidence.aliases`) are `Reaching`'s, handed in, read once per run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.evidence.candidates import (
    ValuesByClass,
    example_argument,
    plain_argument,
    values_meeting,
)
from extractor.imports import dotted_name
from extractor.instance import init_fields

if TYPE_CHECKING:
    from catalog.core.config import Config
    from catalog.evidence.aliases import Aliases


class ClassValues:
    """The calls that make values of the package's classes, each class's made once."""

    def __init__(
        self,
        config: Config,
        example_values: ValuesByClass,
        named: Callable[[str, str], ast.AST | None],
        classes: Callable[[], Any],
        aliases: Callable[[], Aliases],
        checks: Callable[[str, str], list[ast.expr]] | None = None,
    ) -> None:
        self.config = config
        self.example_values = example_values
        self.named = named
        """The definition of a qualified name in a file (`Reaching._named`)."""
        self.classes = classes
        """The package's call graph (`extractor.calls.call_graph`)."""
        self.aliases = aliases
        self.checks = checks
        """What every call of a function (file, qualified name) must meet not to stop at one
        of its own checks (`Reaching.checks`), or None where unknown."""
        self._made: dict[tuple[str, str], tuple[str, tuple[str, ...]] | None] = {}
        self._stand_ins: set[tuple[str, str]] = set()
        """The classes made as a subclass of theirs: abstract ones."""
        self._abstract: dict[tuple[str, str], frozenset[str]] = {}
        """(path, qualname) -> the methods still abstract on that class (`abstract`, as asked
        from the class itself, bases followed four levels up)."""

    def build(
        self, dotted: str, module: str, *, qualified: bool = False
    ) -> tuple[str, tuple[str, ...]] | None:
        """`candidates.Builder`: the call that makes the class `dotted` (as `module` names it)
        where its constructor takes arguments (see the module's docstring), with the imports
        it needs; None where it takes none (the class is built bare, as `module` names it),
        or one gets no value. `qualified`: also where it takes none, named where the package
        defines or exports it (`module` does not bind the name while it runs)."""
        made = self._make(dotted, module, 0)
        if made is None or (
            made[0].endswith("()") and not qualified and (dotted, module) not in self._stand_ins
        ):
            return None
        return made

    def _make(self, dotted: str, module: str, depth: int) -> tuple[str, tuple[str, ...]] | None:
        key = (dotted, module)
        if key not in self._made:
            self._made[key] = None  # a constructor that needs its own class gets nothing
            self._made[key] = self._making(dotted, module, depth)
        return self._made[key]

    def _making(self, dotted: str, module: str, depth: int) -> tuple[str, tuple[str, ...]] | None:
        from catalog.core.project import module_name

        graph = self.classes()
        found = graph.class_named(f"{module}.{dotted}")
        if found is None:
            return None
        path, qualname, _bases = found
        abstract = self.abstract(path, qualname)
        if abstract:
            # An abstract class cannot be made: a concrete class of the package deriving from
            # it stands in for it (torch's `HigherOrderOperator` as its `TraceWrapped`).
            concrete = self._concrete(path, qualname, abstract)
            if concrete is None:
                return None
            path, qualname = concrete
            at = graph.class_at(path, qualname)
            if at is None:
                return None
            found = (path, qualname, at[1])
            self._stand_ins.add((dotted, module))
        try:
            home = module_name(self.config, self.config.root / path)
        except ValueError:
            return None
        # Named where the package exports it, if anywhere: a package may delete its
        # submodules' names once it has imported from them (`torch.optim` has no `optimizer`).
        shown = self._exported(home, qualname, (path, qualname))
        imports = [f"import {shown}"]
        klass = self.named(path, qualname)
        if isinstance(klass, ast.ClassDef) and self._enumerated(found, 0):
            # An enumeration is called with a member's value, never bare: its first member.
            member = _first_member(klass)
            return None if member is None else (f"{shown}.{qualname}.{member}", (imports[0],))
        fields = init_fields(klass) if isinstance(klass, ast.ClassDef) else None
        init = graph.method_of(path, qualname, "__init__")
        node = None if init is None else self.named(*init)
        if init is not None and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node = self.aliases().expanded(node, Path(init[0]))
        # What the constructor takes: (name, annotation, passed by keyword), the required ones.
        wanted: list[tuple[str, ast.expr | None, bool]] = []
        init_module = module
        if fields is not None:
            # A dataclass's generated constructor: its fields without a default, by keyword.
            wanted = [
                (field.target.id, field.annotation, True)
                for field in fields
                if isinstance(field.target, ast.Name) and _required(field)
            ]
            init_module = home
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert init is not None
            spec = node.args
            positional = [*spec.posonlyargs, *spec.args][1:]
            wanted = [
                (argument.arg, argument.annotation, False)
                for argument in positional[: len(positional) - len(spec.defaults)]
            ] + [
                (argument.arg, argument.annotation, True)
                for argument, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True)
                if default is None
            ]
            try:
                init_module = module_name(self.config, self.config.root / init[0])
            except ValueError:
                return None
        # Values its own checks let by, where they test the arguments: torch's `Node` refuses
        # an `op` outside its `_legal_ops`, so a made-up 'x' never gets a node made.
        tests = self.checks(*init) if self.checks is not None and init is not None else []
        made_up = {
            name
            for name, annotation, _ in wanted
            if example_argument(annotation, self.example_values) is None
            and (plain_argument(annotation) or ("", True))[1] is False
        }
        chosen = (
            values_meeting(tests, node, made_up)
            if tests and made_up and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            else {}
        )
        arguments: list[str] = []
        for name, annotation, by_keyword in wanted:
            if name in chosen:
                arguments.append((f"{name}=" if by_keyword else "") + chosen[name])
                continue
            example = example_argument(annotation, self.example_values)
            if example is not None:
                # A value the package's examples make, rather than one made up.
                arguments.append((f"{name}=" if by_keyword else "") + example[0])
                imports += example[1]
                continue
            plain = plain_argument(annotation)
            if plain is None:
                return None
            text, is_class = plain
            if is_class:
                inner = None if depth >= 1 else self._make(text, init_module, depth + 1)
                if inner is None:
                    return None
                text = inner[0]
                imports += inner[1]
            arguments.append((f"{name}=" if by_keyword else "") + text)
        return f"{shown}.{qualname}({', '.join(arguments)})", tuple(dict.fromkeys(imports))

    def abstract(self, path: str, qualname: str, depth: int = 0) -> frozenset[str]:
        """The methods still abstract on the class `qualname` of `path`: those its body
        declares abstract (`abstract_methods`) and those its bases of the package leave
        abstract that it does not define, a few levels up; empty for a class that can be
        made."""
        key = (path, qualname)
        if depth == 0 and key in self._abstract:
            return self._abstract[key]
        klass = self.named(path, qualname)
        if not isinstance(klass, ast.ClassDef):
            return frozenset()
        declared = abstract_methods(klass)
        inherited: set[str] = set()
        at = self.classes().class_at(path, qualname)
        for base in at[1] if at is not None and depth < 4 else ():
            parent = self.classes().class_named(base) if base else None
            if parent is not None and (parent[0], parent[1]) != key:
                inherited |= self.abstract(parent[0], parent[1], depth + 1)
        found = declared | (inherited - _methods_defined(klass))
        if depth == 0:
            # Asked for each class made and each method site's class: read once per class.
            self._abstract[key] = found
        return found

    def _concrete(
        self, path: str, qualname: str, abstract: frozenset[str]
    ) -> tuple[str, str] | None:
        """A class of the package deriving from the class `qualname` of `path`, two levels
        down at most, that defines every method still abstract on its way (`abstract` at the
        start) and declares none of its own: public ones first, then the nearest, then by path
        and name; None where there is none."""
        level = [(path, qualname, abstract)]
        concrete: list[tuple[bool, int, str, str]] = []
        for depth in range(2):
            below: list[tuple[str, str, frozenset[str]]] = []
            for at, name, left in level:
                for sub_path, sub_name in self.classes().subclasses(at, name):
                    node = self.named(sub_path, sub_name)
                    if not isinstance(node, ast.ClassDef):
                        continue
                    left_here = (left - _methods_defined(node)) | abstract_methods(node)
                    below.append((sub_path, sub_name, left_here))
            concrete += [(_private_name(n), depth, p, n) for p, n, left in below if not left]
            level = below
        return min(concrete)[2:] if concrete else None

    def _exported(self, home: str, qualname: str, defined: tuple[str, str]) -> str:
        """The shortest module of the package, `home` or a package above it, whose namespace
        gives the class `qualname` defined at `defined` (`torch.optim` for
        `torch.optim.optimizer.Optimizer`); `home` where none does."""
        parts = home.split(".")
        for end in range(1, len(parts)):
            module = ".".join(parts[:end])
            found = self.classes().class_named(f"{module}.{qualname}")
            if found is not None and (found[0], found[1]) == defined:
                return module
        return home

    def _enumerated(self, found: tuple[str, str, tuple[str, ...]], depth: int) -> bool:
        """Whether a class of the package derives from `enum.Enum` (through its bases, the
        package's own enumerations included, a few levels up)."""
        for base in found[2]:
            if base.startswith("enum.") and base.rpartition(".")[2] in _ENUMS:
                return True
            inner = self.classes().class_named(base) if depth < 4 else None
            if inner is not None and self._enumerated(inner, depth + 1):
                return True
        return False


_ENUMS = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})


def abstract_methods(klass: ast.ClassDef) -> frozenset[str]:
    """The methods a class's own body declares abstract (`@abstractmethod`, however
    imported, and the older `abstractproperty` and friends)."""
    return frozenset(
        statement.name
        for statement in klass.body
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(
            (dotted_name(decorator) or "").rpartition(".")[2].startswith("abstract")
            for decorator in statement.decorator_list
        )
    )


def _methods_defined(klass: ast.ClassDef) -> set[str]:
    """The methods a class's own body defines, abstract ones too."""
    return {
        statement.name
        for statement in klass.body
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _private_name(qualname: str) -> bool:
    return any(part.startswith("_") for part in qualname.split("."))


def _first_member(klass: ast.ClassDef) -> str | None:
    """The first member an enumeration's body assigns (`FULL_SHARD = auto()`): a public name
    bound once by a plain assignment; None when it has none."""
    for statement in klass.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and not statement.targets[0].id.startswith("_")
        ):
            return statement.targets[0].id
    return None


def dataclass_init(klass: ast.ClassDef) -> ast.FunctionDef | None:
    """The `__init__` a `@dataclass` writes for its own fields, as a definition errcat can
    make calls of (`def __init__(self, rows: int, finish: Finish, label: str = "plain")`):
    a field's default, or a call of its `default_factory`, as the parameter's default; None
    for a class that is no such dataclass, or has no fields."""
    fields = init_fields(klass)
    if not fields:
        return None
    arguments: list[ast.arg] = [ast.arg(arg="self")]
    defaults: list[ast.expr] = []
    for field in fields:
        assert isinstance(field.target, ast.Name)
        arguments.append(ast.arg(arg=field.target.id, annotation=field.annotation))
        default = _field_default(field)
        if default is not None:
            defaults.append(default)
        elif defaults:
            return None  # a required field after a defaulted one: `kw_only`, not read here
    node = ast.FunctionDef(
        name="__init__",
        args=ast.arguments(
            posonlyargs=[], args=arguments, kwonlyargs=[], kw_defaults=[], defaults=defaults
        ),
        body=[ast.Pass()],
        decorator_list=[],
        returns=None,
    )
    return ast.fix_missing_locations(ast.copy_location(node, klass))


def _field_default(field: ast.AnnAssign) -> ast.expr | None:
    """A dataclass field's default as an expression: its value, `field(default=...)`'s, or
    a call of `field(default_factory=...)`'s factory; None for a field without one."""
    value = field.value
    if not (isinstance(value, ast.Call) and _names_field(value.func)):
        return value
    for keyword in value.keywords:
        if keyword.arg == "default":
            return keyword.value
        if keyword.arg == "default_factory":
            return ast.Call(func=keyword.value, args=[], keywords=[])
    return None


def _required(field: ast.AnnAssign) -> bool:
    """Whether a dataclass field has no default: nothing assigned, or `field(...)` without a
    `default` or `default_factory`."""
    return _field_default(field) is None


def _names_field(func: ast.expr) -> bool:
    """Whether a call's function is `dataclasses.field`, however imported."""
    return (dotted_name(func) or "").rpartition(".")[2] == "field"
