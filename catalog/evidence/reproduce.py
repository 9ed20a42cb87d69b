"""`errcat reproduce`: call public functions the way their raise sites say they fail, and record
the calls that were seen to raise their entry.

For each raise site of an entry (paired with entries by `catalog.matching.sites.Matcher`, as the build
pairs them) whose function is public and importable (`module.function`, a class for its
`__init__`, a static or class method through its class), a few candidate calls are built from the
site's `signature` and the `if`/`guard` conditions that lead to the raise: each parameter a
condition names gets values read from the comparisons it appears in (both sides of every
boundary, `None`, the constants it is compared with, falsy values of its annotation, ...),
the other parameters keep their defaults or get a plain value of their annotation (`int` 1,
`str` 'x'; a parameter with neither gives the site no candidate). Combinations are kept when no
condition this module can evaluate is false for them, shortest call first, `MAX_CANDIDATES` per
site. Nothing of the package is evaluated in errcat's own process: conditions are read with `ast`
and evaluated only where they compare parameters with constants.

Each call is a small program (`from widgets.core import turn` / `turn('x', -1)`) run by a
worker process through `catalog.core.example_worker.run_in_child`, the machinery that runs examples:
a fresh forked child per call with a time limit, its own process group and captured output.
Here the child also confines itself before the program runs (`example_worker.confine`): an
address-space limit (`MEMORY_LIMIT`), a temporary working folder that is also HOME and TMPDIR
(removed afterwards), no network (`socket` connect/getaddrinfo raise OSError: a guard inside
Python, not a sandbox) and no `os.fork`. A call that hangs, crashes, forks, runs out of memory or
kills its process is a failed attempt, and the run goes on. `jobs` workers run calls at once.

A call reproduces its entry when the child raised, the exception's class is the entry's (its
generated class by id, or the class named by `exception`), `str(exc)` is the whole of a message
the entry's template prints (`LiteralPattern`, as `errcat explain` matches), and the traceback's
innermost frame is the site's file, on a line of its raise statement.

Results are committed beside the catalog (`reproduced.json`, like `verified.json`). Each is tied
to a digest of the site's file and the call, so `load_reproduced` drops results for code that
changed since they were seen.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import hashlib
import importlib
import itertools
import json
import math
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
import typing
from collections import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.core.worker_process import WorkerFailed, WorkerProcess
from catalog.evidence.limits import DEFAULT_TIMEOUT
from catalog.evidence.stored import FileBytes, dump_results, read_results

if TYPE_CHECKING:
    from catalog.core.config import Config
    from catalog.core.model import Catalog, Entry
    from extractor.model import RaiseSite

RESULTS_FILE = "reproduced.json"
"""File name inside the catalog folder."""
FORMAT_VERSION = 1
MEMORY_LIMIT = 2 * 1024**3
"""Bytes of address space a call's child may map (RLIMIT_AS)."""
MAX_CANDIDATES = 3
"""Calls tried per site, shortest first; the first that reproduces ends the site."""
MAX_COMBINATIONS = 256
"""Value combinations considered per site before the conditions filter them."""
PRELOAD_ENV = "ERRCAT_REPRODUCE_PRELOAD"
"""`<module><os.pathsep><folder>`: the package a worker imports once before it forks children
for calls, and the temporary folder that import runs in."""
OUTPUT_CHARS = 300
"""Characters of the exception line kept in the results file."""

_SKIP = object()
"""A parameter left to its default."""


# ---------------------------------------------------------------------------------------------
# Candidate calls, from a site's signature and conditions.


@dataclass(frozen=True)
class Candidate:
    """One call to try."""

    module: str
    """Where the callee is imported from (`widgets.core`)."""
    callee: str
    """The dotted name called, relative to the module (`turn`, `Widget`, `Widget.make`)."""
    call: str
    """The call as written (`turn('x', -1)`)."""
    names: tuple[str, ...] = ()
    """Other names the call's arguments use, imported from the same module (`Tensor`)."""

    @property
    def program(self) -> str:
        imported = ", ".join(dict.fromkeys((self.callee.split(".")[0], *self.names)))
        return f"from {self.module} import {imported}\n{self.call}\n"


@dataclass(frozen=True)
class _Built:
    """A value the call's program makes by calling, without arguments, the class a parameter
    is annotated with (`Tensor()` for `input: Tensor`), named as the callee's module names it:
    whether that class can be called so is for the run to say (a failed attempt if not)."""

    dotted: str

    def __repr__(self) -> str:
        return f"{self.dotted}()"

    @property
    def root(self) -> str:
        return self.dotted.split(".")[0]


