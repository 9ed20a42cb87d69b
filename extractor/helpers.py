"""Raise helpers: functions whose call statements raise what the function builds from the call.

`extractor.printed` reads each call statement of a helper as a site of its own, with the text
that call gives. This module tells, from one function's syntax, whether it is a helper and
what its own tests say about when a call raises. A function is a helper when it never yields,
returns nothing on any path (a bare `return`, or `return None`, only stops it early), and its
body ends in one of:

- a raise of an exception built from its parameters (`raise exc(msg, self.lineno)`);
- an `if` without `else` whose block ends that way, as deep as such tests nest (`if not
  cond: raise ValueError(msg)`): an assert-style check;
- a call statement of another helper that passes it some of its own parameters
  (`def _check(cond, message=None): _check_with(RuntimeError, cond, message)`).

A test on the way to that end (an `if` around the raise, an `if cond: return` before it)
that reads the parameters alone, through operators, built-in functions and the parameters'
own attributes and methods, is a `Guard`: a call raises only when it holds (or fails) for
the arguments the call gives, so `extractor.printed` says it at the call in the caller's
words (the argument itself for a test that is one parameter, `not cond`; the test with each
parameter replaced by its argument otherwise). A test that is a call of a function passing
a value through (`passes_through`: `if expect_true(cond): return`, where `expect_true`
returns its argument as given for the values its type tests let by) is the test of that
value. Any other test is left unsaid, never guessed: the guards are conditions each call
needs in order to raise, not all of them.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from extractor.expansion import substituted

RECEIVER = -1
"""The place of a method's instance: the object the call is made on (`self` of `self.m()`)."""


@dataclass(frozen=True)
class Parameter:
    """A parameter as a call passes it a value."""

    name: str
    position: int | None
    """Its place among the arguments a call passes positionally (after `self` for a method);
    None for a keyword-only parameter, `RECEIVER` for a method's instance."""


@dataclass(frozen=True)
class Guard:
    """A test of the helper's parameters deciding whether a call of it raises."""

    code: str
    """The test as the helper writes it, a bare parameter's `not`s folded into `raises_when`
    (`if not cond:` is the test `cond`, raising when false)."""
    reads: tuple[Parameter, ...]
    """The parameters it reads."""
    raises_when: bool
    """The truth of the test under which the call raises."""

    @property
    def plain(self) -> Parameter | None:
        """The parameter, for a test that is one parameter alone."""
        if len(self.reads) == 1 and self.code == self.reads[0].name:
            return self.reads[0]
        return None


@dataclass(frozen=True)
class Helper:
    """A function whose call statements raise (`extractor.printed` reads them as sites)."""

    path: str
    qualname: str
    guards: tuple[Guard, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return self.path, self.qualname


@dataclass(frozen=True)
class Ending:
    """How a function ends: the raise or helper call it ends in, inside which `if`s."""

    statement: ast.Raise | ast.Expr
    """A raise of an exception, or a call statement."""
    ifs: tuple[ast.If, ...]
    """The `if` statements (none with an `else`) the statement is nested in, outermost first."""


def call_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef, *, method: bool) -> list[str]:
    """The parameters a call passes values to: positional ones (less the instance or class
    of a method) then keyword-only ones."""
    spec = node.args
    positional = [p.arg for p in (*spec.posonlyargs, *spec.args)]
    if method and positional and not is_static(node):
        positional = positional[1:]
    return [*positional, *(p.arg for p in spec.kwonlyargs)]


