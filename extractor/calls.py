"""A static call graph of a scanned package: which public functions reach a function.

An edge is a direct call whose target is known from the source alone:

- `name(...)` naming a function of the same module, a function nested in an enclosing one, or
  one imported from the package (re-exports and `import *` are followed); naming a class, it
  reaches the class's `__init__`;
- `return wrapped` (or `return functools.wraps(f)(wrapped)`, a call given it) of a function
  nested in the returning one: no call, but its callers call what it returns (`vmap(f)(x)`),
  so it reaches what `wrapped` calls, the caller saying so (`Caller.returned`), unless a caller
  calls what it gets back at once (`_vmap(f)(x)` inside `torch.autograd.grad`: that caller
  reaches the raise itself);
- `module.function(...)` and `module.Class.method(...)` through imports;
- `self.method(...)` (whatever the first parameter is called, `cls` too) in a method: the
  class's own method or, where the class has a single base in the package, the nearest base's;
  `super().method(...)` likewise, starting at that base;
- `value.method(...)` where the function itself says what `value` is: a parameter annotated
  with a class (`engine: Engine`, `Optional[Engine]`, `Engine | None`, or the same as a
  string) that the body never rebinds, or a local bound exactly once, by calling a class
  (`engine = Engine(...)`) or under such an annotation; the method is looked up as for `self`.

A nested function reads its enclosing function's parameters as they are where neither rebinds
them: its calls pass them on as they pass its own (`wrapped` calling `_apply(func, scale,
args)` passes `transform`'s `scale`), so `Caller.passes` follows them out to the enclosing
function's callers.

A class inherits its base's constructor (calling `Dropout(...)` reaches `_DropoutNd.__init__`,
listed as `Dropout`) and its base's methods: where an inherited method calls on `self` a method
the class overrides (`_NormBase.forward` calls `self._check_input_dim(input)`, which
`BatchNorm2d` defines), the class's inherited method (`BatchNorm2d.forward`, its `Caller.defined`
saying which code runs) is a caller of the override.

A `functools.partial(f, ...)` is a call of `f` where the partial is made, passing what the
partial binds (`tree_map_(partial(_check, func=func), dims)` reaches `_check`, `func` passed
on): the function making it hands `f` on to be called, and the arguments the partial leaves
open come from whatever calls it, which is not followed.

Calls through attributes of other objects (`x.run()` on a value whose class the function does
not state), other callbacks (functions passed, stored or written as lambdas), `getattr` and every
other dynamic dispatch (an override reached from a class's own or a subclass's code, a class
with several bases) are not followed, and calls made at import time (in module
or class bodies) have no function to be reached from. A function is public when no part of its
qualified name, module included, starts with an underscore (`__dunder__` names are public) and
it is not nested in another function.

Each file is summarised by `ast` alone and the summaries are cached like scan results, under
the same fingerprint of the extractor's sources: the installed torch (2,285 files) takes
seconds to summarise, well under a second to load.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import dataclasses
import functools
import gc
import hashlib
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extractor.cache import Cache
from extractor.docstrings import parameter_entries, raises_entries
from extractor.expansion import binding_reads, free_names
from extractor.imports import (
    ModuleName,
    Scope,
    dotted_name,
    import_from_base,
    module_name_for,
    parameter_names,
    public_rank,
    resolve,
    target_names,
)
from extractor.jobs import auto_jobs
from extractor.jobs import pool as jobs_pool
from extractor.model import ScanReport

DEFAULT_DEPTH = 3
"""How many calls back `CallGraph.callers` follows by default."""
FARTHEST = 6
"""How many calls back it goes on following while no public function has been found: a check
four calls below `vmap` (through the function `vmap` returns, `vmap_impl` and a helper) is
still `vmap`'s, and "no public function reaches it" would be wrong."""
NOT_FOLLOWED = (
    "Calls on objects whose class the calling function does not state, callbacks and dynamic "
    "dispatch are not followed."
)
"""What the graph cannot see, to be said wherever its answer is shown."""

CACHE_PREFIX = "calls-"
_CHASE = 8
"""How many re-exports or base classes a lookup goes through before giving up."""
_NAME, _LOCAL, _SELF, _SUPER, _BOUND, _RETURNS = range(6)
"""Kinds of call target in a summary: an absolute dotted name; a qualified name in the same
file; a method looked up from a class of the same file; the same, from the class's base; an
absolute dotted `Class.method` called on an instance of the class; a function of the same file
nested in the caller, which the caller returns (no call, but its callers call what it
returns: `vmap(f)(x)`)."""
_INVOKED = 8
"""Added to a call's kind where what the call returns is called at once (`_vmap(f)(x)`)."""
_CLOSURE = "^"
"""Marks a pass to a nested function of a name it reads from its enclosing one (`^in_dims`),
not one of its parameters."""
_BUILTINS = frozenset(vars(builtins))
_PLAIN, _METHOD, _CLASSMETHOD = range(3)
"""How a function takes its first argument: as written (a function, a static method), or bound
to the instance or to the class it is called on."""
_NEUTRAL_BASES = frozenset(
    (
        "builtins.object",
        "typing.Generic",
        "typing.Protocol",
        "abc.ABC",
        "typing_extensions.Protocol",
    )
)
"""Bases that define no method of the package, so a class naming them has one base fewer."""

Summary = tuple[Any, ...]
"""A file's summary as cached: module, is_package, functions, classes, imports, stars, calls."""
Documents = tuple[tuple[str, str, int], ...]
"""Entries of a docstring's section: (exception or parameter name, text, 1-based file line)."""
Passes = tuple[tuple[int | str, str, tuple[str, ...]], ...]
"""A call's arguments made of the calling function's own parameters: (position in the call or
keyword, the parameter's name when passed unchanged, else the expression computing the
argument from the parameters (see `_Computed`), else ""; the parameters the argument depends
on, through the locals it reads, by any of their bindings)."""
MAX_COMPUTED = 100
"""Characters an argument computed from the caller's parameters may take, written out; a
longer one says too little to be worth a remedy."""
_COMPUTED_DEPTH = 3
"""Locals a computed argument is read through, one inside another (`s = _pair(stride)`)."""


@dataclass(frozen=True)
class Caller:
    """A public function that reaches the function asked about."""

    name: str
    """Qualified name: module, classes and functions (`torch.optim.adam.Adam.step`)."""
    path: str
    """The file defining it, as the scan reported its path."""
    line: int
    """1-based line of its `def`."""
    depth: int
    """Calls from it to the function asked about: 1 when it calls that function directly."""
    passes: tuple[tuple[str, str], ...] = ()
    """(parameter of the function asked about, this caller's parameter): the caller's own
    arguments that reach those parameters unchanged along the calls found, by parameter
    name; empty when none does (see `Passes`)."""
    raises: Documents = ()
    """What the caller's docstring says it raises: (exception as written, text, file line)."""
    documents: Documents = ()
    """What the caller's docstring says of the parameters it passes on (those of `passes` and
    those `computes` reads): (parameter, text, file line)."""
    computes: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """(parameter of the function asked about, the expression this caller computes it from
    its own parameters, those parameters): arguments that are not passed unchanged but made
    of the caller's parameters and of names from outside it, along the calls found
    (`Conv2d(stride=...)` passes `_pair(stride)` to `_ConvNd.__init__`'s `stride`)."""
    feeds: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(parameter of the function asked about, this caller's parameters its value depends
    on): a superset of `passes` and `computes`, also through what the caller computes in
    ways no exact expression says (locals bound in branches, parameters it rebinds)."""
    same_instance: bool = False
    """Every call on the way is a method calling another of its own instance (`self.m(...)`,
    `super().m(...)`): the caller and the function asked about see the same `self`."""
    defined: tuple[str, int] | None = None
    """For a caller its class inherits (a base's constructor or method, run on this class's
    instance): the file and the 1-based `def` line of the code that runs; `path` and `line`
    are then the class's."""
    returned: bool = False
    """The way goes through a function the caller defines and returns (`vmap` returns
    `wrapped`, which calls on): the raise is reached when what the caller returns is called,
    its arguments reaching the function asked about through the names the returned function
    reads of the caller's (`passes`)."""


@dataclass(frozen=True)
class Callers:
    """The public functions that reach one function through direct calls within the package."""

    function: str
    """Qualified name of the function asked about."""
    public: bool
    """Whether that function is public itself (see the module docstring)."""
    callers: tuple[Caller, ...]
    """By depth, then name."""
    depth: int
    """How many calls back the search went."""
    bounded: bool
    """Whether the depth cut some chain short: functions at the last depth have callers that
    were not followed."""
    documents: Documents = ()
    """What the docstring of the function asked about says of its parameters (for a class's
    `__init__`, the class's docstring too): (parameter, text, file line)."""
    nested: bool = False
    """Whether the function asked about is defined inside another function: nobody calls it
    by its name, however public that looks (`jacrev.wrapper`)."""