@dataclass(frozen=True)
class _Parameter:
    name: str
    kind: str
    """`positional_only`, `positional`, `keyword_only`, `varargs` or `varkw`."""
    default: ast.expr | None
    annotation: ast.expr | None


def def_header(signature: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The `def` of a site's `signature` (its decorators and header as written), or None when
    it does not parse."""
    header = signature.strip()
    try:
        tree = ast.parse(header + "\n    pass\n" if header.endswith(":") else header)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[_Parameter]:
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    # Defaults belong to the last positional parameters.
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    found = [
        _Parameter(
            arg.arg,
            "positional_only" if index < len(arguments.posonlyargs) else "positional",
            default,
            arg.annotation,
        )
        for index, (arg, default) in enumerate(zip(positional, defaults, strict=True))
    ]
    if arguments.vararg is not None:
        found.append(_Parameter(arguments.vararg.arg, "varargs", None, None))
    for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        found.append(_Parameter(arg.arg, "keyword_only", kw_default, arg.annotation))
    if arguments.kwarg is not None:
        found.append(_Parameter(arguments.kwarg.arg, "varkw", None, None))
    return found


_PLAIN = {
    "int": 1,
    "float": 1.0,
    "complex": 1.0,
    "str": "x",
    "bool": True,
    "bytes": b"x",
    "list": [],
    "List": [],
    "Sequence": [],
    "MutableSequence": [],
    "Iterable": [],
    "Collection": [],
    "tuple": (),
    "Tuple": (),
    "dict": {},
    "Dict": {},
    "Mapping": {},
    "MutableMapping": {},
    "set": set(),
    "Set": set(),
}
"""A plain value per annotation name: what a caller passes when the value does not matter."""
_FALSY = {"int": 0, "float": 0.0, "str": "", "bool": False, "bytes": b""}
_NO_VALUE = object()


def _annotation_name(annotation: ast.expr | None) -> list[str]:
    """The class names an annotation allows, in order (`X | None` gives X then None)."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.Constant):
        if annotation.value is None:
            return ["None"]
        if isinstance(annotation.value, str):  # a string annotation
            try:
                return _annotation_name(ast.parse(annotation.value, mode="eval").body)
            except SyntaxError:
                return []
        return []
    if isinstance(annotation, ast.Name):
        return [annotation.id]
    if isinstance(annotation, ast.Attribute):
        return [annotation.attr]
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _annotation_name(annotation.left) + _annotation_name(annotation.right)
    if isinstance(annotation, ast.Subscript):
        base = _annotation_name(annotation.value)
        if base in (["Optional"], ["Union"]):
            inner = annotation.slice
            parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            names = [name for part in parts for name in _annotation_name(part)]
            return names + (["None"] if base == ["Optional"] else [])
        return base
    return []


def _plain_value(annotation: ast.expr | None) -> Any:
    for name in _annotation_name(annotation):
        if name in _PLAIN:
            return _copy(_PLAIN[name])
    for part in _class_annotations(annotation):
        return _Built(part)
    return _NO_VALUE


_NOT_CLASSES = frozenset(dir(builtins)) | frozenset(typing.__all__) | frozenset(abc.__all__)
"""Names an annotation may use that are no class of the package to call (`Any`, `Sequence`)."""


def _class_annotations(annotation: ast.expr | None) -> list[str]:
    """The dotted names, as written, of the classes an annotation names directly (`Tensor`,
    `torch.Tensor`, each side of `X | None`): CapWords names, none of the built-ins or of
    `typing` and `collections.abc`."""
    if annotation is None:
        return []
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _class_annotations(annotation.left) + _class_annotations(annotation.right)
    parts: list[str] = []
    node: ast.expr = annotation
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    parts.append(node.id)
    dotted = ".".join(reversed(parts))
    last = parts[0]
    if last in _NOT_CLASSES or not last[:1].isupper() or last.isupper():
        return []
    return [dotted]


def _falsy_value(annotation: ast.expr | None) -> Any:
    names = _annotation_name(annotation)
    for name in names:
        if name in _FALSY:
            return _FALSY[name]
        if name in _PLAIN:
            return type(_PLAIN[name])()  # the empty container
    return None


def _copy(value: Any) -> Any:
    return type(value)() if isinstance(value, list | dict | set) else value


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def _len_of(node: ast.expr, names: set[str]) -> str | None:
    """`p` when `node` is `len(p)` of a parameter."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in names
    ):
        return node.args[0].id
    return None


def _around(constant: Any) -> list[Any]:
    """Values on both sides of a constant a parameter is compared with."""
    if isinstance(constant, bool) or constant is None:
        return [constant]
    if isinstance(constant, int | float):
        if isinstance(constant, float) and not math.isfinite(constant):
            return [constant]
        step = 1.0 if isinstance(constant, float) else 1
        return [constant - step, constant, constant + step]
    if isinstance(constant, str):
        return [constant, "x" if constant != "x" else "y"]
    if isinstance(constant, tuple | list | set | frozenset):
        members = [m for m in constant if isinstance(m, str | int | float | bool) or m is None]
        others: list[Any] = []
        if all(isinstance(m, str) for m in members) and members:
            others = [next(v for v in ("x", "y", "z", "xx") if v not in members)]
        numbers = [m for m in members if isinstance(m, int | float)]
        if numbers and len(numbers) == len(members):
            others = [max(numbers) + 1]
        return sorted(set(members), key=repr) + others
    return [constant]


def _sized(length: int, annotation: ast.expr | None) -> Any:
    names = _annotation_name(annotation)
    if "str" in names:
        return "x" * length
    if "bytes" in names:
        return b"x" * length
    if "tuple" in names or "Tuple" in names:
        return (0,) * length
    return [0] * length


def _truth_tested(condition: ast.expr) -> list[ast.expr]:
    """The operands whose truth the condition tests: itself, under `not`, in `and`/`or`."""
    found: list[ast.expr] = []
    stack = [condition]
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            stack.append(node.operand)
        elif isinstance(node, ast.BoolOp):
            stack.extend(node.values)
    return found


def _pools(
    conditions: Sequence[ast.expr], parameters: Mapping[str, _Parameter]
) -> dict[str, list[Any]]:
    """Values worth trying for each parameter the conditions name, in order of first reading."""
    names = set(parameters)
    pools: dict[str, list[Any]] = {}

    def add(name: str, *values: Any) -> None:
        pool = pools.setdefault(name, [])
        for value in values:
            if value is _NO_VALUE:
                continue
            # Compare by type and repr: 1 == 1.0 == True must stay three values.
            if not any(type(v) is type(value) and repr(v) == repr(value) for v in pool):
                pool.append(value)

    for condition in conditions:
        truth_tested = _truth_tested(condition)
        for node in ast.walk(condition):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                for left, right in itertools.pairwise(sides):
                    for side, other in ((left, right), (right, left)):
                        constant = _literal(other)
                        if constant is _NO_VALUE:
                            continue
                        if isinstance(side, ast.Name) and side.id in names:
                            add(side.id, *_around(constant))
                        sized = _len_of(side, names)
                        if sized is not None and isinstance(constant, int):
                            annotation = parameters[sized].annotation
                            lengths = [n for n in _around(constant) if n >= 0]
                            add(sized, *(_sized(n, annotation) for n in lengths))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in names
            ):
                annotation = parameters[node.args[0].id].annotation
                add(node.args[0].id, _plain_value(annotation), None, 1, "x", 1.0, [])
            elif isinstance(node, ast.Name) and node.id in names:
                # Tested for truth (`not x`, `x or y`): a falsy value too; named in any other
                # way (`x.ndim`), only a plain value of its annotation.
                annotation = parameters[node.id].annotation
                if node in truth_tested:
                    add(node.id, _falsy_value(annotation))
                add(node.id, _plain_value(annotation))
    for name, pool in pools.items():
        parameter = parameters[name]
        add(name, _plain_value(parameter.annotation))
        if parameter.default is not None:
            pool.insert(0, _SKIP)
    return pools


# Three-valued evaluation of a condition: True, False, or None when errcat cannot tell without
# running the package.

_TYPES: dict[str, type | tuple[type, ...]] = {
    "int": int,
    "float": float,
    "complex": complex,
    "str": str,
    "bool": bool,
    "bytes": bytes,
    "list": list,
    "tuple": tuple,
    "dict": dict,
    "set": set,
    "frozenset": frozenset,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _value(node: ast.expr, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return env.get(node.id, _NO_VALUE)
    sized = _len_of(node, set(env))
    if sized is not None:
        value = env[sized]
        try:
            return len(value)
        except TypeError:
            return _NO_VALUE
    return _literal(node)


def _truth(node: ast.expr, env: Mapping[str, Any]) -> bool | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _truth(node.operand, env)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        seen = [_truth(value, env) for value in node.values]
        decisive = isinstance(node.op, ast.Or)  # True decides `or`, False decides `and`
        if decisive in seen:
            return decisive
        return None if None in seen else not decisive
    if isinstance(node, ast.Compare):
        sides = [_value(side, env) for side in (node.left, *node.comparators)]
        answer: bool | None = True
        for (left, right), op in zip(itertools.pairwise(sides), node.ops, strict=True):
            compare = _COMPARE.get(type(op))
            if left is _NO_VALUE or right is _NO_VALUE or compare is None:
                answer = None
                continue
            try:
                if not compare(left, right):
                    return False
            except TypeError:
                return False  # the real comparison raises before the raise is reached
        return answer
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
    ):
        value = _value(node.args[0], env)
        if value is _NO_VALUE:
            return None
        spec = node.args[1]
        classes = spec.elts if isinstance(spec, ast.Tuple) else [spec]
        known = [_TYPES.get(c.id) if isinstance(c, ast.Name) else None for c in classes]
        if any(t is not None and isinstance(value, t) for t in known):
            return True
        return False if all(t is not None for t in known) else None
    value = _value(node, env)
    return None if value is _NO_VALUE else bool(value)


def _callee(site: RaiseSite, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, bool]:
    """The dotted name to call and whether its first parameter is bound (self, cls).

    Raises ValueError with the reason when the site's function cannot be called from outside.
    """
    assert site.function is not None
    parts = site.function.split(".")
    private = [part for part in parts if part.startswith("_") and part != "__init__"]
    if private:
        raise ValueError(f"`{site.function}` is private")
    if isinstance(node, ast.AsyncFunctionDef):
        raise ValueError(f"`{site.function}` is a coroutine function")
    if parts[-1] == "__init__":
        if len(parts) == 1:
            raise ValueError("`__init__` outside a class")
        return ".".join(parts[:-1]), True
    if len(parts) == 1:
        return parts[0], False
    decorators = {
        d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else ""
        for d in node.decorator_list
    }
    if "staticmethod" in decorators:
        return site.function, False
    if "classmethod" in decorators:
        return site.function, True
    raise ValueError(f"`{site.function}` is a method or a nested function")


def candidates(site: RaiseSite, module: str) -> list[Candidate]:
    """The calls to try for `site`, shortest first; raises ValueError saying why there are none.

    `module` is the import name of the site's file.
    """
    if site.function is None:
        raise ValueError("raised at module level, not in a function")
    node = def_header(site.signature) if site.signature else None
    if node is None:
        raise ValueError(f"the signature of `{site.function}` is not readable")
    callee, bound = _callee(site, node)
    parameters = _parameters(node)
    if bound:
        if not parameters or parameters[0].kind not in ("positional_only", "positional"):
            raise ValueError(f"`{site.function}` takes no self or cls")
        parameters = parameters[1:]
    by_name = {p.name: p for p in parameters if p.kind not in ("varargs", "varkw")}
    conditions = []
    for condition in site.conditions:
        if condition.kind in ("if", "guard") and condition.code:
            with contextlib.suppress(SyntaxError):
                conditions.append(ast.parse(condition.code.strip(), mode="eval").body)
    pools = _pools(conditions, by_name)
    choices: list[list[Any]] = []
    for parameter in by_name.values():
        if pools.get(parameter.name):
            choices.append(pools[parameter.name])
        elif parameter.default is not None:
            choices.append([_SKIP])
        else:
            plain = _plain_value(parameter.annotation)
            if plain is _NO_VALUE:
                raise ValueError(
                    f"no value for parameter `{parameter.name}` of `{site.function}` "
                    "(no default, and no annotation errcat can make a value of)"
                )
            choices.append([plain])
    found: dict[str, Candidate] = {}
    for combination in itertools.islice(itertools.product(*choices), MAX_COMBINATIONS):
        values = dict(zip(by_name, combination, strict=True))
        env = {
            name: (_default_value(by_name[name]) if value is _SKIP else value)
            for name, value in values.items()
        }
        # A value the program builds is unknown here: conditions on it are not judged.
        env = {
            name: value
            for name, value in env.items()
            if value is not _NO_VALUE and not isinstance(value, _Built)
        }
        if any(_truth(condition, env) is False for condition in conditions):
            continue
        call = _render_call(callee, by_name.values(), values)
        if call is not None:
            names = tuple(
                sorted({value.root for value in values.values() if isinstance(value, _Built)})
            )
            found.setdefault(call, Candidate(module, callee, call, names))
    if not found:
        raise ValueError("no combination of values errcat tried meets the conditions")
    ranked = sorted(found.values(), key=lambda c: len(c.call))  # stable: generation order
    return ranked[:MAX_CANDIDATES]


def _default_value(parameter: _Parameter) -> Any:
    return _NO_VALUE if parameter.default is None else _literal(parameter.default)


def _render_call(
    callee: str, parameters: Iterable[_Parameter], values: Mapping[str, Any]
) -> str | None:
    """The call's source; None when a positional-only parameter would follow a skipped one."""
    pieces: list[str] = []
    by_keyword = False
    for parameter in parameters:
        value = values[parameter.name]
        if value is _SKIP:
            by_keyword = True  # what follows a skipped parameter must be named
            continue
        if parameter.kind == "keyword_only" or by_keyword:
            if parameter.kind == "positional_only":
                return None
            pieces.append(f"{parameter.name}={value!r}")
        else:
            pieces.append(repr(value))
    return f"{callee}({', '.join(pieces)})"


# ---------------------------------------------------------------------------------------------
# Running calls: worker processes that fork a confined child per call.


def worker_main() -> None:
    """Entry of a worker process: one JSON task per stdin line, one JSON reply per line."""
    from catalog.core.example_worker import run_in_child

    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    # `python -c` puts the current folder first on sys.path; the children run in a temporary
    # folder, which must not become importable. The package comes from PYTHONPATH.
    sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
    sys.dont_write_bytecode = True  # a run leaves no __pycache__ in the package
    preload = os.environ.pop(PRELOAD_ENV, "")
    confined = False
    if preload:
        module, _, home = preload.partition(os.pathsep)
        confined = _preload(module, home)
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin.buffer:
        task = json.loads(line)
        if confined and task.get("module"):
            # The callee's module too, once, for every later call into it: torch's compiler
            # and exporter modules take seconds each to import.
            _import_quietly(str(task["module"]))
        replies.write(json.dumps(run_in_child(task, float(task["timeout"]))) + "\n")
        replies.flush()


def _import_quietly(module: str) -> bool:
    """Import `module` in the worker; False (and a line on stderr) when its import fails: the
    children then import it themselves, and fail as they would have."""
    if module in sys.modules:
        return True
    try:
        importlib.import_module(module)
    except (Exception, SystemExit) as exc:  # whatever the package's import raises
        print(
            f"errcat reproduce: importing {module} once failed "
            f"({type(exc).__name__}); each call imports it",
            file=sys.stderr,
        )
        return False
    return True


def _preload(module: str, home: str) -> bool:
    """Confine the worker as the calls are (memory, network, a temporary working folder, HOME
    and TMPDIR) and import the package once, so that each forked child starts with it loaded:
    torch takes seconds to import, a call in a child that has it, milliseconds. True once
    confined: the callees' modules may then be imported in the worker too."""
    from catalog.core.example_worker import confine

    # Not `die_with_parent`: the thread that started this worker may end while another thread
    # still asks it for calls; the worker ends on its own when its stdin closes.
    confine({"workdir": home, "memory": MEMORY_LIMIT, "network": False, "die_with_parent": False})
    _import_quietly(module)
    return True


class _Worker:
    """A worker whose children run candidate calls confined (`catalog.core.example_worker`)."""

    def __init__(self, cwd: Path, path: Path, preload: str | None = None) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(path), env.get("PYTHONPATH")) if p)
        # The folder the package's import runs in, removed by `close` whatever the worker did.
        self.home = tempfile.mkdtemp(prefix="errcat-reproduce-worker-") if preload else None
        if preload and self.home:
            env[PRELOAD_ENV] = f"{preload}{os.pathsep}{self.home}"
        # `import errcat` first: it pins errcat's own `catalog` against a project's folder.
        command = "import errcat; from catalog.evidence.reproduce import worker_main; worker_main()"
        self.worker = WorkerProcess(
            [sys.executable, "-c", command], cwd=cwd, env=env, name="reproduce", start_timeout=60.0
        )

    def run(
        self, program: str, timeout: float, workdir: str, module: str | None = None
    ) -> dict[str, Any]:
        """Run `program` in a confined child; the worker imports `module` first, once."""
        task = {
            "kind": "run",
            "module": module,
            "code": program,
            "filename": "<errcat reproduce>",
            "timeout": timeout,
            "confine": {
                "workdir": workdir,
                "memory": MEMORY_LIMIT,
                "network": False,
                "fork": False,
            },
        }
        return self.worker.ask(task, timeout)

    def close(self) -> None:
        self.worker.close()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Judging and the run.


