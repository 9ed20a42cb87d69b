"""The CUDA IPC transport: input checks on the CPU, the protocol itself on a GPU.

The checks that must fail before any CUDA call run everywhere, on instances built without their
CUDA resources (`object.__new__` plus the attributes the checks read). Tests marked `gpu` run the
real pool, stream-ordered words and a consumer process on a CUDA device.
"""

from __future__ import annotations

import contextlib
import inspect
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

from runtime.transport import cuda_ipc, determine_tensor_transport_mode, memory_pool
from runtime.transport.cuda_ipc import (
    CUDA_IPC_TRANSPORT_NAME,
    CudaIpcTensorTransportProxy,
    CudaStreamTransport,
    MmItemMemoryPool,
    get_mm_feature_pool_size_per_worker,
)
from runtime.transport.host import HostTransport
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
        cwd=Path(__file__).resolve().parents[2],
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
    original = proxy(use_pool_handle_cache=False)
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


# -- upstream call forms (CPU: the consumer side runs over a host buffer) ---------------------


class StandIn:
    """What the `stand_in` fixture gives: the host buffer proxies map, and the devices asked."""

    def __init__(self) -> None:
        self.words = HostTransport(torch.zeros(4096, dtype=torch.uint8))
        self.devices: list[int] = []

    def published(self, **overrides: Any) -> CudaIpcTensorTransportProxy:
        """A proxy whose READY word is already set."""
        item = proxy(**overrides)
        self.words.write_word(item.ready_byte_offset, item.generation)
        return item

    def acks(self, item: CudaIpcTensorTransportProxy) -> list[int]:
        """The proxy's ACK words of ranks 0 and 1."""
        return [self.words.read_word(item.ack_byte_offset + 4 * rank) for rank in range(2)]


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> StandIn:
    """Proxies map a host buffer instead of the CUDA pool, and the current device is 0.

    The host transport has the consumer-side interface of the CUDA one (words, waits,
    copies), so only the proxy's own logic, the part that differs from upstream, is tested.
    """
    fake = StandIn()

    def fake_open(device_index: int, extra: dict[str, Any]) -> tuple[HostTransport, bool]:
        fake.devices.append(device_index)
        return fake.words, True

    monkeypatch.setattr(cuda_ipc, "_open_pool", fake_open)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    return fake


def test_release_without_reconstruction_takes_consumer_count_first(stand_in: StandIn) -> None:
    """Upstream's `release_without_reconstruction(2)` acknowledges for a group of two on the
    current device; 2 is never taken for a device."""
    item = stand_in.published()
    item.release_without_reconstruction(2)
    assert stand_in.devices == [0]
    assert stand_in.acks(item) == [1, 1]


def test_acknowledge_consumption_upstream_form(stand_in: StandIn) -> None:
    """`acknowledge_consumption(consumer_count, consumer_rank)` acknowledges one rank on the
    current device; a second call on the same proxy does nothing (not even a mapping)."""
    item = stand_in.published()
    item.acknowledge_consumption(1, 1)
    assert stand_in.devices == [0] and stand_in.acks(item) == [0, 1]
    item.acknowledge_consumption(1, 1)
    assert stand_in.devices == [0]


def test_device_is_an_optional_keyword(stand_in: StandIn) -> None:
    """The project's extension: `dev=` picks another device, by index, name or device."""
    for dev in (3, "cuda:3", torch.device("cuda", 3)):
        item = stand_in.published()
        item.release_without_reconstruction(1, 0, dev=dev)
        assert stand_in.acks(item) == [1, 0]
        stand_in.words.write_word(item.ack_byte_offset, 0)
    assert stand_in.devices == [3, 3, 3]


def test_consumer_signatures_match_upstream() -> None:
    """Positional parameters are upstream's; the project's additions are keyword-only."""

    def parameters(function: Callable[..., object]) -> list[tuple[str, object, object]]:
        return [
            (p.name, p.kind, p.default)
            for p in inspect.signature(function).parameters.values()
            if p.name != "self"
        ]

    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword = inspect.Parameter.KEYWORD_ONLY
    for method in (
        CudaIpcTensorTransportProxy.acknowledge_consumption,
        CudaIpcTensorTransportProxy.release_without_reconstruction,
    ):
        assert parameters(method) == [
            ("consumer_count", positional, 1),
            ("consumer_rank", positional, None),
            ("dev", keyword, None),
        ]
    assert [
        name for name, _, _ in parameters(CudaIpcTensorTransportProxy.reconstruct_on_target_device)
    ] == ["rebuild_device_idx", "consumer_count", "consumer_rank"]


