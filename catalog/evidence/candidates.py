"""Candidate calls for `errcat reproduce`: from a raise site's signature and the conditions
that lead to it, the calls of a public function worth trying (see `catalog.evidence.reproduce`
for how they run and are judged).

Each parameter a condition names gets values read from the comparisons it appears in (both
sides of every boundary, `None`, the constants it is compared with, falsy values of its
annotation, ...); the other parameters keep their defaults or get a plain value of their
annotation (`int` 1, `str` 'x'; with neither, None, unless a test reads it through an
attribute, an item, a call or a loop: then the site gets no candidate).
Combinations are kept when no condition this module can evaluate is false for them, shortest
call first, `MAX_CANDIDATES` per site, and then one more: the shortest of those calls with
None in place of each value of a class errcat builds bare (`Module()`), where that call is not
among them already (a class may need arguments, or be an alias that cannot be called),
tried after the calls that build, though shorter: a stand-in (`Candidate.stand_in`).
Nothing of the package is evaluated in errcat's own process: conditions are read with `ast`
and evaluated only on the values made up here, where they compare parameters with constants
or with each other's lengths, or ask what a value is (`isinstance`, `type(p) is C`,
`callable`, `hasattr`, `all`/`any` of a test of each item); a class of the package named
there is no built-in value, and a bare instance of it is one.

A test that reads what the function computes is read through the extractor's `expanded` form,
in terms of the parameters. A site whose own function cannot be called from outside (private,
a method) is reached through a public caller that passes its own parameters on to those the
conditions read (`extractor.calls.Caller.passes`): the conditions are renamed into the caller's
parameters and the caller is called. Where no caller steers so, the shortest plain call of a
caller that passes nothing on is the one candidate left.

Where a parameter is of a class whose values the package's examples make (`Tensor`, read
by `catalog.evidence.example_values`), which tests of it hold (`input.dim() == 5`) nothing
here can say: one more call stands for a `Search` a run makes among those values, in a
child, before it calls what it found.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import itertools
import math
import numbers
import typing
from collections import abc
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from catalog.evidence.doc_examples import ExampleCall, needed
from extractor.expansion import as_passed, free_names, one_line, substituted
from extractor.imports import dotted_name

if TYPE_CHECKING:
    from catalog.evidence.example_values import ExampleValue
    from extractor.model import RaiseSite

ValuesByClass = Mapping[str, Sequence["ExampleValue"]]
"""Class name -> values of it the package's examples make (`example_values.offered`)."""
Documented = tuple[tuple[str, tuple[str, ...]], ...]
"""(parameter, the class names it is known as), for parameters without an annotation: from
the docstring (`input (Tensor): ...`) or from what the function reads of it."""

MAX_CANDIDATES = 3
"""Calls tried per site, shortest first; the first that reproduces ends the site."""
MAX_COMBINATIONS = 256
"""Value combinations considered per site before the conditions filter them."""
MAX_SEARCHES = 2
"""Callees per site whose calls with values of the package's examples a run searches."""

_SKIP = object()
"""A parameter left to its default."""


@dataclass(frozen=True)
class Candidate:
    """One call to try."""

    module: str
    """Where the callee is imported from (`widgets.core`)."""
    callee: str
    """The dotted name called, relative to the module (`turn`, `Widget`, `Widget.make`)."""
    call: str
    """The call as written (`turn('x', -1)`)."""
    names: tuple[str, ...] = ()
    """Other names the call's arguments use, imported from the same module (`Tensor`)."""
    setup: tuple[str, ...] = ()
    """Statements the call's arguments need, from a docstring's example (`x = torch.ones(2)`)."""
    imports: tuple[str, ...] = ()
    """Import statements the setup and the arguments need besides `names` (`import torch`)."""
    example: bool = False
    """Whether its values start from a docstring's example (`catalog.evidence.doc_examples`)."""
    search: Search | None = None
    """Set on a call standing for the calls that pass values of the package's examples
    (`catalog.evidence.example_values`): which of them meet the site's tests only a run can say, by
    searching them (`Search`); the call itself is the first of them."""
    stand_in: bool = False
    """Whether it passes None where another candidate passes a value the program builds or an
    example writes: the fallback for a class whose constructor fails, tried after that one."""

    @property
    def shown(self) -> str:
        """The call with the statements it needs, as results and pages show it."""
        return "\n".join((*self.setup, self.call))

    @property
    def program(self) -> str:
        return "\n".join((*self.needs, self.shown)) + "\n"

    @property
    def needs(self) -> tuple[str, ...]:
        """The import statements the call needs."""
        imported = ", ".join(dict.fromkeys((self.callee.split(".")[0], *self.names)))
        return (*self.imports, f"from {self.module} import {imported}")


Builder = Callable[[str, str], "tuple[str, tuple[str, ...]] | None"]
"""Makes a class a parameter is annotated with, where it takes arguments: (the class as the
annotation writes it, the module the annotation is in) -> (the call that makes one, with its
arguments made up the same way, and the imports it needs), or None to build it bare
(`reaching.Reaching.build`)."""


@dataclass(frozen=True)
class _Built:
    """A value the call's program makes by calling, without arguments, the class a parameter
    is annotated with (`Tensor()` for `input: Tensor`), named as the callee's module names it:
    whether that class can be called so is for the run to say (a failed attempt if not)."""

    dotted: str

    def __repr__(self) -> str:
        return f"{self.dotted}()"

    @property
    def root(self) -> str:
        return self.dotted.split(".")[0]


@dataclass(frozen=True)
class _Written:
    """A value as a docstring's example writes it (`input`, `(2, 3)`): unknown here, like
    what the program builds."""

    source: str

    def __repr__(self) -> str:
        return self.source


@dataclass(frozen=True)
class _Parameter:
    name: str
    kind: str
    """`positional_only`, `positional`, `keyword_only`, `varargs` or `varkw`."""
    default: ast.expr | None
    annotation: ast.expr | None