@dataclass(frozen=True)
class Reproduction:
    """A call seen to raise its entry at its site (a record of the results file)."""

    path: str
    """The site's file, relative to the project root, `/`-separated."""
    line: int
    """1-based line of the site's `raise`."""
    call: str
    output: str
    """The exception line it printed (`ValueError: ...`), capped at `OUTPUT_CHARS`."""
    digest: str
    """SHA-256 over the site file's bytes and the call, when it was seen."""

    def as_dict(self) -> dict[str, object]:
        return {
            "site": {"path": self.path, "line": self.line},
            "call": self.call,
            "output": self.output,
            "digest": self.digest,
        }


@dataclass(frozen=True)
class Attempt:
    """One call run for one site."""

    call: str
    ended: str
    """`raised`, `finished`, `timeout` or `crashed` (as examples end)."""
    problem: str | None
    """Why it did not reproduce the entry; None when it did."""
    output: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class SiteOutcome:
    path: str
    line: int
    function: str | None
    no_candidate: str | None = None
    """Why no call was built for this site; None when calls were tried."""
    attempts: tuple[Attempt, ...] = ()
    reproduction: Reproduction | None = None


@dataclass(frozen=True)
class EntryOutcome:
    entry_id: str
    name: str
    sites: tuple[SiteOutcome, ...] = ()

    @property
    def reproductions(self) -> tuple[Reproduction, ...]:
        found = [s.reproduction for s in self.sites if s.reproduction is not None]
        return tuple(sorted(found, key=lambda r: (len(r.call), r.path, r.line)))

    @property
    def outcome(self) -> str:
        """`reproduced`, `failed` (calls were run, none reproduced) or `no candidate`."""
        if self.reproductions:
            return "reproduced"
        return "failed" if any(site.attempts for site in self.sites) else "no candidate"

    @property
    def why(self) -> str:
        """Why it was not reproduced: the last problem of each site, in site order."""
        if not self.sites:
            return "raised nowhere in the package"
        reasons: list[str] = []
        for site in self.sites:
            if site.attempts:
                last = site.attempts[-1]
                reasons.append(f"{site.path}:{site.line}: {last.call} {last.problem}")
            elif site.no_candidate:
                reasons.append(f"{site.path}:{site.line}: {site.no_candidate}")
        return "; ".join(reasons)

    def as_dict(self) -> dict[str, object]:
        best = self.reproductions[0] if self.reproductions else None
        return {
            "id": self.entry_id,
            "name": self.name,
            "outcome": self.outcome,
            "call": best.call if best else None,
            "why": None if best else self.why,
            "sites": [
                {
                    "path": s.path,
                    "line": s.line,
                    "function": s.function,
                    "no_candidate": s.no_candidate,
                    "attempts": [
                        {"call": a.call, "ended": a.ended, "problem": a.problem} for a in s.attempts
                    ],
                    "reproduced": s.reproduction.as_dict() if s.reproduction else None,
                }
                for s in self.sites
            ],
        }


