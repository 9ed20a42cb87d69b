"""The memory pool's edges that mutants of it once crossed unnoticed (bench/mutation.py).

Each test pins one behaviour of `runtime.transport.memory_pool` on the CPU: the CUDA driver and
stream calls are faked where the code only passes their results on.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from helpers import exact

from runtime.transport import memory_pool
from runtime.transport.host import HostTransport
from runtime.transport.memory_pool import (
    PoolLease,
    StreamOrderedMmFeaturePool,
    StreamOrderedPoolConsumerMixin,
    control_region_bytes,
    validate_pool_arguments,
)


def build_pool(memory_size: int = 8192, **kwargs: Any) -> StreamOrderedMmFeaturePool:
    return StreamOrderedMmFeaturePool(
        transport=HostTransport(torch.zeros(memory_size, dtype=torch.uint8)),
        memory_size=memory_size,
        consumer_count=1,
        recycle_interval=3600.0,  # the recycler thread stays idle: passes are run by the test
        max_inflight_slices=8,
        **kwargs,
    )


@pytest.fixture
def pool() -> Iterator[StreamOrderedMmFeaturePool]:
    pool = build_pool()
    yield pool
    pool.shutdown()


def copy(pool: StreamOrderedMmFeaturePool, nbytes: int) -> PoolLease:
    lease, _ = pool.copy_tensor(torch.zeros(nbytes, dtype=torch.uint8))
    assert lease is not None
    return lease


# -- the CUDA driver's error names, with a fake driver ---------------------------------------


class FakeDriver:
    """`cuGetErrorName` that answers `status` and stores `name` through its out-pointer."""

    def __init__(self, status: int, name: bytes | None) -> None:
        self.status, self.name = status, name
        self.calls: list[tuple[int, type]] = []
        driver = self

        def get_name(result: int, out: Any) -> int:
            target = out._obj  # what ctypes.byref points at
            driver.calls.append((result, type(target)))
            if name is not None:
                target.value = name
            return status

        self.cuGetErrorName = get_name


@pytest.mark.parametrize(
    ("status", "name", "expected"),
    [
        (0, b"CUDA_ERROR_INVALID_VALUE", "CUresult.CUDA_ERROR_INVALID_VALUE"),
        (0, b"CUDA_ERROR_\xff", "CUresult.CUDA_ERROR_\ufffd"),  # undecodable bytes replaced
        (0, None, "CUresult(5)"),  # the driver left the name unset
        (1, b"CUDA_ERROR_INVALID_VALUE", "CUresult(5)"),  # the driver refused to name it
    ],
    ids=["named", "undecodable", "unset", "refused"],  # plain ids: mutmut runs tests by id
)
def test_result_names_come_from_the_driver(
    monkeypatch: pytest.MonkeyPatch, status: int, name: bytes | None, expected: str
) -> None:
    """`cuGetErrorName` is declared `(int, char**) -> int`, asked for the result through a
    `char*` out-pointer, and its name is used only when it succeeded and set one."""
    driver = FakeDriver(status, name)
    monkeypatch.setattr(memory_pool, "_cuda_driver", lambda: driver)
    assert memory_pool._cu_result_name(5) == expected
    get_name: Any = driver.cuGetErrorName
    assert driver.calls == [(5, ctypes.c_char_p)]
    assert get_name.argtypes == (ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))
    assert get_name.restype is ctypes.c_int


def test_stream_wait_uses_the_devices_current_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait is queued on the current stream of the pool's device, not the default one."""
    devices: list[object] = []

    class FakeStream:
        cuda_stream = 0xC0FFEE

    def current_stream(device: object = None) -> FakeStream:
        devices.append(device)
        return FakeStream()

    monkeypatch.setattr(memory_pool, "_stream_wait_value32_entry", lambda: lambda *args: 0)
    monkeypatch.setattr(torch.cuda, "current_stream", current_stream)
    memory_pool.stream_wait_value32(3, 0x1000, 1, "CUDA IPC")
    assert devices == [3]


# -- arguments and layout -----------------------------------------------------------------------


def test_the_smallest_arguments_are_accepted() -> None:
    """One byte, one consumer, one slot and any positive interval are valid arguments."""
    validate_pool_arguments(
        memory_size=1, consumer_count=1, max_inflight_slices=1, recycle_interval=1e-9
    )


def test_control_region_holds_one_ready_word_per_slot_and_one_ack_per_consumer() -> None:
    """64 slots of READY + 1 ACK are 512 bytes: no room for another word per slot."""
    assert control_region_bytes(64, 1) == 512
    assert control_region_bytes(64, 2) == 768


