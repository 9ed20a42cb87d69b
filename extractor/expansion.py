"""A test in what the function was passed: a condition's locals replaced by their values.

An `if` test that reads names the function computes (`ndim = input.dim()` before `if ndim !=
4:`) is also given `expanded`, in terms of what the function was passed (`input.dim() != 4`),
where that is exact: each such local has one binding in the whole function, or, bound more
than once, none between its last plain assignment ahead of the `if` and the `if` itself
(bindings after the test cannot reach it: `idx = operator.index(idx)`, the check, then `idx +=
len(self)`), a plain `name = value` that runs before the `if` on the way to it (a statement
of a block the way passes through, ahead of the way on), no statement after it up to the
`if` names the local (so
nothing appended to a list or rebound it meanwhile), no loop around the test that began after
it changes it in any pass, and the value's own locals are replaced the same way. A parameter
the function binds again above the test (`lr = abs(lr)`) is such a local too, its value read
as of the caller's argument (`abs(lr) > 3`). A local that is the item of a `for` loop around
the test (its target, of names only, that nothing in the loop's body ahead of the test may
change and no nested function rebinds), or that is computed from that item in the same pass,
makes the test one of the items: `any(<test> for p in params)`, nested loops outermost first,
each iterable in what was passed when its loop began. That holds whenever the raise runs, so
a caller who makes it false never reaches the raise. A parameter the function binds again
only directly under `if name is None:` (or `if name is None and ...:`) is the caller's unless
None was passed: `rank is None or (<test>)`. In a method, an attribute of the instance the method itself sets once
(`self.dtype = dtype` before `if self.dtype not in ...`), with no method called on the
instance and no other store of it between, is read through that value too. Anything else
leaves `expanded` None and the test as the only answer; `depends` then names the parameters
the test's locals are computed from, by any of their bindings.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterator, Mapping, Sequence

from extractor.model import Condition
from extractor.written import ATOM, Source, is_none_test, level


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
    code = _without_comments(code)
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


def _without_comments(code: str) -> str:
    """An expression written over lines without its comments (`# type: ignore[arg-type]`),
    which would end it early once its lines are joined; as it is where it does not tokenize."""
    if "#" not in code:
        return code
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(f"(\n{code}\n)").readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    lines = code.split("\n")
    for token in tokens:
        if token.type == tokenize.COMMENT:
            # Rows count the opening line added above.
            row, column = token.start[0] - 2, token.start[1]
            lines[row] = lines[row][:column].rstrip()
    return "\n".join(lines)


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


def _occurrences(statement: ast.stmt, name: str) -> Iterator[tuple[ast.Name, dict[int, ast.AST]]]:
    """Each occurrence of `name` in the statement, with the parent of every node walked so far
    (its own and its ancestors' among them: a walk reaches parents first)."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(statement):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name) and node.id == name:
            yield node, parents


def _may_change(statement: ast.stmt, name: str) -> bool:
    """Whether a statement may rebind or change the value of `name`: it names it anywhere but
    in a read that changes nothing (a comparison or arithmetic operand, an attribute or an
    item read, an argument of a built-in that only reads, a formatted value)."""
    for node, parents in _occurrences(statement, name):
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
    for node, parents in _occurrences(statement, SELF):
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


_MUTATORS = frozenset(
    {"append", "appendleft", "extend", "extendleft", "insert", "add", "update", "setdefault"}
)
"""Methods that change a list, set, deque or dict in place: `errors.append(text)` gives
`errors` a value as much as an assignment does."""


def binding_reads(body: list[ast.stmt]) -> dict[str, set[str]]:
    """For each name a function body binds by assignment, loop or `with`, or changes in place
    (`errors.append(...)`, `errors.insert(0, ...)`), the names the binding statements read
    (their values, iterables, context expressions, the arguments of the change) and the names
    the `if` and `while` tests and the loop iterables around them read: what decides whether
    the binding runs decides the value as much (`if strict: errors.append(...)`, then `if
    errors: raise ...`, depends on `strict`)."""
    found: dict[str, set[str]] = {}
    todo: list[tuple[ast.AST, tuple[ast.expr, ...]]] = [(statement, ()) for statement in body]
    while todo:
        node, around = todo.pop()
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
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, ast.Name)
        ):
            targets = [node.func.value]
            read = [*node.args, *(keyword.value for keyword in node.keywords)]
        if targets:
            names = {name for value in (*read, *around) for name in free_names(value)}
            for target in targets:
                for bound in ast.walk(target):
                    if isinstance(bound, ast.Name):
                        found.setdefault(bound.id, set()).update(names)
        if isinstance(node, ast.If | ast.While):
            todo.append((node.test, around))
            inside = (*around, node.test)
            todo.extend((child, inside) for child in (*node.body, *node.orelse))
        elif isinstance(node, ast.For | ast.AsyncFor):
            todo.extend((child, around) for child in (node.target, node.iter))
            inside = (*around, node.iter)
            todo.extend((child, inside) for child in (*node.body, *node.orelse))
        else:
            todo.extend((child, around) for child in ast.iter_child_nodes(node))
    return found


