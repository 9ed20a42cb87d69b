"""The theme's templates, compiled once and their pure macros evaluated once per build.

Rendering Material's `main.html` for thousands of pages spends much of its time in jinja's own
machinery rather than in the page's markup. Two parts of it repeat exactly, page after page:

- **Compiling the templates.** Every build (and every worker process of one, for each template it
  first loads) compiles the theme's templates from source. jinja's `FileSystemBytecodeCache`
  keeps the compiled code in the project's cache folder instead, keyed by the template's name and
  file and checked against a digest of its source, so an edited template is compiled again (and
  against a digest of the stored code itself, so a damaged file is compiled again too). The
  compiled code also depends on how the environment is set up (delimiters, extensions, filter and
  test names checked at compile time), which the folder's name covers.
- **Pure macros.** Material translates every label with `lang.t('key')`, a macro that builds the
  language's whole translation table on each of its twenty-odd calls per page. A macro whose text
  can depend only on its arguments and on the build's `config` gives the same text for the same
  arguments on every page, so it is computed once per build (and per worker process).

Purity is decided statically, from the jinja syntax tree of the template that defines the macro
(`_shape`): the template reads no name but `config` and a few of jinja's own globals (`range`,
`dict`...), uses only jinja's built-in filters and tests that receive neither the context nor the
evaluation context, includes and extends nothing, has no `{% call %}`, `self`, `caller`,
`varargs` or `kwargs`, calls only its own macros, those of templates it imports or jinja's
globals named above, reads no attribute or key that starts with `_` or is `plugins` (the page
being rendered hangs off the configuration as `config._current_page`, and plugins keep state that
changes page by page) and indexes by a computed key only literals (Material's `{...}[key]`).
What it imports must be pure as well; a template's imports may be named at run time
(`"partials/languages/" ~ config.theme.language ~ ".html"`), so that is checked on the module
jinja built, against the modules this module built: the name depends only on `config`, which is
part of the key. Anything else renders as it always did.

The hook is the environment's `template_class`, a subclass whose `make_module` is jinja's own
(a context, then the module) followed by one step: in a pure template's module, each macro is
replaced by a `_PureMacro`, which looks its result up by (template, macro, the identity of the
`config` that module reads, the autoescape mode of the call, the arguments as bound). Templates
use another template's macros only through such a module (`{% import %}` and `{% from %}` both
build one through `make_module`), so the lookups happen exactly where a macro crosses templates,
and nothing outside this one environment changes (patching `jinja2.runtime.Macro.__call__`
would put a check on every macro call of every environment in the process, and would need
telling the page's macros from the theme's by their code); a macro calling another of its own
template calls it directly, as before. A pure template imported `with context` (Material
imports `partials/language.html` so on every page) also gets one module per configuration, as
jinja keeps one module for a template imported without context: its module can differ only
with `config`. Arguments are memoised only when they are immutable values (text, numbers,
booleans, None, tuples of those): an object hashed by identity, such as a navigation item, may
change between pages (`item.active`). Keys hold each value's type, so `1`, `1.0` and `True`
stay apart, and text apart from `Markup`, which renders unescaped; floats are keyed by `repr`,
which tells `0.0` from `-0.0`.

MkDocs loads no template before the plugins' `on_env` (`files.add_files_from_theme` only lists
the theme's files), so errcat's `on_env` sets both up before the first one is compiled, and
before the workers that render pages ahead are forked: each worker loads its templates from the
bytecode cache instead of compiling them again.

Why the text is exact: MkDocs hands the same `config` object to every page of a build, and no
part of a build that errcat lets this cache run in (only the search and errcat plugins, as for the
theme's stored output) changes it while pages render, besides `_current_page`, which pure
templates cannot read. The memo is new for every build's environment, and holds the `config`
objects it keyed by, so an identity is never reused within one.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from jinja2 import nodes
from jinja2.bccache import Bucket
from jinja2.defaults import DEFAULT_NAMESPACE
from jinja2.environment import TemplateModule
from jinja2.filters import FILTERS
from jinja2.meta import find_undeclared_variables
from jinja2.runtime import Macro
from jinja2.tests import TESTS
from jinja2.utils import missing

log = logging.getLogger("mkdocs.plugins.errcat")

_GLOBALS = frozenset({"range", "dict", "namespace", "cycler", "joiner"})
"""jinja's own globals whose result depends on their arguments alone (each call makes a new
object); `lipsum` is random. Vouched for only while the environment holds jinja's own."""
_UNSAFE_FILTERS = frozenset({"random", "attr"})
"""Built-in filters a pure template may not use: `random` is random, and `attr` reads an
attribute by a computed name (which could be `_current_page`)."""
_HIDDEN = frozenset({"self", "super", "caller", "varargs", "kwargs"})
"""Names jinja supplies that carry the caller's state or the page's."""
_NODES = (
    nodes.Template,
    nodes.Output,
    nodes.TemplateData,
    nodes.Const,
    nodes.Name,
    nodes.NSRef,
    nodes.Getattr,
    nodes.Getitem,
    nodes.Slice,
    nodes.Concat,
    nodes.Compare,
    nodes.Operand,
    nodes.BinExpr,
    nodes.UnaryExpr,
    nodes.CondExpr,
    nodes.Tuple,
    nodes.List,
    nodes.Dict,
    nodes.Pair,
    nodes.Keyword,
    nodes.Filter,
    nodes.Test,
    nodes.Call,
    nodes.Macro,
    nodes.If,
    nodes.For,
    nodes.With,
    nodes.Assign,
    nodes.AssignBlock,
    nodes.FilterBlock,
    nodes.Import,
    nodes.FromImport,
    nodes.Continue,
    nodes.Break,
)
"""The syntax a pure template may hold. Everything else (include, extends, blocks, call blocks,
`do`, autoescape blocks, whatever an extension such as i18n's `trans` makes) is out."""
_LITERALS = (nodes.Dict, nodes.List, nodes.Tuple, nodes.Const)
_ATOMS = frozenset({str, markupsafe.Markup, int, bool, type(None)})


