"""Move tensors between PyTorch (CPU or Apple MPS) and MLX.

`torch_to_mlx` always hands MLX its own copy. `mlx_to_torch` shares memory through DLPack and only
copies an array whose strides are negative, because Torch cannot represent those. `mlx_call` and
`mlx_call_multi` run one whole MLX operation on zero-copy imports of MPS tensors and keep those
imports alive until the results are evaluated and exported.

Every public entry point holds one process-wide re-entrant lock for its whole duration, export of
the result included. MLX is imported lazily on first use, so importing this module never imports
`mlx`.

MLX's buffer cache. MLX gives every new array memory from its allocator, and a large buffer it
does not keep in its cache goes back to the system when the array dies: the next conversion then
gets fresh pages, and touching them costs several times the copy itself (7x at 64 MiB on a Linux
CPU, whose cache holds only 32 MiB by default). So before copying a tensor of `n` bytes into
MLX (`torch_to_mlx`, CPU operands of `mlx_call`), the bridge makes sure MLX's cache limit (`mx.set_cache_limit`) is at least `2 * n`, which
lets the buffer of a conversion that has been freed serve the next one. The bridge only ever
raises the limit, never above `_cache_ceiling()` (1 GiB, or 1/16 of MLX's memory limit if that
is less), and gives up managing it for good as soon as it finds a value it did not set itself:
an application that calls `mx.set_cache_limit` keeps its own choice. The cost is memory: MLX
may keep up to that many bytes of freed buffers for reuse (`mx.clear_cache()` returns them).
Tensors larger than the ceiling are still copied correctly, paying the page faults.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import torch
import torch.utils.dlpack

from runtime.errors import (
    BorrowRequiresMps,
    BridgeRequiresMlx,
    Complex128Unsupported,
    Float64ToMpsUnsupported,
    MultiOutputNotMlxArray,
    MultiOutputNotSequence,
    TensorViewRequiresMps,
    UnsupportedSourceDevice,
    UnsupportedTargetDevice,
)

if TYPE_CHECKING:
    import mlx.core as mx

__all__ = [
    "MlxTensorView",
    "borrow_torch_tensors",
    "mlx_call",
    "mlx_call_multi",
    "mlx_to_torch",
    "torch_to_mlx",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")

DeviceLike = torch.device | str | None
"""A target device as callers may give it: a device, its name, or None for the default."""

_SUPPORTED_DEVICE_TYPES = frozenset({"cpu", "mps"})
"""Torch device types the bridge can read from and export to."""

_DLPACK_CPU = (1, 0)
"""DLPack `(device_type, device_id)` of host memory (kDLCPU)."""

# Re-entrant because `mlx_call` exports its result through `mlx_to_torch`, itself serialized.
_BRIDGE_LOCK = threading.RLock()

_CACHE_CEILING_BYTES = 1 << 30
"""The most the bridge raises MLX's buffer cache limit to (see the module docstring)."""
_CACHE_MEMORY_SHARE = 16
"""The bridge's cache limit never exceeds MLX's memory limit divided by this."""
_UNBOUNDED_CACHE = 1 << 62
"""A cache limit set only for an instant, to read the current one without ever lowering it."""


class _CachePolicy:
    """What the bridge knows about MLX's cache limit; only touched under `_BRIDGE_LOCK`."""

    installed: int | None = None
    """The limit the bridge last left in place; None before its first adjustment."""
    ceiling: int | None = None
    """`_cache_ceiling()`, computed once."""
    released: bool = False
    """True once someone else changed the limit: from then on the bridge leaves it alone."""


