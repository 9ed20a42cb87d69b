"""The stream-ordered pool: layout, best fit, slots and generations, recycling, misuse errors.

The pool runs over a `HostTransport` on a plain CPU tensor, in one process; the recycler thread
is kept idle (long interval) and passes are run with `recycle()`, so every step is deterministic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest
import torch
from helpers import exact, wait_for
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from runtime.transport import memory_pool
from runtime.transport.host import HostTransport
from runtime.transport.memory_pool import (
    CONTROL_WORD_BYTES,
    DATA_ALIGNMENT,
    DEFAULT_MAX_INFLIGHT_SLICES,
    MAX_SLOT_GENERATION,
    PoolLease,
    StreamOrderedMmFeaturePool,
    StreamOrderedPoolConsumerMixin,
    align_up,
    control_region_bytes,
    resolve_consumer_rank,
)

PoolFactory = Callable[..., StreamOrderedMmFeaturePool]


def build_pool(
    memory_size: int,
    *,
    consumer_count: int = 1,
    max_inflight_slices: int = 8,
    recycle_interval: float = 3600.0,
    lease_timeout: float | None = None,
) -> StreamOrderedMmFeaturePool:
    transport = HostTransport(torch.zeros(max(memory_size, 0), dtype=torch.uint8))
    return StreamOrderedMmFeaturePool(
        transport=transport,
        memory_size=memory_size,
        consumer_count=consumer_count,
        recycle_interval=recycle_interval,
        max_inflight_slices=max_inflight_slices,
        lease_timeout=lease_timeout,
    )


@pytest.fixture
def make_pool() -> Iterator[PoolFactory]:
    pools: list[StreamOrderedMmFeaturePool] = []

    def factory(memory_size: int, **kwargs: object) -> StreamOrderedMmFeaturePool:
        pool = build_pool(memory_size, **kwargs)  # type: ignore[arg-type]
        pools.append(pool)
        return pool

    yield factory
    for pool in pools:
        pool.shutdown()


def bytes_of(nbytes: int) -> torch.Tensor:
    return torch.arange(nbytes, dtype=torch.int64).remainder(251).to(torch.uint8)


def copy(pool: StreamOrderedMmFeaturePool, nbytes: int) -> PoolLease:
    lease, _ = pool.copy_tensor(bytes_of(nbytes))
    assert lease is not None
    return lease


def ack_all(pool: StreamOrderedMmFeaturePool, lease: PoolLease) -> None:
    transport = pool._transport
    for rank in range(pool.consumer_count):
        transport.write_word(lease.ack_byte_offset + rank * CONTROL_WORD_BYTES, lease.generation)


def snapshot(pool: StreamOrderedMmFeaturePool) -> tuple[object, ...]:
    return (pool.available_ranges, pool.available_slot_count, pool.live_leases())


def test_constants_and_align_up() -> None:
    """Constants match the spec and `align_up` rounds up to a multiple."""
    assert (CONTROL_WORD_BYTES, DATA_ALIGNMENT, DEFAULT_MAX_INFLIGHT_SLICES) == (4, 256, 4096)
    assert [align_up(v, 256) for v in (0, 1, 255, 256, 257)] == [0, 256, 256, 256, 512]


def test_layout_and_lease_offsets(make_pool: PoolFactory) -> None:
    """Control words come first; the data region starts 256-aligned after them."""
    pool = make_pool(8192, consumer_count=3, max_inflight_slices=20)
    assert pool.data_start == align_up(20 * 4 * 4, 256) == control_region_bytes(20, 3) == 512
    assert pool.usable_size == 8192 - 512
    assert pool.available_ranges == [(512, 8192)]
    first, second = copy(pool, 10), copy(pool, 300)
    assert first == PoolLease(
        start=512, end=768, nbytes=10, slot=0, generation=1, ready_byte_offset=0, ack_byte_offset=4
    )
    assert (second.start, second.end, second.slot) == (768, 1280, 1)
    assert (second.ready_byte_offset, second.ack_byte_offset) == (16, 20)


def test_copy_writes_bytes_and_ready(make_pool: PoolFactory) -> None:
    """The lease's bytes hold the tensor and READY holds the generation; ACKs are untouched."""
    pool = make_pool(4096, consumer_count=2)
    source = torch.tensor([[1.5, -2.0], [3.25, 4.0]], dtype=torch.float32)
    lease, view = pool.copy_tensor(source.t())  # non-contiguous input is made contiguous
    assert lease is not None and view is not None
    assert view.dtype == torch.uint8 and view.numel() == lease.nbytes == 16
    assert torch.equal(view.view(torch.float32).view(2, 2), source.t().contiguous())
    transport = pool._transport
    assert transport.read_word(lease.ready_byte_offset) == 1
    assert transport.read_word(lease.ack_byte_offset) == 0
    scalar, _ = pool.copy_tensor(torch.tensor(7, dtype=torch.int16))
    assert scalar is not None and scalar.nbytes == 2