def def_header(signature: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The `def` of a site's `signature` (its decorators and header as written), or None when
    it does not parse."""
    header = signature.strip()
    try:
        tree = ast.parse(header + "\n    pass\n" if header.endswith(":") else header)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[_Parameter]:
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    # Defaults belong to the last positional parameters.
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    found = [
        _Parameter(
            arg.arg,
            "positional_only" if index < len(arguments.posonlyargs) else "positional",
            default,
            arg.annotation,
        )
        for index, (arg, default) in enumerate(zip(positional, defaults, strict=True))
    ]
    if arguments.vararg is not None:
        found.append(_Parameter(arguments.vararg.arg, "varargs", None, None))
    for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        found.append(_Parameter(arg.arg, "keyword_only", kw_default, arg.annotation))
    if arguments.kwarg is not None:
        found.append(_Parameter(arguments.kwarg.arg, "varkw", None, None))
    return found


_PLAIN = {
    "int": 1,
    "float": 1.0,
    "complex": 1.0,
    "str": "x",
    "bool": True,
    "bytes": b"x",
    "list": [],
    "List": [],
    "Sequence": [],
    "MutableSequence": [],
    "Iterable": [],
    "Collection": [],
    "tuple": (),
    "Tuple": (),
    "dict": {},
    "Dict": {},
    "Mapping": {},
    "MutableMapping": {},
    "set": set(),
    "Set": set(),
    # A function handing back its first argument: what a caller of `fn(x)` gets back is what
    # it gave, so the checks after the call see a value they know (gradcheck's outputs).
    "Callable": _Written("lambda *a, **k: a[0] if a else None"),
}
"""A plain value per annotation name: what a caller passes when the value does not matter."""
_FALSY = {"int": 0, "float": 0.0, "str": "", "bool": False, "bytes": b""}
_NO_VALUE = object()


def _annotation_name(annotation: ast.expr | None) -> list[str]:
    """The class names an annotation allows, in order (`X | None` gives X then None)."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.Constant):
        if annotation.value is None:
            return ["None"]
        if isinstance(annotation.value, str):  # a string annotation
            try:
                return _annotation_name(ast.parse(annotation.value, mode="eval").body)
            except SyntaxError:
                return []
        return []
    if isinstance(annotation, ast.Name):
        return [annotation.id]
    if isinstance(annotation, ast.Attribute):
        return [annotation.attr]
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _annotation_name(annotation.left) + _annotation_name(annotation.right)
    if isinstance(annotation, ast.Subscript):
        base = _annotation_name(annotation.value)
        if base in (["Optional"], ["Union"]):
            inner = annotation.slice
            parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            names = [name for part in parts for name in _annotation_name(part)]
            return names + (["None"] if base == ["Optional"] else [])
        return base
    return []


def _plain_value(annotation: ast.expr | None) -> Any:
    for name in _annotation_name(annotation):
        if name in _PLAIN:
            return _copy(_PLAIN[name])
    for part in _class_annotations(annotation):
        return _Built(part)
    return _NO_VALUE


_NOT_CLASSES = (
    frozenset(dir(builtins))
    | frozenset(typing.__all__)
    | frozenset(abc.__all__)
    | frozenset(numbers.__all__)
)
"""Names an annotation may use that are no class of the package to call (`Any`, `Sequence`,
and the numeric towers' `Number`, which packages also name their own unions of `int` and
`float` after)."""


def _class_annotations(annotation: ast.expr | None) -> list[str]:
    """The dotted names, as written, of the classes an annotation names directly (`Tensor`,
    `torch.Tensor`, each side of `X | None`): CapWords names, none of the built-ins or of
    `typing` and `collections.abc`."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _class_annotations(annotation.left) + _class_annotations(annotation.right)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        # A forward reference (`"torch.nn.Module"`): the annotation it writes.
        try:
            return _class_annotations(ast.parse(annotation.value.strip(), mode="eval").body)
        except SyntaxError:
            return []
    if isinstance(annotation, ast.Subscript) and _annotation_name(annotation.value) in (
        ["Optional"],
        ["Union"],
    ):
        inner = annotation.slice
        members = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        return [dotted for member in members for dotted in _class_annotations(member)]
    parts: list[str] = []
    node: ast.expr = annotation
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    parts.append(node.id)
    dotted = ".".join(reversed(parts))
    last = parts[0]
    if last in _NOT_CLASSES or not last[:1].isupper() or last.isupper():
        return []
    return [dotted]


def _falsy_value(annotation: ast.expr | None) -> Any:
    names = _annotation_name(annotation)
    for name in names:
        if name in _FALSY:
            return _FALSY[name]
        if name in _PLAIN and not isinstance(_PLAIN[name], _Written):
            return type(_PLAIN[name])()  # the empty container
    return None  # also for a function: no function is false


def _copy(value: Any) -> Any:
    return type(value)() if isinstance(value, list | dict | set) else value


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def _name_given(node: ast.AST, function: str) -> str | None:
    """`p` when `node` is a call of the built-in `function` with the one argument `p`, a name
    (`len(p)`, `type(p)`)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
    ):
        return node.args[0].id
    return None


def _len_of(node: ast.expr, names: set[str]) -> str | None:
    """`p` when `node` is `len(p)` of a parameter."""
    name = _name_given(node, "len")
    return name if name in names else None


def _around(constant: Any) -> list[Any]:
    """Values on both sides of a constant a parameter is compared with."""
    if isinstance(constant, bool) or constant is None:
        return [constant]
    if isinstance(constant, int | float):
        if isinstance(constant, float) and not math.isfinite(constant):
            return [constant]
        step = 1.0 if isinstance(constant, float) else 1
        return [constant - step, constant, constant + step]
    if isinstance(constant, str):
        return [constant, "x" if constant != "x" else "y"]
    if isinstance(constant, tuple | list | set | frozenset | dict):
        members = [m for m in constant if isinstance(m, str | int | float | bool) or m is None]
        others: list[Any] = []
        if all(isinstance(m, str) for m in members) and members:
            others = [next(v for v in ("x", "y", "z", "xx") if v not in members)]
        numbers = [m for m in members if isinstance(m, int | float)]
        if numbers and len(numbers) == len(members):
            others = [max(numbers) + 1]
        return sorted(set(members), key=repr) + others
    return [constant]


def _sized(length: int, annotation: ast.expr | None) -> Any:
    names = _annotation_name(annotation)
    if "str" in names:
        return "x" * length
    if "bytes" in names:
        return b"x" * length
    if "tuple" in names or "Tuple" in names:
        return (0,) * length
    return [0] * length


def _read_whole(conditions: Sequence[ast.expr], name: str) -> bool:
    """Whether the tests read `name` only as a whole value (passed to a call, compared,
    tested for truth), never through an attribute, an item, a call of it or a loop over it:
    None then reaches the test without failing on the way."""
    for condition in conditions:
        for node in ast.walk(condition):
            inside = (
                node.value
                if isinstance(node, ast.Attribute | ast.Subscript)
                else node.func
                if isinstance(node, ast.Call)
                else node.iter
                if isinstance(node, ast.comprehension)
                else None
            )
            if isinstance(inside, ast.Name) and inside.id == name:
                return False
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("len", "iter", "sum", "any", "all", "sorted", "list", "tuple")
                and any(isinstance(a, ast.Name) and a.id == name for a in node.args)
            ):
                return False  # what None cannot be measured or iterated as
    return True


def _truth_tested(condition: ast.expr) -> list[ast.expr]:
    """The operands whose truth the condition tests: itself, under `not`, in `and`/`or`."""
    found: list[ast.expr] = []
    stack = [condition]
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            stack.append(node.operand)
        elif isinstance(node, ast.BoolOp):
            stack.extend(node.values)
    return found


def _pools(
    conditions: Sequence[ast.expr], parameters: Mapping[str, _Parameter]
) -> dict[str, list[Any]]:
    """Values worth trying for each parameter the conditions name, in order of first reading."""
    names = set(parameters)
    pools: dict[str, list[Any]] = {}
    # Items a test reads of a parameter (`betas[1]`): a shorter sequence never gets there.
    items: dict[str, int] = {}

    def add(name: str, *values: Any) -> None:
        pool = pools.setdefault(name, [])
        for value in values:
            if value is _NO_VALUE:
                continue
            if not _holds(pool, value):
                pool.append(value)

    for condition in conditions:
        truth_tested = _truth_tested(condition)
        for node in ast.walk(condition):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                for left, right in itertools.pairwise(sides):
                    measured = [_len_of(left, names), _len_of(right, names)]
                    if None not in measured:
                        # `len(a) != len(b)`: sequences of a few lengths each, so that the
                        # lengths compare either way.
                        for sized in measured:
                            assert sized is not None
                            annotation = parameters[sized].annotation
                            add(sized, *(_sized(n, annotation) for n in range(3)))
                    for side, other in ((left, right), (right, left)):
                        typed = _type_of(side)
                        if typed in names:
                            # `type(conv) is Conv2d`: an instance of each class named, built,
                            # and None, of none of them.
                            for named in other.elts if isinstance(other, ast.Tuple) else [other]:
                                builtin = _builtin_type(named)
                                if builtin in _TYPES and builtin in _PLAIN:
                                    add(typed, _copy(_PLAIN[builtin]))
                                add(typed, *(_Built(c) for c in _class_annotations(named)[:1]))
                            add(typed, None)
                        constant = _literal(other)
                        if constant is _NO_VALUE:
                            continue
                        if isinstance(side, ast.Name) and side.id in names:
                            add(side.id, *_around(constant))
                        item = _item_of(side, names)
                        if item is not None:
                            # The default with that item changed: the other items stay
                            # what the function expects of them.
                            name, index = item
                            if index >= 0:
                                items[name] = max(items.get(name, 0), index + 1)
                            default = parameters[name].default
                            base = None if default is None else _literal(default)
                            add(name, *_with_item(base, index, _around(constant)))
                        sized = _len_of(side, names)
                        if sized is not None and isinstance(constant, int):
                            annotation = parameters[sized].annotation
                            lengths = [n for n in _around(constant) if n >= 0]
                            add(sized, *(_sized(n, annotation) for n in lengths))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in names
            ):
                annotation = parameters[node.args[0].id].annotation
                add(node.args[0].id, _plain_value(annotation), None, 1, "x", 1.0, [])
                # And a value of each built-in type the test names (`(SymBool, bool)`).
                spec = node.args[1]
                for named in spec.elts if isinstance(spec, ast.Tuple) else [spec]:
                    builtin = _builtin_type(named)
                    if builtin in _PLAIN:
                        add(node.args[0].id, _copy(_PLAIN[builtin]))
            elif (called := _called_on(node, names)) is not None:
                name, function = called
                if function == "callable":
                    # Something that is not a function, and a function.
                    add(name, None, 1, _copy(_PLAIN["Callable"]))
            elif (iterated := _iterated(node, names)) is not None:
                # `all(isinstance(t, Tensor) for t in ts)`: one item of each plain kind, which
                # the item's test then judges (an empty sequence passes `all` and fails `any`).
                add(iterated[0], [], [None], [1], ["x"])
            elif isinstance(node, ast.Name) and node.id in names:
                # Tested for truth (`not x`, `x or y`): a falsy value too; named in any other
                # way (`x.ndim`), only a plain value of its annotation.
                annotation = parameters[node.id].annotation
                if node in truth_tested:
                    add(node.id, _falsy_value(annotation))
                add(node.id, _plain_value(annotation))
    for name, pool in pools.items():
        parameter = parameters[name]
        add(name, _plain_value(parameter.annotation))
        if name in items:
            pool[:] = [
                v for v in pool if not (isinstance(v, tuple | list) and len(v) < items[name])
            ]
        if parameter.default is not None:
            pool.insert(0, _SKIP)
    return pools


