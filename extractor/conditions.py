"""What leads to a raise, read from the code that encloses it.

The statements from the raise's scope (its function, class body or module) down to the raise
are found by position; every block the path enters says something (the kinds of `Condition`):
the test of an `if` or `elif` branch, the negation of the tests before an `else`, a loop, an
exception handler, a `case`. Earlier `if` statements of the same blocks whose branch exits
(`if ok: return` before the raise) are guards: they say what held for the raise to be reached.
`with` blocks and `try` bodies add nothing, and nothing inside an expression (a lambda, a
comprehension, a conditional expression) is read: only statements decide whether a raise runs.

Tests are shown as written. Only negations are rebuilt from the parts as written: `not not x`
is `x`; `not (a == b)` is `a != b`, and likewise for `is` and `in`, whose negations are exactly
the opposite operators; every other test keeps `not (...)`, since `not (a < b)` and `a >= b`
differ for NaN and for partial orders.

An `if` test that reads names the function computes (`ndim = input.dim()` before `if ndim !=
4:`) is also given `expanded`, in terms of what the function was passed (`input.dim() != 4`),
where that is exact: each such local has one binding in the whole function, a plain `name =
value` that runs before the `if` on the way to it (a statement of a block the way passes
through, ahead of the way on), no statement after it up to the `if` names the local (so
nothing appended to a list or rebound it meanwhile), and the value's own locals are replaced
the same way. A parameter the function binds again above the test (`lr = abs(lr)`) is such a
local too, its value read as of the caller's argument (`abs(lr) > 3`). A local that is the
item of a `for` loop around the test (its target, of names only, that nothing in the loop's
body ahead of the test may change and no nested function rebinds), or that is computed from
that item in the same pass, makes the test one of the items: `any(<test> for p in params)`,
nested loops outermost first, each iterable in what was passed when its loop began. That
holds whenever the raise runs, so a caller who makes it false never reaches the raise. A
parameter the function binds again only directly under `if name is None:` is the caller's
unless None was passed: `rank is None or (<test>)`. In a method, an attribute of the
instance the method itself sets once (`self.dtype = dtype` before `if self.dtype not in
...`), with no method called on the instance and no other store of it between, is read
through that value too. Anything else leaves `expanded` None and the test as the only answer.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from extractor.model import Condition

_LOWEST, _OR, _AND, _NOT, _COMPARE, _OPERATOR, _ATOM = range(7)
"""Precedence levels, enough to know where rebuilt text needs parentheses."""

_OPPOSITES: dict[type[ast.cmpop], str] = {
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Is: "is not",
    ast.IsNot: "is",
    ast.In: "not in",
    ast.NotIn: "in",
}
"""Comparison operators whose negation is exactly another operator."""

Node = ast.expr | ast.stmt | ast.pattern


class Source(Protocol):
    """The module's text as the extractor slices it (character columns from `ast` positions)."""

    def text(self, node: Node) -> str:
        """The exact source of a node, without parentheses around it."""
        ...

    def starts_with(self, node: ast.stmt, word: str) -> bool:
        """Whether the source at the node's position starts with `word`."""
        ...


@dataclass(frozen=True)
class _Expr:
    """Source text of an expression with its precedence level."""

    text: str
    level: int

    def at_least(self, level: int) -> str:
        """The text, parenthesised unless it binds at least as tightly as `level`."""
        return self.text if self.level >= level else f"({self.text})"


def _level(node: ast.expr) -> int:
    if isinstance(node, ast.Lambda | ast.IfExp | ast.NamedExpr | ast.Yield | ast.YieldFrom):
        return _LOWEST
    if isinstance(node, ast.BoolOp):
        return _OR if isinstance(node.op, ast.Or) else _AND
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _NOT
    if isinstance(node, ast.Compare):
        return _COMPARE
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Await):
        return _OPERATOR
    return _ATOM


def _written(node: ast.expr, source: Source) -> _Expr:
    return _Expr(source.text(node), _level(node))


def negated(node: ast.expr, source: Source) -> str:
    """The negation of a test, as text: see the module docstring for the rules."""
    return _negated(node, source).text


