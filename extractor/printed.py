"""What a raise prints when the package itself builds the text: factories, helpers, classes.

A raise site's template is its message as written. Where the package builds the exception
elsewhere, what users see is another text, read here after the scan, across files:

- *Factories and raise helpers.* `raise self.make_error("invalid")`, `raise make_exc(...)`:
  the callee (found with the call graph of `extractor.calls`: functions through imports and
  `*` imports, methods through the class and its single bases) returns, or raises, an
  exception it builds from its parameters. The site becomes a site of that exception
  (`qualified_name`), printing what the callee builds from this call's arguments (`printed`),
  and names the callee (`through`). A callee calling another factory is followed, to a depth.
- *Classes that compose their text.* For a class of the package whose `__init__` (through
  `super().__init__(...)` and `Base.__init__(self, ...)` chains) or `__str__` builds the text,
  `printed` is what `str(exc)` prints over the constructor's parameters.
- *Names and text.* An argument that is a value (a variable, an attribute) stands in the text
  under the parameter's name, so that sites printing the same text are one template whatever
  their argument names; an argument holding literal text (a literal, an f-string) is spliced
  in. Literal keys into class-level message tables (`self.error_messages["invalid"]`, read
  from a dict literal of that name, or ending in `_<name>` such as `default_error_messages`,
  on the class or its bases, nearest first) and `str.format_map`/`str.format` of a
  parameter with literal keys or positions (`{k}`, `{}`, `{0}`) are resolved; gettext-style
  calls are their literal.
- *A message parameter's default.* `raise RuntimeError(msg.format(...))` where `msg` is a
  parameter defaulting to literal text (and never rebound) prints that text, formatted, for
  the calls that leave it; calls passing other text are raise-helper calls, each read above.
- *A local extended under conditions.* `msg = f"no implementation for {name}"`, then `if
  mode: msg += ...`, and `raise TypeError(msg)` (or a class's `__init__` composing so): where
  every step after the last plain one is conditional (an `if`, a loop, a `try` doing only
  `+=`), the text is what every such message starts with, and the raise stays as written
  (`through` names the raising function). The matchers find the longer texts by that start.

What cannot be read is never guessed: the site keeps its message as written and `unresolved`
says why and what to do (a factory returning different classes on different paths, factories
calling each other in a circle, a table that is no class-level dict, a `__str__` reading state
its `__init__` does not set from its parameters).

Only sites that need it cost anything: files are parsed again only when a site goes through
them (a callee, a class along a chain), each once.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import os
import re
import string
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from extractor.calls import CallGraph, call_graph
from extractor.expansion import substituted
from extractor.extract import _File
from extractor.fields import runs, split_field
from extractor.helpers import (
    Ending,
    Guard,
    Helper,
    argument_for,
    call_parameters,
    ending,
    forwarded,
    guards,
    is_static,
    passes_through,
    rebinds,
)
from extractor.imports import (
    ModuleName,
    Scope,
    bound_names,
    dotted_name,
    is_builtin_exception,
    module_name_for,
    parameter_names,
    resolve,
)
from extractor.literals import TEXT_METHODS, escape, gettext_argument
from extractor.locate import Spot, decode
from extractor.model import FileResult, RaiseSite, ScanReport
from extractor.written import ATOM, SAID, level

_DEPTH = 6
"""How many factories, helpers and base constructors one site is followed through."""
_DO = "or mark the raise # errcat: ignore[reason]"


class _Unresolved(Exception):
    """Why a text cannot be read; caught per site, it becomes the site's `unresolved`."""


class _Unreadable(_Unresolved):
    """A `__str__` whose text no rule reads (several returns, text computed by calls): the
    message is then the constructor's first argument, as for any raise as written."""


@dataclass(frozen=True)
class _Text:
    """An argument's text as a scan template."""

    template: str
    bare: bool = False
    """The whole text is one value whose text the source does not hold (`{x}`)."""
    literal: str | None = None
    """The text itself, when it is literal text alone."""
    none: bool | None = None
    """Whether the value is None: True for `None` (passed, or a default left), False for text
    or a function, None where the source does not tell."""
    called: _Text | None = None
    """For a function of no parameters written in place (`lambda: f"..."`), the text its
    call gives."""
    qualified: str | None = None
    """For a name of a class (`RuntimeError`, a class of the package), its qualified name, as
    the scope it is written in resolves it."""


def _literal(text: str) -> _Text:
    return _Text(escape(text), literal=text, none=False)


def _value(source: str) -> _Text:
    return _Text("{" + source + "}", bare=True)


def _fields(template: str) -> list[tuple[bool, str]]:
    """`extractor.fields.runs` of a template, a template it cannot split unresolved."""
    try:
        return list(runs(template))
    except ValueError:
        raise _Unresolved("a template errcat cannot split") from None


def _split_field(body: str) -> tuple[str, str]:
    """A field body as (expression, the rest: `!r`, `:spec` or both)."""
    field = split_field(body)
    return field.expression, field.suffix


def _text_of(template: str) -> _Text:
    runs = list(_fields(template))
    if len(runs) == 1 and runs[0][0] and _split_field(runs[0][1])[1] == "":
        return _Text(template, bare=True)
    if all(not is_field for is_field, _ in runs):
        return _Text(template, literal=template.replace("{{", "{").replace("}}", "}"))
    return _Text(template)


@dataclass
class _Module:
    """A file parsed again for what a site goes through: its definitions and their scopes."""

    file: _File
    module: ModuleName
    scopes: dict[str, tuple[ast.AST, Scope]]

    @classmethod
    def parse(cls, source: str, display: str, module: ModuleName) -> _Module:
        tree = ast.parse(source)
        found = cls(_File(source, display, module), module, {})
        found.walk(tree.body, Scope("module", tree, None, None))
        return found

    def walk(self, body: list[ast.stmt], parent: Scope) -> None:
        for statement in body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qualname = (
                    f"{parent.qualname}.{statement.name}" if parent.qualname else statement.name
                )
                kind = "class" if isinstance(statement, ast.ClassDef) else "function"
                scope = Scope(kind, statement, parent, qualname)
                self.scopes.setdefault(qualname, (statement, scope))
                # Nested functions too: a raise in a closure is read in its own scope, the
                # names of the functions around it resolving as the scan resolves them.
                self.walk(statement.body, scope)
                continue
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(statement, name, None)
                if isinstance(inner, list):
                    self.walk(inner, parent)
            for handler in getattr(statement, "handlers", ()):
                self.walk(handler.body, parent)

    def function(self, qualname: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, Scope]:
        node, scope = self.scopes.get(qualname, (None, None))
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or scope is None:
            raise _Unresolved(f"cannot find the definition of {qualname}")
        return node, scope

    def source(self, node: ast.expr) -> str:
        return self.file.text(node)


@dataclass
class _Context:
    """Where an expression is read: its module and scope, what its parameters are bound to."""

    module: _Module
    scope: Scope
    function: ast.FunctionDef | ast.AsyncFunctionDef | None
    at: ast.stmt
    bindings: dict[str, _Text]
    self_name: str | None
    self_class: tuple[str, str] | None
    """(path, qualname) of the class `self` is an instance of, for message tables."""
    classes: dict[str, str] = dataclasses.field(default_factory=dict)
    """Parameters the call left to a default that names a class, by that name as written
    (`exc: type[SyntaxError] = TemplateSyntaxError` raised as `raise exc(msg)`)."""
    passed: dict[str, str] = dataclasses.field(default_factory=dict)
    """Parameters the call gave a class, by its qualified name (`_check_with(RuntimeError,
    cond, message)` raising `error_type(...)`)."""

    def spot(self) -> Spot:
        if isinstance(self.at, ast.Raise):
            return Spot(self.at, self.scope, self.function)
        node = ast.Raise(exc=None, cause=None)
        ast.copy_location(node, self.at)
        return Spot(node, self.scope, self.function)


