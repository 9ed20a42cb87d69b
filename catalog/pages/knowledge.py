"""What the package itself says about an error, gathered for its page and its `knowledge` list.

Nothing here is authored in the catalog: each item is read from the package (see CONTRACTS,
`knowledge`) and says where it was read.

- `documented`: the raising function's docstring names this exception in its raises section
  (read by `extractor.docstrings`, attached to the raise site);
- `tested`: a test of the package expects this error (`extractor.expectations`), paired with the
  entry by reading (`catalog.evidence.tested`) or, more often and exactly, by what its
  expectation caught when `errcat reproduce` ran the tests (`catalog.evidence.suite`);
- `remedy`: the raise sits under an `if` that tests only parameters of the public function that
  raises it (or of the instance a public method is called on), so a caller avoids it by
  passing values for which the test is false; the test is turned around by
  `extractor.written.negated`, exactly (`not a <= b` gives `a <= b`, `x is None` gives `x is
  not None`, `x < 0` gives `not (x < 0)`);
- `reproduced`: a call `errcat reproduce` ran and saw raise this entry at its site
  (`reproduced_items`, from the results `catalog.evidence.reproduce` stores beside the catalog).

`verified` is true for `reproduced` items and for `tested` items seen catching the error: errcat
read the others and ran nothing (only `errcat reproduce` runs the package's code, never the
build, which reads what it stored).
"""

from __future__ import annotations

import ast
import functools
import re
import string
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from catalog.evidence.candidates import def_header
from catalog.pages.plaintext import code_span
from extractor.expansion import as_passed, free_names, one_line, substituted
from extractor.imports import public_rank
from extractor.instance import read_attributes
from extractor.written import AND, ATOM, is_none_test, level, negated, negation

if TYPE_CHECKING:
    from catalog.evidence.reproduce import Reproduction
    from catalog.pages.sources import Source
    from extractor.calls import Caller, Callers
    from extractor.expectations import Expectation
    from extractor.model import Condition

KINDS = ("documented", "tested", "reproduced", "remedy")
_WHOLE = {"len": "__len__", "bool": "__bool__", "isinstance": "__class__", "type": "__class__"}
"""Built-ins a test may hand the instance whole to, and what of it they read."""
_CONSTRUCTING = frozenset({"__init__", "__new__", "__post_init__"})
"""Methods that run while the instance is made: no instance exists for a caller to choose."""
MAX_CALLER_DOCS = 3
"""Raises sections of public callers an entry lists, nearest first."""
MAX_TESTED = 5
"""Tests an entry lists; the JSON lists the same ones (the rest are more of the same)."""


@dataclass(frozen=True)
class KnowledgeItem:
    """One thing the package says about an error (the API's `knowledge[]` item)."""

    kind: str
    text: str
    """Markdown of the safe subset: code in code spans."""
    code: str | None = None
    path: str | None = None
    """Where it was read, relative to the repository root; None with `line` when unknown."""
    line: int | None = None
    verified: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "text": self.text,
            "code": self.code,
            "source": None if self.path is None else {"path": self.path, "line": self.line},
            "verified": self.verified,
        }


