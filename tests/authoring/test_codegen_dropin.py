"""A generated class is a drop-in for its built-in, for every class, in both forms, on every
Python the module serves: what callers do with the built-in keeps working (codegen_probe.py
lists each behaviour), and importing the module adds nothing but itself to `sys.modules`."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.authoring.codegen import generate
from catalog.core.exceptions import TYPED_BUILTINS, reserved_parameters
from catalog.core.model import Catalog, CatalogFile, Entry, Position, Status
from catalog.entries.validate import load_valid_catalog

TOY = """\
module: toy.things
errors:
  - id: "1000000000000001"
    name: BadWidthError
    exception: ValueError
    status: draft
    message: "width must be positive, got {width}"
  - id: "1000000000000002"
    name: SetIsEmptyError
    exception: KeyError
    status: draft
    message: "set is empty"
  - id: "1000000000000003"
    name: NoSuchKeyError
    exception: KeyError
    status: draft
    message: "no key {key!r} in {table}"
  - id: "1000000000000004"
    name: WrongDeviceError
    exception: TypeError
    status: draft
    message: "{name} must be on device {device}, got {t.device} ({t.dtype})"
  - id: "1000000000000005"
    name: AlreadyStoppedError
    exception: RuntimeError
    status: draft
    message: "the worker is already stopped"
  - id: "1000000000000006"
    name: ShapeMismatchError
    exception: ValueError
    status: draft
    message: "{first} and {second} differ in shape: {first_shape} vs {second_shape} at {axis}"
  - id: "1000000000000007"
    name: RetiredLookupError
    exception: LookupError
    status: retired
    retired_reason: Replaced by NoSuchKeyError.
    message: "nothing under {key}"
"""
"""ValueError, KeyError (with and without parameters), TypeError with attribute placeholders,
RuntimeError without parameters, a class with five parameters, a retired one."""

CLASSES = [
    "BadWidthError",
    "SetIsEmptyError",
    "NoSuchKeyError",
    "WrongDeviceError",
    "AlreadyStoppedError",
    "ShapeMismatchError",
    "RetiredLookupError",
]
PROBE = Path(__file__).with_name("codegen_probe.py")
PYENV = Path("/root/.pyenv/versions")
SERIES = ("3.7", "3.8", "3.9", "3.10", "3.12", "3.13")
"""Python series besides the venv's own that the module must serve (3.9 and 3.13 at least)."""
FORMS = ("explicit", "table")
RUNTIME_IMPORTS = frozenset({"builtins", "os", "sys", "_collections_abc", "_thread"})
"""What the module may import at run time: modules every interpreter has loaded before any
package is imported (the table form's lock and mapping base come from the C modules behind
`threading` and `collections.abc`)."""


def _pythons() -> list[tuple[str, Path | None]]:
    # The venv's own first; then one case per interpreter found, and a skipped case for each
    # series with none, so a machine without 3.9 says so instead of silently testing less.
    found: list[tuple[str, Path | None]] = [("venv", Path(sys.executable))]
    for series in SERIES:
        pythons = sorted(PYENV.glob(f"{series}.*/bin/python"))
        found += [(series, python) for python in pythons] or [(series, None)]
    return found


PYTHONS = _pythons()
PYTHON_IDS = [
    "venv" if series == "venv" else python.parent.parent.name if python else f"{series}-absent"
    for series, python in PYTHONS
]


@pytest.fixture(scope="module")
def toy_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both forms of the toy catalog's module, `toy_explicit.py` and `toy_table.py`, with
    links under https://docs.example/."""
    folder = tmp_path_factory.mktemp("toy")
    (folder / "things.yaml").write_text(TOY, encoding="utf-8")
    catalog = load_valid_catalog(folder)
    for form in FORMS:
        text = generate(catalog, "https://docs.example/", table=form == "table")
        (folder / f"toy_{form}.py").write_text(text, encoding="utf-8")
    return folder


