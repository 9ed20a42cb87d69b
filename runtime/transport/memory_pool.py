"""Stream-ordered pool of one byte buffer for multimodal feature transport.

A producer copies feature tensors into one bounded byte buffer; consumers (the TP ranks) receive a
lease naming the bytes, read them, and acknowledge. Readiness and acknowledgement are 32-bit
control words at the start of the same buffer, so the whole protocol travels with the buffer:

    [control region | padding | data region]
     int32[max_inflight_slices, 1 + consumer_count]   data_start = align_up(control bytes, 256)

Word 0 of a slot's row is READY; words 1..C are the ACK words of consumer ranks 0..C-1. A lease
is live while its slot is occupied. Each reuse of a slot bumps its generation, and every protocol
word carries the generation it is about, so flags left over from an earlier use of the slot can
never satisfy a later one. A background thread frees a lease once all its words equal its
generation.

The pool is device-agnostic. How a control word is stored or awaited, how bytes are copied and
how a device is synchronised is a `PoolTransport`'s business: `runtime.transport.host` runs the
protocol in shared CPU memory across processes, `CudaStreamTransport` (here, shared by
`runtime.transport.cuda_ipc`) on a GPU in stream order. The pool takes either `transport=` or,
as upstream, the CUDA buffer itself (`byte_tensor=`, `base_address=`, `device_id=`,
`transport_name=`), for which it builds the CUDA stream transport; that transport and its
buffer check live in this module, as upstream's check does, so that `cuda_ipc` builds on the
pool without the pool importing it back. The CUDA driver's stream memory operation that awaits a word
(`stream_wait_value32`, with `check_drv` for its result) lives here as upstream has it; the
driver is loaded only when a CUDA transport first waits.

Deliberate differences from the upstream design:
- generation exhaustion is detected before the range and slot are taken, so the failed allocation
  leaves the pool's accounting exactly as it was (upstream leaks both);
- a pool may be given a `lease_timeout`: a published lease that is still unacknowledged that many
  seconds later is reclaimed by the recycler (see `runtime.transport.host`, whose consumers may
  die); the default, None, keeps the upstream behaviour of waiting forever;
- the consumer rank is always explicit: there is no distributed state to ask for it;
- a 0-d tensor can be transported (its one element is copied); upstream's byte view of the source
  (`view(torch.uint8)`) refuses 0-d tensors of wider dtypes.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import NamedTuple, Protocol, Self

import torch

from runtime.errors import (
    CancelInactiveLease,
    ConsumerCountNotPositive,
    ConsumerRankOutOfRange,
    ConsumerRankUnresolved,
    EmptyTensorTransport,
    InvalidLeaseOffsets,
    InvalidPoolByteTensor,
    MaxInflightSlicesNotPositive,
    MemorySizeNotPositive,
    PartialConsumerAcknowledgement,
    PoolTooSmallForControlRegion,
    PoolTransportArguments,
    RecycleIntervalNotPositive,
    ReleaseInactiveLease,
    SlotGenerationExhausted,
    StreamMemoryOperationFailed,
    TotalConsumerCountNotPositive,
    TransportRequiresCudaTensor,
)

logger = logging.getLogger(__name__)

CONTROL_WORD_BYTES = 4
"""Size of one READY or ACK word (int32), in bytes."""
DATA_ALIGNMENT = 256
"""Alignment of the data region and of every lease's start, in bytes."""
CUDA_IPC_TRANSPORT_NAME = "CUDA IPC"
"""Transport name used in messages (e.g. ``CUDA IPC requires a CUDA tensor``)."""
DEFAULT_MAX_INFLIGHT_SLICES = 4096
"""Default number of slots, i.e. of leases that may be live at once."""
MAX_SLOT_GENERATION = 0x7FFFFFFF
"""Largest generation a slot may carry: generations must stay positive int32 values."""
_VIEW_CACHE_SIZE = 256
"""Most (range, dtype, shape) views a pool keeps for reuse by `copy_tensor`."""

ViewKey = tuple[int, int, torch.dtype, torch.Size]
"""`(start, nbytes, dtype, shape)` of a cached view pair."""