def test_best_fit_prefers_the_smallest_range(make_pool: PoolFactory) -> None:
    """Among free ranges that fit, the smallest is taken, wherever it lies."""
    pool = make_pool(16384)
    big, _, medium, _, small, _ = (copy(pool, n) for n in (1024, 256, 512, 256, 256, 256))
    for lease in (big, medium, small):
        pool.release(lease)
    assert copy(pool, 300).start == medium.start
    assert copy(pool, 1).start == small.start
    assert copy(pool, 600).start == big.start


def test_best_fit_ties_go_to_the_lowest_list_index(make_pool: PoolFactory) -> None:
    """Equal ranges: the one earlier in the free list wins, not the lower address."""
    pool = make_pool(16384)
    low, _, high, _ = (copy(pool, 512) for _ in range(4))
    with pool._lock:  # release without merging, in this order
        pool._release_locked(high)
        pool._release_locked(low)
    assert pool.available_ranges[1:] == [(high.start, high.end), (low.start, low.end)]
    assert copy(pool, 512).start == high.start


def test_remainder_is_appended(make_pool: PoolFactory) -> None:
    """Splitting a range removes it and appends the remainder at the end of the list."""
    pool = make_pool(16384)
    first, _ = copy(pool, 1024), copy(pool, 256)
    pool.release(first)
    tail = pool.available_ranges
    assert tail == [(first.start, first.end), (first.end + 256, 16384)]
    copy(pool, 256)
    assert pool.available_ranges == [(first.end + 256, 16384), (first.start + 256, first.end)]


def test_slots_are_reused_lifo_with_new_generations(make_pool: PoolFactory) -> None:
    """Slots go out 0, 1, 2; the last released comes back first, one generation later."""
    pool = make_pool(16384)
    leases = [copy(pool, 256) for _ in range(3)]
    assert [lease.slot for lease in leases] == [0, 1, 2]
    pool.release(leases[0])
    pool.release(leases[1])
    again = copy(pool, 256)
    assert (again.slot, again.generation) == (1, 2)
    assert (copy(pool, 256).slot, copy(pool, 256).slot) == (0, 3)


def test_stale_flags_do_not_release_a_reused_slot(make_pool: PoolFactory) -> None:
    """Words left at an earlier generation never complete the slot's next lease."""
    pool = make_pool(8192, consumer_count=2)
    first = copy(pool, 100)
    ack_all(pool, first)
    pool.recycle()
    assert pool.active_lease_count == 0
    second = copy(pool, 100)
    assert (second.slot, second.generation) == (first.slot, 2)
    transport = pool._transport
    transport.write_word(second.ack_byte_offset, 1)  # a late ACK from the first use
    transport.write_word(second.ack_byte_offset + 4, 2)
    pool.recycle()
    assert pool.live_leases() == [second]
    ack_all(pool, second)
    pool.recycle()
    assert pool.active_lease_count == 0


