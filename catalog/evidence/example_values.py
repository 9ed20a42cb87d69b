"""Values the package's own docstring examples make (`>>> x = torch.randn(2, 3)`), offered by
`errcat reproduce` to parameters of their class where a test reads what the value holds
(`input.dim() == 5`), which no made-up value answers: `Tensor()` is empty and 1-D.

Three steps, the last two in confined children of the reproduce worker (the package's code
runs nowhere else):

1. `harvest` reads every module's `>>>` lines as text (nothing is imported): an assignment of
   a call to one name whose free names are the package, its subpackages, or names the file's
   examples import from the package, kept with those imports;
2. `probe_program` evaluates each one once, within a time limit, and records the class names
   of what it made (`Tensor`, its bases), a profile telling two values of one class apart
   (rank, dtype, layout and shape where the value has them) and the public attributes of
   each class made (so that a parameter without an annotation is known by what its function
   reads of it: `catalog.evidence.reaching`); `offered` keeps a few values per class;
3. `search_program` chooses among those values (and the made-up ones), parameter by
   parameter, so that the tests that must hold for the raise hold (in the raising module's
   names, the parameters bound to the values chosen): `errcat reproduce` then tries the calls
   it found.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from catalog.evidence.doc_examples import package_submodules
from extractor.expansion import free_names

MAX_HARVESTED = 600
"""Values probed per run, shortest first."""
PER_CLASS = 24
"""Values offered per class: one of each kind (rank, dtype, layout) first, then one of each
profile (shape too), shortest first in each round."""
RESULT_FILE = "errcat-result.json"
"""What a probe or check program writes in its working folder for the worker to read."""

_EXAMPLE_LINE = re.compile(r"^[ \t]*>>>[ \t]?(.*?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class ExampleValue:
    """One value an example makes."""

    source: str
    """The expression as the example writes it (`torch.randn(2, 3)`), on one line."""
    imports: tuple[str, ...] = ()
    """The import statements it needs (`import torch`)."""
    classes: frozenset[str] = frozenset()
    """The names of its class and of that class's bases, as the probe saw them."""
    profile: str = ""
    """What the probe saw of its rank, dtype, layout and shape, where it has them
    (`2|torch.float32|torch.strided|torch.Size([2, 3])`); empty where it has none."""

    @property
    def kind(self) -> str:
        """The profile without the shape."""
        return self.profile.rpartition("|")[0]


def harvest(package_dir: Path, package: str) -> list[ExampleValue]:
    """The values the examples in `package_dir`'s modules assign to a name, shortest first."""
    root = package.split(".")[0]
    submodules = package_submodules(package_dir)
    found: dict[str, ExampleValue] = {}
    for path in sorted(package_dir.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if ">>>" not in text:
            continue
        for value in _file_values(text, package, root, submodules):
            found.setdefault(value.source, value)
    ordered = sorted(found.values(), key=lambda b: (len(b.source), b.source))
    return ordered[:MAX_HARVESTED]


def _file_values(
    text: str, package: str, root: str, submodules: frozenset[str]
) -> Iterable[ExampleValue]:
    # What the file's examples import from the package, by the name they bind.
    imported: dict[str, str] = {root: f"import {root}"}
    imported.update({name: f"from {package} import {name}" for name in submodules})
    for match in _EXAMPLE_LINE.finditer(text):
        line = match.group(1)
        try:
            tree = ast.parse(line)
        except (SyntaxError, ValueError):
            continue
        if len(tree.body) != 1:
            continue
        statement = tree.body[0]
        if isinstance(statement, ast.Import | ast.ImportFrom):
            _note_import(statement, root, imported)
            continue
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
        ):
            continue
        value = statement.value
        names = free_names(value)
        if not names or not names <= set(imported):
            continue
        source = ast.get_source_segment(line, value)
        if source is None or "\n" in source:
            continue
        imports = tuple(sorted({imported[name] for name in names}))
        yield ExampleValue(source, imports)


def _note_import(statement: ast.Import | ast.ImportFrom, root: str, into: dict[str, str]) -> None:
    """Record the names an example's import of the package binds, with the import itself."""
    if isinstance(statement, ast.ImportFrom):
        module = statement.module or ""
        if statement.level or module.split(".")[0] != root:
            return
        for alias in statement.names:
            if alias.name != "*":
                bound = alias.asname or alias.name
                written = alias.name + (f" as {alias.asname}" if alias.asname else "")
                into[bound] = f"from {module} import {written}"
        return
    for alias in statement.names:
        if alias.name.split(".")[0] != root:
            continue
        if alias.asname:
            into[alias.asname] = f"import {alias.name} as {alias.asname}"
        else:
            into[alias.name.split(".")[0]] = f"import {alias.name}"


