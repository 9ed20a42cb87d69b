"""The pool under random lifecycles while its recycler thread runs, through the host transport.

Unlike tests/runtime/test_memory_pool.py, whose recycler is kept idle so every step is deterministic, the
recycler here polls every half millisecond: it frees a fully acknowledged lease at a moment the
test does not choose, concurrently with the producer's allocations, releases and cancels.
Whatever the interleaving, the accounting must hold exactly, no two live leases may share a
byte, a lease some consumer has not acknowledged must stay live (and its bytes intact), and once
everything is acknowledged the recycler alone must give back the whole data region.
"""

from __future__ import annotations

import copy
import itertools
import logging

import torch
from helpers import wait_for
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    invariant,
    multiple,
    rule,
)

from runtime.errors import CancelInactiveLease, ReleaseInactiveLease
from runtime.transport.host import HostMmItemMemoryPool, HostTensorTransportProxy
from runtime.transport.memory_pool import DATA_ALIGNMENT, PoolLease

CONSUMERS = 3
SLOTS = 6
DATA_BYTES = 8192
RECYCLE_INTERVAL = 0.0005
DRAIN_TIMEOUT = 60.0
"""Seconds the recycler gets to free everything: reached only when it never does."""


class _Warnings(logging.Handler):
    """Collects what the pool logs: a failed recycler pass is logged, not raised."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Item:
    """One tensor sent through the pool, and what the test knows about its lease."""

    def __init__(self, proxy: HostTensorTransportProxy | None, tensor: torch.Tensor) -> None:
        self._proxy = proxy
        self.tensor = tensor
        self.acked: set[int] = set()
        """Consumer ranks that have read and acknowledged it."""
        self.cancelled = False
        self.released = proxy is None
        """Released by the test, or never sent (the pool refused it: back-pressure)."""

    @property
    def proxy(self) -> HostTensorTransportProxy:
        assert self._proxy is not None, "a refused tensor has no proxy; rules skip it"
        return self._proxy

    @property
    def settled(self) -> bool:
        """Every consumer has acknowledged it, so the recycler may free it at any moment."""
        return self.cancelled or len(self.acked) == CONSUMERS

    @property
    def lease_key(self) -> tuple[int, int, int]:
        """(start, slot, generation): what identifies its lease among the pool's live ones."""
        return (self.proxy.pool_byte_offset, self.proxy.ready_byte_offset, self.proxy.generation)


def _key(lease: PoolLease) -> tuple[int, int, int]:
    return (lease.start, lease.ready_byte_offset, lease.generation)


class RecyclingPool(RuleBasedStateMachine):
    """Random wrap / read+ack per consumer / cancel / release / recycle with the recycler on."""

    items = Bundle("items")

    def __init__(self) -> None:
        super().__init__()
        self.warnings = _Warnings()
        logging.getLogger("runtime.transport.memory_pool").addHandler(self.warnings)
        self.host = HostMmItemMemoryPool(
            DATA_BYTES + DATA_ALIGNMENT,
            RECYCLE_INTERVAL,
            CONSUMERS,
            SLOTS,
            lease_timeout=None,  # no reclaim: only acknowledgement or release frees a lease
            wait_timeout=5.0,
        )
        self.pool = self.host.pool
        self.transport = self.host.transport
        self.serial = 0
        self.sent: list[Item] = []

    def teardown(self) -> None:
        try:
            self.drain()
        finally:
            self.host.shutdown()
            logging.getLogger("runtime.transport.memory_pool").removeHandler(self.warnings)
        assert self.warnings.records == [], [r.getMessage() for r in self.warnings.records]

    def _open(self) -> list[Item]:
        return [item for item in self.sent if not item.released and not item.settled]

    @rule(
        target=items, numel=st.integers(1, 700), dtype=st.sampled_from([torch.int32, torch.uint8])
    )
    def wrap(self, numel: int, dtype: torch.dtype) -> MultipleResults[Item]:
        self.serial += 1
        # Distinct contents per tensor: a read of someone else's bytes cannot pass unnoticed.
        tensor = (torch.arange(numel, dtype=torch.int64) * 7 + self.serial).remainder(127).to(dtype)
        proxy = self.host.wrap_tensor(tensor)
        if proxy is None:
            # Back-pressure is only allowed while something still holds bytes or slots.
            assert any(not item.released for item in self.sent)
            # Still an item of the bundle (one the rules skip): whether the recycler freed room
            # in time depends on the machine's speed, and hypothesis must draw the same items
            # from the bundle however each run goes, or it reports the test as flaky.
            return multiple(Item(None, tensor))
        item = Item(proxy, tensor)
        self.sent.append(item)
        return multiple(item)

    @rule(item=items, rank=st.integers(0, CONSUMERS - 1))
    def read_and_acknowledge(self, item: Item, rank: int) -> None:
        if item.released or item.settled or rank in item.acked:
            return
        # Each consumer holds its own copy of the proxy (pickling resets "acknowledged").
        consumer = copy.copy(item.proxy)
        result = consumer.reconstruct(self.transport, 1, rank)
        assert torch.equal(result, item.tensor)
        item.acked.add(rank)

    @rule(item=items)
    def cancel(self, item: Item) -> None:
        if item.released:
            return
        try:
            self.host.cancel_proxy(item.proxy)
        except CancelInactiveLease:
            # Only a settled lease may already be gone: the recycler got to it first.
            assert item.settled
        item.cancelled = True

    @rule(item=items)
    def release(self, item: Item) -> None:
        if item.released:
            return
        live = {_key(lease): lease for lease in self.pool.live_leases()}
        lease = live.get(item.lease_key)
        if lease is None:
            assert item.settled, "an unacknowledged lease vanished"
        else:
            try:
                self.pool.release(lease)
            except ReleaseInactiveLease:
                assert item.settled  # the recycler freed it between the snapshot and release
        item.released = True

    @rule()
    def recycle(self) -> None:
        self.pool.recycle()

    @invariant()
    def accounting_is_exact(self) -> None:
        pool = self.pool
        # One consistent snapshot: the recycler changes these under the same lock.
        with pool._lock:
            leases = list(pool._occupied.values())
            free = list(pool._available_ranges)
            free_slots = list(pool._available_slots)
        live = sum(lease.end - lease.start for lease in leases)
        assert sum(end - start for start, end in free) + live == pool.usable_size
        assert len(free_slots) + len(leases) == SLOTS
        assert sorted(free_slots + [lease.slot for lease in leases]) == list(range(SLOTS))
        spans = sorted([(lease.start, lease.end) for lease in leases] + free)
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, spans
        assert all(pool.data_start <= start < end <= pool.memory_size for start, end in spans)
        assert all(lease.start % DATA_ALIGNMENT == 0 for lease in leases)
        # Every lease some consumer still owes an acknowledgement is live; nothing else is.
        keys = {_key(lease) for lease in leases}
        owed = {item.lease_key for item in self._open()}
        assert owed <= keys
        known = {item.lease_key for item in self.sent if not item.released}
        assert keys <= known

    def drain(self) -> None:
        for item in self._open():
            for rank in sorted(set(range(CONSUMERS)) - item.acked):
                copy.copy(item.proxy).acknowledge_consumption(self.transport, 1, rank)
        # The recycler thread alone must now free everything still live.
        assert wait_for(lambda: self.pool.active_lease_count == 0, timeout=DRAIN_TIMEOUT)
        assert self.pool.available_ranges == [(self.pool.data_start, self.pool.memory_size)]
        assert self.pool.available_slot_count == SLOTS


RecyclingPool.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestRecyclingPool = RecyclingPool.TestCase