@dataclass(frozen=True)
class _Shape:
    """What a statically pure template leaves to be checked on the module jinja builds."""

    imports: tuple[str, ...]
    """Names `{% import %}` binds: each must hold a pure template's module."""
    imported: tuple[str, ...]
    """Names `{% from ... import %}` binds: each must hold a pure macro."""
    called: tuple[tuple[str, str], ...]
    """(module name, attribute) called as `module.attribute(...)`: each a pure macro."""


class _Memo:
    """One environment's memoised macro results and what it has found pure."""

    def __init__(self, env: jinja2.Environment) -> None:
        self.env = env
        self.results: dict[tuple[Any, ...], str] = {}
        self.shapes: dict[str, _Shape | None] = {}
        self.pure_modules: weakref.WeakSet[TemplateModule] = weakref.WeakSet()
        self.modules: dict[tuple[str | None, int], TemplateModule] = {}
        """A pure template's module by (template name, identity of its `config`)."""
        self.configs: dict[int, object] = {}
        """The objects keyed by identity, kept alive so that no identity is reused."""
        self.calls = 0
        """How many pure macro calls there were (the tests count them)."""
        self.computed = 0
        """How many of them ran the macro."""

    def shape(self, template: jinja2.Template) -> _Shape | None:
        name = template.name
        if name is None:
            return None
        if name not in self.shapes:
            self.shapes[name] = self._analyse(name)
        return self.shapes[name]

    def _analyse(self, name: str) -> _Shape | None:
        loader = self.env.loader
        if loader is None:
            return None
        try:
            source = loader.get_source(self.env, name)[0]
            tree = self.env.parse(source, name)
        except jinja2.TemplateError:
            return None
        return _shape(self.env, tree)

    def adopt(
        self, template: jinja2.Template, module: TemplateModule, context: Any, config: object
    ) -> None:
        """Make the macros of `module` memoised, and the module itself the one for `config`,
        if its template is pure."""
        if context.resolve_or_missing("config") is not config or not self._pure(template, context):
            return
        self.pure_modules.add(module)
        self.configs[id(config)] = config
        exported = module.__dict__
        names = list(context.get_exported())
        for name in names:
            value = exported[name]
            if type(value) is not Macro:
                continue
            if value.catch_kwargs or value.catch_varargs or value.caller or value.explicit_caller:
                continue
            pure = _PureMacro.__new__(_PureMacro)
            pure.__dict__.update(value.__dict__)
            pure._memo = self
            pure._key = (template.name, name, id(config))
            exported[name] = pure
        # What jinja does for a template imported without context (one module for all), for
        # one imported with it: the module can differ only with `config`. Only where the
        # importer can change nothing in it (its names hold macros and immutable values).
        if all(isinstance(exported[n], Macro) or _frozen(exported[n]) is not None for n in names):
            self.modules[template.name, id(config)] = module

    def _pure(self, template: jinja2.Template, context: Any) -> bool:
        shape = self.shape(template)
        if shape is None:
            return False
        found = context.vars
        for name in shape.imports:
            value = found.get(name)
            if not isinstance(value, TemplateModule) or value not in self.pure_modules:
                return False
        for name in shape.imported:
            if not isinstance(found.get(name), _PureMacro):
                return False
        for module, attribute in shape.called:
            value = found.get(module)
            if not isinstance(value.__dict__.get(attribute) if value else None, _PureMacro):
                return False
        return True