class Printed:
    """Reads through the package's factories and classes; one per scan report."""

    def __init__(self, report: ScanReport, graph: CallGraph, cwd: Path) -> None:
        self.graph = graph
        self.cwd = cwd
        self._paths = {result.path for result in report.results if result.ok}
        self._modules: dict[str, _Module | None] = {}
        self._known: dict[Path, tuple[str, ...]] = {}
        self._helpers: dict[tuple[str, str], Helper] = {}
        """The raise helpers, once `raise_helpers` has found them: what a call of one raises
        is what its body ends in, not what it may raise on other paths."""

    def module(self, path: str) -> _Module:
        if path not in self._modules:
            found: _Module | None = None
            try:
                absolute = Path(os.path.abspath(self.cwd / path))
                source = decode(absolute.read_bytes())
                found = _Module.parse(source, path, module_name_for(absolute, self._known))
            except (OSError, SyntaxError, ValueError, RecursionError, UnicodeError):
                found = None
            except Exception:
                found = None
            self._modules[path] = found
        module = self._modules[path]
        if module is None:
            raise _Unresolved(f"cannot read {path} again")
        return module

    # -- the sites --------------------------------------------------------------------------

    def site(self, site: RaiseSite) -> RaiseSite:
        """The site read through what it goes through, or the site itself."""
        if site.reraise or site.path not in self._paths:
            return site
        try:
            return self._site(site)
        except _Unresolved as problem:
            if (
                site.qualified_name is not None
                and self.graph.class_named(site.qualified_name) is None
                and not self._is_function(site.qualified_name)
            ):
                return site  # a built-in or another library's class: as written
            return dataclasses.replace(site, unresolved=f"{problem}; {_FIX}")
        except (RecursionError, MemoryError):
            return site

    def _composes(self, name: str) -> bool:
        """Whether a class of the package defines (or inherits from one) `__init__` or
        `__str__`: only then can its text differ from its constructor's argument."""
        named = self.graph.class_named(name)
        if named is None:
            return False
        path, qualname, _bases = named
        return any(
            self.graph.method_of(path, qualname, method) is not None
            for method in ("__str__", "__init__")
        )

    def _is_function(self, name: str) -> bool:
        return self.graph.class_named(name) is None and self.graph.function_named(name) is not None

    def _site(self, site: RaiseSite) -> RaiseSite:
        qualified = site.qualified_name
        exception = site.exception
        if exception is None:
            return site
        if qualified is None:
            qualified = self._star_name(site.path, exception)
        if qualified is None and _held(exception):
            qualified = self._default_class(exception, self._site_context(site))
        # The raise's file is read again only where a factory or a composing class may stand
        # behind it: a raise of a plain class of the package costs nothing more.
        needs = (qualified is None and "." in exception) or (
            qualified is not None
            and not qualified.startswith("builtins.")
            and (self._is_function(qualified) or self._composes(qualified))
        )
        if not needs:
            plain: dict[str, object] = {}
            if qualified is not None and qualified != site.qualified_name:
                plain["qualified_name"] = qualified
            if _message_call(site) is not None:
                # The class prints its argument as it is: what the called function returns.
                with contextlib.suppress(_Unresolved):
                    helped = self._helper_message(site)
                    if helped is not None:
                        # Only the function could be rewritten, as for a factory: the raise
                        # is the entry's as written (`through`).
                        plain["printed"], plain["through"] = helped
            if "printed" not in plain and _reads_text_of_a_name(site):
                with contextlib.suppress(_Unresolved):
                    defaulted = self._default_message(site)
                    if defaulted is not None:
                        # The text is the default's only where the caller leaves it: the raise
                        # must stay as written (`through`), never become one typed class.
                        plain["printed"], plain["through"] = defaulted
            if "printed" not in plain and site.template is None and _names_a_local(site):
                with contextlib.suppress(_Unresolved):
                    opened = self._opening(site)
                    if opened is not None:
                        # Only the start is known: the raise stays as written (`through`).
                        plain["printed"], plain["through"] = opened
            return dataclasses.replace(site, **plain) if plain else site  # type: ignore[arg-type]
        context = self._site_context(site)
        callee = self._callee(site, context, qualified)
        if callee is not None:
            path, qualname, via_self = callee
            arguments, keywords = self._site_arguments(site, context)
            on = context.self_class if via_self and context is not None else None
            if not via_self and qualified is not None:
                on = _owner(self.graph, qualified)
            built, text = self._through(path, qualname, arguments, keywords, on, set(), 0)
            name = _dotted(self.module(path).module.name, qualname)
            return dataclasses.replace(
                site, qualified_name=built, printed=text.template, through=name
            )
        if qualified is None or qualified.startswith("builtins."):
            return site
        if self.graph.class_named(qualified) is None:
            return site
        if site.arguments is None:
            arguments, keywords = [], {}
        else:
            arguments, keywords = self._site_arguments(site, context)
        composed = self._compose(qualified, arguments, keywords, 0)
        changes: dict[str, object] = {}
        if qualified != site.qualified_name:
            changes["qualified_name"] = qualified
        if composed is not None:
            changes["printed"] = composed.template
        return dataclasses.replace(site, **changes) if changes else site  # type: ignore[arg-type]

    def _helper_message(self, site: RaiseSite) -> tuple[str, str] | None:
        """What a raise prints when its message is a call of a function of the package that
        returns text (`raise RuntimeError(_mismatch_msg(out, i))`): that function's one
        `return`, read over the call's arguments, and the function's qualified name; None
        when it is no such call, or what it returns holds no literal text."""
        context = self._site_context(site)
        if context is None:
            return None
        raised = _raised_call(site, context)
        if raised is None or not raised.args or not isinstance(raised.args[0], ast.Call):
            return None
        call = raised.args[0]
        found = self._function_called(call.func, context)
        if found is None:
            return None
        path, qualname = found
        module = self.module(path)
        node, scope = module.function(qualname)
        returned = _single_return(node, qualname)
        arguments, keywords = self._call_texts(call, context)
        method = scope.parent is not None and scope.parent.kind == "class"
        bindings = self._bind(node, arguments, keywords, method=method, name=qualname)
        self_name, self_class = self._self_of(path, module, scope, node)
        helper = _Context(module, scope, node, returned, bindings, self_name, self_class)
        assert returned.value is not None
        text = _SourceReader(self, helper, None).expand(returned.value)
        if text.bare or not _LETTERS.search(_literal_part(text.template)):
            return None
        return text.template, _dotted(module.module.name, qualname)

    def _default_message(self, site: RaiseSite) -> tuple[str, str] | None:
        """What a raise prints when its message is a parameter whose default is literal text,
        or that text formatted (`msg.format(...)`, `msg % ...`), and the function never
        rebinds it (`def check_hidden_size(self, hx, expected, msg="Expected hidden size {},
        got {}")`): the text a call leaving the parameter to its default gets, and the
        function's qualified name. Calls passing other text are sites of their own, read
        through the function as a raise helper's (`helper_calls`). None where the message
        reads no such parameter, or what it gives holds no literal word."""
        context = self._site_context(site)
        if context is None or context.function is None:
            return None
        raised = _raised_call(site, context)
        if raised is None or not raised.args:
            return None
        name = _text_name(raised.args[0])
        function = context.function
        default = _defaults(function).get(name) if name is not None else None
        if (
            name is None
            or not isinstance(default, ast.Constant)
            or not isinstance(default.value, str)
            or rebinds(function, name)
        ):
            return None
        defaulted = dataclasses.replace(context, bindings={name: _literal(default.value)})
        text = _SourceReader(self, defaulted, None).expand(raised.args[0])
        if text.bare or not _LETTERS.search(_literal_part(text.template)):
            return None
        return text.template, _dotted(context.module.module.name, str(context.scope.qualname))

    def _opening(self, site: RaiseSite) -> tuple[str, str] | None:
        """What a raise of a local prints where the function extends the local under
        conditions after its last plain step (`extractor.extract`'s `opening`): the text every
        such message starts with, and the raising function's qualified name; None where it
        holds no literal word."""
        context = self._site_context(site)
        if context is None or context.function is None:
            return None
        raised = context.at
        call = _raised_call(site, context)
        if not isinstance(raised, ast.Raise) or call is None or not call.args:
            return None
        spot = Spot(raised, context.scope, context.function)
        template = context.module.file.opening(call.args[0], spot)
        if template is None or not _LETTERS.search(_literal_part(template)):
            return None
        return template, _dotted(context.module.module.name, str(context.scope.qualname))

    def _function_called(self, func: ast.expr, context: _Context) -> tuple[str, str] | None:
        """(path, qualname) of the package function a call's `func` names: through the raising
        scope's names and imports, or a method of the instance's class (`self.describe`)."""
        dotted = dotted_name(func)
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        if context.self_class is not None and root == context.self_name:
            if not rest or "." in rest:
                return None
            return self.graph.method_of(*context.self_class, rest)
        qualified = resolve(dotted, context.scope, context.module.module)
        if qualified is None or self.graph.class_named(qualified) is not None:
            return None
        return self.graph.function_named(qualified)

    def _site_context(self, site: RaiseSite) -> _Context | None:
        """The scope of the site's raise, read again only for sites that may need it."""
        if site.function is None:
            return None
        try:
            module = self.module(site.path)
        except _Unresolved:
            return None
        entry = module.scopes.get(site.function)
        if entry is None:
            return None
        node, scope = entry
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return None
        # The raise statement itself, where it is a statement of the function (a helper call
        # standing as a raise is not): locals are read along the blocks that lead to it.
        at: ast.stmt | None = next(
            (
                statement
                for statement in _own(node.body)
                if isinstance(statement, ast.Raise) and statement.lineno == site.line
            ),
            None,
        )
        if at is None:
            at = ast.Pass()
            at.lineno, at.col_offset = site.line, 0
        self_name, self_class = self._self_of(site.path, module, scope, node)
        return _Context(module, scope, node, at, {}, self_name, self_class)

    def _self_of(
        self, path: str, module: _Module, scope: Scope, node: ast.AST
    ) -> tuple[str | None, tuple[str, str] | None]:
        """The first parameter's name of a method (or of the method a function is nested in)
        and the class it is defined in."""
        current: Scope | None = scope
        while current is not None and current.parent is not None:
            if current.parent.kind == "class" and isinstance(
                current.node, ast.FunctionDef | ast.AsyncFunctionDef
            ):
                positional = [*current.node.args.posonlyargs, *current.node.args.args]
                if positional and not is_static(current.node):
                    return positional[0].arg, (path, str(current.parent.qualname))
                return None, None
            current = current.parent
        return None, None

    def _default_class(self, exception: str, context: _Context | None) -> str | None:
        """The class a raise of a parameter raises when it is left to its default, directly
        (`def fail(msg, exc=TemplateSyntaxError): raise exc(msg)`) or stored by `__init__`
        (`self._exception = exc`, raised as `raise self._exception(msg)`); None where the
        name has any other binding, the attribute another assignment, or the default is no
        class. Callers that pass another class raise that one: the default is what the code
        raises unless told otherwise, so the site is read as the default's."""
        if context is None or context.function is None:
            return None
        root, _, attribute = exception.partition(".")
        if not attribute:
            return self._parameter_default(root, context.function, context.scope, context.module)
        if root != context.self_name or "." in attribute or context.self_class is None:
            return None
        path, qualname = context.self_class
        module = self.module(path)
        klass = module.scopes.get(qualname, (None, None))[0]
        found = self.graph.method_of(path, qualname, "__init__")
        if not isinstance(klass, ast.ClassDef) or found is None or found[0] != path:
            return None
        init, scope = self.module(found[0]).function(found[1])
        assigned = [
            value
            for method in klass.body
            if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
            for value in _attribute_assignments(method, attribute)
        ]
        if len(assigned) != 1 or not isinstance(assigned[0], ast.Name):
            return None
        if not any(value is assigned[0] for value in _attribute_assignments(init, attribute)):
            return None
        return self._parameter_default(assigned[0].id, init, scope, module)

    def _parameter_default(
        self,
        name: str,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        scope: Scope,
        module: _Module,
    ) -> str | None:
        """The class a parameter defaults to, where the function never rebinds it."""
        default = _defaults(node).get(name)
        dotted = None if default is None else dotted_name(default)
        if dotted is None or rebinds(node, name):
            return None
        qualified = resolve(dotted, scope.parent or scope, module.module)
        if qualified is None:
            return None
        if qualified.startswith("builtins."):
            return qualified if is_builtin_exception(qualified) else None
        named = self.graph.class_named(qualified)
        if named is None:
            return None
        defined = self.graph.class_at(named[0], named[1])
        return defined[0] if defined is not None else qualified

    def _star_name(self, path: str, dotted: str) -> str | None:
        """A name bound by `from x import *` only, as the call graph knows the modules."""
        _module, imports, stars = self.graph.module_names(path)
        root = dotted.split(".")[0]
        if root in imports or not stars:
            return None
        for star in stars:
            name = f"{star}.{dotted}"
            if self.graph.class_named(name) is not None or self.graph.function_named(name):
                found = self.graph.class_named(name)
                if found is not None:
                    owner = self.graph.class_at(found[0], found[1])
                    return owner[0] if owner is not None else name
                return name
        return None

    def _callee(
        self, site: RaiseSite, context: _Context | None, qualified: str | None
    ) -> tuple[str, str, bool] | None:
        """(path, qualname, called through `self`) of the function the raise calls, if any."""
        if site.arguments is None or site.exception is None:
            return None
        root, _, attribute = site.exception.partition(".")
        if (
            context is not None
            and context.self_class is not None
            and root == context.self_name
            and attribute
            and "." not in attribute
        ):
            path, qualname = context.self_class
            found = self.graph.method_of(path, qualname, attribute)
            return None if found is None else (*found, True)
        if qualified is None or qualified.startswith("builtins."):
            return None
        if self.graph.class_named(qualified) is not None:
            return None
        found = self.graph.function_named(qualified)
        return None if found is None else (*found, False)

    def _site_arguments(
        self, site: RaiseSite, context: _Context | None
    ) -> tuple[list[_Text], dict[str, _Text]]:
        call = None if context is None or site.via is not None else _raised_call(site, context)
        if call is not None and context is not None:
            # The raise's own nodes: names in its arguments follow as the message's do.
            return self._call_texts(call, context)
        arguments = []
        for index, source in enumerate(site.arguments or ()):
            if source.startswith("*"):
                raise _Unresolved(f"passes {source}, whose values the source does not hold")
            if index == 0 and site.template is not None:
                arguments.append(_text_of(site.template))
            else:
                arguments.append(self._read(source, context))
        keywords: dict[str, _Text] = {}
        for name, source in site.keywords:
            if name == "**":
                raise _Unresolved(f"passes **{source}, whose values the source does not hold")
            keywords[name] = self._read(source, context)
        return arguments, keywords

    def _call_texts(
        self, call: ast.Call, context: _Context
    ) -> tuple[list[_Text], dict[str, _Text]]:
        """The texts of a call's positional and keyword arguments, read in `context`."""
        reader = _SourceReader(self, context, None)
        arguments = [reader.expand(argument) for argument in _positional(call, context)]
        passed: dict[str, _Text] = {}
        for keyword in call.keywords:
            if keyword.arg is None:
                raise _Unresolved("passes **kwargs, whose values the source does not hold")
            passed[keyword.arg] = reader.expand(keyword.value)
        return arguments, passed

    def _read(self, source: str, context: _Context | None) -> _Text:
        """The text of an argument written at a raise site."""
        try:
            node = ast.parse("(" + source + ")", mode="eval").body
        except SyntaxError:
            return _value(source)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _literal(node.value)
        return _value(source)

    def table(self, owner: tuple[str, str], attribute: str, key: str) -> _Text | None:
        """The text for `key` in the class's message tables, nearest class first, along its
        single-base chain (the bases' order, for a class with several)."""
        queue = [owner]
        seen: set[tuple[str, str]] = set()
        while queue:
            path, qualname = queue.pop(0)
            if (path, qualname) in seen or len(seen) > _DEPTH * 4:
                continue
            seen.add((path, qualname))
            module = self.module(path)
            node, scope = module.scopes.get(qualname, (None, None))
            if not isinstance(node, ast.ClassDef) or scope is None:
                continue
            for table in _table_values(node, attribute):
                for key_node, value in zip(table.keys, table.values, strict=True):
                    if isinstance(key_node, ast.Constant) and key_node.value == key:
                        context = _Context(module, scope, None, node, {}, None, None)
                        text = _SourceReader(self, context).expand(value)
                        if text.literal is None and not text.template:
                            return None
                        return text
            found = self.graph.class_at(path, qualname)
            for base in found[1] if found is not None else ():
                located = self.graph.class_named(base) if base else None
                if located is not None:
                    queue.append((located[0], located[1]))
        return None

    # -- factories and helpers --------------------------------------------------------------

    def _through(
        self,
        path: str,
        qualname: str,
        arguments: list[_Text],
        keywords: dict[str, _Text],
        on: tuple[str, str] | None,
        seen: set[tuple[str, str]],
        depth: int,
    ) -> tuple[str, _Text]:
        """(class, printed text) of the exception the function returns or raises; `on` is
        the (path, qualname) of the class `self` (or `cls`) is, when the call says it."""
        if (path, qualname) in seen:
            raise _Unresolved(
                f"{qualname} calls itself through other factories; errcat cannot tell what "
                "it builds"
            )
        if depth > _DEPTH:
            raise _Unresolved(f"goes through more than {_DEPTH} factories")
        seen = seen | {(path, qualname)}
        module = self.module(path)
        node, scope = module.function(qualname)
        method = scope.parent is not None and scope.parent.kind == "class"
        classes: dict[str, str] = {}
        passed: dict[str, str] = {}
        bindings = self._bind(
            node, arguments, keywords, method=method, name=qualname, classes=classes, passed=passed
        )
        self_name, self_class = self._self_of(path, module, scope, node)
        if on is not None:
            self_class = on
        outcomes: list[tuple[str, _Text]] = []
        produced = _produced(node)
        if (path, qualname) in self._helpers:
            end = ending(node)
            produced = [] if end is None else [_ended(end)]
        for statement, value in produced:
            context = _Context(
                module, scope, node, statement, bindings, self_name, self_class, classes, passed
            )
            outcomes.append(self._built(context, value, seen, depth))
        if not outcomes:
            raise _Unresolved(f"{qualname} neither returns nor raises an exception errcat can read")
        built_classes = sorted({built for built, _ in outcomes})
        if len(built_classes) > 1:
            raise _Unresolved(
                f"{qualname} returns different classes on different paths "
                f"({', '.join(built_classes)})"
            )
        texts = {text.template for _, text in outcomes}
        if len(texts) > 1:
            raise _Unresolved(f"{qualname} builds different messages on different paths")
        return outcomes[0]

    def _bind(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        arguments: list[_Text],
        keywords: dict[str, _Text],
        *,
        method: bool,
        name: str,
        classes: dict[str, str] | None = None,
        passed: dict[str, str] | None = None,
    ) -> dict[str, _Text]:
        """The callee's parameters bound to the call's texts (defaults read where missing);
        `classes` receives the parameters left to a default that is a dotted name, `passed`
        those the call gave a class (by its qualified name)."""
        spec = node.args
        positional = [*spec.posonlyargs, *spec.args]
        if method and not is_static(node) and positional:
            # A method: its first parameter is the instance (or class) and gets no argument.
            positional = positional[1:]
        if len(arguments) > len(positional) and spec.vararg is None:
            raise _Unresolved(f"{name} is called with more arguments than it takes")
        bindings: dict[str, _Text] = {}
        for parameter, text in zip(positional, arguments, strict=False):
            bindings[parameter.arg] = text
        defaults = _defaults(node)
        names = {p.arg for p in (*positional, *spec.kwonlyargs)}
        for key, text in keywords.items():
            if key not in names:
                raise _Unresolved(f"{name} takes no parameter {key}")
            bindings[key] = text
        for parameter in (*positional, *spec.kwonlyargs):
            if parameter.arg in bindings:
                continue
            default = defaults.get(parameter.arg)
            if isinstance(default, ast.Constant) and isinstance(default.value, str):
                bindings[parameter.arg] = _literal(default.value)
            elif isinstance(default, ast.Constant) and default.value is None:
                bindings[parameter.arg] = dataclasses.replace(_value(parameter.arg), none=True)
            else:
                bindings[parameter.arg] = _value(parameter.arg)
                named = None if default is None else dotted_name(default)
                if classes is not None and named is not None:
                    classes[parameter.arg] = named
        for star in (spec.vararg, spec.kwarg):
            if star is not None:
                bindings[star.arg] = _value(star.arg)
        if passed is not None:
            passed.update(
                (name, text.qualified) for name, text in bindings.items() if text.qualified
            )
        return bindings

    def _built(
        self, context: _Context, value: ast.expr, seen: set[tuple[str, str]], depth: int
    ) -> tuple[str, _Text]:
        """(class, printed text) of an exception expression in a factory's body."""
        if isinstance(value, ast.Name) and value.id not in context.bindings:
            assigned = context.module.file.assigned(_spot_at(context), value.id)
            if assigned is None:
                raise _Unresolved(
                    f"returns {value.id}, which errcat cannot follow to the exception built"
                )
            value = assigned
        if not isinstance(value, ast.Call):
            raise _Unresolved(
                f"returns {context.module.source(value)}, whose class errcat cannot tell"
            )
        dotted = dotted_name(value.func)
        if dotted is None:
            raise _Unresolved("builds its exception from an expression errcat cannot read")
        # `raise exc(msg)` of a parameter the call left to its default class: that class.
        dotted = context.classes.get(dotted, dotted)
        arguments, keywords = self._call_texts(value, context)
        root, _, attribute = dotted.partition(".")
        path = context.module.file.display
        if root == context.self_name and attribute and "." not in attribute:
            owner = context.self_class
            found = None if owner is None else self.graph.method_of(*owner, attribute)
            if found is None:
                raise _Unresolved(f"calls {dotted}, which errcat cannot find")
            return self._through(*found, arguments, keywords, context.self_class, seen, depth + 1)
        if dotted == context.self_name and context.self_class is not None:
            # `cls(...)` in a classmethod: the class it is called on.
            class_name = self.graph.class_at(*context.self_class)
            if class_name is None:
                raise _Unresolved(f"builds {dotted}, which errcat cannot resolve to a class")
            composed = self._compose(class_name[0], arguments, keywords, depth + 1)
            if composed is None:
                raise _Unresolved(
                    f"builds {class_name[0]} from more than a message; errcat cannot tell its text"
                )
            return class_name[0], composed
        qualified = context.passed.get(dotted) or resolve(
            dotted, context.scope, context.module.module
        )
        if qualified is None:
            qualified = self._star_name(path, dotted)
        if qualified is None:
            raise _Unresolved(f"builds {dotted}, which errcat cannot resolve to a class")
        if self.graph.class_named(qualified) is None:
            function = self.graph.function_named(qualified)
            if function is not None:
                return self._through(
                    *function, arguments, keywords, _owner(self.graph, qualified), seen, depth + 1
                )
        named = self.graph.class_named(qualified)
        if named is not None:
            defined = self.graph.class_at(named[0], named[1])
            qualified = defined[0] if defined is not None else qualified
        composed = self._compose(qualified, arguments, keywords, depth + 1)
        if composed is None:
            raise _Unresolved(
                f"builds {qualified} from more than a message; errcat cannot tell its text"
            )
        return qualified, composed

    # -- calls of raise helpers -------------------------------------------------------------

    def raise_helpers(self, sites: Iterable[RaiseSite]) -> list[Helper]:
        """The raise helpers of the package (`extractor.helpers`): functions, not dunders,
        ending in a raise of an exception built from their parameters (read from the
        function's own source, which the site's context holds whole: `_may_help`), then,
        caller by caller, those ending in a call statement of a helper found so far."""
        found: dict[tuple[str, str], Helper] = {}
        for site in sites:
            if not _may_help(site) or site.path not in self._paths:
                continue
            assert site.function is not None and site.context is not None
            try:
                tree = ast.parse(textwrap.dedent(site.context.code))
            except (SyntaxError, ValueError, RecursionError):
                continue
            node = tree.body[0] if len(tree.body) == 1 else None
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            end = ending(node)
            if end is None or not isinstance(end.statement, ast.Raise):
                continue
            owner = site.function.rpartition(".")[0]
            method = bool(owner) and self.graph.class_at(site.path, owner) is not None
            parameters = call_parameters(node, method=method)
            assert end.statement.exc is not None
            used = {n.id for n in ast.walk(end.statement.exc) if isinstance(n, ast.Name)}
            if used & set(parameters):
                code = textwrap.dedent(site.context.code)
                through = functools.partial(self._seen_through, site.path, site.function)
                tests = guards(node, end, parameters, functools.partial(_segment, code), through)
                helper = Helper(site.path, site.function, tuple(tests))
                found[helper.key] = helper
        queue = list(found.values())
        while queue:
            inner = queue.pop()
            for path, qualname in self.graph.direct_callers(*inner.key):
                if (path, qualname) in found or path not in self._paths:
                    continue
                forwarding = self._forwarding(path, qualname, inner)
                if forwarding is not None:
                    found[forwarding.key] = forwarding
                    queue.append(forwarding)
        self._helpers = found
        return list(found.values())

    def _forwarding(self, path: str, qualname: str, inner: Helper) -> Helper | None:
        """The function as a helper ending in a call statement of `inner`, passing it some of
        its parameters; None when it is no such helper."""
        name = qualname.rpartition(".")[2]
        if name.startswith("__") and name.endswith("__"):
            return None
        try:
            module = self.module(path)
            node, scope = module.function(qualname)
        except _Unresolved:
            return None
        end = ending(node)
        if end is None or not isinstance(end.statement, ast.Expr):
            return None
        self_name, self_class = self._self_of(path, module, scope, node)
        assert isinstance(end.statement.value, ast.Call)
        if self._called(end.statement.value.func, module, scope, self_name, self_class) != (
            inner.key
        ):
            return None
        method = scope.parent is not None and scope.parent.kind == "class"
        parameters = call_parameters(node, method=method)
        passed = forwarded(end, inner, parameters, node)
        if passed is None:
            return None
        through = functools.partial(self._seen_through, path, qualname)
        own = guards(node, end, parameters, module.source, through)
        return Helper(path, qualname, (*own, *passed))

    def _seen_through(self, path: str, qualname: str, call: ast.Call) -> ast.expr | None:
        """The argument a call in the function `qualname` gives a function of the package
        that passes it through (`extractor.helpers.passes_through`), found through the
        function's imports (`expect_true`, imported inside `_check_with`); None for a call of
        anything else. Only a test that calls something other than a built-in asks, so only
        then are the files parsed."""
        try:
            module = self.module(path)
            _node, scope = module.function(qualname)
            target = self._called(call.func, module, scope, None, None)
            if target is None:
                return None
            owner = target[1].rpartition(".")[0]
            if owner and self.graph.class_at(target[0], owner) is not None:
                return None  # a method: its calls pass the instance first
            callee, _scope = self.module(target[0]).function(target[1])
        except _Unresolved:
            return None
        parameter = passes_through(callee)
        return None if parameter is None else argument_for(call, parameter)

    def helper_calls(self, helpers: list[Helper]) -> dict[str, list[RaiseSite]]:
        """By file, a site for each call statement of a raise helper whose text errcat reads
        through the helper; a call it cannot read is left out (the helper's own raise stays
        the site of what it raises), and so is one whose text holds no literal word (the call
        a helper ends in, passing its own callers' text on, among them: their calls are the
        sites)."""
        added: dict[str, list[RaiseSite]] = {}
        for helper in helpers:
            for path, qualname in self.graph.direct_callers(*helper.key):
                if path in self._paths:
                    for site in self._calls_in(path, qualname, helper):
                        added.setdefault(path, []).append(site)
        for sites in added.values():
            sites.sort(key=lambda site: (site.line, site.column))
        return added

    def _calls_in(self, path: str, qualname: str, helper: Helper) -> Iterator[RaiseSite]:
        try:
            module = self.module(path)
            node, scope = module.function(qualname)
        except _Unresolved:
            return
        self_name, self_class = self._self_of(path, module, scope, node)
        for block, index in _slots(node.body):
            statement = block[index]
            if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
                continue
            call = statement.value
            if self._called(call.func, module, scope, self_name, self_class) != helper.key:
                continue
            # The call stands in its block as the raise it amounts to, so that the scan's own
            # reading (message, conditions, context, ignore comment) finds it where it is;
            # the helper's tests of the arguments stand around it as `if`s of the call's own
            # arguments, read as the caller wrote them.
            raised = ast.copy_location(ast.Raise(exc=call, cause=None), statement)
            guarded = _guarded(raised, call, helper, statement, module)
            if guarded is None:
                continue
            block[index] = guarded
            try:
                read = self._call_site(module, Spot(raised, scope, node))
            finally:
                # The function is read again as it is written: as a helper's body, by a
                # later caller's reading.
                block[index] = statement
            if read is None:
                continue
            if not _LETTERS.search(_literal_part(read.printed or "")):
                # No word of its text is the call's own (`check(x, msg)`, `_check(i >= 0,
                # message)` passing its caller's, `f"{a} != {b}"`): nothing to find it by
                # that the helper's own raise does not say.
                continue
            yield read

    def _call_site(self, module: _Module, spot: Spot) -> RaiseSite | None:
        """The site of a helper call standing as a raise at `spot`, read through the helper;
        None where the scan's reading rejects it or the helper's text cannot be read."""
        try:
            site = dataclasses.replace(module.file.site(spot), call=True)
        except Exception:  # a call the scan's own reading rejects is left out
            return None
        read = self.site(site)
        if read.unresolved is not None or read.through is None or read.qualified_name is None:
            return None
        short = read.qualified_name.rpartition(".")[2]
        return dataclasses.replace(
            read, documented=module.file.documented(spot, short, read.qualified_name)
        )

    def _called(
        self,
        func: ast.expr,
        module: _Module,
        scope: Scope,
        self_name: str | None,
        self_class: tuple[str, str] | None,
    ) -> tuple[str, str] | None:
        """The (path, qualname) of the function a call statement calls, where the graph's
        rules find it (a method of `self`'s class, a function through the imports)."""
        dotted = dotted_name(func)
        if dotted is None:
            return None
        root, _, attribute = dotted.partition(".")
        if self_class is not None and root == self_name:
            if not attribute or "." in attribute:
                return None
            return self.graph.method_of(*self_class, attribute)
        qualified = resolve(dotted, scope, module.module) or self._star_name(
            module.file.display, dotted
        )
        if qualified is None or self.graph.class_named(qualified) is not None:
            return None
        return self.graph.function_named(qualified)

    # -- classes ----------------------------------------------------------------------------

    def _compose(
        self, qualified: str, arguments: list[_Text], keywords: dict[str, _Text], depth: int
    ) -> _Text | None:
        """What `str()` of the class built with these arguments prints; None when the class
        prints its one argument as given (the built-in rule) and nothing of the package
        composes it, or when that rule does not tell (several arguments)."""
        if depth > _DEPTH:
            raise _Unresolved(f"goes through more than {_DEPTH} constructors")
        named = self.graph.class_named(qualified)
        if named is None:
            return _plain(arguments, keywords)
        path, qualname, _bases = named
        printer = self.graph.method_of(path, qualname, "__str__")
        init = self.graph.method_of(path, qualname, "__init__")
        if printer is not None:
            try:
                return self._str(printer, init, (path, qualname), arguments, keywords, depth)
            except _Unreadable:
                return arguments[0] if arguments else None
        if init is None:
            return _plain(arguments, keywords)
        module = self.module(init[0])
        node, scope = module.function(init[1])
        bindings = self._bind(node, arguments, keywords, method=True, name=init[1])
        calls = list(_base_inits(node))
        if len(calls) > 1:
            raise _Unresolved(f"{init[1]} calls its base's __init__ more than once")
        if not calls:
            # BaseException keeps what the constructor was given as `args`: its positional
            # arguments only, as `__new__` saw them, which are these on the raise itself
            # (`WebSocketDisconnect(code=1006)` prints nothing).
            return _plain(arguments, {} if depth == 0 else keywords)
        statement, call, base = calls[0]
        context = _Context(module, scope, node, statement, bindings, None, None)
        reader = _SourceReader(self, context)
        # What `*args` and `**kwargs` pass on unchanged is what the constructor was given
        # beyond its named parameters (`def __init__(self, *args, **kwargs):
        # super().__init__(*args, **kwargs)`).
        spec = node.args
        parameters = [*spec.posonlyargs, *spec.args][1:]
        extra = arguments[len(parameters) :]
        passed: list[_Text] = []
        for argument in call.args:
            if isinstance(argument, ast.Starred) and _forwards(argument.value, spec.vararg, node):
                passed.extend(extra)
            else:
                passed.extend(
                    reader.passed_on(value) for value in _positional_one(argument, context)
                )
        if base is not None:
            passed = passed[1:]  # `Base.__init__(self, ...)`
        passed_keywords: dict[str, _Text] = {}
        own = {parameter.arg for parameter in (*parameters, *spec.kwonlyargs)}
        for keyword in call.keywords:
            if keyword.arg is None:
                if not _forwards(keyword.value, spec.kwarg, node):
                    raise _Unresolved(f"{init[1]} passes **kwargs to its base")
                passed_keywords.update((k, v) for k, v in keywords.items() if k not in own)
                continue
            passed_keywords[keyword.arg] = reader.expand(keyword.value)
        owner = init[1].rpartition(".")[0]
        target = self._base_of(init[0], owner, base, scope, module)
        if target is None:
            return _plain(passed, passed_keywords)
        return self._compose(target, passed, passed_keywords, depth + 1)

    def _attributes(
        self,
        init: tuple[str, str],
        arguments: list[_Text],
        keywords: dict[str, _Text],
        depth: int,
    ) -> dict[str, _Text]:
        """The `self.<attribute>` texts an `__init__` sets, through its base's `__init__` (the
        class's own assignments win, as they run after the base call sets its own)."""
        if depth > _DEPTH:
            return {}
        module = self.module(init[0])
        node, scope = module.function(init[1])
        bindings = self._bind(node, arguments, keywords, method=True, name=init[1])
        context = _Context(module, scope, node, node, bindings, None, None)
        reader = _SourceReader(self, context)
        found: dict[str, _Text] = {}
        calls = list(_base_inits(node))
        if len(calls) == 1:
            _statement, call, base = calls[0]
            passed = [reader.expand(argument) for argument in _positional(call, context)]
            if base is not None:
                passed = passed[1:]
            passed_keywords = {
                str(k.arg): reader.expand(k.value) for k in call.keywords if k.arg is not None
            }
            base_init = self._base_init(init, base, scope, module)
            if base_init is not None:
                found.update(self._attributes(base_init, passed, passed_keywords, depth + 1))
        for attribute, value in _self_assignments(node, _first_parameter(node)):
            found[attribute] = reader.expand(value)
        return found

    def _base_of(
        self, path: str, owner: str, named: str | None, scope: Scope, module: _Module
    ) -> str | None:
        """The class whose `__init__` a base call runs: `super()`'s next class (the first
        base), or the class named; None for a class outside the package."""
        if named is None:
            found = self.graph.class_at(path, owner)
            if found is None or not found[1]:
                return None
            base = found[1][0]
        else:
            base = resolve(named, scope, module.module) or ""
        if not base or self.graph.class_named(base) is None:
            return None
        located = self.graph.class_named(base)
        assert located is not None
        at = self.graph.class_at(located[0], located[1])
        return at[0] if at is not None else base

    def _str(
        self,
        printer: tuple[str, str],
        init: tuple[str, str] | None,
        owner: tuple[str, str],
        arguments: list[_Text],
        keywords: dict[str, _Text],
        depth: int,
    ) -> _Text:
        """`__str__`'s text, its `self.<attribute>` read through what `__init__` set them to.

        `return self.method()` reads that method's text instead (`formatted_message`); a
        property of the class, an attribute `__init__` sets on several paths and a local
        variable of the method are values of their own (`{lineno}`), as a parameter is."""
        qualname = owner[1]
        module = self.module(printer[0])
        node, scope = module.function(printer[1])
        statement, fallback = _printing_return(node, printer[1])
        for _hop in range(_DEPTH):
            called = _self_method_call(statement.value, _first_parameter(node))
            if called is None:
                break
            method = self.graph.method_of(*owner, called)
            if method is None:
                raise _Unreadable(f"{printer[1]} returns what {called} gives")
            module = self.module(method[0])
            node, scope = module.function(method[1])
            printer = method
            statement = _single_return(node, printer[1])
        attributes = self._attributes(init, arguments, keywords, depth) if init else {}
        assigned = self._assigned(init, depth) if init else set()
        self_name = _first_parameter(node)
        context = _Context(module, scope, node, statement, {}, None, None)
        returned = statement.value
        assert returned is not None
        if fallback:
            # `try: return <args formatted> except (TypeError, ...): return <fallback>`: the
            # try's text is what prints exactly when its formatting cannot fail.
            formatted = None if init else _args_formatted(returned, self_name, arguments)
            if formatted is None or keywords:
                raise _Unreadable(f"{printer[1]} returns on several paths")
            return formatted
        if (
            isinstance(returned, ast.Call)
            and isinstance(returned.func, ast.Name)
            and returned.func.id == "str"
            and len(returned.args) == 1
            and not returned.keywords
        ):
            returned = returned.args[0]  # `str(self.message)` prints what `self.message` does
        if isinstance(returned, ast.Attribute | ast.Name):
            template: str | None = "{" + module.source(returned) + "}"
        else:
            template = module.file.template(returned, _spot_at(context))
        if template is None and isinstance(returned, ast.BinOp):
            # `self.msg + self.report.what()`: `__str__` returns a `str`, so every operand of
            # its `+` is one, each a value where no rule reads its text.
            operands = _addends(returned)
            if operands is not None:
                texts = [module.file.template(operand, _spot_at(context)) for operand in operands]
                template = "".join(
                    text if text is not None else "{" + module.source(operand) + "}"
                    for operand, text in zip(operands, texts, strict=True)
                )
        if template is None:
            raise _Unreadable(f"errcat cannot read the text {printer[1]} returns")
        local = _locals(node)
        pieces: list[str] = []
        for is_field, text in _fields(template):
            if not is_field:
                pieces.append(text)
                continue
            expression, rest = _split_field(text)
            root, _, attribute = expression.strip().partition(".")
            if not attribute and root in local:
                pieces.append(_splice(root, rest, _value(root)))
                continue
            head = re.match(r"\w*", attribute)
            if (
                root == self_name
                and head is not None
                and head.group()
                and not attribute.isidentifier()
                and (
                    head.group() in attributes
                    or head.group() in assigned
                    or self._is_property(owner, head.group())
                )
            ):
                # Computed from what construction set (`self.report.what().lstrip()`): a
                # value of its own.
                pieces.append(_splice(attribute, rest, _value(attribute)))
                continue
            if root != self_name or not attribute.isidentifier():
                raise _Unresolved(
                    f"{printer[1]} prints {expression.strip()}, which is not an attribute set "
                    "from the constructor's parameters"
                )
            if attribute in attributes:
                pieces.append(_splice(attribute, rest, attributes[attribute]))
            elif attribute in assigned or self._is_property(owner, attribute):
                pieces.append(_splice(attribute, rest, _value(attribute)))
            else:
                raise _Unresolved(
                    f"{printer[1]} reads self.{attribute}, which {qualname}'s __init__ does "
                    "not set from its parameters (state set after construction)"
                )
        return _text_of("".join(pieces))

    def _assigned(self, init: tuple[str, str], depth: int) -> set[str]:
        """Every attribute an `__init__` (or its bases', along single bases) assigns to
        `self`, on whatever path."""
        names: set[str] = set()
        current: tuple[str, str] | None = init
        for _hop in range(_DEPTH - min(depth, _DEPTH - 1)):
            if current is None:
                break
            module = self.module(current[0])
            node, scope = module.function(current[1])
            self_name = _first_parameter(node)
            for statement in _own(node.body):
                for target in _targets(statement):
                    for element in ast.walk(target):
                        if (
                            isinstance(element, ast.Attribute)
                            and isinstance(element.value, ast.Name)
                            and element.value.id == self_name
                        ):
                            names.add(element.attr)
            calls = list(_base_inits(node))
            if len(calls) != 1:
                break
            _statement, _call, base = calls[0]
            current = self._base_init(current, base, scope, module)
        return names

    def _base_init(
        self, init: tuple[str, str], base: str | None, scope: Scope, module: _Module
    ) -> tuple[str, str] | None:
        """The `__init__` an `__init__`'s base call runs (`super().__init__` for `base` None,
        `Base.__init__(self, ...)` otherwise), where it is the package's."""
        located = self._base_of(init[0], init[1].rpartition(".")[0], base, scope, module)
        named = None if located is None else self.graph.class_named(located)
        return None if named is None else self.graph.method_of(named[0], named[1], "__init__")

    def _is_property(self, owner: tuple[str, str], attribute: str) -> bool:
        """Whether the class (or a base) defines `attribute` as a property: a value computed
        from the instance, which `str()` prints whatever it is."""
        method = self.graph.method_of(*owner, attribute)
        if method is None:
            return False
        try:
            node, _scope = self.module(method[0]).function(method[1])
        except _Unresolved:
            return False
        return any(
            (dotted_name(d) or "").rpartition(".")[2] in ("property", "cached_property")
            for d in node.decorator_list
        )


