"""Generated typed exceptions: the contract of runtime/errors.py, in both of its forms.

Small catalogs get every class written out; large ones a table with classes made on first use
and a stub for type checkers (see catalog/authoring/codegen.py). Every behavioural test runs on both, the
table form forced on the small catalog; a 10,000-entry catalog checks the table form at scale.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from catalog.authoring.codegen import (
    HEADER,
    TABLE_THRESHOLD,
    generate,
    generate_stub,
    generated_classes,
    stub_path,
    uses_table,
)
from catalog.core.model import Catalog, CatalogFile, Entry, Position, Status
from catalog.entries.validate import load_valid_catalog

CATALOG = """\
module: pkg.things
errors:
  - id: f978622eed176d93
    name: BorrowRequiresMps
    exception: ValueError
    status: draft
    message: "borrow_torch_tensors requires MPS tensors, got {devices}"
  - id: 0fdb60950b3588f4
    name: OutputBufferWrongDevice
    exception: ValueError
    status: draft
    message: "{name} must be on device {device}, got {t.device}"
  - id: aaaaaaaaaaaaaaa1
    name: MissingThing
    exception: KeyError
    status: draft
    message: "no thing called {key!r}"
  - id: bbbbbbbbbbbbbbb2
    name: NoParameters
    exception: RuntimeError
    status: draft
    message: "out, max_logits and lse must not alias each other"