class _PureMacro(Macro):
    """A macro of a pure template: same arguments, same `config`, same text."""

    _memo: _Memo
    _key: tuple[Any, ...]

    def _invoke(self, arguments: list[Any], autoescape: bool) -> str:
        frozen = _frozen(tuple(arguments))
        if frozen is None:
            return super()._invoke(arguments, autoescape)
        memo = self._memo
        memo.calls += 1
        key = (*self._key, bool(autoescape), frozen)
        found = memo.results.get(key)
        if found is None:
            found = memo.results[key] = super()._invoke(arguments, autoescape)
            memo.computed += 1
        return found


def _frozen(value: Any) -> Any:
    """`value` as a key that tells apart whatever renders apart; None if it may change."""
    kind = type(value)
    if kind in _ATOMS or value is missing:
        return (kind, value)
    if kind is float:
        return (kind, repr(value))
    if kind is tuple:
        items = tuple(_frozen(item) for item in value)
        return None if any(item is None for item in items) else (kind, items)
    return None


def _walk(node: nodes.Node) -> Iterator[nodes.Node]:
    yield node
    for child in node.iter_child_nodes():
        yield from _walk(child)


def _vouched(env: jinja2.Environment, kind: str, name: str) -> bool:
    """Whether filter or test `name` is jinja's own and needs no context."""
    own = FILTERS if kind == "filter" else TESTS
    found = (env.filters if kind == "filter" else env.tests).get(name)
    if found is None or found is not own.get(name) or name in _UNSAFE_FILTERS:
        return False
    passed = getattr(getattr(found, "jinja_pass_arg", None), "name", None)
    return passed in (None, "environment")


def _hidden_key(node: nodes.Node) -> bool:
    if isinstance(node, nodes.Getattr):
        key = node.attr
    elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        key = node.arg.value
    else:
        return False
    return isinstance(key, str) and (key.startswith("_") or key == "plugins")


def _shape(env: jinja2.Environment, tree: nodes.Template) -> _Shape | None:
    """What a template needs checked at run time if it is pure; None if it is not."""
    globals_ok = {n for n in _GLOBALS if env.globals.get(n) is DEFAULT_NAMESPACE[n]}
    if not find_undeclared_variables(tree) <= {"config"} | globals_ok:
        return None
    imports = [n.target for n in tree.body if isinstance(n, nodes.Import)]
    imported = [
        name if isinstance(name, str) else name[1]
        for n in tree.body
        if isinstance(n, nodes.FromImport)
        for name in n.names
    ]
    macros = {n.name for n in tree.find_all(nodes.Macro)}
    callables = set(imports) | set(imported) | macros
    called: list[tuple[str, str]] = []
    for node in _walk(tree):
        if not isinstance(node, _NODES):
            return None
        nested = isinstance(node, nodes.Import | nodes.FromImport) and not any(
            node is statement for statement in tree.body
        )
        if nested:
            return None  # bound in a loop or a macro: not on the module to check
        if isinstance(node, nodes.Name):
            if node.ctx == "load" and (
                node.name in _HIDDEN or (node.name in env.globals and node.name not in globals_ok)
            ):
                return None
            if node.ctx != "load" and node.name in callables:
                return None  # rebinds what the calls rely on
        if isinstance(node, nodes.Filter | nodes.Test) and node.name:
            kind = "filter" if isinstance(node, nodes.Filter) else "test"
            if not _vouched(env, kind, node.name):
                return None
        if _hidden_key(node):
            return None
        if (
            isinstance(node, nodes.Getitem)
            and not isinstance(node.arg, nodes.Const | nodes.Slice)
            and not isinstance(node.node, _LITERALS)
        ):
            return None  # a computed name could reach any attribute (jinja falls back to it)
        if isinstance(node, nodes.Call):
            callee = node.node
            if isinstance(callee, nodes.Name) and callee.name in macros | set(imported):
                continue
            if isinstance(callee, nodes.Name) and callee.name in globals_ok:
                continue
            if (
                isinstance(callee, nodes.Getattr)
                and isinstance(callee.node, nodes.Name)
                and callee.node.name in imports
            ):
                called.append((callee.node.name, callee.attr))
                continue
            return None
    return _Shape(tuple(imports), tuple(imported), tuple(called))