@dataclass(frozen=True)
class _Function:
    path: str
    module: str
    qualname: str
    line: int
    nested: bool
    """Defined inside another function (never reachable by name from outside)."""
    parameters: tuple[str, ...] = ()
    """Positional parameters in order (`self` included), then keyword-only ones, as
    `_Parameters` records them."""
    positional: int = 0
    """How many of `parameters` may be passed by position."""
    binding: int = 0
    """`_PLAIN`, `_METHOD` or `_CLASSMETHOD`: whether calls through an instance or a class
    bind the first parameter, so that a call's first argument goes to the second."""
    raises: Documents = ()
    """Its docstring's raises section (`extractor.docstrings`)."""
    documents: Documents = ()
    """Its docstring's entries for its parameters (a constructor's: its class's too)."""
    runs: int | None = None
    """For a method a class inherits (listed by the class's name): the base's function that
    runs."""

    @property
    def name(self) -> str:
        return f"{self.module}.{self.qualname}" if self.module else self.qualname

    @property
    def public(self) -> bool:
        if self.nested:
            return False
        parts = [*self.module.split("."), *self.qualname.split(".")]
        return all(_public_part(part) for part in parts if part)


def _public_part(part: str) -> bool:
    return not part.startswith("_") or (
        len(part) > 4 and part.startswith("__") and part.endswith("__")
    )


@dataclass(frozen=True)
class _Class:
    path: str
    qualname: str
    """Dotted classes (and functions) within its module."""
    bases: tuple[str, ...]
    """Qualified names of the bases that may define methods; "" for one that is not a name."""
    methods: dict[str, int]


