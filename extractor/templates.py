"""Templates: the message of a raise as written, from its libcst expression.

A template is display text: literal text with `{` and `}` doubled, each replacement field as
`{<expression source as written>}` with its conversion and format spec. Expression source comes
from libcst's code generation of the node, so it is exactly what the file says. Whatever the
rules below do not cover gives None, never a guess:

1. string literals, implicit concatenation and `+` of strings are joined; once a `+` has a string
   operand, its other operands are fields (`"got " + str(x)` gives `got {str(x)}`);
2. f-strings keep their literal text and their fields as written;
3. `"...".format(...)` and `"..." % (...)` put each argument's source in its field, inlining
   arguments that are literal constants; the text formatted may also be a name followed to
   literal text (rule 4) or literal text built by rule 5 or 6 (`_MSG.format(x=x)`);
4. a name is followed to its single assignment (the caller supplies `follow`): in the raise's
   own scope, or, for a name no enclosing function binds, to its one assignment at module
   level; a name bound more than once is its last plain assignment before the raise, then the
   `+=` after it, direct statements of the blocks on the way to the raise (a branch that
   holds the raise, never its other branches) with nothing else binding it in between, nor a
   loop around the raise or a `try` body around its handler: the assignment's template
   followed by each `+=` operand read as rule 1 reads those of `+` (the caller gives these
   steps in a `Binding`);
5. `textwrap.dedent(...)` and `inspect.cleandoc(...)` of plain literal text (names resolved
   through imports by the caller's `qualify`) are that text after the function;
   `.strip()`, `.lstrip()` and `.rstrip()` without arguments of such text are that text stripped;
   of an f-string, the function is applied to its template, fields standing as their text
   (exact while values hold no line break, which would add lines to the margin's reckoning);
6. `"sep".join([...])` or `"sep".join((...))` of string literals and f-strings joins their
   templates with the separator; any other element leaves the call uncovered;
7. a gettext-style call (`_`, `gettext`, `ngettext`, `lazy_gettext`, ... of `GETTEXT`) of a
   literal is that literal: the text as written is the source language's, and `ngettext`'s
   is its singular.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst

from extractor.literals import (
    LITERAL_FUNCTIONS,
    TEXT_METHODS,
    escape,
    fstring_text,
    gettext_argument,
    python_line_ends,
)


@dataclass(frozen=True)
class Binding:
    """What a followed name holds, when a bare expression does not say it all."""

    value: cst.BaseExpression
    """The value of the name's assignment."""
    steps: tuple[cst.BaseExpression, ...] = ()
    """The right-hand sides of the `+=` that extend it before the raise, in order."""
    follow: Follow | None = None
    """How names inside `value` resolve when not as the message's own (a module constant's)."""
    qualify: Qualify | None = None
    """How dotted names inside `value` resolve when not as the message's own."""
    own: bool = False
    """Whether `follow` and `qualify` above replace the message's (else they are unused)."""


Follow = Callable[[str], "cst.BaseExpression | Binding | None"]
"""Maps a variable name to the value of its single earlier assignment (or a `Binding`), or None."""
Qualify = Callable[[str], str | None]
"""Maps a dotted name as written (`tw.dedent`) to its qualified name (`textwrap.dedent`), or None."""


@dataclass(frozen=True)
class _Names:
    """How the names of the expression being read resolve."""

    follow: Follow | None
    qualify: Qualify | None

    def binding(self, name: str) -> tuple[Binding, _Names] | None:
        """The followed name's binding and the names its value is read with."""
        if self.follow is None:
            return None
        found = self.follow(name)
        if found is None:
            return None
        if not isinstance(found, Binding):
            return Binding(found), self
        return found, (_Names(found.follow, found.qualify) if found.own else self)


_NO_NAMES = _Names(None, None)

_MODULE = cst.Module(body=[])
_FIELD_KEY = re.compile(r"[^.\[]*")
_PRINTF = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?"
    r"(?:\.(?P<precision>\*|\d*))?[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)
_MAX_FOLLOW = 3


def source_of(node: cst.CSTNode) -> str:
    """The node's source exactly as written (libcst code generation)."""
    return _MODULE.code_for_node(node)


