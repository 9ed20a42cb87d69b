"""The CUDA IPC transport: input checks on the CPU, the protocol itself on a GPU.

The checks that must fail before any CUDA call run everywhere, on instances built without their
CUDA resources (`object.__new__` plus the attributes the checks read). Tests marked `gpu` run the
real pool, stream-ordered words and a consumer process on a CUDA device.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest
import torch
from helpers import exact, wait_for

from runtime.transport import determine_tensor_transport_mode
from runtime.transport.cuda_ipc import (
    CUDA_IPC_TRANSPORT_NAME,
    CudaIpcTensorTransportProxy,
    CudaStreamTransport,
    MmItemMemoryPool,
    get_mm_feature_pool_size_per_worker,
)
from runtime.transport.memory_pool import StreamOrderedMmFeaturePool

FAKE_HANDLE: tuple[Any, ...] = (0, b"handle", 1 << 20, 0, b"ref", 0, b"event", False)
CUDA_BUFFER_MESSAGE = "byte_tensor must be a sufficiently large contiguous uint8 tensor on cuda:{}"


def pool_without_cuda() -> MmItemMemoryPool:
    """An MmItemMemoryPool whose checks work but which owns no CUDA resources."""
    pool = object.__new__(StreamOrderedMmFeaturePool)
    pool.transport_name = CUDA_IPC_TRANSPORT_NAME
    pool._transport = object.__new__(CudaStreamTransport)
    wrapper = object.__new__(MmItemMemoryPool)
    wrapper.pool = pool
    wrapper.pool_ipc_handle = FAKE_HANDLE
    return wrapper


def proxy(handle: tuple[Any, ...] = FAKE_HANDLE, **overrides: Any) -> CudaIpcTensorTransportProxy:
    arguments: dict[str, Any] = {
        "data": torch.zeros(24, dtype=torch.uint8),
        "info_data": torch.zeros(2, 3),
        "pool_ipc_handle": handle,
        "pool_byte_offset": 512,
        "ready_byte_offset": 0,
        "ack_byte_offset": 4,
        "generation": 1,
        "total_consumer_count": 2,
    }
    arguments.update(overrides)
    return CudaIpcTensorTransportProxy(**arguments)


# -- before any CUDA call (CPU) ----------------------------------------------------------------


def test_module_imports_without_initialising_cuda() -> None:
    """Importing the transport starts no CUDA: in a fresh interpreter whose CUDA entry points
    fail loudly, the import succeeds and CUDA is still uninitialised afterwards."""
    probe = textwrap.dedent(
        """
        import torch

        def refuse(*args, **kwargs):
            raise AssertionError("CUDA was initialised at import")

        torch.cuda._lazy_init = refuse
        torch.cuda.init = refuse
        torch.cuda.current_device = refuse
        torch.cuda.set_device = refuse
        import runtime.transport.cuda_ipc
        print(torch.cuda.is_initialized())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_copy_tensor_requires_a_cuda_tensor() -> None:
    """A host tensor is rejected by name before anything is allocated or copied (seed 002)."""
    pool = pool_without_cuda()
    with pytest.raises(ValueError, match=exact("CUDA IPC requires a CUDA tensor")):
        pool.pool.copy_tensor(torch.ones(4))
    with pytest.raises(ValueError, match=exact("CUDA IPC requires a CUDA tensor")):
        pool.wrap_tensor(torch.ones(4))


def test_byte_tensor_must_be_a_cuda_buffer() -> None:
    """A host buffer is rejected by the transport before any CUDA call."""
    with pytest.raises(ValueError, match=exact(CUDA_BUFFER_MESSAGE.format(3))):
        CudaStreamTransport(torch.zeros(4096, dtype=torch.uint8), memory_size=4096, device_id=3)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"memory_size": 0}, "memory_size must be positive"),
        ({"consumer_count": 0}, "consumer_count must be positive"),
        ({"max_inflight_slices": 0}, "max_inflight_slices must be positive"),
        ({"recycle_interval": -1.0}, "recycle_interval must be positive"),
    ],
)
def test_pool_arguments_fail_before_allocating(overrides: dict[str, Any], message: str) -> None:
    """Bad sizes fail with the pool's messages before the GPU buffer is allocated."""
    arguments: dict[str, Any] = {
        "memory_size": 1 << 20,
        "recycle_interval": 0.05,
        "base_gpu_id": 0,
        "consumer_count": 1,
    }
    arguments.update(overrides)
    with pytest.raises(ValueError, match=exact(message)):
        MmItemMemoryPool(**arguments)


