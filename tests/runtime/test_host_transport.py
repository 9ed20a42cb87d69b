"""The host transport: the whole lease lifecycle in shared CPU memory, across real processes.

Consumer processes are started with the `spawn` method (each imports torch, about a second);
every test kills and joins its children and shuts its pool down, whatever happens.
"""

from __future__ import annotations

import multiprocessing
import pickle
import threading
import time
import types
from collections.abc import Iterator
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import pytest
import torch
from helpers import exact, wait_for

from runtime.transport.host import (
    HostMmItemMemoryPool,
    HostPoolHandle,
)

SPAWN = multiprocessing.get_context("spawn")
CHILD_TIMEOUT = 60.0


@pytest.fixture
def pools() -> Iterator[list[HostMmItemMemoryPool]]:
    created: list[HostMmItemMemoryPool] = []
    yield created
    for pool in created:
        pool.shutdown()


@pytest.fixture
def children() -> Iterator[list[BaseProcess]]:
    started: list[BaseProcess] = []
    yield started
    for process in started:
        if process.is_alive():
            process.kill()
        process.join(CHILD_TIMEOUT)
        process.close()


def make_pool(
    pools: list[HostMmItemMemoryPool], consumer_count: int = 1, **kwargs: float
) -> HostMmItemMemoryPool:
    pool = HostMmItemMemoryPool(1 << 20, 0.01, consumer_count, 16, **kwargs)
    pools.append(pool)
    return pool


# -- child processes (module level, so that spawn can import them) ----------------------------


def consume_as_rank(handle: HostPoolHandle, rank: int, conn: Connection) -> None:
    """Consumer process: read every proxy received as `rank`, send back the values, until None."""
    transport = handle.attach()
    conn.send("attached")
    while (proxy := conn.recv()) is not None:
        tensor = proxy.reconstruct(transport, 1, rank)
        conn.send((tensor.dtype, tensor.shape, tensor.tolist()))
    conn.close()


def read_and_hang(handle: HostPoolHandle, conn: Connection) -> None:
    """Consumer process that reads the tensor it is sent but dies before acknowledging it."""
    transport = handle.attach()
    conn.send("attached")
    proxy = conn.recv()
    proxy._wait_until_ready(transport)
    conn.send(int(transport.byte_tensor[proxy.pool_byte_offset]))
    time.sleep(CHILD_TIMEOUT)


# -- in one process --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tensor",
    [
        torch.arange(12, dtype=torch.float32).reshape(3, 4),
        torch.tensor(3.5, dtype=torch.bfloat16),
        torch.tensor([True, False, True]),
        torch.arange(6, dtype=torch.int64).reshape(2, 3).t(),
        torch.randn(2, 3, dtype=torch.complex64),
    ],
    ids=["f32", "bf16-scalar", "bool", "i64-transposed", "c64"],
)
def test_round_trip(pools: list[HostMmItemMemoryPool], tensor: torch.Tensor) -> None:
    """A consumer rebuilds the same values, shape and dtype, and its ACK frees the lease."""
    pool = make_pool(pools)
    proxy = pool.wrap_tensor(tensor)
    assert proxy is not None
    result = proxy.reconstruct(pool.handle.attach())
    assert result.dtype == tensor.dtype and torch.equal(result, tensor)
    assert wait_for(lambda: pool.active_lease_count == 0)


def test_each_rank_must_acknowledge(pools: list[HostMmItemMemoryPool]) -> None:
    """With two consumers a lease lives until both ranks, or the whole group, acknowledged."""
    pool = make_pool(pools, consumer_count=2)
    proxy = pool.wrap_tensor(torch.ones(4))
    assert proxy is not None
    transport = pool.handle.attach()
    # Each consumer receives its own copy of the proxy.
    rank0, rank1 = (pickle.loads(pickle.dumps(proxy)) for _ in range(2))
    rank0.acknowledge_consumption(transport, 1, 0)
    time.sleep(0.05)
    assert pool.active_lease_count == 1
    rank1.acknowledge_consumption(transport, 1, 1)
    assert wait_for(lambda: pool.active_lease_count == 0)
    group = pool.wrap_tensor(torch.ones(4))
    assert group is not None
    assert torch.equal(group.reconstruct(transport, 2), torch.ones(4))
    assert wait_for(lambda: pool.active_lease_count == 0)