def template_of(
    node: cst.BaseExpression, follow: Follow | None = None, qualify: Qualify | None = None
) -> str | None:
    """The template of a message expression, or None when no rule covers it."""
    return _template(node, _Names(follow, qualify), 0)


def _template(node: cst.BaseExpression, names: _Names, depth: int) -> str | None:
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
        return _string_template(node)
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.Add):
            return _sum_template(node, names, depth)
        if isinstance(node.operator, cst.Modulo):
            return _percent_template(node, names, depth)
        return None
    if isinstance(node, cst.Call):
        if _is_join(node):
            return _join_template(node)
        index = gettext_argument(_dotted_source(node.func), len(node.args))
        if index is not None:
            return _string_template(node.args[index].value)
        if _literal_function(node, names) is not None or _text_method(node) is not None:
            value = _literal_value(node, names, depth)
            if value is not None:
                return escape(value)
            return _formatted_text(node, names, depth)
        return _format_call_template(node, names, depth)
    if isinstance(node, cst.Name) and depth < _MAX_FOLLOW:
        found = names.binding(node.value)
        if found is None:
            return None
        binding, inner = found
        text = _template(binding.value, inner, depth + 1)
        for step in binding.steps:
            if text is None:
                return None
            # `name += step` on a str is `name + step`: the step's operands read as `+` reads
            # them, with the names of the scope the steps are in.
            text += "".join(_addend(operand, names, depth + 1)[0] for operand in _addends(step))
        return text
    return None


def _is_join(node: cst.Call) -> bool:
    func = node.func
    return isinstance(func, cst.Attribute) and func.attr.value == "join"


def _join_parts(node: cst.Call) -> tuple[str, list[cst.BaseExpression]] | None:
    """The plain separator and the elements of `"sep".join([...])`, each a string literal."""
    func = node.func
    assert isinstance(func, cst.Attribute)
    separator = plain_value(func.value)
    if separator is None or len(node.args) != 1:
        return None
    arg = node.args[0]
    if arg.star or arg.keyword is not None or not isinstance(arg.value, cst.List | cst.Tuple):
        return None
    elements: list[cst.BaseExpression] = []
    for element in arg.value.elements:
        if not isinstance(element, cst.Element) or not isinstance(element.value, _STRING_NODES):
            return None
        elements.append(element.value)
    return separator, elements


def _join_template(node: cst.Call) -> str | None:
    """Rule 6: the elements' templates joined by the separator's text."""
    parts = _join_parts(node)
    if parts is None:
        return None
    separator, elements = parts
    pieces: list[str] = []
    for element in elements:
        text = _string_template(element)
        if text is None:
            return None
        pieces.append(text)
    return escape(separator).join(pieces)


def _dotted_source(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names and attributes; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted_source(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def _literal_function(node: cst.Call, names: _Names) -> Callable[[str], str] | None:
    """Rule 5's function that the call calls with one positional argument, or None."""
    if names.qualify is None or len(node.args) != 1:
        return None
    arg = node.args[0]
    if arg.star or arg.keyword is not None:
        return None
    dotted = _dotted_source(node.func)
    if dotted is None:
        return None
    qualified = names.qualify(dotted)
    return None if qualified is None else LITERAL_FUNCTIONS.get(qualified)


def _text_method(node: cst.Call) -> Callable[[str], str] | None:
    """Rule 5's `str` method (`.strip()`) that the call calls without arguments, or None."""
    func = node.func
    if node.args or not isinstance(func, cst.Attribute):
        return None
    return TEXT_METHODS.get(func.attr.value)


def _literal_value(node: cst.BaseExpression, names: _Names, depth: int) -> str | None:
    """The exact value of literal text: plain literals, and what rules 4 to 6 build from them.

    This is the text that `.format` and `%` format (rule 3); an f-string is not literal text.
    """
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString):
        return plain_value(node)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left = _literal_value(node.left, names, depth)
        right = None if left is None else _literal_value(node.right, names, depth)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.Call):
        if _is_join(node):
            parts = _join_parts(node)
            if parts is None:
                return None
            values = [plain_value(element) for element in parts[1]]
            if any(value is None for value in values):
                return None
            return parts[0].join(value for value in values if value is not None)
        method = _text_method(node)
        if method is not None:
            assert isinstance(node.func, cst.Attribute)
            text = _literal_value(node.func.value, names, depth)
            return None if text is None else method(text)
        function = _literal_function(node, names)
        if function is None:
            return None
        # Only literal text itself: the function of a computed text is not computed here.
        text = plain_value(node.args[0].value)
        return None if text is None else function(text)
    if isinstance(node, cst.Name) and depth < _MAX_FOLLOW:
        found = names.binding(node.value)
        if found is None or found[0].steps:
            return None
        return _literal_value(found[0].value, found[1], depth + 1)
    return None