def test_pool_takes_upstream_arguments() -> None:
    """`StreamOrderedMmFeaturePool` accepts upstream's keywords; on a host buffer the CUDA
    stream transport it builds refuses the buffer with upstream's message, after the size
    checks (upstream's order)."""
    arguments: dict[str, Any] = {
        "memory_size": 4096,
        "byte_tensor": torch.zeros(4096, dtype=torch.uint8),
        "base_address": 0,
        "device_id": 2,
        "consumer_count": 1,
        "recycle_interval": 0.05,
        "transport_name": "CUDA IPC",
        "max_inflight_slices": 8,
    }
    with pytest.raises(ValueError, match=exact(CUDA_BUFFER_MESSAGE.format(2))):
        StreamOrderedMmFeaturePool(**arguments)
    with pytest.raises(ValueError, match=exact("memory_size must be positive")):
        StreamOrderedMmFeaturePool(**{**arguments, "memory_size": 0})
    with pytest.raises(ValueError, match=exact("recycle_interval must be positive")):
        StreamOrderedMmFeaturePool(**{**arguments, "recycle_interval": 0})


POOL_FORMS = (
    "StreamOrderedMmFeaturePool takes either transport= or all of byte_tensor=, base_address=, "
    "device_id= and transport_name="
)


@pytest.mark.parametrize(
    "arguments",
    [
        {"transport_name": "HOST"},
        {"byte_tensor": torch.zeros(4096, dtype=torch.uint8)},
        {"transport": None, "byte_tensor": torch.zeros(4096, dtype=torch.uint8), "device_id": 0},
        {"transport": None},
    ],
    ids=["transport+name", "transport+buffer", "buffer-without-address", "nothing"],
)
def test_pool_refuses_mixed_or_partial_forms(arguments: dict[str, Any]) -> None:
    """Either a transport or all four buffer arguments, before any other check."""
    arguments = dict(arguments)
    if "transport" not in arguments:
        arguments["transport"] = HostTransport(torch.zeros(4096, dtype=torch.uint8))
    with pytest.raises(TypeError, match=exact(POOL_FORMS)):
        StreamOrderedMmFeaturePool(
            memory_size=0, consumer_count=1, recycle_interval=0.05, **arguments
        )


def test_wait_ready_waits_on_the_lease_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CUDA consumer waits for its own READY word: `cuStreamWaitValue32` on the current
    stream, at the pool's base address plus the lease's offset, for its generation, GEQ."""
    calls: list[tuple[int, int, int, int]] = []

    def entry(stream: int, address: int, value: int, flags: int) -> int:
        calls.append((stream, address, value, flags))
        return 0

    class FakeStream:
        cuda_stream = 0xC0FFEE

    monkeypatch.setattr(memory_pool, "_stream_wait_value32_entry", lambda: entry)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: FakeStream())
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    transport = object.__new__(CudaStreamTransport)
    transport.device_id, transport.base_address = 0, 0x7000_0000
    transport.transport_name = CUDA_IPC_TRANSPORT_NAME
    transport.wait_ready(48, 7)
    assert calls == [(0xC0FFEE, 0x7000_0030, 7, memory_pool.CU_STREAM_WAIT_VALUE_GEQ)]


def test_failed_wait_is_reported_with_its_label(monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver status other than CUDA_SUCCESS raises `{label}: {err}` (upstream's check_drv)."""

    class FakeStream:
        cuda_stream = 0

    monkeypatch.setattr(memory_pool, "_stream_wait_value32_entry", lambda: lambda *args: 1)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: FakeStream())
    with pytest.raises(
        RuntimeError,
        match=r"^cuStreamWaitValue32\(mm CUDA IPC\): CUresult(\(1\)|\.CUDA_ERROR_INVALID_VALUE)$",
    ):
        memory_pool.stream_wait_value32(0, 0x1002, 1, CUDA_IPC_TRANSPORT_NAME)
    memory_pool.check_drv(0, "never raised")