def test_wait_blocks_until_published(pools: list[HostMmItemMemoryPool]) -> None:
    """A consumer that starts waiting before READY returns once READY is stored."""
    pool = make_pool(pools)
    transport = pool.handle.attach()
    lease, _ = pool.pool.copy_tensor(torch.ones(8))
    assert lease is not None
    transport.write_word(lease.ready_byte_offset, 0)  # as if not yet published
    waiter = threading.Thread(target=transport.wait_ready, args=(lease.ready_byte_offset, 1))
    waiter.start()
    time.sleep(0.05)
    assert waiter.is_alive()
    transport.publish_ready(lease.ready_byte_offset, lease.generation)
    waiter.join(5.0)
    assert not waiter.is_alive()


def test_wait_times_out(pools: list[HostMmItemMemoryPool]) -> None:
    """A READY that never comes raises TimeoutError after `wait_timeout` seconds."""
    pool = make_pool(pools, wait_timeout=0.05)
    transport = pool.handle.attach()
    with pytest.raises(
        TimeoutError,
        match=exact(
            "HOST pool lease (ready_byte_offset=8, generation=3) was not ready within 0.05 s"
        ),
    ):
        transport.wait_ready(8, 3)


def test_slow_consumer_of_a_reclaimed_lease_fails(pools: list[HostMmItemMemoryPool]) -> None:
    """After reclamation, waiting and confirming fail instead of returning reused bytes."""
    pool = make_pool(pools, lease_timeout=0.0)
    proxy = pool.wrap_tensor(torch.ones(8))
    assert proxy is not None
    assert wait_for(lambda: pool.active_lease_count == 0)
    message = exact(
        "HOST pool lease (ready_byte_offset=0, generation=1) was reclaimed before it was read; "
        "raise the pool's lease_timeout"
    )
    transport = pool.handle.attach()
    with pytest.raises(RuntimeError, match=message):
        proxy.reconstruct(transport)
    reused = pool.wrap_tensor(torch.zeros(8))  # same slot, next generation
    assert reused is not None and reused.generation == 2
    with pytest.raises(RuntimeError, match=message):
        transport.confirm_ready(proxy.ready_byte_offset, proxy.generation)


def test_cancel_proxy(pools: list[HostMmItemMemoryPool]) -> None:
    """A proxy is cancelled by its own pool only."""
    pool, other = make_pool(pools), make_pool(pools)
    proxy = pool.wrap_tensor(torch.ones(3))
    assert proxy is not None
    with pytest.raises(RuntimeError, match=exact("HOST proxy does not belong to this pool")):
        other.cancel_proxy(proxy)
    pool.cancel_proxy(proxy)
    assert wait_for(lambda: pool.active_lease_count == 0)


def test_bad_size_fails_before_allocating() -> None:
    """The pool's own message, not the shared-memory allocator's, reports a bad size."""
    with pytest.raises(ValueError, match=exact("memory_size must be positive")):
        HostMmItemMemoryPool(0, 0.01, 1)


def test_full_pool_returns_none(pools: list[HostMmItemMemoryPool]) -> None:
    """A tensor larger than any free range is back-pressure: None, not an error."""
    pool = make_pool(pools)
    assert pool.wrap_tensor(torch.empty(1 << 20, dtype=torch.uint8)) is None


# -- across processes ------------------------------------------------------------------------