def _run(python: Path, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # -I: neither the environment nor the user's site-packages; the docs links stay on (the
    # suite switches them off in conftest.py), so the probe sees the notes a user sees.
    env = {k: v for k, v in os.environ.items() if k != "ERRCAT_DOCS_LINKS"}
    return subprocess.run(
        [str(python), "-I", *arguments],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=env,
        timeout=180,
    )


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("series", "python"), PYTHONS, ids=PYTHON_IDS)
def test_every_class_behaves_as_its_builtin(
    series: str, python: Path | None, form: str, toy_folder: Path
) -> None:
    """For every class: `except <built-in>`; str, repr and args the built-in's (KeyError's
    quoting included); `type(e)(str(e))` and the re-wrap `type(e)(f"config.yaml: {e}")` give
    what the built-in gives; copy, deepcopy, pickle at every protocol, and pickle across
    processes both ways with a lock among the values, which arrives as its text."""
    if python is None:
        pytest.skip(f"no Python {series} under {PYENV}; cannot probe the generated module on it")
    done = _run(python, str(PROBE), str(toy_folder), f"toy_{form}", cwd=toy_folder)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    assert probe["classes"] == CLASSES
    assert probe["links"] == "1"
    assert probe["failures"] == [], "\n".join(probe["failures"])


def _every_builtin() -> Catalog:
    """One class for each built-in that gets a typed class, with one parameter."""
    path = Path("every.yaml")
    entries = []
    for index, builtin in enumerate(sorted(TYPED_BUILTINS)):
        assert "amount" not in reserved_parameters(builtin)
        entries.append(
            Entry(
                id=f"{index:016x}",
                name=f"Every{builtin}Case",
                exception=builtin,
                message=f"{builtin} case: {{amount}} left",
                status=Status.DRAFT,
                module="toy.every",
                position=Position(path, 3 + 5 * index, 5),
            )
        )
    return Catalog(files=(CatalogFile(path=path, module="toy.every", entries=tuple(entries)),))


@pytest.mark.parametrize(("series", "python"), PYTHONS, ids=PYTHON_IDS)
def test_every_typed_builtin_has_a_drop_in(
    series: str, python: Path | None, tmp_path: Path
) -> None:
    """The same probe over a class of each of the built-ins that get one: those that keep
    their own attributes (SyntaxError's `msg`) or make their own instances (MemoryError)
    included."""
    if python is None:
        pytest.skip(f"no Python {series} under {PYENV}; cannot probe the generated module on it")
    catalog = _every_builtin()
    (tmp_path / "every_errors.py").write_text(
        generate(catalog, "https://docs.example/", table=False), encoding="utf-8"
    )
    done = _run(python, str(PROBE), str(tmp_path), "every_errors", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    assert probe["classes"] == [entry.name for entry in catalog]
    assert probe["failures"] == [], "\n".join(probe["failures"])


FOOTPRINT = """\
import json, sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
import {name}
print(json.dumps(sorted(set(sys.modules) - before)))
"""


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("series", "python"), PYTHONS, ids=PYTHON_IDS)
def test_importing_the_module_imports_nothing_else(
    series: str, python: Path | None, form: str, toy_folder: Path
) -> None:
    """In a fresh interpreter, importing the module adds only itself to `sys.modules` (a
    package's own test of its import footprint compares the same two sets)."""
    if python is None:
        pytest.skip(f"no Python {series} under {PYENV}; cannot import the generated module on it")
    name = f"toy_{form}"
    done = _run(python, "-c", FOOTPRINT.format(name=name), str(toy_folder), cwd=toy_folder)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [name]


def _runtime_imports(tree: ast.Module) -> list[str]:
    """The modules a module imports when it runs: every import outside `if TYPE_CHECKING:`,
    functions' own included."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append(node.module or "")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


@pytest.mark.parametrize("form", FORMS)
def test_the_module_imports_only_what_it_needs(form: str, toy_folder: Path) -> None:
    """No `__future__`, `typing` or `types` at run time; pickle only inside the function that
    pickles values, the moment an error is pickled or copied."""
    tree = ast.parse((toy_folder / f"toy_{form}.py").read_text(encoding="utf-8"))
    imports = _runtime_imports(tree)
    assert set(imports) - RUNTIME_IMPORTS == {"pickle"}, imports
    top_level = _runtime_imports(ast.Module(body=tree.body, type_ignores=[]))
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    inside = {name for node in functions for name in _runtime_imports(ast.Module([node], []))}
    assert "pickle" in inside and set(top_level) - inside <= RUNTIME_IMPORTS


def test_this_repositorys_module_imports_nothing_else() -> None:
    """runtime/errors.py, as committed, passes the same footprint check on this Python."""
    root = Path(__file__).resolve().parents[2]
    code = FOOTPRINT.format(name="runtime.errors")
    done = _run(Path(sys.executable), "-c", code, str(root), cwd=root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["runtime", "runtime.errors"]