def _binding_lines(body: list[ast.stmt]) -> dict[str, list[int]]:
    """The lines where a function body binds each name (any binding but a nested scope's own)."""
    lines: dict[str, list[int]] = {}
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            lines.setdefault(node.name, []).append(node.lineno)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            lines.setdefault(node.id, []).append(node.lineno)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            lines.setdefault(node.name, []).append(node.lineno)
        elif isinstance(node, ast.alias):
            bound = (node.asname or node.name).partition(".")[0]
            lines.setdefault(bound, []).append(getattr(node, "lineno", 0))
        todo.extend(ast.iter_child_nodes(node))
    return lines


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


class Expander:
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
        self.before: list[ast.stmt] = []
        """The statements that run ahead of the way to the raise so far, in order."""
        self.items: set[str] = set()
        """The loop targets the values `_value` gives read (left for `expanded` to say)."""
        self.around: list[tuple[ast.stmt, int]] = []
        """Every loop whose body is on the way (`for`, `while`), with how many statements of
        `before` ran ahead of it: a value set ahead of a loop must hold in every pass."""
        self._test_line = 0
        """The line of the test `expanded` works on."""
        self._binding_lines: dict[str, list[int]] | None = None
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
        self._test_line = line
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
        if not isinstance(assignment, ast.Assign) or len(assignment.targets) != 1:
            return None
        at = self._held(
            assignment, until, lambda statement: _may_change_attribute(statement, attribute)
        )
        return None if at is None else self._rendered(assignment, at, self._DEPTH)

    _DEPENDS_DEPTH = 3
    """How many assignments deep `depends` follows locals computed from locals."""

    def depends(self, names: Sequence[str]) -> tuple[str, ...]:
        """The parameters the values of `names` are computed from: what any statement binding
        them reads (an assignment's value, a loop's iterable, a `with` item), through locals
        bound so in turn, sorted. Any binding counts, on any path: a superset of what the
        test's value depends on, where no exact value could be said."""
        reads = binding_reads(self.body)
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
        name = ...` (directly in such an `if`'s body; `if name is None and ...:` too): passed
        anything but None, it keeps the caller's value."""
        if name not in self.parameters:
            return False
        counts = _bindings_of(self.body)[2]
        guarded = 0
        for node in ast.walk(ast.Module(body=self.body, type_ignores=[])):
            if not isinstance(node, ast.If):
                continue
            # `if name is None and ...:` holds only for None as well.
            tests = (
                node.test.values
                if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And)
                else [node.test]
            )
            if not any(is_none_test(test, name) for test in tests):
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
            if level(loop.iter) != ATOM:
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
        first, singles, _counts = _bindings_of(self.body)
        if first.get(name) == 0:
            return None  # a nested function's `nonlocal` may rebind it at any time
        # Its one assignment; or, bound more than once, the last plain assignment that ran
        # ahead of the test: what a binding after the test does cannot reach it (`idx =
        # operator.index(idx)`, the check, then `idx += len(self)`), `_held` refuses one
        # changed between, and a loop around the test that could bring a later binding
        # round again.
        assignment = singles.get(name)
        if assignment is None:
            assignment = self._last_assignment(name, until)
            # Where the value is read: the statement `until` names, or the test itself.
            read_at = self.before[until].lineno - 1 if until < len(self.before) else self._test_line
            if assignment is not None and any(
                (assignment.end_lineno or assignment.lineno) < bound <= read_at
                for bound in self._lines().get(name, ())
            ):
                # Bound again between, somewhere `before` does not list: in the header of a
                # statement the way enters (`if (n := 2) and n > 3:`, a `for` target).
                return None
        if assignment is None or assignment.value is None:
            return None
        at = self._held(assignment, until, lambda statement: _may_change(statement, name))
        return None if at is None else self._rendered(assignment, at, depth)

    def _lines(self) -> dict[str, list[int]]:
        """`_binding_lines` of the body, walked once per expander."""
        if self._binding_lines is None:
            self._binding_lines = _binding_lines(self.body)
        return self._binding_lines

    def _last_assignment(self, name: str, until: int) -> ast.Assign | ast.AnnAssign | None:
        """The last statement ahead of `self.before[until]` that is a plain `name = value`."""
        for statement in reversed(self.before[:until]):
            if (
                isinstance(statement, ast.Assign)
                or (isinstance(statement, ast.AnnAssign) and statement.value is not None)
            ) and _assigned_name(statement) == name:
                return statement
        return None

    def _held(
        self, assignment: ast.stmt, until: int, changes: Callable[[ast.stmt], bool]
    ) -> int | None:
        """Where in `self.before` the assignment ran, when what it set still holds just before
        `self.before[until]`: no statement between `changes` it, and no loop around the test
        that began after it changes it anywhere (what a pass does after the test runs before
        the next pass's test: `seen = set()`, then `if x in seen: raise` and `seen.add(x)`);
        else None."""
        at = next((i for i, s in enumerate(self.before[:until]) if s is assignment), None)
        if at is None or any(changes(later) for later in self.before[at + 1 : until]):
            return None
        if any(start > at and changes(loop) for loop, start in self.around):
            return None
        return at

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
        return text if level(value) == ATOM else f"({text})"
