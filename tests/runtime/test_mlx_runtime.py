"""The MLX runtime gate: env parsing, version rules and the ordered runtime checks."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import mlx.core as mx
import pytest
import torch
from helpers import exact
from packaging.version import Version

from runtime import mlx_runtime
from runtime.mlx_runtime import _is_stable_at_least, _is_stable_series, use_mlx

NOT_INSTALLED = (
    "SGLANG_USE_MLX requires stable Torch 2.13.x and MLX >= 0.32.0, but MLX is not installed; "
    "reinstall with the srt_mps extra"
)
NO_MPS = "SGLANG_USE_MLX requires an available PyTorch MPS device"
NO_METAL = "SGLANG_USE_MLX requires an available MLX Metal device"


def wrong_pair(torch_version: str, mlx_version: str) -> str:
    """The version-check message for the given shown versions."""
    return (
        "SGLANG_USE_MLX requires stable Torch 2.13.x and MLX >= 0.32.0; "
        f"found Torch {torch_version} + MLX {mlx_version}; reinstall with the srt_mps extra"
    )


@pytest.fixture(autouse=True)
def fresh_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with nothing cached and `SGLANG_USE_MLX` unset."""
    monkeypatch.delenv("SGLANG_USE_MLX", raising=False)
    use_mlx.cache_clear()
    mlx_runtime._validate_runtime.cache_clear()
    yield
    use_mlx.cache_clear()
    mlx_runtime._validate_runtime.cache_clear()


@pytest.fixture
def enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    """`SGLANG_USE_MLX=1`."""
    monkeypatch.setenv("SGLANG_USE_MLX", "1")


@pytest.fixture
def apple_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend both the PyTorch MPS device and the MLX Metal device are available."""
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    monkeypatch.setattr(mx.metal, "is_available", lambda: True)


# Version rules


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2.13.0+cpu", True),
        ("2.13.1", True),
        ("2.13.0.post1", True),
        ("2.14.0", False),
        ("2.12.9", False),
        ("2.13.0rc1", False),
        ("2.13.0.dev20260101", False),
        ("garbage", False),
        (None, False),
    ],
)
def test_stable_series(raw: object, expected: bool) -> None:
    """Only final releases of 2.13.x belong to the supported Torch series."""
    assert _is_stable_series(raw, (2, 13)) is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0.32.0", True),
        ("0.32.4", True),
        ("0.33.0", True),
        ("1.0.0", True),
        ("0.31.9", False),
        ("0.33.0rc1", False),
        ("0.32.0.dev1", False),
        ("garbage", False),
        (None, False),
    ],
)
def test_stable_at_least(raw: object, expected: bool) -> None:
    """Only final releases at or above 0.32.0 satisfy the MLX minimum."""
    assert _is_stable_at_least(raw, Version("0.32.0")) is expected


# SGLANG_USE_MLX


def test_disabled_by_default() -> None:
    """Without `SGLANG_USE_MLX` the backend is off and nothing is validated."""
    assert use_mlx() is False


@pytest.mark.parametrize("value", ["false", "0", "no", "n", "FALSE", "No"])
def test_false_words_disable(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """false/0/no/n in any case disable the backend without validating it."""
    monkeypatch.setenv("SGLANG_USE_MLX", value)
    assert use_mlx() is False


@pytest.mark.parametrize("value", ["true", "1", "yes", "y", "TRUE", "Yes", "Y"])
def test_true_words_enable(
    value: str, monkeypatch: pytest.MonkeyPatch, apple_devices: None
) -> None:
    """true/1/yes/y in any case enable the backend."""
    monkeypatch.setenv("SGLANG_USE_MLX", value)
    assert use_mlx() is True


@pytest.mark.parametrize(
    ("value", "shown"),
    [("maybe", "maybe"), ("2", "2"), ("on", "on"), ("", ""), ("MAYBE", "maybe")],
)
def test_invalid_value_warns_and_disables(
    value: str, shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any other value warns with upstream's text (the value lower-cased) and counts as false."""
    monkeypatch.setenv("SGLANG_USE_MLX", value)
    message = (
        f'Invalid value for SGLANG_USE_MLX: "{shown}" is not a valid boolean value, '
        'using default "False"'
    )
    with pytest.warns(UserWarning, match=exact(message)):
        assert use_mlx() is False