CU_STREAM_WAIT_VALUE_GEQ = 0x0
"""`cuStreamWaitValue32` flag: wait until `(int32)(*address - value) >= 0`."""
_CUDA_SUCCESS = 0


def align_up(value: int, alignment: int) -> int:
    """Round `value` up to the next multiple of `alignment`."""
    return ((value + alignment - 1) // alignment) * alignment


def control_region_bytes(max_inflight_slices: int, consumer_count: int) -> int:
    """Bytes before the data region: the control words rounded up to `DATA_ALIGNMENT`."""
    words = max_inflight_slices * (1 + consumer_count)
    return align_up(words * CONTROL_WORD_BYTES, DATA_ALIGNMENT)


def resolve_consumer_rank(
    total_consumer_count: int,
    consumer_rank: int | None = None,
    transport_name: str = "GPU",
) -> int:
    """Return the consumer rank whose ACK word a single consumer writes.

    With one consumer the rank is always 0. Otherwise the rank must be given: this runtime has no
    distributed state to look it up in, so a missing rank is reported as the upstream error for
    an uninitialised parallel state.
    """
    if total_consumer_count == 1:
        return 0
    if consumer_rank is None:
        raise ConsumerRankUnresolved(transport_name=transport_name)
    rank = int(consumer_rank)
    if not 0 <= rank < total_consumer_count:
        raise ConsumerRankOutOfRange(
            transport_name=transport_name, rank=rank, total_consumer_count=total_consumer_count
        )
    return rank


@functools.lru_cache(maxsize=1)
def _cuda_driver() -> ctypes.CDLL:
    """The CUDA driver library; torch has loaded it already wherever CUDA runs."""
    return ctypes.CDLL("libcuda.so.1")


@functools.lru_cache(maxsize=1)
def _stream_wait_value32_entry() -> Callable[..., int]:
    # `cuStreamWaitValue32_v2` is what CUDA 12+ headers mean by `cuStreamWaitValue32` and needs
    # no driver option; the plain symbol is the v1 ABI, the only one of older drivers.
    driver = _cuda_driver()
    entry = getattr(driver, "cuStreamWaitValue32_v2", None)
    if entry is None:
        entry = driver.cuStreamWaitValue32
    entry.argtypes = (ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint)
    entry.restype = ctypes.c_int
    return entry


def _cu_result_name(result: int) -> str:
    """`CUresult.CUDA_ERROR_...` for a driver status, `CUresult(<n>)` where no driver tells."""
    try:
        get_name = _cuda_driver().cuGetErrorName
    except (OSError, AttributeError):
        return f"CUresult({result})"
    name = ctypes.c_char_p()
    get_name.argtypes = (ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))
    get_name.restype = ctypes.c_int
    if get_name(result, ctypes.byref(name)) != _CUDA_SUCCESS or name.value is None:
        return f"CUresult({result})"
    return f"CUresult.{name.value.decode('ascii', 'replace')}"


def check_drv(result: int, label: str) -> None:
    """Raise `RuntimeError("{label}: {err}")` unless the driver call returned CUDA_SUCCESS."""
    if result != _CUDA_SUCCESS:
        raise StreamMemoryOperationFailed(label=label, err=_cu_result_name(result))


def stream_wait_value32(device_id: int, address: int, value: int, transport_name: str) -> None:
    """Make device `device_id`'s current stream wait until the int32 at `address` >= `value`.

    `cuStreamWaitValue32` with `CU_STREAM_WAIT_VALUE_GEQ`: a device-side wait, queued without a
    host round-trip, that later work on the stream does not pass until some agent (a kernel of
    any stream or process) has stored a value `v` with `(int32)(v - value) >= 0` at `address`.
    """
    stream = torch.cuda.current_stream(device_id).cuda_stream
    result = _stream_wait_value32_entry()(
        stream, address, value & 0xFFFFFFFF, CU_STREAM_WAIT_VALUE_GEQ
    )
    check_drv(result, f"cuStreamWaitValue32(mm {transport_name})")


