"""The call graph's walk of a function body: its field table finds exactly what the generic
walk (`ast.iter_child_nodes` on every node) finds, in the same order, so summaries do not
change when the walk is made cheaper."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from extractor.calls import _walk
from extractor.imports import bound_names, target_names

ROOT = Path(__file__).resolve().parents[2]

TRICKY = """
import os
from x import y

async def outer(a, b=make(), *, c=other(), **kw):
    @decorate(arg())
    def inner(d=default()):
        return nested()
    class Inner(Base(1), metaclass=meta()):
        def method(self):
            return hidden()
    handler = lambda: callback()
    values = [f(v) for v in range(g()) if h(v)]
    table = {k(): w(u) for k, u in pairs() if (n := probe())}
    merged = {**left(), "key": right()}
    text = f"{fmt(a)!r:>{width()}}"
    async with ctx() as (p, q):
        async for item in stream():
            await step(item)
    try:
        risky()
    except* Error(code()) as error:
        recover(error)
    finally:
        cleanup()
    match subject():
        case Point(x=0) if guard():
            matched()
        case [first, *rest]:
            seq()
    factory(one())(two(), three=four())
    del table[key()]
    assert check(), message()
    raise Failure(why()) from cause()
    return (yield lazy()) if cond() else (yield from many())
"""


def _generic_walk(
    body: list[ast.stmt],
) -> tuple[list[ast.Call], list[ast.AST], list[ast.ClassDef], set[str]]:
    """The walk as it was first written: every child of every node, skipping a few types."""
    skipped = (ast.Load, ast.Store, ast.Del, ast.Constant, ast.Lambda, ast.Import, ast.ImportFrom)
    calls: list[ast.Call] = []
    functions: list[ast.AST] = []
    classes: list[ast.ClassDef] = []
    names: set[str] = set()
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, skipped):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions.append(node)
            todo.extend(node.decorator_list)
            todo.extend(node.args.defaults)
            todo.extend(default for default in node.args.kw_defaults if default is not None)
            continue
        if isinstance(node, ast.ClassDef):
            classes.append(node)
            todo.extend(node.decorator_list)
            todo.extend(node.bases)
            continue
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, ast.comprehension):
            target_names(node.target, names)
        todo.extend(ast.iter_child_nodes(node))
    functions.sort(key=lambda node: (node.lineno, node.col_offset))
    classes.sort(key=lambda node: (node.lineno, node.col_offset))
    return calls, functions, classes, names


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    return [
        node.body
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _same(tree: ast.AST) -> int:
    """Compare both walks on every function body of `tree`; the count of calls compared."""
    compared = 0
    for body in _bodies(tree):
        calls, functions, classes, names = _walk(body)
        expected = _generic_walk(body)
        # Identity, not equality: the very same nodes, in the same order.
        assert [id(call) for call in calls] == [id(call) for call in expected[0]]
        assert [id(node) for node in functions] == [id(node) for node in expected[1]]
        assert [id(node) for node in classes] == [id(node) for node in expected[2]]
        assert names == expected[3]
        compared += len(calls)
    return compared


def test_tricky_constructs_walk_as_the_generic_walk() -> None:
    """Decorators, defaults, lambdas, comprehensions, f-strings, match, try* and the rest."""
    tree = ast.parse(textwrap.dedent(TRICKY))
    assert _same(tree) > 30
    calls, functions, classes, names = _walk(_bodies(tree)[0])
    called = {ast.unparse(call.func) for call in calls}
    # Lambdas are callbacks, nested bodies belong to their own functions, and a function's
    # own defaults run where it is defined.
    assert not called & {"callback", "nested", "hidden", "make", "other"}
    assert {"decorate", "arg", "default", "Base", "guard", "cause", "width", "key"} <= called
    assert "meta" not in called  # a class's keywords are not walked, as before
    assert [node.name for node in functions] == ["inner"]
    assert [node.name for node in classes] == ["Inner"]
    assert names == {"v", "k", "u"}


@pytest.mark.parametrize("package", ["extractor", "catalog", "runtime"])
def test_project_sources_walk_as_the_generic_walk(package: str) -> None:
    """Every function body of errcat's own sources gives the same calls in the same order."""
    compared = 0
    for path in sorted((ROOT / package).rglob("*.py")):
        compared += _same(ast.parse(path.read_bytes()))
    assert compared > 100


def test_bound_names_are_what_a_scope_binds_itself() -> None:
    """Imports by their first name, targets of assignments, loops and `with`, definitions and
    handlers, through branches; never what a nested function or class binds inside."""
    source = textwrap.dedent(
        """\
        import a.b
        from c import d as e
        x, (y, *z) = 1, (2, 3)
        for i in range(3):
            with open(i) as handle:
                pass
        if x:
            w: int = 1
        try:
            pass
        except Exception as caught:
            pass
        def f():
            inner = 1
        class K:
            attribute = 2
        """
    )
    assert bound_names(ast.parse(source).body) == {
        *("a", "e", "x", "y", "z", "i", "handle", "w", "caught", "f", "K"),
    }