"""


FORMS = ("explicit", "table")
"""The two forms of the generated module; `table=True` forces the table on a small catalog."""


@pytest.fixture(scope="module", params=FORMS)
def generated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> ModuleType:
    form: str = request.param
    folder = tmp_path_factory.mktemp(f"catalog_{form}")
    (folder / "things.yaml").write_text(CATALOG, encoding="utf-8")
    text = generate(load_valid_catalog(folder), "https://docs.example/", table=form == "table")
    name = f"generated_errors_{form}"
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pickle finds classes through sys.modules
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class _Tensor:
    device: str = "cpu"


def test_header_and_imports(generated: ModuleType) -> None:
    """The module says it is generated and imports neither yaml nor errcat."""
    source = Path(generated.__file__ or "").read_text(encoding="utf-8")
    assert source.startswith(HEADER)
    assert "import yaml" not in source
    assert "catalog" not in [
        line.split()[1] for line in source.splitlines() if line.startswith("import ")
    ]


def test_subclasses_builtin_and_base(generated: ModuleType) -> None:
    """Each class is both a CatalogError and the built-in it replaces."""
    error = generated.BorrowRequiresMps(devices="cpu, mps:0")
    assert isinstance(error, ValueError)
    assert isinstance(error, generated.CatalogError)
    assert isinstance(generated.MissingThing(key="x"), KeyError)


def test_str_is_the_rendered_message(generated: ModuleType) -> None:
    """str(exc) is the message, attribute placeholders included; a KeyError's is quoted as
    KeyError quotes it."""
    assert str(generated.BorrowRequiresMps(devices="cpu, mps:0")) == (
        "borrow_torch_tensors requires MPS tensors, got cpu, mps:0"
    )
    error = generated.OutputBufferWrongDevice(name="out", device="cuda:0", t=_Tensor())
    assert str(error) == "out must be on device cuda:0, got cpu"
    assert str(generated.MissingThing(key="x")) == repr("no thing called 'x'")
    assert str(generated.NoParameters()) == "out, max_logits and lse must not alias each other"


def test_attributes(generated: ModuleType) -> None:
    """id, template, docs_url and each parameter are attributes."""
    error = generated.OutputBufferWrongDevice(name="out", device="cuda:0", t=_Tensor())
    assert error.id == "0fdb60950b3588f4"
    assert error.template == "{name} must be on device {device}, got {t.device}"
    assert error.docs_url == "https://docs.example/errors/0fdb60950b3588f4/"
    assert (error.name, error.device) == ("out", "cuda:0")
    assert generated.BY_ID["0fdb60950b3588f4"] is generated.OutputBufferWrongDevice


def test_parameters_are_keyword_only_and_required(generated: ModuleType) -> None:
    """A missing or unexpected keyword, or a message beside keywords, is Python's own TypeError
    at the raise site, naming the class."""
    with pytest.raises(
        TypeError,
        match=r"^BorrowRequiresMps\.__init__\(\) missing 1 required keyword-only argument: 'devices'$",
    ):
        generated.BorrowRequiresMps()
    with pytest.raises(
        TypeError,
        match=r"missing 3 required keyword-only arguments: 'name', 'device', and 't'$",
    ):
        generated.OutputBufferWrongDevice()
    with pytest.raises(TypeError, match=r"arguments: 'device' and 't'$"):
        generated.OutputBufferWrongDevice(name="out")
    with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'other'$"):
        generated.BorrowRequiresMps(devices="cpu", other=1)
    with pytest.raises(TypeError, match=r"takes 1 positional argument but 2 positional"):
        generated.BorrowRequiresMps("cpu", devices="cpu")
    with pytest.raises(TypeError, match=r"^NoParameters\.__init__\(\) got an unexpected keyword"):
        generated.NoParameters(devices="cpu")


def test_docs_note_and_switch(generated: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """The docs link is a PEP 678 note unless ERRCAT_DOCS_LINKS=0."""
    monkeypatch.delenv("ERRCAT_DOCS_LINKS", raising=False)
    error = generated.NoParameters()
    assert error.__notes__ == [
        "For further information visit https://docs.example/errors/bbbbbbbbbbbbbbb2/"
    ]
    monkeypatch.setenv("ERRCAT_DOCS_LINKS", "0")
    assert not hasattr(generated.NoParameters(), "__notes__")


def test_pickle_and_copy_round_trip_every_class(generated: ModuleType) -> None:
    """Every generated class survives pickle, copy and deepcopy with its message, params and note."""
    samples = {
        "BorrowRequiresMps": {"devices": "cpu"},
        "OutputBufferWrongDevice": {"name": "out", "device": "cuda:0", "t": _Tensor()},
        "MissingThing": {"key": "k"},
        "NoParameters": {},
    }
    assert set(samples) == {cls.__name__ for cls in generated.BY_ID.values()}
    for name, params in samples.items():
        error = getattr(generated, name)(**params)
        for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
            assert type(clone) is type(error)
            assert str(clone) == str(error)
            assert clone.params == params
            assert getattr(clone, "__notes__", None) == getattr(error, "__notes__", None)
    # tests/authoring/test_codegen_dropin.py probes every behaviour a caller relies on.


RUFF = Path(sys.executable).with_name("ruff")
MYPY = Path(sys.executable).with_name("mypy")


def _ruff_clean(paths: list[Path], *options: str) -> None:
    """`ruff format --check` and `ruff check` pass on `paths`, run from their folder (ruff's
    defaults, no project configuration), with `options` added to the format check."""
    for command in (
        [str(RUFF), "format", "--check", "--diff", *options, *map(str, paths)],
        [str(RUFF), "check", *map(str, paths)],
    ):
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, cwd=paths[0].parent
        )
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("form", FORMS)
def test_generated_text_is_ruff_formatted(form: str, tmp_path: Path) -> None:
    """The generated module (and the table form's stub) passes ruff's format check and lint
    unchanged."""
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "things.yaml").write_text(CATALOG, encoding="utf-8")
    catalog = load_valid_catalog(folder)
    target = tmp_path / "generated_errors.py"
    text = generate(catalog, "http://127.0.0.1:8000/", table=form == "table")
    target.write_text(text, encoding="utf-8")
    paths = [target]
    if form == "table":
        stub_path(target).write_text(generate_stub(catalog), encoding="utf-8")
        paths.append(stub_path(target))
    _ruff_clean(paths)


AWKWARD = r"""
  - id: "a000000000000001"
    name: QuotedValue
    exception: ValueError
    status: draft
    message: 'expected "{name}" to be "set", got "{value}"'
  - id: "a000000000000002"
    name: BackslashesAndQuotes
    exception: ValueError
    status: draft
    message: "path C:\\temp\\{name} isn't \"{kind}\""
  - id: "a000000000000003"
    name: IndentedLines
    exception: RuntimeError
    status: draft
    message: "        first line {a}  \n        second line\n\t\ttabbed {b}\n  \n"
  - id: "a000000000000004"
    name: StartsWithQuote
    exception: TypeError
    status: draft
    message: '"{name}" must be callable'
  - id: "a000000000000005"
    name: EmptyMessage
    exception: NotImplementedError
    status: draft
    message: ""
  - id: "a000000000000006"
    name: OldAndRetired
    exception: KeyError
    status: retired
    retired_reason: Replaced by a clearer check.
    message: "no {key}\nanywhere"
  - id: "a000000000000007"
    name: AVeryLongClassNameThatTakesMostOfTheLineOnItsOwnAndThenSomeMoreWordsError
    exception: NotImplementedError
    status: draft
    message: "not yet"
  - id: "a000000000000008"
    name: ManyParameters
    exception: ValueError
    status: draft
    message: "{first_parameter} {second_parameter} {third_parameter} {fourth_parameter}"
  - id: "a000000000000009"
    name: OneVeryLongParameter
    exception: ValueError
    status: draft
    message: "{a_parameter_name_so_long_that_its_declaration_cannot_fit_in_eighty_eight_chars}"
  - id: "a00000000000000a"
    name: TrailingQuote
    exception: ValueError
    status: draft
    message: 'bad value "{value}"'
  - id: "a00000000000000b"
    name: Version10Error
    exception: ValueError
    status: draft
    message: "ten"
  - id: "a00000000000000c"
    name: Version9Error
    exception: ValueError
    status: draft
    message: "nine"
"""


@pytest.mark.parametrize("line_length", ["88", "100", "120"])
def test_table_form_is_ruff_formatted_at_any_line_length(line_length: str, tmp_path: Path) -> None:
    """Quotes, backslashes, indented and tabbed lines, an empty message, a retired entry, long
    names and parameters: the table form and its stub are what ruff format writes at ruff's
    default line length and at any longer one, and lint clean."""
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "things.yaml").write_text(CATALOG + AWKWARD, encoding="utf-8")
    catalog = load_valid_catalog(folder)
    target = tmp_path / "generated_errors.py"
    target.write_text(generate(catalog, "http://127.0.0.1:8000/", table=True), encoding="utf-8")
    stub_path(target).write_text(generate_stub(catalog), encoding="utf-8")
    _ruff_clean([target, stub_path(target)], "--line-length", line_length)


def test_long_signatures_wrap(tmp_path: Path) -> None:
    """Long signatures and templates wrap the way ruff format would: the format check stays clean."""
    params = " ".join(f"{{parameter_number_{i}}}" for i in range(8))
    extra = (
        "  - id: ccccccccccccccc3\n"
        "    name: ManyParameters\n"
        "    exception: ValueError\n"
        "    status: draft\n"
        f'    message: "{params}"\n'
        "  - id: ddddddddddddddd4\n"
        "    name: WrappedTemplate\n"
        "    exception: ValueError\n"
        "    status: draft\n"
        f'    message: "{"x" * 85}"\n'
    )
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "things.yaml").write_text(CATALOG + extra, encoding="utf-8")
    target = tmp_path / "generated_errors.py"
    target.write_text(
        generate(load_valid_catalog(folder), "http://127.0.0.1:8000/"), encoding="utf-8"
    )
    assert "            parameter_number_7: object,\n        ) -> None: ..." in target.read_text(
        encoding="utf-8"
    )
    ruff = Path(sys.executable).with_name("ruff")
    command = [str(ruff), "format", "--check", "--diff", str(target)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


IN_PLACE = """\
  - id: eeeeeeeeeeeeeee5
    name: CannotDecode
    exception: UnicodeDecodeError
    status: draft
    message: "cannot decode the frame header"
  - id: fffffffffffffff6
    name: NotAVersion
    exception: packaging.version.InvalidVersion
    status: draft
    message: "invalid version: {text!r}"
"""


@pytest.mark.parametrize("form", FORMS)
def test_only_typed_builtins_get_a_class(form: str, tmp_path: Path) -> None:
    """Entries catalogued in place (a 5-argument built-in, a library's class) get no class."""
    (tmp_path / "things.yaml").write_text(CATALOG + IN_PLACE, encoding="utf-8")
    catalog = load_valid_catalog(tmp_path)
    assert len(catalog) == 6
    assert [e.name for e in generated_classes(catalog)] == [
        "BorrowRequiresMps",
        "OutputBufferWrongDevice",
        "MissingThing",
        "NoParameters",
    ]
    text = generate(catalog, "https://docs.example/", table=form == "table")
    assert "CannotDecode" not in text and "NotAVersion" not in text
    assert "NotAVersion" not in generate_stub(catalog)
    namespace: dict[str, object] = {}
    exec(compile(text, "generated_errors.py", "exec"), namespace)
    by_id, exported = namespace["BY_ID"], namespace["__all__"]
    assert isinstance(by_id, Mapping) and set(by_id) == {e.id for e in generated_classes(catalog)}
    assert isinstance(exported, list) and "NotAVersion" not in exported


@pytest.mark.parametrize("form", FORMS)
def test_generated_module_type_checks_without_add_note(form: str, tmp_path: Path) -> None:
    """mypy --strict passes on the module alone for Python 3.10, where the add_note fallback is
    the branch checked, and for 3.11."""
    target = tmp_path / "generated_errors.py"
    (tmp_path / "things.yaml").write_text(CATALOG + AWKWARD, encoding="utf-8")
    catalog = load_valid_catalog(tmp_path)
    target.write_text(generate(catalog, "https://docs.example/", table=form == "table"))
    for version in ("3.10", "3.11"):
        command = [str(MYPY), "--strict", "--python-version", version, "--cache-dir", os.devnull]
        done = subprocess.run(
            [*command, str(target)], capture_output=True, text=True, check=False, cwd=tmp_path
        )
        assert done.returncode == 0, done.stdout + done.stderr


USER = """\
from generated_errors import BY_ID, BorrowRequiresMps, CatalogError, NoParameters

error = BorrowRequiresMps(devices="cpu")
reveal_type(error.devices)
reveal_type(BY_ID["f978622eed176d93"])
reveal_type(error.docs_url)
NoParameters()
BorrowRequiresMps()
BorrowRequiresMps("cpu")
BorrowRequiresMps(devices="cpu", other=1)
"""


def test_stub_gives_type_checkers_every_class(tmp_path: Path) -> None:
    """With the table form's stub beside it, mypy --strict knows each class, its bases and its
    keyword-only parameters (or a message, as the built-in takes), and reports calls that fit
    neither."""
    (tmp_path / "things.yaml").write_text(CATALOG + AWKWARD, encoding="utf-8")
    catalog = load_valid_catalog(tmp_path)
    target = tmp_path / "generated_errors.py"
    target.write_text(generate(catalog, "https://docs.example/", table=True), encoding="utf-8")
    stub_path(target).write_text(generate_stub(catalog), encoding="utf-8")
    (tmp_path / "user.py").write_text(USER, encoding="utf-8")
    command = [str(MYPY), "--strict", "--cache-dir", os.devnull, "generated_errors.pyi", "user.py"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)
    lines = [
        line.split(": ", 1)[1]
        for line in done.stdout.splitlines()
        if line.startswith("user.py:") and "defined in" not in line and "note:  " not in line
    ]
    assert lines == [
        'note: Revealed type is "object"',
        'note: Revealed type is "type[generated_errors.CatalogError]"',
        'note: Revealed type is "str"',
        'error: All overload variants of "BorrowRequiresMps" require at least one argument  '
        "[call-overload]",
        "note: Possible overload variants:",
        'error: Unexpected keyword argument "other" for overloaded function "BorrowRequiresMps"  '
        "[call-overload]",
        'error: No overload variant of "BorrowRequiresMps" matches argument types "str", "int"  '
        "[call-overload]",
        "note: Possible overload variants:",
    ], done.stdout


PYENV = Path("/root/.pyenv/versions")
SERIES = ("3.7", "3.8", "3.9", "3.10", "3.12", "3.13")
"""Python series besides the venv's 3.11 that the generated module must run on (3.7 is the oldest
served: see OLDEST_PYTHON in catalog/core/exceptions.py)."""


def _other_pythons() -> list[tuple[str, Path | None]]:
    # One case per interpreter found, and one skipped case per series that has none, so a
    # machine without 3.7 says so in the summary instead of silently testing less.
    found: list[tuple[str, Path | None]] = []
    for series in SERIES:
        pythons = sorted(PYENV.glob(f"{series}.*/bin/python"))
        found += [(series, python) for python in pythons] or [(series, None)]
    return found


OTHER_PYTHONS = _other_pythons()

PROBE = """\
import json, pickle, sys
import generated_errors as g

error = g.BorrowRequiresMps(devices="cpu, mps:0")
clone = pickle.loads(pickle.dumps(error))
print(json.dumps({
    "version": list(sys.version_info[:2]),
    "str": str(error),
    "value_error": isinstance(error, ValueError),
    "catalog_error": isinstance(error, g.CatalogError),
    "notes": getattr(error, "__notes__", None),
    "clone": [type(clone).__name__, str(clone), clone.params, getattr(clone, "__notes__", None)],
    "key_error": str(g.MissingThing(key="x")),
    "hook_replaced": sys.excepthook is not sys.__excepthook__,
}))
"""

LINK = "For further information visit https://docs.example/errors/"


def _run(
    python: Path, folder: Path, code: str, *, links: bool = True
) -> subprocess.CompletedProcess[str]:
    # -E -S: nothing from the environment or site-packages (no exceptiongroup, no pytest) may
    # change how the interpreter prints a traceback; the module must manage on the stdlib alone.
    env = {k: v for k, v in os.environ.items() if k != "ERRCAT_DOCS_LINKS"}
    if not links:
        env["ERRCAT_DOCS_LINKS"] = "0"
    return subprocess.run(
        [str(python), "-E", "-S", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
        env=env,
        timeout=60,
    )


@pytest.fixture(scope="module", params=FORMS)
def module_folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    form: str = request.param
    folder = tmp_path_factory.mktemp(f"other_pythons_{form}")
    (folder / "things.yaml").write_text(CATALOG, encoding="utf-8")
    text = generate(load_valid_catalog(folder), "https://docs.example/", table=form == "table")
    (folder / "generated_errors.py").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("series", "python"),
    OTHER_PYTHONS,
    ids=[
        python.parent.parent.name if python else f"{series}-absent"
        for series, python in OTHER_PYTHONS
    ],
)
def test_generated_module_on_other_pythons(
    series: str, python: Path | None, module_folder: Path
) -> None:
    """On 3.7 to 3.13: the typed class, its message, pickle, and a docs link a user sees."""
    if python is None:
        pytest.skip(f"no Python {series} under {PYENV}; cannot test the generated module on it")
    done = _run(python, module_folder, PROBE)
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    link = LINK + "f978622eed176d93/"
    old = tuple(probe["version"]) < (3, 11)
    assert probe["str"] == "borrow_torch_tensors requires MPS tensors, got cpu, mps:0"
    assert probe["value_error"] and probe["catalog_error"]
    assert probe["notes"] == [link]
    assert probe["clone"] == ["BorrowRequiresMps", probe["str"], {"devices": "cpu, mps:0"}, [link]]
    assert probe["key_error"] == repr("no thing called 'x'")
    assert probe["hook_replaced"] is old

    # Uncaught: the link is printed once, after the error, whether the interpreter prints notes
    # itself (3.11+) or the module's hook does (3.7 to 3.10).
    uncaught = "import generated_errors as g\nraise g.NoParameters()\n"
    done = _run(python, module_folder, uncaught)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines.count(LINK + "bbbbbbbbbbbbbbb2/") == 1, done.stderr
    message = "generated_errors.NoParameters: out, max_logits and lse must not alias each other"
    assert lines.index(message) < lines.index(LINK + "bbbbbbbbbbbbbbb2/")

    done = _run(python, module_folder, uncaught, links=False)
    assert done.returncode == 1
    assert message in done.stderr.splitlines() and LINK not in done.stderr

    # A chained catalogued error shows its link; one hidden by `from None` does not.
    chained = (
        "import generated_errors as g\n"
        "try:\n    raise g.MissingThing(key='k')\n"
        "except KeyError as error:\n    raise RuntimeError('outer') {clause}\n"
    )
    done = _run(python, module_folder, chained.format(clause="from error"))
    assert done.stderr.count(LINK + "aaaaaaaaaaaaaaa1/") == 1, done.stderr
    done = _run(python, module_folder, chained.format(clause="from None"))
    assert "RuntimeError: outer" in done.stderr and LINK not in done.stderr

    # A hook someone installed first is left alone.
    custom = (
        "import sys\nsys.excepthook = lambda *args: print('custom hook')\n"
        "import generated_errors as g\nraise g.NoParameters()\n"
    )
    done = _run(python, module_folder, custom)
    assert done.stdout == "custom hook\n" and LINK not in done.stderr


def test_explicit_form_is_ruff_formatted_with_awkward_messages(tmp_path: Path) -> None:
    """The written-out form, at this project's line length, with the awkward messages."""
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "things.yaml").write_text(CATALOG + AWKWARD, encoding="utf-8")
    target = tmp_path / "generated_errors.py"
    catalog = load_valid_catalog(folder)
    target.write_text(generate(catalog, "http://127.0.0.1:8000/", table=False), encoding="utf-8")
    _ruff_clean([target], "--line-length", "100")


def test_the_form_follows_the_catalog_size(tmp_path: Path) -> None:
    """Up to TABLE_THRESHOLD classes the module is written out; above, it is the table."""
    small, large = _synthetic(TABLE_THRESHOLD), _synthetic(TABLE_THRESHOLD + 1)
    assert not uses_table(small) and uses_table(large)
    assert "\nclass Case00001Error(CatalogError, KeyError):" in generate(small, "http://x/")
    text = generate(large, "http://x/")
    assert "def __getattr__(name: str)" in text and "\nclass Case00001Error" not in text


def _synthetic(count: int) -> Catalog:
    """A catalog of `count` typed entries: three built-ins, zero to three parameters, some
    retired."""
    path = Path("synthetic.yaml")
    bases = ("ValueError", "KeyError", "RuntimeError")
    entries = tuple(
        Entry(
            id=f"{index:016x}",
            name=f"Case{index:05d}Error",
            exception=bases[index % 3],
            message=f"case {index}: " + " and ".join(f"{{p{k}}}" for k in range(index % 4)),
            status=Status.RETIRED if index % 97 == 0 else Status.DRAFT,
            module="pkg.synthetic",
            position=Position(path, 3 + 5 * index, 5),
        )
        for index in range(count)
    )
    return Catalog(files=(CatalogFile(path=path, module="pkg.synthetic", entries=entries),))


BIG_PROBE = """\
import copy, json, pickle, sys
import big_errors as g

cls = g.BY_ID["0000000000001392"]
try:
    raise cls(p0="a", p1=2)
except ValueError as caught:
    error = caught
clone = pickle.loads(pickle.dumps(error))
print(json.dumps({
    "by_id": len(g.BY_ID),
    "all": len(g.__all__),
    "dir_has_all": set(g.__all__) <= set(dir(g)),
    "same_class": cls is g.Case05010Error is getattr(g, "Case05010Error"),
    "where": [cls.__module__, cls.__qualname__],
    "str": str(error),
    "clone": [type(clone) is cls, str(clone), clone.params],
    "deepcopy": type(copy.deepcopy(error)) is cls,
    "key_error": isinstance(g.Case05002Error(p0=1, p1=2), KeyError),
    "retired": "Retired" in (g.Case09700Error.__doc__ or ""),
    "created": sum(isinstance(v, type) and issubclass(v, g.CatalogError)
                   for v in vars(g).values()),
}))
"""


def test_table_form_at_10000_entries(tmp_path: Path) -> None:
    """10,000 entries: the module imports and works in a fresh interpreter (classes made on
    first use, each once), BY_ID and __all__ are complete, and both files are ruff-clean."""
    catalog = _synthetic(10_000)
    module = tmp_path / "big_errors.py"
    module.write_text(generate(catalog, "https://docs.example/"), encoding="utf-8")
    stub_path(module).write_text(generate_stub(catalog), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", BIG_PROBE],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    probe = json.loads(done.stdout)
    assert probe == {
        "by_id": 10_000,
        "all": 10_003,
        "dir_has_all": True,
        "same_class": True,
        "where": ["big_errors", "Case05010Error"],
        "str": "case 5010: a and 2",
        "clone": [True, "case 5010: a and 2", {"p0": "a", "p1": 2}],
        "deepcopy": True,
        "key_error": True,
        "retired": True,
        "created": 4,  # CatalogError and the three classes used: nothing else was built
    }
    _ruff_clean([module, stub_path(module)])


@pytest.mark.parametrize("table", [False, True], ids=["written-out", "table"])
def test_a_parameter_named_like_the_metaclass_argument(tmp_path: Path, table: bool) -> None:
    """A message placeholder `{cls}` (pyparsing has one) is a keyword parameter like any
    other: the metaclass's call takes no name of its own that it could collide with."""
    path = Path("m.yaml")
    entry = Entry(
        id="00000000000000c1",
        name="NoSuchClassError",
        exception="AttributeError",
        message="no such {cls}: {name}",
        status=Status.DRAFT,
        module="pkg.m",
        position=Position(path, 3, 5),
    )
    catalog = Catalog(files=(CatalogFile(path=path, module="pkg.m", entries=(entry,)),))
    module = tmp_path / "cls_errors.py"
    module.write_text(generate(catalog, None, table=table), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("cls_errors", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    cls = loaded.BY_ID["00000000000000c1"]
    error = cls(cls="Widget", name="x")
    assert (str(error), error.cls, error.name) == ("no such Widget: x", "Widget", "x")
    again = cls(str(error))
    assert (str(again), again.params) == ("no such Widget: x", {})