def _negated(node: ast.expr, source: Source) -> _Expr:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _written(node.operand, source)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        opposite = _OPPOSITES.get(type(node.ops[0]))
        if opposite is not None:
            # Operands of a comparison bind tighter than it unless the source parenthesised
            # them; `ast` positions leave those parentheses out, so they are put back.
            left = _written(node.left, source).at_least(_OPERATOR)
            right = _written(node.comparators[0], source).at_least(_OPERATOR)
            return _Expr(f"{left} {opposite} {right}", _COMPARE)
    return _Expr(f"not {_written(node, source).at_least(_ATOM)}", _NOT)


def _all(parts: Sequence[_Expr]) -> _Expr:
    if len(parts) == 1:
        return parts[0]
    return _Expr(" and ".join(part.at_least(_AND) for part in parts), _AND)


@dataclass(frozen=True)
class _Step:
    """One block on the way from the scope down to the raise."""

    owner: ast.stmt | None
    """The compound statement whose block this is; None for the scope's own body."""
    block: str
    """Which block of `owner`: `body`, `orelse`, `handler`, `finalbody` or `case`."""
    part: ast.excepthandler | ast.match_case | None
    """The handler or case of a `handler` or `case` block."""
    statements: list[ast.stmt]
    index: int
    """Position in `statements` of the statement on the way to the raise."""


def _blocks(
    statement: ast.stmt,
) -> Iterator[tuple[str, ast.excepthandler | ast.match_case | None, list[ast.stmt]]]:
    """The blocks of a compound statement that run in its scope (not nested definitions)."""
    if isinstance(statement, ast.If | ast.For | ast.AsyncFor | ast.While):
        yield "body", None, statement.body
        yield "orelse", None, statement.orelse
    elif isinstance(statement, ast.With | ast.AsyncWith):
        yield "body", None, statement.body
    elif isinstance(statement, ast.Try | ast.TryStar):
        yield "body", None, statement.body
        for handler in statement.handlers:
            yield "handler", handler, handler.body
        yield "orelse", None, statement.orelse
        yield "finalbody", None, statement.finalbody
    elif isinstance(statement, ast.Match):
        for case in statement.cases:
            yield "case", case, case.body


def _path(
    statements: list[ast.stmt],
    target: ast.stmt,
    owner: ast.stmt | None = None,
    block: str = "body",
    part: ast.excepthandler | ast.match_case | None = None,
) -> list[_Step] | None:
    """The blocks from `statements` down to `target`, outermost first; None if it is not there."""
    line = target.lineno
    for index, statement in enumerate(statements):
        if statement.lineno > line:
            break
        if (statement.end_lineno or statement.lineno) < line:
            continue
        here = _Step(owner, block, part, statements, index)
        if statement is target:
            return [here]
        for name, sub, body in _blocks(statement):
            found = _path(body, target, statement, name, sub)
            if found is not None:
                return [here, *found]
    return None


