"""CUDA IPC transport: the stream-ordered pool on a GPU, shared with consumers by CUDA IPC.

The producer allocates the pool on `cuda:{base_gpu_id}` and exports it once
(`UntypedStorage._share_cuda_`); each proxy carries that handle, so a consumer process maps the
pool once (cached per device) and copies its tensor out on its own stream.

Stream order. Every step of the protocol is queued on a CUDA stream, so it needs neither a host
round-trip nor a device-wide sync:
- a word is written with `fill_` on a one-element int32 view of the buffer: one tiny kernel on
  the current stream, ordered after the data copy queued before it on that stream, with the
  value passed as a kernel argument, so no host staging buffer has to outlive the call;
- a consumer (or `cancel_lease`) waits on its own lease's READY word, as upstream does: the
  driver's `cuStreamWaitValue32(address of READY, generation, GEQ)` on its current stream
  (`memory_pool.stream_wait_value32`, the driver reached through `ctypes`, so nothing beyond
  torch and the driver it already loaded is needed);
- the recycler reads the control rows with an ordinary gather on the pool's device.

Why a consumer never reads early, whatever the number of producer streams. A lease's READY word
is written once per generation, by the `fill_` that `copy_tensor` queues on the very stream
that queued the lease's copy, right after it; so READY reaches the lease's generation only once
that copy has finished, on whichever stream it ran. The consumer's wait is satisfied by that
word alone, once it is >= the lease's generation; until then the word holds an earlier
generation of the slot (or 0), which is smaller (generations stay below 2**31, so the driver's
cyclic comparison agrees). No other lease's publication, on any stream, can satisfy it: it
writes other words. And the slot, with its word, is not reused before this consumer's ACK,
which its stream queues after the wait and the copy-out. The wait is also never queued before
the store it waits for (a proxy exists only once `copy_tensor` has queued the store), so it
cannot hold up that store even if both streams share a hardware queue, which is the deadlock
the driver's documentation warns of. (The previous design waited on one interprocess event for
the whole pool, re-recorded at each publication: with producers on two streams, a record on the
fast stream could satisfy a consumer whose lease was still being copied on the slow one.)

Host polling of a pinned mirror was the alternative; it would block a CPU thread per consumer
and add a host round-trip to every lease, which is what the stream-ordered design avoids.

Importing this module needs only a CPU torch: every CUDA call happens inside a function, and the
checks that reject bad input (`byte_tensor`, non-CUDA tensors, the proxy's types) run before any.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Sequence
from typing import Any, cast

import torch

from runtime.errors import (
    ForeignCudaIpcProxy,
    ProxyDataNotTensor,
    TokenizerWorkerNumNotPositive,
    TotalPoolSizeNotPositive,
)
from runtime.transport.memory_pool import (
    CUDA_IPC_TRANSPORT_NAME as CUDA_IPC_TRANSPORT_NAME,
)
from runtime.transport.memory_pool import (
    DEFAULT_MAX_INFLIGHT_SLICES,
    PoolOwner,
    StreamOrderedMmFeaturePool,
    StreamOrderedPoolConsumerMixin,
    validate_pool_arguments,
)
from runtime.transport.memory_pool import (
    CudaStreamTransport as CudaStreamTransport,
)

logger = logging.getLogger(__name__)


_NUMBER_KINDS = {int: "integer", float: "float"}
"""How upstream's `EnvInt` and `EnvFloat` name their kind in the warning."""


def _env_number(name: str, default: str, kind: type[int] | type[float]) -> int | float:
    """Read a numeric setting as upstream's `EnvInt`/`EnvFloat` do: `int(raw)` or `float(raw)`
    of the unset-or-raw value, and for an unparsable one the same warning and the default.

    The settings are read when the module is imported, where an exception would make the
    whole transport unimportable over a typo such as `SGLANG_MM_FEATURE_CACHE_MB=0.5`.
    """
    raw = os.environ.get(name)
    if raw is None:
        return kind(default)
    try:
        return kind(raw)
    except ValueError:
        warnings.warn(
            f'Invalid value for {name}: "{raw}" is not a valid {_NUMBER_KINDS[kind]} value, '
            f'using default "{default}"',
            stacklevel=2,
        )
        return kind(default)