@dataclass(frozen=True)
class ReproduceRun:
    entries: tuple[EntryOutcome, ...]
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        counts = {"reproduced": 0, "failed": 0, "no candidate": 0}
        for entry in self.entries:
            counts[entry.outcome] += 1
        return counts


def digest(data: bytes, call: str) -> str:
    """What ties a result to the code it was seen on: the site file's bytes and the call."""
    return hashlib.sha256(data + b"\0" + call.encode("utf-8")).hexdigest()


def _template_literals(message: str) -> tuple[str, ...] | None:
    """The literal pieces around a template's placeholders (one more than them)."""
    import string

    literals = [""]
    try:
        for literal, field_name, _spec, _conversion in string.Formatter().parse(message):
            literals[-1] += literal
            if field_name is not None:
                literals.append("")
    except ValueError:
        return None
    return tuple(literals)


def message_matches(entry: Entry, message: str) -> bool:
    """Whether `message` is the whole of a text the entry's template prints."""
    from catalog.matching.messages import FULL, LiteralPattern

    literals = _template_literals(entry.message)
    if literals is None:
        return False
    pattern = LiteralPattern(literals)
    if pattern.groups(message, FULL) is not None:
        return True
    value = _printed_string(message)
    return value is not None and pattern.groups(value, FULL) is not None