def _exits(body: Sequence[ast.stmt]) -> bool:
    """Whether a block always leaves by `return`, `raise`, `continue` or `break`."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return | ast.Raise | ast.Continue | ast.Break):
        return True
    if isinstance(last, ast.If):
        return _exits(last.body) and _exits(last.orelse)
    # A `with` block may suppress what it raises, and loops and `try` have other ways out.
    return False


@dataclass(frozen=True)
class _Guard:
    """What holds after an `if` whose first branches exit."""

    holds: _Expr
    tests: list[ast.expr]
    """The tests of the branches that exit."""


def _guard(statement: ast.stmt, source: Source) -> _Guard | None:
    """What holds after an `if` whose first branches exit (`if ok: return`), or None.

    The chain `if a: exit elif b: exit elif c: ...` falls through only when `not a and not b`.
    When a branch that exits follows one that does not, or the `else` exits, falling through
    says something only a disjunction could state; such statements are not guards here.
    """
    if not isinstance(statement, ast.If):
        return None
    tests: list[ast.expr] = []
    exits: list[bool] = []
    node = statement
    while True:
        tests.append(node.test)
        exits.append(_exits(node.body))
        # `elif` and `else:` holding only an `if` are the same control flow.
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        rest = node.orelse
        break
    leading = 0
    while leading < len(exits) and exits[leading]:
        leading += 1
    if leading == 0 or any(exits[leading:]) or _exits(rest):
        return None
    return _Guard(_all([_negated(test, source) for test in tests[:leading]]), tests[:leading])


def _block_condition(step: _Step, source: Source) -> Condition | None:
    """What entering a block of anything but an `if` says (`if` chains are handled apart)."""
    owner = step.owner
    if isinstance(owner, ast.For | ast.AsyncFor):
        kind = "for" if step.block == "body" else "for_else"
        return Condition(kind, source.text(owner.iter), owner.lineno, source.text(owner.target))
    if isinstance(owner, ast.While):
        kind = "while" if step.block == "body" else "while_else"
        return Condition(kind, source.text(owner.test), owner.lineno)
    if isinstance(owner, ast.Try | ast.TryStar):
        handler = step.part
        if isinstance(handler, ast.ExceptHandler):
            kind = "except" if isinstance(owner, ast.Try) else "except_group"
            code = None if handler.type is None else source.text(handler.type)
            return Condition(kind, code, handler.lineno, handler.name)
        if step.block == "orelse":
            return Condition("try_else", None, owner.lineno)
        if step.block == "finalbody":
            return Condition("finally", None, owner.lineno)
        return None
    if isinstance(owner, ast.Match) and isinstance(step.part, ast.match_case):
        case = step.part
        code = source.text(case.pattern)
        if case.guard is not None:
            code += f" if {source.text(case.guard)}"
        return Condition("case", code, case.pattern.lineno, source.text(owner.subject))
    return None


def substituted(code: str, values: Mapping[str, str]) -> str | None:
    """`code` (an expression as written, over one line or several) with each name of
    `values` replaced by its text (a key `self.dtype` replaces that attribute read), the rest
    as written; None when it does not parse, or when a comprehension or lambda in it binds
    one of those names itself (there the name is not the one replaced)."""
    # Parenthesised so that an expression written over several lines parses; the opening
    # line keeps the columns of the code's own lines.
    wrapped = f"(\n{code}\n)"
    try:
        tree = ast.parse(wrapped, mode="eval")
    except SyntaxError:
        return None
    places = []
    for node in ast.walk(tree):
        if isinstance(node, ast.comprehension):
            if any(isinstance(n, ast.Name) and n.id in values for n in ast.walk(node.target)):
                return None
        elif isinstance(node, ast.Lambda):
            if any(a.arg in values for a in ast.walk(node.args) if isinstance(a, ast.arg)):
                return None
        elif isinstance(node, ast.Name) and node.id in values:
            places.append((node.lineno, node.col_offset, node.end_col_offset, values[node.id]))
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and f"{node.value.id}.{node.attr}" in values
            and node.end_lineno == node.lineno
        ):
            # `self.dtype`, where `values` holds what the method set it to.
            text = values[f"{node.value.id}.{node.attr}"]
            places.append((node.lineno, node.col_offset, node.end_col_offset, text))
    lines = wrapped.encode().split(b"\n")
    for line, start, end, text in sorted(places, reverse=True):
        # `ast` columns count UTF-8 bytes.
        row = lines[line - 1]
        lines[line - 1] = row[:start] + text.encode() + row[end:]
    return b"\n".join(lines[1:-1]).decode()


def one_line(code: str) -> str:
    """An expression written over several lines, on one (`(a +\n    b)` is `(a + b)`), where
    joining its lines keeps the same expression; else as it is (a comment or a string that
    spans lines)."""
    if "\n" not in code:
        return code
    joined = re.sub(r"\s*\n\s*", " ", code.strip())
    joined = re.sub(r"([(\[{]) ", r"\1", joined)
    joined = re.sub(r",? ([)\]}])", r"\1", joined)
    try:
        same = ast.dump(ast.parse(f"(\n{code}\n)", mode="eval")) == ast.dump(
            ast.parse(f"({joined})", mode="eval")
        )
    except SyntaxError:
        return code
    return joined if same else code


def as_passed(condition: Condition) -> str | None:
    """A condition's test in what the function was passed: as written (on one line) when it
    reads no locals, its `expanded` form when it does; None when that cannot be said or the
    condition has no test."""
    if not condition.code:
        return None
    if condition.locals or condition.expanded:
        return condition.expanded
    return one_line(condition.code)


_Bindings = tuple[dict[str, int], dict[str, ast.Assign | ast.AnnAssign], dict[str, int]]
"""For each name a function body binds: the line of its first binding (0: a nested
function's `nonlocal` may bind it at any time), its only plain assignment, if it has one, and
how many times it is bound."""


def _bindings(body: list[ast.stmt]) -> _Bindings:
    """Where a function body first binds each name, and the names it binds exactly once, by a
    plain `name = value` or `name: T = value` statement, with that statement. Every binding
    counts (loop targets, `with ... as`, imports, `del`, a walrus, `except ... as`, a
    comprehension's target, a nested definition, a nested function's `nonlocal`), so a name
    bound twice in any way is no single assignment."""
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    plain: dict[str, ast.Assign | ast.AnnAssign] = {}
    line = 0

    def count(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1
        first[name] = min(first.get(name, line), line)

    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        line = getattr(node, "lineno", line)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            count(node.name)
            # Only a nested scope's `nonlocal` rebinds this one's names, whenever it runs.
            for inner in ast.walk(node):
                if isinstance(inner, ast.Nonlocal):
                    line = 0
                    for name in inner.names:
                        count(name)
                        count(name)
            todo.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            count(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                count(name)
                count(name)
        elif isinstance(node, ast.alias):
            count((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            count(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            count(node.rest)
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            plain[node.targets[0].id] = node
        elif (
            isinstance(node, ast.AnnAssign)
            and node.value is not None
            and isinstance(node.target, ast.Name)
        ):
            plain[node.target.id] = node
        todo.extend(ast.iter_child_nodes(node))
    singles = {name: node for name, node in plain.items() if counts.get(name) == 1}
    return first, singles, counts


_READ_ONLY = frozenset(
    (
        *("len", "isinstance", "issubclass", "type", "str", "repr", "int", "float", "bool"),
        *("tuple", "any", "all", "min", "max", "sum", "sorted", "enumerate", "zip", "range"),
        *("id", "hash"),
    )
)
"""Built-in functions that read their arguments and change none of them."""


def _may_change(statement: ast.stmt, name: str) -> bool:
    """Whether a statement may rebind or change the value of `name`: it names it anywhere but
    in a read that changes nothing (a comparison or arithmetic operand, an attribute or an
    item read, an argument of a built-in that only reads, a formatted value)."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(statement):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return True
        parent = parents.get(id(node))
        if isinstance(parent, ast.Compare | ast.BinOp | ast.UnaryOp | ast.BoolOp):
            continue
        if isinstance(parent, ast.FormattedValue | ast.keyword):
            if isinstance(parent, ast.keyword):
                call = parents.get(id(parent))
                if not (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and call.func.id in _READ_ONLY
                ):
                    return True
            continue
        if isinstance(parent, ast.Attribute | ast.Subscript) and isinstance(parent.ctx, ast.Load):
            # `x.shape` is read; `x.append(...)` calls what may change `x`.
            grand = parents.get(id(parent))
            if (
                isinstance(parent, ast.Attribute)
                and isinstance(grand, ast.Call)
                and (grand.func is parent)
            ):
                return True
            continue
        if (
            isinstance(parent, ast.Call)
            and node is not parent.func
            and isinstance(parent.func, ast.Name)
            and parent.func.id in _READ_ONLY
        ):
            continue
        return True
    return False


def free_names(node: ast.AST) -> set[str]:
    """The names an expression reads from its scope, not those a comprehension or a lambda in
    it binds for itself (`d` in `any(d > n for d in dims)`)."""
    found: set[str] = set()
    _free_names(node, frozenset(), found)
    return found


def _free_names(node: ast.AST, inner: frozenset[str], found: set[str]) -> None:
    if isinstance(node, ast.Name):
        if node.id not in inner:
            found.add(node.id)
        return
    if isinstance(node, ast.Lambda):
        own = {argument.arg for argument in ast.walk(node.args) if isinstance(argument, ast.arg)}
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                _free_names(default, inner, found)
        _free_names(node.body, inner | own, found)
        return
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        scope = inner
        for index, generator in enumerate(node.generators):
            # The first iterable is evaluated outside the comprehension, the rest inside.
            _free_names(generator.iter, inner if index == 0 else scope, found)
            targets = {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
            scope = scope | targets
            for condition in generator.ifs:
                _free_names(condition, scope, found)
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for part in parts:
            _free_names(part, scope, found)
        return
    for child in ast.iter_child_nodes(node):
        _free_names(child, inner, found)


_last_bindings: tuple[list[ast.stmt], _Bindings] | None = None
"""The last body `_bindings_of` read, with its answer: a function's raise sites come one after
another, and a function with many of them would be walked once per raise otherwise."""


def _bindings_of(body: list[ast.stmt]) -> _Bindings:
    global _last_bindings
    if _last_bindings is not None and _last_bindings[0] is body:
        return _last_bindings[1]
    found = _bindings(body)
    _last_bindings = (body, found)
    return found


SELF = "self"
"""The name a method's instance goes by, for tests of what the method itself set on it."""


_last_stores: tuple[list[ast.stmt], dict[str, list[ast.stmt]]] | None = None
"""The last body `_attribute_stores` read, with its answer (as `_last_bindings`)."""


def _attribute_stores(body: list[ast.stmt]) -> dict[str, list[ast.stmt]]:
    """For each attribute of the instance a method body stores (`self.x = ...`, `+=`, a loop
    or `with` target, `del`), the statements that do, anywhere in the body."""
    global _last_stores
    if _last_stores is not None and _last_stores[0] is body:
        return _last_stores[1]
    found: dict[str, list[ast.stmt]] = {}
    for statement in body:
        for node in ast.walk(statement):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign | ast.Delete):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
                targets = [node.target]
            elif isinstance(node, ast.With | ast.AsyncWith):
                targets = [item.optional_vars for item in node.items if item.optional_vars]
            for target in (inner for outer in targets for inner in ast.walk(outer)):
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == SELF
                    and not isinstance(target.ctx, ast.Load)
                ):
                    assert isinstance(node, ast.stmt)
                    found.setdefault(target.attr, []).append(node)
    _last_stores = (body, found)
    return found