def test_pool_size_per_worker() -> None:
    """The total is split evenly (floor); both numbers must be positive."""
    assert get_mm_feature_pool_size_per_worker(10, 3) == 3
    with pytest.raises(ValueError, match=exact("total_pool_size must be positive")):
        get_mm_feature_pool_size_per_worker(0, 3)
    with pytest.raises(ValueError, match=exact("tokenizer_worker_num must be positive")):
        get_mm_feature_pool_size_per_worker(10, 0)


@pytest.mark.parametrize(
    ("overrides", "reported"),
    [({"data": [1, 2]}, "<class 'list'>"), ({"info_data": None}, "<class 'torch.Tensor'>")],
)
def test_proxy_requires_tensors(overrides: dict[str, Any], reported: str) -> None:
    """Either argument not a tensor raises TypeError, which always names `data`'s type."""
    with pytest.raises(
        TypeError, match=exact(f"Input 'data' must be a torch.Tensor, but got {reported}")
    ):
        proxy(**overrides)


def test_proxy_requires_consumers() -> None:
    """A proxy for no consumers is rejected."""
    with pytest.raises(ValueError, match=exact("total_consumer_count must be positive")):
        proxy(total_consumer_count=0)


def test_proxy_state_and_pickling() -> None:
    """The proxy records the slice and the original tensor's layout and pickles without them."""
    original = proxy(use_pool_handle_cache=False, publish_event_handle=b"ev")
    extra = original.proxy_state["ipc_extra"]
    assert extra == {
        "pool_handle": FAKE_HANDLE,
        "pool_byte_offset": 512,
        "shape": (24,),
        "dtype": torch.uint8,
        "stride": (1,),
        "storage_offset": 0,
        "nbytes": 24,
        "recons_shape": (2, 3),
        "recons_dtype": torch.float32,
        "use_pool_handle_cache": False,
        "publish_event_handle": b"ev",
    }
    original._consumer_acknowledged = True
    copy = pickle.loads(pickle.dumps(original))
    assert copy.proxy_state == original.proxy_state
    assert (copy.generation, copy.total_consumer_count) == (1, 2)
    assert copy._consumer_acknowledged is False and copy._reconstructed == {}


def test_cancel_proxy_of_another_pool() -> None:
    """A proxy whose pool handle differs from this pool's is refused."""
    pool = pool_without_cuda()
    with pytest.raises(RuntimeError, match=exact("CUDA IPC proxy does not belong to this pool")):
        pool.cancel_proxy(proxy(handle=(*FAKE_HANDLE[:1], b"other", *FAKE_HANDLE[2:])))


def test_determine_tensor_transport_mode() -> None:
    """CUDA IPC unless the tokenizer worker is on the CPU or there are several nodes."""
    assert determine_tensor_transport_mode() == "cuda_ipc"
    assert determine_tensor_transport_mode("cuda") == "cuda_ipc"
    assert determine_tensor_transport_mode("cpu") == "default"
    assert determine_tensor_transport_mode("auto", nnodes=2) == "default"


# -- on a GPU ---------------------------------------------------------------------------------

SPAWN = multiprocessing.get_context("spawn")
CHILD_TIMEOUT = 120.0


def consume_on_gpu(proxies: list[CudaIpcTensorTransportProxy], conn: Connection) -> None:
    """Consumer process: rebuild each tensor on cuda:0 and send its values back."""
    for index, item in enumerate(proxies):
        if index % 2:
            item.release_without_reconstruction(0, 2)
            conn.send_bytes(pickle.dumps(None))
        else:
            tensor = item.reconstruct_on_target_device("cuda:0", 1, 1)
            torch.cuda.synchronize()
            # Plain pickle sends the values; the multiprocessing pickler would send a file
            # descriptor that dies with this process.
            conn.send_bytes(pickle.dumps(tensor.cpu()))
    conn.close()


@pytest.fixture
def gpu_pool() -> Iterator[MmItemMemoryPool]:
    pool = MmItemMemoryPool(16 << 20, 0.01, 0, 2, 64)
    yield pool
    pool.shutdown()


@pytest.mark.gpu
def test_gpu_copy_publish_and_cancel(gpu_pool: MmItemMemoryPool) -> None:
    """READY is written after the copy in stream order; cancelled leases are recycled."""
    source = torch.arange(1000, dtype=torch.float32, device="cuda:0")
    item = gpu_pool.wrap_tensor(source)
    assert item is not None
    torch.cuda.synchronize()
    extra = item.proxy_state["ipc_extra"]
    buffer = gpu_pool.transport.byte_tensor
    start = extra["pool_byte_offset"]
    copied = buffer[start : start + extra["nbytes"]].view(torch.float32)
    assert torch.equal(copied, source)
    words = buffer[:16].view(torch.int32).tolist()
    assert words[0] == item.generation and words[1:3] == [0, 0]
    time.sleep(0.05)
    assert gpu_pool.active_lease_count == 1
    gpu_pool.cancel_proxy(item)
    assert wait_for(lambda: gpu_pool.active_lease_count == 0)
    with pytest.raises(ValueError, match=exact("CUDA IPC requires a CUDA tensor")):
        gpu_pool.wrap_tensor(source.cpu())


