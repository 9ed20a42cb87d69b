"""What leads to a raise, read from the code that encloses it.

The statements from the raise's scope (its function, class body or module) down to the raise
are found by position; every block the path enters says something (the kinds of `Condition`):
the test of an `if` or `elif` branch, the negation of the tests before an `else`, a loop, an
exception handler, a `case`. Earlier `if` statements of the same blocks whose branch exits
(`if ok: return` before the raise) are guards: they say what held for the raise to be reached.
`with` blocks and `try` bodies add nothing, and nothing inside an expression (a lambda, a
comprehension, a conditional expression) is read: only statements decide whether a raise runs.

Tests are shown as written, negations rebuilt as `extractor.written` says, and an `if` test
reading what the function computes is also said in what it was passed where that is exact
(`extractor.expansion`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from extractor.expansion import Expander, free_names
from extractor.model import Condition
from extractor.written import Expr, Source, all_of, negation, written


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


def _returns(body: Sequence[ast.stmt]) -> bool:
    """Whether a block always leaves its function by `return` (each branch of a last `if`)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _returns(last.body) and _returns(last.orelse)
    return False


@dataclass(frozen=True)
class _Guard:
    """What holds after an `if` whose first branches exit."""

    holds: Expr
    tests: list[ast.expr]
    """The tests of the branches that exit."""
    returns: bool
    """Every branch that exits does so by `return` (`Condition.returns`)."""


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
    returns: list[bool] = []
    node = statement
    while True:
        tests.append(node.test)
        exits.append(_exits(node.body))
        returns.append(_returns(node.body))
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
    return _Guard(
        all_of([negation(test, source) for test in tests[:leading]]),
        tests[:leading],
        all(returns[:leading]),
    )


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
    chain: list[Expr] = []
    tests: list[ast.expr] = []
    chain_line = 0
    expander = Expander(body, bound, source, parameters)
    for step in steps:
        owner = step.owner
        if isinstance(owner, ast.If):
            if not chain:
                chain_line = owner.lineno
            tests.append(owner.test)
            if step.block == "body":
                chain.append(written(owner.test, source))
            else:
                chain.append(negation(owner.test, source))
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
            text = all_of(chain).text
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
                    returns=guard.returns,
                )
            )
        expander.before += step.statements[: step.index]
    found.reverse()
    return tuple(found)