def _formatted_text(node: cst.Call, names: _Names, depth: int) -> str | None:
    """Rule 5 of an f-string: the function applied to its template, each field standing as
    the text it prints. Exact while the values hold no line break (a break would add lines
    whose margin `dedent` also weighs); `{` and `}` of fields and doubled braces are not white
    space, so they move no margin. `.strip()` and its kin give None where a field is left at
    an end they strip: its value could begin or end in blanks that they would remove too."""
    method = _text_method(node)
    if method is not None:
        assert isinstance(node.func, cst.Attribute)
        inner = node.func.value
        if isinstance(inner, cst.Call):
            text = _formatted_text(inner, names, depth)
        elif isinstance(inner, cst.FormattedString):
            text = _string_template(inner)
        else:
            return None
        if text is None:
            return None
        stripped = method(text)
        name = node.func.attr.value
        if name != "rstrip" and stripped.startswith("{") and not stripped.startswith("{{"):
            return None
        if name != "lstrip" and _ends_in_field(stripped):
            return None
        return stripped
    function = _literal_function(node, names)
    argument = node.args[0].value if node.args else None
    if function is None or not isinstance(argument, cst.FormattedString):
        return None
    text = _string_template(argument)
    return None if text is None else function(text)


def _ends_in_field(template: str) -> bool:
    """Whether a template's last character closes a field (not a doubled `}}`)."""
    trailing = len(template) - len(template.rstrip("}"))
    return trailing % 2 == 1


def _addends(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a chain of `+` (`a + b + c` parses as `(a + b) + c`), left to right."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return [*_addends(node.left), *_addends(node.right)]
    return [node]


_STRING_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _sum_template(node: cst.BinaryOperation, names: _Names, depth: int) -> str | None:
    """Rule 1 for `+`: string operands are joined, any other operand is a field.

    Once one operand is a string, `+` only succeeds when every operand is a `str`, and
    formatting a `str` with an empty spec gives it back unchanged, so `{operand}` renders the
    same text as the code. Without a string operand the sum may not be a string at all.
    """
    pieces: list[str] = []
    has_string = False
    for operand in _addends(node):
        text, is_string = _addend(operand, names, depth)
        has_string = has_string or is_string
        pieces.append(text)
    return "".join(pieces) if has_string else None


def _addend(operand: cst.BaseExpression, names: _Names, depth: int) -> tuple[str, bool]:
    """An operand of a string `+`: its text, and whether the operand is itself a string."""
    if isinstance(operand, _STRING_NODES) or _is_string_formatting(operand):
        text = _template(operand, _NO_NAMES, _MAX_FOLLOW)
        if text is not None:
            return text, True
    elif isinstance(operand, cst.Name) and depth < _MAX_FOLLOW:
        found = names.binding(operand.value)
        if found is not None and not found[0].steps:
            # Whatever a rule reads as text (a literal, an f-string, `dedent` of one, a
            # constant built so) is that text here, and a `str`: every rule reads only those.
            text = _template(found[0].value, found[1], depth + 1)
            if text is not None:
                return text, True
    return "{" + source_of(operand) + "}", False


def _is_string_formatting(node: cst.BaseExpression) -> bool:
    """`"...".format(...)` or `"..." % ...`: operands whose template a rule gives."""
    if isinstance(node, cst.Call):
        return isinstance(node.func, cst.Attribute) and node.func.attr.value == "format"
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)


