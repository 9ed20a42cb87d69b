"""Host transport: the stream-ordered pool in shared CPU memory, across processes.

The pool's buffer is a torch uint8 tensor whose storage is shared memory (`UntypedStorage.
_new_shared`, an unlinked shm file under torch's default `file_descriptor` strategy). It reaches
consumer processes as a `HostPoolHandle` sent through any `multiprocessing` channel (Process
arguments, `Queue`, `Pipe`): torch registers a reducer that passes the file descriptor, not the
bytes. Nothing has a name in /dev/shm, so nothing can leak when a process dies; the memory goes
away with its last mapping.

Ordering. A word is stored with one aligned 32-bit store: an int32 numpy view of the buffer,
whose item assignment on an aligned ("behaved") array is a single native `int` store, so a reader
sees the old value or the new one, never a mix. `copy_tensor` copies the data with a blocking
`Tensor.copy_`, which returns only after every intra-op worker thread has finished and joined
(a barrier, which publishes their stores), and only then stores READY. Consumers load READY, then
the data, then store ACK. What we rely on is x86-64's total store order: stores become visible
in program order and loads are not reordered with older loads or stores, so a consumer that sees
READY == generation sees the data, and the producer that sees ACK == generation knows the
consumer's reads are done. On weakly ordered CPUs (AArch64) the hardware may reorder these, and
CPython exposes no fence; there the guarantee rests only on the microseconds of interpreter work
between the copy and the word store, so a native release/acquire fence would be needed to make
it hold by construction.

Deliberate divergence from the upstream pool: consumers here are ordinary processes that can die,
and a consumer that dies before acknowledging would otherwise hold its slot and range forever. A
lease therefore gets a deadline when it is published (`lease_timeout`, seconds). The recycler
reclaims an expired lease: it stores the revoked marker `-generation` in READY and frees the
range. A consumer that was merely slow notices: waiting fails on the marker or on a later
generation, and `confirm_ready` re-reads READY after the copy-out (x86 keeps those loads in
order) and fails if the lease was reclaimed while it was being read, instead of returning bytes
that may have been overwritten. Choose `lease_timeout` well above the slowest consumer's latency.
Consumers wait by polling with back-off and give up after `wait_timeout` seconds.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import numpy as np
import torch

from runtime.errors import ForeignHostProxy, LeaseNotReadyInTime, LeaseReclaimedBeforeRead
from runtime.transport.memory_pool import (
    CONTROL_WORD_BYTES,
    DEFAULT_MAX_INFLIGHT_SLICES,
    PoolOwner,
    StreamOrderedMmFeaturePool,
    StreamOrderedPoolConsumerMixin,
    validate_pool_arguments,
)

HOST_TRANSPORT_NAME = "HOST"
"""Transport name of the host pool, used in its messages and its recycler thread's name."""
DEFAULT_LEASE_TIMEOUT = 30.0
"""Seconds a published lease may stay unacknowledged before the recycler reclaims it."""
DEFAULT_WAIT_TIMEOUT = 30.0
"""Seconds a consumer waits for READY before giving up."""

# Back-off while polling a word: spin briefly (a producer usually publishes within
# microseconds), then sleep for growing intervals so an idle consumer costs no CPU.
_SPIN_POLLS = 64
_FIRST_SLEEP = 1e-5
_MAX_SLEEP = 1e-3

# One shared instance: `nullcontext` is reusable, and building one per copy costs time on the
# pool's hot path.
_NO_DEVICE = nullcontext()


def _shared_byte_tensor(nbytes: int) -> torch.Tensor:
    storage = torch.UntypedStorage._new_shared(nbytes)
    return torch.empty(0, dtype=torch.uint8).set_(storage)


