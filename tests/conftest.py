"""Shared test configuration: hardware markers skip with a printed reason where absent."""

from __future__ import annotations

import pytest


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _mps_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


@pytest.fixture(autouse=True)
def _no_docs_links(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runtime tests match messages exactly (`...$`); pytest also matches PEP 678 notes, so the
    docs-link note is switched off here and tested on its own in tests/runtime/test_runtime_errors.py."""
    monkeypatch.setenv("ERRCAT_DOCS_LINKS", "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    needs_cuda = any(item.get_closest_marker("gpu") for item in items)
    needs_mps = any(item.get_closest_marker("mps") for item in items)
    cuda = _cuda_available() if needs_cuda else False
    mps = _mps_available() if needs_mps else False
    for item in items:
        if item.get_closest_marker("gpu") and not cuda:
            item.add_marker(
                pytest.mark.skip(reason="needs a CUDA GPU: torch.cuda.is_available() is False")
            )
        if item.get_closest_marker("mps") and not mps:
            item.add_marker(
                pytest.mark.skip(
                    reason="needs Apple MPS: torch.backends.mps.is_available() is False"
                )
            )