def test_recycle_needs_every_ack_and_merges(make_pool: PoolFactory) -> None:
    """A lease is freed only when READY and all ACKs match; freed ranges coalesce."""
    pool = make_pool(8192, consumer_count=3)
    leases = [copy(pool, 700) for _ in range(3)]
    transport = pool._transport
    for lease in leases:
        transport.write_word(lease.ack_byte_offset, lease.generation)
        transport.write_word(lease.ack_byte_offset + 4, lease.generation)
    pool.recycle()
    assert pool.active_lease_count == 3
    for lease in leases:
        transport.write_word(lease.ack_byte_offset + 8, lease.generation)
    pool.recycle()
    assert pool.active_lease_count == 0
    assert pool.available_ranges == [(pool.data_start, 8192)]
    assert pool.available_slot_count == 8


def test_back_pressure_returns_none(make_pool: PoolFactory) -> None:
    """No range or no slot large enough gives `(None, None)` and changes nothing."""
    pool = make_pool(4096, max_inflight_slices=2)
    assert pool.copy_tensor(bytes_of(4096)) == (None, None)
    copy(pool, 256)
    copy(pool, 256)
    before = snapshot(pool)
    assert pool.copy_tensor(bytes_of(1)) == (None, None)
    assert snapshot(pool) == before


def test_cancel_acknowledges_for_every_consumer(make_pool: PoolFactory) -> None:
    """A cancelled lease gets all its ACK words and is freed by the next recycler pass."""
    pool = make_pool(8192, consumer_count=3)
    lease = copy(pool, 512)
    pool.cancel_lease(
        ready_byte_offset=lease.ready_byte_offset,
        ack_byte_offset=lease.ack_byte_offset,
        generation=lease.generation,
    )
    assert pool.active_lease_count == 1
    pool.recycle()
    assert pool.active_lease_count == 0


def test_recycler_thread_frees_and_stops(make_pool: PoolFactory) -> None:
    """The named recycler thread frees acknowledged leases on its own and joins on shutdown."""
    pool = make_pool(8192, recycle_interval=0.005)
    assert pool._recycler.name == "HOSTMmFeaturePoolRecycler" and pool._recycler.daemon
    lease = copy(pool, 64)
    ack_all(pool, lease)
    assert wait_for(lambda: pool.active_lease_count == 0)
    pool.shutdown()
    pool.shutdown()
    assert not pool._recycler.is_alive()


def test_expired_lease_is_reclaimed_and_revoked(make_pool: PoolFactory) -> None:
    """With a lease_timeout, an unacknowledged published lease is freed and READY revoked."""
    pool = make_pool(8192, lease_timeout=0.0)
    lease = copy(pool, 64)
    pool.recycle()
    assert pool.active_lease_count == 0
    assert pool._transport.read_word(lease.ready_byte_offset) == -lease.generation


class FakeClock:
    """Stands in for the pool module's `time`: monotonic seconds move only when a test says."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_a_released_slot_forgets_its_lease_deadline(
    make_pool: PoolFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A released lease's deadline goes with it: a recycler pass while the slot's next lease is
    being filled (before that lease has a deadline of its own) must not reclaim the new lease."""
    clock = FakeClock()
    monkeypatch.setattr(memory_pool, "time", clock)
    pool = make_pool(8192, lease_timeout=10.0)
    first = copy(pool, 64)
    pool.release(first)
    clock.now += 60.0  # past the first lease's deadline
    transport = pool._transport
    copy_in = transport.copy_in
    live_during_copy: list[list[PoolLease]] = []

    def copy_in_then_recycle(destination: torch.Tensor, source: torch.Tensor) -> None:
        copy_in(destination, source)
        pool.recycle()
        live_during_copy.append(pool.live_leases())

    transport.copy_in = copy_in_then_recycle  # type: ignore[method-assign]
    second = copy(pool, 64)
    assert second.slot == first.slot and second.generation == first.generation + 1
    assert live_during_copy == [[second]]
    assert pool.live_leases() == [second]
    assert transport.read_word(second.ready_byte_offset) == second.generation
    pool.recycle()  # its own deadline (now + 10 s) has not passed either
    assert pool.live_leases() == [second]
    clock.now += 10.0
    pool.recycle()
    assert pool.live_leases() == []
    assert transport.read_word(second.ready_byte_offset) == -second.generation


