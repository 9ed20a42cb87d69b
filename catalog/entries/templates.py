"""From a scan template (the message as written) to a catalog message (a `str.format` template).

A scan template keeps each replacement field as the source expression that produced it
(`{tuple(t.shape)}`, `{self.transport_name!r}`). A catalog message may only use identifiers with
attribute access, so each field is renamed: `self.` is dropped, dotted names stay, anything else
becomes an identifier made from the names it reads (`tuple(t.shape)` → `t_shape`). The mapping
from parameter to source expression is kept, because `errcat migrate` passes those expressions
as the keyword arguments of the typed exception.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from extractor.fields import parse_template

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SKIP_WORDS = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "join", "format"}


def placeholder_for(expression: str) -> str:
    """The catalog placeholder for a field expression (see the module docstring)."""
    if _DOTTED.match(expression):
        name = expression.removeprefix("self.") if expression != "self" else "value"
        if _is_dunder(name.split(".")[0]):
            return _undundered(name.split("."))
        return name if not keyword.iskeyword(name.split(".")[0]) else f"{name}_"
    words = [w for w in _NAME.findall(expression) if w not in _SKIP_WORDS]
    if words and _is_dunder(words[0]):
        return _undundered(words)
    return "_".join(dict.fromkeys(words)) or "value"


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _undundered(words: list[str]) -> str:
    """One identifier from the words with their underscores dropped: a root such as `__class__`
    is an attribute of every object, so a parameter of that name breaks the typed class
    (`{self.__class__.__name__}` becomes `{class_name}`, passed the whole expression)."""
    name = "_".join(dict.fromkeys(w.strip("_") for w in words if w.strip("_"))) or "value"
    return f"{name}_" if keyword.iskeyword(name) else name


@dataclass(frozen=True)
class CatalogMessage:
    """A scan template rewritten as a catalog message, with the source of each parameter."""

    message: str
    arguments: dict[str, str]
    """Keyword parameter → source expression that supplies it at the raise site."""


def to_catalog_message(template: str, reserved: AbstractSet[str] = frozenset()) -> CatalogMessage:
    """Rewrite a scan template as a catalog message (raises ValueError for unparsable templates).

    A placeholder whose root is in `reserved` (an attribute the exception already has, such as
    `args`) is renamed `<root>_value`, so a parameter never shadows an attribute.
    """
    pieces: list[str] = []
    arguments: dict[str, str] = {}
    placeholders: dict[
        str, str
    ] = {}  # expression → placeholder, so a repeated field keeps its name
    for part in parse_template(template):
        if isinstance(part, str):
            pieces.append(part)
            continue
        if part.debug is not None:
            pieces.append(part.debug.replace("{", "{{").replace("}", "}}"))
        placeholder = placeholders.get(part.expression)
        if placeholder is None:
            placeholder = placeholder_for(part.expression)
            root = placeholder.split(".")[0]
            source = _root_source(part.expression, placeholder)
            if root in reserved:
                placeholder = root + "_value" + placeholder[len(root) :]
                root = root + "_value"
            n = 2
            while root in arguments and arguments[root] != source:
                placeholder = f"{placeholder.split('.')[0]}_{n}"
                root, source, n = placeholder, part.expression, n + 1
            arguments.setdefault(root, source)
            placeholders[part.expression] = placeholder
        conversion = f"!{part.conversion}" if part.conversion else ""
        spec = f":{part.spec}" if part.spec and "{" not in part.spec else ""
        pieces.append("{" + placeholder + conversion + spec + "}")
    return CatalogMessage(message="".join(pieces), arguments=arguments)


def _root_source(expression: str, placeholder: str) -> str:
    """The source that supplies the placeholder's root parameter."""
    if _DOTTED.match(expression):
        root = placeholder.split(".")[0]
        if _is_dunder(expression.removeprefix("self.").split(".")[0]):
            return expression  # renamed by _undundered: the parameter is the whole value
        return (
            f"self.{root.rstrip('_')}"
            if expression.startswith("self.")
            else expression.split(".")[0]
        )
    return expression
