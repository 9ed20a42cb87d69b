"""Generated typed exceptions: the contract of runtime/errors.py, on a small catalog."""

from __future__ import annotations

import copy
import importlib.util
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from catalog.codegen import HEADER, generate
from catalog.validate import load_valid_catalog

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


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder = tmp_path_factory.mktemp("catalog")
    (folder / "things.yaml").write_text(CATALOG, encoding="utf-8")
    text = generate(load_valid_catalog(folder), "https://docs.example/")
    path = folder / "generated_errors.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("generated_errors", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generated_errors"] = module  # pickle finds classes through sys.modules
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
    """str(exc) is exactly the message, attribute placeholders included, KeyError too."""
    assert str(generated.BorrowRequiresMps(devices="cpu, mps:0")) == (
        "borrow_torch_tensors requires MPS tensors, got cpu, mps:0"
    )
    error = generated.OutputBufferWrongDevice(name="out", device="cuda:0", t=_Tensor())
    assert str(error) == "out must be on device cuda:0, got cpu"
    assert str(generated.MissingThing(key="x")) == "no thing called 'x'"
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
    """A missing or positional value is a TypeError at the raise site."""
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'devices'"):
        generated.BorrowRequiresMps()
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        generated.BorrowRequiresMps("cpu")


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


def test_generated_text_is_ruff_formatted(tmp_path: Path) -> None:
    """The generated module passes ruff's format check and lint unchanged."""
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "things.yaml").write_text(CATALOG, encoding="utf-8")
    target = tmp_path / "generated_errors.py"
    target.write_text(
        generate(load_valid_catalog(folder), "http://127.0.0.1:8000/"), encoding="utf-8"
    )
    ruff = Path(sys.executable).with_name("ruff")
    for command in (
        [str(ruff), "format", "--check", str(target)],
        [str(ruff), "check", str(target)],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr


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
    assert "        parameter_number_7: object,\n    ) -> None:" in target.read_text(
        encoding="utf-8"
    )
    ruff = Path(sys.executable).with_name("ruff")
    command = [str(ruff), "format", "--check", "--diff", str(target)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