@pytest.mark.gpu
@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.zeros(4096, dtype=torch.int8, device="cuda:0"),
        lambda: torch.zeros(8192, dtype=torch.uint8, device="cuda:0")[::2],
        lambda: torch.zeros(1024, dtype=torch.uint8, device="cuda:0"),
    ],
    ids=["dtype", "non-contiguous", "too-small"],
)
def test_gpu_byte_tensor_checks(make: Callable[[], torch.Tensor]) -> None:
    """A CUDA buffer of the wrong dtype, layout or size is rejected."""
    with pytest.raises(ValueError, match=exact(CUDA_BUFFER_MESSAGE.format(0))):
        CudaStreamTransport(make(), memory_size=4096, device_id=0)


@pytest.mark.gpu
def test_gpu_wrong_device_index() -> None:
    """A buffer on another device index than `device_id` is rejected."""
    with pytest.raises(ValueError, match=exact(CUDA_BUFFER_MESSAGE.format(1))):
        CudaStreamTransport(
            torch.zeros(4096, dtype=torch.uint8, device="cuda:0"), memory_size=4096, device_id=1
        )


@pytest.mark.gpu
def test_gpu_full_pool_returns_none(gpu_pool: MmItemMemoryPool) -> None:
    """A tensor larger than the pool is back-pressure, not an error."""
    assert gpu_pool.wrap_tensor(torch.empty(32 << 20, dtype=torch.uint8, device="cuda:0")) is None


@pytest.mark.gpu
@pytest.mark.timeout(240)
def test_gpu_lifecycle_with_a_consumer_process(gpu_pool: MmItemMemoryPool) -> None:
    """Rank 1 in another process rebuilds or releases each tensor; rank 0 here; all recycle."""
    tensors = [
        torch.randn(3, 5, device="cuda:0"),
        torch.arange(7, dtype=torch.int64, device="cuda:0"),
        torch.tensor(2.5, dtype=torch.bfloat16, device="cuda:0"),
    ]
    proxies = [gpu_pool.wrap_tensor(tensor) for tensor in tensors]
    assert all(item is not None for item in proxies)
    sent = [pickle.loads(pickle.dumps(item)) for item in proxies]
    parent_conn, child_conn = SPAWN.Pipe()
    child = SPAWN.Process(target=consume_on_gpu, args=(sent, child_conn), daemon=True)
    child.start()
    try:
        child_conn.close()
        for index, tensor in enumerate(tensors):
            assert parent_conn.poll(CHILD_TIMEOUT)
            received = pickle.loads(parent_conn.recv_bytes())
            if index % 2 == 0:
                assert torch.equal(received, tensor.cpu())
        child.join(CHILD_TIMEOUT)
        assert child.exitcode == 0
        # Tensor 1 was released for the whole group; the others still wait for rank 0.
        assert wait_for(lambda: gpu_pool.active_lease_count == 2)
        for index in (0, 2):
            item = proxies[index]
            assert item is not None
            words = gpu_pool.transport
            item._acknowledge_on_stream(words, 1, 0)
        assert wait_for(lambda: gpu_pool.active_lease_count == 0)
        assert gpu_pool.pool.available_ranges == [
            (gpu_pool.pool.data_start, gpu_pool.pool.memory_size)
        ]
    finally:
        if child.is_alive():
            child.kill()
        child.join(CHILD_TIMEOUT)
        parent_conn.close()


def test_unparsable_settings_warn_and_fall_back() -> None:
    """A typo in a numeric setting warns and keeps the default instead of breaking the import."""
    import subprocess
    import sys

    code = (
        "import warnings; warnings.simplefilter('always')\n"
        "import runtime.transport.cuda_ipc as t\n"
        "print(t.MM_FEATURE_CACHE_SIZE, t.MM_ITEM_MEMORY_POOL_RECYCLE_INTERVAL)\n"
    )
    env = {
        **os.environ,
        "SGLANG_MM_FEATURE_CACHE_MB": "0.5",
        "SGLANG_MM_ITEM_MEM_POOL_RECYCLE_INTERVAL_SEC": "fast",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(1024 * 1024 * 1024), "0.05"]
    assert (
        "Invalid value for SGLANG_MM_FEATURE_CACHE_MB: '0.5' is not int; using 1024" in done.stderr
    )
    assert (
        "Invalid value for SGLANG_MM_ITEM_MEM_POOL_RECYCLE_INTERVAL_SEC: 'fast' is not float"
        in done.stderr
    )