def ending(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Ending | None:
    """The raise, or the call statement, the function's body ends in (through trailing `if`s
    without `else`), when it returns nothing on any path and never yields; None otherwise."""
    if not _returns_nothing(node):
        return None
    ifs: list[ast.If] = []
    last = node.body[-1]
    while isinstance(last, ast.If) and not last.orelse:
        ifs.append(last)
        last = last.body[-1]
    if isinstance(last, ast.Raise) and last.exc is not None:
        return Ending(last, tuple(ifs))
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        return Ending(last, tuple(ifs))
    return None


def guards(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    end: Ending,
    parameters: list[str],
    source: Callable[[ast.expr], str],
    through: Callable[[ast.Call], ast.expr | None] | None = None,
) -> list[Guard]:
    """The tests on the way to the ending that read the parameters alone, through operators,
    built-in functions and the parameters' own attributes and methods (`not cond`, `not
    isinstance(param, torch.Tensor)`, `M < 0`): those of the `if`s around it, and of the
    early exits (`if cond: return`) of each block on the way. A test that is a call (or `not`
    of one) `through` sees through, the argument it gives for a call of a function passing a
    value through, is the test of that argument (`if expect_true(cond): return` reads
    `cond`); a test calling anything else says nothing errcat can put in a caller's words."""
    spec = node.args
    positional = len(parameters) - len(spec.kwonlyargs)
    bound = _bound(node)
    # A method's instance is the call's receiver (`self.check(x)`); a class method's class
    # is no argument errcat can name, so a test reading it is not said.
    first = [p.arg for p in (*spec.posonlyargs, *spec.args)][:1]
    hidden = first[0] if first and first[0] not in parameters else None
    instance = None if hidden is None or _decorated(node, "classmethod") else hidden
    if hidden is not None and instance is None:
        bound = bound | {hidden}
    readable = [*parameters, instance] if instance is not None else parameters
    found: list[Guard] = []

    def place(name: str) -> Parameter:
        if name == instance:
            return Parameter(name, RECEIVER)
        index = parameters.index(name)
        return Parameter(name, index if index < positional else None)

    def add(test: ast.expr, raises_when_true: bool) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            if isinstance(test.operand, ast.Call) and through is not None:
                seen = through(test.operand)
                if seen is not None:
                    add(seen, not raises_when_true)
                    return
        elif isinstance(test, ast.Call) and through is not None:
            seen = through(test)
            if seen is not None:
                add(seen, raises_when_true)
                return
        named = _parameter_test(test)
        if named is not None:
            name, negated = named
            if name in readable and name not in bound:
                found.append(Guard(name, (place(name),), raises_when_true != negated))
            return
        reads = _reads(test, readable, bound)
        if reads:
            found.append(Guard(source(test), tuple(map(place, reads)), raises_when_true))

    blocks = [node.body, *(statement.body for statement in end.ifs)]
    ways = [*end.ifs, end.statement]
    for block, way in zip(blocks, ways, strict=True):
        for statement in block[: _index(block, way)]:
            if _early_exit(statement):
                assert isinstance(statement, ast.If)
                add(statement.test, raises_when_true=False)
    for statement in end.ifs:
        add(statement.test, raises_when_true=True)
    return found


def forwarded(
    end: Ending, inner: Helper, parameters: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef
) -> list[Guard] | None:
    """The guards a helper call statement `end` passes on from the helper `inner` it calls:
    those of inner's guards each of whose parameters it gives one of its own parameters as it
    is (renamed so). None when the call passes none of its parameters on as it is, other than
    for a plain guard: then what it raises is the same whatever its callers give
    (`check(n < 10, "n too big")`), and the call is a site of its own, not a helper's
    ending."""
    assert isinstance(end.statement, ast.Expr) and isinstance(end.statement.value, ast.Call)
    call = end.statement.value
    tested = {id(argument_for(call, plain)) for guard in inner.guards if (plain := guard.plain)}
    passed = {
        argument.id
        for argument in (*call.args, *(k.value for k in call.keywords))
        if isinstance(argument, ast.Name) and id(argument) not in tested
    }
    if not passed & set(parameters):
        return None
    spec = node.args
    positional = len(parameters) - len(spec.kwonlyargs)
    bound = _bound(node)
    found: list[Guard] = []
    for guard in inner.guards:
        renames: dict[str, str] = {}
        for place in guard.reads:
            argument = argument_for(call, place)
            if not isinstance(argument, ast.Name) or argument.id not in parameters:
                break
            if argument.id in bound:
                break
            renames[place.name] = argument.id
        else:
            code = renames[guard.code] if guard.plain else substituted(guard.code, renames)
            if code is None:
                continue
            places = tuple(
                Parameter(name, index if index < positional else None)
                for name in dict.fromkeys(renames.values())
                for index in [parameters.index(name)]
            )
            found.append(Guard(code, places, guard.raises_when))
    return found


def passes_through(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Parameter | None:
    """The parameter a function returns as it was given, for the values its type tests let
    by: its body (a docstring aside) is `if`s testing only the parameter's type
    (`isinstance(a, SymBool)`, `type(a) is not bool`), each ending in a return or a raise,
    then `return a`, and it never binds `a` again. A call of it then has the truth of its
    argument for every value of a type no test catches (`expect_true(a)` is `a` for a plain
    bool), and the test `if expect_true(cond):` is read as `if cond:`; None for any other
    function."""
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        return None
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body or not isinstance(body[-1], ast.Return):
        return None
    returned = body[-1].value
    positional = [p.arg for p in (*node.args.posonlyargs, *node.args.args)]
    if not isinstance(returned, ast.Name) or returned.id not in positional:
        return None
    name = returned.id
    if rebinds(node, name) or any(
        isinstance(inner, ast.Yield | ast.YieldFrom) for inner in _own_nodes(node)
    ):
        return None
    for statement in body[:-1]:
        # Each test sends the values it catches out of the function (a return or a raise),
        # so the values none catches reach `return a` untouched.
        if (
            not isinstance(statement, ast.If)
            or statement.orelse
            or not isinstance(statement.body[-1], ast.Return | ast.Raise)
            or not _type_test(statement.test, name)
        ):
            return None
    return Parameter(name, positional.index(name))


def _type_test(test: ast.expr, name: str) -> bool:
    """A test of what type the parameter `name` is, and of nothing else: `isinstance(name,
    T)`, `type(name) is T` and `is not`, `==`, `!=`, under `not`, `and` and `or`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _type_test(test.operand, name)
    if isinstance(test, ast.BoolOp):
        return all(_type_test(value, name) for value in test.values)
    if isinstance(test, ast.Call):
        return (
            isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and not test.keywords
            and _names_only(test.args[0], name)
            and not _reads_name(test.args[1], name)
        )
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = test.left, test.comparators[0]
        return (
            isinstance(test.ops[0], ast.Is | ast.IsNot | ast.Eq | ast.NotEq)
            and isinstance(left, ast.Call)
            and isinstance(left.func, ast.Name)
            and left.func.id == "type"
            and len(left.args) == 1
            and not left.keywords
            and _names_only(left.args[0], name)
            and not _reads_name(right, name)
        )
    return False


def _names_only(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _reads_name(node: ast.expr, name: str) -> bool:
    return any(isinstance(inner, ast.Name) and inner.id == name for inner in ast.walk(node))


def argument_for(call: ast.Call, parameter: Parameter) -> ast.expr | None:
    """The argument a call passes for a parameter; None when it passes none (the default
    holds) or a `*args` comes before its place."""
    if parameter.position == RECEIVER:
        func = call.func
        return func.value if isinstance(func, ast.Attribute) else None
    for keyword in call.keywords:
        if keyword.arg == parameter.name:
            return keyword.value
    if parameter.position is None:
        return None
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return None
        if index == parameter.position:
            return argument
    return None


def _reads(test: ast.expr, parameters: list[str], bound: set[str]) -> list[str]:
    """The parameters a test reads, in the order it first reads them, where it reads nothing
    else the function binds and calls only built-in functions and the parameters' own
    methods; empty otherwise."""
    reads: list[ast.Name] = []
    for inner in ast.walk(test):
        if isinstance(inner, _BINDING):
            return []
        if isinstance(inner, ast.Name):
            if inner.id in parameters:
                if inner.id in bound:
                    return []
                reads.append(inner)
            elif inner.id in bound:
                return []
        elif isinstance(inner, ast.Call) and not _plain_call(inner.func, parameters, bound):
            return []
    reads.sort(key=lambda name: (name.lineno, name.col_offset))
    return list(dict.fromkeys(name.id for name in reads))


def _plain_call(func: ast.expr, parameters: list[str], bound: set[str]) -> bool:
    """A built-in function (`isinstance`, `len`) or a method of a parameter (`x.dim`)."""
    if isinstance(func, ast.Name):
        return func.id not in bound and func.id not in parameters and func.id in _BUILTINS
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(func, ast.Attribute) and isinstance(root, ast.Name) and root.id in parameters


_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
_BINDING = (
    ast.Lambda,
    ast.NamedExpr,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Await,
    ast.Yield,
    ast.YieldFrom,
)
"""What a test cannot hold to be said elsewhere: names of its own, or a pause."""


def _bound(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names the function's own body binds (its parameters only where rebound)."""
    names: set[str] = set()
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store | ast.Del):
            names.add(inner.id)
        elif isinstance(inner, ast.Global | ast.Nonlocal):
            names.update(inner.names)
        elif isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(inner.name)
        elif isinstance(inner, ast.alias):
            names.add((inner.asname or inner.name).split(".")[0])
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            names.add(inner.name)
    return names


def _parameter_test(test: ast.expr) -> tuple[str, bool] | None:
    """(name, negated) of a test that is a bare name or `not` of one."""
    if isinstance(test, ast.Name):
        return test.id, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _parameter_test(test.operand)
        if inner is not None:
            return inner[0], not inner[1]
    return None


def _early_exit(statement: ast.stmt) -> bool:
    """`if test: return` with nothing else: the rest of the block runs when test is false."""
    return (
        isinstance(statement, ast.If)
        and not statement.orelse
        and len(statement.body) == 1
        and isinstance(statement.body[0], ast.Return)
    )


def _index(block: list[ast.stmt], statement: ast.stmt) -> int:
    for index, candidate in enumerate(block):
        if candidate is statement:
            return index
    raise ValueError("the statement is not in the block")


def _own_nodes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The function's nodes, not those of functions, lambdas or classes defined in it."""
    stack: list[ast.AST] = list(node.body)
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(current, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(current))


def _returns_nothing(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Yield | ast.YieldFrom | ast.Await):
            return False
        if isinstance(inner, ast.Return) and not (
            inner.value is None
            or (isinstance(inner.value, ast.Constant) and inner.value.value is None)
        ):
            return False
    return isinstance(node, ast.FunctionDef)


def rebinds(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether the function's own body binds `name` again (beyond the parameter itself)."""
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Name) and inner.id == name and isinstance(inner.ctx, ast.Store):
            return True
        if isinstance(inner, ast.Global | ast.Nonlocal) and name in inner.names:
            return True
    return False


def is_static(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method is a `@staticmethod`, whose calls pass no instance."""
    return _decorated(node, "staticmethod")


def _decorated(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    return any(
        isinstance(decorator, ast.Name) and decorator.id == name
        for decorator in node.decorator_list
    )