# -- on a GPU ---------------------------------------------------------------------------------

SPAWN = multiprocessing.get_context("spawn")
CHILD_TIMEOUT = 120.0


def consume_on_gpu(proxies: list[CudaIpcTensorTransportProxy], conn: Connection) -> None:
    """Consumer process: rebuild each tensor on cuda:0 and send its values back."""
    for index, item in enumerate(proxies):
        if index % 2:
            item.release_without_reconstruction(2)  # upstream's form: for both ranks
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


# Two producer streams, one of them delayed: a consumer must wait for its own lease. The
# delay is a spin kernel of about a second (`torch.cuda._sleep` counts GPU clock cycles), far
# longer than it takes to queue the consumer's reads, so an early read sees the sentinel.
DELAY_CYCLES = 2_000_000_000
SENTINEL = 0xAB


def fill_data_region(pool: MmItemMemoryPool) -> None:
    """Overwrite every data byte with the sentinel, so a read before a copy is visible."""
    pool.transport.byte_tensor[pool.pool.data_start :].fill_(SENTINEL)
    torch.cuda.synchronize()


def publish_on_two_streams(
    pool: MmItemMemoryPool, slow_source: torch.Tensor, fast_source: torch.Tensor
) -> tuple[CudaIpcTensorTransportProxy, CudaIpcTensorTransportProxy, torch.cuda.Event]:
    """Publish `slow_source` behind a delay on one stream, then `fast_source` on another.

    Returns both proxies and an event that completes when the delayed copy has been made.
    """
    slow, fast = torch.cuda.Stream(), torch.cuda.Stream()
    slow_done = torch.cuda.Event()
    with torch.cuda.stream(slow):
        torch.cuda._sleep(DELAY_CYCLES)
        slow_item = pool.wrap_tensor(slow_source)
        slow_done.record(slow)
    with torch.cuda.stream(fast):
        fast_item = pool.wrap_tensor(fast_source)
    assert slow_item is not None and fast_item is not None
    return slow_item, fast_item, slow_done


@pytest.mark.gpu
def test_gpu_consumer_waits_for_its_own_lease_on_two_producer_streams(
    gpu_pool: MmItemMemoryPool,
) -> None:
    """A consumer stream reading the delayed lease gets its bytes, never the sentinel, although
    another lease was published on another stream meanwhile (the consumer reads through the
    producer's own mapping here; the next test does it from another process)."""
    fill_data_region(gpu_pool)
    slow_source = torch.arange(4096, dtype=torch.float32, device="cuda:0")
    fast_source = torch.full((4096,), -1.0, device="cuda:0")
    torch.cuda.synchronize()
    slow_item, fast_item, slow_done = publish_on_two_streams(gpu_pool, slow_source, fast_source)
    consumer = torch.cuda.Stream()
    results = []
    with torch.cuda.stream(consumer):
        for item in (slow_item, fast_item):
            extra = item.proxy_state["ipc_extra"]
            results.append(
                item._copy_out_and_acknowledge(
                    gpu_pool.transport,
                    pool_byte_offset=extra["pool_byte_offset"],
                    nbytes=extra["nbytes"],
                    shape=extra["recons_shape"],
                    dtype=extra["recons_dtype"],
                    consumer_count=2,
                    consumer_rank=None,
                )
            )
    # The reads were queued while the delayed copy was still pending: the test can tell.
    assert not slow_done.query()
    consumer.synchronize()
    assert torch.equal(results[0], slow_source)
    assert torch.equal(results[1], fast_source)
    assert wait_for(lambda: gpu_pool.active_lease_count == 0)


def consume_two_streams(warmup: CudaIpcTensorTransportProxy, conn: Connection) -> None:
    """Consumer process: map the pool with a warm-up proxy, then rebuild what arrives."""
    warmup.reconstruct_on_target_device(0, 1, 1)
    torch.cuda.synchronize()
    conn.send("ready")
    slow_item, fast_item = conn.recv()
    tensors = [item.reconstruct_on_target_device(0, 1, 1) for item in (slow_item, fast_item)]
    torch.cuda.synchronize()
    conn.send_bytes(pickle.dumps([tensor.cpu() for tensor in tensors]))
    conn.close()