# -- misuse: exact messages, accounting unchanged ---------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"memory_size": 0}, "memory_size must be positive"),
        ({"consumer_count": 0}, "consumer_count must be positive"),
        ({"max_inflight_slices": -1}, "max_inflight_slices must be positive"),
        ({"recycle_interval": 0.0}, "recycle_interval must be positive"),
        (
            {"memory_size": 256},
            "HOST pool is too small after control metadata: pool=256, control=256",
        ),
    ],
)
def test_constructor_rejects_bad_arguments(overrides: dict[str, object], message: str) -> None:
    """Each invalid argument raises ValueError with the spec's text, before any thread starts."""
    arguments: dict[str, object] = {"memory_size": 4096, "max_inflight_slices": 8}
    arguments.update(overrides)
    with pytest.raises(ValueError, match=exact(message)):
        build_pool(**arguments)  # type: ignore[arg-type]


def test_empty_tensor_is_rejected(make_pool: PoolFactory) -> None:
    """Zero bytes raise ValueError and take nothing."""
    pool = make_pool(4096)
    before = snapshot(pool)
    with pytest.raises(ValueError, match=exact("HOST cannot transport an empty tensor")):
        pool.copy_tensor(torch.empty(0, 3))
    assert snapshot(pool) == before


def test_releasing_an_inactive_lease_fails(make_pool: PoolFactory) -> None:
    """Releasing twice, or a lease of an earlier generation, raises and changes nothing."""
    pool = make_pool(8192)
    lease = copy(pool, 64)
    pool.release(lease)
    current = copy(pool, 64)
    before = snapshot(pool)
    with pytest.raises(
        RuntimeError, match=exact("Cannot release inactive HOST pool lease (slot=0, generation=1)")
    ):
        pool.release(lease)
    assert snapshot(pool) == before
    assert pool.live_leases() == [current]


@pytest.mark.parametrize(
    ("ready", "ack"),
    [(4, 8), (0, 8), (-1, 3), (8, 4)],
)
def test_cancel_rejects_bad_offsets(make_pool: PoolFactory, ready: int, ack: int) -> None:
    """A READY offset off the row stride, or ACK not right after it, is invalid."""
    pool = make_pool(8192, consumer_count=1)
    copy(pool, 64)
    before = snapshot(pool)
    with pytest.raises(RuntimeError, match=exact("Invalid HOST pool lease offsets")):
        pool.cancel_lease(ready_byte_offset=ready, ack_byte_offset=ack, generation=1)
    assert snapshot(pool) == before


def test_cancel_rejects_an_inactive_lease(make_pool: PoolFactory) -> None:
    """Well-formed offsets of a free slot or a wrong generation raise and write nothing."""
    pool = make_pool(8192, consumer_count=1)
    lease = copy(pool, 64)
    before = snapshot(pool)
    with pytest.raises(
        RuntimeError, match=exact("Cannot cancel inactive HOST pool lease (slot=0, generation=2)")
    ):
        pool.cancel_lease(ready_byte_offset=0, ack_byte_offset=4, generation=2)
    with pytest.raises(
        RuntimeError, match=exact("Cannot cancel inactive HOST pool lease (slot=3, generation=1)")
    ):
        pool.cancel_lease(ready_byte_offset=24, ack_byte_offset=28, generation=1)
    assert snapshot(pool) == before
    assert pool._transport.read_word(lease.ack_byte_offset) == 0


def test_generation_exhaustion_fails_without_taking_anything(make_pool: PoolFactory) -> None:
    """A slot at the largest int32 generation cannot be leased again; nothing is taken."""
    pool = make_pool(8192)
    pool._slot_generations[0] = MAX_SLOT_GENERATION
    before = snapshot(pool)
    with pytest.raises(RuntimeError, match=exact("HOST pool slot generation exhausted")):
        pool.copy_tensor(bytes_of(10))
    assert snapshot(pool) == before
    pool._slot_generations[0] = MAX_SLOT_GENERATION - 1
    assert copy(pool, 10).generation == MAX_SLOT_GENERATION