# Three-valued evaluation of a condition: True, False, or None when errcat cannot tell without
# running the package.

_TYPES: dict[str, type | tuple[type, ...]] = {
    "int": int,
    "float": float,
    "complex": complex,
    "str": str,
    "bool": bool,
    "bytes": bytes,
    "list": list,
    "tuple": tuple,
    "dict": dict,
    "set": set,
    "frozenset": frozenset,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _called_on(node: ast.AST, names: Collection[str]) -> tuple[str, str] | None:
    """(parameter, built-in) for `callable(p)` or `hasattr(p, "name")` of a parameter."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("callable", "hasattr")
        and node.args
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in names
        and not node.keywords
    ):
        return node.args[0].id, node.func.id
    return None


def _iterated(
    node: ast.AST, names: Collection[str]
) -> tuple[str, str, ast.expr, ast.comprehension] | None:
    """(parameter, `all` or `any`, the item's test, the loop) for `all(<test> for t in p)` or
    `any([<test> for t in p])` over a parameter, one plain loop without `if`s."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("all", "any")
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.GeneratorExp | ast.ListComp)
    ):
        return None
    inner = node.args[0]
    if len(inner.generators) != 1:
        return None
    loop = inner.generators[0]
    if (
        loop.ifs
        or loop.is_async
        or not isinstance(loop.target, ast.Name)
        or not isinstance(loop.iter, ast.Name)
        or loop.iter.id not in names
    ):
        return None
    return loop.iter.id, node.func.id, inner.elt, loop


def _item_of(node: ast.expr, names: set[str]) -> tuple[str, int] | None:
    """(parameter, index) for `p[k]` of a parameter and a constant int (`betas[0]`)."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id in names
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    ):
        return node.value.id, node.slice.value
    return None


def _with_item(base: Any, index: int, items: Sequence[Any]) -> list[Any]:
    """`base` (a tuple or list default, `(0.9, 0.999)`) with its item at `index` replaced by
    each of `items`: what a test of `p[k]` against a constant asks of `p`."""
    if not isinstance(base, tuple | list) or not -len(base) <= index < len(base):
        return []
    found: list[Any] = []
    for item in items:
        changed = list(base)
        changed[index] = item
        found.append(type(base)(changed))
    return found


def _value(node: ast.expr, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return env.get(node.id, _NO_VALUE)
    item = _item_of(node, set(env))
    if item is not None:
        value = env[item[0]]
        try:
            return value[item[1]] if isinstance(value, tuple | list) else _NO_VALUE
        except IndexError:
            return _NO_VALUE
    sized = _len_of(node, set(env))
    if sized is not None:
        value = env[sized]
        try:
            return len(value)
        except TypeError:
            return _NO_VALUE
    return _literal(node)


@dataclass(frozen=True)
class _PackageClass:
    """A class of the package a comparison names (`type(conv) == Conv2d`): no built-in value
    made up here is it, nor is any built-in type."""

    dotted: str


def _compared(node: ast.expr, env: Mapping[str, Any]) -> Any:
    """One side of a comparison: `_value`'s, else the type of a built-in value made up here
    (`type(p)`), a built-in type, a class of the package (named as `_class_annotations`
    reads annotations), or a tuple, list or set of those (`type(p) in (int, float)`)."""
    value = _value(node, env)
    if value is not _NO_VALUE:
        return value
    if _type_of(node) is not None:
        assert isinstance(node, ast.Call)
        made = _value(node.args[0], env)
        return type(made) if type(made) in _PLAIN_TYPES else _NO_VALUE
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and node.elts:
        items = [_compared(item, env) for item in node.elts]
        if _NO_VALUE in items:
            return _NO_VALUE
        return tuple(items) if isinstance(node, ast.Tuple) else list(items)
    if isinstance(node, ast.Name) and node.id in _TYPES and not isinstance(_TYPES[node.id], tuple):
        return _TYPES[node.id]
    written = _class_annotations(node)
    return _PackageClass(written[0]) if written else _NO_VALUE


def _type_of(node: ast.expr) -> str | None:
    """The name `type(name)` asks the type of, else None."""
    return _name_given(node, "type")


def _truth(node: ast.expr, env: Mapping[str, Any]) -> bool | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, env)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        seen = [_truth(value, env) for value in node.values]
        decisive = isinstance(node.op, ast.Or)  # True decides `or`, False decides `and`
        if decisive in seen:
            return decisive
        return None if None in seen else not decisive
    if isinstance(node, ast.Compare):
        sides = [_compared(side, env) for side in (node.left, *node.comparators)]
        answer: bool | None = True
        for (left, right), op in zip(itertools.pairwise(sides), node.ops, strict=True):
            compare = _COMPARE.get(type(op))
            if left is _NO_VALUE or right is _NO_VALUE or compare is None:
                answer = None
                continue
            try:
                if not compare(left, right):
                    return False
            except TypeError:
                return False  # the real comparison raises before the raise is reached
        return answer
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
    ):
        value = _value(node.args[0], env)
        if value is _NO_VALUE:
            return None
        spec = node.args[1]
        classes = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        answers = [_instance_of(value, c) for c in classes]
        if True in answers:
            return True
        return None if None in answers else False
    called = _called_on(node, env)
    if called is not None and isinstance(node, ast.Call):
        return _built_in_test(called[1], env[called[0]], node.args[1:])
    iterated = _iterated(node, env)
    if iterated is not None:
        name, function, test, loop = iterated
        items = env[name]
        if type(items) not in (list, tuple):
            return None
        assert isinstance(loop.target, ast.Name)
        seen = [_truth(test, {**env, loop.target.id: item}) for item in items]
        decisive = function == "any"  # True decides `any`, False decides `all`
        if decisive in seen:
            return decisive
        return None if None in seen else not decisive
    value = _value(node, env)
    return None if value is _NO_VALUE else bool(value)


def _built_in_test(function: str, value: Any, rest: Sequence[ast.expr]) -> bool | None:
    """`callable(value)` or `hasattr(value, "name")` of a value made up here; None for a
    class built or a value written as an example, which only the run can ask."""
    if type(value) not in _PLAIN_TYPES:
        # The function made for a `Callable` is the one value here known to be callable.
        made = _PLAIN["Callable"]
        return True if function == "callable" and value == made else None
    if function == "callable":
        return False  # no value of a built-in type made up here is callable
    if len(rest) != 1 or not isinstance(rest[0], ast.Constant):
        return None
    attribute = rest[0].value
    return hasattr(value, attribute) if isinstance(attribute, str) else None


_PLAIN_TYPES = (
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    list,
    tuple,
    dict,
    set,
    frozenset,
)
"""The types of the values made up here (besides the classes built, `_Built`)."""


def _builtin_type(spec: ast.expr) -> str | None:
    """The plain name a class of an `isinstance` or `type` test is written as (`bool`, also
    when a module shadowing it writes `builtins.bool`), for `_TYPES` and `_PLAIN` to look up;
    None for a dotted or computed class."""
    if isinstance(spec, ast.Attribute) and ast.unparse(spec.value) == "builtins":
        return spec.attr
    return spec.id if isinstance(spec, ast.Name) else None


def _instance_of(value: Any, spec: ast.expr) -> bool | None:
    """`isinstance(value, spec)` for one class of an `isinstance` test, or None when errcat
    cannot tell without running the package.

    A built-in type is asked directly. A class of the package (named as `_class_annotations`
    reads annotations: CapWords, none of the built-ins, `typing`, `collections.abc` or
    `numbers`) holds no value of a built-in type made up here, and holds an instance of itself
    built bare; an instance of another class of the package may be one of a subclass, which
    only the package can say."""
    builtin = _builtin_type(spec)
    if builtin in _TYPES:
        return isinstance(value, _TYPES[builtin])
    written = _class_annotations(spec)
    if not written:
        return None
    if isinstance(value, _Built):
        return True if value.dotted.rpartition(".")[2] == written[0].rpartition(".")[2] else None
    # `type(value)`, not `isinstance`: a subclass of a built-in may be the package's own.
    return False if type(value) in _PLAIN_TYPES else None


def _callee(function: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, bool]:
    """The dotted name to call and whether its first parameter is bound (self, cls).

    Raises ValueError with the reason when `function` cannot be called from outside.
    """
    parts = function.split(".")
    private = [part for part in parts if part.startswith("_") and part != "__init__"]
    if private:
        raise ValueError(f"`{function}` is private")
    if isinstance(node, ast.AsyncFunctionDef):
        raise ValueError(f"`{function}` is a coroutine function")
    if parts[-1] == "__init__":
        if len(parts) == 1:
            raise ValueError("`__init__` outside a class")
        return ".".join(parts[:-1]), True
    if len(parts) == 1:
        return parts[0], False
    decorators = {
        d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else ""
        for d in node.decorator_list
    }
    if "staticmethod" in decorators:
        return function, False
    if "classmethod" in decorators:
        return function, True
    raise ValueError(f"`{function}` is a method or a nested function")


@dataclass(frozen=True)
class PublicCaller:
    """A public function that reaches a site, ready to be called in its stead."""

    module: str
    """The import name of the caller's file."""
    function: str
    """Its qualified name in that module (`Adam.__init__`)."""
    node: ast.FunctionDef | ast.AsyncFunctionDef
    passes: tuple[tuple[str, str], ...]
    """(parameter of the site's function, the caller's parameter passed on to it unchanged),
    as `extractor.calls.Caller.passes`."""
    receiver: Candidate | None = None
    """For a method called on an instance: the call that makes the instance (`Pool(1)`),
    whose names the program imports too."""
    examples: tuple[ExampleCall, ...] = ()
    """Its calls in its docstring's examples, their names resolved (`ExampleCall.resolved`)."""
    steered: bool = False
    """Whether `receiver` was made so that a test of the instance holds (`instance_tests`):
    the call is worth trying even where no test reads the method's arguments."""
    types: Documented = ()
    """The classes its parameters without an annotation are known as: what its docstring says
    (`docstrings.parameter_types`), or what it reads of them (`reaching.Reaching._types`)."""


