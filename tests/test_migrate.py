"""The migrate codemod: raw raises become typed raises, everything else stays as written."""

from __future__ import annotations

import textwrap

import pytest

from catalog.migrate import MigrateError, Rewrite, migrate_source

BEFORE = textwrap.dedent('''\
    """A module."""

    from __future__ import annotations

    import torch


    class Pool:
        def copy_tensor(self, tensor):
            # Checked before any CUDA call.
            if not tensor.is_cuda:
                raise ValueError(f"{self.transport_name} requires a CUDA tensor")  # seed 002
            try:
                return tensor.view(-1)
            except RuntimeError as exc:
                raise ValueError(
                    "cannot view "  # the first half
                    f"{tuple(tensor.shape)}"
                ) from exc
''')

AFTER = textwrap.dedent('''\
    """A module."""

    from __future__ import annotations

    import torch
    from runtime.errors import CannotView, TransportRequiresCudaTensor


    class Pool:
        def copy_tensor(self, tensor):
            # Checked before any CUDA call.
            if not tensor.is_cuda:
                raise TransportRequiresCudaTensor(transport_name=self.transport_name)  # seed 002
            try:
                return tensor.view(-1)
            except RuntimeError as exc:
                raise CannotView(tensor_shape=tuple(tensor.shape)) from exc
''')


def test_rewrites_raises_and_adds_one_import() -> None:
    """Both raises are rewritten, comments and the `from` clause stay, the import is added once."""
    rewrites = [
        Rewrite(12, 13, "TransportRequiresCudaTensor", {"transport_name": "self.transport_name"}),
        Rewrite(16, 13, "CannotView", {"tensor_shape": "tuple(tensor.shape)"}),
    ]
    assert migrate_source(BEFORE, rewrites, "runtime.errors") == AFTER


def test_existing_import_is_reused() -> None:
    """A file that already imports the class does not import it twice."""
    source = "from runtime.errors import Boom\n\n\ndef f():\n    raise ValueError('boom')\n"
    after = migrate_source(source, [Rewrite(5, 5, "Boom", {})], "runtime.errors")
    assert after == "from runtime.errors import Boom\n\n\ndef f():\n    raise Boom()\n"


def test_no_rewrites_is_identity() -> None:
    """Nothing to do leaves the text byte for byte."""
    assert migrate_source(BEFORE, [], "runtime.errors") == BEFORE


def test_missing_raise_is_an_error() -> None:
    """A rewrite pointing at no raise statement fails instead of silently doing nothing."""
    with pytest.raises(MigrateError, match=r"no raise statement at 3:1"):
        migrate_source(BEFORE, [Rewrite(3, 1, "X", {})], "runtime.errors")