def test_failed_copy_releases_its_lease(make_pool: PoolFactory) -> None:
    """When the copy raises, the lease is given back and the error propagates unchanged."""
    pool = make_pool(8192)
    before = snapshot(pool)

    def broken_copy(destination: torch.Tensor, source: torch.Tensor) -> None:
        raise OSError("device lost")

    pool._transport.copy_in = broken_copy  # type: ignore[method-assign]
    with pytest.raises(OSError, match=exact("device lost")):
        pool.copy_tensor(bytes_of(10))
    assert snapshot(pool) == before


def test_resolve_consumer_rank() -> None:
    """One consumer is rank 0; otherwise the rank must be given and in range."""
    assert resolve_consumer_rank(1, 5) == 0
    assert resolve_consumer_rank(4, 3, "HOST") == 3
    with pytest.raises(
        RuntimeError,
        match=exact("Cannot resolve the GPU consumer rank before parallel state initialization"),
    ):
        resolve_consumer_rank(2)
    with pytest.raises(RuntimeError, match=exact("CUDA IPC consumer rank 4 is outside [0, 4)")):
        resolve_consumer_rank(4, 4, "CUDA IPC")
    with pytest.raises(RuntimeError, match=exact("GPU consumer rank -1 is outside [0, 2)")):
        resolve_consumer_rank(2, -1)


class _Consumer(StreamOrderedPoolConsumerMixin):
    pass


def test_consumer_protocol_validation(make_pool: PoolFactory) -> None:
    """A consumer group must be positive; acknowledgements are for one rank or all of them."""
    consumer = _Consumer()
    with pytest.raises(ValueError, match=exact("total_consumer_count must be positive")):
        consumer._init_stream_ordered_consumer(
            ready_byte_offset=0,
            ack_byte_offset=4,
            generation=1,
            total_consumer_count=0,
            transport_name="HOST",
        )
    pool = make_pool(8192, consumer_count=3)
    lease = copy(pool, 8)
    consumer._init_stream_ordered_consumer(
        ready_byte_offset=lease.ready_byte_offset,
        ack_byte_offset=lease.ack_byte_offset,
        generation=lease.generation,
        total_consumer_count=3,
        transport_name="HOST",
    )
    with pytest.raises(
        ValueError,
        match=exact(
            "HOST acknowledgements support one consumer or the complete consumer group, got 2/3"
        ),
    ):
        consumer._acknowledge_on_stream(pool._transport, 2)
    consumer._acknowledge_on_stream(pool._transport, 1, consumer_rank=2)
    consumer._acknowledge_on_stream(pool._transport, 3)  # already acknowledged: no-op
    words = [pool._transport.read_word(lease.ack_byte_offset + 4 * r) for r in range(3)]
    assert words == [0, 0, 1]


# -- property: random lifecycles never overlap and always drain --------------------------------