class HostTransport:
    """`PoolTransport` over a CPU uint8 tensor, usually one in shared memory.

    Every operation completes before it returns, so "stream order" is simply program order.
    """

    requires_cuda_source = False
    """Any tensor is accepted; CUDA tensors are copied to the host synchronously."""

    def __init__(
        self,
        byte_tensor: torch.Tensor,
        *,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
        transport_name: str = HOST_TRANSPORT_NAME,
        pool_id: str | None = None,
    ) -> None:
        self.transport_name = transport_name
        self.byte_tensor = byte_tensor
        self.pool_id = pool_id
        """The pool this buffer belongs to, when known: proxies of other pools are refused."""
        self.wait_timeout = wait_timeout
        whole_words = byte_tensor.numel() // CONTROL_WORD_BYTES * CONTROL_WORD_BYTES
        # numpy, not torch, for single words: item access on an aligned int32 array is one
        # native load or store (see the module docstring) and costs ~100 ns instead of a kernel.
        self._words = byte_tensor[:whole_words].numpy().view(np.int32)

    def device_context(self) -> AbstractContextManager[object]:
        """No device to select on the host."""
        return _NO_DEVICE

    def read_word(self, byte_offset: int) -> int:
        """Load one control word."""
        return int(self._words[byte_offset // CONTROL_WORD_BYTES])

    def write_word(self, byte_offset: int, value: int) -> None:
        """Store one control word with a single aligned 32-bit store."""
        self._words[byte_offset // CONTROL_WORD_BYTES] = value

    def publish_ready(self, byte_offset: int, generation: int) -> None:
        """Store READY; `copy_in` has already returned, so the data precedes it."""
        # `write_word` inlined: this runs once per published tensor.
        self._words[byte_offset // CONTROL_WORD_BYTES] = generation

    def _check_not_reclaimed(self, byte_offset: int, generation: int, word: int) -> None:
        # A revoked marker for this generation, or any later generation, means the recycler took
        # the lease back (and perhaps reused the slot): the bytes are no longer this lease's.
        if word == -generation or word > generation:
            raise LeaseReclaimedBeforeRead(
                transport_name=self.transport_name, byte_offset=byte_offset, generation=generation
            )

    def wait_ready(self, byte_offset: int, generation: int) -> None:
        """Poll READY with back-off until it equals `generation`."""
        deadline = time.monotonic() + self.wait_timeout
        polls = 0
        sleep = _FIRST_SLEEP
        while True:
            word = self.read_word(byte_offset)
            if word == generation:
                return
            self._check_not_reclaimed(byte_offset, generation, word)
            if time.monotonic() >= deadline:
                raise LeaseNotReadyInTime(
                    transport_name=self.transport_name,
                    byte_offset=byte_offset,
                    generation=generation,
                    wait_timeout=self.wait_timeout,
                )
            polls += 1
            if polls > _SPIN_POLLS:
                time.sleep(sleep)
                sleep = min(sleep * 2, _MAX_SLEEP)

    def confirm_ready(self, byte_offset: int, generation: int) -> None:
        """Fail if READY changed while the bytes were being copied out."""
        self._check_not_reclaimed(byte_offset, generation, self.read_word(byte_offset))

    def copy_in(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        """Blocking copy: it has completed when this returns, before READY is stored."""
        destination.copy_(source)

    def copy_out(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        """Blocking copy: it has completed when this returns, before ACK is stored."""
        destination.copy_(source)

    def synchronize(self) -> None:
        """Nothing is ever in flight on the host."""

    def prepare_recycler_thread(self) -> None:
        """The recycler needs no per-thread setup on the host."""


@dataclass(frozen=True, eq=False)
class HostPoolHandle:
    """What a consumer process needs to attach to a host pool.

    Send it through a `multiprocessing` channel, which shares `byte_tensor` by file descriptor;
    plain `pickle.dumps` would copy the bytes instead.
    """

    byte_tensor: torch.Tensor
    """The pool's shared uint8 buffer, `memory_size` bytes."""
    pool_id: str
    """Identifies the pool, so that a proxy can be matched to the pool that made it."""
    wait_timeout: float
    """Seconds a consumer waits for READY."""

    def attach(self) -> HostTransport:
        """Return a transport over the shared buffer, for this process's consumers."""
        return HostTransport(self.byte_tensor, wait_timeout=self.wait_timeout, pool_id=self.pool_id)


class HostTensorTransportProxy(StreamOrderedPoolConsumerMixin):
    """A published tensor as a consumer sees it: where its bytes are and how to rebuild it.

    It holds no tensor, so sending it to a consumer costs a few hundred bytes.
    """

    def __init__(
        self,
        *,
        pool_id: str,
        pool_byte_offset: int,
        nbytes: int,
        shape: Sequence[int],
        dtype: torch.dtype,
        ready_byte_offset: int,
        ack_byte_offset: int,
        generation: int,
        total_consumer_count: int,
    ) -> None:
        self._init_stream_ordered_consumer(
            ready_byte_offset=ready_byte_offset,
            ack_byte_offset=ack_byte_offset,
            generation=generation,
            total_consumer_count=total_consumer_count,
            transport_name=HOST_TRANSPORT_NAME,
        )
        self.pool_id = pool_id
        self.pool_byte_offset = pool_byte_offset
        self.nbytes = nbytes
        self.shape = tuple(shape)
        self.dtype = dtype

    def reconstruct(
        self,
        transport: HostTransport,
        consumer_count: int = 1,
        consumer_rank: int | None = None,
    ) -> torch.Tensor:
        """Wait for the tensor, copy it out of the pool and acknowledge for this consumer."""
        self._check_pool(transport)
        return self._copy_out_and_acknowledge(
            transport,
            pool_byte_offset=self.pool_byte_offset,
            nbytes=self.nbytes,
            shape=self.shape,
            dtype=self.dtype,
            consumer_count=consumer_count,
            consumer_rank=consumer_rank,
        )

    def _check_pool(self, transport: HostTransport) -> None:
        # Offsets and generations are only meaningful in the pool that issued them: read
        # through another pool's buffer, a READY word that happens to match would hand back
        # someone else's bytes.
        if transport.pool_id is not None and transport.pool_id != self.pool_id:
            raise ForeignHostProxy(transport_name=HOST_TRANSPORT_NAME)

    def acknowledge_consumption(
        self,
        transport: HostTransport,
        consumer_count: int = 1,
        consumer_rank: int | None = None,
    ) -> None:
        """Acknowledge without reading the bytes (the consumer does not need them)."""
        self._check_pool(transport)
        self._wait_until_ready(transport)
        self._acknowledge_on_stream(transport, consumer_count, consumer_rank)


class HostMmItemMemoryPool(PoolOwner):
    """Producer side of the host transport: a shared-memory pool and its proxies.

    `memory_size` is in bytes, `recycle_interval`, `lease_timeout` and `wait_timeout` in seconds.
    """

    def __init__(
        self,
        memory_size: int,
        recycle_interval: float,
        consumer_count: int,
        max_inflight_slices: int = DEFAULT_MAX_INFLIGHT_SLICES,
        *,
        lease_timeout: float | None = DEFAULT_LEASE_TIMEOUT,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        # Before the allocation, so that a bad size fails with the pool's own message.
        validate_pool_arguments(
            memory_size=memory_size,
            consumer_count=consumer_count,
            max_inflight_slices=max_inflight_slices,
            recycle_interval=recycle_interval,
        )
        self.consumer_count = consumer_count
        pool_id = f"{os.getpid()}-{uuid.uuid4().hex}"
        self.transport = HostTransport(
            _shared_byte_tensor(memory_size), wait_timeout=wait_timeout, pool_id=pool_id
        )
        self.pool = StreamOrderedMmFeaturePool(
            transport=self.transport,
            memory_size=memory_size,
            consumer_count=consumer_count,
            recycle_interval=recycle_interval,
            max_inflight_slices=max_inflight_slices,
            lease_timeout=lease_timeout,
        )
        self.handle = HostPoolHandle(
            byte_tensor=self.transport.byte_tensor,
            pool_id=pool_id,
            wait_timeout=wait_timeout,
        )

    def wrap_tensor(self, tensor: torch.Tensor) -> HostTensorTransportProxy | None:
        """Copy `tensor` into the pool; None when the pool is full (send it another way)."""
        lease, _ = self.pool.copy_tensor(tensor)
        if lease is None:
            return None
        return HostTensorTransportProxy(
            pool_id=self.handle.pool_id,
            pool_byte_offset=lease.start,
            nbytes=lease.nbytes,
            shape=tensor.shape,
            dtype=tensor.dtype,
            ready_byte_offset=lease.ready_byte_offset,
            ack_byte_offset=lease.ack_byte_offset,
            generation=lease.generation,
            total_consumer_count=self.consumer_count,
        )

    def cancel_proxy(self, proxy: HostTensorTransportProxy) -> None:
        """Give back the lease of a proxy that will never be sent to its consumers."""
        if proxy.pool_id != self.handle.pool_id:
            raise ForeignHostProxy(transport_name=HOST_TRANSPORT_NAME)
        self._cancel(proxy)