def probe_program(values: Sequence[ExampleValue], seconds: float = 1.0) -> str:
    """A program that evaluates each value (each within `seconds`) and writes to `RESULT_FILE`
    a JSON line for each one it made: its `index`, `classes` (its class's name first) and
    `profile`, and for the first value of each class, that class's public `attributes`."""
    listed = [[value.source, list(value.imports)] for value in values]
    return _PROBE.format(values=repr(listed), seconds=seconds, result=repr(RESULT_FILE))


_PROBE = """\
import json, signal

def _late(*_):
    raise TimeoutError

def _profile(value):
    try:
        seen = [str(len(value.shape))]
    except Exception:
        seen = [""]
    for name in ("dtype", "layout", "shape"):
        try:
            seen.append(str(getattr(value, name)))
        except Exception:
            seen.append("")
    return "|".join(seen) if any(seen) else ""

signal.signal(signal.SIGALRM, _late)
seen = set()
# A line per value made, written as it is made: a value that kills the child loses only
# itself and those after it.
with open({result}, "w") as handle:
    for index, (source, imports) in enumerate({values}):
        try:
            signal.setitimer(signal.ITIMER_REAL, {seconds})
            space = {{}}
            for line in imports:
                exec(line, space)
            value = eval(source, space)
            signal.setitimer(signal.ITIMER_REAL, 0)
            kind = type(value)
            made = {{
                "index": index,
                "classes": [c.__name__ for c in kind.__mro__ if c is not object],
                "profile": _profile(value),
            }}
            if kind.__name__ not in seen:
                seen.add(kind.__name__)
                made["attributes"] = [n for n in dir(value) if not n.startswith("_")]
        except BaseException:
            signal.setitimer(signal.ITIMER_REAL, 0)
            continue
        handle.write(json.dumps(made) + "\\n")
        handle.flush()
"""


@dataclass(frozen=True)
class ExampleValues:
    """The values a run offers (`offered`), and what the probe saw the values' classes have."""

    by_class: Mapping[str, tuple[ExampleValue, ...]]
    attributes: Mapping[str, frozenset[str]]
    """The class of a value made -> the public attributes of the first such value."""
    made: int = 0
    """How many values the probe made."""

    def classes_having(self, used: Collection[str]) -> tuple[str, ...]:
        """The classes whose values have every attribute of `used` (what a function reads of
        a parameter with no annotation: `input.dim()`), most values offered first; none for
        nothing used."""
        if not used:
            return ()
        having = [name for name, names in self.attributes.items() if set(used) <= names]
        return tuple(sorted(having, key=lambda name: (-len(self.by_class.get(name, ())), name)))


NO_VALUES = ExampleValues({}, {})


def read_probe(values: Sequence[ExampleValue], written: str | None) -> ExampleValues:
    """`values` with what the probe wrote of each (`probe_program`: a JSON line per value it
    made), offered by class; those it did not make are left out, and so is a line of any
    other shape (the last one, cut short by the child's end, among them)."""
    made: list[ExampleValue] = []
    attributes: dict[str, frozenset[str]] = {}
    for line in (written or "").splitlines():
        try:
            seen = json.loads(line)
        except ValueError:
            continue
        if not isinstance(seen, dict):
            continue
        index, classes = seen.get("index"), seen.get("classes")
        if type(index) is not int or not 0 <= index < len(values) or not isinstance(classes, list):
            continue
        names = [name for name in classes if isinstance(name, str)]
        value = values[index]
        made.append(
            ExampleValue(
                value.source, value.imports, frozenset(names), str(seen.get("profile", ""))
            )
        )
        listed = seen.get("attributes")
        if names and isinstance(listed, list):
            attributes[names[0]] = frozenset(n for n in listed if isinstance(n, str))
    return ExampleValues(offered(made), attributes, len(made))


def offered(values: Iterable[ExampleValue]) -> dict[str, tuple[ExampleValue, ...]]:
    """For each class name, the values to offer a parameter annotated with it: up to
    `PER_CLASS`, the shortest of each kind first (a test of the rank or the dtype finds one
    that meets it), then the shortest of each other profile."""
    ordered = sorted(values, key=lambda v: (len(v.source), v.source))
    by_class: dict[str, list[ExampleValue]] = {}
    for with_shape in (False, True):

        def key(value: ExampleValue, with_shape: bool = with_shape) -> str:
            # A value with none of them is told apart by its source.
            if not value.profile:
                return value.source
            return value.profile if with_shape else value.kind

        seen = {name: {key(v) for v in kept} for name, kept in by_class.items()}
        for value in ordered:
            for name in value.classes:
                kept = by_class.setdefault(name, [])
                keys = seen.setdefault(name, set())
                if len(kept) < PER_CLASS and key(value) not in keys and value not in kept:
                    kept.append(value)
                    keys.add(key(value))
    return {name: tuple(kept) for name, kept in by_class.items()}