_DIGEST_SIZE = 16


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_DIGEST_SIZE).digest()


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """jinja's file cache, for which a folder it cannot read or write is an empty cache, and
    each file starts with a BLAKE2b digest of the rest.

    jinja checks a file's magic and its template's source checksum, then hands the rest to
    `marshal`, which turns a changed byte into other code as readily as it refuses it (and a
    changed byte in the pickled checksum can raise from `pickle`): a file whose digest does
    not match is compiled again instead."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            with open(self._get_cache_filename(bucket), "rb") as handle:
                data = handle.read()
        except OSError:
            return
        payload = data[_DIGEST_SIZE:]
        if len(data) < _DIGEST_SIZE or data[:_DIGEST_SIZE] != _digest(payload):
            return
        try:
            bucket.bytecode_from_string(payload)
        except Exception:  # written by another jinja: compiled again
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        name = self._get_cache_filename(bucket)
        payload = bucket.bytecode_to_string()
        # A name of this process's own, renamed into place: readers never see half a file.
        temporary = f"{name}.{os.getpid()}.tmp"
        try:
            with open(temporary, "wb") as handle:
                handle.write(_digest(payload) + payload)
            os.replace(temporary, name)
        except OSError:  # the next build compiles it again
            with contextlib.suppress(OSError):
                os.remove(temporary)


def _qualname(value: object) -> str:
    if isinstance(value, bool | str | int | type(None)):
        return repr(value)
    kind = value if isinstance(value, type) else type(value)
    return f"{kind.__module__}.{getattr(value, '__qualname__', kind.__qualname__)}"


def settings_key(env: jinja2.Environment) -> str:
    """A digest of what, besides a template's source, its compiled code depends on."""
    parts: list[object] = [
        env.block_start_string,
        env.block_end_string,
        env.variable_start_string,
        env.variable_end_string,
        env.comment_start_string,
        env.comment_end_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        env.trim_blocks,
        env.lstrip_blocks,
        env.newline_sequence,
        env.keep_trailing_newline,
        env.optimized,
        env.is_async,
        _qualname(env.autoescape),
        _qualname(env.finalize),
        _qualname(env.undefined),
        sorted(env.extensions),
        sorted(env.filters),  # a filter or test jinja cannot find fails the compilation
        sorted(env.tests),
    ]
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]


def install(env: jinja2.Environment, cache_folder: Path | None, *, memo: bool) -> None:
    """Before `env` loads a template: compiled templates kept in `cache_folder` (when given),
    and, with `memo`, pure macros evaluated once per set of arguments."""
    if cache_folder is not None and env.bytecode_cache is None:
        folder = cache_folder / f"templates-{jinja2.__version__}-{settings_key(env)}"
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            log.debug("errcat: no template cache in %s: %s", folder, exc)
        else:
            env.bytecode_cache = _BytecodeCache(str(folder))
    # With auto_reload, a template edited during the build would be loaded again, its results
    # not. MkDocs turns it off; async environments make macros return coroutines.
    usable = not env.auto_reload and not env.is_async and callable(getattr(Macro, "_invoke", None))
    if memo and usable:
        # Installed again (a second build of the same environment): a new memo.
        base = getattr(env.template_class, "_errcat_base", env.template_class)
        env.template_class = type(
            "ErrcatTemplate",
            (_MemoTemplate, base),
            {"_errcat_memo": _Memo(env), "_errcat_base": base},
        )


def memo_of(env: jinja2.Environment) -> _Memo | None:
    """The memo `install` gave `env`, if any."""
    return getattr(env.template_class, "_errcat_memo", None)


class _MemoTemplate(jinja2.Template):
    _errcat_memo: _Memo

    def make_module(
        self,
        vars: dict[str, Any] | None = None,
        shared: bool = False,
        locals: Mapping[str, Any] | None = None,
    ) -> TemplateModule:
        memo = self._errcat_memo
        config = _config_of(self, vars, shared, locals)
        found = memo.modules.get((self.name, id(config)))
        if found is not None:
            return found
        # jinja's own two steps, the context kept for `adopt`.
        context = self.new_context(vars, shared, locals)
        module = TemplateModule(self, context)
        memo.adopt(self, module, context, config)
        return module


def _config_of(
    template: jinja2.Template,
    vars: Mapping[str, Any] | None,
    shared: bool,
    locals: Mapping[str, Any] | None,
) -> object:
    """The `config` a module made with these arguments reads, as `jinja2.runtime.new_context`
    lays out its names (`adopt` checks it against the module's context)."""
    value = (locals or {}).get("config", missing)
    if value is not missing:
        return value
    if vars is not None and "config" in vars:
        return vars["config"]
    return missing if shared else template.globals.get("config", missing)