def _may_change_attribute(statement: ast.stmt, attribute: str) -> bool:
    """Whether a statement may change `self.<attribute>`: it stores or deletes it, calls a
    method on it or on the instance, or hands the instance itself to anything."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(statement):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if not (isinstance(node, ast.Name) and node.id == SELF):
            continue
        parent = parents.get(id(node))
        if not isinstance(parent, ast.Attribute):
            return True  # `f(self)`, `x = self`: anything may happen to it
        grand = parents.get(id(parent))
        if isinstance(grand, ast.Call) and grand.func is parent:
            return True  # `self.reset()`
        if parent.attr != attribute:
            continue  # another attribute read or set
        if not isinstance(parent.ctx, ast.Load):
            return True
        if isinstance(grand, ast.Attribute) and isinstance(parents.get(id(grand)), ast.Call):
            call = parents[id(grand)]
            if isinstance(call, ast.Call) and call.func is grand:
                return True  # `self.items.append(x)`
    return False


def _binding_reads(body: list[ast.stmt]) -> dict[str, set[str]]:
    """For each name a function body binds by assignment, loop or `with`, the names the
    binding statements read (their values, iterables and context expressions)."""
    found: dict[str, set[str]] = {}
    for statement in body:
        for node in ast.walk(statement):
            targets: list[ast.expr] = []
            read: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets, read = node.targets, [node.value]
            elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
                targets, read = [node.target], [node.value]
            elif isinstance(node, ast.For | ast.AsyncFor):
                targets, read = [node.target], [node.iter]
            elif isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        targets.append(item.optional_vars)
                        read.append(item.context_expr)
            elif isinstance(node, ast.NamedExpr):
                targets, read = [node.target], [node.value]
            if not targets:
                continue
            names = {name for value in read for name in free_names(value)}
            for target in targets:
                for bound in ast.walk(target):
                    if isinstance(bound, ast.Name):
                        found.setdefault(bound.id, set()).update(names)
    return found


def _assigned_name(statement: ast.Assign | ast.AnnAssign) -> str | None:
    """The name a `name = value` or `name: T = value` statement binds, or None."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        return targets[0].id
    return None


