"""The calls a docstring's examples make of a function: values its authors wrote, which
`errcat reproduce` starts from (`catalog.evidence.candidates`) instead of the bare values it
would otherwise make up (`Tensor()`, None).

An example is read with `doctest`'s parser: its `>>>` statements, in order, across the whole
docstring. The first statements calling the function by name (`F.interpolate(input, size=4)`,
`nn.Conv1d(16, 33, 3)`) give its arguments as written; of the statements around them, only
those binding what the arguments read are kept (`input = torch.randn(1, 3, 8)`), and those
binding names the function's other parameters are called by (a docstring calls its tensor what
the parameter is called). Nothing is evaluated here: the names the kept statements read that
none of them binds are said in `free`, for the caller to import or to give the example up.
"""

from __future__ import annotations

import ast
import builtins
import doctest
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from extractor.expansion import free_names
from extractor.imports import bound_names

MAX_SETUP = 8
"""Statements an example may need ahead of its call; one that needs more is not used."""
MAX_EXAMPLES = 2
"""Calls read per docstring, first first."""

_BUILTINS = frozenset(dir(builtins))


def package_submodules(package_dir: Path) -> frozenset[str]:
    """The names of the package's modules and subpackages: what an example may import from it
    (`from torch import nn`)."""
    return frozenset(
        child.stem
        for child in package_dir.iterdir()
        if (child.suffix == ".py" and child.stem != "__init__") or (child / "__init__.py").is_file()
    )


@dataclass(frozen=True)
class ExampleCall:
    """One call of the function in its docstring's examples."""

    setup: tuple[str, ...]
    """The example's statements the call needs, in the example's order, as written."""
    positional: tuple[str, ...]
    """The positional arguments' sources."""
    keywords: tuple[tuple[str, str], ...]
    """(name, source) of the keyword arguments."""
    bound: frozenset[str]
    """Names the setup binds: a parameter the call leaves out may take the one named as it."""
    free: frozenset[str]
    """Names the setup and the arguments read that neither binds nor is a built-in."""
    through: str | None
    """The name the example calls the function through (`F` of `F.interpolate(...)`)."""
    imports: tuple[str, ...] = ()
    """Import statements that give the `free` names (`resolved` fills them)."""
    from_module: tuple[str, ...] = ()
    """`free` names to import from the function's module (`resolved` fills them)."""

    def resolved(
        self,
        package: str,
        submodules: Collection[str],
        module: str,
        module_names: Collection[str],
    ) -> ExampleCall | None:
        """This call with the imports its free names need, from `module` (where the
        function is defined) or elsewhere; None when a name stays unknown.

        A name is the package's first name (`torch`), one of the package's subpackages or
        modules (`submodules`: `from torch import nn`), a name `module` binds at its top level,
        or the name the example calls the function through: then `module` itself, as the
        example must have imported it (`import torch.nn.functional as F`).
        """
        imports: list[str] = []
        from_module: list[str] = []
        for name in sorted(self.free):
            if name == package.split(".")[0]:
                imports.append(f"import {package}")
            elif name in submodules:
                imports.append(f"from {package} import {name}")
            elif name in module_names:
                from_module.append(name)
            elif name == self.through:
                imports.append(f"import {module} as {name}")
            else:
                return None
        return replace(self, imports=tuple(imports), from_module=tuple(from_module))

    def without_arguments(self) -> ExampleCall:
        """The example's setup alone: what a method called on the instance the example makes
        may take its arguments from (the names its parameters are called)."""
        return replace(self, positional=(), keywords=())


def example_calls(
    docstring: str | None, name: str, parameters: Collection[str] = ()
) -> tuple[ExampleCall, ...]:
    """The first `MAX_EXAMPLES` calls of `name` in a docstring's examples; never raises.

    `parameters` are the names of the function's parameters (or, for a constructor, of the
    method to be called on what it makes): statements binding those names are kept too.
    """
    if not docstring or ">>>" not in docstring:
        return ()
    try:
        sources = [example.source for example in doctest.DocTestParser().get_examples(docstring)]
    except ValueError:  # inconsistent indentation, a `>>>` without its space
        return ()
    statements: list[tuple[str, ast.stmt]] = []
    for source in sources:
        try:
            parsed = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if len(parsed.body) == 1:
            statements.append((source.rstrip("\n"), parsed.body[0]))
    found: list[ExampleCall] = []
    for index, (_source, statement) in enumerate(statements):
        call = _call_of(statement, name)
        if call is None:
            continue
        example = _example(statements, index, call, parameters)
        if example is not None and example not in found:
            found.append(example)
        if len(found) == MAX_EXAMPLES:
            break
    return tuple(found)