class CallGraph:
    """Functions of the scanned files and who calls whom, built from per-file summaries."""

    def __init__(self, summaries: Sequence[tuple[str, Summary]]) -> None:
        """`summaries`: (path as the scan reported it, the file's summary), in path order."""
        self._functions: list[_Function] = []
        self._by_file: dict[str, dict[str, int]] = {}
        self._names: dict[str, int] = {}
        self._classes: dict[str, _Class] = {}
        self._local_classes: dict[tuple[str, str], _Class] = {}
        self._imports: dict[str, dict[str, str]] = {}
        self._stars: dict[str, tuple[str, ...]] = {}
        self._callers: dict[int, set[int]] = {}
        self._passes: dict[tuple[int, int], dict[str, str]] = {}
        """(callee, caller) → {callee's parameter: the caller's parameter passed to it
        unchanged, or the expression over the caller's parameters computing it}."""
        self._feeds: dict[tuple[int, int], dict[str, frozenset[str]]] = {}
        """(callee, caller) → {callee's parameter: the caller's parameters its value depends
        on}."""
        self._on_self: set[tuple[int, int]] = set()
        """(callee, caller) pairs where the caller calls the callee on its own instance."""
        self._returned: set[tuple[int, int]] = set()
        """(nested function, the function defining it) pairs where the latter returns it and
        never calls it."""
        self._invoked: set[tuple[int, int]] = set()
        """(callee, caller) pairs where the caller calls what the callee returns at once
        (`_vmap(f)(x)`): what the callee returns, it reaches itself."""
        self._top_classes: dict[str, set[str]] = {}
        self._subclasses: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        self._exports: dict[str, list[str]] | None = None
        self._public_names: dict[int, str | None] = {}
        self._exported: dict[str, str] = {}
        self._class_sites: list[
            tuple[str, str, str, int, _Class, bool, tuple[Documents, Documents]]
        ] = []
        self._module_of: dict[str, str] = {}
        # The same names are called all over a package (`torch.tensor` thousands of times).
        self._resolved: dict[str, int | None] = {}
        for path, summary in summaries:
            self._add_definitions(path, summary)
        for path, summary in summaries:
            self._add_calls(path, summary)
        self._add_overrides()
        self._add_inherited_constructors()

    def public_name(self, qualified: str) -> str:
        """The path users import the class or function `qualified` by: the most public of its own path and
        every name a module binds to it by import under a public name (`httpx/__init__.py`'s
        `from ._exceptions import TooManyRedirects` gives `httpx.TooManyRedirects`), followed
        through further imports and `*` imports. Fewest private parts wins, then the shortest
        path; on a tie the class's own path stays."""
        known = self._exported.get(qualified)
        if known is not None:
            return known
        exports = self._reverse_exports()
        best, best_rank = qualified, public_rank(qualified)
        seen = {qualified}
        frontier = [qualified]
        while frontier:
            following = []
            for name in frontier:
                for alias in exports.get(name, ()):
                    if alias in seen:
                        continue
                    seen.add(alias)
                    following.append(alias)
                    rank = public_rank(alias)
                    if rank < best_rank:
                        best, best_rank = alias, rank
            frontier = following
        self._exported[qualified] = best
        return best

    def _reverse_exports(self) -> dict[str, list[str]]:
        """For each imported target, the public names modules bind to it."""
        if self._exports is not None:
            return self._exports
        exports: dict[str, list[str]] = {}
        for module in sorted(self._imports):
            for local, target in sorted(self._imports[module].items()):
                if not local.startswith("_"):
                    exports.setdefault(target, []).append(f"{module}.{local}")
        for module in sorted(self._stars):
            for base in self._stars[module]:
                names = set(self._imports.get(base, {})) | self._top_classes.get(base, set())
                for local in sorted(names):
                    if not local.startswith("_"):
                        exports.setdefault(f"{base}.{local}", []).append(f"{module}.{local}")
        self._exports = exports
        return exports

    @property
    def functions(self) -> int:
        """How many functions the graph knows."""
        return len(self._functions)

    @property
    def edges(self) -> int:
        """How many (caller, callee) pairs it knows."""
        return sum(len(callers) for callers in self._callers.values())

    def callers(self, path: str, qualname: str, depth: int = DEFAULT_DEPTH) -> Callers | None:
        """The public functions reaching `qualname` of the file at `path` within `depth` calls,
        or, where none does, within the fewest calls up to `FARTHEST` that reach one (the
        answer's `depth` says how far it looked).

        None when the graph has no such function (a module-level name, a file it could not
        read). The function itself is never among its callers.
        """
        start = self._by_file.get(path, {}).get(qualname)
        if start is None:
            return None
        seen = {start}
        frontier = [start]
        found: dict[int, Caller] = {}
        # Each function reached: which parameters of the start its own parameters reach.
        # A nested function's own names are its parameters and what it reads of its
        # enclosing function's (the closure names its callers pass).
        own = [
            *self._functions[start].parameters,
            *sorted(
                {
                    name
                    for caller in self._callers.get(start, ())
                    for name in self._passes.get((start, caller), ())
                }.difference(self._functions[start].parameters)
            ),
        ]
        flows: dict[int, dict[str, str]] = {start: {name: name for name in own}}
        # Whether the instance is the start's own all the way (only `self.` calls).
        on_self: dict[int, bool] = {start: True}
        # Whether the way goes through a function a caller returns rather than calls.
        through_returned: dict[int, bool] = {start: False}
        # And which of its own parameters each parameter of the start depends on.
        fed: dict[int, dict[str, frozenset[str]]] = {
            start: {name: frozenset((name,)) for name in own}
        }
        public = self._public(start)

        def further() -> bool:
            """Whether the functions reached last have callers not reached yet."""
            return any(
                caller not in seen for node in frontier for caller in self._callers.get(node, ())
            )

        followed = depth
        for level in range(1, max(depth, FARTHEST) + 1):
            if level > depth:
                # Further only for a function that is not public and has no public caller yet.
                if public or found or not further():
                    break
                followed = level
            following: list[int] = []
            on_level: set[int] = set()
            for node in frontier:
                flow = flows.get(node)
                for caller in self._callers.get(node, ()):
                    passed = self._passes.get((node, caller)) if flow else None
                    carried = (
                        _carried(flow, passed, node_parameters=self._functions[node].parameters)
                        if flow and passed
                        else {}
                    )
                    feeds = _fed(fed.get(node), self._feeds.get((node, caller)))
                    same = on_self.get(node, False) and (node, caller) in self._on_self
                    returned = (node, caller) in self._returned or (
                        through_returned.get(node, False) and (node, caller) not in self._invoked
                    )
                    if caller in seen:
                        # Reached on this level by another call too: keep what passes most.
                        if caller in on_level and (
                            len(carried) > len(flows.get(caller, ()))
                            or len(feeds) > len(fed.get(caller, ()))
                        ):
                            if len(carried) > len(flows.get(caller, ())):
                                flows[caller] = carried
                            if len(feeds) > len(fed.get(caller, ())):
                                fed[caller] = feeds
                            if caller in found:
                                found[caller] = self._caller(
                                    caller,
                                    found[caller].name,
                                    level,
                                    flows.get(caller, {}),
                                    fed.get(caller, {}),
                                    on_self.get(caller, False),
                                    through_returned.get(caller, False),
                                )
                        continue
                    seen.add(caller)
                    following.append(caller)
                    on_level.add(caller)
                    if carried:
                        flows[caller] = carried
                    if feeds:
                        fed[caller] = feeds
                    on_self[caller] = same
                    through_returned[caller] = returned
                    name = self._public(caller)
                    if name is not None:
                        found[caller] = self._caller(
                            caller, name, level, carried, feeds, same, returned
                        )
            frontier = following
        bounded = further()
        ordered = sorted(found.values(), key=lambda caller: (caller.depth, caller.name))
        function = self._functions[start]
        return Callers(
            public or function.name,
            public is not None,
            tuple(ordered),
            followed,
            bounded,
            function.documents,
            function.nested,
        )

    def _caller(
        self,
        index: int,
        name: str,
        depth: int,
        carried: dict[str, str],
        feeds: dict[str, frozenset[str]],
        same_instance: bool = False,
        returned: bool = False,
    ) -> Caller:
        function = self._functions[index]
        ran = self._functions[function.runs if function.runs is not None else index]
        passes = {origin: text for origin, text in carried.items() if text.isidentifier()}
        computes = tuple(
            (origin, text, tuple(sorted(_names_read(text) & set(function.parameters))))
            for origin, text in sorted(carried.items())
            if origin not in passes
        )
        passed = set(passes.values()).union(*(reads for _, _, reads in computes), *feeds.values())
        return Caller(
            name,
            function.path,
            function.line,
            depth,
            tuple(sorted(passes.items())),
            function.raises,
            tuple(entry for entry in function.documents if entry[0] in passed),
            computes,
            tuple((origin, tuple(sorted(params))) for origin, params in sorted(feeds.items())),
            same_instance,
            None if function.runs is None else (ran.path, ran.line),
            returned,
        )

    def _public(self, index: int) -> str | None:
        """The name users call function `index` by, or None when they cannot: the most public
        path its module-level function or class is exported under (`torch._tensor.Tensor.
        backward` is `torch.Tensor.backward`), else its own path when that is public."""
        if index in self._public_names:
            return self._public_names[index]
        function = self._functions[index]
        found = function.name if function.public else None
        if not function.nested and function.module:
            # The shortest public path wins even over a public own one: `torch.nn.Dropout`
            # rather than `torch.nn.modules.dropout.Dropout`.
            top, _, rest = function.qualname.partition(".")
            if all(_public_part(part) for part in rest.split(".") if part):
                exported = self.public_name(f"{function.module}.{top}")
                if all(_public_part(part) for part in exported.split(".")):
                    found = f"{exported}.{rest}" if rest else exported
        self._public_names[index] = found
        return found

    def function_named(self, name: str) -> tuple[str, str] | None:
        """The (path, qualname) of the function an absolute dotted name calls, through
        re-exports and `*` imports; a class gives its `__init__`. None when unknown."""
        found = self._resolved.get(name) if name in self._resolved else self._resolve(name)
        if found is None:
            return None
        function = self._functions[found]
        return function.path, function.qualname

    def class_named(self, name: str) -> tuple[str, str, tuple[str, ...]] | None:
        """The (path, qualname, bases) of the class an absolute dotted name refers to, through
        re-exports and `*` imports, or None when it is not a class of the scanned files."""
        record = self._class(name)
        return None if record is None else (record.path, record.qualname, record.bases)

    def class_at(self, path: str, qualname: str) -> tuple[str, tuple[str, ...]] | None:
        """The module-qualified name and bases of the class `qualname` defined in `path`."""
        record = self._local_classes.get((path, qualname))
        if record is None:
            return None
        module = self._module_of.get(path, "")
        return (f"{module}.{qualname}" if module else qualname), record.bases

    def subclasses(self, path: str, qualname: str) -> list[tuple[str, str]]:
        """The (path, qualname) of the classes of the scanned files that name the class
        `qualname` of `path` among their bases, by path and name."""
        target = self._local_classes.get((path, qualname))
        if target is None:
            return []
        if self._subclasses is None:
            found: dict[tuple[str, str], list[tuple[str, str]]] = {}
            for key, record in sorted(self._local_classes.items()):
                for base in record.bases:
                    parent = self._class(base) if base else None
                    if parent is not None and parent is not record:
                        found.setdefault((parent.path, parent.qualname), []).append(key)
            self._subclasses = found
        return list(self._subclasses.get((target.path, target.qualname), ()))

    def direct_callers(self, path: str, qualname: str) -> list[tuple[str, str]]:
        """The (path, qualname) of every function of the scanned files that calls `qualname` of
        `path` directly, public or not, by path and line."""
        index = self._by_file.get(path, {}).get(qualname)
        if index is None:
            return []
        found = sorted(
            (self._functions[caller] for caller in self._callers.get(index, ())),
            key=lambda function: (function.path, function.line),
        )
        return [(function.path, function.qualname) for function in found]

    def method_of(
        self, path: str, qualname: str, name: str, *, from_base: bool = False
    ) -> tuple[str, str] | None:
        """The (path, qualname) of method `name` as the class `qualname` of `path` looks it up:
        its own or, through single bases, its nearest ancestor's (`from_base`: start at the
        base, as `super()` does). None when no class of the scanned files defines it."""
        record = self._local_classes.get((path, qualname))
        found = None if record is None else self._method(record, name, from_base=from_base)
        if found is None:
            return None
        function = self._functions[found]
        return function.path, function.qualname

    def module_names(self, path: str) -> tuple[str, dict[str, str], tuple[str, ...]]:
        """The module of the file at `path`, its imports (local name → target) and the modules
        it `*`-imports, for names the scan of one file cannot resolve."""
        module = self._module_of.get(path, "")
        return module, self._imports.get(module, {}), self._stars.get(module, ())

    def _add_definitions(self, path: str, summary: Summary) -> None:
        module, _is_package, functions, classes, imports, stars, _calls = summary
        self._module_of[path] = module
        table = self._by_file.setdefault(path, {})
        prefix = f"{module}." if module else ""
        class_names = {record[0] for record in classes}
        records: dict[str, _Class] = {}
        function_names = {record[0] for record in functions}
        for qualname, line, bases, documented in classes:
            record = _Class(path, qualname, tuple(bases), {})
            records[qualname] = record
            self._local_classes[(path, qualname)] = record
            self._classes.setdefault(prefix + qualname, record)
            # A class defined inside a function is never reached by name from outside.
            nested = qualname.split(".")[0] in function_names
            self._class_sites.append((path, module, qualname, line, record, nested, documented))
        for qualname, line, nested, parameters, positional, binding, documented in functions:
            index = len(self._functions)
            self._functions.append(
                _Function(
                    path,
                    module,
                    qualname,
                    line,
                    nested,
                    parameters,
                    positional,
                    binding,
                    *documented,
                )
            )
            table.setdefault(qualname, index)
            self._names.setdefault(prefix + qualname, index)
            owner, _, method = qualname.rpartition(".")
            if owner in class_names:
                records[owner].methods.setdefault(method, index)
        self._imports.setdefault(module, dict(imports))
        self._stars.setdefault(module, tuple(stars))
        self._top_classes.setdefault(module, {name for name in class_names if "." not in name})

    def _add_overrides(self) -> None:
        """A method a class inherits calls the class's own overrides of what it calls on
        `self` (`_InstanceNorm.forward` calls `self._check_input_dim(input)`, which
        `InstanceNorm3d` defines): the inherited method, listed by the class's name
        (`InstanceNorm3d.forward`), is then a caller of the override, passing what the base's
        method passes."""
        on_self: dict[int, list[int]] = {}
        for callee, caller in sorted(self._on_self):
            on_self.setdefault(callee, []).append(caller)
        for path, module, qualname, line, record, nested, _documented in self._class_sites:
            made: dict[str, int] = {}
            for name, own in sorted(record.methods.items()):
                overridden = self._method(record, name, from_base=True)
                if overridden is None:
                    continue
                for base_caller in on_self.get(overridden, []):
                    function = self._functions[base_caller]
                    method = function.qualname.rpartition(".")[2]
                    if method in record.methods or self._method(record, method) != base_caller:
                        continue  # the class's own method, or not the one it inherits
                    index = made.get(method)
                    if index is None:
                        index = made[method] = len(self._functions)
                        self._functions.append(
                            dataclasses.replace(
                                function,
                                path=path,
                                module=module,
                                qualname=f"{qualname}.{method}",
                                line=line,
                                nested=nested,
                                runs=base_caller,
                            )
                        )
                    self._callers.setdefault(own, set()).add(index)
                    self._on_self.add((own, index))
                    if (overridden, base_caller) in self._passes:
                        self._passes[(own, index)] = self._passes[(overridden, base_caller)]
                    if (overridden, base_caller) in self._feeds:
                        self._feeds[(own, index)] = self._feeds[(overridden, base_caller)]

    def _add_inherited_constructors(self) -> None:
        """A class without an `__init__` of its own runs its base's when called: the class is
        then a caller of that `__init__` (`nn.Dropout(...)` reaches its base's checks), listed
        by its own name."""
        for path, module, qualname, line, record, nested, documented in self._class_sites:
            if "__init__" in record.methods:
                continue
            inherited = self._method(record, "__init__")
            if inherited is None:
                continue
            index = len(self._functions)
            raises, documents = documented
            self._functions.append(
                _Function(
                    path,
                    module,
                    qualname,
                    line,
                    nested,
                    raises=raises,
                    documents=documents,
                    runs=inherited,
                )
            )
            self._callers.setdefault(inherited, set()).add(index)
            # Calling the class passes its arguments to the inherited `__init__` as they are.
            parameters = self._functions[inherited].parameters[1:]
            self._passes[(inherited, index)] = {name: name for name in parameters}
            self._feeds[(inherited, index)] = {name: frozenset((name,)) for name in parameters}

    def _add_calls(self, path: str, summary: Summary) -> None:
        calls = summary[6]
        table = self._by_file[path]
        functions = summary[2]
        for caller_index, marked, target, attribute, passes in calls:
            caller = table.get(functions[caller_index][0])
            if caller is None:
                continue
            kind = marked & ~_INVOKED
            callee: int | None
            if kind in (_NAME, _BOUND):
                if target in self._resolved:
                    callee = self._resolved[target]
                else:
                    callee = self._resolved[target] = self._resolve(target)
            elif kind in (_LOCAL, _RETURNS):
                callee = table.get(target)
                if callee is None and (path, target) in self._local_classes:
                    callee = self._method(self._local_classes[(path, target)], "__init__")
            else:
                record = self._local_classes.get((path, target))
                callee = (
                    None
                    if record is None
                    else self._method(record, attribute, from_base=kind == _SUPER)
                )
            if callee is not None and callee != caller:
                callers = self._callers.setdefault(callee, set())
                if kind == _RETURNS and caller not in callers:
                    # A function's own calls come before its returns in its summary: one
                    # that also calls what it returns reaches it directly.
                    self._returned.add((callee, caller))
                callers.add(caller)
                if marked & _INVOKED:
                    self._invoked.add((callee, caller))
                if kind in (_SELF, _SUPER):
                    self._on_self.add((callee, caller))
                if passes:
                    self._add_passes(callee, caller, kind, target, passes)

    def _add_passes(self, callee: int, caller: int, kind: int, target: str, passes: Passes) -> None:
        """Record which parameters of `callee` a call from `caller` gives the caller's own
        parameters; of several calls, the one passing most is kept."""
        function = self._functions[callee]
        if kind == _NAME:
            # `Class(...)` reaches `__init__` bound to the new instance; `Class.method(x)`
            # binds only a classmethod's first parameter.
            bound = (
                function.qualname.endswith("__init__") and not target.endswith(".__init__")
            ) or function.binding == _CLASSMETHOD
        else:
            bound = function.binding != _PLAIN
        shift = 1 if bound else 0
        mapping: dict[str, str] = {}
        feeds: dict[str, frozenset[str]] = {}
        for slot, text, depends in passes:
            if isinstance(slot, str) and slot.startswith(_CLOSURE):
                # A name the nested function reads of its enclosing one, where it is not one
                # of its own parameters.
                name = slot[len(_CLOSURE) :]
                parameter = None if name in function.parameters else name
            elif isinstance(slot, str):
                parameter = slot if slot in function.parameters[shift:] else None
            elif slot + shift < function.positional:
                parameter = function.parameters[slot + shift]
            else:
                parameter = None
            if parameter is None:
                continue
            if text:
                mapping[parameter] = text
            if depends:
                feeds[parameter] = frozenset(depends)
        if len(mapping) > len(self._passes.get((callee, caller), ())):
            self._passes[(callee, caller)] = mapping
        if len(feeds) > len(self._feeds.get((callee, caller), ())):
            self._feeds[(callee, caller)] = feeds

    def _resolve(self, name: str, chased: int = 0) -> int | None:
        """The function an absolute dotted name calls (a class: its `__init__`), or None."""
        if chased > _CHASE:
            return None
        found = self._names.get(name)
        if found is not None:
            return found
        record = self._classes.get(name)
        if record is not None:
            return self._method(record, "__init__")
        owner, _, attribute = name.rpartition(".")
        record = self._class(owner, chased + 1) if owner else None
        if record is not None:
            return self._method(record, attribute)
        for alias in self._aliases(name):
            found = self._resolve(alias, chased + 1)
            if found is not None:
                return found
        return None

    def _class(self, name: str, chased: int = 0) -> _Class | None:
        """The class an absolute dotted name refers to, through re-exports, or None."""
        if chased > _CHASE:
            return None
        record = self._classes.get(name)
        if record is not None:
            return record
        for alias in self._aliases(name):
            record = self._class(alias, chased + 1)
            if record is not None:
                return record
        return None

    def _aliases(self, name: str) -> Iterator[str]:
        """What `name` may stand for through the imports of the module it starts with."""
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            imports = self._imports.get(module)
            if imports is None:
                continue
            rest = parts[cut + 1 :]
            target = imports.get(parts[cut])
            if target is not None:
                yield ".".join([target, *rest])
                return
            for star in self._stars.get(module, ()):
                yield ".".join([star, *parts[cut:]])
            return

    def _method(self, record: _Class, name: str, *, from_base: bool = False) -> int | None:
        """A method of a class or, through single bases, of its nearest ancestor defining it."""
        current: _Class | None = record
        for _ in range(_CHASE):
            if current is None:
                return None
            if not from_base and name in current.methods:
                return current.methods[name]
            from_base = False
            bases = [base for base in current.bases if base not in _NEUTRAL_BASES]
            if len(bases) != 1 or not bases[0]:
                return None
            current = self._class(bases[0])
        return None