@pytest.mark.gpu
@pytest.mark.timeout(240)
def test_gpu_consumer_process_never_reads_early(gpu_pool: MmItemMemoryPool) -> None:
    """The same race through CUDA IPC: the consumer process gets both proxies while the delayed
    copy is pending, and still rebuilds the delayed tensor's values."""
    warmup = gpu_pool.wrap_tensor(torch.zeros(16, device="cuda:0"))
    assert warmup is not None
    parent_conn, child_conn = SPAWN.Pipe()
    child = SPAWN.Process(target=consume_two_streams, args=(warmup, child_conn), daemon=True)
    child.start()
    try:
        child_conn.close()
        assert parent_conn.poll(CHILD_TIMEOUT) and parent_conn.recv() == "ready"
        fill_data_region(gpu_pool)
        slow_source = torch.arange(1 << 16, dtype=torch.int32, device="cuda:0")
        fast_source = torch.full((1 << 16,), -7, dtype=torch.int32, device="cuda:0")
        torch.cuda.synchronize()
        slow_item, fast_item, slow_done = publish_on_two_streams(gpu_pool, slow_source, fast_source)
        parent_conn.send((slow_item, fast_item))
        assert parent_conn.poll(CHILD_TIMEOUT)
        received = pickle.loads(parent_conn.recv_bytes())
        assert slow_done.query()
        assert torch.equal(received[0], slow_source.cpu())
        assert torch.equal(received[1], fast_source.cpu())
        child.join(CHILD_TIMEOUT)
        assert child.exitcode == 0
        for item in (warmup, slow_item, fast_item):
            item._acknowledge_on_stream(gpu_pool.transport, 1, 0)
        assert wait_for(lambda: gpu_pool.active_lease_count == 0)
    finally:
        if child.is_alive():
            child.kill()
        child.join(CHILD_TIMEOUT)
        parent_conn.close()


@pytest.mark.gpu
def test_gpu_pool_built_from_upstream_arguments() -> None:
    """Upstream's call form on a real CUDA buffer: the pool copies, publishes and recycles."""
    buffer = torch.empty(1 << 20, dtype=torch.uint8, device="cuda:0")
    with StreamOrderedMmFeaturePool(
        memory_size=1 << 20,
        byte_tensor=buffer,
        base_address=buffer.data_ptr(),
        device_id=0,
        consumer_count=1,
        recycle_interval=0.01,
        transport_name="CUDA IPC",
        max_inflight_slices=8,
    ) as pool:
        source = torch.arange(10, dtype=torch.float64, device="cuda:0")
        lease, view = pool.copy_tensor(source)
        assert lease is not None and view is not None
        torch.cuda.synchronize()
        assert torch.equal(view.view(torch.float64), source)
        assert buffer[:8].view(torch.int32).tolist() == [1, 0]
        pool.cancel_lease(
            ready_byte_offset=lease.ready_byte_offset,
            ack_byte_offset=lease.ack_byte_offset,
            generation=lease.generation,
        )
        assert wait_for(lambda: pool.active_lease_count == 0)


@pytest.mark.gpu
def test_gpu_driver_names_its_errors() -> None:
    """Through ctypes the driver's own names reach the message (`CUresult.<name>`)."""
    assert memory_pool._cu_result_name(1) == "CUresult.CUDA_ERROR_INVALID_VALUE"
    with pytest.raises(
        RuntimeError,
        match=exact("cuStreamWaitValue32(mm CUDA IPC): CUresult.CUDA_ERROR_INVALID_VALUE"),
    ):
        memory_pool.check_drv(1, "cuStreamWaitValue32(mm CUDA IPC)")


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
        'Invalid value for SGLANG_MM_FEATURE_CACHE_MB: "0.5" is not a valid integer value, '
        'using default "1024"' in done.stderr
    )
    assert (
        'Invalid value for SGLANG_MM_ITEM_MEM_POOL_RECYCLE_INTERVAL_SEC: "fast" is not a valid '
        'float value, using default "0.05"' in done.stderr
    )