def _printed_string(message: str) -> str | None:
    """The text a message prints as a Python string literal (`str()` of a KeyError is its
    argument's repr: `'no such key'`), or None when it is not exactly one."""
    if message[:1] not in ("'", '"'):
        return None
    try:
        value = ast.literal_eval(message)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def judge(entry: Entry, site: RaiseSite, site_file: Path, reply: Mapping[str, Any]) -> str | None:
    """Why a call's reply does not reproduce `entry` at `site`; None when it does."""
    ended = reply.get("ended")
    if reply.get("forked"):
        return "forked a process (not allowed)"
    if ended == "finished":
        return "ran without raising"
    if ended != "raised":
        return str(reply.get("detail") or f"ended as {ended}")
    exception = str(reply.get("exception"))
    said = f"raised {exception}: {reply.get('message')}"
    if reply.get("exception_id") != entry.id and exception != entry.exception:
        return f"{said}, not {entry.exception}"
    if not message_matches(entry, str(reply.get("message"))):
        return f"{said}, which the entry's message does not print"
    where = reply.get("where")
    if not isinstance(where, list) or len(where) != 2:
        return f"{said}, from an unknown place"
    filename, line = str(where[0]), int(where[1])
    try:
        same_file = Path(filename).resolve() == site_file.resolve()
    except OSError:
        same_file = False
    if not same_file or not site.line <= line <= max(site.line, site.end_line):
        return f"{said}, at {filename}:{line}, not at the site"
    return None