class PoolLifecycle(RuleBasedStateMachine):
    """Random copy / ack / cancel / release / recycle sequences keep the pool consistent."""

    consumers = 2

    def __init__(self) -> None:
        super().__init__()
        self.pool = build_pool(4096 + 256, consumer_count=self.consumers, max_inflight_slices=6)
        # The recycler thread's first pass runs as soon as it starts, so on a loaded machine it
        # could free leases between two rules and a rerun would draw differently (Hypothesis
        # calls that flaky). Stopped here, recycling happens only in the `recycle` rule.
        self.pool.shutdown()
        self.acked: dict[int, set[int]] = {}

    def teardown(self) -> None:
        self.pool.shutdown()

    @rule(nbytes=st.integers(1, 1400))
    def copy(self, nbytes: int) -> None:
        lease, view = self.pool.copy_tensor(bytes_of(nbytes))
        if lease is not None:
            assert view is not None and torch.equal(view, bytes_of(nbytes))
            self.acked[lease.slot] = set()

    @precondition(lambda self: self.pool.active_lease_count > 0)
    @rule(data=st.data())
    def acknowledge(self, data: st.DataObject) -> None:
        lease = data.draw(st.sampled_from(self.pool.live_leases()))
        rank = data.draw(st.integers(0, self.consumers - 1))
        self.pool._transport.write_word(lease.ack_byte_offset + 4 * rank, lease.generation)

    @precondition(lambda self: self.pool.active_lease_count > 0)
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        lease = data.draw(st.sampled_from(self.pool.live_leases()))
        self.pool.cancel_lease(
            ready_byte_offset=lease.ready_byte_offset,
            ack_byte_offset=lease.ack_byte_offset,
            generation=lease.generation,
        )

    @precondition(lambda self: self.pool.active_lease_count > 0)
    @rule(data=st.data())
    def release(self, data: st.DataObject) -> None:
        self.pool.release(data.draw(st.sampled_from(self.pool.live_leases())))

    @rule()
    def recycle(self) -> None:
        self.pool.recycle()

    @invariant()
    def leases_are_disjoint_and_inside_the_data_region(self) -> None:
        pool = self.pool
        spans = sorted((lease.start, lease.end) for lease in pool.live_leases())
        spans += sorted(pool.available_ranges)
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start
        assert all(pool.data_start <= s < e <= pool.memory_size for s, e in spans)
        assert sum(e - s for s, e in spans) == pool.usable_size
        assert all(lease.start % DATA_ALIGNMENT == 0 for lease in pool.live_leases())

    def drain(self) -> None:
        for lease in self.pool.live_leases():
            ack_all(self.pool, lease)
        self.pool.recycle()
        assert self.pool.available_ranges == [(self.pool.data_start, self.pool.memory_size)]
        assert self.pool.available_slot_count == self.pool.max_inflight_slices


class DrainingPoolLifecycle(PoolLifecycle):
    def teardown(self) -> None:
        try:
            self.drain()
        finally:
            super().teardown()


DrainingPoolLifecycle.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestPoolLifecycle = DrainingPoolLifecycle.TestCase


def test_views_are_reused_for_the_same_range_and_layout(make_pool: PoolFactory) -> None:
    """A range used again for a tensor of the same dtype and shape hands out the same byte view
    (building views is a large share of `copy_tensor`'s cost), holding the new bytes."""
    pool = make_pool(8192)
    lease, first = pool.copy_tensor(torch.ones(4, 8))
    assert lease is not None and first is not None
    pool.release(lease)
    lease, second = pool.copy_tensor(torch.zeros(4, 8))
    assert lease is not None and second is first
    assert torch.equal(second.view(torch.float32), torch.zeros(32))
    pool.release(lease)
    lease, other = pool.copy_tensor(torch.zeros(32))  # same bytes, another shape
    assert other is not None and other is not first and torch.equal(other, first)


def test_a_view_changed_in_place_is_not_reused(make_pool: PoolFactory) -> None:
    """A caller that changes its view in place does not get it handed to the next lease."""
    pool = make_pool(8192)
    lease, view = pool.copy_tensor(torch.ones(16))
    assert lease is not None and view is not None
    pool.release(lease)
    view.resize_(1)  # misuse of the view by the caller it was handed to
    lease, fresh = pool.copy_tensor(torch.full((16,), 2.0))
    assert fresh is not None and fresh is not view and fresh.numel() == 64
    assert torch.equal(fresh.view(torch.float32), torch.full((16,), 2.0))


def test_view_cache_is_bounded(make_pool: PoolFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """At most `_VIEW_CACHE_SIZE` view pairs are kept; the oldest goes first."""
    monkeypatch.setattr(memory_pool, "_VIEW_CACHE_SIZE", 4)
    pool = make_pool(1 << 16)
    for numel in range(1, 10):
        lease, _ = pool.copy_tensor(torch.ones(numel))
        assert lease is not None
        pool.release(lease)
    assert [key[1] for key in pool._views] == [24, 28, 32, 36]
