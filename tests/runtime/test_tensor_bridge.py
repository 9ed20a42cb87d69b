"""The Torch <-> MLX tensor bridge: copies, shared exports, evaluation counts, errors, locking."""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from helpers import exact
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime import tensor_bridge
from runtime.tensor_bridge import (
    MlxTensorView,
    borrow_torch_tensors,
    mlx_call,
    mlx_call_multi,
    mlx_to_torch,
    torch_to_mlx,
)

LOSSLESS_DTYPES = [
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.bool,
    torch.complex64,
]

COMPLEX128 = (
    "MLX 0.32 does not support complex128; convert the Torch tensor to complex64 explicitly"
)
FLOAT64_TO_MPS = (
    "MLX float64 arrays cannot be exported to a Torch MPS tensor; "
    "use float32/bfloat16 or request device='cpu'"
)
NOT_A_SEQUENCE = "mlx_call_multi operation must return a non-empty tuple or list of MLX arrays"
NOT_ARRAYS = "mlx_call_multi outputs must be MLX arrays"
NO_MLX = "The MLX tensor bridge requires MLX >= 0.32.0"


def sample(dtype: torch.dtype) -> torch.Tensor:
    """A small 2-D tensor of `dtype` including each type's extreme values."""
    if dtype == torch.bool:
        return torch.tensor([[True, False, True], [False, False, True]])
    if dtype == torch.complex64:
        return torch.tensor([[1 + 2j, -3.5 - 0.25j, 0j], [1e30 + 0j, -1e-30j, 7 + 7j]], dtype=dtype)
    if dtype.is_floating_point:
        info = torch.finfo(dtype)
        values = [[info.max, info.min, info.tiny], [-0.0, 1 / 3, float("inf")]]
        return torch.tensor(values, dtype=torch.float64).to(dtype)
    info_i = torch.iinfo(dtype)
    return torch.tensor([[info_i.min, info_i.max, 0], [1, 2, 3]], dtype=dtype)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors have the same dtype, shape and bit pattern (NaN- and -0.0-exact)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


class Recorder:
    """A stand-in that counts calls, optionally delegating to the real function."""

    def __init__(self, real: Callable[..., Any] | None = None) -> None:
        self.real = real
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(args)
        return None if self.real is None else self.real(*args, **kwargs)