def test_buffer_arguments_reach_the_cuda_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given the CUDA buffer instead of a transport, the pool builds the CUDA stream transport
    with that buffer, its size, device, name and base address."""
    built: list[dict[str, object]] = []

    class RecordingTransport(HostTransport):
        def __init__(self, byte_tensor: torch.Tensor, **kwargs: Any) -> None:
            built.append({"byte_tensor": byte_tensor, **kwargs})
            super().__init__(byte_tensor, transport_name=kwargs["transport_name"])

    monkeypatch.setattr(memory_pool, "CudaStreamTransport", RecordingTransport)
    buffer = torch.zeros(4096, dtype=torch.uint8)
    with StreamOrderedMmFeaturePool(
        memory_size=4096,
        consumer_count=1,
        recycle_interval=3600.0,
        byte_tensor=buffer,
        base_address=0x7000_0000,
        device_id=2,
        transport_name="CUDA IPC",
        max_inflight_slices=8,
    ) as pool:
        assert pool.transport_name == "CUDA IPC"
    assert built == [
        {
            "byte_tensor": buffer,
            "memory_size": 4096,
            "device_id": 2,
            "transport_name": "CUDA IPC",
            "base_address": 0x7000_0000,
        }
    ]


# -- allocation ---------------------------------------------------------------------------------


def test_a_range_of_exactly_the_size_is_taken(pool: StreamOrderedMmFeaturePool) -> None:
    """The whole data region can be one lease: a free range as long as the request fits it."""
    lease = copy(pool, pool.usable_size)
    assert (lease.start, lease.end) == (pool.data_start, pool.memory_size)
    assert pool.available_ranges == []


def test_best_fit_between_two_ranges(pool: StreamOrderedMmFeaturePool) -> None:
    """With two free ranges, the smaller one that fits is taken even when it comes second."""
    big = copy(pool, 4096)
    copy(pool, 256)
    pool.release(big)
    assert pool.available_ranges == [(256, 4352), (4608, 8192)]
    assert copy(pool, 256).start == 4608


def test_an_equal_copy_of_a_lease_releases_it(pool: StreamOrderedMmFeaturePool) -> None:
    """A lease is recognised by its fields, not by identity (a proxy rebuilds it)."""
    lease = copy(pool, 64)
    pool.release(PoolLease(*lease))
    assert pool.live_leases() == []


# -- recycler logging and shutdown --------------------------------------------------------------


def test_a_reclaim_is_logged(pool: StreamOrderedMmFeaturePool, caplog: Any) -> None:
    """A reclaimed lease is logged with the pool's name, the slot, generation and timeout."""
    reclaiming = build_pool(lease_timeout=0.0)
    try:
        copy(reclaiming, 64)
        with caplog.at_level(logging.WARNING, logger=memory_pool.__name__):
            reclaiming.recycle()
    finally:
        reclaiming.shutdown()
    assert [record.getMessage() for record in caplog.records] == [
        "HOST pool reclaims lease (slot=0, generation=1): not acknowledged within 0.000 s"
    ]


def test_a_failed_recycler_pass_is_logged_with_its_exception(
    pool: StreamOrderedMmFeaturePool, caplog: Any
) -> None:
    """A recycler pass that raises is logged (message, pool name, traceback) and the loop goes
    on; here the pass also stops the loop, which then ends."""
    pool.shutdown()  # the pool's own recycler thread has ended: the loop runs here instead
    pool._recycler_stop_event.clear()

    def failing_pass() -> None:
        pool._recycler_stop_event.set()
        raise OSError("device lost")

    pool.recycle = failing_pass  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger=memory_pool.__name__):
        pool._recycle_loop()
    (record,) = caplog.records
    assert record.getMessage() == "HOST multimodal pool recycle failed"
    assert record.exc_info is not None and isinstance(record.exc_info[1], OSError)


def test_shutdown_from_the_recycler_thread_does_not_join_itself(
    pool: StreamOrderedMmFeaturePool,
) -> None:
    """Shutting down from inside the recycler thread (a callback of a pass) stops it without
    trying to join the running thread."""
    pool.shutdown()
    errors: list[BaseException] = []

    def recycler() -> None:
        try:
            pool.shutdown()
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=recycler)
    pool._recycler = thread
    thread.start()
    thread.join()
    assert errors == []


# -- consumers ----------------------------------------------------------------------------------


class Consumer(StreamOrderedPoolConsumerMixin):
    def __init__(self, total_consumer_count: int) -> None:
        self._init_stream_ordered_consumer(
            ready_byte_offset=0,
            ack_byte_offset=4,
            generation=1,
            total_consumer_count=total_consumer_count,
            transport_name="HOST",
        )


def test_a_single_consumer_is_valid() -> None:
    """`total_consumer_count=1` is the smallest valid count."""
    assert Consumer(1).total_consumer_count == 1


def test_an_unresolved_rank_names_the_transport(pool: StreamOrderedMmFeaturePool) -> None:
    """One consumer of several without its rank is told so with the transport's name."""
    with pytest.raises(
        RuntimeError,
        match=exact("Cannot resolve the HOST consumer rank before parallel state initialization"),
    ):
        Consumer(2)._acknowledge_on_stream(pool.transport, 1, None)


def test_a_view_moved_to_other_storage_is_not_reused(pool: StreamOrderedMmFeaturePool) -> None:
    """A caller that points its view at other memory (`set_`, same size) does not get that
    view back for the next lease of the range: the view handed out is the pool's bytes."""
    lease, view = pool.copy_tensor(torch.ones(16))
    assert lease is not None and view is not None
    pool.release(lease)
    view.set_(torch.zeros(64, dtype=torch.uint8))  # misuse of the view by the caller
    lease, fresh = pool.copy_tensor(torch.full((16,), 2.0))
    assert lease is not None and fresh is not None and fresh is not view
    assert fresh.data_ptr() == pool.transport.byte_tensor.data_ptr() + lease.start
    assert torch.equal(fresh.view(torch.float32), torch.full((16,), 2.0))
