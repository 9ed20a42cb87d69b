"""The opt-in gate for the MLX backend.

`use_mlx()` reads `SGLANG_USE_MLX` once per process. When the backend is enabled it checks, before
anything else runs on it, that the runtime is the tested stable pair (Torch 2.13.x with
MLX >= 0.32.0) and that both the PyTorch MPS device and the MLX Metal device are available. A
failed check raises a `RuntimeError` that says what is missing; it is not cached, so the next call
checks again.
"""

from __future__ import annotations

import functools
import os
import warnings

from packaging.version import InvalidVersion, Version

from runtime.errors import (
    MlxNotInstalled,
    MlxRequiresMetalDevice,
    MlxRequiresMpsDevice,
    UnsupportedTorchMlxVersions,
)

_ENV_NAME = "SGLANG_USE_MLX"
"""The environment variable that enables the MLX backend."""

_ENV_DEFAULT = False
"""The value used when `SGLANG_USE_MLX` is unset or unreadable."""

_TRUE_WORDS = frozenset({"true", "1", "yes", "y"})
_FALSE_WORDS = frozenset({"false", "0", "no", "n"})

_MIN_MLX_VERSION = Version("0.32.0")
"""The oldest stable MLX release the backend is tested with."""

_SUPPORTED_TORCH_SERIES = (2, 13)
"""The `(major, minor)` Torch series the backend is tested with."""


def _parse_version(raw: object) -> Version | None:
    try:
        return Version(str(raw))
    except InvalidVersion:
        return None


def _is_stable_series(raw: object, series: tuple[int, int]) -> bool:
    """Whether `raw` is a final (not pre- or dev) release of the `(major, minor)` series."""
    version = _parse_version(raw)
    if version is None or version.is_prerelease:
        return False
    return (version.major, version.minor) == series


def _is_stable_at_least(raw: object, minimum: Version) -> bool:
    """Whether `raw` is a final (not pre- or dev) release no older than `minimum`."""
    version = _parse_version(raw)
    if version is None or version.is_prerelease:
        return False
    return version >= minimum


def _mlx_requested() -> bool:
    """Read `SGLANG_USE_MLX` exactly as upstream's `EnvBool` does.

    The value is only lower-cased, never stripped, so `" yes "` is not a yes. An unrecognised
    value (the empty string included) warns with upstream's text and counts as the default: a
    typo must neither enable nor break the backend, but the user should hear about it.
    """
    raw = os.environ.get(_ENV_NAME)
    if raw is None:
        return _ENV_DEFAULT
    word = raw.lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    warnings.warn(
        f'Invalid value for {_ENV_NAME}: "{word}" is not a valid boolean value, '
        f'using default "{_ENV_DEFAULT}"',
        stacklevel=3,
    )
    return _ENV_DEFAULT


def _reports_available(namespace: object) -> bool:
    """Whether `namespace.is_available` exists, is callable and returns true."""
    is_available = getattr(namespace, "is_available", None)
    return callable(is_available) and bool(is_available())


@functools.lru_cache(maxsize=1)
def _validate_runtime() -> None:
    """Fail loudly unless the tested Torch/MLX pair and both Apple devices are present."""
    try:
        import mlx.core as mx
    except ImportError:
        raise MlxNotInstalled() from None
    import torch

    raw_torch = getattr(torch, "__version__", None)
    raw_mlx = getattr(mx, "__version__", None)
    torch_ok = _is_stable_series(raw_torch, _SUPPORTED_TORCH_SERIES)
    mlx_ok = _is_stable_at_least(raw_mlx, _MIN_MLX_VERSION)
    if not (torch_ok and mlx_ok):
        torch_version = raw_torch or "unknown"
        mlx_version = raw_mlx or "unknown"
        raise UnsupportedTorchMlxVersions(torch_version=torch_version, mlx_version=mlx_version)
    if not _reports_available(getattr(torch.backends, "mps", None)):
        raise MlxRequiresMpsDevice()
    if not _reports_available(getattr(mx, "metal", None)):
        raise MlxRequiresMetalDevice()


@functools.lru_cache(maxsize=1)
def use_mlx() -> bool:
    """Whether the MLX backend was requested with `SGLANG_USE_MLX`, validating it if so.

    The answer is fixed by the first call that returns; later changes to the environment are
    ignored. A failed validation raises `RuntimeError` and is retried on the next call.
    """
    enabled = _mlx_requested()
    if enabled:
        _validate_runtime()
    return enabled
