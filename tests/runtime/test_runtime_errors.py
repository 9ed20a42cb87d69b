"""runtime/errors.py: generated from the catalog, current, and every class keeps the contract."""

from __future__ import annotations

import builtins
import copy
import pickle
from pathlib import Path
from types import SimpleNamespace

import pytest

import runtime.errors as generated
from catalog.authoring.codegen import (
    diff,
    generate,
    generated_classes,
    generated_files,
    stub_path,
)
from catalog.core.config import load_config, read_site_settings
from catalog.core.model import Entry
from catalog.core.placeholders import parse_placeholders
from catalog.entries.validate import load_valid_catalog

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_valid_catalog(ROOT / "catalog" / "errors")


def test_generated_module_is_current() -> None:
    """The committed module is exactly what codegen writes from the committed catalog."""
    config = load_config(ROOT)
    expected = generate(CATALOG, read_site_settings(ROOT).site_url)
    current = config.generated.read_text(encoding="utf-8")
    assert current == expected, "runtime/errors.py is stale; run: errcat codegen\n" + diff(
        current, expected, "runtime/errors.py"
    )


def test_every_generated_file_is_current() -> None:
    """The catalog is small enough for the written-out form: no stub beside the module."""
    config = load_config(ROOT)
    files = generated_files(CATALOG, read_site_settings(ROOT).site_url, config.generated)
    assert files[config.generated] == config.generated.read_text(encoding="utf-8")
    assert files[stub_path(config.generated)] is None
    assert not stub_path(config.generated).exists()


def test_seed_ids_are_kept() -> None:
    """The four seed errors keep the seeds' ids."""
    by_id = CATALOG.by_id()
    assert (
        by_id["f978622eed176d93"].message
        == "borrow_torch_tensors requires MPS tensors, got {devices}"
    )
    assert (
        by_id["d707e25309e5dbae"].message
        == "SGLANG_USE_MLX requires an available PyTorch MPS device"
    )
    assert by_id["ffbed2bb70a79900"].message == "{transport_name} requires a CUDA tensor"
    assert by_id["0fdb60950b3588f4"].message == "{name} must be on device {device}, got {t.device}"


def _sample(message: str) -> dict[str, object]:
    """Keyword values for a template: attribute placeholders get objects carrying those attributes."""
    params: dict[str, object] = {}
    for placeholder in parse_placeholders(message):
        root, *attrs = placeholder.field.split(".")
        if not attrs:
            params.setdefault(root, f"<{root}>")
            continue
        node = params.setdefault(root, SimpleNamespace())
        assert isinstance(node, SimpleNamespace)
        for attr in attrs[:-1]:
            node = node.__dict__.setdefault(attr, SimpleNamespace())
        setattr(node, attrs[-1], f"<{placeholder.field}>")
    return params


def test_exports_are_the_generated_classes() -> None:
    """BY_ID and __all__ list exactly the entries with a typed class; the rest are in place."""
    typed = generated_classes(CATALOG)
    assert {i: cls.__name__ for i, cls in generated.BY_ID.items()} == {e.id: e.name for e in typed}
    assert set(generated.__all__) == {"BY_ID", "CatalogError", "DOCS_BASE_URL"} | {
        e.name for e in typed
    }


@pytest.mark.parametrize("entry", generated_classes(CATALOG), ids=lambda e: e.name)
def test_every_class(entry: Entry, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each class: both bases, its id and template, the rendered str, the note, pickle and copy."""
    monkeypatch.delenv("ERRCAT_DOCS_LINKS", raising=False)
    cls = getattr(generated, entry.name)
    params = _sample(entry.message)
    error = cls(**params)
    assert isinstance(error, generated.CatalogError)
    assert isinstance(error, getattr(builtins, entry.exception))
    assert (error.id, error.template) == (entry.id, entry.message)
    assert str(error) == entry.message.format(**params)
    assert error.__notes__ == [f"For further information visit {error.docs_url}"]
    assert error.docs_url == f"http://127.0.0.1:8000/errors/{entry.id}/"
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(clone) is cls
        assert str(clone) == str(error)
        assert clone.__notes__ == error.__notes__


def test_docs_links_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """ERRCAT_DOCS_LINKS=0 leaves the note out; the message is unchanged."""
    monkeypatch.setenv("ERRCAT_DOCS_LINKS", "0")
    error = generated.BorrowRequiresMps(devices="cpu, mps:0")
    assert str(error) == "borrow_torch_tensors requires MPS tensors, got cpu, mps:0"
    assert not hasattr(error, "__notes__")


def test_runtime_raise_carries_note(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real runtime raise is the typed class, is still a ValueError, and links its page."""
    import torch

    from runtime.tensor_bridge import borrow_torch_tensors

    monkeypatch.delenv("ERRCAT_DOCS_LINKS", raising=False)
    with pytest.raises(ValueError) as caught:
        borrow_torch_tensors(torch.ones(1), torch.ones(1))
    assert type(caught.value) is generated.BorrowRequiresMps
    assert str(caught.value) == "borrow_torch_tensors requires MPS tensors, got cpu, cpu"
    assert caught.value.__notes__ == [
        "For further information visit http://127.0.0.1:8000/errors/f978622eed176d93/"
    ]