MM_FEATURE_CACHE_SIZE = int(_env_number("SGLANG_MM_FEATURE_CACHE_MB", "1024", int)) * 1024 * 1024
"""Total pool size in bytes, from `SGLANG_MM_FEATURE_CACHE_MB` (MiB, default 1024)."""
MM_ITEM_MEMORY_POOL_RECYCLE_INTERVAL = float(
    _env_number("SGLANG_MM_ITEM_MEM_POOL_RECYCLE_INTERVAL_SEC", "0.05", float)
)
"""Seconds between recycler passes, from `SGLANG_MM_ITEM_MEM_POOL_RECYCLE_INTERVAL_SEC`."""
DEFER_CUDA_IPC_FEATURE_RECONSTRUCTION_KEY = "_sglang_defer_cuda_ipc_feature_reconstruction"
"""Marker key: the consumer reconstructs the feature later, on its own device."""
PRECOMPUTED_FEATURE_HASHES_KEY = "_sglang_precomputed_feature_hashes"
"""Marker key: feature hashes computed by the producer before transport."""


def get_mm_feature_pool_size_per_worker(total_pool_size: int, tokenizer_worker_num: int) -> int:
    """Split the total pool size (bytes) evenly between tokenizer workers."""
    if total_pool_size <= 0:
        raise TotalPoolSizeNotPositive()
    if tokenizer_worker_num <= 0:
        raise TokenizerWorkerNumNotPositive()
    return total_pool_size // tokenizer_worker_num