def _exception_line(reply: Mapping[str, Any]) -> str:
    line = f"{reply.get('exception')}: {reply.get('message')}"
    return line if len(line) <= OUTPUT_CHARS else line[: OUTPUT_CHARS - 3] + "..."


@dataclass
class _Job:
    entry: Entry
    site: RaiseSite
    module: str
    site_file: Path
    candidates: list[Candidate]
    attempts: list[Attempt] = field(default_factory=list)
    reproduction: Reproduction | None = None


class _Pool:
    """Workers started on first use, one per thread that runs jobs; restarted when one dies."""

    def __init__(self, cwd: Path, path: Path, preload: str | None = None) -> None:
        self.cwd = cwd
        self.path = path
        self.preload = preload
        self.idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self.unsafe: set[str] = set()
        """Modules a call into which cost a worker: never imported by a worker again."""
        self.every: list[_Worker] = []
        self.lock = threading.Lock()

    def take(self) -> _Worker:
        try:
            return self.idle.get_nowait()
        except queue.Empty:
            worker = _Worker(self.cwd, self.path, self.preload)
            with self.lock:
                self.every.append(worker)
            return worker

    def give(self, worker: _Worker) -> None:
        self.idle.put(worker)

    def close(self) -> None:
        with self.lock:
            for worker in self.every:
                worker.close()