@pytest.fixture
def evals(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    """Counts `mx.eval` calls made by the bridge."""
    recorder = Recorder(mx.eval)
    monkeypatch.setattr(mx, "eval", recorder)
    return recorder


@pytest.fixture
def fences(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    """Counts `torch.mps.synchronize` calls, fencing for real only where MPS exists."""
    recorder = Recorder(torch.mps.synchronize if torch.backends.mps.is_available() else None)
    monkeypatch.setattr(torch.mps, "synchronize", recorder)
    return recorder


@pytest.fixture
def imports(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    """Counts tensor imports (copies on the CPU) made by the bridge."""
    recorder = Recorder(tensor_bridge._torch_to_mlx)
    monkeypatch.setattr(tensor_bridge, "_torch_to_mlx", recorder)
    return recorder


@pytest.fixture
def without_mlx(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Makes `import mlx.core` fail and forgets the bridge's cached module."""
    tensor_bridge._mlx_core.cache_clear()
    monkeypatch.setitem(sys.modules, "mlx.core", None)
    yield
    tensor_bridge._mlx_core.cache_clear()


def meta_tensor() -> torch.Tensor:
    """A tensor on a device the bridge does not support."""
    return torch.empty(2, 3, device="meta")


# Module surface


def test_import_does_not_import_mlx() -> None:
    """Importing the bridge leaves mlx unimported until first use."""
    code = (
        "import sys, runtime.tensor_bridge as b\n"
        "assert not any(m == 'mlx' or m.startswith('mlx.') for m in sys.modules), 'mlx imported'\n"
        "b.torch_to_mlx(__import__('torch').ones(1))\n"
        "assert 'mlx.core' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_public_names() -> None:
    """`__all__` lists exactly the six public names."""
    assert tensor_bridge.__all__ == [
        "MlxTensorView",
        "borrow_torch_tensors",
        "mlx_call",
        "mlx_call_multi",
        "mlx_to_torch",
        "torch_to_mlx",
    ]


@pytest.mark.parametrize(
    "entry", [borrow_torch_tensors, torch_to_mlx, mlx_call, mlx_call_multi, mlx_to_torch]
)
def test_entry_points_are_serialized_and_keep_metadata(entry: Callable[..., Any]) -> None:
    """Each public function is wrapped by `_serialized_bridge` and keeps its name and docstring."""
    assert entry.__wrapped__.__name__ == entry.__name__  # type: ignore[attr-defined]
    assert entry.__doc__
    assert entry.__module__ == "runtime.tensor_bridge"


def test_lock_is_reentrant_and_process_wide() -> None:
    """`_BRIDGE_LOCK` is one re-entrant lock."""
    assert isinstance(tensor_bridge._BRIDGE_LOCK, type(threading.RLock()))


def test_default_target_is_cpu_without_mps() -> None:
    """Without MPS every export defaults to the CPU."""
    assert tensor_bridge._get_torch_device() == torch.device("cpu")
    assert mlx_to_torch(mx.arange(3)).device == torch.device("cpu")


def test_view_slots() -> None:
    """A view stores only the Torch tensor and the MLX array."""
    assert set(MlxTensorView.__slots__) == {"torch_tensor", "array"}


# torch_to_mlx


@pytest.mark.parametrize("dtype", LOSSLESS_DTYPES, ids=str)
def test_round_trip_is_lossless(dtype: torch.dtype) -> None:
    """Torch -> MLX -> Torch keeps dtype, shape and every bit."""
    source = sample(dtype)
    array = torch_to_mlx(source)
    assert array.dtype == getattr(mx, str(dtype).removeprefix("torch.").replace("bool", "bool_"))
    assert same_bits(mlx_to_torch(array, device="cpu"), source)


def test_float64_stays_float64() -> None:
    """float64 is neither narrowed on import nor on export."""
    source = torch.tensor([1 / 3, 1e-300, 2.0**60 + 1], dtype=torch.float64)
    array = torch_to_mlx(source)
    assert array.dtype == mx.float64
    assert same_bits(mlx_to_torch(array, device="cpu"), source)


def test_complex128_is_rejected() -> None:
    """complex128 raises instead of silently becoming complex64."""
    with pytest.raises(ValueError, match=exact(COMPLEX128)):
        torch_to_mlx(torch.zeros(2, dtype=torch.complex128))


def test_cpu_copy_is_independent(evals: Recorder) -> None:
    """A CPU tensor is copied without an evaluation, and later writes to it do not reach MLX."""
    source = torch.arange(4, dtype=torch.float32)
    array = torch_to_mlx(source)
    source[0] = 100
    assert array.tolist() == [0, 1, 2, 3]
    assert evals.calls == []


def test_non_contiguous_input_is_copied_in_logical_order() -> None:
    """A transposed Torch tensor arrives in MLX with its logical element order."""
    source = torch.arange(6, dtype=torch.int32).reshape(2, 3).t()
    assert torch_to_mlx(source).tolist() == source.tolist()


def test_autograd_is_dropped() -> None:
    """A tensor that requires grad converts, and nothing that comes back requires grad."""
    source = torch.ones(3, requires_grad=True)
    assert not mlx_to_torch(torch_to_mlx(source)).requires_grad
    assert not mlx_call(lambda a: a * 2, source).requires_grad


def test_unsupported_device_is_rejected() -> None:
    """A tensor that is neither on the CPU nor on MPS is refused, naming its device."""
    message = "The MLX tensor bridge supports CPU and MPS tensors, got meta"
    with pytest.raises(ValueError, match=exact(message)):
        torch_to_mlx(meta_tensor())


def test_float8_error_comes_from_mlx() -> None:
    """float8 is refused by MLX itself, which the bridge passes through."""
    with pytest.raises(ValueError, match=re.escape("Cannot convert array to mlx")):
        torch_to_mlx(torch.zeros(2, dtype=torch.float8_e4m3fn))


# mlx_to_torch


def test_export_shares_memory(evals: Recorder) -> None:
    """A write through the exported tensor is visible in MLX, after one evaluation."""
    array = mx.arange(8, dtype=mx.float32).reshape(4, 2)
    exported = mlx_to_torch(array, device="cpu")
    exported[0, 0] = 100
    assert array[0, 0].item() == 100
    assert len(evals.calls) == 1


def test_export_outlives_the_array() -> None:
    """The exported tensor stays valid after the MLX array is dropped."""
    array = mx.arange(1000, dtype=mx.int64) * 3
    exported = mlx_to_torch(array, device=torch.device("cpu"))
    del array
    gc.collect()
    assert exported.tolist() == [i * 3 for i in range(1000)]


def test_positive_strides_are_kept() -> None:
    """A positive-stride view is exported as a view with the same strides, no copy."""
    base = mx.arange(16, dtype=mx.float32).reshape(4, 4)
    exported = mlx_to_torch(base[:, ::2], device="cpu")
    assert exported.stride() == (4, 2)
    assert exported.tolist() == [[0, 2], [4, 6], [8, 10], [12, 14]]


def test_negative_strides_are_materialized(evals: Recorder) -> None:
    """A reversed view is copied into contiguous memory with one extra evaluation."""
    exported = mlx_to_torch(mx.arange(6)[::-1], device="cpu")
    assert exported.tolist() == [5, 4, 3, 2, 1, 0]
    assert exported.is_contiguous()
    assert len(evals.calls) == 2


@settings(max_examples=30, deadline=None)
@given(
    rows=st.integers(1, 5),
    cols=st.integers(1, 5),
    row_step=st.sampled_from([-2, -1, 1, 2]),
    col_step=st.sampled_from([-2, -1, 1, 2]),
)
def test_any_sliced_view_exports_its_values(
    rows: int, cols: int, row_step: int, col_step: int
) -> None:
    """Whatever the slice steps, the exported tensor holds the view's values."""
    view = mx.arange(rows * cols, dtype=mx.float32).reshape(rows, cols)[::row_step, ::col_step]
    assert mlx_to_torch(view, device="cpu").tolist() == np.array(view).tolist()


def test_capsule_is_consumed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU export makes one DLPack capsule and Torch consumes it exactly once."""
    recorder = Recorder(torch.utils.dlpack.from_dlpack)
    monkeypatch.setattr(torch.utils.dlpack, "from_dlpack", recorder)
    mlx_to_torch(mx.ones(3), device="cpu")
    monkeypatch.undo()
    [(capsule,)] = recorder.calls
    assert type(capsule).__name__ == "PyCapsule"
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        torch.utils.dlpack.from_dlpack(capsule)


@pytest.mark.parametrize("device", ["meta", "cuda:0", torch.device("meta")], ids=str)
def test_export_to_unsupported_target_is_rejected(
    device: str | torch.device, evals: Recorder
) -> None:
    """An export target other than cpu/mps is refused before anything is evaluated."""
    message = f"The MLX tensor bridge supports CPU and MPS targets, got {torch.device(device)}"
    with pytest.raises(ValueError, match=exact(message)):
        mlx_to_torch(mx.ones(2), device=device)
    assert evals.calls == []


def test_float64_export_to_mps_is_rejected(evals: Recorder) -> None:
    """float64 cannot go to MPS, and the refusal comes before any evaluation."""
    with pytest.raises(ValueError, match=exact(FLOAT64_TO_MPS)):
        mlx_to_torch(mx.array([1.0], dtype=mx.float64), device="mps")
    assert evals.calls == []


def test_bad_device_string_error_is_torchs() -> None:
    """An unparsable device string raises Torch's own error."""
    with pytest.raises(RuntimeError, match="Expected one of"):
        mlx_to_torch(mx.ones(1), device="nonsense")


# mlx_call and mlx_call_multi


def test_mlx_call_on_cpu_evaluates_once(evals: Recorder, fences: Recorder) -> None:
    """CPU inputs need no MPS fence and the result costs one evaluation."""
    a = torch.arange(4, dtype=torch.float32)
    b = torch.full((4,), 2.0)
    result = mlx_call(lambda x, y: x * y + 1, a, b)
    assert result.tolist() == [1, 3, 5, 7]
    assert result.device == torch.device("cpu")
    assert (len(evals.calls), fences.calls) == (1, [])


def test_mlx_call_copies_cpu_inputs() -> None:
    """The operation sees copies: an in-place write to the input afterwards changes nothing."""
    source = torch.ones(3)
    result = mlx_call(lambda a: a, source, device="cpu")
    source.fill_(5)
    assert result.tolist() == [1, 1, 1]


def test_mlx_call_negative_stride_result_evaluates_twice(evals: Recorder) -> None:
    """A reversed result is materialized with one extra evaluation."""
    result = mlx_call(lambda a: a[::-1], torch.arange(5))
    assert result.tolist() == [4, 3, 2, 1, 0]
    assert len(evals.calls) == 2


def test_mlx_call_keeps_float64() -> None:
    """A float64 operation bound for the CPU runs in float64."""
    result = mlx_call(lambda a: a / 3, torch.ones(2, dtype=torch.float64), device="cpu")
    assert result.dtype == torch.float64
    assert result.tolist() == [1 / 3, 1 / 3]


def test_mlx_call_multi_evaluates_once(evals: Recorder, fences: Recorder) -> None:
    """All outputs are evaluated together by one `mx.eval`."""
    a = torch.arange(4, dtype=torch.float32)
    total, doubled = mlx_call_multi(lambda x: (x.sum(), x * 2), a)
    assert total.item() == 6
    assert doubled.tolist() == [0, 2, 4, 6]
    assert (len(evals.calls), fences.calls) == (1, [])


def test_mlx_call_multi_negative_stride_outputs_cost_one_more_eval(evals: Recorder) -> None:
    """Any number of reversed outputs are materialized by a single extra evaluation."""
    outputs = mlx_call_multi(lambda x: [x[::-1], x + 1, x[::-2]], torch.arange(4))
    assert [t.tolist() for t in outputs] == [[3, 2, 1, 0], [1, 2, 3, 4], [3, 1]]
    assert len(evals.calls) == 2
    assert len(evals.calls[1]) == 2


def test_mlx_call_operation_errors_propagate() -> None:
    """An exception from the operation reaches the caller unchanged."""

    def broken(_: mx.array) -> mx.array:
        raise KeyError("graph build failed")

    with pytest.raises(KeyError, match="graph build failed"):
        mlx_call(broken, torch.ones(1))


@pytest.mark.parametrize("call", [mlx_call, mlx_call_multi], ids=lambda f: f.__name__)
def test_unsupported_target_is_rejected_before_any_work(
    call: Callable[..., Any], fences: Recorder, imports: Recorder
) -> None:
    """A bad target is refused before the operation runs, anything is fenced or copied."""
    operation = Recorder()
    message = "The MLX tensor bridge supports CPU and MPS targets, got meta"
    with pytest.raises(ValueError, match=exact(message)):
        call(operation, torch.ones(2), device="meta")
    assert (operation.calls, fences.calls, imports.calls) == ([], [], [])


@pytest.mark.parametrize("call", [mlx_call, mlx_call_multi], ids=lambda f: f.__name__)
def test_unsupported_input_is_rejected_before_any_copy(
    call: Callable[..., Any], fences: Recorder, imports: Recorder
) -> None:
    """An input on an unsupported device is refused before any input is copied."""
    message = "The MLX tensor bridge supports CPU and MPS tensors, got meta"
    with pytest.raises(ValueError, match=exact(message)):
        call(lambda *a: a, torch.ones(2), meta_tensor())
    assert (fences.calls, imports.calls) == ([], [])


@pytest.mark.parametrize("call", [mlx_call, mlx_call_multi], ids=lambda f: f.__name__)
def test_complex128_input_is_rejected_before_any_copy(
    call: Callable[..., Any], imports: Recorder
) -> None:
    """A complex128 input is refused before any input is copied."""
    with pytest.raises(ValueError, match=exact(COMPLEX128)):
        call(lambda *a: a, torch.ones(2), torch.zeros(2, dtype=torch.complex128))
    assert imports.calls == []


@pytest.mark.parametrize(
    "result", [mx.ones(2), (), [], None], ids=["array", "empty-tuple", "empty-list", "none"]
)
def test_mlx_call_multi_needs_a_non_empty_sequence(result: object, evals: Recorder) -> None:
    """An operation that does not return a non-empty tuple or list is a TypeError."""

    def operation(_: mx.array) -> Any:  # Any: deliberately breaks the declared return type
        return result

    with pytest.raises(TypeError, match=exact(NOT_A_SEQUENCE)):
        mlx_call_multi(operation, torch.ones(1))
    assert evals.calls == []


def test_mlx_call_multi_needs_mlx_arrays(evals: Recorder) -> None:
    """Every output must be an MLX array, checked before evaluation."""

    def operation(a: mx.array) -> Any:  # Any: deliberately breaks the declared return type
        return (a, torch.ones(1))

    with pytest.raises(TypeError, match=exact(NOT_ARRAYS)):
        mlx_call_multi(operation, torch.ones(1))
    assert evals.calls == []


def test_mlx_call_multi_float64_to_mps_is_rejected(evals: Recorder) -> None:
    """A float64 output bound for MPS is refused before evaluation."""
    with pytest.raises(ValueError, match=exact(FLOAT64_TO_MPS)):
        mlx_call_multi(lambda a: (a,), torch.ones(1, dtype=torch.float64), device="mps")
    assert evals.calls == []


# MPS-only entry points, refused on CPU


def test_view_of_cpu_tensor_is_rejected(fences: Recorder) -> None:
    """An MlxTensorView needs an MPS tensor; the refusal comes before any fence."""
    message = "MlxTensorView requires a Torch MPS tensor, got cpu"
    with pytest.raises(ValueError, match=exact(message)):
        MlxTensorView(torch.ones(2))
    assert fences.calls == []


def test_synchronized_view_of_cpu_tensor_is_rejected() -> None:
    """The internal pre-fenced constructor applies the same device check."""
    message = "MlxTensorView requires a Torch MPS tensor, got meta"
    with pytest.raises(ValueError, match=exact(message)):
        MlxTensorView._from_synchronized(meta_tensor())


def test_borrow_names_every_device(fences: Recorder) -> None:
    """Borrowing lists every input's device and fences nothing."""
    message = "borrow_torch_tensors requires MPS tensors, got cpu, meta, cpu"
    with pytest.raises(ValueError, match=exact(message)):
        borrow_torch_tensors(torch.ones(1), meta_tensor(), torch.ones(1), synchronize=True)
    assert fences.calls == []


def test_borrow_nothing(fences: Recorder) -> None:
    """Borrowing no tensors gives an empty tuple without a fence."""
    assert borrow_torch_tensors() == ()
    assert fences.calls == []


# MLX not installed


@pytest.mark.parametrize(
    "call",
    [
        lambda: torch_to_mlx(torch.ones(1)),
        lambda: mlx_to_torch(mx.ones(1)),
        lambda: mlx_call(lambda a: a, torch.ones(1)),
        lambda: mlx_call_multi(lambda a: (a,), torch.ones(1)),
    ],
    ids=["torch_to_mlx", "mlx_to_torch", "mlx_call", "mlx_call_multi"],
)
@pytest.mark.usefixtures("without_mlx")
def test_missing_mlx_is_a_clear_error(call: Callable[[], object]) -> None:
    """Without an importable mlx.core these entry points raise one clear error, chain hidden."""
    with pytest.raises(RuntimeError, match=exact(NO_MLX)) as caught:
        call()
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


@pytest.mark.usefixtures("without_mlx")
def test_borrowing_nothing_needs_no_mlx(fences: Recorder) -> None:
    """As upstream, borrowing no tensors gives `()` even where MLX is missing."""
    assert borrow_torch_tensors() == ()
    assert borrow_torch_tensors(synchronize=False) == ()
    assert fences.calls == []


@pytest.mark.usefixtures("without_mlx")
def test_device_errors_come_before_the_mlx_import(fences: Recorder) -> None:
    """As upstream, a CPU tensor gets the MPS-only device error even where MLX is missing."""
    with pytest.raises(
        ValueError, match=exact("borrow_torch_tensors requires MPS tensors, got cpu")
    ):
        borrow_torch_tensors(torch.ones(2))
    with pytest.raises(
        ValueError, match=exact("MlxTensorView requires a Torch MPS tensor, got cpu")
    ):
        MlxTensorView(torch.ones(2))
    assert fences.calls == []


# MLX's buffer cache


@pytest.fixture
def cache_policy() -> Iterator[None]:
    """A bridge that has not adjusted MLX's cache limit yet; the limit is restored after."""
    saved = dict(vars(tensor_bridge._CachePolicy))
    limit = mx.set_cache_limit(1 << 62)
    mx.set_cache_limit(limit)
    tensor_bridge._CachePolicy.installed = None
    tensor_bridge._CachePolicy.released = False
    yield
    for name in ("installed", "ceiling", "released"):
        setattr(tensor_bridge._CachePolicy, name, saved[name])
    mx.set_cache_limit(limit)


def cache_limit() -> int:
    """MLX's current cache limit, read without ever lowering it."""
    limit = mx.set_cache_limit(1 << 62)
    mx.set_cache_limit(limit)
    return int(limit)


MIB = 1 << 20


@pytest.mark.usefixtures("cache_policy")
def test_copies_raise_the_cache_limit_to_twice_their_size() -> None:
    """A 64 MiB copy leaves room for 128 MiB of cached buffers; smaller copies change nothing."""
    mx.set_cache_limit(32 * MIB)
    torch_to_mlx(torch.zeros(4 * MIB, dtype=torch.uint8))
    assert cache_limit() == 32 * MIB
    torch_to_mlx(torch.zeros(64 * MIB, dtype=torch.uint8))
    assert cache_limit() == 128 * MIB
    torch_to_mlx(torch.zeros(8 * MIB, dtype=torch.uint8))
    assert cache_limit() == 128 * MIB


@pytest.mark.usefixtures("cache_policy")
def test_cache_limit_is_bounded() -> None:
    """However large the copy, the limit stops at the ceiling (1 GiB, or 1/16 of MLX's memory
    limit where that is less)."""
    ceiling = min(1 << 30, mx.get_memory_limit() // 16)
    assert tensor_bridge._cache_ceiling(mx) == ceiling
    mx.set_cache_limit(32 * MIB)
    tensor_bridge._keep_room_in_mlx_cache(64 << 30, mx)  # a 64 GiB copy, not made
    assert cache_limit() == ceiling


@pytest.mark.usefixtures("cache_policy")
def test_cache_limit_is_never_lowered() -> None:
    """A limit already higher than the bridge wants is kept."""
    mx.set_cache_limit(3 << 30)
    torch_to_mlx(torch.zeros(64 * MIB, dtype=torch.uint8))
    assert cache_limit() == 3 << 30


@pytest.mark.usefixtures("cache_policy")
def test_an_application_limit_wins() -> None:
    """Once someone else has changed the limit the bridge set, it leaves the limit alone."""
    mx.set_cache_limit(32 * MIB)
    torch_to_mlx(torch.zeros(64 * MIB, dtype=torch.uint8))
    assert cache_limit() == 128 * MIB
    mx.set_cache_limit(0)  # the application switches caching off
    torch_to_mlx(torch.zeros(256 * MIB, dtype=torch.uint8))
    assert cache_limit() == 0
    torch_to_mlx(torch.zeros(512 * MIB, dtype=torch.uint8))
    assert cache_limit() == 0


@pytest.mark.usefixtures("cache_policy")
def test_reused_buffers_still_give_independent_copies() -> None:
    """A copy made into a buffer an earlier copy freed holds the new values, and the source stays
    the caller's: writes to it after the call do not reach MLX."""
    first = torch.full((16 * MIB,), 3, dtype=torch.uint8)
    array = torch_to_mlx(first)
    mx.eval(array)
    del array  # its buffer goes to MLX's cache
    second = torch.arange(16 * MIB, dtype=torch.int64).remainder(251).to(torch.uint8)
    copy = torch_to_mlx(second)
    second[:4] = 0
    exported = mlx_to_torch(copy, device="cpu")
    assert torch.equal(exported[:4], torch.arange(4, dtype=torch.uint8))
    assert torch.equal(exported[4:], second[4:])


# Locking


def test_concurrent_calls_are_serialized_and_correct() -> None:
    """Calls from several threads never overlap inside the bridge and all return right answers."""
    active = 0
    overlap = 0
    counter_lock = threading.Lock()
    results: dict[int, list[float]] = {}

    def operation(a: mx.array) -> mx.array:
        nonlocal active, overlap
        with counter_lock:
            active += 1
            overlap = max(overlap, active)
        time.sleep(0.001)  # widen the window in which an unserialized call would overlap
        with counter_lock:
            active -= 1
        return a * 2

    def worker(index: int) -> None:
        for _ in range(10):
            results[index] = mlx_call(operation, torch.full((3,), float(index))).tolist()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)  # a bound for a deadlock, never reached otherwise
    assert not any(thread.is_alive() for thread in threads), "bridge deadlocked"
    assert overlap == 1
    assert results == {i: [2.0 * i] * 3 for i in range(6)}


def test_lock_is_held_for_the_whole_call() -> None:
    """While an operation runs, no other thread can enter the bridge."""
    acquired_elsewhere: list[bool] = []

    def operation(a: mx.array) -> mx.array:
        probe = threading.Thread(
            target=lambda: acquired_elsewhere.append(
                tensor_bridge._BRIDGE_LOCK.acquire(blocking=False)
            )
        )
        probe.start()
        probe.join()  # it only tries the lock without blocking, so it always ends
        return a

    mlx_call(operation, torch.ones(1))
    assert acquired_elsewhere == [False]


def test_operation_may_reenter_the_bridge() -> None:
    """An operation that itself uses the bridge does not deadlock."""

    def operation(a: mx.array) -> mx.array:
        return a + torch_to_mlx(mlx_to_torch(a, device="cpu"))

    assert mlx_call(operation, torch.ones(2)).tolist() == [2, 2]


# Success paths that need Apple MPS (skipped elsewhere with a reason)


@pytest.mark.mps
def test_mps_round_trip_is_lossless() -> None:
    """An MPS tensor converts to MLX and back to MPS without changing a bit."""
    source = torch.arange(6, dtype=torch.float32, device="mps")
    back = mlx_to_torch(torch_to_mlx(source), device="mps")
    assert back.device.type == "mps"
    assert torch.equal(back.cpu(), source.cpu())


@pytest.mark.mps
def test_torch_to_mlx_evaluates_mps_copy(evals: Recorder) -> None:
    """An MPS copy is evaluated before returning, so the source may change afterwards."""
    source = torch.ones(4, device="mps")
    array = torch_to_mlx(source)
    source.fill_(7)
    torch.mps.synchronize()
    assert array.tolist() == [1, 1, 1, 1]
    assert len(evals.calls) == 1


@pytest.mark.mps
def test_borrowed_views_share_storage() -> None:
    """Borrowed views are zero-copy and match exactly the tensors they borrow."""
    a = torch.arange(4, dtype=torch.float32, device="mps")
    b = torch.ones(2, device="mps")
    view_a, view_b = borrow_torch_tensors(a, b)
    assert view_a.matches(a) and view_b.matches(b)
    assert not view_a.matches(a.clone())
    assert view_a.array.tolist() == [0, 1, 2, 3]


class TensorMetadata:
    """What `MlxTensorView.matches` reads of a tensor, with one field set apart at will."""

    def __init__(self, like: torch.Tensor, **fields: Any) -> None:
        self.device = fields.get("device", like.device)
        self.dtype = fields.get("dtype", like.dtype)
        self.shape = fields.get("shape", like.shape)
        self._stride = fields.get("stride", like.stride())
        self._data_ptr = fields.get("data_ptr", like.data_ptr())

    def stride(self) -> tuple[int, ...]:
        return self._stride

    def data_ptr(self) -> int:
        return self._data_ptr


def cpu_view_of(tensor: torch.Tensor) -> MlxTensorView:
    """A view holding a CPU tensor: `matches` is metadata only, so no MPS is needed to test it."""
    view = MlxTensorView.__new__(MlxTensorView)
    view.torch_tensor = tensor
    return view


def test_matches_compares_every_field_on_cpu() -> None:
    """`matches` accepts the same storage and layout (another tensor object too) and rejects a
    tensor that differs from the borrowed one in any single field: data pointer, device, dtype,
    shape or stride."""
    base = torch.arange(8, dtype=torch.float32)
    view = cpu_view_of(base[1:5])
    assert view.matches(base[1:5])
    assert view.matches(TensorMetadata(base[1:5]))  # type: ignore[arg-type]
    # Real tensors that share all but one field with the borrowed one.
    assert not view.matches(base[2:6])  # same layout, storage 4 bytes further on
    assert not view.matches(base.view(torch.int32)[1:5])
    assert not view.matches(base[1:4])
    assert not view.matches(base.as_strided((4,), (2,), 1))
    different = {
        "data_ptr": base[1:5].data_ptr() + 4,
        "device": torch.device("meta"),
        "dtype": torch.int32,
        "shape": torch.Size([2, 2]),
        "stride": (2,),
    }
    for field, value in different.items():
        assert not view.matches(TensorMetadata(base[1:5], **{field: value})), field  # type: ignore[arg-type]


@pytest.mark.mps
def test_mlx_call_on_mps_fences_once(fences: Recorder) -> None:
    """MPS inputs and views cost one fence in total and the result lands on MPS."""
    weight = MlxTensorView(torch.full((3,), 2.0, device="mps"), synchronize=False)
    result = mlx_call(lambda w, x: w * x, weight, torch.ones(3, device="mps"))
    assert result.device.type == "mps"
    assert result.cpu().tolist() == [2, 2, 2]
    assert len(fences.calls) == 1
