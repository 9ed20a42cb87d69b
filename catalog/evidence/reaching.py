"""What `errcat reproduce` may call in a raise site's stead, read from the package's source
without running it: public callers and methods (`candidates.PublicCaller`), the instances
they are called on, and the docstring examples their values start from
(`catalog.evidence.doc_examples`)."""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.evidence.aliases import Aliases
from catalog.evidence.building import ClassValues, dataclass_init
from catalog.evidence.candidates import (
    Candidate,
    Documented,
    PublicCaller,
    avoiding,
    constructor_call,
    def_header,
    fails_checks,
    instance_tests,
    method_caller,
)
from catalog.evidence.doc_examples import (
    MAX_EXAMPLES,
    ExampleCall,
    example_calls,
    package_submodules,
)
from catalog.evidence.example_values import NO_VALUES, ExampleValues
from extractor.docstrings import parameter_types
from extractor.helpers import rebinds
from extractor.imports import bound_names, dotted_name, parameter_names
from extractor.instance import own_init

if TYPE_CHECKING:
    from catalog.core.config import Config
    from extractor.calls import Caller
    from extractor.model import RaiseSite

MAX_CALLERS = 4
"""Public callers of a site's function whose calls are tried, when its own are not possible."""
READ_DEPTH = 2
"""Calls followed down from a function to what the functions it hands a parameter to read of
it (`Reaching._read_through`)."""
MAX_PLAIN_CALLERS = 2
"""Public callers that pass nothing on to the site's function, tried after those that do:
the shortest plain call of one is a last resort (`candidates.candidates`)."""