def _serialized_bridge(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run the whole of `fn`, export of its result included, while holding `_BRIDGE_LOCK`."""

    @functools.wraps(fn)
    def serialized(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with _BRIDGE_LOCK:
            return fn(*args, **kwargs)

    return serialized


@functools.lru_cache(maxsize=1)
def _mlx_core() -> ModuleType:
    try:
        import mlx.core as mlx_core
    except ImportError:
        raise BridgeRequiresMlx() from None
    return mlx_core


def _cache_ceiling(mx: ModuleType) -> int:
    """The largest cache limit the bridge will install: 1 GiB, less on small machines."""
    if _CachePolicy.ceiling is None:
        _CachePolicy.ceiling = min(
            _CACHE_CEILING_BYTES, int(mx.get_memory_limit()) // _CACHE_MEMORY_SHARE
        )
    return _CachePolicy.ceiling


def _keep_room_in_mlx_cache(nbytes: int, mx: ModuleType) -> None:
    """Raise MLX's cache limit so a freed copy of `nbytes` bytes can serve the next one.

    Costs two integer comparisons unless the limit has to grow. MLX has no getter for the limit,
    so it is read by setting a huge one for an instant (never a lower one, which could make MLX
    drop cached buffers) and then putting back the larger of the old and the wanted value.
    """
    if _CachePolicy.released:
        return
    wanted = min(2 * nbytes, _cache_ceiling(mx))
    installed = _CachePolicy.installed
    if installed is not None and wanted <= installed:
        return
    previous = int(mx.set_cache_limit(_UNBOUNDED_CACHE))
    if installed is not None and previous != installed:
        # The application set its own limit since: it stands, and the bridge stops managing.
        mx.set_cache_limit(previous)
        _CachePolicy.released = True
        return
    limit = max(previous, wanted)
    mx.set_cache_limit(limit)
    _CachePolicy.installed = limit


def _get_torch_device() -> torch.device:
    """The default export target: MPS where PyTorch has it, else the CPU."""
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def _resolve_target(device: DeviceLike) -> torch.device:
    return _get_torch_device() if device is None else torch.device(device)


def _check_importable(tensor: torch.Tensor) -> None:
    """Reject a tensor MLX cannot take, before any fence or copy happens."""
    if tensor.device.type not in _SUPPORTED_DEVICE_TYPES:
        raise UnsupportedSourceDevice(tensor=tensor)
    # mx.array would silently narrow complex128 to complex64.
    if tensor.device.type == "cpu" and tensor.dtype == torch.complex128:
        raise Complex128Unsupported()


def _torch_to_mlx(tensor: torch.Tensor, *, copy: bool, synchronize: bool = True) -> mx.array:
    """Import `tensor` into MLX; zero-copy only for MPS with `copy=False`."""
    mx = _mlx_core()
    tensor = tensor.detach()
    _check_importable(tensor)
    if copy or tensor.device.type == "cpu":
        # Before the copy allocates, so its buffer can be one that an earlier copy freed.
        _keep_room_in_mlx_cache(tensor.numel() * tensor.element_size(), mx)
    if tensor.device.type == "mps":
        if synchronize:
            torch.mps.synchronize()
        return mx.asarray(tensor, copy=copy)
    # MLX refuses to borrow host memory, so a CPU tensor is always copied whatever `copy` says.
    if tensor.dtype == torch.float64:
        # A plain mx.array() narrows float64 to float32, and MLX computes float64 only on its CPU
        # stream (Metal has no float64).
        with mx.stream(mx.cpu):
            return mx.array(tensor, dtype=mx.float64)
    return mx.array(tensor)


class MlxTensorView:
    """A zero-copy MLX view of a Torch MPS tensor that keeps the tensor alive.

    The view owns both the detached Torch tensor and the imported MLX array, so the borrowed
    storage outlives any lazy MLX graph built on `array`. Meant for tensors that do not change
    afterwards, such as weights.
    """

    __slots__ = ("array", "torch_tensor")

    torch_tensor: torch.Tensor
    """The detached Torch tensor whose storage `array` borrows."""
    array: mx.array
    """The MLX array sharing `torch_tensor`'s storage."""

    def __init__(self, tensor: torch.Tensor, *, synchronize: bool = True) -> None:
        with _BRIDGE_LOCK:
            # As upstream: the device is checked before MLX is loaded, so a CPU tensor gets the
            # device error even where MLX is missing; the import below loads MLX.
            owner = tensor.detach()
            if owner.device.type != "mps":
                raise TensorViewRequiresMps(owner=owner)
            if synchronize:
                torch.mps.synchronize()
            self._adopt(owner)

    @classmethod
    def _from_synchronized(cls, tensor: torch.Tensor) -> MlxTensorView:
        """Build a view when the caller already fenced the MPS queue and holds the lock."""
        owner = tensor.detach()
        if owner.device.type != "mps":
            raise TensorViewRequiresMps(owner=owner)
        view = cls.__new__(cls)
        view._adopt(owner)
        return view

    def _adopt(self, owner: torch.Tensor) -> None:
        self.torch_tensor = owner
        self.array = _torch_to_mlx(owner, copy=False, synchronize=False)

    def matches(self, tensor: torch.Tensor) -> bool:
        """Whether `tensor` is exactly the borrowed tensor: same storage, layout and dtype."""
        own = self.torch_tensor
        return (
            tensor.device == own.device
            and tensor.dtype == own.dtype
            and tensor.shape == own.shape
            and tensor.stride() == own.stride()
            and tensor.data_ptr() == own.data_ptr()
        )


@_serialized_bridge
def borrow_torch_tensors(
    *tensors: torch.Tensor, synchronize: bool = True
) -> tuple[MlxTensorView, ...]:
    """Borrow Torch MPS tensors as zero-copy MLX views, fencing the MPS queue at most once.

    Pass `synchronize=False` only when the caller fences the queue itself right before the views
    are used. Unlike `torch_to_mlx`, nothing is copied, hence every tensor must be on MPS.

    As upstream, MLX is first needed by the imports themselves: without MLX, no tensors still
    give `()` and a non-MPS tensor still gets the device error.
    """
    owners = tuple(tensor.detach() for tensor in tensors)
    if not all(owner.device.type == "mps" for owner in owners):
        # Name every device, not only the first offender, so a mixed batch is diagnosed at once.
        devices = ", ".join(str(owner.device) for owner in owners)
        raise BorrowRequiresMps(devices=devices)
    if owners and synchronize:
        torch.mps.synchronize()
    return tuple(MlxTensorView._from_synchronized(owner) for owner in owners)


@_serialized_bridge
def torch_to_mlx(tensor: torch.Tensor) -> mx.array:
    """Copy a Torch CPU or MPS tensor into a new MLX array of the same dtype.

    float64 stays float64 (computed on MLX's CPU stream); complex128 is rejected. An MPS copy is
    evaluated before returning, so the caller may then change or free the source.
    """
    mx = _mlx_core()
    array = _torch_to_mlx(tensor, copy=True)
    if tensor.device.type == "mps":
        mx.eval(array)
    return array


def _prepare_mlx_export(array: mx.array, target_device: torch.device, mx: ModuleType) -> None:
    """Reject an export Torch cannot receive; evaluates nothing."""
    if target_device.type not in _SUPPORTED_DEVICE_TYPES:
        raise UnsupportedTargetDevice(target_device=target_device)
    if target_device.type == "mps" and array.dtype == mx.float64:
        raise Float64ToMpsUnsupported()


def _has_negative_stride(array: mx.array) -> bool:
    """Whether an evaluated array walks its buffer backwards along some axis."""
    # The buffer protocol is the one public window onto an MLX array's strides (in bytes); the
    # stubs do not declare it.
    strides = memoryview(array).strides  # type: ignore[arg-type]
    return any(stride < 0 for stride in strides or ())


def _contiguous_for(array: mx.array, target_device: torch.device, mx: ModuleType) -> mx.array:
    stream = mx.cpu if target_device.type == "cpu" else mx.gpu
    return mx.contiguous(array, stream=stream)


def _export_evaluated_mlx(
    array: mx.array,
    target_device: torch.device,
    mx: ModuleType,
    *,
    materialize_negative: bool = True,
) -> torch.Tensor:
    """Hand an evaluated array to Torch through DLPack, sharing its buffer."""
    # DLPack cannot describe negative strides, and Torch aborts the process on them.
    if materialize_negative and _has_negative_stride(array):
        array = _contiguous_for(array, target_device, mx)
        mx.eval(array)
    if target_device.type == "cpu":
        capsule = array.__dlpack__(dl_device=_DLPACK_CPU, copy=False)
        return torch.utils.dlpack.from_dlpack(capsule)
    return torch.utils.dlpack.from_dlpack(array)


@_serialized_bridge
def mlx_to_torch(array: mx.array, device: DeviceLike = None) -> torch.Tensor:
    """Evaluate an MLX array and return a Torch tensor sharing its memory.

    The default target is MPS where available, else the CPU. Writes through the returned tensor
    are visible in MLX, and the tensor stays valid after the MLX array is gone. Positive-stride
    views keep their strides; a negative-stride view is first copied into contiguous memory.
    """
    mx = _mlx_core()
    target_device = _resolve_target(device)
    _prepare_mlx_export(array, target_device, mx)
    mx.eval(array)
    return _export_evaluated_mlx(array, target_device, mx)


def _import_operands(
    tensors: Sequence[torch.Tensor | MlxTensorView], mx: ModuleType
) -> tuple[mx.array, ...]:
    """Import every operand, fencing the MPS queue once if any operand lives there."""
    for operand in tensors:
        if not isinstance(operand, MlxTensorView):
            _check_importable(operand)
    if any(isinstance(op, MlxTensorView) or op.device.type == "mps" for op in tensors):
        torch.mps.synchronize()
    return tuple(
        op.array
        if isinstance(op, MlxTensorView)
        else _torch_to_mlx(op.detach(), copy=False, synchronize=False)
        for op in tensors
    )


def _run_operation(
    operation: Callable[..., _R],
    imports: tuple[mx.array, ...],
    target_device: torch.device,
    mx: ModuleType,
) -> _R:
    # Metal has no float64, so a float64 graph bound for the CPU is built on MLX's CPU stream.
    if target_device.type == "cpu" and any(imp.dtype == mx.float64 for imp in imports):
        with mx.stream(mx.cpu):
            return operation(*imports)
    return operation(*imports)


@_serialized_bridge
def mlx_call(
    operation: Callable[..., mx.array],
    *tensors: torch.Tensor | MlxTensorView,
    device: DeviceLike = None,
) -> torch.Tensor:
    """Run one MLX operation on Torch tensors or views and return its result as a Torch tensor.

    MPS tensors are imported without a copy after one MPS fence; CPU tensors are copied. The
    imports stay referenced until the result has been evaluated and exported.
    """
    mx = _mlx_core()
    target_device = _resolve_target(device)
    if target_device.type not in _SUPPORTED_DEVICE_TYPES:
        raise UnsupportedTargetDevice(target_device=target_device)
    imports = _import_operands(tensors, mx)
    result = _run_operation(operation, imports, target_device, mx)
    # `imports` is still referenced here: the lazy graph reads the borrowed MPS storage until
    # this export has evaluated it.
    return mlx_to_torch(result, device=target_device)


@_serialized_bridge
def mlx_call_multi(
    operation: Callable[..., Sequence[mx.array]],
    *tensors: torch.Tensor | MlxTensorView,
    device: DeviceLike = None,
) -> tuple[torch.Tensor, ...]:
    """Like `mlx_call` for an operation returning several arrays, evaluated together once."""
    mx = _mlx_core()
    target_device = _resolve_target(device)
    if target_device.type not in _SUPPORTED_DEVICE_TYPES:
        raise UnsupportedTargetDevice(target_device=target_device)
    imports = _import_operands(tensors, mx)
    result = _run_operation(operation, imports, target_device, mx)
    if not isinstance(result, tuple | list) or not result:
        raise MultiOutputNotSequence()
    if not all(isinstance(output, mx.array) for output in result):
        raise MultiOutputNotMlxArray()
    outputs = list(result)
    for output in outputs:
        _prepare_mlx_export(output, target_device, mx)
    mx.eval(*outputs)
    # One extra evaluation covers every output that needs a contiguous copy.
    backwards = [index for index, output in enumerate(outputs) if _has_negative_stride(output)]
    if backwards:
        for index in backwards:
            outputs[index] = _contiguous_for(outputs[index], target_device, mx)
        mx.eval(*(outputs[index] for index in backwards))
    exported = tuple(
        _export_evaluated_mlx(output, target_device, mx, materialize_negative=False)
        for output in outputs
    )
    del imports  # only now may the borrowed MPS storage be released
    return exported