def needed(setup: Sequence[str], call: str) -> tuple[str, ...]:
    """The statements of `setup` that `call` (a call's source) needs, and what those need in
    turn: an example's value a call does not use leaves its statement out."""
    statements: list[tuple[str, ast.stmt]] = []
    for source in setup:
        try:
            (statement,) = ast.parse(source).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return tuple(setup)
        statements.append((source, statement))
    try:
        reads = free_names(ast.parse(call, mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return tuple(setup)
    kept = _needing(statements, len(statements), reads)
    if kept is None:
        return tuple(setup)
    return tuple(statements[index][0] for index in sorted(kept))


def _call_of(statement: ast.stmt, name: str) -> ast.Call | None:
    """The first call of `name` in a statement, with no `*` or `**` unpacking; None in a
    definition (its arguments would read the definition's own parameters)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return None
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        called = (
            function.id
            if isinstance(function, ast.Name)
            else function.attr
            if isinstance(function, ast.Attribute)
            else None
        )
        if called != name:
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            continue
        return node
    return None


def _example(
    statements: list[tuple[str, ast.stmt]],
    index: int,
    call: ast.Call,
    parameters: Collection[str],
) -> ExampleCall | None:
    passed = {keyword.arg for keyword in call.keywords}
    read: set[str] = set()
    for argument in (*call.args, *(keyword.value for keyword in call.keywords)):
        read |= free_names(argument)
    kept = _needing(statements, index, read)
    if kept is None:
        return None
    # Statements binding a parameter's name the call leaves out: the last before the call, or
    # else the first after it that reads nothing the call's own statement binds.
    made_by_call = _binds(statements[index][1])
    wanted = set(parameters) - passed
    bound_before = {n for i in kept for n in _binds(statements[i][1])}
    for parameter in sorted(wanted - bound_before):
        around = [*range(index - 1, -1, -1), *range(index + 1, len(statements))]
        for other in around:
            statement = statements[other][1]
            if parameter not in _binds(statement) or _reads(statement) & made_by_call:
                continue
            more = _needing(statements, other, _reads(statement))
            if more is not None and index not in more:
                kept |= {other, *more}
            break
    if len(kept) > MAX_SETUP:
        return None
    setup = [statements[i] for i in sorted(kept)]
    bound: set[str] = set()
    free: set[str] = set()
    for _source, statement in setup:
        free |= _reads(statement) - bound
        bound |= _binds(statement)
    free |= read - bound
    function = call.func
    through = (
        function.value.id
        if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)
        else None
    )
    return ExampleCall(
        setup=tuple(source for source, _ in setup),
        positional=tuple(ast.unparse(argument) for argument in call.args),
        keywords=tuple(
            (keyword.arg, ast.unparse(keyword.value))
            for keyword in call.keywords
            if keyword.arg is not None
        ),
        bound=frozenset(bound),
        free=frozenset(free - _BUILTINS),
        through=through,
    )


def _needing(
    statements: list[tuple[str, ast.stmt]], before: int, needed: Iterable[str]
) -> set[int] | None:
    """Indexes of the statements ahead of `before` that bind what `needed` names, and what
    those read in turn, nearest binding first; None past `MAX_SETUP`."""
    wanted = set(needed)
    kept: set[int] = set()
    for index in range(before - 1, -1, -1):
        statement = statements[index][1]
        binds = _binds(statement)
        if not binds & wanted:
            continue
        kept.add(index)
        if len(kept) > MAX_SETUP:
            return None
        if not isinstance(statement, ast.AugAssign):
            wanted -= binds
        wanted |= _reads(statement)
    return kept


def _binds(statement: ast.stmt) -> set[str]:
    """Names a statement binds in the example's scope."""
    return bound_names([statement])


def _reads(statement: ast.stmt) -> set[str]:
    """Names a statement reads from the example's scope (what it binds itself aside, but for
    an augmented assignment, which reads its target first)."""
    read = free_names(statement)
    if isinstance(statement, ast.AugAssign):
        return read
    return read - _binds(statement)