def call_graph(
    report: ScanReport,
    *,
    cwd: Path,
    cache_dir: Path | None = None,
    jobs: int | None = None,
) -> CallGraph:
    """The call graph of the files a scan read; paths in it are the report's.

    `cwd` is the folder the report's paths are relative to; `cache_dir` enables the cache of
    per-file summaries (the scan's cache folder); `jobs` fixes the process count for files
    not in the cache (default: by workload, as for the scan).
    """
    return _graph(_read(report, cwd), cache_dir, jobs)


def _read(report: ScanReport, cwd: Path) -> list[tuple[str, bytes, ModuleName]]:
    """Each file the scan read that can be read again: its path as the report has it, its
    bytes, its module."""
    known: dict[Path, tuple[str, ...]] = {}
    files = []
    for result in report.results:
        if not result.ok:
            continue
        path = Path(os.path.abspath(cwd / result.path))
        try:
            data = path.read_bytes()
        except OSError:
            continue
        files.append((result.path, data, module_name_for(path, known)))
    return files


def _graph(
    files: list[tuple[str, bytes, ModuleName]], cache_dir: Path | None, jobs: int | None
) -> CallGraph:
    cache = Cache(cache_dir, prefix=CACHE_PREFIX) if cache_dir is not None else None
    summaries: dict[str, Summary] = {}
    work: list[tuple[str, bytes, ModuleName, str | None]] = []
    for display, data, module in files:
        key = cache.key(data, module) if cache is not None else None
        cached = cache.get_record(key) if cache is not None and key is not None else None
        if isinstance(cached, tuple) and len(cached) == 7:
            summaries[display] = cached
        else:
            work.append((display, data, module, key))
    total = sum(len(data) for _, data, _, _ in work)
    count = auto_jobs(len(work), total) if jobs is None else max(1, min(jobs, len(work)))
    if count <= 1:
        made = _summarise_all([(data, module) for _, data, module, _ in work])
    else:
        made = _summarise_parallel([(data, module) for _, data, module, _ in work], count)
    for (display, _, _, key), summary in zip(work, made, strict=True):
        summaries[display] = summary
        if cache is not None and key is not None:
            cache.put_record(key, summary)
    return CallGraph(sorted(summaries.items()))


ANSWERS_PREFIX = "reach-"
"""Where `reaches` keeps the answers of a graph, beside the summaries."""


class KnownCallers:
    """`CallGraph.callers` answered from answers kept for the same graph; a question they do
    not hold builds the graph (once) and asks it."""

    def __init__(
        self,
        answers: dict[tuple[str, str], Callers | None],
        build: Any,
        public: dict[str, str] | None = None,
    ) -> None:
        self._answers = answers
        self._build = build
        self._public = public or {}
        self._graph: CallGraph | None = None

    def public_name(self, qualified: str) -> str:
        if qualified in self._public:
            return self._public[qualified]
        if self._graph is None:
            self._graph = self._build()
        return self._graph.public_name(qualified)

    def callers(self, path: str, qualname: str, depth: int = DEFAULT_DEPTH) -> Callers | None:
        if depth == DEFAULT_DEPTH and (path, qualname) in self._answers:
            return self._answers[(path, qualname)]
        if self._graph is None:
            self._graph = self._build()
        return self._graph.callers(path, qualname, depth)