def _plain_target(target: ast.expr) -> bool:
    """A loop target of names only (`x`, `i, (a, b)`), no attribute or item."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, ast.Tuple | ast.List) and all(
        _plain_target(element) for element in target.elts
    )


def _rebound(body: list[ast.stmt], parameters: Sequence[str], before: int) -> set[str]:
    """The `parameters` a function body binds again above line `before` (`lr = float(lr)`):
    what a test there reads of them is the function's own value, not what the caller passed.
    A binding below the test (validate, then normalise) does not count."""
    first = _bindings_of(body)[0]
    return {name for name in parameters if first.get(name, before) < before}


class _Expander:
    """Replaces the locals of `if` tests by their values, where that is exact (module
    docstring); one per `conditions` call."""

    _DEPTH = 4
    """How many assignments deep a value's own locals are followed."""

    def __init__(
        self,
        body: list[ast.stmt],
        bound: frozenset[str],
        source: Source,
        parameters: Sequence[str] = (),
    ) -> None:
        self.body = body
        self.bound = bound
        self.parameters = parameters
        self.source = source
        self._singles: dict[str, ast.Assign | ast.AnnAssign] | None = None
        self.before: list[ast.stmt] = []
        """The statements that run ahead of the way to the raise so far, in order."""
        self.items: set[str] = set()
        """The loop targets the values `_value` gives read (left for `expanded` to say)."""
        self.around: list[tuple[ast.stmt, int]] = []
        """Every loop whose body is on the way (`for`, `while`), with how many statements of
        `before` ran ahead of it: a value set ahead of a loop must hold in every pass."""
        self.loops: list[tuple[ast.For, int]] = []
        """The `for` loops whose body is on the way, outermost first, each with how many
        statements of `before` ran ahead of it."""

    def locals_at(self, line: int) -> set[str]:
        """The names that are the function's own values at `line`: what it binds other than
        its parameters, and the parameters it binds again above."""
        return set(self.bound) | _rebound(self.body, self.parameters, line)

    def expanded(self, tests: list[ast.expr], text: str, line: int) -> str | None:
        """The test in terms of what the function was passed: its locals replaced by their
        values; where a local is the target of a `for` loop around the test instead, the
        test said of the loop's items: `any(<test> for <target> in <iterable>)`, which holds
        whenever the raise runs (a caller who makes it false never reaches the raise)."""
        read = {name for test in tests for name in free_names(test)}
        values = {}
        self.items = targets = set()
        defaulted = []
        for name in sorted(read & self.locals_at(line)):
            value = self._value(name, len(self.before), self._DEPTH)
            if value is not None:
                values[name] = value
            elif self._loop_of(name) is not None:
                targets.add(name)
            elif self._defaulted(name):
                defaulted.append(name)
            else:
                return None
        for attribute in sorted(self.set_here(tests)):
            value = self._attribute_value(attribute, len(self.before))
            if value is None:
                return None
            values[f"{SELF}.{attribute}"] = value
        found = substituted(text, values)
        if found is None:
            return None
        if defaulted:
            # What the caller passed unless it passed None: the raise may run for None.
            found = " or ".join([*(f"{name} is None" for name in defaulted), f"({found})"])
        if targets:
            found = self._over_items(found, targets)
            if found is None:
                return None
            # Every item is bound by a clause: nothing of the function's own is left free.
            try:
                tree = ast.parse(f"(\n{found}\n)", mode="eval")
            except SyntaxError:
                return None
            if free_names(tree) & self.locals_at(line):
                return None
        return None if found is None else one_line(found)

    def set_here(self, tests: list[ast.expr]) -> set[str]:
        """The attributes of the instance (`self.dtype`) the tests read that this method
        assigns itself (in `__init__`, `self.dtype = dtype` then a check of `self.dtype`)."""
        if not self.parameters or self.parameters[0] != SELF:
            return set()
        read = {
            node.attr
            for test in tests
            for node in ast.walk(test)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == SELF
        }
        return read & set(_attribute_stores(self.body))

    def _attribute_value(self, attribute: str, until: int) -> str | None:
        """The text of `self.<attribute>`'s value, as `_value` gives a local's: its one
        plain assignment in the method, ahead of the way, that nothing between may change
        (another attribute set is fine; a method called on the instance is not)."""
        stores = _attribute_stores(self.body)
        if len(stores[attribute]) != 1:
            return None
        assignment = stores[attribute][0]
        at = next((i for i, s in enumerate(self.before[:until]) if s is assignment), None)
        if at is None or not isinstance(assignment, ast.Assign) or len(assignment.targets) != 1:
            return None
        if any(_may_change_attribute(later, attribute) for later in self.before[at + 1 : until]):
            return None
        if self._changed_in_a_pass(
            at, lambda statement: _may_change_attribute(statement, attribute)
        ):
            return None
        return self._rendered(assignment, at, self._DEPTH)

    _DEPENDS_DEPTH = 3
    """How many assignments deep `depends` follows locals computed from locals."""

    def depends(self, names: Sequence[str]) -> tuple[str, ...]:
        """The parameters the values of `names` are computed from: what any statement binding
        them reads (an assignment's value, a loop's iterable, a `with` item), through locals
        bound so in turn, sorted. Any binding counts, on any path: a superset of what the
        test's value depends on, where no exact value could be said."""
        reads = _binding_reads(self.body)
        seen: set[str] = set()
        todo = set(names)
        for _level in range(self._DEPENDS_DEPTH):
            todo -= seen
            if not todo:
                break
            seen |= todo
            todo = {read for name in todo for read in reads.get(name, ())}
        seen |= todo
        return tuple(sorted(seen & set(self.parameters) - {SELF, "cls"}))

    def _defaulted(self, name: str) -> bool:
        """Whether `name` is a parameter the function binds again only as `if name is None:
        name = ...` (directly in such an `if`'s body): passed anything but None, it keeps the
        caller's value."""
        if name not in self.parameters:
            return False
        counts = _bindings_of(self.body)[2]
        guarded = 0
        for node in ast.walk(ast.Module(body=self.body, type_ignores=[])):
            if not (
                isinstance(node, ast.If)
                and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name)
                and node.test.left.id == name
                and len(node.test.ops) == 1
                and isinstance(node.test.ops[0], ast.Is)
                and isinstance(node.test.comparators[0], ast.Constant)
                and node.test.comparators[0].value is None
            ):
                continue
            for statement in node.body:
                if (
                    isinstance(statement, ast.Assign | ast.AnnAssign)
                    and _assigned_name(statement) == name
                ):
                    guarded += 1
        return guarded > 0 and guarded == counts.get(name)

    def _loop_of(self, name: str) -> tuple[ast.For, int] | None:
        """The innermost loop on the way whose target binds `name`, where nothing in the
        loop's body ahead of the test may change it; else None."""
        first = _bindings_of(self.body)[0]
        for loop, start in reversed(self.loops):
            bound = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            if name not in bound:
                continue
            # The loop binds it afresh for each item; only a nested function's `nonlocal`
            # (first bound "at line 0") could change it behind the loop's back.
            if first.get(name) == 0 or not _plain_target(loop.target):
                return None
            if any(_may_change(statement, name) for statement in self.before[start:]):
                return None
            return loop, start
        return None

    def _over_items(self, test: str, targets: set[str]) -> str | None:
        """`any(test for ... in ...)` over the loops binding `targets` (and the outer loops
        binding what their iterables read), outermost first, each iterable otherwise in terms
        of what the function was passed as its loop began."""
        needed = set(targets)
        chosen: list[tuple[ast.For, int, set[str]]] = []
        for loop, start in reversed(self.loops):
            bound = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            if not bound & needed:
                continue
            needed -= bound
            reads = free_names(loop.iter) & self.locals_at(loop.lineno)
            needed |= {name for name in reads if self._loop_of(name) is not None}
            chosen.append((loop, start, bound))
        if needed:
            return None
        clauses: list[str] = []
        outer: set[str] = set()
        for loop, start, bound in reversed(chosen):
            iterable = self.source.text(loop.iter)
            values = {}
            for name in sorted(free_names(loop.iter) & self.locals_at(loop.lineno) - outer):
                value = self._value(name, start, self._DEPTH)
                if value is None:
                    return None
                values[name] = value
            if values:
                replaced = substituted(iterable, values)
                if replaced is None:
                    return None
                iterable = replaced
            if _level(loop.iter) != _ATOM:
                # `for t in a if c else (a,)` and `for t in a, b` need parentheses inside a
                # comprehension.
                iterable = f"({iterable})"
            clauses.append(f"for {self.source.text(loop.target)} in {one_line(iterable)}")
            outer |= bound
        return f"any({test} {' '.join(clauses)})"

    def _value(self, name: str, until: int, depth: int) -> str | None:
        """The text of `name`'s value as an operand (parenthesised unless atomic), in terms of
        what the function was passed, as of just before `self.before[until]`."""
        if depth == 0:
            return None
        if self._singles is None:
            self._singles = _bindings_of(self.body)[1]
        assignment = self._singles.get(name)
        if assignment is None or assignment.value is None:
            return None
        at = next((i for i, s in enumerate(self.before[:until]) if s is assignment), None)
        if at is None:
            return None
        if any(_may_change(later, name) for later in self.before[at + 1 : until]):
            return None
        if self._changed_in_a_pass(at, lambda statement: _may_change(statement, name)):
            return None
        return self._rendered(assignment, at, depth)

    def _changed_in_a_pass(self, at: int, changes: Callable[[ast.stmt], bool]) -> bool:
        """Whether a loop around the test that began after `self.before[at]` may change the
        value anywhere in it: what a pass does after the test runs before the next pass's
        test (`seen = set()`, then `if x in seen: raise` and `seen.add(x)`)."""
        return any(start > at and changes(loop) for loop, start in self.around)

    def _rendered(self, assignment: ast.Assign | ast.AnnAssign, at: int, depth: int) -> str | None:
        """An assignment's value as an operand, its own locals replaced by their values as of
        `self.before[at]`, where it stands, and loop items left to `expanded`."""
        value = assignment.value
        assert value is not None
        values = {}
        for inner in sorted(
            {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            & self.locals_at(assignment.lineno)
        ):
            found = self._value(inner, at, depth - 1)
            if found is None:
                loop = self._loop_of(inner)
                if loop is None or loop[1] > at:
                    return None
                # The item of a loop around both the assignment and the test: the same
                # item at both, said of the loop's items by `expanded`.
                self.items.add(inner)
                continue
            values[inner] = found
        text = self.source.text(value)
        if values:
            replaced = substituted(text, values)
            if replaced is None:
                return None
            text = replaced
        text = one_line(text)
        return text if _level(value) == _ATOM else f"({text})"


def conditions(
    body: list[ast.stmt],
    target: ast.stmt,
    source: Source,
    bound: frozenset[str] = frozenset(),
    parameters: Sequence[str] = (),
) -> tuple[Condition, ...]:
    """What leads to `target` from the start of `body` (its scope's statements), innermost first.

    `bound` holds the names the scope binds itself other than its `parameters`: an `if`
    condition's `locals` are those its tests read, and the parameters the body binds again
    above it. Empty when nothing encloses the statement, or when it is not in `body` at all.
    """
    steps = _path(body, target)
    if steps is None:
        return ()
    found: list[Condition] = []
    chain: list[_Expr] = []
    tests: list[ast.expr] = []
    chain_line = 0
    expander = _Expander(body, bound, source, parameters)
    for step in steps:
        owner = step.owner
        if isinstance(owner, ast.If):
            if not chain:
                chain_line = owner.lineno
            tests.append(owner.test)
            if step.block == "body":
                chain.append(_written(owner.test, source))
            else:
                chain.append(_negated(owner.test, source))
                following = step.statements[step.index]
                if (
                    len(owner.orelse) == 1
                    and isinstance(following, ast.If)
                    and source.starts_with(following, "elif")
                ):
                    # `elif`: one condition for the whole chain (`not a and b`).
                    continue
            read = {
                node.id for test in tests for node in ast.walk(test) if isinstance(node, ast.Name)
            }
            local = tuple(sorted(read & expander.locals_at(chain_line)))
            text = _all(chain).text
            expanded = (
                expander.expanded(tests, text, chain_line)
                if local or expander.set_here(tests)
                else None
            )
            depends = expander.depends(local) if local and expanded is None else ()
            found.append(
                Condition("if", text, chain_line, locals=local, expanded=expanded, depends=depends)
            )
            chain = []
            tests = []
        elif owner is not None:
            condition = _block_condition(step, source)
            if condition is not None:
                found.append(condition)
            if isinstance(owner, ast.For | ast.AsyncFor | ast.While) and step.block == "body":
                expander.around.append((owner, len(expander.before)))
                if isinstance(owner, ast.For):
                    expander.loops.append((owner, len(expander.before)))
        for index, earlier in enumerate(step.statements[: step.index]):
            guard = _guard(earlier, source)
            if guard is None:
                continue
            read = {name for test in guard.tests for name in free_names(test)}
            local = tuple(sorted(read & expander.locals_at(earlier.lineno)))
            expanded = None
            if local or expander.set_here(guard.tests):
                # As of the guard: what ran ahead of it in its own block too.
                outer = expander.before
                expander.before = outer + step.statements[:index]
                expanded = expander.expanded(guard.tests, guard.holds.text, earlier.lineno)
                expander.before = outer
            found.append(
                Condition(
                    "guard",
                    guard.holds.text,
                    earlier.lineno,
                    locals=local,
                    expanded=expanded,
                )
            )
        expander.before += step.statements[: step.index]
    found.reverse()
    return tuple(found)