def candidates(
    site: RaiseSite,
    module: str,
    callers: Iterable[PublicCaller] = (),
    examples: Sequence[ExampleCall] = (),
    build: Builder | None = None,
    example_values: ValuesByClass | None = None,
    types: Documented = (),
    constants: Mapping[str, str] | None = None,
    avoid: Avoid | None = None,
) -> list[Candidate]:
    """The calls to try for `site`, those starting from a docstring's example first, then
    shortest first, then those passing values of `example_values` (`Candidate.search`); raises
    ValueError saying why there are none. `avoid` adds to the tests of the functions it names
    (`avoiding`): tests no call should fail, though they steer nothing by themselves.

    `module` is the import name of the site's file; `examples` are the calls of the site's own
    function in its docstring, `types` what that docstring says its parameters are,
    `constants` the literal values of that file's module-level names, as source (`_SUPPORTED
    = {"a", "b"}`), which the tests read as written. When the site's own function cannot be called
    (private, a method) or no values meet its conditions, calls of `callers` are tried
    instead, in order, with the conditions said in each caller's parameters.
    """
    if site.function is None:
        raise ValueError("raised at module level, not in a function")
    node = def_header(site.signature) if site.signature else None
    if node is None:
        raise ValueError(f"the signature of `{site.function}` is not readable")
    avoid = avoid or {}
    try:
        return _calls(
            site.function,
            node,
            module,
            [
                *_with_constants(_tests(site), constants, node),
                *avoid.get((module, site.function), ()),
            ],
            examples=examples,
            build=build,
            example_values=example_values,
            types=types,
        )
    except ValueError as why:
        own = why
    found: list[Candidate] = []
    unsteered: list[Candidate] = []
    steered = False
    refused: list[str] = []
    own_names = {parameter.name for parameter in _parameters(node)}
    for caller in callers:
        tests = _with_constants(
            _tests(site, dict(caller.passes), own_names, caller.node), constants, caller.node
        )
        # The site's own method on an instance: its tests of the instance are the search's too.
        instance = (
            _parameters(node)[0].name
            if caller.receiver is not None and caller.function == site.function and own_names
            else None
        )
        searched = _with_constants(
            _tests(site, dict(caller.passes), own_names, caller.node, instance),
            constants,
            caller.node,
        )
        steers = bool(tests)
        # A caller passing on nothing the tests read gives plain calls, tried only where no
        # caller steers (`unsteered` below), as one passing nothing does.
        try:
            calls = _calls(
                caller.function,
                caller.node,
                caller.module,
                [*tests, *avoid.get((caller.module, caller.function), ())],
                caller.receiver,
                caller.examples,
                build,
                example_values,
                caller.types,
                searched if instance else None,
            )
        except ValueError as why:
            refused.append(f"through `{caller.function}`, {why}")
        else:
            # The site's own method, called on an instance, is no detour: with no test to
            # steer (a raise it always reaches), its call is still the surest, and a caller's
            # plain call must not take its place.
            itself = caller.module == module and caller.function == site.function
            steered = steered or steers or caller.steered
            (found if steers or caller.steered or itself else unsteered).extend(calls)
        if sum(not c.example and not c.search for c in found) >= MAX_CANDIDATES:
            break
    if found:
        if not steered:
            # Only the site's own method, unsteered: a caller's plain call is still worth its
            # one try beside it (the method's instance may be what cannot be made).
            return [*_ranked(found), *_ranked(unsteered, 1)]
        return _ranked(found)
    if unsteered:
        # No caller passes on what the tests read (or nothing is tested): the shortest plain
        # call of a public caller may still get there (one from an example, and one without;
        # the run of a call that stays short of the raise costs little); the run says whether
        # it does.
        return _ranked(unsteered, 1)
    if refused:
        # Why the public callers gave no call either: what would let them.
        raise ValueError(f"{own}; {'; '.join(refused[:MAX_REFUSALS])}")
    raise own