def _answer_record(found: Callers | None) -> Any:
    if found is None:
        return None
    callers = tuple(
        (
            c.name,
            c.path,
            c.line,
            c.depth,
            c.passes,
            c.raises,
            c.documents,
            c.computes,
            c.feeds,
            c.same_instance,
            c.defined,
            c.returned,
        )
        for c in found.callers
    )
    return (
        found.function,
        found.public,
        callers,
        found.depth,
        found.bounded,
        found.documents,
        found.nested,
    )


def _answer(record: Any) -> Callers | None:
    if record is None:
        return None
    function, public, callers, depth, bounded, documents, nested = record
    return Callers(
        function, public, tuple(Caller(*c) for c in callers), depth, bounded, documents, nested
    )


def reaches(
    report: ScanReport,
    *,
    cwd: Path,
    cache_dir: Path | None = None,
    jobs: int | None = None,
    classes: Sequence[str] = (),
) -> CallGraph | KnownCallers:
    """Who reaches each function a raise site of `report` is in (`callers` at the default
    depth), for the facts shown with the site, and the `public_name` of each of `classes`:
    `call_graph`, or, when the cache holds the answers for a graph of the very same summaries,
    those answers without building the graph (a rebuild after a prose edit). The answers are a
    function of the files' bytes alone."""
    if cache_dir is None:
        return call_graph(report, cwd=cwd, jobs=jobs)
    summaries = Cache(cache_dir, prefix=CACHE_PREFIX)
    answers = Cache(cache_dir, prefix=ANSWERS_PREFIX)
    files = _read(report, cwd)
    digest = hashlib.blake2b(digest_size=20)
    for display, data, module in files:
        digest.update(f"{display}\0{summaries.key(data, module)}\0".encode())
    wanted = sorted({(s.path, s.function) for s in report.sites if s.function is not None})
    for where in wanted:
        digest.update(f"{where[0]}\0{where[1]}\0".encode())
    named = sorted(set(classes))
    for name in named:
        digest.update(f"class\0{name}\0".encode())
    key = digest.hexdigest()

    def build() -> CallGraph:
        # Read again: the answers' owner need not hold every file's bytes meanwhile.
        return call_graph(report, cwd=cwd, cache_dir=cache_dir, jobs=jobs)

    stored = answers.get_record(key)
    if isinstance(stored, tuple) and len(stored) == 2:
        with contextlib.suppress(TypeError, ValueError, AttributeError):
            callers, public = stored
            return KnownCallers(
                {where: _answer(record) for where, record in callers.items()}, build, dict(public)
            )
    graph = _graph(files, cache_dir, jobs)
    answers.put_record(
        key,
        (
            {where: _answer_record(graph.callers(*where)) for where in wanted},
            {name: graph.public_name(name) for name in named},
        ),
    )
    # Only the newest answers are worth keeping: any edit of the code makes another key.
    with contextlib.suppress(OSError):
        for other in answers.folder.iterdir():
            if other.name != key:
                other.unlink()
    return graph


def _summarise_all(work: Sequence[tuple[bytes, ModuleName]]) -> list[Summary]:
    return [summarise(data, module) for data, module in work]