@pytest.mark.parametrize("value", [" yes ", "1 ", "\ttrue", " n "])
def test_whitespace_is_not_stripped(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """As upstream's EnvBool, surrounding whitespace makes a value invalid: `" yes "` does not
    enable the backend (it warns and keeps the default), and `" n "` is no valid false either."""
    monkeypatch.setenv("SGLANG_USE_MLX", value)
    with pytest.warns(UserWarning, match=re.escape(f'"{value.lower()}" is not a valid boolean')):
        assert use_mlx() is False


def test_answer_is_fixed_by_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Changing the environment after the first answer changes nothing."""
    assert use_mlx() is False
    monkeypatch.setenv("SGLANG_USE_MLX", "1")
    assert use_mlx() is False


# Runtime checks, in order


@pytest.mark.usefixtures("enabled")
def test_this_machine_lacks_mps() -> None:
    """On this CPU-only machine the real check passes the versions and stops at MPS."""
    with pytest.raises(RuntimeError, match=exact(NO_MPS)):
        use_mlx()


@pytest.mark.usefixtures("enabled", "apple_devices")
def test_missing_mlx(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unimportable mlx.core is reported first, without the import error chained."""
    monkeypatch.setitem(sys.modules, "mlx.core", None)
    with pytest.raises(RuntimeError, match=exact(NOT_INSTALLED)) as caught:
        use_mlx()
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


@pytest.mark.parametrize(
    ("torch_version", "mlx_version"),
    [("2.14.0", "0.32.4"), ("2.13.0", "0.31.0"), ("2.13.0rc1", "0.32.4"), ("2.13.0", "0.33.0rc1")],
)
@pytest.mark.usefixtures("enabled", "apple_devices")
def test_unsupported_pair(
    torch_version: str, mlx_version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Torch outside stable 2.13.x or an MLX below stable 0.32.0 names both versions."""
    monkeypatch.setattr(torch, "__version__", torch_version)
    monkeypatch.setattr(mx, "__version__", mlx_version)
    with pytest.raises(RuntimeError, match=exact(wrong_pair(torch_version, mlx_version))):
        use_mlx()


@pytest.mark.usefixtures("enabled", "apple_devices")
def test_unknown_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing version attribute is shown as `unknown`."""
    monkeypatch.delattr(torch, "__version__")
    monkeypatch.delattr(mx, "__version__")
    with pytest.raises(RuntimeError, match=exact(wrong_pair("unknown", "unknown"))):
        use_mlx()


@pytest.mark.usefixtures("enabled")
def test_versions_are_checked_before_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """With both a bad version and no MPS, the version message wins."""
    monkeypatch.setattr(torch, "__version__", "2.12.0")
    mlx_version = vars(mx)["__version__"]  # the stubs do not declare it
    with pytest.raises(RuntimeError, match=exact(wrong_pair("2.12.0", mlx_version))):
        use_mlx()


@pytest.mark.usefixtures("enabled")
def test_missing_mps_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Torch build without an MPS `is_available` counts as no MPS device."""
    monkeypatch.delattr(torch.backends.mps, "is_available")
    monkeypatch.setattr(mx.metal, "is_available", lambda: True)
    with pytest.raises(RuntimeError, match=exact(NO_MPS)):
        use_mlx()


@pytest.mark.usefixtures("enabled")
def test_no_metal(monkeypatch: pytest.MonkeyPatch) -> None:
    """With MPS available but MLX Metal not, the Metal check fails."""
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    with pytest.raises(RuntimeError, match=exact(NO_METAL)):
        use_mlx()


@pytest.mark.usefixtures("enabled")
def test_missing_metal_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """An MLX without `mx.metal` counts as no Metal device."""
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    monkeypatch.delattr(mx, "metal")
    with pytest.raises(RuntimeError, match=exact(NO_METAL)):
        use_mlx()


@pytest.mark.usefixtures("enabled")
def test_failures_are_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed validation raises again on the next call, and succeeds once the cause is fixed."""
    for _ in range(2):
        with pytest.raises(RuntimeError, match=exact(NO_MPS)):
            use_mlx()
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    monkeypatch.setattr(mx.metal, "is_available", lambda: True)
    assert use_mlx() is True


@pytest.mark.usefixtures("enabled", "apple_devices")
def test_success_is_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once validated, later calls neither re-read the environment nor re-check the runtime."""
    assert use_mlx() is True
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    monkeypatch.setenv("SGLANG_USE_MLX", "0")
    assert use_mlx() is True
