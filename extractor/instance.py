"""What a class's constructor sets on the instance from its own parameters.

A method's test that reads the instance (`if self.input_size != input.size(-1):`) depends on
how the instance was made when the attribute is one the class's `__init__` sets from a
parameter and nothing else in the class changes: a caller avoids the raise through the
constructor's argument as much as through the method's. Such an attribute is recorded on the
condition (`Condition.instance`) as (attribute, the constructor's parameter).

The record also carries what the class's docstring or its `__init__`'s says of that
parameter (the `__init__`'s first), with its file line, so that a page can say what the value
is meant to be.

An attribute counts when the class's own `__init__` (in its body, not inherited) sets it once,
by a plain `self.<attribute> = <parameter>` statement directly in its body (not under an `if`,
a loop or a `try`), the parameter never bound again there; and no other method of the class
(nested functions included) stores or deletes an attribute of that name on anything, nor
calls `setattr`/`delattr` with its name as a literal. A subclass may still change it: that
is beyond one class's text, and said nowhere here.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence

from extractor.docstrings import parameter_entries
from extractor.imports import dotted_name, parameter_names
from extractor.model import Condition

_SETTERS = frozenset({"setattr", "delattr", "object.__setattr__", "object.__delattr__"})


Held = tuple[str, str, str, int]
"""(attribute, the constructor's parameter it holds, what a docstring says of that parameter or
"", the 1-based file line of that entry or 0)."""


def own_init(klass: ast.ClassDef) -> ast.FunctionDef | None:
    """The `__init__` a class's body defines (not an inherited one), or None."""
    return next(
        (
            statement
            for statement in klass.body
            if isinstance(statement, ast.FunctionDef) and statement.name == "__init__"
        ),
        None,
    )


def constructor_attributes(klass: ast.ClassDef) -> dict[str, Held]:
    """Attribute -> what the module docstring says is recorded of it."""
    init = own_init(klass)
    if init is None:
        return _dataclass_fields(klass)
    names = parameter_names(init)
    if not names:
        return {}
    instance, parameters = names[0], set(names[1:])
    rebound = {
        node.id
        for node in ast.walk(init)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del)
    }
    found: dict[str, str] = {}
    for statement in init.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(target := statement.targets[0], ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == instance
            and isinstance(statement.value, ast.Name)
            and statement.value.id in parameters - rebound
        ):
            found[target.attr] = statement.value.id
    stored = _stored_attributes(klass, init)
    said = {**_parameter_docs(klass), **_parameter_docs(init)}
    return {
        attribute: (attribute, parameter, *said.get(parameter, ("", 0)))
        for attribute, parameter in found.items()
        if stored[attribute] == 1
    }


def _dataclass_fields(klass: ast.ClassDef) -> dict[str, Held]:
    """For a class `@dataclass` (or `@dataclasses.dataclass(...)`) makes a constructor for,
    each field the constructor takes as the parameter of its name (`shutdown_timeout: int |
    None = None`): a class-level annotation, neither `ClassVar` nor `InitVar`, nor left out
    of the constructor (`field(init=False)`), which no function of the class stores again (a
    `__post_init__` normalising it, `object.__setattr__` in a frozen one). The constructor's
    fields are what `__post_init__` reads of the instance; a decorator saying `init=False`
    writes no constructor, and a base's fields are beyond this class's text."""
    fields = init_fields(klass)
    if fields is None:
        return {}
    # Stored anywhere in the class, or a method of its name (a property): not plain state.
    stored = _stored_attributes(klass, None)
    said = _parameter_docs(klass)
    found: dict[str, Held] = {}
    for field in fields:
        assert isinstance(field.target, ast.Name)
        name = field.target.id
        if _annotated(field, "InitVar") or stored.get(name):
            continue
        found[name] = (name, name, *said.get(name, ("", 0)))
    return found


def init_fields(klass: ast.ClassDef) -> list[ast.AnnAssign] | None:
    """The fields a `@dataclass`'s generated constructor takes, in order, as the class body
    annotates them (`InitVar`s included, `ClassVar`s and `field(init=False)` left out); None
    for a class no `@dataclass` decorator writes a constructor for (none, `init=False`, or an
    `__init__` of the class's own). A base's fields are beyond
    this class's text, and not listed."""
    decorator = next(
        (node for node in klass.decorator_list if _is_dataclass(node)),
        None,
    )
    if decorator is None or (isinstance(decorator, ast.Call) and _says_no_init(decorator)):
        return None
    if any(
        isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
        and statement.name == "__init__"
        for statement in klass.body
    ):
        return None  # the class writes its own: `@dataclass` leaves it be
    return [
        statement
        for statement in klass.body
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and not _annotated(statement, "ClassVar")
        and not (isinstance(statement.value, ast.Call) and _says_no_init(statement.value))
    ]


def _annotated(statement: ast.AnnAssign, kind: str) -> bool:
    """Whether a class-level annotation is `kind` or `kind[...]` (`ClassVar[int]`)."""
    annotation = statement.annotation
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    name = dotted_name(annotation)
    return name is not None and name.rpartition(".")[2] == kind


def _is_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = dotted_name(target)
    return name is not None and name.rpartition(".")[2] == "dataclass"


def _says_no_init(call: ast.Call) -> bool:
    """`init=False` among a call's keywords (`dataclass(init=False)`, `field(init=False)`)."""
    return any(
        keyword.arg == "init"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is False
        for keyword in call.keywords
    )


def _parameter_docs(node: ast.ClassDef | ast.FunctionDef) -> dict[str, tuple[str, int]]:
    """Parameter -> (what the node's docstring says of it, the entry's file line)."""
    first = node.body[0] if node.body else None
    if not (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return {}
    line = first.value.lineno
    return {
        entry.name: (entry.text, line + entry.line_offset)
        for entry in parameter_entries(first.value.value)
    }


def _stored_attributes(klass: ast.ClassDef, init: ast.FunctionDef | None) -> dict[str, int]:
    """How often each attribute name is stored or deleted in the class's functions (a
    `setattr` with a literal name counts; the `__init__` statements counted once each)."""
    counts: dict[str, int] = {}
    for node in ast.walk(klass):
        name = None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            name = node.attr
        elif (
            isinstance(node, ast.Call)
            and dotted_name(node.func) in _SETTERS
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            name = node.args[1].value
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    # A method of the class named like the attribute (a property) is not plain state.
    for statement in klass.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and statement is not init:
            counts[statement.name] = counts.get(statement.name, 0) + 2
    return counts


def with_instance(
    found: Sequence[Condition], instance: str, attributes: dict[str, Held]
) -> tuple[Condition, ...]:
    """`found` with `instance` filled on each `if` whose test reads attributes of the
    instance (named `instance` in the method) that `attributes` holds."""
    result = []
    for condition in found:
        if condition.kind == "if" and condition.code and attributes:
            read = read_attributes(condition.expanded or condition.code, instance)
            held = tuple(sorted(attributes[name] for name in read if name in attributes))
            if held:
                condition = dataclasses.replace(condition, instance=held)
        result.append(condition)
    return tuple(result)


def read_attributes(code: str, instance: str) -> set[str]:
    """The attributes a test (as written) reads of the name `instance`."""
    try:
        tree = ast.parse(f"(\n{code}\n)", mode="eval")
    except SyntaxError:
        return set()
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == instance
    }