class CudaIpcTensorTransportProxy(StreamOrderedPoolConsumerMixin):
    """A tensor published in a CUDA IPC pool, as sent to its consumers.

    `data` is the uint8 view of the lease's bytes and `info_data` the original tensor, whose
    shape and dtype the consumer rebuilds. Neither is pickled: only `proxy_state`, the lease's
    control offsets and its generation travel.
    """

    def __init__(
        self,
        data: torch.Tensor,
        info_data: torch.Tensor,
        pool_ipc_handle: tuple[Any, ...],
        pool_byte_offset: int,
        ready_byte_offset: int,
        ack_byte_offset: int,
        generation: int,
        total_consumer_count: int,
        use_pool_handle_cache: bool = True,
    ) -> None:
        if not isinstance(data, torch.Tensor) or not isinstance(info_data, torch.Tensor):
            data_type = type(data)
            raise ProxyDataNotTensor(data_type=data_type)
        self._init_stream_ordered_consumer(
            ready_byte_offset=ready_byte_offset,
            ack_byte_offset=ack_byte_offset,
            generation=generation,
            total_consumer_count=total_consumer_count,
            transport_name=CUDA_IPC_TRANSPORT_NAME,
        )
        self.proxy_state: dict[str, Any] = {
            "ipc_extra": {
                "pool_handle": pool_ipc_handle,
                "pool_byte_offset": pool_byte_offset,
                "shape": tuple(data.shape),
                "dtype": data.dtype,
                "stride": tuple(data.stride()),
                "storage_offset": 0,
                "nbytes": data.numel() * data.element_size(),
                "recons_shape": tuple(info_data.shape),
                "recons_dtype": info_data.dtype,
                "use_pool_handle_cache": use_pool_handle_cache,
            }
        }
        # Device index -> tensor already rebuilt there by this proxy.
        self._reconstructed: dict[int, torch.Tensor] = {}

    def __getstate__(self) -> dict[str, object]:
        state = super().__getstate__()
        state["_reconstructed"] = {}  # tensors on this process's devices stay here
        return state

    def reconstruct_on_target_device(
        self,
        rebuild_device_idx: int | str | torch.device,
        consumer_count: int = 1,
        consumer_rank: int | None = None,
    ) -> torch.Tensor:
        """Copy the tensor out of the pool onto CUDA device `rebuild_device_idx`, then acknowledge.

        `consumer_count` is 1 (this consumer acknowledges for `consumer_rank`) or the whole
        group (this call acknowledges for every rank). The result is cached per device. Besides
        upstream's device index, a device name or `torch.device` is accepted.
        """
        device_index = _cuda_device_index(rebuild_device_idx)
        cached = self._reconstructed.get(device_index)
        if cached is not None:
            return cached
        extra = self.proxy_state["ipc_extra"]
        transport, cached_mapping = _open_pool(device_index, extra)
        result = self._copy_out_and_acknowledge(
            transport,
            pool_byte_offset=extra["pool_byte_offset"],
            nbytes=extra["nbytes"],
            shape=extra["recons_shape"],
            dtype=extra["recons_dtype"],
            consumer_count=consumer_count,
            consumer_rank=consumer_rank,
        )
        if not cached_mapping:
            # The mapping is dropped on return; the copy and ACK queued on it must finish first.
            torch.cuda.current_stream(device_index).synchronize()
        self._reconstructed[device_index] = result
        return result

    def acknowledge_consumption(
        self,
        consumer_count: int = 1,
        consumer_rank: int | None = None,
        *,
        dev: int | str | torch.device | None = None,
    ) -> None:
        """Acknowledge without copying the tensor out (e.g. the consumer had it cached).

        As upstream, the acknowledgement is queued on the current CUDA device's current stream;
        the project's optional `dev` names another device. A proxy that has acknowledged already
        does nothing.
        """
        if self._consumer_acknowledged:
            return
        device_index = torch.cuda.current_device() if dev is None else _cuda_device_index(dev)
        transport, cached_mapping = _open_pool(device_index, self.proxy_state["ipc_extra"])
        with transport.device_context():
            self._wait_until_ready(transport)
            self._acknowledge_on_stream(transport, consumer_count, consumer_rank)
            if not cached_mapping:
                torch.cuda.current_stream(device_index).synchronize()

    def release_without_reconstruction(
        self,
        consumer_count: int = 1,
        consumer_rank: int | None = None,
        *,
        dev: int | str | torch.device | None = None,
    ) -> None:
        """Give the lease back unread (e.g. the request was aborted): `acknowledge_consumption`."""
        self.acknowledge_consumption(consumer_count, consumer_rank, dev=dev)


def _cuda_device_index(dev: int | str | torch.device) -> int:
    device = torch.device("cuda", dev) if isinstance(dev, int) else torch.device(dev)
    return device.index if device.index is not None else torch.cuda.current_device()


# (device index, pool IPC handle) -> transport over the mapped pool, for this process.
_OPENED_POOLS: dict[tuple[int, tuple[Any, ...]], CudaStreamTransport] = {}
_OPENED_POOLS_LOCK = threading.Lock()


def _open_pool_uncached(device_index: int, pool_handle: Sequence[Any]) -> CudaStreamTransport:
    torch.cuda._lazy_init()
    (_, ipc_handle, size, offset, ref_handle, ref_offset, event_handle, event_sync) = pool_handle
    # The handle's own device field is the producer's numbering; the pool is mapped on `dev`.
    storage = torch.UntypedStorage._new_shared_cuda(
        device_index, ipc_handle, size, offset, ref_handle, ref_offset, event_handle, event_sync
    )
    device = torch.device("cuda", device_index)
    byte_tensor = torch.empty(0, dtype=torch.uint8, device=device).set_(storage)
    return CudaStreamTransport(byte_tensor, memory_size=byte_tensor.numel(), device_id=device_index)