def _run_job(job: _Job, pool: _Pool, timeout: float) -> None:
    for candidate in job.candidates:
        workdir = tempfile.mkdtemp(prefix="errcat-reproduce-")
        started = time.monotonic()
        try:
            worker = pool.take()
            module = None if candidate.module in pool.unsafe else candidate.module
            try:
                reply = worker.run(candidate.program, timeout, workdir, module)
            except WorkerFailed:
                reply = {"ended": "crashed", "detail": "killed the worker running it"}
                # Its import may be what hung or killed the worker: the next one leaves it to
                # the children.
                pool.unsafe.add(candidate.module)
            else:
                pool.give(worker)
        except WorkerFailed as failed:
            reply = {"ended": "crashed", "detail": str(failed)}
        finally:
            # A program may leave read-only folders behind; whatever stays is in TMPDIR.
            shutil.rmtree(workdir, ignore_errors=True)
        problem = judge(job.entry, job.site, job.site_file, reply)
        seconds = float(reply.get("seconds", time.monotonic() - started))
        output = _exception_line(reply) if reply.get("ended") == "raised" else ""
        job.attempts.append(
            Attempt(candidate.call, str(reply.get("ended")), problem, output, seconds)
        )
        if problem is None:
            try:
                data = job.site_file.read_bytes()
            except OSError:
                continue
            job.reproduction = Reproduction(
                job.site.path, job.site.line, candidate.call, output, digest(data, candidate.call)
            )
            return


def sites_by_entry(config: Config, catalog: Catalog) -> dict[str, list[RaiseSite]]:
    """Every entry's raise sites in the package, paired as the build pairs them."""
    from catalog.core.project import generated_module, scan_package
    from catalog.matching.sites import Matcher

    report = scan_package(config)
    matcher = Matcher(catalog, generated_module(config))
    found: dict[str, list[RaiseSite]] = {}
    for site in report.sites:
        match = matcher.match(site)
        if match is not None:
            found.setdefault(match.entry.id, []).append(site)
    for sites in found.values():
        sites.sort(key=lambda s: (s.path, s.line, s.column))
    return found