def _simple_value(node: cst.SimpleString) -> str | None:
    """The value of a str literal (None for bytes); evaluated only when it has escapes."""
    prefix = node.prefix.lower()
    if "b" in prefix:
        return None
    if "\\" not in node.value or "r" in prefix:
        return python_line_ends(node.raw_value)
    value = node.evaluated_value
    return value if isinstance(value, str) else None


def _string_template(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = _simple_value(node)
        return None if value is None else escape(value)
    if isinstance(node, cst.ConcatenatedString):
        left = _string_template(node.left)
        right = _string_template(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.FormattedString):
        prefix = node.start.rstrip("'\"").lower()
        if "b" in prefix:
            return None
        pieces: list[str] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                pieces.append(fstring_text(part.value, "r" in prefix, node.end))
            elif isinstance(part, cst.FormattedStringExpression):
                pieces.append(_fstring_field(part))
            else:
                return None
        return "".join(pieces)
    return None


def _fstring_field(part: cst.FormattedStringExpression) -> str:
    text = "{" + source_of(part.expression)
    if part.equal is not None:
        # A self-documenting field (`{n = }`) prints its own source and spacing: keep them.
        text = (
            "{"
            + source_of(part.whitespace_before_expression)
            + source_of(part.expression)
            + source_of(part.whitespace_after_expression)
            + source_of(part.equal.whitespace_before)
            + "="
            + source_of(part.equal.whitespace_after)
        )
    if part.conversion:
        text += "!" + part.conversion
    if part.format_spec is not None:
        spec: list[str] = []
        for piece in part.format_spec:
            if isinstance(piece, cst.FormattedStringText):
                spec.append(piece.value)
            elif isinstance(piece, cst.FormattedStringExpression):
                spec.append(_fstring_field(piece))
        text += ":" + "".join(spec)
    return text + "}"


def plain_value(node: cst.BaseExpression) -> str | None:
    """The value of a plain (non-f, non-bytes) string literal or concatenation of them."""
    if isinstance(node, cst.SimpleString):
        return _simple_value(node)
    if isinstance(node, cst.ConcatenatedString):
        left = plain_value(node.left)
        right = plain_value(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left = plain_value(node.left)
        right = plain_value(node.right)
        return None if left is None or right is None else left + right
    return None


_NO_CONSTANT = object()


def _constant(node: cst.BaseExpression) -> object:
    """The value of a literal constant argument, or `_NO_CONSTANT`."""
    if isinstance(node, cst.SimpleString | cst.ConcatenatedString):
        value = plain_value(node)
        return _NO_CONSTANT if value is None else value
    if isinstance(node, cst.Integer | cst.Float):
        return ast.literal_eval(node.value)
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer | cst.Float)
    ):
        return -ast.literal_eval(node.expression.value)
    return _NO_CONSTANT


def _converted(value: object, conversion: str | None) -> object:
    if conversion == "r":
        return repr(value)
    if conversion == "s":
        return str(value)
    if conversion == "a":
        return ascii(value)
    return value


class _FormatArgs:
    """The arguments of a `.format(...)` call, looked up by field key."""

    def __init__(self, args: Sequence[cst.Arg]) -> None:
        self.positional: list[cst.BaseExpression] = []
        self.keywords: dict[str, cst.BaseExpression] = {}
        starred = False
        for arg in args:
            if arg.star:
                starred = True
            elif arg.keyword is not None:
                self.keywords[arg.keyword.value] = arg.value
            elif not starred:
                self.positional.append(arg.value)
        self.auto = 0
        self.manual = False

    def lookup(self, key: str) -> cst.BaseExpression | None:
        if key == "":
            if self.manual:
                return None
            index = self.auto
            self.auto += 1
            return self.positional[index] if index < len(self.positional) else None
        if key.isdigit():
            if self.auto:
                return None
            self.manual = True
            index = int(key)
            return self.positional[index] if index < len(self.positional) else None
        return self.keywords.get(key)


