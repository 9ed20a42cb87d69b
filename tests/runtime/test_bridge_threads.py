"""The tensor bridge from eight threads at once, on CPU tensors.

Every thread mixes all four entry points (`torch_to_mlx`, `mlx_to_torch`, `mlx_call`,
`mlx_call_multi`) on data no other thread has, including operations that re-enter the bridge and
calls that fail, and checks every result exactly. The threads are joined with a timeout, so a
deadlock fails the test instead of hanging it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import mlx.core as mx
import pytest
import torch

from runtime import tensor_bridge
from runtime.errors import Complex128Unsupported
from runtime.tensor_bridge import mlx_call, mlx_call_multi, mlx_to_torch, torch_to_mlx

THREADS = 8
ROUNDS = 25
JOIN_TIMEOUT = 60.0
DTYPES = [torch.float32, torch.int32, torch.int64, torch.float64, torch.bfloat16]


def _data(thread: int, round_: int, dtype: torch.dtype) -> torch.Tensor:
    """A tensor whose values identify its thread and round (exact in every dtype used)."""
    base = torch.arange(12, dtype=torch.int64).reshape(3, 4)
    return (base + thread * 16 + round_ % 8).to(dtype)


def _run_threads(worker: Callable[[int], None]) -> list[BaseException]:
    """Run `worker(i)` on THREADS threads released together; return what they raised."""
    start = threading.Barrier(THREADS)
    failures: list[BaseException] = []

    def body(index: int) -> None:
        try:
            start.wait(timeout=JOIN_TIMEOUT)
            worker(index)
        except BaseException as exc:  # reported to the test thread, which fails on it
            failures.append(exc)

    threads = [
        threading.Thread(target=body, args=(i,), name=f"bridge-{i}", daemon=True)
        for i in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + JOIN_TIMEOUT
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    stuck = [thread.name for thread in threads if thread.is_alive()]
    assert not stuck, f"deadlock: {stuck} still running after {JOIN_TIMEOUT} s"
    return failures


def test_all_entry_points_from_eight_threads() -> None:
    """Round trips, calls and multi-output calls from 8 threads all return exactly right values."""

    def worker(index: int) -> None:
        for round_ in range(ROUNDS):
            dtype = DTYPES[(index + round_) % len(DTYPES)]
            tensor = _data(index, round_, dtype)
            array = torch_to_mlx(tensor)
            assert array.shape == (3, 4)
            back = mlx_to_torch(array, device="cpu")
            assert back.dtype == dtype and torch.equal(back, tensor)
            other = _data(index, round_ + 1, dtype)
            total = mlx_call(lambda a, b: a + b, tensor, other, device="cpu")
            assert torch.equal(total, tensor + other)
            low, high, flipped = mlx_call_multi(
                lambda a, b: (mx.minimum(a, b), mx.maximum(a, b), a[::-1]),
                tensor,
                other,
                device="cpu",
            )
            assert torch.equal(low, torch.minimum(tensor, other))
            assert torch.equal(high, torch.maximum(tensor, other))
            assert torch.equal(flipped, tensor.flip(0))

    assert _run_threads(worker) == []
    # Every call released the lock on the way out.
    assert tensor_bridge._BRIDGE_LOCK.acquire(blocking=False)
    tensor_bridge._BRIDGE_LOCK.release()


def test_reentrant_operations_under_contention() -> None:
    """Operations that call back into the bridge, from 8 threads, neither deadlock nor mix data."""

    def worker(index: int) -> None:
        for round_ in range(ROUNDS):
            tensor = _data(index, round_, torch.float32)

            def operation(a: mx.array, tensor: torch.Tensor = tensor) -> mx.array:
                # Inside the bridge's lock: a second, nested entry from the same thread.
                echoed = torch_to_mlx(mlx_to_torch(a * 2, device="cpu"))
                return echoed + torch_to_mlx(mlx_call(lambda b: b + 1, tensor, device="cpu"))

            result = mlx_call(operation, tensor, device="cpu")
            assert torch.equal(result, tensor * 3 + 1)

    assert _run_threads(worker) == []


def _fails(array: mx.array) -> mx.array:
    raise ZeroDivisionError("the operation fails inside the bridge")


def test_failures_in_some_threads_leave_the_others_working() -> None:
    """A call that raises inside the lock releases it: the other threads keep going."""
    refused = [0] * THREADS

    def worker(index: int) -> None:
        for round_ in range(ROUNDS):
            if (index + round_) % 3 == 0:
                with pytest.raises(Complex128Unsupported):
                    torch_to_mlx(torch.zeros(2, dtype=torch.complex128))
                refused[index] += 1
                with pytest.raises(ZeroDivisionError):
                    mlx_call(_fails, torch.ones(1), device="cpu")
                continue
            tensor = _data(index, round_, torch.int32)
            assert torch.equal(mlx_call(lambda a: a * a, tensor, device="cpu"), tensor * tensor)

    assert _run_threads(worker) == []
    assert sum(refused) == sum(1 for i in range(THREADS) for r in range(ROUNDS) if (i + r) % 3 == 0)
    assert tensor_bridge._BRIDGE_LOCK.acquire(blocking=False)
    tensor_bridge._BRIDGE_LOCK.release()


def test_one_thread_at_a_time_inside_the_bridge() -> None:
    """While one thread's operation runs, the 7 others wait outside: never two inside at once."""
    inside = 0
    most = 0
    count = threading.Lock()

    def operation(a: mx.array) -> mx.array:
        nonlocal inside, most
        with count:
            inside += 1
            most = max(most, inside)
        time.sleep(0.0005)  # widen the window an unserialized call would overlap in
        with count:
            inside -= 1
        return a - 1

    def worker(index: int) -> None:
        for round_ in range(ROUNDS // 5):
            tensor = _data(index, round_, torch.int64)
            assert torch.equal(mlx_call(operation, tensor, device="cpu"), tensor - 1)

    assert _run_threads(worker) == []
    assert most == 1