def reproduce(
    config: Config,
    catalog: Catalog,
    *,
    only: Iterable[str] | None = None,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    sites: Mapping[str, Sequence[RaiseSite]] | None = None,
) -> ReproduceRun:
    """Try the candidate calls of every entry's sites (or of the ids in `only`), `jobs` at once;
    `sites` are `sites_by_entry`'s, when the caller has them."""
    from catalog.core.project import import_root, module_name

    started = time.monotonic()
    wanted = list(dict.fromkeys(only)) if only is not None else None
    entries = list(catalog)
    if wanted is not None:
        by_id = catalog.by_id()
        entries = [by_id[entry_id] for entry_id in wanted if entry_id in by_id]
    if sites is None:
        sites = sites_by_entry(config, catalog)
    plans: list[tuple[Entry, list[SiteOutcome | _Job]]] = []
    for entry in entries:
        plan: list[SiteOutcome | _Job] = []
        for site in sites.get(entry.id, []):
            site_file = config.root / site.path
            try:
                module = module_name(config, site_file)
                plan.append(_Job(entry, site, module, site_file, candidates(site, module)))
            except ValueError as why:
                plan.append(SiteOutcome(site.path, site.line, site.function, str(why)))
        plans.append((entry, plan))
    work = [job for _, plan in plans for job in plan if isinstance(job, _Job)]
    try:
        package: str | None = module_name(config, config.package)
    except ValueError:
        package = None
    pool = _Pool(import_root(config), import_root(config), package or None)
    try:
        if jobs <= 1 or len(work) <= 1:
            for job in work:
                _run_job(job, pool, timeout)
        else:
            _run_parallel(work, pool, timeout, jobs)
    finally:
        pool.close()
    outcomes = []
    for entry, plan in plans:
        done = tuple(
            SiteOutcome(
                item.site.path,
                item.site.line,
                item.site.function,
                attempts=tuple(item.attempts),
                reproduction=item.reproduction,
            )
            if isinstance(item, _Job)
            else item
            for item in plan
        )
        outcomes.append(EntryOutcome(entry.id, entry.name, done))
    return ReproduceRun(tuple(outcomes), time.monotonic() - started)


def _run_parallel(work: list[_Job], pool: _Pool, timeout: float, jobs: int) -> None:
    pending: queue.SimpleQueue[_Job] = queue.SimpleQueue()
    for job in work:
        pending.put(job)
    errors: list[BaseException] = []

    def drain() -> None:
        while not errors:
            try:
                job = pending.get_nowait()
            except queue.Empty:
                return
            try:
                _run_job(job, pool, timeout)
            except BaseException as exc:  # surfaced in the main thread below
                errors.append(exc)

    threads = [threading.Thread(target=drain, daemon=True) for _ in range(min(jobs, len(work)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


# ---------------------------------------------------------------------------------------------
# The results file.


def load_reproduced(catalog_folder: Path, root: Path) -> dict[str, tuple[Reproduction, ...]]:
    """Every entry's recorded reproductions whose site file and call still have their digest.

    `root` is the project root the paths are relative to. An absent, unreadable or unknown file
    gives nothing.
    """
    files = FileBytes(root)
    found: dict[str, tuple[Reproduction, ...]] = {}
    for entry_id, records in read_results(catalog_folder / RESULTS_FILE, FORMAT_VERSION).items():
        kept: list[Reproduction] = []
        for record in records:
            try:
                site = record["site"]
                reproduction = Reproduction(
                    str(site["path"]),
                    int(site["line"]),
                    str(record["call"]),
                    str(record["output"]),
                    str(record["digest"]),
                )
            except (KeyError, TypeError, ValueError):
                continue
            data_now = files(reproduction.path)
            if data_now is not None and digest(data_now, reproduction.call) == reproduction.digest:
                kept.append(reproduction)
        if kept:
            found[entry_id] = tuple(kept)
    return found


def dump_reproduced(results: Mapping[str, Sequence[Reproduction]]) -> str:
    """The file's text: sorted ids and records, so reruns give minimal diffs."""
    return dump_results(
        FORMAT_VERSION,
        {
            entry_id: [r.as_dict() for r in sorted(records, key=lambda r: (r.path, r.line))]
            for entry_id, records in results.items()
        },
    )


def record_reproduced(
    catalog_folder: Path, root: Path, run: ReproduceRun, catalog: Catalog | None = None
) -> None:
    """Replace the records of the entries this run tried, keep the others (while their code is
    unchanged), and write the file atomically. With `catalog`, ids not in it are dropped."""
    from catalog.authoring.codegen import write_atomically

    merged = dict(load_reproduced(catalog_folder, root))
    for outcome in run.entries:
        merged[outcome.entry_id] = outcome.reproductions
    if catalog is not None:
        known = {entry.id for entry in catalog}
        merged = {entry_id: rows for entry_id, rows in merged.items() if entry_id in known}
    write_atomically(catalog_folder / RESULTS_FILE, dump_reproduced(merged))


# ---------------------------------------------------------------------------------------------
# Knowledge.