@functools.lru_cache(maxsize=65536)
def _parameters(signature: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The parameter names of a `def` header as written, `self` and `cls` left out, and every
    parameter name (those two included); ((), {}) if it does not parse."""
    node = def_header(signature)
    if node is None:
        return (), frozenset()
    arguments = node.args
    every = [
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        *(arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None),
    ]
    names = tuple(arg.arg for arg in every)
    return tuple(name for name in names if name not in ("self", "cls")), frozenset(names)


class _Written:
    """`extractor.written`'s view of a test's text: each node as written in it."""

    def __init__(self, code: str) -> None:
        self.code = code

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.code, node) or ast.unparse(node)

    def starts_with(self, node: ast.stmt, word: str) -> bool:
        # Only statements are asked this (`if` against `elif`); a test has none.
        return False


@functools.lru_cache(maxsize=65536)
def turned_around(code: str) -> str | None:
    """The test that must hold for `code` not to, by the extractor's own rule (the one the
    "Raised when" phrases use): exact, so `not X` gives `X` and `x is None` gives `x is not
    None`, while `x < 0` gives `not x < 0` (a NaN is neither below 0 nor at or above it); None
    for code that is not Python."""
    code = code.strip()
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return None
    test = tree.body
    written = _Written(code)
    items = _all_items(test, written)
    if items is not None:
        return items
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        # `rank is None or <test>` (a parameter the function defaults when given None):
        # `rank is not None and <test turned around>`, by De Morgan, each part exactly.
        nones = [value for value in test.values if is_none_test(value)]
        rest = [value for value in test.values if not is_none_test(value)]
        if nones and rest:
            parts = [negated(value, written) for value in nones]
            if len(rest) == 1:
                parts.append(negated(rest[0], written))
            else:
                parts.append(f"not ({' or '.join(written.text(value) for value in rest)})")
            return " and ".join(parts)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # `a != "relu" and a != "gelu"`: any part failing will do, each turned around
        # exactly (`a == "relu" or a == "gelu"`), by De Morgan.
        return " or ".join(
            _all_items(value, written) or negation(value, written).at_least(AND)
            for value in test.values
        )
    return negated(test, written)


def _all_items(test: ast.expr, written: _Written) -> str | None:
    """A test of loop items (`extractor.expansion`'s `any(... for p in params)`) turned around:
    every item must pass, `all(<turned around> for p in params)`; None for any other test."""
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "any"
        and len(test.args) == 1
        and not test.keywords
        and isinstance(test.args[0], ast.GeneratorExp)
    ):
        return None
    items = test.args[0]
    clauses = " ".join(
        " ".join(
            [
                f"for {written.text(generator.target)} in {written.text(generator.iter)}",
                *(f"if {written.text(condition)}" for condition in generator.ifs),
            ]
        )
        for generator in items.generators
    )
    return f"all({negated(items.elt, written)} {clauses})"


def _tests(conditions: Sequence[Condition]) -> Iterator[tuple[Condition, str]]:
    """The tests a caller may turn around, innermost first, each with its code in what the
    function was passed (`as_passed`): an `if`'s, and a run of guards whose `if`s return
    (`Condition.returns`: `if isinstance(x, int): return` then `if x is None: return` ahead
    of the raise) as one test, all of them holding, since a call failing any of them returns
    where it fails. A guard whose `if` raises or leaves a loop instead, or whose test cannot be
    said in what was passed, ends such a run and is no test here. Only a run the raise follows
    in its own block counts: past an `if` or a loop around the raise, a guard that returns is
    mostly a shortcut for a trivial case (`if target == "": return self` ahead of a loop
    over the parts of `target`), and passing that case is no way out worth saying."""
    run: list[tuple[Condition, str]] = []
    rest = list(conditions)
    while rest and rest[0].kind == "guard" and rest[0].returns:
        code = as_passed(rest[0])
        if not code:
            break
        run.append((rest.pop(0), code))
    if run:
        # In the order they run: the outermost (earliest) first.
        ordered = run[::-1]
        yield (
            replace(
                ordered[0][0],
                code=" and ".join(_operand(one_line(c.code or ""), AND) for c, _ in ordered),
                instance=tuple(sorted({i for c, _ in ordered for i in c.instance})),
            ),
            " and ".join(_operand(text, AND) for _, text in ordered),
        )
    for condition in rest:
        code = as_passed(condition) if condition.kind == "if" else None
        if code:
            yield condition, code


@functools.lru_cache(maxsize=65536)
def _instance_reads(code: str, others: frozenset[str]) -> set[str] | None:
    """The attributes a test reads of the instance (`self.requires_grad`, `self.dim` of
    `self.dim()`), where the only parameter it reads that the caller does not pass is the
    instance, `self`, and only through attributes; None otherwise (a class's `cls`, `self`
    passed whole)."""
    if others != {"self"}:
        return None
    try:
        tree = ast.parse(f"(\n{code}\n)", mode="eval")
    except SyntaxError:
        return None
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "self":
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute):
                found.add(parent.attr)
            elif (
                isinstance(parent, ast.Call)
                and isinstance(parent.func, ast.Name)
                and parent.func.id in _WHOLE
                and parent.args[:1] == [node]
            ):
                # `len(self)`, `isinstance(self, T)`: what users see of it too.
                found.add(_WHOLE[parent.func.id])
            else:
                return None
    return found


def _private(name: str) -> bool:
    """A name users are not meant to read: a leading underscore, dunders aside."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _instance_remedy(
    function: str,
    code: str,
    named: Sequence[str],
    read: set[str],
    instance: Sequence[tuple[str, str, str, int]],
    when: str,
) -> KnowledgeItem | None:
    """The remedy of a public method's test that reads the instance through the attributes
    `read`: where the constructor set each from its parameters (`instance`) and the test
    reads no argument of the method, in the constructor's arguments; else in the method's
    arguments and the instance it is called on, which must then be read through public
    attributes only (the state users see), those the constructor set explained."""
    held = {attribute: parameter for attribute, parameter, _said, _line in instance}
    made = {f"self.{name}": held[name] for name in sorted(read) if name in held}
    if any(_private(parameter) for parameter in made.values()):
        return None  # a private argument of the constructor is not for its users to pass
    owner = function.rpartition(".")[0]
    explained = " and ".join(
        f"{code_span(attribute)} is the {code_span(parameter)} it was made with"
        for attribute, parameter in made.items()
    )
    if made and not named and len(made) == len(read):
        renamed = substituted(code, made)
        wanted = None if renamed is None else turned_around(renamed)
        if wanted is None:
            return None
        which = ", ".join(code_span(parameter) for parameter in sorted(set(made.values())))
        text = (
            f"Make the {code_span(owner)} with {which} such that {code_span(wanted)}: "
            f"{code_span(function.rpartition('.')[2])} raises this error when {when}, where "
            f"{explained}."
        )
        return KnowledgeItem(kind="remedy", text=text)
    if any(_private(name) for name in read if name not in held):
        return None
    wanted = turned_around(code)
    if wanted is None:
        return None
    which = f"with {', '.join(code_span(name) for name in named)} " if named else ""
    where = f", where {explained}" if explained else ""
    text = (
        f"Call {code_span(_called(function))} {which}on an instance such that "
        f"{code_span(wanted)}{where}: it raises this error when {when}."
    )
    return KnowledgeItem(kind="remedy", text=text)