_FORMAT_ERRORS = frozenset(("TypeError", "IndexError", "KeyError", "ValueError"))
"""What a failed `%` or `str.format` raises: a handler of these alone is a fallback for text
that could not be formatted."""


def _printing_return(
    node: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> tuple[ast.Return, bool]:
    """The return that prints, and whether it is the body of `try: return <text> except
    <formatting errors>: return <fallback>` (then its text prints only where formatting it
    cannot fail, which the caller decides)."""
    try:
        return _single_return(node, name), False
    except _Unreadable:
        body = node.body[1:] if ast.get_docstring(node) is not None else node.body
        if not (len(body) == 1 and isinstance(body[0], ast.Try)):
            raise
        attempt = body[0]
        if (
            len(attempt.body) != 1
            or not isinstance(attempt.body[0], ast.Return)
            or attempt.body[0].value is None
            or attempt.orelse
            or attempt.finalbody
            or not all(_catches_only(h.type, _FORMAT_ERRORS) for h in attempt.handlers)
        ):
            raise
        return attempt.body[0], True


def _catches_only(caught: ast.expr | None, names: frozenset[str]) -> bool:
    elements = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return all(isinstance(e, ast.Name) and e.id in names for e in elements)


_PERCENT = re.compile(r"%(.)", re.DOTALL)


def _args_formatted(
    returned: ast.expr, self_name: str | None, arguments: list[_Text]
) -> _Text | None:
    """`self.args[i] % self.args[j:]` (or a tuple of `self.args[k]`, or one of them) over the
    raise's positional arguments, where `args[i]` is literal text whose only conversions are
    `%s` and `%r`, as many as the values: the one shape of `%` that cannot fail. None for any
    other."""
    if not (isinstance(returned, ast.BinOp) and isinstance(returned.op, ast.Mod)):
        return None
    left = _args_item(returned.left, self_name)
    if left is None or left >= len(arguments):
        return None
    form = arguments[left].literal
    if form is None:
        return None
    right = returned.right
    values: list[_Text] = []
    if isinstance(right, ast.Tuple):
        indexes = [_args_item(element, self_name) for element in right.elts]
        if any(i is None or i >= len(arguments) for i in indexes):
            return None
        values = [arguments[i] for i in indexes if i is not None]
    elif (start := _args_slice(right, self_name)) is not None:
        values = arguments[start:]
    elif (single := _args_item(right, self_name)) is not None and single < len(arguments):
        values = [arguments[single]]
    else:
        return None
    conversions = _PERCENT.findall(form)
    if any(c not in "sr%" for c in conversions):
        return None
    if sum(c != "%" for c in conversions) != len(values):
        return None
    pieces: list[str] = []
    remaining = iter(values)
    last = 0
    for match in _PERCENT.finditer(form):
        pieces.append(escape(form[last : match.start()]))
        last = match.end()
        if match.group(1) == "%":
            pieces.append("%")
            continue
        value = next(remaining)
        if match.group(1) == "s":
            pieces.append(value.template)
        elif value.literal is not None:
            pieces.append(escape(repr(value.literal)))
        elif value.bare:
            pieces.append(value.template[:-1] + "!r}")
        else:
            return None
    pieces.append(escape(form[last:]))
    return _text_of("".join(pieces))


def _args_item(node: ast.expr, self_name: str | None) -> int | None:
    """`i` of `self.args[i]` (a non-negative literal index), else None."""
    if (
        isinstance(node, ast.Subscript)
        and _is_self_args(node.value, self_name)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
        and node.slice.value >= 0
    ):
        return node.slice.value
    return None


def _args_slice(node: ast.expr, self_name: str | None) -> int | None:
    """`j` of `self.args[j:]`, else None."""
    if not (isinstance(node, ast.Subscript) and _is_self_args(node.value, self_name)):
        return None
    part = node.slice
    if not isinstance(part, ast.Slice) or part.upper is not None or part.step is not None:
        return None
    if part.lower is None:
        return 0
    if isinstance(part.lower, ast.Constant) and type(part.lower.value) is int:
        return part.lower.value if part.lower.value >= 0 else None
    return None


def _is_self_args(node: ast.expr, self_name: str | None) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "args"
        and isinstance(node.value, ast.Name)
        and node.value.id == self_name
    )


