"""Throughput of `copy_tensor` on the host transport against a plain `Tensor.copy_`.

Run: `.venv/bin/python bench/pool.py`. For each size the same float32 source is copied, in the
same loop, into a preallocated private tensor with `Tensor.copy_` and into the shared-memory pool
with `copy_tensor` (allocation, copy, READY store). Between iterations, outside the timed region,
the lease is acknowledged and recycled so that each copy takes the same range. Both destinations
are touched before timing, so page faults are not measured. Reports the median of each.
"""

from __future__ import annotations

import statistics
import time

import torch

from runtime.transport.host import HostMmItemMemoryPool

MIB = 1 << 20
SIZES = ((1 * MIB, 200), (16 * MIB, 40), (256 * MIB, 8))
"""(bytes, timed iterations) per case."""
WARMUP = 3
TARGET_RATIO = 1.5


def bench_size(nbytes: int, iterations: int) -> tuple[float, float]:
    """Median seconds of (plain copy_, pool copy_tensor) for `nbytes` bytes."""
    source = torch.rand(nbytes // 4, dtype=torch.float32)
    plain_destination = torch.empty_like(source)
    pool = HostMmItemMemoryPool(nbytes + MIB, 3600.0, 1, 16, lease_timeout=None)
    plain: list[float] = []
    pooled: list[float] = []
    try:
        for iteration in range(WARMUP + iterations):
            start = time.perf_counter()
            plain_destination.copy_(source)
            middle = time.perf_counter()
            lease, _ = pool.pool.copy_tensor(source)
            end = time.perf_counter()
            assert lease is not None
            pool.pool.cancel_lease(
                ready_byte_offset=lease.ready_byte_offset,
                ack_byte_offset=lease.ack_byte_offset,
                generation=lease.generation,
            )
            pool.pool.recycle()
            if iteration >= WARMUP:
                plain.append(middle - start)
                pooled.append(end - middle)
    finally:
        pool.shutdown()
    return statistics.median(plain), statistics.median(pooled)


def main() -> int:
    print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
    print(f"{'size':>8}  {'copy_ (ms)':>11}  {'copy_tensor (ms)':>16}  {'GB/s pool':>9}  ratio")
    worst = 0.0
    for nbytes, iterations in SIZES:
        plain, pooled = bench_size(nbytes, iterations)
        ratio = pooled / plain
        worst = max(worst, ratio)
        print(
            f"{nbytes // MIB:>4} MiB  {plain * 1e3:>11.3f}  {pooled * 1e3:>16.3f}  "
            f"{nbytes / pooled / 1e9:>9.2f}  {ratio:.2f}x"
        )
    verdict = "within" if worst <= TARGET_RATIO else "OVER"
    print(f"worst ratio {worst:.2f}x: {verdict} the {TARGET_RATIO}x target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