def _open_pool(device_index: int, extra: dict[str, Any]) -> tuple[CudaStreamTransport, bool]:
    """Map the pool on `device_index`; the flag says whether the mapping is cached."""
    pool_handle = tuple(extra["pool_handle"])
    if extra["use_pool_handle_cache"]:
        key = (device_index, pool_handle)
        try:
            with _OPENED_POOLS_LOCK:
                transport = _OPENED_POOLS.get(key)
                if transport is None:
                    transport = _open_pool_uncached(device_index, pool_handle)
                    _OPENED_POOLS[key] = transport
            return transport, True
        except Exception:
            with _OPENED_POOLS_LOCK:
                _OPENED_POOLS.pop(key, None)
            logger.warning(
                "cached %s pool mapping failed; retrying without the cache",
                CUDA_IPC_TRANSPORT_NAME,
                exc_info=True,
            )
    # Without the cache a failure propagates: there is nothing left to fall back to.
    return _open_pool_uncached(device_index, pool_handle), False


class MmItemMemoryPool(PoolOwner):
    """Producer side of the CUDA IPC transport: the pool on `cuda:{base_gpu_id}` and its proxies.

    `memory_size` is in bytes and `recycle_interval` in seconds; `consumer_count` consumers must
    acknowledge each tensor before its bytes are reused.
    """

    def __init__(
        self,
        memory_size: int,
        recycle_interval: float,
        base_gpu_id: int,
        consumer_count: int,
        max_inflight_slices: int = DEFAULT_MAX_INFLIGHT_SLICES,
    ) -> None:
        # Before the allocation, so that a bad size fails with the pool's own message.
        validate_pool_arguments(
            memory_size=memory_size,
            consumer_count=consumer_count,
            max_inflight_slices=max_inflight_slices,
            recycle_interval=recycle_interval,
        )
        self.memory_size = memory_size
        self.device_id = base_gpu_id
        self.consumer_count = consumer_count
        device = torch.device("cuda", base_gpu_id)
        byte_tensor = torch.empty(memory_size, dtype=torch.uint8, device=device)
        # Upstream's call form: the pool builds the CUDA stream transport over the buffer.
        self.pool = StreamOrderedMmFeaturePool(
            memory_size=memory_size,
            byte_tensor=byte_tensor,
            base_address=byte_tensor.data_ptr(),
            device_id=base_gpu_id,
            consumer_count=consumer_count,
            recycle_interval=recycle_interval,
            transport_name=CUDA_IPC_TRANSPORT_NAME,
            max_inflight_slices=max_inflight_slices,
        )
        self.transport = cast(CudaStreamTransport, self.pool.transport)
        self.pool_ipc_handle: tuple[Any, ...] = byte_tensor.untyped_storage()._share_cuda_()
        self._warned_full = False

    def wrap_tensor(
        self, tensor: torch.Tensor, *, use_pool_handle_cache: bool = True
    ) -> CudaIpcTensorTransportProxy | None:
        """Copy `tensor` into the pool and return its proxy; None when the pool is full."""
        lease, destination = self.pool.copy_tensor(tensor)
        if lease is None or destination is None:
            if not self._warned_full:
                self._warned_full = True
                logger.warning(
                    "%s pool has no free range for a %.2f MiB tensor (pool size %.2f MiB); "
                    "sending features without IPC until it drains",
                    CUDA_IPC_TRANSPORT_NAME,
                    tensor.numel() * tensor.element_size() / 2**20,
                    self.memory_size / 2**20,
                )
            return None
        return CudaIpcTensorTransportProxy(
            data=destination,
            info_data=tensor,
            pool_ipc_handle=self.pool_ipc_handle,
            pool_byte_offset=lease.start,
            ready_byte_offset=lease.ready_byte_offset,
            ack_byte_offset=lease.ack_byte_offset,
            generation=lease.generation,
            total_consumer_count=self.consumer_count,
            use_pool_handle_cache=use_pool_handle_cache,
        )

    def cancel_proxy(self, proxy: CudaIpcTensorTransportProxy) -> None:
        """Give back the lease of a proxy that will never reach its consumers."""
        if proxy.proxy_state["ipc_extra"]["pool_handle"] != self.pool_ipc_handle:
            raise ForeignCudaIpcProxy()
        self._cancel(proxy)