def _format_call_template(node: cst.Call, names: _Names, depth: int) -> str | None:
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "format":
        return None
    text = _literal_value(func.value, names, depth)
    if text is None:
        return None
    return _render_format(text, _FormatArgs(node.args))


def _render_format(text: str, args: _FormatArgs) -> str | None:
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:
        return None
    pieces: list[str] = []
    for literal, field_name, spec, conversion in parsed:
        pieces.append(escape(literal))
        if field_name is None:
            continue
        key = _FIELD_KEY.match(field_name)
        assert key is not None  # the pattern matches the empty string
        suffix = field_name[key.end() :]
        value = args.lookup(key.group())
        if value is None:
            return None
        if spec and "{" in spec:
            rendered_spec = _render_format(spec, args)
            if rendered_spec is None:
                return None
            # A nested field's braces are template syntax, not literal text.
            spec = rendered_spec
        elif not suffix:
            constant = _constant(value)
            if constant is not _NO_CONSTANT:
                try:
                    pieces.append(escape(format(_converted(constant, conversion), spec or "")))
                except (ValueError, TypeError):
                    return None
                continue
        field = "{" + source_of(value) + suffix
        if conversion:
            field += "!" + conversion
        if spec:
            field += ":" + spec
        pieces.append(field + "}")
    return "".join(pieces)


def _percent_template(node: cst.BinaryOperation, names: _Names, depth: int) -> str | None:
    text = _literal_value(node.left, names, depth)
    if text is None:
        return None
    right = node.right
    values: list[cst.BaseExpression] | None = None
    mapping: dict[str, cst.BaseExpression] | None = None
    if isinstance(right, cst.Tuple):
        values = []
        for element in right.elements:
            if not isinstance(element, cst.Element):
                return None
            values.append(element.value)
    elif isinstance(right, cst.Dict):
        mapping = {}
        for item in right.elements:
            if not isinstance(item, cst.DictElement):
                return None
            key = plain_value(item.key)
            if key is None:
                return None
            mapping[key] = item.value
    else:
        values = [right]
    pieces: list[str] = []
    position = 0
    used = 0
    for match in _PRINTF.finditer(text):
        literal = text[position : match.start()]
        if "%" in literal:
            return None
        pieces.append(escape(literal))
        position = match.end()
        if match.group("type") == "%" and match.group(0) == "%%":
            pieces.append("%")
            continue
        if match.group("width") == "*" or match.group("precision") == "*":
            return None
        key = match.group("key")
        value: cst.BaseExpression | None
        if key is not None:
            value = mapping.get(key) if mapping is not None else None
        elif values is not None and used < len(values):
            value = values[used]
            used += 1
        else:
            value = None
        if value is None:
            return None
        field = _percent_field(match, value)
        if field is None:
            return None
        pieces.append(field)
    tail = text[position:]
    if "%" in tail or (values is not None and used != len(values) and mapping is None):
        return None
    pieces.append(escape(tail))
    return "".join(pieces)


def _percent_field(match: re.Match[str], value: cst.BaseExpression) -> str | None:
    constant = _constant(value)
    spec_text = match.group(0)
    if constant is not _NO_CONSTANT:
        key = match.group("key")
        try:
            if key is not None:
                return escape(spec_text % {key: constant})
            return escape(spec_text % (constant,))
        except (ValueError, TypeError, KeyError):
            return None
    flags = match.group("flags")
    width = match.group("width") or ""
    precision = match.group("precision")
    kind = match.group("type")
    conversion = ""
    if kind in "rsa":
        conversion = "" if kind == "s" else "!" + kind
        kind = ""
    elif kind in "iu":
        kind = "d"
    if kind == "d" and not flags and not width and precision is None:
        kind = ""
    align = "<" if "-" in flags else (">" if width and not kind else "")
    sign = "+" if "+" in flags else (" " if " " in flags else "")
    spec = align + sign + ("#" if "#" in flags else "")
    spec += ("0" if "0" in flags and "-" not in flags else "") + width
    if precision is not None:
        spec += "." + (precision or "0")
    spec += kind
    return "{" + source_of(value) + conversion + (":" + spec if spec else "") + "}"