def _single_return(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.Return:
    returns = [s for s, v in _produced(node, returns_only=True) if v is not None]
    if len(returns) != 1:
        raise _Unreadable(f"{name} returns on several paths")
    statement = returns[0]
    assert isinstance(statement, ast.Return) and statement.value is not None
    return statement


def _self_method_call(value: ast.expr | None, self_name: str | None) -> str | None:
    """The name of the method in `return self.method()`, or None."""
    if (
        isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == self_name
    ):
        return value.func.attr
    return None


def _locals(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a method's own statements assign (its local variables)."""
    names: set[str] = set()
    for statement in _own(node.body):
        for target in _targets(statement):
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _targets(statement: ast.stmt) -> list[ast.expr]:
    """What an assignment statement (plain, annotated or augmented) binds; none otherwise."""
    if isinstance(statement, ast.Assign):
        return statement.targets
    if isinstance(statement, ast.AnnAssign | ast.AugAssign):
        return [statement.target]
    return []


_FIX = f"give the raise its class and message by name, {_DO}"


def _owner(graph: CallGraph, qualified: str) -> tuple[str, str] | None:
    """The class a `Class.method` name is called on, as (path, qualname), or None."""
    owner = qualified.rpartition(".")[0]
    found = graph.class_named(owner) if owner else None
    return None if found is None else (found[0], found[1])


def _raised_call(site: RaiseSite, context: _Context) -> ast.Call | None:
    """The call a site's raise statement raises, found in its function by position: in
    `raise X(...).with_traceback(tb)`, the call of X, as the scan reads it."""
    assert context.function is not None
    for statement in _own(context.function.body):
        if isinstance(statement, ast.Raise) and statement.lineno == site.line:
            exc = statement.exc
            if (
                isinstance(exc, ast.Call)
                and isinstance(exc.func, ast.Attribute)
                and exc.func.attr == "with_traceback"
                and isinstance(exc.func.value, ast.Call)
            ):
                exc = exc.func.value
            return exc if isinstance(exc, ast.Call) else None
    return None


def _spot_at(context: _Context) -> Spot:
    return context.spot()


def _plain(arguments: list[_Text], keywords: dict[str, _Text]) -> _Text | None:
    """The built-in rule: no argument prints nothing, one prints itself."""
    if keywords:
        return None
    if not arguments:
        return _literal("")
    if len(arguments) == 1:
        return arguments[0]
    return None


def _splice(name: str, rest: str, text: _Text) -> str:
    """A field of parameter `name`, bound to `text`: the text itself where it is text, the
    parameter's name where it is a value."""
    if not rest and not text.bare:
        return text.template
    if rest == "!r" and text.literal is not None:
        return escape(repr(text.literal))
    return "{" + name + rest + "}"


def _addends(node: ast.BinOp) -> list[ast.expr] | None:
    """The operands of a chain of `+`, left to right; None for any other operator."""
    if not isinstance(node.op, ast.Add):
        return None
    left = _addends(node.left) if isinstance(node.left, ast.BinOp) else [node.left]
    return None if left is None else [*left, node.right]


def _first_parameter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    positional = [*node.args.posonlyargs, *node.args.args]
    return positional[0].arg if positional else None


def _positional(call: ast.Call, context: _Context) -> list[ast.expr]:
    return [value for argument in call.args for value in _positional_one(argument, context)]


def _positional_one(argument: ast.expr, context: _Context) -> list[ast.expr]:
    if isinstance(argument, ast.Starred):
        raise _Unresolved(
            f"passes *{context.module.source(argument.value)}, whose values the source does "
            "not hold"
        )
    return [argument]


def _forwards(
    value: ast.expr, star: ast.arg | None, function: ast.FunctionDef | ast.AsyncFunctionDef
) -> bool:
    """Whether `value` (what `*` or `**` unpacks in a call) is the function's own `*args` or
    `**kwargs` parameter, never bound again."""
    return (
        star is not None
        and isinstance(value, ast.Name)
        and value.id == star.arg
        and not rebinds(function, star.arg)
    )


def _local_literal(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> str | None:
    """The literal text a local of `function` holds: its one binding in the function's own
    body is `name = "..."` and it is no parameter; None otherwise."""
    if name in parameter_names(function):
        return None
    found: str | None = None
    for statement in _own(function.body):
        if name not in bound_names([statement]):
            continue
        if (
            found is not None
            or not isinstance(statement, ast.Assign)
            or len(statement.targets) != 1
            or not isinstance(statement.targets[0], ast.Name)
            or not isinstance(statement.value, ast.Constant)
            or not isinstance(statement.value.value, str)
        ):
            return None
        found = statement.value.value
    return found


def _own(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for block, index in _slots(body):
        yield block[index]


def _slots(body: list[ast.stmt]) -> Iterator[tuple[list[ast.stmt], int]]:
    """(block, index) of each statement of a function's own body, nested blocks included and
    nested definitions not: where a statement may be replaced in place."""
    for index, statement in enumerate(body):
        yield body, index
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _slots(getattr(statement, name, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            yield from _slots(handler.body)
        for case in getattr(statement, "cases", None) or []:
            yield from _slots(case.body)


def _ended(end: Ending) -> tuple[ast.stmt, ast.expr]:
    """A helper's ending as what it produces: the exception raised, or the helper called."""
    statement = end.statement
    if isinstance(statement, ast.Raise):
        assert statement.exc is not None
        return statement, statement.exc
    return statement, statement.value


def _produced(
    node: ast.FunctionDef | ast.AsyncFunctionDef, *, returns_only: bool = False
) -> list[tuple[ast.stmt, ast.expr]]:
    """The exception expressions a function returns or raises (not a bare raise, nor a raise
    of what an `except` caught: those are the caller's own errors passing through)."""
    found: list[tuple[ast.stmt, ast.expr]] = []
    caught = {
        handler.name
        for statement in _own(node.body)
        for handler in getattr(statement, "handlers", None) or []
        if handler.name
    }
    for statement in _own(node.body):
        if isinstance(statement, ast.Return) and statement.value is not None:
            found.append((statement, statement.value))
        elif isinstance(statement, ast.Raise) and statement.exc is not None and not returns_only:
            if isinstance(statement.exc, ast.Name) and statement.exc.id in caught:
                continue
            found.append((statement, statement.exc))
    return found


def _base_inits(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> Iterator[tuple[ast.stmt, ast.Call, str | None]]:
    """The `super().__init__(...)` (base None) and `Base.__init__(self, ...)` calls of an
    `__init__`, with their statements."""
    for statement in _own(node.body):
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        call = statement.value
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "__init__":
            continue
        if (
            isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
        ):
            yield statement, call, None
            continue
        named = dotted_name(func.value)
        if named is not None:
            yield statement, call, named


def _defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Each parameter's default expression, by the parameter's name."""
    spec = node.args
    positional = [p.arg for p in (*spec.posonlyargs, *spec.args)]
    defaults = dict(
        zip(positional[len(positional) - len(spec.defaults) :], spec.defaults, strict=True)
    )
    for parameter, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True):
        if default is not None:
            defaults[parameter.arg] = default
    return defaults


def _held(exception: str) -> bool:
    """Whether a raised name may hold a class through a parameter: `exc`, `self._exc`."""
    parts = exception.split(".")
    return len(parts) <= 2 and all(part.isidentifier() for part in parts)


def _attribute_assignments(
    node: ast.FunctionDef | ast.AsyncFunctionDef, attribute: str
) -> Iterator[ast.expr]:
    """The values a method assigns to `<first parameter>.<attribute>`, anywhere in its body
    (`del` and augmented assignments count as assignments of no readable value)."""
    positional = [*node.args.posonlyargs, *node.args.args]
    if not positional:
        return
    owner = positional[0].arg
    for inner in ast.walk(node):
        targets: list[ast.expr] = []
        value: ast.expr = ast.Constant(None)
        if isinstance(inner, ast.Assign):
            targets, value = inner.targets, inner.value
        elif isinstance(inner, ast.AnnAssign):
            targets = [inner.target]
            value = inner.value if inner.value is not None else value
        elif isinstance(inner, ast.AugAssign):
            targets = [inner.target]
        elif isinstance(inner, ast.Delete):
            targets = inner.targets
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == attribute
                and isinstance(target.value, ast.Name)
                and target.value.id == owner
            ):
                yield value


def _self_assignments(
    node: ast.FunctionDef | ast.AsyncFunctionDef, self_name: str | None
) -> Iterator[tuple[str, ast.expr]]:
    """`self.<attribute> = <value>` statements of a method, in order; an attribute assigned
    twice is not yielded (its value depends on the path taken)."""
    counted: dict[str, list[ast.expr]] = {}
    for statement in _own(node.body):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
                and value is not None
            ):
                counted.setdefault(target.attr, []).append(value)
    for attribute, values in counted.items():
        if len(values) == 1:
            yield attribute, values[0]


class _SourceReader:
    """Reads an expression of a factory's (or constructor's) body into text, over the
    parameters bound in its context."""

    def __init__(self, printed: Printed, context: _Context, source: None = None) -> None:
        self.printed = printed
        self.context = context

    def expand(self, node: ast.expr) -> _Text:
        context = self.context
        bindings = context.bindings
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _literal(node.value)
        if isinstance(node, ast.Constant) and node.value is None:
            return dataclasses.replace(_value("None"), none=True)
        if isinstance(node, ast.Name) and node.id in bindings:
            return bindings[node.id]
        if isinstance(node, ast.Lambda):
            if _takes_arguments(node.args):
                return _value(self.text(node))
            # What a call of it gives is read where it is written, over its own scope.
            return dataclasses.replace(
                _value(self.text(node)), none=False, called=self.expand(node.body)
            )
        if isinstance(node, ast.Call):
            called = self.call(node)
            if called is not None:
                return called
        if isinstance(node, ast.Subscript):
            table = self.table(node)
            if table is not None:
                return table
        template = self.template(node)
        if template is None and isinstance(node, ast.Name):
            branched = self.branched(node.id)
            if branched is not None:
                return branched
            opening = self.opening(node)
            if opening is not None:
                return self.substitute(opening)
        if template is None:
            text = _value(self.text(node))
            qualified = self.class_name(node)
            return text if qualified is None else dataclasses.replace(text, qualified=qualified)
        return self.substitute(template)

    def passed_on(self, node: ast.expr) -> _Text:
        """What a constructor passes its base: `expand`, but a parameter it binds again before
        the statement read (`msg = f"[{code}] {msg}"`) is read through those bindings, taken
        as the branches the call decides; where it only extends it (`if case: msg += ...`),
        its text is where the message starts; otherwise it cannot be read."""
        context = self.context
        function = context.function
        if (
            not isinstance(node, ast.Name)
            or node.id not in context.bindings
            or function is None
            or not rebinds(function, node.id)
        ):
            return self.expand(node)
        before = [
            statement
            for statement in _own(function.body)
            if statement.lineno < context.at.lineno
            and not isinstance(statement, _BLOCKS)
            and node.id in bound_names([statement])
        ]
        if not before:
            return self.expand(node)
        branched = self.branched(node.id)
        if branched is not None:
            return branched
        if all(
            isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add)
            for statement in before
        ):
            return self.expand(node)
        raise _Unresolved(
            f"{node.id} is bound again on line {before[-1].lineno} before it is passed on"
        )

    def call(self, node: ast.Call) -> _Text | None:
        """The text of a call the rules read: gettext of a literal, `format`/`format_map` of
        text, `str()` of a text, a call of a bound function of no parameters."""
        index = gettext_argument(dotted_name(node.func), len(node.args))
        if index is not None:
            return self.expand(node.args[index])
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("format_map", "format"):
            return self.formatted(node, func)
        if (
            isinstance(func, ast.Attribute)
            and func.attr in TEXT_METHODS
            and not node.args
            and not node.keywords
        ):
            # `.strip()` of a text: its literal ends stripped. A value left at a stripped end
            # may lose blanks of its own, which its placeholder stands for all the same (what
            # is read here prints through a function or class: never rewritten as written).
            inner = self.expand(func.value)
            return None if inner.bare else _text_of(TEXT_METHODS[func.attr](inner.template))
        if not isinstance(func, ast.Name):
            return None
        bound = self.context.bindings.get(func.id)
        if bound is not None:
            return None if node.args or node.keywords else bound.called
        context = self.context
        if (
            len(node.args) == 1
            and not node.keywords
            and not isinstance(node.args[0], ast.Starred)
            and resolve(func.id, context.scope, context.module.module) == "builtins.str"
        ):
            # A field prints what str() of its value gives: str() adds nothing to it.
            return dataclasses.replace(self.expand(node.args[0]), called=None)
        return None

    def class_name(self, node: ast.expr) -> str | None:
        """The qualified name of the exception class a name or attribute names, in the scope
        it is read in; None for anything else."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        context = self.context
        qualified = resolve(dotted, context.scope, context.module.module)
        if qualified is None:
            return None
        if qualified.startswith("builtins."):
            return qualified if is_builtin_exception(qualified) else None
        return qualified if self.printed.graph.class_named(qualified) is not None else None

    def branched(self, name: str) -> _Text | None:
        """A local the function binds on the branches of `if`s the bindings decide (`if
        message is None:` where the call passed a message), read from the branch taken; None
        when it is not such a local, or a test cannot be decided."""
        function = self.context.function
        if function is None:
            return None
        for block, index in _slots(function.body):
            if block[index] is self.context.at:
                return self._last_binding(block[:index], name)
        return None

    def _last_binding(self, statements: list[ast.stmt], name: str) -> _Text | None:
        for statement in reversed(statements):
            if name not in bound_names([statement]):
                continue
            if isinstance(statement, ast.Assign):
                targets = statement.targets
                if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                    return None
                context = dataclasses.replace(self.context, at=statement)
                return _SourceReader(self.printed, context).expand(statement.value)
            if not isinstance(statement, ast.If):
                return None
            taken = self.decide(statement.test)
            if taken is None:
                return None
            branch = statement.body if taken else statement.orelse
            if name in bound_names(branch):
                return self._last_binding(branch, name)
        return None

    def opening(self, node: ast.Name) -> str | None:
        """The text a local starts with where the function extends it under conditions after
        its last plain step (`message = f"{msg} [Caused by {value}]"`, then `if location:
        message += ...`), read at the statement the context is at; None for any other name."""
        function = self.context.function
        if function is None:
            return None
        spot = Spot(self.context.at, self.context.scope, function)  # type: ignore[arg-type]
        try:
            return self.context.module.file.opening(node, spot)
        except Exception:
            return None

    def decide(self, test: ast.expr) -> bool | None:
        """Whether a test of a bound parameter holds for the call read: `x is None`, `x is
        not None`, `x` and `not x`, where the binding tells; None where it does not."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.decide(test.operand)
            return None if inner is None else not inner
        bindings = self.context.bindings
        if isinstance(test, ast.Name):
            bound = bindings.get(test.id)
            if bound is None:
                return None
            if bound.none:
                return False
            if bound.called is not None:
                return True
            return None if bound.literal is None else bool(bound.literal)
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Is | ast.IsNot)
            and isinstance(test.left, ast.Name)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            bound = bindings.get(test.left.id)
            if bound is None or bound.none is None:
                return None
            return bound.none if isinstance(test.ops[0], ast.Is) else not bound.none
        return None

    def text(self, node: ast.expr) -> str:
        return self.context.module.source(node)

    def template(self, node: ast.expr) -> str | None:
        try:
            return self.context.module.file.template(node, _spot_at(self.context))
        except Exception:
            return None

    def substitute(self, template: str) -> _Text:
        """A template over the context's names with each bound parameter's text in place, and
        the text of each field `field_text` reads."""
        bindings = self.context.bindings
        pieces: list[str] = []
        for is_field, text in _fields(template):
            if not is_field:
                pieces.append(text)
                continue
            expression, rest = _split_field(text)
            name = expression.strip()
            if name in bindings:
                pieces.append(_splice(name, rest, bindings[name]))
                continue
            found = self.field_text(name)
            pieces.append("{" + text + "}" if found is None else _splice(found[0], rest, found[1]))
        return _text_of("".join(pieces))

    def field_text(self, expression: str) -> tuple[str, _Text] | None:
        """The text of a field that is no bound parameter, where it is known, and the name of
        its placeholder where it is a value: `str(x)` of a bound parameter `x` prints what x's
        text says (`{x}` where that is a value); a local the function binds once, to literal
        text (`extra = "..."`, then `f"{extra}: {str(original)}"` in a constructor), is that
        text. None for any other field."""
        try:
            node = ast.parse(expression, mode="eval").body
        except SyntaxError:
            return None
        context = self.context
        if (
            isinstance(node, ast.Call)
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in context.bindings
        ):
            # Read as `call` reads it where it is the message: only a bound argument, since
            # a field's parsed nodes lie nowhere in the file.
            text = self.call(node)
            return None if text is None else (node.args[0].id, text)
        if isinstance(node, ast.Name) and context.function is not None:
            literal = _local_literal(context.function, node.id)
            return None if literal is None else (node.id, _literal(literal))
        return None

    def formatted(self, node: ast.Call, func: ast.Attribute) -> _Text | None:
        """`text.format_map({"k": v})` and `text.format(a, k=v)` of a text with literal parts:
        each `{k}` of its literal text becomes v's text, each `{}` or `{0}` the text of the
        positional argument it numbers (`msg.format(expected, list(hx.size()))`, `msg` a
        parameter whose literal default or argument says "Expected hidden size {}, got {}")."""
        mapping: dict[str, _Text] = {}
        if func.attr == "format_map":
            if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Dict):
                return None
            for key, value in zip(node.args[0].keys, node.args[0].values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    return None
                mapping[key.value] = self.expand(value)
        else:
            if any(isinstance(argument, ast.Starred) for argument in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                return None
            mapping = {str(k.arg): self.argument(k.value) for k in node.keywords}
            for index, argument in enumerate(node.args):
                mapping[str(index)] = self.argument(argument)
        base = self.expand(func.value)
        if base.bare:
            return None
        pieces: list[str] = []
        numbering = _Numbering()
        for is_field, text in _fields(base.template):
            if is_field:
                pieces.append("{" + text + "}")
                continue
            pieces.append(_format_literal(text, mapping, numbering))
        return _text_of("".join(pieces))

    def argument(self, node: ast.expr) -> _Text:
        """A formatting argument's text: a bound parameter holding a value stands under the
        parameter's name, as in an f-string's field (`_splice`), so that calls passing
        different expressions print one template."""
        text = self.expand(node)
        if isinstance(node, ast.Name) and node.id in self.context.bindings and text.bare:
            return _value(node.id)
        return text

    def table(self, node: ast.Subscript) -> _Text | None:
        """`self.<table>[key]` with a literal key: the text a class-level dict holds for it."""
        value = node.value
        context = self.context
        if not (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == context.self_name
        ):
            return None
        key = self.expand(node.slice)
        if key.literal is None:
            raise _Unresolved(
                f"reads self.{value.attr}[...] with a key that is not literal text at this call"
            )
        if context.self_class is None:
            return None
        found = self.printed.table(context.self_class, value.attr, key.literal)
        if found is None:
            raise _Unresolved(
                f"reads self.{value.attr}[{key.literal!r}], which no class-level dict literal "
                f"named {value.attr} (or ending in _{value.attr}) holds on the class or its "
                "bases (a table built at run time)"
            )
        return found


_BLOCKS = (ast.If, ast.While, ast.Try, ast.TryStar)
"""Statements that bind nothing themselves: what their blocks bind is listed on its own."""


def _takes_arguments(spec: ast.arguments) -> bool:
    return bool(spec.posonlyargs or spec.args or spec.vararg or spec.kwonlyargs or spec.kwarg)


@dataclass
class _Numbering:
    """`str.format`'s numbering of `{}` fields, across a text's literal runs: automatic
    (`{}`, counted) or manual (`{0}`), never both."""

    automatic: int = 0
    manual: bool = False

    def field(self, name: str) -> str:
        if name == "":
            if self.manual:
                raise _Unresolved("formats text mixing {} and numbered fields")
            self.automatic += 1
            return str(self.automatic - 1)
        if name.isdigit():
            if self.automatic:
                raise _Unresolved("formats text mixing {} and numbered fields")
            self.manual = True
        return name


def _format_literal(text: str, mapping: dict[str, _Text], numbering: _Numbering) -> str:
    """`str.format` of literal template text (braces doubled) over the call's arguments:
    `{{k}}` is the keyword k, `{{}}` the next positional argument, `{{0}}` the first. A value's
    field keeps the conversion and spec (`{x!r}`, `{x:.2f}`); literal text takes `!r` alone,
    as `repr` gives it. A field reaching into its value (`{0.name}`, `{k[0]}`), a spec holding
    a field, or text `str.format` itself rejects leaves the call unread."""
    raw = text.replace("{{", "{").replace("}}", "}")
    try:
        parsed = list(string.Formatter().parse(raw))
    except ValueError:
        raise _Unresolved("formats text str.format cannot read") from None
    pieces: list[str] = []
    for literal, name, spec, conversion in parsed:
        pieces.append(escape(literal))
        if name is None:
            continue
        key = numbering.field(name)
        if key not in mapping:
            raise _Unresolved(f"formats {{{name}}} with no value for it")
        if spec and "{" in spec:
            raise _Unresolved(f"formats {{{name}}} with a spec read at run time")
        rest = (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
        found = mapping[key]
        if found.bare:
            expression, own = _split_field(found.template[1:-1])
            if own and rest:
                raise _Unresolved(f"formats {{{name}}} over a value formatted already")
            pieces.append("{" + expression + (rest or own) + "}")
        elif not rest:
            pieces.append(found.template)
        elif rest == "!r" and found.literal is not None:
            pieces.append(escape(repr(found.literal)))
        else:
            raise _Unresolved(f"formats {{{name}}} of text with {rest}")
    return "".join(pieces)


def _table_values(node: ast.ClassDef, attribute: str) -> list[ast.Dict]:
    found: list[ast.Dict] = []
    for statement in node.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign):
            targets, value = [statement.target], statement.value
        for target in targets:
            if (
                isinstance(target, ast.Name)
                and (target.id == attribute or target.id.endswith("_" + attribute))
                and isinstance(value, ast.Dict)
            ):
                found.append(value)
    return found


def read_printed(
    report: ScanReport, *, cwd: Path, cache_dir: Path | None = None, jobs: int | None = None
) -> ScanReport:
    """The report with each site read through the package's factories and classes.

    `cwd` is the folder the report's paths are relative to; `cache_dir` is the scan's cache
    folder, whose call summaries make the call graph without parsing the files again.
    """
    if not any(_candidate(site) or _may_help(site) for site in report.sites):
        return report
    graph = call_graph(report, cwd=cwd, cache_dir=cache_dir, jobs=jobs)
    printed = Printed(report, graph, cwd)
    results: list[FileResult] = []
    changed = False
    read = [
        tuple(printed.site(site) if _candidate(site) else site for site in result.sites)
        for result in report.results
    ]
    # Read after every raise, so that a helper's own raise was read as any other; a file's
    # helper calls follow its raises, keeping the scan's sites where they were.
    calls = printed.helper_calls(printed.raise_helpers(report.sites))
    for result, sites in zip(report.results, read, strict=True):
        added = tuple(calls.get(result.path, ()))
        if added or any(new is not old for new, old in zip(sites, result.sites, strict=True)):
            changed = True
            result = dataclasses.replace(result, sites=sites + added)
        results.append(result)
    if not changed:
        return report
    return dataclasses.replace(report, results=tuple(results))


def _may_help(site: RaiseSite) -> bool:
    """A raise that may be a raise helper's (`Printed.raise_helpers` reads the function), told
    from what the scan kept, so that other files are never parsed again for it: in a
    function, not a dunder, raising a call with nothing but exits and `if`s enclosing it, and
    the last statement of a function short enough for its page to show it whole (helpers are
    short), which returns no value and never yields."""
    function = site.function
    context = site.context
    if (
        site.reraise
        or function is None
        or site.arguments is None
        or context is None
        or not all(condition.kind in ("guard", "if") for condition in site.conditions)
    ):
        return False
    name = function.rpartition(".")[2]
    if name.startswith("__") and name.endswith("__"):
        return False
    lines = context.code.split("\n")
    return (
        context.start_line + len(lines) - 1 == site.end_line
        and lines[0].lstrip().startswith(("def ", "async def ", "@"))
        and _EXITS.search(context.code) is None
    )


def _guarded(
    raised: ast.Raise, call: ast.Call, helper: Helper, statement: ast.stmt, module: _Module
) -> ast.stmt | None:
    """The raise a helper's call amounts to, inside an `if` for each guard of the helper the
    call passes arguments for: `if <test>: <raise>` where the test holding raises, and `if
    <test>: pass` / `else: <raise>` where its failing does (read as the test's negation,
    `extractor.written`), all on the call's own lines. A plain guard's test is the argument
    itself, as the caller wrote it; any other is the helper's test with each parameter
    replaced by the argument's text (`not isinstance(tensor, torch.Tensor)`). None for a call
    whose constant argument says it never raises."""
    node: ast.stmt = raised
    for guard in reversed(helper.guards):
        plain = guard.plain
        if plain is not None:
            test = argument_for(call, plain)
            if isinstance(test, ast.Constant):
                if bool(test.value) != guard.raises_when:
                    return None  # `check(True, ...)`: this call never raises
                continue  # `check(False, ...)`: it always does, as far as this test goes
        else:
            test = _said(_in_arguments(guard, call, module), statement)
        if test is None:
            continue
        if guard.raises_when:
            wrapper = ast.If(test=test, body=[node], orelse=[])
        else:
            passed = ast.copy_location(ast.Pass(), statement)
            wrapper = ast.If(test=test, body=[passed], orelse=[node])
        node = ast.copy_location(wrapper, statement)
    return node


def _in_arguments(guard: Guard, call: ast.Call, module: _Module) -> str | None:
    """A guard's test with each parameter it reads replaced by the call's argument for it;
    None where the call leaves one to its default."""
    values: dict[str, str] = {}
    for place in guard.reads:
        argument = argument_for(call, place)
        if argument is None:
            return None
        text = module.source(argument)
        values[place.name] = text if level(argument) == ATOM else f"({text})"
    return substituted(guard.code, values)


def _said(code: str | None, statement: ast.stmt) -> ast.expr | None:
    """An expression for `code`, each of its nodes carrying its own text (`SAID`, which the
    scan's reading gives as the node's source) and placed on the statement's lines."""
    if code is None:
        return None
    wrapped = f"(\n{code}\n)"
    try:
        tree = ast.parse(wrapped, mode="eval")
    except SyntaxError:
        return None
    for inner in ast.walk(tree.body):
        if isinstance(inner, ast.expr):
            segment = ast.get_source_segment(wrapped, inner)
            if segment is not None:
                setattr(inner, SAID, segment)
            ast.copy_location(inner, statement)
    return tree.body


def _segment(code: str, node: ast.expr) -> str:
    segment = ast.get_source_segment(code, node)
    return segment if segment is not None else ast.unparse(node)


_EXITS = re.compile(r"\byield\b|\breturn[ \t]+(?!None\b)[^\s#;]")
"""A `yield`, or a `return` of a value other than None: no helper's body holds one."""


def _candidate(site: RaiseSite) -> bool:
    """A site a factory or a class of the package may stand behind, whose message is a call
    that may be a function of the package returning text, or a local the scan could not read
    whole (the others never pay)."""
    if site.reraise or site.exception is None:
        return False
    qualified = site.qualified_name
    return (
        qualified is None
        or not qualified.startswith("builtins.")
        or _message_call(site) is not None
        or (site.template is None and _names_a_local(site))
    )


def _dotted(module: str, qualname: str) -> str:
    """A function's qualified name: its module's dotted name, where its file has one, then
    its own."""
    return f"{module}.{qualname}" if module else qualname


def _text_name(node: ast.expr) -> str | None:
    """The name whose text a message is, as it is or formatted: `msg`, `msg.format(...)`,
    `msg.format_map(...)`, `msg % args`; None for any other message."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("format", "format_map")
    ):
        node = node.func.value
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        node = node.left
    return node.id if isinstance(node, ast.Name) else None


def _reads_text_of_a_name(site: RaiseSite) -> bool:
    """Whether a site's message holds no literal word and is the text (`_text_name`) of a
    parameter the signature defaults to a string literal, told from what the scan kept, so
    that no file is parsed again for any other site."""
    if (
        not site.arguments
        or not site.signature
        or (site.template is not None and _LETTERS.search(_literal_part(site.template)))
    ):
        return False
    try:
        node = ast.parse("(" + site.arguments[0] + ")", mode="eval").body
        header = site.signature.strip()
        tree = ast.parse(header + "\n    pass\n" if header.endswith(":") else header)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    name = _text_name(node)
    function = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
        None,
    )
    default = None if name is None or function is None else _defaults(function).get(name)
    return isinstance(default, ast.Constant) and isinstance(default.value, str)


def _names_a_local(site: RaiseSite) -> bool:
    """Whether a site raises a class of one argument that is a plain name (`raise E(msg)`)."""
    arguments = site.arguments
    return (
        arguments is not None
        and len(arguments) == 1
        and not site.keywords
        and arguments[0].isidentifier()
    )


def _message_call(site: RaiseSite) -> str | None:
    """The first argument's source when it is a call and the message as written holds no
    literal text of its own (none read, or `{_mismatch_msg_out_i}`), else None."""
    if not site.arguments:
        return None
    first = site.arguments[0]
    if site.template is not None and _LETTERS.search(_literal_part(site.template)):
        return None
    try:
        node = ast.parse("(" + first + ")", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return first if isinstance(node, ast.Call) and dotted_name(node.func) else None


_LETTERS = re.compile(r"[^\W\d_]{2,}")


def _literal_part(template: str) -> str:
    """A template's literal text, its fields left out."""
    try:
        return "".join(text for is_field, text in runs(template) if not is_field)
    except ValueError:
        return template