class Reaching:
    """What may be called in a site's stead (`candidates.PublicCaller`): a public method itself
    on an instance its class's constructor makes, then the public callers of the site's
    function that pass their own parameters on to it, nearest and most public first, then a
    few that pass nothing on; the call graph is made on the first question (its answers are
    cached with the scan)."""

    def __init__(
        self,
        config: Config,
        values: ExampleValues = NO_VALUES,
        sites: Iterable[RaiseSite] = (),
    ) -> None:
        self.config = config
        self.values = values
        """What the package's examples make, whose classes a parameter without an annotation
        may be known by (`_types`)."""
        self._sites: dict[tuple[str, str], list[RaiseSite]] = {}
        """The package's raise sites by (file, function), whose checks `checks` says."""
        self._checks: dict[tuple[str, str], list[ast.expr]] = {}
        """`checks` by (file, function): a constructor's are asked for each method's site."""
        for site in sites:
            if site.function is not None:
                self._sites.setdefault((site.path, site.function), []).append(site)
        self._graph: Any = None
        self._class_graph: Any = None
        self._values_of_classes: ClassValues | None = None
        self._files: dict[str, ast.Module | None] = {}
        self._names: dict[str, frozenset[str]] = {}
        self._definitions: dict[str, dict[str, ast.AST]] = {}
        self._constants: dict[str, dict[str, str]] = {}
        self._package: str | None = None
        self._submodules: frozenset[str] = frozenset()
        self._alias_reader: Aliases | None = None
        self._running: dict[str, frozenset[str] | None] = {}

    def callers(self, site: RaiseSite) -> Iterator[PublicCaller]:
        from catalog.core.project import module_name
        from extractor.imports import public_rank

        if site.function is None:
            return
        method = self._method(site)
        if method is not None:
            yield method
        found = self._reach().callers(site.path, site.function)
        if found is None:
            return
        # A caller reaching the site only through a function it returns raises nothing
        # when called itself: a call of it is no reproduction.
        ordered = sorted(
            (caller for caller in found.callers if not caller.returned),
            key=lambda caller: (caller.depth, public_rank(caller.name), caller.name),
        )
        passes = {id(caller): _passed_on(caller) for caller in ordered}
        steered = [caller for caller in ordered if passes[id(caller)]][:MAX_CALLERS]
        plain = [caller for caller in ordered if not passes[id(caller)]][:MAX_PLAIN_CALLERS]
        for caller in [*steered, *plain]:
            located = (
                self._definition(caller.path, caller.line)
                if caller.defined is None
                else self._inherited(caller.path, caller.line, caller.name, caller.defined)
            )
            if located is None:
                continue
            try:
                module = module_name(self.config, self.config.root / caller.path)
            except ValueError:
                continue
            name, node = located
            examples = self._examples(caller.path, name, module, parameter_names(node))
            receiver: Candidate | None = None
            if _is_method(name, node):
                # A public method: called on an instance its class's constructor makes.
                made = self._receiver(caller.path, name, module, node)
                if made is None:
                    continue
                receiver, setups = made
                examples = (*examples, *setups)
            yield PublicCaller(
                module,
                name,
                node,
                passes[id(caller)],
                receiver,
                examples,
                types=self._types(caller.path, name, node),
            )

    def _inherited(
        self, path: str, line: int, name: str, defined: tuple[str, int]
    ) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """A method a class inherits (`extractor.calls.Caller.defined`): its name on the class
        whose `class` line is `line` of `path` (`InstanceNorm3d.forward`; a constructor,
        listed as the class, is `Class.__init__`) and the base's definition that runs."""
        runs = self._definition(*defined)
        if runs is None:
            return None
        for qualname, node in self._defined(path):
            if isinstance(node, ast.ClassDef) and node.lineno == line:
                last = name.rpartition(".")[2]
                method = "__init__" if last == node.name else last
                return f"{qualname}.{method}", runs[1]
        return None

    def own_examples(self, site: RaiseSite, module: str) -> tuple[ExampleCall, ...]:
        """The calls of the site's own function in its docstring's examples, resolved."""
        if site.function is None:
            return ()
        node = self._named(site.path, site.function)
        if not isinstance(node, ast.FunctionDef):
            return ()
        return self._examples(site.path, site.function, module, parameter_names(node))

    def own_types(self, site: RaiseSite) -> Documented:
        """The classes the site's own function's parameters without an annotation are known as
        (`_types`)."""
        if site.function is None:
            return ()
        node = self._named(site.path, site.function)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return ()
        return self._types(site.path, site.function, node)

    def _types(
        self, path: str, function: str, node: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> Documented:
        """The classes the docstring of `function` (then of its class: a constructor's
        arguments are often documented there) gives its parameters without an annotation;
        for one it does not document and never rebinds, what it (and what it hands it to,
        `_read_through`) reads of it says: a built-in type having every attribute read
        (`builtin_having`), else the classes of the examples' values that have them all
        (`input.dim()`, `input.shape`)."""
        bare = {
            argument.arg
            for argument in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            if argument.annotation is None
        }
        if not bare:
            return ()
        owners: list[ast.AST | None] = [node]
        if "." in function:
            owners.append(self._named(path, function.rpartition(".")[0]))
        found: dict[str, tuple[str, ...]] = {}
        for owner in owners:
            if isinstance(owner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for name, classes in parameter_types(_docstring(owner) or "").items():
                    if name in bare:
                        found.setdefault(name, classes)
        # The instance of a method is made by its class, not chosen among values; a function
        # of the module may call a parameter `self` (torch's meta kernels) and take anything.
        instance = {"self", "cls"} if "." in function else set()
        for name in sorted(bare - set(found) - instance):
            if rebinds(node, name):
                continue
            read = self._read_through(path, function, node, name)
            # Methods of a built-in type (`repo.split`, `options.items`) say it is one: a
            # class of the package that happens to share them (`Tensor.split`) would be a
            # wrong guess more often than not.
            plain = builtin_having(read)
            if not read and _called(node, name):
                plain = "Callable"  # called and nothing else: any function may do
            having = (plain,) if plain else self.values.classes_having(read)
            if having:
                found[name] = having
        return tuple(found.items())

    def _read_through(
        self,
        path: str,
        function: str,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        name: str,
        depth: int = READ_DEPTH,
    ) -> frozenset[str]:
        """The public attributes `function` reads of its parameter `name` (`_read_of`), and
        those the functions of the same file it hands it to read of theirs, `depth` calls
        down: a constructor often only passes its arguments on to a method that checks them
        (`self._preprocess(data)` reading `data.layout`), and what that method reads says
        what the argument must be as well."""
        read = set(_read_of(node, name))
        if depth <= 0:
            return frozenset(read)
        owner = function.rpartition(".")[0]
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            target = _same_file_callee(call.func, owner)
            callee = self._named(path, target) if target else None
            bound = isinstance(call.func, ast.Attribute)
            if isinstance(callee, ast.ClassDef):
                # A class of the file called: its constructor takes the arguments.
                target = f"{target}.__init__"
                callee, bound = self._named(path, target), True
            if not isinstance(callee, ast.FunctionDef | ast.AsyncFunctionDef) or target is None:
                continue
            positional = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
            if bound:
                positional = positional[1:]  # the instance or class it is called on
            handed: list[str] = []
            for index, argument in enumerate(call.args):
                if isinstance(argument, ast.Starred):
                    break  # where the later arguments land is unknown
                if (
                    isinstance(argument, ast.Name)
                    and argument.id == name
                    and index < len(positional)
                ):
                    handed.append(positional[index])
            accepted = set(positional) | {a.arg for a in callee.args.kwonlyargs}
            handed += [
                keyword.arg
                for keyword in call.keywords
                if keyword.arg in accepted
                and isinstance(keyword.value, ast.Name)
                and keyword.value.id == name
            ]
            # A callee that binds the parameter again (`data = data.coalesce()`) may read
            # something else under its name; a class must have every attribute read, so such
            # reads make the match stricter, never wrong.
            for parameter in handed:
                read |= self._read_through(path, target, callee, parameter, depth - 1)
        return frozenset(read)

    def _examples(
        self, path: str, function: str, module: str, parameters: Collection[str]
    ) -> tuple[ExampleCall, ...]:
        """The calls of `function` (of `path`, imported as `module`) in the examples of its
        docstring, then of its class's for a method or constructor, with the imports their
        names need; those naming what errcat cannot import are left out."""
        from catalog.core.project import package_name

        parts = function.split(".")
        name = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
        docstrings = [self._named(path, function)]
        if len(parts) > 1:
            docstrings.append(self._named(path, ".".join(parts[:-1])))
        if self._package is None:
            self._package = package_name(self.config)
            self._submodules = package_submodules(self.config.package)
        names = self._top_level(path)
        found: list[ExampleCall] = []
        for node in docstrings:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for example in example_calls(_docstring(node), name, parameters):
                resolved = example.resolved(self._package, self._submodules, module, names)
                if resolved is not None and resolved not in found:
                    found.append(resolved)
        return tuple(found[:MAX_EXAMPLES])

    def constants(self, path: str) -> dict[str, str]:
        """The names `path` binds once, at its top level, to a literal value, with that value
        as source (`_SUPPORTED_PADDING = {"reflect", "zeros"}`; a `frozenset(...)`, `set(...)`
        or `tuple(...)` of a literal too, and `dict.fromkeys(...)` of one), or to built-in
        classes (`Dim = int`, `IntLike = (int, torch.SymInt)`); a name rebound anywhere (a
        second assignment, `+=`, `global` in a function) is left out."""
        if path not in self._constants:
            self._constants[path] = _module_constants(self._tree(path))
        return self._constants[path]

    def _named(self, path: str, qualified: str) -> ast.AST | None:
        """The definition of `qualified` (`Class.method`) in `path`: the first `_defined`
        finds (indexed once per file: a run asks for thousands)."""
        if path not in self._definitions:
            index: dict[str, ast.AST] = {}
            for name, node in self._defined(path):
                index.setdefault(name, node)
            self._definitions[path] = index
        return self._definitions[path].get(qualified)

    def _top_level(self, path: str) -> frozenset[str]:
        """Names `path` binds at its top level: what an example may import from it."""
        if path not in self._names:
            tree = self._tree(path)
            self._names[path] = (
                frozenset(bound_names(tree.body)) if tree is not None else frozenset()
            )
        return self._names[path]

    def _method(self, site: RaiseSite) -> PublicCaller | None:
        """A public method of a module-level class, called on an instance its constructor
        makes with values errcat has for its parameters."""
        from catalog.core.project import module_name

        assert site.function is not None
        try:
            module = module_name(self.config, self.config.root / site.path)
        except ValueError:
            return None
        # The instance is made so that the tests of what its constructor set hold.
        tests = instance_tests(site)
        made = self._receiver(site.path, site.function, module, tests=tests)
        if made is None and tests:
            made, tests = self._receiver(site.path, site.function, module), []
        if made is None:
            return None
        receiver, setups = made
        return method_caller(site, module, receiver, setups, steered=bool(tests))

    def _receiver(
        self,
        path: str,
        method: str,
        module: str,
        node: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
        tests: Sequence[ast.expr] = (),
    ) -> tuple[Candidate, tuple[ExampleCall, ...]] | None:
        """The call that makes an instance to call `method` (`Class.name`, of a module-level
        class of `path`; `node` when it is inherited) on, and the setups of the examples it
        came from, whose names the method's arguments may take
        (`ExampleCall.without_arguments`)."""
        class_name, _, name = method.partition(".")
        if not name or "." in name:
            return None
        tree = self._tree(path)
        klass = next(
            (
                node
                for node in (tree.body if tree is not None else ())
                if isinstance(node, ast.ClassDef) and node.name == class_name
            ),
            None,
        )
        if klass is None:
            return None
        if self._class_values().abstract(path, class_name):
            # No instance of an abstract class exists: one of a concrete class of the package
            # deriving from it (`building.ClassValues`) is what the method runs on.
            made = self.build(class_name, module)
            if made is None:
                return None
            return Candidate(module, class_name, made[0], imports=made[1]), ()
        written = own_init(klass) or dataclass_init(klass)
        init = None if written is None else self._aliases().expanded(written, Path(path))
        method_node = node or self._named(path, method)
        wanted = (
            parameter_names(method_node)
            if isinstance(method_node, ast.FunctionDef | ast.AsyncFunctionDef)
            else ()
        )
        examples = self._examples(path, f"{class_name}.__init__", module, wanted)
        receiver = constructor_call(module, class_name, init, examples, tests, self.build)
        if init is not None and receiver is not None and not receiver.example:
            checks = self.checks(path, f"{class_name}.__init__")
            if fails_checks(receiver.call, init, checks):
                # Made-up values its constructor's own checks refuse: made past them, as a
                # class built for an argument is (`Lamp(100)` where `Lamp(1)` fails `volts <
                # 100`).
                remade = constructor_call(
                    module, class_name, init, examples, [*tests, *checks], self.build
                )
                receiver = remade or receiver  # none meeting them all: as it was
        if receiver is None:
            return None
        if not receiver.example:
            return receiver, ()
        return receiver, tuple(example.without_arguments() for example in examples)

    def _file_tree(self, file: Path) -> ast.Module | None:
        """`_tree` of a file named by its full path (the alias reader's); None outside the
        project, where the alias reader never looks."""
        root = self.config.root
        for base, named in ((root, file), (root.resolve(), file.resolve())):
            if named.is_relative_to(base):
                return self._tree(named.relative_to(base).as_posix())
        return None

    def _tree(self, path: str) -> ast.Module | None:
        if path not in self._files:
            try:
                self._files[path] = ast.parse((self.config.root / path).read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError):
                self._files[path] = None
        return self._files[path]

    def build(self, dotted: str, module: str) -> tuple[str, tuple[str, ...]] | None:
        """`candidates.Builder`: the call that makes a class of the package where its
        constructor takes arguments (`catalog.evidence.building`), or where `module` does not
        bind the name the annotation writes while it runs (imported for type checkers only,
        `if TYPE_CHECKING:`, as a forward reference `"Environment"` often is): then named
        where the package defines or exports it, whatever its constructor takes, or passed
        as None where errcat cannot make it."""
        runtime = self._runtime_names(module)
        unbound = runtime is not None and dotted.split(".")[0] not in runtime
        made = self._class_values().build(dotted, module, qualified=unbound)
        if made is None and unbound:
            # Neither bound while the module runs nor made by its full path: importing it from
            # the module fails before the call, so the call passes None in its place.
            return "None", ()
        return made

    def _class_values(self) -> ClassValues:
        if self._values_of_classes is None:
            self._values_of_classes = ClassValues(
                self.config,
                self.values.by_class,
                self._named,
                self._classes,
                self._aliases,
                self.checks,
            )
        return self._values_of_classes

    def checks(self, path: str, function: str) -> list[ast.expr]:
        """What every call of `function` (qualified, of the file `path`) must meet not to stop
        at one of its own raise sites: the negation of each one's tests (`avoiding`), in the
        function's parameters."""
        if (path, function) not in self._checks:
            self._checks[(path, function)] = self._read_checks(path, function)
        return self._checks[(path, function)]

    def _read_checks(self, path: str, function: str) -> list[ast.expr]:
        from catalog.core.project import module_name

        sites = self._sites.get((path, function), ())
        if not sites:
            return []
        try:
            module = module_name(self.config, self.config.root / path)
        except ValueError:
            return []
        found: list[ast.expr] = []
        for site in sites:
            said = avoiding(
                replace(site, signature=self.signature(site)), module, (), self.constants(path)
            )
            found += said.get((module, function), [])
        return found

    def _runtime_names(self, module: str) -> frozenset[str] | None:
        """The names `module`'s file binds at its top level while it runs (not under `if
        TYPE_CHECKING:`); None for a module outside the package."""
        if module not in self._running:
            file = self._module_file(module)
            tree = None if file is None else self._file_tree(file)
            self._running[module] = (
                None if tree is None else frozenset(bound_names(_run_time(tree.body)))
            )
        return self._running[module]

    @functools.cached_property
    def _folders(self) -> tuple[Path, Path]:
        """The folder the package imports from and the package's own, resolved once: the
        alias reader asks `_module_file` for a module at each name it follows."""
        from catalog.core.project import import_root

        return import_root(self.config), self.config.package.resolve()

    def _module_file(self, dotted: str) -> Path | None:
        """The package's file of the module `dotted`, or None."""
        top, package = self._folders
        base = top.joinpath(*dotted.split("."))
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if file.is_file() and file.resolve().is_relative_to(package):
                return file
        return None

    def _classes(self) -> Any:
        """The package's call graph, for its classes and their constructors."""
        if self._class_graph is None:
            from catalog.core.project import cache_folder, scan_package
            from extractor.calls import call_graph

            report = scan_package(self.config)
            self._class_graph = call_graph(
                report, cwd=self.config.root, cache_dir=cache_folder(self.config)
            )
        return self._class_graph

    def _reach(self) -> Any:
        if self._graph is None:
            from catalog.core.project import cache_folder, scan_package
            from extractor.calls import reaches

            report = scan_package(self.config)
            self._graph = reaches(report, cwd=self.config.root, cache_dir=cache_folder(self.config))
        return self._graph

    def _definition(
        self, path: str, line: int
    ) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """The qualified name and node of the function whose `def` is on `line` of `path`."""
        for qualname, node in self._defined(path):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == line:
                return qualname, self._aliases().expanded(node, Path(path))
        return None

    def signature(self, site: RaiseSite) -> str | None:
        """The site's signature with the aliases its annotations use written out
        (`catalog.evidence.aliases`), as the calls of it are made from it."""
        node = def_header(site.signature) if site.signature else None
        if node is None:
            return site.signature
        expanded = self._aliases().expanded(node, Path(site.path))
        return site.signature if expanded is node else ast.unparse(expanded)

    def _aliases(self) -> Aliases:
        if self._alias_reader is None:
            self._alias_reader = Aliases(self.config.root, self._module_file, self._file_tree)
        return self._alias_reader

    def _defined(
        self, path: str
    ) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]]:
        """Every function and class defined at the top of `path` or in its classes (under
        module-level `if TYPE_CHECKING:` or `try:` too), with its qualified name."""
        tree = self._tree(path)
        todo: list[tuple[str, ast.AST]] = [("", tree)] if tree is not None else []
        while todo:
            prefix, node = todo.pop()
            for child in _definitions(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    yield f"{prefix}{child.name}", child
                    if isinstance(child, ast.ClassDef):
                        todo.append((f"{prefix}{child.name}.", child))


def _run_time(statements: list[ast.stmt]) -> list[ast.stmt]:
    """`statements` without the bodies of `if TYPE_CHECKING:` (their `else` kept): what runs."""
    kept: list[ast.stmt] = []
    for statement in statements:
        if isinstance(statement, ast.If) and (dotted_name(statement.test) or "").endswith(
            "TYPE_CHECKING"
        ):
            kept += _run_time(statement.orelse)
        else:
            kept.append(statement)
    return kept


def _definitions(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements directly in a module or class body, and in its `if` and `try` blocks
    (definitions under `if TYPE_CHECKING:` or `try:`)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If | ast.Try):
            yield from _definitions(child)
        elif isinstance(child, ast.stmt):
            yield child


def _docstring(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str | None:
    """A definition's docstring, or the text a class assigns to `__doc__` in its body (a
    literal, or one made longer by `.format(...)` or `+`: the literal's text is taken)."""
    found = ast.get_docstring(node)
    if found is not None or not isinstance(node, ast.ClassDef):
        return found
    for statement in node.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__doc__" for t in statement.targets
        ):
            for part in ast.walk(statement.value):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    return part.value
    return None


def _passed_on(caller: Caller) -> tuple[tuple[str, str], ...]:
    """What `caller` passes on of its own parameters: unchanged
    (`Caller.passes`), or unchanged on one branch of a conditional expression it computes the
    argument with (`padding if isinstance(padding, str) else _single(padding)`, a value the
    other branch normalises): where that branch is taken, the site's tests read the caller's
    own argument, which is what a call's values are chosen for (and the run checks)."""
    found = list(caller.passes)
    for name, text, reads in caller.computes:
        try:
            computed = ast.parse(text, mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(computed, ast.IfExp):
            continue
        for branch in (computed.body, computed.orelse):
            if isinstance(branch, ast.Name) and branch.id in reads:
                found.append((name, branch.id))
                break
    return tuple(found)


_BUILTINS = (str, dict, list, tuple, set, bytes)
"""Built-in types a parameter's reads may name, the likelier first where several have them."""


def builtin_having(read: Collection[str]) -> str | None:
    """The built-in type (`_BUILTINS`) with every attribute of `read`, by its name; none for
    nothing read."""
    if not read:
        return None
    return next((kind.__name__ for kind in _BUILTINS if set(read) <= set(dir(kind))), None)


MAX_CONSTANT = 400
"""Characters of a constant's source beyond which it is not written into a test."""
_CONVERTED = {"frozenset": set, "set": set, "tuple": tuple}


def _module_constants(tree: ast.Module | None) -> dict[str, str]:
    """`Reaching.constants` of a parsed file."""
    if tree is None:
        return {}
    bound: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    for statement in _definitions(tree):
        if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                for written in ast.walk(target):
                    if isinstance(written, ast.Name):
                        bound[written.id] = bound.get(written.id, 0) + 1
                        if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value:
                            values[written.id] = statement.value
    rebound = {
        name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names
    }
    found: dict[str, str] = {}
    for name, value in values.items():
        if bound[name] != 1 or name in rebound:
            continue
        classes = _builtin_classes(value, bound)
        if classes is not None:
            found[name] = classes
            continue
        literal = _literal_value(value)
        if literal is None:
            continue
        source = (
            # A set written in one order, whatever the run's hash seed.
            "{" + ", ".join(sorted(map(repr, literal))) + "}"
            if isinstance(literal, set | frozenset) and literal
            else repr(literal)
        )
        if len(source) <= MAX_CONSTANT:
            try:
                if ast.literal_eval(source) == literal:
                    found[name] = source
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue  # `nan`, or what its repr does not read back as
    return found


def _builtin_classes(value: ast.expr, bound: dict[str, int]) -> str | None:
    """The source of a value that names built-in classes, as `isinstance` takes them: one
    (`Dim = int`) or a tuple holding one at least, beside dotted names (`IntLike = (int,
    torch.SymInt)`); None otherwise, and where the module binds the built-in's name itself.
    Written into a test, `isinstance(idx, Dim)` is judged as what it is, a test of `int`, not
    of a class of the package its CapWords name suggests."""
    elements = value.elts if isinstance(value, ast.Tuple) else [value]
    if not elements or not all(dotted_name(element) for element in elements):
        return None
    if not any(
        isinstance(element, ast.Name)
        and element.id not in bound
        and isinstance(getattr(builtins, element.id, None), type)
        for element in elements
    ):
        return None
    return ast.unparse(value)


def _literal_value(value: ast.expr) -> Any:
    """The value of a literal, or of `frozenset`/`set`/`tuple` of one, or `dict.fromkeys` of
    one (torch's `_legal_ops`, tested with `in`); None otherwise."""
    if (
        isinstance(value, ast.Call)
        and dotted_name(value.func) == "dict.fromkeys"
        and len(value.args) == 1
        and not value.keywords
    ):
        keys = _literal_value(value.args[0])
        try:
            return None if keys is None else dict.fromkeys(keys)
        except TypeError:
            return None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in _CONVERTED
        and len(value.args) == 1
        and not value.keywords
    ):
        inner = _literal_value(value.args[0])
        try:
            return None if inner is None else _CONVERTED[value.func.id](inner)
        except TypeError:
            return None
    try:
        found = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return found


def _called(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether the function calls its parameter `name` (`fn(*args)`)."""
    return any(
        isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == name
        for inner in ast.walk(node)
    )


def _same_file_callee(func: ast.expr, owner: str) -> str | None:
    """The qualified name, in the calling function's file, of what `func` calls: a method of
    the caller's own class through `self.`/`cls.` (`owner` is that class), or a function by its
    bare name (looked up at the file's top level by the caller)."""
    if isinstance(func, ast.Name):
        return func.id
    if (
        owner
        and isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
    ):
        return f"{owner}.{func.attr}"
    return None


def _read_of(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> frozenset[str]:
    """The public attributes the function (nested functions included) reads of `name`."""
    return frozenset(
        inner.attr
        for inner in ast.walk(node)
        if isinstance(inner, ast.Attribute)
        and isinstance(inner.ctx, ast.Load)
        and isinstance(inner.value, ast.Name)
        and inner.value.id == name
        and not inner.attr.startswith("_")
    )


def _is_method(qualified: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `qualified` (`Class.name`) is called on an instance: a method, neither a
    constructor nor a static or class method."""
    parts = qualified.split(".")
    if len(parts) != 2 or parts[1] == "__init__":
        return False
    decorators = {dotted_name(d) or "" for d in node.decorator_list}
    return not decorators & {"staticmethod", "classmethod"}