Avoid = Mapping[tuple[str, str], Sequence[ast.expr]]
"""(import name of a module, qualified name of a function there) -> tests every call of that
function should meet (`avoiding`)."""


def avoiding(
    site: RaiseSite,
    module: str,
    callers: Iterable[PublicCaller] = (),
    constants: Mapping[str, str] | None = None,
) -> dict[tuple[str, str], list[ast.expr]]:
    """What a call must meet not to stop at `site`, another check than the one a run looks
    for: the negation of the site's tests (`not (t1 and t2)`), said in its own function's
    parameters and in those of each public caller that passes them on, as `candidates` reads
    a site's tests. A test a caller does not steer is left out of the conjunction, which
    makes its negation stronger than needed, never weaker; a function with no test to say
    gets nothing.

    The tests are the site's own `if`s where it has any, not the guards on the way to them:
    a guard says that an earlier check passed (`isinstance(dropout, numbers.Number)` before
    every check of torch's `RNNBase.__init__`), which a call meets anyway or stops at that
    check's own site, and one errcat cannot judge would leave every negation unjudged."""
    found: dict[tuple[str, str], list[ast.expr]] = {}
    if site.function is None:
        return found
    own_ifs = tuple(condition for condition in site.conditions if condition.kind == "if")
    checked = replace(site, conditions=own_ifs) if own_ifs else site
    node = def_header(site.signature) if site.signature else None
    own = set() if node is None else {parameter.name for parameter in _parameters(node)}

    def add(key: tuple[str, str], tests: list[ast.expr]) -> None:
        if tests:
            both = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
            found.setdefault(key, []).append(ast.UnaryOp(ast.Not(), both))

    if node is not None:
        add((module, site.function), _with_constants(_tests(checked), constants, node))
    for caller in callers:
        tests = _tests(checked, dict(caller.passes), own, caller.node)
        add((caller.module, caller.function), _with_constants(tests, constants, caller.node))
    return found