def test_lifecycle_across_processes(
    pools: list[HostMmItemMemoryPool], children: list[BaseProcess]
) -> None:
    """Producer and rank 0 here, rank 1 in a child: the lease is freed after both ACKs."""
    pool = make_pool(pools, consumer_count=2)
    parent_conn, child_conn = SPAWN.Pipe()
    child = SPAWN.Process(target=consume_as_rank, args=(pool.handle, 1, child_conn), daemon=True)
    child.start()
    children.append(child)
    child_conn.close()
    assert parent_conn.poll(CHILD_TIMEOUT) and parent_conn.recv() == "attached"

    tensors = [torch.arange(5, dtype=torch.int32), torch.full((2, 2), 0.25, dtype=torch.float64)]
    proxies = [pool.wrap_tensor(tensor) for tensor in tensors]
    assert all(proxy is not None for proxy in proxies)
    local = pool.handle.attach()
    for tensor, proxy in zip(tensors, proxies, strict=True):
        assert proxy is not None
        assert torch.equal(proxy.reconstruct(local, 1, 0), tensor)
    time.sleep(0.05)
    assert pool.active_lease_count == 2  # rank 1 has not acknowledged yet

    for tensor, proxy in zip(tensors, proxies, strict=True):
        parent_conn.send(proxy)
        assert parent_conn.poll(CHILD_TIMEOUT)
        assert parent_conn.recv() == (tensor.dtype, tensor.shape, tensor.tolist())
    assert wait_for(lambda: pool.active_lease_count == 0)
    assert pool.pool.available_ranges == [(pool.pool.data_start, pool.pool.memory_size)]
    parent_conn.send(None)
    child.join(CHILD_TIMEOUT)
    assert child.exitcode == 0
    parent_conn.close()


def test_dead_consumer_lease_is_reclaimed(
    pools: list[HostMmItemMemoryPool],
    children: list[BaseProcess],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A consumer killed before acknowledging loses its lease after `lease_timeout`.

    The pool's clock is shifted forward only once the child has read and been killed, so the
    deadline can never pass while a slow child is still starting or reading.
    """
    from runtime.transport import memory_pool

    shift = [0.0]
    clock = types.SimpleNamespace(monotonic=lambda: time.monotonic() + shift[0])
    monkeypatch.setattr(memory_pool, "time", clock)
    pool = make_pool(pools, lease_timeout=60.0)
    parent_conn, child_conn = SPAWN.Pipe()
    child = SPAWN.Process(target=read_and_hang, args=(pool.handle, child_conn), daemon=True)
    child.start()
    children.append(child)
    child_conn.close()
    assert parent_conn.poll(CHILD_TIMEOUT) and parent_conn.recv() == "attached"
    # Published only now: the deadline runs from publication, not from the child's start-up.
    proxy = pool.wrap_tensor(torch.full((64,), 7, dtype=torch.uint8))
    assert proxy is not None
    parent_conn.send(proxy)
    assert parent_conn.poll(CHILD_TIMEOUT) and parent_conn.recv() == 7
    child.kill()
    child.join(CHILD_TIMEOUT)
    parent_conn.close()
    assert pool.active_lease_count == 1
    shift[0] = 61.0  # the deadline has passed: the recycler reclaims the dead consumer's lease
    assert wait_for(lambda: pool.active_lease_count == 0)
    assert pool.pool.available_ranges == [(pool.pool.data_start, pool.pool.memory_size)]


def test_proxy_of_another_pool_is_refused() -> None:
    """A consumer attached to one pool refuses a proxy issued by another, before reading bytes."""
    from runtime.errors import ForeignHostProxy

    with (
        HostMmItemMemoryPool(memory_size=1 << 20, recycle_interval=0.01, consumer_count=1) as first,
        HostMmItemMemoryPool(
            memory_size=1 << 20, recycle_interval=0.01, consumer_count=1
        ) as second,
    ):
        proxy = first.wrap_tensor(torch.arange(8, dtype=torch.float32))
        assert proxy is not None
        wrong = second.handle.attach()
        with pytest.raises(ForeignHostProxy, match=r"^HOST proxy does not belong to this pool$"):
            proxy.reconstruct(wrong)
        with pytest.raises(ForeignHostProxy):
            proxy.acknowledge_consumption(wrong)
        assert torch.equal(
            proxy.reconstruct(first.handle.attach()), torch.arange(8, dtype=torch.float32)
        )