def _operand(text: str, least: int = ATOM) -> str:
    """An expression's text ready to stand in for a name inside another (or, with `least`, to
    be one part of an expression binding that tightly): in parentheses unless it binds as
    tightly."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return f"({text})"
    return text if level(tree) >= least else f"({text})"


def _names(code: str) -> frozenset[str]:
    """The names a test reads from the function (not a comprehension's own names)."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return frozenset()
    return frozenset(free_names(tree))


def remedies(source: Source) -> list[KnowledgeItem]:
    """What to pass instead, from the innermost `if` that tests the raising function's
    parameters and nothing the function computes, said of the function itself when it is
    public, else of the nearest public caller that passes its own parameters on to those the
    test reads (the call graph's `Caller.passes`), or computes them from its parameters
    (`Caller.computes`: the test then reads what it computes, `_pair(stride)`), in that
    caller's names.

    Only an enclosing `if` counts: a `guard` holds because an earlier check raised or returned
    otherwise, so turning it around would send the caller into that earlier raise. The test
    must read a parameter, and no local of the function (`age > max_age`, `age` computed
    inside: no value of the parameters is known to avoid it; the extractor lists them as the
    condition's `locals`); names from outside the function (`torch.float16`, `ScriptModule`, a
    module constant, a built-in such as `len`) and names a comprehension in the test binds are
    read as they are, but for what a nested function reads of its enclosing function's
    parameters, which its callers pass on like its own (`vmap`'s `in_dims`, read inside the
    `wrapped` it returns). A public method's test may read the instance it is called on through
    its attributes (`_instance_remedy`): those its constructor set from its parameters
    (`Condition.instance`) are said as what it was made with, and any other must be public
    (`self.requires_grad`, not `self._closed`), the state users see of it.
    """
    function = getattr(source, "function", None)
    signature = getattr(source, "signature", None)
    conditions = getattr(source, "conditions", ())
    if not function or not signature:
        return []
    # No private part: a `__dunder__` method is how users reach a public class's behaviour
    # (`Class(...)`, `obj[i]`, `with obj:`), not a private name.
    found = getattr(source, "callers", None)
    # A function nested in another is called by no name of its own, however public it looks.
    public = not any(_private(part) for part in function.split(".")) and not (
        found is not None and found.nested
    )
    callers = sorted(
        (
            caller
            for caller in (found.callers if found else ())
            if caller.passes or caller.computes or caller.same_instance
        ),
        key=lambda caller: (caller.depth, public_rank(caller.name), caller.name),
    )
    if not public and not callers:
        return []
    caller_parameters, every_parameter = _parameters(signature)
    parameters = set(caller_parameters)
    # What a nested function reads of its enclosing function's parameters, which its callers
    # pass on as their own (`extractor.calls`): named like parameters, said of those callers.
    closure = {name for caller in callers for name, _own in caller.passes} - every_parameter
    # A test reading what the function computes counts in terms of what it was passed, where
    # the extractor could say that exactly.
    for condition, code in _tests(conditions):
        written = one_line(condition.code or "")
        read = _names(code)
        named = sorted(read & (parameters | closure))
        # `self` and `cls` are the instance and the class, not what the caller passes; the
        # instance counts through what its constructor was passed (`Condition.instance`).
        others = read & (every_parameter - parameters)
        instance_read = _instance_reads(code, others) if others else None
        if (others and not instance_read) or not (named or instance_read):
            continue
        when = f"{code_span(written)} (line {condition.line})"
        if code != written:
            # Exact for locals and loop items; for a parameter filled in when None (`x is None
            # or (...)`) the raise only may follow: "can only hold when" is true of both.
            when += f", which can only hold when {code_span(code)}"
        if instance_read:
            # A caller elsewhere may hold another instance: said only of a public method, not
            # of a constructor (no instance exists before it) nor of a function whose first
            # parameter is merely called `self`.
            owner, _, method = function.rpartition(".")
            if not owner:
                continue
            if method in _CONSTRUCTING:
                # While the instance is made, what it holds is what it was made with: the
                # test is one of the constructor's arguments where every attribute it reads
                # holds one (a dataclass's `__post_init__` reading its fields).
                held = {attribute for attribute, *_rest in condition.instance}
                if not public or named or not instance_read <= held:
                    continue
            if public:
                item = _instance_remedy(
                    function, code, named, instance_read, condition.instance, when
                )
                if item is None:
                    continue
                return [
                    replace(item, path=source.path, line=condition.line),
                    # What the class says the constructor's arguments the test reads are.
                    *(
                        _said_of(function.rpartition(".")[0], parameter, said, source.path, line)
                        for attribute, parameter, said, line in condition.instance
                        if said and attribute in instance_read
                    ),
                ]
            # A private method: through public methods that call it on their own instance,
            # where the test reads only the state users see of it.
            if any(_private(name) for name in instance_read):
                continue
        elif public:
            wanted = turned_around(code)
            if wanted is None:
                continue
            which = ", ".join(code_span(name) for name in named)
            return [
                KnowledgeItem(
                    kind="remedy",
                    text=(
                        f"Call {code_span(_called(function))} with {which} such that "
                        f"{code_span(wanted)}: "
                        f"it raises this error when {when}."
                    ),
                    path=source.path,
                    line=condition.line,
                )
            ]
        for caller in callers:
            if instance_read and (
                not caller.same_instance or caller.name.rpartition(".")[2] in _CONSTRUCTING
            ):
                # Another instance, or one still being made: nothing to call it "on".
                continue
            passes = dict(caller.passes)
            computes = {name: (text, reads) for name, text, reads in caller.computes}
            if not all(name in passes or name in computes for name in named):
                continue
            values = {
                name: passes[name] if name in passes else _operand(computes[name][0])
                for name in named
            }
            renamed = substituted(code, values)
            wanted = None if renamed is None else turned_around(renamed)
            if wanted is None:
                continue
            passed = sorted(
                {passes[name] for name in named if name in passes}.union(
                    *(computes[name][1] for name in named if name in computes)
                )
            )
            which = ", ".join(code_span(name) for name in passed)
            which = f"with {which} " if which else ""
            if instance_read:
                which += "on an instance "
            # The raise comes when what a returning caller returns is called (`vmap(f)(x)`).
            doer = "the function it returns" if caller.returned else "it"
            if any(name in computes for name in named):
                # What the caller makes of its arguments is part of the answer.
                handed = ", ".join(
                    f"{code_span(computes[name][0])} as {code_span(name)}"
                    for name in named
                    if name in computes
                )
                how = f"{doer} passes {handed} to"
            elif named:
                how = f"{doer} passes {'them' if len(named) > 1 else 'it'} on to"
            else:
                how = f"{doer} calls"
            return [
                KnowledgeItem(
                    kind="remedy",
                    text=(
                        f"Call {code_span(_called(caller.name))} {which}"
                        f"such that {code_span(wanted)}: {how} "
                        f"{code_span(function)}, which raises this error when {when}."
                    ),
                    path=source.path,
                    line=condition.line,
                ),
                # What the caller's own docstring says those arguments are.
                *(
                    _said_of(caller.name, name, text, caller.path, line)
                    for name, text, line in caller.documents
                    if name in set(passed)
                ),
            ]
    return []


def documented(
    source: Source, exception: str | None = None, message: str | None = None
) -> list[KnowledgeItem]:
    """What docstrings say of this error: the raising function's raises section, as the
    site's record holds it; what the function's docstring says of the parameters its
    innermost test reads, and what the nearest public caller's says of those it passes on to
    them (where no test around the raise reads a documented one, of the parameters the
    entry's `message` prints: `Parameter '{name}' of module {module} has to be pruned`); and
    the raises sections of the nearest public callers that name the entry's class
    (`exception`), each said as theirs."""
    items = []
    for note in getattr(source, "documented", ()):
        if not note.text:
            continue
        items.append(
            KnowledgeItem(
                kind="documented",
                text=f"The docstring of {code_span(note.function)}: {note.text}",
                path=source.path,
                line=note.line,
            )
        )
    function = getattr(source, "function", None)
    found = getattr(source, "callers", None)
    if function and found is not None:
        said = _parameters_said(source, str(function), found, _innermost_reads(source))
        # Where the innermost test reads nothing documented, the `if`s and loops around
        # it name what it depends on: what the docstrings say of those parameters.
        said = said or _parameters_said(source, str(function), found, _outer_reads(source))
        if not said and message:
            said = _parameters_said(source, str(function), found, _printed_names(message))
        items += said
    if exception and found is not None:
        short = exception.rpartition(".")[2]
        named = [
            (caller, entry)
            for caller in found.callers
            for entry in caller.raises
            if entry[0].rpartition(".")[2] == short
        ]
        for caller, (written, text, line) in named[:MAX_CALLER_DOCS]:
            items.append(
                KnowledgeItem(
                    kind="documented",
                    text=(
                        f"The docstring of {code_span(_called(caller.name))}, which reaches this "
                        f"raise, says it raises {code_span(written)}: {text}"
                    ),
                    path=caller.path,
                    line=line,
                )
            )
    return items


def _parameters_said(
    source: Source, function: str, found: Callers, read: frozenset[str]
) -> list[KnowledgeItem]:
    """What the raising function's docstring says of the parameters `read`, and what the
    nearest public caller's says of those it passes on to the rest."""
    if not read:
        return []
    items = [
        _said_of(function, name, text, source.path, line)
        for name, text, line in found.documents
        if name in read
    ]
    undocumented = read - {name for name, _text, _line in found.documents}
    return items + _passed_on_documents(found.callers, undocumented)


def _passed_on_documents(callers: Sequence[Caller], read: frozenset[str]) -> list[KnowledgeItem]:
    """What the nearest public caller's docstring says of its parameters that the arguments
    it gives those the innermost test reads depend on (passed unchanged, computed from them,
    `Caller.feeds`): the meaning the user gave them, where the
    raising function documents none (a private helper). The nearest such caller only, for
    at most MAX_CALLER_DOCS of its parameters."""
    for caller in sorted(callers, key=lambda caller: (caller.depth, caller.name)):
        passed = {own for name, own in caller.passes if name in read}.union(
            *(reads for name, _text, reads in caller.computes if name in read),
            *(params for name, params in caller.feeds if name in read),
        )
        said = [entry for entry in caller.documents if entry[0] in passed]
        if said:
            return [
                _said_of(caller.name, name, text, caller.path, line)
                for name, text, line in said[:MAX_CALLER_DOCS]
            ]
    return []


def _called(name: str) -> str:
    """How users call a function: a constructor by its class."""
    return name.removesuffix(".__init__").removesuffix(".__new__")


def _said_of(function: str, name: str, text: str, path: str, line: int) -> KnowledgeItem:
    return KnowledgeItem(
        kind="documented",
        text=f"The docstring of {code_span(_called(function))} says of {code_span(name)}: {text}",
        path=path,
        line=line,
    )


def _printed_names(message: str) -> frozenset[str]:
    """The names a message template's placeholders start with (`{x.layout}` prints of `x`);
    a placeholder named after an expression (`{mod__get_name}`) names no parameter."""
    try:
        fields = [field for _text, field, _spec, _conv in string.Formatter().parse(message)]
    except ValueError:
        return frozenset()
    return frozenset(
        name
        for field in fields
        if field and (name := re.split(r"[.\[]", field, maxsplit=1)[0]).isidentifier()
    )


def _innermost_reads(source: Source) -> frozenset[str]:
    """The names the innermost test of the raise reads (`_reads`): a run of returning guards
    the raise follows in its own block (`_tests`), else the innermost `if`; or none."""
    conditions = getattr(source, "conditions", ())
    if conditions and conditions[0].kind == "guard" and conditions[0].returns:
        for condition, code in _tests(conditions):
            return _reads(source, condition, code)
    for condition in conditions:
        if condition.kind == "if" and condition.code:
            return _reads(source, condition)
    return frozenset()


_AROUND = frozenset({"if", "for", "while", "for_else", "while_else"})
"""Conditions whose code encloses the raise: the `if`s it sits in and the loops around it.
An earlier check that let the call through (`guard`) is about something else, unless its
`if` returned (`Condition.returns`): what it tests decides whether the raise is reached."""


def _outer_reads(source: Source) -> frozenset[str]:
    """The names the `if`s the raise sits in and the loops around it read (a loop's
    iterable), each as `_reads` reads one."""
    return frozenset().union(
        *(
            _reads(source, condition)
            for condition in getattr(source, "conditions", ())
            if condition.code
            and (condition.kind in _AROUND or (condition.kind == "guard" and condition.returns))
        )
    )


def _reads(source: Source, condition: Condition, code: str | None = None) -> frozenset[str]:
    """The names a condition reads: an `if` test (or `code`, a test `_tests` gives) through its
    locals' values where the extractor could say them, else what its code reads itself and
    the parameters its locals are computed from. In a constructor, an attribute it reads of the instance counts by its
    name too: `self.nonlinearity` is, by the convention constructors keep, what the parameter
    `nonlinearity` was made into."""
    if code is None:
        code = as_passed(condition) if condition.kind == "if" else None
    names = set(_names(code)) if code else _names(condition.code or "") | set(condition.depends)
    if str(getattr(source, "function", "")).endswith(".__init__"):
        names |= read_attributes(code or condition.code or "", "self")
    return frozenset(names)


@dataclass(frozen=True)
class Tested:
    """A test that expects the error, as the page shows it."""

    expectation: Expectation
    seen_at: str | None = None
    """Where `errcat reproduce` saw its expectation catch the error raised (`path:line` of
    the site); None when it was paired by reading alone."""
    chained: bool = False
    """The error the expectation caught was raised from this one (`raise ... from`, or
    raised while handling it): this one was seen in its chain, not caught itself."""


def tested(expectations: Sequence[Tested]) -> list[KnowledgeItem]:
    """A test of the package that expects this error, with its code; those seen catching it
    first (verified), then those paired by reading."""
    items = []
    ordered = sorted(expectations, key=lambda pair: (pair.seen_at is None, pair.chained))
    for pair in ordered[:MAX_TESTED]:
        expectation, seen_at = pair.expectation, pair.seen_at
        where = code_span(expectation.function) if expectation.function else "A test"
        if expectation.record:
            # A row of a table of error inputs, which the package's tests loop over.
            where = (
                f"A row of the error inputs of {code_span(expectation.function)}"
                if expectation.function
                else "A row of a table of error inputs"
            )
        matched = (
            f", with a message matching {code_span(expectation.pattern)}"
            if expectation.pattern
            else ""
        )
        if seen_at is None:
            ran = ""
        elif pair.chained:
            ran = (
                " Run by `errcat reproduce`, the error it caught was raised from this one, "
                f"raised at {code_span(seen_at)}."
            )
        else:
            ran = (
                f" Run by `errcat reproduce`, it caught this error raised at {code_span(seen_at)}."
            )
        items.append(
            KnowledgeItem(
                kind="tested",
                text=f"{where} expects {code_span(expectation.exception)}{matched}.{ran}",
                code=expectation.code,
                path=expectation.path,
                line=expectation.line,
                verified=seen_at is not None,
            )
        )
    return items


def reproduced_items(reproductions: Iterable[Reproduction]) -> list[KnowledgeItem]:
    """The calls `errcat reproduce` saw raise the entry at its site: executed, so verified."""
    return [
        KnowledgeItem(
            kind="reproduced",
            text=(
                # A call with the statements it needs (from a docstring's example) is shown
                # as the code alone.
                f"Reproduced by errcat: {_call_said(r.call)} raised it at "
                f"{code_span(f'{r.path}:{r.line}')}"
                + (f", printing {code_span(r.output)}." if r.output else ".")
            ),
            code=r.call,
            path=r.path,
            line=r.line,
            verified=True,
        )
        for r in reproductions
    ]


def _call_said(call: str) -> str:
    return "the code below" if "\n" in call else code_span(call)


def knowledge_by_entry(
    entry_ids: Iterable[str],
    sources: Mapping[str, Sequence[Source]],
    expectations: Mapping[str, Sequence[Tested]],
    reproduced: Mapping[str, Sequence[KnowledgeItem]] | None = None,
    exceptions: Mapping[str, str] | None = None,
    messages: Mapping[str, str] | None = None,
) -> dict[str, tuple[KnowledgeItem, ...]]:
    """Each entry's items in the order of `KINDS`: documented, tested, the calls `errcat
    reproduce` saw raise it (`reproduced`, made by `catalog.evidence.reproduce`), then remedies; the
    same text once."""
    found: dict[str, tuple[KnowledgeItem, ...]] = {}
    for entry_id in entry_ids:
        items: list[KnowledgeItem] = []
        at = sources.get(entry_id, ())
        exception = (exceptions or {}).get(entry_id)
        message = (messages or {}).get(entry_id)
        for source in at:
            items += documented(source, exception, message)
        items += tested(expectations.get(entry_id, ()))
        items += (reproduced or {}).get(entry_id, ())
        for source in at:
            items += remedies(source)
        unique: dict[tuple[str, str], KnowledgeItem] = {}
        for item in sorted(items, key=lambda item: KINDS.index(item.kind)):
            unique.setdefault((item.kind, item.text), item)
        found[entry_id] = tuple(unique.values())
    return found
