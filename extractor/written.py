"""Tests as written: the module's text of an expression, its precedence, and its negation.

Rebuilt text keeps the source's own spelling: only negations are rebuilt from the parts as
written. `not not x` is `x`; `not (a == b)` is `a != b`, and likewise for `is` and `in`, whose
negations are exactly the opposite operators; every other test keeps `not (...)`, since `not
(a < b)` and `a >= b` differ for NaN and for partial orders. Precedence levels say where
rebuilt text needs parentheses.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

LOWEST, OR, AND, NOT, COMPARE, OPERATOR, ATOM = range(7)
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

SAID = "errcat_said"
"""The attribute an expression a reading builds, rather than parses from the module, carries
its text in (a helper's test in a caller's arguments, `extractor.printed`): a `Source` gives
that text for it."""


class Source(Protocol):
    """The module's text as the extractor slices it (character columns from `ast` positions)."""

    def text(self, node: Node) -> str:
        """The exact source of a node, without parentheses around it."""
        ...

    def starts_with(self, node: ast.stmt, word: str) -> bool:
        """Whether the source at the node's position starts with `word`."""
        ...


@dataclass(frozen=True)
class Expr:
    """Source text of an expression with its precedence level."""

    text: str
    level: int

    def at_least(self, level: int) -> str:
        """The text, parenthesised unless it binds at least as tightly as `level`."""
        return self.text if self.level >= level else f"({self.text})"


def level(node: ast.expr) -> int:
    """How tightly an expression binds: one of the precedence levels above."""
    if isinstance(node, ast.Lambda | ast.IfExp | ast.NamedExpr | ast.Yield | ast.YieldFrom):
        return LOWEST
    if isinstance(node, ast.BoolOp):
        return OR if isinstance(node.op, ast.Or) else AND
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return NOT
    if isinstance(node, ast.Compare):
        return COMPARE
    if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Await):
        return OPERATOR
    return ATOM


def written(node: ast.expr, source: Source) -> Expr:
    """An expression as the source writes it."""
    return Expr(source.text(node), level(node))


def negated(node: ast.expr, source: Source) -> str:
    """The negation of a test, as text: see the module docstring for the rules."""
    return negation(node, source).text


def negation(node: ast.expr, source: Source) -> Expr:
    """The negation of a test, with its precedence (see the module docstring)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return written(node.operand, source)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        opposite = _OPPOSITES.get(type(node.ops[0]))
        if opposite is not None:
            # Operands of a comparison bind tighter than it unless the source parenthesised
            # them; `ast` positions leave those parentheses out, so they are put back.
            left = written(node.left, source).at_least(OPERATOR)
            right = written(node.comparators[0], source).at_least(OPERATOR)
            return Expr(f"{left} {opposite} {right}", COMPARE)
    return Expr(f"not {written(node, source).at_least(ATOM)}", NOT)


def all_of(parts: Sequence[Expr]) -> Expr:
    """Tests that all hold: joined by `and`."""
    if len(parts) == 1:
        return parts[0]
    return Expr(" and ".join(part.at_least(AND) for part in parts), AND)


def is_none_test(node: ast.expr, name: str | None = None) -> bool:
    """Whether a test is `<name> is None` (any name when `name` is None)."""
    return (
        isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Name)
        and (name is None or node.left.id == name)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Is)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    )