def _with_constants(
    tests: list[ast.expr],
    constants: Mapping[str, str] | None,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> list[ast.expr]:
    """`tests` with the module-level names of `constants` written as their values, but for
    the names the called function's parameters take (`node`'s): `padding_mode not in
    _SUPPORTED` is `padding_mode not in {'reflect', 'zeros'}`, whose members a value is chosen
    from."""
    if not constants:
        return tests
    shadowed = {parameter.name for parameter in _parameters(node)}
    written = {name: value for name, value in constants.items() if name not in shadowed}

    class _Fold(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.expr:
            if isinstance(name.ctx, ast.Load) and name.id in written:
                return ast.copy_location(ast.parse(written[name.id], mode="eval").body, name)
            return name

    return [_Fold().visit(copy.deepcopy(test)) for test in tests]


MAX_REFUSALS = 2
"""Public callers whose reason for giving no call is said beside the site's own."""


def _ranked(calls: Iterable[Candidate], most: int = MAX_CANDIDATES) -> list[Candidate]:
    """The shortest `most` calls from examples, then the shortest `most` others (by the call
    itself: the statements a call needs are no reason to try it later), then the calls a run
    searches first (`Candidate.search`), in the order found.

    A stand-in (`Candidate.stand_in`) is always shorter than the call it stands in for, yet
    only worth its try once that call failed: the others are the shortest calls that build
    their values, then the shortest stand-in, `most` in all but for one stand-in at least
    (`get_matching_subgraph_pairs(GraphModule({}, Graph()), ...)` before `(None, None)`)."""
    listed = list(calls)
    ordered = sorted(listed, key=lambda c: len(c.call))
    from_examples = [c for c in ordered if c.example and not c.search][:most]
    made = [c for c in ordered if not c.example and not c.search and not c.stand_in]
    stand_ins = [c for c in ordered if not c.example and not c.search and c.stand_in][:1]
    others = made[: max(1, most - len(stand_ins))] + stand_ins
    return from_examples + others + [c for c in listed if c.search][:MAX_SEARCHES]


def _tests(
    site: RaiseSite,
    renames: Mapping[str, str] | None = None,
    own: set[str] | None = None,
    caller: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
    instance: str | None = None,
) -> list[ast.expr]:
    """The tests that hold when the site raises (`if` and `guard` conditions), a test of
    locals through its `expanded` form. With `renames`, in the caller's parameters: a test
    reading a parameter of the site's function (`own`) that the caller does not pass, or a
    local, or a name that is a parameter of the caller's, is left out (none of those is
    steered by the caller's arguments as written), and none is left when no test reads what
    the caller passes. With `instance`, the name the site's method calls its instance (`self`),
    tests reading it are kept too, and those left are returned whatever they read: the tests
    a run judges on the instance its receiver makes (`Search`)."""
    callers_names = (
        set() if caller is None else {parameter.name for parameter in _parameters(caller)}
    )
    found = []
    steered = False
    for condition in site.conditions:
        if condition.kind not in ("if", "guard") or not condition.code:
            continue
        # Called directly, a test of locals errcat cannot expand still judges what it can.
        code = as_passed(condition) or (condition.code if renames is None else None)
        if code is None:
            continue
        if renames is not None:
            try:
                tree = ast.parse(f"(\n{code}\n)", mode="eval").body
            except SyntaxError:
                continue
            # Each part of an `and` is a test of its own: one reading what the caller does not
            # steer is left out, and the rest still hold when the site raises
            # (`padding == "same" and any(s != 1 for s in stride)`, where the caller passes
            # `padding` on and computes `stride`, keeps `padding == "same"`).
            parts = (
                tree.values
                if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And)
                else [tree]
            )
            kept = []
            for part in parts:
                read = free_names(part)
                own_read = read & (own or set())
                if own_read - set(renames) - {instance} or (read - own_read) & callers_names:
                    continue
                steered = steered or bool(read & set(renames))
                kept.append((part, read))
            if not kept:
                continue
            read = set().union(*(names for _part, names in kept))
            code = " and ".join(f"({ast.unparse(part)})" for part, _names in kept)
            changed = substituted(code, {name: renames[name] for name in read & set(renames)})
            if changed is None:
                continue
            code = changed
        with contextlib.suppress(SyntaxError):
            found.append(ast.parse(one_line(code).strip(), mode="eval").body)
    # Through a caller, only tests its arguments steer make its calls worth trying.
    return found if renames is None or steered or instance else []


def instance_tests(site: RaiseSite) -> list[ast.expr]:
    """The tests of the site's method that read the instance only through attributes its
    constructor set from its parameters (`Condition.instance`), said in those parameters:
    `self.mode not in ("a", "b")` where `__init__` did `self.mode = mode` is `mode not in
    ("a", "b")`, a test the constructor's arguments steer."""
    found: list[ast.expr] = []
    for condition in site.conditions:
        if condition.kind not in ("if", "guard") or not condition.instance:
            continue
        code = as_passed(condition)
        made = {f"self.{attribute}": parameter for attribute, parameter, *_ in condition.instance}
        renamed = None if code is None else substituted(code, made)
        if renamed is None:
            continue
        with contextlib.suppress(SyntaxError):
            test = ast.parse(one_line(renamed).strip(), mode="eval").body
            if "self" not in free_names(test):
                found.append(test)
    return found


def method_caller(
    site: RaiseSite,
    module: str,
    receiver: Candidate,
    examples: Sequence[ExampleCall] = (),
    *,
    steered: bool = False,
) -> PublicCaller | None:
    """The site's own method, called on the instance `receiver` makes (`Pool(1).take(-1)`),
    as a caller passing each parameter as itself; None for what is no public method.
    `examples` are what the method's arguments may be taken from (`ExampleCall.bound`);
    `steered`, whether the receiver was made to meet `instance_tests`."""
    node = def_header(site.signature) if site.signature else None
    if site.function is None or node is None or isinstance(node, ast.AsyncFunctionDef):
        return None
    parts = site.function.split(".")
    if len(parts) != 2 or not all(_public_part(part) for part in parts):
        return None
    parameters = [p.name for p in _parameters(node)][1:]
    passes = tuple((n, n) for n in parameters)
    return PublicCaller(module, site.function, node, passes, receiver, tuple(examples), steered)


def constructor_call(
    module: str,
    class_name: str,
    init: ast.FunctionDef | ast.AsyncFunctionDef | None,
    examples: Sequence[ExampleCall] = (),
    tests: Sequence[ast.expr] = (),
    build: Builder | None = None,
) -> Candidate | None:
    """The call that makes an instance of `class_name`: as the first of `examples` makes it,
    or else the shortest errcat has values for (`Class()` for a class without an `__init__` of
    its own), under which none of `tests` (in the constructor's parameters) is known to be
    false; None when there are none."""
    if init is None:
        # An inherited `__init__`: the parameters are not known here, the example's call is
        # taken as written.
        for example in examples:
            arguments = [*example.positional, *(f"{k}={v}" for k, v in example.keywords)]
            call = f"{class_name}({', '.join(arguments)})"
            return _candidate(module, class_name, call, set(), None, example)
        return Candidate(module, class_name, f"{class_name}()")
    try:
        return _calls(
            f"{class_name}.__init__", init, module, tests, examples=examples, build=build
        )[0]
    except ValueError:
        return None


def _public_part(part: str) -> bool:
    return not part.startswith("_") or part in ("__init__", "__call__")


def _calls(
    function: str,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    module: str,
    conditions: Sequence[ast.expr],
    receiver: Candidate | None = None,
    examples: Sequence[ExampleCall] = (),
    build: Builder | None = None,
    example_values: ValuesByClass | None = None,
    types: Documented = (),
    searched: Sequence[ast.expr] | None = None,
) -> list[Candidate]:
    """The calls of `function` (of `module`, defined by `node`) under which none of
    `conditions` is known to be false: those starting from each of `examples` first, then
    those of made-up values, shortest first, then those passing `example_values`; ValueError
    saying why there are none. With `receiver`, `function` is a method called on the instance
    it makes."""
    from_examples: list[Candidate] = []
    for example in examples:
        with contextlib.suppress(ValueError):
            found = _calls_from(function, node, module, conditions, receiver, example, build)
            from_examples += [c for c in found if c.call not in {f.call for f in from_examples}]
    try:
        made_up = _calls_from(
            function,
            node,
            module,
            conditions,
            receiver,
            build=build,
            example_values=example_values,
            types=types,
            searched=searched,
        )
    except ValueError:
        if not from_examples:
            raise
        made_up = []
    return _ranked(from_examples) + made_up


def _calls_from(
    function: str,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    module: str,
    conditions: Sequence[ast.expr],
    receiver: Candidate | None = None,
    example: ExampleCall | None = None,
    build: Builder | None = None,
    example_values: ValuesByClass | None = None,
    types: Documented = (),
    searched: Sequence[ast.expr] | None = None,
) -> list[Candidate]:
    """`_calls` without or with one `example`: a parameter no condition reads takes the value
    the example passes, or the value its setup binds to the parameter's name; one a condition
    reads tries that value after those the conditions suggest. A class a parameter is
    annotated with is made by `build` where it takes arguments, else bare."""
    if receiver is not None:
        callee, bound = f"{receiver.call}.{function.rpartition('.')[2]}", True
    else:
        callee, bound = _callee(function, node)
    # A property is read, not called: `Pool(1).size`, as users meet its error; its setter is
    # assigned to: `Pool(1).size = -1`.
    getter = receiver is not None and _is_property(node)
    setter = receiver is not None and _is_setter(node)
    parameters = _parameters(node)
    instance: str | None = None
    if bound:
        if not parameters or parameters[0].kind not in ("positional_only", "positional"):
            raise ValueError(f"`{function}` takes no self or cls")
        instance = parameters[0].name
        parameters = parameters[1:]
    known = dict(types)
    # A parameter without an annotation known to be of a built-in type (its docstring says
    # `n (int)`, or it reads `repo.split`) is tried as if annotated so.
    parameters = [
        replace(p, annotation=ast.Name(known[p.name][0]))
        if p.annotation is None and known.get(p.name, ("",))[0] in (*_TYPES, "Callable")
        else p
        for p in parameters
    ]
    by_name = {p.name: p for p in parameters if p.kind not in ("varargs", "varkw")}
    written = {} if example is None else _written(example, parameters)
    if example is not None and not written:
        raise ValueError("the example's arguments do not fit the parameters")
    pools = _pools(conditions, by_name)
    for name, value in written.items():
        if name in pools and value not in pools[name]:
            pools[name].append(value)
    named = {name for condition in conditions for name in free_names(condition)}
    choices: list[list[Any]] = []
    for parameter in by_name.values():
        if pools.get(parameter.name):
            choices.append(pools[parameter.name])
        elif parameter.name in written:
            choices.append([written[parameter.name]])
        elif parameter.default is not None:
            choices.append([_SKIP])
        else:
            plain = _plain_value(parameter.annotation)
            documented = known.get(parameter.name, ())
            if (
                plain is _NO_VALUE
                and parameter.name in named
                # Values its documented class's examples make are what a search gives it.
                and not (
                    example_values
                    and example is None
                    and any(example_values.get(n) for n in documented)
                )
                # A test that reads it only whole (`type(conv) == Conv2d`, `x is None`,
                # `mode in MODES`) may hold of None, which the run tries.
                and not _read_whole(conditions, parameter.name)
            ):
                raise ValueError(
                    f"no value for parameter `{parameter.name}` of `{function}` "
                    "(no default, and no annotation errcat can make a value of)"
                )
            # A parameter no test reads does not decide whether the raise is reached: None
            # when its annotation gives no value (the run says whether the call gets there).
            choices.append([None if plain is _NO_VALUE else plain])
    found: dict[str, Candidate] = {}
    # Each call that builds a value also without it (None): a class errcat builds bare may
    # need arguments, or be an alias (`DeviceLikeType`, a Union) that cannot be called at all,
    # and a parameter no test reads rarely needs a real value to reach the raise; a function
    # made up for a `Callable` too (the check that it is one may be the raise).
    unbuilt: dict[str, Candidate] = {}
    for combination in itertools.islice(itertools.product(*choices), MAX_COMBINATIONS):
        values = dict(zip(by_name, combination, strict=True))
        env = {
            name: (_default_value(by_name[name]) if value is _SKIP else value)
            for name, value in values.items()
        }
        # A value the program builds or an example writes is unknown here: conditions on it
        # are not judged (but for the function made up for a `Callable`, which is one).
        env = {
            name: value
            for name, value in env.items()
            if value is not _NO_VALUE
            and (not isinstance(value, _Built | _Written) or value == _PLAIN["Callable"])
        }
        if any(_truth(condition, env) is False for condition in conditions):
            continue
        made, imports = _made(values, module, build)
        for into, chosen in (
            (found, made),
            (
                unbuilt,
                {n: None if isinstance(v, _Built | _Written) else v for n, v in values.items()},
            ),
        ):
            if example is not None and into is unbuilt:
                continue  # the example's values are what a bare value would stand in for
            call = (
                callee
                if getter
                else _render_assignment(callee, by_name.values(), chosen)
                if setter
                else _render_call(callee, by_name.values(), chosen)
            )
            if call is None:
                continue
            built = {value.root for value in chosen.values() if isinstance(value, _Built)}
            needs = imports if into is found else ()
            candidate = _candidate(module, callee, call, built, receiver, example, needs)
            if into is unbuilt and chosen != values:
                candidate = replace(candidate, stand_in=True)
            into.setdefault(call, candidate)
    searching = (
        _search_call(
            callee,
            by_name,
            choices,
            named if searched is None else {name for test in searched for name in free_names(test)},
            conditions if searched is None else searched,
            example_values,
            module,
            receiver,
            known,
            instance,
        )
        if example_values and example is None
        else []
    )
    if not found:
        if searching:
            return searching
        raise ValueError("no combination of values errcat tried meets the conditions")
    if example is not None:
        return list(found.values())
    ranked = sorted(found.values(), key=lambda c: len(c.call))[:MAX_CANDIDATES]
    tried = {candidate.call for candidate in ranked}
    spare = sorted(
        (candidate for call, candidate in unbuilt.items() if call not in tried),
        key=lambda c: len(c.call),
    )
    return ranked + spare[:1] + searching


def _search_call(
    callee: str,
    by_name: Mapping[str, _Parameter],
    choices: Sequence[list[Any]],
    named: set[str],
    conditions: Sequence[ast.expr],
    example_values: ValuesByClass,
    module: str,
    receiver: Candidate | None,
    types: Mapping[str, tuple[str, ...]],
    instance: str | None = None,
) -> list[Candidate]:
    """The call standing for a search (`Search`) where a parameter is annotated with a class of
    which the package's examples make values (`example_values`), or known as one (`types`,
    for a parameter without an annotation): a parameter a test reads chooses among them before
    its other values (`_calls_from`'s); a parameter without a default that no test reads takes
    the first of them before its made-up value (a bare `Tensor()` or None, on which the
    function may fail before it gets to the raise); none where no parameter is such."""
    offers: dict[str, list[Any]] = {}
    imports: dict[str, tuple[str, ...]] = {}
    for parameter, choice in zip(by_name.values(), choices, strict=True):
        read = parameter.name in named
        if not read and parameter.default is not None:
            continue
        classes = (
            [dotted.rpartition(".")[2] for dotted in _class_annotations(parameter.annotation)]
            if parameter.annotation is not None
            else types.get(parameter.name, ())
        )
        found = [
            (value.source, value.imports)
            for name in classes
            for value in example_values.get(name, ())
        ]
        for (opening, closing), name in _containers(parameter.annotation):
            # `list[Tensor]`, `tuple[Tensor, ...]`: a container of one value the examples make.
            found += [
                (f"{opening}{value.source}{closing}", value.imports)
                for value in example_values.get(name, ())
            ]
        if not found:
            continue
        written = list(dict.fromkeys(_Written(source) for source, _imports in found))
        offered = written if read else written[:1]
        offers[parameter.name] = [*offered, *(v for v in choice if v not in offered)]
        imports.update(found)
    if not offers:
        return []
    search = Search(
        module,
        callee,
        tuple(by_name.values()),
        tuple(
            tuple(offers[name]) if name in offers else _unbuilt(choice)
            for name, choice in zip(by_name, choices, strict=True)
        ),
        tuple(ast.unparse(condition) for condition in conditions),
        tuple(imports.items()),
        receiver,
        # The tests of a method read the instance as its first parameter: one made as the call
        # makes it (without statements of an example ahead of it), where the callee is one.
        instance if receiver is not None and not receiver.setup else None,
    )
    first = search.call([0] * len(search.options()))
    return [] if first is None else [replace(first, search=search)]


_SEQUENCES = frozenset(
    {"list", "List", "Sequence", "MutableSequence", "Iterable", "Collection", "Iterator"}
)
_TUPLES = frozenset({"tuple", "Tuple"})


def _containers(annotation: ast.expr | None) -> list[tuple[tuple[str, str], str]]:
    """The containers of a class an annotation allows, each as the brackets that write one
    holding a single value and the class's name: `list[Tensor]` and `Sequence[Tensor]` give
    (("[", "]"), "Tensor"), `tuple[Tensor, ...]` and `tuple[Tensor]` (("(", ",)"), "Tensor"),
    through `X | None`, `Optional[X]` and `Union[...]`; none for any other annotation."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _containers(annotation.left) + _containers(annotation.right)
    if not isinstance(annotation, ast.Subscript):
        return []
    base = _annotation_name(annotation.value)
    inner = annotation.slice
    parts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    if base in (["Optional"], ["Union"]):
        return [found for part in parts for found in _containers(part)]
    if base and base[0] in _SEQUENCES and len(parts) == 1:
        brackets = ("[", "]")
    elif (
        base
        and base[0] in _TUPLES
        and (
            len(parts) == 1
            or (len(parts) == 2 and isinstance(parts[1], ast.Constant) and parts[1].value is ...)
        )
    ):
        brackets = ("(", ",)")
    else:
        return []
    return [(brackets, dotted.rpartition(".")[2]) for dotted in _class_annotations(parts[0])]


def _holds(pool: Sequence[Any], value: Any) -> bool:
    """Whether `pool` has `value` already, by type and repr: 1 == 1.0 == True must stay three
    values, and values may be lists, which do not hash."""
    return any(type(v) is type(value) and repr(v) == repr(value) for v in pool)


def _unbuilt(choice: Sequence[Any]) -> tuple[Any, ...]:
    """A parameter's values for a search, with None for a class built bare: the calls before
    it tried that class already (`Tensor()`, an alias such as `ParamsT()` that cannot be
    called), and a search is about the values the examples make."""
    found: list[Any] = []
    for value in choice:
        value = None if isinstance(value, _Built) else value
        if not _holds(found, value):
            found.append(value)
    return tuple(found)


@dataclass(frozen=True, eq=False)
class Search:
    """Calls of one callee whose values for some parameters are values the package's examples
    make (`catalog.evidence.example_values`), which nothing here can judge: a run evaluates
    the tests on them in a child, choosing values parameter by parameter
    (`example_values.search_program`), and calls what it found (`call`)."""

    module: str
    callee: str
    parameters: tuple[_Parameter, ...]
    choices: tuple[tuple[Any, ...], ...]
    """Each parameter's values, in order: made-up ones and `_Written` ones of the examples."""
    tests: tuple[str, ...]
    """The tests that hold when the site raises, in the parameters' names."""
    imports: tuple[tuple[str, tuple[str, ...]], ...]
    """(an example value's source, the imports it needs)."""
    receiver: Candidate | None = None
    instance: str | None = None
    """The name a method's tests call its instance (`self`), bound to the receiver's value."""

    def options(self) -> list[tuple[str, list[str | None]]]:
        """Each parameter and its values as sources to evaluate, the instance first; None for a
        value the search cannot make (a class built bare, a default it cannot read), which
        leaves the tests that read it unjudged."""
        listed: list[tuple[str, list[str | None]]] = []
        if self.instance is not None and self.receiver is not None:
            listed.append((self.instance, [self.receiver.call]))
        for parameter, values in zip(self.parameters, self.choices, strict=True):
            sources: list[str | None] = []
            for value in values:
                if value is _SKIP:
                    value = _default_value(parameter)
                if isinstance(value, _Written):
                    sources.append(value.source)
                elif value is _NO_VALUE or isinstance(value, _Built):
                    sources.append(None)
                else:
                    sources.append(repr(value))
            listed.append((parameter.name, sources))
        return listed

    @property
    def needs(self) -> tuple[str, ...]:
        """The imports every example value, and the instance, need."""
        made = self.receiver.needs if self.instance and self.receiver else ()
        each = (line for _, lines in self.imports for line in lines)
        return tuple(dict.fromkeys((*made, *each)))

    def call(self, picks: Sequence[int]) -> Candidate | None:
        """The call passing each parameter its value at `picks` (after the instance's, where
        `options` gives it); None when it cannot be written (a positional-only parameter after
        a skipped one) or `picks` do not fit."""
        if self.instance is not None and self.receiver is not None:
            picks = picks[1:]
        if len(picks) != len(self.choices) or any(
            not 0 <= pick < len(values) for pick, values in zip(picks, self.choices, strict=True)
        ):
            return None
        values = {
            parameter.name: values[pick]
            for parameter, values, pick in zip(self.parameters, self.choices, picks, strict=True)
        }
        call = _render_call(self.callee, self.parameters, values)
        if call is None:
            return None
        needed = dict(self.imports)
        needs = tuple(
            dict.fromkeys(
                line
                for value in values.values()
                if isinstance(value, _Written)
                for line in needed.get(value.source, ())
            )
        )
        built = {value.root for value in values.values() if isinstance(value, _Built)}
        return _candidate(self.module, self.callee, call, built, self.receiver, None, needs)


def _made(
    values: Mapping[str, Any], module: str, build: Builder | None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """`values` with each class to build made by `build` where it can (its call as written),
    and the imports those calls need."""
    if build is None:
        return dict(values), ()
    made: dict[str, Any] = {}
    imports: list[str] = []
    for name, value in values.items():
        answer = build(value.dotted, module) if isinstance(value, _Built) else None
        if answer is None:
            made[name] = value
        else:
            made[name] = _Written(answer[0])
            imports += answer[1]
    return made, tuple(dict.fromkeys(imports))


def example_argument(
    annotation: ast.expr | None, example_values: ValuesByClass
) -> tuple[str, tuple[str, ...]] | None:
    """The first value the package's examples make of a class an annotation names, or a
    container of one (`list[Tensor]` gives `[torch.eye(2)]`), with the imports it needs; None
    where the examples make none."""
    for dotted in _class_annotations(annotation):
        for value in example_values.get(dotted.rpartition(".")[2], ())[:1]:
            return value.source, value.imports
    for (opening, closing), name in _containers(annotation):
        for value in example_values.get(name, ())[:1]:
            return f"{opening}{value.source}{closing}", value.imports
    return None


def values_meeting(
    tests: Sequence[ast.expr],
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    wanted: Collection[str],
) -> dict[str, str]:
    """For a `Builder`'s constructor `node`: values, as source, for the parameters of `wanted`
    (those it makes up, not those an example or a class gives) where `tests`, tests every
    call must meet (`avoiding` of the constructor's own checks), judge one of them false at
    the plain values of their annotations: the first combination of the plain values the
    tests offer under which none is, the other parameters at their plain values. {} where no
    test is judged false, or no such combination is found (the caller then makes its values
    as it would without tests)."""
    parameters = {p.name: p for p in _parameters(node) if p.name in wanted}
    plain = {
        name: value
        for name, parameter in parameters.items()
        if (value := _plain_value(parameter.annotation)) is not _NO_VALUE
        and not isinstance(value, _Built)
    }
    if all(_truth(test, plain) is not False for test in tests):
        return {}
    pools = _pools(tests, parameters)
    read = [name for name in parameters if pools.get(name)]
    for combination in itertools.islice(
        itertools.product(*(pools[name] for name in read)), MAX_COMBINATIONS
    ):
        if any(isinstance(value, _Built | _Written) for value in combination):
            continue  # a class to build in turn: not one level further down
        env = {**plain, **dict(zip(read, combination, strict=True))}
        if all(_truth(test, env) is not False for test in tests):
            return {name: repr(value) for name, value in zip(read, combination, strict=True)}
    return {}


def fails_checks(
    call: str, node: ast.FunctionDef | ast.AsyncFunctionDef, tests: Sequence[ast.expr]
) -> bool:
    """Whether a constructor call as written (`Lamp(1)`) passes values that one of `tests`,
    in the parameters of the constructor `node`, is judged false of: its arguments that are
    literals, and the defaults of those it leaves out; False where it cannot be read."""
    try:
        written = ast.parse(call, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(written, ast.Call):
        return False
    parameters = [p for p in _parameters(node)[1:] if p.kind not in ("varargs", "varkw")]
    env = {p.name: value for p in parameters if (value := _default_value(p)) is not _NO_VALUE}
    positional = [p for p in parameters if p.kind in ("positional_only", "positional")]
    given: list[tuple[str, ast.expr]] = list(
        zip((p.name for p in positional), written.args, strict=False)
    ) + [(k.arg, k.value) for k in written.keywords if k.arg is not None]
    for name, argument in given:
        value = _literal(argument)
        if value is _NO_VALUE:
            env.pop(name, None)  # a value made some other way: unknown here
        else:
            env[name] = value
    return any(_truth(test, env) is False for test in tests)


def plain_argument(annotation: ast.expr | None) -> tuple[str, bool] | None:
    """What a parameter no test reads gets from its annotation alone, for the arguments a
    `Builder` makes up: (a value's source, False) (`1`, `'x'`, `[]`) or (a class as written,
    True) to build in turn; None when the annotation gives nothing."""
    value = _plain_value(annotation)
    if value is _NO_VALUE:
        return None
    return (value.dotted, True) if isinstance(value, _Built) else (repr(value), False)


def _candidate(
    module: str,
    callee: str,
    call: str,
    built: set[str],
    receiver: Candidate | None,
    example: ExampleCall | None,
    made: Sequence[str] = (),
) -> Candidate:
    names = set(built)
    setup: tuple[str, ...] = ()
    imports: tuple[str, ...] = tuple(made)
    if receiver is not None:
        # The program imports the class (the receiver's callee) and what either builds.
        callee = receiver.callee
        names |= set(receiver.names)
        setup = receiver.setup
        imports = tuple(dict.fromkeys((*receiver.imports, *imports)))
    if example is not None:
        names |= set(example.from_module)
        setup = tuple(dict.fromkeys((*setup, *example.setup)))
        imports = tuple(dict.fromkeys((*imports, *example.imports)))
    if setup:
        setup = needed(setup, call)
    # Only a call of the example's values is one: made-up values on an instance an example
    # made compete with the other made-up calls.
    return Candidate(
        module, callee, call, tuple(sorted(names)), setup, imports, example is not None
    )


def _written(example: ExampleCall, parameters: Sequence[_Parameter]) -> dict[str, _Written]:
    """The values an example gives each parameter (`parameters` without self); none when its
    arguments do not fit them."""
    positional = [p for p in parameters if p.kind in ("positional_only", "positional")]
    if len(example.positional) > len(positional):
        return {}
    given = {
        parameter.name: _Written(source)
        for parameter, source in zip(positional, example.positional, strict=False)
    }
    by_keyword = {p.name for p in parameters if p.kind in ("positional", "keyword_only")}
    for name, source in example.keywords:
        if name not in by_keyword or name in given:
            return {}
        given[name] = _Written(source)
    for parameter in parameters:
        if parameter.name not in given and parameter.name in example.bound:
            given[parameter.name] = _Written(parameter.name)
    return given


def _default_value(parameter: _Parameter) -> Any:
    return _NO_VALUE if parameter.default is None else _literal(parameter.default)


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method is a property's getter (`@property`, `@functools.cached_property`)."""
    return any(
        (dotted_name(decorator) or "").rpartition(".")[2] in ("property", "cached_property")
        for decorator in node.decorator_list
    )


def _is_setter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method is a property's setter (`@size.setter` over `def size(self, value)`)."""
    return any(dotted_name(decorator) == f"{node.name}.setter" for decorator in node.decorator_list)


def _render_assignment(
    target: str, parameters: Iterable[_Parameter], values: Mapping[str, Any]
) -> str | None:
    """`target = value`, the statement that runs a setter with its one value; None when the
    setter takes other than one value."""
    given = [values[parameter.name] for parameter in parameters]
    if len(given) != 1 or given[0] is _SKIP:
        return None
    return f"{target} = {given[0]!r}"


def _render_call(
    callee: str, parameters: Iterable[_Parameter], values: Mapping[str, Any]
) -> str | None:
    """The call's source; None when a positional-only parameter would follow a skipped one."""
    pieces: list[str] = []
    by_keyword = False
    for parameter in parameters:
        value = values[parameter.name]
        if value is _SKIP:
            by_keyword = True  # what follows a skipped parameter must be named
            continue
        if parameter.kind == "keyword_only" or by_keyword:
            if parameter.kind == "positional_only":
                return None
            pieces.append(f"{parameter.name}={value!r}")
        else:
            pieces.append(repr(value))
    return f"{callee}({', '.join(pieces)})"