def search_program(
    site_module: str,
    imports: Sequence[str],
    options: Sequence[tuple[str, Sequence[str | None]]],
    tests: Sequence[str],
    wanted: int = 3,
    seconds: float = 5.0,
) -> str:
    """A program that chooses, parameter by parameter in order, among each one's values (their
    sources; None for one it cannot make) so that `tests` hold, and writes to `RESULT_FILE` the
    choices (indexes) of up to `wanted` calls under which every test held (`held`), and of one
    under which none failed but some could not be judged (`unjudged`).

    A test is judged as soon as the parameters it reads have values, so a value that fails it
    is dropped before the parameters after it are tried; a test that raises is not judged, and
    one reading a name nothing binds here (a local of the function) is left out.
    Names a test reads besides the parameters are `site_module`'s. Values are made afresh for
    each choice, a second each at most; the search stops after `seconds` (keep it under the
    run's time limit, which kills the program before it writes anything)."""
    listed = [[name, list(sources)] for name, sources in options]
    return _SEARCH.format(
        module=repr(site_module),
        imports=repr(list(imports)),
        options=repr(listed),
        tests=repr(list(tests)),
        wanted=wanted,
        seconds=seconds,
        result=repr(RESULT_FILE),
    )


_SEARCH = """\
import ast, importlib, json, signal, time

def _late(*_):
    raise TimeoutError

class _Unknown:
    # What a value that could not be made stands for: any test reading it is not judged.
    def _unjudged(self, *_):
        raise LookupError("not made")
    __getattr__ = __bool__ = __len__ = __iter__ = __eq__ = __ne__ = _unjudged
    __lt__ = __le__ = __gt__ = __ge__ = __contains__ = __getitem__ = _unjudged
    __hash__ = None

signal.signal(signal.SIGALRM, _late)
deadline = time.monotonic() + {seconds}
names = dict(vars(importlib.import_module({module})))
for line in {imports}:
    exec(line, names)
options = {options}
order = {{name: index for index, (name, _) in enumerate(options)}}
# Each test is judged once the last parameter it reads has a value.
at = [[] for _ in options]
last = []
for test in {tests}:
    code = compile(test, "<test>", "eval")
    read = [order[n.id] for n in ast.walk(ast.parse(test, mode="eval"))
            if isinstance(n, ast.Name) and n.id in order]
    (at[max(read)] if read else last).append(code)
held, unjudged, picks, visits = [], [], [], [0]

def judge(codes, space):
    # True, False, or None when a test could not be judged.
    verdict = True
    for code in codes:
        try:
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            ok = bool(eval(code, space))
        except NameError:
            # It reads a local of the function, which no value chosen here binds: it is
            # judged neither way, and the others decide.
            continue
        except BaseException:
            verdict = None
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if not ok:
            return False
    return verdict

def choose(index, space, sure):
    if len(held) >= {wanted} or visits[0] > 20000 or time.monotonic() > deadline:
        return
    if index == len(options):
        verdict = judge(last, space)
        if verdict is True and sure:
            held.append(list(picks))
        elif verdict is not False and not unjudged:
            unjudged.append(list(picks))
        return
    name, sources = options[index]
    for pick, source in enumerate(sources):
        visits[0] += 1
        value = _Unknown()
        if source is not None:
            try:
                signal.setitimer(signal.ITIMER_REAL, 1.0)
                value = eval(source, dict(names))
            except BaseException:
                value = _Unknown()
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        space[name] = value
        verdict = judge(at[index], space)
        if verdict is not False:
            picks.append(pick)
            choose(index + 1, space, sure and verdict is True)
            picks.pop()
        if len(held) >= {wanted}:
            break
    space.pop(name, None)

try:
    choose(0, dict(names), True)
finally:
    with open({result}, "w") as handle:
        json.dump({{"held": held, "unjudged": unjudged}}, handle)
"""


def read_result(folder: Path) -> str | None:
    """What a probe or search program wrote in `folder`; None when it wrote nothing."""
    try:
        return (folder / RESULT_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_search(written: str | None) -> tuple[list[list[int]], list[list[int]]]:
    """The choices a search program wrote: (held, unjudged); none where it wrote nothing
    readable (a search cut short by the time limit writes what it had found)."""
    try:
        data = json.loads(written or "")
    except ValueError:
        return [], []
    if not isinstance(data, dict):
        return [], []

    def picks(key: str) -> list[list[int]]:
        found = data.get(key)
        if not isinstance(found, list):
            return []
        return [p for p in found if isinstance(p, list) and all(type(i) is int for i in p)]

    return picks("held"), picks("unjudged")