def validate_pool_arguments(
    *,
    memory_size: int,
    consumer_count: int,
    max_inflight_slices: int,
    recycle_interval: float,
) -> None:
    """Reject non-positive pool sizes and intervals.

    The pool checks these itself; transports call this first as well, before they allocate a
    buffer of `memory_size` bytes, so a bad size fails with the pool's message and not the
    allocator's.
    """
    if memory_size <= 0:
        raise MemorySizeNotPositive()
    if consumer_count <= 0:
        raise ConsumerCountNotPositive()
    if max_inflight_slices <= 0:
        raise MaxInflightSlicesNotPositive()
    if recycle_interval <= 0:
        raise RecycleIntervalNotPositive()


class ControlWords(Protocol):
    """What a consumer needs from a transport: the buffer and its control words.

    Offsets are byte offsets from the start of `byte_tensor` and are multiples of
    `CONTROL_WORD_BYTES`.
    """

    transport_name: str
    """Name used in messages and in the recycler thread's name (e.g. ``"CUDA IPC"``)."""
    byte_tensor: torch.Tensor
    """The whole pool buffer: a contiguous 1-D uint8 tensor."""

    def device_context(self) -> AbstractContextManager[object]:
        """Context in which the transport's tensor operations run (e.g. the pool's GPU)."""
        ...

    def write_word(self, byte_offset: int, value: int) -> None:
        """Store `value`, ordered after all earlier work of the caller (stream or thread)."""
        ...

    def wait_ready(self, byte_offset: int, generation: int) -> None:
        """Order the caller's later work after the READY word at `byte_offset` reached
        `generation`."""
        ...

    def confirm_ready(self, byte_offset: int, generation: int) -> None:
        """After a copy-out: fail if the lease was taken away while it was being read."""
        ...

    def copy_out(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        """Copy bytes out of the pool, ordered after `wait_ready` and before the next word."""
        ...


class PoolTransport(ControlWords, Protocol):
    """What the producer-side pool needs on top of `ControlWords`."""

    requires_cuda_source: bool
    """Whether `copy_tensor` accepts only CUDA tensors."""

    def copy_in(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        """Copy bytes into the pool, ordered before the following `publish_ready`.

        Called outside `device_context()`: the transport selects its device itself.
        """
        ...

    def publish_ready(self, byte_offset: int, generation: int) -> None:
        """Set a READY word once the bytes copied before it are visible to consumers."""
        ...

    def synchronize(self) -> None:
        """Wait until all work issued so far on the pool's device has finished."""
        ...

    def prepare_recycler_thread(self) -> None:
        """Per-thread setup for the recycler (e.g. selecting the pool's GPU)."""
        ...


def _is_pool_buffer(byte_tensor: torch.Tensor, memory_size: int, device_id: int) -> bool:
    # Metadata only: this must not touch the CUDA runtime, so it can fail on a CPU-only host.
    return (
        byte_tensor.is_cuda
        and byte_tensor.device.index == device_id
        and byte_tensor.dtype == torch.uint8
        and byte_tensor.is_contiguous()
        and byte_tensor.numel() >= memory_size
    )


class CudaStreamTransport:
    """`PoolTransport` over a uint8 tensor on one GPU, in the current stream's order.

    `base_address` is the buffer's device address in this process (`byte_tensor.data_ptr()`,
    the default); control words are awaited at `base_address + offset`.
    """

    requires_cuda_source = True
    """`copy_tensor` rejects host tensors: the copy must be device-to-device and asynchronous."""

    def __init__(
        self,
        byte_tensor: torch.Tensor,
        *,
        memory_size: int,
        device_id: int,
        transport_name: str = CUDA_IPC_TRANSPORT_NAME,
        base_address: int | None = None,
    ) -> None:
        if not _is_pool_buffer(byte_tensor, memory_size, device_id):
            raise InvalidPoolByteTensor(device_id=device_id)
        self.transport_name = transport_name
        """Name in messages and in the recycler thread's name."""
        self.byte_tensor = byte_tensor
        self.device_id = device_id
        # data_ptr() reads tensor metadata; it starts no CUDA work.
        self.base_address = byte_tensor.data_ptr() if base_address is None else base_address
        whole_words = byte_tensor.numel() // CONTROL_WORD_BYTES * CONTROL_WORD_BYTES
        self._words = byte_tensor[:whole_words].view(torch.int32)

    def device_context(self) -> AbstractContextManager[object]:
        """Select the pool's GPU."""
        return torch.cuda.device(self.device_id)

    def write_word(self, byte_offset: int, value: int) -> None:
        """Queue a one-element `fill_` of the word on the current stream."""
        with torch.cuda.device(self.device_id):
            self._words[byte_offset // CONTROL_WORD_BYTES].fill_(value)

    def publish_ready(self, byte_offset: int, generation: int) -> None:
        """Queue the READY store on the current stream, after the copy queued there."""
        self.write_word(byte_offset, generation)

    def wait_ready(self, byte_offset: int, generation: int) -> None:
        """Make the current stream wait until this lease's READY word reaches `generation`."""
        with torch.cuda.device(self.device_id):
            stream_wait_value32(
                self.device_id, self.base_address + byte_offset, generation, self.transport_name
            )

    def confirm_ready(self, byte_offset: int, generation: int) -> None:
        """Nothing to check: CUDA IPC leases are never reclaimed before acknowledgement."""

    def copy_in(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        """Queue the copy on the pool GPU's current stream; READY is queued after it."""
        with torch.cuda.device(self.device_id):
            destination.copy_(source, non_blocking=True)

    def copy_out(self, destination: torch.Tensor, source: torch.Tensor) -> None:
        """Queue the copy on the current stream, after the READY wait and before the ACK."""
        destination.copy_(source, non_blocking=True)

    def synchronize(self) -> None:
        """Wait for all work on the pool's GPU."""
        torch.cuda.synchronize(self.device_id)

    def prepare_recycler_thread(self) -> None:
        """Make the pool's GPU current for the recycler thread."""
        torch.cuda.set_device(self.device_id)


class PoolLease(NamedTuple):
    """One live allocation: a slot with its generation and a byte range of the data region.

    Two leases are the same lease only if every field matches, which is how release and cancel
    recognise a stale lease for a reused slot. Upstream's lease is a frozen dataclass; a named
    tuple is just as immutable and compares the same way, and it is built several times faster,
    which counts because `copy_tensor` builds one per tensor.
    """

    start: int
    """First byte of the range, from the start of the buffer (a multiple of 256)."""
    end: int
    """One past the last byte of the range: `start + align_up(nbytes, 256)`."""
    nbytes: int
    """Bytes of tensor data, unaligned (`<= end - start`)."""
    slot: int
    """Row of the control region, 0-based."""
    generation: int
    """Use count of the slot, 1-based; the value every protocol word of this lease carries."""
    ready_byte_offset: int
    """Byte offset of the READY word from the start of the buffer."""
    ack_byte_offset: int
    """Byte offset of consumer rank 0's ACK word; rank r's is at `ack_byte_offset + 4 * r`."""


class StreamOrderedMmFeaturePool:
    """Best-fit pool of byte ranges and slots over a transport's buffer, with a recycler thread.

    Keyword arguments, as upstream: `memory_size` (bytes of the buffer the pool may use),
    `byte_tensor` (the buffer: a contiguous uint8 CUDA tensor of at least `memory_size` bytes),
    `base_address` (its device address, `byte_tensor.data_ptr()`), `device_id` (its GPU),
    `consumer_count` (ACK words per slot), `recycle_interval` (seconds between recycler passes),
    `transport_name` (named in messages, e.g. ``"CUDA IPC"``) and `max_inflight_slices` (slots).

    The project's extensions, both optional: `transport` instead of the four buffer arguments
    (any `PoolTransport`, such as the host transport), and `lease_timeout` (seconds a published
    lease may stay unacknowledged before the recycler reclaims it; None, the default, waits
    forever as upstream does).

    Use it as a context manager, or call `shutdown()`, to stop the recycler thread.
    """

    def __init__(
        self,
        *,
        memory_size: int,
        consumer_count: int,
        recycle_interval: float,
        byte_tensor: torch.Tensor | None = None,
        base_address: int | None = None,
        device_id: int | None = None,
        transport_name: str | None = None,
        max_inflight_slices: int = DEFAULT_MAX_INFLIGHT_SLICES,
        transport: PoolTransport | None = None,
        lease_timeout: float | None = None,
    ) -> None:
        buffer_arguments = (byte_tensor, base_address, device_id, transport_name)
        if transport is None:
            if any(argument is None for argument in buffer_arguments):
                raise PoolTransportArguments()
        elif any(argument is not None for argument in buffer_arguments):
            raise PoolTransportArguments()
        validate_pool_arguments(
            memory_size=memory_size,
            consumer_count=consumer_count,
            max_inflight_slices=max_inflight_slices,
            recycle_interval=recycle_interval,
        )
        if transport is None:
            assert byte_tensor is not None and device_id is not None
            assert base_address is not None and transport_name is not None
            transport = CudaStreamTransport(
                byte_tensor,
                memory_size=memory_size,
                device_id=device_id,
                transport_name=transport_name,
                base_address=base_address,
            )
        transport_name = transport.transport_name
        self.transport_name = transport_name
        self.memory_size = memory_size
        self.consumer_count = consumer_count
        self.max_inflight_slices = max_inflight_slices
        self.data_start = control_region_bytes(max_inflight_slices, consumer_count)
        if memory_size <= self.data_start:
            raise PoolTooSmallForControlRegion(
                transport_name=transport_name, memory_size=memory_size, data_start=self.data_start
            )
        self.usable_size = memory_size - self.data_start
        self._transport: PoolTransport = transport
        self._recycle_interval = recycle_interval
        self._lease_timeout = lease_timeout
        row_words = 1 + consumer_count
        self._row_bytes = row_words * CONTROL_WORD_BYTES
        control_words = max_inflight_slices * row_words
        control_bytes = control_words * CONTROL_WORD_BYTES
        # A view, not a copy: the recycler must read what consumers wrote into the buffer.
        self._control = transport.byte_tensor[:control_bytes].view(torch.int32).view(-1, row_words)
        self._available_ranges: list[tuple[int, int]] = [(self.data_start, memory_size)]
        # Popped from the end, so the first leases get slots 0, 1, 2, ...; released slots are
        # appended, so reuse is LIFO and recently used rows stay warm.
        self._available_slots: list[int] = list(reversed(range(max_inflight_slices)))
        self._slot_generations: list[int] = [0] * max_inflight_slices
        self._occupied: dict[int, PoolLease] = {}
        # Monotonic seconds after which a published, unacknowledged lease is reclaimed.
        self._deadlines: dict[int, float] = {}
        # (start, nbytes, dtype, shape) -> (byte view, typed view), see `_new_views`.
        self._views: dict[ViewKey, tuple[torch.Tensor, torch.Tensor]] = {}
        self._buffer_address = transport.byte_tensor.data_ptr()
        self._lock = threading.Lock()
        self._recycler_stop_event = threading.Event()
        with transport.device_context():
            self._control.zero_()
        # The zeroed words must be in place before any consumer or the recycler reads them.
        transport.synchronize()
        self._recycler = threading.Thread(
            target=self._recycle_loop,
            name=f"{transport_name}MmFeaturePoolRecycler",
            daemon=True,
        )
        self._recycler.start()

    # -- allocation ---------------------------------------------------------------------------

    def _allocate_locked(self, nbytes: int) -> PoolLease | None:
        alloc = (nbytes + DATA_ALIGNMENT - 1) // DATA_ALIGNMENT * DATA_ALIGNMENT  # align_up
        ranges = self._available_ranges
        slots = self._available_slots
        if not slots:
            return None
        if len(ranges) == 1:
            # The common case of a pool that is mostly free: no search.
            best_index = 0 if ranges[0][1] - ranges[0][0] >= alloc else -1
        else:
            best_index = -1
            best_length = 0
            for index, (start, end) in enumerate(ranges):
                length = end - start
                # Strictly smaller wins, so among equal lengths the lowest list index is kept.
                if length >= alloc and (best_index < 0 or length < best_length):
                    best_index, best_length = index, length
        if best_index < 0:
            return None
        slot = slots[-1]
        generation = self._slot_generations[slot] + 1
        if generation > MAX_SLOT_GENERATION:
            raise SlotGenerationExhausted(transport_name=self.transport_name)
        slots.pop()
        start, end = ranges.pop(best_index)
        if start + alloc < end:
            ranges.append((start + alloc, end))
        self._slot_generations[slot] = generation
        ready_byte_offset = slot * self._row_bytes
        lease = PoolLease(
            start,
            start + alloc,
            nbytes,
            slot,
            generation,
            ready_byte_offset,
            ready_byte_offset + CONTROL_WORD_BYTES,
        )
        self._occupied[slot] = lease
        return lease

    def _release_locked(self, lease: PoolLease) -> None:
        current = self._occupied.get(lease.slot)
        if current is not lease and current != lease:
            raise ReleaseInactiveLease(transport_name=self.transport_name, lease=lease)
        del self._occupied[lease.slot]
        self._deadlines.pop(lease.slot, None)
        self._available_slots.append(lease.slot)
        self._available_ranges.append((lease.start, lease.end))

    def _merge_ranges_locked(self) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(self._available_ranges):
            if merged and merged[-1][1] == start:
                merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        self._available_ranges = merged

    def release(self, lease: PoolLease) -> None:
        """Free a live lease now, whatever its control words say, and merge free ranges."""
        with self._lock:
            self._release_locked(lease)
            self._merge_ranges_locked()

    # -- recycling ----------------------------------------------------------------------------

    def _recycle_ready_leases_locked(self) -> None:
        if not self._occupied:
            return
        leases = list(self._occupied.values())
        device = self._control.device
        slots = torch.tensor([lease.slot for lease in leases], dtype=torch.long, device=device)
        generations = torch.tensor(
            [lease.generation for lease in leases], dtype=torch.int32, device=device
        )
        rows = self._control.index_select(0, slots)
        # Exact equality, not >=: a word from a later generation cannot belong to this lease.
        complete: list[bool] = (rows == generations.unsqueeze(1)).all(dim=1).tolist()
        now = time.monotonic()
        for lease, done in zip(leases, complete, strict=True):
            if done:
                self._release_locked(lease)
            elif now >= self._deadlines.get(lease.slot, float("inf")):
                self._reclaim_locked(lease)
        self._merge_ranges_locked()

    def _reclaim_locked(self, lease: PoolLease) -> None:
        logger.warning(
            "%s pool reclaims lease (slot=%d, generation=%d): not acknowledged within %.3f s",
            self.transport_name,
            lease.slot,
            lease.generation,
            self._lease_timeout,
        )
        # Mark the slot revoked before its range can be reused, so that a slow consumer that is
        # still reading notices (`confirm_ready`) instead of returning overwritten bytes.
        self._transport.write_word(lease.ready_byte_offset, -lease.generation)
        self._release_locked(lease)

    def recycle(self) -> None:
        """Run one recycler pass now: free acknowledged leases and reclaim expired ones."""
        with self._lock, self._transport.device_context():
            self._recycle_ready_leases_locked()

    def _recycle_loop(self) -> None:
        self._transport.prepare_recycler_thread()
        while not self._recycler_stop_event.is_set():
            try:
                self.recycle()
            except Exception:
                # The thread must outlive one bad pass, or every later lease would leak.
                logger.warning(
                    "%s multimodal pool recycle failed", self.transport_name, exc_info=True
                )
            self._recycler_stop_event.wait(self._recycle_interval)

    # -- producer API -------------------------------------------------------------------------

    def copy_tensor(self, tensor: torch.Tensor) -> tuple[PoolLease | None, torch.Tensor | None]:
        """Copy `tensor`'s bytes into the pool and publish READY after them.

        Returns the lease and the uint8 view of its bytes, or `(None, None)` when no free range
        or slot is large enough: that is back-pressure, and the caller falls back to another
        transport. The view must not be used once the lease has been recycled, nor changed in
        place (`resize_`, `set_`): a later lease of the same byte range may be handed the same
        view object.
        """
        # The hot path of every transport: locals instead of repeated attribute lookups, one
        # lock round-trip, no device context of its own, and, once a byte range has been used
        # for a tensor of the same dtype and shape, no new tensor object at all (see `_views`).
        transport = self._transport
        if transport.requires_cuda_source and not tensor.is_cuda:
            raise TransportRequiresCudaTensor(transport_name=self.transport_name)
        source = tensor.contiguous()
        nbytes = source.nbytes
        if nbytes == 0:
            raise EmptyTensorTransport(transport_name=self.transport_name)
        with self._lock:
            lease = self._allocate_locked(nbytes)
        if lease is None:
            return None, None
        start = lease.start
        try:
            key = (start, nbytes, source.dtype, source.shape)
            views = self._views.get(key)
            # A cached byte view is reused only while it still covers exactly this range: the
            # caller it was handed to may have changed it in place (`set_`, `resize_`).
            if (
                views is None
                or views[0].data_ptr() != self._buffer_address + start
                or views[0].numel() != nbytes
            ):
                views = self._new_views(key)
            destination, typed = views
            # Same dtype and shape on both sides: a plain bitwise copy, ordered before READY.
            transport.copy_in(typed, source)
            transport.publish_ready(lease.ready_byte_offset, lease.generation)
        except BaseException:
            with self._lock:
                self._release_locked(lease)
                self._merge_ranges_locked()
            raise
        if self._lease_timeout is not None:
            # No lock needed: until this method returns nobody else holds the lease (no proxy,
            # so no ACK, and no deadline yet), so it cannot have been released or reclaimed,
            # and one dict store is atomic for the recycler, which only reads it under the lock.
            self._deadlines[lease.slot] = time.monotonic() + self._lease_timeout
        return lease, destination

    def _new_views(self, key: ViewKey) -> tuple[torch.Tensor, torch.Tensor]:
        """Build, cache and return the byte view of a range and its view as `dtype`/`shape`.

        Creating a tensor view costs about a microsecond, as much as the rest of `copy_tensor`'s
        bookkeeping, and steady traffic reuses the same ranges (best fit, LIFO slots) for
        tensors of the same layout; so the views are kept, at most `_VIEW_CACHE_SIZE` of them.
        The typed view never leaves the pool; leases own distinct ranges, so two live leases
        never share a view. A range's start is a multiple of 256, so any dtype fits it.
        """
        start, nbytes, dtype, shape = key
        destination = self._transport.byte_tensor[start : start + nbytes]
        typed = destination.view(dtype).view(shape)  # a 0-d shape views the one element
        views = self._views
        if len(views) >= _VIEW_CACHE_SIZE:
            del views[next(iter(views))]  # the oldest entry: insertion order
        views[key] = (destination, typed)
        return destination, typed

    def cancel_lease(
        self, *, ready_byte_offset: int, ack_byte_offset: int, generation: int
    ) -> None:
        """Acknowledge, for every consumer, a lease that was never dispatched.

        The acknowledgements are ordered after the lease's READY word; the recycler frees it.
        """
        stride = (1 + self.consumer_count) * CONTROL_WORD_BYTES
        if (
            ready_byte_offset % stride != 0
            or ack_byte_offset != ready_byte_offset + CONTROL_WORD_BYTES
        ):
            raise InvalidLeaseOffsets(transport_name=self.transport_name)
        slot = ready_byte_offset // stride
        with self._lock:
            lease = self._occupied.get(slot)
            if (
                lease is None
                or lease.generation != generation
                or lease.ready_byte_offset != ready_byte_offset
                or lease.ack_byte_offset != ack_byte_offset
            ):
                raise CancelInactiveLease(
                    transport_name=self.transport_name, slot=slot, generation=generation
                )
        with self._transport.device_context():
            self._transport.wait_ready(ready_byte_offset, generation)
            for rank in range(self.consumer_count):
                rank_offset = ack_byte_offset + rank * CONTROL_WORD_BYTES
                self._transport.write_word(rank_offset, generation)

    def shutdown(self) -> None:
        """Stop the recycler thread and wait for it; idempotent."""
        self._recycler_stop_event.set()
        if self._recycler.is_alive() and self._recycler is not threading.current_thread():
            self._recycler.join()

    def __enter__(self) -> StreamOrderedMmFeaturePool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    @property
    def transport(self) -> PoolTransport:
        """The transport the pool runs on (built from the buffer arguments when not given)."""
        return self._transport

    @property
    def active_lease_count(self) -> int:
        """Number of live leases (allocated and not yet recycled)."""
        with self._lock:
            return len(self._occupied)

    @property
    def available_ranges(self) -> list[tuple[int, int]]:
        """Free `(start, end)` byte ranges, in allocation-list order (merged by the recycler)."""
        with self._lock:
            return list(self._available_ranges)

    @property
    def available_slot_count(self) -> int:
        """Number of free slots."""
        with self._lock:
            return len(self._available_slots)

    def live_leases(self) -> list[PoolLease]:
        """Snapshot of the live leases, ordered by slot."""
        with self._lock:
            return [self._occupied[slot] for slot in sorted(self._occupied)]


class StreamOrderedPoolConsumerMixin:
    """Consumer side of the protocol, for the proxies that transports send to consumers.

    A proxy records its lease's control offsets and generation; the consumer waits for READY,
    copies the bytes out, and writes its ACK word(s), each step ordered after the previous one.
    """

    transport_name: str
    ready_byte_offset: int
    ack_byte_offset: int
    generation: int
    total_consumer_count: int
    _consumer_acknowledged: bool

    def _init_stream_ordered_consumer(
        self,
        *,
        ready_byte_offset: int,
        ack_byte_offset: int,
        generation: int,
        total_consumer_count: int,
        transport_name: str,
    ) -> None:
        if total_consumer_count <= 0:
            raise TotalConsumerCountNotPositive()
        self.ready_byte_offset = ready_byte_offset
        self.ack_byte_offset = ack_byte_offset
        self.generation = generation
        self.total_consumer_count = total_consumer_count
        self.transport_name = transport_name
        self._consumer_acknowledged = False

    def __getstate__(self) -> dict[str, object]:
        # Acknowledgement is the holder's state: a pickled copy goes to another consumer, which
        # has acknowledged nothing yet.
        state = dict(self.__dict__)
        state["_consumer_acknowledged"] = False
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    def _wait_until_ready(self, words: ControlWords) -> None:
        words.wait_ready(self.ready_byte_offset, self.generation)

    def _acknowledge_on_stream(
        self,
        words: ControlWords,
        consumer_count: int,
        consumer_rank: int | None = None,
    ) -> None:
        if self._consumer_acknowledged:
            return
        ranks: Sequence[int]
        if consumer_count == self.total_consumer_count:
            ranks = range(self.total_consumer_count)
        elif consumer_count == 1:
            ranks = [
                resolve_consumer_rank(self.total_consumer_count, consumer_rank, self.transport_name)
            ]
        else:
            raise PartialConsumerAcknowledgement(
                transport_name=self.transport_name,
                consumer_count=consumer_count,
                total_consumer_count=self.total_consumer_count,
            )
        for rank in ranks:
            words.write_word(self.ack_byte_offset + rank * CONTROL_WORD_BYTES, self.generation)
        self._consumer_acknowledged = True

    def _copy_out_and_acknowledge(
        self,
        words: ControlWords,
        *,
        pool_byte_offset: int,
        nbytes: int,
        shape: Sequence[int],
        dtype: torch.dtype,
        consumer_count: int,
        consumer_rank: int | None,
    ) -> torch.Tensor:
        """Wait for READY, copy the lease's bytes into a new tensor, then acknowledge."""
        with words.device_context():
            self._wait_until_ready(words)
            result = torch.empty(tuple(shape), dtype=dtype, device=words.byte_tensor.device)
            source = words.byte_tensor[pool_byte_offset : pool_byte_offset + nbytes]
            words.copy_out(result.reshape(-1).view(torch.uint8), source)
            words.confirm_ready(self.ready_byte_offset, self.generation)
            self._acknowledge_on_stream(words, consumer_count, consumer_rank)
        return result


class PoolOwner:
    """The producer-side wrapper both transports share: one pool, its leases and its lifetime."""

    pool: StreamOrderedMmFeaturePool

    def _cancel(self, proxy: StreamOrderedPoolConsumerMixin) -> None:
        """Give back the lease of a proxy already known to come from this pool."""
        self.pool.cancel_lease(
            ready_byte_offset=proxy.ready_byte_offset,
            ack_byte_offset=proxy.ack_byte_offset,
            generation=proxy.generation,
        )

    @property
    def active_lease_count(self) -> int:
        """Number of live leases."""
        return self.pool.active_lease_count

    def shutdown(self) -> None:
        """Stop the recycler thread; buffers are freed with the last tensor that maps them."""
        self.pool.shutdown()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()