def _summarise_parallel(work: Sequence[tuple[bytes, ModuleName]], jobs: int) -> list[Summary]:
    from concurrent.futures.process import BrokenProcessPool

    size = max(1, len(work) // (jobs * 4) + 1)
    batches = [list(work[start : start + size]) for start in range(0, len(work), size)]
    try:
        with jobs_pool(jobs) as pool:
            done = list(pool.map(_summarise_all, batches))
    except BrokenProcessPool:
        # A worker died (killed, or crashed in native code): do the work here instead.
        done = [_summarise_all(batch) for batch in batches]
    return [summary for batch in done for summary in batch]


def summary_of_tree(tree: ast.Module, module: ModuleName) -> Summary | None:
    """`summarise` of a module the scan has parsed already (the scan stores it in this cache,
    so that a build does not parse every file a second time); None where it fails."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _Summariser(module).summary(tree)
    except (RecursionError, MemoryError):
        return None
    finally:
        if collecting:
            gc.enable()


def summarise(data: bytes, module: ModuleName) -> Summary:
    """One file's definitions, imports and resolvable calls; empty when it does not parse."""
    empty: Summary = (module.name, module.is_package, (), (), (), (), ())
    collecting = gc.isenabled()
    # As for the scan: parsing makes many acyclic objects, and cyclic collection only costs.
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
        return _Summariser(module).summary(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return empty
    finally:
        if collecting:
            gc.enable()


def _returned_functions(body: list[ast.stmt], names: set[str]) -> set[str]:
    """Which of `names` (functions defined in the body) the body returns: `return wrapped`,
    or a call given it, as a decorator's result is (`return functools.wraps(f)(wrapped)`),
    but for a call of a built-in (`map(wrapped, xs)` gives no function to call)."""
    found: set[str] = set()
    todo = list(body)
    while todo:
        statement = todo.pop()
        if isinstance(statement, ast.Return) and statement.value is not None:
            value: ast.expr | None = statement.value
            while isinstance(value, ast.Call):
                if isinstance(value.func, ast.Name) and value.func.id in _BUILTINS:
                    break
                given = {a.id for a in value.args if isinstance(a, ast.Name) and a.id in names}
                found |= given
                value = value.func if not given and isinstance(value.func, ast.Call) else None
            if isinstance(value, ast.Name) and value.id in names:
                found.add(value.id)
        for block in _own_blocks(statement):
            todo.extend(block)
    return found


def _own_blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists inside a compound statement that run in the same scope."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(statement, name, None)
        if isinstance(block, list):
            yield block
    for handler in getattr(statement, "handlers", ()):
        yield handler.body
    for case in getattr(statement, "cases", ()):
        yield case.body


@dataclass(frozen=True)
class _Method:
    """Where `self` (the first parameter) of a method points: its class in this file."""

    self_name: str
    class_qualname: str
    direct: bool
    """The function is the method itself (zero-argument `super()` works only there)."""


class _Summariser:
    """Collects one module's functions, classes, imports and calls."""

    def __init__(self, module: ModuleName) -> None:
        self.module = module
        self.functions: list[
            tuple[str, int, bool, tuple[str, ...], int, int, tuple[Documents, Documents]]
        ] = []
        self.classes: list[tuple[str, int, tuple[str, ...], tuple[Documents, Documents]]] = []
        self.calls: list[tuple[int, int, str, str, Passes]] = []
        self.defs: dict[int, set[str]] = {}
        """Names that `def` or `class` statements bind in a function, by id of its scope."""

    def summary(self, tree: ast.Module) -> Summary:
        scope = Scope("module", tree, None, None).fill(self.module)
        # `global` at module level changes nothing, but `resolve` would follow it from the
        # module scope to the module scope forever.
        scope.declared_global.clear()
        self.block(tree.body, scope)
        imports = tuple(
            (local, next(iter(targets)))
            for local, targets in sorted(scope.imports.items())
            if len(targets) == 1
        )
        stars = tuple(
            base
            for statement in tree.body
            if isinstance(statement, ast.ImportFrom)
            and any(alias.name == "*" for alias in statement.names)
            and (base := import_from_base(statement, self.module)) is not None
        )
        return (
            self.module.name,
            self.module.is_package,
            tuple(self.functions),
            tuple(self.classes),
            imports,
            stars,
            tuple(self.calls),
        )

    def block(self, statements: list[ast.stmt], scope: Scope) -> None:
        """Definitions in a module or class body, through `if`, `try` and the like."""
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                self.function(statement, scope, nested=False)
            elif isinstance(statement, ast.ClassDef):
                self.klass(statement, scope, nested=False)
            else:
                for block in _own_blocks(statement):
                    self.block(block, scope)

    def klass(self, node: ast.ClassDef, parent: Scope, *, nested: bool) -> None:
        qualname = f"{parent.qualname}.{node.name}" if parent.qualname else node.name
        scope = Scope("class", node, parent, qualname)
        bases = tuple(self.base(base, parent) for base in node.bases)
        self.classes.append((qualname, node.lineno, bases, _documented(node, None)))
        for statement in self.definitions(node.body):
            if isinstance(statement, ast.ClassDef):
                self.klass(statement, scope, nested=nested)
            else:
                self.function(statement, scope, nested=nested)

    def base(self, node: ast.expr, scope: Scope) -> str:
        if isinstance(node, ast.Subscript):
            # `Generic[T]`, `Protocol[T]`: only the subscripted name can matter.
            node = node.value
        dotted = dotted_name(node)
        if dotted is None:
            return ""
        return resolve(dotted, scope, self.module) or ""

    def definitions(
        self, statements: list[ast.stmt]
    ) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield statement
            else:
                for block in _own_blocks(statement):
                    yield from self.definitions(block)

    def function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        parent: Scope,
        *,
        nested: bool,
        method: _Method | None = None,
        closure: frozenset[str] = frozenset(),
    ) -> None:
        """`closure`: what the enclosing function passes on unchanged (its `stable` names),
        which this one, nested in it, reads as they are where it binds none of them."""
        qualname = f"{parent.qualname}.{node.name}" if parent.qualname else node.name
        scope = Scope("function", node, parent, qualname)
        index = len(self.functions)
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        parameters = tuple(argument.arg for argument in (*positional, *arguments.kwonlyargs))
        binding = _PLAIN
        if parent.kind == "class" and positional and not _decorated(node, "staticmethod"):
            binding = _CLASSMETHOD if _decorated(node, "classmethod") else _METHOD
        documented = _documented(node, parameters)
        if node.name == "__init__" and isinstance(parent.node, ast.ClassDef):
            # A class's docstring commonly says what constructing it takes and raises: all of
            # it where `*args`/`**kwargs` take what it names (`RNN(..., nonlinearity=...)`).
            taken_whole = arguments.vararg is not None or arguments.kwarg is not None
            from_class = _documented(parent.node, None if taken_whole else parameters)
            documented = (documented[0] + from_class[0], documented[1] + from_class[1])
        self.functions.append(
            (qualname, node.lineno, nested, parameters, len(positional), binding, documented)
        )
        if binding != _PLAIN:
            method = _Method(positional[0].arg, str(parent.qualname), True)
        elif method is not None:
            # A nested function sees the method's `self` unless it binds the name itself.
            own = {argument.arg for argument in (*positional, *arguments.kwonlyargs)}
            method = (
                None
                if method.self_name in own
                else _Method(method.self_name, method.class_qualname, False)
            )
        calls, functions, classes, comprehension_names = _walk(node.body)
        self.defs[id(scope)] = {f.name for f in functions} | {c.name for c in classes}
        named = {
            func.value.id
            for call in calls
            if isinstance(func := call.func, ast.Attribute) and isinstance(func.value, ast.Name)
        }
        if method is not None:
            named.discard(method.self_name)
        receivers = self.receivers(node, scope, named) if named else {}
        every = {
            *parameters,
            *(argument.arg for argument in (arguments.vararg, arguments.kwarg) if argument),
        }
        # What the function passes on unchanged: a parameter it never rebinds, and that no
        # comprehension of it binds anew; a method's instance or class is not passed by its
        # caller.
        if binding != _PLAIN:
            every.discard(positional[0].arg)
        stable = frozenset(every - set(_bindings(node.body, every)) - comprehension_names)
        # A parameter bound again only after a call still holds the caller's argument there
        # (`_mha_shape_check(query, attn_mask)`, then `attn_mask = ...`), unless a loop
        # around the call may run a later binding first.
        later, loops = _later_bindings(node.body, set(every) - stable - comprehension_names)
        # A nested function reads its enclosing one's locals as if they came from outside:
        # what it computes from them is not said in its own parameters.
        computed = (
            _Computed(node, stable, scope.fill(self.module).bound)
            if (stable or later) and not nested
            else None
        )
        # The enclosing function's stable names it reads and never binds are passed on as
        # they are, like its own parameters (`wrapped` passing `vmap`'s `in_dims` on).
        inherited = closure - every - comprehension_names
        inherited -= set(_bindings(node.body, set(inherited)))
        stable |= inherited
        depends = _Depends(node.body, every | inherited)
        first_call = len(self.calls)
        # Calls whose result is called at once (`_vmap(f)(x)`): the function it returns runs
        # here, not in this function's callers.
        invoked = {id(call.func) for call in calls if isinstance(call.func, ast.Call)}
        for call in calls:
            here = stable
            if later and not any(start <= call.lineno <= end for start, end in loops):
                end = call.end_lineno or call.lineno
                here = stable | {name for name, first in later.items() if first > end}
            recorded = len(self.calls)
            self.call(
                index, call, scope, method, comprehension_names, receivers, here, computed, depends
            )
            bound = _partial_call(call, scope, self.module)
            if bound is not None:
                self.call(
                    index,
                    bound,
                    scope,
                    method,
                    comprehension_names,
                    receivers,
                    here,
                    computed,
                    depends,
                )
            if id(call) in invoked:
                for position in range(recorded, len(self.calls)):
                    caller, kind, target, attribute, passes = self.calls[position]
                    self.calls[position] = (caller, kind | _INVOKED, target, attribute, passes)
        own = {f"{qualname}.{inner.name}" for inner in functions}
        # A function defined here reads what this one passes on unchanged as it is: each
        # call of it, and each return of it, passes those names on (`_CLOSURE` slots).
        closure_slots = tuple((_CLOSURE + name, name, (name,)) for name in sorted(stable))
        for position in range(first_call, len(self.calls)):
            caller, kind, target, attribute, passes = self.calls[position]
            if (kind & ~_INVOKED) == _LOCAL and target in own and closure_slots:
                self.calls[position] = (caller, kind, target, attribute, passes + closure_slots)
        for name in sorted(_returned_functions(node.body, {inner.name for inner in functions})):
            self.calls.append((index, _RETURNS, f"{qualname}.{name}", "", closure_slots))
        for inner in functions:
            self.function(inner, scope, nested=True, method=method, closure=stable)
        for inner_class in classes:
            self.klass(inner_class, scope, nested=True)

    def call(
        self,
        index: int,
        call: ast.Call,
        scope: Scope,
        method: _Method | None,
        comprehension_names: set[str],
        receivers: dict[str, str],
        stable: frozenset[str],
        computed: _Computed | None = None,
        depends: _Depends | None = None,
    ) -> None:
        passes = _passes(call, stable, computed, depends)
        func = call.func
        if isinstance(func, ast.Name):
            self.name_call(index, func.id, scope, comprehension_names, passes)
            return
        if not isinstance(func, ast.Attribute):
            return
        value = func.value
        if isinstance(value, ast.Name) and value.id in receivers:
            # `Class.method` resolves through the class and its bases, as `self.method` does.
            self.calls.append((index, _BOUND, f"{receivers[value.id]}.{func.attr}", "", passes))
            return
        if method is not None:
            if isinstance(value, ast.Name) and value.id == method.self_name:
                self.calls.append((index, _SELF, method.class_qualname, func.attr, passes))
                return
            if (
                method.direct
                and isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "super"
                and not value.args
            ):
                self.calls.append((index, _SUPER, method.class_qualname, func.attr, passes))
                return
        dotted = dotted_name(func)
        if dotted is None or dotted.partition(".")[0] in comprehension_names:
            return
        target = resolve(dotted, scope, self.module)
        if target is not None and not target.startswith("builtins."):
            self.calls.append((index, _NAME, target, "", passes))

    def receivers(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope, named: set[str]
    ) -> dict[str, str]:
        """Of the `named` values this function calls methods on, those whose class it states,
        each with the class's absolute dotted name: parameters annotated with a class and never
        rebound, and locals bound once, by calling a class or under a class annotation. A name
        that turns out to be no class of the package resolves to nothing later, so no edge
        comes of it."""
        # Names the function does not bind (modules, imports, globals) are never receivers.
        candidates = named & scope.fill(self.module).bound
        if not candidates:
            return {}
        bindings = _bindings(node.body, candidates)
        stated: dict[str, ast.expr] = {}
        arguments = node.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            if (
                argument.annotation is not None
                and argument.arg in candidates
                and argument.arg not in bindings
            ):
                stated[argument.arg] = argument.annotation
        for name, binding in bindings.items():
            if isinstance(binding, ast.AnnAssign):
                stated[name] = binding.annotation
            elif isinstance(binding, ast.Assign) and isinstance(binding.value, ast.Call):
                stated[name] = binding.value.func
        found: dict[str, str] = {}
        for name, expression in stated.items():
            dotted = _class_named(expression)
            if dotted is None:
                continue
            target = resolve(dotted, scope, self.module)
            if target is not None and not target.startswith(("builtins.", "typing.")):
                found[name] = target
        return found

    def name_call(
        self,
        index: int,
        name: str,
        scope: Scope,
        comprehension_names: set[str],
        passes: Passes = (),
    ) -> None:
        if name in comprehension_names:
            return
        # A function defined in this or an enclosing function shadows everything further out.
        current: Scope | None = scope
        while current is not None and current.kind != "module":
            if current.kind == "function":
                if name in self.defs.get(id(current), ()):
                    self.calls.append((index, _LOCAL, f"{current.qualname}.{name}", "", passes))
                    return
                current.fill(self.module)
                if name in current.bound or name in current.imports:
                    break
            current = current.parent
        target = resolve(name, scope, self.module)
        if target is not None and not target.startswith("builtins."):
            self.calls.append((index, _NAME, target, "", passes))


def _partial_call(call: ast.Call, scope: Scope, module: ModuleName) -> ast.Call | None:
    """`functools.partial(f, a, k=v)` as the call `f(a, k=v)` it stands for: the function
    that builds it hands `f` on to be called (`tree_map_(partial(_check, func=func), dims)`),
    and whoever calls it passes the rest, so `f` is reached from here with these arguments
    passed on. None for any other call, or a partial of something unknown (`partial(*args)`)."""
    dotted = dotted_name(call.func)
    if dotted is None or not call.args or isinstance(call.args[0], ast.Starred):
        return None
    if resolve(dotted, scope, module) != "functools.partial":
        return None
    bound = ast.Call(func=call.args[0], args=call.args[1:], keywords=call.keywords)
    return ast.copy_location(bound, call)


_MAY_DOCUMENT = re.compile(r"rais|except|throw|args|arguments|param|:key", re.IGNORECASE)
"""Text a docstring with a raises or a parameters section holds: others are not parsed."""


def _documented(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, parameters: Sequence[str] | None
) -> tuple[Documents, Documents]:
    """What a function's or class's docstring says it raises, and of `parameters` (for a
    class alone, `None`: what it says of any), with the file line of each entry (the
    docstring's line counted from its first; a string with escaped newlines is rare enough)."""
    first = node.body[0] if node.body else None
    if not (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and _MAY_DOCUMENT.search(first.value.value)
    ):
        return (), ()
    text, line = first.value.value, first.value.lineno
    raises = tuple(
        (entry.exception, entry.text, line + entry.line_offset) for entry in raises_entries(text)
    )
    wanted = None if parameters is None else set(parameters)
    documents = tuple(
        (entry.name, entry.text, line + entry.line_offset)
        for entry in parameter_entries(text)
        if wanted is None or entry.name in wanted
    )
    return raises, documents


def _passes(
    call: ast.Call,
    stable: frozenset[str],
    computed: _Computed | None = None,
    depends: _Depends | None = None,
) -> Passes:
    """Which of a call's arguments are made of the caller's own parameters (see `Passes`).
    Positions stop at the first `*x`, after which no position is known."""
    found: list[tuple[int | str, str, tuple[str, ...]]] = []

    def add(slot: int | str, value: ast.expr) -> None:
        text = None
        if isinstance(value, ast.Name) and value.id in stable:
            text = value.id
        elif computed is not None and stable:
            text = computed.text(value, call.lineno, stable)
        reads = () if depends is None else depends.of(value)
        if text is not None or reads:
            found.append((slot, text or "", reads))

    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        add(position, argument)
    for keyword in call.keywords:
        if keyword.arg is not None:
            add(keyword.arg, keyword.value)
    return tuple(found)


class _Depends:
    """The parameters an expression of a function depends on: those it reads, and those the
    locals it reads are computed from by any of their bindings (`extractor.expansion.
    binding_reads`), up to `_DEPENDS_DEPTH` locals deep. A superset on any path: good for
    saying which arguments matter, never for a remedy."""

    _DEPENDS_DEPTH = 3

    def __init__(self, body: list[ast.stmt], parameters: set[str]) -> None:
        self.body = body
        self.parameters = parameters
        self._reads: dict[str, set[str]] | None = None

    def of(self, value: ast.expr) -> tuple[str, ...]:
        if not self.parameters:
            return ()
        names = free_names(value)
        found = names & self.parameters
        todo = names - self.parameters
        if todo:
            if self._reads is None:
                self._reads = binding_reads(self.body)
            seen: set[str] = set()
            for _level in range(self._DEPENDS_DEPTH):
                todo = {read for name in todo - seen for read in self._reads.get(name, ())}
                seen |= todo
                found |= todo & self.parameters
        return tuple(sorted(found))


_PACKED = (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp)
"""Arguments that pack values together (`(mesh, dim)`): the callee tells such a pack from its
other kinds of argument before testing it, which a test said of the pack alone leaves out."""


class _Computed:
    """Arguments a function computes from its own parameters: an expression reading at least
    one parameter the function never rebinds, names from outside the function (`_pair`,
    `torch.float32`) and locals bound once by a plain `name = value` ahead of the call (read
    through that value, up to `_COMPUTED_DEPTH` deep), written out with `ast.unparse`
    (parenthesised where the grammar needs it). Refused: a pack of values (`_PACKED`), any
    other local (a loop variable,
    one bound twice, one whose contents the function changes with `x.append(...)` or `x[i] =
    ...`), lambdas, `:=`, `await`, `yield` and starred parts, and a text over
    MAX_COMPUTED characters."""

    _REFUSED = (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Starred)

    def __init__(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, stable: frozenset[str], bound: set[str]
    ) -> None:
        self.node = node
        self.stable = stable
        self.bound = bound
        self.parameters = frozenset(parameter_names(node))
        self._once: dict[str, ast.Assign | ast.AnnAssign | None] | None = None
        self._changed: set[str] | None = None

    def text(self, value: ast.expr, line: int, stable: frozenset[str] | None = None) -> str | None:
        """`value` written out in the parameters (`stable`: those holding the caller's
        arguments at this call, by default the function's never rebound ones)."""
        found = self._expanded(value, line, 0, self.stable if stable is None else stable)
        if found is None or not found[1] or isinstance(found[0], _PACKED):
            return None
        text = _unparsed(found[0])
        return text if text is not None and len(text) <= MAX_COMPUTED else None

    def _expanded(
        self, value: ast.expr, line: int, depth: int, stable: frozenset[str]
    ) -> tuple[ast.expr, bool] | None:
        """`value` with its locals replaced by what they were bound to, and whether it reads
        a parameter; None when it reads something refused."""
        if any(isinstance(node, self._REFUSED) for node in ast.walk(value)):
            return None
        values: dict[str, ast.expr] = {}
        reads = False
        for name in free_names(value):
            if name in stable:
                reads = True
            elif name in self.bound:
                local = self._local(name, line) if depth < _COMPUTED_DEPTH else None
                inner = None if local is None else self._expanded(local, line, depth + 1, stable)
                if inner is None:
                    return None
                values[name] = inner[0]
                reads = reads or inner[1]
        return (_replaced(value, values) if values else value), reads

    def _local(self, name: str, line: int) -> ast.expr | None:
        """The value of the local's one plain binding, made before `line`, where nothing
        changes what it holds afterwards."""
        if name in self.parameters:
            # Rebound: the value its binding reads is the parameter's first value.
            return None
        if self._once is None:
            names = self.bound - self.parameters
            self._once = _bindings(self.node.body, names)
            self._changed = _changed_in_place(self.node.body, names)
        binding = self._once.get(name)
        assert self._changed is not None
        if binding is None or binding.value is None or name in self._changed:
            return None
        return binding.value if binding.lineno < line else None


def _later_bindings(
    body: list[ast.stmt], names: set[str]
) -> tuple[dict[str, int], list[tuple[int, int]]]:
    """Of `names` (parameters a function binds again), the line of each one's first plain
    binding (an assignment, augmented or annotated, a `for` or `with` target, `:=`, `del`),
    for those bound only so; and the lines of every loop of the body. Not entering nested
    definitions. A name also bound by an `except ... as`, an import, a `match` pattern or
    declared `global`/`nonlocal` is left out: its first binding is not worth reading out."""
    first: dict[str, int] = {}
    odd: set[str] = set()
    loops: list[tuple[int, int]] = []
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            loops.append((node.lineno, node.end_lineno or node.lineno))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            if node.id in names:
                first[node.id] = min(first.get(node.id, node.lineno), node.lineno)
        elif isinstance(node, ast.ExceptHandler) and node.name in names:
            odd.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            odd.update(
                (alias.asname or alias.name).partition(".")[0]
                for alias in node.names
                if (alias.asname or alias.name).partition(".")[0] in names
            )
        elif isinstance(node, ast.Global | ast.Nonlocal):
            odd.update(name for name in node.names if name in names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name in names:
            odd.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest in names:
            odd.add(node.rest)
        todo.extend(ast.iter_child_nodes(node))
    return {name: line for name, line in first.items() if name not in odd}, loops


def _changed_in_place(body: list[ast.stmt], names: set[str]) -> set[str]:
    """Of `names`, those the function body may change without rebinding them: a method
    called on them (`x.append(...)`), an item or attribute of them assigned or deleted."""
    found: set[str] = set()
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                holder = node.func.value
            elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
                node.ctx, ast.Store | ast.Del
            ):
                holder = node.value
            else:
                continue
            if isinstance(holder, ast.Name) and holder.id in names:
                found.add(holder.id)
    return found


def _replaced(value: ast.expr, values: dict[str, ast.expr]) -> ast.expr:
    """A copy of `value` with each free name of `values` replaced by its expression."""

    class Replace(ast.NodeTransformer):
        def __init__(self, inner: frozenset[str]) -> None:
            self.inner = inner

        def visit_Name(self, node: ast.Name) -> ast.expr:
            if node.id in values and node.id not in self.inner:
                return values[node.id]
            return node

        def bound_inside(self, node: ast.AST) -> ast.AST:
            # Names a comprehension or a lambda binds are its own, not the ones replaced.
            own = frozenset(
                n.id if isinstance(n, ast.Name) else n.arg
                for n in ast.walk(node)
                if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
                or isinstance(n, ast.arg)
            )
            return Replace(self.inner | own).generic_visit(node)

        visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = bound_inside
        visit_Lambda = bound_inside

    replaced: ast.expr = Replace(frozenset()).visit(copy.deepcopy(value))
    return replaced


def _unparsed(node: ast.expr) -> str | None:
    """The expression written out; None where `ast.unparse` cannot (an f-string whose field
    needs a backslash, before Python 3.12)."""
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return None


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


def _names_read(text: str) -> set[str]:
    """The names an expression text reads from outside it."""
    tree = _parsed(text)
    return set() if tree is None else free_names(tree)


def _fed(
    fed: dict[str, frozenset[str]] | None, feeds: dict[str, frozenset[str]] | None
) -> dict[str, frozenset[str]]:
    """One call further back: each parameter of the function asked about that `fed` says
    depends on a function's parameters, said in those of a caller of that function, through
    what each argument of the call depends on (`feeds`)."""
    if not fed or not feeds:
        return {}
    carried: dict[str, frozenset[str]] = {}
    for origin, parameters in fed.items():
        reached = frozenset().union(*(feeds.get(name, frozenset()) for name in parameters))
        if reached:
            carried[origin] = reached
    return carried


def _carried(
    flow: dict[str, str], passed: dict[str, str], *, node_parameters: Sequence[str]
) -> dict[str, str]:
    """One call further back: each parameter of the function asked about that `flow` says
    in terms of a function's parameters, said in those of a caller of that function, through
    what the call `passed` (both maps of parameter to a parameter or an expression)."""
    carried: dict[str, str] = {}
    parameters = set(node_parameters)
    for origin, text in flow.items():
        if text in passed:
            carried[origin] = passed[text]
            continue
        if text.isidentifier():
            continue
        tree = _parsed(text)
        read = _names_read(text) & parameters
        if tree is None or not read or not read <= passed.keys():
            continue
        values = {name: _parsed(passed[name]) for name in read}
        if any(value is None for value in values.values()):
            continue
        composed = _unparsed(_replaced(tree, values))  # type: ignore[arg-type]
        if composed is not None and len(composed) <= MAX_COMPUTED:
            carried[origin] = composed
    return carried


def _bindings(
    body: list[ast.stmt], names: set[str]
) -> dict[str, ast.Assign | ast.AnnAssign | None]:
    """Each of `names` that a function body's statements bind (not entering nested scopes),
    with its binding when that is its only one and a plain `name = ...` or `name: T = ...`,
    else None. Statements only: a walrus inside an expression is not seen."""
    found: dict[str, ast.Assign | ast.AnnAssign | None] = {}

    def bind(name: str, node: ast.Assign | ast.AnnAssign | None) -> None:
        if name in names:
            found[name] = None if node is None or name in found else node

    def bind_all(target: ast.expr) -> None:
        bound: set[str] = set()
        target_names(target, bound)
        for name in bound:
            bind(name, None)

    todo = list(body)
    while todo:
        statement = todo.pop()
        if isinstance(statement, ast.Assign):
            simple = len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            for target in statement.targets:
                if simple and isinstance(target, ast.Name):
                    bind(target.id, statement)
                else:
                    bind_all(target)
        elif isinstance(statement, ast.AnnAssign):
            if isinstance(statement.target, ast.Name):
                bind(statement.target.id, statement)
        elif isinstance(statement, ast.AugAssign | ast.For | ast.AsyncFor):
            bind_all(statement.target)
        elif isinstance(statement, ast.With | ast.AsyncWith):
            for item in statement.items:
                if item.optional_vars is not None:
                    bind_all(item.optional_vars)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bind(statement.name, None)
            continue
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                bind((alias.asname or alias.name).partition(".")[0], None)
        elif isinstance(statement, ast.Global | ast.Nonlocal):
            for name in statement.names:
                bind(name, None)
        elif isinstance(statement, ast.Delete):
            for target in statement.targets:
                bind_all(target)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                for pattern in ast.walk(case.pattern):
                    if isinstance(pattern, ast.MatchAs | ast.MatchStar) and pattern.name:
                        bind(pattern.name, None)
        for handler in getattr(statement, "handlers", ()):
            if handler.name:
                bind(handler.name, None)
        for block in _own_blocks(statement):
            todo.extend(block)
    return found


def _class_named(expression: ast.expr) -> str | None:
    """The dotted class an annotation or a called expression names: `Engine`, `mod.Engine`,
    `"Engine"`, `Optional[Engine]`, `Engine | None`; None for anything else."""
    if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
        try:
            expression = ast.parse(expression.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(expression, ast.Subscript) and dotted_name(expression.value) in (
        "Optional",
        "typing.Optional",
    ):
        return _class_named(expression.slice)
    if isinstance(expression, ast.BinOp) and isinstance(expression.op, ast.BitOr):
        sides = [expression.left, expression.right]
        kept = [side for side in sides if not _is_none(side)]
        return _class_named(kept[0]) if len(kept) == 1 else None
    return dotted_name(expression)


def _is_none(expression: ast.expr) -> bool:
    return isinstance(expression, ast.Constant) and expression.value is None


def _decorated(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether a plain `@name` decorates the function (`staticmethod`, `classmethod`)."""
    return any(
        isinstance(decorator, ast.Name) and decorator.id == name
        for decorator in node.decorator_list
    )


_NOT_NODES = frozenset(
    (
        *("ctx", "op", "ops"),  # contexts and operators: nodes, but never with a call inside
        *("id", "attr", "arg", "name", "names", "asname", "module", "level", "rest"),
        *("kwd_attrs", "conversion", "is_async", "simple", "kind", "tag", "type_comment"),
    )
)
"""Fields that hold nothing a call can be in: identifiers, flags, contexts and operators."""
_LEAVES = frozenset((ast.Constant, ast.Lambda, ast.Import, ast.ImportFrom))
"""Nodes that hold no call to follow: constants, imports, and lambdas (callbacks)."""
_DEFINITIONS = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _child_fields() -> dict[type, tuple[str, ...]]:
    fields: dict[type, tuple[str, ...]] = {}
    for kind in vars(ast).values():
        if not isinstance(kind, type) or not issubclass(kind, ast.AST):
            continue
        if kind in _LEAVES or kind in _DEFINITIONS:
            continue
        names = tuple(name for name in kind._fields if name not in _NOT_NODES)
        if names:
            fields[kind] = names
    return fields


_CHILD_FIELDS = _child_fields()
"""The fields `_walk` descends into, by exact node type, in `_fields` order.

A type that is missing (a name, a constant, a lambda, a context, an operator) holds no call, so
`_walk` skips it without looking inside; so does any value that is not a node (a string, None).
This is `ast.iter_child_nodes` without the generators and the isinstance checks on every field
of every node, which made most of the cost of summarising a file.
"""


def _walk(
    body: list[ast.stmt],
) -> tuple[
    list[ast.Call],
    list[ast.FunctionDef | ast.AsyncFunctionDef],
    list[ast.ClassDef],
    set[str],
]:
    """The calls of a function body, not entering nested definitions or lambdas.

    A nested definition's decorators and defaults run in this body, so their calls count; its
    own body is a function of its own. Comprehensions run here too, and the names they bind
    are returned so that calls through them are not mistaken for module-level functions.
    Calls come in the order of a depth-first walk that takes the last child first.
    """
    calls: list[ast.Call] = []
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    classes: list[ast.ClassDef] = []
    comprehension_names: set[str] = set()
    todo: list[Any] = list(body)
    # Bound once: the loop below runs for every node of every function body.
    pop, push, extend, child_fields = todo.pop, todo.append, todo.extend, _CHILD_FIELDS.get
    while todo:
        node = pop()
        kind = type(node)
        fields = child_fields(kind)
        if fields is None:
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                functions.append(node)
                extend(node.decorator_list)
                extend(node.args.defaults)
                extend(default for default in node.args.kw_defaults if default is not None)
            elif kind is ast.ClassDef:
                classes.append(node)
                extend(node.decorator_list)
                extend(node.bases)
            continue
        if kind is ast.Call:
            calls.append(node)
        elif kind is ast.comprehension:
            target_names(node.target, comprehension_names)
        for name in fields:
            value = getattr(node, name)
            if type(value) is list:
                extend(value)
            elif value is not None:
                push(value)
    functions.sort(key=lambda node: (node.lineno, node.col_offset))
    classes.sort(key=lambda node: (node.lineno, node.col_offset))
    return calls, functions, classes, comprehension_names
